#!/usr/bin/env python3
"""replica-ignore-disk-write-errors (Redis 7.0's processCommand): a replica
that cannot persist (its last background save failed with a save policy
set, so it answers MISCONF to its own clients) and receives a write from
its primary.

- no (the default): the replica stops rather than hold data its disk
  lacks. redis-server panics ("Replica was unable to write command to
  disk."); goblin-core logs the same line and exits with status 1. Both
  are compared: the process ends with a non-zero status and that line.
- yes: the write applies, with the warning "Replica is applying a command
  even though it is unable to write to disk."; the replica's own clients
  still get MISCONF for PING, as on redis-server.

The primary is a redis-server in every case (goblin-core where Redis is
missing), so only the replica differs.
"""
import os
import tempfile
import unittest

import gbtest
from gbtest import Err, Raw, Server, wait_until

TIMEOUT = 20 * gbtest.SLOW
STOPPED = "Replica was unable to write command to disk."
APPLYING = "Replica is applying a command even though it is unable to write to disk."


class ReplicaDiskErrors(unittest.TestCase):
    def setUp(self):
        self.servers = []

    def tearDown(self):
        for s in self.servers:
            s.cleanup()

    def start(self, kind, *args):
        s = Server(kind, args=list(args))
        self.servers.append(s)
        return s

    def replica_that_cannot_save(self, kind, ignore):
        """A primary and a replica of `kind` (the primary is redis-server when
        Redis is here, else goblin-core) and a replica of `kind` whose background
        save has failed (its dir removed), so writes are refused there."""
        primary = self.start("redis" if gbtest.REDIS_SERVER else "goblin")
        replica = self.start(kind, "--save", "3600 1", "--replica-ignore-disk-write-errors", ignore)
        with Raw(replica) as c:
            self.assertEqual(c.call("REPLICAOF", "127.0.0.1", str(primary.port)), b"OK")
            self.assertTrue(wait_until(lambda: replica.info("replication").get("master_link_status") == "up",
                                       TIMEOUT), replica.info("replication"))
            gone = tempfile.mkdtemp(prefix="gbit-gone-")
            self.assertEqual(c.call("CONFIG", "SET", "dir", gone), b"OK")
            os.rmdir(gone)  # the save cannot create its file any more
            reply = c.call("BGSAVE")
            self.assertTrue(reply == b"Background saving started" or isinstance(reply, Err), reply)
            self.assertTrue(wait_until(lambda: replica.info("persistence")["rdb_last_bgsave_status"] == "err",
                                       TIMEOUT))
            ping = c.call("PING")
            self.assertTrue(isinstance(ping, Err) and ping.startswith(b"MISCONF"), ping)
        return primary, replica

    def stops_on_a_write(self, kind):
        primary, replica = self.replica_that_cannot_save(kind, "no")
        with Raw(primary) as p:
            self.assertEqual(p.call("SET", "k", "v"), b"OK")
        self.assertTrue(wait_until(lambda: replica.proc.poll() is not None, TIMEOUT), "the replica kept running")
        self.assertNotEqual(replica.proc.returncode, 0)
        self.assertIn(STOPPED, replica.log())
        return replica.proc.returncode

    def applies_with_a_warning(self, kind):
        primary, replica = self.replica_that_cannot_save(kind, "yes")
        with Raw(primary) as p:
            self.assertEqual(p.call("SET", "k", "v"), b"OK")
        with Raw(replica) as c:
            self.assertTrue(wait_until(lambda: c.call("GET", "k") == b"v", TIMEOUT))
            self.assertTrue(c.call("PING").startswith(b"MISCONF"))
        self.assertTrue(replica.alive())
        self.assertEqual(replica.log().count(APPLYING), 1)  # at most one each 10 s
        self.assertNotIn(STOPPED, replica.log())

    def test_no_stops_the_replica(self):
        self.assertEqual(self.stops_on_a_write("goblin"), 1)
        if gbtest.compare_with_redis():
            self.stops_on_a_write("redis")  # a panic: SIGABRT

    def test_yes_applies_with_a_warning(self):
        self.applies_with_a_warning("goblin")
        if gbtest.compare_with_redis():
            self.applies_with_a_warning("redis")


if __name__ == "__main__":
    gbtest.run_tests()
