#!/usr/bin/env python3
"""Two commits of goblin-core measured side by side, in one run (issue 11).

    /usr/bin/python3 bench/compare_commits.py [--old ee1df42] [--new HEAD] [--rounds 7]
        [--ring-seconds 1] [--socket-requests 2000000] [--socket-p1-requests 300000] [--list-commands 200000]
        [--hold-build-lock] [--csv-out FILE]

Each commit is checked out in its own detached git worktree under --root
(default /tmp/goblin-cmp/<commit>/src) and built there (build/ beside it:
Release, GOBLIN_BUILD_TESTS=OFF, GOBLIN_PLATFORM=linux) under the shared
build lock; a worktree or build directory already there is reused. Each
build is measured with its own tools, so a tool compiled from one commit
never talks to the other commit's server:

  ring    sbe_vs_resp_ring --rounds 1 --csv: median round trip (ns) of PING
          and ZADD with 10 members over an SBE ring, and PING over a RESP
          ring (the tool starts its server with --cpu and --ring-spin-us 2000);
  socket  redis-benchmark -P 64 -t set, then -t get (-r 100000, as
          bench/socket_compare.py) over the Unix socket of a server this
          script starts (taskset and --cpu, --rings 0); then the same at
          pipeline 1 (--socket-p1-requests), and EVALSHA of a script that
          GETs one key (pipeline 1, 50 clients, -r 100000);
  list    goblin_core_list_work_queue_benchmark --only LPOP and --only BLPOP
          (commands/s of the LPOP and "BLPOP ready, two keys" rows, each for
          both large-list backends, pipeline --list-depth).

Rounds interleave the builds: in every round each suite runs on both builds
back to back, the old one first in even rounds and the new one first in odd
rounds (old new, new old, ...), so drifting load on a shared machine hits
both alike. A table cell is the median over rounds, with the min..max of the
rounds beside it. The server runs on --server-cpu (default 1), every client
on --client-cpu (default 0).

Servers start with --save "" and --appendonly no (no snapshots, no log) where
the build has those options; a commit from before persistence has no such
option and nothing to switch off (the script asks `--help`). The ring and
list tools start their own servers from bench/bench_common.c of their
commit, which does the same. Every server gets a fresh directory and socket
path and is stopped after its rows.
"""
import argparse
import fcntl
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import socket_compare  # noqa: E402  (its Server.call/stop and redis_benchmark)

BUILD_LOCK = "/tmp/gb-build.lock"
TARGETS = ["goblin_core_server", "sbe_vs_resp_ring", "goblin_core_list_work_queue_benchmark"]
SUITES = ("ring", "socket", "list")

# (row label, suite, unit, higher_is_better)
ROWS = [
    ("ring SBE PING", "ring", "p50 ns", False),
    ("ring SBE ZADD 10", "ring", "p50 ns", False),
    ("ring RESP PING", "ring", "p50 ns", False),
    ("socket SET -P 64", "socket", "req/s", True),
    ("socket GET -P 64", "socket", "req/s", True),
    ("socket SET -P 1", "socket", "req/s", True),
    ("socket GET -P 1", "socket", "req/s", True),
    ("socket EVALSHA -P 1", "socket", "req/s", True),
    ("socket SET -P 64 server CPU", "socket", "us/req", False),
    ("socket GET -P 64 server CPU", "socket", "us/req", False),
    ("socket SET -P 1 server CPU", "socket", "us/req", False),
    ("socket GET -P 1 server CPU", "socket", "us/req", False),
    ("socket EVALSHA -P 1 server CPU", "socket", "us/req", False),
    ("list LPOP (segmented)", "list", "cmd/s", True),
    ("list LPOP (pma)", "list", "cmd/s", True),
    ("list BLPOP ready (segmented)", "list", "cmd/s", True),
    ("list BLPOP ready (pma)", "list", "cmd/s", True),
]
# sbe_vs_resp_ring CSV (operation, protocol) -> row
RING_ROWS = {("PING", "sbe"): "ring SBE PING", ("ZADD10", "sbe"): "ring SBE ZADD 10",
             ("PING", "resp"): "ring RESP PING"}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def git(repo, *args):
    return subprocess.run(["git", "-C", repo] + list(args), check=True, capture_output=True,
                          text=True).stdout.strip()


class BuildLock:
    """The shared build lock: flock(2) on BUILD_LOCK, the lock flock(1) takes."""

    def __init__(self):
        self.f = None

    def acquire(self):
        self.f = open(BUILD_LOCK, "a")
        log("waiting for %s ..." % BUILD_LOCK)
        fcntl.flock(self.f, fcntl.LOCK_EX)

    def release(self):
        if self.f:
            self.f.close()  # closing the descriptor releases the lock
            self.f = None


