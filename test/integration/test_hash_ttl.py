"""Hash-field expiry (Redis 7.4/8.0): HEXPIRE, HPEXPIRE, HEXPIREAT,
HPEXPIREAT, HTTL, HPTTL, HEXPIRETIME, HPEXPIRETIME, HPERSIST, HGETDEL,
HGETEX, HSETEX.

redis-server 7.0.15, the reference of the other suites, has none of these
commands, so the expected replies here are Redis 7.4/8.0's as its source
(src/t_hash.c) and command JSON files define them -- reply codes, error
texts, events, propagation -- and the suite checks them on goblin-core
alone. What 7.0 does define (a hash without field TTLs) is compared with
redis-server: MEMORY-independent replies of the plain hash commands stay
Redis 7.0's, and a hash without TTLs costs what it cost before.

- every command, option and per-field code; errors in Redis's order
- lazy expiry (active expiry off): no read serves a field past its deadline;
  HLEN still counts it (Redis 8.0's hashTypeLength(o, 0))
- active expiry: fields vanish untouched, the key with its last field;
  events hexpire / hpersist / hexpired / hdel / del
- a property test: random operations against a model in real time
- RENAME, COPY, MOVE keep deadlines; HSET clears one; HINCRBY keeps it
- snapshots and the append-only log keep deadlines across restarts, and the
  log replays expiries (HDEL) to the same state
- RESP3 replies
"""

import os
import random
import shutil
import tempfile
import time
import unittest

import gbtest
from gbtest import Raw, Server, SLOW, wait_until, Err, encode


def now_ms():
    return int(time.time() * 1000)


