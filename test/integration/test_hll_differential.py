"""Differential test of the HyperLogLog commands (issue 28): goblin-core
against redis-server 7.0 (Debian's 7.0.15), both started here.

Seeded random streams run PFADD (batches that cross sparse to dense),
PFCOUNT of one key and of unions (missing keys, wrong-type and non-HLL
strings among them), PFMERGE (sparse and dense inputs and destinations,
the destination among its own inputs), PFDEBUG's subcommands, GET/SET
copies of HLL strings between keys, and CONFIG SET hll-sparse-max-bytes,
some inside MULTI and some through EVAL; half the seeds in RESP3. Every
reply is compared byte for byte; after each seed the keys' GET bytes (the
representations themselves), TYPE and OBJECT ENCODING, and the keyspace
events both servers published.

Directed cases: HLL strings carried between the servers (GET from one, SET
into the other, both ways, sparse and dense) keep estimating and growing
alike; corrupted strings of every kind (headers, lengths, opcodes past or
short of 16384 registers, a cut XZERO, forged caches and dense registers,
random byte flips) get the same replies and leave the same bytes;
PFDEBUG's and PFSELFTEST's replies; the config's bounds and units; what the
append-only log gets (a restarted goblin-core gives back Redis's bytes).

Environment: GOBLIN_HLL_SEEDS (default 8), GOBLIN_HLL_OPS (default 400),
GOBLIN_HLL_SEED (run only this seed).
"""

import glob
import os
import random
import shutil
import struct
import tempfile

import gbtest
from gbtest import Raw

SEEDS = int(os.environ.get("GOBLIN_HLL_SEEDS", "8"))
OPS = int(os.environ.get("GOBLIN_HLL_OPS", "400"))
ONE_SEED = os.environ.get("GOBLIN_HLL_SEED")

KEYS = [b"h0", b"h1", b"h2", b"h3"]
LIST_KEY = b"lst"      # WRONGTYPE
PLAIN_KEY = b"plain"   # a string that is no HLL
ALL_KEYS = KEYS + [LIST_KEY, PLAIN_KEY, b"nokey"]

HDR = 16
DENSE_SIZE = HDR + 12288


def rand_element(rng, space):
    kind = rng.random()
    if kind < 0.7:
        return b"e%d" % rng.randrange(space)
    if kind < 0.9:
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 20)))
    return b"x" * rng.randint(0, 300)


def rand_key(rng, weird=0.08):
    if rng.random() < weird:
        return rng.choice([LIST_KEY, PLAIN_KEY, b"nokey"])
    return rng.choice(KEYS)


def pick_command(rng, space):
    r = rng.random()
    if r < 0.45:
        n = rng.choice([0, 1, 1, 2, 5, 20, 100, 400])
        return [b"PFADD", rand_key(rng)] + [rand_element(rng, space) for _ in range(n)]
    if r < 0.65:
        return [b"PFCOUNT"] + [rand_key(rng) for _ in range(rng.choice([1, 1, 2, 3]))]
    if r < 0.78:
        return [b"PFMERGE", rand_key(rng)] + [rand_key(rng) for _ in range(rng.randint(0, 3))]
    if r < 0.86:
        sub = rng.choice([b"ENCODING", b"DECODE", b"TODENSE", b"GETREG", b"encoding", b"nope"])
        return [b"PFDEBUG", sub, rand_key(rng)]
    if r < 0.92:
        # A copy of one HLL string into another key, as GET and SET carry it.
        return [b"EVAL", b"local v = redis.call('GET', KEYS[1]) if v then redis.call('SET', KEYS[2], v) end "
                b"return v and #v or -1", b"2", rng.choice(KEYS), rng.choice(KEYS)]
    if r < 0.95:
        return [b"CONFIG", b"SET", b"hll-sparse-max-bytes", rng.choice([b"0", b"30", b"300", b"3000", b"12000"])]
    return [b"GET", rand_key(rng)]


def as_lua(argv):
    body = b", ".join(b"ARGV[%d]" % (i + 1) for i in range(len(argv)))
    return [b"EVAL", b"return redis.pcall(" + body + b")", b"0"] + list(argv)


