#!/usr/bin/env python3
"""goblin-core vs redis-server over TLS, measured side by side (docs/tls.md).

    /usr/bin/python3 bench/tls_compare.py --goblin build-release/goblin-core \
        [--redis /usr/bin/redis-server] [--trials 5] [--requests 200000] [--clients 50]

redis-benchmark --tls (client certificate, tls-auth-clients yes: Redis's
default) runs GET and SET at pipeline 1 and 16 against each server's
tls-port, random keys (-r 100000). In every trial each server is started
fresh, pinned to SERVER_CORE (default 0) with the benchmark on CLIENT_CORE
(default 1); goblin-core and redis-server alternate, and which goes first
alternates too, so drift on a shared machine hits both alike (the pattern
of bench/side_by_side.py). Each row is the median of the trials; "CPU
us/req" is the server process's user+system time per request, steadier
than throughput on a busy machine. The certificates are a throwaway CA,
server and client made with the openssl command line.
"""
import argparse
import csv
import io
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from side_by_side import SERVERS
from socket_compare import CLIENT_CORE, SERVER_CORE, Server, cpu_model

ROWS = [("SET", 1), ("GET", 1), ("SET", 16), ("GET", 16)]


def openssl(cwd, *args):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_certs(d):
    """ca.crt, server.{crt,key} (127.0.0.1) and client.{crt,key} in d."""
    for name in ("ca", "server", "client"):
        openssl(d, "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-out", name + ".key")
    openssl(d, "req", "-x509", "-new", "-key", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=bench-ca")
    for name, ext in (("server", "subjectAltName=IP:127.0.0.1"), ("client", "extendedKeyUsage=clientAuth")):
        with open(os.path.join(d, name + ".ext"), "w") as f:
            f.write(ext + "\n")
        openssl(d, "req", "-new", "-key", name + ".key", "-out", name + ".csr", "-subj", "/CN=bench-" + name)
        openssl(d, "x509", "-req", "-in", name + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-set_serial",
                str(int.from_bytes(os.urandom(8), "big")), "-out", name + ".crt", "-days", "2", "-extfile",
                name + ".ext")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class TlsServer(Server):
    """socket_compare.Server with a TLS port beside its Unix socket (which
    the readiness check and CPU accounting keep using)."""

    def __init__(self, binary, kind, certs):
        self.tls_port = free_port()
        self.certs = certs
        Server.__init__(self, binary, kind)

    def start_args(self):
        c = self.certs
        return ["--bind", "127.0.0.1", "--tls-port", str(self.tls_port), "--tls-cert-file",
                os.path.join(c, "server.crt"), "--tls-key-file", os.path.join(c, "server.key"),
                "--tls-ca-cert-file", os.path.join(c, "ca.crt")]


def run_benchmark(port, certs, test, pipeline, requests, clients):
    """redis-benchmark --tls for one test: requests per second."""
    cmd = ["taskset", "-c", CLIENT_CORE, "redis-benchmark", "--tls", "--cert", os.path.join(certs, "client.crt"),
           "--key", os.path.join(certs, "client.key"), "--cacert", os.path.join(certs, "ca.crt"), "-h", "127.0.0.1",
           "-p", str(port), "-t", test.lower(), "-P", str(pipeline), "-n", str(requests), "-c", str(clients),
           "-r", "100000", "--csv"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=600).stdout
    rows = list(csv.reader(io.StringIO(out)))
    for row in rows:
        if row and row[0] == test:
            return float(row[1])
    raise RuntimeError("no %s row in redis-benchmark's output: %r" % (test, out))


def measure(a, certs):
    binaries = {"goblin": a.goblin, "redis": a.redis}
    results = {}
    for trial in range(a.trials):
        for name in SERVERS if trial % 2 == 0 else reversed(SERVERS):
            srv = TlsServer(binaries[name], name, certs)
            try:
                for test, pipeline in ROWS:
                    c0 = srv.cpu_seconds()
                    rate = run_benchmark(srv.tls_port, certs, test, pipeline, a.requests, a.clients)
                    r = results.setdefault((name, test, pipeline), {"rate": [], "cpu": []})
                    r["rate"].append(rate)
                    r["cpu"].append((srv.cpu_seconds() - c0) * 1e6 / a.requests)
            finally:
                srv.stop()
            print("trial %d %s done" % (trial + 1, name), file=sys.stderr)
    return results


def print_table(a, results):
    print("Machine: %d CPUs, %s, kernel %s; server on CPU %s, redis-benchmark --tls on CPU %s; %d clients, "
          "%d requests per row; median of %d trials\n"
          % (os.cpu_count(), cpu_model(), os.uname().release, SERVER_CORE, CLIENT_CORE, a.clients, a.requests,
             a.trials))
    print("| command | pipeline | goblin-core req/s | redis-server req/s | goblin / redis "
          "| goblin CPU us/req | redis CPU us/req |")
    print("|---|---|---|---|---|---|---|")
    for test, pipeline in ROWS:
        med = {k: {s: statistics.median(results[(s, test, pipeline)][k]) for s in SERVERS} for k in ("rate", "cpu")}
        g, r = med["rate"]["goblin"], med["rate"]["redis"]
        print("| %s | %d | %.0f | %.0f | %.2fx | %.2f | %.2f |"
              % (test, pipeline, g, r, g / r, med["cpu"]["goblin"], med["cpu"]["redis"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--goblin", required=True)
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--requests", type=int, default=200000)
    ap.add_argument("--clients", type=int, default=50)
    a = ap.parse_args()
    certs = tempfile.mkdtemp(prefix="gbbench-tls-")
    try:
        make_certs(certs)
        print_table(a, measure(a, certs))
    finally:
        shutil.rmtree(certs, ignore_errors=True)


if __name__ == "__main__":
    main()
