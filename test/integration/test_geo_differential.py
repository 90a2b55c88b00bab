"""Differential test of the geo commands (issue 28): goblin-core against
redis-server 7.0 (Debian's 7.0.15), both started here.

Seeded random streams fill geo indexes (small ones that stay listpacks,
large ones that become trees) with random points over the whole valid
range plus the corners that break arithmetic: the poles' limits
(+-85.05112878), the antimeridian (+-180), the equator and the prime
meridian, and tight clusters for tiny radii. They then run GEOADD
(NX|XX|CH), GEOPOS, GEODIST (every unit), GEOHASH, GEOSEARCH and
GEOSEARCHSTORE (FROMMEMBER/FROMLONLAT, BYRADIUS/BYBOX, ASC/DESC, COUNT with
and without ANY, WITHCOORD/WITHDIST/WITHHASH, STOREDIST), GEORADIUS and
GEORADIUSBYMEMBER (STORE/STOREDIST) and their _RO forms, with radii from 0
to beyond the earth's size, some inside MULTI and some through EVAL, half
the seeds in RESP3. Every reply is compared byte for byte (to the last
digit); every stored result by ZRANGE WITHSCORES and OBJECT ENCODING; the
keyspace events both servers published by one subscriber each.

Directed cases: every error text and the order Redis checks them in, and
members whose scores no GEOADD writes (negative, fractional, huge,
infinite: ZADD can put them there) read by GEOPOS, GEOHASH, GEODIST and
FROMMEMBER.

Equal distances are common on purpose (points added twice under other
names): their order is the sort's, the C library's qsort for a full
result and Redis's partial quicksort under COUNT.

Environment: GOBLIN_GEO_SEEDS (default 12), GOBLIN_GEO_OPS (default 400),
GOBLIN_GEO_SEED (run only this seed).
"""

import glob
import os
import random
import shutil
import tempfile

import gbtest
from gbtest import Raw

SEEDS = int(os.environ.get("GOBLIN_GEO_SEEDS", "12"))
OPS = int(os.environ.get("GOBLIN_GEO_OPS", "400"))
ONE_SEED = os.environ.get("GOBLIN_GEO_SEED")

LAT_MAX = 85.05112878
KEYS = [b"g0", b"g1", b"g2"]
DSTS = [b"d0", b"d1", b"g1"]  # g1: a destination that is also a source
LIST_KEY = b"lst"
ALL_KEYS = KEYS + DSTS[:2] + [LIST_KEY, b"nokey"]
UNITS = [b"m", b"km", b"ft", b"mi", b"M", b"Km", b"FT", b"mI"]

SPECIAL_POINTS = [(180, LAT_MAX), (-180, -LAT_MAX), (0, 0), (179.9999, 0.5), (-179.9999, -0.5),
                  (0, LAT_MAX), (0, -LAT_MAX), (13.361389, 38.115556), (-0.0001, 0.0001),
                  (90, 84.9), (-90, -84.9), (45, 66.5), (-45, -80.5)]


def fmt(x):
    return repr(float(x)).encode() if isinstance(x, float) else str(x).encode()


def rand_point(rng, centres):
    r = rng.random()
    if r < 0.35 and centres:  # a cluster: tiny distances
        lon, lat = rng.choice(centres)
        spread = 10 ** rng.uniform(-5, 0)
        lon = max(-180.0, min(180.0, lon + rng.uniform(-spread, spread)))
        lat = max(-LAT_MAX, min(LAT_MAX, lat + rng.uniform(-spread, spread)))
        return lon, lat
    if r < 0.45:
        return rng.uniform(-180, 180), rng.choice([1, -1]) * rng.uniform(80, LAT_MAX)
    return rng.uniform(-180, 180), rng.uniform(-LAT_MAX, LAT_MAX)


def rand_radius(rng):
    r = rng.random()
    if r < 0.05:
        return b"0"
    if r < 0.1:
        return rng.choice([b"20037726", b"40000000", b"1e9", b"inf"])
    return fmt(round(10 ** rng.uniform(-1, 7.3), rng.randint(0, 4)))


