"""The client commands of issue 16 against redis-server 7.0, each scenario
run on both servers and compared (byte for byte once addresses, ids, ages
and timestamps are masked):

  * CLIENT LIST / CLIENT INFO: Redis 7.0's fields in its order, the flags
    letters (O monitor, x multi, b blocked, t tracking, B bcast, R broken
    redirect, e no-evict, N), cmd=client|list form, redir=, resp=;
  * CLIENT REPLY ON|OFF|SKIP: which replies come back from a pipeline;
  * CLIENT PAUSE WRITE|ALL / UNPAUSE: a second client's commands wait or
    run; the pause ends at its timeout; keys do not expire while paused;
  * MONITOR: Redis's line format (quoting, redaction, db, MULTI/EXEC
    order, what is not shown), a monitor refused keyspace commands;
  * CLIENT TRACKING (RESP3 pushes): default mode, OPTIN/OPTOUT with CLIENT
    CACHING, NOLOOP, BCAST with prefixes, FLUSHALL, REDIRECT to a RESP3
    client and a broken redirect, CLIENT TRACKINGINFO/GETREDIR, every
    error text;
  * CLIENT TRACKING REDIRECT from RESP2 to a RESP2 client subscribed to
    __redis__:invalidate (messages), and to one subscribed to nothing;
  * RESET: back to db 0, RESP2, no name, no MULTI, tracking and MONITOR
    off, subscriptions dropped;
  * the memory figures of CLIENT LIST (argv-mem, multi-mem, qbuf-free of an
    idle client trimmed after 2 s, rbs/rbp, tot-mem), cmd= as the command
    last looked up, and the list's order and TYPE / ID filters.
"""

import re
import socket
import threading
import time

import gbtest
import resp3
from gbtest import encode, wait_until


def both(test):
    return ((test.goblin, "goblin"), (test.redis, "redis"))


def mask(b):
    """Addresses, ids, ages, memory figures and timestamps vary between
    servers: masked to their field names."""
    b = re.sub(rb"\b(id|addr|laddr|fd|age|idle|qbuf|qbuf-free|argv-mem|multi-mem|rbs|rbp|obl|oll|omem|tot-mem|redir)="
               rb"[^ \n]*", rb"\1=*", b)
    b = re.sub(rb"^\+\d+\.\d{6} \[(\d+) [^\]]*\]", rb"+T [\1 A]", b, flags=re.M)
    return b


