"""Connection-level rules of Redis 7.0's processCommand and client code,
each scenario run on goblin-core and redis-server and compared (a read-only
audit of the client, MULTI and pub/sub paths found each of these
differing):

  * no-multi commands (SAVE, SHUTDOWN, SYNC, PSYNC) refused inside MULTI,
    which dooms the transaction (goblin-core queued them: EXEC ran the
    SHUTDOWN);
  * CLIENT PAUSE WRITE holds EVAL, EVALSHA and FCALL unless their script
    declares no writes, and a MONITOR client may not run them;
  * `timeout` closes no subscriber and no MONITOR;
  * CLIENT REPLY OFF / SKIP silence replies, not pushes (messages,
    subscription confirmations, tracking invalidations);
  * a client killed by CLIENT KILL is gone at once: not counted by PUBLISH
    or NUMSUB, not killed twice, not listed;
  * HELLO's role on a replica; SSUBSCRIBE refused inside EXEC; a nested
    MULTI or a WATCH refused for memory inside MULTI; CLIENT INFO's flag
    letters (P before x, r for READONLY); a doomed transaction keeps
    nothing queued.
"""

import os
import re
import resource
import socket
import time
import unittest

import gbtest
import resp3
from gbtest import Raw, encode, wait_until


def both(test):
    return ((test.goblin, "goblin"), (test.redis, "redis"))


def masked(b):
    return re.sub(rb"\b(id|addr|laddr|fd|age|idle|qbuf|qbuf-free|argv-mem|multi-mem|rbs|rbp|obl|oll|omem|tot-mem|"
                  rb"redir)=[^ \n]*", rb"\1=*", b)


