#!/usr/bin/env python3
"""Replication in every pairing, with the real binaries: goblin-core ->
goblin-core under write load from several clients, chains (redis-server ->
goblin-core -> redis-server, goblin -> goblin -> goblin), and failovers by
promotion where the siblings and the old primary continue with a partial
resync from the promoted one's secondary replication ID (Redis's PSYNC2),
goblin and redis-server on either side."""
import os
import shutil
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

    def stream_db_after_a_chained_sync(self, kinds):
        """The bottom syncs from the middle while the top's stream is in
        database 5: the top sends its next write without a SELECT, and the
        middle relays it as it came. The bottom knows where it goes only
        from the RDB's repl-stream-db, which the middle must write and the
        bottom must read (goblin once did neither: the write went to
        database 0 of the bottom, for good)."""
        top, middle, bottom = (self.start(k) for k in kinds)
        follow(self, middle, top)
        with top.raw() as t:
            t.call("SELECT", "5")
            t.call("SET", "a", "1")
            caught_up(self, top, middle)
            follow(self, bottom, middle)
            caught_up(self, middle, bottom)
            t.call("SET", "b", "2")  # the top's stream is still in 5: no SELECT
            caught_up(self, top, middle)
            caught_up(self, middle, bottom)
        with bottom.raw() as c:
            self.assertEqual(c.call("SELECT", "5"), b"OK")
            self.assertEqual(c.call("MGET", "a", "b"), [b"1", b"2"], kinds)
            self.assertEqual(c.call("SELECT", "0"), b"OK")
            self.assertEqual(c.call("DBSIZE"), 0, kinds)

    def test_stream_db_goblin_goblin_goblin(self):
        self.stream_db_after_a_chained_sync(("goblin", "goblin", "goblin"))

    def test_stream_db_goblin_goblin_redis(self):
        self.stream_db_after_a_chained_sync(("goblin", "goblin", "redis"))

    def test_stream_db_redis_redis_goblin(self):
        self.stream_db_after_a_chained_sync(("redis", "redis", "goblin"))

    def test_stream_db_redis_redis_redis(self):
        self.stream_db_after_a_chained_sync(("redis", "redis", "redis"))


class PublishReachesReplicas(Servers):
    """PUBLISH and SPUBLISH on a primary, from a client or a script, reach
    the subscribers of its replicas (Redis 7.0 propagates them to replicas,
    forceCommandPropagation with PROPAGATE_REPL) and stay out of its
    append-only log. A goblin-core primary and a redis-server primary, each
    with a goblin-core and a redis-server replica, must deliver the same
    messages."""

    PUBLISHES = [("PUBLISH", "feed", "hello"), ("SPUBLISH", "sh", "x"),
                 ("EVAL", "redis.call('set', 'k', 'v') return redis.call('publish', 'feed', 'fromlua')", "0")]

    def deliveries(self, primary_kind):
        primary = Server(primary_kind, args=["--appendonly", "yes"] +
                         (["--repl-diskless-sync-delay", "0"] if primary_kind == "redis" else []))
        self.servers.append(primary)
        replicas = [self.start("goblin"), self.start("redis")]
        for r in replicas:
            follow(self, r, primary)
        subs = []
        for r in replicas:
            s = gbtest.Raw(r)
            s.call("SUBSCRIBE", "feed")
            s.call("PSUBSCRIBE", "f*")
            s.call("SSUBSCRIBE", "sh")
            subs.append(s)
        with primary.raw() as c:
            for cmd in self.PUBLISHES:
                c.call(*cmd)
            c.call("SET", "marker", "1")
        caught_up(self, primary, *replicas)
        got = []
        for s in subs:
            with s:
                got.append(s.read_raw_available(1.0))
        aof = b"".join(open(os.path.join(d, f), "rb").read()
                       for d, _, files in os.walk(primary.dir) for f in files if ".aof" in f)
        return got, aof

    def test_goblin_primary_delivers_as_redis(self):
        want, redis_aof = self.deliveries("redis")
        got, goblin_aof = self.deliveries("goblin")
        self.assertIn(b"hello", want[0])
        self.assertEqual(got, want)
        self.assertEqual(got[0], got[1])
        for aof in (goblin_aof, redis_aof):
            self.assertIn(b"marker", aof)
            self.assertNotIn(b"hello", aof)
            self.assertNotIn(b"fromlua", aof)


