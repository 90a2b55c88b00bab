"""Differential tests: goblin-core against redis-server 7.

The same seeded random command streams (valid and invalid arguments, wrong
arity, overflow, option combinations, transactions with a second connection
invalidating WATCHed keys, several databases) go to a fresh goblin-core and a
fresh redis-server in lockstep; every reply is compared byte for byte, except
where Redis leaves the answer unspecified or time-dependent (see COMPARE).
A mismatch reports the seed, the index, the connection, the command, both raw
replies and the commands that led to it.

Adding a command family = adding generator entries to GENERATORS (and a key
maker to TYPE_MAKERS for a new type, so WRONGTYPE cases appear), naming the
family in ENABLED_FAMILIES, and a comparator in COMPARE if its replies are not
byte-exact (floats, unordered sets).

Environment: GOBLIN_DIFF_SEEDS (default 40), GOBLIN_DIFF_OPS (default 4000),
GOBLIN_DIFF_SEED (run only this seed), GOBLIN_DIFF_FAMILIES (extra families,
comma separated, e.g. "float"), GOBLIN_DIFF_MINIMIZE=0 (no ddmin of a failing
stream; by default it is shrunk to a minimal reproduction, at most 60 s).
"""

import os
import random
import time

import gbtest
from gbtest import Err, Raw, encode

SEEDS = int(os.environ.get("GOBLIN_DIFF_SEEDS", "40"))
OPS = int(os.environ.get("GOBLIN_DIFF_OPS", "4000"))
ONE_SEED = os.environ.get("GOBLIN_DIFF_SEED")

ENABLED_FAMILIES = {"conn", "string", "float", "keys", "expire", "db", "multi", "arity", "list"}
ENABLED_FAMILIES |= {f for f in os.environ.get("GOBLIN_DIFF_FAMILIES", "").split(",") if f}

# ---- the data the generators draw from ------------------------------------------

KEYS = [b"k0", b"k1", b"k2", b"k3", b"k4", b"n0", b"n1", b"n2", b"{tag}a", b"sp ace", b"", b"\xff\x00"]
# Values chosen for encodings (int / embstr <= 44 bytes / raw), integer
# parsing edge cases and binary safety.
VALUES = [b"0", b"1", b"-1", b"7", b"42", b"-100", b"9999", b"10000", b"007", b"+5", b" 3", b"3 ", b"-0",
          b"9223372036854775807", b"-9223372036854775808", b"9223372036854775806", b"-9223372036854775807",
          b"9223372036854775808", b"-9223372036854775809", b"18446744073709551615", b"12345678901234567890",
          b"1.5", b"1e3", b"0x1f", b"inf", b"nan", b"", b"abc", b"hello world", b"\x00bin\xff\r\n",
          b"x" * 44, b"x" * 45, b"y" * 200, b"z" * 1000]
# Integer arguments: valid, invalid, boundaries.
INTS = [b"0", b"1", b"-1", b"2", b"5", b"100", b"-100", b"abc", b"", b"1.5", b" 1", b"1 ", b"+1", b"01",
        b"9223372036854775807", b"-9223372036854775808", b"9223372036854775808", b"-9223372036854775809",
        b"4611686018427387904", b"-4611686018427387904"]
# Expire values in seconds that never elapse during a run (or are invalid).
EXPIRE_S = [b"100", b"1000", b"5000", b"86400", b"0", b"-1", b"-100", b"abc", b"1.5", b"",
            b"9223372036854775807", b"9223372036854775", b"9223372036854776", b"-9223372036854775808"]
# The same in milliseconds: nothing that elapses during a run (a 100 ms
# expiry would race between the two servers).
EXPIRE_MS = [b"100000", b"1000000", b"5000000", b"86400000", b"0", b"-1", b"-100", b"abc", b"1.5", b"",
             b"9223372036854775807", b"9223372036854775", b"9223372036854776", b"-9223372036854775808"]
PATTERNS = [b"*", b"k*", b"k[0-2]", b"?0", b"n*", b"*a*", b"[", b"\\", b"k\\*", b"{tag}*", b"[^k]*", b"nomatch",
            b"*\xff*"]


def rint(rng, lo, hi):
    return str(rng.randint(lo, hi)).encode()


class Ctx:
    """Per-stream generator state (deterministic given the seed)."""

    def __init__(self, rng):
        self.rng = rng
        self.now = int(time.time())

    def key(self):
        return self.rng.choice(KEYS)

    def keys(self, lo=1, hi=4):
        return [self.key() for _ in range(self.rng.randint(lo, hi))]

    def val(self):
        return self.rng.choice(VALUES)

    def int_(self):
        r = self.rng.random()
        if r < 0.6:
            return rint(self.rng, -20, 20)
        return self.rng.choice(INTS)

    def secs(self):
        r = self.rng.random()
        if r < 0.6:
            return rint(self.rng, 100, 1000000)
        return self.rng.choice(EXPIRE_S)

    def ms(self):
        r = self.rng.random()
        if r < 0.6:
            return rint(self.rng, 100000, 1000000000)
        return self.rng.choice(EXPIRE_MS)

    def at_s(self):
        r = self.rng.random()
        if r < 0.5:
            return str(self.now + self.rng.randint(1000, 10000000)).encode()
        if r < 0.75:  # in the past: the key goes away
            return self.rng.choice([b"1", str(self.now - 1000).encode(), b"0"])
        return self.rng.choice(EXPIRE_S)

    def at_ms(self):
        r = self.rng.random()
        if r < 0.5:
            return str((self.now + self.rng.randint(1000, 10000000)) * 1000 + self.rng.randint(0, 999)).encode()
        if r < 0.75:
            return self.rng.choice([b"1", str((self.now - 1000) * 1000).encode()])
        return self.rng.choice(EXPIRE_S)

    def case(self, name):
        """The command name in a random case (names are case-insensitive)."""
        if self.rng.random() < 0.1:
            return bytes(c ^ 0x20 if (65 <= c <= 90 or 97 <= c <= 122) and self.rng.random() < 0.5 else c
                         for c in name)
        return name


# ---- generators: one function per command, returning its argv --------------------

def g_set(c):
    rng = c.rng
    args = [b"SET", c.key(), c.val()]
    opts = []
    for _ in range(rng.choice([0, 0, 1, 1, 1, 2, 2, 3])):
        o = rng.choice([b"NX", b"XX", b"GET", b"KEEPTTL", b"EX", b"PX", b"EXAT", b"PXAT", b"nx", b"ex", b"get",
                        b"BOGUS"])
        opts.append(o)
        up = o.upper()
        if up in (b"EX", b"PX", b"EXAT", b"PXAT") and rng.random() < 0.95:
            opts.append({b"EX": c.secs, b"PX": c.ms, b"EXAT": c.at_s, b"PXAT": c.at_ms}[up]())
    return args + opts


def g_getex(c):
    rng = c.rng
    args = [b"GETEX", c.key()]
    for _ in range(rng.choice([0, 1, 1, 1, 2])):
        o = rng.choice([b"EX", b"PX", b"EXAT", b"PXAT", b"PERSIST", b"persist", b"KEEPTTL", b"XX"])
        args.append(o)
        up = o.upper()
        if up in (b"EX", b"PX", b"EXAT", b"PXAT") and rng.random() < 0.95:
            args.append({b"EX": c.secs, b"PX": c.ms, b"EXAT": c.at_s, b"PXAT": c.at_ms}[up]())
    return args


