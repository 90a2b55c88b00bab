"""list-compress-depth: goblin-core against redis-server 7.0.15.

* CONFIG GET/SET list-compress-depth: the default, the range 0..INT_MAX and
  the error replies, byte for byte;
* a CONFIG SET at run time changes lists created afterwards only (Redis's
  quicklist copies the depth at creation): DEBUG OBJECT's ql_compressed, as
  Redis 7.0 prints it, and goblin's compressed_segments count;
* every list command on large compressed lists (LINDEX, LRANGE, LSET,
  LINSERT, LREM, LPOS, LTRIM, pops, LMOVE, COPY, DEBUG RELOAD) gives the
  same replies as redis-server with the same settings, including the seeded
  random streams of test_lists_differential run with compression on;
* MEMORY USAGE of a compressed list counts the compressed bytes (at most
  half the plain list's for repetitive values);
* a snapshot restart and an append-only-log restart bring compressed lists
  back with the same contents, compressed again.
"""

import os
import shutil
import tempfile
import unittest

import gbtest
from gbtest import Err, Raw, Server
import test_lists_differential as ldiff

N = 20000  # values in the big lists: ~40 leaves of 8 KiB


def value(i):
    return b"user:%06d:event" % i


def debug_fields(conn, key):
    line = conn.call("DEBUG", "OBJECT", key).decode()
    return dict(f.split(":", 1) for f in line.split(" ") if ":" in f)


