"""List commands: goblin-core against redis-server 7, reply by reply.

Seeded random streams of every list command, valid and invalid (wrong types,
bad indexes, counts and timeouts, LEFT/RIGHT and BEFORE/AFTER typos, numkeys
errors, LPOS options incl. RANK 0, LLONG_MIN and negative COUNT/MAXLEN,
wrong arity, MULTI/EXEC blocks) go in lockstep to redis-server and to four
goblin-core configurations: --list-implementation segmented and pma, each
with the default list-max-listpack-size (-2) and with 4 (so lists convert
between the compact and the large representation constantly). Replies are
compared as exact RESP bytes; every few dozen commands the full contents of
every list key are compared too. A mismatch prints the seed, the index, the
command, both replies and the commands before it; GOBLIN_LDIFF_SEED=<n>
replays one seed.

Blocking commands are sent only with data present or with tiny timeouts
(0.001..0.01 s), so their outcome never depends on another client; a
timeout of 0 or 1 s is used only when one of the named keys exists (the
command then returns at once). There is only one connection per server, so
the one intentional difference from Redis 7.0 (a woken multi-key BLPOP
re-evaluates its keys in argument order) cannot arise.

Environment: GOBLIN_LDIFF_SEEDS (default 12), GOBLIN_LDIFF_OPS (default
1500), GOBLIN_LDIFF_SEED (only this seed).
"""

import os
import random
import unittest

import gbtest
from gbtest import Raw, Server, encode

SEEDS = int(os.environ.get("GOBLIN_LDIFF_SEEDS", "12"))
OPS = int(os.environ.get("GOBLIN_LDIFF_OPS", "1500"))
ONE_SEED = os.environ.get("GOBLIN_LDIFF_SEED")

CONFIGS = [("segmented", "-2"), ("pma", "-2"), ("segmented", "4"), ("pma", "4")]

LIST_KEYS = [b"l0", b"l1", b"l2", b"l3", b"{x}l4"]
OTHER_KEYS = [b"str", b"hash", b"zset", b"missing"]  # made non-lists at the start of every stream
KEYS = LIST_KEYS + OTHER_KEYS

VALUES = [b"a", b"b", b"c", b"x", b"", b"0", b"1", b"-1", b"127", b"128", b"-4096", b"4095", b"8191", b"-8192",
          b"32767", b"32768", b"8388607", b"-8388608", b"2147483647", b"2147483648",
          b"9223372036854775807", b"-9223372036854775808", b"9223372036854775808", b"007", b"+1", b"-0", b" 1",
          b"1.5", b"job:00000001", b"\x00\xff\r\n", b"v" * 15, b"v" * 16, b"w" * 63, b"w" * 64, b"y" * 200,
          b"z" * 4095, b"z" * 4096, b"Q" * 9000]
SMALL_VALUES = VALUES[:30]

INDEXES = [b"0", b"1", b"2", b"-1", b"-2", b"3", b"-3", b"5", b"-5", b"10", b"-10", b"100", b"-100", b"1000",
           b"9223372036854775807", b"-9223372036854775808", b"9223372036854775808", b"abc", b"", b"1.0", b" 1",
           b"+1", b"01", b"0x1"]
COUNTS = [b"0", b"1", b"2", b"3", b"5", b"8", b"100", b"-1", b"-5", b"abc", b"1.5", b"", b"9223372036854775807",
          b"9223372036854775808", b"-9223372036854775808", b"+2", b"02"]
TIMEOUTS_TINY = [b"0.001", b"0.002", b"0.01", b".001", b"1e-3", b"0.0001", b"0.001000"]
TIMEOUTS_BAD = [b"-1", b"-0.5", b"-1000", b"abc", b"", b"inf", b"-inf", b"nan", b"1e400", b"1e5000", b"1e-5000",
                b" 1", b"\t1", b"1 ", b"0x", b"1..2", b"9223372036854775807", b"99999999999999999999", b"1e16",
                b"-9223372036854775808"]
TIMEOUTS_LONG = [b"0", b"1", b"5", b"0.5", b"10"]
ENDS = [b"LEFT", b"RIGHT", b"left", b"Right", b"LEFTX", b"", b"UP"]


