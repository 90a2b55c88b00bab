#!/usr/bin/env python3
"""apps/cluster_launch/goblin-cluster (issue 30, many cores on one box):
N goblin-core processes pinned one per usable CPU (wrapping around when
there are more processes than CPUs: 6 on a 2-core machine), formed into one
cluster that redis-cli --cluster check accepts and redis-py's RedisCluster
uses; each process's affinity is the CPU the launcher chose; stop leaves no
process. And the launcher's errors: clear, exit status 1, nothing left
running."""
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import unittest

import gbtest

LAUNCHER = os.path.join(gbtest.ROOT, "apps", "cluster_launch", "goblin-cluster")
TIMEOUT = 60 * gbtest.SLOW


def free_port_range(n):
    """A first port whose n ports and their bus ports (+10000) are free,
    all below the kernel's ephemeral range (32768 up): a port there that is
    free now can become another test's client socket or port-0 listener
    before the node binds it (CI once saw a node never come up). From
    gbtest's cluster range, which no other server's port comes from."""
    for _ in range(200):
        base = random.randrange(gbtest.CLUSTER_PORT_LOW, gbtest.CLUSTER_PORT_HIGH + 1 - n)
        ports = [base + i for i in range(n)]
        if all(gbtest.port_is_free(p) and gbtest.port_is_free(p + gbtest.BUS_PORT_OFFSET) for p in ports):
            return base
    raise AssertionError("no free port range")


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def generic_posix_build():
    """Whether the goblin-core under test was built on the generic POSIX
    platform layer (make test-posix)."""
    cache = os.path.join(os.environ.get("GOBLIN_BUILD_DIR", ""), "CMakeCache.txt")
    try:
        with open(cache) as f:  # "GOBLIN_PLATFORM:STRING=posix" or ":UNINITIALIZED=" as -D gave it
            return re.search(r"^GOBLIN_PLATFORM:[A-Z]+=posix$", f.read(), re.M) is not None
    except OSError:
        return False


