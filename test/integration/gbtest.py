"""Shared helpers for the goblin-core integration tests.

* Server: starts goblin-core or redis-server on a free TCP port and a Unix
  socket inside a fresh temp dir, waits until PING answers, stops it (SIGTERM,
  then SIGKILL to its process group) and keeps its log. Every server started
  is also killed at interpreter exit and, through PR_SET_PDEATHSIG, when the
  test process itself dies (ctest timeout), so none outlives a test.
* Raw: a RESP2 client over a plain socket that returns both the exact reply
  bytes and the parsed reply, for byte-exact comparison and protocol abuse.
* memory and CPU figures: INFO memory used_memory, a process's RSS and CPU
  time (/proc where there is one, `ps` elsewhere).

Environment (set by test/integration/CMakeLists.txt): GOBLIN_IO_ENGINE (optional), GOBLIN_SERVER,
REDIS_SERVER, REDIS_CLI, REDIS_BENCHMARK, GOBLIN_BUILD_DIR. When run by hand
the binaries are looked up in build*/ and on PATH.
"""

import atexit
import ctypes
import glob
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def _find_goblin():
    p = os.environ.get("GOBLIN_SERVER")
    if p:
        return p
    cands = sorted(glob.glob(os.path.join(ROOT, "build*", "goblin-core")), key=os.path.getmtime, reverse=True)
    if cands:
        return cands[0]
    raise RuntimeError("goblin-core not found: set GOBLIN_SERVER")


def _tool(env, name):
    return os.environ.get(env) or shutil.which(name) or ""


def _redis_version(exe):
    """"7.0.15" from `redis-server --version` ("Redis server v=7.0.15 ..."), or ""."""
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    for word in out.split():
        if word.startswith("v="):
            return word[2:]
    return ""


GOBLIN = _find_goblin()
REDIS_SERVER = _tool("REDIS_SERVER", "redis-server")
REDIS_CLI = _tool("REDIS_CLI", "redis-cli")
REDIS_BENCHMARK = _tool("REDIS_BENCHMARK", "redis-benchmark")

# The comparisons with redis-server (the differential suites, and the checks
# that ask both servers) are against Redis 7.0, the behaviour goblin-core
# follows: Debian 12's and Ubuntu 24.04's 7.0.15. Another version (Homebrew's
# 7.2 or 8.x) answers differently where goblin-core is not wrong, so it is
# not compared against: those comparisons skip and say why, and the rest of
# each test runs. REDIS_SERVER=/path/to/a/7.0/redis-server picks one (the
# GitHub workflow builds 7.0.15 on macOS; docs/macos.md).
REDIS_COMPARED = "7.0"
REDIS_VERSION = _redis_version(REDIS_SERVER) if REDIS_SERVER else ""
REDIS_SKIP_REASON = ""
if not REDIS_SERVER:
    REDIS_SKIP_REASON = "redis-server not installed"
elif REDIS_VERSION.split(".")[:2] != REDIS_COMPARED.split("."):
    REDIS_SKIP_REASON = ("%s is Redis %s; the comparisons are with Redis %s (set REDIS_SERVER to a %s build)"
                         % (REDIS_SERVER, REDIS_VERSION or "of unknown version", REDIS_COMPARED, REDIS_COMPARED))
    sys.stderr.write("gbtest: comparisons with redis-server skipped: %s\n" % REDIS_SKIP_REASON)
    REDIS_SERVER = ""

# Multiplier for timeouts and waits: >1 under sanitizers, detected from the
# binary (ASan: 3; ThreadSanitizer, several times slower still: 6);
# GOBLIN_TEST_SLOW overrides.
SLOW = float(os.environ.get("GOBLIN_TEST_SLOW", "0") or 0)
if not SLOW:
    try:
        with open(GOBLIN, "rb") as _f:
            _bin = _f.read()
        SLOW = 6.0 if b"__tsan_init" in _bin else 3.0 if b"__asan_init" in _bin else 1.0
    except OSError:
        SLOW = 1.0

# LeakSanitizer exists on Linux only: Apple's AddressSanitizer refuses to
# start with detect_leaks=1.
LEAK_CHECKS = sys.platform.startswith("linux")