class Build:
    """One commit: its worktree, its build directory, its binaries."""

    def __init__(self, repo, rev, root):
        self.sha = git(repo, "rev-parse", "--verify", rev + "^{commit}")
        self.short = self.sha[:9]
        self.subject = git(repo, "log", "-1", "--format=%s", self.sha)
        self.base = os.path.join(root, self.sha[:12])
        self.src = os.path.join(self.base, "src")
        self.dir = os.path.join(self.base, "build")
        self.repo = repo

    def bin(self, name):
        return os.path.join(self.dir, name)

    def checkout(self):
        if os.path.isdir(self.src):
            have = git(self.src, "rev-parse", "HEAD")
            if have != self.sha:
                sys.exit("%s holds commit %s, not %s: remove it (git worktree remove) and rerun"
                         % (self.src, have, self.sha))
            return
        os.makedirs(self.base, exist_ok=True)
        # A worktree whose folder /tmp lost is still registered, and "add"
        # refuses its path; "prune" forgets such entries (and only such).
        if ("worktree %s\n" % self.src) in git(self.repo, "worktree", "list", "--porcelain") + "\n":
            git(self.repo, "worktree", "prune")
        git(self.repo, "worktree", "add", "--detach", self.src, self.sha)

    def build(self, jobs):
        """Configure once, then an incremental build; the caller holds the build lock."""
        steps = []
        if not os.path.exists(os.path.join(self.dir, "CMakeCache.txt")):
            steps.append(["cmake", "-S", self.src, "-B", self.dir, "-DCMAKE_BUILD_TYPE=Release",
                          "-DGOBLIN_BUILD_TESTS=OFF", "-DGOBLIN_PLATFORM=linux"])
        steps.append(["cmake", "--build", self.dir, "-j%d" % jobs, "--target"] + TARGETS)
        for cmd in steps:
            log("%s: %s" % (self.short, " ".join(cmd)))
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit("build of %s failed:\n%s%s" % (self.short, r.stdout[-4000:], r.stderr[-4000:]))
        self.has_persistence = "appendonly" in subprocess.run(
            [self.bin("goblin-core"), "--help"], capture_output=True, text=True).stdout


class SocketServer(socket_compare.Server):
    """socket_compare's server (call, stop) started for one build: pinned, no
    rings, persistence off where the build has it."""

    def __init__(self, build, cpu):
        self.dir = tempfile.mkdtemp(prefix="gbcmp-")
        self.sock = os.path.join(self.dir, "s.sock")
        args = ["taskset", "-c", cpu, build.bin("goblin-core"), "--port", "0", "--unixsocket", self.sock,
                "--cpu", cpu, "--rings", "0"]
        if build.has_persistence:
            args += ["--save", "", "--appendonly", "no", "--dir", self.dir]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(500):
            try:
                if self.call(b"PING") == b"+PONG\r\n":
                    return
            except OSError:
                pass
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        self.stop()
        raise RuntimeError("%s did not start (%s)" % (build.bin("goblin-core"), " ".join(args)))


def tool_env(a):
    env = dict(os.environ)
    env["SERVER_CORE"], env["CLIENT_CORE"] = a.server_cpu, a.client_cpu
    return env


def run_tool(cmd, env, timeout):
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError("%s exited %d:\n%s" % (" ".join(cmd), r.returncode, r.stderr[-3000:]))
    return r.stdout


def suite_ring(b, a):
    out = run_tool([b.bin("sbe_vs_resp_ring"), b.bin("goblin-core"), "--seconds", str(a.ring_seconds),
                    "--rounds", "1", "--csv"], tool_env(a), timeout=120 + 30 * a.ring_seconds)
    got = {}
    for line in out.splitlines():
        f = line.split(",")
        if len(f) >= 3 and (f[0], f[1]) in RING_ROWS:
            got[RING_ROWS[(f[0], f[1])]] = float(f[2])
    return got


EVALSHA_SCRIPT = b"return redis.call('get', KEYS[1])"