def g_expire(c):
    rng = c.rng
    name = rng.choice([b"EXPIRE", b"PEXPIRE", b"EXPIREAT", b"PEXPIREAT"])
    when = {b"EXPIRE": c.secs, b"PEXPIRE": c.ms, b"EXPIREAT": c.at_s, b"PEXPIREAT": c.at_ms}[name]()
    args = [name, c.key(), when]
    for _ in range(rng.choice([0, 0, 1, 1, 2])):
        args.append(rng.choice([b"NX", b"XX", b"GT", b"LT", b"nx", b"gt", b"FOO"]))
    return args


def g_getrange(c):
    rng = c.rng
    edge = [b"0", b"-1", b"1", b"-2", b"3", b"100", b"-100", b"9223372036854775807", b"-9223372036854775808",
            b"abc", b"1.0"]

    def off():
        return rint(rng, -60, 60) if rng.random() < 0.7 else rng.choice(edge)
    return [rng.choice([b"GETRANGE", b"SUBSTR"]), c.key(), off(), off()]


def g_setrange(c):
    rng = c.rng
    r = rng.random()
    if r < 0.7:
        off = rint(rng, 0, 60)
    elif r < 0.8:
        off = rint(rng, 0, 5000)
    else:
        # Past the 512 MB limit (errors) or nothing to write: never a real
        # 512 MB allocation.
        off = rng.choice([b"-1", b"abc", b"536870911", b"536870912", b"9223372036854775807", b"1.5"])
    val = rng.choice([b"", b"x", b"hello", b"\x00\x01", b"abcdefghijklmnopqrstuvwxyz" * 2])
    if off == b"536870911":
        val = rng.choice([b"", b"hello"])
    return [b"SETRANGE", c.key(), off, val]


def g_incr_family(c):
    rng = c.rng
    name = rng.choice([b"INCR", b"DECR", b"INCRBY", b"DECRBY"])
    if name in (b"INCR", b"DECR"):
        return [name, c.key()]
    r = rng.random()
    if r < 0.5:
        n = rint(rng, -1000, 1000)
    elif r < 0.8:
        n = rng.choice([b"9223372036854775807", b"-9223372036854775808", b"9223372036854775806",
                        b"-9223372036854775807", b"4611686018427387904", b"1", b"-1"])
    else:
        n = rng.choice(INTS)
    return [name, c.key(), n]


def g_incrbyfloat(c):  # family "float"
    rng = c.rng
    inc = rng.choice([b"0.1", b"-1.5", b"1e3", b"3", b"abc", b"inf", b"-inf", b"nan", b"1.7976931348623157e308",
                      b"5.0e-1", b" 1", b""])
    return [b"INCRBYFLOAT", c.key(), inc]


def g_mset(c):
    rng = c.rng
    name = rng.choice([b"MSET", b"MSETNX"])
    args = [name]
    for _ in range(rng.randint(1, 3)):
        args += [c.key(), c.val()]
    if rng.random() < 0.15:
        args.append(c.key())  # odd arity
    return args


def g_copy(c):
    rng = c.rng
    args = [b"COPY", c.key(), c.key()]
    for _ in range(rng.choice([0, 0, 1, 1, 2])):
        o = rng.choice([b"DB", b"REPLACE", b"db", b"replace", b"BAD"])
        args.append(o)
        if o.upper() == b"DB" and rng.random() < 0.9:
            args.append(rng.choice([b"0", b"1", b"2", b"15", b"16", b"-1", b"abc"]))
    return args


def g_scan(c):
    rng = c.rng
    cursor = b"0" if rng.random() < 0.9 else rng.choice([b"abc", b"-1", b"18446744073709551616"])
    args = [b"SCAN", cursor]
    for _ in range(rng.choice([0, 1, 1, 2])):
        o = rng.choice([b"MATCH", b"COUNT", b"TYPE", b"match", b"FOO"])
        args.append(o)
        up = o.upper()
        if up == b"MATCH":
            args.append(rng.choice(PATTERNS))
        elif up == b"COUNT":
            # Large counts: one call covers the whole small keyspace, so the
            # cursor is 0 on both sides. Bad counts are errors on both.
            args.append(rng.choice([b"1000", b"5000", b"0", b"-1", b"abc"]))
        elif up == b"TYPE":
            # Not "none": Redis 7.0 lists logically expired keys under TYPE
            # none (its type check expires them, then the expiry filter no
            # longer sees them), a Redis quirk goblin-core need not copy.
            args.append(rng.choice([b"string", b"STRING", b"list", b"hash", b"nosuchtype"]))
    if b"COUNT" not in [a.upper() for a in args]:
        args += [b"COUNT", b"1000"]
    return args


def g_object(c):
    rng = c.rng
    sub = rng.choice([b"ENCODING", b"ENCODING", b"ENCODING", b"encoding", b"FREQ", b"IDLETIME", b"BOGUS"])
    if rng.random() < 0.05:
        return [b"OBJECT", sub]
    return [b"OBJECT", sub, c.key()]


def g_select(c):
    r = c.rng.random()
    if r < 0.8:
        return [b"SELECT", c.rng.choice([b"0", b"0", b"0", b"1", b"2", b"15"])]
    return [b"SELECT", c.rng.choice([b"16", b"-1", b"abc", b"9223372036854775808", b"1.0", b""])]


def g_swapdb(c):
    dbs = [b"0", b"1", b"2", b"15", b"16", b"-1", b"abc"]
    w = [8, 8, 6, 2, 1, 1, 1]
    return [b"SWAPDB", c.rng.choices(dbs, w)[0], c.rng.choices(dbs, w)[0]]


def g_move(c):
    return [b"MOVE", c.key(), c.rng.choices([b"0", b"1", b"2", b"15", b"16", b"-1", b"abc"], [6, 6, 3, 1, 1, 1, 1])[0]]


def g_unknown(c):
    rng = c.rng
    name = rng.choice([b"FOO", b"gett", b"SETT", b"x", b"", b"CONFIGX", b"\xff", b"HELLO3"])
    args = [name]
    for _ in range(rng.randint(0, 5)):
        args.append(rng.choice([b"a", b"b c", b"'", b"", b"q" * 100, b"\x00"]))
    return args


# Every command goblin-core implements, with its Redis arity, for wrong-arity
# cases (negative: at least -arity). Not EXEC: Redis answers "EXEC x" with
# "-EXECABORT Transaction discarded because of: wrong number of arguments for
# 'exec' command" (rejectCommand -> execCommandAbort, also outside MULTI),
# goblin-core with the plain arity error (engine/core/request/client.c; reported).
ARITY = {
    b"GET": 2, b"SET": -3, b"SETNX": 3, b"SETEX": 4, b"PSETEX": 4, b"MGET": -2, b"MSET": -3, b"MSETNX": -3,
    b"GETSET": 3, b"GETDEL": 2, b"GETEX": -2, b"APPEND": 3, b"STRLEN": 2, b"INCR": 2, b"DECR": 2, b"INCRBY": 3,
    b"DECRBY": 3, b"GETRANGE": 4, b"SUBSTR": 4, b"SETRANGE": 4, b"DEL": -2, b"UNLINK": -2, b"EXISTS": -2,
    b"TOUCH": -2, b"TYPE": 2, b"KEYS": 2, b"SCAN": -2, b"RANDOMKEY": 1, b"RENAME": 3, b"RENAMENX": 3,
    b"COPY": -3, b"MOVE": 3, b"EXPIRE": -3, b"PEXPIRE": -3, b"EXPIREAT": -3, b"PEXPIREAT": -3, b"TTL": 2,
    b"PTTL": 2, b"EXPIRETIME": 2, b"PEXPIRETIME": 2, b"PERSIST": 2, b"DBSIZE": 1, b"SELECT": 2, b"SWAPDB": 3,
    b"PING": -1, b"ECHO": 2, b"MULTI": 1, b"DISCARD": 1, b"WATCH": -2, b"UNWATCH": 1,
    b"FLUSHDB": -1, b"FLUSHALL": -1, b"OBJECT": -2, b"AUTH": -2, b"TIME": 1,
}


