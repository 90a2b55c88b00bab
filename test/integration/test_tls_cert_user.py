#!/usr/bin/env python3
"""tls-auth-clients-user (Valkey's, issue 31; docs/tls.md): with CN, a
client whose certificate verified starts as the ACL user its Common Name
names, when that user exists and is on; any other client starts as the
default user, as with the setting off. The default user here needs a
password, so "the default user" shows as NOAUTH.

Redis 7.0 has no such setting, so goblin-core is tested alone, with the
handshake on the helper thread and on the loop (tls-handshake-thread no)."""
import unittest

import gbtest
from gbtest import Raw, Server, free_port
from test_tls import Certs, make_cert, tls_raw

NOAUTH = b"-NOAUTH Authentication required.\r\n"


class CertUser(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.certs = Certs()
        for name in ("alice", "bob", "carol"):
            make_cert(cls.certs.dir, name, "ca", name, False)
        make_cert(cls.certs.dir, "eve", "ca", "eve\n1:M 01 Jan 00:00:00.000 # forged", False)

    def server(self, setting, handshake_thread="yes", auth_clients="yes"):
        port = free_port()
        srv = Server("goblin", args=self.certs.server_args(str(port)) + [
            "--tls-auth-clients", auth_clients, "--tls-auth-clients-user", setting,
            "--tls-handshake-thread", handshake_thread, "--requirepass", "pw", "--loglevel", "verbose"])
        self.addCleanup(srv.cleanup)
        with Raw(srv) as c:
            c.call("AUTH", "pw")
            self.assertEqual(c.call("ACL", "SETUSER", "alice", "on", ">secret", "+@all", "~*"), b"OK")
            self.assertEqual(c.call("ACL", "SETUSER", "carol", "off", "nopass", "+@all", "~*"), b"OK")
        return srv, port

    def whoami(self, port, cert):
        with tls_raw(port, self.certs.context(cert)) as c:
            return c.call_raw("ACL", "WHOAMI")

    def test_cn_names_the_user(self):
        for thread in ("yes", "no"):
            with self.subTest(handshake_thread=thread):
                srv, port = self.server("CN", thread)
                self.assertEqual(self.whoami(port, "alice"), b"$5\r\nalice\r\n")
                self.assertIn("TLS: Auto-authenticated client as alice", srv.log())
                # no such user, a user that is off: the default user, who must AUTH
                self.assertEqual(self.whoami(port, "bob"), NOAUTH)
                self.assertEqual(self.whoami(port, "carol"), NOAUTH)
                self.assertIn("TLS: Auto-authentication failed, user 'bob' not found", srv.log())
                self.assertIn("TLS: Auto-authentication failed, user 'carol' is disabled", srv.log())
                # a CN with a line break: no user, and no forged log line
                self.assertEqual(self.whoami(port, "eve"), NOAUTH)
                self.assertIn("user 'eve?1:M 01 Jan 00:00:00.000 # forged' not found", srv.log())
                self.assertNotIn("\n1:M 01 Jan", srv.log())
                # the first command after the handshake already runs as alice
                with tls_raw(port, self.certs.context("alice")) as c:
                    c.send(b"SET k v\r\nGET k\r\n")
                    self.assertEqual(c.read_until(b"$1\r\nv\r\n"), b"+OK\r\n$1\r\nv\r\n")

    def test_off_and_config_set(self):
        srv, port = self.server("off")
        self.assertEqual(self.whoami(port, "alice"), NOAUTH)
        with Raw(srv) as c:
            c.call("AUTH", "pw")
            self.assertEqual(c.call("CONFIG", "GET", "tls-auth-clients-user"), [b"tls-auth-clients-user", b"off"])
            self.assertEqual(c.call("CONFIG", "SET", "tls-auth-clients-user", "cn"), b"OK")
            self.assertEqual(c.call("CONFIG", "GET", "tls-auth-clients-user"), [b"tls-auth-clients-user", b"CN"])
            self.assertTrue(c.call_raw("CONFIG", "SET", "tls-auth-clients-user", "O").startswith(b"-ERR"))
        self.assertEqual(self.whoami(port, "alice"), b"$5\r\nalice\r\n")
        # AUTH still switches users on a connection that came in as alice
        with tls_raw(port, self.certs.context("alice")) as c:
            self.assertEqual(c.call("AUTH", "pw"), b"OK")
            self.assertEqual(c.call("ACL", "WHOAMI"), b"default")

    def test_optional_without_certificate(self):
        srv, port = self.server("CN", auth_clients="optional")
        self.assertEqual(self.whoami(port, None), NOAUTH)
        self.assertEqual(self.whoami(port, "alice"), b"$5\r\nalice\r\n")


if __name__ == "__main__":
    gbtest.run_tests()
