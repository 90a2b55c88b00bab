"""A typed SBE call over a ring obeys admission's rules (engine/core/request/gate.c
judge(): one list for RESP and typed calls), each compared with what
redis-server 7.0 answers the same command's RESP form over a socket:
min-replicas-to-write (NOREPLICAS), maxmemory (OOM), a read-only replica
(READONLY), a replica with its link down and replica-serve-stale-data no
(MASTERDOWN), and CLIENT PAUSE WRITE (the typed write waits for the pause,
a typed read does not).

The ring client is test/integration/ring_tool.c (RING_TOOL, set by ctest),
in its "calls" mode: one typed call a line, "ok ..." or "err <words>".
"""
import os
import socket
import subprocess
import time
import unittest

import gbtest
from gbtest import Raw, Err, Server, SLOW, wait_until

RING_TOOL = os.environ.get("RING_TOOL")


def typed_calls(srv, lines, after_claim=()):
    """The typed calls' results; after_claim: commands sent over a socket
    once the ring is claimed, before the calls (a rule that would refuse
    RING CLAIM itself, as MASTERDOWN does)."""
    p = subprocess.Popen([RING_TOOL, srv.sock, "sbe", "calls"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
    with Raw(srv) as r:
        if after_claim:
            assert wait_until(lambda: b"ring_slots_claimed:1\r\n" in r.call("INFO", "rings"), 30 * SLOW)
        for step in after_claim:
            assert r.call(*step) == b"OK", step
    out, _ = p.communicate("".join(l + "\n" for l in lines).encode(), timeout=60 * SLOW)
    return out.decode().splitlines()


def dead_port():
    """A local port nobody listens on (a primary that is never reached)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@unittest.skipUnless(RING_TOOL, "RING_TOOL is not set (ctest sets it)")
class TypedAdmission(unittest.TestCase):
    def servers(self):
        gbtest.require_redis()
        pair = []
        for kind in ("goblin", "redis"):
            s = Server(kind)
            self.addCleanup(s.cleanup)
            pair.append(s)
        return pair

    def assert_refused_alike(self, config, typed, resp):
        """config applied to redis-server, and to goblin-core once the
        ring is claimed; then the typed call and the RESP one are refused
        with the same words."""
        goblin, redis = self.servers()
        with Raw(redis) as r:
            for step in config:
                self.assertEqual(r.call(*step), b"OK", step)
            want = r.call(*resp)
        self.assertIsInstance(want, Err, resp)
        self.assertEqual(typed_calls(goblin, [typed], config), ["err " + bytes(want).decode()], typed)

    def test_noreplicas(self):
        self.assert_refused_alike([("CONFIG", "SET", "min-replicas-to-write", "1")], "zadd z 1 m",
                                  ("ZADD", "z", "1", "m"))

    def test_oom(self):
        self.assert_refused_alike([("CONFIG", "SET", "maxmemory", "1")], "set k v", ("SET", "k", "v"))

    def test_readonly_replica(self):
        self.assert_refused_alike([("REPLICAOF", "127.0.0.1", str(dead_port()))], "lpush l x", ("LPUSH", "l", "x"))

    def test_stale_replica(self):
        self.assert_refused_alike([("CONFIG", "SET", "replica-serve-stale-data", "no"),
                                   ("REPLICAOF", "127.0.0.1", str(dead_port()))], "get k", ("GET", "k"))

    def test_client_pause_holds_typed_writes(self):
        goblin = Server("goblin")
        self.addCleanup(goblin.cleanup)
        with Raw(goblin) as r:
            self.assertEqual(r.call("CLIENT", "PAUSE", "600", "WRITE"), b"OK")
        start = time.monotonic()
        self.assertEqual(typed_calls(goblin, ["get k"]), ["ok nil"])
        self.assertLess(time.monotonic() - start, 0.5 * SLOW + 0.4)
        start = time.monotonic()  # before the pause begins: it lasts 600 ms from there at most
        with Raw(goblin) as r:
            self.assertEqual(r.call("CLIENT", "PAUSE", "600", "WRITE"), b"OK")
        self.assertEqual(typed_calls(goblin, ["set k v"]), ["ok 0"])
        self.assertGreaterEqual(time.monotonic() - start, 0.5)
        with Raw(goblin) as r:
            self.assertEqual(r.call("GET", "k"), b"v")


if __name__ == "__main__":
    gbtest.run_tests()
