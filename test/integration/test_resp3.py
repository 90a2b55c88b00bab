"""RESP3 differential tests (issue 16): goblin-core against redis-server 7.0,
both switched to RESP3 with HELLO 3, the same commands in lockstep.

  * HELLO: the reply map (server name, version and client id aside), every
    error (NOPROTO, syntax, AUTH), switching back and forth, RESET to RESP2.
  * A fixed corpus of commands whose RESP3 type differs from RESP2's (maps,
    sets, doubles, nulls, verbatim strings, nested WITHSCORES pairs),
    compared byte for byte where the reply is deterministic.
  * The seeded random streams of test_differential.py (strings, keys,
    expiry, databases, MULTI, arity errors) and test_types_differential.py
    (hashes, sets, sorted sets), replayed in RESP3: every reply's RESP3 type
    tree must match Redis's; values too, with the same allowances as those
    suites (doubles numerically: Redis 7.0 prints "%.17g", goblin-core the
    shortest text; unordered collections as multisets; random picks by
    shape).

Environment: GOBLIN_RESP3_SEEDS (default 8), GOBLIN_RESP3_OPS (default 1500).
"""

import os
import random

import gbtest
import resp3
import test_differential as td
import test_types_differential as tt
from resp3 import plain, shape

SEEDS = int(os.environ.get("GOBLIN_RESP3_SEEDS", "8"))
OPS = int(os.environ.get("GOBLIN_RESP3_OPS", "1500"))


class Mismatch(AssertionError):
    pass


def hello_fields(r):
    """HELLO's fields: a map in RESP3, a flat array in RESP2."""
    pairs = r.value if r.kind == "%" else list(zip(r.value[::2], r.value[1::2]))
    return {k.value: v for k, v in pairs}


class Lockstep:
    def __init__(self, goblin, redis, nconn=2):
        self.g = [resp3.Conn(goblin) for _ in range(nconn)]
        self.r = [resp3.Conn(redis) for _ in range(nconn)]
        self.hist = []

    def close(self):
        for c in self.g + self.r:
            c.close()

    def both(self, argv, conn=0):
        self.g[conn].send(*argv)
        self.r[conn].send(*argv)
        a, b = self.g[conn].read(), self.r[conn].read()
        self.hist.append((conn, argv))
        return a, b

    def fail(self, why, argv, a, b):
        hist = "\n".join("    c%d: %s" % (c, td.fmt_argv(x)) for c, x in self.hist[-12:])
        raise Mismatch("%s\n  command: %s\n  goblin: %r\n  redis:  %r\n  recent:\n%s"
                       % (why, td.fmt_argv(argv), a.raw[:600], b.raw[:600], hist))


def same_values(mode, a, b):
    if mode == "shape":
        return shape(a) == shape(b)
    return plain(a) == plain(b)