def representation(conn, key):
    """A goblin-core list's representation, from DEBUG OBJECT's
    representation field (OBJECT ENCODING says "quicklist" for both large
    ones, as Redis does)."""
    fields = dict(f.split(":", 1) for f in conn.call("DEBUG", "OBJECT", key).decode().split(" ") if ":" in f)
    return fields["representation"]


class Gen:
    def __init__(self, rng, exists):
        self.rng = rng
        self.exists = exists  # callable(keys) -> bool, asks the reference server

    def key(self):
        r = self.rng.random()
        if r < 0.8:
            return self.rng.choice(LIST_KEYS)
        return self.rng.choice(OTHER_KEYS)

    def keys(self, lo=1, hi=4):
        return [self.key() for _ in range(self.rng.randint(lo, hi))]

    def val(self):
        return self.rng.choice(VALUES if self.rng.random() < 0.3 else SMALL_VALUES)

    def idx(self):
        if self.rng.random() < 0.6:
            return str(self.rng.randint(-12, 12)).encode()
        return self.rng.choice(INDEXES)

    def count(self):
        if self.rng.random() < 0.5:
            return str(self.rng.randint(0, 10)).encode()
        return self.rng.choice(COUNTS)

    def end(self):
        return self.rng.choice(ENDS) if self.rng.random() < 0.1 else self.rng.choice(ENDS[:4])

    def timeout(self, keys):
        r = self.rng.random()
        if r < 0.08:
            return self.rng.choice(TIMEOUTS_BAD)
        if r < 0.5 and self.exists(keys):
            return self.rng.choice(TIMEOUTS_LONG)
        return self.rng.choice(TIMEOUTS_TINY)


def g_push(g):
    name = g.rng.choice([b"LPUSH", b"RPUSH", b"LPUSHX", b"RPUSHX"])
    r = g.rng.random()
    if r < 0.05:
        n = g.rng.randint(40, 300)  # big enough to leave the compact representation
        return [name, g.key()] + [g.rng.choice(SMALL_VALUES) for _ in range(n)]
    return [name, g.key()] + [g.val() for _ in range(g.rng.randint(1, 5))]


def g_pop(g):
    name = g.rng.choice([b"LPOP", b"RPOP"])
    if g.rng.random() < 0.5:
        return [name, g.key()]
    return [name, g.key(), g.count()]


def g_llen(g):
    return [b"LLEN", g.key()]


def g_lindex(g):
    return [b"LINDEX", g.key(), g.idx()]


def g_lset(g):
    return [b"LSET", g.key(), g.idx(), g.val()]


def g_lrange(g):
    return [b"LRANGE", g.key(), g.idx(), g.idx()]


def g_ltrim(g):
    if g.rng.random() < 0.5:  # mostly mild trims, so lists survive
        return [b"LTRIM", g.key(), str(g.rng.randint(0, 3)).encode(), str(g.rng.randint(-3, -1)).encode()]
    return [b"LTRIM", g.key(), g.idx(), g.idx()]


def g_lrem(g):
    c = str(g.rng.randint(-3, 3)).encode() if g.rng.random() < 0.8 else g.rng.choice(COUNTS)
    return [b"LREM", g.key(), c, g.rng.choice(SMALL_VALUES[:8])]


def g_linsert(g):
    where = g.rng.choice([b"BEFORE", b"AFTER", b"before", b"After"]) if g.rng.random() < 0.9 else \
        g.rng.choice([b"BEFOR", b"", b"LEFT"])
    return [b"LINSERT", g.key(), where, g.rng.choice(SMALL_VALUES[:8]), g.val()]


def g_lpos(g):
    args = [b"LPOS", g.key(), g.rng.choice(SMALL_VALUES[:8])]
    for _ in range(g.rng.choice([0, 1, 1, 2, 3])):
        opt = g.rng.choice([b"RANK", b"COUNT", b"MAXLEN", b"rank", b"count", b"maxlen", b"RANKS", b"LIMIT"])
        args.append(opt)
        if g.rng.random() < 0.95:
            if opt.upper() == b"RANK":
                # (RANK -9223372036854775808 is the one known difference: test_edge_cases)
                args.append(g.rng.choice([b"1", b"2", b"-1", b"-2", b"0", b"3", b"-9223372036854775809",
                                          b"-9223372036854775807", b"9223372036854775807", b"abc", b"1.5"]))
            else:
                args.append(g.rng.choice([b"0", b"1", b"2", b"5", b"-1", b"-9", b"abc", b"100"]))
    return args


