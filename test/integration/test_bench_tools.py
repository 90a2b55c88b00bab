"""The benchmark programs run end to end and say what docs/benchmarks.md says
they say: sbe_vs_resp_ring's interleaved rounds (every row paired with a
floor window measured both ways, the per-placement table, its argument
checks), ring_floor's two floors and its ring echo, latency_shootout's --ops, and the list
work-queue benchmark's trial rounds (CSV rows per backend, key lengths
checked after every row), and lean_load's counts.

Shape only: these runs are short and the machine is shared, so no figure is
compared with another (performance lives in bench/, never in tests).
"""
import os
import re
import subprocess
import unittest

import gbtest

BUILD = os.environ.get("GOBLIN_BUILD_DIR") or os.path.dirname(gbtest.GOBLIN)


def run(args, timeout=300):
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)


@unittest.skipIf((os.cpu_count() or 1) < 2, "the floor's two spinning threads need two CPUs")
class SbeVsRespRing(unittest.TestCase):
    BIN = os.path.join(BUILD, "sbe_vs_resp_ring")

    def test_csv_rows(self):
        p = run([self.BIN, gbtest.GOBLIN, "--seconds", "0.4", "--rounds", "2", "--csv"])
        self.assertEqual(p.returncode, 0, p.stderr.decode(errors="replace"))
        lines = p.stdout.decode().strip().splitlines()
        self.assertEqual(lines[0], "operation,protocol,p50_ns,p90_ns,p99_ns,min_ns,samples")
        rows = [l.split(",") for l in lines[1:]]
        self.assertEqual(rows[0][:2], ["ROUNDTRIP", "floor"])
        ops = [(r[0], r[1]) for r in rows[1:]]
        self.assertEqual(ops, [(op, proto) for op in ("PING", "ZADD1", "ZADD10", "HSET1", "HSET10")
                               for proto in ("sbe", "resp")])
        for r in rows:
            p50, p90, p99, mn, n = (float(x) for x in r[2:])
            self.assertGreater(n, 0, r)
            self.assertTrue(0 < mn <= p50 <= p90 <= p99, r)

    def test_table_has_placement_split(self):
        p = run([self.BIN, gbtest.GOBLIN, "--seconds", "0.4", "--rounds", "2"])
        self.assertEqual(p.returncode, 0, p.stderr.decode(errors="replace"))
        out = p.stdout.decode()
        self.assertIn("in 2 interleaved rounds", out)
        self.assertIn("floor medians before each row", out)
        # the floor both ways, with and without pause (bench/floor.h): each
        # a positive median, and the count of windows where the second was
        # the lower one out of all 20 (2 rounds x 5 rows x 2 protocols)
        m = re.search(r"floor spinning with pause: median (\d+) ns; without: (\d+) ns .* in (\d+) of (\d+)\)", out)
        self.assertIsNotNone(m, out)
        self.assertGreater(int(m.group(1)), 0)
        self.assertGreater(int(m.group(2)), 0)
        self.assertEqual(int(m.group(4)), 20)
        self.assertLessEqual(int(m.group(3)), 20)
        split = out.split("x floor by placement")[1].strip().splitlines()
        self.assertEqual([l.split()[0] for l in split[2:]], ["PING", "ZADD1", "ZADD10", "HSET1", "HSET10"])
        for line in split[2:]:
            # two cells per protocol ("1.40x(2)" or "-"), rounds adding up to 2
            counts = [int(c.split("(")[1].rstrip(")")) for c in line.replace("/", " ").split()[1:] if "(" in c]
            self.assertEqual(sum(counts), 4, line)

    def test_bad_arguments(self):
        for args in (["--rounds", "0"], ["--rounds", "101"], ["--seconds", "0"]):
            p = run([self.BIN, gbtest.GOBLIN] + args)
            self.assertEqual(p.returncode, 2, args)
            self.assertIn(b"--rounds must be 1..100", p.stderr)
        p = run([self.BIN, "--bogus"])
        self.assertEqual(p.returncode, 2)
        self.assertIn(b"usage:", p.stderr)


