"""Protocol abuse: every RESP protocol error case, unauthenticated limits,
huge and never-ending requests, clients that never read, many idle clients,
clients that vanish mid-command, maxclients.

Protocol errors must get Redis's exact text, then the connection closes;
where it applies, redis-server 7 (started by the test) answers the same bytes.
After each abuse the server answers PING on a fresh connection, and the
memory figures (INFO used_memory, VmRSS) come back near the baseline.
"""

import os
import socket
import struct
import threading
import time
import unittest

import gbtest
from gbtest import Raw, Server, encode, wait_until, SLOW

MB = 1024 * 1024

# (name, request bytes, exact reply) -- the reply is followed by the server
# closing the connection.
ERROR_CASES = [
    ("inline request over 64 KiB without newline", b"a" * 70000,
     b"-ERR Protocol error: too big inline request\r\n"),
    ("inline GET over 64 KiB without newline", b"GET " + b"k" * 70000,
     b"-ERR Protocol error: too big inline request\r\n"),
    ("multibulk count not a number", b"*abc\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),
    ("multibulk count empty", b"*\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),
    ("multibulk count with sign", b"*+1\r\n$4\r\nPING\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),
    ("multibulk count with space", b"* 1\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),
    ("multibulk count INT_MAX+1", b"*2147483648\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),
    ("multibulk count 2^63", b"*9223372036854775808\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),
    ("multibulk count string over 64 KiB", b"*" + b"1" * 70000,
     b"-ERR Protocol error: too big mbulk count string\r\n"),
    ("bulk length negative", b"*1\r\n$-1\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    ("bulk length not a number", b"*1\r\n$abc\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    ("bulk length empty", b"*1\r\n$\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    ("bulk length 512 MB + 1", b"*1\r\n$536870913\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    ("bulk length 2^31", b"*1\r\n$2147483648\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    ("bulk length 2^63-1", b"*1\r\n$9223372036854775807\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    ("bulk length 2^63", b"*1\r\n$9223372036854775808\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    ("bulk length 2^64", b"*1\r\n$18446744073709551616\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    ("bulk count string over 64 KiB", b"*1\r\n$" + b"1" * 70000,
     b"-ERR Protocol error: too big bulk count string\r\n"),
    ("wrong prefix", b"*1\r\nx\r\n", b"-ERR Protocol error: expected '$', got 'x'\r\n"),
    ("integer instead of bulk", b"*2\r\n$4\r\nECHO\r\n:5\r\n", b"-ERR Protocol error: expected '$', got ':'\r\n"),
    ("unbalanced double quote", b'SET "a b\r\n', b"-ERR Protocol error: unbalanced quotes in request\r\n"),
    ("unbalanced single quote", b"SET 'a\r\n", b"-ERR Protocol error: unbalanced quotes in request\r\n"),
    ("closing quote not followed by space", b'SET "a"b c\r\n',
     b"-ERR Protocol error: unbalanced quotes in request\r\n"),
    ("error after good pipelined commands", b"PING\r\n*1\r\n$4\r\nPING\r\n*1\r\n$x\r\n",
     b"+PONG\r\n+PONG\r\n-ERR Protocol error: invalid bulk length\r\n"),
]

# Incomplete but valid so far: no reply, the connection stays open.
WAITING_CASES = [
    ("inline of exactly 64 KiB without newline", b"a" * 65536),
    ("multibulk count INT_MAX", b"*2147483647\r\n"),
    ("bulk of exactly 512 MB announced", b"*1\r\n$536870912\r\n"),
    ("multibulk header only", b"*3\r\n"),
    ("half a bulk", b"*2\r\n$3\r\nGET\r\n$10\r\nabc"),
    ("bulk without its CRLF yet", b"*1\r\n$4\r\nPING"),
]

UNAUTH_CASES = [
    ("11 arguments before AUTH", b"*11\r\n", b"-ERR Protocol error: unauthenticated multibulk length\r\n", True),
    ("bulk of 16 KiB + 1 before AUTH", b"*1\r\n$16385\r\n",
     b"-ERR Protocol error: unauthenticated bulk length\r\n", True),
    ("AUTH with a 16 KiB + 1 password", b"*2\r\n$4\r\nAUTH\r\n$16385\r\n",
     b"-ERR Protocol error: unauthenticated bulk length\r\n", True),
    ("10 arguments before AUTH", encode(*(["ECHO"] + ["a"] * 9)),
     b"-ERR wrong number of arguments for 'echo' command\r\n", False),
    ("bulk of 16 KiB before AUTH", encode("ECHO", "a" * 16384), b"-NOAUTH Authentication required.\r\n", False),
    ("inline command before AUTH", b"GET k\r\n", b"-NOAUTH Authentication required.\r\n", False),
    ("wrong password", encode("AUTH", "nope") + encode("GET", "k"),
     b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"
     b"-NOAUTH Authentication required.\r\n", False),
    ("AUTH default <pass>", encode("AUTH", "default", "s3cret") + encode("PING"),
     b"+OK\r\n+PONG\r\n", False),
    ("AUTH <pass>, then 11 arguments", encode("AUTH", "s3cret") + encode(*(["MGET"] + ["k"] * 10)),
     b"+OK\r\n*10\r\n" + b"$-1\r\n" * 10, False),
    ("HELLO before AUTH", encode("HELLO", "2"),
     b"-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> "
     b"<pass> option can be used to authenticate the client and select the RESP protocol version at the same "
     b"time\r\n", False),
    ("HELLO 3 before AUTH", encode("HELLO", "3"),
     b"-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> "
     b"<pass> option can be used to authenticate the client and select the RESP protocol version at the same "
     b"time\r\n", False),
    ("HELLO 2 AUTH wrong", encode("HELLO", "2", "AUTH", "default", "x"),
     b"-WRONGPASS invalid username-password pair or user is disabled.\r\n", False),
    ("QUIT before AUTH", b"QUIT\r\n", b"+OK\r\n", True),
]

# QUIT ends every exchange that should not close by itself: it works before
# AUTH too, and its "+OK" then EOF marks the end of the replies.
SENTINEL = b"QUIT\r\n"
SENTINEL_REPLY = b"+OK\r\n<EOF>"


def exchange(server, data, closes, timeout=None, tcp=False):
    """Sends data (plus a QUIT when the connection should stay open) and
    returns everything the server answered, with b'<EOF>' when it closed the
    connection (not for the QUIT)."""
    with Raw(server, tcp=tcp) as c:
        if closes:
            try:
                c.send(data)
            except (BrokenPipeError, ConnectionResetError):
                pass
            return c.read_until(b"\x00\xff-never-\xff\x00", timeout=timeout or 10 * SLOW)
        c.send(data + SENTINEL)
        out = c.read_until(b"\x00\xff-never-\xff\x00", timeout=timeout or 10 * SLOW)
        return out[:-len(SENTINEL_REPLY)] if out.endswith(SENTINEL_REPLY) else out


def send_all_nothrow(sock, data):
    """sendall that stops quietly when the server hangs up; returns bytes sent."""
    sent = 0
    view = memoryview(data)
    try:
        while sent < len(data):
            sent += sock.send(view[sent:sent + MB])
    except (BrokenPipeError, ConnectionResetError, socket.timeout, OSError):
        pass
    return sent


class ProtocolErrors(unittest.TestCase):
    """Every protocol error case, against goblin-core and redis-server."""

    @classmethod
    def setUpClass(cls):
        cls.goblin = Server("goblin")
        cls.redis = None
        if gbtest.compare_with_redis():
            try:
                cls.redis = Server("redis")
            except BaseException:
                cls.goblin.cleanup()
                raise

    @classmethod
    def tearDownClass(cls):
        cls.goblin.cleanup()
        if cls.redis:
            cls.redis.cleanup()

    def test_error_cases_exact_text_then_close(self):
        before = int(self.goblin.info("stats")["protocol_errors"])
        for name, data, reply in ERROR_CASES:
            for tcp in (False, True):
                with self.subTest(case=name, tcp=tcp):
                    got = exchange(self.goblin, data, closes=True, tcp=tcp)
                    self.assertEqual(got, reply + b"<EOF>", "goblin-core, %s" % name)
                    if self.redis and not tcp:
                        self.assertEqual(exchange(self.redis, data, closes=True), got, "redis-server differs")
                    self.assertTrue(self.goblin.ping_ok())
        after = int(self.goblin.info("stats")["protocol_errors"])
        self.assertGreaterEqual(after - before, 2 * sum(1 for c in ERROR_CASES))

    def test_replies_reach_a_client_that_half_closes(self):
        """A client that sends its requests and shuts its writing side
        (`printf 'PING\\r\\n' | nc -N`) gets every reply, then the close,
        as from Redis. On io_uring the end of input closed the connection
        with the replies unwritten (the commands had run)."""
        for tcp in (False, True):
            for srv in [self.goblin] + ([self.redis] if self.redis and not tcp else []):
                with self.subTest(kind=srv.kind, tcp=tcp), Raw(srv, tcp=tcp) as c:
                    c.send(b"PING\r\n" + gbtest.encode("SET", "half", "closed") + gbtest.encode("GET", "half"))
                    c.s.shutdown(socket.SHUT_WR)
                    got = c.read_until(b"\x00\xff-never-\xff\x00", timeout=10 * SLOW)
                    self.assertEqual(got, b"+PONG\r\n+OK\r\n$6\r\nclosed\r\n<EOF>")

    def test_incomplete_requests_wait(self):
        for name, data in WAITING_CASES:
            with self.subTest(case=name):
                for srv in filter(None, (self.goblin, self.redis)):
                    with Raw(srv) as c:
                        c.send(data)
                        self.assertFalse(c.expect_eof(0.3), "%s closed on %s" % (srv.kind, name))
                        self.assertEqual(c.buf, b"", "%s answered %s" % (srv.kind, name))
                self.assertTrue(self.goblin.ping_ok())

    def test_complete_long_inline_line_is_a_request(self):
        # The 64 KiB limit is for a line without its newline; Redis executes
        # a complete longer line.
        data = b"ECHO " + b"v" * 66000 + b"\r\n"
        got = exchange(self.goblin, data, closes=False)
        self.assertEqual(got, b"$66000\r\n" + b"v" * 66000 + b"\r\n")
        if self.redis:
            self.assertEqual(exchange(self.redis, data, closes=False), got)

    def test_byte_by_byte_and_random_splits(self):
        import random
        rng = random.Random(7)
        req = (encode("SET", "split", "x" * 300) + b"GET split\r\n" + encode("ECHO", "") +
               b'ECHO "a\\x41\\n"\r\n' + encode("MGET", "split", "nokey"))
        want = (b"+OK\r\n$300\r\n" + b"x" * 300 + b"\r\n$0\r\n\r\n$3\r\naA\n\r\n*2\r\n$300\r\n" + b"x" * 300 +
                b"\r\n$-1\r\n")
        for mode in ("bytes", "random"):
            with Raw(self.goblin) as c:
                i = 0
                while i < len(req):
                    n = 1 if mode == "bytes" else rng.randint(1, 40)
                    c.send(req[i:i + n])
                    i += n
                    if mode == "bytes" and i % 50 == 0:
                        time.sleep(0.001)
                got = c.read_until(want[-7:], timeout=10 * SLOW)
                self.assertEqual(got, want, mode)

    def test_zz_server_still_serves(self):
        self.assertTrue(self.goblin.ping_ok())
        with Raw(self.goblin) as c:
            self.assertEqual(c.call("SET", "after", "abuse"), b"OK")
            self.assertEqual(c.call("GET", "after"), b"abuse")


class Unauthenticated(unittest.TestCase):
    """Redis's limits on clients that have not authenticated (--requirepass)."""

    @classmethod
    def setUpClass(cls):
        cls.goblin = Server("goblin", args=["--requirepass", "s3cret"])
        cls.redis = None
        if gbtest.compare_with_redis():
            try:
                cls.redis = Server("redis", args=["--requirepass", "s3cret"])
            except BaseException:
                cls.goblin.cleanup()
                raise

    @classmethod
    def tearDownClass(cls):
        cls.goblin.cleanup()
        if cls.redis:
            cls.redis.cleanup()

    def test_limits(self):
        for name, data, reply, closes in UNAUTH_CASES:
            with self.subTest(case=name):
                got = exchange(self.goblin, data, closes=closes)
                self.assertEqual(got, reply + (b"<EOF>" if closes else b""), name)
                if self.redis:
                    self.assertEqual(exchange(self.redis, data, closes=closes), got, "redis-server differs")

    def test_inline_with_more_than_10_arguments(self):
        # goblin-core also limits inline requests of unauthenticated clients
        # to 10 arguments; Redis 7.0 applies the limit only to multibulk
        # requests (a deliberate hardening, not compared).
        got = exchange(self.goblin, b"ECHO a a a a a a a a a a a\r\n", closes=True)
        self.assertEqual(got, b"-ERR Protocol error: unauthenticated multibulk length\r\n<EOF>")

    def test_authenticated_client_has_no_such_limits(self):
        with Raw(self.goblin) as c:
            self.assertEqual(c.call("AUTH", "s3cret"), b"OK")
            self.assertEqual(c.call("SET", "big", "b" * 100000), b"OK")
            self.assertEqual(c.call("STRLEN", "big"), 100000)
            self.assertEqual(c.call(*(["MSET"] + ["k%d" % i if j == 0 else "v" for i in range(20) for j in (0, 1)])),
                             b"OK")


class Abuse(unittest.TestCase):
    """Traffic abuse against one goblin-core; memory checked after each."""

    @classmethod
    def setUpClass(cls):
        cls.srv = Server("goblin")
        with Raw(cls.srv) as c:
            c.call("SET", "k", "v" * 100)
            for i in range(100):
                c.call("SET", "key:%d" % i, "x" * 20)
        time.sleep(0.2)
        cls.base_used = cls.srv.used_memory()
        cls.base_rss = cls.srv.rss()

    @classmethod
    def tearDownClass(cls):
        cls.srv.cleanup()

    def assert_memory_back(self, what, slack_rss=48 * MB):
        self.assertTrue(self.srv.ping_ok(), "no PONG after %s" % what)
        used = wait_until(lambda: self.srv.used_memory() <= self.base_used + 64 * 1024, 10 * SLOW)
        self.assertTrue(used, "used_memory %d stays above the baseline %d after %s" % (
            self.srv.used_memory(), self.base_used, what))
        ok = wait_until(lambda: self.srv.rss() <= self.base_rss + slack_rss, 10 * SLOW, 0.2)
        print("\n    after %s: used_memory %d (baseline %d), RSS %.1f MB (baseline %.1f MB)" % (
            what, self.srv.used_memory(), self.base_used, self.srv.rss() / MB, self.base_rss / MB), end=" ")
        self.assertTrue(ok, "RSS %.1f MB stays above baseline %.1f MB + %.0f MB after %s" % (
            self.srv.rss() / MB, self.base_rss / MB, slack_rss / MB, what))

    def clients(self):
        return int(self.srv.info("clients")["connected_clients"])

    def test_a_100mb_without_newline(self):
        with Raw(self.srv) as c:
            c.send(b"x" * 70000)
            got = c.read_until(b"\x00never", timeout=10 * SLOW)
            self.assertEqual(got, b"-ERR Protocol error: too big inline request\r\n<EOF>")
            # The rest of the 100 MB goes nowhere: the server has hung up.
            t0 = time.time()
            sent = send_all_nothrow(c.s, b"x" * (100 * MB - 70000))
            self.assertLess(sent, 100 * MB - 70000, "the server kept reading after the protocol error")
            self.assertLess(time.time() - t0, 30 * SLOW)
        self.assert_memory_back("100 MB without a newline")

    def test_b_100mb_bulk_dropped_midway(self):
        # A valid 100 MB argument (under proto-max-bulk-len) of which all but
        # the last bytes arrive, then the client vanishes.
        with Raw(self.srv) as c:
            c.send(b"*3\r\n$3\r\nSET\r\n$4\r\nhuge\r\n$%d\r\n" % (100 * MB))
            chunk = b"y" * MB
            for _ in range(99):
                c.send(chunk)
            c.send(chunk[:-10])
            grown = wait_until(lambda: self.srv.rss() > self.base_rss + 80 * MB, 10 * SLOW)
            print("\n    RSS holding 100 MB of an unfinished bulk: %.1f MB" % (self.srv.rss() / MB), end=" ")
            self.assertTrue(grown, "the server did not buffer the bulk (RSS %.1f MB)" % (self.srv.rss() / MB))
            self.assertLess(self.srv.rss(), self.base_rss + 400 * MB)
        with Raw(self.srv) as c:
            self.assertIsNone(c.call("GET", "huge"))
        self.assertTrue(wait_until(lambda: self.clients() == 1, 10 * SLOW))
        self.assert_memory_back("a dropped 100 MB bulk")

    def test_c_million_gets_never_read(self):
        # Default client-output-buffer-limit (bounded): replies pile up in the
        # server while the client does not read; memory stays bounded, and
        # all of it comes back when the client goes.
        n = 1000000
        req = encode("GET", "k") * n  # ~22 MB; replies ~107 MB
        before = int(self.srv.info("stats")["total_commands_processed"])
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(60 * SLOW)
        s.connect(self.srv.sock)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        try:
            sent = send_all_nothrow(s, req)
            self.assertEqual(sent, len(req), "the server stopped reading a client within the default limits")
            done = wait_until(lambda: int(self.srv.info("stats")["total_commands_processed"]) >= before + n,
                              120 * SLOW, 0.2)
            self.assertTrue(done, "the pipelined GETs were not all executed")
            peak = self.srv.rss()
            print("\n    RSS with ~107 MB of unread replies pending: %.1f MB" % (peak / MB), end=" ")
            self.assertTrue(self.srv.ping_ok(), "server unresponsive with a non-reading client")
            self.assertLess(peak, self.base_rss + 600 * MB, "RSS %.0f MB for ~107 MB of pending replies" % (
                peak / MB))
        finally:
            s.close()
        self.assertTrue(wait_until(lambda: self.clients() == 1, 10 * SLOW))
        self.assert_memory_back("a million unread GET replies")

    def test_d_thousand_idle_connections(self):
        conns = []
        try:
            for i in range(1000):
                fam_unix = i % 2 == 0
                s = socket.socket(socket.AF_UNIX if fam_unix else socket.AF_INET, socket.SOCK_STREAM)
                s.settimeout(30 * SLOW)
                s.connect(self.srv.sock if fam_unix else ("127.0.0.1", self.srv.port))
                conns.append(s)
            self.assertTrue(wait_until(lambda: self.clients() == 1001, 10 * SLOW),
                            "connected_clients %d" % self.clients())
            with Raw(self.srv) as c:
                listing = c.call("CLIENT", "LIST")
            self.assertEqual(len(listing.decode().strip().splitlines()), 1001)
            self.assertTrue(self.srv.ping_ok())
            # The idle ones still work.
            for s in conns[::97]:
                s.sendall(b"PING\r\n")
                self.assertEqual(s.recv(100), b"+PONG\r\n")
        finally:
            for s in conns:
                s.close()
        self.assertTrue(wait_until(lambda: self.clients() == 1, 10 * SLOW), "connections not freed")
        self.assert_memory_back("1,000 idle connections")

    def test_e_dropped_mid_command(self):
        partials = [
            b"*3\r\n$3\r\nSET\r\n$7\r\ndropped\r\n",     # half a multibulk
            b"*3\r\n$3\r\nSET\r\n$7\r\ndropped\r\n$5\r\nab",  # half a bulk
            b"*3\r\n$3\r\nSET\r\n$7\r\ndropped\r\n$5\r\nabcde",  # bulk without CRLF
            b"*3\r\n$3\r\nSE",                       # half a bulk header
            b"*3",                                   # half a count
            b"SET dropped v",                        # inline without newline
            b"MULTI\r\nSET dropped v\r\n",           # transaction never executed
        ]
        for i in range(280):
            data = partials[i % len(partials)]
            s = socket.socket(socket.AF_UNIX if i % 2 else socket.AF_INET, socket.SOCK_STREAM)
            s.settimeout(10 * SLOW)
            s.connect(self.srv.sock if i % 2 else ("127.0.0.1", self.srv.port))
            s.sendall(data)
            if i % 4 == 0 and not i % 2:
                # Reset instead of an orderly close.
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
        self.assertTrue(wait_until(lambda: self.clients() == 1, 10 * SLOW), "half-closed clients not freed")
        with Raw(self.srv) as c:
            self.assertEqual(c.call("EXISTS", "dropped"), 0)
        self.assert_memory_back("connections dropped mid-command")

    def test_z_final_memory(self):
        self.assert_memory_back("all abuse", slack_rss=48 * MB)
        # Only the asking connection is left, once the server has read the
        # EOF of the ones just closed (assert_memory_back's own included).
        self.assertTrue(wait_until(lambda: self.clients() == 1, 10 * SLOW), "connected_clients %d" % self.clients())
        self.assertEqual(int(self.srv.info("keyspace")["db0"].split(",")[0].split("=")[1]), 101)


class OutputBufferLimit(unittest.TestCase):
    def test_non_reading_client_is_disconnected(self):
        with Server("goblin", args=["--client-output-buffer-limit", "normal 4mb 0 0"]) as srv:
            with Raw(srv) as c:
                c.call("SET", "k", "v" * 100)
            base_rss = srv.rss()
            n = 1000000
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.settimeout(60 * SLOW)
            s.connect(("127.0.0.1", srv.port))
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            try:
                sent = send_all_nothrow(s, encode("GET", "k") * n)
                self.assertTrue(wait_until(
                    lambda: int(srv.info("stats")["client_output_buffer_limit_disconnections"]) == 1, 30 * SLOW),
                    "the client was not disconnected")
                # What arrived is far less than a million replies, then EOF.
                got = 0
                eof = False
                s.settimeout(10 * SLOW)
                try:
                    while True:
                        d = s.recv(1 << 16)
                        if not d:
                            eof = True
                            break
                        got += len(d)
                except (ConnectionResetError, BrokenPipeError):
                    eof = True
                self.assertTrue(eof)
                self.assertLess(got, n * 107 // 2)
            finally:
                s.close()
            self.assertIn("client-output-buffer-limit", srv.log())
            self.assertTrue(srv.ping_ok())
            # ping_ok's connection is closed, but the server may read its EOF
            # after the next connection's INFO: wait for it to be counted out.
            self.assertTrue(wait_until(lambda: int(srv.info("clients")["connected_clients"]) == 1, 10 * SLOW),
                            srv.info("clients"))
            self.assertTrue(wait_until(lambda: srv.rss() < base_rss + 48 * MB, 10 * SLOW),
                            "RSS %.1f MB vs %.1f MB before" % (srv.rss() / MB, base_rss / MB))
            del sent


class MaxClients(unittest.TestCase):
    def refused(self, srv, n):
        held = []
        try:
            for _ in range(n):
                r = Raw(srv)
                self.assertEqual(r.call("PING"), b"PONG")
                held.append(r)
            with Raw(srv) as extra:
                got = extra.read_until(b"\x00never", timeout=5 * SLOW)
            # One released: a new connection works again.
            held.pop().close()
            ok = wait_until(lambda: self._ping(srv), 5 * SLOW)
            return got, ok
        finally:
            for r in held:
                r.close()

    @staticmethod
    def _ping(srv):
        try:
            return srv.ping_ok()
        except (OSError, EOFError):
            return False

    def test_eleventh_is_refused(self):
        with Server("goblin", args=["--maxclients", "10"]) as srv:
            got, ok = self.refused(srv, 10)
            self.assertEqual(got, b"-ERR max number of clients reached\r\n<EOF>")
            self.assertTrue(ok)
            self.assertGreaterEqual(int(srv.info("stats")["rejected_connections"]), 1)
        if gbtest.compare_with_redis():
            with Server("redis", args=["--maxclients", "10"]) as red:
                rgot, _ = self.refused(red, 10)
                self.assertEqual(rgot, got, "redis-server answers the 11th differently")


if __name__ == "__main__":
    gbtest.run_tests()