def cpu_seconds(pid):
    """The process's user + system time so far (/proc/PID/stat)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def evalsha_rate(sock, sha, n, client_cpu):
    """redis-benchmark running one EVALSHA (a random key of 100000) at
    pipeline 1: its requests per second."""
    out = subprocess.run(["taskset", "-c", client_cpu, "redis-benchmark", "-s", sock, "-n", str(n), "-r", "100000",
                          "-q", "evalsha", sha, "1", "key:__rand_int__"], capture_output=True, text=True).stdout
    rates = re.findall(r"([\d.]+) requests per second", out.replace("\r", "\n"))
    return float(rates[-1]) if rates else None


def suite_socket(b, a):
    socket_compare.CLIENT_CORE = a.client_cpu
    srv = SocketServer(b, a.server_cpu)
    got = {}
    try:
        # The server's CPU per request beside each rate: on a shared machine
        # the rate moves with the load, the CPU a request costs much less.
        for pipeline, n in ((64, a.socket_requests), (1, a.socket_p1_requests)):
            for test in ("set", "get"):
                cpu0 = cpu_seconds(srv.proc.pid)
                rates = socket_compare.redis_benchmark(srv.sock, test, pipeline, n)
                if test.upper() not in rates:
                    raise RuntimeError("redis-benchmark gave no %s rate against %s" % (test, b.short))
                row = "socket %s -P %d" % (test.upper(), pipeline)
                got[row] = rates[test.upper()]
                got[row + " server CPU"] = (cpu_seconds(srv.proc.pid) - cpu0) * 1e6 / n
        sha = srv.call(b"SCRIPT", b"LOAD", EVALSHA_SCRIPT).split(b"\r\n")[1].decode()
        cpu0 = cpu_seconds(srv.proc.pid)
        rate = evalsha_rate(srv.sock, sha, a.socket_p1_requests, a.client_cpu)
        if rate is None:
            raise RuntimeError("redis-benchmark gave no EVALSHA rate against %s" % b.short)
        got["socket EVALSHA -P 1"] = rate
        got["socket EVALSHA -P 1 server CPU"] = (cpu_seconds(srv.proc.pid) - cpu0) * 1e6 / a.socket_p1_requests
    finally:
        srv.stop()
    return got


def suite_list(b, a):
    got = {}
    for only, label in (("LPOP", "list LPOP"), ("BLPOP", "list BLPOP ready")):
        out = run_tool([b.bin("goblin_core_list_work_queue_benchmark"), b.bin("goblin-core"),
                        str(a.list_commands), str(a.list_depth), "--csv", "--trials", "1", "--only", only,
                        "--no-park"], tool_env(a), timeout=600)
        for line in out.splitlines():
            m = re.match(r'^"([^"]*)",(\w+),([\d.]+),', line)
            if m and m.group(1).split(" ")[0] == only:
                got["%s (%s)" % (label, m.group(2))] = float(m.group(3))
    return got


SUITE_FN = {"ring": suite_ring, "socket": suite_socket, "list": suite_list}


def measure(builds, a, csvf):
    """samples[row][build index] -> list over rounds."""
    samples = {r[0]: ([], []) for r in ROWS}
    suites = [s for s in SUITES if s in a.suites]
    for rnd in range(a.rounds):
        order = (0, 1) if rnd % 2 == 0 else (1, 0)
        for suite in suites:
            for k in order:
                b = builds[k]
                t0 = time.time()
                got = SUITE_FN[suite](b, a)
                want = [r[0] for r in ROWS if r[1] == suite]
                missing = [r for r in want if r not in got]
                if missing:
                    raise RuntimeError("%s on %s gave no figure for %s" % (suite, b.short, ", ".join(missing)))
                for row in want:
                    samples[row][k].append(got[row])
                    if csvf:
                        csvf.write("%d,%s,%s,%.1f\n" % (rnd + 1, ("old", "new")[k], row, got[row]))
                log("round %d/%d %-6s %s (%s) %.0f s" % (rnd + 1, a.rounds, suite, ("old", "new")[k], b.short,
                                                         time.time() - t0))
        if csvf:
            csvf.flush()
    return samples


def fmt(v, unit):
    if unit == "us/req":
        return "%.3f" % v
    return ("%.0f" % v) if unit == "p50 ns" else "{:,.0f}".format(v)


def report(builds, a, samples, load0, load1, elapsed):
    old, new = builds
    print("## %s (old) vs %s (new)\n" % (old.short, new.short))
    print("- old: `%s` %s" % (old.short, old.subject))
    print("- new: `%s` %s" % (new.short, new.subject))
    print("- machine: %d CPUs, %s, kernel %s; load average %s at start, %s at end"
          % (os.cpu_count(), socket_compare.cpu_model(), platform.release(), load0, load1))
    print("- server on CPU %s, clients on CPU %s; %d interleaved rounds (old/new order alternates), %.0f s in all"
          % (a.server_cpu, a.client_cpu, a.rounds, elapsed))
    print("- ring: %g s per row per round; socket: %d requests per test at pipeline 64, %d at pipeline 1 "
          "(50 clients); list: %d commands, pipeline %d" % (a.ring_seconds, a.socket_requests,
                                                            a.socket_p1_requests, a.list_commands, a.list_depth))
    print("- latency rows (p50 ns) and server CPU rows (us/req: the server's user+system time per request): lower "
          "is better; throughput rows (req/s, cmd/s): higher is better. "
          "\"new/old\" is new median / old median, so below 1.0x is better for latency and above 1.0x is "
          "better for throughput; \"new slower by\" turns both into one sign (negative: new is faster).\n")
    print("| row | unit | old median | old min..max | new median | new min..max | new/old | new slower by |")
    print("|---|---|--:|--:|--:|--:|--:|--:|")
    for name, suite, unit, higher in ROWS:
        o, n = samples[name]
        if not o:
            continue
        mo, mn = statistics.median(o), statistics.median(n)
        ratio = mn / mo
        slower = (mo / mn if higher else mn / mo) - 1
        print("| %s | %s | %s | %s..%s | %s | %s..%s | %.3fx | %+.1f%% |"
              % (name, unit, fmt(mo, unit), fmt(min(o), unit), fmt(max(o), unit), fmt(mn, unit),
                 fmt(min(n), unit), fmt(max(n), unit), ratio, 100 * slower))


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--old", default="ee1df42", help="commit before the change (default ee1df42)")
    ap.add_argument("--new", default="HEAD", help="commit after it (default HEAD of this checkout)")
    ap.add_argument("--rounds", type=int, default=7, help="interleaved rounds, at least 5 for a real run")
    ap.add_argument("--ring-seconds", type=float, default=1.0, help="seconds per ring row per round")
    ap.add_argument("--socket-requests", type=int, default=2000000, help="redis-benchmark -n per test")
    ap.add_argument("--socket-p1-requests", type=int, default=300000,
                    help="redis-benchmark -n per pipeline-1 test (SET, GET, EVALSHA)")
    ap.add_argument("--list-commands", type=int, default=200000, help="measured commands per list row")
    ap.add_argument("--list-depth", type=int, default=64, help="list benchmark pipeline depth")
    ap.add_argument("--suites", default=",".join(SUITES), help="comma list of ring,socket,list")
    ap.add_argument("--server-cpu", default="1")
    ap.add_argument("--client-cpu", default="0")
    ap.add_argument("--root", default="/tmp/goblin-cmp", help="where the worktrees and builds go")
    ap.add_argument("--jobs", type=int, default=2, help="build parallelism")
    ap.add_argument("--hold-build-lock", action="store_true",
                    help="hold %s while measuring, so no build sharing the lock runs meanwhile" % BUILD_LOCK)
    ap.add_argument("--csv-out", help="write every sample (round,build,row,value) to this file")
    a = ap.parse_args()
    a.suites = [s for s in a.suites.split(",") if s]
    if any(s not in SUITES for s in a.suites):
        ap.error("--suites takes a comma list of %s" % ",".join(SUITES))
    if (a.rounds < 1 or a.ring_seconds <= 0 or a.socket_requests < 1 or a.socket_p1_requests < 1
            or a.list_commands < 1 or a.list_depth < 1):
        ap.error("--rounds, --ring-seconds, --socket-requests, --list-commands and --list-depth must be positive")
    if a.rounds < 5:
        log("note: %d rounds; a result to report needs at least 5" % a.rounds)

    repo = git(os.path.dirname(os.path.abspath(__file__)), "rev-parse", "--show-toplevel")
    builds = [Build(repo, a.old, a.root), Build(repo, a.new, a.root)]
    if builds[0].sha == builds[1].sha:
        log("note: --old and --new are the same commit (%s)" % builds[0].short)
    for b in builds:
        b.checkout()
    csvf = open(a.csv_out, "w") if a.csv_out else None
    if csvf:
        csvf.write("round,build,row,value\n")
    # One hold of the lock for both builds (a busy lock can queue for
    # minutes), kept through the measurement with --hold-build-lock.
    lock = BuildLock()
    lock.acquire()
    try:
        for b in builds:
            b.build(a.jobs)
            if not b.has_persistence:
                log("%s has no --save/--appendonly options (no persistence): its servers start without them"
                    % b.short)
        if not a.hold_build_lock:
            lock.release()
        load0, t0 = loadavg(), time.time()
        samples = measure(builds, a, csvf)
    finally:
        lock.release()
        if csvf:
            csvf.close()
    report(builds, a, samples, load0, loadavg(), time.time() - t0)


if __name__ == "__main__":
    main()
