#!/usr/bin/env python3
"""A full sync's transfer (engine/persist/repl_fsync.h): the RDB made by the
background copy-on-write scan and streamed to the replicas as it is made.

- A replica SIGKILLed in the middle of a large transfer (goblin and
  redis-server replicas): the primary abandons the transfer, keeps serving
  (and its memory stays bounded while the stalled replica reads nothing),
  and a new replica then syncs fully.
- The primary SIGKILLed mid-transfer: the replica (goblin, and redis-server
  as the reference) keeps its old dataset and serves it, retries, and syncs
  fully when the primary comes back.
- A goblin-core replica and a redis-server 7.0 replica syncing at once from
  one scan (repl-diskless-sync-delay lets both arrive), under writes.
- repl-diskless-sync no: the RDB through a file, sent with its length, to a
  redis-server replica.
- On the replica: the master client (flag M, CLIENT KILL TYPE master) and
  replica-lazy-flush, compared with redis-server."""
import os
import signal
import threading
import time
import unittest

import gbtest
from gbtest import Server, wait_until
from test_replication_replica import TIMEOUT, assert_same_data, info, wait_link_up, write_everything, write_more

KEYS = 200000
VALUE = 100

POPULATE = ("for i = 1, tonumber(ARGV[1]) do "
            "redis.call('SET', ARGV[2] .. i, string.rep('x', tonumber(ARGV[3]))) end return 1")


def populate(srv, n, prefix="key:", size=VALUE):
    with srv.raw() as c:
        c.call("EVAL", POPULATE, "0", str(n), prefix, str(size))


def repl(srv):
    return info(srv, "replication")


def replica_state(primary):
    """slave0's state on the primary (None: no replica attached)."""
    line = repl(primary).get("slave0")
    if not line:
        return None
    return dict(kv.split("=", 1) for kv in line.split(","))["state"]


def follow(replica, primary):
    with replica.raw() as c:
        assert c.call("REPLICAOF", "127.0.0.1", str(primary.port)) == b"OK"


def dbsize(srv):
    with srv.raw() as c:
        return c.call("DBSIZE")


class Servers(unittest.TestCase):
    """Starts servers by kind; stops (and resumes, if stopped) them all at
    the end of a test."""

    def setUp(self):
        self.servers = []

    def tearDown(self):
        for s in self.servers:
            try:
                os.kill(s.pid, signal.SIGCONT)
            except OSError:
                pass
            s.cleanup()

    def start(self, kind, args=(), port=None):
        if kind == "redis" and not gbtest.compare_with_redis():
            self.skipTest("redis-server 7.0 is not here")
        s = Server(kind, args=list(args), port=port)
        self.servers.append(s)
        return s