def g_lmove(g):
    if g.rng.random() < 0.5:
        return [b"LMOVE", g.key(), g.key(), g.end(), g.end()]
    return [b"RPOPLPUSH", g.key(), g.key()]


def g_lmpop(g):
    return [b"LMPOP"] + mpop_args(g)


def mpop_args(g):
    keys = g.keys(1, 3)
    r = g.rng.random()
    if r < 0.85:
        nk = str(len(keys)).encode()
    else:
        nk = g.rng.choice([b"0", b"-1", b"abc", b"9", str(len(keys) + 1).encode(), b"9223372036854775807",
                           b"2147483648"])
    args = [nk] + keys + [g.end()]
    r = g.rng.random()
    if r < 0.5:
        args += [g.rng.choice([b"COUNT", b"count"]), g.count()]
    elif r < 0.55:
        args += [b"COUNT", b"2", b"COUNT", b"3"]
    elif r < 0.6:
        args += [b"COUNT"]
    elif r < 0.63:
        args += [b"BOGUS"]
    if g.rng.random() < 0.05:
        args = args[:g.rng.randint(0, len(args))]
    return args


def g_bpop(g):
    name = g.rng.choice([b"BLPOP", b"BRPOP"])
    keys = g.keys(1, 3)
    return [name] + keys + [g.timeout(keys)]


def g_bmove(g):
    src, dst = g.key(), g.key()
    if g.rng.random() < 0.5:
        return [b"BLMOVE", src, dst, g.end(), g.end(), g.timeout([src])]
    return [b"BRPOPLPUSH", src, dst, g.timeout([src])]


def g_blmpop(g):
    rest = mpop_args(g)
    keys = [k for k in rest if k in KEYS]
    t = g.timeout(keys) if keys else g.rng.choice(TIMEOUTS_TINY)
    return [b"BLMPOP", t] + rest


def g_arity(g):
    name = g.rng.choice([b"LPUSH", b"RPUSH", b"LPUSHX", b"LPOP", b"RPOP", b"LLEN", b"LINDEX", b"LSET", b"LRANGE",
                         b"LTRIM", b"LREM", b"LINSERT", b"LPOS", b"LMOVE", b"RPOPLPUSH", b"LMPOP", b"BLPOP",
                         b"BRPOP", b"BLMOVE", b"BRPOPLPUSH", b"BLMPOP"])
    n = g.rng.randint(0, 2)
    if name in (b"LPOP", b"RPOP"):
        n = g.rng.choice([0, 3])
    return [name] + [g.key() for _ in range(n)]


def g_keyspace(g):
    r = g.rng.random()
    if r < 0.3:
        return [b"DEL", g.key()]
    if r < 0.5:
        return [b"TYPE", g.key()]
    if r < 0.6:
        return [b"RENAME", g.rng.choice(LIST_KEYS), g.rng.choice(LIST_KEYS)]
    if r < 0.7:
        return [b"COPY", g.rng.choice(LIST_KEYS), g.rng.choice(LIST_KEYS), b"REPLACE"]
    if r < 0.85:
        return [b"EXISTS"] + g.keys(1, 3)
    return [b"SET", g.rng.choice(LIST_KEYS), b"now-a-string"]


GENERATORS = [(g_push, 22), (g_pop, 8), (g_llen, 3), (g_lindex, 6), (g_lset, 5), (g_lrange, 6), (g_ltrim, 3),
              (g_lrem, 4), (g_linsert, 5), (g_lpos, 7), (g_lmove, 6), (g_lmpop, 5), (g_bpop, 5), (g_bmove, 4),
              (g_blmpop, 4), (g_arity, 2), (g_keyspace, 3)]