class RestartContinues(Servers):
    """A snapshot records the replication history (Redis's repl-id,
    repl-offset and repl-stream-db aux fields): a replica restarted on it
    continues its primary's stream with a partial resync, and so do the
    replicas of a primary restarted on it (its old ID kept as the second
    one). goblin-core once started every restart with a full sync. Each
    runs on a goblin-core pair and a redis-server pair alike."""

    def kinds(self):
        return ["goblin"] + (["redis"] if gbtest.compare_with_redis() else [])

    def test_replica_restarts(self):
        for kind in self.kinds():
            primary, replica = self.start(kind), self.start(kind)
            follow(self, replica, primary)
            with primary.raw() as c:
                c.call("SELECT", "3")
                c.call("SET", "before", "1")
            caught_up(self, primary, replica)
            with replica.raw() as c:
                self.assertEqual(c.call("SAVE"), b"OK")
            port, d = replica.port, replica.dir
            replica.own_dir = False  # kept for the restart
            self.addCleanup(shutil.rmtree, d, True)
            replica.stop()
            with primary.raw() as c:
                c.call("SELECT", "3")
                c.call("SET", "after", "1")  # no SELECT in the stream: the restarted replica must be in db 3
            again = Server(kind, port=port, dir=d, args=["--replicaof", "127.0.0.1 %d" % primary.port]
                           if kind == "goblin" else ["--replicaof", "127.0.0.1", str(primary.port)])
            self.servers.append(again)
            wait_link_up(self, again)
            caught_up(self, primary, again)
            self.assertEqual(stats(primary)["sync_partial_ok"], "1", kind)
            self.assertEqual(stats(primary)["sync_full"], "1", kind)
            with again.raw() as c:
                c.call("SELECT", "3")
                self.assertEqual([c.call("GET", "before"), c.call("GET", "after")], [b"1", b"1"], kind)

    def test_primary_restarts(self):
        for kind in self.kinds():
            primary, replica = self.start(kind), self.start(kind)
            follow(self, replica, primary)
            with primary.raw() as c:
                c.call("SET", "before", "1")
            caught_up(self, primary, replica)
            old_id = repl(primary)["master_replid"]
            port, d = primary.port, primary.dir
            primary.own_dir = False  # kept for the restart
            self.addCleanup(shutil.rmtree, d, True)
            with primary.raw() as c:
                c.send_cmd("SHUTDOWN", "SAVE")
            primary.proc.wait(30)
            again = Server(kind, port=port, dir=d)
            self.servers.append(again)
            r = repl(again)
            self.assertEqual(r["master_replid2"], old_id, kind)
            self.assertTrue(wait_until(lambda: repl(again).get("connected_slaves") == "1", TIMEOUT), kind)
            self.assertEqual(stats(again)["sync_partial_ok"], "1", kind)
            self.assertEqual(stats(again)["sync_full"], "0", kind)
            with again.raw() as c:
                c.call("SET", "after", "1")
            caught_up(self, again, replica)
            self.assertEqual(replica.redis(tcp=True).get("after"), b"1")