class ConnectionRules(gbtest.GoblinAndRedisCase):
    def setUp(self):
        for srv, _ in both(self):
            with Raw(srv) as c:
                c.call("FLUSHALL")
                c.call("CONFIG", "SET", "maxmemory", "0")
                c.call("CONFIG", "SET", "timeout", "0")

    def same(self, scenario):
        got = {name: scenario(srv) for srv, name in both(self)}
        self.assertEqual(got["goblin"], got["redis"])
        return got["goblin"]

    def test_no_multi_commands_doom_the_transaction(self):
        def scenario(srv):
            out = []
            for cmd in (["SHUTDOWN"], ["SAVE"], ["SYNC"], ["PSYNC", "?", "-1"]):
                with Raw(srv) as c:
                    c.send(encode("MULTI") + encode(*cmd) + encode("EXEC"))
                    out.append([c.read()[1] for _ in range(3)])
            with Raw(srv) as c:
                out.append(c.call("PING"))  # still serving
            return out
        out = self.same(scenario)
        self.assertEqual(out[0][1], b"-ERR Command not allowed inside a transaction\r\n")

    def test_a_write_pause_holds_scripts_that_may_write(self):
        scripts = [("EVAL", "return redis.call('set','k','v')", "0"), ("EVAL", "return 1", "0"),
                   ("EVAL", "#!lua\nreturn redis.call('set','k','v2')", "0"), ("FCALL", "wf", "0"),
                   ("EVALSHA", "SHA", "0")]
        free = [("EVAL", "#!lua flags=no-writes\nreturn 2", "0"), ("EVAL_RO", "return 3", "0")]

        def scenario(srv):
            with Raw(srv) as admin:
                admin.call("FUNCTION", "LOAD", "REPLACE",
                           "#!lua name=wl\nredis.register_function('wf', function() return redis.call('set','f','1') end)")
                sha = admin.call("SCRIPT", "LOAD", "return redis.call('incr','n')")
                out = []
                for cmd in scripts + free:
                    cmd = tuple(sha.decode() if a == "SHA" else a for a in cmd)
                    with Raw(srv) as c:
                        admin.call("CLIENT", "PAUSE", "100000", "WRITE")
                        c.send(encode(*cmd))
                        held = c.read_raw_available(0.3)
                        admin.call("CLIENT", "UNPAUSE")
                        out.append((cmd[0], held, c.read_raw_available(0.5) if not held else b""))
                with Raw(srv) as m:
                    m.call("MONITOR")
                    out.append(m.call_raw("EVAL", "return 1", "0"))
                return out
        out = self.same(scenario)
        self.assertEqual([o[1] for o in out[:len(scripts)]], [b""] * len(scripts), "held while paused")
        self.assertTrue(all(o[1] for o in out[len(scripts):-1]), "no-writes scripts run during the pause")

    def test_timeout_spares_subscribers_and_monitors(self):
        def scenario(srv):
            with Raw(srv) as admin:
                admin.call("CONFIG", "SET", "timeout", "1")
            try:
                sub, psub, mon, idle = Raw(srv), Raw(srv), Raw(srv), Raw(srv)
                sub.call("SUBSCRIBE", "ch")
                psub.call("PSUBSCRIBE", "c*")
                mon.call("MONITOR")
                idle.call("PING")
                time.sleep(3.5 * gbtest.SLOW)
                with Raw(srv) as p:
                    out = [p.call("PUBLISH", "ch", "x")]
                out.append(sub.read()[0])
                out.append(psub.read()[0])
                try:
                    idle.send(encode("PING"))
                    out.append(idle.read_raw_available(1.0))
                except (BrokenPipeError, ConnectionResetError):
                    out.append(b"")
                for c in (sub, psub, mon, idle):
                    c.close()
                return out
            finally:
                with Raw(srv) as admin:
                    admin.call("CONFIG", "SET", "timeout", "0")
        out = self.same(scenario)
        self.assertEqual(out[0], 2)
        self.assertEqual(out[3], b"")  # the idle plain client was closed

    def test_timeout_spares_a_client_sending_or_reading(self):
        """`timeout` counts every byte read or written as activity (Redis's
        lastinteraction): a request typed slowly and a big reply read
        steadily outlive it. goblin-core counted only commands and closed
        both."""
        def scenario(srv):
            with Raw(srv) as admin:
                admin.call("CONFIG", "SET", "timeout", "1")
                admin.call("SET", "big", "v" * (4 << 20))
            try:
                out = []
                with Raw(srv) as slow:
                    request = encode("SET", "s", "t")
                    for i in range(len(request)):  # one byte each 0.12 s: 3 s in all
                        slow.send(request[i:i + 1])
                        time.sleep(0.12)
                    out.append(slow.read()[0])
                with Raw(srv) as reader:
                    reader.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
                    reader.send(encode("GET", "big") + encode("PING"))
                    got, deadline = 0, time.time() + 30
                    while time.time() < deadline:  # 256 KB each 0.1 s: about 1.6 s for the 4 MB
                        d = reader.s.recv(256 << 10)
                        if not d:
                            break
                        got += len(d)
                        if got >= (4 << 20) + 20:
                            break
                        time.sleep(0.1)
                    out.append(got)
                return out
            finally:
                with Raw(srv) as admin:
                    admin.call("CONFIG", "SET", "timeout", "0")
        out = self.same(scenario)
        self.assertEqual(out, [b"OK", (4 << 20) + len(b"$4194304\r\n\r\n+PONG\r\n")])

    def test_query_buffer_limit_counts_what_is_not_parsed(self):
        """client-query-buffer-limit counts the bytes not yet parsed into
        arguments, as Redis counts its query buffer: with a 1 MB limit an
        MSET of two 600 KB values is served (goblin-core counted the
        request's first value too and closed the client)."""
        def scenario(srv):
            with Raw(srv) as admin:
                admin.call("CONFIG", "SET", "client-query-buffer-limit", "1mb")
            try:
                with Raw(srv) as c:
                    c.send(encode("MSET", "k1", "a" * 600000, "k2", "b" * 600000) + encode("STRLEN", "k2"))
                    return [c.read()[0], c.read()[0]]
            finally:
                with Raw(srv) as admin:
                    admin.call("CONFIG", "SET", "client-query-buffer-limit", "1gb")
        self.assertEqual(self.same(scenario), [b"OK", 600000])

    def test_output_limit_spares_the_first_16kb(self):
        """client-output-buffer-limit counts what is past the client's first
        16 KB of replies (Redis's reply list; its own buffer is not
        counted): under `normal 1kb 0 0` a 5000-byte GET and 300 pipelined
        PINGs are served, a 20000-byte one closes the client."""
        def scenario(srv):
            with Raw(srv) as admin:
                before = admin.call("CONFIG", "GET", "client-output-buffer-limit")[1]
                admin.call("CONFIG", "SET", "client-output-buffer-limit", "normal 1kb 0 0")
                admin.call("SET", "k5", "v" * 5000)
                admin.call("SET", "k20", "v" * 20000)
            try:
                out = []
                with Raw(srv) as c:
                    c.send(encode("GET", "k5") + encode("PING") + encode("PING") * 300)
                    out.append(len(c.read()[0]))
                    out.append({c.read()[0] for _ in range(301)})
                with Raw(srv) as c:
                    c.send(encode("GET", "k20"))
                    out.append(c.read_raw_available(1.0))
                return out
            finally:
                with Raw(srv) as admin:
                    admin.call("CONFIG", "SET", "client-output-buffer-limit", before)
        self.assertEqual(self.same(scenario), [5000, {b"PONG"}, b""])

    def test_reply_off_still_gets_pushes(self):
        def scenario(srv):
            out = []
            with Raw(srv) as c, Raw(srv) as pub:
                c.send(encode("CLIENT", "REPLY", "OFF") + encode("SUBSCRIBE", "ch"))
                time.sleep(0.1)
                pub.call("PUBLISH", "ch", "m")
                c.send(encode("UNSUBSCRIBE", "ch"))
                out.append(c.read_raw_available(0.5))
            with Raw(srv) as c:
                c.send(encode("CLIENT", "REPLY", "SKIP") + encode("SUBSCRIBE", "ch2") + encode("PING"))
                out.append(c.read_raw_available(0.5))
            with resp3.Conn(srv) as c, Raw(srv) as w:
                c.call(b"CLIENT", b"TRACKING", b"on")
                c.call(b"GET", b"tk")
                c.send(b"CLIENT", b"REPLY", b"OFF")
                time.sleep(0.1)
                w.call("SET", "tk", "1")
                out.append(resp3.plain(c.read()))
            return out
        self.same(scenario)

    def test_a_killed_client_is_gone_at_once(self):
        def scenario(srv):
            with Raw(srv) as a, Raw(srv) as b, Raw(srv) as d:
                b.call("SUBSCRIBE", "ch")
                bid = b"%d" % int(re.search(rb"id=(\d+)", a.call("CLIENT", "LIST")
                                            .split(b"\n")[[i for i, l in enumerate(a.call("CLIENT", "LIST").split(b"\n"))
                                                           if b"cmd=subscribe" in l][0]]).group(1))
                a.send(encode("MULTI") + encode("CLIENT", "KILL", "ID", bid) + encode("PUBLISH", "ch", "m")
                       + encode("CLIENT", "KILL", "TYPE", "pubsub") + encode("PUBSUB", "NUMSUB", "ch")
                       + encode("EXEC"))
                out = [a.read()[1] for _ in range(6)]
                did = d.call("CLIENT", "ID")
                a.send(encode("CLIENT", "KILL", "ID", did) + encode("CLIENT", "KILL", "ID", did)
                       + encode("CLIENT", "LIST", "ID", did) + encode("CLIENT", "UNBLOCK", did))
                out += [a.read()[1] for _ in range(4)]
                return out
        out = self.same(scenario)
        self.assertEqual(out[5], b"*4\r\n:1\r\n:0\r\n:0\r\n*2\r\n$2\r\nch\r\n:0\r\n")

    def test_argument_errors_in_redis_order(self):
        cases = [("CLIENT", "KILL", "TYPE", "foo", "x"), ("CLIENT", "KILL", "TYPE", "foo", "SKIPME"),
                 ("CLIENT", "KILL", "ID", "x", "SKIPME"), ("CLIENT", "KILL", "ID", "999999", "SKIPME"),
                 ("CLIENT", "KILL", "SKIPME", "maybe", "ID"), ("CLIENT", "UNBLOCK", "abc", "foo"),
                 ("CLIENT", "UNBLOCK", "abc", "error")]

        def scenario(srv):
            with Raw(srv) as c:
                return [c.call_raw(*cmd) for cmd in cases]
        self.same(scenario)

    def test_hello_role_on_a_replica(self):
        def scenario(srv):
            with Raw(srv) as c:
                c.call("REPLICAOF", "127.0.0.1", "1")
                try:
                    hello = c.call("HELLO", "2")
                    return hello[hello.index(b"role") + 1]
                finally:
                    c.call("REPLICAOF", "NO", "ONE")
        self.assertEqual(self.same(scenario), b"replica")

    def test_transaction_edges(self):
        def scenario(srv):
            out = []
            with Raw(srv) as c:
                c.send(encode("MULTI") + encode("SSUBSCRIBE", "s") + encode("SUBSCRIBE", "a")
                       + encode("PSUBSCRIBE", "p") + encode("EXEC") + encode("RESET"))
                out.append([c.read()[1] for _ in range(6)])
            with Raw(srv) as c, Raw(srv) as admin:
                c.send(encode("MULTI") + encode("SET", "x") + encode("GET", "a") + encode("GET", "b"))
                out.append([c.read()[1] for _ in range(4)])
                mine = [l for l in admin.call("CLIENT", "LIST").split(b"\n") if b"cmd=get" in l][0]
                out.append(re.search(rb"multi=\S+", mine).group(0))
                out.append(c.call_raw("EXEC"))
            with resp3.Conn(srv) as c, Raw(srv) as admin:
                c.call(b"SUBSCRIBE", b"z")
                c.call(b"MULTI")
                mine = [l for l in admin.call("CLIENT", "LIST").split(b"\n") if b"cmd=multi" in l][0]
                out.append(re.search(rb"flags=\S+", mine).group(0))
                c.call(b"DISCARD")
            with Raw(srv) as admin, Raw(srv) as c:
                admin.call("CONFIG", "SET", "maxmemory", "1")
                try:
                    for second in (["MULTI"], ["WATCH", "x"]):
                        c.send(encode("MULTI") + encode(*second) + encode("EXEC"))
                        out.append([c.read()[1] for _ in range(3)])
                finally:
                    admin.call("CONFIG", "SET", "maxmemory", "0")
            return out
        out = self.same(scenario)
        self.assertEqual(out[0][4][:4], b"*3\r\n")
        self.assertEqual(out[2], b"multi=0")
        self.assertEqual(out[4], b"flags=PxU")  # (a Unix-socket client)
        self.assertEqual(out[5][2], b"-EXECABORT Transaction discarded because of previous errors.\r\n")


