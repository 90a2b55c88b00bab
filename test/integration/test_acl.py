"""ACL as a client meets it over sockets: every rule kind decides what an
authenticated connection may run; MULTI/EXEC (denied when queued, checked
again at EXEC); AUTH, HELLO AUTH and requirepass; ACL LOG with Redis's
fields and acllog-max-len; users going away closing their connections;
the aclfile (start-up, SAVE, LOAD, errors naming the line) and `user`
lines of the config; protected mode; CLIENT LIST/KILL by user; redis-cli
and redis-benchmark logging in as a user; hostile ACL SETUSER sizes.

Replies are compared with Redis's texts; test_acl_differential.py compares
them with a live redis-server.
"""

import os
import shutil
import socket
import subprocess
import tempfile
import time
import unittest

import gbtest
from gbtest import Raw, Err, Server, SLOW, REDIS_CLI, REDIS_BENCHMARK, encode

NOPERM_KEY = b"NOPERM this user has no permissions to access one of the keys used as arguments"


def noperm_cmd(name):
    return Err(b"NOPERM this user has no permissions to run the '%s' command" % name.encode())


def login(srv, user, password="x"):
    r = Raw(srv)
    assert r.call("AUTH", user, password) == b"OK", user
    return r


class Rules(unittest.TestCase):
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

    def setuser(self, name, *rules):
        self.assertEqual(self.admin.call("ACL", "SETUSER", name, *rules), b"OK")

    def test_on_off_and_passwords(self):
        self.setuser("u", "on", ">p1", ">p2", "+@all", "~*")
        with Raw(self.srv) as c:
            self.assertEqual(c.call("AUTH", "u", "p1"), b"OK")
            self.assertEqual(c.call("AUTH", "u", "p2"), b"OK")
            self.assertEqual(c.call("AUTH", "u", "p3"), Err(b"WRONGPASS invalid username-password pair or user is "
                                                            b"disabled."))
            self.setuser("u", "<p1")
            self.assertIsInstance(c.call("AUTH", "u", "p1"), Err)
            h = self.admin.call("ACL", "GETUSER", "u")[3][0].decode()
            self.setuser("u", "!" + h)
            self.assertIsInstance(c.call("AUTH", "u", "p2"), Err)
            self.setuser("u", "#" + h)
            self.assertEqual(c.call("AUTH", "u", "p2"), b"OK")
            self.setuser("u", "off")
            self.assertIsInstance(c.call("AUTH", "u", "p2"), Err)
            # an "off" user's existing connections keep working, as in Redis
            self.assertEqual(c.call("PING"), b"PONG")
            self.setuser("u", "on", "nopass")
            self.assertEqual(c.call("AUTH", "u", "anything"), b"OK")
            self.setuser("u", "resetpass")
            self.assertIsInstance(c.call("AUTH", "u", "anything"), Err)
            self.setuser("u", "reset")
            self.assertEqual(self.admin.call("ACL", "LIST")[1], b"user u off sanitize-payload resetchannels -@all")

    def test_commands_and_categories(self):
        self.setuser("u", "on", "nopass", "allkeys", "-@all", "+@string", "-set", "+config|get", "+client")
        with login(self.srv, "u") as c:
            self.assertEqual(c.call("SET", "k", "v"), noperm_cmd("set"))
            self.assertEqual(c.call("APPEND", "k", "v"), 1)
            self.assertEqual(c.call("GET", "k"), b"v")
            self.assertEqual(c.call("LPUSH", "l", "a"), noperm_cmd("lpush"))
            self.assertEqual(c.call("CONFIG", "GET", "hz")[0], b"hz")
            self.assertEqual(c.call("CONFIG", "SET", "hz", "10"), noperm_cmd("config|set"))
            self.assertEqual(c.call("CLIENT", "ID") > 0, True)
            self.setuser("u", "-client|id")
            self.assertEqual(c.call("CLIENT", "ID"), noperm_cmd("client|id"))
            self.assertIsInstance(c.call("CLIENT", "GETNAME"), (bytes, type(None)))
            # AUTH, HELLO and QUIT need no permission (Redis's no-auth commands)
            self.assertEqual(c.call("AUTH", "u", "y"), b"OK")
            self.setuser("u", "+@all", "-@dangerous")
            self.assertEqual(c.call("FLUSHALL"), noperm_cmd("flushall"))
            self.assertEqual(c.call("ACL", "LIST"), noperm_cmd("acl|list"))
            self.assertEqual(c.call("ACL", "WHOAMI"), b"u")

    def test_key_patterns(self):
        self.setuser("u", "on", "nopass", "+@all", "~app:*", "%R~ro:*", "%W~wo:*")
        with login(self.srv, "u") as c:
            self.assertEqual(c.call("SET", "app:1", "v"), b"OK")
            self.assertEqual(c.call("SET", "other", "v"), Err(NOPERM_KEY))
            self.assertEqual(c.call("GET", "ro:1"), None)
            self.assertEqual(c.call("SET", "ro:1", "v"), Err(NOPERM_KEY))
            self.assertEqual(c.call("SET", "wo:1", "v"), b"OK")
            self.assertEqual(c.call("GET", "wo:1"), Err(NOPERM_KEY))
            self.assertEqual(c.call("COPY", "ro:1", "wo:2"), 0)
            self.assertEqual(c.call("COPY", "wo:1", "ro:2"), Err(NOPERM_KEY))
            self.assertEqual(c.call("MGET", "app:1", "ro:1"), [b"v", None])
            self.assertEqual(c.call("MGET", "app:1", "wo:1"), Err(NOPERM_KEY))
            self.assertEqual(c.call("EXISTS", "wo:1", "ro:1"), 1)  # neither read nor write: any pattern
            self.setuser("u", "resetkeys")
            self.assertEqual(c.call("GET", "app:1"), Err(NOPERM_KEY))
            self.assertEqual(c.call("PING"), b"PONG")
            self.setuser("u", "allkeys")
            self.assertEqual(self.admin.call("SET", "other", "w"), b"OK")
            self.assertEqual(c.call("GET", "other"), b"w")
            self.assertEqual(self.admin.call("ACL", "SETUSER", "u", "~x"),
                             Err(b"ERR Error in ACL SETUSER modifier '~x': Adding a pattern after the * pattern (or "
                                 b"the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to "
                                 b"start with an empty list of patterns"))

    def test_channels_rules(self):
        self.setuser("u", "&news.*", "&x")
        user = self.admin.call("ACL", "GETUSER", "u")
        self.assertEqual(user[user.index(b"channels") + 1], b"&news.* &x")
        self.setuser("u", "allchannels")
        user = self.admin.call("ACL", "GETUSER", "u")
        self.assertEqual(user[user.index(b"channels") + 1], b"&*")
        self.setuser("u", "resetchannels")
        user = self.admin.call("ACL", "GETUSER", "u")
        self.assertEqual(user[user.index(b"channels") + 1], b"")

    def test_selectors(self):
        self.setuser("u", "on", "nopass", "-@all", "+get", "~read:*", "(+set", "~write:*)")
        with login(self.srv, "u") as c:
            self.assertEqual(c.call("GET", "read:1"), None)
            self.assertEqual(c.call("SET", "write:1", "v"), b"OK")
            self.assertEqual(c.call("GET", "write:1"), Err(NOPERM_KEY))
            self.assertEqual(c.call("SET", "read:1", "v"), Err(NOPERM_KEY))
            self.setuser("u", "clearselectors")
            self.assertEqual(c.call("SET", "write:1", "v"), noperm_cmd("set"))

    def test_first_arg(self):
        self.setuser("u", "on", "nopass", "-@all", "+select|0", "+get", "allkeys")
        with login(self.srv, "u") as c:
            self.assertEqual(c.call("SELECT", "0"), b"OK")
            self.assertEqual(c.call("SELECT", "1"), noperm_cmd("select"))

    def test_multi_exec(self):
        self.setuser("u", "on", "nopass", "+@all", "~k*")
        with login(self.srv, "u") as c:
            self.assertEqual(c.call("MULTI"), b"OK")
            self.assertEqual(c.call("SET", "k1", "v"), b"QUEUED")
            self.assertEqual(c.call("SET", "x", "v"), Err(NOPERM_KEY))
            self.assertEqual(c.call("EXEC"), Err(b"EXECABORT Transaction discarded because of previous errors."))
            self.assertEqual(c.call("MULTI"), b"OK")
            self.assertEqual(c.call("SET", "k1", "v"), b"QUEUED")
            self.assertEqual(c.call("GET", "k1"), b"QUEUED")
            self.setuser("u", "-get")
            self.assertEqual(c.call("EXEC"), [b"OK", Err(
                b"NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. "
                b"This command is no longer allowed for the following reason: no permission to execute the command "
                b"or subcommand")])
            self.setuser("u", "-exec")
            self.assertEqual(c.call("MULTI"), b"OK")
            self.assertEqual(c.call("EXEC"), Err(b"EXECABORT Transaction discarded because of: NOPERM this user has "
                                                 b"no permissions to run the 'exec' command"))
        log = self.admin.call("ACL", "LOG")
        self.assertEqual([e[5] for e in log[:3]], [b"multi", b"multi", b"multi"])
        self.assertEqual([e[7] for e in log[:3]], [b"exec", b"get", b"x"])

    def test_log(self):
        self.setuser("u", "on", "nopass", "-@all", "+get", "~k*")
        with login(self.srv, "u") as c:
            for _ in range(3):
                c.call("GET", "nope")
            c.call("LPUSH", "k", "v")
            c.call("AUTH", "u2", "bad")
        log = self.admin.call("ACL", "LOG")
        self.assertEqual(len(log), 3)
        auth, cmd, key = log
        self.assertEqual(auth[:10], [b"count", 1, b"reason", b"auth", b"context", b"toplevel", b"object", b"AUTH",
                                     b"username", b"u2"])
        self.assertEqual(cmd[1], 1)
        self.assertEqual(cmd[3], b"command")
        self.assertEqual(cmd[7], b"lpush")
        self.assertEqual(key[1], 3)  # the same denial three times: one entry
        self.assertEqual(key[7], b"nope")
        self.assertEqual(key[10], b"age-seconds")
        self.assertLess(float(key[11]), 5 * SLOW)
        self.assertEqual(key[12], b"client-info")
        self.assertIn(b" user=u ", key[13])
        self.assertIn(b" cmd=get ", key[13])
        self.assertEqual(len(self.admin.call("ACL", "LOG", "1")), 1)
        self.assertEqual(self.admin.call("CONFIG", "SET", "acllog-max-len", "2"), b"OK")
        with login(self.srv, "u") as c:
            c.call("GET", "other")
        self.assertEqual(len(self.admin.call("ACL", "LOG")), 2)
        self.assertEqual(self.admin.call("CONFIG", "SET", "acllog-max-len", "128"), b"OK")
        self.assertEqual(self.admin.call("ACL", "LOG", "RESET"), b"OK")
        self.assertEqual(self.admin.call("ACL", "LOG"), [])

    def test_deluser_closes_connections(self):
        self.setuser("u", "on", "nopass", "+@all", "~*")
        c = login(self.srv, "u")
        lines = self.admin.call("CLIENT", "LIST")
        self.assertIn(b" user=u ", lines)
        self.assertEqual(self.admin.call("ACL", "DELUSER", "u"), 1)
        self.assertTrue(c.expect_eof())
        c.close()

    def test_client_kill_user(self):
        self.setuser("u", "on", "nopass", "+@all", "~*")
        c = login(self.srv, "u")
        self.assertEqual(self.admin.call("CLIENT", "KILL", "USER", "nosuch"), Err(b"ERR No such user 'nosuch'"))
        self.assertEqual(self.admin.call("CLIENT", "KILL", "USER", "u"), 1)
        self.assertTrue(c.expect_eof())
        c.close()

    def test_hello_auth(self):
        self.setuser("u", "on", ">pw", "+@all", "~*")
        with Raw(self.srv) as c:
            self.assertEqual(c.call("HELLO", "2", "AUTH", "u", "bad"),
                             Err(b"WRONGPASS invalid username-password pair or user is disabled."))
            reply = c.call("HELLO", "2", "AUTH", "u", "pw")
            self.assertEqual(reply[:2], [b"server", b"goblin-core"])
            self.assertEqual(c.call("ACL", "WHOAMI"), b"u")

    def test_huge_setuser(self):
        # 2,000 rules of 100 KB: the server takes what the request carries
        # and gives it back when the user goes.
        before = self.srv.used_memory()
        rules = ["~" + ("k%04d" % i) * 20000 for i in range(200)]
        self.setuser("big", *rules)
        self.assertEqual(self.admin.call("ACL", "SETUSER", "big", ">" + "p" * (8 << 20)), b"OK")
        grown = self.srv.used_memory() - before
        self.assertLess(grown, 3 * sum(map(len, rules)))
        self.assertEqual(self.admin.call("ACL", "DELUSER", "big"), 1)
        self.assertLess(self.srv.used_memory() - before, 1 << 20)
        # 100,000 small rules in one request stay quick (linear)
        t0 = time.time()
        self.setuser("many", *["~k:%d" % i for i in range(100000)])
        self.assertLess(time.time() - t0, 10 * SLOW)


