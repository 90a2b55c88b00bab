"""Eviction (maxmemory-policy) and the per-key access clock, against
redis-server 7.0 run the same way.

Each policy is filled past maxmemory and what remains is checked against
the policy's intent: noeviction refuses writes with Redis's exact OOM error,
volatile-* never evict a key without a TTL, volatile-ttl takes the nearest
deadlines first, LRU keeps the recently used keys, LFU the frequently used
ones, the random policies show no preference for recency. Under a Zipf
read/write load (GET, SET on a miss) the hit rate of each LRU/LFU policy is
compared with Redis's. Both servers get the same room for keys: maxmemory
is set to what each uses empty plus the same budget (Goblin's records are
smaller, so it keeps more keys in that room). Evictions reach the log as
DEL (UNLINK with lazyfree-lazy-eviction) and fire `evicted` events, as
Redis's do. OBJECT FREQ under an LFU policy is compared exactly with
lfu-log-factor 0 (every access counts, no randomness) for a matrix of
commands: which ones touch a key is Redis's LOOKUP_NOTOUCH rule.
"""

import glob
import os
import random
import time
import unittest

import gbtest
from gbtest import Raw, Server, encode, parse_info

BUDGET = 768 * 1024  # bytes of room for keys above the empty server's usage
VALUE = b"v" * 100


def pipeline(r, cmds):
    r.send(b"".join(encode(*c) for c in cmds))
    return [r.read()[0] for _ in cmds]


def info(r, section=None):
    return parse_info(r.call("INFO", section) if section else r.call("INFO"))


class Pair:
    """One goblin-core and one redis-server with the same settings; maxmemory
    set on each to its empty usage + BUDGET."""

    def __init__(self, policy, *extra, budget=BUDGET, goblin_args=(), redis_args=()):
        gbtest.require_redis()
        args = ["--maxmemory-policy", policy] + list(extra)
        self.servers = []
        try:
            self.servers.append(Server("goblin", args=args + list(goblin_args)))
            self.servers.append(Server("redis", args=args + list(redis_args)))
        except BaseException:
            self.close()
            raise
        self.conns = [Raw(s) for s in self.servers]
        for r, s in zip(self.conns, self.servers):
            r.kind = s.kind  # named in a failed write's message
        for r in self.conns:
            base = int(info(r, "memory")["used_memory"])
            r.call("CONFIG", "SET", "maxmemory", str(base + budget))

    def close(self):
        for r in getattr(self, "conns", []):
            r.close()
        for s in self.servers:
            s.cleanup()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def present(r, keys):
    out = []
    for i in range(0, len(keys), 500):
        out += pipeline(r, [("EXISTS", k) for k in keys[i:i + 500]])
    return [k for k, e in zip(keys, out) if e == 1]


def write_keys(r, keys, ttl=None):
    for i in range(0, len(keys), 500):
        cmds = [("SET", k, VALUE) + (("EX", ttl(k)) if ttl else ()) for k in keys[i:i + 500]]
        for reply in pipeline(r, cmds):
            if reply != b"OK":
                raise AssertionError("%s: %r at key %d of %d; %s" % (getattr(r, "kind", "?"), reply, i, len(keys), {
                    k: v for k, v in info(r, "memory").items() if k in ("used_memory", "maxmemory")}) +
                    " keys=%s" % r.call("DBSIZE"))


def fill_until_evicting(r, prefix):
    """Writes prefix:0, prefix:1, ... until the first eviction; returns the
    keys written (about what the room holds)."""
    keys = []
    while int(info(r, "stats")["evicted_keys"]) == 0:
        batch = [b"%s:%d" % (prefix, i) for i in range(len(keys), len(keys) + 100)]
        write_keys(r, batch)
        keys += batch
    return keys


