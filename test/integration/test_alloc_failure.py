"""Allocation failures on request paths (issue 14, docs/architecture.md
"Out of memory").

The transports allocate every per-client buffer through the fallible
allocator (engine/base/mem.h, gb_try_*); GOBLIN_FAULT_ALLOC=N makes the Nth
such allocation fail (N+: that one and every one after), and the server logs
at exit how many it made and at which call sites.

The sweep: a workload of independent sessions (every command family over
TCP and the Unix socket, pipelining, inline commands, MULTI/EXEC, a BLPOP
served by another client, CONFIG SET and DEBUG RELOAD, a RESP ring and an
SBE ring through ring_tool, whose claims are the ring claims) runs once with
the injector counting only; that run's replies and data are the reference.
Then it runs again once per chosen N (the first call of every site reached,
plus evenly spaced ones). After each run:

* every session's replies equal the reference, or equal it up to a point
  where that session was closed or got an "out of memory" error and stopped;
* a session deviates only in a run where a failure was injected, and a
  failure that was injected either made one deviate or was logged;
* a fresh client gets PONG, and the data of every session that was not cut
  off equals the reference;
* SIGTERM stops the server cleanly (exit 0) and, in the ASan tree, without
  a sanitizer or leak report.

Two runs with every allocation failing from some point on (N+) check that the
server keeps running, refuses new connections with an error, and exits
cleanly. The test prints how many of the fallible call sites in the sources
the sweep reached.

GOBLIN_ALLOC_SWEEP=full sweeps every N (slow); the default keeps the run to a
few minutes on a loaded machine.
"""

import hashlib
import os
import re
import socket
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gbtest  # noqa: E402
from gbtest import Err, Raw, Server, SLOW, encode, sanitizer_report  # noqa: E402

RING_TOOL = os.environ.get("RING_TOOL")
ROOT = gbtest.ROOT
CLOSED = b"<closed>"
TIMEOUT = b"<timeout>"


def oom_error(raw):
    """An error reply that says memory ran out (the transports' text, or
    Lua's "not enough memory" for a script whose allocator was refused)."""
    return raw.startswith(b"-") and (b"out of memory" in raw or b"not enough memory" in raw)
# Runs besides one per site: fewer under sanitizers (each run is slower).
EXTRA_RUNS = 12 if SLOW > 1 else 30


class Stop(Exception):
    """A session was cut off (closed, or an out-of-memory error)."""


class Sock:
    """A RESP connection of a session: records raw replies, in the order
    they arrive, into the session's transcript (shared by its connections)
    and stops the session at the first sign of an allocation failure."""

    def __init__(self, srv, out, tcp=False):
        self.out = out
        self.r = None
        try:
            self.r = Raw(srv, tcp=tcp, timeout=10 * SLOW)
        except OSError:
            self.out.append(CLOSED)
            raise Stop()

    def read(self):
        try:
            _, raw = self.r.read()
        except socket.timeout:
            self.out.append(TIMEOUT)
            raise Stop()
        except (EOFError, OSError):
            self.out.append(CLOSED)
            raise Stop()
        self.out.append(hashlib.sha1(raw).digest() if len(raw) > 256 else raw)
        if oom_error(raw):
            raise Stop()
        return raw

    def call(self, *args):
        return self.send(encode(*args), 1)

    def send(self, data, nreplies):
        try:
            self.r.send(data)
        except OSError:
            pass  # the replies (or EOF) tell
        for _ in range(nreplies):
            self.read()

    def close(self):
        if self.r:
            self.r.close()


class Session:
    def __init__(self, srv):
        self.srv = srv
        self.out = []
        self.socks = []

    def sock(self, tcp=False):
        s = Sock(self.srv, self.out, tcp)
        self.socks.append(s)
        return s


def run_session(fn, srv):
    """Runs one socket session; returns its transcript."""
    sess = Session(srv)
    try:
        fn(sess)
    except Stop:
        pass
    finally:
        for s in sess.socks:
            s.close()
    return sess.out


# ---- the sessions (each writes only keys under its own prefix) ----------------------