_LIVE = set()
_PR_SET_PDEATHSIG = 1


def _child_setup():
    # Own process group (so a stop can kill it all) and death with the parent.
    os.setsid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except Exception:
        pass


def _kill_all():
    for s in list(_LIVE):
        try:
            s.kill()
        except Exception:
            pass


atexit.register(_kill_all)


def _on_term(signum, frame):
    _kill_all()
    os._exit(128 + signum)


signal.signal(signal.SIGTERM, _on_term)


# Listening ports come from below the kernel's ephemeral range (Linux
# 32768-60999, macOS 49152-65535): a port bound to 0 and released is an
# ephemeral one, which any client connection of a parallel test may take as
# its local port before the server binds it (CI saw exactly that). A
# cluster node also listens on its port + 10000 (the bus): cluster nodes
# take their ports from 20000-21999 (test_cluster.free_cluster_port,
# test_cluster_launch), so their bus ports, 30000-31999, stay below the
# ephemeral range, and neither range meets the one every other server's
# port comes from (CI saw a port taken by another test's cluster bus).
_PORT_LOW, _PORT_HIGH = 22000, 29999
CLUSTER_PORT_LOW, CLUSTER_PORT_HIGH = 20000, 21999
BUS_PORT_OFFSET = 10000  # a cluster node's bus: its port + this


def start_on_one_cpu(start, cpu):
    """Calls start(extra_args) with this process allowed only `cpu` (the
    server inherits it) and --cpu pinning the engine thread there: the
    server then has no CPU for helper threads (a one-CPU deployment). This
    process's own CPUs are restored afterwards. Linux (sched_setaffinity)."""
    mine = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})
    try:
        return start(["--cpu", str(cpu)])
    finally:
        os.sched_setaffinity(0, mine)


