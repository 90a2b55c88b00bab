"""Differential test of SORT and SORT_RO (issue 28): goblin-core against
redis-server 7.0 (Debian's 7.0.15), both started here.

Seeded random streams build lists (small and large, numbers, words and
duplicates), sets (intset, listpack and hashtable encodings) and sorted
sets, with string weights (numeric, alphabetic, some missing, a few not
numbers) and hashes of weights, then send SORT and SORT_RO with every
option in random order and combination: BY (none, a constant such as
"nosort", string patterns, hash fields "h_*->f"), LIMIT (negative, past
the end, huge), GET (repeated, "#", hash fields, missing keys, patterns
without '*'), ASC/DESC, ALPHA, STORE, plus bad arguments of every kind and
wrong-type keys; some inside MULTI, some through EVAL, half the seeds in
RESP3. Replies are compared byte for byte, STORE destinations through
LRANGE, and the keyspace events of each seed (sortstore, del) as published.

Where Redis's own order is not defined, the comparison is of what is:
  * a set read with a constant BY and no STORE comes out in hash-table
    order, which differs between any two implementations: compared as a
    multiset (with LIMIT, by length);
  * ALPHA with BY where two elements share a BY value (or both miss it)
    leaves them where the sort algorithm leaves them: glibc's qsort (a
    stable merge sort), or with a LIMIT Redis's partial quicksort, both of
    which Goblin runs too. Exact for a list (read in the same order by both
    servers); for a set or sorted set, read in each server's own iteration
    order, compared as a multiset (with LIMIT, by length).
Numeric sorts break ties by the elements' bytes and are always exact.

Directed cases: Redis's strtod rules for weights (hex, leading spaces,
"inf", the empty string, NUL bytes, overflow and underflow refused), the
forced ALPHA sort of a set with a constant BY under STORE and in scripts,
STORE deleting the destination (and its "del" event) when empty, STORE over
a key of another type and with a TTL, BY/GET refused to a user without
access to every key, and that SORT STORE reaches the append-only log.

Environment: GOBLIN_SORT_SEEDS (default 16), GOBLIN_SORT_OPS (default 300),
GOBLIN_SORT_SEED (run only this seed).
"""

import os
import random
import shutil
import tempfile

import gbtest
from gbtest import Raw

SEEDS = int(os.environ.get("GOBLIN_SORT_SEEDS", "16"))
OPS = int(os.environ.get("GOBLIN_SORT_OPS", "300"))
ONE_SEED = os.environ.get("GOBLIN_SORT_SEED")

WORDS = [b"apple", b"Banana", b"cherry", b"date", b"elder", b"fig", b"grape", b"Hazel", b"iris", b"juniper",
         b"kiwi", b"lemon", b"mango", b"nectar", b"olive", b"peach", b"quince", b"rose", b"sage", b"thyme",
         b"a b", b"z", b"Z", b"10", b"9", b"-", b"\xc3\xa9t\xc3\xa9", b"\xff\xfe", b"_x", b"~"]

NUMBERS = [b"0", b"-0", b"1", b"-1", b"2", b"10", b"100", b"-100", b"3.5", b"-2.25", b"1e3", b"0x1f", b" 7",
           b"inf", b"-inf", b"123456789012345678901", b"0.1", b"1.5e-5", b"42", b"-42", b"9007199254740993"]

LIST_KEYS = [b"L0", b"L1", b"L2", b"L3"]
SET_KEYS = [b"S0", b"S1", b"S2", b"S3"]
ZSET_KEYS = [b"Z0", b"Z1", b"Z2"]
DESTS = [b"dst", b"dst2"]  # not the sources: the weights are unique only for the dataset's elements
OTHER = [b"str", b"hash", b"nokey"]

# BY patterns, and whether ALPHA on them may see ties (a shared or missing value).
BY_TIES = {b"wu_*": False, b"hu_*->w": False, b"wn_*": True, b"hn_*->n": True, b"hn_*->part": True,
           b"nosort": None, b"constant": None, b"missing_*": True, b"h*->": True}
