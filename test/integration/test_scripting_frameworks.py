"""Real frameworks that run on Redis scripting, end to end against
goblin-core (and, where the comparison says something, redis-server 7.0):

* redis-py's Lock: acquire, extend, reacquire, release, expiry;
* ioredis defineCommand: EVALSHA with the EVAL fallback, pipelines, MULTI;
* BullMQ: its read-only scripts now; adding, processing, delaying and
  retrying jobs once the server has streams (XADD), which its job scripts
  write (the streams issue) - skipped until then, saying so;
* Celery with the Redis broker: a worker (kombu's lock included) runs
  tasks; with the Redis result backend, result.get() (SUBSCRIBE to
  celery-task-meta-<id>), a failing task's exception, a group, chords counted
  in a ZSET (header order) and in a list, and remote control (ping through
  the pidbox: PUBLISH, replies by list), each compared with redis-server.

Node packages come from npm at set-up (test/integration/frameworks/
package.json, installed once into <build>/test-node); Celery from the
system (Debian python3-celery). Each part skips with the reason when its
tool cannot be had. Every framework run is bounded in time.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import unittest

import gbtest
from gbtest import Server, SLOW, wait_until

HERE = os.path.dirname(os.path.abspath(__file__))
FW = os.path.join(HERE, "frameworks")
NODE_DIR = os.environ.get("GOBLIN_NODE_DIR") or os.path.join(
    os.environ.get("GOBLIN_BUILD_DIR") or os.path.join(gbtest.ROOT, "build"), "test-node")
RUN_LIMIT = 120 * SLOW


_node_ready = None


def node_modules():
    """Installs the pinned Node packages once; returns the directory or raises SkipTest."""
    global _node_ready
    if _node_ready:
        return _node_ready
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        gbtest.reference_missing("node/npm not installed (cmake/install-deps.sh --test installs them)")
    os.makedirs(NODE_DIR, exist_ok=True)
    with open(os.path.join(FW, "package.json")) as f:
        want = f.read()
    stamp = os.path.join(NODE_DIR, "package.json")
    have = ""
    if os.path.exists(stamp):
        with open(stamp) as f:
            have = f.read()
    if not (have == want and os.path.isdir(os.path.join(NODE_DIR, "node_modules", "bullmq"))):
        shutil.copy(os.path.join(FW, "package.json"), stamp)
        try:
            p = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", NODE_DIR], cwd=NODE_DIR,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
        except subprocess.TimeoutExpired:
            gbtest.reference_missing("npm install timed out (no registry reachable?)")
        if p.returncode != 0:
            gbtest.reference_missing("npm install failed (offline?): %s" % p.stdout.decode(errors="replace")[-300:])
    _node_ready = NODE_DIR
    return NODE_DIR


def run_node(script, *args):
    env = dict(os.environ, NODE_PATH=os.path.join(node_modules(), "node_modules"))
    p = subprocess.run(["node", os.path.join(FW, script)] + [str(a) for a in args], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=RUN_LIMIT, env=env)
    lines = p.stdout.decode().strip().splitlines()
    if not lines:
        raise AssertionError("%s printed nothing: %s" % (script, p.stderr.decode()[-1000:]))
    return json.loads(lines[-1])


class RedisPyLock(unittest.TestCase):
    def test_lock_acquire_extend_release_expiry(self):
        import redis
        from redis.exceptions import LockError, LockNotOwnedError
        with Server("goblin") as srv:
            r = srv.redis()
            lock = r.lock("res", timeout=5)
            self.assertTrue(lock.acquire(blocking=False))
            self.assertTrue(lock.locked() and lock.owned())
            self.assertFalse(r.lock("res", timeout=5).acquire(blocking=False))
            self.assertTrue(lock.extend(10))  # Lua: extends the TTL by 10 s
            self.assertGreater(r.pttl("res"), 10000)
            self.assertTrue(lock.extend(3, replace_ttl=True))
            self.assertLessEqual(r.pttl("res"), 3000)
            self.assertTrue(lock.reacquire())
            self.assertGreater(r.pttl("res"), 4000)
            lock.release()  # Lua: deletes only its own token
            self.assertFalse(r.exists("res"))
            with self.assertRaises(LockError):
                lock.release()
            # Expiry: a lock nobody releases frees itself; its late owner
            # cannot release or extend what is now another's.
            short = r.lock("res", timeout=0.3)
            self.assertTrue(short.acquire(blocking=False))
            time.sleep(0.5)
            other = r.lock("res", timeout=5)
            self.assertTrue(other.acquire(blocking=True, blocking_timeout=2))
            with self.assertRaises(LockNotOwnedError):
                short.extend(1)
            with self.assertRaises(LockNotOwnedError):
                short.release()
            self.assertTrue(other.owned())
            other.release()
            # Blocking acquire waits for the holder's release.
            holder = r.lock("res", timeout=5, thread_local=False)  # released from a timer thread
            holder.acquire()
            t0 = time.time()
            waiter = r.lock("res", timeout=5, sleep=0.05)
            import threading
            threading.Timer(0.3, holder.release).start()
            self.assertTrue(waiter.acquire(blocking=True, blocking_timeout=5))
            self.assertGreaterEqual(time.time() - t0, 0.25)
            waiter.release()


class IORedis(unittest.TestCase):
    def test_define_command(self):
        kinds = gbtest.goblin_and_redis()
        seen = {}
        for kind in kinds:
            with Server(kind) as srv:
                seen[kind] = run_node("ioredis_define_command.js", srv.port)
        g = seen["goblin"]
        self.assertEqual(g["first"], [5, 5])
        self.assertEqual(g["afterFlush"], [6, 6])
        self.assertEqual(g["multi"], [[116, 116]])
        if "redis" in seen:
            self.assertEqual(g, seen["redis"])


class BullMQ(unittest.TestCase):
    def test_read_only_scripts(self):
        kinds = gbtest.goblin_and_redis()
        seen = {}
        for kind in kinds:
            with Server(kind) as srv:
                seen[kind] = run_node("bullmq_jobs.js", srv.port, "scripts")
        self.assertEqual(seen["goblin"]["scripts"]["counts"]["waiting"], 0, seen["goblin"])
        if "redis" in seen:
            self.assertEqual(seen["goblin"], seen["redis"])

    def test_jobs_end_to_end(self):
        with Server("goblin") as srv:
            out = run_node("bullmq_jobs.js", srv.port, "add,delayed,retries")
        self.assertEqual(out["add"], {"state": "completed", "result": {"doubled": 42}}, out)
        self.assertEqual(out["delayedState"], "delayed")
        self.assertEqual(out["delayed"], {"waitedMs": True, "state": "completed"})
        self.assertEqual(out["retries"]["flakyAttempts"], 3)
        self.assertEqual(out["retries"]["doomedAttempts"], 2)
        self.assertEqual(out["retries"]["failedReason"], "always fails")


    def test_queue_events_over_resp3(self):
        # QueueEvents on ioredis 6 (RESP3 by default) hears every completion: it
        # failed on XREAD's RESP3 shape (issue 27) and heard 0 of 200
        gbtest.require_redis()
        seen = {}
        for kind in ("goblin", "redis"):
            with Server(kind) as srv:
                seen[kind] = run_node("bullmq_jobs.js", srv.port, "events")["events"]
        self.assertEqual(seen["goblin"], {"jobs": 200, "completedEvents": 200, "resp3Clients": seen["goblin"]["resp3Clients"]})
        self.assertGreater(seen["goblin"]["resp3Clients"], 0, "ioredis did not negotiate RESP3")
        self.assertEqual(seen["goblin"], seen["redis"])


class Celery(unittest.TestCase):
    def setUp(self):
        try:
            import celery  # noqa: F401
        except ImportError:
            gbtest.reference_missing("Celery is not installed (Debian python3-celery; cmake/install-deps.sh --test)")

    def worker(self, srv, backend=False, control=False, chord_list=False):
        env = dict(os.environ, GOBLIN_CELERY_BROKER="redis://127.0.0.1:%d/0" % srv.port, PYTHONPATH=FW)
        if backend:
            env["GOBLIN_CELERY_BACKEND"] = "redis://127.0.0.1:%d/1" % srv.port
        if control:
            env["GOBLIN_CELERY_CONTROL"] = "1"
        if chord_list:
            env["GOBLIN_CELERY_CHORD_LIST"] = "1"
        p = subprocess.Popen([sys.executable, "-m", "celery", "-A", "celery_app", "worker", "--pool=solo",
                              "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "info"],
                             cwd=FW, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.addCleanup(lambda: p.poll() is None and p.kill())
        return p, env

    def client(self, env):
        code = ("import celery_app, sys, json\n"
                "for i in range(5): celery_app.double.delay(i)\n")
        subprocess.run([sys.executable, "-c", code], cwd=FW, env=env, check=True, timeout=RUN_LIMIT)

    def test_worker_runs_tasks(self):
        with Server("goblin") as srv:
            p, env = self.worker(srv)
            self.client(env)
            r = srv.redis()
            ok = wait_until(lambda: r.llen("celery:results") == 5, 60 * SLOW, 0.1)
            p.send_signal(signal.SIGTERM)  # warm shutdown: kombu restores unacked work under its lock
            out = p.communicate(timeout=RUN_LIMIT)[0].decode(errors="replace")
            self.assertTrue(ok, out[-2000:])
            self.assertEqual(sorted(int(x) for x in r.lrange("celery:results", 0, -1)), [0, 2, 4, 6, 8])
            self.assertIn("succeeded", out)
            stats = r.info("commandstats")
            self.assertGreater(stats.get("cmdstat_evalsha", {}).get("calls", 0) +
                               stats.get("cmdstat_eval", {}).get("calls", 0), 0, "kombu's lock ran no script")

    def results_run(self, kind, chord_list):
        """A worker with the Redis result backend and remote control on;
        the client (frameworks/celery_client.py) prints what it got back."""
        with Server(kind) as srv:
            p, env = self.worker(srv, backend=True, control=True, chord_list=chord_list)
            c = subprocess.run([sys.executable, os.path.join(FW, "celery_client.py")], cwd=FW, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=RUN_LIMIT)
            p.terminate()
            log = p.communicate(timeout=RUN_LIMIT)[0].decode(errors="replace")
            text = c.stdout.decode(errors="replace")
            lines = text.strip().splitlines()
            self.assertEqual(c.returncode, 0, text[-2000:] + "\nworker:\n" + log[-2000:])
            stats = {k[len("cmdstat_"):]: v["calls"] for k, v in srv.redis().info("commandstats").items()}
            return json.loads(lines[-1]), stats

    def test_results_and_chord(self):
        kinds = gbtest.goblin_and_redis()
        want = {"add": 5, "fails": ["ValueError", "boom", "FAILURE"], "group": [10, 11, 12, 13, 14, 15],
                "chord": 20, "chord_order": list(range(8)), "ping": [{"ok": "pong"}]}
        for chord_list in (False, True):
            seen = {}
            for kind in kinds:
                with self.subTest(kind=kind, chord="list" if chord_list else "zset"):
                    seen[kind], stats = self.results_run(kind, chord_list)
                    # The ZSET backend hands the parts over in header order;
                    # the list one in finishing order (one solo worker: the same).
                    self.assertEqual(seen[kind], want)
                    # result.get() waited on pub/sub, the chord counted its
                    # parts in the structure asked for, control went by PUBLISH.
                    self.assertGreater(stats.get("subscribe", 0), 0, stats)
                    self.assertGreater(stats.get("publish", 0), 0, stats)
                    self.assertGreater(stats.get("rpush" if chord_list else "zadd", 0), 0, stats)
                    self.assertGreater(stats.get("exec", 0), 0, stats)
            if "redis" in seen:
                self.assertEqual(seen["goblin"], seen["redis"])


if __name__ == "__main__":
    gbtest.run_tests()
