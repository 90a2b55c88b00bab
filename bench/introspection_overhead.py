#!/usr/bin/env python3
"""What SLOWLOG and latency tracking cost on GET and SET, goblin-core and
redis-server side by side (issue 36; docs/benchmarks.md, "Introspection
overhead").

    /usr/bin/python3 bench/introspection_overhead.py --goblin build-release/goblin-core \
        [--redis /usr/bin/redis-server] [--lean-load build-release/lean_load] [--trials 5]

Each server is filled first (SET over the 100,000 keys), then runs GET and
SET (lean_load, 50 connections over the Unix socket, pipeline 1 and 16)
under three settings, changed with CONFIG SET
on the same process:

  off       latency-tracking no, slowlog-log-slower-than -1 (nothing timed
            per call: goblin-core then times 1 call in 16 for commandstats)
  default   Redis's defaults: latency-tracking yes, slowlog-log-slower-than
            10000 (every call timed and put in its command's histogram)
  slowlog0  default plus slowlog-log-slower-than 0 (every call also copied
            into the slow log, slowlog-max-len 128)

The settings alternate within every trial, as do the servers (which one
goes first alternates too); each cell is the median over --trials. The
server is pinned to SERVER_CORE and the client to CLIENT_CORE (taskset).
Besides requests per second, each cell shows the server process's CPU time
per request (/proc/<pid>/stat): on a shared machine the steadier measure of
what the setting costs the server.
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from script_compare import run_lean_load  # noqa: E402
from socket_compare import CLIENT_CORE, SERVER_CORE, Server, cpu_model  # noqa: E402

SETTINGS = {
    "off": [(b"latency-tracking", b"no"), (b"slowlog-log-slower-than", b"-1")],
    "default": [(b"latency-tracking", b"yes"), (b"slowlog-log-slower-than", b"10000")],
    "slowlog0": [(b"latency-tracking", b"yes"), (b"slowlog-log-slower-than", b"0")],
}
COMMANDS = {"GET": ["GET", "key:__rand_int__"], "SET": ["SET", "key:__rand_int__", "xxxxxxxxxxxxxxxx"]}
PIPELINES = (1, 16)


def configure(srv, setting):
    for name, value in SETTINGS[setting]:
        if srv.call(b"CONFIG", b"SET", name, value) != b"+OK\r\n":
            raise RuntimeError("CONFIG SET %s %s refused" % (name, value))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--goblin", required=True)
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--lean-load", help="the lean_load binary (default: next to --goblin)")
    ap.add_argument("--n1", type=int, default=100000, help="requests per run at pipeline 1")
    ap.add_argument("--n16", type=int, default=400000, help="requests per run at pipeline 16")
    a = ap.parse_args()
    lean = a.lean_load or os.path.join(os.path.dirname(os.path.abspath(a.goblin)), "lean_load")
    if not os.access(lean, os.X_OK):
        sys.exit("no lean_load at %s: build it (cmake --build build-release --target lean_load) or pass --lean-load"
                 % lean)
    binaries = {"goblin": a.goblin, "redis": a.redis}
    rates, cpu = {}, {}  # (server, setting, command, pipeline) -> [req/s], [server CPU us/req]
    for trial in range(a.trials):
        order = ["goblin", "redis"] if trial % 2 == 0 else ["redis", "goblin"]
        for name in order:
            srv = Server(binaries[name], name)
            try:
                # Every key GET asks for exists before anything is measured
                # (otherwise the first setting's GETs would all miss).
                run_lean_load(lean, srv.sock, COMMANDS["SET"], 16, 400000)
                settings = list(SETTINGS) if trial % 2 == 0 else list(reversed(SETTINGS))
                for setting in settings:
                    configure(srv, setting)
                    for cmd, argv in COMMANDS.items():
                        for p in PIPELINES:
                            n = a.n1 if p == 1 else a.n16
                            c0 = srv.cpu_seconds()
                            rate, _ = run_lean_load(lean, srv.sock, argv, p, n)
                            rates.setdefault((name, setting, cmd, p), []).append(rate)
                            cpu.setdefault((name, setting, cmd, p), []).append((srv.cpu_seconds() - c0) * 1e6 / n)
            finally:
                srv.stop()
            print("trial %d %s done" % (trial + 1, name), file=sys.stderr)

    print("Machine: %d CPUs, %s, kernel %s; server on CPU %s, the client on CPU %s; median of %d trials\n"
          % (os.cpu_count(), cpu_model(), os.uname().release, SERVER_CORE, CLIENT_CORE, a.trials))
    print("| command | pipeline | server | req/s off / default / slowlog0 | server CPU us/req off / default / "
          "slowlog0 | CPU per request, default vs off | slowlog0 vs off |")
    print("|---|---|---|---|---|---|---|")
    for cmd in COMMANDS:
        for p in PIPELINES:
            for name in ("goblin", "redis"):
                r = {s: statistics.median(rates[(name, s, cmd, p)]) for s in SETTINGS}
                c = {s: statistics.median(cpu[(name, s, cmd, p)]) for s in SETTINGS}
                print("| %s | %d | %s | %.0f / %.0f / %.0f | %.2f / %.2f / %.2f | %+.1f%% | %+.1f%% |"
                      % (cmd, p, "goblin-core" if name == "goblin" else "redis-server", r["off"], r["default"],
                         r["slowlog0"], c["off"], c["default"], c["slowlog0"], 100 * (c["default"] / c["off"] - 1),
                         100 * (c["slowlog0"] / c["off"] - 1)))


if __name__ == "__main__":
    main()
