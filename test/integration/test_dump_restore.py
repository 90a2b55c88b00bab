"""DUMP, RESTORE and MIGRATE against redis-server 7.0 (issue 29): payloads
cross both ways, options and errors answer as Redis's, and hostile payloads
are refused without harm. MIGRATE runs from each server to a third
redis-server (and from Redis into Goblin) with every option; its replies
and errors are compared byte for byte with Redis as the source, including
a target that never answers.

* Round trips: values of every type (strings: integers, short, long,
  binary; lists, sets, sorted sets and hashes both small -- Redis's compact
  encodings -- and large) are built on one server, DUMPed there and
  RESTOREd into the other; the restored value, its OBJECT ENCODING and its
  TTL must match the original's on Redis. Strings' payloads are byte-
  identical to Redis's.
* Redis's older encodings, which 7.0 no longer writes but still reads
  (ziplist lists, hashes and sorted sets, zipmap hashes, intsets, quicklist
  1, RDB_TYPE_ZSET with text scores, listpack sets of 7.2): payloads are
  built here byte by byte and RESTOREd into both servers, which must end
  with the same value.
* Options and errors, byte for byte on both servers: REPLACE, ABSTTL, a TTL
  already past (with and without REPLACE), IDLETIME (OBJECT IDLETIME after
  it), FREQ's bounds, BUSYKEY, a negative TTL, a bad version or checksum,
  a syntax error, keyspace events ("restore", "del"). One deliberate
  difference: Redis decodes the object from the whole argument, footer
  included, so a truncated object may swallow the version and checksum
  bytes (a lone string type byte becomes a 9-byte string of footer); Goblin
  decodes only the bytes before the footer and answers "Bad data format"
  (test_truncated_object_stops_at_the_footer).
* Hostile payloads (Goblin only: Redis 7.0 without sanitize-dump-payload
  may itself crash on them): thousands of mutations of valid payloads,
  re-checksummed so they reach the decoder, must each get OK or "Bad data
  format", never kill the server, and every value accepted must read back.
* Streams with consumer groups, pending entries, deletions and XSETID's
  counters cross both ways (Redis 7.0's format, and Redis 6.2's older one
  into both servers), compared by XRANGE, XINFO STREAM FULL and XINFO
  GROUPS.
"""

import random
import socket
import struct
import threading

import gbtest
from gbtest import Raw


def crc64(data):
    """Redis's CRC-64 (Jones polynomial, reflected; crc64("123456789") is
    0xe9c6d914c4b8d9ca)."""
    crc = 0
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x95AC9329AC4BC9B5 if crc & 1 else 0)
    return crc


def payload(body, version=9):
    """A DUMP payload: body (type byte and object), RDB version, CRC-64."""
    data = body + struct.pack("<H", version)
    return data + struct.pack("<Q", crc64(data))


def rdb_len(n):
    if n < 64:
        return bytes([n])
    if n < 16384:
        return bytes([0x40 | n >> 8, n & 0xFF])
    if n < 1 << 32:
        return b"\x80" + struct.pack(">I", n)
    return b"\x81" + struct.pack(">Q", n)


def rdb_str(s):
    return rdb_len(len(s)) + s


def ziplist(entries):
    """A Redis ziplist of byte strings and ints, as Redis 3.2-6.2 wrote it."""
    body, prev, offsets = b"", 0, []
    for e in entries:
        prevlen = bytes([prev]) if prev < 254 else b"\xfe" + struct.pack("<I", prev)
        if isinstance(e, int):
            if 0 <= e <= 12:
                enc = bytes([0xF1 + e])
            elif -128 <= e <= 127:
                enc = b"\xfe" + struct.pack("<b", e)
            elif -32768 <= e <= 32767:
                enc = b"\xc0" + struct.pack("<h", e)
            elif -(1 << 23) <= e < (1 << 23):
                enc = b"\xf0" + struct.pack("<i", e)[:3]
            elif -(1 << 31) <= e < (1 << 31):
                enc = b"\xd0" + struct.pack("<i", e)
            else:
                enc = b"\xe0" + struct.pack("<q", e)
        else:
            n = len(e)
            if n < 64:
                enc = bytes([n]) + e
            elif n < 16384:
                enc = bytes([0x40 | n >> 8, n & 0xFF]) + e
            else:
                enc = b"\x80" + struct.pack(">I", n) + e
        offsets.append(10 + len(body))
        entry = prevlen + enc
        body += entry
        prev = len(entry)
    tail = offsets[-1] if offsets else 10
    total = 10 + len(body) + 1
    return struct.pack("<IIH", total, tail, len(entries)) + body + b"\xff"


def zipmap(pairs):
    out = bytes([len(pairs)])
    for k, v in pairs:
        out += bytes([len(k)]) + k + bytes([len(v)]) + b"\x00" + v
    return out + b"\xff"


