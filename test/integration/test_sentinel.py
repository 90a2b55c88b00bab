#!/usr/bin/env python3
"""Real redis-sentinel (the system package, Redis 7.0.15) managing
goblin-core: three sentinels monitor a goblin primary with two goblin
replicas; the primary is SIGKILLed while a client writes with WAIT 1; the
sentinels promote a replica, repoint the other, and turn the old primary
into a replica when it comes back. No write that WAIT acknowledged is lost,
and redis-py's Sentinel client follows the new primary. A mixed set (a
redis-server replica beside a goblin one) fails over the same way."""
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import unittest

import gbtest
from gbtest import SLOW, Server, wait_until
from test_replication_pairs import follow, repl

REDIS_SENTINEL = gbtest._tool("REDIS_SENTINEL", "redis-sentinel")
TIMEOUT = 60 * SLOW
NAME = "gbmaster"


def repl_during_reconfiguration(srv):
    """INFO replication of a server the sentinels may be reconfiguring, or
    {} when the connection closed first. Sentinel repoints an instance with
    MULTI, REPLICAOF, CONFIG REWRITE, CLIENT KILL TYPE normal, EXEC: the kill
    closes every normal connection, ours included when it lands between our
    connect and the reply (redis-server behaves the same)."""
    try:
        return repl(srv)
    except (EOFError, ConnectionError):
        return {}


