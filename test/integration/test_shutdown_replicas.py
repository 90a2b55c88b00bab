"""SHUTDOWN with replicas, as Redis 7.0 does it (engine/core/shutdown.c).

Each story runs with a goblin-core primary and with a redis-server primary,
both with a redis-server replica, and expects the same: a replica that
lags (stopped with SIGSTOP after the write) makes SHUTDOWN wait, writes
paused and reads served; the primary exits once the replica has the write,
or at shutdown-timeout with the lagging replica logged; SHUTDOWN ABORT
cancels it (the waiting SHUTDOWN gets Redis's error, the paused write
runs); NOW does not wait; a failed final save keeps the server up, FORCE
exits anyway; SIGTERM waits as SHUTDOWN does, with the flags of
shutdown-on-sigterm. The settings' replies are compared byte for byte.
"""
import os
import signal
import time
import unittest

import gbtest
from gbtest import Raw, Server, parse_info, wait_until

SLOW = gbtest.SLOW


def synced(primary, replica):
    want = int(primary.info("replication")["master_repl_offset"])
    rinfo = replica.info("replication")
    return rinfo.get("master_link_status") == "up" and int(rinfo.get("slave_repl_offset", -1)) == want


def silent(conn, seconds):
    """Nothing arrives on conn for `seconds` (its command is held)."""
    return conn.read_raw_available(seconds) in (b"", None)


class Pair:
    """A primary of `kind` with a redis-server replica, in sync."""

    def __init__(self, kind, args=()):
        gbtest.require_redis()  # the replica is redis-server either way
        # a redis-server primary otherwise waits 5 s before each full sync (repl-diskless-sync-delay)
        extra = ["--repl-diskless-sync-delay", "0"] if kind == "redis" else []
        self.primary = Server(kind, args=list(args) + extra)
        try:
            self.replica = Server("redis", args=["--replicaof", "127.0.0.1", str(self.primary.port)])
        except BaseException:
            self.primary.cleanup()
            raise
        self.stopped = False

    def __enter__(self):
        with Raw(self.primary) as r:
            r.call("SET", "before", "1")
        assert wait_until(lambda: synced(self.primary, self.replica), 20 * SLOW)
        return self

    def stop_replica(self):
        os.kill(self.replica.pid, signal.SIGSTOP)
        self.stopped = True

    def resume_replica(self):
        if self.stopped:
            os.kill(self.replica.pid, signal.SIGCONT)
            self.stopped = False

    def exited(self, timeout):
        try:
            self.primary.proc.wait(timeout)
            return True
        except Exception:
            return False

    def __exit__(self, *exc):
        self.resume_replica()
        self.replica.cleanup()
        self.primary.cleanup()


KINDS = ("goblin", "redis")


