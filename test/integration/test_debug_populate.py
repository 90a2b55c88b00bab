"""DEBUG POPULATE against redis-server 7.0, reply for reply: the keys and
their values (texts cut at Redis's 128-byte buffer, values cut or padded
with zero bytes to the size asked), keys that exist left as they are,
WATCH seeing the new keys, and the argument errors. Then, goblin-core
only, the two refusals where redis-server dies: a count whose key table
could not be allocated, and a value size past proto-max-bulk-len.
"""

import gbtest
from gbtest import Raw, GoblinAndRedisCase


class Populate(GoblinAndRedisCase):
    def setUp(self):
        for srv in (self.goblin, self.redis):
            with Raw(srv) as c:
                c.call("FLUSHALL")

    def both(self, *cmd):
        """The same commands on both servers; the replies must be equal."""
        with Raw(self.goblin) as g, Raw(self.redis) as r:
            got, want = g.call_raw(*cmd), r.call_raw(*cmd)
        self.assertEqual(got, want, "%r: goblin %r, redis %r" % (cmd, got, want))
        return got

    def keyspace(self, srv):
        """Every key with its type and its value where it is a string."""
        with Raw(srv) as c:
            out = []
            for k in sorted(c.call("KEYS", "*")):
                t = c.call("TYPE", k)
                out.append((k, t, c.call("GET", k) if t == b"string" else None))
            return out

    def test_keys_and_values(self):
        for cmd in [("RPUSH", "key:20", "a"), ("SET", "key:4", "mine"), ("DEBUG", "POPULATE", "30"),
                    ("DEBUG", "POPULATE", "5", "p"), ("DEBUG", "POPULATE", "3", "z", "12"),
                    ("DEBUG", "POPULATE", "3", "w", "3"), ("DEBUG", "POPULATE", "12", "", "0"),
                    ("DEBUG", "POPULATE", "2", b"n\x00ul"), ("DEBUG", "POPULATE", "3", "L" * 200),
                    ("DEBUG", "POPULATE", "0"), ("DBSIZE",), ("OBJECT", "ENCODING", "key:7"),
                    ("OBJECT", "ENCODING", "z:1"), ("STRLEN", "z:2"), ("TTL", "key:1")]:
            self.both(*cmd)
        self.assertEqual(self.keyspace(self.goblin), self.keyspace(self.redis))
        # The 200-byte prefix is cut to 127 bytes: its three keys are one.
        with Raw(self.goblin) as c:
            self.assertEqual(c.call("GET", "L" * 127), b"value:0")
            self.assertEqual(c.call("GET", "z:1"), b"value:1" + b"\0" * 5)

    def test_watch_sees_the_new_keys(self):
        for srv in (self.goblin, self.redis):
            with Raw(srv) as w, Raw(srv) as other:
                w.call("WATCH", "key:1")
                self.assertEqual(other.call("DEBUG", "POPULATE", "3"), b"OK")
                w.call("MULTI")
                w.call("GET", "key:1")
                self.assertIsNone(w.call("EXEC"), srv)

    def test_argument_errors(self):
        for cmd in [("DEBUG", "POPULATE"), ("DEBUG", "POPULATE", "-1"), ("DEBUG", "POPULATE", "x"),
                    ("DEBUG", "POPULATE", "99999999999999999999"), ("DEBUG", "POPULATE", "1", "p", "-2"),
                    ("DEBUG", "POPULATE", "1", "p", "1.5"), ("DEBUG", "POPULATE", "1", "p", "3", "4"),
                    ("DEBUG", "populate", "2", "p", "3", "4"), ("DEBUG", "NOPE"), ("DBSIZE",)]:
            self.both(*cmd)

    def test_refusals_where_redis_dies(self):
        """redis-server 7.0.15 exits on both (tried by hand: its key table's
        allocation for 10^15 keys, or a value of 10^12 bytes)."""
        with Raw(self.goblin) as c:
            self.assertEqual(c.call_raw("DEBUG", "POPULATE", str(10 ** 15)), b"-ERR OOM in dictTryExpand\r\n")
            self.assertEqual(c.call_raw("DEBUG", "POPULATE", str(2 ** 63 - 1)), b"-ERR OOM in dictTryExpand\r\n")
            self.assertEqual(c.call_raw("DEBUG", "POPULATE", "1", "big", str(10 ** 12)),
                             b"-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n")
            self.assertEqual(c.call("DBSIZE"), 0)
            # Up to the limit it is a value like any other.
            c.call("CONFIG", "SET", "proto-max-bulk-len", "1mb")
            try:
                self.assertEqual(c.call("DEBUG", "POPULATE", "1", "big", str(1 << 20)), b"OK")
                self.assertEqual(c.call("STRLEN", "big:0"), 1 << 20)
            finally:
                c.call("CONFIG", "SET", "proto-max-bulk-len", "512mb")


if __name__ == "__main__":
    gbtest.run_tests()
