"""Differential test of the bitmap commands (issue 28): goblin-core against
redis-server 7.0 (Debian's 7.0.15), both started here.

Seeded random streams run SETBIT, GETBIT, BITCOUNT (BYTE|BIT ranges),
BITPOS, BITOP AND|OR|XOR|NOT, BITFIELD (GET/SET/INCRBY, OVERFLOW
WRAP|SAT|FAIL, i1..i64 / u1..u63 and the invalid widths, "#" offsets) and
BITFIELD_RO over random strings (binary bytes, integer-encoded values,
embedded and heap lengths, empty strings), with valid and invalid arguments
of every kind (non-integers, negative and huge offsets, bad units, bad
types, missing arguments, wrong-type keys), some commands inside MULTI,
some through EVAL's redis.call and redis.pcall, and half the seeds in
RESP3 (HELLO 3). Every reply is compared byte for byte; after each seed the
keys' values, types, OBJECT ENCODING and TTLs are compared, and so are the
keyspace events both servers published during the seed (notify-keyspace-
events KEAn, one subscriber on each).

Directed cases: the proto-max-bulk-len limit on offsets (SETBIT and
BITFIELD, plain and "#" offsets), maxmemory refusing the denyoom commands
(BITFIELD even with only GETs, as Redis decides by the command), "#"
offsets whose multiplication wraps as Redis's does, and what reaches the
append-only log: a restart of goblin-core over its log gives back Redis's
dataset, and read-only BITFIELDs are not logged.

Environment: GOBLIN_BITMAP_SEEDS (default 24), GOBLIN_BITMAP_OPS (default
800), GOBLIN_BITMAP_SEED (run only this seed).
"""

import glob
import os
import random
import shutil
import tempfile
import time

import gbtest
from gbtest import Raw

SEEDS = int(os.environ.get("GOBLIN_BITMAP_SEEDS", "24"))
OPS = int(os.environ.get("GOBLIN_BITMAP_OPS", "800"))
ONE_SEED = os.environ.get("GOBLIN_BITMAP_SEED")

KEYS = [b"k0", b"k1", b"k2", b"k3", b"k4"]
LIST_KEY = b"lst"  # WRONGTYPE for everything here
ALL_KEYS = KEYS + [LIST_KEY, b"nokey"]

# Integer arguments: valid, edge and invalid texts.
BAD_INTS = [b"", b"abc", b"1.5", b" 1", b"1 ", b"+1", b"01", b"9223372036854775808", b"-9223372036854775809",
            b"0x10", b"1e3", b"--1"]
EDGE_INTS = [b"0", b"-0", b"-1", b"9223372036854775807", b"-9223372036854775808", b"4294967296",
             b"34359738367", b"34359738368"]


def rand_string(rng):
    """A value: binary, integer-looking (goblin-core and Redis keep those as
    integers), short (embedded) or long (heap), sometimes empty."""
    kind = rng.random()
    if kind < 0.15:
        return str(rng.randint(-10 ** rng.randint(0, 18), 10 ** rng.randint(0, 18))).encode()
    if kind < 0.2:
        return b""
    n = rng.choice([1, 2, 3, 7, 8, 9, 15, 16, 31, 33, 44, 45, 63, 64, 65, 100, 129, 300, 1000, 4099])
    mode = rng.random()
    if mode < 0.2:
        return b"\x00" * n
    if mode < 0.35:
        return b"\xff" * n
    if mode < 0.5:  # sparse
        b = bytearray(n)
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(n)] = 1 << rng.randrange(8)
        return bytes(b)
    return bytes(rng.getrandbits(8) for _ in range(n))


def rand_key(rng):
    r = rng.random()
    if r < 0.04:
        return LIST_KEY
    if r < 0.1:
        return b"nokey"
    return rng.choice(KEYS)


def rand_int(rng, lo, hi, bad=0.05):
    r = rng.random()
    if r < bad:
        return rng.choice(BAD_INTS)
    if r < 2 * bad:
        return rng.choice(EDGE_INTS)
    return str(rng.randint(lo, hi)).encode()