def port_is_free(port):
    """Whether nothing holds TCP port on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def free_port(low=_PORT_LOW, high=_PORT_HIGH, also=0):
    """A TCP port in low-high that nothing holds right now, outside the
    ephemeral range; with also=N, port + N must be free too (a cluster
    node's bus). Parallel tests can still race for it: Server retries
    start-up on a new port when the bind fails."""
    import random
    for _ in range(200):
        port = random.randint(low, high)
        if port_is_free(port) and (not also or port_is_free(port + also)):
            return port
    raise ServerError("no free TCP port in %d-%d" % (low, high))


class ServerError(Exception):
    pass


class Server:
    """One server process. kind: 'goblin' or 'redis'.

    Server(kind, args=[...]) starts it on a free port and <tmp>/x.sock;
    port=0 disables TCP, unix=False disables the socket. config=text writes a
    config file passed as the first argument (goblin-core and redis-server
    both take one). pick_port: the function that picks a free port when
    port is None (free_port by default; a cluster node's picker also wants
    its bus port free), called again for each retry after a lost race.
    protected=True (the default) starts both kinds with
    enable-debug-command and enable-protected-configs yes, as Redis's own
    test suite does (its default.conf), since the tests use DEBUG (RELOAD,
    SLEEP, OBJECT) and CONFIG SET dir / dbfilename; protected=False keeps
    Redis 7.0's defaults, which refuse both. quick_sync=True (the default)
    sets repl-diskless-sync-delay 0 on both kinds: a full sync starts at
    once rather than after Redis's 5 s wait for more replicas; False
    keeps the default (a test of the defaults)."""

    def __init__(self, kind="goblin", args=(), port=None, unix=True, config=None, wait=True, timeout=None,
                 env=None, unixsocket=None, dir=None, protected=True, quick_sync=True, pick_port=free_port):
        self.kind = kind
        # dir: run in an existing directory (its files survive the server:
        # restarts over the same snapshot or log); the caller removes it.
        self.own_dir = dir is None
        self.dir = dir or tempfile.mkdtemp(prefix="gbit-%s-" % kind)
        self.sock = (unixsocket or os.path.join(self.dir, "x.sock")) if unix else None
        self.port_chosen_here = port is None
        self._pick_port = pick_port
        self.port = pick_port() if port is None else port
        self.logpath = os.path.join(self.dir, "server.log")
        self.proc = None
        exe = GOBLIN if kind == "goblin" else REDIS_SERVER
        if kind == "redis":
            require_redis()
        cmd = [exe]
        if config is not None:
            cpath = os.path.join(self.dir, "server.conf")
            with open(cpath, "w") as f:
                f.write(config)
            cmd.append(cpath)
        self._port_arg = len(cmd) + 1  # where the port sits, for a retry on another one
        cmd += ["--port", str(self.port)]
        if kind == "goblin":
            cmd += ["--unixsocket", self.sock or ""]
        else:
            if self.sock:
                cmd += ["--unixsocket", self.sock]
            cmd += ["--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", self.dir,
                    "--daemonize", "no", "--protected-mode", "no"]
        if protected:
            cmd += ["--enable-debug-command", "yes", "--enable-protected-configs", "yes"]
        if quick_sync:  # a test of the delay passes its own, which comes later and wins
            cmd += ["--repl-diskless-sync-delay", "0"]
        # GOBLIN_IO_ENGINE=io_uring|libuv|auto runs every goblin-core on that
        # socket I/O path (docs/io_uring.md); a test's own --io-engine wins.
        if kind == "goblin" and os.environ.get("GOBLIN_IO_ENGINE"):
            cmd += ["--io-engine", os.environ["GOBLIN_IO_ENGINE"]]
        cmd += [str(a) for a in args]
        self.cmd = cmd
        self._env = _server_env(kind, env)
        self._spawn()
        _LIVE.add(self)
        if wait:
            for attempt in range(5):
                try:
                    self.wait_ready(timeout or 15 * SLOW)
                    break
                except ServerError:
                    if not (attempt < 4 and self._lost_port_race()):
                        raise
                    self.port = self._pick_port()
                    self.cmd[self._port_arg] = str(self.port)
                    self._spawn()

    def _spawn(self):
        self._log = open(self.logpath, "wb")
        self.proc = subprocess.Popen(self.cmd, stdin=subprocess.DEVNULL, stdout=self._log,
                                     stderr=subprocess.STDOUT, preexec_fn=_child_setup, cwd=self.dir,
                                     env=self._env)

    def _lost_port_race(self):
        """True when start-up failed only because another process took the
        port this Server picked, or its cluster bus port (port + 10000):
        worth a retry on a fresh port."""
        if not self.port_chosen_here or self.proc.poll() is None:
            return False
        self._log.close()
        log = self.log().lower()
        return "address already in use" in log and (str(self.port) in log or
                                                     str(self.port + BUS_PORT_OFFSET) in log)

    # -- life cycle ------------------------------------------------------------
    @property
    def pid(self):
        return self.proc.pid

    def addr(self):
        """Where clients connect: ('unix', path) or ('tcp', port)."""
        return ("unix", self.sock) if self.sock else ("tcp", self.port)

    def wait_ready(self, timeout):
        deadline = time.time() + timeout
        last = None
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise ServerError("%s exited with %s during start-up:\n%s" % (self.kind, self.proc.returncode,
                                                                              self.log()))
            try:
                with Raw(self) as r:
                    rep = r.call("PING")
                    if rep in (b"PONG",) or isinstance(rep, Err):
                        return
            except OSError as e:
                last = e
            time.sleep(0.02)
        self.kill()
        raise ServerError("%s did not answer PING within %.0fs (%s):\n%s" % (self.kind, timeout, last, self.log()))

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout=None):
        """SIGTERM, wait, then SIGKILL the process group. Returns the exit code."""
        timeout = timeout or 10 * SLOW
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                pass
        rc = self.proc.poll()
        self.kill()
        return rc

    def kill(self):
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                pass
        _LIVE.discard(self)
        try:
            self._log.close()
        except Exception:
            pass

    def cleanup(self):
        """Stops the server (SIGTERM first: a clean exit also lets a
        sanitizer build report leaks) and removes its directory. A sanitizer
        report in its log is printed at once and makes run_tests() exit 1;
        cleanup itself never raises, so a teardown stopping several servers
        stops them all."""
        if self.proc is not None and self.proc.poll() is None:
            self.stop(timeout=5 * SLOW)
        self.kill()
        report = sanitizer_report(self.log())
        if self.own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)
        if report:
            SANITIZER_REPORTS.append((self.kind, " ".join(self.cmd), report))
            sys.stderr.write("\n*** sanitizer report from %s (%s):\n%s\n" % (self.kind, " ".join(self.cmd),
                                                                            report))

    def log(self):
        try:
            with open(self.logpath, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.cleanup()

    # -- clients ---------------------------------------------------------------
    def raw(self, tcp=False, timeout=None):
        return Raw(self, tcp=tcp, timeout=timeout)

    def redis(self, tcp=False, **kw):
        import redis
        if self.kind == "redis":
            _note_comparison()
        if tcp or not self.sock:
            return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=30 * SLOW, **kw)
        return redis.Redis(unix_socket_path=self.sock, socket_timeout=30 * SLOW, **kw)

    def engine_pinned(self):
        """Whether --cpu pinned the engine thread (INFO rings): false on the
        generic POSIX platform layer, which has no affinity calls."""
        return self.info("rings").get("ring_engine_pinned") == "yes"

    def info(self, section=None):
        with Raw(self) as r:
            return parse_info(r.call("INFO", section) if section else r.call("INFO"))

    def used_memory(self):
        return int(self.info("memory")["used_memory"])

    def rss(self):
        return rss_of(self.pid)

    def ping_ok(self):
        """A fresh connection gets PONG."""
        with Raw(self) as r:
            return r.call("PING") == b"PONG"


SANITIZER_REPORTS = []
_SAN_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:", "WARNING: ThreadSanitizer",
                "SUMMARY: UndefinedBehaviorSanitizer")


def sanitizer_report(log):
    """The sanitizer findings in a server log (from the first marker on), or ''."""
    idx = [log.find(m) for m in _SAN_MARKERS if m in log]
    if not idx:
        return ""
    start = log.rfind("\n", 0, min(idx)) + 1
    return log[start:start + 20000]


def _server_env(kind, env):
    env = dict(os.environ if env is None else env)
    if kind == "goblin":
        # Sanitizer builds: report everything with stacks, free memory back to
        # the OS so RSS checks mean something, keep the quarantine small.
        env.setdefault("ASAN_OPTIONS", "detect_leaks=%d:abort_on_error=0:malloc_context_size=20" % LEAK_CHECKS)
        # Appended even to options the caller set (`make test-sanitize` sets
        # its own): later settings win, and without these ASan's quarantine
        # keeps freed memory resident and every RSS check fails.
        env["ASAN_OPTIONS"] += ":allocator_release_to_os_interval_ms=50:quarantine_size_mb=8"
        env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=0")
        env.setdefault("LSAN_OPTIONS", "report_objects=0")
        # ThreadSanitizer: keep running and write every race to the log,
        # where sanitizer_report finds it and fails the test.
        env.setdefault("TSAN_OPTIONS", "halt_on_error=0:second_deadlock_stack=1")
    return env


def _ps_field(pid, field):
    """One `ps -o <field>=` value of pid: the portable way to ask about
    another process where there is no /proc (macOS, the BSDs)."""
    out = subprocess.run(["ps", "-o", field + "=", "-p", str(pid)], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def rss_of(pid):
    """Resident set size of pid in bytes: /proc/<pid>/status where there is
    one, else ps (whose rss column is KiB on Linux, macOS and the BSDs)."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        return 0
    except FileNotFoundError:
        return int(_ps_field(pid, "rss") or 0) * 1024


def cpu_seconds_of(pid):
    """User + system CPU time of pid in seconds: /proc/<pid>/stat (clock
    ticks) where there is one, else ps's cputime ([[dd-]hh:]mm:ss.cc on
    macOS, which keeps hundredths)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except FileNotFoundError:
        text = _ps_field(pid, "time")
        days, _, text = text.rpartition("-")
        secs = 0.0
        for part in text.split(":"):
            secs = secs * 60 + float(part)
        return secs + int(days or 0) * 86400


def parse_info(text):
    if isinstance(text, bytes):
        text = text.decode()
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#") or ":" not in line:
            continue
        k, v = line.split(":", 1)
        out[k] = v
    return out


# ---- raw RESP2 --------------------------------------------------------------------

class Err(bytes):
    """An error reply (text without the leading '-')."""

    def __repr__(self):
        return "Err(%s)" % bytes.__repr__(self)


class Simple(bytes):
    """A +status reply. Compares equal to the bytes, so r.call('PING') == b'PONG'."""


class ProtocolViolation(Exception):
    pass


def resp_types(v):
    """The RESP types of a parsed reply, element by element ("Simple",
    "Err", "bytes", "int", "NoneType", lists of them): a parsed status, error
    and bulk string with the same text compare equal, so a comparison of
    parsed replies that a normaliser needs compares these too."""
    if isinstance(v, list):
        return [resp_types(x) for x in v]
    return type(v).__name__


def encode(*args):
    """RESP2 multibulk for args (str/bytes/int/float)."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, bytes):
            b = a
        elif isinstance(a, str):
            b = a.encode()
        else:
            b = str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(b), b))
    return b"".join(out)