class OpenFileLimit(unittest.TestCase):
    """maxclients against the open-file limit, as Redis's
    adjustOpenFilesLimit: a soft limit of 200 (systemd gives 1024) is
    raised at start-up, so 400 clients are served (goblin-core served 170
    and reset the rest, silently); a CONFIG SET maxclients past what the
    system grants is refused with Redis's text; a maxclients past the hard
    limit at start-up is lowered, logged with Redis's lines."""

    def test_raised_at_start_up_and_clients_served(self):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if hard != resource.RLIM_INFINITY and hard < 1000:
            self.skipTest("the hard open-file limit here is %d" % hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (200, hard))
        try:
            srv = gbtest.Server("goblin", args=["--maxclients", "500"])
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        try:
            self.assertIn("Increased maximum number of open files to %d (it was originally set to 200)." %
                          (500 + 32 + 2 * 16), srv.log())
            conns = [Raw(srv) for _ in range(400)]
            try:
                for c in conns:
                    c.send(b"PING\r\n")
                self.assertEqual({c.read()[0] for c in conns}, {b"PONG"})
            finally:
                for c in conns:
                    c.close()
        finally:
            srv.cleanup()

    def test_past_the_hard_limit(self):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if hard == resource.RLIM_INFINITY or hard > 10 ** 8:
            self.skipTest("no hard open-file limit here")
        srv = gbtest.Server("goblin", args=["--maxclients", str(hard + 1000)])
        try:
            granted = hard  # what the server could raise its soft limit to; Linux tells it exactly
            if os.path.exists("/proc/%d/limits" % srv.proc.pid):
                with open("/proc/%d/limits" % srv.proc.pid) as f:
                    granted = int(f.read().split("Max open files")[1].split()[0])
            fits = granted - (32 + 2 * 16)
            with Raw(srv) as c:
                self.assertEqual(c.call("CONFIG", "GET", "maxclients"), [b"maxclients", str(fits).encode()])
                self.assertEqual(c.call_raw("CONFIG", "SET", "maxclients", str(granted * 2)),
                                 b"-ERR CONFIG SET failed (possibly related to argument 'maxclients') - The operating "
                                 b"system is not able to handle the specified number of clients, try with %d\r\n"
                                 % fits)
                self.assertEqual(c.call("CONFIG", "GET", "maxclients"), [b"maxclients", str(fits).encode()])
            self.assertIn("maxclients has been reduced to %d to compensate for low ulimit." % fits, srv.log())
        finally:
            srv.cleanup()


if __name__ == "__main__":
    gbtest.run_tests()