#!/usr/bin/env python3
"""The count of changes since the last save (INFO persistence
rdb_changes_since_last_save, Redis's server.dirty) moves by what Redis 7.0
adds for every write command: one per element pushed, added, removed,
popped or stored, not one per command. The save points (`save 60 10000`)
and the log's rewrite trigger read this count, so a command that counts
less than Redis's makes a snapshot come later and a crash lose more.

The same script of commands runs on goblin-core and on redis-server; after
each command both report the change in the count, and the two must be
equal."""

import unittest

import gbtest
from gbtest import Raw, GoblinAndRedisCase, parse_info

# (setup commands..., ) are just more steps: every step is compared.
SCRIPT = [
    # strings and keys
    ("SET", "s", "v"), ("SET", "s", "v", "NX"), ("SETNX", "s", "w"), ("MSET", "a", "1", "b", "2", "c", "3"),
    ("MSETNX", "x1", "1", "x2", "2"), ("MSETNX", "x1", "1", "x3", "3"), ("APPEND", "s", "tail"),
    ("SETRANGE", "s", "0", "Z"), ("INCR", "a"), ("INCRBY", "a", "5"), ("DECR", "a"), ("INCRBYFLOAT", "b", "1.5"),
    ("GETSET", "c", "4"), ("GETDEL", "c"), ("GETDEL", "c"), ("GETEX", "a", "EX", "100"), ("GETEX", "a", "PERSIST"),
    ("GETEX", "a"), ("SETEX", "e", "100", "v"), ("PSETEX", "e2", "100000", "v"), ("EXPIRE", "e", "200"),
    ("EXPIRE", "nokey", "10"), ("PEXPIRE", "e", "300000"), ("EXPIREAT", "e", "4000000000"), ("PERSIST", "e"),
    ("PERSIST", "e"), ("DEL", "x1", "x2", "x3", "nokey"), ("UNLINK", "e2", "nokey"), ("RENAME", "b", "b2"),
    ("RENAMENX", "b2", "a"), ("RENAMENX", "b2", "b3"), ("COPY", "b3", "b4"), ("COPY", "b3", "b4", "REPLACE"),
    ("MOVE", "b4", "1"), ("TOUCH", "a", "s"), ("EXPIRE", "s", "0"), ("SETBIT", "bits", "7", "1"),
    ("SETBIT", "bits", "7", "1"), ("BITFIELD", "bf", "SET", "u8", "0", "1", "SET", "u8", "8", "1", "GET", "u8", "0"),
    ("BITFIELD", "bf", "INCRBY", "u8", "0", "1", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "255"),
    ("BITOP", "OR", "bits2", "bits", "bf"), ("PFADD", "hll", "a", "b", "c"), ("PFADD", "hll", "a"),
    ("PFMERGE", "hll2", "hll"), ("PFCOUNT", "hll"),
    # lists
    ("RPUSH", "l", "a", "b", "c", "d", "e"), ("LPUSH", "l", "z", "y"), ("RPUSHX", "l", "f", "g"), ("LPUSHX", "nol", "x"),
    ("LPOP", "l"), ("RPOP", "l", "2"), ("LPOP", "l", "0"), ("LINSERT", "l", "BEFORE", "c", "cc"),
    ("LINSERT", "l", "BEFORE", "nope", "cc"), ("LSET", "l", "0", "q"), ("LREM", "l", "0", "cc"), ("LREM", "l", "0", "nope"),
    ("RPUSH", "l", "r", "r", "r"), ("LREM", "l", "2", "r"), ("LREM", "l", "0", "r"),
    ("RPUSH", "l", "m", "n", "o", "p"), ("LTRIM", "l", "1", "-2"), ("LTRIM", "l", "0", "-1"), ("LMOVE", "l", "l2", "LEFT", "RIGHT"),
    ("RPOPLPUSH", "l", "l2"), ("LMPOP", "2", "nol", "l", "LEFT", "COUNT", "2"), ("LPOS", "l2", "a"),
    ("DEL", "l"), ("RPOP", "l2", "10"),
    # sets
    ("SADD", "st", "a", "b", "c", "d"), ("SADD", "st", "a", "e"), ("SREM", "st", "a", "b", "zz"), ("SMOVE", "st", "st2", "c"),
    ("SMOVE", "st", "st2", "zz"), ("SADD", "st", "1", "2", "3", "4", "5"), ("SPOP", "st"), ("SPOP", "st", "2"),
    ("SADD", "st3", "a", "b"), ("SINTERSTORE", "st4", "st", "st"), ("SUNIONSTORE", "st5", "st", "st2", "st3"),
    ("SDIFFSTORE", "st6", "st5", "st3"), ("SINTERSTORE", "st7", "st", "nokey"), ("SPOP", "st3", "10"),
    ("SADD", "ints", "1", "2", "3"), ("SPOP", "ints", "5"),
    # hashes
    ("HSET", "h", "a", "1", "b", "2", "c", "3"), ("HSET", "h", "a", "9", "d", "4"), ("HMSET", "h", "e", "5", "f", "6"),
    ("HSETNX", "h", "a", "1"), ("HSETNX", "h", "g", "7"), ("HDEL", "h", "a", "b", "zz"), ("HINCRBY", "h", "c", "2"),
    ("HINCRBYFLOAT", "h", "d", "0.5"), ("HDEL", "h", "c", "d", "e", "f", "g"),
    # sorted sets
    ("ZADD", "z", "1", "a", "2", "b", "3", "c"), ("ZADD", "z", "1", "a", "5", "b", "4", "d"), ("ZADD", "z", "CH", "6", "a", "7", "e"),
    ("ZADD", "z", "INCR", "1", "a"), ("ZINCRBY", "z", "2", "b"), ("ZREM", "z", "a", "zz"),
    ("ZADD", "z", "10", "f", "11", "g", "12", "h"), ("ZREMRANGEBYSCORE", "z", "10", "11"), ("ZREMRANGEBYRANK", "z", "0", "0"),
    ("ZADD", "zl", "0", "a", "0", "b", "0", "c", "0", "d"), ("ZREMRANGEBYLEX", "zl", "[a", "[b"), ("ZPOPMIN", "z"),
    ("ZPOPMAX", "z", "2"), ("ZMPOP", "1", "zl", "MIN", "COUNT", "5"), ("ZADD", "z1", "1", "a", "2", "b"),
    ("ZADD", "z2", "1", "b", "2", "c"), ("ZUNIONSTORE", "z3", "2", "z1", "z2"), ("ZINTERSTORE", "z4", "2", "z1", "z2"),
    ("ZDIFFSTORE", "z5", "2", "z1", "z2"), ("ZRANGESTORE", "z6", "z3", "0", "-1"), ("ZRANGESTORE", "z7", "nokey", "0", "-1"),
    # geo
    ("GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania", "13.5", "38", "Third"),
    ("GEOADD", "g", "XX", "CH", "13.361389", "38.115556", "Palermo", "15", "37.5", "Catania"),
    ("GEORADIUS", "g", "15", "37", "200", "km", "STORE", "gs"),
    ("GEOSEARCHSTORE", "gs2", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "STOREDIST"),
    # streams
    ("XADD", "x", "1-1", "f", "v"), ("XADD", "x", "2-1", "f", "v"), ("XADD", "x", "3-1", "f", "v"),
    ("XGROUP", "CREATE", "x", "g", "0"), ("XGROUP", "CREATECONSUMER", "x", "g", "c1"),
    ("XREADGROUP", "GROUP", "g", "c1", "COUNT", "2", "STREAMS", "x", ">"), ("XACK", "x", "g", "1-1", "2-1", "9-9"),
    ("XDEL", "x", "3-1", "9-9"), ("XTRIM", "x", "MAXLEN", "0"), ("XGROUP", "SETID", "x", "g", "0"),
    ("XGROUP", "DELCONSUMER", "x", "g", "c1"), ("XGROUP", "DESTROY", "x", "g"),
    # sort and the rest
    ("RPUSH", "sl", "3", "1", "2"), ("SORT", "sl", "STORE", "sorted"), ("SORT", "nokey", "STORE", "sorted"),
    ("SWAPDB", "0", "1"), ("SWAPDB", "0", "1"), ("SWAPDB", "2", "2"), ("DEBUG", "POPULATE", "3", "pop"),
    ("SMOVE", "st2", "st2", "c"), ("SADD", "sm1", "a", "b"), ("SADD", "sm2", "a"), ("SMOVE", "sm1", "sm2", "a"),
    ("SMOVE", "sm1", "sm2", "b"), ("BITOP", "NOT", "bits3", "bits"), ("LTRIM", "sl", "0", "-1"), ("LTRIM", "sl", "5", "1"),
    ("ZADD", "z", "XX", "CH", "1", "nobody"), ("HINCRBY", "h2", "f", "1"), ("LINSERT", "sl", "AFTER", "nope", "x"),
    ("FLUSHDB",), ("SET", "k", "v"), ("FLUSHALL",),
]


def dirty(c):
    return int(parse_info(c.call("INFO", "persistence"))["rdb_changes_since_last_save"])


class DirtyCount(GoblinAndRedisCase):
    def test_each_command_counts_as_redis_does(self):
        with Raw(self.goblin) as g, Raw(self.redis) as r:
            for c in (g, r):
                c.call("CONFIG", "SET", "save", "")
                c.call("FLUSHALL")
            mismatches = []
            for cmd in SCRIPT:
                deltas = []
                for c in (g, r):
                    before = dirty(c)
                    c.call(*cmd)
                    deltas.append(dirty(c) - before)
                if deltas[0] != deltas[1]:
                    mismatches.append("%s: goblin %d, redis %d" % (" ".join(cmd), deltas[0], deltas[1]))
        self.assertEqual(mismatches, [], "\n".join(mismatches))


if __name__ == "__main__":
    gbtest.run_tests()
