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

--storm RATE: instead, the connection storm of issue 31. A steady load
(GET at pipeline 16, redis-benchmark --tls) runs alone, then beside a
thread that opens RATE new TLS connections a second (handshake, PING,
close); the table gives the steady load's throughput both ways and what
the storm took from it, for each server in the same trials. redis-server
runs pinned to SERVER_CORE; goblin-core gets --cpu SERVER_CORE (its engine
thread pinned there) and may use STORM_HELPER_CORE (default CLIENT_CORE)
for its helper threads, where its TLS handshakes run. On a 2-core machine
that core is the clients' too.

--handshake-cpu N: where a new TLS connection's CPU goes. N connections
(handshake, PING, close), one after another, to redis-server and to
goblin-core with tls-handshake-thread yes and no; the table gives each
thread's CPU time per connection (/proc/<pid>/task/*/stat), the engine
(main) thread's first.
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
import ssl
import tempfile
import threading
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


STORM_HELPER_CORE = os.environ.get("STORM_HELPER_CORE", CLIENT_CORE)


class TlsServer(Server):
    """socket_compare.Server with a TLS port beside its Unix socket (which
    the readiness check and CPU accounting keep using). helper_core: for
    goblin-core, its engine thread is pinned to SERVER_CORE with --cpu and
    its helper threads may use helper_core."""

    def __init__(self, binary, kind, certs, helper_core=None, extra=()):
        self.tls_port = free_port()
        self.certs = certs
        self.extra = list(extra)
        self.helper_core = helper_core if kind == "goblin" else None
        Server.__init__(self, binary, kind)

    def server_cores(self):
        return SERVER_CORE if self.helper_core is None else "%s,%s" % (SERVER_CORE, self.helper_core)

    def start_args(self):
        c = self.certs
        pin = ["--cpu", SERVER_CORE] if self.helper_core is not None else []
        return self.extra + pin + ["--bind", "127.0.0.1", "--tls-port", str(self.tls_port), "--tls-cert-file",
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


def client_context(certs):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(os.path.join(certs, "ca.crt"))
    ctx.load_cert_chain(os.path.join(certs, "client.crt"), os.path.join(certs, "client.key"))
    return ctx


def one_connection(ctx, port):
    """A new TLS connection: handshake, PING, close."""
    try:
        with ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="127.0.0.1") as s:
            s.sendall(b"PING\r\n")
            s.recv(16)
    except OSError:
        pass


def storm(port, certs, rate, stop, made):
    """Opens rate TLS connections a second until stop is set; appends how
    many it made a second to made."""
    ctx = client_context(certs)
    n, t0 = 0, time.time()
    while not stop.is_set():
        wait = t0 + n / rate - time.time()
        if wait > 0:
            time.sleep(wait)
        one_connection(ctx, port)
        n += 1
    made.append(n / (time.time() - t0))


def thread_cpu(pid):
    """CPU seconds so far by thread name."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
            name = f.read().strip()
        with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        out[name] = out.get(name, 0) + (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return out


def measure_handshake_cpu(a, certs):
    ctx = client_context(certs)
    variants = [("redis-server", a.redis, "redis", []),
                ("goblin-core, tls-handshake-thread yes", a.goblin, "goblin", ["--tls-handshake-thread", "yes"]),
                ("goblin-core, tls-handshake-thread no", a.goblin, "goblin", ["--tls-handshake-thread", "no"])]
    print("Machine: %d CPUs, %s, kernel %s; servers on CPU %s; %d connections (handshake with a client "
          "certificate, PING, close) one after another\n" % (os.cpu_count(), cpu_model(), os.uname().release,
                                                              SERVER_CORE, a.handshake_cpu))
    print("| server | engine (main) thread CPU us per connection | other threads |")
    print("|---|---|---|")
    for label, binary, kind, extra in variants:
        srv = TlsServer(binary, kind, certs, extra=extra)
        try:
            main = os.path.basename(binary)[:15]
            before = thread_cpu(srv.proc.pid)
            for _ in range(a.handshake_cpu):
                one_connection(ctx, srv.tls_port)
            after = thread_cpu(srv.proc.pid)
        finally:
            srv.stop()
        per = {k: (after[k] - before.get(k, 0)) * 1e6 / a.handshake_cpu for k in after}
        others = ", ".join("%s %.0f" % (k, v) for k, v in sorted(per.items()) if k != main and v > 0) or "-"
        print("| %s | %.0f | %s |" % (label, per.get(main, 0), others))


def measure_storm(a, certs):
    binaries = {"goblin": a.goblin, "redis": a.redis}
    results = {}
    for trial in range(a.trials):
        for name in SERVERS if trial % 2 == 0 else reversed(SERVERS):
            srv = TlsServer(binaries[name], name, certs, helper_core=STORM_HELPER_CORE)
            try:
                r = results.setdefault(name, {"alone": [], "storm": [], "rate": []})
                r["alone"].append(run_benchmark(srv.tls_port, certs, "GET", 16, a.requests, a.clients))
                stop, made = threading.Event(), []
                t = threading.Thread(target=storm, args=(srv.tls_port, certs, a.storm, stop, made))
                t.start()
                try:
                    r["storm"].append(run_benchmark(srv.tls_port, certs, "GET", 16, a.requests, a.clients))
                finally:
                    stop.set()
                    t.join()
                r["rate"].append(made[0])
            finally:
                srv.stop()
            print("trial %d %s done" % (trial + 1, name), file=sys.stderr)
    print("Machine: %d CPUs, %s, kernel %s; redis-server on CPU %s; goblin-core's engine thread on CPU %s, its "
          "helpers on CPU %s; clients on CPU %s; GET pipeline 16, %d clients, %d requests; median of %d trials\n"
          % (os.cpu_count(), cpu_model(), os.uname().release, SERVER_CORE, SERVER_CORE, STORM_HELPER_CORE,
             CLIENT_CORE, a.clients, a.requests, a.trials))
    print("| server | steady req/s alone | with %d new TLS connections/s | loss | connections/s made |" % a.storm)
    print("|---|---|---|---|---|")
    for name in SERVERS:
        med = {k: statistics.median(v) for k, v in results[name].items()}
        print("| %s | %.0f | %.0f | %.1f%% | %.0f |"
              % (name, med["alone"], med["storm"], 100 * (1 - med["storm"] / med["alone"]), med["rate"]))


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
    ap.add_argument("--storm", type=int, help="new TLS connections a second beside a steady load (see above)")
    ap.add_argument("--handshake-cpu", type=int, help="connections whose CPU per thread is measured (see above)")
    a = ap.parse_args()
    certs = tempfile.mkdtemp(prefix="gbbench-tls-")
    try:
        make_certs(certs)
        if a.handshake_cpu:
            measure_handshake_cpu(a, certs)
        elif a.storm:
            measure_storm(a, certs)
        else:
            print_table(a, measure(a, certs))
    finally:
        shutil.rmtree(certs, ignore_errors=True)


if __name__ == "__main__":
    main()
