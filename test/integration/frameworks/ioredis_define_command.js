// ioredis defineCommand: a custom command backed by a Lua script, called
// with keys and arguments, in a pipeline and in MULTI (ioredis sends EVALSHA
// and falls back to EVAL on NOSCRIPT). Prints one JSON line of results.
// Usage: node ioredis_define_command.js <port>
const Redis = require('ioredis');

async function main() {
  const port = Number(process.argv[2]);
  const r = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1, enableOfflineQueue: true });
  r.defineCommand('incrTwice', {
    numberOfKeys: 2,
    lua: "return {redis.call('incrby', KEYS[1], ARGV[1]), redis.call('incrby', KEYS[2], ARGV[1])}",
  });
  r.defineCommand('echoArgs', { lua: 'return ARGV' });
  const out = {};
  await r.del('a', 'b');
  out.first = await r.incrTwice('a', 'b', 5);
  await r.script('FLUSH');                 // the next call meets NOSCRIPT and falls back to EVAL
  out.afterFlush = await r.incrTwice('a', 'b', 1);
  out.dynamic = await r.echoArgs(0, 'x', 'y');
  out.pipeline = (await r.pipeline().incrTwice('a', 'b', 10).echoArgs(0, 'p').exec()).map(([e, v]) => e ? String(e) : v);
  out.multi = (await r.multi().incrTwice('a', 'b', 100).exec()).map(([e, v]) => e ? String(e) : v);
  try { await r.eval('return redis.call("nosuch")', 0); } catch (e) { out.error = e.message; }
  console.log(JSON.stringify(out));
  await r.quit();
}
main().catch((e) => { console.error(e); process.exit(1); });
