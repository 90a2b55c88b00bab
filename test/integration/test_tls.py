"""TLS on the TCP listener (issue 31, docs/tls.md), goblin-core beside
redis-server 7.0 with the same certificates and flags:

  * a throwaway CA, server and client certificates (and a second CA whose
    client certificate must be refused) made with the openssl command line;
  * replies byte for byte over TLS for a command mix with a 1 MB value and
    a pipeline; redis-cli --tls and redis-py ssl=True;
  * tls-auth-clients yes (no client certificate: refused), optional, no;
    a client certificate from another CA, or expired, refused;
  * garbage, a half handshake and a close mid-handshake beside a client
    whose commands keep being answered;
  * the plain port and the TLS port at once;
  * CONFIG SET tls-cert-file/tls-key-file: the open connection keeps
    working, a new one sees the new certificate; a bad path refused with
    Redis's error; CONFIG GET of the tls-* options;
  * start-up failures (no certificate, a key that is not the
    certificate's) with Redis's log lines.
"""

import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import threading
import time
import unittest

import gbtest
from gbtest import Raw, Server, encode, free_port, REDIS_CLI

import redis as redispy


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_key(cwd, name):
    openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-out", name + ".key",
            cwd=cwd)


def make_ca(cwd, name):
    make_key(cwd, name)
    openssl("req", "-x509", "-new", "-key", name + ".key", "-out", name + ".crt", "-days", "2", "-subj",
            "/CN=" + name, cwd=cwd)


def make_cert(cwd, name, ca, cn, server, days="2"):
    """A certificate for name.key signed by ca (server: for 127.0.0.1);
    days "-1": it expired yesterday."""
    make_key(cwd, name)
    openssl("req", "-new", "-key", name + ".key", "-out", name + ".csr", "-subj", "/CN=" + cn, cwd=cwd)
    ext = os.path.join(cwd, name + ".ext")
    with open(ext, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n" if server else "extendedKeyUsage=clientAuth\n")
    openssl("x509", "-req", "-in", name + ".csr", "-CA", ca + ".crt", "-CAkey", ca + ".key", "-set_serial",
            str(int.from_bytes(os.urandom(8), "big")), "-out", name + ".crt", "-days", days, "-extfile", ext, cwd=cwd)


class Certs:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="gbit-tls-")
        make_ca(self.dir, "ca")
        make_ca(self.dir, "otherca")
        make_cert(self.dir, "server", "ca", "goblin-server-1", True)
        make_cert(self.dir, "server2", "ca", "goblin-server-2", True)
        make_cert(self.dir, "client", "ca", "client-1", False)
        make_cert(self.dir, "stranger", "otherca", "stranger", False)
        make_cert(self.dir, "expired", "ca", "expired", False, days="-1")

    def path(self, name):
        return os.path.join(self.dir, name)

    def server_args(self, tls_port):
        return ["--tls-port", tls_port, "--tls-cert-file", self.path("server.crt"), "--tls-key-file",
                self.path("server.key"), "--tls-ca-cert-file", self.path("ca.crt")]

    def context(self, client="client"):
        """A client context that trusts the CA and shows client's certificate
        (None: no certificate)."""
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.load_verify_locations(self.path("ca.crt"))
        if client:
            ctx.load_cert_chain(self.path(client + ".crt"), self.path(client + ".key"))
        return ctx


def tls_raw(port, ctx, timeout=10, host="127.0.0.1"):
    """gbtest.Raw over TLS: the exact reply bytes, parsed as Raw does (from
    127.0.0.1 whatever loopback address host is: protected mode)."""
    sock = socket.create_connection((host, port), timeout=timeout, source_address=("127.0.0.1", 0))
    r = Raw.__new__(Raw)
    r.timeout = timeout
    r.s = ctx.wrap_socket(sock, server_hostname="127.0.0.1")
    r.buf = bytearray()
    return r