class Sentinel:
    def __init__(self, primary_port, quorum=2):
        self.dir = tempfile.mkdtemp(prefix="gbit-sentinel-")
        self.port = gbtest.free_port()
        conf = os.path.join(self.dir, "sentinel.conf")
        with open(conf, "w") as f:
            f.write("port %d\nbind 127.0.0.1\ndir %s\n" % (self.port, self.dir))
            f.write("sentinel monitor %s 127.0.0.1 %d %d\n" % (NAME, primary_port, quorum))
            f.write("sentinel down-after-milliseconds %s %d\n" % (NAME, int(1000 * SLOW)))
            f.write("sentinel failover-timeout %s %d\n" % (NAME, int(6000 * SLOW)))
            f.write("sentinel parallel-syncs %s 1\n" % NAME)
        self.log = open(os.path.join(self.dir, "sentinel.log"), "wb")
        self.proc = subprocess.Popen([REDIS_SENTINEL, conf], stdout=self.log, stderr=subprocess.STDOUT,
                                     preexec_fn=gbtest._child_setup)
        assert wait_until(lambda: self.ping(), 10 * SLOW), "sentinel did not start"

    def ping(self):
        try:
            with gbtest.Raw(("127.0.0.1", self.port)) as c:
                return c.call("PING") == b"PONG"
        except OSError:
            return False

    def call(self, *args):
        with gbtest.Raw(("127.0.0.1", self.port)) as c:
            return c.call(*args)

    def master_port(self):
        addr = self.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", NAME)
        return int(addr[1]) if addr else None

    def replicas(self):
        rows = self.call("SENTINEL", "REPLICAS", NAME) or []
        return [dict(zip(row[::2], row[1::2])) for row in rows]

    def text(self):
        with open(os.path.join(self.dir, "sentinel.log"), "rb") as f:
            return f.read().decode("utf-8", "replace")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class SentinelFailover(unittest.TestCase):
    def setUp(self):
        if not REDIS_SENTINEL:
            gbtest.reference_missing("redis-sentinel is not installed (`make test` installs the redis-sentinel package)")
        gbtest.require_redis()
        self.servers, self.sentinels = [], []

    def tearDown(self):
        for s in self.sentinels:
            s.stop()
        for s in self.servers:
            s.cleanup()

    def start(self, kind, port=None, dir=None):
        # A config file: Sentinel's reconfiguration ends with CONFIG REWRITE.
        s = Server(kind, port=port, dir=dir, config="", args=["--repl-diskless-sync-delay", "0"] if kind == "redis" else [])
        self.servers.append(s)
        return s

    def run_failover(self, replica_kinds, rounds=1):
        primary = self.start("goblin")
        replicas = [self.start(k) for k in replica_kinds]
        for r in replicas:
            follow(self, r, primary)
        self.sentinels = [Sentinel(primary.port) for _ in range(3)]
        # Every sentinel knows both replicas and the two other sentinels.
        def discovered():
            return all(len(s.replicas()) == len(replicas) and
                       int(dict(zip(*[iter(s.call("SENTINEL", "MASTER", NAME))] * 2))[b"num-other-sentinels"]) == 2
                       for s in self.sentinels)
        self.assertTrue(wait_until(discovered, TIMEOUT), "sentinels never saw the set:\n" + self.sentinels[0].text())
        acked = []
        for rnd in range(rounds):
            primary = self.kill_and_recover(primary, rnd, acked)
        self.write_through_sentinel()

    def settled_primary(self):
        """The primary all three sentinels name, once it says it is one and
        every other live server replicates from it with its link up; None
        while a failover or a reconfiguration is under way."""
        ports = {s.master_port() for s in self.sentinels}
        if len(ports) != 1:
            return None
        port = ports.pop()
        live = [s for s in self.servers if s.alive()]
        primary = next((s for s in live if s.port == port), None)
        if primary is None or repl_during_reconfiguration(primary).get("role") != "master":
            return None
        for r in live:
            if r is primary:
                continue
            info = repl_during_reconfiguration(r)
            if info.get("master_port") != str(port) or info.get("master_link_status") != "up":
                return None
        return primary

    def wait_settled(self, when):
        found = [None]

        def settled():
            found[0] = self.settled_primary()
            return found[0] is not None
        self.assertTrue(wait_until(settled, TIMEOUT),
                        "no settled primary %s: %r\n%s" % (when, [(s.port, repl(s)) for s in self.servers if s.alive()],
                                                            self.sentinels[0].text()))
        return found[0]

    def write_through_sentinel(self):
        """A Sentinel-aware client (redis-py) writes to the primary the
        sentinels name; WAIT on its connection proves every replica applied
        the write, and each then shows it. The primary is read from the
        sentinels before the write and the client's server is checked
        against it: on a loaded machine the sentinels may fail over again
        at any moment (a PING unanswered for down-after-milliseconds is
        enough), and a comparison with a primary named earlier would then
        look at two replicas that have not yet received the write. Such a
        failover, seen in the topology, is the one reason to try again."""
        import redis.sentinel
        sc = redis.sentinel.Sentinel([("127.0.0.1", s.port) for s in self.sentinels], socket_timeout=5 * SLOW)
        for _ in range(3):
            primary = self.wait_settled("before the write through Sentinel")
            replicas = [s for s in self.servers if s.alive() and s is not primary]
            m = sc.master_for(NAME, socket_timeout=15 * SLOW)
            m.set("through-sentinel", "yes")
            wrote_to = int(m.info("server")["tcp_port"])
            confirmed = m.wait(len(replicas), int(10000 * SLOW))
            if wrote_to == primary.port and confirmed == len(replicas):
                break
            after = self.wait_settled("after the write through Sentinel")
            self.assertTrue(wrote_to != primary.port or after is not primary,
                            "the replicas of %d confirmed the write %d times of %d: %r" %
                            (primary.port, confirmed, len(replicas), [repl(r) for r in replicas]))
        else:
            self.fail("the sentinels kept failing over during the write through Sentinel")
        self.assertEqual(m.get("through-sentinel"), b"yes")
        for r in replicas:
            with r.raw() as c:
                self.assertEqual(c.call("GET", "through-sentinel"), b"yes")

    def kill_and_recover(self, primary, rnd, acked):
        """SIGKILLs the primary under a WAIT 1 writer; returns the primary
        the sentinels promote, once the killed one is back as its replica.
        Every write acknowledged so far, in any round, must be there."""
        stop = threading.Event()

        def writer():
            i = 0
            while not stop.is_set():
                try:
                    c = gbtest.Raw(("127.0.0.1", primary.port))
                except OSError:
                    return
                with c:
                    try:
                        while not stop.is_set():
                            key = "r%d:k%06d" % (rnd, i)
                            c.call("SET", key, "v")
                            if c.call("WAIT", 1, 1000) >= 1:
                                acked.append(key)
                            i += 1
                    except (OSError, EOFError, gbtest.ProtocolViolation):
                        return

        before = len(acked)
        t = threading.Thread(target=writer)
        t.start()
        time.sleep(1.0)
        old_port, old_dir = primary.port, primary.dir
        os.kill(primary.pid, signal.SIGKILL)
        primary.proc.wait()
        stop.set()
        t.join()
        self.assertGreater(len(acked) - before, 10)

        # The sentinels agree on a promoted replica.
        def promoted():
            ports = {s.master_port() for s in self.sentinels}
            return len(ports) == 1 and old_port not in ports
        self.assertTrue(wait_until(promoted, TIMEOUT), "no failover:\n" + self.sentinels[0].text())
        # The other replicas follow the new primary (the one the sentinels
        # name once it has settled: on a loaded machine they may fail over
        # once more before that).
        new = self.wait_settled("after the failover")
        self.assertNotEqual(new.port, old_port)
        with new.raw() as c:
            missing = [k for k in acked if c.call("EXISTS", k) != 1]
        self.assertEqual(missing, [], "acknowledged writes lost in the failover")

        # The old primary comes back on its port and its files: the
        # sentinels turn it into a replica of the primary they name (asked
        # again: on a loaded machine they may have failed over once more).
        back = self.start("goblin", port=old_port, dir=old_dir)

        def rejoined():
            current = self.sentinels[0].master_port()
            r = repl_during_reconfiguration(back)
            return (current not in (None, old_port) and r.get("role") == "slave" and
                    r.get("master_port") == str(current) and r.get("master_link_status") == "up")
        self.assertTrue(wait_until(rejoined, TIMEOUT),
                        "the old primary did not rejoin as a replica: %r\n%s" % (repl(back), self.sentinels[0].text()))
        return self.wait_settled("after the old primary rejoined")

    def test_goblin_primary_and_replicas(self):
        # Two rounds: the second kills the primary the first one promoted.
        self.run_failover(("goblin", "goblin"), rounds=2)

    def test_mixed_set(self):
        self.run_failover(("goblin", "redis"))


if __name__ == "__main__":
    gbtest.run_tests()
