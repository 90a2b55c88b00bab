"""Crash tests: the server is killed with SIGKILL at random points while
several clients write, during SAVE, BGSAVE, log writes and log rewrites,
and must come back with what each setting promises (docs/persistence.md):

* snapshots: the last complete snapshot always loads (a save cut short
  leaves the previous file as it was);
* appendfsync always: every write a client saw acknowledged is there;
* every setting: nothing is half-applied. Each writer changes two keys in
  one MULTI/EXEC (a counter and a list that grows by one), so any state a
  load produces must have them agree.

GB_CRASH_ROUNDS overrides the rounds per scenario (50; fewer under a
sanitizer build, which is slower).
"""

import os
import random
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import unittest

import redis

import gbtest
from gbtest import Raw, Server, SLOW, wait_until, parse_info

ROUNDS = int(os.environ.get("GB_CRASH_ROUNDS", "0")) or (50 if SLOW <= 1 else 12)
WRITERS = 4


class Writer(threading.Thread):
    """Writes (counter += 1, list grows by one) in a transaction until
    the server dies; remembers the last counter value it saw acknowledged."""

    def __init__(self, srv, idx):
        super().__init__(daemon=True)
        self.r = srv.redis()
        self.idx = idx
        self.acked = 0
        self.stop = False

    def run(self):
        try:
            while not self.stop:
                p = self.r.pipeline(transaction=True)
                p.incr("w:%d" % self.idx)
                p.rpush("l:%d" % self.idx, "x")
                n, _ = p.execute()
                self.acked = n
        except (redis.ConnectionError, redis.TimeoutError, OSError):
            pass
        except redis.ResponseError:
            pass  # MISCONF or the like during the kill window
        finally:
            self.r.close()


class CrashRounds(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gbit-crash-")
        self.rng = random.Random(int(os.environ.get("GB_CRASH_SEED", "1234")))

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def start(self, args):
        return Server("goblin", args=args, dir=self.dir)

    def check(self, srv, writers, exact, floor=None):
        with Raw(srv) as c:
            for w in writers:
                cnt = int(c.call("GET", "w:%d" % w.idx) or 0)
                llen = c.call("LLEN", "l:%d" % w.idx)
                self.assertEqual(cnt, llen, "writer %d: counter %d but list %d: a transaction half applied"
                                 % (w.idx, cnt, llen))
                if exact:
                    self.assertGreaterEqual(cnt, w.acked, "writer %d: %d acknowledged, only %d after restart"
                                            % (w.idx, w.acked, cnt))
                if floor is not None:
                    self.assertGreaterEqual(cnt, floor.get(w.idx, 0))
            return {w.idx: int(c.call("GET", "w:%d" % w.idx) or 0) for w in writers}

    def run_rounds(self, args, exact, action=None):
        """Each round: restart (checking what the last kill left), write,
        maybe act (SAVE, BGSAVE, BGREWRITEAOF), kill -9 at a random moment."""
        writers = [Writer.__new__(Writer) for _ in range(WRITERS)]
        for i, w in enumerate(writers):
            w.idx, w.acked = i, 0
        for rnd in range(ROUNDS):
            srv = self.start(args)
            try:
                self.check(srv, writers, exact)
                live = [Writer(srv, w.idx) for w in writers]
                for w, old in zip(live, writers):
                    w.acked = old.acked
                for w in live:
                    w.start()
                time.sleep(self.rng.uniform(0.02, 0.15) * SLOW)
                if action:
                    action(srv)
                time.sleep(self.rng.uniform(0.0, 0.25) * SLOW)
                os.killpg(srv.proc.pid, signal.SIGKILL)
                srv.proc.wait(5)
                for w in live:
                    w.stop = True
                    w.join(5)
                writers = live
            finally:
                srv.cleanup()
        srv = self.start(args)
        try:
            self.check(srv, writers, exact)
            self.assertGreater(sum(w.acked for w in writers), 0)
            return srv.log()
        finally:
            srv.cleanup()

    # -- snapshots -------------------------------------------------------------
    def snapshot_rounds(self, cmd):
        def act(srv):
            try:
                with Raw(srv, timeout=5) as c:
                    c.call(cmd)
            except (OSError, EOFError):
                pass  # killed during the command
        self.run_rounds(["--save", ""], exact=False, action=act)
        self.assertFalse([f for f in os.listdir(self.dir) if ".tmp-" in f],
                         "temporary files of killed saves are cleaned up at start-up")

    def test_kill_during_bgsave(self):
        self.snapshot_rounds("BGSAVE")

    def test_kill_during_save(self):
        self.snapshot_rounds("SAVE")

    # -- the append-only log ---------------------------------------------------
    def test_kill_during_log_writes_always(self):
        self.run_rounds(["--save", "", "--appendonly", "yes", "--appendfsync", "always"], exact=True)

    def test_kill_during_ring_writes_always(self):
        """Ring replies are published once the log has the writes they
        acknowledge: a ring client sees them at once, so the server holds
        them like a socket's until its loop's write and sync of the log."""
        tool = os.environ.get("RING_TOOL")
        if not tool:
            self.skipTest("RING_TOOL is set by ctest")
        args = ["--save", "", "--appendonly", "yes", "--appendfsync", "always"]
        acked = {"sbe": 0, "resp": 0}
        rounds = max(4, ROUNDS // 3)
        for rnd in range(rounds + 1):
            srv = self.start(args)
            try:
                with Raw(srv) as c:
                    for proto, n in acked.items():
                        got = int(c.call("GET", "ring:" + proto) or 0)
                        self.assertGreaterEqual(got, n, "%s ring: %d acknowledged, %d after the restart (round %d)"
                                                % (proto, n, got, rnd))
                if rnd == rounds:
                    break
                tools = {}
                for proto in acked:
                    path = os.path.join(self.dir, "acked-" + proto)
                    p = subprocess.Popen([tool, srv.sock, proto, "acked", "ring:" + proto, path],
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
                    self.assertTrue(p.stdout.readline().startswith(b"claimed"))
                    tools[proto] = (p, path)
                time.sleep(self.rng.uniform(0.05, 0.3) * SLOW)
                os.killpg(srv.proc.pid, signal.SIGKILL)
                srv.proc.wait(5)
                for proto, (p, path) in tools.items():
                    p.kill()
                    p.wait(5)
                    p.stdout.close()
                    with open(path) as f:
                        text = f.read().strip()
                    acked[proto] = int(text) if text else acked[proto]
            finally:
                srv.cleanup()
        self.assertGreater(min(acked.values()), 0, "both ring clients got writes acknowledged")

    def test_kill_during_log_rewrites_always(self):
        def act(srv):
            try:
                with Raw(srv, timeout=5) as c:
                    c.call("BGREWRITEAOF")
            except (OSError, EOFError):
                pass
        self.run_rounds(["--save", "", "--appendonly", "yes", "--appendfsync", "always"], exact=True, action=act)

    def test_kill_during_log_writes_everysec(self):
        # everysec may lose the last second or two: only consistency holds
        self.run_rounds(["--save", "", "--appendonly", "yes", "--appendfsync", "everysec"], exact=False)


if __name__ == "__main__":
    gbtest.run_tests()