class Auth(unittest.TestCase):
    def test_requirepass(self):
        with Server("goblin", args=["--requirepass", "secret"]) as srv:
            with Raw(srv) as c:
                self.assertEqual(c.call("GET", "k"), Err(b"NOAUTH Authentication required."))
                self.assertEqual(c.call("ACL", "WHOAMI"), Err(b"NOAUTH Authentication required."))
                self.assertEqual(c.call("AUTH", "nope"), Err(b"WRONGPASS invalid username-password pair or user is "
                                                             b"disabled."))
                self.assertEqual(c.call("AUTH", "secret"), b"OK")
                self.assertEqual(c.call("ACL", "GETUSER", "default")[3],
                                 [b"2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b"])
                self.assertEqual(c.call("CONFIG", "SET", "requirepass", "other"), b"OK")
                with Raw(srv) as d:
                    self.assertIsInstance(d.call("AUTH", "secret"), Err)
                    self.assertEqual(d.call("AUTH", "default", "other"), b"OK")
                self.assertEqual(c.call("CONFIG", "SET", "requirepass", ""), b"OK")
                with Raw(srv) as d:
                    self.assertEqual(d.call("GET", "k"), None)

    def test_redis_cli_and_benchmark_as_user(self):
        with Server("goblin") as srv:
            with Raw(srv) as c:
                c.call("ACL", "SETUSER", "bench", "on", ">pw", "-@all", "+get", "+set", "+ping", "+config|get",
                       "~key:*")
            if REDIS_CLI:
                out = subprocess.run([REDIS_CLI, "-s", srv.sock, "--user", "bench", "--pass", "pw", "--no-auth-warning",
                                      "SET", "key:1", "v"], capture_output=True, text=True, timeout=30)
                self.assertEqual(out.stdout.strip(), "OK")
            if REDIS_BENCHMARK:
                out = subprocess.run([REDIS_BENCHMARK, "-s", srv.sock, "--user", "bench", "-a", "pw", "-n", "2000",
                                      "-t", "get,set", "-q"], capture_output=True, text=True, timeout=120)
                self.assertIn("GET", out.stdout)
                self.assertNotIn("NOPERM", out.stdout + out.stderr)
            with Raw(srv) as c:
                self.assertEqual(c.call("ACL", "LOG"), [])


