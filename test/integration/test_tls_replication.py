"""tls-replication: the replication link over TLS (transport/replica/link.c
with transport/tls's client session), in every pairing of goblin-core and
redis-server 7.0 as primary and replica, with the certificates of
test_tls.py's throwaway CA:

  * the primary serves TLS only to clients with a certificate
    (tls-auth-clients yes); the replica connects to its TLS port with
    tls-replication yes and presents its server certificate, or
    tls-client-cert-file's; keys written before and after the sync arrive;
  * a replica that does not trust the primary's CA never gets the link up,
    and the primary keeps serving; a goblin replica logs why.
"""
import unittest

import gbtest
from gbtest import Raw, Server, free_port, wait_until
from test_tls import Certs

SLOW = gbtest.SLOW
PAIRS = [(p, r) for p in ("goblin", "redis") for r in ("goblin", "redis")]


def link_up(replica):
    return replica.info("replication").get("master_link_status") == "up"


class TlsReplication(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        gbtest.require_redis()
        cls.certs = Certs()

    def primary(self, kind):
        port = free_port()
        srv = Server(kind, args=self.certs.server_args(str(port)) + (
            ["--repl-diskless-sync-delay", "0"] if kind == "redis" else []))
        self.addCleanup(srv.cleanup)
        return srv, port

    def replica(self, kind, tls_port, ca="ca.crt", client_cert=None, extra=()):
        args = list(extra) + ["--tls-replication", "yes", "--tls-cert-file", self.certs.path("server.crt"),
                "--tls-key-file", self.certs.path("server.key"), "--tls-ca-cert-file", self.certs.path(ca),
                "--replicaof", "127.0.0.1", str(tls_port)]
        if client_cert:
            args += ["--tls-client-cert-file", self.certs.path(client_cert + ".crt"),
                     "--tls-client-key-file", self.certs.path(client_cert + ".key")]
        srv = Server(kind, args=args)
        self.addCleanup(srv.cleanup)
        return srv

    def test_every_pairing_replicates(self):
        for pkind, rkind in PAIRS:
            for client_cert in (None, "client"):
                with self.subTest(primary=pkind, replica=rkind, client_cert=client_cert):
                    primary, tls_port = self.primary(pkind)
                    with Raw(primary) as p:
                        p.call("SET", "before", "1")
                        p.call("RPUSH", "list", "a", "b", "c")
                    replica = self.replica(rkind, tls_port, client_cert=client_cert)
                    self.assertTrue(wait_until(lambda: link_up(replica), 20 * SLOW), replica.log()[-2000:])
                    with Raw(primary) as p:
                        p.call("SET", "after", "x" * 100000)
                        p.call("INCR", "counter")
                    with Raw(replica) as r:
                        self.assertTrue(wait_until(lambda: r.call("GET", "counter") == b"1", 10 * SLOW))
                        self.assertEqual(r.call("GET", "before"), b"1")
                        self.assertEqual(r.call("LRANGE", "list", "0", "-1"), [b"a", b"b", b"c"])
                        self.assertEqual(r.call("GET", "after"), b"x" * 100000)
                    self.assertEqual(primary.info("replication")["connected_slaves"], "1")
                    primary.cleanup()
                    replica.cleanup()

    def test_a_replica_announces_its_tls_port(self):
        """Under tls-replication a replica with a tls-port announces it
        (REPLCONF listening-port), as Redis 7.0's syncWithMaster: its
        primary's INFO and ROLE, and FAILOVER TO, name the port it serves
        TLS on."""
        for rkind in ("goblin", "redis"):
            with self.subTest(replica=rkind):
                primary, tls_port = self.primary("goblin")
                own = free_port()
                replica = self.replica(rkind, tls_port, extra=["--tls-port", str(own)])
                self.assertTrue(wait_until(lambda: link_up(replica), 20 * SLOW), replica.log()[-2000:])
                self.assertIn("port=%d," % own, primary.info("replication")["slave0"])

    def test_untrusted_primary_is_refused(self):
        for pkind, rkind in PAIRS:
            with self.subTest(primary=pkind, replica=rkind):
                primary, tls_port = self.primary(pkind)
                replica = self.replica(rkind, tls_port, ca="otherca.crt")
                self.assertFalse(wait_until(lambda: link_up(replica), 2 * SLOW))
                self.assertEqual(primary.info("replication")["connected_slaves"], "0")
                self.assertTrue(primary.ping_ok())
                if rkind == "goblin":
                    self.assertIn("TLS handshake with MASTER failed", replica.log())
                    self.assertIn("certificate verify failed", replica.log())
                primary.cleanup()
                replica.cleanup()


if __name__ == "__main__":
    gbtest.run_tests()