def served(port, ctx, host="127.0.0.1"):
    """Whether a TLS client with ctx gets PONG (False: the handshake or the
    first read failed, as a refused certificate shows in TLS 1.3)."""
    try:
        r = tls_raw(port, ctx, timeout=5, host=host)
        try:
            r.send(b"PING\r\n")
            return r.read_until(b"\r\n", timeout=5) == b"+PONG\r\n"
        finally:
            r.close()
    except (ssl.SSLError, OSError, gbtest.ProtocolViolation, EOFError):
        return False


def peer_cn(port, ctx):
    r = tls_raw(port, ctx)
    try:
        subject = dict(x[0] for x in r.s.getpeercert()["subject"])
        return subject["commonName"]
    finally:
        r.close()


def client_hello():
    """The first flight of a real TLS client, for half handshakes."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_side=False)
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return out.read()


class TlsCase(unittest.TestCase):
    """Every case with goblin-core's handshakes on their helper thread (the
    default)."""
    HANDSHAKE_THREAD = True

    @classmethod
    def setUpClass(cls):
        gbtest.require_redis()
        cls.certs = Certs()
        cls.tls = {}
        cls.servers = {}
        for kind in ("goblin", "redis"):
            port = free_port()
            extra = [] if kind == "redis" or cls.HANDSHAKE_THREAD else ["--tls-handshake-thread", "no"]
            cls.servers[kind] = Server(kind, args=cls.certs.server_args(port) + extra)
            cls.tls[kind] = port

    @classmethod
    def tearDownClass(cls):
        for s in cls.servers.values():
            s.cleanup()
        shutil.rmtree(cls.certs.dir, ignore_errors=True)

    def both(self, fn):
        return {kind: fn(kind) for kind in ("goblin", "redis")}

    def assertSame(self, got):
        self.assertEqual(got["goblin"], got["redis"])
        return got["goblin"]

    def config_set(self, kind, *args):
        with Raw(self.servers[kind]) as r:
            return r.call_raw("CONFIG", "SET", *args)

    # -- replies -------------------------------------------------------------------------
    def test_requests_before_close_notify_run(self):
        """A client's last requests and its close_notify in one segment (a
        piped `openssl s_client` does it): the requests run, as on Redis,
        which reads one record at a time; goblin-core once closed at the
        close_notify without running what it had decrypted before it."""
        def send_and_close(kind, key):
            sock = socket.create_connection(("127.0.0.1", self.tls[kind]), timeout=10)
            inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
            obj = self.certs.context().wrap_bio(inc, out, server_hostname="127.0.0.1")
            try:
                while True:
                    try:
                        obj.do_handshake()
                        break
                    except ssl.SSLWantReadError:
                        sock.sendall(out.read())
                        data = sock.recv(65536)
                        if not data:
                            raise EOFError("closed during the handshake")
                        inc.write(data)
                obj.write(encode("SET", key, "v") + encode("INCR", key + ":n"))
                try:
                    obj.unwrap()
                except ssl.SSLWantReadError:
                    pass
                sock.sendall(out.read())  # the Finished, the requests and the close_notify together
                while sock.recv(65536):
                    pass
            finally:
                sock.close()

        def run(kind):
            for i in range(5):
                send_and_close(kind, "cn%d" % i)
            with Raw(self.servers[kind]) as r:
                return [r.call("EXISTS", "cn%d" % i) for i in range(5)]
        self.assertEqual(self.assertSame(self.both(run)), [1] * 5)

    def test_command_mix_byte_for_byte(self):
        big = os.urandom(512 * 1024).hex().encode()  # 1 MB
        cmds = [("SET", "k", "v"), ("GET", "k"), ("INCR", "n"), ("INCRBY", "n", "41"), ("LPUSH", "l", "a", "b", "c"),
                ("LRANGE", "l", "0", "-1"), ("HSET", "h", "f", "1", "g", "2"), ("HGETALL", "h"), ("INCR", "k"),
                ("NOSUCH",), ("SET", "big", big), ("STRLEN", "big"), ("GET", "big"), ("GETRANGE", "big", "0", "9"),
                ("DEL", "k", "n", "l", "h", "big"), ("ECHO", "end-of-the-mix")]
        payload = b"".join(gbtest.encode(*c) for c in cmds)
        end = b"$14\r\nend-of-the-mix\r\n"

        def run(kind):
            r = tls_raw(self.tls[kind], self.certs.context(), timeout=30)
            try:
                r.send(payload)
                return r.read_until(end, timeout=30)
            finally:
                r.close()
        got = self.assertSame(self.both(run))
        self.assertIn(b"$1048576\r\n" + big + b"\r\n", got)

    def test_redis_cli_tls(self):
        c = self.certs

        def run(kind):
            base = [REDIS_CLI, "--tls", "--cert", c.path("client.crt"), "--key", c.path("client.key"), "--cacert",
                    c.path("ca.crt"), "-p", str(self.tls[kind])]
            out = []
            for args in (["SET", "cli", "value"], ["GET", "cli"], ["LPUSH", "cl", "x", "y"], ["LRANGE", "cl", "0", "-1"],
                         ["DEL", "cli", "cl"]):
                p = subprocess.run(base + args, capture_output=True, timeout=30)
                out.append((p.returncode, p.stdout, p.stderr))
            return out
        got = self.assertSame(self.both(run))
        self.assertEqual(got[1][1], b"value\n")

    def test_redis_py_ssl(self):
        c = self.certs

        def run(kind):
            r = redispy.Redis(host="127.0.0.1", port=self.tls[kind], ssl=True, ssl_certfile=c.path("client.crt"),
                              ssl_keyfile=c.path("client.key"), ssl_ca_certs=c.path("ca.crt"))
            try:
                p = r.pipeline(transaction=False)
                for i in range(16):
                    p.set("py%d" % i, "v%d" % i)
                for i in range(16):
                    p.get("py%d" % i)
                p.delete(*["py%d" % i for i in range(16)])
                return p.execute()
            finally:
                r.close()
        got = self.assertSame(self.both(run))
        self.assertEqual(got[16], b"v0")

    # -- client certificates -------------------------------------------------------------
    def test_auth_clients_modes(self):
        c = self.certs
        cases = {"none": c.context(None), "client": c.context("client"), "stranger": c.context("stranger"),
                 "expired": c.context("expired")}
        outcome = {}
        try:
            for mode in ("yes", "optional", "no"):
                for kind in ("goblin", "redis"):
                    self.assertEqual(self.config_set(kind, "tls-auth-clients", mode), b"+OK\r\n")
                outcome[mode] = self.assertSame(
                    self.both(lambda kind: {name: served(self.tls[kind], ctx) for name, ctx in cases.items()}))
        finally:
            for kind in ("goblin", "redis"):
                self.config_set(kind, "tls-auth-clients", "yes")
        self.assertEqual(outcome["yes"], {"none": False, "client": True, "stranger": False, "expired": False})
        self.assertEqual(outcome["optional"], {"none": True, "client": True, "stranger": False, "expired": False})
        self.assertEqual(outcome["no"], {"none": True, "client": True, "stranger": True, "expired": True})

    # -- hostile peers -------------------------------------------------------------------
    def test_hostile_handshakes_do_not_disturb_others(self):
        port = self.tls["goblin"]
        steady = tls_raw(port, self.certs.context())
        answered = []
        stop = threading.Event()

        def keep_asking():
            i = 0
            while not stop.is_set():
                steady.send(gbtest.encode("ECHO", "n%d" % i))
                answered.append(steady.read_until(b"\r\n" + b"n%d" % i + b"\r\n", timeout=10))
                i += 1
        t = threading.Thread(target=keep_asking)
        t.start()
        hello = client_hello()
        hostile = []
        try:
            for i in range(20):
                garbage = socket.create_connection(("127.0.0.1", port))
                garbage.sendall(b"PING\r\n" if i % 2 else os.urandom(4096))
                hostile.append(garbage)
                half = socket.create_connection(("127.0.0.1", port))
                half.sendall(hello[: len(hello) // 2])
                hostile.append(half)
                gone = socket.create_connection(("127.0.0.1", port))
                gone.sendall(hello)
                gone.close()
                time.sleep(0.02)
        finally:
            stop.set()
            t.join(30)
        self.assertFalse(t.is_alive())
        self.assertGreater(len(answered), 5)
        # The garbage ones were closed by the server; the half handshakes
        # wait (as Redis's do) and go when they close.
        for s in hostile[::2]:
            s.settimeout(5)
            try:
                while s.recv(4096):
                    pass
            except (ConnectionResetError, socket.timeout):
                pass
        for s in hostile:
            s.close()
        steady.send(b"PING\r\n")
        self.assertEqual(steady.read_until(b"\r\n"), b"+PONG\r\n")
        steady.close()
        self.assertTrue(self.servers["goblin"].ping_ok())

    def test_silent_handshake_ends_after_timeout(self):
        """A peer that connects to the TLS port and stays silent (or stops
        half way through its ClientHello) is closed once it has been idle
        for longer than `timeout`, as Redis closes any idle client; with
        timeout 0 (the default) it may wait, on both servers."""
        def outcome(kind, limit, wait):
            self.assertEqual(self.config_set(kind, "timeout", str(limit)), b"+OK\r\n")
            try:
                silent = socket.create_connection(("127.0.0.1", self.tls[kind]))
                half = socket.create_connection(("127.0.0.1", self.tls[kind]))
                half.sendall(client_hello()[:40])
                closed = []
                deadline = time.monotonic() + wait
                for s in (silent, half):
                    s.settimeout(max(0.1, deadline - time.monotonic()))
                    try:
                        closed.append(s.recv(4096) == b"")
                    except ConnectionResetError:
                        closed.append(True)
                    except socket.timeout:
                        closed.append(False)
                    s.close()
                return closed
            finally:
                self.config_set(kind, "timeout", "0")
        self.assertEqual(self.both(lambda kind: outcome(kind, 1, 10 * gbtest.SLOW)),
                         {"goblin": [True, True], "redis": [True, True]})
        self.assertEqual(self.both(lambda kind: outcome(kind, 0, 2.5)),
                         {"goblin": [False, False], "redis": [False, False]})
        self.assertTrue(self.servers["goblin"].ping_ok())

    def test_where_handshakes_run(self):
        """With the handshake thread (the default) goblin-core's engine sees
        a connection once it is established: five connections stuck half
        way through their handshake are not clients. Redis 7.0 shakes hands
        on its main thread and lists them; so does goblin-core with
        tls-handshake-thread no."""
        hello = client_hello()

        def run(kind):
            srv, port = self.servers[kind], self.tls[kind]
            halves = []
            try:
                for _ in range(5):
                    s = socket.create_connection(("127.0.0.1", port))
                    s.sendall(hello[: len(hello) // 2])
                    halves.append(s)
                steady = tls_raw(port, self.certs.context())
                steady.send(b"PING\r\n")
                self.assertEqual(steady.read_until(b"\r\n"), b"+PONG\r\n")
                with Raw(srv) as r:
                    listed = r.call("CLIENT", "LIST").decode()
                    clients = int(gbtest.parse_info(r.call("INFO", "clients"))["connected_clients"])
                steady.close()
            finally:
                for s in halves:
                    s.close()
            threads = set()
            for tid in os.listdir("/proc/%d/task" % srv.pid):
                with open("/proc/%d/task/%s/comm" % (srv.pid, tid)) as f:
                    threads.add(f.read().strip())
            # The generic POSIX platform layer names no threads (no
            # pthread_setname_np there): whether it runs is then unknown.
            named = kind == "redis" or any(t.startswith("gb-") for t in threads)
            return ("gb-tls-accept" in threads) if named else None, clients, \
                listed.count("laddr=127.0.0.1:%d" % port)
        got = self.both(run)
        self.assertEqual(got["redis"], (False, 7, 6))
        if self.HANDSHAKE_THREAD:
            self.assertIn(got["goblin"][0], (True, None))
            self.assertEqual(got["goblin"][1:], (2, 1))  # this one and the established TLS client
        else:
            self.assertIn(got["goblin"][0], (False, None))
            self.assertEqual(got["goblin"][1:], got["redis"][1:])

    # -- listeners -----------------------------------------------------------------------
    def test_plain_and_tls_ports_together(self):
        def run(kind):
            with Raw(self.servers[kind], tcp=True) as plain:
                a = plain.call_raw("SET", "side", "by-side")
                r = tls_raw(self.tls[kind], self.certs.context())
                try:
                    r.send(gbtest.encode("GET", "side"))
                    b = r.read_until(b"by-side\r\n")
                finally:
                    r.close()
                return a, b, plain.call_raw("DEL", "side")
        self.assertSame(self.both(run))

    # -- configuration -------------------------------------------------------------------
    def test_config_get_tls(self):
        def run(kind):
            with Raw(self.servers[kind]) as r:
                names = ["tls-auth-clients", "tls-protocols", "tls-ciphers", "tls-ciphersuites",
                         "tls-prefer-server-ciphers", "tls-session-caching", "tls-session-cache-size",
                         "tls-session-cache-timeout", "tls-dh-params-file", "tls-replication", "tls-cluster",
                         "tls-key-file-pass", "tls-ca-cert-dir"]
                return [r.call_raw("CONFIG", "GET", n) for n in names]
        self.assertSame(self.both(run))

    def test_config_set_certificate_reload(self):
        c = self.certs

        def run(kind):
            port = self.tls[kind]
            old = tls_raw(port, c.context())
            try:
                before = peer_cn(port, c.context())
                bad = self.config_set(kind, "tls-cert-file", c.path("missing.crt"))
                mismatch = self.config_set(kind, "tls-cert-file", c.path("server2.crt"))  # key is server.key's
                ok = self.config_set(kind, "tls-cert-file", c.path("server2.crt"), "tls-key-file",
                                     c.path("server2.key"))
                after = peer_cn(port, c.context())
                old.send(b"PING\r\n")
                still = old.read_until(b"\r\n")
                with Raw(self.servers[kind]) as r:
                    shown = r.call("CONFIG", "GET", "tls-cert-file")[1]
                self.config_set(kind, "tls-cert-file", c.path("server.crt"), "tls-key-file", c.path("server.key"))
                return before, bad, mismatch, ok, after, still, shown
            finally:
                old.close()
        got = self.assertSame(self.both(run))
        self.assertEqual(got[0], "goblin-server-1")
        self.assertEqual(got[1], b"-ERR CONFIG SET failed (possibly related to argument 'tls-cert-file') - Unable "
                                 b"to update TLS configuration. Check server logs.\r\n")
        self.assertEqual(got[4], "goblin-server-2")
        self.assertEqual(got[5], b"+PONG\r\n")

    def test_protocols_and_ciphers(self):
        c = self.certs

        def client(maximum):
            ctx = c.context()
            ctx.maximum_version = maximum
            return ctx

        def run(kind):
            port = self.tls[kind]
            # empty words (Redis splits on every space) are unknown words
            out = [self.config_set(kind, "tls-protocols", v) for v in (" ", "TLSv1.2 ", "TLSv1.2  TLSv1.3")]
            self.assertTrue(all(b"Unable to update TLS configuration" in o for o in out), out)
            out = [self.config_set(kind, "tls-protocols", "TLSv9"),
                   self.config_set(kind, "tls-ciphers", "NO-SUCH-CIPHER"),
                   self.config_set(kind, "tls-ciphersuites", "NO_SUCH_SUITE"),
                   self.config_set(kind, "tls-protocols", "TLSv1.3")]
            out += [served(port, client(ssl.TLSVersion.TLSv1_2)), served(port, client(ssl.TLSVersion.TLSv1_3))]
            out.append(self.config_set(kind, "tls-protocols", "tlsv1.2"))
            out += [served(port, client(ssl.TLSVersion.TLSv1_2)), served(port, client(ssl.TLSVersion.TLSv1_3))]
            out.append(self.config_set(kind, "tls-protocols", ""))
            with Raw(self.servers[kind]) as r:
                out.append(r.call_raw("CONFIG", "GET", "tls-protocols"))
            return out
        got = self.assertSame(self.both(run))
        self.assertEqual(got[4:6], [False, True])
        self.assertEqual(got[7:9], [True, True])  # a TLS 1.3 client falls back to 1.2

    def test_config_set_bind_moves_tls_listeners(self):
        ctx = self.certs.context()

        def run(kind):
            port = self.tls[kind]
            old = tls_raw(port, ctx)
            try:
                out = [self.config_set(kind, "bind", "127.0.0.1 127.0.0.2")]
                out += [served(port, ctx), served(port, ctx, host="127.0.0.2")]
                out.append(self.config_set(kind, "bind", "127.0.0.1"))
                out += [served(port, ctx), served(port, ctx, host="127.0.0.2")]
                old.send(b"PING\r\n")
                out.append(old.read_until(b"\r\n"))
                return out
            finally:
                old.close()
        got = self.assertSame(self.both(run))
        self.assertEqual(got, [b"+OK\r\n", True, True, b"+OK\r\n", True, False, b"+PONG\r\n"])

    def test_config_set_tls_port(self):
        def run(kind):
            port = free_port()
            a = self.config_set(kind, "tls-port", str(port))
            ok = served(port, self.certs.context())
            old_gone = not served(self.tls[kind], self.certs.context())
            b = self.config_set(kind, "tls-port", str(self.tls[kind]))
            return a, ok, old_gone, b, served(self.tls[kind], self.certs.context())
        self.assertEqual(self.assertSame(self.both(run)), (b"+OK\r\n", True, True, b"+OK\r\n", True))

    def test_startup_failures(self):
        c = self.certs
        cases = {
            "no certificate": (["--tls-port", str(free_port())], "No tls-cert-file configured!"),
            "key mismatch": (["--tls-port", str(free_port()), "--tls-cert-file", c.path("server.crt"),
                              "--tls-key-file", c.path("server2.key"), "--tls-ca-cert-file", c.path("ca.crt")],
                             "Failed to load private key"),
            "no CA": (["--tls-port", str(free_port()), "--tls-cert-file", c.path("server.crt"), "--tls-key-file",
                       c.path("server.key")], "Either tls-ca-cert-file or tls-ca-cert-dir must be specified"),
            "bad path": (["--tls-port", str(free_port()), "--tls-cert-file", c.path("nothere.crt"), "--tls-key-file",
                          c.path("server.key"), "--tls-ca-cert-file", c.path("ca.crt")],
                         "Failed to load certificate: " + c.path("nothere.crt")),
        }
        for what, (args, line) in cases.items():
            for kind in ("goblin", "redis"):
                s = Server(kind, args=args, wait=False)
                try:
                    rc = s.proc.wait(15)
                    self.assertNotEqual(rc, 0, (kind, what))
                    self.assertIn(line, s.log(), (kind, what))
                finally:
                    s.cleanup()


class TlsOnLoopCase(TlsCase):
    """The same cases with tls-handshake-thread no: the handshakes on the
    engine's loop (gb_tls_read), as Redis does them."""
    HANDSHAKE_THREAD = False


if __name__ == "__main__":
    gbtest.run_tests()