def rand_offset(rng):
    r = rng.random()
    if r < 0.6:
        return rand_int(rng, 0, 300, bad=0.04)
    if r < 0.85:
        return rand_int(rng, 0, 40000, bad=0.04)
    return rng.choice([b"-1", b"4294967296", b"99999999999", b"abc", b"#3"])


def rand_unit(rng):
    return rng.choice([b"BIT", b"BYTE", b"bit", b"byte", b"Bit", b"bits", b"", b"BIT\x00x"])


def rand_range_index(rng):
    return rand_int(rng, -400, 400, bad=0.04)


def gen_setbit(rng):
    return [b"SETBIT", rand_key(rng), rand_offset(rng),
            rng.choice([b"0", b"1"]) if rng.random() < 0.9 else rng.choice([b"2", b"-1", b"x", b"", b"01", b"1.0"])]


def gen_getbit(rng):
    return [b"GETBIT", rand_key(rng), rand_offset(rng)]


def gen_bitcount(rng):
    argv = [b"BITCOUNT", rand_key(rng)]
    r = rng.random()
    if r < 0.15:
        return argv
    argv += [rand_range_index(rng), rand_range_index(rng)]
    if r < 0.45:
        return argv
    if r < 0.9:
        return argv + [rand_unit(rng)]
    return rng.choice([argv[:3], argv + [b"BIT", b"x"]])


def gen_bitpos(rng):
    bit = rng.choice([b"0", b"1"]) if rng.random() < 0.93 else rng.choice([b"2", b"-1", b"x", b""])
    argv = [b"BITPOS", rand_key(rng), bit]
    n = rng.choice([0, 1, 2, 3, 3, 3, 4])
    if n >= 1:
        argv.append(rand_range_index(rng))
    if n >= 2:
        argv.append(rand_range_index(rng))
    if n >= 3:
        argv.append(rand_unit(rng))
    if n >= 4:
        argv.append(b"extra")
    return argv


def gen_bitop(rng):
    op = rng.choice([b"AND", b"OR", b"XOR", b"NOT", b"and", b"Or", b"xor", b"not", b"NAND", b"", b"AND\x00"])
    n = 1 if op.lower() == b"not" and rng.random() < 0.85 else rng.randint(1, 4)
    return [b"BITOP", op, rand_key(rng)] + [rand_key(rng) for _ in range(n)]


def rand_type(rng):
    r = rng.random()
    if r < 0.85:
        signed = rng.random() < 0.5
        return (b"i%d" % rng.randint(1, 64)) if signed else (b"u%d" % rng.randint(1, 63))
    return rng.choice([b"u64", b"i65", b"i0", b"u0", b"x8", b"i", b"", b"I8", b"i08", b"i-1", b"u8\x00z", b"i8 "])


def rand_bf_offset(rng):
    r = rng.random()
    if r < 0.25:
        return b"#" + rand_int(rng, 0, 40, bad=0.05)
    if r < 0.3:
        return rng.choice([b"#", b"#-1", b"##1", b"#9223372036854775807", b"#288230376151711745",
                           b"#144115188075855873"])
    return rand_offset(rng)


def rand_value(rng):
    r = rng.random()
    if r < 0.5:
        return rand_int(rng, -300, 300, bad=0.03)
    return rand_int(rng, -(1 << 63), (1 << 63) - 1, bad=0.03)


def gen_bitfield(rng, ro=False):
    argv = [b"BITFIELD_RO" if ro else b"BITFIELD", rand_key(rng)]
    for _ in range(rng.randint(0 if rng.random() < 0.05 else 1, 5)):
        r = rng.random()
        if r < 0.15:
            argv += [b"OVERFLOW", rng.choice([b"WRAP", b"SAT", b"FAIL", b"wrap", b"sat", b"fail", b"bogus"])]
        elif r < 0.5 or (ro and r < 0.93):
            argv += [rng.choice([b"GET", b"get"]), rand_type(rng), rand_bf_offset(rng)]
        elif r < 0.72:
            argv += [b"SET", rand_type(rng), rand_bf_offset(rng), rand_value(rng)]
        elif r < 0.97:
            argv += [rng.choice([b"INCRBY", b"incrby"]), rand_type(rng), rand_bf_offset(rng), rand_value(rng)]
        else:
            argv += [rng.choice([b"GET", b"SET", b"INCRBY", b"OVERFLOW", b"DEL"])]  # short or unknown
    return argv


