"""Crash tests: the server is killed with SIGKILL at random points while
several clients write, during SAVE, BGSAVE, log writes and log rewrites,
and must come back with what each setting promises (docs/persistence.md):

* snapshots: the last complete snapshot always loads (a save cut short
  leaves the previous file as it was);
* appendfsync always: every write a client saw acknowledged is there,
  over sockets and over rings (one ring client, SBE and RESP in turn,
  writes in every round);
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
RING_TOOL = os.environ.get("RING_TOOL")  # set by ctest; without it the rounds run without the ring writer
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

    one_cpu = None  # a CPU: every server of the test starts allowed only that one

    def start(self, args):
        if self.one_cpu is None:
            return Server("goblin", args=args, dir=self.dir)
        return gbtest.start_on_one_cpu(lambda extra: Server("goblin", args=args + extra, dir=self.dir), self.one_cpu)

    def check(self, srv, writers, exact, floor=None, ring_acked=None):
        with Raw(srv) as c:
            for proto, n in (ring_acked or {}).items():
                got = int(c.call("GET", "ring:" + proto) or 0)
                if exact:
                    self.assertGreaterEqual(got, n, "%s ring client: %d acknowledged, only %d after restart"
                                            % (proto, n, got))
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

    def start_ring_writer(self, srv, proto):
        """A ring client (test/integration/ring_tool.c, mode acked) counting
        up ring:<proto>; its file holds the last value it saw acknowledged.
        Ring replies are visible the moment they are published, so under
        appendfsync always the server must hold them until the log has the
        write (docs/ring-protocol.md, "Replies and durability")."""
        if not RING_TOOL:
            return None
        path = os.path.join(self.dir, "acked-" + proto)
        p = subprocess.Popen([RING_TOOL, srv.sock, proto, "acked", "ring:" + proto, path],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.assertTrue(p.stdout.readline().startswith(b"claimed"), "the ring writer claimed a slot")
        return proto, p, path

    def stop_ring_writer(self, ring, ring_acked):
        if ring is None:
            return
        proto, p, path = ring
        p.kill()
        p.wait(5)
        p.stdout.close()
        with open(path) as f:
            text = f.read().strip()
        if text:
            ring_acked[proto] = int(text)

    def run_rounds(self, args, exact, action=None):
        """Each round: restart (checking what the last kill left), write,
        maybe act (SAVE, BGSAVE, BGREWRITEAOF), kill -9 at a random moment."""
        writers = [Writer.__new__(Writer) for _ in range(WRITERS)]
        for i, w in enumerate(writers):
            w.idx, w.acked = i, 0
        ring_acked = {}
        for rnd in range(ROUNDS):
            srv = self.start(args)
            try:
                self.check(srv, writers, exact, ring_acked=ring_acked)
                live = [Writer(srv, w.idx) for w in writers]
                for w, old in zip(live, writers):
                    w.acked = old.acked
                for w in live:
                    w.start()
                ring = self.start_ring_writer(srv, ("sbe", "resp")[rnd % 2])
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
                self.stop_ring_writer(ring, ring_acked)
            finally:
                srv.cleanup()
        srv = self.start(args)
        try:
            self.check(srv, writers, exact, ring_acked=ring_acked)
            self.assertGreater(sum(w.acked for w in writers), 0)
            if RING_TOOL:
                self.assertEqual(len(ring_acked), 2, "both ring protocols wrote")
                self.assertGreater(min(ring_acked.values()), 0, "ring writes were acknowledged")
            return srv.log()
        finally:
            srv.cleanup()

    # -- snapshots -------------------------------------------------------------
    def snapshot_rounds(self, cmd):
        engine_compressed, pinned = [], []

        def act(srv):
            try:
                with Raw(srv, timeout=5) as c:
                    c.call(cmd)
                    pinned.append(parse_info(c.call("INFO", "rings")).get("ring_engine_pinned") == "yes")
            except (OSError, EOFError):
                pass  # killed during the command
            engine_compressed.append("the engine thread compresses the snapshot" in srv.log())
        self.run_rounds(["--save", ""], exact=False, action=act)
        self.assertFalse([f for f in os.listdir(self.dir) if ".tmp-" in f],
                         "temporary files of killed saves are cleaned up at start-up")
        if self.one_cpu is not None and any(pinned):  # not the POSIX layer, which sees no CPU limits
            self.assertTrue(any(engine_compressed), "no round's save ran on the engine thread")

    def test_kill_during_bgsave(self):
        self.snapshot_rounds("BGSAVE")

    def test_kill_during_bgsave_on_one_cpu(self):
        """Servers allowed one CPU: a BGSAVE has no CPU for its writer
        thread, and the engine compresses and writes the file itself
        (docs/persistence.md)."""
        if not hasattr(os, "sched_setaffinity"):
            self.skipTest("needs sched_setaffinity (Linux) to give the server one CPU")
        self.one_cpu = max(os.sched_getaffinity(0))
        self.snapshot_rounds("BGSAVE")

    def test_kill_during_save(self):
        self.snapshot_rounds("SAVE")

    # -- the append-only log ---------------------------------------------------
    def test_kill_during_log_writes_always(self):
        self.run_rounds(["--save", "", "--appendonly", "yes", "--appendfsync", "always"], exact=True)

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
