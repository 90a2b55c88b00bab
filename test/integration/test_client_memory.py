"""One client-memory policy for every transport (engine/core/memory/client_memory.c).

A client that stops reading is closed at its client-output-buffer-limit
class's hard limit, or once it has stayed over the soft limit for longer
than the soft seconds - whether it is a socket client or a ring client.
The matrix: transport (Unix socket, RESP ring) x class (normal: a MONITOR
client, as Redis classes it; pubsub: a subscriber) x limit (hard, soft).
The stalled client is named "stalled"; a socket client feeds it (SET for
MONITOR, PUBLISH for the subscriber) 8 kB at a time.

The socket rows run on redis-server 7.0 too (the reference: closed at the
same point in the story); the ring rows expect exactly what the socket rows
do, and the log line the engine writes for both (the client's CLIENT LIST
line, which limit, which class).
"""
import os
import socket
import subprocess
import time
import unittest

import gbtest
from gbtest import Raw, Server, SLOW, encode

RING_TOOL = os.environ.get("RING_TOOL")
PAYLOAD = b"x" * 8192
SOFT_SECONDS = 1


def script_input(commands):
    out = bytearray()
    for cmd in commands:
        out += b"%d\n" % len(cmd)
        for a in cmd:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"%d\n" % len(a) + a + b"\n"
    return bytes(out)


class Stalled:
    """A client named "stalled" that MONITORs or SUBSCRIBEs, reads the
    confirmation and then reads nothing more."""

    def __init__(self, srv, transport, cls):
        self.srv, self.transport = srv, transport
        start = ["MONITOR"] if cls == "normal" else ["SUBSCRIBE", "feed"]
        if transport == "socket":
            self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            self.s.connect(srv.sock)
            self.s.sendall(encode("client", "setname", "stalled") + encode(*start))
            self.proc = None
        else:
            self.proc = subprocess.Popen([RING_TOOL, srv.sock, "resp", "script"], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            self.proc.stdin.write(script_input([["CLIENT", "SETNAME", "stalled"], start]))
            self.proc.stdin.flush()  # and then reads nothing more: stdin stays open

    def close(self):
        if self.proc:
            self.proc.stdin.close()
            self.proc.kill()
            self.proc.wait(timeout=10 * SLOW)
            self.proc.stdout.close()
        else:
            self.s.close()


def connected(admin):
    return b"name=stalled" in admin.call("client", "list")


def feed(pub, cls, n):
    """n messages of 8 kB for the stalled client, pipelined."""
    one = encode("set", "k", PAYLOAD) if cls == "normal" else encode("publish", "feed", PAYLOAD)
    pub.send(one * n)
    for _ in range(n):
        pub.read()


def feed_until_closed(test, admin, pub, cls, most):
    """Feeds in steps of 4 messages until the stalled client is gone;
    returns the messages it took (None: never closed)."""
    for sent in range(4, most + 1, 4):
        feed(pub, cls, 4)
        if not connected(admin):
            return sent
    return None


def run_case(test, srv, transport, cls, limit):
    with Raw(srv) as admin, Raw(srv) as pub:
        if limit == "hard":
            admin.call("config", "set", "client-output-buffer-limit", "%s 256kb 0 0" % cls)
        else:
            admin.call("config", "set", "client-output-buffer-limit", "%s 0 128kb %d" % (cls, SOFT_SECONDS))
        stalled = Stalled(srv, transport, cls)
        try:
            test.assertTrue(gbtest.wait_until(lambda: connected(admin) and (
                cls == "normal" or pub.call("pubsub", "numsub", "feed")[1] == 1), 10 * SLOW))
            if limit == "hard":
                # the socket's kernel buffers (about 200 kB) or the ring (64 kB), then 256 kB pending
                took = feed_until_closed(test, admin, pub, cls, 400)
                test.assertIsNotNone(took, "%s %s: never closed at the hard limit" % (transport, cls))
                test.assertLess(took, 120)
            else:
                feed(pub, cls, 80)  # 640 kB: well over the soft limit, for less than its seconds
                test.assertTrue(connected(admin), "%s %s: closed before the soft seconds" % (transport, cls))
                time.sleep(SOFT_SECONDS + 1.2)
                took = feed_until_closed(test, admin, pub, cls, 40)
                test.assertIsNotNone(took, "%s %s: still there after the soft seconds" % (transport, cls))
            test.assertEqual(admin.call("ping"), b"PONG")
        finally:
            stalled.close()
    if srv.kind == "goblin":
        with Raw(srv) as admin:
            info = gbtest.parse_info(admin.call("info", "stats").decode())
        test.assertEqual(int(info["client_output_buffer_limit_disconnections"]), 1)
        if transport == "ring":
            test.assertEqual(srv.info("rings")["ring_clients_closed_for_memory_total"], "1")
        with open(srv.logpath, "rb") as f:
            lines = [line for line in f.read().splitlines() if b"overcoming of output buffer limits" in line]
        test.assertEqual(len(lines), 1, lines)
        test.assertIn(b"name=stalled", lines[0])
        test.assertIn(b"%s limit of client-output-buffer-limit %s)" % (limit.encode(), cls.encode()), lines[0])
        test.assertIn(b"addr=ring:" if transport == "ring" else b"addr=%s" % srv.sock.encode(), lines[0])


class Matrix:
    TRANSPORT = None

    def setUp(self):
        if self.TRANSPORT == "ring" and not RING_TOOL:
            self.skipTest("RING_TOOL not set (ctest sets it)")

    def case(self, kind, cls, limit):
        if kind == "redis":
            gbtest.require_redis()
        args = ["--ring-size", "65536"] if kind == "goblin" else []
        with Server(kind, args=args) as srv:
            run_case(self, srv, self.TRANSPORT, cls, limit)

    def test_normal_hard(self):
        self.case("goblin", "normal", "hard")

    def test_normal_soft(self):
        self.case("goblin", "normal", "soft")

    def test_pubsub_hard(self):
        self.case("goblin", "pubsub", "hard")

    def test_pubsub_soft(self):
        self.case("goblin", "pubsub", "soft")


class SocketClients(Matrix, unittest.TestCase):
    TRANSPORT = "socket"

    def test_redis_normal_hard(self):
        self.case("redis", "normal", "hard")

    def test_redis_normal_soft(self):
        self.case("redis", "normal", "soft")

    def test_redis_pubsub_hard(self):
        self.case("redis", "pubsub", "hard")

    def test_redis_pubsub_soft(self):
        self.case("redis", "pubsub", "soft")


class RingClients(Matrix, unittest.TestCase):
    TRANSPORT = "ring"


if __name__ == "__main__":
    gbtest.run_tests()
