"""Differential test of hash-field expiry (issue 28): goblin-core against a
real redis-server 7.4 (the first Redis with field TTLs), both started here.

CI cannot build Redis 7.4 (the installed reference is Debian's 7.0.15, which
has no field TTLs), so this file is not named test_*.py and ctest registers
it only when a 7.4 binary is named at configure time (REDIS74_SERVER in the
environment, or -DGOBLIN_REDIS74_SERVER=...; test/integration/CMakeLists.txt).
By hand:

    REDIS74_SERVER=/work/redis-7.4.1/src/redis-server \
    GOBLIN_SERVER=build-test/goblin-core /usr/bin/python3 -u \
        test/integration/redis74_hash_ttl_differential.py

REDIS74_SERVER unset, or naming a file that is not there or not Redis 7.4,
is a failure, not a skip: the run was asked for a comparison.

Seeded random streams of HSET, HDEL, HGET, HMGET, HEXISTS, HLEN, HGETALL,
OBJECT ENCODING, HEXPIRE, HPEXPIRE, HEXPIREAT, HPEXPIREAT (NX|XX|GT|LT,
FIELDS counts right and wrong), HTTL, HPTTL, HEXPIRETIME, HPEXPIRETIME and
HPERSIST, with bad arguments of every kind (non-integers, negative and
out-of-range times, a missing or misplaced FIELDS, numfields zero,
negative, too large or too small, wrong arity) and wrong-type keys, half the
seeds in RESP3 (HELLO 3). Every reply is compared byte for byte, except:

- HGETALL of a hash in a hash table: Redis's dict order depends on its
  random hash seed, so the pairs are compared sorted (a listpack or
  listpackex hash, whose order Redis defines, is compared as sent);
- positive values of HTTL, HPTTL, HEXPIRETIME and HPEXPIRETIME: a relative
  time (HEXPIRE/HPEXPIRE) is made absolute from each server's clock when
  the command reaches it, a few milliseconds apart, so they may differ by
  TOLERANCE_MS (codes -2/-1 and the reply's shape are exact). All times lie
  at least 50,000 s apart, so no NX/XX/GT/LT outcome depends on those
  milliseconds.

The keyspace events each server publishes (notify-keyspace-events KEA, a
PSUBSCRIBE on each) are compared byte for byte every 100 commands and
after the short-deadline checks.

After each seed the state (TYPE, OBJECT ENCODING, HGETALL, HPEXPIRETIME
of every field) is compared, then again after DEBUG RELOAD on both (a
snapshot round trip keeps deadlines and the listpackex order).

Deadlines of the random streams are days to years ahead (deterministic);
then short ones are checked for expiry, lazily (active expiry off: no read
serves the field, HLEN still counts it, both as Redis 7.4) and by the
active cycle (the fields and the emptied key go untouched).

Environment: GOBLIN_HFE74_SEEDS (default 16), GOBLIN_HFE74_OPS (default
600), GOBLIN_HFE74_SEED (only this seed).
"""

import os
import random
import subprocess
import time
import unittest

import gbtest
from gbtest import Err, Raw, Server

SEEDS = int(os.environ.get("GOBLIN_HFE74_SEEDS", "16"))
OPS = int(os.environ.get("GOBLIN_HFE74_OPS", "600"))
ONE_SEED = os.environ.get("GOBLIN_HFE74_SEED")
TOLERANCE_MS = 5000

REDIS74 = os.environ.get("REDIS74_SERVER", "")


def redis74_or_fail():
    """The 7.4 binary; raises (a failure) when it is not named or not there."""
    if not REDIS74:
        raise AssertionError("REDIS74_SERVER is not set: name a redis-server 7.4 binary")
    if not os.access(REDIS74, os.X_OK):
        raise AssertionError("REDIS74_SERVER=%s is not an executable file" % REDIS74)
    out = subprocess.run([REDIS74, "--version"], capture_output=True, text=True).stdout
    if "v=7.4." not in out:
        raise AssertionError("REDIS74_SERVER=%s is not Redis 7.4: %s" % (REDIS74, out.strip()))
    return REDIS74