@unittest.skipIf((os.cpu_count() or 1) < 2, "the floor's two spinning threads need two CPUs")
class RingFloor(unittest.TestCase):
    BIN = os.path.join(BUILD, "ring_floor")

    def test_both_ways(self):
        p = run([self.BIN, "--seconds", "0.2", "--csv"])
        self.assertEqual(p.returncode, 0, p.stderr.decode(errors="replace"))
        lines = p.stdout.decode().strip().splitlines()
        self.assertEqual(lines[0], "operation,protocol,p50_ns,p90_ns,p99_ns,min_ns,samples")
        rows = [l.split(",") for l in lines[1:]]
        self.assertEqual([r[:2] for r in rows],
                         [["ROUNDTRIP", "floor-pause"], ["ROUNDTRIP", "floor-nopause"], ["ROUNDTRIP", "ring-echo"]])
        for r in rows:
            p50, p90, p99, mn, n = (float(x) for x in r[2:])
            self.assertGreater(n, 0, r)
            self.assertTrue(0 < mn <= p50 <= p90 <= p99, r)


class LatencyShootout(unittest.TestCase):
    BIN = os.path.join(BUILD, "latency_shootout")

    def test_ops_chooses_the_rows(self):
        p = run([self.BIN, "ring", gbtest.GOBLIN, "--seconds", "0.1", "--ops", "ZADD10,PING", "--csv"])
        self.assertEqual(p.returncode, 0, p.stderr.decode(errors="replace"))
        lines = p.stdout.decode().strip().splitlines()
        self.assertEqual(lines[0], "operation,protocol,p50_ns,p90_ns,p99_ns,min_ns,samples")
        self.assertEqual([l.split(",")[:2] for l in lines[1:]], [["ZADD10", "ring-sbe"], ["PING", "ring-sbe"]])

    def test_unknown_op(self):
        p = run([self.BIN, "ring", gbtest.GOBLIN, "--ops", "PING,NOPE"])
        self.assertEqual(p.returncode, 2)
        self.assertIn(b"--ops: NOPE is not one of", p.stderr)


class ListWorkQueueBenchmark(unittest.TestCase):
    BIN = os.path.join(BUILD, "goblin_core_list_work_queue_benchmark")

    def test_trial_rounds_csv(self):
        p = run([self.BIN, gbtest.GOBLIN, "2000", "64", "--only", "BLPOP", "--trials", "3", "--no-park",
                 "--csv"])
        self.assertEqual(p.returncode, 0, p.stderr.decode(errors="replace"))
        lines = p.stdout.decode().strip().splitlines()
        self.assertEqual(lines[0], "operation,backend,commands_per_sec,values_per_sec")
        rows = [l.rsplit(",", 3) for l in lines[1:]]
        self.assertEqual([(r[0], r[1]) for r in rows],
                         [('"BLPOP ready, two keys"', "segmented"), ('"BLPOP ready, two keys"', "pma")])
        for r in rows:
            self.assertGreater(float(r[2]), 0)

    def test_paired_blpop_lpop(self):
        # A whole run (every row once) ends with the paired BLPOP/LPOP
        # measurement: in the goals and as a second CSV section.
        p = run([self.BIN, gbtest.GOBLIN, "2000", "64", "--trials", "1", "--no-park"])
        self.assertEqual(p.returncode, 0, p.stderr.decode(errors="replace"))
        out = p.stdout.decode()
        self.assertIn("paired BLPOP/LPOP round 1 of 1", p.stderr.decode())
        self.assertIn("ready BLPOP / LPOP, paired", out)
        self.assertIn("ready BLPOP / LPOP from the table's rows", out)
        p = run([self.BIN, gbtest.GOBLIN, "2000", "64", "--trials", "1", "--no-park", "--csv"])
        self.assertEqual(p.returncode, 0, p.stderr.decode(errors="replace"))
        sections = p.stdout.decode().strip().split("\n\n")
        self.assertEqual(len(sections), 2)
        self.assertEqual(len(sections[0].splitlines()), 1 + 15 * 2)
        lines = sections[1].splitlines()
        self.assertEqual(lines[0], "paired,backend,lpop_per_sec,blpop_per_sec,blpop_over_lpop,server_cpu_blpop_over_lpop")
        self.assertEqual([l.split(",")[:2] for l in lines[1:]], [["BLPOP/LPOP", "segmented"], ["BLPOP/LPOP", "pma"]])
        for l in lines[1:]:
            _, _, lpop, blpop, ratio, cpu = l.split(",")
            # one trial: the ratio is exactly the two rates divided
            self.assertAlmostEqual(float(ratio), float(blpop) / float(lpop), delta=0.005)
            self.assertGreater(float(ratio), 0)
            # The server's CPU time comes from /proc/<pid>/schedstat: where the
            # OS has it, both measurements cost CPU (a ratio > 0); elsewhere 0.
            if os.path.exists("/proc/self/schedstat"):
                self.assertGreater(float(cpu), 0)
            else:
                self.assertEqual(float(cpu), 0)

    def test_no_paired(self):
        p = run([self.BIN, gbtest.GOBLIN, "2000", "64", "--trials", "1", "--no-park", "--no-paired"])
        self.assertEqual(p.returncode, 0, p.stderr.decode(errors="replace"))
        self.assertNotIn("paired", p.stdout.decode() + p.stderr.decode())
        self.assertIn("ready BLPOP / LPOP from the table's rows", p.stdout.decode())

    def test_progress_and_goals(self):
        p = run([self.BIN, gbtest.GOBLIN, "2000", "64", "--only", "LMPOP", "--trials", "2", "--no-park"])
        self.assertEqual(p.returncode, 0, p.stderr.decode(errors="replace"))
        err, out = p.stderr.decode(), p.stdout.decode()
        self.assertIn("trial round 1 of 2", err)
        self.assertIn("trial round 2 of 2", err)
        self.assertIn("median of 2 trials", out)
        self.assertIn("PMA LMPOP COUNT 8 / segmented", out)
        self.assertNotIn("paired", out + err)  # --only picks rows: no paired measurement


