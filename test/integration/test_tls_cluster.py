#!/usr/bin/env python3
"""tls-cluster (issue 31): the cluster bus over TLS, as redis-server 7.0
runs it, with test_tls.py's throwaway CA:

  * three goblin-core nodes with tls-port and tls-cluster yes, formed by
    `redis-cli --tls --cluster create` on their TLS ports; keys set and
    read back with `redis-cli -c --tls`, which follows MOVED to TLS ports;
  * a mixed cluster (redis-server 7.0.15 and goblin-core) over the TLS
    bus: every node gives the same CLUSTER SLOTS and SHARDS to a TLS
    client (TLS ports) and to a plaintext one (plaintext ports, the
    bus's pport), and the same MOVED text;
  * a plaintext peer, and a TLS peer without a client certificate, on a
    TLS bus port: refused, the node keeps its links and keeps serving.
"""
import os
import socket
import ssl
import subprocess
import unittest

import gbtest
from gbtest import Raw, Server, wait_until
from test_cluster import bus_message, call, converged, free_cluster_port, key_in_slot, nodes_view
from test_tls import Certs, peer_cn, tls_raw

TIMEOUT = 15 * gbtest.SLOW


def tls_node(certs, kind, extra=()):
    """A cluster node whose bus speaks TLS: tls-port T (bus T + 10000)
    beside a plaintext port of its own. A parallel test can take the TLS
    port or its bus port between the pick and the bind: then a fresh pair."""
    for attempt in range(5):
        tls_port = free_cluster_port()
        try:
            srv = Server(kind, args=["--cluster-enabled", "yes", "--cluster-node-timeout", "1000",
                                     "--tls-cluster", "yes"] + certs.server_args(str(tls_port)) + list(extra))
        except gbtest.ServerError as e:
            if attempt == 4 or "address already in use" not in str(e).lower():
                raise
            continue
        srv.tls_port = tls_port
        return srv