class Transfer(Servers):
    def stalled_transfer(self, primary, replica):
        """replica asks primary for a full sync and is stopped (SIGSTOP)
        before the scan starts: the transfer begins and stalls once the
        socket and the primary's window are full."""
        follow(replica, primary)
        self.assertTrue(wait_until(lambda: replica_state(primary) == "wait_bgsave", TIMEOUT))
        os.kill(replica.pid, signal.SIGSTOP)
        started = "Starting a full sync for 1 replica" if primary.kind == "goblin" else "Starting BGSAVE for SYNC"
        self.assertTrue(wait_until(lambda: started in primary.log(), TIMEOUT), primary.log()[-2000:])
        time.sleep(0.5)  # the transfer fills what it may, then waits

    # -- a replica killed mid-transfer -------------------------------------------------
    def replica_killed(self, kind):
        primary = self.start("goblin", ["--repl-diskless-sync-delay", "1"])
        populate(primary, KEYS)
        rss_before = primary.rss()
        replica = self.start(kind)
        self.stalled_transfer(primary, replica)
        # The engine keeps serving while the transfer waits on the replica,
        # and holds no copy of the ~23 MB RDB: only the window.
        t0 = time.monotonic()
        for _ in range(50):
            self.assertTrue(primary.ping_ok())
        self.assertLess(time.monotonic() - t0, 5 * gbtest.SLOW)
        grown = primary.rss() - rss_before
        self.assertLess(grown, 16 << 20, "the primary grew by %d bytes during a stalled transfer" % grown)
        self.assertEqual(replica_state(primary), "wait_bgsave")
        os.kill(replica.pid, signal.SIGKILL)
        self.assertTrue(wait_until(lambda: "Full sync abandoned" in primary.log(), TIMEOUT), primary.log()[-2000:])
        self.assertEqual(repl(primary)["connected_slaves"], "0")
        with primary.raw() as c:
            self.assertEqual(c.call("SET", "after", "1"), b"OK")
            # The scan is gone: a BGSAVE may run again.
            self.assertEqual(c.call("BGSAVE"), b"Background saving started")
        # A new replica syncs fully.
        fresh = self.start(kind)
        follow(fresh, primary)
        wait_link_up(self, fresh)
        self.assertTrue(wait_until(lambda: dbsize(fresh) == KEYS + 1, TIMEOUT), dbsize(fresh))
        with fresh.raw() as c:
            self.assertEqual(c.call("GET", "key:%d" % KEYS), b"x" * VALUE)

    def test_goblin_replica_killed_mid_transfer(self):
        self.replica_killed("goblin")

    def test_redis_replica_killed_mid_transfer(self):
        self.replica_killed("redis")

    # -- writes while the transfer is stalled ---------------------------------------------
    def writes_during_transfer(self, kind):
        """Keys the scan has not reached are changed, deleted, and created
        while the replica reads nothing: the RDB must carry their values of
        the sync's moment (copy-on-write) and the stream the changes, each
        once (APPEND and INCR would show a change applied twice)."""
        primary = self.start("goblin", ["--repl-diskless-sync-delay", "1"])
        populate(primary, KEYS)
        with primary.raw() as c:
            c.call("SELECT", "2")
            c.call("SET", "in2", "v")
        replica = self.start(kind)
        self.stalled_transfer(primary, replica)
        changed = ["key:%d" % i for i in range(1, KEYS, 2999)]
        with primary.raw() as c:
            for k in changed:
                c.call("APPEND", k, "+")
                c.call("INCR", "counter")
            c.call("DEL", "key:2", "key:%d" % (KEYS - 1))
            c.call("SET", "key:%d" % (KEYS + 1), "born during the sync")
            c.call("SELECT", "2")
            c.call("FLUSHDB")
            c.call("SET", "in2", "again")
        os.kill(replica.pid, signal.SIGCONT)
        wait_link_up(self, replica)
        self.assertTrue(wait_until(lambda: int(repl(replica).get("slave_repl_offset", -1)) ==
                                   int(repl(primary)["master_repl_offset"]), TIMEOUT))
        keys = changed + ["key:2", "key:%d" % (KEYS - 1), "key:%d" % (KEYS + 1), "counter", "key:3"]
        with primary.raw() as p, replica.raw() as r:
            self.assertEqual(r.call("DBSIZE"), p.call("DBSIZE"))
            for k in keys:
                self.assertEqual(r.call("GET", k), p.call("GET", k), k)
            p.call("SELECT", "2")
            r.call("SELECT", "2")
            self.assertEqual(r.call("GET", "in2"), b"again")
            self.assertEqual(r.call("DBSIZE"), 1)
        self.assertEqual(int(replica.redis().get("counter")), len(changed))

    def test_writes_during_transfer_goblin_replica(self):
        self.writes_during_transfer("goblin")

    def test_writes_during_transfer_redis_replica(self):
        self.writes_during_transfer("redis")

    # -- the stream held during the transfer, against the output limit ---------------------
    def held_stream_over_limit(self, kind):
        """The writes held for a stalled replica count against
        client-output-buffer-limit replica: past the hard limit the replica
        is dropped (Redis's log line), the primary serves on."""
        primary = self.start(kind, ["--repl-diskless-sync-delay", "1",
                                    "--client-output-buffer-limit", "replica 1mb 0 0"])
        populate(primary, KEYS)
        replica = self.start("goblin")
        self.stalled_transfer(primary, replica)
        with primary.raw() as c:
            # The sync holds the snapshot machinery (Redis: its RDB child).
            self.assertEqual(c.call("SAVE"), gbtest.Err(b"ERR Background save already in progress"))
            self.assertEqual(c.call("BGSAVE"), gbtest.Err(b"ERR Background save already in progress"))
            self.assertEqual(c.call("BGSAVE", "SCHEDULE"), gbtest.Err(b"ERR Background save already in progress"))
            for i in range(40):
                c.call("SET", "big:%d" % i, "y" * 65536)
        self.assertTrue(wait_until(lambda: repl(primary)["connected_slaves"] == "0", TIMEOUT))
        self.assertIn("scheduled to be closed ASAP for overcoming of output buffer limits", primary.log())
        if kind == "goblin":  # a counter Redis 7.0 does not have yet
            self.assertEqual(info(primary, "stats")["client_output_buffer_limit_disconnections"], "1")
        self.assertTrue(primary.ping_ok())

    def test_held_stream_over_limit_goblin_primary(self):
        self.held_stream_over_limit("goblin")

    def test_held_stream_over_limit_redis_primary(self):
        self.held_stream_over_limit("redis")

    # -- the primary killed mid-transfer -----------------------------------------------
    def primary_killed(self, kind):
        primary = self.start("goblin", ["--repl-diskless-sync-delay", "1"])
        port = primary.port
        populate(primary, KEYS)
        replica = self.start(kind, ["--repl-diskless-load", "disabled", "--replica-serve-stale-data", "yes"])
        with replica.raw() as c:
            c.call("SET", "mine", "old")
        self.stalled_transfer(primary, replica)
        primary.kill()
        os.kill(replica.pid, signal.SIGCONT)
        # The transfer fails; the old dataset is kept and served (the RDB
        # went to a temporary file, never loaded).
        self.assertTrue(wait_until(lambda: repl(replica).get("master_sync_in_progress") == "0" and
                                   repl(replica).get("master_link_status") == "down", TIMEOUT))
        with replica.raw() as c:
            self.assertEqual(c.call("GET", "mine"), b"old")
            self.assertEqual(c.call("DBSIZE"), 1)
        # The primary returns (another dataset): the replica syncs fully.
        back = self.start("goblin", port=port)
        populate(back, 1000, prefix="new:")
        wait_link_up(self, replica)
        self.assertTrue(wait_until(lambda: dbsize(replica) == 1000, TIMEOUT), dbsize(replica))
        with replica.raw() as c:
            self.assertEqual(c.call("EXISTS", "mine"), 0)

    def test_primary_killed_mid_transfer_goblin_replica(self):
        self.primary_killed("goblin")

    def test_primary_killed_mid_transfer_redis_replica(self):
        self.primary_killed("redis")

    # -- one scan for a goblin and a redis replica -----------------------------------------
    def test_goblin_and_redis_replicas_share_one_scan(self):
        primary = self.start("goblin", ["--repl-diskless-sync-delay", "2"])
        r = primary.redis(tcp=True)
        write_everything(r, "before")
        populate(primary, 2000)
        g, rs = self.start("goblin"), self.start("redis")
        stop, written = threading.Event(), [0]

        def writer():
            w = primary.redis(tcp=True)
            while not stop.is_set():
                w.incr("counter")
                w.rpush("log", written[0])
                written[0] += 1
            w.close()

        t = threading.Thread(target=writer)
        t.start()
        try:
            follow(g, primary)
            follow(rs, primary)
            wait_link_up(self, g)
            wait_link_up(self, rs)
            time.sleep(0.3)
        finally:
            stop.set()
            t.join()
        write_more(primary, "after")
        self.assertEqual(r.execute_command("WAIT", 2, int(10000 * gbtest.SLOW)), 2)
        log = primary.log()
        self.assertEqual(log.count("Starting a full sync"), 1, log[-3000:])
        self.assertIn("Starting a full sync for 2 replica(s), diskless", log)
        self.assertEqual(info(primary, "stats")["sync_full"], "2")
        for replica in (g, rs):
            assert_same_data(self, primary, replica)
            rr = replica.redis(tcp=True)
            self.assertEqual(int(rr.get("counter")), written[0])
            self.assertEqual(rr.llen("log"), written[0])
            self.assertEqual(rr.dbsize(), r.dbsize())

    def test_max_replicas_starts_before_the_delay(self):
        primary = self.start("goblin", ["--repl-diskless-sync-delay", "60",
                                        "--repl-diskless-sync-max-replicas", "1"])
        populate(primary, 1000)
        replica = self.start("goblin")
        follow(replica, primary)
        wait_link_up(self, replica)
        self.assertEqual(dbsize(replica), 1000)

    # -- disk-based ------------------------------------------------------------------------
    def test_disk_based_sync_to_redis(self):
        primary = self.start("goblin", ["--repl-diskless-sync", "no", "--repl-diskless-sync-delay", "60"])
        write_everything(primary.redis(tcp=True), "before")
        populate(primary, 5000)
        replica = self.start("redis")
        follow(replica, primary)
        wait_link_up(self, replica)  # at once: the delay is the diskless sync's
        write_more(primary, "after")
        assert_same_data(self, primary, replica)
        self.assertIn("through a file on disk", primary.log())
        # The temporary file is gone.
        self.assertEqual([f for f in os.listdir(primary.dir) if f.startswith("temp-fullsync")], [])