def g_arity(c):
    rng = c.rng
    name = rng.choice(sorted(ARITY))
    ar = ARITY[name]
    if ar > 0:
        n = rng.choice([x for x in range(0, ar + 3) if x != ar - 1]) if ar > 1 else rng.randint(1, 3)
    else:
        if -ar - 1 <= 1:
            return None  # no too-few case for PING/FLUSHDB/FLUSHALL
        n = rng.randint(0, -ar - 2)
    return [c.case(name)] + [c.key() for _ in range(n)]


# Redis 7.0 subcommand arities of the container commands goblin-core has.
SUBCOMMANDS = {
    b"OBJECT": {b"ENCODING": 3, b"FREQ": 3, b"IDLETIME": 3, b"REFCOUNT": 3, b"HELP": 2},
    b"CLIENT": {b"GETNAME": 2, b"ID": 2, b"INFO": 2, b"KILL": -3, b"LIST": -2, b"SETNAME": 3, b"UNBLOCK": -3,
                b"HELP": 2},
    b"CONFIG": {b"GET": -3, b"SET": -4, b"RESETSTAT": 2, b"HELP": 2},
    b"COMMAND": {b"COUNT": 2, b"DOCS": -2, b"INFO": -2, b"LIST": -2, b"HELP": 2},
    b"MEMORY": {b"USAGE": -3, b"HELP": 2},
}


def g_subcommand_errors(c):
    """Unknown subcommands and known ones with a wrong argument count: errors
    on both servers (and EXECABORT inside MULTI)."""
    rng = c.rng
    cont = rng.choice(sorted(SUBCOMMANDS))
    if rng.random() < 0.3:
        return [cont, rng.choice([b"NOSUCH", b"", b"x" * 200, b"get2"])] + [b"a"] * rng.randint(0, 2)
    sub, ar = rng.choice(sorted(SUBCOMMANDS[cont].items()))
    if ar > 0:
        n = rng.choice([x for x in range(2, ar + 3) if x != ar])
    elif -ar - 1 >= 2:
        n = rng.randint(2, -ar - 1)
    else:
        return None  # "at least 2": no too-few case
    return [c.case(cont), c.case(sub)] + [b"k0"] * (n - 2)


# (family, weight, generator). A generator returns argv or None (skip).
GENERATORS = [
    # conn
    ("conn", 2, lambda c: [b"PING"] + ([c.val()] if c.rng.random() < 0.5 else [])),
    ("conn", 2, lambda c: [b"ECHO", c.val()]),
    ("conn", 3, g_unknown),
    ("conn", 1, lambda c: [b"AUTH", c.rng.choice([b"pw", b"default", b""])] +
     ([b"pw"] if c.rng.random() < 0.5 else [])),
    ("conn", 1, lambda c: [b"HELLO", c.rng.choice([b"4", b"abc", b"1", b"0", b"-1"])]),
    ("conn", 0.3, lambda c: [b"QUIT"]),
    # strings
    ("string", 25, lambda c: [b"GET", c.key()]),
    ("string", 20, g_set),
    ("string", 3, lambda c: [b"SETNX", c.key(), c.val()]),
    ("string", 3, lambda c: [b"SETEX", c.key(), c.secs(), c.val()]),
    ("string", 2, lambda c: [b"PSETEX", c.key(), c.ms(), c.val()]),
    ("string", 5, lambda c: [b"MGET"] + c.keys()),
    ("string", 5, g_mset),
    ("string", 3, lambda c: [b"GETSET", c.key(), c.val()]),
    ("string", 3, lambda c: [b"GETDEL", c.key()]),
    ("string", 5, g_getex),
    ("string", 6, lambda c: [b"APPEND", c.key(), c.val()]),
    ("string", 4, lambda c: [b"STRLEN", c.key()]),
    ("string", 15, g_incr_family),
    ("string", 6, g_getrange),
    ("string", 5, g_setrange),
    ("float", 6, g_incrbyfloat),
    # keyspace
    ("keys", 5, lambda c: [c.rng.choice([b"DEL", b"UNLINK"])] + c.keys(1, 3)),
    ("keys", 4, lambda c: [c.rng.choice([b"EXISTS", b"TOUCH"])] + c.keys(1, 4)),
    ("keys", 4, lambda c: [b"TYPE", c.key()]),
    ("keys", 3, lambda c: [b"KEYS", c.rng.choice(PATTERNS)]),
    ("keys", 3, g_scan),
    ("keys", 2, lambda c: [b"RANDOMKEY"]),
    ("keys", 2, lambda c: [b"DBSIZE"]),
    ("keys", 4, lambda c: [c.rng.choice([b"RENAME", b"RENAMENX"]), c.key(), c.key()]),
    ("keys", 4, g_copy),
    ("keys", 5, g_object),
    # expiry
    ("expire", 10, g_expire),
    ("expire", 6, lambda c: [c.rng.choice([b"TTL", b"PTTL", b"EXPIRETIME", b"PEXPIRETIME"]), c.key()]),
    ("expire", 3, lambda c: [b"PERSIST", c.key()]),
    # databases
    ("db", 4, g_select),
    ("db", 1.5, g_swapdb),
    ("db", 3, g_move),
    ("db", 0.4, lambda c: [b"FLUSHDB"] + ([c.rng.choice([b"ASYNC", b"SYNC", b"BAD"])] if c.rng.random() < .4 else [])),
    ("db", 0.1, lambda c: [b"FLUSHALL"] + ([c.rng.choice([b"ASYNC", b"SYNC", b"X"])] if c.rng.random() < .4 else [])),
    # transactions (a second connection makes the WATCH invalidations)
    ("multi", 3, lambda c: [b"MULTI"]),
    ("multi", 2.5, lambda c: [b"EXEC"]),
    ("multi", 1, lambda c: [b"DISCARD"]),
    ("multi", 2, lambda c: [b"WATCH"] + c.keys(1, 3)),
    ("multi", 0.7, lambda c: [b"UNWATCH"]),
    # wrong arity for every implemented command, and for subcommands
    ("arity", 4, g_arity),
    ("arity", 1.5, g_subcommand_errors),
]

