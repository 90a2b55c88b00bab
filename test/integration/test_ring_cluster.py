#!/usr/bin/env python3
"""The cluster-aware ring client (include/goblin/ring_cluster.h, issue 30),
driven through test/integration/ring_cluster_tool.c: a cluster formed by
redis-cli --cluster create on this host, each node with a Unix socket.

- every goblin primary is reached by a ring, typed and generic calls land
  on the node that owns their key's slot (checked on each node), over SBE
  and RESP rings and over sockets forced by GOBLIN_RING_CLUSTER_SOCKETS;
- a slot moved with its keys (SETSLOT IMPORTING/MIGRATING, MIGRATE,
  SETSLOT NODE) while the tool writes and reads it: no error reaches the
  tool (MOVED and ASK followed) and every write is there at the end;
- a redis-server 7.0 primary beside goblin ones is reached by socket;
- a hostile node (a fake server here) that answers with absurd counts,
  malformed slot maps or endless redirections makes a call fail with
  words, never crashes the client or makes it allocate what it claims."""
import os
import socketserver
import subprocess
import tempfile
import threading
import time
import unittest

import gbtest
from gbtest import Raw, wait_until
from test_cluster import TIMEOUT, call, cluster_server, converged, keyslot, nodes_view, redis_cli

TOOL = os.path.join(os.environ.get("GOBLIN_BUILD_DIR") or os.path.dirname(gbtest.GOBLIN), "tests",
                    "ring_cluster_tool")