class Raw:
    """A RESP2 connection over a socket that keeps the exact reply bytes.

    read() returns (parsed, raw_bytes); call(*args) returns parsed;
    call_raw(*args) returns the raw bytes."""

    def __init__(self, target, tcp=False, timeout=None):
        self.timeout = timeout or 30 * SLOW
        if isinstance(target, Server) and target.kind == "redis":
            _note_comparison()
        if isinstance(target, Server):
            if tcp or not target.sock:
                fam, addr = socket.AF_INET, ("127.0.0.1", target.port)
            else:
                fam, addr = socket.AF_UNIX, target.sock
        elif isinstance(target, str):
            fam, addr = socket.AF_UNIX, target
        else:
            fam, addr = socket.AF_INET, target
        self.s = socket.socket(fam, socket.SOCK_STREAM)
        self.s.settimeout(self.timeout)
        try:
            self.s.connect(addr)
        except BaseException:
            self.s.close()
            raise
        self.buf = bytearray()

    def close(self):
        try:
            self.s.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, data):
        self.s.sendall(data)

    def send_cmd(self, *args):
        self.s.sendall(encode(*args))

    def _fill(self):
        d = self.s.recv(65536)
        if not d:
            raise EOFError("connection closed by server")
        self.buf += d

    def _line(self, pos):
        while True:
            i = self.buf.find(b"\r\n", pos)
            if i >= 0:
                return i
            self._fill()

    def _parse(self, pos):
        """Parses one reply at buf[pos:]; returns (value, end)."""
        while len(self.buf) <= pos:
            self._fill()
        t = self.buf[pos:pos + 1]
        e = self._line(pos)
        body = bytes(self.buf[pos + 1:e])
        if t == b"+":
            return Simple(body), e + 2
        if t == b"-":
            return Err(body), e + 2
        if t == b":":
            return int(body), e + 2
        if t == b"$":
            n = int(body)
            if n < 0:
                return None, e + 2
            while len(self.buf) < e + 2 + n + 2:
                self._fill()
            if self.buf[e + 2 + n:e + 4 + n] != b"\r\n":
                raise ProtocolViolation("bulk not terminated by CRLF: %r" % bytes(self.buf[pos:e + 4 + n]))
            return bytes(self.buf[e + 2:e + 2 + n]), e + 4 + n
        if t in (b"*", b"~", b">", b"%"):
            # Arrays, and RESP3's sets, pushes and maps (a map as its flat
            # list of 2n elements: the comparisons here are of raw bytes).
            n = int(body)
            if n < 0:
                return None, e + 2
            items = []
            p = e + 2
            for _ in range(2 * n if t == b"%" else n):
                v, p = self._parse(p)
                items.append(v)
            return items, p
        if t == b"_":
            return None, e + 2
        if t == b"#":
            return body == b"t", e + 2
        if t == b",":
            return float(body), e + 2
        if t == b"(":
            return body, e + 2  # digits as sent (a script can send any text)
        if t == b"=":
            n = int(body)
            while len(self.buf) < e + 2 + n + 2:
                self._fill()
            return bytes(self.buf[e + 6:e + 2 + n]), e + 4 + n
        raise ProtocolViolation("unexpected reply type byte %r in %r" % (t, bytes(self.buf[pos:pos + 80])))

    def read(self):
        v, end = self._parse(0)
        raw = bytes(self.buf[:end])
        del self.buf[:end]
        return v, raw

    def call(self, *args):
        self.send_cmd(*args)
        return self.read()[0]

    def call_raw(self, *args):
        self.send_cmd(*args)
        return self.read()[1]

    def read_raw_available(self, timeout=1.0):
        """Everything that arrives until `timeout` of silence or EOF."""
        out = bytearray(self.buf)
        self.buf.clear()
        self.s.settimeout(timeout)
        try:
            while True:
                d = self.s.recv(1 << 20)
                if not d:
                    break
                out += d
        except (socket.timeout, ConnectionResetError):
            pass
        finally:
            self.s.settimeout(self.timeout)
        return bytes(out)

    def _receive_until(self, done, timeout):
        """Receives after what is buffered until done(bytes so far); returns
        (bytes, b'') then, or (bytes, b'<EOF>') on EOF or reset, or
        (bytes, b'<TIMEOUT>') after `timeout` (5 s x SLOW if None)."""
        deadline = time.time() + (timeout or 5 * SLOW)
        out = bytearray(self.buf)
        self.buf.clear()
        try:
            while not done(out):
                left = deadline - time.time()
                if left <= 0:
                    return out, b"<TIMEOUT>"
                self.s.settimeout(left)
                d = self.s.recv(1 << 20)
                if not d:
                    return out, b"<EOF>"
                out += d
        except (ConnectionResetError, BrokenPipeError):
            return out, b"<EOF>"
        except socket.timeout:
            return out, b"<TIMEOUT>"
        finally:
            self.s.settimeout(self.timeout)
        return out, b""

    def read_until(self, suffix, timeout=None):
        """Raw bytes up to and including `suffix`, or up to EOF/reset (then
        b'<EOF>' is appended), or up to `timeout` (b'<TIMEOUT>' appended)."""
        out, ended = self._receive_until(lambda b: b.endswith(suffix), timeout)
        return bytes(out) + ended

    def read_through(self, marker, timeout=None):
        """Raw bytes up to and including the first `marker`; what arrived
        after it stays buffered for the next read. On EOF or reset, what
        arrived plus b'<EOF>'; after `timeout`, plus b'<TIMEOUT>'."""
        out, ended = self._receive_until(lambda b: marker in b, timeout)
        if ended:
            return bytes(out) + ended
        end = out.index(marker) + len(marker)
        self.buf[:0] = out[end:]
        return bytes(out[:end])

    def expect_eof(self, timeout=None):
        """True if the server closes the connection (EOF or reset) within
        `timeout` seconds, after whatever replies are still pending."""
        timeout = timeout or 10 * SLOW
        deadline = time.time() + timeout
        if self.buf:
            return False
        try:
            while time.time() < deadline:
                self.s.settimeout(max(0.01, deadline - time.time()))
                d = self.s.recv(65536)
                if not d:
                    return True
                self.buf += d
                return False
        except (ConnectionResetError, BrokenPipeError):
            return True
        except socket.timeout:
            return False
        finally:
            self.s.settimeout(self.timeout)
        return False