def s_strings_tcp(h):
    s = h.sock(tcp=True)
    s.call("SET", "st:a", "1")
    s.call("INCRBY", "st:a", 41)
    s.call("INCRBYFLOAT", "st:f", "1.5")
    s.call("APPEND", "st:s", "hello")
    s.call("GETRANGE", "st:s", 1, 3)
    s.call("SETRANGE", "st:s", 10, "x")
    s.call("GETDEL", "st:missing")
    pairs = []
    for i in range(40):  # 81 arguments: past the stack argv and the parser's first arrays
        pairs += ["st:m%d" % i, "v%d" % i]
    s.call("MSET", *pairs)
    s.call("MGET", *["st:m%d" % i for i in range(40)])
    s.call("SET", "st:big", b"b" * 300000)  # the query buffer grows past one read chunk
    s.call("GET", "st:big")
    s.call("STRLEN", "st:big")


def s_collections(h):
    s = h.sock()
    s.call("RPUSH", "co:l", *range(20))
    s.call("LPUSH", "co:l", "a", "b")
    s.call("LRANGE", "co:l", 0, -1)
    s.call("LPOP", "co:l", 2)
    s.call("LMOVE", "co:l", "co:l2", "LEFT", "RIGHT")
    s.call("HSET", "co:h", *[x for i in range(20) for x in ("f%d" % i, "v%d" % i)])
    s.call("HINCRBY", "co:h", "n", 5)
    s.call("HGETALL", "co:h")
    s.call("SADD", "co:s", *range(30))
    s.call("SADD", "co:s2", *range(15, 45))
    s.call("SINTERSTORE", "co:si", "co:s", "co:s2")
    s.call("SCARD", "co:si")
    s.call("SISMEMBER", "co:s", 3)
    s.call("ZADD", "co:z", *[x for i in range(25) for x in (i * 1.5, "m%d" % i)])
    s.call("ZINCRBY", "co:z", "0.25", "m3")
    s.call("ZRANGE", "co:z", 0, -1, "WITHSCORES")
    s.call("ZRANGEBYSCORE", "co:z", 3, 12)
    s.call("ZRANK", "co:z", "m7")
    s.call("PEXPIRE", "co:s2", 10000000)
    s.call("PERSIST", "co:s2")
    s.call("TTL", "co:s2")
    s.call("RENAME", "co:s2", "co:s3")
    s.call("TYPE", "co:z")
    s.call("EXISTS", "co:l", "co:h", "co:nope")
    s.call("OBJECT", "ENCODING", "co:h")
    s.call("DEL", "co:si")


def s_big_reply(h):
    # A reply larger than the Unix socket's buffer: the rest waits in a
    # write request while the client reads.
    s = h.sock()
    s.call("SET", "bg:v", b"x" * (3 << 20))
    s.call("GET", "bg:v")
    s.call("GETRANGE", "bg:v", 0, 9)


def s_pipeline(h):
    s = h.sock()
    data = b"".join(encode("INCR", "pl:n") + encode("RPUSH", "pl:l", "e%d" % i) for i in range(150))
    s.send(data, 300)
    s.call("LLEN", "pl:l")


def s_inline(h):
    s = h.sock()
    s.send(b"SET in:a \"quoted value\"\r\nGET in:a\r\nPING\r\n", 3)
    s.send(b"*2\r\n$4\r\nECHO\r\n$5\r\nhello\r\n", 1)


def s_multi(h):
    s = h.sock(tcp=True)
    s.call("MULTI")
    s.call("SET", "mu:a", "1")
    s.call("INCR", "mu:a")
    s.call("LPUSH", "mu:l", "x", "y")
    s.call("HSET", "mu:h", "f", "v")
    s.call("EXEC")
    s.call("WATCH", "mu:a")
    s.call("MULTI")
    s.call("INCRBY", "mu:a", 10)
    s.call("EXEC")
    s.call("MULTI")
    s.call("NOSUCHCOMMAND")
    s.call("EXEC")


def s_blocking(h):
    waiter = h.sock()
    pusher = h.sock(tcp=True)
    waiter.send(encode("BLPOP", "bl:q", 0), 0)  # no reply until the push
    pusher.call("PING")  # the BLPOP went first: the waiter is blocked by now
    pusher.call("RPUSH", "bl:q", "job1", "job2")
    waiter.read()  # served by the push
    pusher.call("LRANGE", "bl:q", 0, -1)