# Commands whose RESP3 reply differs in type from RESP2's, each followed by
# the comparison: "exact" bytes, "plain" (doubles numerically, maps/sets as
# multisets), "shape" (random content).
CORPUS = [
    ("exact", [b"HSET", b"h", b"a", b"1", b"b", b"2"]),
    ("plain", [b"HGETALL", b"h"]),
    ("exact", [b"HGETALL", b"nokey"]),
    ("exact", [b"HMGET", b"h", b"a", b"nokey"]),
    ("shape", [b"HRANDFIELD", b"h", b"2", b"WITHVALUES"]),
    ("shape", [b"HRANDFIELD", b"h", b"-3", b"WITHVALUES"]),
    ("exact", [b"HRANDFIELD", b"nokey"]),
    ("exact", [b"HRANDFIELD", b"nokey", b"2", b"WITHVALUES"]),
    ("exact", [b"SADD", b"s", b"a", b"b", b"c"]),
    ("plain", [b"SMEMBERS", b"s"]),
    ("exact", [b"SMEMBERS", b"nokey"]),
    ("plain", [b"SINTER", b"s", b"s"]),
    ("exact", [b"SINTER", b"s", b"nokey"]),
    ("plain", [b"SUNION", b"s", b"nokey"]),
    ("plain", [b"SDIFF", b"s", b"nokey"]),
    ("exact", [b"SUNION", b"nokey"]),
    ("exact", [b"SMISMEMBER", b"s", b"a", b"z"]),
    ("exact", [b"SPOP", b"nokey", b"2"]),
    ("exact", [b"SPOP", b"nokey"]),
    ("shape", [b"SRANDMEMBER", b"s", b"2"]),
    ("exact", [b"ZADD", b"z", b"1", b"a", b"2.5", b"b", b"-inf", b"c"]),
    ("exact", [b"ZSCORE", b"z", b"a"]),
    ("exact", [b"ZSCORE", b"z", b"c"]),
    ("exact", [b"ZSCORE", b"z", b"nosuch"]),
    ("exact", [b"ZMSCORE", b"z", b"a", b"nosuch", b"b"]),
    ("plain", [b"ZINCRBY", b"z", b"1.1", b"a"]),
    ("plain", [b"ZADD", b"z", b"INCR", b"1", b"a"]),
    ("exact", [b"ZADD", b"z", b"NX", b"INCR", b"1", b"a"]),
    ("plain", [b"ZRANGE", b"z", b"0", b"-1", b"WITHSCORES"]),
    ("plain", [b"ZRANGE", b"z", b"0", b"-1"]),
    ("plain", [b"ZREVRANGE", b"z", b"0", b"-1", b"WITHSCORES"]),
    ("plain", [b"ZRANGEBYSCORE", b"z", b"-inf", b"+inf", b"WITHSCORES", b"LIMIT", b"0", b"2"]),
    ("plain", [b"ZREVRANGEBYSCORE", b"z", b"+inf", b"-inf", b"WITHSCORES"]),
    ("plain", [b"ZRANGE", b"z", b"(1", b"+inf", b"BYSCORE", b"WITHSCORES"]),
    ("exact", [b"ZRANGE", b"nokey", b"0", b"-1", b"WITHSCORES"]),
    ("plain", [b"ZUNION", b"2", b"z", b"nokey", b"WITHSCORES"]),
    ("plain", [b"ZINTER", b"1", b"z", b"WITHSCORES"]),
    ("plain", [b"ZDIFF", b"1", b"z", b"WITHSCORES"]),
    ("shape", [b"ZRANDMEMBER", b"z", b"2", b"WITHSCORES"]),
    ("shape", [b"ZRANDMEMBER", b"z", b"-5", b"WITHSCORES"]),
    ("exact", [b"ZRANDMEMBER", b"nokey"]),
    ("plain", [b"ZPOPMIN", b"z"]),
    ("plain", [b"ZPOPMAX", b"z", b"1"]),
    ("exact", [b"ZPOPMIN", b"nokey"]),
    ("exact", [b"ZPOPMIN", b"nokey", b"2"]),
    ("exact", [b"ZADD", b"z", b"1", b"a", b"2.5", b"b", b"3", b"c"]),
    ("plain", [b"ZMPOP", b"1", b"z", b"MIN", b"COUNT", b"2"]),
    ("exact", [b"ZMPOP", b"1", b"nokey", b"MIN"]),
    ("exact", [b"ZADD", b"z", b"1", b"a", b"2.5", b"b"]),
    ("plain", [b"BZPOPMIN", b"z", b"0"]),
    ("plain", [b"BZMPOP", b"0", b"1", b"z", b"MAX"]),
    ("exact", [b"BZPOPMIN", b"nokey", b"0.01"]),
    ("exact", [b"BLPOP", b"nokey", b"0.01"]),
    ("exact", [b"ZADD", b"z", b"1", b"a", b"2.5", b"b"]),
    ("plain", [b"ZSCAN", b"z", b"0"]),
    ("exact", [b"ZRANK", b"z", b"nosuch"]),
    ("exact", [b"GET", b"nokey"]),
    ("exact", [b"LPOP", b"nokey"]),
    ("exact", [b"LPOP", b"nokey", b"2"]),
    ("exact", [b"LMPOP", b"1", b"nokey", b"LEFT"]),
    ("exact", [b"LPOS", b"nokey", b"a"]),
    ("exact", [b"LPOS", b"nokey", b"a", b"COUNT", b"2"]),
    ("exact", [b"MGET", b"nokey", b"h"]),
    ("exact", [b"GETEX", b"nokey"]),
    ("exact", [b"GETDEL", b"nokey"]),
    ("exact", [b"INCRBYFLOAT", b"f", b"1.5"]),
    ("exact", [b"HINCRBYFLOAT", b"h", b"f", b"1.5"]),
    ("exact", [b"CONFIG", b"GET", b"maxmemory"]),
    ("exact", [b"CONFIG", b"GET", b"nosuch"]),
    ("plain", [b"CONFIG", b"GET", b"maxmemory", b"databases", b"hz"]),
    ("exact", [b"CLIENT", b"GETNAME"]),
    ("exact", [b"CLIENT", b"LIST", b"TYPE", b"pubsub"]),
    ("exact", [b"CLIENT", b"LIST", b"ID", b"99999"]),
    ("exact", [b"CLIENT", b"TRACKINGINFO"]),
    ("exact", [b"CLIENT", b"GETREDIR"]),
    ("exact", [b"MEMORY", b"USAGE", b"nokey"]),
    ("exact", [b"EXEC"]),
    ("exact", [b"MULTI"]),
    ("exact", [b"ZSCORE", b"z", b"a"]),
    ("exact", [b"HGETALL", b"nokey"]),
    ("exact", [b"GET", b"nokey"]),
    ("plain", [b"EXEC"]),
    ("exact", [b"COMMAND", b"INFO", b"get"]),
    ("exact", [b"COMMAND", b"DOCS", b"get"]),
    ("exact", [b"COMMAND", b"GETKEYSANDFLAGS", b"set", b"a", b"b"]),
    ("exact", [b"ACL", b"GETUSER", b"default"]),
    ("exact", [b"TTL", b"nokey"]),
    ("exact", [b"SET", b"k", b"v", b"GET"]),
    ("exact", [b"OBJECT", b"ENCODING", b"nokey"]),
    ("shape", [b"RANDOMKEY"]),
    ("exact", [b"FLUSHALL"]),
    ("exact", [b"RANDOMKEY"]),
    ("exact", [b"SCAN", b"0"]),
    ("exact", [b"KEYS", b"*"]),
]


