// node-redis (the `redis` npm package, v6: RESP3 by default) against
// goblin-core: connect with default settings, typed RESP3 replies, and
// client-side caching (CLIENT TRACKING, invalidation pushes). Prints one
// JSON object for test_node_redis.py to check.
const { createClient } = require('redis');

const port = Number(process.argv[2]);
const out = {};

async function main() {
  const c = createClient({ socket: { host: '127.0.0.1', port } });
  c.on('error', (e) => { out.error = String(e); });
  await c.connect();
  out.clientInfo = await c.sendCommand(['CLIENT', 'INFO']);
  await c.flushAll();
  await c.set('s', 'v');
  out.get = await c.get('s');
  await c.hSet('h', { a: '1', b: '2' });
  out.hgetall = await c.hGetAll('h');
  await c.sAdd('set', ['x', 'y']);
  out.smembers = (await c.sMembers('set')).sort();
  await c.zAdd('z', [{ score: 1.5, value: 'a' }, { score: 2, value: 'b' }]);
  out.zscore = await c.zScore('z', 'a');
  out.zrangeWithScores = await c.zRangeWithScores('z', 0, -1);
  out.zincrby = await c.zIncrBy('z', 1, 'a');
  out.configGet = await c.configGet('maxmemory');
  out.info = (await c.info('server')).slice(0, 9);
  out.missing = await c.get('nokey');
  out.hello = await c.hello();

  // Client-side caching: the second GET is served from the cache, another
  // client's SET invalidates it (a RESP3 push), the third GET sees the new value.
  const cached = createClient({ socket: { host: '127.0.0.1', port }, clientSideCache: { ttl: 0, maxEntries: 0 } });
  await cached.connect();
  const other = createClient({ socket: { host: '127.0.0.1', port } });
  await other.connect();
  await other.set('ck', 'one');
  out.cache1 = await cached.get('ck');
  out.cache2 = await cached.get('ck');
  const csc = cached._self?.clientSideCache ?? cached.clientSideCache;
  out.cacheStats = csc && csc.stats ? { hits: csc.stats().hitCount, misses: csc.stats().missCount } : null;
  out.trackingInfo = await cached.sendCommand(['CLIENT', 'TRACKINGINFO']);
  await other.set('ck', 'two');
  let v = null;
  for (let i = 0; i < 100 && v !== 'two'; i++) {
    v = await cached.get('ck');
    if (v !== 'two') await new Promise((r) => setTimeout(r, 50));
  }
  out.cache3 = v;
  await cached.quit();
  await other.quit();
  await c.quit();
}

main().then(() => { console.log(JSON.stringify(out)); }, (e) => {
  out.fatal = String(e && e.stack || e);
  console.log(JSON.stringify(out));
  process.exitCode = 1;
});