class ShutdownWaitsForReplicas(unittest.TestCase):

    def test_waits_then_abort_cancels(self):
        for kind in KINDS:
            with self.subTest(primary=kind), Pair(kind) as p:
                with Raw(p.primary) as a, Raw(p.primary) as b, Raw(p.primary) as admin:
                    p.stop_replica()
                    self.assertEqual(admin.call("SET", "k", "v"), b"OK")
                    a.send_cmd("SHUTDOWN")
                    self.assertTrue(silent(a, 0.5 * SLOW), kind)
                    self.assertIn("shutdown_in_milliseconds", parse_info(admin.call("INFO", "server")), kind)
                    self.assertEqual(b.call("GET", "k"), b"v")  # reads go on
                    b.send_cmd("SET", "during", "1")  # writes wait
                    self.assertTrue(silent(b, 0.3 * SLOW), kind)
                    self.assertEqual(admin.call_raw("SHUTDOWN", "ABORT"), b"+OK\r\n")
                    aborted = b"-ERR Errors trying to SHUTDOWN. Check logs.\r\n"
                    self.assertEqual(a.read_until(aborted, 5 * SLOW), aborted)
                    self.assertEqual(b.read_until(b"+OK\r\n", 5 * SLOW), b"+OK\r\n")
                    self.assertNotIn("shutdown_in_milliseconds", parse_info(admin.call("INFO", "server")))
                    self.assertEqual(admin.call_raw("SHUTDOWN", "ABORT"), b"-ERR No shutdown in progress.\r\n")
                log = p.primary.log()
                self.assertIn("Waiting for replicas before shutting down.", log, kind)
                self.assertIn("Shutdown manually aborted.", log, kind)

    def test_exits_once_the_replica_has_the_write(self):
        for kind in KINDS:
            with self.subTest(primary=kind), Pair(kind) as p:
                with Raw(p.primary) as a, Raw(p.primary) as admin:
                    p.stop_replica()
                    admin.call("SET", "last", "write")
                    a.send_cmd("SHUTDOWN")
                    self.assertFalse(p.exited(0.5 * SLOW), kind)
                    p.resume_replica()
                    self.assertTrue(p.exited(10 * SLOW), kind)
                self.assertIn("1 of 1 replicas are in sync when shutting down.", p.primary.log(), kind)
                with Raw(p.replica) as r:
                    self.assertEqual(r.call("GET", "last"), b"write")

    def test_timeout_exits_and_logs_the_lagging_replica(self):
        for kind in KINDS:
            with self.subTest(primary=kind), Pair(kind, ["--shutdown-timeout", "1"]) as p:
                with Raw(p.primary) as a, Raw(p.primary) as admin:
                    p.stop_replica()
                    admin.call("SET", "lost", "on the replica")
                    start = time.time()
                    a.send_cmd("SHUTDOWN")
                    self.assertTrue(p.exited(10 * SLOW), kind)
                    self.assertGreaterEqual(time.time() - start, 0.9, kind)
                log = p.primary.log()
                self.assertRegex(log, r"Lagging replica \S+ reported offset \d+ behind master, lag=\d+, state=online\.")
                self.assertIn("0 of 1 replicas are in sync when shutting down.", log, kind)

    def test_now_and_a_zero_timeout_do_not_wait(self):
        for kind in KINDS:
            for how in (["SHUTDOWN", "NOW"], ["SHUTDOWN"]):
                args = ["--shutdown-timeout", "0"] if how == ["SHUTDOWN"] else []
                with self.subTest(primary=kind, how=how), Pair(kind, args) as p:
                    with Raw(p.primary) as a, Raw(p.primary) as admin:
                        p.stop_replica()
                        admin.call("SET", "k", "v")
                        a.send_cmd(*how)
                        self.assertTrue(p.exited(3 * SLOW), kind)
                    self.assertNotIn("Waiting for replicas", p.primary.log(), kind)

    def test_sigterm_waits_with_its_flags(self):
        for kind in KINDS:
            with self.subTest(primary=kind, flags="default"), Pair(kind) as p:
                with Raw(p.primary) as admin:
                    p.stop_replica()
                    admin.call("SET", "k", "v")
                    os.kill(p.primary.pid, signal.SIGTERM)
                    self.assertFalse(p.exited(0.5 * SLOW), kind)
                    self.assertTrue(wait_until(
                        lambda: "shutdown_in_milliseconds" in parse_info(admin.call("INFO", "server")), 5 * SLOW))
                    p.resume_replica()
                    self.assertTrue(p.exited(10 * SLOW), kind)
                self.assertIn("Received SIGTERM scheduling shutdown...", p.primary.log(), kind)
            with self.subTest(primary=kind, flags="now"), Pair(kind, ["--shutdown-on-sigterm", "now"]) as p:
                with Raw(p.primary) as admin:
                    p.stop_replica()
                    admin.call("SET", "k", "v")
                    os.kill(p.primary.pid, signal.SIGTERM)
                    self.assertTrue(p.exited(3 * SLOW), kind)


