"""node-redis 6 (the `redis` npm package: RESP3 by default) with its default
settings against goblin-core, and the same script against redis-server 7.0:
HELLO 3 on connect, typed RESP3 replies (maps as objects, doubles as
numbers, null), and client-side caching (CLIENT TRACKING, invalidation
pushes) must give the same results from both servers.

The package is installed at test set-up with npm into
$GOBLIN_BUILD_DIR/node-clients (bounded: 300 s); the test skips, saying
why, when npm or the registry is not reachable.
"""

import json
import os
import shutil
import subprocess
import unittest

import gbtest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "node", "resp3_client.js")
PACKAGE = "redis@6"


def install_dir():
    base = os.environ.get("GOBLIN_BUILD_DIR") or os.path.join(HERE, "..", "..", "build-test")
    return os.path.join(os.path.abspath(base), "node-clients")


def ensure_node_redis():
    """The directory holding node_modules/redis, installing it if needed;
    raises SkipTest when that cannot be done here."""
    if not shutil.which("node") or not shutil.which("npm"):
        gbtest.reference_missing("node/npm not installed (cmake/install-deps.sh --test installs npm)")
    d = install_dir()
    pkg = os.path.join(d, "node_modules", "redis", "package.json")
    if os.path.exists(pkg):
        with open(pkg) as f:
            if json.load(f)["version"].startswith("6."):
                return d
    os.makedirs(d, exist_ok=True)
    try:
        r = subprocess.run(["npm", "install", "--prefix", d, "--no-audit", "--no-fund", "--silent", PACKAGE],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    except subprocess.TimeoutExpired:
        gbtest.reference_missing("npm install %s took over 300 s (registry not reachable?)" % PACKAGE)
    if r.returncode != 0 or not os.path.exists(pkg):
        gbtest.reference_missing("npm install %s failed: %s" % (PACKAGE, r.stdout.decode(errors="replace")[-300:]))
    return d


class NodeRedis6(gbtest.GoblinAndRedisCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = ensure_node_redis()
        super().setUpClass()

    def run_script(self, port):
        env = dict(os.environ, NODE_PATH=os.path.join(self.dir, "node_modules"))
        r = subprocess.run(["node", SCRIPT, str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=120 * gbtest.SLOW, env=env)
        self.assertTrue(r.stdout, r.stderr.decode(errors="replace"))
        out = json.loads(r.stdout.decode().strip().splitlines()[-1])
        self.assertNotIn("fatal", out, out.get("fatal"))
        self.assertNotIn("error", out)
        return out

    def test_default_settings_resp3_and_client_side_cache(self):
        g = self.run_script(self.goblin.port)
        r = self.run_script(self.redis.port)
        # It spoke RESP3 (HELLO 3 by default) and saw typed replies.
        self.assertTrue(g["clientInfo"].endswith(" resp=3\n"), g["clientInfo"])
        self.assertEqual(g["hello"]["proto"], 3)
        self.assertEqual(g["hgetall"], {"a": "1", "b": "2"})
        self.assertEqual(g["zscore"], 1.5)
        self.assertEqual(g["zrangeWithScores"], [{"value": "a", "score": 1.5}, {"value": "b", "score": 2}])
        self.assertIsNone(g["missing"])
        # Client-side caching: one hit from the cache, then the invalidation.
        self.assertEqual((g["cache1"], g["cache2"], g["cache3"]), ("one", "one", "two"))
        self.assertEqual(g["cacheStats"], {"hits": 1, "misses": 1})
        # Everything else as from redis-server (its name, ids and addresses aside).
        for k in ("clientInfo", "hello"):
            g.pop(k)
            r.pop(k)
        self.assertEqual(g, r)


if __name__ == "__main__":
    gbtest.run_tests()
