"""Shared-memory rings: the real server and real ring client processes
(test/integration/ring_tool.c over the client library).

Covers: replies over both protocols equal to the socket path's; every typed
call; claim/release errors and a full pool; 50 clients churning slots; a
client SIGKILLed mid-request; a hostile client scribbling over its slot;
blocking commands over a ring; idle CPU once the spin budget is spent;
placement with --cpu (numa_maps) and the fatal empty-huge-page-pool path.
"""
import glob
import os
import re
import select
import signal
import subprocess
import time
import unittest

import gbtest
from gbtest import Server, Raw, wait_until

RING_TOOL = os.environ.get("RING_TOOL")
RING_HOSTILE = os.environ.get("RING_HOSTILE")
# GOBLIN_RING_PROTOCOLS=resp narrows a debugging run to one protocol.
PROTOCOLS = tuple(os.environ.get("GOBLIN_RING_PROTOCOLS", "resp,sbe").split(","))


def tool(server, proto, *args, **kw):
    return subprocess.Popen([RING_TOOL, server.sock, proto] + [str(a) for a in args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **kw)


def hostile(server, proto, mode, seconds):
    return subprocess.Popen([RING_HOSTILE, server.sock, proto, mode, str(seconds)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)


def claimed_rings(server):
    """INFO rings' line for each claimed slot ("state=claimed,...")."""
    return [v for k, v in server.info("rings").items() if re.fullmatch(r"ring\d+", k) and "state=claimed" in v]


def only_claimed_ring(server):
    """The one claimed slot's INFO line, or "" while there is not exactly one."""
    lines = claimed_rings(server)
    return lines[0] if len(lines) == 1 else ""


def relay(test, server, proto):
    """`ring_tool SOCK PROTO relay`: RESP commands on its stdin, the replies
    on its stdout in RESP form; killed when the test ends."""
    p = subprocess.Popen([RING_TOOL, server.sock, proto, "relay"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    test.addCleanup(lambda: (p.kill(), p.wait(), p.stdout.close(), p.stderr.close()))
    return p


# Every way ring_hostile abuses its own slot (test/integration/ring_hostile.c).
HOSTILE_MODES = ("drain", "spam", "ctrl", "ring", "truncate", "punch", "remap", "noread", "die", "all")


def script_input(commands):
    out = bytearray()
    for cmd in commands:
        out += b"%d\n" % len(cmd)
        for a in cmd:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"%d\n" % len(a) + a + b"\n"
    return bytes(out)


def split_replies(data):
    """Splits a RESP2 byte stream into one bytes object per top-level reply."""
    out, pos = [], 0

    def one(p):
        end = data.index(b"\r\n", p)
        t, n = data[p:p + 1], data[p + 1:end]
        p = end + 2
        if t == b"$" and int(n) >= 0:
            return p + int(n) + 2
        if t == b"*" and int(n) > 0:
            for _ in range(int(n)):
                p = one(p)
        return p

    while pos < len(data):
        end = one(pos)
        out.append(data[pos:end])
        pos = end
    return out


# Commands whose replies must match byte for byte (no time, no randomness).
CORPUS = [
    ["PING"], ["PING", "hello"], ["ECHO", "bin\x00ary"], ["SET", "s", "v"], ["GET", "s"], ["GET", "missing"],
    ["SET", "n", "10"], ["INCR", "n"], ["INCRBY", "n", "-20"], ["DECRBY", "n", "x"], ["APPEND", "s", "more"],
    ["STRLEN", "s"], ["GETRANGE", "s", "1", "-2"], ["SETRANGE", "s", "10", "zz"], ["MSET", "a", "1", "b", "2"],
    ["MGET", "a", "b", "nope"], ["SET", "x", "1", "NX"], ["SET", "x", "2", "XX", "GET"], ["GETDEL", "x"],
    ["EXISTS", "a", "b", "c"], ["DEL", "a", "zz"], ["TYPE", "b"], ["RENAME", "b", "c"], ["RENAME", "nope", "d"],
    ["EXPIRE", "c", "100"], ["PERSIST", "c"], ["TTL", "c"], ["LPUSH", "l", "1", "2", "3"], ["RPUSH", "l", "x"],
    ["LRANGE", "l", "0", "-1"], ["LPOP", "l", "2"], ["LINDEX", "l", "-1"], ["LLEN", "l"], ["LPOS", "l", "1"],
    ["LMOVE", "l", "l2", "LEFT", "RIGHT"], ["RPOPLPUSH", "l2", "l"], ["LMPOP", "2", "nope", "l", "RIGHT", "COUNT", "5"],
    ["BLPOP", "nope", "l", "0.01"], ["INCR", "l"], ["LPUSH", "s", "x"], ["MULTI"], ["INCR", "n"], ["INCR", "n"],
    ["EXEC"], ["MULTI"], ["NOSUCHCMD"], ["EXEC"], ["SELECT", "3"], ["SET", "k3", "v"], ["DBSIZE"], ["SELECT", "0"],
    ["DBSIZE"], ["GET"], ["WRONGNUMBER"], ["SET", "e", "1", "EX", "-5"], ["OBJECT", "ENCODING", "l"],
    ["HSET", "h", "f", "v", "g", "w"], ["HGET", "h", "g"], ["ZADD", "z", "1.5", "a", "-2", "b"],
    ["ZSCORE", "z", "a"], ["ZINCRBY", "z", "0.25", "b"], ["ZRANGE", "z", "0", "-1", "WITHSCORES"],
    ["SADD", "st", "1", "2"], ["SCARD", "st"], ["FLUSHDB"], ["DBSIZE"],
]

# Streams (issue 17) with explicit IDs, so replies carry no clock.
STREAM_CORPUS = [
    ["XADD", "s", "1-1", "f", "v", "n", "1"], ["XADD", "s", "1-*", "f", "w"], ["XADD", "s", "2-0", "x", "bin\x00"],
    ["XADD", "s", "NOMKSTREAM", "MAXLEN", "~", "10", "3-0", "f", "v"], ["XADD", "s", "1-0", "f", "v"],
    ["XLEN", "s"], ["XRANGE", "s", "-", "+"], ["XREVRANGE", "s", "+", "(1-1", "COUNT", "2"],
    ["XGROUP", "CREATE", "s", "g", "0"], ["XGROUP", "CREATE", "s", "g", "0"], ["XGROUP", "NOPE"],
    ["XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "s", ">"],
    ["XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">"], ["XACK", "s", "g", "1-1"],
    ["XPENDING", "s", "g"], ["XCLAIM", "s", "g", "carol", "0", "1-2", "JUSTID"],
    ["XAUTOCLAIM", "s", "g", "dave", "0", "0-0", "COUNT", "1", "JUSTID"], ["XDEL", "s", "2-0"],
    ["XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", "0"], ["XTRIM", "s", "MAXLEN", "1"],
    ["XREAD", "COUNT", "5", "STREAMS", "s", "0"], ["XREAD", "BLOCK", "10", "STREAMS", "s", "$"],
    ["XSETID", "s", "9-9"], ["XINFO", "STREAM", "s"], ["XINFO", "CONSUMERS", "s", "nogroup"],
    ["MULTI"], ["XADD", "s", "10-0", "f", "v"], ["XREAD", "STREAMS", "s", "9-9"], ["EXEC"], ["TYPE", "s"],
    ["SET", "str", "x"], ["XADD", "str", "1-0", "f", "v"],
]


# Typed XADD (the SBE XAdd template; gb_ring_xadd): GB_RING_XADD_* flags.
XA_AUTO_ID, XA_AUTO_SEQ, XA_NOMK, XA_MAXLEN, XA_MINID, XA_APPROX, XA_LIMIT = 1, 2, 4, 8, 16, 32, 64


def xadd_call(key, flags=0, ms=0, seq=0, maxlen=0, minid=(0, 0), limit=0, pairs=("f", "v")):
    """One typed XADD: the ring_tool "xadd" line and the RESP command it
    stands for (the server's to_argv order)."""
    line = "%s %d %d %d %d %d %d %d %s" % (key, flags, ms, seq, maxlen, minid[0], minid[1], limit, " ".join(pairs))
    word = "~" if flags & XA_APPROX else "="
    cmd = ["XADD", key] + (["NOMKSTREAM"] if flags & XA_NOMK else [])
    cmd += ["MAXLEN", word, str(maxlen)] if flags & XA_MAXLEN else []
    cmd += ["MINID", word, "%d-%d" % minid] if flags & XA_MINID else []
    cmd += ["LIMIT", str(limit)] if flags & XA_LIMIT else []
    cmd += ["*" if flags & XA_AUTO_ID else "%d-*" % ms if flags & XA_AUTO_SEQ else "%d-%d" % (ms, seq)]
    return line.strip(), cmd + list(pairs)


U64 = 18446744073709551615
# Every option and every refusal, on keys the test prepares ("str" is a string).
XADD_CASES = [
    xadd_call("s", ms=1, seq=1, pairs=("f", "v", "n", "1")), xadd_call("s", XA_AUTO_SEQ, ms=1),
    xadd_call("s", ms=1, seq=1), xadd_call("s", ms=1, seq=2), xadd_call("s", XA_AUTO_SEQ, ms=0),
    xadd_call("new", ms=0, seq=0), xadd_call("new", XA_AUTO_SEQ, ms=0), xadd_call("gone", XA_NOMK, ms=1),
    xadd_call("gone", XA_NOMK | XA_AUTO_ID), xadd_call("s", XA_NOMK, ms=2, seq=0),
    xadd_call("s", XA_MAXLEN, ms=3, maxlen=2), xadd_call("s", XA_MAXLEN | XA_APPROX, ms=4, maxlen=1),
    xadd_call("s", XA_MAXLEN | XA_APPROX | XA_LIMIT, ms=5, maxlen=1, limit=10),
    xadd_call("s", XA_MINID, ms=6, minid=(4, 0)), xadd_call("s", XA_MINID | XA_APPROX | XA_AUTO_SEQ, ms=7, minid=(5, 0)),
    xadd_call("s", XA_MINID | XA_APPROX | XA_LIMIT, ms=8, minid=(7, 0), limit=0),
    xadd_call("s", XA_MAXLEN | XA_LIMIT, ms=9, maxlen=2, limit=5), xadd_call("s", XA_MAXLEN, ms=9, maxlen=-1),
    xadd_call("s", XA_MAXLEN | XA_APPROX | XA_LIMIT, ms=9, maxlen=1, limit=-1),
    xadd_call("s", XA_MAXLEN | XA_MINID, ms=9, maxlen=1, minid=(1, 0)), xadd_call("s", XA_LIMIT, ms=9, limit=5),
    xadd_call("s", XA_LIMIT, ms=9, limit=0), xadd_call("s", ms=9, pairs=()),
    xadd_call("str", ms=1), xadd_call("str", XA_NOMK, ms=1), xadd_call("max", ms=U64, seq=U64),
    xadd_call("max", XA_AUTO_ID), xadd_call("max", XA_AUTO_SEQ, ms=U64), xadd_call("s", XA_MAXLEN, ms=10, maxlen=0),
]


class RingTests(unittest.TestCase):
    def server(self, *args):
        s = Server("goblin", list(args))
        self.addCleanup(s.cleanup)
        return s

    def run_script(self, srv, proto, commands):
        p = tool(srv, proto, "script")
        out, _ = p.communicate(script_input(commands), timeout=60 * gbtest.SLOW)
        self.assertEqual(p.returncode, 0, out[-500:])
        return split_replies(out)

    def socket_replies(self, srv, commands):
        out = []
        with Raw(srv) as r:
            for c in commands:
                out.append(r.call_raw(*c))
        return out

    def test_replies_equal_socket_path(self):
        """The same command stream over a ring and over the Unix socket, each on
        a fresh server, gives byte-identical replies (doubles are compared in the
        form the socket prints them)."""
        want = self.socket_replies(self.server(), CORPUS)
        for proto in PROTOCOLS:
            with self.subTest(proto=proto):
                got = self.run_script(self.server(), proto, CORPUS)
                self.assertEqual(len(got), len(want))
                for i, (g, w) in enumerate(zip(got, want)):
                    self.assertEqual(g, w, "command %d %r over %s" % (i, CORPUS[i], proto))

    def test_streams_equal_socket_path(self):
        """Stream commands, groups and a blocking read that times out give the
        same bytes over a ring as over the socket."""
        want = self.socket_replies(self.server(), STREAM_CORPUS)
        for proto in PROTOCOLS:
            with self.subTest(proto=proto):
                got = self.run_script(self.server(), proto, STREAM_CORPUS)
                self.assertEqual(len(got), len(want))
                for i, (g, w) in enumerate(zip(got, want)):
                    self.assertEqual(g, w, "command %d %r over %s" % (i, STREAM_CORPUS[i], proto))

    def test_typed_calls(self):
        for proto in PROTOCOLS:
            with self.subTest(proto=proto):
                srv = self.server()
                p = tool(srv, proto, "typed")
                out, _ = p.communicate(timeout=30 * gbtest.SLOW)
                text = out.decode(errors="replace")
                self.assertEqual(p.returncode, 0, text)
                for line in ("get hello 5", "get-missing -1", "incrby 5", "del 1", "hset 2", "hget v2", "zadd 2",
                             "zadd-incr 1 2", "zscore 1 -2.25", "lpush 3", "rpop x", "typed ok"):
                    self.assertIn(line, text)
                # LPUSH x y z leaves z at the head: BLPOP gets it, then times out (null array)
                self.assertIn("*2\r\n$3\r\nt:l\r\n$1\r\nz\r\n", text)
                self.assertIn("*-1\r\n", text)
                with Raw(srv) as r:
                    self.assertEqual(r.call("GET", "t:n"), b"5")
                    self.assertTrue(0 < int(r.call("PTTL", "t:ttl")) <= 100000)

    def typed_xadd(self, srv, proto, lines):
        p = tool(srv, proto, "xadd")
        out, _ = p.communicate("".join(l + "\n" for l in lines).encode(), timeout=60 * gbtest.SLOW)
        self.assertEqual(p.returncode, 0, out[-500:])
        return split_replies(out)

    def test_typed_xadd_equals_socket_xadd(self):
        """gb_ring_xadd (the XAdd template over SBE; the command over RESP)
        answers every option and every refusal with the bytes RESP XADD
        gives over the socket, and leaves the same streams."""
        def fresh():
            srv = self.server()
            with Raw(srv) as r:
                self.assertEqual(r.call("SET", "str", "x"), b"OK")
            return srv

        sock = fresh()
        want = self.socket_replies(sock, [cmd for _, cmd in XADD_CASES])
        self.assertIn(b"-ERR The ID specified in XADD is equal or smaller than the target stream top item\r\n", want)
        self.assertIn(b"-ERR The ID specified in XADD must be greater than 0-0\r\n", want)
        self.assertIn(b"-ERR syntax error, LIMIT cannot be used without the special ~ option\r\n", want)
        self.assertIn(b"$-1\r\n", want)
        with Raw(sock) as r:
            streams = [r.call_raw("XRANGE", k, "-", "+") for k in ("s", "new", "max")]
        for proto in PROTOCOLS:
            with self.subTest(proto=proto):
                srv = fresh()
                got = self.typed_xadd(srv, proto, [line for line, _ in XADD_CASES])
                self.assertEqual(len(got), len(want))
                for i, (g, w) in enumerate(zip(got, want)):
                    if XADD_CASES[i][1][-3] == "*" and w.startswith(b"$") and w != b"$-1\r\n":
                        self.assertRegex(g, rb"^\$\d+\r\n\d+-0\r\n$")  # a generated ID: its shape
                    else:
                        self.assertEqual(g, w, "case %d %r over %s" % (i, XADD_CASES[i][1], proto))
                with Raw(srv) as r:
                    self.assertEqual([r.call_raw("XRANGE", k, "-", "+") for k in ("s", "new", "max")], streams)

    def test_typed_xadd_propagates_as_resp_xadd(self):
        """Typed XADD's effects in the append-only log are RESP XADD's:
        "<ms>-*" and "*" become the ID given, "~" becomes "=" and what the
        trimming left, refusals and NOMKSTREAM's nil log nothing; with a
        MONITOR attached its line is the RESP form's."""
        calls = [xadd_call("s", ms=1, seq=1), xadd_call("s", XA_AUTO_SEQ, ms=1),
                 xadd_call("s", XA_MAXLEN | XA_APPROX, ms=2, maxlen=1), xadd_call("s", XA_MAXLEN, ms=3, maxlen=2),
                 xadd_call("s", XA_MINID | XA_APPROX | XA_LIMIT, ms=4, minid=(3, 0), limit=100),
                 xadd_call("s", ms=1, seq=0), xadd_call("none", XA_NOMK, ms=1), xadd_call("a", XA_AUTO_ID)]

        def aof(srv):
            def read():
                incr = sorted(glob.glob(os.path.join(srv.dir, "appendonlydir", "*.incr.aof")))
                return open(incr[-1], "rb").read() if incr else b""
            self.assertTrue(wait_until(lambda: read().count(b"XADD") == 6, 10 * gbtest.SLOW), read())
            return re.sub(rb"\d{10,}-\d+", b"<gen>", read())  # the "*" entry's ID is the clock's

        sock = self.server("--appendonly", "yes")
        self.socket_replies(sock, [cmd for _, cmd in calls])
        want = aof(sock)
        self.assertIn(b"$3\r\n1-2\r\n", want)  # "1-*" as the ID it became
        self.assertNotIn(b"$1\r\n~\r\n", want)  # "~" as "=" and what the trimming left
        for proto in PROTOCOLS:
            with self.subTest(proto=proto):
                srv = self.server("--appendonly", "yes")
                self.typed_xadd(srv, proto, [line for line, _ in calls])
                self.assertEqual(aof(srv), want)

        # MONITOR: each typed call shows as its RESP form.
        srv = self.server()
        with Raw(srv) as m:
            self.assertEqual(m.call("MONITOR"), b"OK")
            self.typed_xadd(srv, "sbe", [line for line, _ in calls[:3]])
            text = m.read_until(b"\"2-0\" \"f\" \"v\"\r\n", timeout=10 * gbtest.SLOW).decode()
        got = [l.split("] ", 1)[1] for l in text.splitlines() if '"XADD"' in l]
        self.assertEqual(got, ['"XADD" "s" "1-1" "f" "v"', '"XADD" "s" "1-*" "f" "v"',
                               '"XADD" "s" "MAXLEN" "~" "1" "2-0" "f" "v"'])

    def test_typed_xadd_wakes_blocked_readers(self):
        """A typed XADD serves a socket client blocked in XREAD and one in
        XREADGROUP, as RESP XADD does."""
        for proto in PROTOCOLS:
            with self.subTest(proto=proto):
                srv = self.server()
                with Raw(srv) as r, Raw(srv) as g, Raw(srv) as x:
                    self.assertEqual(r.call("XGROUP", "CREATE", "jobs", "grp", "$", "MKSTREAM"), b"OK")
                    x.send_cmd("XREAD", "BLOCK", "0", "STREAMS", "jobs", "$")
                    g.send_cmd("XREADGROUP", "GROUP", "grp", "c1", "BLOCK", "0", "STREAMS", "jobs", ">")
                    self.assertTrue(wait_until(lambda: srv.info("clients")["blocked_clients"] == "2",
                                               10 * gbtest.SLOW))
                    self.assertEqual(self.typed_xadd(srv, proto, [xadd_call("jobs", ms=5, pairs=("job", "1"))[0]]),
                                     [b"$3\r\n5-0\r\n"])
                    entry = [[b"jobs", [[b"5-0", [b"job", b"1"]]]]]
                    self.assertEqual(x.read()[0], entry)
                    self.assertEqual(g.read()[0], entry)
                    self.assertEqual(r.call("XPENDING", "jobs", "grp")[0], 1)

    def test_claim_errors_and_full_pool(self):
        srv = self.server("--rings", "2")
        holders = [tool(srv, "resp", "hold", 30) for _ in range(2)]
        self.addCleanup(lambda: [h.kill() for h in holders])
        for h in holders:
            self.assertTrue(h.stdout.readline().startswith(b"claimed"))
        p = tool(srv, "resp", "hold", 1)
        out, _ = p.communicate(timeout=10 * gbtest.SLOW)
        self.assertIn(b"ring pool exhausted: all 2 slots are claimed", out)
        self.assertNotEqual(p.returncode, 0)
        with Raw(srv) as r:
            self.assertIn(b"only on the Unix socket",
                          Raw(srv, tcp=True).call("RING", "CLAIM", "RESP", "1"))
            self.assertIn(b"layout version mismatch", r.call("RING", "CLAIM", "RESP", "99"))
            self.assertIn(b"must be SBE or RESP", r.call("RING", "CLAIM", "XML", "1"))
            self.assertIn(b"holds no ring slot", r.call("RING", "RELEASE"))
            self.assertEqual(r.call("RING", "HELP")[0][:4], b"RING")
        info = srv.info("rings")
        self.assertEqual(info["ring_slots_claimed"], "2")
        for h in holders:
            h.kill()
            h.wait()
        self.assertTrue(wait_until(lambda: srv.info("rings")["ring_slots_claimed"] == "0", 1.0 * gbtest.SLOW),
                        "a closed control connection returns its slot within a second")

    def test_rings_disabled(self):
        srv = self.server("--rings", "0")
        with Raw(srv) as r:
            self.assertIn(b"rings are disabled", r.call("RING", "CLAIM", "RESP", "1"))

    def test_fifty_clients_churn(self):
        srv = self.server("--rings", "16")
        procs = [tool(srv, PROTOCOLS[i % len(PROTOCOLS)], "churn", 10) for i in range(50)]
        for p in procs:
            out, _ = p.communicate(timeout=120 * gbtest.SLOW)
            self.assertEqual(p.returncode, 0, out)
        with Raw(srv) as r:
            self.assertEqual(r.call("GET", "churn:counter"), b"500")
        self.assertTrue(wait_until(lambda: srv.info("rings")["ring_slots_claimed"] == "0", 2 * gbtest.SLOW))
        self.assertEqual(srv.info("rings")["ring_violations_total"], "0")

    def test_sigkill_mid_request(self):
        srv = self.server("--rings", "8")
        loops = [tool(srv, PROTOCOLS[i % len(PROTOCOLS)], "loop") for i in range(3)]
        self.addCleanup(lambda: [p.kill() for p in loops])
        for p in loops:
            self.assertEqual(p.stdout.readline(), b"looping\n")
        time.sleep(0.2)
        loops[0].send_signal(signal.SIGKILL)
        loops[0].wait()
        self.assertTrue(wait_until(lambda: srv.info("rings")["ring_slots_claimed"] == "2", 1.0 * gbtest.SLOW),
                        "the killed client's slot is reclaimed within a second")
        with Raw(srv) as r:
            a = int(r.call("GET", "loop:counter"))
            # They keep going: the counter moves on within 2 s x SLOW (a wait, not a 0.3 s window).
            self.assertTrue(wait_until(lambda: int(r.call("GET", "loop:counter")) > a, 2 * gbtest.SLOW),
                            "the surviving ring clients keep going")
        for p in loops[1:]:
            self.assertIsNone(p.poll())
        self.assertTrue(srv.ping_ok())

    def test_quit_closes_the_ring(self):
        """QUIT answers OK, then the server closes the ring: a client waiting
        for replies in short slices (ring_tool relay, stdin left open) sees the
        ring closed, not a timeout after another, and the slot is free again."""
        srv = self.server()
        for proto in PROTOCOLS:
            with self.subTest(proto=proto):
                p = tool(srv, proto, "relay")
                self.addCleanup(lambda p=p: (p.kill(), p.communicate()))
                p.stdin.write(gbtest.encode("QUIT") + gbtest.encode("PING"))
                p.stdin.flush()
                out, deadline = b"", time.time() + 10 * gbtest.SLOW
                while time.time() < deadline and select.select([p.stdout], [], [], deadline - time.time())[0]:
                    d = os.read(p.stdout.fileno(), 4096)
                    if not d:
                        break
                    out += d
                self.assertEqual(p.wait(timeout=10 * gbtest.SLOW), 0, out)
                self.assertEqual(out, b"+OK\r\n")
                self.assertTrue(wait_until(lambda: srv.info("rings")["ring_slots_claimed"] == "0", 2 * gbtest.SLOW))

    def test_quit_after_replies_waiting_for_room(self):
        """QUIT behind replies that wait for room in the response ring: every
        reply reaches the client, then +OK, then the ring closes (Redis
        writes everything before a CLIENT_CLOSE_AFTER_REPLY close). The
        replies still queued were thrown away: 786,432 of 1.6 MB came."""
        srv = self.server()
        value = b"v" * 200000
        with Raw(srv) as r:
            r.call("SET", "big", value)
        for proto in PROTOCOLS:
            with self.subTest(proto=proto):
                p = relay(self, srv, proto)
                p.stdin.write(gbtest.encode("GET", "big") * 8 + gbtest.encode("QUIT"))
                p.stdin.flush()
                out, deadline = b"", time.time() + 20 * gbtest.SLOW
                while time.time() < deadline and select.select([p.stdout], [], [], deadline - time.time())[0]:
                    d = os.read(p.stdout.fileno(), 1 << 16)
                    if not d:
                        break
                    out += d
                self.assertEqual(out, (b"$200000\r\n" + value + b"\r\n") * 8 + b"+OK\r\n")
                self.assertTrue(wait_until(lambda: srv.info("rings")["ring_slots_claimed"] == "0", 2 * gbtest.SLOW))

    def test_requests_published_before_the_close_are_served(self):
        """A client that submits writes and closes at once (ring_tool relay:
        stdin ends, it closes without reading): what it published is
        served, as a socket's bytes before its EOF are. The slot was
        released at the control connection's close, dropping some (4 in
        100 on the libuv engine, whose socket reads come first)."""
        srv = self.server("--io-engine", "libuv")
        for round in range(10):
            for proto in PROTOCOLS:
                p = subprocess.Popen([RING_TOOL, srv.sock, proto, "relay"], stdin=subprocess.PIPE,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                p.communicate(b"".join(gbtest.encode("SET", "k:%s:%d:%d" % (proto, round, i), "v")
                                       for i in range(50)), timeout=30 * gbtest.SLOW)
        with Raw(srv) as r:
            self.assertTrue(wait_until(lambda: r.call("DBSIZE") == 500 * len(PROTOCOLS), 5 * gbtest.SLOW),
                            r.call("DBSIZE"))

    def test_client_gone_during_its_busy_script(self):
        """A ring client whose process dies while its script runs past
        busy-reply-threshold: the busy pump reads its control connection's
        EOF, and the slot's client was freed under the running script, so
        SCRIPT KILL crashed the server. It now goes once the script ends."""
        srv = self.server("--busy-reply-threshold", "100")
        for proto in PROTOCOLS:
            with self.subTest(proto=proto):
                p = relay(self, srv, proto)
                p.stdin.write(gbtest.encode("EVAL", "while true do end", "0"))
                p.stdin.flush()
                with Raw(srv) as r:
                    self.assertTrue(wait_until(lambda: isinstance(r.call("PING"), gbtest.Err), 5 * gbtest.SLOW))
                    p.kill()
                    p.wait()
                    time.sleep(0.3)  # the busy pump sees the EOF
                    self.assertEqual(r.call("SCRIPT", "KILL"), b"OK")
                    self.assertTrue(wait_until(lambda: r.call("PING") == b"PONG", 5 * gbtest.SLOW))
                    self.assertTrue(wait_until(lambda: srv.info("rings")["ring_slots_claimed"] == "0",
                                               2 * gbtest.SLOW))

    def test_timeout_spares_a_ring_in_use(self):
        """`timeout` closes an idle client, not one whose traffic goes over
        its ring: the control connection is quiet after RING CLAIM, and an
        active ring client was cut off after `timeout` seconds."""
        srv = self.server("--timeout", "1")
        p = relay(self, srv, "resp")
        replies = b""
        for i in range(8):  # 2.4 s of INCRs, one every 0.3 s
            p.stdin.write(gbtest.encode("INCR", "n"))
            p.stdin.flush()
            time.sleep(0.3)
        p.stdin.write(gbtest.encode("GET", "n"))
        p.stdin.flush()
        deadline = time.time() + 5 * gbtest.SLOW
        while not replies.endswith(b"$1\r\n8\r\n") and time.time() < deadline and \
                select.select([p.stdout], [], [], deadline - time.time())[0]:
            d = os.read(p.stdout.fileno(), 4096)
            if not d:
                break
            replies += d
        self.assertEqual(replies, b"".join(b":%d\r\n" % i for i in range(1, 9)) + b"$1\r\n8\r\n")

    def test_hostile_scribbler(self):
        for proto in PROTOCOLS:
            with self.subTest(proto=proto):
                srv = self.server("--rings", "4")
                good = tool(srv, "resp", "loop")
                self.addCleanup(good.kill)
                self.assertEqual(good.stdout.readline(), b"looping\n")
                bad = tool(srv, proto, "scribble", 2, 1234)
                out, _ = bad.communicate(timeout=60 * gbtest.SLOW)
                self.assertIn(b"server closed the ring", out, out)
                self.assertTrue(srv.ping_ok())
                self.assertGreaterEqual(int(srv.info("rings")["ring_violations_total"]), 1)
                self.assertRegex(srv.log(), r"Ring slot \d+ .*slot reset and client disconnected")
                with Raw(srv) as r:
                    a = int(r.call("GET", "loop:counter"))
                    self.assertTrue(wait_until(lambda: int(r.call("GET", "loop:counter")) > a, 2 * gbtest.SLOW),
                                    "the well-behaved ring client is unaffected")
                self.assertIsNone(good.poll())
                good.kill()
                good.wait()

    def victim_phase(self, victim, samples, pause_us):
        victim.stdin.write(b"%d %d\n" % (samples, pause_us))
        victim.stdin.flush()
        line = victim.stdout.readline().decode(errors="replace").split()
        self.assertTrue(line and line[0] == "ok", "victim: %r" % (line,))
        return int(line[1])

    @staticmethod
    def isolation_bound(alone_ns):
        return 4 * alone_ns + 1e6 * gbtest.SLOW

    def hostile_phase(self, srv, victim, mode, samples, pause_us):
        """One victim phase beside a ring_hostile neighbour in MODE, with the
        checks on what the neighbour itself saw; returns the victim's median."""
        bad = hostile(srv, "sbe", mode, 600)
        self.addCleanup(bad.kill)
        self.assertEqual(bad.stdout.readline(), b"ready\n", mode)
        time.sleep(0.05)
        with_bad = self.victim_phase(victim, samples, pause_us)
        self.assertIsNone(bad.poll(), "%s: the hostile neighbour itself died" % mode)
        bad.terminate()
        summary = bad.communicate(timeout=30 * gbtest.SLOW)[0].decode(errors="replace")
        stats = dict(re.findall(r"(\w+)=(-?\d+)", summary))
        self.assertIn("drained", stats, summary)
        # Nothing but its own (unsignalled) descriptor to drain: other clients' wake-ups never reach it.
        self.assertEqual(stats["drained"], "0", "%s: %s" % (mode, summary))
        if mode == "ring":
            self.assertGreater(int(stats["drops"]), 0, "the scribbler was dropped and re-claimed: " + summary)
        info = srv.info("rings")
        if mode == "truncate":
            # Sealed memory refuses (EPERM); elsewhere the server's SIGBUS guard drops the slot.
            self.assertTrue(stats["truncate_errno"] == "1" or int(info["ring_sigbus_caught_total"]) > 0,
                            "%s; %s" % (summary, info))
        if mode == "spam":
            self.assertGreater(int(info["ring_wake_mutes_total"]), 0, "the flooded descriptor was muted")
        return with_bad

    def test_hostile_neighbour_isolation(self):
        """A well-behaved ring client beside a neighbour that abuses its own slot
        in every way the protocol allows (ring_hostile's modes): the victim's
        replies stay correct and its latency stays close to its latency alone.
        The victim sends one PING after each idle pause, so the server is parked
        and the request must wake it through the victim's wake descriptor: the
        path a neighbour draining a shared descriptor used to stall until the
        server's next timer tick (~100 ms; 2700x the median alone).

        Phases alternate alone / hostile for each mode; each hostile median is
        compared with the alone phases on either side of it (same run, robust
        to the machine's drift), with a generous bound and up to three attempts:
        the test fails for a neighbour that delays the victim, not for a loaded
        machine."""
        samples = int(os.environ.get("GOBLIN_ISOLATION_SAMPLES", "60"))
        pause_us = 2000
        srv = self.server("--rings", "8", "--ring-spin-us", "20")
        victim = tool(srv, "sbe", "victim")
        self.addCleanup(victim.kill)
        self.assertTrue(victim.stdout.readline().startswith(b"claimed"))
        self.victim_phase(victim, 10, pause_us)  # warm up
        alone = [self.victim_phase(victim, samples, pause_us)]
        rows = []
        for mode in HOSTILE_MODES:
            # A delay the neighbour causes shows in every attempt; a spike from
            # whatever else shares this machine's cores (ctest runs two tests
            # at once on two cores) does not, so a mode gets three attempts.
            for attempt in range(3):
                with_bad = self.hostile_phase(srv, victim, mode, samples, pause_us)
                alone.append(self.victim_phase(victim, samples, pause_us))
                base = max(alone[-2], alone[-1])
                if with_bad < self.isolation_bound(base):
                    break
            rows.append((mode, with_bad, base))
        report = "\n".join("%-9s victim median %8.1f us with the neighbour, %8.1f us alone (%.2fx)" %
                           (m, w / 1e3, b / 1e3, w / b) for m, w, b in rows)
        print("\n" + report)
        for mode, w, b in rows:
            self.assertLess(w, self.isolation_bound(b), "neighbour mode %s delays the victim:\n%s" % (mode, report))
        self.assertTrue(srv.ping_ok())
        self.assertIsNone(victim.poll(), "the victim is still running")
        self.assertTrue(wait_until(lambda: srv.info("rings")["ring_slots_claimed"] == "1", 2 * gbtest.SLOW),
                        "every slot the neighbour held is back in the pool")
        claimed = claimed_rings(srv)
        self.assertEqual(len(claimed), 1, claimed)
        self.assertIn("violations=0", claimed[0], "the victim's slot saw no violation")

    def test_blocking_over_ring(self):
        for proto in PROTOCOLS:
            with self.subTest(proto=proto):
                srv = self.server()
                p = tool(srv, proto, "script")
                p.stdin.write(script_input([["BLPOP", "q", "0"]]))
                p.stdin.flush()
                self.assertTrue(wait_until(lambda: srv.info("clients")["blocked_clients"] == "1", 10 * gbtest.SLOW))
                with Raw(srv) as r:
                    self.assertEqual(r.call("RPUSH", "q", "job"), 1)
                p.stdin.close()
                out = p.stdout.read()
                p.wait(timeout=10 * gbtest.SLOW)
                self.assertEqual(split_replies(out)[0], b"*2\r\n$1\r\nq\r\n$3\r\njob\r\n")

    def test_stream_group_blocking_over_ring(self):
        """A consumer parked in XREADGROUP BLOCK on a ring is woken by an
        XADD from a socket client, and its pending entry is recorded."""
        for proto in PROTOCOLS:
            with self.subTest(proto=proto):
                srv = self.server()
                with Raw(srv) as r:
                    self.assertEqual(r.call("XGROUP", "CREATE", "jobs", "g", "$", "MKSTREAM"), b"OK")
                p = tool(srv, proto, "script")
                p.stdin.write(script_input([["XREADGROUP", "GROUP", "g", "ring", "BLOCK", "0", "STREAMS", "jobs", ">"],
                                            ["XACK", "jobs", "g", "5-0"]]))
                p.stdin.flush()
                self.assertTrue(wait_until(lambda: srv.info("clients")["blocked_clients"] == "1", 10 * gbtest.SLOW))
                with Raw(srv) as r:
                    self.assertEqual(r.call("XADD", "jobs", "5-0", "job", "1"), b"5-0")
                    p.stdin.close()
                    out = p.stdout.read()
                    p.stdout.close()
                    p.wait(timeout=10 * gbtest.SLOW)
                    self.assertEqual(split_replies(out), [
                        b"*1\r\n*2\r\n$4\r\njobs\r\n*1\r\n*2\r\n$3\r\n5-0\r\n*2\r\n$3\r\njob\r\n$1\r\n1\r\n",
                        b":1\r\n"])
                    self.assertEqual(r.call("XPENDING", "jobs", "g"), [0, None, None, None])

    @unittest.skipUnless(os.path.exists("/proc/self/task"), "no /proc/<pid>/task: per-thread CPU times")
    def test_claim_churn_costs_the_engine_little(self):
        """Children that claim a slot and die, in a loop (ring_hostile's die
        mode, 2 s): the engine thread's CPU time per connection stays small.
        Released slots are refilled on a background-class thread, which tells
        the loop through a wake descriptor; with a uv_async_t, libuv 1.44's
        loop thread spun whenever that send's own wake-up preempted the
        sender (1.3 ms of engine CPU per connection on the development VM,
        against ~0.2 ms; the bound sits between)."""
        srv = self.server("--rings", "8")
        task_stat = "/proc/%d/task/%d/stat" % (srv.pid, srv.pid)  # the main thread runs the loop

        def engine_cpu():
            with open(task_stat) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

        conns0, cpu0 = int(srv.info("stats")["total_connections_received"]), engine_cpu()
        bad = hostile(srv, "sbe", "die", 2)
        self.addCleanup(bad.kill)
        out = bad.communicate(timeout=60 * gbtest.SLOW)[0].decode(errors="replace")
        self.assertIn("hostile die done", out)
        cpu = engine_cpu() - cpu0
        conns = int(srv.info("stats")["total_connections_received"]) - conns0
        # Each churn is a fork, a claim and a death: under a sanitizer (SLOW)
        # a fork costs several times more, and 2 s hold fewer of them.
        self.assertGreater(conns, 50 / gbtest.SLOW, "the neighbour churned: " + out)
        per_conn_ms = cpu * 1e3 / conns
        print("\nclaim churn: %d connections in 2 s, engine thread %.2f s of CPU, %.3f ms per connection"
              % (conns, cpu, per_conn_ms))
        self.assertLess(per_conn_ms, 0.6 * gbtest.SLOW)
        self.assertTrue(srv.ping_ok())

    def test_idle_server_cpu(self):
        """Once the spin budget is spent, a server with attached (idle) ring
        clients sleeps: under 1% of a core."""
        srv = self.server("--ring-spin-us", "50")
        holders = [tool(srv, proto, "hold", 10) for proto in PROTOCOLS]
        self.addCleanup(lambda: [h.kill() for h in holders])
        for h in holders:
            self.assertTrue(h.stdout.readline().startswith(b"claimed"))
        # Asked over a connection opened before: a new one's first request
        # may be served in the same loop iteration that accepted it (the
        # io_uring path receives it at once), before the loop sleeps.
        r = gbtest.Raw(srv)
        self.addCleanup(r.close)
        r.call("PING")
        time.sleep(0.5)

        c0, t0 = gbtest.cpu_seconds_of(srv.pid), time.time()
        time.sleep(3)
        used = (gbtest.cpu_seconds_of(srv.pid) - c0) / (time.time() - t0)
        # 1% of a core: the cron's ticks, which a sanitizer slows
        self.assertLess(used, 0.01 * gbtest.SLOW, "idle server used %.2f%% of a core" % (used * 100))
        rings = gbtest.parse_info(r.call("INFO", "rings").decode())
        self.assertEqual(rings["ring_server_parked"], "yes")
        self.assertGreaterEqual(int(rings["ring_server_parks_total"]), 1)

    def test_a_reader_that_falls_behind(self):
        """A ring client that stops reading: once its response ring is full
        the rest of its replies wait in the server (pending_bytes), and the
        server sleeps (under 1% of a core, times gbtest.SLOW under a
        sanitizer, measured while nobody asks it anything) instead of spinning on a ring that has no room. When the
        client reads again it finds the ring empty, sees PARKED_FOR_ROOM and
        wakes the server, and gets every reply in order. With hz 1 a missed wake-up would leave each refill to the next
        timer tick: a second for each of the ~50 ring-fulls here."""
        value = b"v" * 8192
        n = 400
        want = (b"$%d\r\n" % len(value) + value + b"\r\n") * n
        for proto in PROTOCOLS:
            with self.subTest(proto=proto):
                srv = self.server("--ring-size", "65536", "--ring-spin-us", "50", "--hz", "1")
                with Raw(srv) as r:
                    r.call("SET", "big", value)
                p = relay(self, srv, proto)
                p.stdin.write(b"*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n" * n)
                p.stdin.flush()

                def pending():
                    m = re.search(r"pending_bytes=(\d+)", only_claimed_ring(srv))
                    return int(m.group(1)) if m else 0

                def stalled():
                    # Every INFO wakes the server (ring_server_parked reads
                    # "no" while it answers): what shows the stall is a queue
                    # that stopped moving, and the CPU time below.
                    before = pending()
                    time.sleep(0.05)
                    return before > 0 and pending() == before

                self.assertTrue(wait_until(stalled, 10 * gbtest.SLOW), str(srv.info("rings")))
                c0, t0 = gbtest.cpu_seconds_of(srv.pid), time.time()
                time.sleep(2)
                used = (gbtest.cpu_seconds_of(srv.pid) - c0) / (time.time() - t0)
                # A server spinning on the full ring uses the whole core; one
                # asleep, its timer's ticks only, which a sanitizer slows (under
                # ThreadSanitizer, on a loaded machine, 1.5% once).
                self.assertLess(used, 0.01 * gbtest.SLOW,
                                "a server holding unread replies used %.2f%% of a core" % (used * 100))

                t0 = time.time()
                got = bytearray()
                while len(got) < len(want):
                    if not select.select([p.stdout], [], [], 30 * gbtest.SLOW)[0]:
                        break
                    d = os.read(p.stdout.fileno(), 1 << 16)
                    if not d:
                        break
                    got += d
                took = time.time() - t0
                self.assertEqual(len(got), len(want), p.stderr.read1().decode(errors="replace") if p.poll() else "")
                self.assertTrue(got == want, "the replies arrived in order and intact")
                self.assertLess(took, 10 * gbtest.SLOW, "the reader waited for timer ticks, not for its own wake-ups")
                self.assertTrue(wait_until(lambda: "pending_bytes=0" in only_claimed_ring(srv), 5 * gbtest.SLOW),
                                only_claimed_ring(srv))
                p.stdin.close()
                self.assertEqual(p.wait(timeout=10 * gbtest.SLOW), 0)
                print("\n%s: %d replies (%d KB) read in %.3f s after the stall" % (proto, n, len(want) // 1024, took))

    def test_a_pipeline_larger_than_both_rings(self):
        """A client may send a pipeline of any size before it reads, as over
        a socket: 20,000 GETs (620 KB of requests) through 64 KB rings, with
        40 MB of replies. The relay sends all of them before it reads any
        (it reads only between batches from stdin), so once the response
        ring is full the server must keep taking requests and queue their
        replies; when it stopped taking them instead, the relay waited for
        room in its request ring and the server for it to read (an SBE relay
        got no reply at all in 10 s)."""
        value = b"v" * 2048
        n = 20000
        reply = b"$%d\r\n" % len(value) + value + b"\r\n"
        request = b"*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n"
        for proto in PROTOCOLS:
            with self.subTest(proto=proto):
                srv = self.server("--ring-size", "65536")
                with Raw(srv) as r:
                    r.call("SET", "big", value)
                p = relay(self, srv, proto)
                os.set_blocking(p.stdin.fileno(), False)
                out = request * n
                sent, got = 0, bytearray()
                while len(got) < len(reply) * n:
                    writing = [p.stdin] if sent < len(out) else []
                    readable, writable, _ = select.select([p.stdout], writing, [], 30 * gbtest.SLOW)
                    if not readable and not writable:
                        break
                    if writable:
                        try:
                            sent += os.write(p.stdin.fileno(), out[sent:sent + 65536])
                        except BlockingIOError:
                            pass
                    if readable:
                        d = os.read(p.stdout.fileno(), 1 << 20)
                        if not d:
                            break
                        got += d
                self.assertEqual((sent, len(got)), (len(out), len(reply) * n), "requests sent, reply bytes read")
                self.assertTrue(got == reply * n, "every reply intact and in order")
                os.set_blocking(p.stdin.fileno(), True)
                p.stdin.close()
                self.assertEqual(p.wait(timeout=10 * gbtest.SLOW), 0)
                self.assertTrue(srv.ping_ok())

    def test_info_shows_a_parked_client_and_its_wakes(self):
        """INFO rings per ring: a client waiting in BLPOP past its spin
        budget is parked (client_state=parked); the reply that ends the wait
        costs one futex wake (client_wakes), and nothing is left pending."""
        srv = self.server()
        p = subprocess.Popen([RING_TOOL, srv.sock, "resp", "script"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.addCleanup(lambda: (p.kill(), p.wait(), p.stdout.close()))
        p.stdin.write(b"3\n5\nBLPOP\n1\nq\n2\n30\n")
        p.stdin.flush()

        self.assertTrue(wait_until(lambda: "client_state=parked" in only_claimed_ring(srv), 10 * gbtest.SLOW),
                        only_claimed_ring(srv))
        self.assertIn("client_wakes=0,", only_claimed_ring(srv))
        with Raw(srv) as r:
            r.call("LPUSH", "q", "job")
        self.assertTrue(wait_until(lambda: "client_wakes=1," in only_claimed_ring(srv), 10 * gbtest.SLOW),
                        only_claimed_ring(srv))
        self.assertTrue(only_claimed_ring(srv).endswith("pending_bytes=0"), only_claimed_ring(srv))

    def test_sbe_scalar_replies_go_straight_onto_the_ring(self):
        """An SBE scalar reply is written onto the response ring as its
        command makes it (INFO rings: direct_replies), an array through the
        frame buffer; under appendfsync always never, since a write's
        acknowledgement waits for the log's sync."""
        commands = [("PING",), ("SET", "k", "v"), ("GET", "k"), ("RPUSH", "l", "a", "b"), ("LRANGE", "l", "0", "-1")]
        expected = b"+PONG\r\n+OK\r\n$1\r\nv\r\n:2\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n"
        for always in (False, True):
            with self.subTest(appendfsync_always=always):
                srv = self.server("--appendonly", "yes", "--appendfsync", "always" if always else "everysec")
                p = relay(self, srv, "sbe")
                for c in commands:
                    p.stdin.write(b"*%d\r\n" % len(c) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a.encode()) for a in c))
                p.stdin.flush()
                got = b""
                while len(got) < len(expected):
                    chunk = p.stdout.read1(65536)
                    self.assertTrue(chunk, got)
                    got += chunk
                self.assertEqual(got, expected)
                line = only_claimed_ring(srv)
                self.assertIn("requests=5,", line)
                self.assertIn("direct_replies=%d," % (0 if always else 4), line)

    @unittest.skipUnless(os.path.exists("/proc/self/numa_maps"), "no /proc/<pid>/numa_maps (not Linux or no NUMA)")
    def test_placement_cpu_binds_and_verifies(self):
        cpu = 1 if os.cpu_count() and os.cpu_count() > 1 else 0
        srv = self.server("--cpu", str(cpu), "--numa-arena")
        info = srv.info("rings")
        if info.get("ring_numa_node") == "-1":
            self.skipTest("kernel or container without NUMA: placement is a logged no-op (%s)" % srv.log()[-200:])
        node = info["ring_numa_node"]
        self.assertEqual(info["ring_placement_verified"], "yes")
        self.assertEqual(info["ring_engine_pinned"], "yes")
        with open("/proc/%d/numa_maps" % srv.pid) as f:
            lines = [l for l in f if "memfd:goblin-shm" in l]
        self.assertTrue(lines, "ring mappings are visible in numa_maps")
        for l in lines:
            nodes = re.findall(r"\bN(\d+)=", l)
            self.assertTrue(nodes, l)
            self.assertEqual(set(nodes), {node}, l)
        self.assertIn("bound strictly to NUMA node %s" % node, srv.log())

    @unittest.skipUnless(os.path.exists("/proc/sys/vm/nr_hugepages"), "no huge page pool on this system")
    def test_hugepages_from_empty_pool_is_fatal(self):
        with open("/proc/sys/vm/nr_hugepages") as f:
            if int(f.read()) != 0:
                self.skipTest("this machine has huge pages reserved; the empty-pool path needs nr_hugepages=0")
        srv = Server("goblin", ["--ring-hugepages", "yes", "--rings", "2"], wait=False)
        self.addCleanup(srv.cleanup)
        rc = srv.proc.wait(timeout=30 * gbtest.SLOW)
        log = srv.log()
        self.assertGreater(rc, 0, "exit status, not a signal or core dump: %s" % log)
        self.assertIn("huge", log.lower())
        self.assertIn("--ring-hugepages no", log)


if __name__ == "__main__":
    gbtest.run_tests()