class Launcher(unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gbit-launch-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def launcher(self, *args):
        return subprocess.run([sys.executable, LAUNCHER] + [str(a) for a in args], capture_output=True, text=True,
                              timeout=3 * TIMEOUT)

    def start(self, *args):
        port = free_port_range(12)
        r = self.launcher("start", "--dir", self.dir, "--server", gbtest.GOBLIN, "--port", port,
                          "--node-timeout", 2000, "--timeout", TIMEOUT, *args)
        # stopped whatever happens below (the nodes are daemons: no test helper tracks them)
        self.addCleanup(self.launcher, "stop", "--dir", self.dir)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(os.path.join(self.dir, "cluster.json")) as f:
            state = json.load(f)
        return r.stdout, state

    def check_pinning(self, state):
        usable = sorted(os.sched_getaffinity(0))
        for i, node in enumerate(state["nodes"]):
            self.assertEqual(node["cpu"], usable[i % len(usable)], node)
            with gbtest.Raw(("127.0.0.1", node["port"])) as c:
                rings = gbtest.parse_info(c.call("INFO", "rings").decode())
            if rings.get("ring_engine_pinned") == "no" and generic_posix_build():
                continue  # the generic POSIX layer has no affinity calls: --cpu is accepted, nothing pinned
            self.assertEqual(rings.get("ring_engine_pinned"), "yes", node)
            self.assertEqual(os.sched_getaffinity(node["pid"]), {node["cpu"]}, node)

    def check_with_redis_cli(self, state):
        if not gbtest.REDIS_CLI:
            gbtest.reference_missing("redis-cli not installed")
        r = subprocess.run([gbtest.REDIS_CLI, "--cluster", "check", "127.0.0.1:%d" % state["nodes"][0]["port"]],
                           capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("[OK] All 16384 slots covered.", r.stdout)
        self.assertIn("[OK] All nodes agree about slots configuration.", r.stdout)

    def stop_leaves_nothing(self, state):
        r = self.launcher("stop", "--dir", self.dir)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("stopped %d process(es)" % len(state["nodes"]), r.stdout)
        for node in state["nodes"]:
            self.assertFalse(alive(node["pid"]), node)
        self.assertEqual(self.launcher("status", "--dir", self.dir).returncode, 1)

    def test_three_primaries(self):
        out, state = self.start("-n", 3)
        self.assertEqual(len(state["nodes"]), 3)
        self.assertIn("cluster ready: 3 primaries", out)
        self.check_pinning(state)
        self.check_with_redis_cli(state)
        import redis.cluster
        rc = redis.cluster.RedisCluster(host="127.0.0.1", port=state["nodes"][1]["port"], socket_timeout=10)
        try:
            for i in range(1000):
                rc.set("key:%d" % i, "value:%d" % i)
            for i in range(1000):
                self.assertEqual(rc.get("key:%d" % i), b"value:%d" % i)
        finally:
            rc.close()
        # the keys are spread over the three nodes
        for node in state["nodes"]:
            with socket.create_connection(("127.0.0.1", node["port"])) as s:
                s.sendall(b"DBSIZE\r\n")
                n = int(s.recv(64)[1:].split(b"\r\n")[0])
                self.assertGreater(n, 250, node)
        self.assertEqual(self.launcher("status", "--dir", self.dir).returncode, 0)
        self.stop_leaves_nothing(state)

    def test_replicas_wrap_around_the_cpus(self):
        out, state = self.start("-n", 3, "--replicas", 1)
        self.assertEqual(len(state["nodes"]), 6)
        self.assertEqual(out.count(" slave "), 3, out)
        self.check_pinning(state)
        self.check_with_redis_cli(state)
        self.stop_leaves_nothing(state)

    def test_errors(self):
        usable = sorted(os.sched_getaffinity(0))
        outside = max(usable) + 1
        r = self.launcher("start", "--dir", self.dir, "--server", gbtest.GOBLIN, "--cpus", str(outside))
        self.assertEqual(r.returncode, 1)
        self.assertIn("--cpus: CPU %d is not one this process may use" % outside, r.stderr)
        r = self.launcher("start", "--dir", self.dir, "--server", gbtest.GOBLIN, "--cpus", "3-1")
        self.assertEqual(r.returncode, 1)
        self.assertIn("--cpus: bad range '3-1'", r.stderr)
        r = self.launcher("start", "--dir", self.dir, "--server", "/nonexistent/goblin-core")
        self.assertEqual(r.returncode, 1)
        self.assertIn("not an executable file", r.stderr)
        r = self.launcher("start", "--dir", self.dir, "--server", gbtest.GOBLIN, "--port", 60000, "-n", 2)
        self.assertEqual(r.returncode, 1)
        self.assertIn("must lie within 1..65535", r.stderr)
        r = self.launcher("stop", "--dir", self.dir)
        self.assertEqual(r.returncode, 1)
        self.assertIn("no cluster started in", r.stderr)
        # a port in use: refused before anything starts
        with socket.socket() as busy:
            busy.bind(("127.0.0.1", 0))
            busy.listen(1)
            port = busy.getsockname()[1]
            if port + 10000 <= 65535:
                r = self.launcher("start", "--dir", self.dir, "--server", gbtest.GOBLIN, "--port", port, "-n", 1)
                self.assertEqual(r.returncode, 1)
                self.assertIn("port %d is in use" % port, r.stderr)
        # a server that refuses its options: its log's last lines, nothing left running
        r = self.launcher("start", "--dir", self.dir, "--server", gbtest.GOBLIN, "--port", free_port_range(2),
                          "-n", 1, "--", "--no-such-option", "x")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("goblin-core on port", r.stderr)
        self.assertEqual(self.launcher("status", "--dir", self.dir).returncode, 1)
        r = self.launcher("--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("start", r.stdout)


if __name__ == "__main__":
    gbtest.run_tests()