def start_redis74():
    """A redis-server 7.4 through gbtest.Server (its life cycle and clean-up):
    Server takes the redis binary from gbtest.REDIS_SERVER when it starts."""
    saved = gbtest.REDIS_SERVER
    gbtest.REDIS_SERVER = redis74_or_fail()
    try:
        return Server("redis")
    finally:
        gbtest.REDIS_SERVER = saved


HASHES = [b"h0", b"h1", b"h2", b"h3"]
WRONG = b"lst"
KEYS = HASHES + [WRONG, b"nokey"]
FIELDS = [b"f%d" % i for i in range(12)] + [b"1", b"-5", b""]
BAD_INTS = [b"", b"abc", b"1.5", b" 1", b"+1", b"9223372036854775808", b"-9223372036854775809", b"0x10"]
# 2^46 - 1 ms (Redis's HFE_MAX_ABS_TIME_MSEC) and around it
MAX_MS = (1 << 46) - 1
STEP_S = 100000  # every time is a multiple of this (or half of it) apart


class Times:
    """Deadlines for one run: relative ones in whole steps, absolute ones
    half a step off (so no relative time lands near an absolute one)."""

    def __init__(self):
        self.base_s = int(time.time()) // STEP_S * STEP_S + 10 * STEP_S

    def relative_s(self, rng):
        return rng.randint(1, 20) * STEP_S

    def absolute_s(self, rng):
        return self.base_s + rng.randint(-5, 15) * STEP_S + STEP_S // 2


def rand_key(rng):
    r = rng.random()
    if r < 0.05:
        return WRONG
    if r < 0.1:
        return b"nokey"
    return rng.choice(HASHES)


def rand_fields(rng):
    return [rng.choice(FIELDS) for _ in range(rng.choice([1, 1, 2, 3, 5]))]


def fields_part(rng, fields):
    """FIELDS numfields f...; sometimes wrong (the word, the count)."""
    r = rng.random()
    n = str(len(fields)).encode()
    if r < 0.03:
        return [b"FIELD", n] + fields
    if r < 0.06:
        return [rng.choice([b"0", b"-1", rng.choice(BAD_INTS)])] + [n] + fields
    if r < 0.1:
        return [b"fields", rng.choice([b"0", b"-1", str(len(fields) + 1).encode(), str(len(fields) - 1).encode()]
                                      + BAD_INTS)] + fields
    return [rng.choice([b"FIELDS", b"fields", b"Fields"]), n] + fields


def time_arg(rng, times, cmd):
    r = rng.random()
    if r < 0.04:
        return rng.choice(BAD_INTS)
    if r < 0.08:
        return rng.choice([b"-1", b"-100"])
    seconds = cmd in (b"HEXPIRE", b"HEXPIREAT")
    if r < 0.12:  # at and past Redis's bound
        edge = MAX_MS // 1000 if seconds else MAX_MS
        return str(edge + rng.choice([0, 1, 1000])).encode()
    if r < 0.15:  # the past: the field is deleted (reply 2)
        return b"0" if cmd in (b"HEXPIRE", b"HPEXPIRE") else rng.choice([b"1", b"0"])
    if cmd in (b"HEXPIRE", b"HPEXPIRE"):
        v = times.relative_s(rng)
    else:
        v = times.absolute_s(rng)
    return str(v if seconds else v * 1000).encode()


def gen_hexpire(rng, times):
    cmd = rng.choice([b"HEXPIRE", b"HPEXPIRE", b"HEXPIREAT", b"HPEXPIREAT"])
    argv = [cmd, rand_key(rng), time_arg(rng, times, cmd)]
    if rng.random() < 0.5:
        argv.append(rng.choice([b"NX", b"XX", b"GT", b"LT", b"nx", b"gt", b"xx", b"lt"]))
    elif rng.random() < 0.05:
        argv.append(b"ZZ")
    argv += fields_part(rng, rand_fields(rng))
    return argv