def s_pubsub(h):
    # A subscriber's messages are written outside its own command (inside
    # the publisher's PUBLISH): a failure there cuts off the subscriber at
    # the next chance, never the publisher or the walk over subscribers.
    sub = h.sock()
    pub = h.sock(tcp=True)
    sub.call("SUBSCRIBE", "ps:ch")
    sub.call("PSUBSCRIBE", "ps:*")
    pub.call("PUBLISH", "ps:ch", "hello")  # :2 - a subscriber being closed still counts
    sub.read()  # message
    sub.read()  # pmessage
    pub.call("SET", "ps:k", "v")
    sub.call("UNSUBSCRIBE")
    sub.call("PING")


def s_server(h):
    s = h.sock()
    s.call("CLIENT", "SETNAME", "alloc-sweep")
    s.call("CLIENT", "GETNAME")
    s.call("CONFIG", "SET", "hz", "20")
    s.call("CONFIG", "GET", "hz")
    s.call("CONFIG", "SET", "list-max-listpack-size", "64")
    s.call("CONFIG", "GET", "list-max-listpack-size")
    s.call("CONFIG", "RESETSTAT")
    s.call("ECHO", "x" * 5000)
    s.call("SET", "sv:k", "v")
    s.call("DEBUG", "RELOAD")
    s.call("GET", "sv:k")
    s.call("COMMAND", "INFO", "get")
    s.call("SELECT", 0)


def s_scripts(h):
    # The interpreter's allocations are fallible while Lua code runs or
    # compiles (a refusal is Lua's "not enough memory" for that script);
    # the engine's own pushes around it are not (engine/script/script_vm.h).
    s = h.sock()
    s.call("EVAL", "local t = {} for i = 1, 20 do t[i] = string.rep('x', i) end "
                   "redis.call('SET', KEYS[1], cjson.encode(t)) "
                   "return {#cmsgpack.pack(t), redis.call('STRLEN', KEYS[1])}", 1, "sc:a")
    s.call("EVALSHA", "0" * 40, 0)
    s.call("FUNCTION", "LOAD", "REPLACE", "#!lua name=sclib\n"
           "redis.register_function('sc_incr', function(keys, args) return redis.call('INCRBY', keys[1], args[1]) end)")
    s.call("FCALL", "sc_incr", 1, "sc:n", 5)
    s.call("GET", "sc:a")


SOCKET_SESSIONS = [
    ("strings_tcp", s_strings_tcp, "st:"),
    ("collections", s_collections, "co:"),
    ("big_reply", s_big_reply, "bg:"),
    ("pipeline", s_pipeline, "pl:"),
    ("inline", s_inline, "in:"),
    ("multi", s_multi, "mu:"),
    ("blocking", s_blocking, "bl:"),
    ("pubsub", s_pubsub, "ps:"),
    ("scripts", s_scripts, "sc:"),
    ("server", s_server, "sv:"),
]

RING_SCRIPT = [
    ["PING"], ["SET", "{p}a", "1"], ["INCRBY", "{p}a", "9"], ["GET", "{p}a"],
    ["MSET"] + [x for i in range(40) for x in ("{p}m%d" % i, "v%d" % i)],
    ["MGET"] + ["{p}m%d" % i for i in range(40)],
    ["RPUSH", "{p}l"] + [str(i) for i in range(30)], ["LRANGE", "{p}l", "0", "-1"],
    ["HSET", "{p}h", "f1", "v1", "f2", "v2"], ["HGETALL", "{p}h"],
    ["ZADD", "{p}z", "1.5", "a", "-2", "b"], ["ZRANGE", "{p}z", "0", "-1", "WITHSCORES"],
    ["SADD", "{p}s", "1", "2", "3"], ["SMEMBERS", "{p}s"],
    ["SET", "{p}big", "y" * 200000], ["GET", "{p}big"],
    ["MULTI"], ["INCR", "{p}a"], ["LPOP", "{p}l"], ["EXEC"],
    ["NOSUCHCOMMAND"], ["ECHO", "done"],
]