def intset(values, width):
    fmt = {2: "<h", 4: "<i", 8: "<q"}[width]
    return struct.pack("<II", width, len(values)) + b"".join(struct.pack(fmt, v) for v in sorted(values))


def listpack(entries):
    """A Redis 7 listpack (strings only, so every entry is a string entry)."""
    body = b""
    for e in entries:
        n = len(e)
        enc = (bytes([0x80 | n]) if n < 64 else bytes([0xE0 | n >> 8, n & 0xFF]) if n < 4096
               else b"\xf0" + struct.pack("<I", n)) + e
        ln = len(enc)
        if ln <= 127:
            back = bytes([ln])
        elif ln < 16383:
            back = bytes([ln >> 7, (ln & 127) | 128])
        else:
            back = bytes([ln >> 14, ((ln >> 7) & 127) | 128, (ln & 127) | 128])
        body += enc + back
    return struct.pack("<IH", 6 + len(body) + 1, len(entries)) + body + b"\xff"


def lp_triples(triples):
    """A Redis listpack of field, value, deadline triples (deadlines as
    integer entries; 0 for none), as Redis 7.4's listpackex holds them."""
    body = b""
    count = 0
    for f, v, when in triples:
        for e in (f, v):
            enc = bytes([0x80 | len(e)]) + e
            body += enc + bytes([len(enc)])
        if when == 0:
            enc = b"\x00"
        else:
            enc = b"\xf4" + struct.pack("<q", when)
        body += enc + bytes([len(enc)])
        count += 3
    return struct.pack("<IH", 6 + len(body) + 1, count) + body + b"\xff"


def read_value(r, key):
    """A value as a comparable Python object, with its type and encoding."""
    t = r.type(key)
    if t == b"string":
        v = r.get(key)
    elif t == b"list":
        v = r.lrange(key, 0, -1)
    elif t == b"set":
        v = sorted(r.smembers(key))
    elif t == b"zset":
        v = r.zrange(key, 0, -1, withscores=True)
    elif t == b"hash":
        v = sorted(r.hgetall(key).items())
    else:
        v = None
    enc = r.object("encoding", key) if t != b"none" else None
    return (t, enc, v)


def build_values(rng):
    """(name, commands that build key 'k') covering every type and encoding."""
    big = [b"m%05d" % i for i in range(600)]
    return [
        ("int", [("SET", "k", "12345")]),
        ("int-big", [("SET", "k", "9223372036854775807")]),
        ("int-neg", [("SET", "k", "-129")]),
        ("not-canonical-int", [("SET", "k", "007")]),
        ("short", [("SET", "k", "hello")]),
        ("binary", [("SET", "k", bytes(range(256)))]),
        ("long", [("SET", "k", b"x" * 5000)]),
        ("empty-string", [("SET", "k", "")]),
        ("list-small", [("RPUSH", "k", "a", "1", "-5", "b" * 70)]),
        ("list-big", [("RPUSH", "k", *[b"v%d" % i for i in range(3000)])]),
        ("list-bigvals", [("RPUSH", "k", *[bytes([97 + i % 26]) * rng.randint(1, 9000) for i in range(40)])]),
        ("set-intset", [("SADD", "k", "1", "-2", "300000", "9223372036854775807")]),
        ("set-listpack", [("SADD", "k", "a", "b", "1")]),
        ("set-big", [("SADD", "k", *big)]),
        ("zset-small", [("ZADD", "k", "1.5", "a", "-inf", "b", "inf", "c", "3", "d")]),
        ("zset-big", [("ZADD", "k", *[x for i, m in enumerate(big) for x in (str(i * 0.25), m)])]),
        ("hash-small", [("HSET", "k", "f", "v", "n", "12", "e", "")]),
        ("hash-big", [("HSET", "k", *[x for m in big for x in (m, m + b"!")])]),
        ("hash-longval", [("HSET", "k", "f", "v" * 100)]),
        ("ttl", [("SET", "k", "v"), ("PEXPIRE", "k", "500000")]),
        ("ttl-hash", [("HSET", "k", "a", "b"), ("EXPIRE", "k", "1000")]),
    ]