def scored(reply):
    """ZRANGE WITHSCORES (RESP2 flat or RESP3 pairs) as [(member, float)]."""
    if not isinstance(reply, list):
        return reply
    if reply and isinstance(reply[0], list):
        return [(m, float(s)) for m, s in reply]
    return [(reply[i], float(reply[i + 1])) for i in range(0, len(reply), 2)]


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
            c.call("CONFIG", "SET", "notify-keyspace-events", "KEA")
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
                           % (label, argv, a[:3000], b[:3000], self.history[-8:]))
        return a

    def compare_events(self, label):
        a = gbtest.events_so_far(self.g, self.gsub)
        b = gbtest.events_so_far(self.r, self.rsub)
        if a != b:
            self.test.fail("%s: keyspace events differ\n goblin: %r\n redis:  %r\n last commands: %r"
                           % (label, a[:2000], b[:2000], self.history[-12:]))

    def compare_key(self, k, label):
        self.both([b"TYPE", k], "%s state of %r" % (label, k))
        # Scores as numbers: goblin-core writes a double's shortest text
        # where Redis 7.0 writes %.17g (docs/resp3.md, docs/testing.md).
        zr = [c.call(b"ZRANGE", k, b"0", b"-1", b"WITHSCORES") for c in (self.g, self.r)]
        self.test.assertEqual(scored(zr[0]), scored(zr[1]), "%s members of %r" % (label, k))
        # goblin-core names its large sorted sets "btree" (docs/types.md).
        enc = [c.call(b"OBJECT", b"ENCODING", k) for c in (self.g, self.r)]
        enc[0] = b"skiplist" if enc[0] == b"btree" else enc[0]
        self.test.assertEqual(enc[0], enc[1], "%s encoding of %r" % (label, k))


class Stream:
    """One seed's random commands over its indexes."""

    def __init__(self, rng):
        self.rng = rng
        self.members = {k: [] for k in KEYS}
        self.centres = [p[:2] for p in SPECIAL_POINTS]
        self.added = []  # coordinates already added, to add again under new names

    def member(self, key):
        ms = self.members[key]
        if ms and self.rng.random() < 0.9:
            return self.rng.choice(ms)
        return b"missing%d" % self.rng.randrange(3)

    def key(self):
        r = self.rng.random()
        if r < 0.03:
            return LIST_KEY
        if r < 0.06:
            return b"nokey"
        return self.rng.choice(KEYS)

    def geoadd(self, key, n):
        rng = self.rng
        argv = [b"GEOADD", key]
        for opt in (b"NX", b"XX", b"CH"):
            if rng.random() < 0.1:
                argv.append(opt)
        for _ in range(n):
            if self.added and rng.random() < 0.15:
                lon, lat = rng.choice(self.added)
            else:
                lon, lat = rand_point(rng, self.centres)
                self.added.append((lon, lat))
            name = b"m%d" % rng.randrange(100000) if rng.random() < 0.9 else rng.choice(self.members[key] or [b"x"])
            argv += [fmt(lon), fmt(lat), name]
            if key in self.members:
                self.members[key].append(name)
        return argv

    def options(self, store_ok, search):
        rng = self.rng
        opts = []
        for w in (b"WITHDIST", b"WITHHASH", b"WITHCOORD"):
            if rng.random() < (0.05 if store_ok else 0.4):
                opts.append(w)
        r = rng.random()
        if r < 0.3:
            opts.append(b"ASC")
        elif r < 0.5:
            opts.append(b"DESC")
        if rng.random() < 0.4:
            opts += [b"COUNT", fmt(rng.choice([1, 2, 3, 5, 10, 50, 1000]))]
            if rng.random() < 0.4:
                opts.append(b"ANY")
        rng.shuffle(opts) if rng.random() < 0.2 else None
        return opts

    def search(self):
        rng = self.rng
        key = self.key()
        kind = rng.random()
        store = rng.random() < 0.25
        if kind < 0.5:
            store_cmd = store and rng.random() < 0.8
            argv = [b"GEOSEARCHSTORE", rng.choice(DSTS), key] if store_cmd else [b"GEOSEARCH", key]
            if rng.random() < 0.5 and key in self.members:
                argv += [b"FROMMEMBER", self.member(key)]
            else:
                lon, lat = rand_point(rng, self.centres)
                argv += [b"FROMLONLAT", fmt(lon), fmt(lat)]
            if rng.random() < 0.5:
                argv += [b"BYRADIUS", rand_radius(rng), rng.choice(UNITS)]
            else:
                argv += [b"BYBOX", rand_radius(rng), rand_radius(rng), rng.choice(UNITS)]
            argv += self.options(store_cmd, True)
            if store_cmd and rng.random() < 0.4:
                argv.append(b"STOREDIST")
            return argv
        ro = rng.random() < 0.3
        if kind < 0.75:
            lon, lat = rand_point(rng, self.centres)
            argv = [b"GEORADIUS_RO" if ro else b"GEORADIUS", key, fmt(lon), fmt(lat)]
        else:
            argv = [b"GEORADIUSBYMEMBER_RO" if ro else b"GEORADIUSBYMEMBER", key,
                    self.member(key) if key in self.members else b"x"]
        argv += [rand_radius(rng), rng.choice(UNITS)]
        argv += self.options(store and not ro, False)
        if store and not ro:
            argv += [rng.choice([b"STORE", b"STOREDIST"]), rng.choice(DSTS)]
        return argv

    def command(self):
        rng = self.rng
        r = rng.random()
        if r < 0.1:
            k = rng.choice(KEYS)
            return self.geoadd(k, rng.randint(1, 5))
        if r < 0.2:
            k = self.key()
            return [b"GEOPOS", k] + [self.member(k) if k in self.members else b"x"
                                     for _ in range(rng.randint(1, 4))]
        if r < 0.28:
            k = self.key()
            return [b"GEOHASH", k] + [self.member(k) if k in self.members else b"x"
                                      for _ in range(rng.randint(1, 4))]
        if r < 0.38:
            k = self.key()
            argv = [b"GEODIST", k, self.member(k) if k in self.members else b"a",
                    self.member(k) if k in self.members else b"b"]
            if rng.random() < 0.7:
                argv.append(rng.choice(UNITS))
            return argv
        return self.search()


