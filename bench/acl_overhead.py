#!/usr/bin/env python3
"""The cost of the ACL check on the hot path (issue 18): the default user
against a restricted one, side by side, in one run.

    /usr/bin/python3 bench/acl_overhead.py --goblin build-release/goblin-core \\
        --ring-rtt build-release/ring_rtt_as [--trials 7] [--requests 1000000] [--seconds 1]

The restricted user is `on >pw ~key:* ~m:* +@read +ping +ring +config|get`
(redis-benchmark reads CONFIG GET save/appendonly first):

  ring SBE PING   typed PING round trips (build-release/ring_rtt_as, p50):
                  for both users one bit test (the user may run PING with
                  any arguments)
  ring SBE GET    typed GET round trips under one of 1,000 keys m:*: the
                  restricted user takes the full check on every call (the
                  key found from GET's key spec, matched against ~m:*)
  socket GET -P64 redis-benchmark `-t get -P 64 -r 100000 -c 50` over the
                  Unix socket: the full check on every GET (~key:*); the
                  same rows against redis-server 7.0 in the same run give
                  Redis's own ratio

One goblin-core and one redis-server run pinned (taskset) to SERVER_CORE
(default 0), every client to CLIENT_CORE (default 1). Each trial runs every
row for both users, in an order that rotates from trial to trial so drift
hits every row alike. Reported: per row the median over trials for each
user and the ratio restricted/default (for round trips above 1 means
slower; for requests/s below 1 means slower), and for the socket rows the
server's CPU time per request (user+system from /proc: steadier than
throughput on a shared machine). The run fails if the restricted user was
refused anything (ACL LOG must stay empty).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

SERVER_CORE = os.environ.get("SERVER_CORE", "0")
CLIENT_CORE = os.environ.get("CLIENT_CORE", "1")
RESTRICTED = ["on", ">pw", "~key:*", "~m:*", "+@read", "+ping", "+ring", "+config|get"]  # redis-benchmark reads CONFIG
USERS = ("default", "restricted")


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cli(sock, *args):
    return subprocess.run(["redis-cli", "-s", sock] + list(args), capture_output=True, text=True,
                          check=True).stdout


def wait_socket(sock):
    for _ in range(500):
        if os.path.exists(sock):
            try:
                if cli(sock, "PING").strip() == "PONG":
                    return
            except subprocess.CalledProcessError:
                pass
        time.sleep(0.02)
    raise RuntimeError("server on %s did not come up" % sock)


def start(cmd, sock, rules):
    proc = subprocess.Popen(["taskset", "-c", SERVER_CORE] + cmd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    wait_socket(sock)
    reply = cli(sock, "ACL", "SETUSER", "restricted", *rules).strip()
    if reply != "OK":
        raise RuntimeError("ACL SETUSER on %s: %s" % (cmd[0], reply))
    return proc


def socket_get(sock, user, requests):
    cmd = ["taskset", "-c", CLIENT_CORE, "redis-benchmark", "-s", sock, "-t", "get", "-P", "64", "-r", "100000",
           "-c", "50", "-n", str(requests), "-q"]
    if user != "default":
        cmd += ["--user", user, "-a", "pw"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.replace("\r", "\n")
    m = re.search(r"GET: ([\d.]+) requests per second", out)
    if not m or "NOPERM" in out or "ERR" in out:
        raise RuntimeError(out)
    return float(m.group(1))


def ring_rtt(tool, sock, user, op, seconds):
    env = dict(os.environ)
    env.pop("CLIENT_CORE", None)  # pinned by taskset instead
    if user != "default":
        env["GB_BENCH_USER"], env["GB_BENCH_PASSWORD"] = user, "pw"
    out = subprocess.run(["taskset", "-c", CLIENT_CORE, tool, sock, "sbe", op, str(seconds)], capture_output=True,
                         text=True, check=True, env=env).stdout
    return float(out.split()[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--goblin", required=True)
    ap.add_argument("--ring-rtt", required=True, help="build-release/ring_rtt_as")
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--trials", type=int, default=7)
    ap.add_argument("--requests", type=int, default=1000000)
    ap.add_argument("--seconds", type=float, default=1.0, help="per ring row and trial")
    a = ap.parse_args()
    d = tempfile.mkdtemp(prefix="gbbench-acl-")
    gsock, rsock = os.path.join(d, "g.sock"), os.path.join(d, "r.sock")
    procs = []
    try:
        procs.append(start([a.goblin, "--port", "0", "--unixsocket", gsock, "--save", "", "--rings", "2",
                            "--dir", d], gsock, RESTRICTED))
        procs.append(start([a.redis, "--port", "0", "--unixsocket", rsock, "--save", "", "--appendonly", "no",
                            "--dir", d], rsock, [r for r in RESTRICTED if r != "+ring"]))  # Redis has no RING
        goblin_pid, redis_pid = procs[0].pid, procs[1].pid
        for sock in (gsock, rsock):
            subprocess.run(["redis-benchmark", "-s", sock, "-t", "set", "-r", "100000", "-n", "300000", "-P", "64",
                            "-q"], capture_output=True, check=True)
        subprocess.run([a.ring_rtt, gsock, "sbe", "prepare"], check=True)

        rows = {  # name -> (unit, higher_is_better, run(user) -> value, server pid for CPU or None)
            "ring SBE PING": ("ns p50", False, lambda u: ring_rtt(a.ring_rtt, gsock, u, "PING", a.seconds), None),
            "ring SBE GET": ("ns p50", False, lambda u: ring_rtt(a.ring_rtt, gsock, u, "GET", a.seconds), None),
            "socket GET -P64 (goblin)": ("req/s", True, lambda u: socket_get(gsock, u, a.requests), goblin_pid),
            "socket GET -P64 (redis)": ("req/s", True, lambda u: socket_get(rsock, u, a.requests), redis_pid),
        }
        runs = [(r, u) for r in rows for u in USERS]
        val = {k: [] for k in runs}
        cpu = {k: [] for k in runs}
        for t in range(a.trials):
            k = (t * 3) % len(runs)
            for key in runs[k:] + runs[:k]:
                row, user = key
                pid = rows[row][3]
                c0 = cpu_seconds(pid) if pid else 0
                val[key].append(rows[row][2](user))
                if pid:
                    cpu[key].append((cpu_seconds(pid) - c0) * 1e6 / a.requests)
        for sock in (gsock, rsock):
            log = cli(sock, "ACL", "LOG").strip()
            if log:
                raise RuntimeError("the restricted user was refused something: " + log)

        print("| row | unit | default (median of %d) | restricted | restricted / default | server CPU µs/req "
              "default | restricted | ratio |" % a.trials)
        print("|---|---|---|---|---|---|---|---|")
        for row, (unit, _, _, pid) in rows.items():
            dv, rv = statistics.median(val[(row, "default")]), statistics.median(val[(row, "restricted")])
            cols = ["%s" % row, unit, format(int(round(dv)), ","), format(int(round(rv)), ","), "%.3f" % (rv / dv)]
            if pid:
                dc, rc = statistics.median(cpu[(row, "default")]), statistics.median(cpu[(row, "restricted")])
                cols += ["%.3f" % dc, "%.3f" % rc, "%.3f" % (rc / dc)]
            else:
                cols += ["–", "–", "–"]
            print("| " + " | ".join(cols) + " |")
        print("\nall trials:", file=sys.stderr)
        for key in runs:
            print("  %-26s %-10s %s" % (key[0], key[1], [int(x) for x in val[key]]), file=sys.stderr)
    finally:
        for p in procs:
            p.terminate()
            p.wait(10)
        subprocess.run(["rm", "-rf", d])


if __name__ == "__main__":
    main()