class Pair:
    """The same connection setup on both servers, replies compared."""

    def __init__(self, test, goblin, redis, resp3=False, events=True):
        self.test = test
        self.g, self.r = Raw(goblin), Raw(redis)
        self.history = []
        self.subs = []
        for c in (self.g, self.r):
            if resp3:
                c.call("HELLO", "3")
            c.call("FLUSHALL")
            c.call("CONFIG", "SET", "hll-sparse-max-bytes", "3000")
            c.call("CONFIG", "SET", "notify-keyspace-events", "KEAn" if events else "")
        if events:
            self.subs = [Raw(goblin), Raw(redis)]
            for s in self.subs:
                s.call("PSUBSCRIBE", "__key*@*__:*")

    def close(self):
        for c in [self.g, self.r] + self.subs:
            c.close()

    def both(self, argv, label):
        a = self.g.call_raw(*argv)
        b = self.r.call_raw(*argv)
        self.history.append(argv)
        if a != b:
            self.test.fail("%s: %r\n goblin: %r\n redis:  %r\n last commands: %r"
                           % (label, [x[:80] for x in argv[:6]], a[:3000], b[:3000],
                              [[x[:40] for x in h[:4]] for h in self.history[-8:]]))
        return a

    def compare_events(self, label):
        if not self.subs:
            return
        a = gbtest.events_so_far(self.g, self.subs[0])
        b = gbtest.events_so_far(self.r, self.subs[1])
        if a != b:
            self.test.fail("%s: keyspace events differ\n goblin: %r\n redis:  %r" % (label, a[:2000], b[:2000]))

    def compare_keys(self, label, keys=ALL_KEYS):
        for k in keys:
            for argv in ([b"TYPE", k], [b"GET", k], [b"OBJECT", b"ENCODING", k]):
                self.both(argv, "%s final state" % label)


def run_stream(test, goblin, redis, seed):
    rng = random.Random(seed)
    pair = Pair(test, goblin, redis, resp3=seed % 2 == 1)
    label = "seed %d" % seed
    space = rng.choice([50, 1000, 100000])
    try:
        pair.both([b"RPUSH", LIST_KEY, b"a"], label)
        pair.both([b"SET", PLAIN_KEY, rng.choice([b"HYLL", b"hello world, no hll here", b"12345"])], label)
        i = 0
        while i < OPS:
            r = rng.random()
            if r < 0.04:
                block = [pick_command(rng, space) for _ in range(rng.randint(1, 3))]
                pair.both([b"MULTI"], label)
                for argv in block:
                    pair.both(argv, label)
                pair.both([b"EXEC"], "%s op %d (EXEC)" % (label, i))
                i += len(block)
            elif r < 0.08:
                argv = pick_command(rng, space)
                if argv[0] != b"EVAL":
                    argv = as_lua(argv)
                pair.both(argv, "%s op %d (Lua)" % (label, i))
                i += 1
            else:
                pair.both(pick_command(rng, space), "%s op %d" % (label, i))
                i += 1
            if i % 200 == 0:
                pair.compare_events(label)
        pair.compare_keys(label)
        pair.compare_events(label)
    finally:
        pair.close()


# ---- hand-made HLL strings -----------------------------------------------------------

def header(enc, card=0, stale=True, unused=b"\0\0\0"):
    c = struct.pack("<Q", card)
    if stale:
        c = c[:7] + bytes([c[7] | 0x80])
    return b"HYLL" + bytes([enc]) + unused + c


def xzero(n):
    return bytes([0x40 | ((n - 1) >> 8), (n - 1) & 0xff])


def zero(n):
    return bytes([n - 1])


def val(v, n):
    return bytes([0x80 | ((v - 1) << 2) | (n - 1)])