def run_stream(test, goblin, redis, seed):
    rng = random.Random(seed)
    pair = Pair(test, goblin, redis, resp3=seed % 2 == 1)
    label = "seed %d" % seed
    st = Stream(rng)
    try:
        pair.both([b"RPUSH", LIST_KEY, b"a"], label)
        # g0 small (listpack), g1 and g2 large (trees).
        for key, n in ((b"g0", 60), (b"g1", 400), (b"g2", 250)):
            for _ in range(n // 20):
                pair.both(st.geoadd(key, 20), label)
        i = 0
        while i < OPS:
            r = rng.random()
            if r < 0.04:
                block = [st.command() for _ in range(rng.randint(1, 3))]
                pair.both([b"MULTI"], label)
                for argv in block:
                    pair.both(argv, label)
                pair.both([b"EXEC"], "%s op %d (EXEC)" % (label, i))
                i += len(block)
                continue
            argv = st.command()
            if r < 0.08:
                fn = "call" if rng.random() < 0.5 else "pcall"
                argv = [b"EVAL", ("return redis.%s(unpack(ARGV))" % fn).encode(), b"0"] + argv
            pair.both(argv, "%s op %d" % (label, i))
            if argv[0].upper().endswith(b"STORE") or b"STORE" in [a.upper() for a in argv] \
                    or b"STOREDIST" in [a.upper() for a in argv]:
                for d in DSTS:
                    pair.compare_key(d, label)
            i += 1
            if i % 100 == 0:
                pair.compare_events(label)
        for k in ALL_KEYS:
            pair.compare_key(k, label)
        pair.compare_events(label)
        pair.both([b"DEBUG", b"DIGEST"], label)  # every member and score, bit for bit
    finally:
        pair.close()


ERROR_CASES = [
    # GEOADD
    [b"GEOADD", b"g", b"NX", b"XX", b"1", b"2", b"m"],
    [b"GEOADD", b"g", b"1", b"2", b"m", b"3"],
    [b"GEOADD", b"g", b"CH", b"CH", b"CH"],
    [b"GEOADD", b"g", b"GT", b"1", b"2", b"m"],
    [b"GEOADD", b"g", b"200", b"10", b"m"],
    [b"GEOADD", b"g", b"10", b"85.06", b"m"],
    [b"GEOADD", b"g", b"-180.000001", b"-85.05112878", b"m"],
    [b"GEOADD", b"g", b"1", b"2", b"a", b"x", b"2", b"b"],
    [b"GEOADD", b"g", b"1", b"nan", b"a"],
    [b"GEOADD", b"g", b"inf", b"2", b"a"],
    [b"GEOADD", b"g", b" 1", b"2", b"a"],
    [b"GEOADD", b"lst", b"1", b"2", b"a"],
    [b"GEOADD", b"g", b"XX", b"1", b"2", b"new"],
    [b"GEOADD", b"g", b"NX", b"CH", b"1", b"2", b"p1", b"3", b"4", b"new2"],
    [b"GEOADD", b"g", b"CH", b"1.5", b"2", b"p1"],
    [b"GEOADD", b"g"],
    # GEODIST / GEOPOS / GEOHASH
    [b"GEODIST", b"g", b"p1", b"p2", b"yards"],
    [b"GEODIST", b"g", b"p1", b"p2", b"km", b"x"],
    [b"GEODIST", b"nokey", b"p1", b"p2", b"bad"],
    [b"GEODIST", b"lst", b"p1", b"p2"],
    [b"GEODIST", b"nokey", b"p1", b"p2"],
    [b"GEODIST", b"g", b"p1", b"p1"],
    [b"GEOPOS", b"lst", b"a"],
    [b"GEOPOS", b"nokey", b"a", b"b"],
    [b"GEOHASH", b"lst", b"a"],
    [b"GEOHASH", b"nokey", b"a"],
    [b"GEOPOS", b"g"],
    # GEORADIUS family
    [b"GEORADIUS", b"g", b"1", b"2", b"10", b"yards"],
    [b"GEORADIUS", b"g", b"1", b"2", b"-1", b"km"],
    [b"GEORADIUS", b"g", b"1", b"2", b"abc", b"km"],
    [b"GEORADIUS", b"g", b"x", b"2", b"abc", b"km"],
    [b"GEORADIUS", b"g", b"1", b"99", b"abc", b"km"],
    [b"GEORADIUS", b"lst", b"x", b"2", b"abc", b"km"],
    [b"GEORADIUS", b"g", b"1", b"2", b"100", b"km", b"COUNT", b"0"],
    [b"GEORADIUS", b"g", b"1", b"2", b"100", b"km", b"COUNT", b"-3"],
    [b"GEORADIUS", b"g", b"1", b"2", b"100", b"km", b"COUNT", b"x"],
    [b"GEORADIUS", b"g", b"1", b"2", b"100", b"km", b"COUNT"],
    [b"GEORADIUS", b"g", b"1", b"2", b"100", b"km", b"ANY"],
    [b"GEORADIUS", b"g", b"1", b"2", b"100", b"km", b"STORE", b"d", b"WITHDIST"],
    [b"GEORADIUS", b"g", b"1", b"2", b"100", b"km", b"STORE"],
    [b"GEORADIUS_RO", b"g", b"1", b"2", b"100", b"km", b"STORE", b"d"],
    [b"GEORADIUS", b"g", b"1", b"2", b"100", b"km", b"FROMMEMBER", b"p1"],
    [b"GEORADIUS", b"g", b"1", b"2", b"100", b"km", b"BOGUS"],
    [b"GEORADIUS", b"g", b"1", b"2", b"100", b"km", b"with\x00dist"],
    [b"GEORADIUSBYMEMBER", b"g", b"nomember", b"100", b"km"],
    [b"GEORADIUSBYMEMBER", b"g", b"p1", b"x", b"km"],
    [b"GEORADIUSBYMEMBER", b"nokey", b"p1", b"x", b"parsecs"],
    [b"GEORADIUSBYMEMBER", b"nokey", b"p1", b"x", b"parsecs", b"STORE", b"d0"],
    [b"GEORADIUSBYMEMBER", b"nokey", b"p1", b"x", b"parsecs", b"BOGUS"],
    [b"GEORADIUSBYMEMBER_RO", b"g", b"p1", b"100", b"km", b"STOREDIST", b"d"],
    [b"GEORADIUS", b"nokey", b"1", b"2", b"100", b"km", b"STORE", b"d0"],
    # GEOSEARCH / GEOSEARCHSTORE
    [b"GEOSEARCH", b"g", b"BYRADIUS", b"10", b"km", b"ASC"],
    [b"geoSearch", b"g", b"FROMLONLAT", b"1", b"2", b"ASC"],
    [b"GEOSEARCH", b"g", b"FROMMEMBER", b"p1", b"FROMLONLAT", b"1", b"2", b"BYRADIUS", b"1", b"km"],
    [b"GEOSEARCH", b"g", b"FROMLONLAT", b"1", b"2", b"FROMMEMBER", b"p1", b"BYRADIUS", b"1", b"km"],
    [b"GEOSEARCH", b"g", b"FROMMEMBER", b"p1", b"BYRADIUS", b"1", b"km", b"BYBOX", b"1", b"1", b"km"],
    [b"GEOSEARCH", b"g", b"FROMMEMBER", b"nomember", b"BYRADIUS", b"1", b"km"],
    [b"GEOSEARCH", b"nokey", b"FROMMEMBER", b"nomember", b"BYRADIUS", b"1", b"km"],
    [b"GEOSEARCH", b"nokey", b"FROMMEMBER", b"nomember", b"BYRADIUS", b"1", b"km", b"ANY"],
    [b"GEOSEARCH", b"g", b"FROMMEMBER", b"p1", b"BYBOX", b"-1", b"1", b"km"],
    [b"GEOSEARCH", b"g", b"FROMMEMBER", b"p1", b"BYBOX", b"x", b"y", b"km"],
    [b"GEOSEARCH", b"g", b"FROMMEMBER", b"p1", b"BYBOX", b"1", b"y", b"km"],
    [b"GEOSEARCH", b"g", b"FROMMEMBER", b"p1", b"BYBOX", b"1", b"1", b"au"],
    [b"GEOSEARCH", b"g", b"FROMMEMBER", b"p1", b"BYBOX", b"1", b"1"],
    [b"GEOSEARCH", b"g", b"FROMLONLAT", b"1", b"2", b"BYRADIUS", b"1", b"km", b"STOREDIST"],
    [b"GEOSEARCH", b"g", b"FROMLONLAT", b"1", b"2", b"BYRADIUS", b"1", b"km", b"STORE", b"d"],
    [b"GEOSEARCH", b"g", b"FROMLONLAT", b"1", b"2", b"BYRADIUS", b"1", b"km", b"COUNT", b"2", b"ANY", b"DESC"],
    [b"GEOSEARCHSTORE", b"d0", b"g", b"FROMLONLAT", b"1", b"2", b"BYRADIUS", b"1", b"km", b"WITHCOORD"],
    [b"GEOSEARCHSTORE", b"d0", b"g", b"FROMLONLAT", b"1", b"2", b"BYRADIUS", b"1", b"km", b"STORE", b"x"],
    [b"GEOSEARCHSTORE", b"d0", b"lst", b"FROMLONLAT", b"1", b"2", b"BYRADIUS", b"1", b"km"],
    [b"GEOSEARCHSTORE", b"d0", b"nokey", b"FROMLONLAT", b"1", b"2", b"BYRADIUS", b"1", b"km"],
    [b"GEOSEARCHSTORE", b"lst", b"g", b"FROMLONLAT", b"1", b"2", b"BYRADIUS", b"1", b"km"],
    [b"GEOSEARCHSTORE", b"d0", b"g", b"FROMLONLAT", b"1", b"2", b"BYRADIUS", b"1000", b"km", b"STOREDIST"],
    [b"GEOSEARCHSTORE", b"d0", b"g", b"FROMLONLAT", b"100", b"2", b"BYRADIUS", b"1", b"km"],
    # an empty member
    [b"GEOADD", b"g", b"1.0001", b"2", b""],
    [b"GEOSEARCH", b"g", b"FROMMEMBER", b"", b"BYRADIUS", b"100", b"km", b"WITHDIST", b"WITHCOORD", b"ASC"],
    [b"GEOSEARCHSTORE", b"d0", b"g", b"FROMLONLAT", b"1", b"2", b"BYBOX", b"100", b"100", b"km", b"STOREDIST"],
    [b"GEOPOS", b"g", b""],
    [b"GEOHASH", b"g", b""],
]

# Scores GEOADD never writes, which ZADD can: each must decode as on Redis.
ODD_SCORES = [b"-1", b"-0.5", b"0.5", b"1e15", b"4503599627370495", b"4503599627370496", b"4503599627370497",
              b"9007199254740993", b"1e19", b"9.3e18", b"1.9e19", b"1e30", b"-1e30", b"inf", b"-inf",
              b"-9223372036854775808", b"-9.3e18", b"18446744073709551616", b"3471579339700058"]


class GeoDifferentialTest(gbtest.GoblinAndRedisCase):
    def pair(self, resp3=False):
        p = Pair(self, self.goblin, self.redis, resp3)
        self.addCleanup(p.close)
        return p

    def test_random_streams(self):
        seeds = [int(ONE_SEED)] if ONE_SEED else range(1, SEEDS + 1)
        for seed in seeds:
            run_stream(self, self.goblin, self.redis, seed)

    def test_errors_and_edges(self):
        for resp3 in (False, True):
            p = self.pair(resp3)
            p.both([b"RPUSH", b"lst", b"a"], "setup")
            p.both([b"GEOADD", b"g", b"1", b"2", b"p1", b"1.1", b"2.1", b"p2", b"-3", b"4", b"p3"], "setup")
            p.both([b"SET", b"d0", b"x"], "setup")
            for argv in ERROR_CASES:
                p.both(argv, "error case")
                p.compare_key(b"d0", "error case")
                p.compare_key(b"g", "error case")
            p.compare_events("errors")

    def test_scores_geoadd_never_writes(self):
        for resp3 in (False, True):
            p = self.pair(resp3)
            for i, s in enumerate(ODD_SCORES):
                p.both([b"ZADD", b"odd", s, b"s%d" % i], "setup")
            names = [b"s%d" % i for i in range(len(ODD_SCORES))]
            p.both([b"GEOPOS", b"odd"] + names, "odd scores")
            p.both([b"GEOHASH", b"odd"] + names, "odd scores")
            for i, n in enumerate(names):
                p.both([b"GEODIST", b"odd", n, names[(i + 3) % len(names)], b"km"], "odd scores")
                p.both([b"GEOSEARCH", b"odd", b"FROMMEMBER", n, b"BYRADIUS", b"30000", b"km", b"ASC",
                        b"WITHCOORD", b"WITHDIST", b"WITHHASH"], "odd scores")

    def test_equal_distances(self):
        """Equal distances: the whole result sorted (the C library's qsort
        over the points in Redis's order) and the first COUNT of it
        (Redis's partial quicksort), in large groups of ties."""
        p = self.pair()
        argv = [b"GEOADD", b"dup"]
        for i in range(40):
            argv += [b"10.5", b"20.25", b"same%02d" % (39 - i)]
        argv += [b"10.6", b"20.3", b"near", b"10.4", b"20.2", b"near2"]
        p.both(argv, "setup")
        for order in ([], [b"ASC"], [b"DESC"]):
            p.both([b"GEOSEARCH", b"dup", b"FROMLONLAT", b"10.5", b"20.25", b"BYRADIUS", b"100", b"km",
                    b"WITHDIST"] + order, "ties")
            p.both([b"GEORADIUS", b"dup", b"10.5", b"20.25", b"100", b"km", b"COUNT", b"100"] + order, "ties")
            for count in (b"1", b"3", b"7", b"20", b"41"):
                p.both([b"GEOSEARCH", b"dup", b"FROMLONLAT", b"10.6", b"20.3", b"BYRADIUS", b"100", b"km",
                        b"COUNT", count] + order, "ties")
                p.both([b"GEOSEARCH", b"dup", b"FROMMEMBER", b"near2", b"BYBOX", b"300", b"300", b"km",
                        b"COUNT", count, b"WITHDIST"] + order, "ties")

    def test_append_only_log(self):
        """A stream on goblin-core with the append-only log on, replayed by
        a restart, gives back redis-server's dataset; searches that store
        nothing (GEOSEARCH, GEORADIUS without STORE, the _RO forms, a STORE
        of nothing into a missing key) are not in the log."""
        d = tempfile.mkdtemp(prefix="gbit-geo-aof-")
        self.addCleanup(shutil.rmtree, d, True)
        g = gbtest.Server("goblin", args=["--appendonly", "yes", "--save", "", "--dir", d], dir=d)
        try:
            p = Pair(self, g, self.redis, False)
            st = Stream(random.Random(2828))
            for key, n in ((b"g0", 40), (b"g1", 300)):
                p.both(st.geoadd(key, n), "aof")
            for i in range(200):
                p.both(st.command(), "aof op %d" % i)
            p.both([b"GEORADIUS", b"g1", b"0", b"0", b"1", b"m", b"STORE", b"never"], "aof")
            expected = {k: scored(p.r.call(b"ZRANGE", k, b"0", b"-1", b"WITHSCORES")) for k in ALL_KEYS + [b"never"]}
            p.close()
            g.stop()
            logged = b""
            for f in glob.glob(os.path.join(d, "appendonlydir", "*.aof")):
                with open(f, "rb") as fh:
                    logged += fh.read()
            for word in (b"GEOSEARCH\r", b"GEORADIUS_RO", b"GEORADIUSBYMEMBER_RO", b"never"):
                self.assertNotIn(word, logged.upper().replace(b"GEOSEARCHSTORE", b""), word)
            g = gbtest.Server("goblin", args=["--appendonly", "yes", "--save", "", "--dir", d], dir=d)
            with Raw(g) as c:
                for k, want in expected.items():
                    self.assertEqual(scored(c.call(b"ZRANGE", k, b"0", b"-1", b"WITHSCORES")), want, k)
        finally:
            g.cleanup()


if __name__ == "__main__":
    gbtest.run_tests()