class ShutdownOnAChainedReplica(unittest.TestCase):
    """SHUTDOWN on a replica whose own replica lags waits as a primary's
    does, but asks that replica for its offset without writing into the
    stream it relays: the stream is its primary's, byte for byte, at its
    primary's offsets. Goblin once fed its REPLCONF GETACK into it, so
    after SHUTDOWN ABORT its offsets stood 37 bytes past its primary's (a
    later PSYNC from its replicas, or to it once promoted, resumed mid
    command). The middle server is goblin-core, then redis-server."""

    def test_abort_leaves_the_offsets_of_the_primary(self):
        for kind in KINDS:
            with self.subTest(middle=kind), Server("redis", args=["--repl-diskless-sync-delay", "0"]) as top:
                with Pair(kind, args=["--replicaof", "127.0.0.1", str(top.port)]) as p:
                    self.assertTrue(wait_until(lambda: synced(top, p.primary), 20 * SLOW))
                    with Raw(top) as t, Raw(p.primary) as a, Raw(p.primary) as admin:
                        p.stop_replica()
                        self.assertEqual(t.call("SET", "k", "v"), b"OK")
                        self.assertTrue(wait_until(lambda: synced(top, p.primary), 20 * SLOW))
                        a.send_cmd("SHUTDOWN")
                        self.assertTrue(silent(a, 0.5 * SLOW), kind)
                        self.assertEqual(admin.call_raw("SHUTDOWN", "ABORT"), b"+OK\r\n")
                        aborted = b"-ERR Errors trying to SHUTDOWN. Check logs.\r\n"
                        self.assertEqual(a.read_until(aborted, 5 * SLOW), aborted)
                    p.resume_replica()
                    self.assertEqual(top.redis().set("after", "1"), True)
                    self.assertTrue(wait_until(lambda: synced(top, p.primary), 20 * SLOW))
                    self.assertEqual(p.primary.info("replication")["master_repl_offset"],
                                     top.info("replication")["master_repl_offset"], kind)
                    self.assertTrue(wait_until(lambda: synced(p.primary, p.replica), 20 * SLOW), kind)
                    self.assertEqual(p.replica.redis().get("after"), b"1")


class ShutdownForce(unittest.TestCase):
    """A final save that fails (the dump file's name is taken by a
    directory, so the rename onto it fails) keeps the server up; FORCE exits anyway."""

    def test_failed_save_keeps_serving_force_exits(self):
        for kind in KINDS:
            if kind == "redis":
                gbtest.require_redis()
            with self.subTest(server=kind), Server(kind, args=["--save", "900 1"]) as srv:
                dump = "dump.gdb" if kind == "goblin" else "dump.rdb"  # each server's default dbfilename
                os.makedirs(os.path.join(srv.dir, dump, "in-the-way"))
                with Raw(srv) as r:
                    r.call("SET", "k", "v")
                    self.assertEqual(r.call_raw("SHUTDOWN"), b"-ERR Errors trying to SHUTDOWN. Check logs.\r\n")
                    self.assertEqual(r.call("GET", "k"), b"v")
                    r.send_cmd("SHUTDOWN", "FORCE")
                    srv.proc.wait(10 * SLOW)
                log = srv.log()
                self.assertIn("Error trying to save the DB, can't exit.", log, kind)
                self.assertIn("Error trying to save the DB. Exit anyway.", log, kind)


class ShutdownSettings(gbtest.GoblinAndRedisCase):

    def test_settings_as_redis(self):
        cases = [("GET", "shutdown-timeout"), ("GET", "shutdown-on-sigint"), ("GET", "shutdown-on-sigterm"),
                 ("SET", "shutdown-timeout", "3"), ("SET", "shutdown-timeout", "-1"),
                 ("SET", "shutdown-timeout", "x"), ("GET", "shutdown-timeout"),
                 ("SET", "shutdown-on-sigterm", "save now"), ("GET", "shutdown-on-sigterm"),
                 ("SET", "shutdown-on-sigterm", "save nosave"), ("SET", "shutdown-on-sigterm", "later"),
                 ("SET", "shutdown-on-sigint", "force"), ("GET", "shutdown-on-sigint"),
                 ("SET", "shutdown-on-sigint", "default"), ("GET", "shutdown-on-sigint")]
        for case in cases:
            got = []
            for s in (self.goblin, self.redis):
                with Raw(s) as r:
                    got.append(r.call_raw("CONFIG", *case))
            self.assertEqual(got[0], got[1], case)


if __name__ == "__main__":
    gbtest.run_tests()
