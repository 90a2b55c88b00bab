// BullMQ end to end: add and process jobs, a delayed job, a failed job with
// retries. Prints one JSON line: what ran, and each part's outcome.
// Usage: node bullmq_jobs.js <port> <parts: comma list of scripts,add,delayed,retries,events>
// "scripts" needs no streams: BullMQ's Lua scripts that only read (job
// counts, job lists, pause state) run through EVALSHA/EVAL, cmsgpack and all.
const { Queue, Worker, QueueEvents } = require('bullmq');

function withTimeout(p, ms, what) {
  return Promise.race([p, new Promise((_, rej) => setTimeout(() => rej(new Error(what + ' timed out')), ms))]);
}

async function main() {
  const connection = { host: '127.0.0.1', port: Number(process.argv[2]), maxRetriesPerRequest: null };
  const parts = (process.argv[3] || 'add,delayed,retries').split(',');
  const out = {};
  const q = new Queue('gbq', { connection });
  if (parts.includes('scripts')) {
    out.scripts = { counts: await q.getJobCounts('waiting', 'active', 'completed', 'failed', 'delayed'),
                    jobs: (await q.getJobs(['waiting', 'completed'])).length, paused: await q.isPaused() };
    console.log(JSON.stringify(out));
    await q.close();
    return;
  }
  await q.obliterate({ force: true }).catch(() => {});
  const attempts = {};
  const done = [];
  const worker = new Worker('gbq', async (job) => {
    attempts[job.name] = (attempts[job.name] || 0) + 1;
    if (job.name === 'flaky' && attempts[job.name] < 3) throw new Error('try again');
    if (job.name === 'doomed') throw new Error('always fails');
    return { doubled: job.data.n * 2 };
  }, { connection, concurrency: 1 });
  worker.on('completed', (job, result) => done.push([job.name, result]));
  if (parts.includes('add')) {
    const job = await q.add('plain', { n: 21 });
    await withTimeout(new Promise((res) => { const t = setInterval(async () => {
      const s = await job.getState(); if (s === 'completed') { clearInterval(t); res(); } }, 50); }), 20000, 'plain job');
    out.add = { state: await job.getState(), result: (await q.getJob(job.id)).returnvalue };
  }
  if (parts.includes('delayed')) {
    const t0 = Date.now();
    const job = await q.add('later', { n: 2 }, { delay: 700 });
    out.delayedState = await job.getState();
    await withTimeout(new Promise((res) => { const t = setInterval(async () => {
      if ((await job.getState()) === 'completed') { clearInterval(t); res(); } }, 50); }), 20000, 'delayed job');
    out.delayed = { waitedMs: Date.now() - t0 >= 600, state: await job.getState() };
  }
  if (parts.includes('retries')) {
    const flaky = await q.add('flaky', { n: 1 }, { attempts: 3, backoff: { type: 'fixed', delay: 100 } });
    const doomed = await q.add('doomed', { n: 1 }, { attempts: 2, backoff: { type: 'fixed', delay: 100 } });
    await withTimeout(new Promise((res) => { const t = setInterval(async () => {
      const a = await flaky.getState(), b = await doomed.getState();
      if (a === 'completed' && b === 'failed') { clearInterval(t); res(); } }, 50); }), 20000, 'retried jobs');
    const d = await q.getJob(doomed.id);
    out.retries = { flakyAttempts: attempts.flaky, doomedAttempts: attempts.doomed, failedReason: d.failedReason,
                    counts: await q.getJobCounts('completed', 'failed') };
  }
  if (parts.includes('events')) {
    // QueueEvents reads the queue's event stream with XREAD BLOCK; ioredis 6
    // speaks RESP3, where XREAD's reply is a map keyed by stream.
    const events = new QueueEvents('gbq', { connection });
    await events.waitUntilReady();
    const completed = new Set();
    events.on('completed', ({ jobId }) => completed.add(jobId));
    const jobs = await q.addBulk(Array.from({ length: 200 }, (_, i) => ({ name: 'ev', data: { n: i } })));
    await withTimeout(new Promise((res) => { const t = setInterval(() => {
      if (completed.size === jobs.length) { clearInterval(t); res(); } }, 50); }), 30000, 'completion events')
      .catch(() => {});
    const IORedis = require('ioredis');
    const admin = new IORedis(connection);
    const clients = String(await admin.call('CLIENT', 'LIST')).split('\n');
    await admin.quit();
    out.events = { jobs: jobs.length, completedEvents: completed.size,
                   resp3Clients: clients.filter((l) => / resp=3( |$)/.test(l)).length };
    await events.close();
  }
  console.log(JSON.stringify(out));
  await worker.close();
  await q.close();
}
main().catch((e) => { console.log(JSON.stringify({ error: String(e && e.message || e) })); process.exit(1); });