class ConfigAndDifferential(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        gbtest.require_redis()
        cls.redis = Server("redis")
        cls.goblin = Server("goblin")

    @classmethod
    def tearDownClass(cls):
        cls.redis.cleanup()
        cls.goblin.cleanup()

    def both(self):
        return [("redis", Raw(self.redis)), ("goblin", Raw(self.goblin))]

    def setUp(self):
        for _, c in self.both():
            c.call("FLUSHALL")
            c.call("CONFIG", "SET", "list-compress-depth", "0")
            c.call("CONFIG", "SET", "list-max-listpack-size", "-2")
            c.close()

    def same(self, *argv):
        """Sends argv to both servers; the raw replies must be identical."""
        replies = []
        for name, c in self.both():
            replies.append(c.call_raw(*argv))
            c.close()
        self.assertEqual(replies[0], replies[1], "%r: redis %r, goblin %r" % (argv, replies[0][:200], replies[1][:200]))
        return replies[0]

    def test_config_get_set(self):
        self.same("CONFIG", "GET", "list-compress-depth")
        for v in ["3", "0", "2147483647", "65536", "1"]:
            self.same("CONFIG", "SET", "list-compress-depth", v)
            self.same("CONFIG", "GET", "list-compress-depth")
        for bad in ["-1", "2147483648", "abc", "1.5", ""]:
            self.same("CONFIG", "SET", "list-compress-depth", bad)
        self.same("CONFIG", "GET", "list-compress-depth")

    def test_setting_applies_to_new_lists(self):
        vals = [value(i) for i in range(N)]
        for name, c in self.both():
            with c:
                c.call("CONFIG", "SET", "list-compress-depth", "1")
                c.call("RPUSH", "z", *vals)
                c.call("RPUSH", "small", "a", "b")
                c.call("CONFIG", "SET", "list-compress-depth", "0")
                c.call("RPUSH", "plain", *vals)
                c.call("RPUSH", "z", *vals[:2000])  # an old list keeps its setting
                self.assertEqual(debug_fields(c, "z")["ql_compressed"], "1", name)
                self.assertEqual(debug_fields(c, "small")["ql_compressed"], "1", name)
                self.assertEqual(debug_fields(c, "plain")["ql_compressed"], "0", name)
                if name == "goblin":
                    self.assertGreater(int(debug_fields(c, "z")["compressed_segments"]), 20)
                    self.assertEqual(debug_fields(c, "plain")["compressed_segments"], "0")
                    mz = c.call("MEMORY", "USAGE", "z", "SAMPLES", "0")
                    mp = c.call("MEMORY", "USAGE", "plain", "SAMPLES", "0")
                    # z holds 10% more values than plain and still takes under half
                    self.assertLess(mz * 2, mp, "compressed %d, plain %d" % (mz, mp))
                # COPY keeps the source's setting, as quicklistDup does
                c.call("COPY", "z", "z2")
                self.assertEqual(debug_fields(c, "z2")["ql_compressed"], "1", name)
                if name == "goblin":
                    self.assertGreater(int(debug_fields(c, "z2")["compressed_segments"]), 20)
        self.same("LRANGE", "z", "0", "-1")
        self.same("LRANGE", "z2", "0", "-1")

    def test_commands_on_compressed_lists(self):
        self.same("CONFIG", "SET", "list-compress-depth", "2")
        self.same("CONFIG", "SET", "list-max-listpack-size", "-1")
        vals = [value(i) for i in range(N)]
        self.same("RPUSH", "l", *vals)
        mid = N // 2
        script = [
            ("LINDEX", "l", str(mid)), ("LINDEX", "l", str(-mid)), ("LINDEX", "l", "7777"),
            ("LRANGE", "l", str(mid), str(mid + 99)), ("LRANGE", "l", str(-mid - 50), str(-mid + 50)),
            ("LSET", "l", str(mid), "replaced"), ("LSET", "l", "123", "x" * 300),
            ("LINSERT", "l", "BEFORE", value(mid + 7), "ins"), ("LINSERT", "l", "AFTER", value(3000), "ins2"),
            ("LPOS", "l", "replaced"), ("LPOS", "l", value(15000), "RANK", "-1"),
            ("LREM", "l", "0", value(9000)), ("LREM", "l", "-1", value(12000)),
            ("RPUSH", "l", "dup", "dup"), ("LPUSH", "l", "dup"), ("LREM", "l", "2", "dup"),
            ("LPOP", "l", "3000"), ("RPOP", "l", "3000"), ("LMOVE", "l", "l", "LEFT", "RIGHT"),
            ("LTRIM", "l", "100", "-100"), ("LLEN", "l"),
            ("COPY", "l", "c"), ("LRANGE", "c", "5000", "5100"),
            ("LINDEX", "l", "6000"), ("LRANGE", "l", "0", "-1"),
        ]
        for argv in script:
            self.same(*argv)
        with Raw(self.goblin) as c:
            self.assertGreater(int(debug_fields(c, "l")["compressed_segments"]), 5)
            self.assertEqual(c.call("DEBUG", "RELOAD"), b"OK")
            self.assertGreater(int(debug_fields(c, "l")["compressed_segments"]), 5)
        self.same("LRANGE", "l", "0", "-1")

    def test_random_streams_with_compression(self):
        """test_lists_differential's seeded streams against redis-server, both
        with list-compress-depth 1 and list-max-listpack-size 4 (many small
        nodes, so the interior ones are compressed and inflated all the time)."""
        goblins = [("segmented/4/d1", Server("goblin", args=["--list-max-listpack-size", "4",
                                                             "--list-compress-depth", "1"])),
                   ("segmented/4/d2", Server("goblin", args=["--list-max-listpack-size", "4",
                                                             "--list-compress-depth", "2"]))]
        ref = Server("redis", args=["--list-max-listpack-size", "4", "--list-compress-depth", "1"])
        try:
            holder = type("H", (), {})()
            holder.servers = [("redis", ref)] + goblins
            for seed in range(101, 104):
                with self.subTest(seed=seed):
                    st = ldiff.Stream(holder, seed)
                    try:
                        st.run(800)
                    finally:
                        st.close()
            for name, srv in goblins:
                self.assertTrue(srv.alive(), name)
        finally:
            ref.cleanup()
            for _, srv in goblins:
                srv.cleanup()


class PmaServer(unittest.TestCase):
    def test_compressed_lists_go_segmented(self):
        """--list-implementation pma: a list created with list-compress-depth
        set goes segmented (only segmented leaves are compressed), one created
        without it keeps the PMA."""
        with Server("goblin", args=["--list-implementation", "pma"]) as srv, Raw(srv) as c:
            vals = [value(i) for i in range(N)]
            c.call("RPUSH", "p", *vals)
            c.call("CONFIG", "SET", "list-compress-depth", "1")
            c.call("RPUSH", "z", *vals)
            self.assertEqual(debug_fields(c, "p")["representation"], "pma")
            fields = debug_fields(c, "z")
            self.assertEqual(fields["representation"], "segmented")
            self.assertGreater(int(fields["compressed_segments"]), 20)
            self.assertEqual(c.call("LRANGE", "z", "0", "-1"), vals)


class Restarts(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gbit-listz-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def server(self, *args):
        return Server("goblin", args=["--list-compress-depth", "1"] + list(args), dir=self.dir)

    def fill(self, c):
        c.call("RPUSH", "l", *[value(i) for i in range(N)])
        c.call("LSET", "l", str(N // 2), "middle")
        c.call("LPUSH", "l", "head")
        self.assertGreater(int(debug_fields(c, "l")["compressed_segments"]), 20)
        return c.call("LRANGE", "l", "0", "-1")

    def check(self, c, want):
        self.assertEqual(c.call("LRANGE", "l", "0", "-1"), want)
        fields = debug_fields(c, "l")
        self.assertEqual(fields["ql_compressed"], "1")
        self.assertGreater(int(fields["compressed_segments"]), 20)

    def test_snapshot_restart(self):
        with self.server("--save", "") as srv, Raw(srv) as c:
            want = self.fill(c)
            self.assertEqual(c.call("SAVE"), b"OK")
        with self.server("--save", "") as srv, Raw(srv) as c:
            self.check(c, want)

    def test_log_restart(self):
        with self.server("--save", "", "--appendonly", "yes", "--appendfsync", "always") as srv, Raw(srv) as c:
            want = self.fill(c)
            srv.kill()  # SIGKILL: only the log brings the list back
        with self.server("--save", "", "--appendonly", "yes") as srv, Raw(srv) as c:
            self.check(c, want)
            self.assertEqual(c.call("BGREWRITEAOF")[:10], b"Background")
            gbtest.wait_until(lambda: c.call("INFO", "persistence").find(b"aof_rewrite_in_progress:0") >= 0, 20)
        with self.server("--save", "", "--appendonly", "yes") as srv, Raw(srv) as c:
            self.check(c, want)


if __name__ == "__main__":
    gbtest.run_tests()