def ring_commands(prefix):
    return [[a.replace("{p}", prefix) for a in cmd] for cmd in RING_SCRIPT]


def script_input(commands):
    out = bytearray()
    for cmd in commands:
        out += b"%d\n" % len(cmd)
        for a in cmd:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"%d\n" % len(a) + a + b"\n"
    return bytes(out)


def split_replies(data):
    """One bytes object per top-level RESP2 reply; stops at a partial one."""
    out, pos = [], 0

    def one(p):
        end = data.index(b"\r\n", p)
        t, n = data[p:p + 1], data[p + 1:end]
        p = end + 2
        if t == b"$" and int(n) >= 0:
            if len(data) < p + int(n) + 2:
                raise ValueError("partial")
            return p + int(n) + 2
        if t == b"*" and int(n) > 0:
            for _ in range(int(n)):
                p = one(p)
        return p

    while pos < len(data):
        if data[pos:pos + 1] not in b"+-:$*" or data[pos:pos + 1] == b"":
            break
        try:
            end = one(pos)
        except (ValueError, IndexError):
            break
        out.append(data[pos:end])
        pos = end
    return out, data[pos:]


def run_ring(srv, proto, mode, commands=None):
    """A ring_tool session; its transcript in the same form as a socket's."""
    args = [RING_TOOL, srv.sock, proto, mode]
    p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        out, _ = p.communicate(script_input(commands) if commands else b"", timeout=60 * SLOW)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        return [TIMEOUT]
    if mode == "typed":
        lines = out.splitlines()
        if p.returncode != 0:
            return lines[:-1] + [CLOSED] if lines else [CLOSED]
        return lines
    if out.startswith(b"claim failed"):
        return [CLOSED]
    replies, rest = split_replies(out)
    transcript = []
    for r in replies:
        transcript.append(hashlib.sha1(r).digest() if len(r) > 256 else r)
        if oom_error(r):
            return transcript
    if p.returncode != 0 or rest:
        transcript.append(CLOSED)
    return transcript


def ring_sessions():
    if not RING_TOOL:
        return []
    return [
        ("resp_ring", lambda srv: run_ring(srv, "resp", "script", ring_commands("rr:")), "rr:"),
        ("sbe_ring", lambda srv: run_ring(srv, "sbe", "script", ring_commands("sr:")), "sr:"),
        ("sbe_typed", lambda srv: run_ring(srv, "sbe", "typed"), "t:"),
    ]


def dump_namespace(r, prefix):
    """The keys under prefix with their types and contents (sorted where
    the order is not part of the value)."""
    keys = sorted(r.call("KEYS", prefix + "*"))
    out = []
    for k in keys:
        t = r.call("TYPE", k)
        if t == b"string":
            v = r.call("GET", k)
        elif t == b"list":
            v = r.call("LRANGE", k, 0, -1)
        elif t == b"hash":
            v = sorted(r.call("HGETALL", k))
        elif t == b"set":
            v = sorted(r.call("SMEMBERS", k))
        elif t == b"zset":
            v = r.call("ZRANGE", k, 0, -1, "WITHSCORES")
        else:
            v = t
        out.append((k, bytes(t), hashlib.sha1(repr(v).encode()).hexdigest()))
    return out


SITE_RE = re.compile(r"Fault injection: site (\S+):(\d+) reached (\d+) times \(first as call (\d+)\)")
TOTAL_RE = re.compile(r"Fault injection: (\d+) fallible allocations at (\d+) sites, (\d+) failed on purpose")
FIRST_RE = re.compile(r"Fault injection: first failed site (\S+):(\d+)")


def rel(path):
    """A site's file relative to the source tree (__FILE__ may be absolute)."""
    for top in ("transport/", "engine/", "apps/", "platform/"):
        i = path.rfind("/" + top)
        if i >= 0:
            return path[i + 1:]
        if path.startswith(top):
            return path
    return path


def parse_report(log):
    m = TOTAL_RE.search(log)
    if not m:
        return None
    sites = {}
    for f, line, calls, first in SITE_RE.findall(log):
        sites[(rel(f), int(line))] = (int(calls), int(first))
    fm = FIRST_RE.search(log)
    return {"calls": int(m.group(1)), "failed": int(m.group(3)), "sites": sites,
            "first_failed": (rel(fm.group(1)), int(fm.group(2))) if fm else None}


