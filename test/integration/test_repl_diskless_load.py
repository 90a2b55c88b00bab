#!/usr/bin/env python3
"""repl-diskless-load on a replica (engine/persist/repl_load.h): where a full
sync's payload goes and what becomes of the data set it replaces.

- No disk needed: the replica's `dir` is removed before it syncs from a
  redis-server primary. With `disabled` (and `on-empty-db` on a replica that
  holds keys) the temporary file cannot be opened and the link stays down;
  with `swapdb` (and `on-empty-db` on an empty replica) the sync completes.
  Compared with a redis-server 7.0 replica in the same situation.
- swapdb replaces the old data set whole and a client WATCHing one of its
  keys has its EXEC aborted, as on a redis-server replica.
- A payload that does not load (a corrupt RDB from a fake primary): with
  swapdb the replica keeps its old keys and function library, with
  disabled it is left empty. Redis 7.0 terminates on a corrupt payload
  (rdbReportError's exit) in both modes, so there is no Redis behaviour to
  compare with here; Goblin keeps serving.
- repl-disable-tcp-nodelay on a primary: the socket of a replica that
  needs a full sync loses TCP_NODELAY (read through a duplicate of the
  primary's descriptor), on goblin-core as on redis-server.
"""
import ctypes
import os
import shutil
import tempfile
import socket
import unittest

import gbtest
from gbtest import Raw, Server, wait_until
from test_replication_replica import REPLID, TIMEOUT, FakePrimary, valid_rdb

LIBRARY = "#!lua name=keepme\nredis.register_function('kept', function() return 1 end)"
CORRUPT_RDB = b"REDIS0010" + b"\x00\x05fresh\x01v" + b"\xf0" + b"\xff" + b"\x00" * 8  # 0xF0: no such opcode
MANY = 2000


def link_status(srv):
    return srv.info("replication").get("master_link_status")


class Servers(unittest.TestCase):
    def setUp(self):
        self.servers = []
        self.dirs = []

    def tearDown(self):
        for s in self.servers:
            s.cleanup()
        for d in self.dirs:
            shutil.rmtree(d, ignore_errors=True)

    def start(self, kind, *args):
        if kind == "redis":
            gbtest.require_redis()
        s = Server(kind, args=list(args))
        self.servers.append(s)
        return s

    def primary_with_keys(self):
        p = self.start("redis")
        with Raw(p) as c:
            c.call("EVAL", "for i = 1, %d do redis.call('SET', 'p:' .. i, i) end" % MANY, "0")
            c.call("SET", "shared", "from-primary")
        return p