class Resp3Test(gbtest.GoblinAndRedisCase):
    def test_hello(self):
        with resp3.Conn(self.goblin, proto=2) as g, resp3.Conn(self.redis, proto=2) as r:
            for argv in ([b"HELLO", b"4"], [b"HELLO", b"1"], [b"HELLO", b"abc"], [b"HELLO", b"3", b"BOGUS"],
                         [b"HELLO", b"3", b"AUTH", b"default"],
                         [b"HELLO", b"3", b"SETNAME", b"a b"], [b"HELLO", b"-1"],
                         [b"HELLO", b"9223372036854775808"]):
                a, b = g.call(*argv), r.call(*argv)
                self.assertEqual(a.raw, b.raw, argv)
            for argv in ([b"HELLO"], [b"HELLO", b"3"], [b"HELLO"], [b"HELLO", b"2"], [b"HELLO", b"3", b"SETNAME", b"nm"],
                         [b"HELLO", b"3", b"AUTH", b"default", b"anything"]):
                a, b = g.call(*argv), r.call(*argv)
                self.assertEqual(a.kind, b.kind, argv)
                self.assertEqual(shape(a), shape(b), argv)
                fa, fb = hello_fields(a), hello_fields(b)
                self.assertEqual(list(fa), list(fb))  # the same keys in the same order
                for k in fa:
                    if k not in (b"server", b"id", b"version"):
                        self.assertEqual(fa[k].raw, fb[k].raw, (argv, k))
                self.assertEqual(fa[b"server"].value, b"goblin-core")
                self.assertEqual(fa[b"version"].value, b"7.0.15")
            # The name HELLO SETNAME gave, and the protocol in CLIENT INFO.
            info = g.call(b"CLIENT", b"INFO")
            self.assertEqual(info.kind, "=")
            self.assertIn(b" name=nm ", info.value)
            self.assertTrue(info.value.endswith(b" resp=3\n"))
            # RESET: back to RESP2, a status in RESP2.
            self.assertEqual(g.call(b"RESET").raw, r.call(b"RESET").raw)
            self.assertEqual(g.call(b"HGETALL", b"nokey").raw, b"*0\r\n")
            self.assertEqual(g.call(b"CLIENT", b"GETNAME").raw, b"$-1\r\n")

    def test_corpus(self):
        ls = Lockstep(self.goblin, self.redis, 1)
        try:
            ls.both([b"FLUSHALL"])
            for mode, argv in CORPUS:
                a, b = ls.both(argv)
                ok = a.raw == b.raw if mode == "exact" else same_values(mode, a, b)
                if not ok:
                    ls.fail("RESP3 reply differs (%s)" % mode, argv, a, b)
                # Whatever the comparison, the RESP3 types must be Redis's.
                if type_tree(a) != type_tree(b) and mode != "shape":
                    ls.fail("RESP3 types differ", argv, a, b)
        finally:
            ls.close()

    def test_verbatim_and_maps(self):
        """INFO and CLIENT INFO/LIST are verbatim strings in RESP3; their
        text is the RESP2 bulk's."""
        with resp3.Conn(self.goblin) as g, resp3.Conn(self.goblin, proto=2) as g2:
            for argv in ([b"INFO", b"keyspace"], [b"CLIENT", b"LIST", b"ID", b"1"]):
                a, b = g.call(*argv), g2.call(*argv)
                self.assertEqual(a.kind, "=")
                self.assertEqual(a.raw[:1], b"=")
                self.assertEqual(b.kind, "$")
                self.assertEqual(a.value, b.value)
            a = g.call(b"INFO", b"server")
            self.assertEqual(a.kind, "=")
            self.assertTrue(a.value.startswith(b"# Server\r\n"))
            a = g.call(b"CLIENT", b"INFO")
            self.assertEqual(a.kind, "=")
            self.assertTrue(a.value.startswith(b"id="))

    def test_random_streams_strings(self):
        """test_differential.py's streams (strings, keys, expiry, databases,
        MULTI, arity) in RESP3."""
        for seed in range(1, SEEDS + 1):
            self.run_string_stream(seed)

    def run_string_stream(self, seed):
        rng = random.Random(seed)
        ctx = td.Ctx(rng)
        fns, weights = td.pick_generators()
        ls = Lockstep(self.goblin, self.redis, 2)
        try:
            for conn in range(2):
                ls.both([b"FLUSHALL"], conn)
            in_multi = [False, False]
            queued = [[], []]
            for i in range(OPS):
                conn = 0 if rng.random() < 0.85 else 1
                argv = rng.choices(fns, weights)[0](ctx)
                if not argv or argv[0].upper() in (b"QUIT", b"HELLO", b"RANDOMKEY", b"DBSIZE"):
                    continue
                name = argv[0].upper()
                a, b = ls.both(argv, conn)
                # Replies with their own rule (SCAN's page, TTLs) may differ
                # in size or nil-ness; the others in nothing but values.
                if (type_tree(a) != type_tree(b)) if td.comparator(argv) is td._exact else a.kind != b.kind:
                    ls.fail("seed %d #%d: RESP3 types differ" % (seed, i), argv, a, b)
                if name == b"EXEC" and a.kind == "*" and b.kind == "*" and len(a.value) == len(queued[conn]):
                    # Each queued command's reply with that command's rule.
                    for q, x, y in zip(queued[conn], a.value, b.value):
                        if not same_reply(q, x, y):
                            ls.fail("seed %d #%d: EXEC reply to %s differs" % (seed, i, td.fmt_argv(q)), argv, x, y)
                elif not same_reply(argv, a, b):
                    ls.fail("seed %d #%d: RESP3 values differ" % (seed, i), argv, a, b)
                if in_multi[conn] and a.raw == b"+QUEUED\r\n":
                    queued[conn].append(argv)
                if name == b"MULTI" and a.kind == "+":
                    in_multi[conn] = True
                    queued[conn] = []
                if name in (b"EXEC", b"DISCARD"):
                    in_multi[conn] = False
        finally:
            ls.close()

    def test_random_streams_types(self):
        """test_types_differential.py's streams (hashes, sets, sorted sets)
        in RESP3 (SPOP aside: it would make the keyspaces differ)."""
        for seed in range(1, SEEDS + 1):
            self.run_types_stream(seed)

    def run_types_stream(self, seed):
        rng = random.Random(seed)
        g = tt.Gen(rng)
        fns = [f for f, w in tt.GENERATORS]
        weights = [w for f, w in tt.GENERATORS]
        ls = Lockstep(self.goblin, self.redis, 1)
        try:
            ls.both([b"FLUSHALL"])
            for name, val in tt.PROFILES["tiny" if seed % 2 else "default"]:
                ls.both([b"CONFIG", b"SET", name, val])
            for i in range(OPS):
                kind, argv = rng.choices(fns, weights)[0](g)
                if kind in ("spop", "encoding") or argv[0].upper().startswith(b"B"):
                    continue
                a, b = ls.both(argv)
                if kind.startswith("random-") or kind.startswith("scan-"):
                    ok = shape(a) == shape(b) if kind.startswith("random-") else a.kind == b.kind
                elif kind in ("pairs", "unordered"):
                    ok = type_tree(a) == type_tree(b) and sorted_plain(a) == sorted_plain(b)
                else:
                    ok = type_tree(a) == type_tree(b) and plain(a) == plain(b)
                if not ok:
                    ls.fail("seed %d #%d: RESP3 reply differs (%s)" % (seed, i, kind), argv, a, b)
        finally:
            ls.close()

    def test_resp2_unchanged_after_hello2(self):
        """HELLO 3 then HELLO 2: RESP2 bytes again, identical to Redis's."""
        with resp3.Conn(self.goblin) as g, resp3.Conn(self.redis) as r:
            for c in (g, r):
                c.call(b"HELLO", b"2")
                c.call(b"FLUSHALL")
            for argv in ([b"ZADD", b"z", b"1", b"a", b"2", b"b"], [b"ZRANGE", b"z", b"0", b"-1", b"WITHSCORES"],
                         [b"HSET", b"h", b"f", b"v"], [b"HGETALL", b"h"], [b"SADD", b"s", b"x"], [b"SMEMBERS", b"s"],
                         [b"GET", b"nokey"], [b"ZPOPMIN", b"z", b"1"], [b"CONFIG", b"GET", b"hz"],
                         [b"ZMSCORE", b"z", b"b", b"q"], [b"LPOP", b"nokey", b"2"]):
                self.assertEqual(g.call(*argv).raw, r.call(*argv).raw, argv)