class Commands(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = Server("goblin")

    @classmethod
    def tearDownClass(cls):
        cls.srv.cleanup()

    def setUp(self):
        self.c = Raw(self.srv)
        self.c.call("FLUSHALL")

    def tearDown(self):
        self.c.close()

    def C(self, *a):
        return self.c.call(*a)

    def test_hexpire_codes_and_conditions(self):
        C = self.C
        C("HSET", "h", "a", "1", "b", "2", "c", "3")
        self.assertEqual(C("OBJECT", "ENCODING", "h"), b"listpack")
        self.assertEqual(C("HEXPIRE", "h", "100", "FIELDS", "2", "a", "nosuch"), [1, -2])
        self.assertEqual(C("OBJECT", "ENCODING", "h"), b"listpackex")
        # NX: only fields without a deadline; XX: only fields with one
        self.assertEqual(C("HEXPIRE", "h", "50", "NX", "FIELDS", "2", "a", "b"), [0, 1])
        self.assertEqual(C("HEXPIRE", "h", "60", "XX", "FIELDS", "2", "b", "c"), [1, 0])
        # GT: a field without a deadline counts as infinite (never greater)
        self.assertEqual(C("HEXPIRE", "h", "500", "GT", "FIELDS", "2", "a", "c"), [1, 0])
        self.assertEqual(C("HEXPIRE", "h", "400", "GT", "FIELDS", "1", "a"), [0])
        # LT: a field without a deadline takes any
        self.assertEqual(C("HEXPIRE", "h", "10", "LT", "FIELDS", "2", "a", "c"), [1, 1])
        self.assertEqual(C("HEXPIRE", "h", "20", "lt", "FIELDS", "1", "a"), [0])
        self.assertEqual(C("HTTL", "h", "FIELDS", "3", "a", "b", "c"), [10, 60, 10])
        # a time in the past deletes (2), the key with its last field
        self.assertEqual(C("HEXPIRE", "h", "0", "FIELDS", "2", "a", "b"), [2, 2])
        self.assertEqual(C("HGETALL", "h"), [b"c", b"3"])
        self.assertEqual(C("HPEXPIREAT", "h", "1", "FIELDS", "1", "c"), [2])
        self.assertEqual(C("EXISTS", "h"), 0)
        # a missing key: -2 for each field
        self.assertEqual(C("HEXPIRE", "none", "10", "FIELDS", "2", "a", "b"), [-2, -2])
        self.assertEqual(C("EXISTS", "none"), 0)

    def test_units_and_times(self):
        C = self.C
        C("HSET", "h", "a", "1", "b", "2", "c", "3", "d", "4")
        t = now_ms()
        self.assertEqual(C("HEXPIRE", "h", "100", "FIELDS", "1", "a"), [1])
        self.assertEqual(C("HPEXPIRE", "h", "100000", "FIELDS", "1", "b"), [1])
        self.assertEqual(C("HEXPIREAT", "h", str(t // 1000 + 200), "FIELDS", "1", "c"), [1])
        self.assertEqual(C("HPEXPIREAT", "h", str(t + 300000), "FIELDS", "1", "d"), [1])
        ttl = C("HTTL", "h", "FIELDS", "4", "a", "b", "c", "d")
        self.assertEqual(ttl[:2], [100, 100])
        self.assertTrue(199 <= ttl[2] <= 200 and 299 <= ttl[3] <= 300, ttl)
        pttl = C("HPTTL", "h", "FIELDS", "2", "a", "d")
        self.assertTrue(99000 < pttl[0] <= 100000 and 299000 < pttl[1] <= 300000, pttl)
        self.assertEqual(C("HPEXPIRETIME", "h", "FIELDS", "1", "d"), [t + 300000])
        self.assertEqual(C("HEXPIRETIME", "h", "FIELDS", "1", "c"), [t // 1000 + 200])
        # HEXPIRETIME rounds up to the second, as Redis: (ms + 999) / 1000
        C("HPEXPIREAT", "h", "5000000000001", "FIELDS", "1", "d")
        self.assertEqual(C("HEXPIRETIME", "h", "FIELDS", "1", "d"), [5000000001])
        C("HSET", "h", "plain", "x")
        for cmd in ("HTTL", "HPTTL", "HEXPIRETIME", "HPEXPIRETIME"):
            self.assertEqual(C(cmd, "h", "FIELDS", "2", "plain", "nosuch"), [-1, -2], cmd)
            self.assertEqual(C(cmd, "nokey", "FIELDS", "1", "a"), [-2], cmd)

    def test_a_field_lives_through_its_deadline_millisecond(self):
        """Redis 7.4's hashTypeIsExpired is when < now: in the millisecond
        of its deadline a field is there and HPTTL reads 0; after it, -2
        (polled until then, a few fields in case a stall skips one)."""
        self.C("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        try:
            last_live = []
            for _ in range(30):
                self.C("HSET", "h", "f", "v", "g", "w")
                self.C("HPEXPIRE", "h", "20", "FIELDS", "1", "f")
                live = None
                while True:
                    # one clock reading for both (a transaction's time stands still)
                    self.c.send(encode("MULTI") + encode("HPTTL", "h", "FIELDS", "1", "f") + encode("HGET", "h", "f")
                                + encode("EXEC"))
                    (ttl,), value = [self.c.read()[0] for _ in range(4)][3]
                    if ttl == -2:
                        self.assertIsNone(value)
                        break
                    live = ttl
                    self.assertEqual(value, b"v", ttl)
                last_live.append(live)
                if 0 in last_live:
                    break
            self.assertIn(0, last_live, "the last HPTTL before -2 of each field: never 0")
        finally:
            self.C("DEBUG", "SET-ACTIVE-EXPIRE", "1")

    def test_hpersist(self):
        C = self.C
        C("HSET", "h", "a", "1", "b", "2")
        C("HEXPIRE", "h", "100", "FIELDS", "1", "a")
        self.assertEqual(C("HPERSIST", "h", "FIELDS", "3", "a", "b", "zz"), [1, -1, -2])
        self.assertEqual(C("HTTL", "h", "FIELDS", "1", "a"), [-1])
        self.assertEqual(C("HPERSIST", "nokey", "FIELDS", "1", "a"), [-2])

    def test_errors(self):
        C = self.C
        C("SET", "str", "x")
        C("HSET", "h", "a", "1")
        wrongtype = Err(b"WRONGTYPE Operation against a key holding the wrong kind of value")
        # the key's type is checked before anything else
        for cmd in (("HEXPIRE", "str", "bad", "FIELDS", "1", "a"), ("HTTL", "str", "x", "1", "a"),
                    ("HPERSIST", "str", "FIELDS", "1", "a"), ("HGETDEL", "str", "FIELDS", "1", "a"),
                    ("HGETEX", "str", "FIELDS", "1", "a"), ("HSETEX", "str", "FIELDS", "1", "a", "1")):
            self.assertEqual(C(*cmd), wrongtype, cmd)
        cases = [
            (("HEXPIRE", "h", "x", "FIELDS", "1", "a"), b"ERR value is not an integer or out of range"),
            (("HEXPIRE", "h", "-1", "FIELDS", "1", "a"), b"ERR invalid expire time, must be >= 0"),
            (("HEXPIRE", "h", "70368744177", "FIELDS", "1", "a"), b"ERR invalid expire time in 'hexpire' command"),
            (("HPEXPIRE", "h", "70368744177663", "FIELDS", "1", "a"),
             b"ERR invalid expire time in 'hpexpire' command"),
            (("HPEXPIREAT", "h", "70368744177664", "FIELDS", "1", "a"),
             b"ERR invalid expire time in 'hpexpireat' command"),
            (("HEXPIRE", "h", "10", "FOO", "1", "a"),
             b"ERR Mandatory argument FIELDS is missing or not at the right position"),
            (("HEXPIRE", "h", "10", "FIELDS", "0", "a"), b"ERR Parameter `numFields` should be greater than 0"),
            (("HEXPIRE", "h", "10", "FIELDS", "x", "a"), b"ERR Parameter `numFields` should be greater than 0"),
            (("HEXPIRE", "h", "10", "NX", "FIELDS", "2", "a"),
             b"ERR The `numfields` parameter must match the number of arguments"),
            (("HEXPIRE", "h", "10", "FIELDS", "1", "a", "b"),
             b"ERR The `numfields` parameter must match the number of arguments"),
            (("HTTL", "h", "FIELDS", "0", "a"), b"ERR Number of fields must be a positive integer"),
            (("HTTL", "h", "FIELD", "1", "a"),
             b"ERR Mandatory argument FIELDS is missing or not at the right position"),
            (("HPERSIST", "h", "FIELDS", "-1", "a"), b"ERR Number of fields must be a positive integer"),
            (("HPERSIST", "h", "FIELDS", "3", "a"), b"ERR The `numfields` parameter must match the number of arguments"),
            (("HGETDEL", "h", "FIELDS", "2", "a"), b"ERR The `numfields` parameter must match the number of arguments"),
            (("HGETEX", "h", "EX", "10", "PERSIST", "FIELDS", "1", "a"),
             b"ERR Only one of EX, PX, EXAT, PXAT or PERSIST arguments can be specified"),
            (("HGETEX", "h", "EX", "0", "FIELDS", "1", "a"), b"ERR invalid expire time in 'hgetex' command"),
            (("HGETEX", "h", "FIELDS", "2", "a"),
             b"ERR numfields should be greater than 0 and match the provided number of fields"),
            (("HSETEX", "h", "FNX", "FXX", "FIELDS", "1", "a", "1"),
             b"ERR Only one of FXX or FNX arguments can be specified"),
            (("HSETEX", "h", "EX", "10", "KEEPTTL", "FIELDS", "1", "a", "1"),
             b"ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified"),
            (("HSETEX", "h", "FIELDS", "2", "a", "1"),
             b"ERR numfields should be greater than 0 and match the provided number of fields"),
            (("HSETEX", "h", "PX", "-5", "FIELDS", "1", "a", "1"), b"ERR invalid expire time in 'hsetex' command"),
            (("HEXPIRE", "h", "10", "FIELDS"), b"ERR wrong number of arguments for 'hexpire' command"),
            (("HTTL", "h", "FIELDS", "1"), b"ERR wrong number of arguments for 'httl' command"),
        ]
        for cmd, want in cases:
            self.assertEqual(C(*cmd), Err(want), cmd)
        self.assertEqual(C("HGETALL", "h"), [b"a", b"1"])  # nothing changed
        self.assertEqual(C("OBJECT", "ENCODING", "h"), b"listpack")  # errors come before the conversion

    def test_hgetdel(self):
        C = self.C
        C("HSET", "h", "a", "1", "b", "2", "c", "3")
        self.assertEqual(C("HGETDEL", "h", "FIELDS", "2", "a", "zz"), [b"1", None])
        self.assertEqual(C("HGETDEL", "h", "FIELDS", "3", "b", "c", "b"), [b"2", b"3", None])
        self.assertEqual(C("EXISTS", "h"), 0)
        self.assertEqual(C("HGETDEL", "h", "FIELDS", "1", "a"), [None])

    def test_hgetex(self):
        C = self.C
        C("HSET", "h", "a", "1", "b", "2")
        self.assertEqual(C("HGETEX", "h", "FIELDS", "2", "a", "zz"), [b"1", None])
        self.assertEqual(C("HGETEX", "h", "EX", "100", "FIELDS", "2", "a", "zz"), [b"1", None])
        self.assertEqual(C("HTTL", "h", "FIELDS", "3", "a", "b", "zz"), [100, -1, -2])
        self.assertEqual(C("HGETEX", "h", "PX", "200000", "FIELDS", "1", "b"), [b"2"])
        self.assertEqual(C("HTTL", "h", "FIELDS", "1", "b"), [200])
        self.assertEqual(C("HGETEX", "h", "EXAT", str(now_ms() // 1000 + 300), "FIELDS", "1", "b"), [b"2"])
        self.assertEqual(C("HGETEX", "h", "PXAT", str(now_ms() + 400000), "FIELDS", "1", "a"), [b"1"])
        # b's deadline is a whole second, 300 s after the one now_ms() was
        # in: 299 once that second has ended
        a, b = C("HTTL", "h", "FIELDS", "2", "a", "b")
        self.assertEqual(a, 400)
        self.assertIn(b, (299, 300))
        self.assertEqual(C("HGETEX", "h", "PERSIST", "FIELDS", "1", "a"), [b"1"])
        a, b = C("HTTL", "h", "FIELDS", "2", "a", "b")
        self.assertEqual(a, -1)
        self.assertIn(b, (299, 300))
        # a time in the past: the values are returned, then the fields go
        self.assertEqual(C("HGETEX", "h", "PXAT", "1", "FIELDS", "2", "a", "b"), [b"1", b"2"])
        self.assertEqual(C("EXISTS", "h"), 0)

    def test_hsetex(self):
        C = self.C
        self.assertEqual(C("HSETEX", "h", "FXX", "FIELDS", "1", "a", "1"), 0)
        self.assertEqual(C("EXISTS", "h"), 0)
        self.assertEqual(C("HSETEX", "h", "EX", "100", "FIELDS", "2", "a", "1", "b", "2"), 1)
        self.assertEqual(C("HTTL", "h", "FIELDS", "2", "a", "b"), [100, 100])
        self.assertEqual(C("HSETEX", "h", "FNX", "FIELDS", "2", "c", "3", "a", "9"), 0)
        self.assertEqual(C("HGET", "h", "a"), b"1")
        self.assertEqual(C("HSETEX", "h", "FNX", "PX", "50000", "FIELDS", "1", "c", "3"), 1)
        self.assertEqual(C("HSETEX", "h", "FXX", "KEEPTTL", "FIELDS", "2", "a", "7", "c", "8"), 1)
        self.assertEqual(C("HMGET", "h", "a", "c"), [b"7", b"8"])
        self.assertEqual(C("HTTL", "h", "FIELDS", "2", "a", "c"), [100, 50])
        # without an expiry option the fields lose their deadline (as HSET)
        self.assertEqual(C("HSETEX", "h", "FIELDS", "1", "a", "0"), 1)
        self.assertEqual(C("HTTL", "h", "FIELDS", "1", "a"), [-1])
        self.assertEqual(C("HSETEX", "h", "FXX", "FIELDS", "2", "a", "1", "nosuch", "1"), 0)
        self.assertEqual(C("HSETEX", "h", "EXAT", str(now_ms() // 1000 + 500), "FIELDS", "1", "e", "5"), 1)
        self.assertTrue(499 <= C("HTTL", "h", "FIELDS", "1", "e")[0] <= 500)
        self.assertEqual(C("HSETEX", "h", "PXAT", "1", "FIELDS", "1", "e", "5"), 1)
        self.assertEqual(C("HEXISTS", "h", "e"), 0)

    def test_hset_clears_hincrby_keeps(self):
        C = self.C
        C("HSET", "h", "a", "1", "b", "2", "c", "x")
        C("HEXPIRE", "h", "100", "FIELDS", "3", "a", "b", "c")
        C("HINCRBY", "h", "a", "5")
        C("HINCRBYFLOAT", "h", "b", "0.5")
        C("HSET", "h", "c", "y")
        self.assertEqual(C("HTTL", "h", "FIELDS", "3", "a", "b", "c"), [100, 100, -1])
        self.assertEqual(C("HMGET", "h", "a", "b", "c"), [b"6", b"2.5", b"y"])
        C("HDEL", "h", "a")
        C("HSET", "h", "a", "1")
        self.assertEqual(C("HTTL", "h", "FIELDS", "1", "a"), [-1])

    def test_rename_copy_move_keep_deadlines(self):
        C = self.C
        C("HSET", "h", "a", "1", "b", "2")
        # long enough that no stall between these commands reaches it
        C("HPEXPIRE", "h", "1500", "FIELDS", "1", "a")
        C("RENAME", "h", "h2")
        self.assertIn(C("HTTL", "h2", "FIELDS", "1", "a"), ([1], [2]))
        C("COPY", "h2", "h3")
        C("MOVE", "h3", "5")
        self.assertIn(C("HTTL", "h2", "FIELDS", "2", "a", "b"), ([1, -1], [2, -1]))
        C("SELECT", "5")
        self.assertIn(C("HTTL", "h3", "FIELDS", "2", "a", "b"), ([1, -1], [2, -1]))
        # the renamed, copied and moved hashes are actively expired too
        self.assertTrue(wait_until(lambda: C("HLEN", "h3") == 1, 5 * SLOW), C("HGETALL", "h3"))
        C("SELECT", "0")
        self.assertTrue(wait_until(lambda: C("HLEN", "h2") == 1, 5 * SLOW))

    def test_encodings(self):
        C = self.C
        C("HSET", "small", "a", "1")
        C("HEXPIRE", "small", "100", "FIELDS", "1", "a")
        self.assertEqual(C("OBJECT", "ENCODING", "small"), b"listpackex")
        C("HPERSIST", "small", "FIELDS", "1", "a")
        self.assertEqual(C("OBJECT", "ENCODING", "small"), b"listpackex")  # as Redis: it stays
        C("HSET", "small", "long", "x" * 100)
        self.assertEqual(C("OBJECT", "ENCODING", "small"), b"hashtable")
        self.assertEqual(C("HTTL", "small", "FIELDS", "1", "a"), [-1])
        C("HSET", "big", *[x for i in range(600) for x in ("f%d" % i, "v")])
        C("HEXPIRE", "big", "100", "FIELDS", "1", "f1")
        self.assertEqual(C("OBJECT", "ENCODING", "big"), b"hashtable")
        self.assertEqual(C("HTTL", "big", "FIELDS", "2", "f1", "f2"), [100, -1])

    def test_resp3(self):
        c = self.c
        c.call("HELLO", "3")
        c.call("HSET", "h", "a", "1")
        self.assertEqual(c.call_raw("HEXPIRE", "h", "100", "FIELDS", "2", "a", "b"), b"*2\r\n:1\r\n:-2\r\n")
        self.assertEqual(c.call_raw("HTTL", "h", "FIELDS", "1", "a"), b"*1\r\n:100\r\n")
        self.assertEqual(c.call_raw("HGETEX", "h", "FIELDS", "2", "a", "b"), b"*2\r\n$1\r\n1\r\n_\r\n")
        self.assertEqual(c.call_raw("HGETDEL", "h", "FIELDS", "1", "b"), b"*1\r\n_\r\n")
        self.assertEqual(c.call_raw("HSETEX", "h", "FIELDS", "1", "a", "2"), b":1\r\n")


class LazyExpiry(unittest.TestCase):
    """Active expiry off: every read must still refuse a field past its deadline."""

    def test_no_read_serves_an_expired_field(self):
        with Server("goblin") as srv, Raw(srv) as c:
            C = c.call
            C("DEBUG", "SET-ACTIVE-EXPIRE", "0")
            C("HSET", "h", "a", "1", "b", "2", "c", "3")
            C("HPEXPIRE", "h", "50", "FIELDS", "2", "a", "b")
            time.sleep(0.15)
            self.assertEqual(C("HLEN", "h"), 3)  # Redis 8.0 counts fields not yet deleted
            self.assertEqual(C("HGETALL", "h"), [b"c", b"3"])
            self.assertEqual(C("HKEYS", "h"), [b"c"])
            self.assertEqual(C("HVALS", "h"), [b"3"])
            self.assertEqual(C("HSCAN", "h", "0"), [b"0", [b"c", b"3"]])
            self.assertEqual(C("HRANDFIELD", "h", "-20"), [b"c"] * 20)
            self.assertEqual(C("HRANDFIELD", "h", "5", "WITHVALUES"), [b"c", b"3"])
            self.assertEqual(C("HTTL", "h", "FIELDS", "2", "a", "c"), [-2, -1])
            self.assertEqual(C("HPERSIST", "h", "FIELDS", "1", "a"), [-2])
            self.assertEqual(C("HLEN", "h"), 3)
            # one-field reads delete what they find expired
            self.assertEqual(C("HGET", "h", "a"), None)
            self.assertEqual(C("HLEN", "h"), 2)
            self.assertEqual(C("HEXISTS", "h", "b"), 0)
            self.assertEqual(C("HLEN", "h"), 1)
            C("HSET", "h", "d", "4")
            C("HPEXPIRE", "h", "20", "FIELDS", "2", "c", "d")
            time.sleep(0.1)
            self.assertEqual(C("HSTRLEN", "h", "c"), 0)
            self.assertEqual(C("HMGET", "h", "c", "d", "zz"), [None, None, None])
            self.assertEqual(C("EXISTS", "h"), 0)  # the last field took the key
            C("HSET", "n", "x", "5")
            C("HPEXPIRE", "n", "20", "FIELDS", "1", "x")
            time.sleep(0.1)
            self.assertEqual(C("HINCRBY", "n", "x", "1"), 1)  # an expired value counts as absent
            self.assertEqual(C("HTTL", "n", "FIELDS", "1", "x"), [-1])
            C("HPEXPIRE", "n", "20", "FIELDS", "1", "x")
            time.sleep(0.1)
            self.assertEqual(C("HSETNX", "n", "x", "new"), 1)
            self.assertEqual(C("HGET", "n", "x"), b"new")


class ActiveExpiryAndEvents(unittest.TestCase):
    def test_fields_vanish_untouched_with_events(self):
        with Server("goblin") as srv, Raw(srv) as c, Raw(srv) as sub:
            C = c.call
            C("CONFIG", "SET", "notify-keyspace-events", "KEA")
            sub.call("PSUBSCRIBE", "__keyevent@0__:*")
            C("HSET", "h", "a", "1", "b", "2")
            C("HPEXPIRE", "h", "100000", "FIELDS", "1", "a")  # (persisted long before)
            C("HPERSIST", "h", "FIELDS", "1", "a")
            C("HPEXPIRE", "h", "50", "FIELDS", "2", "a", "b")
            C("HEXPIRE", "h", "0", "FIELDS", "1", "zz")  # nothing happens: no event
            events = []
            deadline = time.time() + 5 * SLOW
            while time.time() < deadline and (not events or events[-1] != b"del"):
                msg = sub.read()[0]
                events.append(msg[2].split(b":")[-1])
            self.assertEqual(events, [b"hset", b"hexpire", b"hpersist", b"hexpire", b"hexpired", b"del"])
            self.assertEqual(C("EXISTS", "h"), 0)
            # HEXPIRE with a past time: hdel (then del)
            C("HSET", "k", "a", "1", "b", "2")
            C("HEXPIRE", "k", "0", "FIELDS", "1", "a")
            C("HEXPIRE", "k", "0", "FIELDS", "1", "b")
            got = [sub.read()[0][2].split(b":")[-1] for _ in range(4)]
            self.assertEqual(got, [b"hset", b"hdel", b"hdel", b"del"])

    def test_many_fields_are_reclaimed(self):
        with Server("goblin") as srv, Raw(srv) as c:
            n = 20000
            # far enough ahead that the 30,000 commands below land before
            # it on a loaded machine under ASan (CI once took 1.04 s)
            deadline = now_ms() + int(2000 * SLOW)
            c.send(b"".join(gbtest.encode("HSET", "h%d" % (i % 50), "f%d" % i, "v") for i in range(n)))
            [c.read() for _ in range(n)]
            c.send(b"".join(gbtest.encode("HPEXPIREAT", "h%d" % (i % 50), str(deadline), "FIELDS", "1", "f%d" % i)
                            for i in range(0, n, 2)))
            [c.read() for _ in range(0, n, 2)]
            self.assertLess(now_ms(), deadline)
            total = lambda: sum(c.call("HLEN", "h%d" % k) for k in range(50))
            self.assertEqual(total(), n)
            self.assertTrue(wait_until(lambda: total() == n // 2, 10 * SLOW, 0.05), total())


    def test_a_wave_expires_in_seconds(self):
        """200,000 fields with one deadline: the cycle keeps going while
        fields are due, within its time slices (a cap of 1,000 fields per
        cron tick would take 20 s at hz 10)."""
        with Server("goblin") as srv, Raw(srv) as c:
            hashes, per = 2000, 100
            fields = ["x%d" % i for i in range(per)]
            c.send(b"".join(gbtest.encode("HSET", "w%d" % h, *[x for f in fields for x in (f, "v")])
                            for h in range(hashes)))
            [c.read() for _ in range(hashes)]
            # (sending 2,000 commands on a loaded machine: seconds)
            deadline = now_ms() + int(4000 * SLOW)
            c.send(b"".join(gbtest.encode("HPEXPIREAT", "w%d" % h, str(deadline), "FIELDS", str(per), *fields)
                            for h in range(hashes)))
            [c.read() for _ in range(hashes)]
            self.assertLess(now_ms(), deadline)  # the cycle, not the command, deletes them
            while now_ms() < deadline:
                time.sleep(0.01)
            t0 = time.time()
            self.assertTrue(wait_until(lambda: c.call("DBSIZE") == 0, 6 * SLOW, 0.02), c.call("DBSIZE"))
            print("200,000 fields expired in %.2f s" % (time.time() - t0))


class Property(unittest.TestCase):
    """Random operations on a few hashes, against a model: a field is never
    returned at or after its deadline, and is returned before it."""

    def test_random_operations_against_a_model(self):
        rnd = random.Random(int(os.environ.get("GOBLIN_TEST_SEED", "28")))
        with Server("goblin") as srv, Raw(srv) as c:
            C = c.call
            model = {}  # key -> {field: (value, deadline_ms or None)}
            fields = ["f%d" % i for i in range(8)]
            keys = ["k0", "k1", "k2"]
            end = time.time() + 6
            margin = 15  # ms either side of a deadline where either answer is right
            checks = 0
            while time.time() < end:
                if rnd.random() < 0.05:
                    C("DEBUG", "SET-ACTIVE-EXPIRE", rnd.choice(["0", "1"]))
                key, f = rnd.choice(keys), rnd.choice(fields)
                h = model.setdefault(key, {})
                op = rnd.random()
                t = now_ms()
                if op < 0.3:
                    C("HSET", key, f, "v%d" % t)
                    h[f] = ("v%d" % t, None)
                elif op < 0.5:
                    ms = rnd.randint(1, 120)
                    res = C("HPEXPIRE", key, str(ms), "FIELDS", "1", f)
                    # alive when the command ran, which was before its reply
                    live = f in h and (h[f][1] is None or h[f][1][0] > now_ms() + margin)
                    if res == [1]:
                        # the deadline lies in [t + ms, now + ms]: the model keeps both ends.
                        # A field the model let go (expired) but nothing deleted yet takes
                        # it too, as in Redis 7.4: its value is then not known here.
                        h[f] = (h[f][0] if f in h else None, (t + ms, now_ms() + ms))
                    elif res == [-2]:
                        h.pop(f, None)
                    if live:
                        self.assertEqual(res, [1])
                elif op < 0.6:
                    res = C("HPERSIST", key, "FIELDS", "1", f)
                    if res == [1]:
                        h[f] = (h[f][0] if f in h else None, None)
                    elif res == [-2]:
                        h.pop(f, None)
                elif op < 0.65:
                    C("HDEL", key, f)
                    h.pop(f, None)
                else:
                    # Each command ran somewhere between the clock read just
                    # before it was sent and the one just after its reply: a
                    # field past its deadline at the first was gone, one
                    # before its deadline at the second was there, whatever
                    # stalls the machine put around the command.
                    before = now_ms()
                    got = dict(zip(*[iter(C("HGETALL", key))] * 2))
                    after = now_ms()
                    one = C("HGET", key, f)
                    t1 = now_ms()
                    for ff, (v, dl) in list(h.items()):
                        served = ff.encode() in got
                        if dl is None:
                            self.assertTrue(served, (key, ff))
                            if v is not None:
                                self.assertEqual(got[ff.encode()], v.encode())
                        elif before >= dl[1] + margin:
                            self.assertFalse(served, (key, ff, dl, before))  # never after the deadline
                        elif after < dl[0] - margin:
                            self.assertTrue(served, (key, ff, dl, after))
                    if f in h and h[f][1] is not None and after >= h[f][1][1] + margin:
                        self.assertIsNone(one)
                    checks += 1
                    # forget fields surely expired
                    for ff in [x for x, (v, dl) in h.items() if dl is not None and t1 >= dl[1] + margin]:
                        del h[ff]
            self.assertGreater(checks, 100)


class Persistence(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gbit-hfe-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def server(self, *args):
        return Server("goblin", args=list(args), dir=self.dir)

    def fill(self, C):
        t = now_ms()
        C("HSET", "small", "a", "1", "b", "2", "c", "3")
        C("HPEXPIREAT", "small", str(t + 500000), "FIELDS", "1", "a")
        C("HEXPIRE", "small", "1000", "FIELDS", "1", "b")
        C("HSET", "big", *[x for i in range(700) for x in ("f%d" % i, "v%d" % i)])
        C("HPEXPIREAT", "big", str(t + 600000), "FIELDS", "2", "f1", "f2")
        C("HSET", "soon", "x", "1", "y", "2")
        C("HPEXPIRE", "soon", "300", "FIELDS", "1", "x")
        C("HSETEX", "hx", "PX", "400000", "FIELDS", "1", "q", "1")
        return t

    # Relative deadlines (HEXPIRE, HSETEX PX) count down across a save,
    # a stop and a start: what that may take, on a loaded machine under a
    # sanitizer too.
    RESTART_S = 30 * SLOW

    def check(self, C, t):
        self.assertEqual(C("HPEXPIRETIME", "small", "FIELDS", "3", "a", "b", "c")[::2], [t + 500000, -1])
        self.assertTrue(1000 - self.RESTART_S <= C("HTTL", "small", "FIELDS", "1", "b")[0] <= 1000)
        self.assertEqual(C("HPEXPIRETIME", "big", "FIELDS", "3", "f1", "f2", "f3"), [t + 600000, t + 600000, -1])
        self.assertEqual(C("HLEN", "big"), 700)
        self.assertEqual(C("OBJECT", "ENCODING", "small"), b"listpackex")
        self.assertTrue(400000 - 1000 * self.RESTART_S < C("HPTTL", "hx", "FIELDS", "1", "q")[0] <= 400000)
        # the field whose deadline passed meanwhile is gone (expired after the restart)
        self.assertTrue(wait_until(lambda: C("HGETALL", "soon") == [b"y", b"2"], 5 * SLOW))

    def test_snapshot_keeps_deadlines(self):
        with self.server("--save", "") as srv, Raw(srv) as c:
            t = self.fill(c.call)
            self.assertEqual(c.call("SAVE"), b"OK")
        time.sleep(0.4)
        with self.server("--save", "") as srv, Raw(srv) as c:
            self.check(c.call, t)

    def test_append_only_log_keeps_deadlines(self):
        with self.server("--appendonly", "yes", "--save", "") as srv, Raw(srv) as c:
            C = c.call
            t = self.fill(C)
            C("DEBUG", "SET-ACTIVE-EXPIRE", "0")
            C("HSET", "lazy", "a", "1", "b", "2")
            C("HPEXPIRE", "lazy", "30", "FIELDS", "1", "a")
            time.sleep(0.1)
            self.assertEqual(C("HGET", "lazy", "a"), None)  # lazily deleted: HDEL in the log
            C("HSET", "lazy", "a", "new")  # ... before this, which a replayed HPEXPIRE would expire
            C("HGETDEL", "lazy", "FIELDS", "1", "b")
            C("HGETEX", "hx", "PERSIST", "FIELDS", "1", "q")
            C("HGETEX", "hx", "EX", "800", "FIELDS", "1", "q")
            srv.kill()
        time.sleep(0.4)
        with self.server("--appendonly", "yes", "--save", "") as srv, Raw(srv) as c:
            C = c.call
            self.assertEqual(C("HGETALL", "lazy"), [b"a", b"new"])
            self.assertEqual(C("HTTL", "lazy", "FIELDS", "1", "a"), [-1])
            self.assertTrue(800 - self.RESTART_S <= C("HTTL", "hx", "FIELDS", "1", "q")[0] <= 800)
            C("HSETEX", "hx", "PX", "400000", "FIELDS", "1", "q", "1")
            self.check(C, t)
            # a rewrite (the base is a snapshot) keeps them too
            C("BGREWRITEAOF")
            self.assertTrue(wait_until(
                lambda: gbtest.parse_info(C("INFO", "persistence"))["aof_rewrite_in_progress"] == "0", 10 * SLOW))
            srv.kill()
        with self.server("--appendonly", "yes", "--save", "") as srv, Raw(srv) as c:
            self.check(c.call, t)


class PlainHashesUnchanged(unittest.TestCase):
    """A hash without field deadlines has no wrapper: its MEMORY USAGE is
    the plain encoding's (the figure before this feature, checked by hand
    against the previous build: docs/hash-field-expiry.md), and the first
    deadline is what adds the index."""

    def test_memory_usage_of_plain_hashes(self):
        with Server("goblin") as srv, Raw(srv) as c:
            for k, k2, n in (("s1", "s2", 50), ("b1", "b2", 1000)):
                c.call("HSET", k, *[x for i in range(n) for x in ("f%d" % i, "v")])
                c.call("HSET", k2, *[x for i in range(n) for x in ("f%d" % i, "v")])
                plain = c.call("MEMORY", "USAGE", k)
                c.call("HEXPIRE", k, "100", "FIELDS", "1", "f1")
                self.assertGreater(c.call("MEMORY", "USAGE", k), plain)
                plain2 = c.call("MEMORY", "USAGE", k2)
                c.call("HPERSIST", k2, "FIELDS", "1", "f1")  # no deadline: no conversion
                c.call("HTTL", k2, "FIELDS", "1", "f1")
                self.assertEqual(c.call("MEMORY", "USAGE", k2), plain2)
                self.assertIn(c.call("OBJECT", "ENCODING", k2), (b"listpack", b"hashtable"))


class DeadlineWithItsField(unittest.TestCase):
    """A field's deadline is stored with the field (docs/hash-field-expiry.md,
    Representation): a TTL adds a few bytes per field whatever the field's
    name -- an 8-byte slot of the deadline array in a listpackex, a 10-byte
    trailer in the record and a heap slot in a hash table -- where a copy of
    the name (the sorted-set index before) cost more than the 40-byte names
    used here. Redis 7.4's own cost: 10-13 bytes (a third listpack entry; a
    16-byte ExpireMeta in an hfield). HPERSIST gives a listpackex's back;
    a hash table's records keep their trailers, as Redis's fields keep
    their ExpireMeta."""

    def test_a_ttl_costs_a_few_bytes_per_field(self):
        with Server("goblin") as srv, Raw(srv) as c:
            for key, n, most, kept, enc in (("small", 100, 12, 0.5, b"listpackex"),
                                            ("big", 5000, 32, 16, b"hashtable")):
                names = ["field-%034d" % i for i in range(n)]
                c.call("HSET", key, *[x for f in names for x in (f, "v")])
                plain = c.call("MEMORY", "USAGE", key, "SAMPLES", "0")
                c.call("HPEXPIREAT", key, "4102444800000", "FIELDS", str(n), *names)
                self.assertEqual(c.call("OBJECT", "ENCODING", key), enc)
                added = (c.call("MEMORY", "USAGE", key, "SAMPLES", "0") - plain) / n
                self.assertLessEqual(added, most, "%s: a TTL adds %.1f bytes per field" % (key, added))
                c.call("HPERSIST", key, "FIELDS", str(n), *names)
                kept_now = (c.call("MEMORY", "USAGE", key, "SAMPLES", "0") - plain) / n
                self.assertLessEqual(kept_now, kept, "%s: after HPERSIST %.1f bytes per field" % (key, kept_now))


if __name__ == "__main__":
    gbtest.run_tests()
