"""maxmemory-clients: client eviction (engine/core/memory/client_memory.c).

Every case runs on goblin-core and on redis-server 7.0 the same way and
expects the same story: which client is closed, which stays, what CONFIG
SET answers, INFO's evicted_clients. The clients grow their memory the ways
Redis's own client-eviction tests use: a large request sent only in part
(query buffer), replies not read (output buffer), a MULTI queue; CLIENT
NO-EVICT exempts one; the largest goes first; a percentage of maxmemory;
a ring client that stops reading (goblin only: rings are ours).
"""
import socket
import time
import unittest

import gbtest
from gbtest import Raw, Server, SLOW, encode
from test_client_memory import RING_TOOL, Stalled, connected

LIMIT = 1024 * 1024


def evicted_clients(admin):
    return int(gbtest.parse_info(admin.call("info", "stats").decode())["evicted_clients"])


def raw_socket(srv, name, rcvbuf=None):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect(srv.sock)
    s.sendall(encode("client", "setname", name))
    assert s.recv(100) == b"+OK\r\n"
    return s


def closed_by_server(s, timeout):
    """True once the server closed s (reads drain whatever it sent)."""
    s.settimeout(0.1)
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if s.recv(1 << 20) == b"":
                return True
        except socket.timeout:
            pass
        except ConnectionResetError:
            return True
    return False


def send_partial_request(s, total, sent):
    """The head of SET k <total bytes> and the first `sent` bytes of the value
    (the server may close the connection on the way)."""
    chunk = b"v" * 65536
    try:
        s.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n" % total)
        while sent > 0:
            n = min(sent, len(chunk))
            s.sendall(chunk[:n])
            sent -= n
    except (BrokenPipeError, ConnectionResetError):
        pass  # evicted while sending: closed_by_server sees it