# Key makers per type, for WRONGTYPE cases: the stream sometimes turns a key
# into one of these. Only strings exist in goblin-core so far; add
# "list": lambda c, k: [b"RPUSH", k, b"a", b"b"], "hash": ..., "set": ...,
# "zset": ... with their families.
TYPE_MAKERS = {
    "string": lambda c, k: [b"SET", k, c.val()],
    # Off until the list family is enabled (GOBLIN_DIFF_FAMILIES=list tries it).
    "list": lambda c, k: [c.rng.choice([b"RPUSH", b"LPUSH"]), k] + [c.val() for _ in range(c.rng.randint(1, 3))],
}
TYPE_FAMILY = {"string": "string", "list": "list", "hash": "hash", "set": "set", "zset": "zset"}


# ---- comparison -------------------------------------------------------------------

def _ints_close(tol):
    def cmp(a, b, ra, rb):
        if isinstance(a, int) and isinstance(b, int):
            if a < 0 or b < 0:
                return a == b
            return abs(a - b) <= tol
        return ra == rb
    return cmp


def _sorted_array(a, b, ra, rb):
    if isinstance(a, list) and isinstance(b, list):
        return sorted(a) == sorted(b)
    return ra == rb


def _scan(a, b, ra, rb):
    if isinstance(a, list) and isinstance(b, list) and len(a) == 2 and len(b) == 2:
        return a[0] == b[0] and sorted(a[1]) == sorted(b[1])
    return ra == rb


def _nilness(a, b, ra, rb):
    if isinstance(a, (bytes, type(None))) and isinstance(b, (bytes, type(None))) and \
            not isinstance(a, Err) and not isinstance(b, Err):
        return (a is None) == (b is None)
    return ra == rb


def _exact(a, b, ra, rb):
    return ra == rb


def _both_ints(a, b, ra, rb):
    if isinstance(a, int) and isinstance(b, int):
        return a >= 0 and b >= 0
    return ra == rb


def _hello(a, b, ra, rb):
    # The map names the server ("redis" / "goblin-core") and the client id;
    # every other field must match.
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        da, db = dict(zip(a[::2], a[1::2])), dict(zip(b[::2], b[1::2]))
        for k in (b"server", b"id"):
            da.pop(k, None)
            db.pop(k, None)
        return a[::2] == b[::2] and da == db
    return ra == rb


def _both_arrays(a, b, ra, rb):
    if isinstance(a, list) and isinstance(b, list):
        return True
    return ra == rb


# Replies that are not byte-exact by nature (docs/testing.md gives each one's
# Redis documentation). Commands not listed, INCRBYFLOAT among them (Redis's
# ld2string text, which goblin-core writes byte for byte): exact.
COMPARE = {
    b"TTL": _ints_close(1),
    b"PTTL": _ints_close(1000),
    b"EXPIRETIME": _ints_close(1),
    b"PEXPIRETIME": _ints_close(1000),
    b"KEYS": _sorted_array,
    b"SCAN": _scan,
    b"RANDOMKEY": _nilness,
    b"HELLO": _hello,
    # OBJECT IDLETIME: Redis's shared integers (0..9999) keep the idle time
    # of the server's start, so only the reply type is compared.
    (b"OBJECT", b"IDLETIME"): _both_ints,
}


def comparator(argv):
    if not argv:
        return _exact
    name = argv[0].upper()
    if name == b"SCAN" and len(argv) > 1 and argv[1] not in (b"0", b""):
        return _both_arrays  # a cursor from elsewhere: the answer depends on the table layout
    if len(argv) > 1 and (name, argv[1].upper()) in COMPARE:
        return COMPARE[(name, argv[1].upper())]
    return COMPARE.get(name, _exact)


class Mismatch(AssertionError):
    pass


class Side:
    """One server's connections for a stream."""

    def __init__(self, server, nconn):
        self.server = server
        self.conns = [Raw(server) for _ in range(nconn)]

    def reconnect(self, i):
        self.conns[i].close()
        self.conns[i] = Raw(self.server)

    def close(self):
        for c in self.conns:
            c.close()


class Stream:
    """Sends commands to both servers in lockstep and compares replies."""

    def __init__(self, goblin, redis, seed, nconn=2):
        self.g = Side(goblin, nconn)
        self.r = Side(redis, nconn)
        self.seed = seed
        self.history = []
        self.sent = []  # (connection, argv) of every command, for minimizing
        self.queued = [[] for _ in range(nconn)]  # commands queued in MULTI, per connection
        self.in_multi = [False] * nconn
        self.db = [0] * nconn

    def close(self):
        self.g.close()
        self.r.close()

    def _fail(self, idx, conn, argv, ga, gr, ra, rr, why=""):
        hist = "\n".join("    #%d c%d db%d: %s" % h for h in self.history[-12:])
        raise Mismatch(
            "goblin-core and redis-server differ%s\n  seed=%s index=%d connection=%d db=%d\n  command: %s\n"
            "  goblin: %r\n  redis:  %r\n  recent commands:\n%s\n  rerun: GOBLIN_DIFF_SEED=%s"
            % (why, self.seed, idx, conn, self.db[conn], fmt_argv(argv), gr, rr, hist, self.seed))

    def send(self, idx, conn, argv, raw=None):
        """Sends argv (or raw bytes) on connection `conn` of both servers;
        returns the parsed goblin reply."""
        self.history.append((idx, conn, self.db[conn], fmt_argv(argv) if raw is None else repr(raw)))
        self.sent.append((conn, argv))
        data = raw if raw is not None else encode(*argv)
        results = []
        for side in (self.g, self.r):
            c = side.conns[conn]
            try:
                c.send(data)
                v, rb = c.read()
            except (EOFError, OSError):
                v, rb = "EOF", b"<connection closed>"
            results.append((v, rb))
        (ga, gr), (ra, rr) = results
        name = argv[0].upper() if argv else b""
        if self.in_multi[conn] and name not in (b"EXEC", b"DISCARD", b"MULTI", b"WATCH", b"QUIT"):
            ok = gr == rr
        elif name == b"EXEC" and isinstance(ga, list) and isinstance(ra, list):
            ok = len(ga) == len(ra) == len(self.queued[conn]) and all(
                comparator(q)(x, y, enc_reply(x), enc_reply(y)) for q, x, y in zip(self.queued[conn], ga, ra))
        else:
            ok = comparator(argv)(ga, ra, gr, rr)
        if not ok:
            self._fail(idx, conn, argv, ga, gr, ra, rr)
        # Track connection state from the (agreed) reply.
        if ga == "EOF" or name == b"QUIT" and ga == b"OK":
            self.g.reconnect(conn)
            self.r.reconnect(conn)
            self.in_multi[conn] = False
            self.queued[conn] = []
            self.db[conn] = 0
        elif self.in_multi[conn]:
            if ga == b"QUEUED":
                self.queued[conn].append(argv)
            elif name in (b"EXEC", b"DISCARD") and not isinstance(ga, Err) or \
                    isinstance(ga, Err) and ga.startswith(b"EXECABORT"):
                self.in_multi[conn] = False
                if name == b"EXEC" and isinstance(ga, list):
                    for q, rep in zip(self.queued[conn], ga):
                        self._track_db(conn, q, rep)
                self.queued[conn] = []
        else:
            if name == b"MULTI" and ga == b"OK":
                self.in_multi[conn] = True
                self.queued[conn] = []
            self._track_db(conn, argv, ga)
        return ga

    def _track_db(self, conn, argv, rep):
        if argv and argv[0].upper() == b"SELECT" and rep == b"OK":
            self.db[conn] = int(argv[1])