ABSORBED_TAG = "sweep: absorbed"


def source_sites(tag=None):
    """Every gb_try_* call in the sources (file, line): what a sweep could
    reach; with a tag, only the calls whose line carries it."""
    pat = re.compile(r"\bgb_try_(?:malloc|calloc|realloc)\(")
    found = set()
    for top in ("transport", "engine", "apps"):
        for d, _, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                if not f.endswith(".c"):
                    continue
                path = os.path.join(d, f)
                r = os.path.relpath(path, ROOT)
                if r == os.path.join("engine", "base", "mem.c"):
                    continue
                with open(path, encoding="utf-8", errors="replace") as fh:
                    for n, text in enumerate(fh, 1):
                        if pat.search(text) and not text.lstrip().startswith(("/*", "*")) and \
                                (tag is None or tag in text):
                            found.add((r, n))
    return found


ABSORBED_SITES = source_sites(ABSORBED_TAG)
OOM_LOG = ("out of memory for its buffers", "RING CLAIM refused: out of memory", "Connection refused: out of memory")


class AllocFailureSweep(unittest.TestCase):
    def start(self, fault):
        env = dict(os.environ)
        env["GOBLIN_FAULT_ALLOC"] = str(fault)
        srv = Server("goblin", ["--save", "", "--loglevel", "notice"], env=env, wait=False)
        # Ready once a connection is answered at all: this check's own
        # allocations are counted, and the failure may hit it (then it is
        # closed, which counts as an answer too).
        deadline = time.time() + 15 * SLOW
        while True:
            self.assertIsNone(srv.proc.poll(), "the server exited during start-up:\n" + srv.log())
            try:
                with Raw(srv, timeout=10 * SLOW) as r:
                    r.call("PING")
                break
            except EOFError:
                break
            except OSError:
                self.assertLess(time.time(), deadline, "the server did not start:\n" + srv.log())
                time.sleep(0.02)
        return srv

    def workload(self, srv):
        sessions = {}
        for name, fn, _ in SOCKET_SESSIONS:
            sessions[name] = run_session(fn, srv)
        for name, fn, _ in ring_sessions():
            sessions[name] = fn(srv)
        return sessions

    def stop_clean(self, srv, what):
        rc = srv.stop()
        log = srv.log()
        report = sanitizer_report(log)
        srv.cleanup()
        self.assertEqual(report, "", "%s: sanitizer report:\n%s" % (what, report))
        self.assertEqual(rc, 0, "%s: exit status %s; log tail:\n%s" % (what, rc, log[-3000:]))
        return log

    def fresh_ping(self, srv):
        try:
            with Raw(srv, timeout=10 * SLOW) as r:
                return r.call("PING")
        except (EOFError, OSError):
            return CLOSED

    def namespaces(self):
        return [(n, p) for n, _, p in SOCKET_SESSIONS] + [(n, p) for n, _, p in ring_sessions()]

    def dumps(self, srv):
        # A second try: the one injected failure may hit this client.
        for attempt in (1, 2):
            try:
                with Raw(srv, timeout=30 * SLOW) as r:
                    return {name: dump_namespace(r, p) for name, p in self.namespaces()}
            except (EOFError, ConnectionError):
                if attempt == 2:
                    raise

    @staticmethod
    def deviation(got, ref):
        """None if got == ref; 'cut' if got is ref cut off by a close or an
        out-of-memory error; else a description of what is wrong."""
        if got == ref:
            return None
        if not got:
            return "no replies at all"
        i = len(got) - 1
        last = got[-1]
        if got[:i] != ref[:i]:
            k = next(j for j in range(i) if got[j] != ref[j])
            return "reply %d differs: %r, expected %r" % (k, got[k][:200], ref[k][:200] if k < len(ref) else None)
        if last == CLOSED or (isinstance(last, bytes) and oom_error(last)):
            return "cut"
        return "reply %d is %r, expected %r" % (i, last[:200], ref[i][:200] if i < len(ref) else None)

    def one_failure(self, n, ref, ref_data):
        """One run with the nth fallible allocation failing (n: a number, or
        "k@file:line" for the kth call at that site), and its checks."""
        what = "GOBLIN_FAULT_ALLOC=%s" % n
        srv = self.start(n)
        got = self.workload(srv)
        cut = []
        for name, t in got.items():
            d = self.deviation(t, ref[name])
            if d == "cut":
                cut.append(name)
            elif d is not None:
                srv.kill()
                self.fail("%s: session %s: %s\nserver log tail:\n%s" % (what, name, d, srv.log()[-3000:]))
        pong = self.fresh_ping(srv)
        if pong != b"PONG":  # the one failure may have hit this very client
            pong = self.fresh_ping(srv)
        self.assertEqual(pong, b"PONG", "%s: the server does not answer a fresh client" % what)
        data = self.dumps(srv)
        for name, _ in self.namespaces():
            if name not in cut:
                self.assertEqual(data[name], ref_data[name],
                                 "%s: the data of %s (not cut off) differs from the reference" % (what, name))
        log = self.stop_clean(srv, what)
        rep = parse_report(log)
        self.assertIsNotNone(rep, what)
        self.reached |= set(rep["sites"])
        if rep["failed"]:
            self.injected += 1
            self.failed_at.add(rep["first_failed"])
            # The Lua interpreter may absorb a refused allocation (a
            # protected call inside a library); the transports do only where
            # the call's line says "sweep: absorbed" (a shrink that, refused,
            # keeps the larger buffer).
            absorbable = rep["first_failed"][0].startswith("engine/script/") or \
                rep["first_failed"] in ABSORBED_SITES
            self.assertTrue(cut or absorbable or any(m in log for m in OOM_LOG),
                            "%s: the failure at %s:%d neither cut a session off nor was logged"
                            % ((what,) + rep["first_failed"]))
        else:
            self.assertEqual(cut, [], "%s: sessions cut off with no failure injected: %s" % (what, cut))
        self.cut_runs += bool(cut)

    def test_sweep(self):
        if not RING_TOOL:
            sys.stderr.write("alloc-failure: RING_TOOL not set: the ring sessions are left out\n")
        # The reference: counting only.
        srv = self.start(0)
        ref = self.workload(srv)
        for name, t in ref.items():
            self.assertNotIn(CLOSED, t, "%s was cut off with no failure injected: %r" % (name, t[-3:]))
            self.assertNotIn(TIMEOUT, t, name)
        ref_data = self.dumps(srv)
        log = self.stop_clean(srv, "reference run")
        base = parse_report(log)
        self.assertIsNotNone(base, "no fault injection report in the log:\n" + log[-2000:])
        self.assertEqual(base["failed"], 0)
        total = base["calls"]
        self.assertGreater(total, 0)

        # Which N: every one in the release tree; under sanitizers (several
        # times slower) the first call of every site and evenly spaced ones.
        # Call numbers shift a little from run to run (how reads split a big
        # value, when a socket fills up), so a site that no run managed to
        # fail is then failed by site.
        if SLOW == 1 or os.environ.get("GOBLIN_ALLOC_SWEEP") == "full":
            ns = list(range(1, total + 1))
        else:
            step = max(1, total // EXTRA_RUNS)
            ns = sorted({first for _, first in base["sites"].values()} | set(range(1, total + 1, step)))
        self.reached = set(base["sites"])
        self.failed_at = set()
        self.injected = self.cut_runs = 0
        t0 = time.time()
        for n in ns:
            self.one_failure(n, ref, ref_data)
        # A site whose global call number shifted (it was reached in the
        # reference at call k, and in the run failing call k something
        # else came k-th): fail its first call by site instead.
        # A site none of three such runs reached (its first call there would
        # have failed) is reached only as timing allows: the clients cron
        # shrinking an idle client's query buffer, say, which a loaded
        # machine reaches in the reference run and then not again.
        timing_only = set()
        for site in sorted(set(base["sites"]) - self.failed_at):
            for _ in range(3):  # reached in the reference, so in most runs
                if site not in self.failed_at:
                    self.one_failure("1@%s:%d" % site, ref, ref_data)
            if site not in self.failed_at:
                timing_only.add(site)

        # Every allocation failing from some point on: the server survives,
        # refuses what it cannot serve, and exits cleanly.
        for n in (1, max(1, total // 2)):
            what = "GOBLIN_FAULT_ALLOC=%d+" % n
            srv = self.start("%d+" % n)
            self.workload(srv)
            self.assertTrue(srv.alive(), "%s: the server died:\n%s" % (what, srv.log()[-3000:]))
            try:
                with Raw(srv, timeout=10 * SLOW) as r:
                    r.send_cmd("PING")
                    got = r.read_until(b"\r\n")
            except OSError:
                got = b"<EOF>"
            self.assertTrue(got.startswith(b"-ERR out of memory: connection refused") or got.endswith(b"<EOF>"),
                            "%s: a new connection got %r" % (what, got))
            log = self.stop_clean(srv, what)
            self.assertIn("Connection refused: out of memory", log, what)

        all_sites = source_sites()
        reached_src = {s for s in self.reached if s in all_sites}
        sys.stderr.write(
            "\nalloc-failure sweep: %d fallible allocations in the reference workload; %d runs with one failure "
            "injected (%d cut a session off) + 2 with every allocation failing from a point on, in %.0f s\n"
            "alloc-failure sweep: fallible sites reached: %d of %d in the sources; failures injected at %d "
            "distinct sites\n" % (total, self.injected, self.cut_runs, time.time() - t0, len(reached_src),
                                  len(all_sites), len(self.failed_at)))
        missed = sorted(all_sites - reached_src)
        if missed:
            sys.stderr.write("alloc-failure sweep: not reached: %s\n" % ", ".join("%s:%d" % s for s in missed))
        self.assertGreater(self.injected, 0)
        # Every site the workload reaches has had its failure injected, but
        # for at most two that the runs after the reference did not reach
        # at all (timing_only is what is left unfailed).
        if timing_only:
            sys.stderr.write("alloc-failure sweep: reached in the reference run only, not in three runs aimed at "
                             "them: %s\n" % ", ".join("%s:%d" % s for s in sorted(timing_only)))
        self.assertLessEqual(len(timing_only), 2, "sites reached but never failed on purpose: %s"
                             % sorted(timing_only))


class StartupFailure(unittest.TestCase):
    def test_bad_fault_setting_exits_with_message(self):
        import tempfile
        for bad in ("three", "2+x", "1@engine/core/keyspace/db.c", "0@engine/core/keyspace/db.c:10", "1@:10", "1@a.c:0", "1@a.c:9x"):
            env = dict(os.environ, GOBLIN_FAULT_ALLOC=bad)
            with tempfile.TemporaryDirectory(prefix="gbit-alloc-") as d:
                p = subprocess.run([gbtest.GOBLIN, "--port", "0", "--unixsocket", os.path.join(d, "x.sock"),
                                    "--save", ""], env=env, capture_output=True, timeout=30 * SLOW, cwd=d)
            self.assertNotEqual(p.returncode, 0, bad)
            self.assertIn(b"GOBLIN_FAULT_ALLOC must be N, N+, N@file:line or 0", p.stdout + p.stderr, bad)

    @unittest.skipIf(SLOW > 1, "sanitizer builds need far more address space than the limit leaves")
    @unittest.skipUnless(sys.platform.startswith("linux"), "RLIMIT_AS behaves like this on Linux")
    def test_out_of_memory_at_startup_exits_with_message(self):
        # Too little address space for what start-up allocates (the ring
        # pool, the engine): the server says so and exits non-zero.
        import resource

        def limit():
            resource.setrlimit(resource.RLIMIT_AS, (96 << 20, 96 << 20))

        p = subprocess.run([gbtest.GOBLIN, "--port", "0", "--unixsocket", "", "--rings", "64", "--ring-size",
                            "4mb"], preexec_fn=limit, capture_output=True, timeout=60 * SLOW)
        out = (p.stdout + p.stderr).decode("utf-8", "replace")
        self.assertNotEqual(p.returncode, 0, out)
        self.assertRegex(out, r"(?i)(out of memory|cannot allocate|memory)", out)


if __name__ == "__main__":
    gbtest.run_tests()
