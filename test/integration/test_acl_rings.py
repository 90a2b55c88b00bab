"""ACL over shared-memory rings (issue 18): a claim runs as the user that
claimed it; a connection that has not authenticated cannot claim; every
rule kind decides what a RESP ring and an SBE ring may run exactly as it
decides for a socket (the same commands as the same user give the same
bytes and the same ACL LOG entries); a typed SBE call is checked as its
RESP form; a refused ring request gets NOPERM on that ring and is logged
(reason, context, object, username as Redis logs that command); ACL
DELUSER, CLIENT KILL USER, SETUSER off and rule changes reach a ring's
claim as they reach a Redis connection; redis.call inside EVAL/FCALL sent
over a ring runs as the claimer (context "lua" in ACL LOG).

The ring client is test/integration/ring_tool.c (RING_TOOL, set by ctest),
claiming as RING_USER/RING_PASSWORD.
"""
import os
import subprocess
import unittest

import gbtest
from gbtest import Raw, Err, Server, SLOW, wait_until
from test_rings import script_input, split_replies

RING_TOOL = os.environ.get("RING_TOOL")
PROTOCOLS = ("resp", "sbe")

NOPERM_KEY = "NOPERM this user has no permissions to access one of the keys used as arguments"


def noperm_cmd(name):
    return "NOPERM this user has no permissions to run the '%s' command" % name


def ring_tool(srv, proto, mode, user=None, password="pw"):
    env = dict(os.environ)
    env.pop("RING_USER", None)
    env.pop("RING_PASSWORD", None)
    if user is not None:
        env["RING_USER"], env["RING_PASSWORD"] = user, password
    return subprocess.Popen([RING_TOOL, srv.sock, proto, mode], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env=env)


def entry(e):
    """An ACL LOG entry as a dict (its fields, without the list layout)."""
    return {e[i].decode(): e[i + 1] for i in range(0, len(e), 2)}


# A user with one rule of every kind: commands, a category less one of its
# commands, a subcommand, key patterns (read-write, read-only, write-only),
# channel patterns (PUBLISH to a permitted and a refused channel, at top
# level and inside MULTI) and a second selector.
SVC_RULES = ["on", ">pw", "+ring", "+ping", "+multi", "+exec", "+discard", "+publish", "+config|get", "+@string",
             "-append", "~k*", "%R~r*", "%W~w*", "&ch*", "(~s* +sadd)"]

# Commands as svc over each transport: allowed and refused by every rule
# kind, inside and outside MULTI.
CORPUS = [
    ["PING"], ["SET", "k1", "v"], ["GET", "k1"], ["GET", "other"], ["GET", "r1"], ["SET", "r1", "v"],
    ["SET", "w1", "v"], ["GET", "w1"], ["APPEND", "k1", "x"], ["LPUSH", "k2", "x"], ["CONFIG", "GET", "maxmemory"],
    ["CONFIG", "SET", "maxmemory", "0"], ["SADD", "s1", "m"], ["SADD", "k1", "m"], ["SELECT", "1"], ["FLUSHALL"],
    ["MSET", "k5", "1", "x5", "2"], ["MGET", "k1", "r1"],
    ["MULTI"], ["SET", "k3", "1"], ["LPUSH", "k4", "x"], ["EXEC"], ["MULTI"], ["GET", "other"], ["EXEC"],
    ["MULTI"], ["INCR", "k5"], ["GET", "r2"], ["EXEC"],
    ["PUBLISH", "ch1", "m"], ["PUBLISH", "news", "m"], ["MULTI"], ["PUBLISH", "ch2", "m"], ["PUBLISH", "x", "m"],
    ["EXEC"],
]