def zipf_load(r, universe, n_ops, seed, ttl=None, batch=256):
    """GETs of Zipf(0.99)-distributed keys, each miss filled by a SET; returns
    the hit rate of the second half (the cache warm)."""
    rng = random.Random(seed)
    cum, total = [], 0.0
    for rank in range(1, universe + 1):
        total += 1.0 / rank ** 0.99
        cum.append(total)
    ranks = rng.choices(range(universe), cum_weights=cum, k=n_ops)
    hits = gets = 0
    for i in range(0, n_ops, batch):
        keys = [b"z:%d" % k for k in ranks[i:i + batch]]
        got = pipeline(r, [("GET", k) for k in keys])
        misses = [k for k, v in zip(keys, got) if v is None]
        extra = ("EX", 100000) if ttl else ()
        pipeline(r, [("SET", k, VALUE) + extra for k in misses])
        if i >= n_ops // 2:
            gets += len(keys)
            hits += len(keys) - len(misses)
    return hits / gets


class EvictionPolicies(unittest.TestCase):

    def test_noeviction_refuses_writes_with_redis_error(self):
        with Pair("noeviction", budget=256 * 1024) as p:
            replies = []
            for r in p.conns:
                reply = None
                for i in range(0, 20000, 200):
                    r.send(b"".join(encode("SET", "k%d" % j, VALUE) for j in range(i, i + 200)))
                    raws = [r.read()[1] for _ in range(200)]
                    errs = [x for x in raws if x.startswith(b"-")]
                    if errs:
                        reply = errs[0]
                        break
                replies.append(reply)
                self.assertEqual(r.call("GET", "k0"), VALUE)    # reads still work
                self.assertEqual(r.call("DEL", "k0"), 1)        # and deletions
                self.assertEqual(info(r)["evicted_keys"], "0")
            self.assertEqual(replies[0], b"-OOM command not allowed when used memory > 'maxmemory'.\r\n")
            self.assertEqual(replies[0], replies[1])

    def test_volatile_policies_never_evict_persistent_keys(self):
        for policy in ("volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"):
            with self.subTest(policy=policy), Pair(policy) as p:
                persistent = [b"p:%d" % i for i in range(1500)]
                for r in p.conns:
                    write_keys(r, persistent)
                    zipf_load(r, 30000, 12000, seed=7, ttl=True)
                    self.assertGreater(int(info(r)["evicted_keys"]), 1000, policy)
                    self.assertEqual(len(present(r, persistent)), len(persistent), policy)

    def test_volatile_policies_refuse_when_only_persistent_keys_left(self):
        with Pair("volatile-lru", budget=256 * 1024) as p:
            raws = []
            for r in p.conns:
                err = None
                for i in range(0, 20000, 200):
                    r.send(b"".join(encode("SET", "k%d" % j, VALUE) for j in range(i, i + 200)))
                    errs = [x for x in (r.read()[1] for _ in range(200)) if x.startswith(b"-")]
                    if errs:
                        err = errs[0]
                        break
                raws.append(err)
            self.assertEqual(raws[0], raws[1])
            self.assertTrue(raws[0].startswith(b"-OOM"), raws[0])

    def test_volatile_ttl_evicts_nearest_deadlines_first(self):
        with Pair("volatile-ttl") as p:
            n = 30000
            order = list(range(n))
            random.Random(3).shuffle(order)
            keys = [b"t:%d" % i for i in order]
            ttl = lambda k: 100000 + int(k[2:]) * 10  # noqa: E731: key i expires 10 s after key i-1
            fractions = []
            for r in p.conns:
                write_keys(r, keys, ttl=ttl)
                alive = set(present(r, keys))
                evicted = [i for i in range(n) if b"t:%d" % i not in alive]
                self.assertGreater(len(evicted), n // 3)
                # the evicted are the early deadlines: nearly all below the
                # deadline rank where the survivors start
                cut = len(evicted)
                fractions.append(sum(1 for i in evicted if i < cut) / len(evicted))
            g, rd = fractions
            self.assertGreater(g, 0.75, fractions)
            self.assertGreater(g, rd - 0.05, fractions)

    def test_lru_keeps_recently_used(self):
        with Pair("allkeys-lru") as p:
            olds = [fill_until_evicting(r, b"old") for r in p.conns]
            time.sleep(2.2)  # Redis's LRU clock ticks once a second
            for r, old in zip(p.conns, olds):
                hot = old[::5]
                for i in range(0, len(hot), 500):
                    pipeline(r, [("GET", k) for k in hot[i:i + 500]])
            time.sleep(2.2)
            kept, hot_share = [], []
            for r, old in zip(p.conns, olds):
                hot, cold = old[::5], [k for i, k in enumerate(old) if i % 5]
                write_keys(r, [b"new:%d" % i for i in range(len(old) // 2)])
                self.assertGreater(int(info(r)["evicted_keys"]), len(old) // 3)
                hot_left, cold_left = len(present(r, hot)), len(present(r, cold))
                kept.append((hot_left / len(hot), cold_left / len(cold)))
                evicted_hot, evicted_cold = len(hot) - hot_left, len(cold) - cold_left
                hot_share.append(evicted_hot / (evicted_hot + evicted_cold))
            (g_hot, g_cold), (r_hot, r_cold) = kept
            g_share, r_share = hot_share
            # The hot keys are a fifth of the old ones: an eviction blind to
            # use would take them at that rate. How many old keys go depends
            # on the room each server's records and client buffers leave
            # (goblin's differs from Redis's, and between its I/O engines),
            # so the figure compared is the hot keys' share of what was
            # evicted, which does not: redis-server's was 0.02-0.04 in loaded
            # runs, goblin's 0.03-0.04, and 0.064 against Redis's 0.032 once
            # under ASan on a loaded machine (the GETs that make keys hot
            # spread over more clock ticks). Blind eviction would give 0.2.
            self.assertGreater(g_hot, g_cold + 0.2, kept)
            self.assertLess(g_share, 0.1, (hot_share, kept))
            self.assertLess(g_share, r_share + 0.05, (hot_share, kept))

    def test_lfu_keeps_frequently_used(self):
        with Pair("allkeys-lfu") as p:
            hot = [b"hot:%d" % i for i in range(1500)]
            flood = [b"flood:%d" % i for i in range(20000)]
            kept = []
            for r in p.conns:
                write_keys(r, hot)
                for _ in range(30):
                    for i in range(0, len(hot), 500):
                        pipeline(r, [("GET", k) for k in hot[i:i + 500]])
                write_keys(r, flood)  # each written once, more recent than every hot key
                self.assertGreater(int(info(r)["evicted_keys"]), 5000)
                kept.append(len(present(r, hot)) / len(hot))
            self.assertGreater(kept[0], 0.95, kept)
            self.assertGreater(kept[0], kept[1] - 0.03, kept)

    def test_random_policy_has_no_recency_preference(self):
        with Pair("allkeys-random") as p:
            shares = []
            for r in p.conns:
                first = fill_until_evicting(r, b"r")
                keys = first + [b"r:%d" % i for i in range(len(first), 2 * len(first))]
                write_keys(r, keys[len(first):])
                alive = present(r, keys)
                first_half = sum(1 for k in alive if int(k[2:]) < len(first))
                shares.append(first_half / len(alive))
            # LRU would keep none of the first half; random keeps a fair
            # share of it (fewer than the second half: it had more draws
            # against it; about 1/(1+e) = 0.27)
            self.assertGreater(shares[0], 0.15, shares)
            self.assertLess(abs(shares[0] - shares[1]), 0.1, shares)

    def test_zipf_hit_rate_per_policy(self):
        rates = {}
        for policy in ("allkeys-lru", "allkeys-lfu", "volatile-lru", "volatile-lfu", "allkeys-random"):
            with self.subTest(policy=policy), Pair(policy) as p:
                got = [zipf_load(r, 40000, 30000, seed=11, ttl=policy.startswith("volatile")) for r in p.conns]
                rates[policy] = got
                for r in p.conns:
                    self.assertGreater(int(info(r)["evicted_keys"]), 1000)
                # the same room, smaller records, a sampled pool at least as
                # good: never worse than Redis's hit rate
                self.assertGreater(got[0], got[1] - 0.02, (policy, got))
        # the ranking policies beat random picks on a skewed load
        self.assertGreater(rates["allkeys-lfu"][0], rates["allkeys-random"][0], rates)
        self.assertGreater(rates["allkeys-lru"][0], rates["allkeys-random"][0] - 0.01, rates)


class EvictionEffects(unittest.TestCase):

    def test_lowering_maxmemory_evicts_and_warns(self):
        with Pair("allkeys-lru", budget=64 << 20) as p:
            for s, r in zip(p.servers, p.conns):
                write_keys(r, [b"m:%d" % i for i in range(20000)])
                base_used = int(info(r, "memory")["used_memory"])
                limit = base_used - (1 << 20)
                self.assertEqual(r.call("CONFIG", "SET", "maxmemory", str(limit)), b"OK")
                # a cycle has a time budget: the rest goes on between events
                self.assertTrue(gbtest.wait_until(
                    lambda: int(info(r, "memory")["used_memory"]) <= limit + (64 << 10), 10), s.kind)
                self.assertGreater(int(info(r, "stats")["evicted_keys"]), 0, s.kind)
                self.assertTrue(gbtest.wait_until(
                    lambda: "the new maxmemory value set via CONFIG SET (%d) is smaller than the current memory "
                            "usage" % limit in s.log(), 5), s.kind)

    def test_expired_victim_counts_as_evicted(self):
        """A victim already past its deadline (active expiry off, not yet
        collected) is evicted as any other: counted in evicted_keys, not
        expired_keys, as Redis 7.0's performEvictions counts it."""
        got = {}
        for kind in ("goblin", "redis"):
            if kind == "redis":
                gbtest.require_redis()
            with Server(kind) as s, Raw(s) as r:
                r.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
                r.call("CONFIG", "SET", "maxmemory-policy", "volatile-ttl")
                for i in range(50):
                    r.call("SET", "gone:%d" % i, "x" * 20000, "PX", "1")
                time.sleep(0.05)
                used = int(info(r, "memory")["used_memory"])
                r.call("CONFIG", "SET", "maxmemory", str(used - (300 << 10)))
                r.call("SET", "after", "x")  # any write evicts first
                st = info(r, "stats")
                got[kind] = (st["expired_keys"], int(st["evicted_keys"]) > 0)
        self.assertEqual(got["goblin"], ("0", True))
        self.assertEqual(got["goblin"], got["redis"])

    def test_latency_monitor_records_eviction_events(self):
        """Evicting one large set takes milliseconds: LATENCY LATEST names
        eviction-del and eviction-cycle on both servers (Redis's events)."""
        fill = "for i = 1, 300000 do redis.call('sadd', KEYS[1], i) end"
        for kind in ("goblin", "redis"):
            if kind == "redis":
                gbtest.require_redis()
            with Server(kind) as s, Raw(s) as r:
                r.call("EVAL", fill, "1", "big")
                r.call("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
                r.call("CONFIG", "SET", "latency-monitor-threshold", "1")
                used = int(info(r, "memory")["used_memory"])
                r.call("CONFIG", "SET", "maxmemory", str(used - (1 << 20)))
                r.call("SET", "after", "x")  # any write evicts first
                self.assertEqual(r.call("EXISTS", "big"), 0, kind)
                events = {row[0] for row in r.call("LATENCY", "LATEST")}
                self.assertIn(b"eviction-del", events, kind)
                self.assertIn(b"eviction-cycle", events, kind)
                self.assertNotIn(b"eviction-lazyfree", events, kind)

    def _run(self, lazy):
        flag = "yes" if lazy else "no"
        with Pair("allkeys-random", "--appendonly", "yes", "--notify-keyspace-events", "Ee",
                  "--lazyfree-lazy-eviction", flag, "--appendfsync", "always",
                  goblin_args=["--save", ""]) as p:
            for s, r in zip(p.servers, p.conns):
                sub = Raw(s)
                sub.call("SUBSCRIBE", "__keyevent@0__:evicted")
                events = []
                keys = [b"e:%d" % i for i in range(12000)]
                for i in range(0, len(keys), 500):
                    write_keys(r, keys[i:i + 500])
                    # read the events as they come: a subscriber that does
                    # not read holds their memory (over maxmemory, on both)
                    while len(events) < int(info(r, "stats")["evicted_keys"]):
                        msg = sub.read()[0]
                        self.assertEqual(msg[:2], [b"message", b"__keyevent@0__:evicted"], s.kind)
                        events.append(msg[2])
                sub.close()
                evicted = int(info(r, "stats")["evicted_keys"])
                self.assertGreater(evicted, 1000, s.kind)
                self.assertEqual(len(set(events)), evicted, s.kind)
                self.assertEqual(present(r, sorted(set(events))), [], s.kind)
                log = b""
                for f in glob.glob(os.path.join(s.dir, "appendonlydir", "*.incr.aof")):
                    with open(f, "rb") as fh:
                        log += fh.read()
                verb = b"UNLINK" if lazy else b"DEL"
                self.assertEqual(log.count(b"*2\r\n$%d\r\n%s\r\n" % (len(verb), verb)), evicted, s.kind)
                self.assertNotIn(b"MULTI", log, s.kind)

    def test_evictions_fire_events_and_reach_the_log_as_del(self):
        self._run(lazy=False)

    def test_lazy_evictions_reach_the_log_as_unlink(self):
        self._run(lazy=True)


# OBJECT FREQ, exactly: lfu-log-factor 0 makes every access count one, and
# lfu-decay-time 0 stops decay, so the counters of both servers must agree
# after each command (which commands touch a key is Redis's rule).
SETUPS = {
    "s": [("SET", "s", "hello world")],
    "n": [("SET", "n", "123456")],
    "l": [("RPUSH", "l", "a", "b", "c")],
    "h": [("HSET", "h", "f", "v")],
    "z": [("ZADD", "z", "1", "a")],
    "t": [("SADD", "t", "a")],
    "x": [("XADD", "x", "1-1", "f", "v")],
}
TOUCH_MATRIX = [
    ("s", ("GET", "s")), ("s", ("SET", "s", "other")), ("s", ("SET", "s", "x" * 100)), ("s", ("APPEND", "s", "!")),
    ("s", ("STRLEN", "s")), ("s", ("GETRANGE", "s", "0", "2")), ("s", ("SETRANGE", "s", "1", "zz")),
    ("s", ("EXISTS", "s")), ("s", ("TYPE", "s")), ("s", ("TTL", "s")), ("s", ("PTTL", "s")), ("s", ("TOUCH", "s")),
    ("s", ("OBJECT", "ENCODING", "s")), ("s", ("MEMORY", "USAGE", "s")), ("s", ("EXPIRE", "s", "100")),
    ("s", ("PERSIST", "s")), ("s", ("GETEX", "s")), ("s", ("MGET", "s", "s")), ("s", ("SETNX", "s", "v")),
    ("s", ("GETSET", "s", "v2")), ("s", ("GETDEL", "s")), ("s", ("SET", "s", "v", "GET")),
    ("s", ("SET", "s", "v", "KEEPTTL")), ("s", ("SET", "s", "v", "XX")), ("s", ("EXPIRETIME", "s")),
    ("s", ("RENAME", "s", "s2")), ("s", ("COPY", "s", "s3")), ("s", ("SCAN", "0")), ("s", ("KEYS", "*")),
    ("n", ("INCR", "n")), ("n", ("INCRBY", "n", "5")), ("n", ("INCRBYFLOAT", "n", "1.5")), ("n", ("DECR", "n")),
    ("l", ("LRANGE", "l", "0", "-1")), ("l", ("LPUSH", "l", "x")), ("l", ("LLEN", "l")), ("l", ("LPOP", "l")),
    ("l", ("LINDEX", "l", "0")), ("l", ("LSET", "l", "0", "q")),
    ("h", ("HGET", "h", "f")), ("h", ("HSET", "h", "g", "v")), ("h", ("HGETALL", "h")), ("h", ("HLEN", "h")),
    ("h", ("HEXISTS", "h", "f")), ("h", ("HINCRBY", "h", "n", "1")),
    ("z", ("ZSCORE", "z", "a")), ("z", ("ZADD", "z", "2", "b")), ("z", ("ZRANGE", "z", "0", "-1")),
    ("z", ("ZINCRBY", "z", "1", "a")),
    ("t", ("SISMEMBER", "t", "a")), ("t", ("SADD", "t", "b")), ("t", ("SMEMBERS", "t")), ("t", ("SCARD", "t")),
    ("x", ("XLEN", "x")), ("x", ("XRANGE", "x", "-", "+")), ("x", ("XADD", "x", "*", "f", "v")),
]


class AccessClock(gbtest.GoblinAndRedisCase):

    def both(self, *cmd, raw=False):
        out = []
        for s in (self.goblin, self.redis):
            with Raw(s) as r:
                out.append(r.call_raw(*cmd) if raw else r.call(*cmd))
        return out

    def setUp(self):
        for s in (self.goblin, self.redis):
            with Raw(s) as r:
                r.call("FLUSHALL")
                r.call("CONFIG", "SET", "maxmemory", "1gb")  # no shared integers under LRU/LFU
                r.call("CONFIG", "SET", "maxmemory-policy", "noeviction")

    def tearDown(self):
        for s in (self.goblin, self.redis):
            with Raw(s) as r:
                r.call("CONFIG", "SET", "maxmemory", "0")
                r.call("CONFIG", "SET", "maxmemory-policy", "noeviction")
                r.call("CONFIG", "SET", "lfu-log-factor", "10")
                r.call("CONFIG", "SET", "lfu-decay-time", "1")

    def run_matrix(self, kind):
        out = []
        s = self.goblin if kind == "goblin" else self.redis
        with Raw(s) as r:
            for cmd in (("maxmemory-policy", "allkeys-lfu"), ("lfu-log-factor", "0"), ("lfu-decay-time", "0")):
                r.call("CONFIG", "SET", *cmd)
            for key, cmd in TOUCH_MATRIX:
                r.call("FLUSHALL")
                for c in SETUPS[key]:
                    r.call(*c)
                before = r.call("OBJECT", "FREQ", key)
                r.call(*cmd)
                after = [r.call("OBJECT", "FREQ", k) for k in (key, "s2", "s3")]
                out.append((cmd, before, after))
        return out

    def test_lfu_counter_per_command_matches_redis(self):
        g, rd = self.run_matrix("goblin"), self.run_matrix("redis")
        for a, b in zip(g, rd):
            self.assertEqual(a, b)
        # the matrix does exercise both: some commands touch, some do not
        self.assertTrue(any(a[2][0] != a[1] for a in g if isinstance(a[2][0], int)))
        self.assertTrue(any(a[2][0] == a[1] for a in g))

    def test_freq_and_idletime_errors_per_policy(self):
        for s in (self.goblin, self.redis):
            with Raw(s) as r:
                r.call("SET", "k", "v")
        for policy in ("noeviction", "allkeys-lru", "volatile-ttl", "allkeys-random", "allkeys-lfu", "volatile-lfu"):
            self.both("CONFIG", "SET", "maxmemory-policy", policy)
            for cmd in (("OBJECT", "FREQ", "k"), ("OBJECT", "IDLETIME", "k"), ("OBJECT", "FREQ", "nokey"),
                        ("OBJECT", "IDLETIME", "nokey")):
                g, rd = self.both(*cmd, raw=True)
                if g.startswith(b"-") or rd.startswith(b"-") or g.startswith(b"$-1"):
                    self.assertEqual(g, rd, (policy, cmd))
                else:
                    self.assertEqual(g[:1], rd[:1], (policy, cmd))

    def test_idletime_counts_seconds_since_last_touch(self):
        self.both("SET", "a", "x")  # not an integer: Redis shares those
        self.both("SET", "b", "x")
        time.sleep(2.2)
        self.both("GET", "b")
        self.both("EXISTS", "a")  # not a touch
        ga, ra = self.both("OBJECT", "IDLETIME", "a")
        gb_, rb = self.both("OBJECT", "IDLETIME", "b")
        self.assertIn(ga, (2, 3))
        self.assertLessEqual(abs(ga - ra), 1)
        # Goblin's clock ticks 64 times a second; Redis's is a second it
        # caches, which may turn between the GET and the OBJECT
        self.assertEqual(gb_, 0)
        self.assertIn(rb, (0, 1))

    def test_new_key_starts_at_lfu_init_and_grows_logarithmically(self):
        self.both("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu")
        self.both("SET", "k", "v")
        self.assertEqual(self.both("OBJECT", "FREQ", "k"), [5, 5])
        for s in (self.goblin, self.redis):
            with Raw(s) as r:
                pipeline(r, [("GET", "k")] * 2000)
        g, rd = self.both("OBJECT", "FREQ", "k")
        # lfu-log-factor 10: 2000 hits lift the counter to about 25 on
        # average (each step from c is taken with probability
        # 1 / (10 (c - 5) + 1)); the draws are random on both servers, and
        # redis-server itself has reached 32. Logarithmic, not 2005.
        self.assertTrue(12 <= g <= 40 and 12 <= rd <= 40, (g, rd))


class EvictionConfig(gbtest.GoblinAndRedisCase):

    def both(self, *cmd):
        out = []
        for s in (self.goblin, self.redis):
            with Raw(s) as r:
                out.append(r.call_raw(*cmd))
        return out

    def test_defaults_and_bounds_match_redis(self):
        names = ("maxmemory-policy", "maxmemory-samples", "maxmemory-eviction-tenacity", "lfu-log-factor",
                 "lfu-decay-time", "lazyfree-lazy-eviction")
        for name in names:
            g, rd = self.both("CONFIG", "GET", name)
            self.assertEqual(g, rd, name)
        cases = [("maxmemory-policy", "bogus"), ("maxmemory-policy", "ALLKEYS-LRU"), ("maxmemory-samples", "0"),
                 ("maxmemory-samples", "64"), ("maxmemory-eviction-tenacity", "101"),
                 ("maxmemory-eviction-tenacity", "100"), ("lfu-log-factor", "-1"), ("lfu-decay-time", "x"),
                 ("lazyfree-lazy-eviction", "maybe"), ("lazyfree-lazy-eviction", "yes")]
        for name, value in cases:
            g, rd = self.both("CONFIG", "SET", name, value)
            self.assertEqual(g, rd, (name, value))
            g, rd = self.both("CONFIG", "GET", name)
            self.assertEqual(g, rd, (name, value))
        for s in (self.goblin, self.redis):
            with Raw(s) as r:
                for name in names:
                    r.call("CONFIG", "SET", name, {"maxmemory-policy": "noeviction", "maxmemory-samples": "5",
                                                   "maxmemory-eviction-tenacity": "10", "lfu-log-factor": "10",
                                                   "lfu-decay-time": "1", "lazyfree-lazy-eviction": "no"}[name])

    def test_info_reports_policy_and_evicted_keys(self):
        for s in (self.goblin, self.redis):
            with Raw(s) as r:
                r.call("CONFIG", "SET", "maxmemory-policy", "volatile-ttl")
                self.assertEqual(info(r, "memory")["maxmemory_policy"], "volatile-ttl")
                self.assertEqual(info(r, "stats")["evicted_keys"], "0")
                r.call("CONFIG", "SET", "maxmemory-policy", "noeviction")


if __name__ == "__main__":
    gbtest.run_tests()