class DumpRestore(gbtest.GoblinAndRedisCase):
    def setUp(self):
        self.g = self.goblin.redis()
        self.r = self.redis.redis()
        self.g.flushall()
        self.r.flushall()

    def both(self):
        return (("goblin", self.g), ("redis", self.r))

    def test_round_trips_both_ways(self):
        rng = random.Random(29)
        for name, cmds in build_values(rng):
            for src_name, src, dst_name, dst in (("redis", self.r, "goblin", self.g),
                                                 ("goblin", self.g, "redis", self.r)):
                with self.subTest(value=name, direction=f"{src_name}->{dst_name}"):
                    src.delete("k", "k2")
                    dst.delete("k")
                    for cmd in cmds:
                        src.execute_command(*cmd)
                    dump = src.dump("k")
                    self.assertIsNotNone(dump)
                    ttl = src.pttl("k")
                    self.assertTrue(dst.restore("k", max(ttl, 0), dump))
                    got = read_value(dst, "k")
                    # The reference: the value built on Redis itself, in
                    # the encoding the destination gives it when built there
                    # by commands (Goblin names some encodings its own way:
                    # listpack sets, btree sorted sets).
                    for c in (self.r, dst):
                        c.delete("ref")
                        for cmd in cmds:
                            c.execute_command(cmd[0], "ref", *cmd[2:])
                    ref = read_value(self.r, "ref")
                    native = read_value(dst, "ref")
                    self.assertEqual(got, (ref[0], native[1], ref[2]))
                    # every element, as Redis digests a value
                    self.assertEqual(dst.execute_command("DEBUG", "DIGEST-VALUE", "k"),
                                     src.execute_command("DEBUG", "DIGEST-VALUE", "k"))
                    if ttl > 0:
                        self.assertGreater(dst.pttl("k"), ttl - 5000)
                    else:
                        self.assertEqual(dst.pttl("k"), -1)
                    # DUMP of the restored value restores to the same again.
                    again = dst.dump("k")
                    src.delete("k2")
                    src.restore("k2", 0, again)
                    self.assertEqual(read_value(src, "k2")[2], ref[2])

    def test_string_payloads_are_redis_bytes(self):
        for v in [b"0", b"-1", b"127", b"128", b"-32768", b"2147483647", b"2147483648", b"12345678901",
                  b"hello", b"", b"00", b"x" * 20, b"1.5"]:
            self.g.set("s", v)
            self.r.set("s", v)
            self.assertEqual(self.g.dump("s"), self.r.dump("s"), v)

    def test_old_encodings_restore_as_redis_does(self):
        bodies = {
            "list-ziplist": b"\x0a" + rdb_str(ziplist([b"a", 5, -300, 70000, 1 << 40, b"x" * 100])),
            "list-quicklist1": b"\x0e" + rdb_len(2) + rdb_str(ziplist([b"a", 1])) + rdb_str(ziplist([b"b" * 300])),
            "list-quicklist2-plain": b"\x12" + rdb_len(2) + rdb_len(1) + rdb_str(b"P" * 50) + rdb_len(2)
                                     + rdb_str(listpack([b"q", b"r"])),
            "hash-ziplist": b"\x0d" + rdb_str(ziplist([b"f1", b"v1", b"f2", 17])),
            "hash-zipmap": b"\x09" + rdb_str(zipmap([(b"a", b"1"), (b"bb", b"two")])),
            "zset-ziplist": b"\x0c" + rdb_str(ziplist([b"m1", 1, b"m2", b"2.5", b"m3", b"1e3"])),
            "zset-text-scores": b"\x03" + rdb_len(3) + rdb_str(b"a") + b"\x031.5" + rdb_str(b"b") + b"\xfe"
                                + rdb_str(b"c") + b"\xff",
            "set-intset16": b"\x0b" + rdb_str(intset([1, 5, -7], 2)),
            "set-intset64": b"\x0b" + rdb_str(intset([1, 1 << 40], 8)),
            "list-plain": b"\x01" + rdb_len(2) + rdb_str(b"a") + rdb_str(b"b"),
        }
        for name, body in bodies.items():
            with self.subTest(encoding=name):
                p = payload(body)
                for _, c in self.both():
                    c.delete("k")
                    self.assertTrue(c.restore("k", 0, p))
                g, r = read_value(self.g, "k"), read_value(self.r, "k")
                self.assertEqual((g[0], g[2]), (r[0], r[2]))

    def test_listpack_set_of_redis_7_2(self):
        # RDB_TYPE_SET_LISTPACK (20) arrived with RDB 11: Goblin reads it;
        # Redis 7.0 refuses the version, as it must.
        p = payload(b"\x14" + rdb_str(listpack([b"a", b"b", b"c"])), version=11)
        self.assertTrue(self.g.restore("k", 0, p))
        self.assertEqual(sorted(self.g.smembers("k")), [b"a", b"b", b"c"])
        with Raw(self.redis) as raw:
            self.assertEqual(raw.call("RESTORE", "k", "0", p), gbtest.Err(b"ERR DUMP payload version or checksum are wrong"))

    def errors_and_replies(self):
        good = payload(b"\x00" + rdb_str(b"val"))
        cases = [
            ("RESTORE", "k", "0", good),
            ("RESTORE", "k", "0", good),  # BUSYKEY
            ("RESTORE", "k", "0", good, "REPLACE"),
            ("RESTORE", "k", "-1", good, "REPLACE"),
            ("RESTORE", "k", "abc", good, "REPLACE"),
            ("RESTORE", "k", "0", good[:-1] + bytes([good[-1] ^ 1]), "REPLACE"),
            ("RESTORE", "k", "0", good[:-10] + b"\x0b\x00" + good[-8:], "REPLACE"),
            ("RESTORE", "k", "0", b"short", "REPLACE"),
            ("RESTORE", "k", "0", good, "REPLACE", "BOGUS"),
            ("RESTORE", "k", "0", good, "REPLACE", "IDLETIME"),
            ("RESTORE", "k", "0", good, "REPLACE", "IDLETIME", "-1"),
            ("RESTORE", "k", "0", good, "REPLACE", "IDLETIME", "x"),
            ("RESTORE", "k", "0", good, "REPLACE", "FREQ", "256"),
            ("RESTORE", "k", "0", good, "REPLACE", "FREQ", "-1"),
            ("RESTORE", "k", "0", good, "REPLACE", "IDLETIME", "5", "FREQ", "5"),
            ("RESTORE", "k", "0", good, "REPLACE", "FREQ", "5", "IDLETIME", "5"),
            ("RESTORE", "k", "0", payload(b"\x01"), "REPLACE"),
            ("RESTORE", "k", "0", payload(b"\x01\x00"), "REPLACE"),
            ("RESTORE", "k", "0", payload(b"\x02\x02" + rdb_str(b"a") + rdb_str(b"a")), "REPLACE"),
            ("RESTORE", "k", "0", payload(b"\x07"), "REPLACE"),
            ("RESTORE", "k", "0", payload(b"\x63"), "REPLACE"),
            ("RESTORE", "k", "1", good, "REPLACE", "ABSTTL"),  # long past: deleted
            ("EXISTS", "k"),
            ("RESTORE", "k", "1", good, "ABSTTL"),  # past, no key: OK, nothing
            ("EXISTS", "k"),
            ("RESTORE", "k", "99999999999999", good, "ABSTTL"),
            ("PEXPIRETIME", "k"),
            ("RESTORE", "k", "9223372036854775000", good, "REPLACE"),  # wraps to the past: deleted
            ("EXISTS", "k"),
            ("RESTORE", "k", "0", good, "REPLACE", "IDLETIME", "0"),
            ("OBJECT", "IDLETIME", "k"),
            ("DUMP", "nokey"),
            ("DUMP",),
            ("RESTORE", "k", "0"),
            ("SET", "str", "v"),
            ("RESTORE", "str", "0", good),
        ]
        return cases

    def test_truncated_object_stops_at_the_footer(self):
        with Raw(self.goblin) as g:
            self.assertEqual(g.call("RESTORE", "k", "0", payload(b"\x00")), gbtest.Err(b"ERR Bad data format"))
            self.assertEqual(g.call("EXISTS", "k"), 0)

    def test_options_and_errors_byte_for_byte(self):
        with Raw(self.goblin) as g, Raw(self.redis) as r:
            for cmd in self.errors_and_replies():
                with self.subTest(cmd=cmd[:2] + cmd[4:] if len(cmd) > 4 else cmd):
                    got, want = g.call_raw(*cmd), r.call_raw(*cmd)
                    if cmd[:2] == ("OBJECT", "IDLETIME"):
                        # right after RESTORE ... IDLETIME 0: Redis's clock is
                        # a cached second, which may turn in between
                        self.assertEqual(got, b":0\r\n")
                        self.assertIn(want, (b":0\r\n", b":1\r\n"))
                        continue
                    self.assertEqual(got, want)

    def test_idletime_and_events(self):
        good = payload(b"\x00" + rdb_str(b"val"))
        for _, c in self.both():
            c.config_set("notify-keyspace-events", "KEA")
        subs = {}
        for name, c in self.both():
            p = c.pubsub()
            p.psubscribe("__keyspace@0__:*")
            p.get_message(timeout=1)
            subs[name] = p
        for _, c in self.both():
            c.restore("k", 0, good)
            c.restore("k", 0, good, replace=True, idletime=100)
            c.restore("k", 1, good, replace=True, absttl=True)
            c.set("sync", "1")
        got = {}
        for name, p in subs.items():
            events = []
            while True:
                m = p.get_message(timeout=1)
                if m is None:
                    break
                if m["type"] == "pmessage":
                    events.append((m["channel"], m["data"]))
                if m["data"] == b"set":
                    break
            got[name] = events
            p.close()
        self.assertEqual(got["goblin"], got["redis"])
        for _, c in self.both():
            c.restore("idle", 0, good, idletime=1)
        # 1 on both, or 2 on Redis when its cached second turned in between
        self.assertEqual(self.g.object("idletime", "idle"), 1)
        self.assertIn(self.r.object("idletime", "idle"), (1, 2))

    def build_stream(self, c, key):
        """A stream with deletions, a trimmed head, XSETID's max-deleted ID,
        two groups with pending entries owned by three consumers, and one
        group whose read counter is unknown (XGROUP CREATE at an ID)."""
        for i in range(1, 251):
            c.execute_command("XADD", key, f"{i}-{i % 3}", "f", str(i), *(["g", "x" * (i % 5)] if i % 7 else []))
        c.execute_command("XDEL", key, "5-2", "6-0", "100-1")
        c.execute_command("XTRIM", key, "MINID", "3")
        c.execute_command("XGROUP", "CREATE", key, "g1", "0")
        c.execute_command("XGROUP", "CREATE", key, "g2", "$")
        c.execute_command("XGROUP", "CREATE", key, "g3", "50-2")
        c.execute_command("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "10", "STREAMS", key, ">")
        c.execute_command("XREADGROUP", "GROUP", "g1", "bob", "COUNT", "5", "STREAMS", key, ">")
        c.execute_command("XACK", key, "g1", "4-1", "8-2")
        c.execute_command("XCLAIM", key, "g1", "carol", "0", "9-0", "10-1")
        c.execute_command("XGROUP", "CREATECONSUMER", key, "g2", "dave")
        c.execute_command("XSETID", key, "900-0", "ENTRIESADDED", "400", "MAXDELETEDID", "800-0")

    def stream_state(self, c, key):
        """What a restore must keep: entries, XINFO STREAM FULL without the
        radix tree's shape (Goblin's nodes are its own), the groups."""
        full = c.execute_command("XINFO", "STREAM", key, "FULL")
        full = dict(zip(full[::2], full[1::2]))
        for k in (b"radix-tree-keys", b"radix-tree-nodes"):
            full.pop(k, None)
        return (c.execute_command("XRANGE", key, "-", "+"), full,
                c.execute_command("XINFO", "GROUPS", key))

    def test_streams_cross_both_ways(self):
        self.build_stream(self.r, "s")
        want = self.stream_state(self.r, "s")
        self.assertTrue(self.g.restore("s", 0, self.r.dump("s")))
        self.assertEqual(self.stream_state(self.g, "s"), want)
        # ... and back: Goblin's own payload restores into Redis unchanged.
        self.assertTrue(self.r.restore("back", 0, self.g.dump("s")))
        self.assertEqual(self.stream_state(self.r, "back"), want)
        # A stream built on Goblin itself goes to Redis the same way.
        self.build_stream(self.g, "own")
        self.assertTrue(self.r.restore("own", 0, self.g.dump("own")))
        self.assertEqual(self.stream_state(self.r, "own"), self.stream_state(self.g, "own"))
        # Large values and many nodes: 3,000 entries of changing shapes.
        for c in (self.r,):
            for i in range(3000):
                c.execute_command("XADD", "big", "*", *(["a", str(i)] if i % 2 else ["b" * (1 + i % 50), "v" * i]))
        self.assertTrue(self.g.restore("big", 0, self.r.dump("big")))
        self.assertEqual(self.g.execute_command("XRANGE", "big", "-", "+"), self.r.execute_command("XRANGE", "big", "-", "+"))
        for key in ("s", "big"):
            self.assertEqual(self.g.execute_command("DEBUG", "DIGEST-VALUE", key),
                             self.r.execute_command("DEBUG", "DIGEST-VALUE", key))

    def test_redis_6_stream_payload(self):
        # RDB_TYPE_STREAM_LISTPACKS (15) as Redis 6.2 wrote it: no first ID,
        # max-deleted ID, entries-added or read counters.
        self.r.execute_command("XADD", "s6", "1-1", "a", "1")
        self.r.execute_command("XADD", "s6", "2-0", "a", "2", "b", "3")
        self.r.execute_command("XGROUP", "CREATE", "s6", "g", "0")
        self.r.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s6", ">")
        v7 = self.r.dump("s6")[:-10]
        # Rewrite the 7.0 object (type 19) as a 6.2 one (type 15).
        body = v7[1:]
        pos = 0

        def take_len(b, p):
            f = b[p]
            if f >> 6 == 0:
                return f & 63, p + 1
            if f >> 6 == 1:
                return (f & 63) << 8 | b[p + 1], p + 2
            if f == 0x80:
                return struct.unpack(">I", b[p + 1:p + 5])[0], p + 5
            return struct.unpack(">Q", b[p + 1:p + 9])[0], p + 9

        def take_str(b, p):
            if b[p] >> 6 == 3:  # an encoded string: int8/16/32, or LZF
                enc = b[p] & 63
                if enc < 3:
                    return None, p + 1 + (1, 2, 4)[enc]
                clen, q = take_len(b, p + 1)
                _, q = take_len(b, q)
                return None, q + clen
            n, p = take_len(b, p)
            return b[p:p + n], p + n
        nodes, pos = take_len(body, pos)
        for _ in range(nodes):
            _, pos = take_str(body, pos)
            _, pos = take_str(body, pos)
        length_etc = pos
        for _ in range(3):  # length, last ms, last seq
            _, pos = take_len(body, pos)
        keep_until = pos
        for _ in range(5):  # first id, max deleted id, entries added
            _, pos = take_len(body, pos)
        ngroups, pos = take_len(body, pos)
        out = b"\x0f" + body[:keep_until] + rdb_len(ngroups)
        for _ in range(ngroups):
            name, pos = take_str(body, pos)
            ms, pos = take_len(body, pos)
            seq, pos = take_len(body, pos)
            _, pos = take_len(body, pos)  # entries read: not in 6.2
            out += rdb_str(name) + rdb_len(ms) + rdb_len(seq)
        out += body[pos:]
        p6 = payload(out)
        for _, c in self.both():
            self.assertTrue(c.restore("r6", 0, p6))
        self.assertEqual(self.stream_state(self.g, "r6"), self.stream_state(self.r, "r6"))

    def test_hash_field_deadlines_in_redis_7_4_format(self):
        """A hash with field deadlines DUMPs as Redis 7.4's RDB_TYPE_HASH_METADATA
        (RDB 12): the deadline of the earliest field, then per field the
        deadline relative to it plus one (0: none). Redis 7.0 cannot hold
        it and refuses the version; Goblin restores the deadlines, and reads
        Redis 7.4's other forms (listpack with deadlines, the 7.4 release
        candidates' absolute ones)."""
        far = 4102444800000  # 2100-01-01
        self.g.hset("h", mapping={"a": "1", "b": "2"})
        self.g.execute_command("HPEXPIREAT", "h", far, "FIELDS", "1", "a")
        dump = self.g.dump("h")
        self.assertEqual(dump[-10:-8], b"\x0c\x00")  # RDB 12
        self.assertEqual(dump[0], 24)
        self.assertEqual(dump[1:9], struct.pack("<Q", far))
        with Raw(self.redis) as r:
            self.assertEqual(r.call("RESTORE", "h", "0", dump),
                             gbtest.Err(b"ERR DUMP payload version or checksum are wrong"))
        self.g.restore("h2", 0, dump)
        self.assertEqual(self.g.execute_command("HPEXPIRETIME", "h2", "FIELDS", "2", "a", "b"), [far, -1])
        self.assertEqual(sorted(self.g.hgetall("h2").items()), [(b"a", b"1"), (b"b", b"2")])
        # Hand-built forms, as Redis 7.4 writes them.
        meta = (b"\x18" + struct.pack("<Q", far) + rdb_len(2) + rdb_len(1) + rdb_str(b"x") + rdb_str(b"1")
                + rdb_len(0) + rdb_str(b"y") + rdb_str(b"2"))
        lp_ex = b"\x19" + struct.pack("<Q", far) + rdb_str(lp_triples(
            [(b"x", b"1", far + 5), (b"y", b"2", 0)]))
        pre_ga = (b"\x16" + rdb_len(1) + rdb_len(far + 7) + rdb_str(b"x") + rdb_str(b"1"))
        for name, body, want in (("metadata", meta, [far, -1]), ("listpack-ex", lp_ex, [far + 5, -1]),
                                 ("pre-ga", pre_ga, [far + 7, -2])):
            with self.subTest(form=name):
                self.g.delete("f")
                self.assertTrue(self.g.restore("f", 0, payload(body, version=12)))
                self.assertEqual(self.g.execute_command("HPEXPIRETIME", "f", "FIELDS", "2", "x", "y"), want)

    def migrate_both(self, target, *args, setup=None):
        """The same MIGRATE run from Goblin and from Redis to target: both
        replies (raw bytes), after setup(c) on each source and, before each,
        the target reset to one key "busy"."""
        out = []
        for name, c in self.both():
            t = target.redis()
            t.flushall()
            t.set("busy", "x")
            if setup:
                setup(c)
            with Raw(self.goblin if name == "goblin" else self.redis) as raw:
                out.append(raw.call_raw("MIGRATE", "127.0.0.1", str(target.port), *args))
        return out

    def test_migrate_both_ways_and_options(self):
        with gbtest.Server("redis") as target:
            t = target.redis()

            def fill(c):
                c.flushall()
                c.set("a", "1")
                c.rpush("l", "x", "y")
                c.set("ttl", "v", px=500000)
                c.hset("h", mapping={"f": "v"})
            for src_name, src in self.both():
                with self.subTest(source=src_name):
                    t.flushall()
                    fill(src)
                    self.assertTrue(src.migrate("127.0.0.1", target.port, ["a", "l", "ttl"], 0, 1000))
                    self.assertEqual(sorted(t.keys()), [b"a", b"l", b"ttl"])
                    self.assertEqual(t.lrange("l", 0, -1), [b"x", b"y"])
                    self.assertGreater(t.pttl("ttl"), 400000)
                    self.assertEqual(sorted(src.keys()), [b"h"])
                    # COPY keeps the source; REPLACE overwrites the target.
                    src.set("a", "2")
                    self.assertTrue(src.migrate("127.0.0.1", target.port, "a", 3, 1000, copy=True))
                    self.assertEqual((src.get("a"), target.redis(db=3).get("a")), (b"2", b"2"))
                    self.assertTrue(src.migrate("127.0.0.1", target.port, "a", 0, 1000, replace=True))
                    self.assertEqual((src.exists("a"), t.get("a")), (0, b"2"))
            # Redis as the source, Goblin as the target: Redis's own payloads.
            self.g.flushall()
            self.r.flushall()
            self.r.rpush("rl", *[f"e{i}" for i in range(300)])
            self.r.zadd("rz", {"m": 1.5})
            self.assertTrue(self.r.migrate("127.0.0.1", self.goblin.port, ["rl", "rz"], 0, 1000))
            self.assertEqual(self.g.lrange("rl", 0, -1), [f"e{i}".encode() for i in range(300)])
            self.assertEqual(self.g.zscore("rz", "m"), 1.5)
            # Replies and errors, byte for byte with Redis as the source.

            def one(c):
                c.flushall()
                c.set("busy", "1")
                c.set("k", "v")
            cases = [
                ("nokey", "0", "1000"),
                ("k", "0", "1000", "KEYS", "k"),
                ("", "0", "1000", "KEYS", "nokey"),
                ("k", "0", "1000", "BOGUS"),
                ("k", "0", "1000", "AUTH"),
                ("k", "0", "1000", "AUTH2", "u"),
                ("k", "x", "1000"),
                ("k", "0", "y"),
                ("busy", "0", "1000"),
                ("k", "0", "1000", "AUTH", "nopass"),
                ("k", "0", "-5", "COPY"),
            ]
            for args in cases:
                with self.subTest(migrate=args):
                    g, r = self.migrate_both(target, *args, setup=one)
                    self.assertEqual(g, r)
        # A target with a password (AUTH, AUTH2 and a wrong one), and no
        # target at all.
        with gbtest.Server("redis", args=["--requirepass", "pw"]) as target:
            for args in (("k", "0", "1000", "AUTH", "pw"), ("k", "0", "1000", "AUTH2", "default", "pw"),
                         ("k", "0", "1000", "AUTH2", "default", "bad"), ("k", "0", "1000")):
                with self.subTest(migrate=args):
                    out = []
                    for name, c in self.both():
                        t = target.redis(password="pw")
                        t.flushall()
                        one(c)
                        with Raw(self.goblin if name == "goblin" else self.redis) as raw:
                            out.append(raw.call_raw("MIGRATE", "127.0.0.1", str(target.port), *args))
                    self.assertEqual(out[0], out[1])
        # Nothing listening (Redis fails its first write: "writing"), and a
        # host that does not resolve ("connecting to the client").
        for host, port in (("127.0.0.1", "1"), ("nonexistent.invalid", "6379")):
            out = []
            for name, c in self.both():
                with Raw(self.goblin if name == "goblin" else self.redis) as raw:
                    c.set("k", "v")
                    out.append(raw.call_raw("MIGRATE", host, port, "k", "0", "200"))
            self.assertEqual(out[0], out[1])
            self.assertTrue(out[0].startswith(b"-IOERR"), out[0])

    def test_migrate_keys_after_a_refused_one_leave_the_source(self):
        """MIGRATE ... KEYS busy k1 k2 where the target already holds busy:
        the reply is the target's BUSYKEY, and the keys it did take leave
        the source (Redis's migrateCommand reads each RESTORE's reply on its
        own). Goblin once kept every key after the first refusal, so they
        were on both sides."""
        with gbtest.Server("redis") as target:
            got = {}
            for name, c in self.both():
                t = target.redis()
                t.flushall()
                t.set("busy", "target")
                c.flushall()
                c.mset({"busy": "source", "k1": "1", "k2": "2"})
                with Raw(self.goblin if name == "goblin" else self.redis) as raw:
                    reply = raw.call_raw("MIGRATE", "127.0.0.1", str(target.port), "", "0", "1000",
                                         "KEYS", "busy", "k1", "k2")
                got[name] = (reply, sorted(c.keys()), sorted(t.keys()), t.get("busy"))
            self.assertEqual(got["goblin"], got["redis"])
            self.assertEqual(got["goblin"][1:], ([b"busy"], [b"busy", b"k1", b"k2"], b"target"))
            self.assertTrue(got["goblin"][0].startswith(b"-ERR Target instance replied with error: BUSYKEY"))

    def test_migrate_times_out_on_a_silent_target(self):
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        port = listener.getsockname()[1]
        try:
            for name, c in self.both():
                c.set("k", "v")
                with Raw(self.goblin if name == "goblin" else self.redis) as raw:
                    self.assertEqual(raw.call("MIGRATE", "127.0.0.1", str(port), "k", "0", "300"),
                                     gbtest.Err(b"IOERR error or timeout reading to target instance"))
                self.assertEqual(c.get("k"), b"v")
            self.assertEqual(self.g.ping(), True)
        finally:
            listener.close()

    def test_migrate_drops_a_target_that_replies_too_much(self):
        """A target that sends one reply more than it was sent commands: the
        MIGRATE that saw it arrive succeeds, and the cached connection goes
        (the next MIGRATE would take the leftover reply for its own), so
        the next MIGRATE connects afresh. goblin-core only: redis-server
        reads a byte at a time and keeps the connection."""
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        port = listener.getsockname()[1]
        accepted = []

        def read_command(f):
            """The name of the next RESP command on f, or None at the end."""
            head = f.readline()
            if not head.startswith(b"*"):
                return None
            args = [f.read(int(f.readline()[1:]) + 2)[:-2] for _ in range(int(head[1:]))]
            return args[0].upper()

        def serve(conn):
            # every reply of a MIGRATE (its SELECT, its RESTOREs) plus one
            # more, all in one send once the batch's last command is in
            with conn, conn.makefile("rb") as f:
                owed = 0
                while True:
                    name = read_command(f)
                    if name is None:
                        return
                    owed += 1
                    if name.startswith(b"RESTORE"):
                        conn.sendall(b"+OK\r\n" * (owed + 1))
                        owed = 0

        def accept_loop():
            while True:
                try:
                    conn, _ = listener.accept()
                except OSError:
                    return
                accepted.append(conn)
                threading.Thread(target=serve, args=(conn,), daemon=True).start()

        threading.Thread(target=accept_loop, daemon=True).start()
        try:
            with Raw(self.goblin) as raw:
                for key in ("a", "b"):
                    self.g.set(key, "v")
                    self.assertEqual(raw.call("MIGRATE", "127.0.0.1", str(port), key, "0", "2000"), b"OK")
                    self.assertEqual(self.g.exists(key), 0)
            self.assertEqual(len(accepted), 2)  # the first connection was not reused
        finally:
            listener.close()

    def test_hostile_payloads(self):
        rng = random.Random(2029)
        seeds = []
        for _, cmds in build_values(rng):
            self.r.delete("k")
            for cmd in cmds:
                self.r.execute_command(*cmd)
            seeds.append(self.r.dump("k")[:-10])
        seeds += [b"\x0a" + rdb_str(ziplist([b"a", 5, -300, b"x" * 70])),
                  b"\x0d" + rdb_str(ziplist([b"f", b"v"])),
                  b"\x09" + rdb_str(zipmap([(b"a", b"b")])),
                  b"\x0b" + rdb_str(intset([1, 2, 3], 4)),
                  b"\x12" + rdb_len(1) + rdb_len(2) + rdb_str(listpack([b"a", b"b"]))]
        with Raw(self.goblin) as g:
            accepted = 0
            for i in range(3000):
                body = bytearray(rng.choice(seeds))
                for _ in range(rng.randint(1, 4)):
                    op = rng.random()
                    pos = rng.randrange(len(body))
                    if op < 0.5:
                        body[pos] = rng.randrange(256)
                    elif op < 0.7:
                        del body[pos:pos + rng.randint(1, 8)]
                    elif op < 0.85:
                        body[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
                    else:
                        body[pos] = rng.choice([0x00, 0x7F, 0x80, 0xFE, 0xFF, 0xC0, 0xF0, 0xF4])
                    if not body:
                        body = bytearray(b"\x00")
                reply = g.call("RESTORE", "h", "0", payload(bytes(body)), "REPLACE")
                if reply == b"OK":
                    accepted += 1
                    t = g.call("TYPE", "h")
                    reads = {b"string": [("GET", "h")], b"list": [("LRANGE", "h", "0", "-1")],
                             b"set": [("SMEMBERS", "h"), ("SCARD", "h")],
                             b"zset": [("ZRANGE", "h", "0", "-1", "WITHSCORES")],
                             b"hash": [("HGETALL", "h"), ("HLEN", "h")]}[t]
                    for cmd in reads:
                        self.assertNotIsInstance(g.call(*cmd), gbtest.Err)
                    self.assertIsNotNone(g.call("DUMP", "h"))
                else:
                    self.assertEqual(reply, gbtest.Err(b"ERR Bad data format"), bytes(body))
            self.assertEqual(g.call("PING"), b"PONG")
            self.assertGreater(accepted, 0)


if __name__ == "__main__":
    gbtest.run_tests()