class SubReplicasStay(Servers):
    """REPLICAOF to another address of the same primary keeps the
    sub-replicas attached (Redis 7.0 does not disconnect them: they may
    continue with us); goblin-core once dropped them at once and they
    resynced. goblin-core and redis-server in the middle alike."""

    def test_replicaof_keeps_sub_replicas(self):
        for middle_kind in ["goblin"] + (["redis"] if gbtest.compare_with_redis() else []):
            top, middle, bottom = self.start("goblin"), self.start(middle_kind), self.start("goblin")
            follow(self, middle, top)
            follow(self, bottom, middle)
            with top.raw() as c:
                c.call("SET", "k", "1")
            caught_up(self, top, middle, bottom)
            with middle.raw() as c:
                self.assertEqual(c.call("REPLICAOF", "localhost", str(top.port)), b"OK")
            wait_link_up(self, middle)
            with top.raw() as c:
                c.call("SET", "k2", "1")
            caught_up(self, top, middle, bottom)
            self.assertEqual(repl(middle)["connected_slaves"], "1", middle_kind)
            self.assertEqual(stats(middle)["sync_full"], "1", middle_kind)
            self.assertEqual(stats(middle)["sync_partial_ok"], "0", middle_kind)
            self.assertEqual(bottom.redis(tcp=True).get("k2"), b"1")


class ErrorsFromTheStream(Servers):
    def test_logged_counted_and_panic_on_replicas(self):
        """A command of the primary's stream that fails on the replica (its
        data set differs: here a writable replica's own SET under the
        primary's LPUSH) is logged as Redis logs it and counted in INFO's
        unexpected_error_replies; under propagation-error-behavior
        panic-on-replicas a read-only replica stops. A goblin-core and a
        redis-server replica of the same primary."""
        primary = self.start("redis")
        replicas = {"goblin": self.start("goblin"), "redis": self.start("redis")}
        line = (r"== CRITICAL == This replica is sending an error to its master: '-?WRONGTYPE Operation against a "
                r"key holding the wrong kind of value' after processing the command 'lpush'")
        for kind, rep in replicas.items():
            with rep.raw() as c:
                c.call("CONFIG", "SET", "replica-read-only", "no")
            follow(self, rep, primary)
        with primary.raw() as p:
            p.call("SET", "other", "1")
            for rep in replicas.values():
                caught_up(self, primary, rep)
                with rep.raw() as c:
                    c.call("SET", "k", "local")
            p.call("LPUSH", "k", "x")
            for kind, rep in replicas.items():
                caught_up(self, primary, rep)
                self.assertEqual(stats(rep)["unexpected_error_replies"], "1", kind)
                self.assertRegex(rep.log(), line, kind)
                with rep.raw() as c:
                    c.call("CONFIG", "SET", "replica-read-only", "yes")
                    c.call("CONFIG", "SET", "propagation-error-behavior", "panic-on-replicas")
            p.call("LPUSH", "k", "y")
            for kind, rep in replicas.items():
                self.assertNotEqual(rep.proc.wait(TIMEOUT), 0, kind)
                self.assertIn("This replica panicked sending an error to its master after processing the command "
                              "'lpush'", rep.log(), kind)

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