def corrupted_strings(rng):
    """(name, bytes) of strings a client may SET under a PF key."""
    valid_sparse = header(1) + xzero(100) + val(3, 2) + xzero(16282)
    cases = [
        ("empty", b""),
        ("short", b"HYLL\x01"),
        ("header only sparse", header(1)),
        ("header only dense", header(0)),
        ("bad magic", b"HYLX" + valid_sparse[4:]),
        ("encoding 2", header(2) + xzero(16384)),
        ("encoding 255", header(255) + xzero(16384)),
        ("integer", b"1234567890123456789"),
        ("dense short", header(0) + b"\0" * 12287),
        ("dense long", header(0) + b"\0" * 12289),
        ("dense max registers", header(0) + b"\xff" * 12288),
        ("dense forged registers", header(0) + bytes(rng.randrange(256) for _ in range(12288))),
        ("dense valid cache", header(0, card=12345, stale=False) + b"\0" * 12288),
        ("dense huge cache", header(0, card=(1 << 63) - 1, stale=False) + b"\0" * 12288),
        ("sparse valid", valid_sparse),
        ("sparse valid cache", header(1, card=777, stale=False) + xzero(16384)),
        ("sparse unused bytes", header(1, unused=b"abc") + xzero(16384)),
        ("sparse too few", header(1) + xzero(16383)),
        ("sparse too many", header(1) + xzero(16384) + zero(1)),
        ("sparse far too many", header(1) + xzero(16384) * 40),
        ("sparse val crosses end", header(1) + xzero(16382) + val(5, 4)),
        ("sparse val after end", header(1) + xzero(16384) + val(5, 1)),
        ("sparse only vals", header(1) + val(32, 4) * 4096),
        ("sparse vals too few", header(1) + val(7, 4) * 100),
        ("sparse cut xzero", header(1) + xzero(255) + b"\x7f"),
        ("sparse cut xzero short", header(1) + b"\x7f"),
        ("sparse cut xzero alone", header(1) + b"\x40"),
        ("sparse zeros", header(1) + zero(64) * 256),
        ("sparse mixed", header(1) + zero(10) + val(1, 1) + xzero(16000) + val(32, 4) + zero(64) * 5 + zero(49)),
        ("sparse tiny xzero", header(1) + xzero(1) * 16384),
        ("sparse long", header(1) + xzero(16384) + b"\0" * 5000),
    ]
    for n in range(60):
        # Random byte flips and cuts of valid sparse strings.
        base = bytearray(valid_sparse if n % 2 else header(1) + zero(3) + val(2, 3) + xzero(16378))
        for _ in range(rng.randint(1, 4)):
            op = rng.random()
            pos = rng.randrange(HDR, len(base)) if len(base) > HDR else HDR
            if op < 0.5 and pos < len(base):
                base[pos] = rng.randrange(256)
            elif op < 0.75:
                base.insert(pos, rng.randrange(256))
            elif len(base) > HDR:
                del base[pos:pos + 1]
        cases.append(("flip %d" % n, bytes(base)))
    return cases


def ends_in_cut_xzero(blob):
    """Whether the last opcode of a sparse string is an XZERO cut by the
    string's end. Redis reads its missing byte from past the string: 0 as
    SET stored it, but after its own sparse writes split that opcode, a
    stale byte they left there. Goblin always reads 0 (docs/hyperloglog.md),
    so such strings are probed with reads and conversions only."""
    if len(blob) <= HDR or blob[4] != 1:
        return False
    i = HDR
    while i < len(blob):
        if blob[i] & 0xc0 == 0x40:
            if i + 1 == len(blob):
                return True
            i += 2
        else:
            i += 1
    return False


def probe_commands(key, other, writes=True):
    if not writes:
        return [[b"PFCOUNT", key], [b"PFCOUNT", key, other], [b"PFDEBUG", b"DECODE", key],
                [b"PFMERGE", b"dst", key, other], [b"PFDEBUG", b"GETREG", key], [b"PFCOUNT", key]]
    return [
        [b"PFCOUNT", key],
        [b"PFCOUNT", key],
        [b"PFCOUNT", key, other],
        [b"PFCOUNT", other, key],
        [b"PFDEBUG", b"ENCODING", key],
        [b"PFDEBUG", b"DECODE", key],
        [b"PFMERGE", b"dst", key],
        [b"PFMERGE", key, other],
        [b"PFADD", key, b"a", b"b", b"c", b"zz", b"element-%d" % 7],
        [b"PFADD", key] + [b"m%d" % i for i in range(300)],
        [b"PFCOUNT", key],
        [b"PFDEBUG", b"TODENSE", key],
        [b"PFDEBUG", b"GETREG", key],
        [b"PFDEBUG", b"ENCODING", key],
        [b"PFCOUNT", key],
    ]