def same_reply(argv, a, b):
    """test_differential.py's rule for the command (TTL within a second,
    KEYS and SCAN as sets, ...), else equal values."""
    cmp = td.comparator(argv)
    if cmp is td._exact:
        return plain(a) == plain(b)
    return cmp(down(a), down(b), a.raw, b.raw)


def type_tree(r):
    """The RESP3 type bytes of a reply, nested, without values or sizes of
    unordered aggregates' contents order."""
    k, v = r.kind, r.value
    if k in "*>" and v is not None:
        return (k, [type_tree(x) for x in v])
    if k == "~":
        return (k, sorted(repr(type_tree(x)) for x in v))
    if k == "%":
        return (k, sorted(repr((type_tree(a), type_tree(b))) for a, b in v))
    return k


def sorted_plain(r):
    p = plain(r)
    if isinstance(p, tuple) and p[0] in ("*", ">"):
        return sorted(p[1], key=repr)
    return p


def down(r):
    """A Reply as the RESP2 parser of test_differential.py gives it, for its
    comparators (maps flattened, sets and pushes as lists, doubles as the
    bytes of their text, null as None)."""
    k, v = r.kind, r.value
    if k == "-":
        return gbtest.Err(v)
    if k == "+":
        return gbtest.Simple(v)
    if k in "$=,":
        return v
    if k == ":":
        return v
    if k == "_":
        return None
    if k in "*~>":
        return None if v is None else [down(x) for x in v]
    if k == "%":
        out = []
        for a, b in v:
            out += [down(a), down(b)]
        return out
    return v


if __name__ == "__main__":
    gbtest.run_tests()
