"""Differential test of the stream commands (issue 17): goblin-core against
redis-server 7.0 (Debian's 7.0.15), both started here.

Seeded random streams send every stream command with valid and invalid
arguments (every option of XADD, XTRIM, XSETID, XREAD, XREADGROUP, XGROUP,
XACK, XPENDING, XCLAIM, XAUTOCLAIM, XINFO), wrong types (a string and a
list share the key space), explicit, partial ("<ms>-*") and automatic IDs,
tiny and default node sizes (stream-node-max-bytes/-entries, so approximate
trimming removes whole nodes at the same places and XINFO's radix-tree
counts are compared; one profile per seed: redis-server 7.0.15 crashes
in XREVRANGE when stream-node-max-bytes shrinks under a node it
preallocated), small MULTI blocks, blocking reads (XREAD and
XREADGROUP BLOCK on a second client, served or timed out), and deleted
entries left above later live ones (XDEL of the newest entries, XSETID
back, XADD below them: tombstone_scenario, issue 27).

Replies are compared byte for byte, except for what a clock decides:
  * IDs made from the clock ("*" on a stream whose last ID is in the past)
    and times (delivery times, seen-time) within a day of now compare as
    equal placeholders;
  * idle times (XPENDING's third field, XINFO CONSUMERS idle) compare as
    placeholders (they measure scheduling, not semantics); IDLE filters
    and min-idle-times are 0 or an hour, never in between.

Environment: GOBLIN_STREAMS_SEEDS (default 30), GOBLIN_STREAMS_OPS (default
2500), GOBLIN_STREAMS_SEED (run only this seed).
"""

import os
import random
import re
import time

import gbtest
from gbtest import Err, Raw

SEEDS = int(os.environ.get("GOBLIN_STREAMS_SEEDS", "30"))
OPS = int(os.environ.get("GOBLIN_STREAMS_OPS", "2500"))
ONE_SEED = os.environ.get("GOBLIN_STREAMS_SEED")

KEYS = [b"s0", b"s1", b"s2", b"s3", b"str", b"lst"]
STREAM_KEYS = KEYS[:4]
GROUPS = [b"g1", b"g2", b"g3"]
CONSUMERS = [b"alice", b"bob", b"carol", b"c"]
FIELDS = [b"f", b"g", b"h", b"name", b"1", b"", b"x" * 70]
VALUES = [b"1", b"v", b"", b"123456", b"-7", b"hello", b"x" * 100, b"9223372036854775807", b"3.5", b"\x00\xff"]
# Explicit IDs: small ones, far future ones (so "*" after them counts up
# deterministically), edges and garbage.
BASE = 10 ** 14
MS = [0, 1, 2, 3, 5, 7, 10, 100, BASE, BASE + 1, BASE + 5, BASE + 1000]
ODD_IDS = [b"-", b"+", b"0-0", b"0", b"abc", b"1-", b"-1", b"1--1", b" 5", b"+5-1", b"007-1", b"5-*", b"*",
           b"18446744073709551615-18446744073709551615", b"18446744073709551615-18446744073709551614",
           b"18446744073709551616", b"1-18446744073709551615", b"(1-1", b"(", b"$", b">", b"", b"1.5"]
PROFILES = {
    "default": [(b"stream-node-max-bytes", b"4096"), (b"stream-node-max-entries", b"100")],
    "tiny": [(b"stream-node-max-bytes", b"120"), (b"stream-node-max-entries", b"3")],
    "entries": [(b"stream-node-max-bytes", b"0"), (b"stream-node-max-entries", b"5")],
    "bytes": [(b"stream-node-max-bytes", b"200"), (b"stream-node-max-entries", b"0")],
}
HOUR = b"3600000"
CLOCK = int(time.time() * 1000)
DAY = 86400000
ID_RE = re.compile(rb"^(\d+)-(\d+)$")


class Mismatch(AssertionError):
    pass