def pick(rng):
    total = sum(w for _, w in GENERATORS)
    x = rng.uniform(0, total)
    for fn, w in GENERATORS:
        x -= w
        if x <= 0:
            return fn
    return GENERATORS[-1][0]


def fmt(argv):
    out = []
    for a in argv:
        s = a.decode("latin-1")
        out.append(repr(s[:40] + ("...(%d bytes)" % len(s) if len(s) > 40 else "")))
    return " ".join(out)


RANK_MIN_ERR = b"-ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807\r\n"


def known_difference(argv, redis_raw, goblin_raw):
    """The documented, intentional differences from Redis 7.0 (docs/lists.md).

    LPOS ... RANK -9223372036854775808: Redis 7.0 negates LONG_MIN (undefined
    behaviour; it answers as for RANK -1); goblin answers what Redis 7.2
    answers, the out-of-range error, unless an earlier argument is already an
    error (then both agree)."""
    if argv[0].upper() == b"LPOS" and b"-9223372036854775808" in argv and goblin_raw == RANK_MIN_ERR:
        return not redis_raw.startswith(b"-")
    return False


class Mismatch(AssertionError):
    pass


class Stream:
    """One seed: the reference redis-server and the goblin configurations in lockstep."""

    def __init__(self, test, seed):
        self.test = test
        self.seed = seed
        self.rng = random.Random(seed)
        self.conns = [(name, Raw(srv)) for name, srv in test.servers]
        self.probe = Raw(test.servers[0][1])  # EXISTS questions, outside any MULTI
        self.history = []
        self.gen = Gen(self.rng, self.exists)
        for _, r in self.conns:
            r.call("FLUSHALL")

    def close(self):
        for _, r in self.conns:
            r.close()
        self.probe.close()

    def exists(self, keys):
        return self.probe.call(b"EXISTS", *keys) > 0

    def send(self, idx, argv):
        data = encode(*argv)
        for _, r in self.conns:
            r.send(data)
        replies = [(name, r.read()[1]) for name, r in self.conns]
        self.history.append(argv)
        ref = replies[0][1]
        for name, raw in replies[1:]:
            if raw != ref and not known_difference(argv, ref, raw):
                hist = "\n".join("    " + fmt(a) for a in self.history[-15:])
                raise Mismatch("seed %d, command #%d: %s\n  redis:   %r\n  %-8s %r\n  last commands:\n%s" % (
                    self.seed, idx, fmt(argv), ref[:300], name + ":", raw[:300], hist))
        return ref

    def setup(self):
        self.send(-1, [b"SET", b"str", b"v"])
        self.send(-1, [b"HSET", b"hash", b"f", b"v"])
        self.send(-1, [b"ZADD", b"zset", b"1", b"m"])

    def check_contents(self, idx):
        for k in LIST_KEYS:
            self.send(idx, [b"TYPE", k])
            self.send(idx, [b"LRANGE", k, b"0", b"-1"])

    def run(self, nops):
        self.setup()
        rng = self.rng
        i = 0
        while i < nops:
            if rng.random() < 0.04:  # a transaction of list commands, blocking ones included
                self.send(i, [b"MULTI"])
                for _ in range(rng.randint(1, 6)):
                    argv = pick(rng)(self.gen)
                    if argv[0] in (b"BLPOP", b"BRPOP", b"BLMOVE", b"BRPOPLPUSH", b"BLMPOP") and len(argv) > 2 and \
                            rng.random() < 0.5:
                        # inside MULTI a blocking command never blocks, even with timeout 0
                        if argv[0] == b"BLMPOP":
                            argv[1] = b"0"
                        else:
                            argv[-1] = b"0"
                    self.send(i, argv)
                    i += 1
                self.send(i, [b"EXEC"] if rng.random() < 0.9 else [b"DISCARD"])
            else:
                self.send(i, pick(rng)(self.gen))
                i += 1
            if i % 40 == 0:
                self.check_contents(i)
            if rng.random() < 0.002:  # the non-list keys come back
                self.setup()
        self.check_contents(nops)
        # the whole dataset, on every list implementation alike
        self.send(nops, [b"DEBUG", b"DIGEST"])


class ListDifferentialTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.servers = [("redis", Server("redis"))]
        for impl, size in CONFIGS:
            cls.servers.append(("%s/%s" % (impl, size),
                                Server("goblin", args=["--list-implementation", impl,
                                                       "--list-max-listpack-size", size])))

    @classmethod
    def tearDownClass(cls):
        for _, s in cls.servers:
            s.cleanup()

    def run_seed(self, seed, nops):
        st = Stream(self, seed)
        try:
            st.run(nops)
        finally:
            st.close()

    def test_edge_cases(self):
        """Fixed cases first: each error path named in the brief, once."""
        st = Stream(self, 0)
        try:
            st.setup()
            cases = [
                [b"RPUSH", b"l0", b"a", b"b", b"c", b"a", b"b", b"a"],
                [b"LPOS", b"l0", b"a", b"RANK", b"0"],
                [b"LPOS", b"l0", b"a", b"RANK", b"-1", b"COUNT", b"0"], [b"LPOS", b"l0", b"a", b"COUNT", b"-1"],
                [b"LPOS", b"l0", b"a", b"MAXLEN", b"-1"], [b"LPOS", b"l0", b"a", b"MAXLEN", b"2", b"COUNT", b"0"],
                [b"LPOS", b"l0", b"a", b"RANK"], [b"LPOS", b"l0", b"a", b"RANK", b"2", b"RANK", b"-2"],
                [b"LPOS", b"missing", b"a", b"COUNT", b"2"], [b"LPOS", b"str", b"a"],
                [b"LMOVE", b"l0", b"l1", b"LEFTX", b"RIGHT"], [b"LMOVE", b"l0", b"l1", b"LEFT", b"RIGHTX"],
                [b"LMOVE", b"missing", b"str", b"LEFT", b"RIGHT"], [b"LMOVE", b"l0", b"str", b"LEFT", b"RIGHT"],
                [b"LMPOP", b"0", b"l0", b"LEFT"], [b"LMPOP", b"-1", b"l0", b"LEFT"], [b"LMPOP", b"abc", b"l0"],
                [b"LMPOP", b"3", b"l0", b"LEFT"], [b"LMPOP", b"1", b"l0", b"MIDDLE"],
                [b"LMPOP", b"1", b"l0", b"LEFT", b"COUNT", b"0"], [b"LMPOP", b"1", b"l0", b"LEFT", b"COUNT", b"-1"],
                [b"LMPOP", b"1", b"l0", b"LEFT", b"COUNT"], [b"LMPOP", b"1", b"l0", b"LEFT", b"COUNT", b"1",
                                                                 b"COUNT", b"1"],
                [b"LMPOP", b"2", b"missing", b"str", b"LEFT"], [b"LMPOP", b"2", b"missing", b"l0", b"RIGHT",
                                                                b"COUNT", b"2"],
                [b"BLMPOP", b"0.01", b"0", b"l0", b"LEFT"], [b"BLMPOP", b"-1", b"1", b"l0", b"LEFT"],
                [b"BLMPOP", b"abc", b"1", b"missing", b"LEFT"], [b"BLMPOP", b"0.01", b"1", b"missing", b"LEFT"],
                [b"BLPOP", b"missing", b"-1"], [b"BLPOP", b"missing", b"abc"], [b"BLPOP", b"missing", b"nan"],
                [b"BLPOP", b"missing", b"inf"], [b"BLPOP", b"missing", b"0.001"], [b"BLPOP", b"str", b"missing",
                                                                                    b"0.001"],
                [b"BLPOP", b"missing", b"l0", b"0"], [b"BRPOP", b"l0", b"str", b"0"],
                [b"BLMOVE", b"l0", b"l1", b"UP", b"LEFT", b"0"], [b"BLMOVE", b"missing", b"l1", b"LEFT", b"LEFT",
                                                                  b"-1"],
                [b"BLMOVE", b"l0", b"l0", b"LEFT", b"RIGHT", b"0"], [b"BRPOPLPUSH", b"l0", b"str", b"0"],
                [b"LINDEX", b"l0", b"abc"], [b"LINDEX", b"missing", b"abc"], [b"LSET", b"missing", b"0", b"x"],
                [b"LSET", b"l0", b"100", b"x"], [b"LSET", b"l0", b"abc", b"x"], [b"LSET", b"str", b"0", b"x"],
                [b"LRANGE", b"l0", b"abc", b"1"], [b"LRANGE", b"str", b"0", b"1"], [b"LTRIM", b"l0", b"1", b"x"],
                [b"LREM", b"l0", b"x", b"a"], [b"LINSERT", b"l0", b"MIDDLE", b"a", b"b"],
                [b"LINSERT", b"missing", b"BEFORE", b"a", b"b"], [b"LINSERT", b"l0", b"BEFORE", b"zz", b"b"],
                [b"LPOP", b"l0", b"-1"], [b"LPOP", b"l0", b"0"], [b"LPOP", b"missing", b"0"],
                [b"LPOP", b"missing", b"2"], [b"RPOP", b"l0", b"abc"], [b"LPOP", b"l0", b"1", b"2"],
                [b"LPUSHX", b"missing", b"a"], [b"RPUSHX", b"str", b"a"], [b"LPUSH", b"str", b"a"],
                [b"LLEN", b"str"], [b"LLEN", b"missing"], [b"BLPOP", b"l0"], [b"BLMPOP", b"0", b"1"],
                [b"MULTI"], [b"BLPOP", b"missing", b"0"], [b"BLMOVE", b"missing", b"x", b"LEFT", b"LEFT", b"0"],
                [b"BLMPOP", b"0", b"1", b"missing", b"LEFT"], [b"LMPOP", b"0", b"x"], [b"EXEC"],
                [b"LRANGE", b"l0", b"0", b"-1"],
            ]
            for i, argv in enumerate(cases):
                st.send(i, argv)
            # The known difference, asserted explicitly on every goblin configuration.
            st.send(len(cases), [b"RPUSH", b"lp", b"a", b"b", b"a"])
            st.send(len(cases) + 1, [b"LPOS", b"lp", b"a", b"RANK", b"-9223372036854775807"])
            st.send(len(cases) + 2, [b"LPOS", b"lp", b"a", b"RANK", b"-2", b"COUNT", b"5"])
            for name, r in st.conns[1:]:
                self.assertEqual(r.call_raw("LPOS", "lp", "a", "RANK", "-9223372036854775808"), RANK_MIN_ERR, name)
        finally:
            st.close()

    def test_random_streams(self):
        seeds = [int(ONE_SEED)] if ONE_SEED else list(range(1, SEEDS + 1))
        for seed in seeds:
            with self.subTest(seed=seed):
                self.run_seed(seed, OPS)

    def test_copy_keeps_the_list_settings(self):
        """COPY of a list: same values everywhere, and on goblin the copy uses
        the server's representation and size limit (not the built-in
        defaults), as Redis's quicklistDup keeps the source's fill."""
        for name, srv in self.servers:
            with Raw(srv) as r:
                r.call("FLUSHALL")
                r.call("RPUSH", "big", *[b"v%d" % i for i in range(10)])
                r.call("RPUSH", "small", "a", "b", "c")
                self.assertEqual(r.call("COPY", "big", "big2"), 1)
                self.assertEqual(r.call("COPY", "small", "small2"), 1)
                self.assertEqual(r.call("LRANGE", "big2", 0, -1), [b"v%d" % i for i in range(10)])
                if name == "redis":
                    continue
                impl, size = name.split("/")
                want_big = impl if size == "4" else "listpack"
                self.assertEqual(representation(r, "big2"), want_big, name)
                self.assertEqual(r.call("OBJECT", "ENCODING", "big2"), b"quicklist", name)  # Redis 7.0's word
                self.assertEqual(representation(r, "small2"), "listpack", name)
                r.call("RPUSH", "small2", "d", "e")  # past 4 entries: converts to the server's backend
                self.assertEqual(representation(r, "small2"), impl if size == "4" else "listpack", name)

    def test_z_servers_alive(self):
        for name, srv in self.servers:
            self.assertTrue(srv.alive(), "%s died:\n%s" % (name, srv.log()[-3000:]))


if __name__ == "__main__":
    gbtest.run_tests()