class GoblinAndRedisCase(unittest.TestCase):
    """A test case with one goblin-core (cls.goblin) and one redis-server
    (cls.redis) on their defaults, for the differential suites. Without
    redis-server 7.0 every test of the class is a missing reference
    (require_redis: a failure under CI, a loud skip elsewhere)."""

    @classmethod
    def setUpClass(cls):
        require_redis()
        cls.goblin = Server("goblin")
        try:
            cls.redis = Server("redis")
        except BaseException:
            cls.goblin.cleanup()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.goblin.cleanup()
        cls.redis.cleanup()


# A keyspace channel that the differential tests' subscription pattern
# "__key*@*__:*" matches and that names no key of theirs.
EVENTS_MARKER_CHANNEL = b"__keyspace@0__:gbtest-events-marker"
EVENTS_MARKER = b"gbtest-events-marker"


def events_so_far(data, sub, timeout=None):
    """The raw bytes `sub` (subscribed to a pattern matching
    EVENTS_MARKER_CHANNEL) has been sent since the last call, the marker's
    own message last. `data` PUBLISHes the marker after its commands; a
    server delivers a subscriber's messages in the order they were
    published, so every event its commands caused comes before the marker,
    and the read needs no wait for a silence. The marker's message is the
    same bytes on every server, so two servers' results compare as they are."""
    data.call("PUBLISH", EVENTS_MARKER_CHANNEL, EVENTS_MARKER)
    return sub.read_through(b"\r\n" + EVENTS_MARKER + b"\r\n", timeout)


