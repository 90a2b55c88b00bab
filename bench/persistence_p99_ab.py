#!/usr/bin/env python3
"""Write p99 during a BGSAVE, A/B of goblin-core binaries on one CPU.

The persistence benchmark's p99 row (persistence_benchmark.py) measures one
BGSAVE per trial against Redis; a change to how a background save shares
the engine's CPU needs the two builds side by side instead. This loads the
dataset into every binary once (all servers stay up: SERVER_CORE for all,
redis-benchmark and this script on CLIENT_CORE), then runs rounds; in each round every
binary, in turn:

  quiet   redis-benchmark SET, 8 clients, pipeline 1, 200,000 requests on
          new keys of its own: its p99
  BGSAVE  the same writers (400,000 requests) with a BGSAVE started 0.3 s
          in: their p99, the save's duration, their requests/s

and prints the ratio p99 during / quiet, and, where Linux's
/proc/<pid>/task/<pid>/schedstat exists, the engine thread's mean wait on
the run queue per wake-up in both phases (how long a woken engine waited
for the CPU: the snapshot writer thread shares it). Medians at the end.

  /usr/bin/python3 bench/persistence_p99_ab.py --data /tmp/persist-2g.resp \\
      --rounds 4 build-a/goblin-core build-b/goblin-core

(--data: a file from persistence_benchmark.generate(); each round adds new
keys to every server, about 300,000, so rounds are interleaved rather than
compared with earlier runs.)
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import persistence_benchmark as pb  # noqa: E402


def writers(srv, n, prefix):
    """redis-benchmark SET on new keys under prefix; (requests/s, p99 ms)."""
    out = subprocess.run(["taskset", "-c", pb.CLIENT_CORE, pb.REDIS_BENCH, "-s", srv.sock, "-n", str(n), "-c", "8",
                          "-r", "1000000", "--csv", "SET", prefix + ":__rand_int__", "x" * 64],
                         capture_output=True, text=True, check=True).stdout
    cols = [c.strip('"') for c in [l for l in out.splitlines() if l.strip()][-1].split(",")]
    return float(cols[1]), float(cols[6])


def engine_schedstat(pid):
    """(ns waited on the run queue, times run) of the main thread, or None."""
    try:
        with open("/proc/%d/task/%d/schedstat" % (pid, pid)) as f:
            _, wait_ns, slices = (int(x) for x in f.read().split())
        return wait_ns, slices
    except OSError:
        return None


def wait_per_wake_us(before, after):
    if before is None or after is None:
        return float("nan")
    return (after[0] - before[0]) / max(1, after[1] - before[1]) / 1000


def one_round(srv, r):
    s0 = engine_schedstat(srv.proc.pid)
    _, quiet_p99 = writers(srv, 200000, "q%d" % r)
    s1 = engine_schedstat(srv.proc.pid)
    out = {}
    t = threading.Thread(target=lambda: out.update(zip(("rps", "p99"), writers(srv, 400000, "w%d" % r))))
    t.start()
    time.sleep(0.3)
    s2 = engine_schedstat(srv.proc.pid)
    t0 = time.time()
    if not srv.call("BGSAVE").startswith(b"+Background saving started"):
        raise RuntimeError("BGSAVE refused")
    pb.wait_bgsave(srv)
    secs = time.time() - t0
    s3 = engine_schedstat(srv.proc.pid)
    t.join()
    return {"quiet_p99": quiet_p99, "p99": out["p99"], "ratio": out["p99"] / quiet_p99, "save_s": secs,
            "rps": out["rps"], "quiet_wait_us": wait_per_wake_us(s0, s1), "wait_us": wait_per_wake_us(s2, s3)}


def show(label, x):
    print("%s p99 quiet %.3f ms, during BGSAVE %.3f ms: %.2fx; save %.1f s; %.0f req/s; "
          "engine wait per wake %.1f us quiet, %.1f us during" % (label, x["quiet_p99"], x["p99"], x["ratio"],
                                                                 x["save_s"], x["rps"], x["quiet_wait_us"],
                                                                 x["wait_us"]), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True, help="dataset from persistence_benchmark.generate()")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("binaries", nargs="+", help="goblin-core builds to compare")
    args = ap.parse_args()
    pb.pin_harness()
    servers = []
    try:
        for b in args.binaries:
            srv = pb.Server("goblin", b, dirpath=tempfile.mkdtemp(prefix="p99ab-"))
            servers.append(srv)
            pb.load(srv, args.data)
        results = {b: [] for b in args.binaries}
        for r in range(args.rounds):
            for b, srv in zip(args.binaries, servers):
                results[b].append(one_round(srv, r))
                show("round %d %s:" % (r, b), results[b][-1])
        for b in args.binaries:
            show("MEDIAN %s:" % b, {k: statistics.median(x[k] for x in results[b]) for k in results[b][0]})
    finally:
        for srv in servers:
            srv.stop()


if __name__ == "__main__":
    main()