def gen_set(rng):
    return [b"SET", rng.choice(KEYS), rand_string(rng)]


def gen_misc(rng):
    k = rng.choice(KEYS)
    return rng.choice([[b"DEL", k], [b"APPEND", k, rand_string(rng)], [b"EXPIRE", k, b"1000"],
                       [b"INCR", k], [b"SETRANGE", k, rand_int(rng, 0, 200), b"xy"]])


GENERATORS = [(gen_setbit, 14), (gen_getbit, 8), (gen_bitcount, 12), (gen_bitpos, 14), (gen_bitop, 8),
              (gen_bitfield, 16), (lambda rng: gen_bitfield(rng, True), 5), (gen_set, 5), (gen_misc, 3)]


def pick_command(rng):
    total = sum(w for _, w in GENERATORS)
    x = rng.uniform(0, total)
    for gen, w in GENERATORS:
        x -= w
        if x <= 0:
            return gen(rng)
    return GENERATORS[0][0](rng)


def as_lua(rng, argv):
    """The command through a script: redis.call (an error raised) or
    redis.pcall (the error table returned)."""
    fn = "call" if rng.random() < 0.5 else "pcall"
    return [b"EVAL", ("return redis.%s(unpack(ARGV))" % fn).encode(), b"0"] + argv


class Pair:
    """The same connection setup on both servers, replies compared."""

    def __init__(self, test, goblin, redis, resp3):
        self.test = test
        self.g, self.r = Raw(goblin), Raw(redis)
        self.gsub, self.rsub = Raw(goblin), Raw(redis)
        self.history = []
        for c in (self.g, self.r):
            if resp3:
                c.call("HELLO", "3")
            c.call("FLUSHALL")
            c.call("CONFIG", "SET", "notify-keyspace-events", "KEAn")
        for s in (self.gsub, self.rsub):
            s.call("PSUBSCRIBE", "__key*@*__:*")

    def close(self):
        for c in (self.g, self.r, self.gsub, self.rsub):
            c.close()

    def both(self, argv, label):
        a = self.g.call_raw(*argv)
        b = self.r.call_raw(*argv)
        self.history.append(argv)
        if a != b:
            self.test.fail("%s: %r\n goblin: %r\n redis:  %r\n last commands: %r"
                           % (label, argv, a, b, self.history[-12:]))
        return a

    def compare_events(self, label):
        a = gbtest.events_so_far(self.g, self.gsub)
        b = gbtest.events_so_far(self.r, self.rsub)
        if a != b:
            self.test.fail("%s: keyspace events differ\n goblin: %r\n redis:  %r\n last commands: %r"
                           % (label, a[:2000], b[:2000], self.history[-12:]))

    def compare_keys(self, label):
        for k in ALL_KEYS:
            for argv in ([b"TYPE", k], [b"GET", k], [b"OBJECT", b"ENCODING", k], [b"TTL", k]):
                self.both(argv, "%s final state" % label)


def run_stream(test, goblin, redis, seed):
    rng = random.Random(seed)
    pair = Pair(test, goblin, redis, resp3=seed % 2 == 1)
    label = "seed %d" % seed
    try:
        for k in KEYS:
            if rng.random() < 0.85:
                pair.both([b"SET", k, rand_string(rng)], label)
        pair.both([b"RPUSH", LIST_KEY, b"a", b"b"], label)
        i = 0
        while i < OPS:
            r = rng.random()
            if r < 0.05:
                block = [pick_command(rng) for _ in range(rng.randint(1, 4))]
                pair.both([b"MULTI"], label)
                for argv in block:
                    pair.both(argv, label)
                pair.both([b"EXEC"], "%s op %d (EXEC)" % (label, i))
                i += len(block)
            elif r < 0.1:
                pair.both(as_lua(rng, pick_command(rng)), "%s op %d (Lua)" % (label, i))
                i += 1
            else:
                pair.both(pick_command(rng), "%s op %d" % (label, i))
                i += 1
            if i % 100 < 1:
                pair.compare_events(label)
        pair.compare_keys(label)
        pair.compare_events(label)
    finally:
        pair.close()