class LeanLoad(unittest.TestCase):
    """bench/lean_load: every request it counts was answered, and answered
    with the command's reply (an error reply stops it)."""
    BIN = os.path.join(BUILD, "lean_load")

    def setUp(self):
        self.srv = gbtest.Server("goblin", args=["--rings", "0"])
        self.addCleanup(self.srv.stop)
        self.c = self.srv.raw()

    def load(self, *args):
        return run([self.BIN, "--socket", self.srv.sock] + list(args), timeout=120)

    def check_figures(self, fields):
        """The figures are the same measurements divided differently, up to
        the rounding of their printed digits; the client, one libuv thread,
        used some CPU and at most one CPU's worth."""
        n, secs, rate = int(fields["requests"]), float(fields["seconds"]), float(fields["rate"])
        per_req, share = float(fields["client_cpu_us_per_req"]), float(fields["client_cpu_share"])
        self.assertAlmostEqual(rate * secs, n, delta=0.5 * secs + 0.0005 * rate + 1)
        self.assertGreater(per_req, 0)
        self.assertGreater(share, 0)
        self.assertLessEqual(share, 1.01)
        self.assertAlmostEqual(per_req * n / 1e6, share * secs, delta=0.005 * n / 1e6 + 0.005 * secs + 0.0005 * share)

    def test_counts_what_was_answered(self):
        for pipeline in ("1", "16"):
            self.c.call("DEL", "n")
            p = self.load("--clients", "7", "--pipeline", pipeline, "--requests", "4000", "--", "INCR", "n")
            self.assertEqual(p.returncode, 0, p.stderr.decode(errors="replace"))
            fields = dict(kv.split("=") for kv in p.stdout.decode().split())
            self.assertEqual(int(fields["requests"]), 4000)
            self.assertEqual(self.c.call("GET", "n"), b"4000")  # each counted request ran once
            self.check_figures(fields)

    def test_random_keys_stay_below_the_keyspace(self):
        p = self.load("--requests", "3000", "--keyspace", "50", "--", "SET", "k:__rand_int__", "v")
        self.assertEqual(p.returncode, 0, p.stderr.decode(errors="replace"))
        keys = sorted(self.c.call("KEYS", "k:*"))
        self.assertGreater(len(keys), 10)
        self.assertLessEqual(len(keys), 50)
        for k in keys:
            self.assertRegex(k.decode(), r"^k:0000000000[0-4][0-9]$")

    def test_an_error_reply_stops_it(self):
        self.c.call("SET", "s", "text")
        p = self.load("--requests", "100", "--", "INCR", "s")
        self.assertEqual(p.returncode, 1)
        self.assertIn(b"error reply: -ERR value is not an integer or out of range", p.stderr)

    def test_bad_arguments(self):
        for args in (["--pipeline", "0", "--", "PING"], ["--pipeline", "65", "--", "PING"], ["--clients", "0", "--", "PING"],
                     ["--bogus"], []):
            p = self.load(*args)
            self.assertEqual(p.returncode, 2, args)
            self.assertIn(b"usage:", p.stderr)


if __name__ == "__main__":
    gbtest.run_tests()