def tool(seed, proto, *args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    r = subprocess.run([TOOL, seed, proto] + [str(a) for a in args], capture_output=True, text=True,
                       timeout=60 * max(gbtest.SLOW, 1), env=e)
    return r.returncode, r.stdout, r.stderr


def form(test, kinds):
    servers = [cluster_server(k) for k in kinds]
    test.addCleanup(lambda: [s.cleanup() for s in servers])
    r = redis_cli("--cluster", "create", *["127.0.0.1:%d" % s.port for s in servers], "--cluster-yes")
    test.assertEqual(r.returncode, 0, r.stdout + r.stderr)
    test.assertTrue(wait_until(lambda: converged(servers), TIMEOUT), [nodes_view(s) for s in servers])
    return servers


def owner_of(servers, slot):
    for s in servers:
        for start, end, primary, *_ in call(s, "CLUSTER", "SLOTS"):
            if start <= slot <= end:
                return next(x for x in servers if x.port == primary[1])
    raise AssertionError("slot %d unserved" % slot)


class RingCluster(unittest.TestCase):

    def check_map(self, servers, seed, proto, want, env=None):
        rc, out, err = tool(seed, proto, "map", env=env)
        self.assertEqual(rc, 0, out + err)
        lines = sorted(out.split("\n")[:-1])
        got = sorted((l.split()[2], l.split()[3]) for l in lines)
        self.assertEqual(got, sorted(("127.0.0.1:%d" % s.port, want[s.kind]) for s in servers), out)

    def check_fill(self, servers, seed, proto, prefix, n=2000, env=None):
        rc, out, err = tool(seed, proto, "fill", prefix, n, env=env)
        self.assertEqual((rc, out), (0, "ok %d\n" % n), err)
        # every key on the node that owns its slot, with its value
        counts = {}
        for i in range(n):
            key = b"%s:%d" % (prefix.encode(), i)
            counts.setdefault(keyslot(key), []).append((key, b"v%d" % i))
        by_owner = {}
        for slot, keys in counts.items():
            by_owner.setdefault(owner_of(servers, slot), []).append((slot, keys))
        for s, slots in by_owner.items():
            with Raw(s) as c:
                for slot, keys in slots[:200]:
                    self.assertGreaterEqual(c.call("CLUSTER", "COUNTKEYSINSLOT", slot), len(keys))
                for slot, keys in slots:
                    for key, val in keys:
                        self.assertEqual(c.call("GET", key), val, (s.kind, key))
        self.assertEqual(len(by_owner), len(servers))

    def test_goblin_cluster(self):
        servers = form(self, ["goblin", "goblin", "goblin"])
        seed = servers[0].sock
        self.check_map(servers, seed, "sbe", {"goblin": "ring"})
        self.check_fill(servers, seed, "sbe", "s")
        self.check_fill(servers, "127.0.0.1:%d" % servers[1].port, "resp", "r")
        forced = {"GOBLIN_RING_CLUSTER_SOCKETS": "1"}
        self.check_map(servers, seed, "sbe", {"goblin": "socket"}, env=forced)
        self.check_fill(servers, seed, "sbe", "t", env=forced)
        self.move_under_load(servers, seed, {})
        self.move_under_load(servers, seed, forced)

    def move_under_load(self, servers, seed, env):
        """One slot, with the keys the tool keeps writing to it, moved from
        its owner to another node while the tool runs."""
        tag = "mv%d" % len(env)
        slot = keyslot(b"{%s}" % tag.encode())
        src = owner_of(servers, slot)
        dst = next(s for s in servers if s is not src)
        src_id, dst_id = call(src, "CLUSTER", "MYID"), call(dst, "CLUSTER", "MYID")
        before = call(src, "CLUSTER", "COUNTKEYSINSLOT", slot)  # earlier tests' keys that hash there
        stop = os.path.join(tempfile.mkdtemp(prefix="gbit-ringcl-"), "stop")
        prefix = "c%s" % tag
        proc = subprocess.Popen([TOOL, seed, "sbe", "churn", prefix, tag, stop], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=dict(os.environ, **env))
        try:
            time.sleep(0.5)
            self.assertEqual(call(dst, "CLUSTER", "SETSLOT", slot, "IMPORTING", src_id), b"OK")
            self.assertEqual(call(src, "CLUSTER", "SETSLOT", slot, "MIGRATING", dst_id), b"OK")
            time.sleep(0.3)
            # in batches, as redis-cli --cluster reshard does, while new keys keep arriving
            for _ in range(1000):
                keys = call(src, "CLUSTER", "GETKEYSINSLOT", slot, 50)
                if not keys:
                    break
                r = call(src, "MIGRATE", "127.0.0.1", dst.port, "", 0, 5000, "KEYS", *keys)
                self.assertIn(r, (b"OK", b"NOKEY"))
                time.sleep(0.02)
            for s in (dst, src):
                self.assertEqual(call(s, "CLUSTER", "SETSLOT", slot, "NODE", dst_id), b"OK")
            for s in servers:
                if s not in (src, dst):
                    call(s, "CLUSTER", "SETSLOT", slot, "NODE", dst_id)
            time.sleep(0.5)
        finally:
            open(stop, "w").close()
            out, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 0, out + err)
        self.assertTrue(out.startswith("ok "), out)
        words = out.split()
        writes, seen = int(words[1]), dict(zip(words[2::2], map(int, words[3::2])))
        self.assertGreater(writes, 100)
        # the move reached the tool: redirections came and were followed
        self.assertGreater(seen["moved"], 0, out)
        self.assertGreater(seen["ask"], 0, out)
        in_slot = 0
        from redis.cluster import RedisCluster
        rc = RedisCluster(host="127.0.0.1", port=servers[0].port)
        try:
            for i in range(writes):
                key = ("{%s}%s:%d" % (tag, prefix, i)) if i % 2 == 0 else "%s:%d" % (prefix, i)
                self.assertEqual(rc.get(key), str(i).encode(), key)
                in_slot += keyslot(key.encode()) == slot
        finally:
            rc.close()
        self.assertEqual(call(dst, "CLUSTER", "COUNTKEYSINSLOT", slot), before + in_slot)
        self.assertEqual(call(src, "CLUSTER", "COUNTKEYSINSLOT", slot), 0)

    def test_node_restart(self):
        """A primary stopped and started again on its nodes.conf: the calls
        routed to it fail while it is away (nothing is sent twice), then
        reach it again without a new client."""
        servers = form(self, ["goblin", "goblin", "goblin"])
        stop = os.path.join(tempfile.mkdtemp(prefix="gbit-ringcl-"), "stop")
        proc = subprocess.Popen([TOOL, servers[0].sock, "sbe", "recover", "x", stop], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            time.sleep(0.5)
            g = servers[1]
            g.stop()
            self.addCleanup(g.cleanup)
            time.sleep(0.5)
            again = cluster_server("goblin", dir=g.dir, port=g.port)
            self.addCleanup(again.cleanup)
            servers[1] = again
            self.assertTrue(wait_until(lambda: converged(servers), TIMEOUT), [nodes_view(s) for s in servers])
            time.sleep(1)
        finally:
            open(stop, "w").close()
            out, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 0, out + err)
        words = out.split()
        writes, errors, last_error = int(words[1]), int(words[3]), int(words[5])
        self.assertGreater(errors, 0, out)
        self.assertGreater(writes - last_error, 100, out)
        from redis.cluster import RedisCluster
        rc = RedisCluster(host="127.0.0.1", port=servers[0].port)
        try:
            for i in range(last_error + 1, writes):
                self.assertEqual(rc.get("x:%d" % i), str(i).encode(), i)
        finally:
            rc.close()

    def test_mixed_with_redis(self):
        gbtest.require_redis()
        servers = form(self, ["goblin", "redis", "goblin"])
        seed = servers[1].sock
        self.check_map(servers, seed, "sbe", {"goblin": "ring", "redis": "socket"})
        self.check_fill(servers, seed, "sbe", "m")
        self.check_fill(servers, "127.0.0.1:%d" % servers[0].port, "resp", "n")