class PersistenceInfo(Servers):
    """INFO persistence on the primary during and after a full sync: Redis
    counts its replication child as a background save."""

    def persistence_during_sync(self, kind):
        primary = self.start(kind, ["--repl-diskless-sync-delay", "1"])
        populate(primary, KEYS)  # more than the sockets hold: the RDB waits on the stopped replica
        replica = self.start("goblin")
        Transfer.stalled_transfer(self, primary, replica)
        during = info(primary, "persistence")
        os.kill(replica.pid, signal.SIGCONT)
        self.assertTrue(wait_until(lambda: replica_state(primary) == "online", TIMEOUT), primary.log()[-2000:])
        self.assertTrue(wait_until(lambda: info(primary, "persistence")["rdb_bgsave_in_progress"] == "0", TIMEOUT))
        after = info(primary, "persistence")
        return {
            "in_progress": (during["rdb_bgsave_in_progress"], after["rdb_bgsave_in_progress"]),
            "current_time_known": (int(during["rdb_current_bgsave_time_sec"]) >= 0,
                                   after["rdb_current_bgsave_time_sec"]),
            "last_time_known": int(after["rdb_last_bgsave_time_sec"]) >= 0,
            "saves": after["rdb_saves"],
            "rewrite": (during["aof_rewrite_in_progress"], after["aof_rewrite_in_progress"]),
        }

    def test_sync_counts_as_a_background_save(self):
        goblin = self.persistence_during_sync("goblin")
        self.assertEqual(goblin, {"in_progress": ("1", "0"), "current_time_known": (True, "-1"),
                                  "last_time_known": True, "saves": "0", "rewrite": ("0", "0")})
        self.assertEqual(goblin, self.persistence_during_sync("redis"))