class Gen:
    def __init__(self, rng):
        self.rng = rng
        self.seq = 0

    def key(self):
        r = self.rng.random()
        return self.rng.choice(STREAM_KEYS) if r < 0.9 else self.rng.choice(KEYS)

    def keys(self, lo=1, hi=3):
        return [self.key() for _ in range(self.rng.randint(lo, hi))]

    def id(self, odd=0.1):
        rng = self.rng
        if rng.random() < odd:
            return rng.choice(ODD_IDS)
        ms = rng.choice(MS)
        r = rng.random()
        if r < 0.2:
            return str(ms).encode()
        return b"%d-%d" % (ms, rng.randint(0, 4))

    def new_id(self):
        """An ID for XADD: mostly increasing, sometimes partial or "*"."""
        rng = self.rng
        r = rng.random()
        if r < 0.15:
            return b"*"
        if r < 0.25:
            return b"%d-*" % rng.choice(MS)
        if r < 0.3:
            return self.id(0.5)
        self.seq += rng.randint(1, 3)
        return b"%d-%d" % (BASE + self.seq // 4, self.seq % 4)

    def recent_id(self, back=0):
        """The ID new_id made `back` steps of its counter ago."""
        s = max(self.seq - back, 0)
        return b"%d-%d" % (BASE + s // 4, s % 4)

    def rewind(self, back):
        """XADD's next IDs go back below ones already used: after XDEL of
        the top entry and an XSETID back, they land after a tombstone with a
        larger ID (issue 27)."""
        self.seq = max(self.seq - back, 0)

    def fields(self):
        n = self.rng.choice([1, 1, 2, 2, 3])
        if self.rng.random() < 0.7:
            names = [b"f", b"g", b"h"][:n]  # the master field list: same-fields entries
        else:
            names = [self.rng.choice(FIELDS) for _ in range(n)]
        out = []
        for f in names:
            out += [f, self.rng.choice(VALUES)]
        return out

    def count(self):
        r = self.rng.random()
        if r < 0.8:
            return str(self.rng.randint(-2, 6)).encode()
        return self.rng.choice([b"abc", b"", b"100", b"0", b"9223372036854775807", b"-9223372036854775808"])

    def group(self):
        return self.rng.choice(GROUPS)

    def consumer(self):
        return self.rng.choice(CONSUMERS)

    def case(self, name):
        if self.rng.random() < 0.1:
            return bytes(ch ^ 0x20 if 97 <= ch <= 122 and self.rng.random() < 0.5 else ch for ch in name)
        return name

    def trim_opts(self, xtrim=False):
        rng = self.rng
        out = []
        r = rng.random()
        if r < 0.45 or xtrim:
            strat = rng.choice([b"MAXLEN", b"MINID"]) if rng.random() < 0.95 else b"FOO"
            out.append(self.case(strat))
            if rng.random() < 0.6:
                out.append(rng.choice([b"~", b"=", b"~", b"~"]))
            if strat.upper() == b"MAXLEN":
                out.append(rng.choice([b"0", b"1", b"2", b"3", b"5", b"10", b"20", b"-1", b"abc"]))
            else:
                out.append(self.id(0.15))
            if rng.random() < 0.3:
                out += [b"LIMIT", rng.choice([b"0", b"1", b"3", b"10", b"100", b"-1", b"x"])]
            if rng.random() < 0.03:
                out += [rng.choice([b"MAXLEN", b"MINID"]), b"1"]
        elif r < 0.5:
            out += [b"LIMIT", b"5"]
        return out


# ---- generators --------------------------------------------------------------------------

def xadd(g):
    rng = g.rng
    args = [g.case(b"XADD"), g.key()]
    if rng.random() < 0.1:
        args.append(b"NOMKSTREAM")
    args += g.trim_opts()
    if rng.random() < 0.05:
        args.append(b"NOMKSTREAM")
    args.append(g.new_id())
    args += g.fields()
    if rng.random() < 0.02:
        args.append(b"odd")
    return args


def xtrim(g):
    args = [g.case(b"XTRIM"), g.key()] + g.trim_opts(True)
    if g.rng.random() < 0.02:
        args.append(b"NOMKSTREAM")
    return args


def xrange_(g):
    rng = g.rng
    name = rng.choice([b"XRANGE", b"XREVRANGE"])
    lo = rng.choice([b"-", b"-", g.id(0.2), b"(" + g.id(0)])
    hi = rng.choice([b"+", b"+", g.id(0.2), b"(" + g.id(0)])
    args = [name, g.key()] + ([lo, hi] if name == b"XRANGE" else [hi, lo])
    if rng.random() < 0.5:
        args += [g.case(b"COUNT"), g.count()]
    if rng.random() < 0.03:
        args.append(b"COUNT")
    return args


def xdel(g):
    if g.rng.random() < 0.3:  # the newest entries, the top first
        return [b"XDEL", g.key()] + [g.recent_id(i) for i in range(g.rng.randint(1, 3))]
    return [b"XDEL", g.key()] + [g.id(0.05) for _ in range(g.rng.randint(1, 4))]


def xlen(g):
    return [b"XLEN", g.key()]


def xsetid(g):
    rng = g.rng
    if rng.random() < 0.4:  # back below deleted top entries, and XADD follows there
        back = rng.randint(1, 8)
        key, target = g.key(), g.recent_id(back)
        g.rewind(back - 1)
        return [b"XSETID", key, target]
    args = [b"XSETID", g.key(), rng.choice([g.id(0.2), b"%d-%d" % (BASE + 10 ** 6, 0)])]
    if rng.random() < 0.3:
        args += [b"ENTRIESADDED", rng.choice([b"0", b"5", b"100", b"-1", b"abc"])]
    if rng.random() < 0.3:
        args += [b"MAXDELETEDID", g.id(0.1)]
    return args


def xread_args(g, group):
    rng = g.rng
    args = []
    if group:
        args += [b"GROUP", g.group(), g.consumer()]
    if rng.random() < 0.5:
        args += [g.case(b"COUNT"), g.count()]
    if group and rng.random() < 0.25:
        args.append(g.case(b"NOACK"))
    if rng.random() < 0.05:
        args.append(rng.choice([b"FOO", b"GROUP", b"NOACK"]))
    ks = list(dict.fromkeys(g.keys(1, 3)))
    args.append(g.case(b"STREAMS"))
    args += ks
    for _ in ks:
        if group:
            args.append(rng.choice([b">", b">", b">", b"0", b"0-0", g.id(0.1), b"$"]))
        else:
            args.append(rng.choice([b"0", b"$", g.id(0.1), b"0-0"]))
    if rng.random() < 0.03:
        args.append(b"extra")
    return args


def xread(g):
    return [g.case(b"XREAD")] + xread_args(g, False)


def xreadgroup(g):
    return [g.case(b"XREADGROUP")] + xread_args(g, True)


def xgroup(g):
    rng = g.rng
    sub = rng.choice([b"CREATE", b"CREATE", b"SETID", b"DESTROY", b"CREATECONSUMER", b"DELCONSUMER", b"HELP",
                      b"FOO"])
    k = g.key()
    if sub == b"CREATE":
        args = [b"XGROUP", g.case(sub), k, g.group(), rng.choice([b"$", b"0", g.id(0.1)])]
        if rng.random() < 0.3:
            args.append(g.case(b"MKSTREAM"))
        if rng.random() < 0.3:
            args += [b"ENTRIESREAD", rng.choice([b"0", b"2", b"-1", b"-2", b"abc", b"100"])]
        return args
    if sub == b"SETID":
        args = [b"XGROUP", sub, k, g.group(), rng.choice([b"$", b"0", g.id(0.2)])]
        if rng.random() < 0.3:
            args += [b"ENTRIESREAD", rng.choice([b"0", b"3", b"-1", b"-5"])]
        return args
    if sub == b"DESTROY":
        return [b"XGROUP", sub, k, g.group()]
    if sub in (b"CREATECONSUMER", b"DELCONSUMER"):
        return [b"XGROUP", sub, k, g.group(), g.consumer()]
    if sub == b"HELP":
        return [b"XGROUP", b"help"]
    return [b"XGROUP", sub, k]


def xack(g):
    return [b"XACK", g.key(), g.group()] + [g.id(0.05) for _ in range(g.rng.randint(1, 3))]


def xpending(g):
    rng = g.rng
    args = [b"XPENDING", g.key(), g.group()]
    if rng.random() < 0.3:
        return args
    if rng.random() < 0.3:
        args += [g.case(b"IDLE"), rng.choice([b"0", HOUR, b"abc"])]
    args += [rng.choice([b"-", g.id(0.1), b"(" + g.id(0)]), rng.choice([b"+", g.id(0.1)]), g.count()]
    if rng.random() < 0.4:
        args.append(g.consumer())
    return args


def xclaim(g):
    rng = g.rng
    args = [b"XCLAIM", g.key(), g.group(), g.consumer(), rng.choice([b"0", b"0", HOUR, b"-5", b"abc"])]
    args += [g.id(0.05) for _ in range(rng.randint(1, 3))]
    for _ in range(rng.randint(0, 3)):
        opt = rng.choice([b"FORCE", b"JUSTID", b"IDLE", b"TIME", b"RETRYCOUNT", b"LASTID", b"BAD"])
        args.append(g.case(opt))
        if opt == b"IDLE":
            args.append(rng.choice([b"0", HOUR, b"-5", b"abc"]))
        elif opt == b"TIME":
            args.append(rng.choice([b"5", b"1000", b"-1", b"abc", b"99999999999999"]))
        elif opt == b"RETRYCOUNT":
            args.append(rng.choice([b"0", b"7", b"-1", b"abc"]))
        elif opt == b"LASTID":
            args.append(g.id(0.1))
    return args


def xautoclaim(g):
    rng = g.rng
    args = [b"XAUTOCLAIM", g.key(), g.group(), g.consumer(), rng.choice([b"0", b"0", HOUR, b"-1", b"abc"]),
            rng.choice([b"0", b"-", b"0-0", g.id(0.1), b"(" + g.id(0)])]
    if rng.random() < 0.5:
        args += [g.case(b"COUNT"), rng.choice([b"1", b"2", b"3", b"100", b"0", b"-1", b"abc",
                                               b"576460752303423488"])]
    if rng.random() < 0.3:
        args.append(g.case(b"JUSTID"))
    if rng.random() < 0.03:
        args.append(b"BAD")
    return args


def xinfo(g):
    rng = g.rng
    sub = rng.choice([b"STREAM", b"STREAM", b"GROUPS", b"CONSUMERS", b"HELP", b"FOO"])
    k = g.key()
    if sub == b"STREAM":
        args = [b"XINFO", g.case(sub), k]
        r = rng.random()
        if r < 0.4:
            args.append(g.case(b"FULL"))
            if rng.random() < 0.5:
                args += [g.case(b"COUNT"), rng.choice([b"0", b"1", b"2", b"-1", b"abc"])]
        elif r < 0.45:
            args.append(b"BAD")
        return args
    if sub == b"GROUPS":
        return [b"XINFO", sub, k]
    if sub == b"CONSUMERS":
        return [b"XINFO", sub, k, g.group()]
    if sub == b"HELP":
        return [b"XINFO", b"help"]
    return [b"XINFO", sub, k]


def misc(g):
    rng = g.rng
    k = g.key()
    return rng.choice([[b"TYPE", k], [b"DEL", k], [b"EXISTS", k], [b"OBJECT", b"ENCODING", k],
                       [b"COPY", k, rng.choice(STREAM_KEYS)], [b"RENAME", k, rng.choice(STREAM_KEYS)],
                       [b"SET", b"str", b"x"], [b"RPUSH", b"lst", b"a"]])


def arity(g):
    name = g.rng.choice([b"XADD", b"XRANGE", b"XREVRANGE", b"XLEN", b"XREAD", b"XREADGROUP", b"XDEL", b"XTRIM",
                         b"XSETID", b"XGROUP", b"XACK", b"XPENDING", b"XCLAIM", b"XAUTOCLAIM", b"XINFO"])
    return [name] + [g.key() for _ in range(g.rng.randint(0, 2))]


GENERATORS = [(xadd, 30), (xtrim, 5), (xrange_, 10), (xdel, 6), (xlen, 3), (xsetid, 4), (xread, 8),
              (xreadgroup, 14), (xgroup, 8), (xack, 6), (xpending, 6), (xclaim, 6), (xautoclaim, 5),
              (xinfo, 6), (misc, 4), (arity, 1)]


# ---- comparison --------------------------------------------------------------------------

def normalize(v):
    """The reply with what a clock decides replaced by placeholders."""
    if isinstance(v, list):
        out = [normalize(x) for x in v]
        # Name/value maps: the value after "idle" is an idle time.
        for i in range(len(out) - 1):
            if out[i] == b"idle" and isinstance(out[i + 1], int):
                out[i + 1] = "<idle>"
        return out
    if isinstance(v, int) and abs(v - CLOCK) < DAY:
        return "<clock-ms>"
    if isinstance(v, bytes) and not isinstance(v, Err):
        m = ID_RE.match(v)
        if m and abs(int(m.group(1)) - CLOCK) < DAY:
            return "<clock-id>"
    return v


def pending_idle(v):
    """XPENDING's extended form: [id, consumer, idle, count] x n."""
    if isinstance(v, list):
        return [[e[0], e[1], "<idle>", e[3]] if isinstance(e, list) and len(e) == 4 else e for e in v]
    return v


def fmt(argv):
    out = []
    for a in argv:
        s = a.decode("latin-1")
        if len(s) > 40:
            s = s[:24] + "...(%d bytes)" % len(a)
        out.append(repr(s) if (not s or any(ch in s for ch in " '\"\\") or not s.isprintable()) else s)
    return " ".join(out)


class Pair:
    def __init__(self, goblin, redis, seed):
        self.g, self.r = Raw(goblin), Raw(redis)
        self.g2, self.r2 = Raw(goblin), Raw(redis)
        self.ga, self.ra = Raw(goblin), Raw(redis)  # ask whether g2/r2 are parked yet (INFO clients)
        self.seed = seed
        self.hist = []

    def close(self):
        for c in (self.g, self.r, self.g2, self.r2, self.ga, self.ra):
            c.close()

    def fail(self, idx, argv, got, want, why=""):
        hist = "\n".join("    #%d %s" % h for h in self.hist[-20:])
        raise Mismatch("goblin-core and redis-server differ%s\n  seed=%s index=%d\n  command: %s\n"
                       "  goblin: %r\n  redis:  %r\n  recent commands:\n%s\n  rerun: GOBLIN_STREAMS_SEED=%s"
                       % (" (" + why + ")" if why else "", self.seed, idx, fmt(argv), got, want, hist, self.seed))

    @staticmethod
    def comparable(argv, v):
        """The reply with only the clock's values replaced, and its RESP
        types (a status, an error and a bulk string of the same text differ)."""
        n = normalize(v)
        if argv and argv[0].upper() == b"XPENDING" and len(argv) > 3:
            n = pending_idle(n)
        return gbtest.resp_types(v), n

    def compare(self, idx, argv, got, want, queued=None):
        (ga, gr), (ra, rr) = got, want
        if gr == rr:
            return ga
        if queued is not None and isinstance(ga, list) and isinstance(ra, list) and len(ga) == len(ra) == len(queued):
            ok = all(self.comparable(q, x) == self.comparable(q, y) for q, x, y in zip(queued, ga, ra))
        else:
            ok = self.comparable(argv, ga) == self.comparable(argv, ra)
        if not ok:
            self.fail(idx, argv, gr, rr)
        return ga

    def run(self, idx, argv, queued=None):
        self.hist.append((idx, fmt(argv)))
        out = []
        for side, c in (("goblin-core", self.g), ("redis-server", self.r)):
            c.send_cmd(*argv)
            try:
                out.append(c.read())
            except EOFError:
                hist = "\n".join("    #%d %s" % h for h in self.hist[-10:])
                raise Mismatch("%s closed the connection (seed=%s index=%d) after:\n%s" % (side, self.seed, idx, hist))
        return self.compare(idx, argv, out[0], out[1], queued)

    def blocking(self, idx, block_argv, writes):
        """Client 2 blocks; client 1 writes; client 2's reply (served or
        timed out) must be the same on both servers."""
        self.hist.append((idx, "(client 2, blocking) " + fmt(block_argv)))
        for c in (self.g2, self.r2):
            c.send_cmd(*block_argv)
        # Both servers have parked it (or answered it at once) before the
        # writes: a fixed pause lost that race on a loaded machine, and an
        # XREAD ... $ then ran after the XADD on one server only.
        if not gbtest.wait_blocked_or_answered([(self.ga, self.g2), (self.ra, self.r2)]):
            raise AssertionError("seed=%s index=%d: %s neither blocked nor answered on both servers"
                                 % (self.seed, idx, fmt(block_argv)))
        for argv in writes:
            self.run(idx, argv)
        replies = []
        for side, c in (("goblin-core", self.g2), ("redis-server", self.r2)):
            try:
                replies.append(c.read())
            except EOFError:
                hist = "\n".join("    #%d %s" % h for h in self.hist[-10:])
                raise Mismatch("%s closed the blocked connection (seed=%s index=%d) after:\n%s"
                               % (side, self.seed, idx, hist))
        self.compare(idx, block_argv, replies[0], replies[1])

    def multi(self, idx, cmds):
        self.run(idx, [b"MULTI"])
        for argv in cmds:
            self.run(idx, argv)
        self.run(idx, [b"EXEC"], queued=cmds)


def set_profile(pair, profile, idx):
    for name, value in PROFILES[profile]:
        pair.run(idx, [b"CONFIG", b"SET", name, value])


def blocking_scenario(pair, g, i):
    rng = g.rng
    k = rng.choice(STREAM_KEYS)
    if rng.random() < 0.5:
        block = [b"XREAD", b"BLOCK", b"300"] + ([b"COUNT", b"2"] if rng.random() < 0.5 else []) + \
                [b"STREAMS", k, rng.choice([b"$", b"0", g.id(0)])]
    else:
        block = [b"XREADGROUP", b"GROUP", g.group(), g.consumer(), b"BLOCK", b"300"] + \
                ([b"NOACK"] if rng.random() < 0.3 else []) + [b"STREAMS", k, b">"]
    writes = [rng.choice([
        [b"XADD", k, g.new_id()] + g.fields(),
        [b"XADD", k, g.new_id()] + g.fields(),
        [b"XGROUP", b"CREATE", k, g.group(), b"$", b"MKSTREAM"],
        [b"XGROUP", b"DESTROY", k, g.group()],
        [b"DEL", k],
        [b"SET", k, b"x"],
    ]) for _ in range(rng.randint(1, 2))]
    pair.blocking(i, block, writes)


def tombstone_scenario(pair, g, i):
    """Deleted entries above later live ones (issue 27): XDEL the newest
    entries of a stream, XSETID back to the newest one left, XADD below
    (and at) the deleted IDs, then look the new entries up every way."""
    rng = g.rng
    k = rng.choice(STREAM_KEYS)
    top = pair.run(i, [b"XREVRANGE", k, b"+", b"-", b"COUNT", b"4"])
    if not isinstance(top, list) or len(top) < 2:
        return
    if any(normalize(e[0]) != e[0] for e in top):
        return  # an ID from XADD *: each server's clock chose its own, so goblin-core's is not Redis's
    ids = [tuple(int(x) for x in e[0].split(b"-")) for e in top]
    ndel = rng.randint(1, len(ids) - 1)
    pair.run(i, [b"XDEL", k] + [b"%d-%d" % ids[j] for j in range(ndel)])
    floor = ids[ndel]
    pair.run(i, [b"XSETID", k, b"%d-%d" % floor])
    added = []
    for _ in range(rng.randint(1, 3)):
        deleted = ids[rng.randrange(ndel)]
        new = rng.choice([deleted, (floor[0], floor[1] + 1 + len(added)), (deleted[0], deleted[1] + 1)])
        pair.run(i, [b"XADD", k, b"%d-%d" % new] + g.fields())
        added.append(new)
    for a in added:
        one = b"%d-%d" % a
        pair.run(i, [rng.choice([b"XRANGE", b"XREVRANGE"]), k, one, one])
    pair.run(i, [b"XREVRANGE", k, b"+", b"%d-%d" % floor])
    pair.run(i, [b"XLEN", k])
    if rng.random() < 0.5:
        pair.run(i, [b"XDEL", k, b"%d-%d" % rng.choice(added)])


def run_stream(goblin, redis, seed, nops):
    rng = random.Random(seed)
    g = Gen(rng)
    pair = Pair(goblin, redis, seed)
    fns = [f for f, _ in GENERATORS]
    weights = [w for _, w in GENERATORS]
    profiles = sorted(PROFILES)
    try:
        pair.run(-1, [b"FLUSHALL"])
        set_profile(pair, profiles[seed % len(profiles)], -1)
        for i in range(nops):
            r = rng.random()
            if r < 0.02:
                pair.multi(i, [rng.choices(fns, weights)[0](g) for _ in range(rng.randint(1, 4))])
            elif r < 0.03:
                blocking_scenario(pair, g, i)
            elif r < 0.035:
                tombstone_scenario(pair, g, i)
            else:
                pair.run(i, rng.choices(fns, weights)[0](g))
        for k in STREAM_KEYS:  # the streams agree at the end, groups and pending lists included
            pair.run(nops, [b"XINFO", b"STREAM", k, b"FULL", b"COUNT", b"0"])
            pair.run(nops, [b"XRANGE", k, b"-", b"+"])
    finally:
        pair.close()


class StreamsDifferentialTest(gbtest.GoblinAndRedisCase):
    def test_random_streams(self):
        seeds = [int(ONE_SEED)] if ONE_SEED else list(range(1, SEEDS + 1))
        t0 = time.time()
        for seed in seeds:
            run_stream(self.goblin, self.redis, seed, OPS)
        print("\n  %d seeds x %d commands in %.1fs" % (len(seeds), OPS, time.time() - t0))

    def test_xack_counts_as_redis(self):
        """XACK looks its key up once: INFO's keyspace hits and misses move
        as Redis 7.0's (one lookupKeyRead), on hits, a missing group, a
        missing key and a bad ID; and acks over a PEL of 600 IDs (branches
        of every width) given with leading zeros agree reply by reply."""
        pair = Pair(self.goblin, self.redis, "xack-counts")
        try:
            pair.run(0, [b"FLUSHALL"])
            for i in range(1, 601):
                pair.run(0, [b"XADD", b"q", b"%d-%d" % (i * 97, i % 3), b"f", b"v"])
            pair.run(0, [b"XGROUP", b"CREATE", b"q", b"g", b"0"])
            pair.run(0, [b"XREADGROUP", b"GROUP", b"g", b"a", b"COUNT", b"300", b"STREAMS", b"q", b">"])
            pair.run(0, [b"XREADGROUP", b"GROUP", b"g", b"b", b"STREAMS", b"q", b">"])
            pair.run(0, [b"CONFIG", b"RESETSTAT"])
            rng = random.Random(17)
            order = list(range(1, 601))
            rng.shuffle(order)
            for n, i in enumerate(order):
                ids = [b"%012d-%d" % (i * 97, i % 3), b"%d-%d" % (rng.randint(1, 600) * 97, rng.randint(0, 2))]
                pair.run(n + 1, [b"XACK", b"q", b"g"] + ids)
                if n % 50 == 0:
                    pair.run(n + 1, [b"XPENDING", b"q", b"g"])
            pair.run(601, [b"XACK", b"q", b"nogroup", b"1-0"])
            pair.run(601, [b"XACK", b"nokey", b"g", b"1-0"])
            pair.run(601, [b"XACK", b"q", b"g", b"1-0", b"bad"])
            pair.run(601, [b"XINFO", b"STREAM", b"q", b"FULL"])
            for side, c in (("goblin", pair.g), ("redis", pair.r)):
                c.send_cmd(b"INFO", b"stats")
            stats = [dict(line.split(":", 1) for line in c.read()[0].decode().split("\r\n")
                          if line.startswith("keyspace_")) for c in (pair.g, pair.r)]
            self.assertEqual(stats[0], stats[1])
            self.assertEqual(stats[1]["keyspace_hits"], str(600 + 12 + 3))  # XACKs, XPENDINGs, the rest
        finally:
            pair.close()

    def test_z_both_alive(self):
        self.assertTrue(self.goblin.ping_ok())
        self.assertTrue(self.redis.ping_ok())


if __name__ == "__main__":
    gbtest.run_tests()