class CoordinatedFailover(Servers):
    """FAILOVER: the primary pauses writes, waits for a replica to have its
    whole stream, becomes that replica's replica with PSYNC ... FAILOVER, and
    the replica promotes itself; goblin and redis-server on either side."""

    def handover(self, kinds, to=False):
        primary, replica = self.start(kinds[0]), self.start(kinds[1])
        write_everything(primary.redis(tcp=True), "before")
        follow(self, replica, primary)
        caught_up(self, primary, replica)
        # The primary counts the replica online (redis-server: after its
        # first REPLCONF ACK following a disk-less transfer).
        self.assertTrue(wait_until(lambda: "state=online" in str(repl(primary).get("slave0", "")), TIMEOUT),
                        repl(primary))
        args = ["FAILOVER"] + (["TO", "127.0.0.1", str(replica.port)] if to else [])
        with primary.raw() as c:
            self.assertEqual(c.call(*args), b"OK")
        self.assertTrue(wait_until(lambda: repl(replica)["role"] == "master" and
                                   repl(primary).get("master_port") == str(replica.port) and
                                   repl(primary).get("master_link_status") == "up", TIMEOUT),
                        "no handover: %r / %r\n%s" % (repl(primary), repl(replica), primary.log()[-2000:]))
        self.assertEqual(repl(primary)["master_failover_state"], "no-failover")
        # The old primary continued the new one's history: no full sync.
        self.assertEqual(int(stats(replica)["sync_full"]), 0)
        self.assertEqual(int(stats(replica)["sync_partial_ok"]), 1)
        write_more(replica, "after")
        assert_same_data(self, replica, primary)
        with primary.raw() as c:
            self.assertEqual(c.call_raw("SET", "x", "1"), b"-READONLY You can't write against a read only replica.\r\n")

    def test_goblin_to_goblin(self):
        self.handover(("goblin", "goblin"))

    def test_goblin_to_redis(self):
        self.handover(("goblin", "redis"), to=True)

    def test_redis_to_goblin(self):
        self.handover(("redis", "goblin"), to=True)

    def refusals(self, kind):
        primary = self.start(kind)
        with primary.raw() as c:
            got = [c.call_raw("FAILOVER"), c.call_raw("FAILOVER", "ABORT"), c.call_raw("FAILOVER", "TIMEOUT", "0"),
                   c.call_raw("FAILOVER", "TIMEOUT", "x"), c.call_raw("FAILOVER", "BOGUS"),
                   c.call_raw("FAILOVER", "TO", "127.0.0.1", "x")]
        replica = self.start(kind)
        follow(self, replica, primary)
        with primary.raw() as c:
            got += [c.call_raw("FAILOVER", "FORCE"), c.call_raw("FAILOVER", "TO", "127.0.0.1", "1", "FORCE"),
                    c.call_raw("FAILOVER", "TO", "127.0.0.1", "1"), c.call_raw("FAILOVER", "TIMEOUT", "10", "TIMEOUT", "5")]
        with replica.raw() as c:
            got += [c.call_raw("FAILOVER"), c.call_raw("PSYNC", "0" * 40, "1", "FAILOVER")]
        with primary.raw() as c:
            got += [c.call_raw("PSYNC", "0" * 40, "1", "FAILOVER")]
        return got

    def test_a_replica_with_a_lower_proto_max_bulk_len(self):
        """A replica applies its primary's stream past its own
        proto-max-bulk-len, as Redis's master client does: a 2 MB SET
        broke the link ("invalid bulk length", at every resync), and
        APPEND, SETRANGE and SETBIT results beyond the limit were dropped,
        the replica silently holding other data."""
        primary = self.start("goblin")
        replica = self.start("goblin")
        with replica.raw() as c:
            self.assertEqual(c.call("CONFIG", "SET", "proto-max-bulk-len", "1mb"), b"OK")
        follow(self, replica, primary)
        with primary.raw() as c:
            c.call("SET", "big", "x" * (2 << 20))
            for _ in range(3):
                c.call("APPEND", "appended", "y" * 600000)
            c.call("SETRANGE", "range", "1500000", "end")
            c.call("SETBIT", "bits", "12000000", "1")
        caught_up(self, primary, replica)
        with replica.raw() as c:
            self.assertEqual([c.call("STRLEN", k) for k in ("big", "appended", "range", "bits")],
                             [2 << 20, 1800000, 1500003, 1500001])
        self.assertEqual(repl(replica)["master_link_status"], "up")

    def test_refusals_as_redis(self):
        got = self.refusals("goblin")
        self.assertEqual(got[0], b"-ERR FAILOVER requires connected replicas.\r\n")
        if gbtest.compare_with_redis():
            self.assertEqual(got, self.refusals("redis"))

    def test_no_sync_from_a_replica_whose_link_is_down(self):
        """A replica with no link to its primary refuses to feed replicas of
        its own, as redis-server does."""
        dead = gbtest.free_port()
        got = []
        for kind in gbtest.goblin_and_redis():
            srv = self.start(kind)
            with srv.raw() as c:
                self.assertEqual(c.call("REPLICAOF", "127.0.0.1", str(dead)), b"OK")
                got.append(c.call_raw("PSYNC", "?", "-1"))
        self.assertEqual(got[0], b"-NOMASTERLINK Can't SYNC while not connected with my master\r\n")
        self.assertEqual(len(set(got)), 1, got)

    def test_abort_and_timeout_while_waiting(self):
        import os
        import signal
        primary, replica = self.start("goblin"), self.start("goblin")
        follow(self, replica, primary)
        caught_up(self, primary, replica)
        # A replica that acknowledges nothing more: the failover waits.
        os.kill(replica.pid, signal.SIGSTOP)
        try:
            with primary.raw() as c:
                self.assertEqual(c.call("SET", "k", "1"), b"OK")
                self.assertEqual(c.call("FAILOVER"), b"OK")
                self.assertEqual(repl(primary)["master_failover_state"], "waiting-for-sync")
                self.assertEqual(c.call_raw("FAILOVER"), b"-ERR FAILOVER already in progress.\r\n")
                self.assertEqual(c.call_raw("REPLICAOF", "NO", "ONE"),
                                 b"-ERR REPLICAOF not allowed while failing over.\r\n")
                with primary.raw() as other:
                    self.assertEqual(other.call_raw("PSYNC", "?", "-1"),
                                     b"-NOMASTERLINK Can't SYNC while failing over\r\n")
                # Writes wait for the failover; reads do not.
                w = primary.raw()
                w.send_cmd("SET", "held", "1")
                self.assertEqual(c.call("GET", "k"), b"1")
                self.assertEqual(w.read_raw_available(0.3), b"")
                # CLIENT UNPAUSE ends a client's pause, not the failover's.
                self.assertEqual(c.call("CLIENT", "UNPAUSE"), b"OK")
                self.assertEqual(w.read_raw_available(0.3), b"")
                self.assertEqual(c.call("FAILOVER", "ABORT"), b"OK")
                self.assertEqual(w.read()[0], b"OK")
                w.close()
                self.assertEqual(repl(primary)["master_failover_state"], "no-failover")
                self.assertEqual(c.call("FAILOVER", "TIMEOUT", "300"), b"OK")
                self.assertTrue(wait_until(lambda: repl(primary)["master_failover_state"] == "no-failover", TIMEOUT))
                self.assertIn("FAILOVER to any replica aborted: Replica never caught up before timeout", primary.log())
                self.assertEqual(repl(primary)["role"], "master")
                self.assertEqual(c.call("SET", "after", "1"), b"OK")
        finally:
            os.kill(replica.pid, signal.SIGCONT)


    def test_no_ping_while_writes_wait_for_the_failover(self):
        """While FAILOVER holds writes, the primary sends its replicas no
        PING: the replica taking over must reach the primary's offset,
        which a PING would move on (Redis 7.0's replicationCron; a CLUSTER
        FAILOVER pauses the same way). goblin-core asks for no ACK in that
        state either (redis-server sends REPLCONF GETACK a few times a
        second), so its offset stands still, pinging every second, until
        the failover ends."""
        import os
        import signal
        primary, replica = self.start("goblin"), self.start("goblin")
        with primary.raw() as c:
            c.call("CONFIG", "SET", "repl-ping-replica-period", "1")
        follow(self, replica, primary)
        caught_up(self, primary, replica)
        offset = lambda: int(repl(primary)["master_repl_offset"])
        os.kill(replica.pid, signal.SIGSTOP)
        try:
            with primary.raw() as c:
                self.assertEqual(c.call("SET", "k", "1"), b"OK")  # the replica is behind: the failover waits
                self.assertEqual(c.call("FAILOVER"), b"OK")
                held = offset()
                time.sleep(2.5)  # two or three ping periods
                self.assertEqual(repl(primary)["master_failover_state"], "waiting-for-sync")
                self.assertEqual(offset(), held)
                self.assertEqual(c.call("FAILOVER", "ABORT"), b"OK")
                self.assertTrue(wait_until(lambda: offset() > held, TIMEOUT))  # pings again
        finally:
            os.kill(replica.pid, signal.SIGCONT)

if __name__ == "__main__":
    gbtest.run_tests()