def wait_until(pred, timeout, interval=0.05):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(interval)
    return pred()


def wait_blocked_or_answered(pairs, timeout=None):
    """A blocking command was just sent on the connection of each (admin,
    conn) pair: waits until, on each server, it is parked (INFO clients
    blocked_clients > 0, asked on admin) or already answered (a reply is
    readable on conn), so that what the test sends next cannot overtake it.
    True once every pair is, False after timeout (default 10 s x SLOW)."""
    def settled(admin, conn):
        if conn.buf or select.select([conn.s], [], [], 0)[0]:
            return True
        return int(parse_info(admin.call("INFO", "clients"))["blocked_clients"]) > 0
    return wait_until(lambda: all([settled(a, c) for a, c in pairs]), timeout or 10 * SLOW, 0.002)


# ---- references: what the tests compare with ---------------------------------------
#
# A reference is what a test compares goblin-core with or drives it through:
# redis-server 7.0 above all, and the Node (node, npm and its packages),
# Celery and rq clients of the framework tests. `make test` installs them
# all. A missing one never counts as a pass: under CI (CI=true) or with
# GOBLIN_REQUIRE_REFERENCE=1 it fails the test; elsewhere the test is
# reported skipped with "REFERENCE MISSING" and its reason, also when its
# goblin-only half ran and passed. Every test that talked to redis-server is
# counted as a comparison run, every test that lacked a reference as one
# skipped; run_tests writes the counts of its file to
# <GOBLIN_BUILD_DIR>/reference-counts/<file>.json, and
# test/integration/reference_summary.py (which `make test` runs after ctest)
# prints the totals and fails under CI when any comparison was skipped.