GETS = [b"#", b"wu_*", b"wn_*", b"hu_*->w", b"hn_*->n", b"hn_*->part", b"missing_*", b"nostar", b"hu_*->",
        b"#\x00x", b"h*->w"]


def element_pool(rng):
    pool = list(NUMBERS) + list(WORDS) + [b"e%d" % i for i in range(60)] + [str(i).encode() for i in range(300)]
    rng.shuffle(pool)
    return pool


def build_data(rng, pair):
    """The same random dataset on both servers; returns the elements used."""
    pool = element_pool(rng)
    used = set()

    def pick(n, numeric):
        src = [e for e in pool if (e in NUMBERS or e.isdigit())] if numeric else pool
        out = [rng.choice(src) for _ in range(n)]
        used.update(out)
        return out

    sizes = [rng.randint(0, 12), rng.randint(20, 200), rng.randint(1, 8), rng.randint(0, 5)]
    for i, k in enumerate(LIST_KEYS):
        vals = pick(sizes[i], numeric=rng.random() < 0.5)
        if vals:
            pair.both([b"RPUSH", k] + vals, "data")
    for i, k in enumerate(SET_KEYS):
        kind = rng.choice(["int", "small", "large"])
        if kind == "int":
            vals = [str(rng.randint(-50, 500)).encode() for _ in range(rng.randint(1, 30))]
            used.update(vals)
        else:
            vals = pick(rng.randint(1, 15) if kind == "small" else rng.randint(130, 220), numeric=rng.random() < 0.4)
        pair.both([b"SADD", k] + vals, "data")
    for k in ZSET_KEYS:
        n = rng.choice([rng.randint(1, 10), rng.randint(130, 200)])
        members = pick(n, numeric=rng.random() < 0.4)
        argv = [b"ZADD", k]
        for m in members:
            argv += [str(rng.randint(-20, 20)).encode(), m]
        pair.both(argv, "data")
    pair.both([b"SET", b"str", b"x"], "data")
    pair.both([b"HSET", b"hash", b"f", b"v"], "data")
    # Weights: wu_/hu_ unique per element (numbers as text, so both numeric
    # and ALPHA sorts have no ties), wn_/hn_ numeric with repeats and holes.
    ranks = list(range(len(used)))
    rng.shuffle(ranks)
    for e, r in zip(sorted(used), ranks):
        uniq = b"%06d" % r
        pair.both([b"SET", b"wu_" + e, uniq], "data")
        pair.both([b"HSET", b"hu_" + e, b"w", uniq], "data")
        if rng.random() < 0.8:
            pair.both([b"SET", b"wn_" + e, rng.choice([b"1", b"2", b"2.5", b"-3", b"1e2", b"0x10", b" 4"])], "data")
        fields = [b"n", rng.choice([b"5", b"6", b"-1.5", b"0"])]
        if rng.random() < 0.5:
            fields += [b"part", rng.choice([b"x", b"y", b"7"])]
        pair.both([b"HSET", b"hn_" + e] + fields, "data")
    if rng.random() < 0.5:  # a weight that is no number: numeric sorts by wn_ fail
        # (no ERANGE ones here: see test_weights_parse_as_redis_strtod)
        e = rng.choice(sorted(used))
        pair.both([b"SET", b"wn_" + e, rng.choice([b"abc", b"nan", b"5 "])], "data")
    return used