class Files(unittest.TestCase):
    def test_aclfile_start_save_load(self):
        d = tempfile.mkdtemp(prefix="gbit-acl-")
        path = os.path.join(d, "users.acl")
        with open(path, "w") as f:
            f.write("user alice on >pw ~a:* +@read\nuser default on nopass +@all ~* &*\n")
        with Server("goblin", args=["--aclfile", path], dir=d) as srv:
            with Raw(srv) as c:
                self.assertEqual(c.call("ACL", "USERS"), [b"alice", b"default"])
                self.assertEqual(c.call("ACL", "SETUSER", "bob", "on", "nopass", "+ping"), b"OK")
                self.assertEqual(c.call("ACL", "SAVE"), b"OK")
                with open(path) as f:
                    saved = f.read()
                self.assertIn("user bob on nopass resetchannels -@all +ping\n", saved)
                self.assertEqual(c.call("ACL", "DELUSER", "bob"), 1)
                self.assertEqual(c.call("ACL", "LOAD"), b"OK")
                self.assertEqual(c.call("ACL", "USERS"), [b"alice", b"bob", b"default"])
                with open(path, "a") as f:
                    f.write("user carol on +nosuch\n")
                err = c.call("ACL", "LOAD")
                self.assertEqual(err, Err(("ERR %s:4: Error in applying operation '+nosuch': Unknown command or "
                                           "category name in ACL. WARNING: ACL errors detected, no change to the "
                                           "previously active ACL rules was performed" % path).encode()))
        # a bad file stops the server at start-up, naming the line
        proc = subprocess.run([gbtest.GOBLIN, "--port", "0", "--unixsocket", os.path.join(d, "s.sock"), "--aclfile",
                               path], capture_output=True, text=True, timeout=30 * SLOW)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("%s:4: Error in applying operation '+nosuch': Unknown command or category name in ACL" % path,
                      proc.stdout + proc.stderr)
        os.unlink(path)
        proc = subprocess.run([gbtest.GOBLIN, "--port", "0", "--unixsocket", os.path.join(d, "s.sock"), "--aclfile",
                               path], capture_output=True, text=True, timeout=30 * SLOW)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("Error loading ACLs, opening file '%s'" % path, proc.stdout + proc.stderr)
        subprocess.run(["rm", "-rf", d])

    def acl_load_scenario(self, kind, d):
        """Redis 7.0's ACL LOAD replaces every user but default: the
        clients of any other user are closed, even one the file keeps as
        it was (the one asking gets its +OK first); default's stay, and no
        subscription is checked. Then the error texts of a bad file."""
        path = os.path.join(d, kind + ".acl")
        with open(path, "w") as f:
            f.write("user alice on nopass ~* +@all\nuser bob on nopass ~* &* +@all\n"
                    "user default on nopass ~* &* +@all\n")
        out = []
        with Server(kind, args=["--aclfile", path], dir=d) as srv:
            c1, c2, c3, c4 = Raw(srv), Raw(srv), Raw(srv), Raw(srv)
            try:
                out += [c1.call("AUTH", "alice", "x"), c2.call("AUTH", "bob", "x"), c2.call("SUBSCRIBE", "ch"),
                        c3.call("SUBSCRIBE", "x"), c4.call("AUTH", "alice", "x")]
                with open(path, "w") as f:
                    f.write("user alice on nopass ~* +@all\nuser bob on nopass ~* &* +@all\n"
                            "user default on nopass ~* resetchannels &y +@all\n")
                out.append(c4.call("ACL", "LOAD"))
                for c in (c1, c2, c3, c4):
                    try:
                        c.send(encode("PING"))
                        out.append(c.read()[0])
                    except (ConnectionError, OSError, EOFError) as e:
                        out.append("closed")
            finally:
                for c in (c1, c2, c3, c4):
                    c.close()
            with Raw(srv) as c:
                with open(path, "w") as f:
                    f.write("user alice on >pw ~a:* +@read +nosuch1 +nosuch2 bogus1 bogus2\n"
                            "user bob &* &x <nope\nuser carol on +config|get|x +config|\n")
                out.append(c.call("ACL", "LOAD").replace(path.encode(), b"PATH"))
        return out

    def test_acl_load_as_redis(self):
        gbtest.require_redis()
        d = tempfile.mkdtemp(prefix="gbit-acl-")
        try:
            got, want = self.acl_load_scenario("goblin", d), self.acl_load_scenario("redis", d)
        finally:
            shutil.rmtree(d, ignore_errors=True)
        self.assertEqual(got, want)
        self.assertEqual(got[6:10], ["closed", "closed", [b"pong", b""], "closed"])

    def test_config_user_lines(self):
        conf = 'user alice on ">p w" ~a:* +get\nuser default on nopass -@all +ping +acl\n'
        with Server("goblin", config=conf) as srv:
            with Raw(srv) as c:
                self.assertEqual(c.call("GET", "x"), noperm_cmd("get"))
                self.assertEqual(c.call("AUTH", "alice", "p w"), b"OK")
                self.assertEqual(c.call("GET", "a:1"), None)
        d = tempfile.mkdtemp(prefix="gbit-acl-")
        cpath = os.path.join(d, "bad.conf")
        with open(cpath, "w") as f:
            f.write("port 0\nuser alice on +nosuch\n")
        proc = subprocess.run([gbtest.GOBLIN, cpath, "--unixsocket", os.path.join(d, "s.sock")], capture_output=True,
                              text=True, timeout=30 * SLOW)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("%s:2: Error loading ACL rule '+nosuch' for the user named 'alice'" % cpath,
                      proc.stdout + proc.stderr)
        with open(cpath, "w") as f:
            f.write("port 0\nuser alice on\naclfile %s\n" % os.path.join(d, "x.acl"))
        proc = subprocess.run([gbtest.GOBLIN, cpath, "--unixsocket", os.path.join(d, "s.sock")], capture_output=True,
                              text=True, timeout=30 * SLOW)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("define them in one place", proc.stdout + proc.stderr)
        subprocess.run(["rm", "-rf", d])