def read_command(f):
    """One RESP multibulk request from a socket file, as a list of bytes."""
    line = f.readline()
    if not line.startswith(b"*"):
        return None
    args = []
    for _ in range(int(line[1:])):
        n = int(f.readline()[1:])
        args.append(f.read(n + 2)[:-2])
    return args


class FakeNode(socketserver.ThreadingTCPServer):
    """A node that answers CLUSTER SLOTS with `slots` (raw bytes, {port}
    replaced by its own), CONFIG GET unixsocket with no socket, COMMAND with
    nothing, and anything else with `other`."""
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, slots, other, unixsocket=b""):
        class Handler(socketserver.StreamRequestHandler):
            def handle(h):
                while True:
                    cmd = read_command(h.rfile)
                    if cmd is None:
                        return
                    name = b" ".join(cmd[:2]).upper()
                    if name == b"CLUSTER SLOTS":
                        out = self.slots
                    elif name == b"CONFIG GET":
                        out = b"*2\r\n$10\r\nunixsocket\r\n$%d\r\n%s\r\n" % (len(unixsocket), unixsocket)
                    elif cmd[0].upper() == b"COMMAND":
                        out = b"*0\r\n"
                    else:
                        out = self.other
                    if out is None:
                        return
                    h.wfile.write(out.replace(b"{port}", str(self.server_address[1]).encode()))
                    h.wfile.flush()
                    if name == b"CLUSTER SLOTS" and out != GOOD_MAP:
                        return  # the reply is all it says
        super().__init__(("127.0.0.1", 0), Handler)
        self.slots, self.other = slots, other
        threading.Thread(target=self.serve_forever, daemon=True).start()


GOOD_MAP = b"*1\r\n*3\r\n:0\r\n:16383\r\n*3\r\n$9\r\n127.0.0.1\r\n:{port}\r\n$1\r\nx\r\n"