@unittest.skipUnless(RING_TOOL, "RING_TOOL is not set (ctest sets it)")
class RingRules(unittest.TestCase):
    def server(self, *args):
        s = Server("goblin", list(args))
        self.addCleanup(s.cleanup)
        return s

    def setuser(self, srv, name, *rules):
        with Raw(srv) as r:
            self.assertEqual(r.call("ACL", "SETUSER", name, *rules), b"OK")

    def acl_log(self, srv, password=None):
        with Raw(srv) as r:
            if password:
                self.assertEqual(r.call("AUTH", password), b"OK")
            return [entry(e) for e in r.call("ACL", "LOG")]

    def ring_script(self, srv, proto, commands, user):
        p = ring_tool(srv, proto, "script", user)
        out, _ = p.communicate(script_input(commands), timeout=60 * SLOW)
        self.assertEqual(p.returncode, 0, out[-500:])
        return split_replies(out)

    def ring_calls(self, srv, proto, lines, user):
        p = ring_tool(srv, proto, "calls", user)
        out, _ = p.communicate("".join(l + "\n" for l in lines).encode(), timeout=60 * SLOW)
        self.assertEqual(p.returncode, 0, out[-500:])
        return out.decode().splitlines()

    def test_unauthenticated_connection_cannot_claim(self):
        srv = self.server("--requirepass", "secret")
        with Raw(srv) as r:
            self.assertEqual(r.call("RING", "CLAIM", "SBE", "1"), Err(b"NOAUTH Authentication required."))
            self.assertEqual(r.call("RING", "CLAIM", "RESP", "1"), Err(b"NOAUTH Authentication required."))
        for proto in PROTOCOLS:
            with self.subTest(proto=proto):
                p = ring_tool(srv, proto, "hold")
                out, _ = p.communicate(timeout=30 * SLOW)
                self.assertNotEqual(p.returncode, 0)
                self.assertEqual(out, b"claim failed: NOAUTH Authentication required.\n")
                p = ring_tool(srv, proto, "hold", "default", "wrong")
                out, _ = p.communicate(timeout=30 * SLOW)
                self.assertEqual(out, b"claim failed: AUTH refused: WRONGPASS invalid username-password pair or "
                                      b"user is disabled.\n")
        # NOAUTH is not a denial Redis logs; the wrong passwords are.
        log = self.acl_log(srv, "secret")
        self.assertEqual([(e["reason"], e["object"], e["username"]) for e in log], [(b"auth", b"AUTH", b"default")])
        self.assertEqual(log[0]["count"], 2)
        with Raw(srv) as r:
            self.assertEqual(r.call("AUTH", "secret"), b"OK")
            self.assertIn(b"ring_slots_claimed:0\r\n", r.call("INFO", "rings"))

    def test_claim_needs_permission_for_ring(self):
        srv = self.server()
        self.setuser(srv, "noring", "on", ">pw", "+@read", "+ping", "~*")
        for proto in PROTOCOLS:
            with self.subTest(proto=proto):
                p = ring_tool(srv, proto, "hold", "noring")
                out, _ = p.communicate(timeout=30 * SLOW)
                self.assertNotEqual(p.returncode, 0)
                self.assertEqual(out.decode(), "claim failed: %s\n" % noperm_cmd("ring"))
        log = self.acl_log(srv)
        self.assertEqual(len(log), 1)
        self.assertEqual((log[0]["count"], log[0]["reason"], log[0]["context"], log[0]["object"],
                          log[0]["username"]), (2, b"command", b"toplevel", b"ring", b"noring"))
        self.assertIn(b" cmd=ring ", log[0]["client-info"])

    def test_claim_runs_as_its_user(self):
        srv = self.server()
        self.setuser(srv, "svc", *SVC_RULES)
        for proto in PROTOCOLS:
            with self.subTest(proto=proto):
                p = ring_tool(srv, proto, "calls", "svc")
                p.stdin.write(b"ping\n")
                p.stdin.flush()
                self.assertEqual(p.stdout.readline(), b"ok 0\n")
                with Raw(srv) as r:
                    lines = r.call("CLIENT", "LIST").decode().splitlines()
                ring = [l for l in lines if "transport=ring" in l]
                self.assertEqual(len(ring), 1, lines)
                self.assertIn(" user=svc ", ring[0])
                p.stdin.close()
                self.assertEqual(p.wait(timeout=30 * SLOW), 0)

    def test_every_rule_kind_as_on_a_socket(self):
        """The corpus as svc: over the socket, a RESP ring and an SBE ring
        (generic template), each on a fresh server: the same reply bytes, and
        the same ACL LOG entries but for the client's description."""
        sock_srv = self.server()
        self.setuser(sock_srv, "svc", *SVC_RULES)
        want = []
        with Raw(sock_srv) as r:
            self.assertEqual(r.call("AUTH", "svc", "pw"), b"OK")
            for c in CORPUS:
                want.append(r.call_raw(*c))
        want_log = self.acl_log(sock_srv)
        # The corpus does meet every kind of refusal, in and out of MULTI.
        self.assertEqual({(e["reason"], e["context"]) for e in want_log},
                         {(b"key", b"toplevel"), (b"command", b"toplevel"), (b"command", b"multi"),
                          (b"key", b"multi"), (b"channel", b"toplevel"), (b"channel", b"multi")})
        for proto in PROTOCOLS:
            with self.subTest(proto=proto):
                srv = self.server()
                self.setuser(srv, "svc", *SVC_RULES)
                got = self.ring_script(srv, proto, CORPUS, "svc")
                self.assertEqual(len(got), len(want))
                for i, (g, w) in enumerate(zip(got, want)):
                    self.assertEqual(g, w, "command %d %r over %s" % (i, CORPUS[i], proto))
                log = self.acl_log(srv)
                fields = ("count", "reason", "context", "object", "username")
                self.assertEqual([[e[f] for f in fields] for e in log], [[e[f] for f in fields] for e in want_log])
                for e in log:
                    self.assertIn(b" user=svc ", e["client-info"])
                    self.assertTrue(e["client-info"].endswith(b" transport=ring"), e["client-info"])

    def test_scripts_on_a_ring_run_as_its_user(self):
        """redis.call inside EVAL and FCALL sent over a ring is checked
        against the claimer's user: the same replies as over the socket
        (Redis 7.0's texts for a denied command or key inside a script), and
        the denials logged with context "lua" under that user."""
        lib = "#!lua name=acl\nredis.register_function('setit', function(k) return redis.call('set', k[1], 'v') end)"
        rules = ["on", ">pw", "+ring", "~a*", "+@all", "-set"]
        corpus = [["EVAL", "return redis.call('set', 'a', '1')", "0"],
                  ["EVAL", "return redis.pcall('set', 'a', '1')", "0"],
                  ["EVAL", "return redis.call('get', 'b')", "0"],
                  ["EVAL", "return redis.call('get', 'a')", "0"],
                  ["FCALL", "setit", "1", "a"],
                  ["EVAL", "return redis.acl_check_cmd('get', 'b')", "0"],
                  ["MULTI"], ["EVAL", "return redis.call('get', 'b2')", "0"], ["EXEC"]]
        results = []
        for transport in ("socket",) + PROTOCOLS:
            srv = self.server()
            self.setuser(srv, "scripter", *rules)
            with Raw(srv) as admin:
                self.assertEqual(admin.call("FUNCTION", "LOAD", lib), b"acl")
            if transport == "socket":
                with Raw(srv) as r:
                    self.assertEqual(r.call("AUTH", "scripter", "pw"), b"OK")
                    got = [r.call_raw(*c) for c in corpus]
            else:
                got = self.ring_script(srv, transport, corpus, "scripter")
            log = self.acl_log(srv)
            with Raw(srv) as admin:
                self.assertEqual(admin.call("EXISTS", "a"), 0, transport)  # nothing written on a denial
            results.append((transport, got, log))
        sock_got = results[0][1]
        self.assertTrue(sock_got[0].startswith(b"-ERR The user executing the script can't run this command or "
                                               b"subcommand script: "), sock_got[0])
        self.assertTrue(sock_got[2].startswith(b"-ERR The user executing the script can't access at least one of "
                                               b"the keys mentioned in the command arguments script: "), sock_got[2])
        # set refused three times (call, pcall, the function): one entry
        want_log = [(3, b"command", b"lua", b"set"), (1, b"key", b"lua", b"b"), (1, b"key", b"lua", b"b2")]
        sock_log = [(e["count"], e["reason"], e["context"], e["object"]) for e in results[0][2]]
        self.assertEqual(sorted(sock_log), sorted(want_log))
        for transport, got, log in results:
            with self.subTest(transport=transport):
                self.assertEqual(got, sock_got)
                self.assertEqual([(e["count"], e["reason"], e["context"], e["object"]) for e in log], sock_log)
                for e in log:
                    self.assertEqual(e["username"], b"scripter")
                    if transport != "socket":
                        self.assertTrue(e["client-info"].endswith(b" transport=ring"), e["client-info"])

    def test_typed_calls_checked_as_their_resp_form(self):
        """Typed calls (SBE templates; on a RESP ring the same commands):
        admitted and refused alike, with NOPERM on the ring and the denial
        logged against the command or key the RESP form names."""
        rules = ["on", ">pw", "+ring", "+ping", "+get", "+set", "+incrby", "+hget", "+zscore", "+rpop", "+lpush",
                 "~k*", "%R~r*", "%W~w*"]
        calls = [
            ("ping", "ok 0"), ("set k1 v1", "ok 0"), ("get k1", "ok v1"), ("get other", "err " + NOPERM_KEY),
            ("get r1", "ok nil"), ("set r1 v", "err " + NOPERM_KEY), ("set w1 v", "ok 0"),
            ("get w1", "err " + NOPERM_KEY), ("incrby k2 5", "ok 5"), ("incrby k2 1", "err " + noperm_cmd("incr")),
            ("del k1", "err " + noperm_cmd("del")), ("hset k3 f v", "err " + noperm_cmd("hset")),
            ("hget r3 f", "ok nil"), ("hget w3 f", "err " + NOPERM_KEY), ("zadd k4 1 m", "err " + noperm_cmd("zadd")),
            ("zscore k4 m", "ok 0 0"), ("lpush w5 x", "ok 1"), ("rpop w5", "err " + NOPERM_KEY),
            ("lpush k6 x", "ok 1"), ("rpop k6", "ok x"), ("blpop k6 0.01", "err " + noperm_cmd("blpop")),
        ]
        want_log = [  # newest first, as ACL LOG lists them
            (b"command", b"blpop"), (b"key", b"w5"), (b"command", b"zadd"), (b"key", b"w3"), (b"command", b"hset"),
            (b"command", b"del"), (b"command", b"incr"), (b"key", b"w1"), (b"key", b"r1"), (b"key", b"other"),
        ]
        for proto in PROTOCOLS:
            with self.subTest(proto=proto):
                srv = self.server()
                self.setuser(srv, "typed", *rules)
                got = self.ring_calls(srv, proto, [c for c, _ in calls], "typed")
                self.assertEqual(got, [w for _, w in calls])
                log = self.acl_log(srv)
                self.assertEqual([(e["reason"], e["object"]) for e in log], want_log)
                for e in log:
                    self.assertEqual((e["context"], e["username"], e["count"]), (b"toplevel", b"typed", 1))

    def test_typed_xadd_checked_as_its_resp_form(self):
        """Typed XADD (the XAdd template; XADD on a RESP ring) needs +xadd
        and write access to its key (its key spec is RW UPDATE, no ACCESS:
        a write-only pattern admits it, a read-only one refuses it), as for
        RESP XADD."""
        calls = [("xadd k1 1-1 f", "ok 1-1"), ("xadd k1 1-1 f",
                  "err ERR The ID specified in XADD is equal or smaller than the target stream top item"),
                 ("xadd r1 1-1 f", "err " + NOPERM_KEY), ("xadd w1 1-1 f", "ok 1-1"),
                 ("xadd other * f", "err " + NOPERM_KEY)]
        for proto in PROTOCOLS:
            with self.subTest(proto=proto):
                srv = self.server()
                self.setuser(srv, "producer", "on", ">pw", "+ring", "+xadd", "~k*", "%R~r*", "%W~w*")
                self.setuser(srv, "reader", "on", ">pw", "+ring", "+xrange", "~*")
                self.assertEqual(self.ring_calls(srv, proto, [c for c, _ in calls], "producer"), [w for _, w in calls])
                self.assertEqual(self.ring_calls(srv, proto, ["xadd k2 * f"], "reader"), ["err " + noperm_cmd("xadd")])
                log = self.acl_log(srv)
                self.assertEqual([(e["reason"], e["object"], e["username"]) for e in log],
                                 [(b"command", b"xadd", b"reader"), (b"key", b"other", b"producer"),
                                  (b"key", b"r1", b"producer")])
                with Raw(srv) as r:
                    self.assertEqual(r.call("XLEN", "k1"), 1)
                    self.assertEqual(r.call("XLEN", "w1"), 1)
                    self.assertEqual(r.call("EXISTS", "r1", "other", "k2"), 0)