def gen_sort(rng, readonly=False, script=False):
    """A SORT command and what may be compared of its reply: "exact",
    "multiset" or "length". In a script (and under STORE) a set with a
    constant BY is sorted ALPHA, as Redis does, and so compared exactly."""
    src = rng.choice(LIST_KEYS * 3 + SET_KEYS * 2 + ZSET_KEYS * 2 + OTHER)
    argv = [b"SORT_RO" if readonly else b"SORT", src]
    opts = []
    by = None
    if rng.random() < 0.55:
        by = rng.choice(list(BY_TIES))
        opts.append([rng.choice([b"BY", b"by"]), by])
    limit = rng.random() < 0.35
    if limit:
        opts.append([b"LIMIT", rng.choice([b"0", b"1", b"3", b"-2", b"50", b"1000"]),
                     rng.choice([b"0", b"1", b"2", b"5", b"-1", b"100", b"9223372036854775807"])])
    ngets = rng.choice([0, 0, 1, 2, 3])
    for _ in range(ngets):
        opts.append([b"GET", rng.choice(GETS)])
    if rng.random() < 0.4:
        opts.append([rng.choice([b"DESC", b"desc", b"ASC"])])
    alpha = rng.random() < 0.5
    if alpha:
        opts.append([rng.choice([b"ALPHA", b"alpha"])])
    store = not readonly and rng.random() < 0.25
    if store:
        opts.append([b"STORE", rng.choice(DESTS)])
    rng.shuffle(opts)
    for o in opts:
        argv += o
    dontsort = by is not None and b"*" not in by
    if src in SET_KEYS and dontsort and not store and not script:
        mode = "length" if limit else "multiset"
    elif alpha and by is not None and BY_TIES.get(by):
        mode = "exact" if src in LIST_KEYS else ("length" if limit else "multiset")
    else:
        mode = "exact"
    return argv, mode, ngets


def gen_bad(rng):
    src = rng.choice(LIST_KEYS + SET_KEYS)
    return rng.choice([
        [b"SORT", src, b"LIMIT", b"x", b"1"], [b"SORT", src, b"LIMIT", b"1"], [b"SORT", src, b"LIMIT", b"1", b"1.5"],
        [b"SORT", src, b"BY"], [b"SORT", src, b"GET"], [b"SORT", src, b"STORE"], [b"SORT", src, b"FOO"],
        [b"SORT_RO", src, b"STORE", b"dst"], [b"SORT", b"str"], [b"SORT", b"hash", b"LIMIT", b"x", b"y"],
        [b"SORT", b"str", b"FOO"], [b"SORT", src, b"ASC\x00junk"], [b"SORT", src, b"LIMIT", b"0", b"1", b"x"],
        [b"SORT"], [b"SORT_RO"],
    ])


def normalise(reply, mode, ngets):
    if mode == "exact" or not isinstance(reply, list):
        return reply
    if mode == "length":
        return len(reply)
    group = max(ngets, 1)
    return sorted(repr(reply[i:i + group]) for i in range(0, len(reply), group))


class Pair:
    """The same connection setup on both servers, replies compared."""

    def __init__(self, test, goblin, redis, resp3=False):
        self.test = test
        self.g, self.r = Raw(goblin), Raw(redis)
        self.gsub, self.rsub = Raw(goblin), Raw(redis)
        self.history = []
        for c in (self.g, self.r):
            if resp3:
                c.call("HELLO", "3")
            c.call("FLUSHALL")
            c.call("CONFIG", "SET", "notify-keyspace-events", "KEA")
        for s in (self.gsub, self.rsub):
            s.call("PSUBSCRIBE", "__key*@*__:*")

    def close(self):
        for c in (self.g, self.r, self.gsub, self.rsub):
            c.close()

    def fail(self, label, argv, a, b):
        self.test.fail("%s: %r\n goblin: %r\n redis:  %r\n last commands: %r"
                       % (label, argv, a, b, self.history[-8:]))

    def both(self, argv, label):
        a = self.g.call_raw(*argv)
        b = self.r.call_raw(*argv)
        self.history.append(argv)
        if a != b:
            self.fail(label, argv, a, b)
        return a

    def compare(self, argv, label, mode, ngets):
        """A reply compared as mode says (parsed for the inexact modes)."""
        if mode == "exact":
            return self.both(argv, label)
        a, b = self.g.call(*argv), self.r.call(*argv)
        self.history.append(argv)
        if normalise(a, mode, ngets) != normalise(b, mode, ngets):
            self.fail(label + " (" + mode + ")", argv, a, b)
        return a

    def compare_events(self, label):
        a = gbtest.events_so_far(self.g, self.gsub)
        b = gbtest.events_so_far(self.r, self.rsub)
        if a != b:
            self.test.fail("%s: keyspace events differ\n goblin: %r\n redis:  %r\n last commands: %r"
                           % (label, a[:2000], b[:2000], self.history[-8:]))