class BitmapDifferentialTest(gbtest.GoblinAndRedisCase):
    def test_random_streams(self):
        seeds = [int(ONE_SEED)] if ONE_SEED else range(1, SEEDS + 1)
        for seed in seeds:
            run_stream(self, self.goblin, self.redis, seed)

    def pair(self, resp3=False):
        p = Pair(self, self.goblin, self.redis, resp3)
        self.addCleanup(p.close)
        return p

    def test_offset_limit_follows_proto_max_bulk_len(self):
        p = self.pair()
        for c in (p.g, p.r):
            c.call("CONFIG", "SET", "proto-max-bulk-len", "1048576")
        try:
            last = 1048576 * 8 - 1
            for argv in ([b"SETBIT", b"k0", str(last).encode(), b"1"],
                         [b"SETBIT", b"k0", str(last + 1).encode(), b"1"],
                         [b"GETBIT", b"k0", str(last + 1).encode()],
                         [b"STRLEN", b"k0"],
                         [b"BITFIELD", b"k1", b"SET", b"i64", str(last).encode(), b"-1"],
                         [b"BITFIELD", b"k1", b"GET", b"u8", str(last + 1).encode()],
                         [b"BITFIELD", b"k1", b"GET", b"i64", b"#131071"],
                         [b"BITFIELD", b"k1", b"INCRBY", b"i64", b"#131072", b"1"],
                         [b"STRLEN", b"k1"],
                         [b"BITCOUNT", b"k1"], [b"BITPOS", b"k0", b"1"], [b"BITPOS", b"k0", b"1", b"-1"],
                         [b"BITOP", b"XOR", b"k2", b"k0", b"k1"], [b"BITCOUNT", b"k2"], [b"STRLEN", b"k2"]):
                p.both(argv, "proto-max-bulk-len 1mb")
            p.compare_events("proto-max-bulk-len 1mb")
        finally:
            for c in (p.g, p.r):
                c.call("CONFIG", "SET", "proto-max-bulk-len", "536870912")

    def test_maxmemory_refuses_denyoom_commands(self):
        p = self.pair()
        p.both([b"SET", b"k0", b"abc"], "maxmemory")
        for c in (p.g, p.r):
            c.call("CONFIG", "SET", "maxmemory-policy", "noeviction")
            c.call("CONFIG", "SET", "maxmemory", "1")
        try:
            for argv in ([b"SETBIT", b"k0", b"1", b"1"], [b"BITOP", b"NOT", b"k1", b"k0"],
                         [b"BITFIELD", b"k0", b"GET", b"u8", b"0"], [b"BITFIELD", b"k0", b"INCRBY", b"u8", b"0", b"1"],
                         [b"BITFIELD_RO", b"k0", b"GET", b"u8", b"0"], [b"GETBIT", b"k0", b"1"],
                         [b"BITCOUNT", b"k0"], [b"BITPOS", b"k0", b"0"]):
                p.both(argv, "maxmemory 1")
        finally:
            for c in (p.g, p.r):
                c.call("CONFIG", "SET", "maxmemory", "0")

    def test_wrapping_hash_offsets(self):
        """Redis multiplies a "#" offset by the width in 64-bit arithmetic
        that wraps: #2^58+1 of i64 is bit 64."""
        p = self.pair()
        p.both([b"SET", b"k0", bytes(range(1, 40))], "wrap")
        for argv in ([b"BITFIELD", b"k0", b"GET", b"i64", b"#288230376151711745"],
                     [b"BITFIELD", b"k0", b"GET", b"u32", b"#576460752303423489"],
                     [b"BITFIELD", b"k0", b"GET", b"i64", b"#144115188075855873"],
                     [b"BITFIELD", b"k0", b"GET", b"u1", b"#9223372036854775807"]):
            p.both(argv, "wrap")

    def test_expired_keys(self):
        """Keys past their expiry that active expiry has not reached yet:
        each command finds them gone (BITOP's destination too: storing
        over it makes a new key), with Redis's events."""
        redis = gbtest.Server("redis", args=["--enable-debug-command", "yes"])
        self.addCleanup(redis.cleanup)
        p = Pair(self, self.goblin, redis, False)
        self.addCleanup(p.close)
        for c in (p.g, p.r):
            self.assertEqual(c.call("DEBUG", "SET-ACTIVE-EXPIRE", "0"), b"OK")
        try:
            for argv in ([b"SET", b"k0", b"abc"], [b"SET", b"k1", b"xyz"], [b"SET", b"k2", b"q"],
                         [b"SET", b"k3", b"r"]):
                p.both(argv, "expired")
            for k in (b"k1", b"k2", b"k3"):
                p.both([b"PEXPIRE", k, b"1"], "expired")
            time.sleep(0.05)
            for argv in ([b"BITOP", b"OR", b"k1", b"k0"], [b"SETBIT", b"k2", b"3", b"1"],
                         [b"BITFIELD", b"k3", b"INCRBY", b"u8", b"0", b"1"], [b"TTL", b"k1"], [b"GET", b"k1"],
                         [b"GET", b"k2"], [b"GET", b"k3"]):
                p.both(argv, "expired")
            p.compare_events("expired")
        finally:
            for c in (p.g, p.r):
                c.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")

    def test_append_only_log(self):
        """A stream on goblin-core with the append-only log on, replayed by
        a restart, gives back redis-server's dataset; read-only BITFIELDs
        (only GETs) and BITFIELD_RO are not in the log."""
        d = tempfile.mkdtemp(prefix="gbit-bitmap-aof-")
        self.addCleanup(shutil.rmtree, d, True)
        g = gbtest.Server("goblin", args=["--appendonly", "yes", "--save", "", "--dir", d], dir=d)
        try:
            p = Pair(self, g, self.redis, False)
            rng = random.Random(4242)
            for k in KEYS:
                p.both([b"SET", k, rand_string(rng)], "aof")
            p.both([b"RPUSH", LIST_KEY, b"x"], "aof")
            for i in range(600):
                p.both(pick_command(rng), "aof op %d" % i)
            p.both([b"BITFIELD", b"k0", b"GET", b"u8", b"0"], "aof")
            p.both([b"BITFIELD_RO", b"k0", b"GET", b"u8", b"0"], "aof")
            p.both([b"BITFIELD", b"k3", b"OVERFLOW", b"FAIL", b"INCRBY", b"u2", b"4000", b"9"], "aof")
            expected = {k: (p.r.call("TYPE", k), p.r.call("GET", k) if p.r.call("TYPE", k) == b"string" else None)
                        for k in ALL_KEYS}
            p.close()
            g.stop()
            logged = b""
            for f in glob.glob(os.path.join(d, "appendonlydir", "*.aof")):
                with open(f, "rb") as fh:
                    logged += fh.read()
            self.assertNotIn(b"BITFIELD_RO", logged.upper())
            self.assertNotIn(b"GET\r\n$2\r\nu8\r\n$1\r\n0\r\n", logged.replace(b"get", b"GET"))
            g = gbtest.Server("goblin", args=["--appendonly", "yes", "--save", "", "--dir", d], dir=d)
            with Raw(g) as c:
                for k, (typ, val) in expected.items():
                    self.assertEqual(c.call("TYPE", k), typ, k)
                    if val is not None:
                        self.assertEqual(c.call("GET", k), val, k)
        finally:
            g.cleanup()


if __name__ == "__main__":
    gbtest.run_tests()