class TlsCluster(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.certs = Certs()

    def cli(self, *args):
        """redis-cli over TLS with the client certificate."""
        c = self.certs
        cmd = [gbtest.REDIS_CLI, "--tls", "--cacert", c.path("ca.crt"), "--cert", c.path("client.crt"),
               "--key", c.path("client.key")] + [str(a) for a in args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60 * gbtest.SLOW)

    def form(self, kinds):
        """kinds: "redis", "goblin", or "goblin-loop" (tls-handshake-thread
        no: the bus's accepted handshakes run on the loop)."""
        servers = [tls_node(self.certs, k.split("-")[0], ["--tls-handshake-thread", "no"] if k == "goblin-loop" else [])
                   for k in kinds]
        self.addCleanup(lambda: [s.cleanup() for s in servers])
        r = self.cli("--cluster", "create", *["127.0.0.1:%d" % s.tls_port for s in servers], "--cluster-yes")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("[OK] All 16384 slots covered", r.stdout)
        self.assertTrue(wait_until(lambda: converged(servers), TIMEOUT),
                        [nodes_view(s) for s in servers] + [s.log()[-1500:] for s in servers])
        return servers

    def tls(self, srv):
        return tls_raw(srv.tls_port, self.certs.context())

    def test_goblin_cluster_over_tls_bus(self):
        servers = self.form(["goblin", "goblin", "goblin-loop"])
        for s in servers:
            self.assertIn(":%d (TLS)" % (s.tls_port + 10000), s.log())  # "Cluster bus listening on <addr>:<port> (TLS)"
        # every node is known at its TLS port (TLS client) and plaintext port (plain client)
        with self.tls(servers[0]) as c:
            tls_view = c.call("CLUSTER", "NODES").decode()
        plain_view = call(servers[0], "CLUSTER", "NODES").decode()
        for s in servers:
            self.assertIn("127.0.0.1:%d@%d" % (s.tls_port, s.tls_port + 10000), tls_view)
            self.assertIn("127.0.0.1:%d@%d" % (s.port, s.tls_port + 10000), plain_view)
        for i in range(12):
            node = servers[i % 3]
            r = self.cli("-c", "-p", node.tls_port, "SET", "key:%d" % i, "v%d" % i)
            self.assertEqual(r.stdout.strip(), "OK", r.stdout + r.stderr)
        for i in range(12):
            node = servers[(i + 1) % 3]
            r = self.cli("-c", "-p", node.tls_port, "GET", "key:%d" % i)
            self.assertEqual(r.stdout.strip(), "v%d" % i, r.stdout + r.stderr)
        self.assertEqual(sum(call(s, "DBSIZE") for s in servers), 12)
        self.plaintext_peer_refused(servers[0], servers)
        self.plaintext_peer_refused(servers[2], servers)
        self.certificate_rotated(servers[0], servers)

    def certificate_rotated(self, srv, servers):
        """CONFIG SET tls-cert-file/-key-file: the bus's new links show the
        new certificate, the open ones stay, the cluster stays whole."""
        bus = srv.tls_port + 10000
        self.assertEqual(peer_cn(bus, self.certs.context()), "goblin-server-1")
        with Raw(srv) as c:
            self.assertEqual(c.call("CONFIG", "SET", "tls-cert-file", self.certs.path("server2.crt"),
                                    "tls-key-file", self.certs.path("server2.key")), b"OK")
        self.assertTrue(wait_until(lambda: peer_cn(bus, self.certs.context()) == "goblin-server-2", TIMEOUT))
        self.assertTrue(wait_until(lambda: converged(servers), TIMEOUT))

    def plaintext_peer_refused(self, srv, servers):
        """A plaintext bus message, and a TLS hello without a client
        certificate, end their connections; nothing else changes."""
        before = sorted(nodes_view(srv))
        bus = ("127.0.0.1", srv.tls_port + 10000)
        with socket.create_connection(bus, timeout=5 * gbtest.SLOW) as s:
            s.sendall(bus_message(2, b"f" * 40, myip=b"127.0.0.1"))  # a MEET in plaintext
            got = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
            self.assertFalse(got.startswith(b"RCmb"), got[:16])  # no PONG: the bytes were no TLS record
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.load_verify_locations(self.certs.path("ca.crt"))

        def refused_without_certificate():
            try:
                with socket.create_connection(bus, timeout=5 * gbtest.SLOW) as s:
                    with ctx.wrap_socket(s, server_hostname="127.0.0.1") as t:
                        t.sendall(b"x" * 16)
                        return t.recv(1) == b""  # TLS 1.3: the refusal comes after the client's Finished
            except socket.timeout:
                return False  # neither refused nor served: a hung handshake
            except (ssl.SSLError, OSError):
                return True
        self.assertTrue(refused_without_certificate())
        self.assertEqual(call(srv, "PING"), b"PONG")
        self.assertTrue(wait_until(lambda: converged(servers), TIMEOUT))
        self.assertEqual(sorted(nodes_view(srv)), before)

    def test_mixed_cluster_with_redis(self):
        gbtest.require_redis()
        servers = self.form(["redis", "goblin", "goblin"])
        redis, goblin = servers[0], servers[1]

        def shards(conn):
            out = []
            for shard in conn.call("CLUSTER", "SHARDS"):
                fields = dict(zip(shard[::2], shard[1::2]))
                nodes = [{k: v for k, v in zip(n[::2], n[1::2]) if k not in (b"replication-offset", b"health")}
                         for n in fields[b"nodes"]]
                out.append((fields[b"slots"], nodes))
            return sorted(out, key=repr)

        def views(srv):
            with self.tls(srv) as t, Raw(srv) as p:
                return {"slots-tls": sorted(t.call("CLUSTER", "SLOTS")),
                        "slots-plain": sorted(p.call("CLUSTER", "SLOTS")),
                        "shards-tls": shards(t), "shards-plain": shards(p)}
        want, got = views(redis), views(goblin)
        self.assertEqual(got, want)
        ports = {s.port for s in servers}
        tls_ports = {s.tls_port for s in servers}
        self.assertEqual({e[2][1] for e in want["slots-tls"]}, tls_ports)
        self.assertEqual({e[2][1] for e in want["slots-plain"]}, ports)
        # MOVED for a key the other node serves: its TLS port to a TLS
        # client, its plaintext port to a plaintext one
        for srv, other in ((redis, goblin), (goblin, redis)):
            slot = next(e[0] for e in want["slots-plain"] if e[2][1] == other.port)
            key = key_in_slot(slot)
            with self.tls(srv) as t, Raw(srv) as p:
                self.assertEqual(t.call_raw("GET", key), b"-MOVED %d 127.0.0.1:%d\r\n" % (slot, other.tls_port))
                self.assertEqual(p.call_raw("GET", key), b"-MOVED %d 127.0.0.1:%d\r\n" % (slot, other.port))
        for i in range(9):
            r = self.cli("-c", "-p", servers[i % 3].tls_port, "SET", "mixed:%d" % i, i)
            self.assertEqual(r.stdout.strip(), "OK", r.stdout + r.stderr)
        r = self.cli("-c", "-p", goblin.tls_port, "GET", "mixed:4")
        self.assertEqual(r.stdout.strip(), "4")
        self.plaintext_peer_refused(goblin, servers)


if __name__ == "__main__":
    gbtest.run_tests()