class ClientCmdsTest(gbtest.GoblinAndRedisCase):
    def conn(self, srv, proto=3):
        return resp3.Conn(srv, tcp=True, proto=proto)

    # ---- CLIENT LIST / INFO ---------------------------------------------------------

    def test_client_list_fields(self):
        out = {}
        for srv, name in both(self):
            with self.conn(srv, proto=2) as a, self.conn(srv, proto=3) as b:
                a.call(b"CLIENT", b"SETNAME", b"first")
                a.call(b"SELECT", b"2")
                a.call(b"CLIENT", b"NO-EVICT", b"on")
                b.call(b"CLIENT", b"TRACKING", b"on", b"BCAST", b"PREFIX", b"x")
                info_a = a.call(b"CLIENT", b"INFO")
                info_b = b.call(b"CLIENT", b"INFO")
                a.call(b"MULTI")
                lst = b.call(b"CLIENT", b"LIST", b"ID", str(b.call(b"CLIENT", b"ID").value).encode())
                out[name] = (info_a.kind, mask(info_a.value), info_b.kind, mask(info_b.value), mask(lst.value))
        self.assertEqual(out["goblin"], out["redis"])
        # The order itself, spelled out (the comparison above already holds it).
        fields = [f.split(b"=")[0] for f in out["goblin"][1].split()]
        self.assertEqual(fields, [b"id", b"addr", b"laddr", b"fd", b"name", b"age", b"idle", b"flags", b"db", b"sub",
                                  b"psub", b"ssub", b"multi", b"qbuf", b"qbuf-free", b"argv-mem", b"multi-mem",
                                  b"rbs", b"rbp", b"obl", b"oll", b"omem", b"tot-mem", b"events", b"cmd", b"user",
                                  b"redir", b"resp"])
        self.assertIn(b" cmd=client|info ", out["goblin"][1])
        self.assertIn(b" flags=e ", out["goblin"][1])
        self.assertIn(b" flags=tB ", out["goblin"][3])

    # ---- CLIENT REPLY -----------------------------------------------------------------

    def test_client_reply(self):
        script = [[b"SET", b"a", b"1"], [b"CLIENT", b"REPLY", b"SKIP"], [b"SET", b"b", b"2"], [b"GET", b"a"],
                  [b"CLIENT", b"REPLY", b"OFF"], [b"GET", b"a"], [b"CLIENT", b"REPLY", b"SKIP"], [b"GET", b"b"],
                  [b"NOSUCH"], [b"CLIENT", b"REPLY", b"ON"], [b"GET", b"b"], [b"CLIENT", b"REPLY", b"SKIP"],
                  [b"NOSUCH"], [b"GET", b"a"], [b"CLIENT", b"REPLY", b"BOGUS"], [b"CLIENT", b"REPLY"],
                  [b"CLIENT", b"REPLY", b"SKIP"], [b"CLIENT", b"REPLY", b"SKIP"], [b"PING"], [b"PING", b"last"]]
        got = {}
        for srv, name in both(self):
            for proto in (2, 3):
                with self.conn(srv, proto=proto) as c:
                    c.call(b"FLUSHALL")
                    c.s.sendall(b"".join(encode(*a) for a in script) + encode(b"ECHO", b"--end--"))
                    data = b""
                    while not data.endswith(b"$7\r\n--end--\r\n"):
                        d = c.s.recv(65536)
                        self.assertTrue(d, "connection closed")
                        data += d
                    got[(name, proto)] = data
        self.assertEqual(got[("goblin", 2)], got[("redis", 2)])
        self.assertEqual(got[("goblin", 3)], got[("redis", 3)])
        self.assertEqual(got[("goblin", 2)],
                         b"+OK\r\n$1\r\n1\r\n+OK\r\n$1\r\n2\r\n$1\r\n1\r\n-ERR syntax error\r\n-ERR wrong number "
                         b"of arguments for 'client|reply' command\r\n$4\r\nlast\r\n$7\r\n--end--\r\n")

    # ---- CLIENT PAUSE -------------------------------------------------------------------

    def test_pause_write(self):
        for srv, name in both(self):
            with self.conn(srv) as a, self.conn(srv) as b:
                a.call(b"SET", b"k", b"v")
                self.assertEqual(a.call(b"CLIENT", b"PAUSE", b"100000", b"WRITE").raw, b"+OK\r\n", name)
                # Reads run, writes wait.
                self.assertEqual(b.call(b"GET", b"k").value, b"v", name)
                b.send(b"SET", b"k", b"w")
                self.assertFalse(b.pending(0.3 * gbtest.SLOW), name + ": SET ran during a WRITE pause")
                self.assertEqual(a.call(b"GET", b"k").value, b"v", name)
                self.assertEqual(a.call(b"CLIENT", b"UNPAUSE").raw, b"+OK\r\n", name)
                self.assertEqual(b.read().raw, b"+OK\r\n", name)
                self.assertEqual(a.call(b"GET", b"k").value, b"w", name)

    def test_pause_all_and_timeout(self):
        for srv, name in both(self):
            with self.conn(srv) as a, self.conn(srv) as b:
                pause_s = 0.6 * gbtest.SLOW
                t0 = time.monotonic()
                self.assertEqual(a.call(b"CLIENT", b"PAUSE", str(int(pause_s * 1000)).encode(), b"ALL").raw,
                                 b"+OK\r\n")
                # Everything waits (CLIENT UNPAUSE too, as in Redis 7.0),
                # until the timeout: the PONG comes no sooner than the end of
                # a pause that began after t0. (Timing the PING alone left
                # it only what remained of the pause when the test got to
                # send it, which a stall on a loaded machine could shrink.)
                r = b.call(b"PING")
                elapsed = time.monotonic() - t0
                self.assertEqual(r.raw, b"+PONG\r\n")
                self.assertGreaterEqual(elapsed, pause_s - 0.02, "%s: PONG %.3f s after the PAUSE was sent, "
                                        "the pause lasts %.3f s" % (name, elapsed, pause_s))

    def test_pause_keeps_expired_keys_and_multi(self):
        for srv, name in both(self):
            with self.conn(srv) as a, self.conn(srv) as b:
                a.call(b"FLUSHALL")
                # The key expires at one absolute instant (PXAT) far enough
                # ahead that the pause begins before it on a loaded machine
                # (with PX 50 the active sweep could reclaim it first); then
                # it expires while paused.
                deadline = time.time() + 1.0
                a.call(b"SET", b"e", b"v", b"PXAT", str(int(deadline * 1000)).encode())
                a.call(b"CLIENT", b"PAUSE", b"100000", b"WRITE")
                self.assertLess(time.time(), deadline, name + ": the pause began after the key's deadline")
                time.sleep(max(0.0, deadline - time.time()) + 0.2)
                # Reads see the key gone, but nothing deletes it while paused.
                self.assertEqual(b.call(b"GET", b"e").kind, "_", name)
                self.assertEqual(b.call(b"DBSIZE").value, 1, name)
                # A transaction: queueing a write waits too (Redis pauses
                # before queueing); EXEC of reads runs.
                self.assertEqual(b.call(b"MULTI").raw, b"+OK\r\n")
                self.assertEqual(b.call(b"GET", b"x").raw, b"+QUEUED\r\n")
                b.send(b"INCR", b"x")
                self.assertFalse(b.pending(0.3 * gbtest.SLOW), name)
                a.call(b"CLIENT", b"UNPAUSE")
                self.assertEqual(b.read().raw, b"+QUEUED\r\n", name)
                self.assertEqual(b.call(b"EXEC").raw, b"*2\r\n_\r\n:1\r\n", name)
                self.assertTrue(resp3.wait_for(lambda: b.call(b"DBSIZE").value == 1, 5), name)

    def test_pause_errors(self):
        for argv in ([b"CLIENT", b"PAUSE", b"abc"], [b"CLIENT", b"PAUSE", b"-1"], [b"CLIENT", b"PAUSE", b"10", b"X"],
                     [b"CLIENT", b"PAUSE", b"10", b"WRITE", b"x"], [b"CLIENT", b"PAUSE"], [b"CLIENT", b"UNPAUSE", b"x"],
                     [b"CLIENT", b"PAUSE", b"abc", b"BOGUS"], [b"CLIENT", b"PAUSE", b"9223372036854775807"],
                     [b"CLIENT", b"NO-EVICT", b"maybe"], [b"CLIENT", b"NO-EVICT"], [b"CLIENT", b"NO-EVICT", b"off"]):
            got = []
            for srv, name in both(self):
                with self.conn(srv, proto=2) as c:
                    got.append(c.call(*argv).raw)
                    c.call(b"CLIENT", b"UNPAUSE")
            self.assertEqual(got[0], got[1], argv)

    # ---- MONITOR --------------------------------------------------------------------------

    def test_monitor(self):
        script = [[b"SET", b"k", b"v a\"\\\x01\n\t\xff"], [b"MULTI"], [b"SET", b"x", b"1"], [b"GET", b"x"],
                  [b"EXEC"], [b"AUTH", b"pw"], [b"HELLO", b"2", b"AUTH", b"default", b"x"], [b"CLIENT", b"LIST"],
                  [b"CONFIG", b"GET", b"x"], [b"NOSUCH"], [b"GET"], [b"SELECT", b"3"], [b"PING"],
                  [b"LPOP", b"nokey"], [b"SELECT", b"0"], [b"ECHO", b""]]
        got = {}
        for srv, name in both(self):
            with self.conn(srv, proto=2) as m, self.conn(srv, proto=2) as a:
                self.assertEqual(m.call(b"MONITOR").raw, b"+OK\r\n")
                for argv in script:
                    a.call(*argv)
                a.call(b"ECHO", b"--end--")
                data = b""
                while b'"--end--"\r\n' not in data:
                    d = m.s.recv(65536)
                    self.assertTrue(d)
                    data += d
                # The monitor itself: PING runs (and is shown), keyspace
                # commands are refused, a second MONITOR answers nothing.
                tail = [m.call(b"PING").raw, mask(m.read().raw), m.call(b"GET", b"k").raw]
                m.send(b"MONITOR")
                tail.append(m.call(b"ECHO", b"after").raw)
                got[name] = (mask(data), tail)
        for x, y in zip(got["goblin"][0].split(b"\r\n"), got["redis"][0].split(b"\r\n")):
            self.assertEqual(x, y)
        self.assertEqual(got["goblin"], got["redis"])
        self.assertIn(b'+T [0 A] "SET" "k" "v a\\"\\\\\\x01\\n\\t\\xff"\r\n', got["goblin"][0])
        self.assertIn(b'"AUTH" "(redacted)"', got["goblin"][0])

    # ---- CLIENT TRACKING ------------------------------------------------------------------

    def pushes(self, c, wait=0.3):
        out = []
        while c.pending(wait * gbtest.SLOW):
            out.append(c.read().raw)
        return out

    def tracking_scenario(self, srv):
        """One run of the tracking scenarios; returns what each client saw."""
        log = []
        with self.conn(srv) as t, self.conn(srv) as w, self.conn(srv) as o:
            w.call(b"FLUSHALL")
            for k in (b"a", b"b", b"c"):
                w.call(b"SET", k, b"1")
            log.append(t.call(b"CLIENT", b"TRACKING", b"on").raw)
            t.call(b"GET", b"a")
            t.call(b"MGET", b"b", b"c")
            w.call(b"SET", b"a", b"2")
            log.append(self.pushes(t))
            w.call(b"SET", b"a", b"3")  # forgotten until read again
            log.append(self.pushes(t))
            w.call(b"DEL", b"b", b"c")
            log.append(self.pushes(t))
            # Its own write: the invalidation comes after the reply.
            t.call(b"GET", b"a")
            t.send(b"SET", b"a", b"4")
            log.append([t.read().raw] + self.pushes(t))
            # NOLOOP: nothing for its own writes.
            log.append(t.call(b"CLIENT", b"TRACKING", b"on", b"NOLOOP").raw)
            t.call(b"GET", b"a")
            t.call(b"SET", b"a", b"5")
            log.append(self.pushes(t))
            log.append(t.call(b"CLIENT", b"TRACKINGINFO").raw)
            log.append(t.call(b"CLIENT", b"TRACKING", b"off").raw)
            # OPTIN: only after CLIENT CACHING YES.
            log.append(t.call(b"CLIENT", b"TRACKING", b"on", b"OPTIN").raw)
            t.call(b"GET", b"a")
            w.call(b"SET", b"a", b"6")
            log.append(self.pushes(t))
            log.append(t.call(b"CLIENT", b"CACHING", b"yes").raw)
            log.append(t.call(b"CLIENT", b"TRACKINGINFO").raw)
            t.call(b"GET", b"a")
            t.call(b"GET", b"b")  # CACHING covered only the command after it
            w.call(b"SET", b"a", b"7")
            w.call(b"SET", b"b", b"7")
            log.append(self.pushes(t))
            log.append(t.call(b"CLIENT", b"CACHING", b"no").raw)
            t.call(b"CLIENT", b"TRACKING", b"off")
            # OPTOUT: all but after CLIENT CACHING NO.
            log.append(t.call(b"CLIENT", b"TRACKING", b"on", b"OPTOUT").raw)
            t.call(b"CLIENT", b"CACHING", b"no")
            t.call(b"GET", b"a")
            t.call(b"GET", b"b")
            w.call(b"MSET", b"a", b"8", b"b", b"8")
            log.append(self.pushes(t))
            # FLUSHALL: a null invalidation to every tracking client.
            t.call(b"GET", b"a")
            w.call(b"FLUSHALL")
            log.append(self.pushes(t))
            t.call(b"CLIENT", b"TRACKING", b"off")
            # BCAST with prefixes, and without (every key).
            log.append(t.call(b"CLIENT", b"TRACKING", b"on", b"BCAST", b"PREFIX", b"user:", b"PREFIX", b"obj:").raw)
            w.call(b"SET", b"user:1", b"x")
            w.call(b"SET", b"other", b"x")
            w.call(b"MSET", b"obj:2", b"y", b"obj:1", b"z", b"user:9", b"q")
            log.append(self.pushes(t))
            log.append(t.call(b"CLIENT", b"TRACKINGINFO").raw)
            log.append(t.call(b"CLIENT", b"TRACKING", b"on", b"BCAST", b"PREFIX", b"us").raw)
            log.append(t.call(b"CLIENT", b"TRACKING", b"on", b"BCAST", b"PREFIX", b"p1", b"PREFIX", b"p").raw)
            log.append(t.call(b"CLIENT", b"TRACKING", b"on").raw)
            t.call(b"CLIENT", b"TRACKING", b"off")
            # REDIRECT to a RESP3 client, then to one that goes away.
            oid = o.call(b"CLIENT", b"ID").value
            log.append(t.call(b"CLIENT", b"TRACKING", b"on", b"REDIRECT", str(oid).encode()).raw)
            log.append(t.call(b"CLIENT", b"GETREDIR").value == oid)
            t.call(b"GET", b"a")
            w.call(b"SET", b"a", b"9")
            log.append((self.pushes(t), self.pushes(o)))
            t.call(b"GET", b"a")
            o.close()
            # The server has dropped the redirect target before the next
            # write: a fixed pause could be too short on a loaded machine,
            # and the invalidation then went to the closing connection.
            self.assertTrue(resp3.wait_for(
                lambda: b"id=" not in w.call(b"CLIENT", b"LIST", b"ID", str(oid).encode()).value, 10),
                "%s kept the closed redirect client" % srv.kind)
            w.call(b"SET", b"a", b"10")
            got = self.pushes(t)
            log.append([re.sub(rb":\d+\r\n$", b":ID\r\n", g) for g in got])
            info = t.call(b"CLIENT", b"TRACKINGINFO").raw
            log.append(re.sub(rb"redirect\r\n:\d+", b"redirect\r\n:ID", info))
            log.append(b" flags=tR " in t.call(b"CLIENT", b"INFO").value)
            t.call(b"CLIENT", b"TRACKING", b"off")
            # Errors, in Redis's order.
            for argv in ([b"CLIENT", b"TRACKING", b"on", b"PREFIX", b"a"],
                         [b"CLIENT", b"TRACKING", b"on", b"OPTIN", b"OPTOUT"],
                         [b"CLIENT", b"TRACKING", b"on", b"BCAST", b"OPTIN"],
                         [b"CLIENT", b"TRACKING", b"on", b"REDIRECT", b"999999"],
                         [b"CLIENT", b"TRACKING", b"on", b"REDIRECT", b"abc"],
                         [b"CLIENT", b"TRACKING", b"on", b"REDIRECT", b"1", b"REDIRECT", b"1"],
                         [b"CLIENT", b"TRACKING", b"maybe"], [b"CLIENT", b"TRACKING", b"on", b"BOGUS"],
                         [b"CLIENT", b"TRACKING", b"on", b"PREFIX"], [b"CLIENT", b"CACHING", b"yes"],
                         [b"CLIENT", b"CACHING", b"maybe"], [b"CLIENT", b"TRACKING"], [b"CLIENT", b"CACHING"],
                         [b"CLIENT", b"GETREDIR", b"x"], [b"CLIENT", b"TRACKINGINFO", b"x"]):
                log.append(t.call(*argv).raw)
            t.call(b"CLIENT", b"TRACKING", b"on", b"OPTIN")
            log.append(t.call(b"CLIENT", b"CACHING", b"no").raw)
            log.append(t.call(b"CLIENT", b"TRACKING", b"on", b"OPTOUT").raw)
            log.append(t.call(b"CLIENT", b"TRACKING", b"on", b"BCAST").raw)
            log.append(t.call(b"CLIENT", b"GETREDIR").raw)
        return log

    def test_tracking(self):
        g = self.tracking_scenario(self.goblin)
        r = self.tracking_scenario(self.redis)
        for i, (x, y) in enumerate(zip(g, r)):
            self.assertEqual(x, y, "step %d" % i)
        self.assertEqual(len(g), len(r))
        # The first invalidation, spelled out.
        self.assertEqual(g[1], [b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\na\r\n"])

    def stale_cache_scenario(self, srv):
        """Invalidations a client-side cache needs in less common places:
        the keys a script reads (EVAL, FCALL: the keys they declare; an
        EVAL_RO that reads nothing remembers nothing), a *STORE over a key
        that had expired but was still stored, DEBUG RELOAD, and a BCAST
        client's keys expired by the cron while no one sends a command.
        goblin-core missed each of these once, and the cache kept serving
        the old value."""
        log = []
        with self.conn(srv) as t, self.conn(srv) as w, self.conn(srv) as b:
            w.call(b"FLUSHALL")
            w.call(b"FUNCTION", b"FLUSH")
            w.call(b"FUNCTION", b"LOAD", b"#!lua name=trk\nredis.register_function('rd', "
                                       b"function(k) return redis.call('get', k[1]) end)")
            for k in (b"s1", b"s2", b"s3"):
                w.call(b"SET", k, b"1")
            t.call(b"CLIENT", b"TRACKING", b"on")
            t.call(b"EVAL", b"return redis.call('get', KEYS[1])", b"1", b"s1")
            t.call(b"FCALL", b"rd", b"1", b"s2")
            t.call(b"EVAL_RO", b"return 1", b"1", b"s3")
            w.call(b"MSET", b"s1", b"2", b"s2", b"2", b"s3", b"2")
            log.append(sorted(self.pushes(t)))
            # a STORE over a key past its deadline, not yet deleted
            w.call(b"DEBUG", b"SET-ACTIVE-EXPIRE", b"0")
            w.call(b"SET", b"e", b"v", b"PX", b"1000")  # long enough for the GET to find it on a loaded machine
            t.call(b"GET", b"e")
            time.sleep(1.2)
            log.append(w.call(b"SUNIONSTORE", b"e", b"nokey").raw)
            log.append(self.pushes(t))
            w.call(b"DEBUG", b"SET-ACTIVE-EXPIRE", b"1")
            # DEBUG RELOAD: everything may have changed
            t.call(b"GET", b"s1")
            log.append(w.call(b"DEBUG", b"RELOAD").raw)
            log.append(self.pushes(t))
            # BCAST: keys the cron expires, no command in between
            log.append(b.call(b"CLIENT", b"TRACKING", b"on", b"BCAST", b"PREFIX", b"x:").raw)
            w.call(b"SET", b"x:1", b"v", b"PX", b"300")
            log.append(b.read().raw)  # the SET's own broadcast, then the expiry's alone
            log.append(self.pushes(b, 2.0))
        return log

    def test_stale_cache_cases(self):
        g = self.stale_cache_scenario(self.goblin)
        r = self.stale_cache_scenario(self.redis)
        self.assertEqual(g, r)
        self.assertEqual(g[0], [b">2\r\n$10\r\ninvalidate\r\n*1\r\n$2\r\ns1\r\n",
                                b">2\r\n$10\r\ninvalidate\r\n*1\r\n$2\r\ns2\r\n"])
        self.assertEqual(g[2], [b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\ne\r\n"])
        self.assertEqual(g[-1], [b">2\r\n$10\r\ninvalidate\r\n*1\r\n$3\r\nx:1\r\n"])

    def resp2_redirect_scenario(self, srv):
        """RESP2 client-side caching as redis-py 4 and Lettuce do it: the
        tracking connection redirects to a RESP2 connection subscribed to
        __redis__:invalidate, which gets each invalidation as a pub/sub
        message; a RESP2 target subscribed to nothing gets nothing."""
        log = []
        with self.conn(srv, proto=2) as t, self.conn(srv, proto=2) as w, self.conn(srv, proto=2) as s:
            w.call(b"FLUSHALL")
            w.call(b"SET", b"a", b"1")
            sid = s.call(b"CLIENT", b"ID").value
            # Not subscribed yet: the invalidation is dropped.
            log.append(t.call(b"CLIENT", b"TRACKING", b"on", b"REDIRECT", str(sid).encode()).raw)
            t.call(b"GET", b"a")
            w.call(b"SET", b"a", b"2")
            log.append(self.pushes(s))
            log.append(s.call(b"SUBSCRIBE", b"__redis__:invalidate").raw)
            t.call(b"GET", b"a")
            w.call(b"SET", b"a", b"3")
            log.append(self.pushes(s))
            t.call(b"GET", b"a")
            w.call(b"FLUSHALL")
            log.append(self.pushes(s))
            log.append(self.pushes(t))
            # RESET drops the subscriptions: no more messages, commands allowed again.
            log.append(s.call(b"RESET").raw)
            t.call(b"GET", b"a")
            w.call(b"SET", b"a", b"4")
            log.append(self.pushes(s))
            log.append(s.call(b"GET", b"a").raw)
            log.append(w.call(b"PUBSUB", b"NUMSUB", b"__redis__:invalidate").raw)
        return log

    def test_tracking_resp2_redirect(self):
        g = self.resp2_redirect_scenario(self.goblin)
        r = self.resp2_redirect_scenario(self.redis)
        self.assertEqual(g, r)
        self.assertEqual(g[3], [b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*1\r\n$1\r\na\r\n"])

    # ---- RESET --------------------------------------------------------------------------------

    def test_reset(self):
        got = {}
        for srv, name in both(self):
            with self.conn(srv) as c, self.conn(srv, proto=2) as m:
                c.call(b"CLIENT", b"SETNAME", b"nm")
                c.call(b"SELECT", b"5")
                c.call(b"CLIENT", b"TRACKING", b"on")
                c.call(b"WATCH", b"k")
                c.call(b"MULTI")
                c.call(b"SET", b"k", b"v")
                steps = [c.call(b"RESET").raw, c.call(b"CLIENT", b"GETNAME").raw, c.call(b"EXEC").raw,
                         c.call(b"CLIENT", b"TRACKINGINFO").raw, mask(c.call(b"CLIENT", b"INFO").value),
                         c.call(b"HGETALL", b"nokey").raw]
                m.call(b"MONITOR")
                steps += [m.call(b"RESET").raw, m.call(b"GET", b"nokey").raw]
                got[name] = steps
        self.assertEqual(got["goblin"], got["redis"])
        self.assertEqual(got["goblin"][0], b"+RESET\r\n")


def client_fields(admin, cid):
    """CLIENT LIST ID cid's fields as a dict (asked on another connection,
    so that asking does not make the client busy)."""
    line = admin.call("CLIENT", "LIST", "ID", str(cid)).decode().strip()
    return dict(w.split("=", 1) for w in line.split(" ") if "=" in w)


def memory_field(admin, cid, name):
    return int(client_fields(admin, cid)[name])


class ClientMemoryTest(gbtest.GoblinAndRedisCase):
    """CLIENT LIST / INFO's memory figures move as Redis 7.0's: argv-mem,
    multi-mem, the query buffer trimmed once a client is idle, the reply
    buffer's size and peak (rbs, rbp), tot-mem; cmd= is the command last
    looked up; the list's order, TYPE and ID filters."""

    def conns(self):
        out = []
        for srv, name in both(self):
            conn, admin = gbtest.Raw(srv), gbtest.Raw(srv)
            self.addCleanup(conn.close)
            self.addCleanup(admin.close)
            out.append((name, conn, admin, conn.call("CLIENT", "ID")))
        return out

    def test_argv_mem(self):
        for name, conn, admin, cid in self.conns():
            info = conn.call("CLIENT", "INFO").decode()
            self.assertIn(" qbuf=26 ", info, name)        # the request being run
            self.assertIn(" argv-mem=10 ", info, name)    # "CLIENT" + "INFO"
            # A request whose third argument has not all arrived: the two
            # complete ones are held.
            conn.send(b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$200000\r\n" + b"x" * 100000)
            self.assertTrue(wait_until(lambda: memory_field(admin, cid, "qbuf") >= 100000, 10), name)
            self.assertEqual(memory_field(admin, cid, "argv-mem"), 6, name)
            self.assertGreater(memory_field(admin, cid, "tot-mem"), 200000, name)
            conn.send(b"x" * 100000 + b"\r\n")
            self.assertEqual(conn.read()[0], b"OK", name)
            self.assertEqual(memory_field(admin, cid, "argv-mem"), 0, name)

    def test_multi_mem(self):
        for name, conn, admin, cid in self.conns():
            self.assertEqual(memory_field(admin, cid, "multi-mem"), 0, name)
            conn.call("MULTI")
            conn.call("SET", "a", "b")
            one = memory_field(admin, cid, "multi-mem")
            conn.call("SET", "abc", "defgh")
            two = memory_field(admin, cid, "multi-mem")
            self.assertGreaterEqual(one, 5, name)           # at least the arguments' bytes
            self.assertGreaterEqual(two - one, 11, name)
            conn.call("DISCARD")
            self.assertEqual(memory_field(admin, cid, "multi-mem"), 0, name)

    def test_idle_query_buffer_shrinks(self):
        conns = self.conns()
        for name, conn, admin, cid in conns:
            conn.call("PING")
            self.assertGreater(memory_field(admin, cid, "qbuf-free"), 4096, name)
        time.sleep(1)
        before = {}
        for name, conn, admin, cid in conns:
            # Not yet: Redis trims a client idle for more than 2 seconds.
            self.assertGreater(memory_field(admin, cid, "qbuf-free"), 4096, name)
            before[name] = memory_field(admin, cid, "tot-mem")
        for name, conn, admin, cid in conns:
            self.assertTrue(wait_until(lambda: memory_field(admin, cid, "qbuf-free") == 0, 8), name)
            self.assertLessEqual(memory_field(admin, cid, "tot-mem"), before[name] - 4096, name)
            self.assertEqual(conn.call("PING"), b"PONG", name)  # and it reads again

    def test_reply_buffer(self):
        conns = self.conns()
        for name, conn, admin, cid in conns:
            conn.call("SET", "big", "v" * 40000)
            conn.call("PING")
            # The reply buffer settles at Redis's minimum, 1 KiB, and its
            # peak never exceeds its size.
            self.assertTrue(wait_until(lambda: memory_field(admin, cid, "rbs") == 1024, 5), name)
            f = client_fields(admin, cid)
            self.assertLessEqual(int(f["rbp"]), int(f["rbs"]), name)
            self.assertEqual(len(conn.call("GET", "big")), 40000, name)
            f = client_fields(admin, cid)
            self.assertGreaterEqual(int(f["rbp"]), 1024, name)  # the reply filled at least the buffer
            self.assertLessEqual(int(f["rbp"]), int(f["rbs"]), name)
            total = sum(int(f[k]) for k in ("qbuf", "qbuf-free", "argv-mem", "multi-mem", "rbs", "omem"))
            self.assertGreater(int(f["tot-mem"]), total, name)
        for name, conn, admin, cid in conns:
            # Idle, the peak restarts from nothing and the buffer shrinks back.
            self.assertTrue(wait_until(lambda: client_fields(admin, cid)["rbp"] == "0" and
                                       client_fields(admin, cid)["rbs"] == "1024", 12), name)

    def test_cmd_is_the_command_last_looked_up(self):
        got = {}
        for name, conn, admin, cid in self.conns():
            steps = []
            for args in (("PING",), ("NOSUCH",), ("GET",), ("MULTI",), ("SET", "a", "b"), ("EXEC",),
                         ("CLIENT", "NOSUCH"), ("CLIENT",),
                         ("EVAL", "return redis.call('get', KEYS[1])", "1", "a")):
                conn.call(*args)
                steps.append(client_fields(admin, cid)["cmd"])
            got[name] = steps
        self.assertEqual(got["goblin"], got["redis"])
        self.assertEqual(got["goblin"][:3], ["ping", "NULL", "get"])

    def test_long_name_line_whole(self):
        name = "n" * 3000
        for srv, label in both(self):
            with gbtest.Raw(srv) as a, gbtest.Raw(srv) as b:
                a.call("CLIENT", "SETNAME", name)
                cid = a.call("CLIENT", "ID")
                for line in (a.call("CLIENT", "INFO").decode(), b.call("CLIENT", "LIST", "ID", str(cid)).decode()):
                    self.assertIn(" name=%s age=" % name, line, label)
                    self.assertTrue(line.endswith(" resp=2\n"), (label, line[-60:]))

    def test_list_order_type_and_ids(self):
        got = {}
        for srv, name in both(self):
            with gbtest.Raw(srv) as a, gbtest.Raw(srv) as b, gbtest.Raw(srv) as c:
                ids = [x.call("CLIENT", "ID") for x in (a, b, c)]
                b.call("SUBSCRIBE", "ch")

                def listed(*args):
                    reply = a.call("CLIENT", "LIST", *args)
                    if isinstance(reply, gbtest.Err):
                        return [reply]
                    text = reply.decode()
                    return [int(l.split(" ")[0][3:]) for l in text.splitlines() if l]

                every = listed()
                mine = [i for i in every if i in ids]
                got[name] = (mine == sorted(mine), [i for i in listed("TYPE", "pubsub") if i in ids],
                             [i for i in listed("TYPE", "normal") if i in ids],
                             listed("ID", str(ids[2]), str(ids[0]), str(ids[2]), "0", "-1", "999999"),
                             a.call_raw("CLIENT", "LIST", "ID", str(ids[0]), "x1"))
                got[name] = tuple(v if not isinstance(v, list) else [ids.index(i) if i in ids else i for i in v]
                                  for v in got[name])
        self.assertEqual(got["goblin"], got["redis"])
        self.assertEqual(got["goblin"][:4], (True, [1], [0, 2], [2, 0, 2]))


if __name__ == "__main__":
    gbtest.run_tests()