def gen_read_ttl(rng, times):
    cmd = rng.choice([b"HTTL", b"HPTTL", b"HEXPIRETIME", b"HPEXPIRETIME", b"HPERSIST"])
    return [cmd, rand_key(rng)] + fields_part(rng, rand_fields(rng))


def gen_hset(rng, times):
    argv = [b"HSET", rand_key(rng)]
    for _ in range(rng.choice([1, 1, 2, 4])):
        n = rng.choice([1, 3, 8, 20, 70]) if rng.random() < 0.95 else 0
        argv += [rng.choice(FIELDS), rng.choice([b"v" * n, str(rng.randint(-1000, 10 ** 12)).encode()])]
    return argv


def gen_other(rng, times):
    key = rand_key(rng)
    r = rng.random()
    if r < 0.2:
        return [b"HDEL", key] + rand_fields(rng)
    if r < 0.35:
        return [b"HGET", key, rng.choice(FIELDS)]
    if r < 0.45:
        return [b"HMGET", key] + rand_fields(rng)
    if r < 0.55:
        return [b"HEXISTS", key, rng.choice(FIELDS)]
    if r < 0.7:
        return [b"HLEN", key]
    if r < 0.85:
        return [b"HGETALL", key]
    if r < 0.9:
        return [b"HSTRLEN", key, rng.choice(FIELDS)]
    # (not of the list: 7.0, goblin's reference there, says quicklist where 7.2+ say listpack)
    return [b"OBJECT", b"ENCODING", rng.choice(HASHES + [b"nokey"])]


def gen_arity(rng, times):
    """Too few arguments for each command's arity."""
    cmd = rng.choice([b"HEXPIRE", b"HPEXPIRE", b"HEXPIREAT", b"HPEXPIREAT", b"HTTL", b"HPTTL", b"HEXPIRETIME",
                      b"HPEXPIRETIME", b"HPERSIST"])
    full = [cmd, b"h0", b"100", b"FIELDS", b"1"] if b"EXPIRE" in cmd and b"TIME" not in cmd \
        else [cmd, b"h0", b"FIELDS"]
    return full[:rng.randint(1, len(full))]


GENERATORS = [(gen_hexpire, 30), (gen_read_ttl, 25), (gen_hset, 20), (gen_other, 22), (gen_arity, 3)]
RELATIVE_TTL_READS = (b"HTTL", b"HPTTL", b"HEXPIRETIME", b"HPEXPIRETIME")


def pick(rng):
    total = sum(w for _, w in GENERATORS)
    x = rng.uniform(0, total)
    for gen, w in GENERATORS:
        x -= w
        if x <= 0:
            return gen
    return GENERATORS[-1][0]