@unittest.skipUnless(RING_TOOL, "RING_TOOL is not set (ctest sets it)")
class RingClaimsFollowTheirUser(unittest.TestCase):
    """What happens to a Redis connection when its user changes happens to a
    ring's claim (checked against redis-server 7.0: SETUSER off and rule
    changes leave the connection open under the new rules; DELUSER and
    CLIENT KILL USER close it)."""

    @classmethod
    def setUpClass(cls):
        cls.srv = Server("goblin")

    @classmethod
    def tearDownClass(cls):
        cls.srv.cleanup()

    def setUp(self):
        self.admin = Raw(self.srv)

    def tearDown(self):
        for name in self.admin.call("ACL", "USERS"):
            if name != b"default":
                self.admin.call("ACL", "DELUSER", name)
        self.admin.call("ACL", "LOG", "RESET")
        self.admin.close()
        self.assertTrue(wait_until(lambda: self.srv.info("rings")["ring_slots_claimed"] == "0", 10 * SLOW))

    def claimed(self, proto, user):
        self.assertEqual(self.admin.call("ACL", "SETUSER", user, "on", ">pw", "+@all", "~*", "&*"), b"OK")
        p = ring_tool(self.srv, proto, "calls", user)
        self.addCleanup(lambda: (p.kill(), p.wait()))
        self.assertEqual(self.call(p, "ping"), "ok 0")
        return p

    def call(self, p, line):
        p.stdin.write(line.encode() + b"\n")
        p.stdin.flush()
        return p.stdout.readline().decode().rstrip("\n")

    def users_listed(self):
        return [l.split(" user=")[1].split(" ")[0] for l in self.admin.call("CLIENT", "LIST").decode().splitlines()]

    def assert_closed(self, p):
        self.assertEqual(self.call(p, "ping"), "err the server closed the ring (it exited or dropped this client)")
        self.assertEqual(p.wait(timeout=30 * SLOW), 1)

    def test_deluser_releases_the_claim(self):
        for proto in PROTOCOLS:
            with self.subTest(proto=proto):
                p = self.claimed(proto, "gone")
                self.assertEqual(self.users_listed().count("gone"), 2)  # the control link and the ring
                self.assertEqual(self.admin.call("ACL", "DELUSER", "gone"), 1)
                self.assert_closed(p)
                self.assertTrue(wait_until(lambda: self.srv.info("rings")["ring_slots_claimed"] == "0", 10 * SLOW))
                self.assertNotIn("gone", self.users_listed())

    def test_ring_deleting_its_own_user_gets_the_reply_then_closes(self):
        for proto in PROTOCOLS:
            with self.subTest(proto=proto):
                self.assertEqual(self.admin.call("ACL", "SETUSER", "me", "on", ">pw", "+@all", "~*"), b"OK")
                p = ring_tool(self.srv, proto, "script", "me")
                out, _ = p.communicate(script_input([["ACL", "DELUSER", "me"], ["PING"]]), timeout=30 * SLOW)
                self.assertEqual(out, b":1\r\n!call failed: the server closed the ring (it exited or dropped this "
                                      b"client)\n")
                self.assertEqual(p.returncode, 1)

    def test_client_kill_user_closes_the_ring(self):
        p = self.claimed("sbe", "killed")
        self.assertEqual(self.admin.call("CLIENT", "KILL", "USER", "killed"), 2)
        self.assert_closed(p)

    def test_off_keeps_the_claim_refuses_new_ones(self):
        p = self.claimed("sbe", "paused")
        self.assertEqual(self.admin.call("ACL", "SETUSER", "paused", "off"), b"OK")
        self.assertEqual(self.call(p, "set k v"), "ok 0")  # as a Redis connection of a disabled user
        q = ring_tool(self.srv, "resp", "hold", "paused")
        out, _ = q.communicate(timeout=30 * SLOW)
        self.assertEqual(out, b"claim failed: AUTH refused: WRONGPASS invalid username-password pair or user is "
                              b"disabled.\n")
        self.assertEqual(self.admin.call("ACL", "SETUSER", "paused", "on"), b"OK")
        self.assertEqual(self.call(p, "get k"), "ok v")

    def test_rule_changes_apply_to_the_claim_at_once(self):
        p = self.claimed("sbe", "changing")
        self.assertEqual(self.admin.call("ACL", "SETUSER", "changing", "-get", "resetkeys", "~a*"), b"OK")
        self.assertEqual(self.call(p, "get a1"), "err " + noperm_cmd("get"))
        self.assertEqual(self.call(p, "set b1 v"), "err " + NOPERM_KEY)
        self.assertEqual(self.call(p, "set a1 v"), "ok 0")
        self.assertEqual(self.admin.call("ACL", "SETUSER", "changing", "+get"), b"OK")
        self.assertEqual(self.call(p, "get a1"), "ok v")
        log = [entry(e) for e in self.admin.call("ACL", "LOG")]
        self.assertEqual([(e["reason"], e["object"], e["username"]) for e in log],
                         [(b"key", b"b1", b"changing"), (b"command", b"get", b"changing")])


if __name__ == "__main__":
    gbtest.run_tests()