def enc_reply(v):
    """Re-encodes a parsed reply (for nested EXEC elements)."""
    if v is None:
        return b"$-1\r\n"
    if isinstance(v, Err):
        return b"-" + bytes(v) + b"\r\n"
    if isinstance(v, gbtest.Simple):
        return b"+" + bytes(v) + b"\r\n"
    if isinstance(v, int):
        return b":%d\r\n" % v
    if isinstance(v, bytes):
        return b"$%d\r\n%s\r\n" % (len(v), v)
    if isinstance(v, list):
        return b"*%d\r\n" % len(v) + b"".join(enc_reply(x) for x in v)
    return repr(v).encode()


def fmt_argv(argv):
    out = []
    for a in argv:
        s = a.decode("latin-1")
        if len(s) > 60:
            s = s[:40] + "...(%d bytes)" % len(a)
        out.append(repr(s) if (not s or any(ch in s for ch in " '\"\\") or not s.isprintable()) else s)
    return " ".join(out)


def pick_generators():
    gens = [(f, w, fn) for f, w, fn in GENERATORS if f in ENABLED_FAMILIES]
    return [g[2] for g in gens], [g[1] for g in gens]


def run_stream(goblin, redis, seed, nops):
    rng = random.Random(seed)
    ctx = Ctx(rng)
    fns, weights = pick_generators()
    makers = [m for t, m in TYPE_MAKERS.items() if TYPE_FAMILY[t] in ENABLED_FAMILIES]
    st = Stream(goblin, redis, seed)
    try:
        for conn in range(2):
            st.send(-1, conn, [b"FLUSHALL"])
        i = 0
        while i < nops:
            conn = 0 if rng.random() < 0.85 else 1
            if makers and rng.random() < 0.03:
                argv = rng.choice(makers)(ctx, ctx.key())
            else:
                argv = rng.choices(fns, weights)[0](ctx)
                if argv is None:
                    continue
            if len(argv) and rng.random() < 0.03:
                argv = [ctx.case(argv[0])] + argv[1:]
            if argv[0].upper() == b"DBSIZE":
                # DBSIZE counts logically expired keys not yet reclaimed,
                # which depends on timing: touch every key first.
                st.send(i, conn, [b"EXISTS"] + KEYS)
            st.send(i, conn, argv)
            i += 1
            # A SET ... EXAT/PXAT in the past leaves a logically expired key
            # that Redis counts in DBSIZE until it is touched or its active
            # expiry finds it; touching every key settles both servers.
            if not st.in_multi[conn] and (argv[0].upper() == b"EXEC" or any(
                    a.upper() in (b"EXAT", b"PXAT") for a in argv[1:])):
                st.send(i, conn, [b"EXISTS"] + KEYS)
        # Both keyspaces must agree at the end, db by db.
        for conn in range(2):
            st.send(nops, conn, [b"DISCARD"])
        for db in range(16):
            st.send(nops, 0, [b"SELECT", str(db).encode()])
            st.send(nops, 0, [b"EXISTS"] + KEYS)
            st.send(nops, 0, [b"KEYS", b"*"])
            st.send(nops, 0, [b"DBSIZE"])
        # ... and every value too: Redis's digest of the whole dataset
        # (values, types, which keys have an expiry; nothing here elapses
        # during a run, and the EXISTS above reclaimed what had).
        st.send(nops, 0, [b"DEBUG", b"DIGEST"])
    except Mismatch as e:
        st.close()
        if os.environ.get("GOBLIN_DIFF_MINIMIZE", "1") != "0":
            small = minimize(goblin, redis, st.sent)
            if small:
                raise Mismatch("%s\n  minimized reproduction (%d commands, connection: command):\n%s" % (
                    e, len(small), "\n".join("    c%d: %s" % (c, fmt_argv(a)) for c, a in small))) from None
        raise
    finally:
        st.close()


def replay_fails(goblin, redis, cmds):
    """True if replaying cmds (after FLUSHALL, fresh connections) gives a mismatch."""
    st = Stream(goblin, redis, "replay")
    try:
        for conn in range(2):
            st.send(-1, conn, [b"FLUSHALL"])
        for i, (conn, argv) in enumerate(cmds):
            st.send(i, conn, argv)
        return False
    except Mismatch:
        return True
    finally:
        st.close()


