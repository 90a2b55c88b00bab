"""Server set-up: --help/--version, config file and flags, start-up failures
(bad options, taken port or socket path), Unix socket handling and
permissions, --port 0, CONFIG GET/SET at run time, maxmemory with
noeviction, --logfile, signals, --databases, --timeout.
"""

import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
import unittest

import gbtest
from gbtest import GOBLIN, Raw, Server, SLOW, wait_until

import redis


def run_goblin(args, timeout=20):
    env = dict(os.environ)
    p = subprocess.run([GOBLIN] + [str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       stdin=subprocess.DEVNULL, timeout=timeout * SLOW, env=env)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def start_expect_failure(args, timeout=20):
    """Runs goblin-core with args that must make it exit non-zero at start-up
    (it must not start serving); returns (rc, stdout+stderr)."""
    rc, out, err = run_goblin(args, timeout)
    report = gbtest.sanitizer_report(out + err)
    if report:
        raise AssertionError("sanitizer report:\n" + report)
    return rc, out + err


def _proc_tcp_listeners(pid):
    """Linux: the socket inodes among pid's descriptors that /proc/net/tcp*
    lists as LISTEN."""
    listening = set()
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(path) as f:
                next(f)
                for line in f:
                    parts = line.split()
                    if parts[3] == "0A":  # LISTEN
                        listening.add(parts[9])
        except OSError:
            pass
    mine = set()
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        m = re.match(r"socket:\[(\d+)\]", target)
        if m:
            mine.add(m.group(1))
    return mine & listening


def tcp_listeners_of(pid):
    """What pid listens on over TCP: /proc on Linux, lsof elsewhere (macOS
    ships it); None when this system has neither."""
    if os.path.isdir("/proc/%d/fd" % pid):
        return _proc_tcp_listeners(pid)
    lsof = shutil.which("lsof")
    if not lsof:
        return None
    out = subprocess.run([lsof, "-a", "-n", "-P", "-p", str(pid), "-iTCP", "-sTCP:LISTEN", "-Fn"],
                         capture_output=True, text=True)
    # rc 1 with no output: nothing matched
    return {line[1:] for line in out.stdout.splitlines() if line.startswith("n")}


class CommandLine(unittest.TestCase):
    def test_version(self):
        rc, out, err = run_goblin(["--version"])
        self.assertEqual(rc, 0)
        self.assertRegex(out.strip(), r"^goblin-core \d+\.\d+\.\d+")

    def test_help_documents_every_config_option(self):
        rc, out, err = run_goblin(["--help"])
        self.assertEqual(rc, 0)
        with Server("goblin") as srv, Raw(srv) as c:
            pairs = c.call("CONFIG", "GET", "*")
        names = [n.decode() for n in pairs[::2]]
        self.assertGreater(len(names), 10)
        for name in names:
            with self.subTest(option=name):
                if re.search(r"^      also accepted as: %s$" % re.escape(name), out, re.M):
                    continue  # Redis's older name, listed by CONFIG GET * as Redis does
                m = re.search(r"^  --%s (\S+).*\n(?:      .*\n)*?      default: " % re.escape(name), out, re.M)
                self.assertIsNotNone(m, "--help does not document --%s with its default" % name)
        for must in ("port", "bind", "unixsocket", "unixsocketperm", "maxclients", "requirepass", "databases",
                     "maxmemory", "loglevel", "logfile", "timeout", "hz", "client-output-buffer-limit"):
            self.assertIn(must, names)

    def test_bad_flags(self):
        for args, needle in ((["--maxclients", "abc"], "'--maxclients'"),
                             (["--port", "70000"], "'--port'"),
                             (["--unixsocketperm", "999"], "'--unixsocketperm'"),
                             (["--loglevel", "loud"], "'--loglevel'"),
                             (["--maxmemory", "lots"], "'--maxmemory'"),
                             (["--nosuchoption", "1"], "--nosuchoption"),
                             (["--port"], "--port"),
                             (["/nonexistent/goblin.conf"], "/nonexistent/goblin.conf")):
            with self.subTest(args=args):
                safe = ["--port", gbtest.free_port(), "--unixsocket", os.path.join(tempfile.gettempdir(),
                                                                                   "gbit-never-%d.sock" % os.getpid())]
                full = args + safe[:2] if args[0].startswith("/") else safe + args
                if args[0].startswith("/"):
                    full = args + safe
                rc, out = start_expect_failure(full)
                self.assertNotEqual(rc, 0)
                self.assertIn(needle, out)
                self.assertLessEqual(len(out.strip().splitlines()), 2, out)

    def test_config_file_and_flags(self):
        d = tempfile.mkdtemp(prefix="gbit-conf-")
        try:
            conf_text = ("# a comment line\n"
                         "\n"
                         "   # an indented comment\n"
                         "port 1\n"                      # overridden by the flag the harness adds
                         "maxclients 123\n"
                         "requirepass \"pa ss\\\"word\"\n"
                         "loglevel 'verbose'\n"
                         "hz 20\n"
                         "client-output-buffer-limit normal 64mb 16mb 60\n"
                         "maxmemory 100mb\n")
            with Server("goblin", config=conf_text, args=["--hz", "30"]) as srv:
                r = redis.Redis(unix_socket_path=srv.sock, password='pa ss"word', decode_responses=True)
                cfg = r.config_get("*")
                self.assertEqual(cfg["maxclients"], "123")
                self.assertEqual(cfg["requirepass"], 'pa ss"word')
                self.assertEqual(cfg["loglevel"], "verbose")
                self.assertEqual(cfg["hz"], "30")
                self.assertEqual(cfg["port"], str(srv.port))
                self.assertEqual(cfg["maxmemory"], str(100 * 1024 * 1024))
                # Every class is shown, as Redis 7.0 does; only `normal` was set.
                self.assertEqual(cfg["client-output-buffer-limit"],
                                 "normal %d %d 60 slave %d %d 60 pubsub %d %d 60" %
                                 (64 << 20, 16 << 20, 256 << 20, 64 << 20, 32 << 20, 8 << 20))
                r.close()
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def test_option_values_in_several_arguments(self):
        """`--save 900 1 --client-output-buffer-limit normal 1mb 512kb 30`:
        the arguments up to the next option are one value, as redis-server
        reads its command line; both servers show the same."""
        args = ["--save", "900", "1", "300", "10", "--client-output-buffer-limit", "normal", "1mb", "512kb", "30",
                "--maxmemory-policy", "allkeys-lru"]
        got = {}
        for kind in ("goblin", "redis"):
            if kind == "redis":
                gbtest.require_redis()
            with Server(kind, args=args) as srv, Raw(srv) as r:
                got[kind] = [r.call("CONFIG", "GET", name) for name in
                             ("save", "client-output-buffer-limit", "maxmemory-policy")]
        self.assertEqual(got["goblin"], got["redis"])
        self.assertEqual(got["goblin"][0], [b"save", b"900 1 300 10"])

    def test_config_file_errors_name_line_and_option(self):
        d = tempfile.mkdtemp(prefix="gbit-conf-")
        try:
            conf = os.path.join(d, "bad.conf")
            cases = [("# ok\nport 7\nnosuchoption yes\n", [":3", "nosuchoption"]),
                     ("maxclients many\n", [":1", "maxclients", "many"]),
                     ("requirepass \"unbalanced\n", [":1"]),
                     ("hz\n", [":1", "hz"])]
            for text, needles in cases:
                with self.subTest(conf=text):
                    with open(conf, "w") as f:
                        f.write(text)
                    rc, out = start_expect_failure([conf, "--port", gbtest.free_port(), "--unixsocket", ""])
                    self.assertNotEqual(rc, 0)
                    self.assertIn("bad.conf", out)
                    for n in needles:
                        self.assertIn(n, out)
        finally:
            shutil.rmtree(d, ignore_errors=True)


class Listeners(unittest.TestCase):
    def test_port_already_taken(self):
        holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        try:
            d = tempfile.mkdtemp(prefix="gbit-")
            self.addCleanup(shutil.rmtree, d, True)
            rc, out = start_expect_failure(["--port", port, "--unixsocket", os.path.join(d, "x.sock")])
            self.assertNotEqual(rc, 0)
            lines = [l for l in out.splitlines() if str(port) in l]
            self.assertTrue(lines, out)
            self.assertTrue(all("already in use" in l for l in lines), out)
            self.assertFalse(os.path.exists(os.path.join(d, "x.sock")), "socket file left behind")
        finally:
            holder.close()

    def test_unix_socket_held_by_live_server(self):
        with Server("goblin") as a:
            rc, out = start_expect_failure(["--port", "0", "--unixsocket", a.sock])
            self.assertNotEqual(rc, 0)
            self.assertIn(a.sock, out)
            self.assertIn("another server", out)
            self.assertTrue(a.ping_ok(), "the running server lost its socket")
            self.assertTrue(os.path.exists(a.sock))

    def test_stale_socket_file_is_replaced(self):
        d = tempfile.mkdtemp(prefix="gbit-")
        self.addCleanup(shutil.rmtree, d, True)
        path = os.path.join(d, "stale.sock")
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(path)
        s.close()  # the file stays, nobody listens
        self.assertTrue(stat.S_ISSOCK(os.stat(path).st_mode))
        with Server("goblin", port=0, unixsocket=path) as srv:
            self.assertTrue(srv.ping_ok())
            self.assertIn("Ready to accept", srv.log())
        self.assertFalse(os.path.exists(path))

    def test_regular_file_at_socket_path_is_refused(self):
        d = tempfile.mkdtemp(prefix="gbit-")
        self.addCleanup(shutil.rmtree, d, True)
        path = os.path.join(d, "file.sock")
        with open(path, "w") as f:
            f.write("precious")
        rc, out = start_expect_failure(["--port", "0", "--unixsocket", path])
        self.assertNotEqual(rc, 0)
        self.assertIn("not a socket", out)
        with open(path) as f:
            self.assertEqual(f.read(), "precious")

    def test_unixsocketperm(self):
        for perm, mode in (("700", 0o700), ("755", 0o755), ("770", 0o770)):
            with self.subTest(perm=perm):
                with Server("goblin", args=["--unixsocketperm", perm]) as srv:
                    self.assertEqual(stat.S_IMODE(os.stat(srv.sock).st_mode), mode)
        with Server("goblin") as srv:
            self.assertEqual(stat.S_IMODE(os.stat(srv.sock).st_mode), 0o700, "default must be 700")
        # 0: no chmod, the umask's mode, as Redis (it made the mode 000)
        umask = os.umask(0o022)
        try:
            with Server("goblin", args=["--unixsocketperm", "0"]) as srv:
                self.assertEqual(stat.S_IMODE(os.stat(srv.sock).st_mode), 0o755)
                self.assertTrue(srv.ping_ok())
        finally:
            os.umask(umask)

    def test_port_0_disables_tcp(self):
        with Server("goblin", port=0) as srv:
            self.assertTrue(srv.ping_ok())
            self.assertEqual(srv.info("server")["tcp_port"], "0")
            listeners = tcp_listeners_of(srv.pid)
            if listeners is None:
                self.skipTest("no /proc and no lsof: cannot list the server's listening sockets")
            self.assertFalse(listeners, "goblin-core listens on TCP with --port 0")

    def test_nothing_to_listen_on(self):
        rc, out = start_expect_failure(["--port", "0", "--unixsocket", ""])
        self.assertNotEqual(rc, 0)
        self.assertIn("nothing to listen on", out)

    def test_sigterm_and_sigint_exit_cleanly(self):
        for sig in (signal.SIGTERM, signal.SIGINT):
            with self.subTest(signal=sig):
                srv = Server("goblin")
                try:
                    with Raw(srv) as c:
                        c.call("SET", "k", "v")
                        os.kill(srv.pid, sig)
                        self.assertTrue(c.expect_eof(10 * SLOW), "client connection not closed on shutdown")
                    rc = srv.proc.wait(10 * SLOW)
                    self.assertEqual(rc, 0)
                    self.assertFalse(os.path.exists(srv.sock), "unix socket not removed")
                    self.assertIn("bye", srv.log())
                finally:
                    srv.cleanup()

    def test_shutdown_command(self):
        srv = Server("goblin")
        try:
            with Raw(srv) as c:
                c.send_cmd("SHUTDOWN", "NOSAVE")
                self.assertTrue(c.expect_eof(10 * SLOW))
            self.assertEqual(srv.proc.wait(10 * SLOW), 0)
            self.assertFalse(os.path.exists(srv.sock))
        finally:
            srv.cleanup()


class RuntimeConfig(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = Server("goblin")
        cls.redis = Server("redis") if gbtest.compare_with_redis() else None

    @classmethod
    def tearDownClass(cls):
        cls.srv.cleanup()
        if cls.redis:
            cls.redis.cleanup()

    def test_config_set_runtime_options(self):
        r = self.srv.redis(decode_responses=True)
        for name, value in (("maxmemory", "104857600"), ("loglevel", "warning"), ("hz", "50"),
                            ("maxclients", "500"), ("timeout", "0"), ("maxmemory-policy", "noeviction")):
            with self.subTest(option=name):
                self.assertTrue(r.config_set(name, value))
                self.assertEqual(r.config_get(name), {name: value})
        self.assertTrue(r.config_set("maxmemory", "0"))
        self.assertEqual(self.srv.info("server")["hz"], "50")
        # Several at once, all or nothing.
        self.assertTrue(r.execute_command("CONFIG", "SET", "hz", "10", "maxclients", "1000"))
        with self.assertRaises(redis.ResponseError):
            r.execute_command("CONFIG", "SET", "hz", "20", "maxclients", "zero")
        self.assertEqual(r.config_get("hz"), {"hz": "10"})
        r.close()

    def test_requirepass_at_runtime(self):
        r = self.srv.redis()
        try:
            self.assertTrue(r.config_set("requirepass", "newpass"))
            self.assertTrue(r.ping(), "an already connected client stays authenticated")
            with Raw(self.srv) as c:
                self.assertEqual(c.call("GET", "k"), gbtest.Err(b"NOAUTH Authentication required."))
                # A rejected EXEC says why it aborted (Redis's execCommandAbort).
                self.assertEqual(c.call("MULTI"), gbtest.Err(b"NOAUTH Authentication required."))
                self.assertEqual(c.call("EXEC"), gbtest.Err(
                    b"EXECABORT Transaction discarded because of: NOAUTH Authentication required."))
                self.assertEqual(c.call("AUTH", "newpass"), b"OK")
                self.assertEqual(c.call("CONFIG", "SET", "requirepass", ""), b"OK")
            with Raw(self.srv) as c:
                self.assertEqual(c.call("PING"), b"PONG")
        finally:
            r.config_set("requirepass", "")
            r.close()

    def test_refusals_match_redis(self):
        cases = [("CONFIG", "SET", "databases", "4"),
                 ("CONFIG", "SET", "nosuchoption", "1"),
                 ("CONFIG", "SET", "maxclients", "abc"),
                 ("CONFIG", "SET", "maxmemory", "lots"),
                 ("CONFIG", "SET", "loglevel", "loud"),
                 ("CONFIG", "SET", "hz", "10", "hz", "20"),
                 ("CONFIG", "SET", "hz"),
                 ("CONFIG", "SET", "hz", "10", "maxclients"),
                 ("CONFIG", "GET"),
                 ("CONFIG", "NOSUCH")]
        for args in cases:
            with self.subTest(args=args):
                with Raw(self.srv) as c:
                    got = c.call_raw(*args)
                self.assertTrue(got.startswith(b"-ERR"), got)
                if self.redis:
                    with Raw(self.redis) as c:
                        self.assertEqual(got, c.call_raw(*args))
        with Raw(self.srv) as c:  # Redis's range: 1 to 2^32-1
            self.assertEqual(c.call_raw("CONFIG", "SET", "maxclients", "0"),
                             b"-ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument must be "
                             b"between 1 and 4294967295 inclusive\r\n")
        # port and bind rebind at run time (test_config_redis.py); databases
        # cannot change, in Redis's words.
        with Raw(self.srv) as c:
            self.assertEqual(c.call_raw("CONFIG", "SET", "databases", "4"),
                             b"-ERR CONFIG SET failed (possibly related to argument 'databases') - can't set "
                             b"immutable config\r\n")

    def test_maxclients_at_runtime(self):
        r = self.srv.redis()
        held = []
        try:
            n = int(self.srv.info("clients")["connected_clients"])
            self.assertTrue(r.config_set("maxclients", n + 2))
            held = [Raw(self.srv) for _ in range(2)]
            for h in held:
                self.assertEqual(h.call("PING"), b"PONG")
            with Raw(self.srv) as extra:
                self.assertEqual(extra.read_until(b"\x00never", 5 * SLOW),
                                 b"-ERR max number of clients reached\r\n<EOF>")
        finally:
            for h in held:
                h.close()
            r.config_set("maxclients", 10000)
            r.close()


class Limits(unittest.TestCase):
    def test_maxmemory_noeviction(self):
        with Server("goblin", args=["--maxmemory", "2mb"]) as srv:
            r = srv.redis()
            val = "v" * 200
            oom = None
            for i in range(100000):
                try:
                    r.set("key:%d" % i, val)
                except redis.ResponseError as e:
                    oom = (i, str(e))
                    break
            self.assertIsNotNone(oom, "no OOM error with --maxmemory 2mb")
            n, text = oom
            self.assertEqual(text, "OOM command not allowed when used memory > 'maxmemory'.")
            self.assertGreater(n, 1000)
            with Raw(srv) as c:
                self.assertEqual(c.call_raw("SET", "another", "x"),
                                 b"-OOM command not allowed when used memory > 'maxmemory'.\r\n")
                self.assertEqual(c.call_raw("APPEND", "key:0", "x"),
                                 b"-OOM command not allowed when used memory > 'maxmemory'.\r\n")
                # Reads and deletes keep working.
                self.assertEqual(c.call("GET", "key:0"), val.encode())
                self.assertEqual(c.call("EXISTS", "key:1"), 1)
                self.assertEqual(c.call("STRLEN", "key:1"), 200)
                self.assertEqual(c.call("DEL", *["key:%d" % i for i in range(n // 2)]), n // 2)
                self.assertEqual(c.call("SET", "another", "x"), b"OK")
                # Inside MULTI every command but EXEC/DISCARD is refused at
                # queue time, reads too: queueing itself takes memory
                # (Redis 7.0's processCommand; checked against redis-server).
                self.assertEqual(c.call("CONFIG", "SET", "maxmemory", "1"), b"OK")
                self.assertEqual(c.call("MULTI"), b"OK")
                self.assertEqual(c.call("SET", "in-multi", "x"),
                                 gbtest.Err(b"OOM command not allowed when used memory > 'maxmemory'."))
                self.assertEqual(c.call("GET", "another"),
                                 gbtest.Err(b"OOM command not allowed when used memory > 'maxmemory'."))
                self.assertEqual(c.call("EXEC"),
                                 gbtest.Err(b"EXECABORT Transaction discarded because of previous errors."))
                # A transaction queued under the limit whose EXEC comes over
                # it is refused whole when it holds a write.
                self.assertEqual(c.call("CONFIG", "SET", "maxmemory", "0"), b"OK")
                self.assertEqual(c.call("MULTI"), b"OK")
                self.assertEqual(c.call("SET", "in-multi", "x"), b"QUEUED")
                self.assertTrue(r.config_set("maxmemory", "1"))  # from another client
                self.assertEqual(c.call("EXEC"), gbtest.Err(
                    b"EXECABORT Transaction discarded because of: OOM command not allowed when used memory > 'maxmemory'."))
                self.assertEqual(c.call("CONFIG", "SET", "maxmemory", "0"), b"OK")
                self.assertEqual(c.call("SET", "in-multi", "x"), b"OK")
            r.close()

    def test_databases(self):
        with Server("goblin", args=["--databases", "4"]) as srv, Raw(srv) as c:
            self.assertEqual(c.call("SELECT", "3"), b"OK")
            self.assertEqual(c.call_raw("SELECT", "4"), b"-ERR DB index is out of range\r\n")
            self.assertEqual(c.call_raw("SWAPDB", "0", "4"), b"-ERR DB index is out of range\r\n")
            self.assertEqual(c.call_raw("MOVE", "k", "4"), b"-ERR DB index is out of range\r\n")
            self.assertEqual(c.call("CONFIG", "GET", "databases"), [b"databases", b"4"])

    def test_timeout_closes_idle_clients(self):
        with Server("goblin", args=["--timeout", "1", "--hz", "20"]) as srv:
            idle = Raw(srv)
            busy = Raw(srv)
            try:
                # t0 before the idle client's last command: it cannot be
                # closed sooner than 1 s after t0 (taken after the PING, a
                # stall before it ate into the 0.9 s lower bound).
                t0 = time.time()
                self.assertEqual(idle.call("PING"), b"PONG")
                closed = False
                while time.time() - t0 < 6 * SLOW:
                    self.assertEqual(busy.call("PING"), b"PONG", "an active client was closed")
                    if idle.expect_eof(0.3):
                        closed = True
                        break
                self.assertTrue(closed, "idle client not closed with --timeout 1")
                self.assertGreaterEqual(time.time() - t0, 0.9)
                self.assertEqual(busy.call("PING"), b"PONG")
            finally:
                idle.close()
                busy.close()

    def test_logfile(self):
        d = tempfile.mkdtemp(prefix="gbit-log-")
        logfile = os.path.join(d, "goblin.log")
        try:
            with Server("goblin", args=["--logfile", logfile, "--loglevel", "verbose"]) as srv:
                with Raw(srv) as c:
                    c.send(b"*1\r\nx\r\n")  # a protocol error, logged at verbose level
                    c.expect_eof(5 * SLOW)
                rc = srv.stop()
                self.assertEqual(rc, 0)
                with open(logfile) as f:
                    text = f.read()
                self.assertIn("Ready to accept connections", text)
                self.assertIn("Protocol error", text)
                self.assertRegex(text, r"pid %d" % srv.pid)
                self.assertIn(srv.sock, text)
                self.assertNotIn("Ready to accept", srv.log(), "log lines on stderr despite --logfile")
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def test_logfile_survives_config_set_loglevel(self):
        d = tempfile.mkdtemp(prefix="gbit-log-")
        logfile = os.path.join(d, "goblin.log")
        try:
            with Server("goblin", args=["--logfile", logfile]) as srv:
                with Raw(srv) as c:
                    self.assertEqual(c.call("CONFIG", "SET", "loglevel", "verbose"), b"OK")
                    c.send(b"*1\r\nx\r\n")
                    c.expect_eof(5 * SLOW)
                srv.stop()
                with open(logfile) as f:
                    text = f.read()
                self.assertIn("Protocol error", text)
                self.assertNotIn("Protocol error", srv.log())
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def test_startup_log_summary(self):
        with Server("goblin", args=["--loglevel", "notice"]) as srv:
            log = srv.log()
            self.assertRegex(log, r"Goblin Core \S+ .*pid %d" % srv.pid)
            self.assertIn("tcp 127.0.0.1:%d" % srv.port, log)
            self.assertIn(srv.sock, log)
            self.assertIn("Ready to accept connections", log)


if __name__ == "__main__":
    gbtest.run_tests()