def run_sort(pair, rng, label, readonly=False):
    argv, mode, ngets = gen_sort(rng, readonly)
    pair.compare(argv, label, mode, ngets)
    if b"STORE" in argv:
        dst = argv[argv.index(b"STORE") + 1]
        pair.both([b"TYPE", dst], label + " STORE type")
        pair.compare([b"LRANGE", dst, b"0", b"-1"], label + " STORE content", mode, ngets)
        if mode != "exact":  # what differs in order must not feed later sorts
            pair.both([b"DEL", dst], label)


def run_stream(test, goblin, redis, seed):
    rng = random.Random(seed)
    pair = Pair(test, goblin, redis, resp3=seed % 2 == 1)
    label = "seed %d" % seed
    try:
        build_data(rng, pair)
        pair.compare_events(label + " data")
        for i in range(OPS):
            r = rng.random()
            where = "%s op %d" % (label, i)
            if r < 0.05:
                pair.both(gen_bad(rng), where)
            elif r < 0.08:
                pair.both([b"MULTI"], where)
                cmds = [gen_sort(rng) for _ in range(rng.randint(1, 3))]
                for argv, _, _ in cmds:
                    pair.both(argv, where)
                if all(mode == "exact" for _, mode, _ in cmds):
                    pair.both([b"EXEC"], where + " (EXEC)")
                else:
                    pair.both([b"DISCARD"], where)
            elif r < 0.12:
                argv, mode, ngets = gen_sort(rng, readonly=rng.random() < 0.5, script=True)
                lua = [b"EVAL", b"return redis.pcall(unpack(ARGV))", b"0"] + argv
                pair.compare(lua, where + " (Lua)", mode, ngets)
                if b"STORE" in argv:
                    pair.both([b"DEL", argv[argv.index(b"STORE") + 1]], where)
            else:
                run_sort(pair, rng, where, readonly=rng.random() < 0.15)
        pair.compare_events(label)
        # what the STOREs and deletions left: Redis's digest of the dataset
        pair.both([b"DEBUG", b"DIGEST"], label)
    finally:
        pair.close()