def minimize(goblin, redis, cmds, budget_s=60):
    """Delta debugging (ddmin) over the command list: the smallest sublist
    found within budget_s that still makes the servers disagree."""
    deadline = time.time() + budget_s * gbtest.SLOW
    if not replay_fails(goblin, redis, cmds):
        return None  # not reproducible from a clean start (timing)
    n = 2
    while len(cmds) >= 2 and time.time() < deadline:
        chunk = max(1, len(cmds) // n)
        reduced = False
        for start in range(0, len(cmds), chunk):
            if time.time() >= deadline:
                break
            cand = cmds[:start] + cmds[start + chunk:]
            if cand and replay_fails(goblin, redis, cand):
                cmds = cand
                n = max(n - 1, 2)
                reduced = True
                break
        if not reduced:
            if chunk == 1:
                break
            n = min(len(cmds), n * 2)
    return cmds


# ---- fixed corpus of tricky cases ------------------------------------------------

def A(*args):
    return [a if isinstance(a, bytes) else str(a).encode() for a in args]


def C1(*args):
    """A command from the second connection (another client)."""
    return (1, A(*args))


CORPUS = [
    # integers
    A("SET", "n", "9223372036854775806"), A("INCR", "n"), A("INCR", "n"), A("GET", "n"),
    A("SET", "n", "-9223372036854775807"), A("DECR", "n"), A("DECR", "n"), A("DECRBY", "n", "1"),
    A("SET", "n", "0"), A("DECRBY", "n", "-9223372036854775808"), A("INCRBY", "n", "-9223372036854775808"),
    A("INCRBY", "n", "9223372036854775807"), A("INCRBY", "n", "1"), A("GET", "n"),
    A("SET", "n", "1"), A("INCRBY", "n", "9223372036854775807"), A("INCRBY", "n", "9223372036854775808"),
    A("SET", "n", " 1"), A("INCR", "n"), A("SET", "n", "1 "), A("INCR", "n"), A("SET", "n", "+1"), A("INCR", "n"),
    A("SET", "n", "01"), A("INCR", "n"), A("SET", "n", "-0"), A("INCR", "n"), A("SET", "n", ""), A("INCR", "n"),
    A("SET", "n", "1.0"), A("INCR", "n"), A("SET", "n", "x" * 25), A("INCR", "n"),
    A("DEL", "fresh"), A("INCRBY", "fresh", "-5"), A("DECRBY", "fresh", "-5"), A("GET", "fresh"),
    A("INCRBY", "fresh", ""), A("INCRBY", "fresh", "1e2"),
    # encodings
    A("SET", "e", "12345"), A("OBJECT", "ENCODING", "e"), A("APPEND", "e", "6"), A("OBJECT", "ENCODING", "e"),
    A("INCR", "e"), A("OBJECT", "ENCODING", "e"), A("SET", "e", "x" * 44), A("OBJECT", "ENCODING", "e"),
    A("SET", "e", "x" * 45), A("OBJECT", "ENCODING", "e"), A("SETRANGE", "e", "0", "y"), A("OBJECT", "encoding", "e"),
    A("SET", "e", "9223372036854775807"), A("OBJECT", "ENCODING", "e"), A("SET", "e", "9223372036854775808"),
    A("OBJECT", "ENCODING", "e"), A("OBJECT", "ENCODING", "nokey"), A("OBJECT", "FREQ", "e"),
    A("OBJECT", "NOSUCH", "e"), A("OBJECT"), A("OBJECT", "ENCODING"), A("OBJECT", "ENCODING", "a", "b"),
    # SET options
    A("DEL", "s"), A("SET", "s", "v", "NX", "XX"), A("SET", "s", "v", "EX", "10", "PX", "100"),
    A("SET", "s", "v", "EX", "10", "KEEPTTL"), A("SET", "s", "v", "KEEPTTL", "PXAT", "1"),
    A("SET", "s", "v", "EX"), A("SET", "s", "v", "EX", "0"), A("SET", "s", "v", "EX", "-1"),
    A("SET", "s", "v", "PX", "0"), A("SET", "s", "v", "EXAT", "0"), A("SET", "s", "v", "PXAT", "-5"),
    A("SET", "s", "v", "EX", "9223372036854775807"), A("SET", "s", "v", "EX", "9223372036854775"),
    A("SET", "s", "v", "PX", "9223372036854775807"), A("SET", "s", "v", "EXAT", "9223372036854775807"),
    A("SET", "s", "v", "PXAT", "9223372036854775807"), A("TTL", "s"), A("EXISTS", "s"),
    A("SET", "s", "v", "EX", "abc"), A("SET", "s", "v", "GET"), A("SET", "s", "w", "GET", "NX"),
    A("SET", "s", "w", "GET", "XX"), A("SET", "s", "w", "NX", "GET"), A("SET", "s", "w", "EX", "100", "GET"),
    A("TTL", "s"), A("SET", "s", "x", "KEEPTTL"), A("TTL", "s"), A("SET", "s", "y"), A("TTL", "s"),
    A("SET", "s", "v", "NX", "NX"), A("SET", "s", "v", "EX", "5", "EX", "6"), A("SET", "s", "v", "GET", "GET"),
    A("SET", "s", "v", "KEEPTTL", "KEEPTTL"), A("SET", "s", "v", "BOGUS"), A("SET", "s", "v", "EX", "1", "BOGUS"),
    A("SET", "s"), A("SET", "s", "v", "xx"), A("SET", "s", "v", "ex", "100", "nx"), A("PTTL", "s"),
    A("SETEX", "s", "0", "v"), A("SETEX", "s", "-1", "v"), A("SETEX", "s", "abc", "v"),
    A("PSETEX", "s", "0", "v"), A("SETEX", "s", "9223372036854775807", "v"), A("GET", "s"),
    # GETEX
    A("SET", "g", "v"), A("GETEX", "g", "EX", "100"), A("TTL", "g"), A("GETEX", "g", "PERSIST"), A("TTL", "g"),
    A("GETEX", "g", "EX", "100", "PX", "100"), A("GETEX", "g", "PERSIST", "EX", "1"), A("GETEX", "g", "EX"),
    A("GETEX", "g", "EX", "0"), A("GETEX", "g", "PX", "-1"), A("GETEX", "g", "EXAT", "abc"),
    A("GETEX", "g", "KEEPTTL"), A("GETEX", "nokey", "EX", "100"), A("GETEX", "nokey", "EX", "0"),
    A("GETEX", "g", "EX", "9223372036854775807"), A("GETEX", "g", "PXAT", "1"), A("GET", "g"),
    # EXPIRE options
    A("SET", "x", "v"), A("EXPIRE", "x", "100", "NX", "XX"), A("EXPIRE", "x", "100", "GT", "LT"),
    A("EXPIRE", "x", "100", "NX", "GT"), A("EXPIRE", "x", "100", "FOO"), A("EXPIRE", "x", "100", "XX"),
    A("EXPIRE", "x", "100", "GT"), A("EXPIRE", "x", "100", "LT"), A("EXPIRE", "x", "100", "NX"),
    A("TTL", "x"), A("EXPIRE", "x", "50", "NX"), A("EXPIRE", "x", "50", "GT"), A("EXPIRE", "x", "50", "LT"),
    A("TTL", "x"), A("EXPIRE", "x", "500", "gt"), A("TTL", "x"), A("PERSIST", "x"), A("EXPIRE", "x", "10", "GT"),
    A("EXPIRE", "x", "10", "LT"), A("TTL", "x"), A("PERSIST", "x"), A("PERSIST", "x"), A("PERSIST", "nokey"),
    A("EXPIRE", "x", "9223372036854775807"), A("EXPIRE", "x", "9223372036854775"),
    A("PEXPIRE", "x", "9223372036854775807"), A("EXPIREAT", "x", "9223372036854775807"),
    A("PEXPIREAT", "x", "9223372036854775807"), A("PTTL", "x"), A("PEXPIRETIME", "x"), A("EXPIRETIME", "x"),
    A("EXPIRE", "x", "-9223372036854775808"), A("EXPIRE", "x", "abc"), A("EXPIRE", "x", "1.5"),
    A("EXPIRE", "nokey", "100"), A("TTL", "nokey"), A("PTTL", "nokey"), A("EXPIRETIME", "nokey"),
    A("SET", "x", "v"), A("EXPIRE", "x", "0"), A("EXISTS", "x"), A("SET", "x", "v"), A("EXPIRE", "x", "-5"),
    A("GET", "x"), A("SET", "x", "v"), A("EXPIREAT", "x", "1"), A("GET", "x"), A("SET", "x", "v"),
    A("PEXPIREAT", "x", "0"), A("TYPE", "x"), A("TTL", "nokey"), A("EXPIRETIME", "x"),
    # ranges
    A("SET", "r", "Hello World"), A("GETRANGE", "r", "0", "-1"), A("GETRANGE", "r", "-3", "-1"),
    A("GETRANGE", "r", "5", "3"), A("GETRANGE", "r", "-100", "100"), A("GETRANGE", "r", "100", "200"),
    A("GETRANGE", "r", "-1", "-100"), A("GETRANGE", "r", "0", "9223372036854775807"),
    A("GETRANGE", "r", "-9223372036854775808", "-1"), A("GETRANGE", "r", "0", "abc"),
    A("GETRANGE", "nokey", "0", "-1"), A("SUBSTR", "r", "1", "2"), A("SET", "r", ""), A("GETRANGE", "r", "0", "-1"),
    A("GETRANGE", "r", "-1", "-1"), A("SET", "r", "12345"), A("GETRANGE", "r", "1", "2"),
    A("SETRANGE", "r", "10", "x"), A("GET", "r"), A("SETRANGE", "r", "0", ""), A("SETRANGE", "r", "-1", "x"),
    A("SETRANGE", "nokey", "5", ""), A("EXISTS", "nokey"), A("SETRANGE", "nokey", "536870912", ""),
    A("SETRANGE", "r", "536870911", "xy"), A("SETRANGE", "nokey", "536870912", "x"),
    A("SETRANGE", "r", "9223372036854775807", "x"), A("SETRANGE", "r", "abc", "x"), A("SETRANGE", "nokey2", "3", "ab"),
    A("GET", "nokey2"), A("APPEND", "nokey3", ""), A("EXISTS", "nokey3"), A("APPEND", "r", "\x00"), A("STRLEN", "r"),
    A("SET", "big", "12345678901234567890"), A("STRLEN", "big"), A("SET", "iv", "-123"), A("STRLEN", "iv"),
    A("APPEND", "iv", "4"), A("GET", "iv"),
    # multi-key
    A("MSET", "a", "1", "b"), A("MSET", "a"), A("MSET", "a", "1", "b", "2"), A("MGET", "a", "b", "nokey", "a"),
    A("MSETNX", "a", "1", "zz", "2"), A("EXISTS", "zz"), A("MSETNX", "zz", "1", "yy", "2"), A("MSETNX", "zz"),
    A("MSET", "a", "1", "a", "2"), A("GET", "a"), A("EXISTS", "a", "a", "nokey", "b"), A("TOUCH", "a", "a", "x"),
    A("DEL", "a", "a", "b"), A("UNLINK"), A("GETSET", "a", "v"), A("GETSET", "a", "w"), A("GETDEL", "a"),
    A("GETDEL", "a"),
    # rename / copy / move
    A("SET", "src", "v"), A("EXPIRE", "src", "1000"), A("RENAME", "src", "dst"), A("TTL", "dst"),
    A("RENAME", "src", "dst"), A("RENAME", "dst", "dst"), A("RENAME", "nokey", "nokey"), A("RENAMENX", "dst", "dst"),
    A("SET", "src", "w"), A("RENAMENX", "src", "dst"), A("RENAMENX", "nokey", "dst"), A("COPY", "dst", "src"),
    A("COPY", "dst", "src", "REPLACE"), A("TTL", "src"), A("COPY", "dst", "dst"), A("COPY", "dst", "c2", "DB", "1"),
    A("COPY", "dst", "c2", "DB", "16"), A("COPY", "dst", "c2", "DB", "-1"), A("COPY", "dst", "c2", "DB"),
    A("COPY", "dst", "c2", "DB", "abc"), A("COPY", "dst", "c2", "REPLACE", "REPLACE"), A("COPY", "dst", "c2", "X"),
    A("COPY", "dst", "dst", "DB", "0"), A("COPY", "nokey", "c3"), A("MOVE", "dst", "0"), A("MOVE", "dst", "1"),
    A("MOVE", "dst", "1"), A("MOVE", "nokey", "1"), A("MOVE", "src", "16"), A("MOVE", "src", "-1"),
    A("MOVE", "src", "abc"), A("SELECT", "1"), A("KEYS", "*"), A("TTL", "dst"), A("TTL", "c2"), A("MOVE", "c2", "0"),
    A("SELECT", "0"), A("GET", "c2"),
    # databases
    A("SELECT", "16"), A("SELECT", "-1"), A("SELECT", "abc"), A("SELECT", "1.5"), A("SELECT", ""),
    A("SELECT", "9223372036854775808"), A("SWAPDB", "0", "1"), A("KEYS", "*"), A("SWAPDB", "0", "16"),
    A("SWAPDB", "-1", "0"), A("SWAPDB", "abc", "0"), A("SWAPDB", "0", "abc"), A("SWAPDB", "0", "0"),
    A("SWAPDB", "1", "0"), A("DBSIZE"), A("FLUSHDB", "BAD"), A("FLUSHDB", "ASYNC", "SYNC"), A("FLUSHALL", "x"),
    # keyspace misc
    A("KEYS", "*"), A("KEYS", "["), A("KEYS", "\\"), A("KEYS", "*[a"), A("TYPE", "dst"), A("TYPE", "nokey"),
    A("SCAN", "0", "COUNT", "0"), A("SCAN", "0", "COUNT", "-1"), A("SCAN", "0", "COUNT", "abc"),
    A("SCAN", "abc"), A("SCAN", "-1"), A("SCAN", "18446744073709551615", "COUNT", "10"), A("SCAN", "0", "MATCH"),
    A("SCAN", "0", "BOGUS", "x"), A("SCAN", "0", "TYPE"), A("SCAN", "0", "TYPE", "nosuchtype", "COUNT", "1000"),
    A("SCAN", "0", "TYPE", "string", "COUNT", "1000"), A("SCAN", "0", "MATCH", "d*", "COUNT", "1000"),
    A("RANDOMKEY", "x"), A("DBSIZE", "x"),
    # connection / unknown
    A("PING"), A("PING", "hi"), A("PING", "a", "b"), A("ECHO"), A("ECHO", ""), A("ECHO", "a", "b"),
    A("NOSUCH"), A("NOSUCH", "a", "b c", ""), A("nosuch", "x" * 200), A("NOSUCH", *["a" * 50] * 4),
    A(""), A("", "x"), A("GET"), A("get", "a", "b"), A("GeT"), A("CONFIG"), A("CONFIG", "NOSUCH"),
    A("CLIENT", "NOSUCH"), A("COMMAND", "NOSUCH"), A("AUTH", "x"), A("AUTH", "default", "x"), A("AUTH", "a", "b", "c"),
    A("HELLO", "4"), A("HELLO", "abc"), A("HELLO", "2", "AUTH", "default"), A("HELLO", "2", "BOGUS"),
    A("HELLO", "2", "AUTH", "default", "wrong"), A("MEMORY", "USAGE"), A("MEMORY", "NOSUCH"),
    A("OBJECT", "ENCODING", "dst", "x"),
    # CLIENT / CONFIG / INFO answers that do not depend on the server
    A("CLIENT", "KILL", "1.2.3.4:5"), A("CLIENT", "KILL", "ID", "abc"), A("CLIENT", "KILL", "ID", "0"),
    A("CLIENT", "KILL", "ID", "99999"), A("CLIENT", "KILL", "TYPE", "foo"), A("CLIENT", "KILL", "BOGUS", "x"),
    A("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "maybe"), A("CLIENT", "KILL", "ADDR"),
    A("CLIENT", "SETNAME", "a b"), A("CLIENT", "SETNAME", "a\nb"), A("CLIENT", "GETNAME"),
    A("CLIENT", "SETNAME", "named"), A("CLIENT", "GETNAME"), A("CLIENT", "SETNAME", ""), A("CLIENT", "GETNAME"),
    A("CLIENT", "UNBLOCK", "abc"), A("CLIENT", "UNBLOCK", "99999"), A("CLIENT", "UNBLOCK", "99999", "FOO"),
    A("CLIENT", "LIST", "TYPE", "foo"), A("CLIENT", "LIST", "TYPE", "pubsub"), A("CLIENT", "LIST", "ID", "abc"),
    A("CLIENT", "LIST", "BOGUS"), A("CLIENT", "LIST", "ID", "99999"),
    A("CONFIG", "GET", "nosuch*"), A("CONFIG", "GET", "maxmemory"), A("CONFIG", "GET", "databases"),
    A("CONFIG", "SET", "maxmemory", "1gb"), A("CONFIG", "GET", "maxmemory"), A("CONFIG", "SET", "maxmemory", "0"),
    A("INFO", "nosuch"), A("TIME", "x"), A("SHUTDOWN", "BOGUS"),
    A("MEMORY", "USAGE", "nokey"), A("MEMORY", "USAGE", "nokey", "SAMPLES", "5"),
    A("MEMORY", "USAGE", "nokey", "SAMPLES", "-1"), A("MEMORY", "USAGE", "nokey", "SAMPLES"),
    A("COMMAND", "LIST", "FILTERBY", "BOGUS", "x"), A("COMMAND", "INFO", "nosuch"), A("COMMAND", "DOCS", "nosuch"),
    # transactions
    A("MULTI"), A("SET", "t", "1"), A("INCR", "t"), A("MULTI"), A("GET", "t"), A("EXEC"), A("GET", "t"),
    A("MULTI"), A("SET", "t", "abc"), A("INCR", "t"), A("GET", "t"), A("EXEC"),
    A("MULTI"), A("SET", "t"), A("GET", "t"), A("EXEC"), A("GET", "t"),
    A("MULTI"), A("NOSUCH"), A("EXEC"), A("MULTI"), A("WATCH", "t"), A("EXEC"), A("EXEC"), A("DISCARD"),
    A("MULTI"), A("SET", "t", "2"), A("DISCARD"), A("GET", "t"), A("WATCH"), A("UNWATCH", "x"),
    A("MULTI"), A("SELECT", "1"), A("SET", "t", "db1"), A("EXEC"), A("GET", "t"), A("SELECT", "0"), A("GET", "t"),
    A("MULTI"), A("SELECT", "99"), A("GET", "t"), A("EXEC"), A("GET", "t"),
    A("MULTI"), A("EXPIRE", "t", "100", "GT", "LT"), A("SET", "t", "v", "NX", "XX"), A("EXEC"),
    A("MULTI"), A("SWAPDB", "0", "1"), A("GET", "t"), A("SWAPDB", "0", "1"), A("EXEC"),
    A("MULTI"), A("MULTI"), A("MULTI", "x"), A("DISCARD", "x"), A("DISCARD"),
    A("WATCH", "t"), C1("SET", "t", "mine"), A("MULTI"), A("GET", "t"), A("EXEC"),
    A("WATCH", "t"), A("MULTI"), C1("SET", "t", "during"), A("GET", "t"), A("EXEC"),
    A("WATCH", "t"), C1("GET", "t"), A("MULTI"), A("GET", "t"), A("EXEC"),
    A("WATCH", "nokey"), C1("SET", "nokey", "1"), C1("DEL", "nokey"), A("MULTI"), A("PING"), A("EXEC"),
    A("WATCH", "nokey"), C1("DEL", "nokey"), A("MULTI"), A("PING"), A("EXEC"),
    A("WATCH", "t"), A("UNWATCH"), C1("SET", "t", "z"), A("MULTI"), A("GET", "t"), A("EXEC"),
    A("WATCH", "t"), C1("EXPIRE", "t", "1000"), A("MULTI"), A("TTL", "t"), A("EXEC"),
    A("WATCH", "t"), C1("PERSIST", "t"), A("MULTI"), A("TTL", "t"), A("EXEC"),
    A("WATCH", "t"), C1("APPEND", "t", "x"), A("MULTI"), A("GET", "t"), A("EXEC"),
    A("WATCH", "t"), C1("FLUSHDB"), A("MULTI"), A("PING"), A("EXEC"),
    A("WATCH", "t"), C1("FLUSHALL"), A("MULTI"), A("PING"), A("EXEC"),
    A("SET", "t", "1"), A("WATCH", "t"), C1("SWAPDB", "0", "1"), A("MULTI"), A("PING"), A("EXEC"),
    C1("SWAPDB", "0", "1"),
    A("SET", "t", "1"), A("WATCH", "t"), C1("SELECT", "1"), C1("SET", "t", "other-db"), C1("SELECT", "0"),
    A("MULTI"), A("PING"), A("EXEC"),
    A("SET", "t", "1"), A("WATCH", "t"), C1("RENAME", "t", "t2"), A("MULTI"), A("PING"), A("EXEC"),
    A("WATCH", "t2"), C1("MOVE", "t2", "1"), A("MULTI"), A("PING"), A("EXEC"),
    A("SET", "t", "1"), A("WATCH", "t", "t", "u"), C1("SET", "u", "1"), A("MULTI"), A("PING"), A("EXEC"),
    A("WATCH", "t"), A("MULTI"), A("GET", "t"), A("DISCARD"), C1("SET", "t", "9"), A("MULTI"), A("GET", "t"),
    A("EXEC"),
    A("MULTI"), A("QUIT"),
]

# Requests sent as raw bytes (inline commands and pipelines), compared byte for byte.
RAW_CORPUS = [
    b"PING\r\n",
    b"ping\n",
    b"SET \"a b\" 'c d'\r\nGET \"a b\"\r\n",
    b"ECHO \"\\x41\\x42\\n\\t\\\\\"\r\n",
    b"ECHO 'it\\'s'\r\n",
    b"ECHO \"a\"b\r\nPING\r\n",
    b"ECHO 'a'b\r\nPING\r\n",
    b"ECHO \"unterminated\r\nPING\r\n",
    b"\r\n\r\nPING\r\n",
    b"   \r\nPING\r\n",
    b"  SET   sp   v  \r\nGET sp\r\n",
    b"*0\r\nPING\r\n",
    b"*-1\r\nPING\r\n",
    b"*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$0\r\n\r\n",
    b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\na\r\nb\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n",
    b"ECHO \"\\xzz\"\r\n",
    b"ECHO \"\\x4\"\r\n",
    b"ECHO \"\\q\"\r\n",
    b"ECHO \"\"\r\n",
    b"ECHO ''\r\n",
    b"GET\r\n",
    b"NOSUCH arg\r\n",
    b"*1\r\n$3\r\nGET\r\n",
    b"*2\r\n$3\r\nGET\r\n$1\r\n\xff\r\n",
]


class DifferentialTest(gbtest.GoblinAndRedisCase):
    def test_corpus(self):
        st = Stream(self.goblin, self.redis, "corpus")
        try:
            st.send(-1, 0, [b"FLUSHALL"])
            for i, entry in enumerate(CORPUS):
                conn, argv = entry if isinstance(entry, tuple) else (0, entry)
                st.send(i, conn, argv)
        finally:
            st.close()

    def test_raw_corpus(self):
        # Each request is followed by ECHO <sentinel>; replies are read up to
        # the sentinel's reply or the server closing the connection.
        sentinel = encode("ECHO", "--sentinel--")
        done = b"$12\r\n--sentinel--\r\n"
        for i, data in enumerate(RAW_CORPUS):
            got = []
            for srv in (self.goblin, self.redis):
                with Raw(srv) as c:
                    c.send(data + sentinel)
                    got.append(c.read_until(done))
            if got[0] != got[1]:
                raise Mismatch("raw request #%d %r:\n  goblin: %r\n  redis:  %r" % (i, data, got[0], got[1]))

    def test_random_streams(self):
        seeds = [int(ONE_SEED)] if ONE_SEED else list(range(1, SEEDS + 1))
        t0 = time.time()
        for seed in seeds:
            run_stream(self.goblin, self.redis, seed, OPS)
        print("\n  %d seeds x %d commands in %.1fs" % (len(seeds), OPS, time.time() - t0))

    def test_z_both_alive(self):
        self.assertTrue(self.goblin.ping_ok())
        self.assertTrue(self.redis.ping_ok())


if __name__ == "__main__":
    gbtest.run_tests()