def near(a, b, unit_ms):
    """Two TTL replies alike up to the servers' few ms apart: the same shape,
    the same codes, positive values within TOLERANCE_MS."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(near(x, y, unit_ms) for x, y in zip(a, b))
    if isinstance(a, int) and isinstance(b, int) and a > 0 and b > 0:
        return abs(a - b) * unit_ms <= TOLERANCE_MS
    return a == b


def pairs_sorted(flat):
    return sorted(zip(flat[::2], flat[1::2])) if isinstance(flat, list) else flat


def split_messages(raw):
    """The pub/sub messages in raw bytes, each as its own bytes."""
    parser = Raw.__new__(Raw)  # Raw's parser over a buffer, no socket
    parser.buf = bytearray(raw)
    out = []
    while parser.buf:
        out.append(parser.read()[1])
    return out


class HashTtlVsRedis74(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.redis = start_redis74()
        cls.goblin = Server("goblin")

    @classmethod
    def tearDownClass(cls):
        cls.goblin.cleanup()
        cls.redis.cleanup()

    def conns(self, resp3):
        g, r = Raw(self.goblin), Raw(self.redis)
        self.subs = Raw(self.goblin), Raw(self.redis)
        for c in (g, r) + self.subs:
            self.addCleanup(c.close)
        for c in (g, r):
            c.call("FLUSHALL")
            c.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")
            c.call("CONFIG", "SET", "notify-keyspace-events", "KEA")
            if resp3:
                c.call("HELLO", "3")
        for s in self.subs:
            s.call("PSUBSCRIBE", "__key*@*__:*")
        return g, r

    def compare_events(self, g, r, where, ordered=True):
        """The keyspace events each server published since the last call
        (hset, hexpire, hpersist, hdel, hexpired, del...), byte for byte;
        unordered: as a multiset of messages (the active cycle's order among
        hashes due in the same millisecond is each server's own)."""
        g.call("PING")  # its reply: every event before it is out
        r.call("PING")
        a, b = (s.read_raw_available(0.05) for s in self.subs)
        if not ordered:
            a, b = sorted(split_messages(a)), sorted(split_messages(b))
        self.assertEqual(a, b, "%s: keyspace events differ" % where)

    def compare(self, g, r, argv, where, unordered=False):
        g.send_cmd(*argv)
        r.send_cmd(*argv)
        (gv, graw), (rv, rraw) = g.read(), r.read()
        if graw == rraw:
            return "exact"
        cmd = argv[0].upper()
        if cmd in RELATIVE_TTL_READS and not isinstance(rv, Err):
            unit = 1000 if cmd in (b"HTTL", b"HEXPIRETIME") else 1
            if near(gv, rv, unit):
                return "near"
        if cmd == b"HGETALL" and pairs_sorted(gv) == pairs_sorted(rv):
            if unordered or r.call("OBJECT", "ENCODING", argv[1]) == b"hashtable":
                return "unordered"
        self.fail("%s: %r\n  goblin: %r\n  redis:  %r" % (where, argv, graw, rraw))

    def compare_state(self, g, r, where, unordered=()):
        for key in HASHES:
            self.compare(g, r, [b"TYPE", key], where)
            self.compare(g, r, [b"OBJECT", b"ENCODING", key], where)
            self.compare(g, r, [b"HGETALL", key], where, unordered=key in unordered)
            self.compare(g, r, [b"HPEXPIRETIME", key, b"FIELDS", str(len(FIELDS)).encode()] + FIELDS, where)

    def run_seed(self, seed, counts):
        rng = random.Random(seed)
        resp3 = seed % 2 == 1
        g, r = self.conns(resp3)
        times = Times()
        for c in (g, r):
            c.call("RPUSH", WRONG, "x")
        for i in range(OPS):
            argv = pick(rng)(rng, times)
            how = self.compare(g, r, argv, "seed %d op %d (RESP%d)" % (seed, i, 3 if resp3 else 2))
            counts[how] = counts.get(how, 0) + 1
            if i % 100 == 99:
                self.compare_events(g, r, "seed %d ops %d..%d" % (seed, i - 99, i))
        self.compare_state(g, r, "seed %d end" % seed)
        # A snapshot round trip keeps deadlines and the listpackex order. A
        # small hash saved from a hash table loads as a listpack in the
        # table's iteration order, which follows Redis's random hash seed:
        # those are compared unordered.
        tables = [k for k in HASHES if r.call("OBJECT", "ENCODING", k) == b"hashtable"]
        for c in (g, r):
            self.assertEqual(c.call("DEBUG", "RELOAD"), b"OK")
        self.compare_state(g, r, "seed %d after DEBUG RELOAD" % seed, unordered=tables)

    def test_random_streams(self):
        seeds = [int(ONE_SEED)] if ONE_SEED else range(SEEDS)
        counts = {}
        for seed in seeds:
            self.run_seed(seed, counts)
        print("hfe74 streams: %d seeds x %d ops, replies %s" % (len(seeds), OPS, counts))

    def short_deadlines(self, g, r, active):
        """Fields with deadlines 100-300 ms ahead, in a listpackex and a
        hash-table hash; after they pass, both servers agree."""
        for c in (g, r):
            c.call("DEBUG", "SET-ACTIVE-EXPIRE", "1" if active else "0")
            c.call("HSET", "small", "a", "1", "b", "2", "c", "3")
            c.call("HSET", "big", *[x for i in range(200) for x in ("k%d" % i, "v")])
            c.call("HSET", "gone", "only", "1")
            c.call("HPEXPIRE", "small", "100", "FIELDS", "2", "a", "b")
            c.call("HPEXPIRE", "big", "150", "FIELDS", "3", "k1", "k2", "k3")
            c.call("HPEXPIRE", "gone", "100", "FIELDS", "1", "only")
            c.call("HEXPIRE", "small", "1000", "FIELDS", "1", "c")
        time.sleep(0.4)
        if active:  # the cycle runs 10 times a second on both
            for c in (g, r):
                gbtest.wait_until(lambda: c.call("EXISTS", "gone") == 0 and c.call("HLEN", "big") == 197, 5)
        where = "short deadlines, active expiry %s" % ("on" if active else "off")
        for argv in ([b"HLEN", b"small"], [b"HLEN", b"big"], [b"EXISTS", b"gone"], [b"HLEN", b"gone"],
                     [b"HTTL", b"small", b"FIELDS", b"3", b"a", b"b", b"c"],
                     [b"HPERSIST", b"big", b"FIELDS", b"2", b"k1", b"k4"],
                     [b"HGET", b"small", b"a"], [b"HMGET", b"big", b"k1", b"k2", b"k5"],
                     [b"HEXISTS", b"big", b"k3"], [b"HGETALL", b"small"], [b"HLEN", b"small"],
                     [b"HLEN", b"big"], [b"HGETALL", b"gone"], [b"EXISTS", b"gone"], [b"DBSIZE"],
                     # a field past its deadline that nothing deleted yet (b, lazily) takes a
                     # new one, as Redis 7.4's hashTypeSetEx: 1, not -2
                     [b"HPEXPIRE", b"small", b"100000", b"FIELDS", b"2", b"a", b"b"],
                     [b"HGETALL", b"small"], [b"HLEN", b"small"]):
            self.compare(g, r, argv, where)
        self.compare_events(g, r, where, ordered=not active)

    def test_short_deadlines_lazy(self):
        g, r = self.conns(False)
        self.short_deadlines(g, r, active=False)

    def test_short_deadlines_active(self):
        g, r = self.conns(True)
        self.short_deadlines(g, r, active=True)

    def test_memory_per_field_with_ttl(self):
        """A hash whose every field has a TTL takes no more memory per field
        than in Redis 7.4 (MEMORY USAGE; the deadline kept with its field,
        as Redis keeps it), as a listpackex and as a hash table; and its
        fields without TTLs no more either."""
        g, r = self.conns(False)
        for key, n in (("lp", 100), ("ht", 20000)):
            names = ["field:%d" % i for i in range(n)]
            for ttl in (False, True):
                per = []
                for c in (g, r):
                    c.call("DEL", key)
                    for lo in range(0, n, 1000):
                        c.call("HSET", key, *[x for f in names[lo:lo + 1000] for x in (f, "v")])
                        if ttl:
                            c.call("HPEXPIREAT", key, "4102444800000", "FIELDS", str(len(names[lo:lo + 1000])),
                                   *names[lo:lo + 1000])
                    per.append(c.call("MEMORY", "USAGE", key, "SAMPLES", "0") / n)
                self.assertEqual(g.call("OBJECT", "ENCODING", key), r.call("OBJECT", "ENCODING", key))
                self.assertLessEqual(per[0], per[1], "%s, %d fields%s: goblin %.1f bytes per field, redis %.1f"
                                     % (key, n, " with TTLs" if ttl else "", per[0], per[1]))


if __name__ == "__main__":
    gbtest.run_tests()