class ProtectedMode(unittest.TestCase):
    """A connection from 127.0.0.5 reaches a server bound to 0.0.0.0 but is
    not the loopback address Redis accepts (127.0.0.1 or ::1)."""

    DENIED = (b"-DENIED Redis is running in protected mode because protected mode is enabled and no password is set "
              b"for the default user.")

    def from_other_address(self, srv):
        s = socket.socket()
        s.settimeout(5 * SLOW)
        try:
            s.bind(("127.0.0.5", 0))
        except OSError as e:
            self.skipTest("no 127.0.0.5 on this host (%s)" % e)
        s.connect(("127.0.0.1", srv.port))
        s.sendall(b"PING\r\n")
        out = b""
        while True:
            d = s.recv(65536)
            if not d:
                break
            out += d
            if out.endswith(b"\r\n"):
                break
        s.close()
        return out

    def test_refused_then_allowed(self):
        with Server("goblin", args=["--bind", "0.0.0.0"]) as srv:
            out = self.from_other_address(srv)
            self.assertTrue(out.startswith(self.DENIED), out)
            self.assertTrue(out.endswith(b"the server to start accepting connections from the outside.\r\n"))
            if gbtest.compare_with_redis():  # Redis 7.0's text, byte for byte
                with Server("redis", args=["--bind", "0.0.0.0", "--protected-mode", "yes"]) as redis:
                    self.assertEqual(out, self.from_other_address(redis))
            with Raw(srv, tcp=True) as c:  # 127.0.0.1 is welcome
                self.assertEqual(c.call("PING"), b"PONG")
                self.assertEqual(int(srv.info("stats")["rejected_connections"]), 1)
                c.call("CONFIG", "SET", "protected-mode", "no")
            self.assertEqual(self.from_other_address(srv), b"+PONG\r\n")
            with Raw(srv) as c:
                c.call("CONFIG", "SET", "protected-mode", "yes")
                c.call("CONFIG", "SET", "requirepass", "pw")
            self.assertEqual(self.from_other_address(srv), b"-NOAUTH Authentication required.\r\n")


if __name__ == "__main__":
    gbtest.run_tests()