class HllDifferentialTest(gbtest.GoblinAndRedisCase):
    def pair(self, resp3=False, events=False):
        p = Pair(self, self.goblin, self.redis, resp3, events)
        self.addCleanup(p.close)
        return p

    def test_random_streams(self):
        seeds = [int(ONE_SEED)] if ONE_SEED else range(1, SEEDS + 1)
        for seed in seeds:
            run_stream(self, self.goblin, self.redis, seed)

    def test_representations_cross_sparse_to_dense(self):
        """One element at a time up to dense: the GET bytes equal after
        every PFADD, under several hll-sparse-max-bytes."""
        for limit in (b"3000", b"200", b"0", b"20000"):
            p = self.pair()
            p.both([b"CONFIG", b"SET", b"hll-sparse-max-bytes", limit], "config")
            p.both([b"PFADD", b"h"], "create")
            for i in range(2500):
                p.both([b"PFADD", b"h", b"el:%d" % i], "limit %s add %d" % (limit, i))
                if i % 7 == 0 or i > 2300:
                    p.both([b"GET", b"h"], "limit %s bytes after %d" % (limit, i))
                if i % 97 == 0:
                    p.both([b"PFCOUNT", b"h"], "limit %s count %d" % (limit, i))
            p.both([b"PFDEBUG", b"ENCODING", b"h"], "limit %s" % limit)
            p.close()

    def test_strings_carried_between_servers(self):
        """HLLs made by one server, SET into the other: same estimates, and
        the same bytes after more elements."""
        rng = random.Random(7)
        p = self.pair()
        for n in (0, 1, 10, 300, 1500, 5000, 50000):
            for src, dst, name in ((p.r, p.g, "redis->goblin"), (p.g, p.r, "goblin->redis")):
                for c in (p.g, p.r):
                    c.call("DEL", "a", "b")
                els = [b"c%d" % rng.randrange(10 ** 9) for _ in range(n)]
                src.call("PFADD", "a")
                for i in range(0, len(els), 1000):
                    src.call("PFADD", "a", *els[i:i + 1000])
                if rng.random() < 0.5:
                    src.call("PFCOUNT", "a")  # a valid cache travels too
                blob = src.call("GET", "a")
                dst.call("SET", "a", blob)
                label = "%s n=%d" % (name, n)
                # Both now hold the same bytes under "a".
                p.both([b"GET", b"a"], label)
                p.both([b"PFCOUNT", b"a"], label)
                p.both([b"PFDEBUG", b"ENCODING", b"a"], label)
                more = [b"more%d" % rng.randrange(10 ** 6) for _ in range(200)]
                p.both([b"PFADD", b"a"] + more, label)
                p.both([b"GET", b"a"], label)
                p.both([b"PFMERGE", b"b", b"a"], label)
                p.both([b"GET", b"b"], label)
                p.both([b"PFCOUNT", b"a", b"b", b"nokey"], label)

    def test_corrupted_strings(self):
        rng = random.Random(28)
        p = self.pair()
        other_els = [b"o%d" % i for i in range(40)]
        for name, blob in corrupted_strings(rng):
            for other_dense in (False, True):
                label = "%s (other %s)" % (name, "dense" if other_dense else "sparse")
                p.both([b"FLUSHALL"], label)
                p.both([b"SET", b"k", blob], label)
                p.both([b"PFADD", b"other"] + other_els, label)
                if other_dense:
                    p.both([b"PFDEBUG", b"TODENSE", b"other"], label)
                for argv in probe_commands(b"k", b"other", not ends_in_cut_xzero(blob)):
                    p.both(argv, label)
                    for k in (b"k", b"other", b"dst"):
                        p.both([b"GET", k], "%s after %r" % (label, argv[:2]))
                p.compare_keys(label, [b"k", b"other", b"dst"])

    def test_cve_2025_32023_register_count_overflow(self):
        """A sparse string of 2^17 + 1 XZEROs and a VAL: redis-server 7.0.15
        counts registers in an int that wraps negative here and writes
        before its buffer (CVE-2025-32023), so it is not sent to Redis.
        goblin-core answers what a fixed Redis does (INVALIDOBJ) and lives."""
        blob = header(1) + xzero(16384) * (131072 + 1) + val(5, 1)
        with Raw(self.goblin) as c:
            c.call("FLUSHALL")
            c.call("SET", "k", blob)
            c.call("PFADD", "o", "x")
            for argv in (["PFCOUNT", "k"], ["PFCOUNT", "o", "k"], ["PFMERGE", "d", "k"], ["PFMERGE", "k", "o"],
                         ["PFDEBUG", "TODENSE", "k"], ["PFDEBUG", "GETREG", "k"], ["PFADD", "k", "a", "b"]):
                self.assertEqual(c.call_raw(*argv), b"-INVALIDOBJ Corrupted HLL object detected\r\n", argv)
            self.assertEqual(c.call("GET", "k"), blob)
            self.assertEqual(c.call("PING"), b"PONG")

    def test_merge_rules(self):
        p = self.pair(events=True)
        p.both([b"PFADD", b"s1"] + [b"a%d" % i for i in range(30)], "s1")
        p.both([b"PFADD", b"s2"] + [b"b%d" % i for i in range(3000)], "s2 dense")
        p.both([b"PFADD", b"s3"] + [b"a%d" % i for i in range(10, 60)], "s3")
        for argv in ([b"PFMERGE", b"d1", b"s1", b"s3"], [b"PFMERGE", b"d2", b"s1", b"s2"],
                     [b"PFMERGE", b"s1", b"s3"], [b"PFMERGE", b"s3"], [b"PFMERGE", b"new"],
                     [b"PFMERGE", b"d2", b"nokey"], [b"PFMERGE", b"s2", b"s1", b"s1"],
                     [b"PFCOUNT", b"s1", b"s2", b"s3", b"d1", b"d2"], [b"PFCOUNT", b"nokey", b"nokey2"],
                     [b"PFCOUNT", b"nokey"], [b"PFADD", b"s1"], [b"PFADD", b"fresh"], [b"PFCOUNT", b"fresh"],
                     [b"SET", b"str", b"x" * 20], [b"PFMERGE", b"d1", b"str"], [b"PFMERGE", b"str", b"s1"],
                     [b"PFCOUNT", b"s1", b"str"], [b"LPUSH", b"l", b"1"], [b"PFMERGE", b"l", b"s1"],
                     [b"PFMERGE", b"d3", b"s1", b"l"], [b"PFADD", b"l", b"x"], [b"PFCOUNT", b"l"],
                     [b"PFCOUNT", b"s1", b"l"], [b"PFDEBUG", b"GETREG", b"l"], [b"PFADD"], [b"PFCOUNT"],
                     [b"PFMERGE"], [b"PFDEBUG", b"GETREG"], [b"PFDEBUG", b"GETREG", b"nokey"],
                     [b"PFDEBUG", b"nope", b"nokey"], [b"PFDEBUG", b"nope\r\nx", b"s1"],
                     [b"PFDEBUG", b"decode\0x", b"s1"], [b"PFDEBUG", b"DECODE", b"s2"],
                     [b"PFDEBUG", b"TODENSE", b"s2"], [b"PFDEBUG", b"TODENSE", b"s3"],
                     [b"PFDEBUG", b"ENCODING", b"s3"], [b"PFSELFTEST", b"x"]):
            p.both(argv, "merge rules")
        p.compare_keys("merge rules", [b"s1", b"s2", b"s3", b"d1", b"d2", b"d3", b"new", b"fresh", b"str"])
        p.compare_events("merge rules")

    def test_pfcount_may_replicate(self):
        """PFCOUNT may write its cache: read-only scripts refuse it and
        CLIENT PAUSE WRITE holds it, as Redis's may-replicate commands."""
        p = self.pair()
        p.both([b"PFADD", b"x", b"a"], "setup")
        for argv in ([b"EVAL_RO", b"return redis.call('pfcount', KEYS[1])", b"1", b"x"],
                     [b"EVAL_RO", b"return redis.pcall('pfcount', KEYS[1])", b"1", b"x"],
                     [b"EVAL", b"return redis.call('pfcount', KEYS[1])", b"1", b"x"],
                     [b"EVAL", b"#!lua flags=no-writes\nreturn redis.call('pfcount', KEYS[1])", b"1", b"x"],
                     [b"EVAL_RO", b"return redis.call('pfadd', KEYS[1], 'z')", b"1", b"x"],
                     [b"COMMAND", b"INFO", b"pfcount"]):
            p.both(argv, "script")
        p.both([b"PFADD", b"x", b"b"], "stale cache")
        for srv in (self.goblin, self.redis):
            with Raw(srv) as admin, Raw(srv) as c:
                admin.call("CLIENT", "PAUSE", "10000", "WRITE")
                c.send_cmd("PFCOUNT", "x")
                held = c.read_raw_available(0.3)
                admin.call("CLIENT", "UNPAUSE")
                self.assertEqual(held, b"", srv.kind)
                self.assertEqual(c.read()[0], 2, srv.kind)

    def test_selftest(self):
        p = self.pair()
        p.both([b"PFSELFTEST"], "selftest")

    def test_config(self):
        p = self.pair()
        for argv in ([b"CONFIG", b"GET", b"hll-sparse-max-bytes"],
                     [b"CONFIG", b"SET", b"hll-sparse-max-bytes", b"1kb"],
                     [b"CONFIG", b"GET", b"hll-sparse-max-bytes"],
                     [b"CONFIG", b"SET", b"hll-sparse-max-bytes", b"-1"],
                     [b"CONFIG", b"SET", b"hll-sparse-max-bytes", b"abc"],
                     [b"CONFIG", b"SET", b"hll-sparse-max-bytes", b"9223372036854775807"],
                     [b"CONFIG", b"GET", b"hll-sparse-max-bytes"],
                     [b"CONFIG", b"SET", b"hll-sparse-max-bytes", b"3000"]):
            p.both(argv, "config")

    def test_append_only_log(self):
        """PFADD, PFMERGE, the PFCOUNT that caches, PFDEBUG TODENSE reach the
        log: goblin-core restarted over it holds Redis's bytes."""
        d = tempfile.mkdtemp(prefix="gb-hll-aof-")
        self.addCleanup(shutil.rmtree, d, True)
        g = gbtest.Server("goblin", args=["--appendonly", "yes", "--save", "", "--dir", d], dir=d)
        try:
            script = [[b"PFADD", b"a"] + [b"x%d" % i for i in range(100)],
                      [b"PFCOUNT", b"a"],
                      [b"PFADD", b"b"] + [b"y%d" % i for i in range(50)],
                      [b"PFMERGE", b"c", b"a", b"b"],
                      [b"PFCOUNT", b"c"],
                      [b"PFADD", b"d", b"1", b"2"],
                      [b"PFDEBUG", b"TODENSE", b"d"],
                      [b"PFCOUNT", b"d"]]
            expected = {}
            with Raw(g) as gc, Raw(self.redis) as rc:
                rc.call("FLUSHALL")
                for argv in script:
                    self.assertEqual(gc.call_raw(*argv), rc.call_raw(*argv), argv)
                for k in (b"a", b"b", b"c", b"d"):
                    expected[k] = rc.call("GET", k)
                    self.assertEqual(gc.call("GET", k), expected[k], k)
            g.stop()
            logged = b""
            for f in glob.glob(os.path.join(d, "appendonlydir", "*.aof")):
                with open(f, "rb") as fh:
                    logged += fh.read()
            self.assertIn(b"PFCOUNT", logged.upper())
            g = gbtest.Server("goblin", args=["--appendonly", "yes", "--save", "", "--dir", d], dir=d)
            with Raw(g) as c:
                for k, v in expected.items():
                    self.assertEqual(c.call("GET", k), v, k)
        finally:
            g.cleanup()


if __name__ == "__main__":
    gbtest.run_tests()