class DisklessLoad(Servers):
    # -- no disk needed ------------------------------------------------------------------
    def sync_without_dir(self, kind, mode, replica_has_keys):
        """Whether a replica whose dir was removed completes a full sync."""
        primary = self.primary_with_keys()
        replica = self.start(kind, "--repl-diskless-load", mode)
        gone = tempfile.mkdtemp(prefix="gbit-gone-")
        with Raw(replica) as c:
            if replica_has_keys:
                c.call("SET", "mine", "1")
            self.assertEqual(c.call("CONFIG", "SET", "dir", gone), b"OK")
            os.rmdir(gone)  # a temporary file can no longer be made there
            c.call("REPLICAOF", "127.0.0.1", str(primary.port))
        opened = "Opening the temp file needed for MASTER <-> REPLICA synchronization"
        if wait_until(lambda: link_status(replica) == "up" or opened in replica.log(), TIMEOUT):
            pass
        synced = link_status(replica) == "up"
        if synced:
            with Raw(replica) as c:
                self.assertTrue(wait_until(lambda: c.call("DBSIZE") == MANY + 1, TIMEOUT))
                self.assertEqual(c.call("GET", "shared"), b"from-primary")
        else:
            self.assertIn(opened, replica.log())
        for s in (replica, primary):
            s.cleanup()
        self.servers = []
        return synced

    def test_no_disk_needed(self):
        cases = [("disabled", False, False), ("on-empty-db", False, True), ("on-empty-db", True, False),
                 ("swapdb", True, True)]
        for mode, has_keys, expected in cases:
            with self.subTest(mode=mode, replica_has_keys=has_keys):
                got = {kind: self.sync_without_dir(kind, mode, has_keys) for kind in ("redis", "goblin")}
                self.assertEqual(got, {"redis": expected, "goblin": expected})

    # -- swapdb replaces the data set ------------------------------------------------------
    def swap_replaces(self, kind):
        primary = self.primary_with_keys()
        replica = self.start(kind, "--repl-diskless-load", "swapdb")
        with Raw(replica) as c, Raw(replica) as watcher:
            c.call("SET", "old", "1")
            c.call("SET", "shared", "from-replica")
            c.call("SELECT", "3")
            c.call("SET", "old3", "1")
            c.call("SELECT", "0")
            self.assertEqual(watcher.call("WATCH", "shared"), b"OK")
            self.assertEqual(watcher.call("MULTI"), b"OK")
            self.assertEqual(watcher.call("GET", "shared"), b"QUEUED")
            c.call("REPLICAOF", "127.0.0.1", str(primary.port))
            self.assertTrue(wait_until(lambda: link_status(replica) == "up", TIMEOUT), replica.log()[-2000:])
            self.assertTrue(wait_until(lambda: c.call("DBSIZE") == MANY + 1, TIMEOUT))
            result = {
                "exec": watcher.call("EXEC"),
                "shared": c.call("GET", "shared"),
                "old": c.call("EXISTS", "old"),
                "db3": (c.call("SELECT", "3"), c.call("DBSIZE")),
            }
        return result

    def test_swapdb_replaces_the_data_set_and_aborts_watchers(self):
        goblin = self.swap_replaces("goblin")
        self.assertEqual(goblin, {"exec": None, "shared": b"from-primary", "old": 0, "db3": (b"OK", 0)})
        self.assertEqual(goblin, self.swap_replaces("redis"))
        # both loaded from memory (a file was never needed)
        self.assertIn("Swapping active DB with loaded DB", "".join(s.log() for s in self.servers))

    # -- a payload that does not load -----------------------------------------------------
    def failed_load(self, mode):
        """A goblin replica with keys and a function library syncs from a
        fake primary whose payload is corrupt; returns what it holds once
        it has retried (the second PSYNC), and its log."""
        fake = FakePrimary(b"+FULLRESYNC " + REPLID + b" 0\r\n$%d\r\n" % len(CORRUPT_RDB) + CORRUPT_RDB)
        replica = self.start("goblin", "--repl-diskless-load", mode)
        try:
            with Raw(replica) as c:
                c.call("SET", "old", "kept")
                c.call("FUNCTION", "LOAD", LIBRARY)
                c.call("REPLICAOF", "127.0.0.1", str(fake.port))
                self.assertTrue(wait_until(lambda: fake.connections >= 2, TIMEOUT), replica.log()[-2000:])
                held = (c.call("GET", "old"), c.call("EXISTS", "fresh"), len(c.call("FUNCTION", "LIST")))
                c.call("REPLICAOF", "NO", "ONE")
        finally:
            fake.close()
        self.assertTrue(replica.ping_ok())
        return held, replica.log()

    def test_failed_load_with_swapdb_restores_the_old_data(self):
        held, log = self.failed_load("swapdb")
        self.assertEqual(held, (b"kept", 0, 1))
        self.assertIn("Failed trying to load the MASTER synchronization DB from socket", log)
        self.assertIn("Discarding temporary DB in background", log)

    def test_failed_load_without_swapdb_leaves_it_empty(self):
        held, log = self.failed_load("disabled")
        self.assertEqual(held, (None, 0, 0))
        self.assertIn("Failed trying to load the MASTER synchronization DB from disk", log)

    def test_sized_payload_into_memory(self):
        """A payload announced with its length ($<len>), not an EOF mark,
        kept in memory and loaded."""
        rdb = valid_rdb()
        fake = FakePrimary(b"+FULLRESYNC " + REPLID + b" 0\r\n$%d\r\n" % len(rdb) + rdb, hold=30)
        replica = self.start("goblin", "--repl-diskless-load", "on-empty-db")
        try:
            with Raw(replica) as c:
                c.call("REPLICAOF", "127.0.0.1", str(fake.port))
                self.assertTrue(wait_until(lambda: c.call("GET", "fromrdb") == b"1", TIMEOUT), replica.log()[-2000:])
                c.call("REPLICAOF", "NO", "ONE")
        finally:
            fake.close()
        self.assertIn("receiving %d bytes from master to memory" % len(rdb), replica.log())


SYS_PIDFD_GETFD = 438  # the same number on every Linux architecture


def server_socket_nodelay(pid, peer_port):
    """TCP_NODELAY of process pid's socket whose peer is local port
    peer_port, read through a duplicate of its descriptor (pidfd_getfd:
    the test is the server's parent, so it may)."""
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = os.pidfd_open(pid)
    try:
        for name in os.listdir("/proc/%d/fd" % pid):
            try:
                if not os.readlink("/proc/%d/fd/%s" % (pid, name)).startswith("socket:"):
                    continue
            except OSError:
                continue
            fd = libc.syscall(SYS_PIDFD_GETFD, pidfd, int(name), 0)
            if fd < 0:
                continue
            s = socket.socket(fileno=fd)
            try:
                if s.family == socket.AF_INET and s.getpeername()[1] == peer_port:
                    return s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
            except OSError:
                pass  # a listening socket has no peer
            finally:
                s.close()
    finally:
        os.close(pidfd)
    return None


class NoDelay(Servers):
    def nodelay_after_sync(self, kind, disable):
        primary = self.start(kind, "--repl-disable-tcp-nodelay", "yes" if disable else "no")
        replica = self.start("goblin")
        with Raw(replica) as c:
            c.call("REPLICAOF", "127.0.0.1", str(primary.port))
        self.assertTrue(wait_until(lambda: link_status(replica) == "up", TIMEOUT), replica.log()[-2000:])
        with Raw(primary) as c:
            line = c.call("CLIENT", "LIST", "TYPE", "replica").decode()
        port = int(line.split(" addr=", 1)[1].split(" ", 1)[0].rsplit(":", 1)[1])
        return server_socket_nodelay(primary.pid, port)

    def test_repl_disable_tcp_nodelay(self):
        got = {(kind, disable): self.nodelay_after_sync(kind, disable)
               for kind in ("redis", "goblin") for disable in (True, False)}
        self.assertEqual(got, {("redis", True): 0, ("redis", False): 1, ("goblin", True): 0, ("goblin", False): 1})


if __name__ == "__main__":
    gbtest.run_tests()