class SortDifferentialTest(gbtest.GoblinAndRedisCase):
    def test_random_streams(self):
        seeds = [int(ONE_SEED)] if ONE_SEED else range(1, SEEDS + 1)
        for seed in seeds:
            run_stream(self, self.goblin, self.redis, seed)

    def pair(self, resp3=False):
        p = Pair(self, self.goblin, self.redis, resp3)
        self.addCleanup(p.close)
        return p

    def test_weights_parse_as_redis_strtod(self):
        """Redis tests errno == ERANGE after strtod without clearing errno
        first, so a weight that overflowed or underflowed in one SORT makes
        the next SORT on the same server fail too, until something else
        clears errno. Goblin clears it; the comparison clears Redis's with
        INCRBYFLOAT (its string2ld sets errno = 0) before every SORT."""
        p = self.pair()
        weights = [b"0x10", b" 7", b"\t8", b"inf", b"-inf", b"", b"1e-300", b"4.9e-324", b"1\x00junk", b"+3",
                   b"1e400", b"1e-400", b"nan", b"-nan", b"5 ", b"abc", b"0x", b"1e", b".5", b"5.", b"infinity"]
        for i, w in enumerate(weights):
            p.both([b"DEL", b"l"], "weights")
            p.both([b"RPUSH", b"l", b"a", b"b", b"c"], "weights")
            p.both([b"SET", b"w_a", w], "weights %r" % w)
            p.both([b"SET", b"w_b", b"1"], "weights")
            for argv in ([b"SORT", b"l", b"BY", b"w_*"], [b"SORT", b"l", b"BY", b"w_*", b"DESC", b"GET", b"#", b"GET", b"w_*"],
                         [b"RPUSH", b"n", w], [b"SORT", b"n"]):
                p.both([b"INCRBYFLOAT", b"clear_errno", b"0"], "errno")
                p.both(argv, "weight %r" % w)
            p.both([b"DEL", b"n"], "element")

    def test_constant_by_on_a_set_sorts_alpha_under_store_and_in_scripts(self):
        p = self.pair()
        members = [b"%d" % i for i in range(0, 400, 7)] + [b"w%d" % i for i in range(150)]
        p.both([b"SADD", b"s"] + members, "setup")
        p.both([b"SORT", b"s", b"BY", b"nosort", b"STORE", b"d"], "store")
        p.both([b"LRANGE", b"d", b"0", b"-1"], "store")
        p.both([b"SORT", b"s", b"BY", b"nosort", b"LIMIT", b"5", b"10", b"DESC", b"STORE", b"d"], "store")
        p.both([b"LRANGE", b"d", b"0", b"-1"], "store")
        p.both([b"EVAL", b"return redis.call('sort', KEYS[1], 'by', 'nosort')", b"1", b"s"], "script")
        p.both([b"EVAL", b"return redis.call('sort_ro', KEYS[1], 'by', 'x', 'limit', '3', '4')", b"1", b"s"], "script")
        p.both([b"FUNCTION", b"LOAD", b"#!lua name=srt\nredis.register_function{function_name='s', "
                b"callback=function(k) return redis.call('sort', k[1], 'by', 'nosort') end, "
                b"flags={'no-writes'}}"], "function")
        p.both([b"FCALL_RO", b"s", b"1", b"s"], "function")

    def test_alpha_by_ties_in_a_limit_window_fall_as_in_redis(self):
        """Redis sorts BY with a LIMIT with its partial quicksort: ties
        (equal or missing BY values) land where that algorithm puts them."""
        p = self.pair()
        rng = random.Random(5)
        for n in (5, 8, 41, 300, 2000):
            p.both([b"DEL", b"l"], "setup")
            elements = [b"e%d" % rng.randrange(n * 2) for _ in range(n)]
            p.both([b"RPUSH", b"l"] + elements, "setup")
            for e in set(elements):
                if rng.random() < 0.6:
                    p.both([b"SET", b"w_" + e, rng.choice([b"a", b"b", b"c"])], "setup")
            for _ in range(12):
                start = rng.choice([0, 1, n // 3, n - 2, n + 5])
                count = rng.choice([1, 3, n // 2, n])
                for order in ([], [b"DESC"]):
                    p.both([b"SORT", b"l", b"BY", b"w_*", b"ALPHA", b"LIMIT", b"%d" % start, b"%d" % count] + order,
                           "ties n=%d" % n)
                    p.both([b"SORT", b"l", b"BY", b"w_*", b"ALPHA", b"GET", b"#", b"GET", b"w_*"] + order,
                           "ties n=%d" % n)
            p.both([b"FLUSHALL"], "reset")

    def test_store_replaces_deletes_and_notifies(self):
        p = self.pair(resp3=True)
        p.both([b"RPUSH", b"src", b"3", b"1", b"2"], "setup")
        for dst_setup in ([b"SET", b"d", b"old"], [b"HSET", b"d", b"f", b"v"], [b"RPUSH", b"d", b"x"],
                          [b"SET", b"d", b"old", b"EX", b"100"]):
            p.both(dst_setup, "setup")
            p.both([b"SORT", b"src", b"STORE", b"d"], "store over %r" % dst_setup)
            p.both([b"TYPE", b"d"], "store")
            p.both([b"TTL", b"d"], "store")
            p.both([b"LRANGE", b"d", b"0", b"-1"], "store")
        p.both([b"SORT", b"src", b"LIMIT", b"5", b"5", b"STORE", b"d"], "empty store deletes")
        p.both([b"EXISTS", b"d"], "empty store deletes")
        p.both([b"SORT", b"nokey", b"STORE", b"d"], "empty store of nothing")
        p.both([b"SORT", b"src", b"GET", b"nope_*", b"GET", b"#", b"STORE", b"d"], "missing GET stores ''")
        p.both([b"LRANGE", b"d", b"0", b"-1"], "store")
        # GET sees the destination's old value while the result is built.
        p.both([b"SET", b"d3", b"old"], "setup")
        p.both([b"RPUSH", b"one", b"3"], "setup")
        p.both([b"SORT", b"one", b"GET", b"d*", b"STORE", b"d3"], "GET reads the old destination")
        p.both([b"LRANGE", b"d3", b"0", b"-1"], "store")
        p.both([b"SORT", b"src", b"STORE", b"src"], "store onto itself")
        p.both([b"LRANGE", b"src", b"0", b"-1"], "store")
        p.both([b"INFO", b"keyspace"], "keyspace")
        p.compare_events("store events")

    def test_sorted_set_nosort_keeps_its_order(self):
        p = self.pair()
        argv = [b"ZADD", b"z"]
        for i in range(300):
            argv += [b"%d" % (i % 17), b"m%03d" % (299 - i)]
        p.both(argv, "setup")
        p.both([b"ZADD", b"zs", b"1", b"b", b"1", b"a", b"2", b"c"], "setup")
        for key in (b"z", b"zs"):
            for opts in ([], [b"DESC"], [b"LIMIT", b"0", b"5"], [b"LIMIT", b"7", b"9", b"DESC"],
                         [b"LIMIT", b"-5", b"3"], [b"LIMIT", b"290", b"100"], [b"LIMIT", b"1", b"0"],
                         [b"GET", b"#", b"GET", b"x*"]):
                p.both([b"SORT", key, b"BY", b"nosort"] + opts, "zset nosort")
                p.both([b"SORT", key, b"BY", b"nosort", b"ALPHA"] + opts, "zset nosort")
            p.both([b"SORT", key, b"ALPHA", b"DESC", b"LIMIT", b"3", b"4"], "zset alpha")

    def test_by_and_get_need_access_to_every_key(self):
        p = self.pair()
        p.both([b"RPUSH", b"k_l", b"2", b"1"], "setup")
        p.both([b"ACL", b"SETUSER", b"some", b"on", b"nopass", b"+@all", b"~k_*"], "acl")
        p.both([b"ACL", b"SETUSER", b"reader", b"on", b"nopass", b"+@all", b"%R~*"], "acl")
        p.both([b"ACL", b"SETUSER", b"sel", b"on", b"nopass", b"+@all", b"~k_*", b"(+sort ~*)"], "acl")
        for user in (b"some", b"reader", b"sel"):
            p.both([b"AUTH", user, b"x"], "auth")
            for argv in ([b"SORT", b"k_l", b"BY", b"w_*"], [b"SORT", b"k_l", b"BY", b"nosort"],
                         [b"SORT", b"k_l", b"GET", b"#"], [b"SORT_RO", b"k_l", b"GET", b"w_*"],
                         [b"SORT", b"k_l", b"BY", b"w_*", b"STORE", b"k_d"], [b"SORT", b"k_l", b"FOO", b"BY", b"x_*"],
                         [b"SORT", b"k_l", b"BY", b"x_*", b"FOO"]):
                p.both(argv, "as %r" % user)
            p.both([b"AUTH", b"default", b"x"], "auth")

    def test_store_reaches_the_log(self):
        d = tempfile.mkdtemp()
        g = gbtest.Server("goblin", args=["--appendonly", "yes", "--save", "", "--dir", d], dir=d)
        try:
            with Raw(g) as c:
                c.call("SADD", "s", "b", "a", "c")
                c.call("SORT", "s", "BY", "nosort", "STORE", "d")
                c.call("RPUSH", "l", "2", "1")
                c.call("SORT", "l", "STORE", "d2")
                c.call("SORT_RO", "l")
            g.stop()
            g = gbtest.Server("goblin", args=["--appendonly", "yes", "--save", "", "--dir", d], dir=d)
            with Raw(g) as c:
                self.assertEqual(c.call("LRANGE", "d", "0", "-1"), [b"a", b"b", b"c"])
                self.assertEqual(c.call("LRANGE", "d2", "0", "-1"), [b"1", b"2"])
        finally:
            g.cleanup()
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    gbtest.run_tests()
