#!/usr/bin/env python3
"""CLUSTER GETKEYSINSLOT in Redis 7.0's order (issue 30), byte for byte
with a cluster-enabled redis-server: each slot lists its keys newest first
(Redis threads a list through its dict entries and adds at the head), an
overwrite, a new expiry or PERSIST keeps a key's place, DEL then a new SET
moves it first, RENAME and COPY ... REPLACE and RESTORE ... REPLACE make
the destination new, and a load from an RDB file lists the file's keys in
reverse."""
import os
import random
import shutil
import unittest

import gbtest
from gbtest import Raw, Server, wait_until
from test_cluster import TIMEOUT, call, cluster_server, keyslot, state_ok

SLOT = keyslot(b"t")
OTHER_SLOT = keyslot(b"u")


def serving(srv):
    with Raw(srv) as c:
        c.call("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
    assert wait_until(lambda: state_ok(srv), TIMEOUT), srv.kind


class KeysInSlotOrder(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        gbtest.require_redis()
        cls.srv = {}
        try:
            for kind in ("goblin", "redis"):
                cls.srv[kind] = cluster_server(kind)
                serving(cls.srv[kind])
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        for s in cls.srv.values():
            s.cleanup()

    def setUp(self):
        for s in self.srv.values():
            with Raw(s) as c:
                c.call("FLUSHALL")

    def run_both(self, cmds):
        """Runs cmds on both servers; the replies must match."""
        for cmd in cmds:
            out = {}
            for kind, s in self.srv.items():
                with Raw(s) as c:
                    out[kind] = c.call_raw(*cmd)
            self.assertEqual(out["goblin"], out["redis"], cmd)

    def same_listing(self, slot, counts=(0, 1, 2, 5, 13, 1000)):
        for count in counts:
            self.run_both([("CLUSTER", "GETKEYSINSLOT", str(slot), str(count))])
        self.run_both([("CLUSTER", "COUNTKEYSINSLOT", str(slot))])

    def test_adds_deletes_and_re_adds(self):
        self.run_both([("SET", "{t}k%d" % i, "v%d" % i) for i in range(20)])
        self.run_both([("SET", "{u}k%d" % i, "v") for i in range(5)])
        self.same_listing(SLOT)
        self.run_both([("DEL", "{t}k3"), ("DEL", "{t}k7", "{t}k19"), ("GETDEL", "{t}k0"), ("UNLINK", "{t}k12")])
        self.same_listing(SLOT)
        self.run_both([("SET", "{t}k7", "again"), ("SET", "{t}k3", "again"), ("MSET", "{t}m1", "1", "{t}m2", "2")])
        self.same_listing(SLOT)
        self.same_listing(OTHER_SLOT)

    def test_changes_that_keep_a_keys_place(self):
        self.run_both([("SET", "{t}k%d" % i, "v%d" % i) for i in range(12)])
        long_value = "x" * 700  # past the inline limit: a new record for the same key
        self.run_both([("SET", "{t}k1", "other"), ("SET", "{t}k2", long_value), ("SET", "{t}k2", "12"),
                       ("INCR", "{t}k2"), ("APPEND", "{t}k3", long_value), ("SETRANGE", "{t}k4", "600", "z"),
                       ("EXPIRE", "{t}k5", "1000"), ("PEXPIRE", "{t}k5", "2000000"), ("PERSIST", "{t}k5"),
                       ("SET", "{t}k6", "w", "EX", "1000"), ("SET", "{t}k6", "w2", "KEEPTTL"),
                       ("GETEX", "{t}k7", "PERSIST"), ("GETEX", "{t}k8", "EX", "500"), ("SET", "{t}k9", "w")])
        self.same_listing(SLOT)
        # a value of another type replaced by SET keeps the place too
        self.run_both([("DEL", "{t}k10"), ("RPUSH", "{t}k10", "a", "b"), ("SET", "{t}k0", "z"),
                       ("SET", "{t}k10", "now a string")])
        self.same_listing(SLOT)

    def test_store_commands_overwrite_in_place(self):
        self.run_both([("SADD", "{t}s1", "x", "y"), ("SADD", "{t}s2", "y", "z"), ("GEOADD", "{t}g", "1", "1", "m")])
        self.run_both([("SET", "{t}k%d" % i, "v%d" % i) for i in range(8)])
        self.run_both([("SET", "{t}k7", "v", "PX", "1")])
        self.assertTrue(wait_until(lambda: all(call(s, "PTTL", "{t}k7") == -2 for s in self.srv.values()), TIMEOUT))
        self.run_both([("SUNIONSTORE", "{t}k1", "{t}s1", "{t}s2"), ("SINTERSTORE", "{t}k2", "{t}s1", "{t}s2"),
                       ("SORT", "{t}s1", "ALPHA", "STORE", "{t}k3"), ("ZUNIONSTORE", "{t}k4", "1", "{t}s1"),
                       ("GEOSEARCHSTORE", "{t}g", "{t}g", "FROMLONLAT", "1", "1", "BYRADIUS", "10", "km"),
                       ("SDIFFSTORE", "{t}k5", "{t}s1", "{t}s1"),  # empty: deleted
                       ("SUNIONSTORE", "{t}k7", "{t}s1"),  # expired before: a new key
                       ("ZRANGESTORE", "{t}k6", "{t}k4", "0", "-1")])
        self.same_listing(SLOT)

    def test_moves_and_restores(self):
        self.run_both([("SET", "{t}k%d" % i, "v%d" % i) for i in range(10)])
        self.run_both([("RENAME", "{t}k1", "{t}renamed"), ("RENAME", "{t}k2", "{t}k8"),
                       ("RENAMENX", "{t}k3", "{t}k9"), ("RENAMENX", "{t}k4", "{t}fresh"),
                       ("COPY", "{t}k5", "{t}copy"), ("COPY", "{t}k6", "{t}k0", "REPLACE"),
                       ("COPY", "{t}k7", "{t}k5")])
        self.same_listing(SLOT)
        for kind, s in self.srv.items():
            with Raw(s) as c:
                payload = c.call("DUMP", "{t}k9")
                self.assertEqual(c.call("RESTORE", "{t}k6", "0", payload, "REPLACE"), b"OK", kind)
                self.assertEqual(c.call("RESTORE", "{t}restored", "0", payload), b"OK", kind)
        self.same_listing(SLOT)
        self.run_both([("EXPIRE", "{t}k7", "0"), ("SET", "{t}k8", "gone", "PX", "1")])
        self.assertTrue(wait_until(lambda: all(call(s, "EXISTS", "{t}k8") == 0 for s in self.srv.values()),
                                   TIMEOUT))
        self.same_listing(SLOT)

    def test_random_operations(self):
        """Random writes on 16 keys of one slot, in batches, the listing
        compared after each batch (a fixed seed: the same run each time)."""
        rnd = random.Random(30)
        keys = ["{t}r%d" % i for i in range(16)]
        ops = [lambda k: ("SET", k, "v"), lambda k: ("SET", k, "x" * rnd.choice((3, 100, 700))),
               lambda k: ("DEL", k), lambda k: ("EXPIRE", k, "1000"), lambda k: ("PERSIST", k),
               lambda k: ("RENAME", k, rnd.choice(keys)), lambda k: ("COPY", k, rnd.choice(keys), "REPLACE"),
               lambda k: ("SADD", k, "m"), lambda k: ("SUNIONSTORE", k, rnd.choice(keys)),
               lambda k: ("INCR", k), lambda k: ("APPEND", k, "y" * 600), lambda k: ("GETDEL", k)]
        for _ in range(8):
            self.run_both([rnd.choice(ops)(rnd.choice(keys)) for _ in range(40)])
            self.same_listing(SLOT, counts=(3, 100))

    def test_loaded_from_rdb(self):
        """redis-server reloads its own file (DEBUG RELOAD NOSAVE);
        goblin-core starts on that file: the same order, the file's keys in
        reverse."""
        redis = self.srv["redis"]
        with Raw(redis) as c:
            for i in range(30):
                c.call("SET", "{t}k%d" % i, "v%d" % i)
            for i in range(0, 30, 4):
                c.call("DEL", "{t}k%d" % i)
            c.call("RPUSH", "{t}list", "a")
            # saved, then loaded as it is (a second save would write the
            # reloaded table, whose buckets chain their keys in reverse)
            self.assertEqual(c.call("SAVE"), b"OK")
            self.assertEqual(c.call("DEBUG", "RELOAD", "NOSAVE"), b"OK")
            expected = c.call_raw("CLUSTER", "GETKEYSINSLOT", str(SLOT), "1000")
        loaded = cluster_server("goblin", dir=None)
        try:
            loaded.stop()
            shutil.copy(os.path.join(redis.dir, "dump.rdb"), os.path.join(loaded.dir, "dump.rdb"))
            loaded = Server("goblin", args=["--cluster-enabled", "yes", "--cluster-node-timeout", "500",
                                            "--dbfilename", "dump.rdb"], dir=loaded.dir, port=loaded.port)
            with Raw(loaded) as c:
                self.assertEqual(c.call("DBSIZE"), 23)
                self.assertEqual(c.call_raw("CLUSTER", "GETKEYSINSLOT", str(SLOT), "1000"), expected)
        finally:
            loaded.cleanup()
            shutil.rmtree(loaded.dir, ignore_errors=True)


if __name__ == "__main__":
    gbtest.run_tests()