REQUIRE_REFERENCES = (os.environ.get("CI", "").lower() in ("true", "1")
                      or os.environ.get("GOBLIN_REQUIRE_REFERENCE", "") == "1")
_MISSING_MARK = "REFERENCE MISSING"


class ReferenceMissing(AssertionError):
    """A reference the test needs is not here, under CI: a failure."""


_current_test = [None]   # id of the test running now (None in setUpClass)
_COMPARED = set()        # test ids that talked to redis-server
_MISSING = {}            # test id -> reason its reference was missing
_SKIPS = {}              # test id -> reason, every other skip (for the summary)


def _tests_of_caller_class():
    """The test ids of the TestCase class whose setUpClass is on the stack
    (a reference missing there stands for every test of the class)."""
    f = sys._getframe(1)
    while f is not None:
        cls = f.f_locals.get("cls")
        if isinstance(cls, type) and issubclass(cls, unittest.TestCase):
            names = unittest.TestLoader().getTestCaseNames(cls)
            return ["%s.%s.%s" % (cls.__module__, cls.__qualname__, n) for n in names]
        f = f.f_back
    return ["%s (set-up)" % os.path.basename(sys.argv[0])]


def _note_comparison():
    if _current_test[0] is not None:
        _COMPARED.add(_current_test[0])


def reference_missing(reason, partial=False):
    """Reports that a reference (redis-server 7.0, node, npm, an npm package,
    Celery, rq) is missing. Under CI or GOBLIN_REQUIRE_REFERENCE=1: raises
    ReferenceMissing (the test fails). Elsewhere: records it, says so on
    stderr, and raises unittest.SkipTest, or, with partial=True, returns so
    that the test's own half goes on (run_tests then reports the test as
    skipped, not passed)."""
    ids = [_current_test[0]] if _current_test[0] is not None else _tests_of_caller_class()
    for tid in ids:
        _MISSING.setdefault(tid, reason)
    if REQUIRE_REFERENCES:
        raise ReferenceMissing("%s (CI requires every reference; `make test` installs them): %s"
                               % (_MISSING_MARK, reason))
    sys.stderr.write("\n*** %s, comparison skipped: %s\n" % (_MISSING_MARK, reason))
    if not partial:
        raise unittest.SkipTest("%s: %s" % (_MISSING_MARK, reason))