class MasterClient(Servers):
    """The client applying the primary's stream on a replica, compared
    with redis-server's: flag M in CLIENT LIST, TYPE master selects it (and
    TYPE normal does not), CLIENT KILL TYPE master drops the link, which
    comes back and continues (a partial resync)."""

    def master_client(self, kind):
        primary = self.start("goblin")
        populate(primary, 100)
        replica = self.start(kind)
        follow(replica, primary)
        wait_link_up(self, replica)
        with replica.raw() as c:
            lines = c.call("CLIENT", "LIST", "TYPE", "master").decode().splitlines()
            self.assertEqual(len(lines), 1, lines)
            self.assertIn(" flags=M ", lines[0])
            self.assertNotIn(" flags=M ", c.call("CLIENT", "LIST", "TYPE", "normal").decode())
            self.assertEqual(c.call("CLIENT", "KILL", "TYPE", "master"), 1)
        self.assertTrue(wait_until(lambda: int(info(primary, "stats")["sync_partial_ok"]) == 1, TIMEOUT),
                        info(primary, "stats"))
        wait_link_up(self, replica)
        with primary.raw() as c:
            c.call("SET", "after", "kill")
        self.assertTrue(wait_until(lambda: replica.redis().get("after") == b"kill", TIMEOUT))
        self.assertEqual(info(primary, "stats")["sync_full"], "1")

    def test_goblin_replica(self):
        self.master_client("goblin")

    def test_redis_replica(self):
        self.master_client("redis")


class LazyFlush(Servers):
    """replica-lazy-flush: a full sync frees the replica's old data set in
    the background (INFO's lazyfreed_objects counts its keys) or not at
    all in the background, the same on goblin-core and redis-server."""

    def freed_lazily(self, kind, lazy):
        primary = self.start("goblin")
        populate(primary, 10, prefix="p:")
        replica = self.start(kind, ["--replica-lazy-flush", lazy])
        populate(replica, 5000, prefix="old:", size=1)
        before = int(info(replica, "memory")["lazyfreed_objects"])
        follow(replica, primary)
        wait_link_up(self, replica)
        self.assertEqual(dbsize(replica), 10)
        freed = lambda: int(info(replica, "memory")["lazyfreed_objects"]) - before
        if lazy == "yes":
            self.assertTrue(wait_until(lambda: freed() == 5000, TIMEOUT), freed())
        else:
            time.sleep(0.2)
            self.assertEqual(freed(), 0)

    def test_goblin(self):
        for lazy in ("yes", "no"):
            self.freed_lazily("goblin", lazy)

    def test_redis(self):
        for lazy in ("yes", "no"):
            self.freed_lazily("redis", lazy)


if __name__ == "__main__":
    gbtest.run_tests()
