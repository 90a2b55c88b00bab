"""Streams across persistence: a snapshot and a restart, DEBUG RELOAD, the
append-only log replayed at start-up (XREADGROUP's and XAUTOCLAIM's effects as
propagated; node sizes are a setting, not logged, so the replaying server is
started with the same one), and a log rewrite (its base is a snapshot). Each keeps the
entries, node boundaries, last ID, entries-added, max-deleted ID, groups and
their last-delivered IDs and entries-read, the pending lists with delivery
times and counts, and the consumers with what each owns: XINFO STREAM FULL
reads all of it back and must be the same before and after.
"""

import os
import shutil
import tempfile
import unittest

import gbtest
from gbtest import Raw, Server, SLOW, wait_until, parse_info


def build(c, n=700):
    """A stream over several nodes (small node limits), with deletions, a
    trim, an explicit max-deleted ID, two groups, pending entries split over
    consumers, an acknowledged entry, a claimed one and an empty consumer."""
    c.call("CONFIG", "SET", "stream-node-max-entries", "16")
    for i in range(n):
        c.send_cmd("XADD", "s", "%d-%d" % (1000 + i // 3, i % 3), "f", "v%d" % i, "g%d" % (i % 4), "x" * (i % 9))
    for _ in range(n):
        c.read()
    for i in range(0, n, 7):
        c.call("XDEL", "s", "%d-%d" % (1000 + i // 3, i % 3))
    c.call("XTRIM", "s", "MINID", "1010")
    c.call("XGROUP", "CREATE", "s", "g1", "0")
    c.call("XGROUP", "CREATE", "s", "g2", "$", "ENTRIESREAD", "5")
    c.call("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "20", "STREAMS", "s", ">")
    c.call("XREADGROUP", "GROUP", "g1", "bob", "COUNT", "10", "STREAMS", "s", ">")
    c.call("XACK", "s", "g1", "1010-0", "1010-1")
    c.call("XCLAIM", "s", "g1", "bob", "0", "1011-0", "RETRYCOUNT", "4")
    c.call("XGROUP", "CREATECONSUMER", "s", "g1", "carol")
    c.call("XADD", "t", "MAXLEN", "2", "*", "a", "1")
    c.call("XADD", "t", "*", "a", "2")
    c.call("XADD", "t", "*", "a", "3")
    c.call("XGROUP", "CREATE", "empty", "g", "$", "MKSTREAM")
    c.call("XSETID", "empty", "5-5", "ENTRIESADDED", "9", "MAXDELETEDID", "3-0")


def state(c, times=True):
    """Everything a stream holds, as XINFO STREAM FULL and XRANGE say."""
    out = []
    for key in (b"s", b"t", b"empty"):
        full = c.call("XINFO", "STREAM", key, "FULL")
        if not times:
            full = strip_seen(full)
        out.append((key, full, c.call("XRANGE", key, "-", "+")))
    return out


def field(reply, name):
    return reply[reply.index(name) + 1]


def strip_seen(x):
    """A consumer's seen-time is the moment the replayed command ran."""
    if isinstance(x, list):
        out, skip = [], False
        for i, v in enumerate(x):
            if skip:
                skip = False
                continue
            if v == b"seen-time":
                skip = True
                continue
            out.append(strip_seen(v))
        return out
    return x


class StreamPersistence(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gbit-stream-persist-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def server(self, *args):
        return Server("goblin", args=list(args), dir=self.dir)

    def test_snapshot_and_restart(self):
        with self.server("--save", "") as srv, Raw(srv) as c:
            build(c)
            before = state(c)
            self.assertGreater(field(before[0][1], b"radix-tree-keys"), 10, "several nodes")
            self.assertEqual(c.call("SAVE"), b"OK")
        with self.server("--save", "") as srv, Raw(srv) as c:
            self.assertEqual(state(c), before)
            self.assertEqual(c.call("TYPE", "s"), b"stream")

    def test_debug_reload(self):
        with self.server("--save", "") as srv, Raw(srv) as c:
            build(c)
            before = state(c)
            self.assertEqual(c.call("DEBUG", "RELOAD"), b"OK")
            self.assertEqual(state(c), before)
            # The reloaded stream keeps counting: entries-added goes on from 9.
            c.call("XADD", "empty", "*", "a", "b")
            self.assertEqual(field(c.call("XINFO", "STREAM", "empty"), b"entries-added"), 10)

    def test_log_replay_and_rewrite(self):
        with self.server("--appendonly", "yes", "--save", "", "--stream-node-max-entries", "16") as srv, Raw(srv) as c:
            build(c)
            c.call("XAUTOCLAIM", "s", "g1", "dave", "0", "0-0", "COUNT", "3")
            before = state(c, times=False)
        with self.server("--appendonly", "yes", "--save", "", "--stream-node-max-entries", "16") as srv, Raw(srv) as c:
            self.assertEqual(state(c, times=False), before)
            self.assertTrue(wait_until(lambda: parse_info(c.call("INFO", "persistence"))["aof_rewrite_in_progress"] == "0",
                                       10 * SLOW))
            self.assertEqual(c.call("BGREWRITEAOF"), b"Background append only file rewriting started")
            self.assertTrue(wait_until(lambda: parse_info(c.call("INFO", "persistence"))["aof_rewrite_in_progress"] == "0",
                                       10 * SLOW))
            exact = state(c)
        with self.server("--appendonly", "yes", "--save", "", "--stream-node-max-entries", "16") as srv, Raw(srv) as c:
            self.assertEqual(state(c), exact)


if __name__ == "__main__":
    gbtest.run_tests()