def require_redis():
    """The test compares with redis-server 7.0: counts it, or reports the
    reference missing (see reference_missing)."""
    if not REDIS_SERVER:
        reference_missing(REDIS_SKIP_REASON)
    _note_comparison()


def compare_with_redis():
    """For a test whose goblin-core half stands alone: True (and counted)
    when redis-server 7.0 is here; else the reference is missing: a failure
    under CI, elsewhere False, and the test ends reported as skipped."""
    if not REDIS_SERVER:
        reference_missing(REDIS_SKIP_REASON, partial=True)
        return False
    _note_comparison()
    return True


def goblin_and_redis():
    """["goblin", "redis"] for a test that runs the same on both servers
    (["goblin"] when the reference is missing outside CI; see compare_with_redis)."""
    return ["goblin", "redis"] if compare_with_redis() else ["goblin"]


# Seconds each test of this file took; the slowest are printed after the run,
# for whoever keeps `make test` inside CI's time (docs/testing.md).
_DURATIONS = {}


class _CountingResult(unittest.TextTestResult):
    """Tracks the running test (for the counts above) and reports a test
    whose reference was missing as skipped even when its own half passed."""

    def startTest(self, test):
        _current_test[0] = test.id()
        self._started = time.monotonic()
        if isinstance(test, GoblinAndRedisCase):
            _note_comparison()  # some talk to cls.redis by port (Node, redis-cli)
        super().startTest(test)

    def stopTest(self, test):
        super().stopTest(test)
        _current_test[0] = None
        _DURATIONS[test.id()] = time.monotonic() - self._started

    def addSuccess(self, test):
        if test.id() in _MISSING:
            self.addSkip(test, "%s: %s" % (_MISSING_MARK, _MISSING[test.id()]))
        else:
            super().addSuccess(test)

    def addSkip(self, test, reason):
        if _MISSING_MARK not in reason:
            _SKIPS[test.id()] = reason
        super().addSkip(test, reason)


def _write_reference_counts(result):
    name = os.path.splitext(os.path.basename(sys.argv[0]))[0]
    compared = sorted(_COMPARED - set(_MISSING))
    counts = {"file": name, "tests_run": result.testsRun, "ok": result.wasSuccessful(),
              "comparisons_run": len(compared), "comparisons_skipped": len(_MISSING),
              "missing": _MISSING, "other_skips": _SKIPS}
    sys.stderr.write("\ngbtest: %s: redis comparisons run %d, skipped %d (reference missing)%s\n"
                     % (name, counts["comparisons_run"], counts["comparisons_skipped"],
                        "; other skips %d" % len(_SKIPS) if _SKIPS else ""))
    build = os.environ.get("GOBLIN_BUILD_DIR")
    if build:
        out = os.path.join(build, "reference-counts")
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(counts, f, indent=1, sort_keys=True)


def run_tests():
    """The runner of every integration file (never bare unittest.main):
    exits 1 on any failure or error, on no test run, and on a sanitizer
    report in any server's log; writes the file's reference counts."""
    runner = unittest.TextTestRunner(resultclass=_CountingResult, verbosity=2)
    prog = unittest.main(exit=False, testRunner=runner)
    r = prog.result
    ok = r.wasSuccessful() and r.testsRun > 0
    _kill_all()
    if SANITIZER_REPORTS:
        sys.stderr.write("\nFAILED: %d server(s) reported sanitizer findings:\n" % len(SANITIZER_REPORTS))
        for kind, cmd, report in SANITIZER_REPORTS:
            sys.stderr.write("--- %s: %s\n%s\n" % (kind, cmd, report))
        ok = False
    _write_reference_counts(r)
    slowest = sorted(_DURATIONS.items(), key=lambda kv: -kv[1])[:3]
    sys.stderr.write("gbtest: slowest: %s\n" % ", ".join("%s %.1f s" % (t.split(".")[-1], d) for t, d in slowest))
    sys.exit(0 if ok else 1)