def closed_for_too_much(srv, name, wait):
    """A client named `name` sends 1.25 MB of a 3 MB request: whether the
    server closes it within `wait` seconds."""
    s = raw_socket(srv, name)
    try:
        send_partial_request(s, 3 * LIMIT, LIMIT + LIMIT // 4)
        return closed_by_server(s, wait)
    finally:
        s.close()


class Eviction(unittest.TestCase):
    """Each test runs on both servers, fresh ones."""

    def both(self, story):
        for kind in ("goblin", "redis"):
            if kind == "redis":
                gbtest.require_redis()
            with self.subTest(server=kind), Server(kind) as srv, Raw(srv) as admin:
                story(srv, admin)

    def test_config_values_and_errors(self):
        answers = {}

        def story(srv, admin):
            got = []
            for value in ("10%", "0", "1mb", "100%", "0%", "101%", "abc", "-1", "%", "5%x", "2gb"):
                got.append(admin.call_raw("config", "set", "maxmemory-clients", value))
                got.append(admin.call_raw("config", "get", "maxmemory-clients"))
            answers[srv.kind] = got

        self.both(story)
        self.assertEqual(answers["goblin"], answers["redis"])
        self.assertIn(b"10%", b"".join(answers["goblin"]))

    def test_query_buffer_of_a_partial_request(self):
        def story(srv, admin):
            admin.call("config", "set", "maxmemory-clients", str(LIMIT))
            self.assertTrue(closed_for_too_much(srv, "big", 10 * SLOW), srv.kind)
            self.assertEqual(evicted_clients(admin), 1)
            self.assertEqual(admin.call("ping"), b"PONG")

        self.both(story)

    def test_replies_not_read(self):
        def story(srv, admin):
            admin.call("set", "big", "x" * 100000)
            admin.call("config", "set", "maxmemory-clients", str(LIMIT))
            s = raw_socket(srv, "reader", rcvbuf=4096)
            try:
                s.sendall(encode("get", "big") * 60)  # 6 MB of replies, never read
                self.assertTrue(gbtest.wait_until(lambda: evicted_clients(admin) == 1, 10 * SLOW), srv.kind)
                self.assertTrue(closed_by_server(s, 10 * SLOW))
            finally:
                s.close()

        self.both(story)

    def test_multi_queue(self):
        def story(srv, admin):
            admin.call("config", "set", "maxmemory-clients", str(LIMIT))
            s = raw_socket(srv, "queuer")
            try:
                try:
                    s.sendall(encode("multi") + encode("set", "k", "y" * 50000) * 30)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # evicted while sending
                self.assertTrue(closed_by_server(s, 10 * SLOW), srv.kind)
            finally:
                s.close()
            self.assertEqual(evicted_clients(admin), 1)

        self.both(story)

    def test_no_evict_exempts(self):
        """The exempt client's memory still counts: over the limit with it,
        Redis closes every other client it may (the admin too, unless it is
        exempt as well) and then logs that it is still over."""
        def story(srv, admin):
            admin.call("client", "no-evict", "on")
            admin.call("config", "set", "maxmemory-clients", str(LIMIT))
            s = raw_socket(srv, "kept")
            other = raw_socket(srv, "other")
            try:
                s.sendall(encode("client", "no-evict", "on"))
                self.assertEqual(s.recv(100), b"+OK\r\n")
                send_partial_request(s, 3 * LIMIT, LIMIT + LIMIT // 4)
                self.assertTrue(closed_by_server(other, 10 * SLOW), srv.kind)
                time.sleep(0.3 * SLOW)  # a cron or two: nobody else goes
                self.assertEqual(evicted_clients(admin), 1)
                line = [x for x in admin.call("client", "list").split(b"\n") if b"name=kept" in x]
                self.assertEqual(len(line), 1)
                self.assertRegex(line[0], rb" flags=[A-Za-z]*e ")
            finally:
                s.close()
                other.close()
            with open(srv.logpath, "rb") as f:
                self.assertIn(b"Over client maxmemory after evicting all evictable clients", f.read())

        self.both(story)

    def test_largest_goes_first(self):
        def story(srv, admin):
            admin.call("config", "set", "maxmemory-clients", str(LIMIT))
            small = raw_socket(srv, "small")
            large = raw_socket(srv, "large")
            try:
                send_partial_request(small, LIMIT // 4, LIMIT // 8)  # a quarter of the limit, whole
                time.sleep(0.3 * SLOW)
                send_partial_request(large, 3 * LIMIT, LIMIT - LIMIT // 8)
                self.assertTrue(closed_by_server(large, 10 * SLOW), srv.kind)
                self.assertEqual(evicted_clients(admin), 1)
                names = admin.call("client", "list")
                self.assertIn(b"name=small", names)
                self.assertNotIn(b"name=large", names)
            finally:
                small.close()
                large.close()

        self.both(story)

    def test_percent_of_maxmemory(self):
        def story(srv, admin):
            admin.call("config", "set", "maxmemory", "100mb")
            admin.call("config", "set", "maxmemory-clients", "1%")  # 1 MB
            self.assertTrue(closed_for_too_much(srv, "big", 10 * SLOW), srv.kind)
            self.assertEqual(evicted_clients(admin), 1)
            # a percentage of no maxmemory is no limit
            admin.call("config", "set", "maxmemory", "0")
            self.assertFalse(closed_for_too_much(srv, "big2", 0.5 * SLOW), srv.kind)
            self.assertEqual(evicted_clients(admin), 1)

        self.both(story)


class RingClient(unittest.TestCase):
    """A ring client that MONITORs and stops reading: its replies waiting
    for room count as a socket client's output buffer does."""

    def test_stalled_ring_client_is_evicted(self):
        if not RING_TOOL:
            self.skipTest("RING_TOOL not set (ctest sets it)")
        with Server("goblin", args=["--ring-size", "65536"]) as srv, Raw(srv) as admin, Raw(srv) as pub:
            admin.call("config", "set", "maxmemory-clients", str(LIMIT))
            stalled = Stalled(srv, "ring", "normal")
            try:
                self.assertTrue(gbtest.wait_until(lambda: connected(admin), 10 * SLOW))
                payload = b"x" * 8192
                for _ in range(100):  # 800 kB of SETs, each echoed to the monitor
                    pub.send(encode("set", "k", payload) * 4)
                    for _ in range(4):
                        pub.read()
                    if not connected(admin):
                        break
                self.assertFalse(connected(admin))
                self.assertEqual(evicted_clients(admin), 1)
                self.assertEqual(gbtest.parse_info(admin.call("info", "rings").decode())[
                    "ring_clients_closed_for_memory_total"], "1")
            finally:
                stalled.close()
            with open(srv.logpath, "rb") as f:
                lines = [line for line in f.read().splitlines() if b"Evicting client:" in line]
            self.assertEqual(len(lines), 1, lines)
            self.assertIn(b"name=stalled", lines[0])
            self.assertIn(b"addr=ring:", lines[0])


if __name__ == "__main__":
    gbtest.run_tests()