class HostileNode(unittest.TestCase):

    def run_against(self, slots, other):
        node = FakeNode(slots, other)
        try:
            return tool("127.0.0.1:%d" % node.server_address[1], "sbe", "fill", "h", 1)
        finally:
            node.shutdown()
            node.server_close()

    def test_malformed_slot_maps(self):
        for slots, words in [
                (b"*999999999\r\n", "closed"),                               # a count with nothing behind it
                (b"-ERR This instance has cluster support disabled\r\n", "cluster support disabled"),
                (b":5\r\n", "not a slot map"),
                (b"*1\r\n*3\r\n:0\r\n:16384\r\n*2\r\n$1\r\nh\r\n:1\r\n", "malformed CLUSTER SLOTS entry"),
                (b"*1\r\n*3\r\n:9\r\n:3\r\n*2\r\n$1\r\nh\r\n:1\r\n", "malformed CLUSTER SLOTS entry"),
                (b"*1\r\n*3\r\n:0\r\n:1\r\n*2\r\n$1\r\nh\r\n:0\r\n", "malformed node"),
                (b"*1\r\n*3\r\n:0\r\n:1\r\n:7\r\n", "malformed node"),
                (b"*0\r\n", "no slots assigned"),
                (b"$99999999999\r\nabc", "closed"),                          # a bulk it does not send
                (b"*1\r\n" * 100000, "malformed RESP reply")]:                             # nesting past any sane depth
            rc, out, err = self.run_against(slots, b"+OK\r\n")
            self.assertEqual(rc, 1, (slots[:40], out, err))
            self.assertTrue(out.startswith("err connect "), (slots[:40], out))
            self.assertIn(words, out, slots[:40])

    def test_someone_elses_socket(self):
        """A node that names another server's Unix socket as its own: the
        ring claimed there answers as another node (CLUSTER MYID), so the
        node stays on its socket and no call goes to the other server."""
        other = gbtest.Server("goblin")
        self.addCleanup(other.cleanup)
        node = FakeNode(GOOD_MAP, b"+OK\r\n", unixsocket=other.sock.encode())
        try:
            rc, out, err = tool("127.0.0.1:%d" % node.server_address[1], "sbe", "map")
            self.assertEqual((rc, out), (0, "node 0 127.0.0.1:%d socket\n" % node.server_address[1]), err)
            rc, out, err = tool("127.0.0.1:%d" % node.server_address[1], "sbe", "fill", "h", 1)
        finally:
            node.shutdown()
            node.server_close()
        with Raw(other) as c:
            self.assertEqual(c.call("DBSIZE"), 0)

    def test_unreachable_nodes(self):
        """A map that names a node nobody answers at: the client connects
        (the others serve their slots), unless no node answers at all."""
        half = (b"*2\r\n*3\r\n:0\r\n:8000\r\n*2\r\n$9\r\n127.0.0.1\r\n:{port}\r\n"
                b"*3\r\n:8001\r\n:16383\r\n*2\r\n$9\r\n127.0.0.1\r\n:1\r\n")
        node = FakeNode(half, b"+OK\r\n")
        try:
            rc, out, err = tool("127.0.0.1:%d" % node.server_address[1], "sbe", "map")
        finally:
            node.shutdown()
            node.server_close()
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(sorted(l.split()[2] for l in out.splitlines()),
                         sorted(["127.0.0.1:%d" % node.server_address[1], "127.0.0.1:1"]))
        nobody = b"*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n$9\r\n127.0.0.1\r\n:1\r\n"
        rc, out, err = self.run_against(nobody, b"+OK\r\n")
        self.assertEqual(rc, 1, out + err)
        self.assertTrue(out.startswith("err connect no node of the slot map answers: cannot connect to 127.0.0.1:1"),
                        out)

    def test_endless_redirections(self):
        for other, words in [(b"-MOVED 5 127.0.0.1:{port}\r\n", "too many cluster redirections"),
                             (b"-ASK 5 127.0.0.1:{port}\r\n", "ASKING: ASK 5"),
                             (b"-TRYAGAIN Multiple keys request during rehashing of slot\r\n",
                              "too many cluster redirections"),
                             (b"-MOVED 5 127.0.0.1:1\r\n", "cannot connect to 127.0.0.1:1"),
                             (b"-MOVED 99999 127.0.0.1:{port}\r\n", "MOVED 99999"),
                             (b"$-1\r\n", "")]:  # SET answered with nil: GET finds nothing
            rc, out, err = self.run_against(GOOD_MAP, other)
            self.assertEqual(rc, 1, (other, out, err))
            self.assertTrue(out.startswith("err 0 write" if words else "err 0 read"), (other, out))
            self.assertIn(words, out, other)


if __name__ == "__main__":
    gbtest.run_tests()
