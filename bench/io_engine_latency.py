#!/usr/bin/env python3
"""Latency at a fixed request rate (issue 33's second goal): goblin-core on
io_uring, goblin-core on libuv and redis-server, pipeline 1, an open loop
(docs/benchmarks.md, "Socket I/O engines at a fixed rate").

    /usr/bin/python3 bench/io_engine_latency.py --goblin build-release/goblin-core \\
        --lean-load build-release/lean_load [--redis /usr/bin/redis-server] [--rounds 3] \\
        [--conns 50] [--load 0.5] [--seconds 3] [--commands get,set] [--transport unix] \\
        [--svg docs/img/io-engine-latency-cdf.svg]

1. redis-server's peak: lean_load's closed loop (each connection sends again
   as soon as its reply arrives) at pipeline 1, median of --rounds runs.
2. The rate: --load (default 0.5) of that peak, the same for all three
   servers.
3. Rounds: in each, every server in turn (the order rotates from round to
   round, so drift hits all alike) gets lean_load --rate for --seconds:
   request k is due at start + k/rate, leaves on the first idle
   connection at or after that time, and its latency counts from when it
   was due (no coordinated omission: a stall is charged to every request
   that waited behind it).

The table shows, per command and server, the medians over the rounds of
p50, p90, p99 and p99.9 in microseconds, the rate achieved and the
server's CPU share of its core. --svg draws the first command's latency
CDF from each server's median-p99 round (bench/latency_cdf_chart.py).
Servers on SERVER_CORE (default 0), lean_load on CLIENT_CORE (default 1).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import io_engine_compare  # noqa: E402
from io_engine_compare import CLIENT_CORE, COMMANDS, SERVER_CORE, Server, platform_line  # noqa: E402

LATENCY = re.compile(r"requests=(\d+) seconds=([\d.]+) rate=([\d.]+) .* p50_us=([\d.]+) p90_us=([\d.]+) "
                     r"p99_us=([\d.]+) p999_us=([\d.]+) max_us=([\d.]+)")
QUANTILES = ("p50", "p90", "p99", "p999")


def target(srv, transport):
    return ["--socket", srv.sock] if transport == "unix" else ["--port", str(srv.port)]


def peak_rate(srv, lean_load, transport, conns, argv, rounds):
    """The server's closed-loop req/s at pipeline 1 (median of rounds)."""
    rates = [io_engine_compare.one_run(srv, lean_load, transport, conns, 1, 200000, argv)["rate"]
             for _ in range(rounds)]
    return statistics.median(rates)


def fixed_rate_run(srv, lean_load, transport, conns, rate, seconds, argv, cdf):
    """One open-loop run; its latency quantiles (µs), achieved rate and the
    server's CPU share. The CDF goes to the file cdf (label: the server)."""
    cmd = (["taskset", "-c", CLIENT_CORE, lean_load] + target(srv, transport) +
           ["--clients", str(conns), "--requests", str(int(rate * seconds)), "--rate", str(rate),
            "--cdf", cdf, "--label", srv.name, "--"] + argv)
    cpu0, t0 = srv.cpu_seconds(), time.time()
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds * 20 + 60)
    share = (srv.cpu_seconds() - cpu0) / (time.time() - t0)
    m = LATENCY.search(out.stdout)
    if out.returncode != 0 or not m:
        raise RuntimeError("lean_load failed on %s: %s %s" % (srv.name, out.stdout[-300:], out.stderr[-300:]))
    row = dict(zip(("rate",) + QUANTILES, (float(m.group(i)) for i in (3, 4, 5, 6, 7))))
    row["share"] = share
    return row


def read_cdf(path):
    with open(path) as f:
        return f.read()


def measure_command(servers, a, name, argv, cdf_rows):
    """Every server's rounds at the fixed rate for one command; prints its
    table rows, and keeps each server's median-p99 CDF in cdf_rows."""
    peak = peak_rate(servers[-1], a.lean_load, a.transport, a.conns, argv, a.rounds)
    rate = round(peak * a.load)
    results = {s.name: [] for s in servers}
    for rnd in range(a.rounds):
        order = servers[rnd % len(servers):] + servers[:rnd % len(servers)]
        for s in order:
            fd, cdf = tempfile.mkstemp(prefix="gblat-", suffix=".csv")
            os.close(fd)
            row = fixed_rate_run(s, a.lean_load, a.transport, a.conns, rate, a.seconds, argv, cdf)
            row["cdf"] = read_cdf(cdf)
            os.unlink(cdf)
            results[s.name].append(row)
    redis_p = {q: statistics.median(r[q] for r in results[servers[-1].name]) for q in ("p50", "p99")}
    for s in servers:
        rows = results[s.name]
        med = {k: statistics.median(r[k] for r in rows) for k in ("rate", "share") + QUANTILES}
        print("| %s | %s | %.0f | %.0f | %s | %.0f | %.1f | %.1f | %.1f | %.1f | %.2f, %.2f | %.2f |" %
              (a.transport, name.upper(), peak, rate, s.name, med["rate"], med["p50"], med["p90"], med["p99"],
               med["p999"], med["p50"] / redis_p["p50"], med["p99"] / redis_p["p99"], med["share"]))
        by_p99 = sorted(rows, key=lambda r: r["p99"])
        cdf_rows.setdefault(name, []).append(by_p99[len(by_p99) // 2]["cdf"])
    sys.stdout.flush()


def draw(cdf_rows, name, svg, title):
    fd, csv = tempfile.mkstemp(prefix="gblat-", suffix=".csv")
    with os.fdopen(fd, "w") as f:
        f.write("".join(cdf_rows[name]))
    chart = os.path.join(os.path.dirname(os.path.abspath(__file__)), "latency_cdf_chart.py")
    subprocess.run([sys.executable, chart, csv, svg, "--title", title], check=True)
    os.unlink(csv)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--goblin", required=True)
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--lean-load", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--conns", type=int, default=50)
    ap.add_argument("--load", type=float, default=0.5, help="the fixed rate, as a fraction of redis-server's peak")
    ap.add_argument("--seconds", type=float, default=3.0, help="each open-loop run's length")
    ap.add_argument("--commands", default="get,set")
    ap.add_argument("--transport", default="unix", choices=("unix", "tcp"))
    ap.add_argument("--svg", help="the first command's latency CDFs, one per server")
    a = ap.parse_args()
    servers = [Server("goblin io_uring", a.goblin, ["--io-engine", "io_uring", "--rings", "0"]),
               Server("goblin libuv", a.goblin, ["--io-engine", "libuv", "--rings", "0"]),
               Server("redis-server", a.redis, ["--protected-mode", "no"])]
    cdf_rows = {}
    try:
        print("machine: %s, servers on CPU %s, lean_load on CPU %s; %d connections, pipeline 1, rate %.2f x "
              "redis-server's peak, %d rounds of %g s per server" %
              (platform_line(), SERVER_CORE, CLIENT_CORE, a.conns, a.load, a.rounds, a.seconds))
        print()
        print("| transport | command | redis peak req/s | fixed rate | server | achieved req/s | p50 µs | p90 µs | "
              "p99 µs | p99.9 µs | p50, p99 vs redis | server CPU share |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        names = a.commands.split(",")
        for name in names:
            measure_command(servers, a, name, COMMANDS[name], cdf_rows)
    finally:
        for s in servers:
            s.stop()
    if a.svg:
        draw(cdf_rows, names[0], a.svg, "%s at %.0f%% of redis-server's peak, pipeline 1, %d connections (CDF)" %
             (names[0].upper(), a.load * 100, a.conns))


if __name__ == "__main__":
    main()
