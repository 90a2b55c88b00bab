#!/usr/bin/env python3
"""Replication in every pairing, with the real binaries: goblin-core ->
goblin-core under write load from several clients, chains (redis-server ->
goblin-core -> redis-server, goblin -> goblin -> goblin), and failovers by
promotion where the siblings and the old primary continue with a partial
resync from the promoted one's secondary replication ID (Redis's PSYNC2),
goblin and redis-server on either side."""
import threading
import time
import unittest

import gbtest
from gbtest import Server, wait_until
from test_replication_replica import TIMEOUT, assert_same_data, info, wait_link_up, write_everything, write_more


def repl(srv):
    return info(srv, "replication")


def stats(srv):
    return info(srv, "stats")


def follow(test, replica, primary):
    with replica.raw() as c:
        test.assertEqual(c.call("REPLICAOF", "127.0.0.1", str(primary.port)), b"OK")
    wait_link_up(test, replica)


def caught_up(test, primary, *replicas):
    """Every replica has applied the primary's whole stream."""
    def done():
        off = int(repl(primary)["master_repl_offset"])
        return all(int(repl(r).get("slave_repl_offset", -1)) == off for r in replicas)
    test.assertTrue(wait_until(done, TIMEOUT), "replicas behind: %r / %r" %
                    (repl(primary), [repl(r) for r in replicas]))


def promote(test, srv):
    with srv.raw() as c:
        test.assertEqual(c.call("REPLICAOF", "NO", "ONE"), b"OK")
    test.assertEqual(repl(srv)["role"], "master")


class Servers(unittest.TestCase):
    """Starts servers by kind and stops them all at the end of a test."""

    def setUp(self):
        self.servers = []

    def tearDown(self):
        for s in self.servers:
            s.cleanup()

    def start(self, kind):
        if kind == "redis" and not gbtest.compare_with_redis():
            self.skipTest("redis-server 7.0 is not here")
        s = Server(kind, args=["--repl-diskless-sync-delay", "0"] if kind == "redis" else [])
        self.servers.append(s)
        return s


class GoblinToGoblin(Servers):
    def test_sync_under_write_load_then_the_stream(self):
        primary, replica = self.start("goblin"), self.start("goblin")
        r = primary.redis(tcp=True)
        write_everything(r, "before")
        # Three clients keep writing while the replica attaches and syncs.
        stop, written = threading.Event(), [0, 0, 0]

        def writer(i):
            w = primary.redis(tcp=True)
            while not stop.is_set():
                w.incr("counter:%d" % i)
                w.rpush("log:%d" % i, written[i])
                written[i] += 1
            w.close()

        threads = [threading.Thread(target=writer, args=(i,)) for i in range(3)]
        for t in threads:
            t.start()
        time.sleep(0.2)
        follow(self, replica, primary)
        time.sleep(0.5)
        stop.set()
        for t in threads:
            t.join()
        write_more(primary, "after")
        # WAIT: the replica acknowledged everything written so far.
        self.assertEqual(r.execute_command("WAIT", 1, int(10000 * gbtest.SLOW)), 1)
        assert_same_data(self, primary, replica)
        rr = replica.redis(tcp=True)
        for i in range(3):
            self.assertEqual(int(rr.get("counter:%d" % i)), written[i])
            self.assertEqual(rr.llen("log:%d" % i), written[i])
        self.assertEqual(repl(replica)["master_replid"], repl(primary)["master_replid"])
        self.assertEqual(stats(primary)["sync_full"], "1")


class Chains(Servers):
    def chain(self, kinds):
        top, middle, bottom = (self.start(k) for k in kinds)
        r = top.redis(tcp=True)
        write_everything(r, "before")
        follow(self, middle, top)
        follow(self, bottom, middle)
        write_more(top, "after")
        assert_same_data(self, top, bottom)
        caught_up(self, top, middle)
        caught_up(self, middle, bottom)
        # The middle proxies the top's stream: one history, one offset.
        self.assertEqual(repl(bottom)["master_replid"], repl(top)["master_replid"])

    def test_redis_goblin_redis(self):
        self.chain(("redis", "goblin", "redis"))

    def test_goblin_goblin_goblin(self):
        self.chain(("goblin", "goblin", "goblin"))

    def test_goblin_redis_goblin(self):
        self.chain(("goblin", "redis", "goblin"))


class Failover(Servers):
    """A primary and two replicas; one replica is promoted; the other and
    the old primary follow it and continue partially (its replid2 is the
    old primary's replication ID)."""

    def failover(self, kinds):
        old, chosen, sibling = (self.start(k) for k in kinds)
        write_everything(old.redis(tcp=True), "before")
        follow(self, chosen, old)
        follow(self, sibling, old)
        write_more(old, "during")
        caught_up(self, old, chosen, sibling)
        old_id = repl(old)["master_replid"]
        promote(self, chosen)
        self.assertEqual(repl(chosen)["master_replid2"], old_id)
        full_before = int(stats(chosen)["sync_full"])
        follow(self, sibling, chosen)
        follow(self, old, chosen)
        st = stats(chosen)
        self.assertEqual(int(st["sync_full"]), full_before, "a full resync where a partial one was possible")
        self.assertEqual(int(st["sync_partial_ok"]), 2)
        chosen.redis(tcp=True).set("after-failover", "yes")
        write_more(chosen, "after")
        assert_same_data(self, chosen, sibling)
        assert_same_data(self, chosen, old)

    def test_goblin_promoted_among_goblins(self):
        self.failover(("goblin", "goblin", "goblin"))

    def test_goblin_promoted_redis_follows(self):
        self.failover(("redis", "goblin", "redis"))

    def test_redis_promoted_goblins_follow(self):
        self.failover(("goblin", "redis", "goblin"))


if __name__ == "__main__":
    gbtest.run_tests()
