"""CONFIG against redis-server 7.0 started without a config file:

  * every parameter both servers know has the same default, byte for byte
    (CONFIG GET *), except the few listed in LEGITIMATE_DIFFERENCES;
  * tracking-table-max-keys: over the limit, the next command evicts random
    keys from the tracking table and their readers get the invalidation;
  * CONFIG SET port / bind rebind at run time: the new listener serves, the
    old one is closed, connections already open stay; an address that cannot
    be bound fails with Redis's error and the old listener keeps serving;
    Redis's bind forms (*, -optional, host names, empty: no TCP);
    unixsocket, unixsocketperm and tcp-backlog stay immutable, as in 7.0;
  * enable-debug-command and enable-protected-configs (no, yes, local): DEBUG
    and CONFIG SET dir / dbfilename refused by default with Redis's texts,
    allowed to local clients (Unix socket, loopback, rings) with "local".
"""

import os
import socket
import time

import gbtest
from gbtest import Raw, Server, wait_until

# Defaults that differ from redis-server 7.0's on purpose. Each value is
# (goblin's, redis's) default as CONFIG GET shows it; None: chosen by the
# test (a port, a socket path, the directory each server runs in), checked
# separately below.
LEGITIMATE_DIFFERENCES = {
    # The ports and socket paths the test gives each server.
    "port": None,
    "unixsocket": None,
    # Each server runs in its own directory: both answer it as an absolute
    # path (checked in test_dir_is_absolute).
    "dir": None,
    # Loopback only by default: exposing the server is a decision
    # (goblin-core --help); Redis binds every interface and relies on
    # protected-mode.
    "bind": ("127.0.0.1", "* -::*"),
    # The socket is made owner-only before it accepts anything; Redis leaves
    # it to the umask (0: no chmod).
    "unixsocketperm": ("700", "0"),
    # A normal client's pending replies are capped at 1gb (Redis: unlimited),
    # so one slow reader cannot take all the memory.
    "client-output-buffer-limit": (
        "normal 1073741824 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
        "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"),
    # The snapshot is Goblin's own format, not an RDB file.
    "dbfilename": ("dump.gdb", "dump.rdb"),
}


class BareRedis(Server):
    """redis-server with only --port and --unixsocket: every other setting
    is its compiled default (gbtest.Server adds bind, save, dir, ...)."""

    def __init__(self):
        super().__init__("redis")

    def _spawn(self):
        self.cmd = [self.cmd[0], "--port", str(self.port), "--unixsocket", self.sock]
        super()._spawn()


def config_all(srv):
    with Raw(srv) as r:
        flat = r.call("CONFIG", "GET", "*")
    return {flat[i].decode(): flat[i + 1].decode() for i in range(0, len(flat), 2)}


class ConfigDefaultsTest(gbtest.GoblinAndRedisCase):
    @classmethod
    def setUpClass(cls):
        gbtest.require_redis()
        cls.goblin = Server("goblin", protected=False, quick_sync=False)
        try:
            cls.redis = BareRedis()
        except BaseException:
            cls.goblin.cleanup()
            raise

    def test_defaults_match_redis(self):
        g, r = config_all(self.goblin), config_all(self.redis)
        self.assertGreater(len(r), 150)  # a real redis-server 7.0 answered
        common = sorted(set(g) & set(r))
        differ = {}
        for name in common:
            if name in LEGITIMATE_DIFFERENCES:
                continue
            if g[name] != r[name]:
                differ[name] = (g[name], r[name])
        self.assertEqual(differ, {}, "goblin's default differs from redis-server 7.0's (goblin, redis)")
        for name, expected in LEGITIMATE_DIFFERENCES.items():
            self.assertIn(name, common)
            if expected is not None:
                self.assertEqual((g[name], r[name]), expected, name)
        for name in ("hash-max-listpack-entries", "tracking-table-max-keys"):
            self.assertIn(name, common)

    def test_get_names_as_redis(self):
        # An exact name (or alias) is answered as typed, once whatever its
        # case; a pattern matches names and aliases, each under its own
        # name. (Redis's order is its hash table's: compared as maps.)
        for args in (("Maxmemory",), ("HASH-MAX-ZIPLIST-ENTRIES",), ("lua-time-limit", "busy-reply-threshold"),
                     ("nosuch",), ("maxmemory", "MAXMEMORY"), ("maxmem*", "MAXMEMORY"), ("hash-max-*",),
                     ("*-ziplist-*",), ("list-max-*",), ("[bp]*",), ("lazyfree-lazy-?ser-*",)):
            got = []
            for srv in (self.goblin, self.redis):
                with Raw(srv) as c:
                    flat = c.call("CONFIG", "GET", *args)
                got.append({flat[i]: flat[i + 1] for i in range(0, len(flat), 2)})
                self.assertEqual(len(got[-1]) * 2, len(flat), (srv.kind, args))
            goblin_only = {b"set-max-listpack-entries", b"set-max-listpack-value"}  # Redis 7.2's, kept
            chosen_by_test = {b"port", b"bind"}
            for name in (set(got[0]) | set(got[1])) - goblin_only - chosen_by_test:
                if name in got[0] and name in got[1]:
                    self.assertEqual(got[0][name], got[1][name], (args, name))
                else:  # only what goblin-core does not have at all
                    self.assertNotIn(name, got[0], args)
                    with Raw(self.goblin) as c:
                        self.assertEqual(c.call("CONFIG", "GET", name), [], (args, name))

    def test_dir_is_absolute(self):
        # Redis answers getcwd(); goblin the resolved `dir` ("./" here).
        for srv in (self.goblin, self.redis):
            self.assertEqual(config_all(srv)["dir"], os.path.realpath(srv.dir), srv.kind)

    def test_listpack_value_limits_are_sizes(self):
        """hash-max-listpack-value and zset-max-listpack-value (and their
        ziplist names) are memory configs in Redis 7.0: 1k, 01 and "" are
        sizes there; goblin-core read them as integers and refused them."""
        for name in ("hash-max-listpack-value", "zset-max-ziplist-value"):
            for value in ("1k", "01", "", "2kb", "abc", "-1"):
                replies = []
                for srv in (self.goblin, self.redis):
                    with Raw(srv) as c:
                        replies.append((c.call_raw("CONFIG", "SET", name, value), c.call_raw("CONFIG", "GET", name)))
                        c.call("CONFIG", "SET", name, "64")
                self.assertEqual(replies[0], replies[1], (name, value))

    def test_memory_and_integer_values_read_as_redis(self):
        """Memory values as Redis's memtoull reads them ("" is 0, no sign,
        digits past 64 bits are the largest value, then out of range) and
        integers as its string2ll (no '+')."""
        cases = [("maxmemory", "+10"), ("timeout", "+5"), ("stream-node-max-bytes", ""),
                 ("appendfsync", "sometimes"), ("repl-backlog-size", "1"), ("repl-backlog-size", "16383"),
                 ("proto-max-bulk-len", "9223372036854775808"), ("hll-sparse-max-bytes", "99999999999999999999999"),
                 ("stream-node-max-bytes", "4k"), ("stream-node-max-bytes", " 4k"), ("stream-node-max-bytes", "4 k")]
        for name, value in cases:
            replies = []
            for srv in (self.goblin, self.redis):
                with Raw(srv) as c:
                    before = c.call("CONFIG", "GET", name)[1]
                    replies.append((c.call_raw("CONFIG", "SET", name, value), c.call_raw("CONFIG", "GET", name)))
                    c.call("CONFIG", "SET", name, before)
            self.assertEqual(replies[0], replies[1], (name, value))

    def test_hash_encoding_follows_the_default(self):
        # 512 fields stay a listpack, the 513th converts it, on both.
        for srv in (self.goblin, self.redis):
            with Raw(srv) as c:
                c.call("DEL", "h")
                for i in range(512):
                    c.send_cmd("HSET", "h", "f%d" % i, "v")
                for i in range(512):
                    c.read()
                self.assertEqual(c.call("OBJECT", "ENCODING", "h"), b"listpack", srv.kind)
                c.call("HSET", "h", "f512", "v")
                self.assertEqual(c.call("OBJECT", "ENCODING", "h"), b"hashtable", srv.kind)
                c.call("DEL", "h")


def info_field(conn, section, name):
    for line in conn.call("INFO", section).decode().split("\r\n"):
        if line.startswith(name + ":"):
            return line.split(":", 1)[1]
    return None


class TrackingLimitTest(gbtest.GoblinAndRedisCase):
    def scenario(self, srv):
        """A RESP2 reader redirects its invalidations to a subscriber; with
        tracking-table-max-keys 2, reading a third key leaves 3 remembered
        until the next command evicts one at random (its invalidation is
        published). Returns (keys before, keys after, invalidated keys)."""
        with Raw(srv) as admin, Raw(srv) as sub, Raw(srv) as reader:
            admin.call("FLUSHALL")
            self.assertEqual(admin.call("CONFIG", "SET", "tracking-table-max-keys", "2"), b"OK")
            sub_id = sub.call("CLIENT", "ID")
            sub.call("SUBSCRIBE", "__redis__:invalidate")
            self.assertEqual(reader.call("CLIENT", "TRACKING", "on", "REDIRECT", str(sub_id)), b"OK")
            for k in ("k1", "k2", "k3"):
                reader.call("GET", k)
            before = int(info_field(admin, "stats", "tracking_total_keys"))
            after = int(info_field(admin, "stats", "tracking_total_keys"))
            msg = sub.read()[0]
            self.assertEqual(msg[:2], [b"message", b"__redis__:invalidate"], srv.kind)
            invalidated = msg[2]
            # 0 turns the limit off: nothing more is evicted.
            admin.call("CONFIG", "SET", "tracking-table-max-keys", "0")
            reader.call("GET", "k4")
            reader.call("GET", "k5")
            admin.call("PING")
            unlimited = int(info_field(admin, "stats", "tracking_total_keys"))
            admin.call("CONFIG", "SET", "tracking-table-max-keys", "1000000")
            return before, after, invalidated, unlimited

    def test_limit_evicts_and_invalidates(self):
        for srv in (self.goblin, self.redis):
            before, after, invalidated, unlimited = self.scenario(srv)
            # INFO's own command is what finds the table over the limit: the
            # first INFO sees it reduced already.
            self.assertEqual((before, after), (2, 2), srv.kind)
            self.assertEqual(len(invalidated), 1, srv.kind)
            self.assertIn(invalidated[0], (b"k1", b"k2", b"k3"), srv.kind)
            self.assertEqual(unlimited, 4, srv.kind)

    def test_errors_match(self):
        for value in ("-1", "abc", "9223372036854775808", "0"):
            replies = []
            for srv in (self.goblin, self.redis):
                with Raw(srv) as c:
                    replies.append(c.call_raw("CONFIG", "SET", "tracking-table-max-keys", value))
                    c.call("CONFIG", "SET", "tracking-table-max-keys", "1000000")
            self.assertEqual(replies[0], replies[1], value)


def refused(port):
    """Whether a TCP connection to 127.0.0.1:port is refused."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            return False
    except ConnectionRefusedError:
        return True


def serves(addr):
    with Raw(addr) as c:
        return c.call("PING") == b"PONG"


class ListenerRebindTest(gbtest.GoblinAndRedisCase):
    """CONFIG SET port and bind at run time, with real sockets; every reply
    byte for byte as redis-server 7.0's."""

    def both(self):
        return ((self.goblin, "goblin"), (self.redis, "redis"))

    def move_port(self, srv, admin, port):
        reply = admin.call_raw("CONFIG", "SET", "port", str(port))
        if reply == b"+OK\r\n":
            srv.port = port
        return reply

    def test_port_moves_and_open_connections_stay(self):
        for srv, name in self.both():
            old = srv.port
            with Raw(srv, tcp=True) as open_before, Raw(srv) as admin:
                new = gbtest.free_port()
                self.assertEqual(self.move_port(srv, admin, new), b"+OK\r\n", name)
                self.assertTrue(serves(("127.0.0.1", new)), name)
                self.assertTrue(refused(old), name)
                self.assertEqual(open_before.call("PING"), b"PONG", name)
                self.assertEqual(admin.call("CONFIG", "GET", "port"), [b"port", str(new).encode()], name)
                self.assertEqual(gbtest.parse_info(admin.call("INFO", "server"))["tcp_port"], str(new), name)
                # Port 0: no TCP at all; the Unix socket and open connections go on.
                self.assertEqual(admin.call_raw("CONFIG", "SET", "port", "0"), b"+OK\r\n", name)
                self.assertTrue(refused(new), name)
                self.assertEqual(open_before.call("PING"), b"PONG", name)
                self.assertEqual(self.move_port(srv, admin, old), b"+OK\r\n", name)
                self.assertTrue(serves(("127.0.0.1", old)), name)

    def test_taken_port_fails_and_old_listener_serves(self):
        holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        taken = holder.getsockname()[1]
        try:
            replies = []
            for srv, name in self.both():
                with Raw(srv, tcp=True) as admin:
                    replies.append(self.move_port(srv, admin, taken))
                    self.assertEqual(admin.call("CONFIG", "GET", "port"), [b"port", str(srv.port).encode()], name)
                    self.assertEqual(admin.call("PING"), b"PONG", name)
                self.assertTrue(serves(("127.0.0.1", srv.port)), name)
            self.assertEqual(replies[0], replies[1])
            self.assertTrue(replies[0].startswith(b"-ERR CONFIG SET failed (possibly related to argument 'port')"))
        finally:
            holder.close()

    def test_bind_changes(self):
        for value, expect_ok in (("1.2.3.4", False),              # not an address of this host
                                 ("-1.2.3.4 127.0.0.1", True),   # optional: skipped
                                 ("*", True),                    # every IPv4 address
                                 ("127.0.0.1", True),            # back from * on the same port
                                 ("localhost", True),            # a host name
                                 ("bogus.invalid", False),
                                 (" ".join(["127.0.0.1"] * 17), False),
                                 # Redis 7.0's CONFIG SET splits at every space:
                                 # the empty words fail to bind.
                                 ("127.0.0.1   -::1", False),
                                 ("127.0.0.1 -::1", True)):
            replies, shown = [], []
            for srv, name in self.both():
                with Raw(srv, tcp=True) as open_before, Raw(srv) as admin:
                    replies.append(admin.call_raw("CONFIG", "SET", "bind", value))
                    shown.append(admin.call("CONFIG", "GET", "bind"))
                    self.assertEqual(open_before.call("PING"), b"PONG", (name, value))
                    self.assertTrue(serves(("127.0.0.1", srv.port)), (name, value))
            self.assertEqual(replies[0], replies[1], value)
            self.assertEqual(replies[0] == b"+OK\r\n", expect_ok, (value, replies[0]))
            self.assertEqual(shown[0], shown[1], value)
        for srv, name in self.both():
            with Raw(srv) as admin:
                admin.call("CONFIG", "SET", "bind", "127.0.0.1")

    def test_empty_bind_stops_tcp(self):
        for srv, name in self.both():
            with Raw(srv, tcp=True) as open_before:
                self.assertEqual(open_before.call_raw("CONFIG", "SET", "bind", ""), b"+OK\r\n", name)
                self.assertTrue(refused(srv.port), name)
                self.assertEqual(open_before.call("PING"), b"PONG", name)
                self.assertEqual(open_before.call_raw("CONFIG", "SET", "bind", "127.0.0.1"), b"+OK\r\n", name)
            self.assertTrue(serves(("127.0.0.1", srv.port)), name)

    def test_immutable_listener_settings(self):
        for param, value in (("unixsocket", "/tmp/elsewhere.sock"), ("unixsocketperm", "777"),
                             ("tcp-backlog", "5")):
            replies = []
            for srv, name in self.both():
                with Raw(srv) as admin:
                    replies.append(admin.call_raw("CONFIG", "SET", param, value))
            self.assertEqual(replies[0], replies[1], param)
            self.assertIn(b"can't set immutable config", replies[0])


PROTECTED_STEPS = [
    ("DEBUG", "SLEEP", "0"), ("DEBUG",), ("CONFIG", "SET", "dir", "."),
    ("CONFIG", "SET", "dbfilename", "x.rdb"), ("CONFIG", "SET", "DIR", "."),
    ("CONFIG", "SET", "maxmemory", "0", "dir", "."), ("CONFIG", "SET", "enable-debug-command", "yes"),
    ("CONFIG", "SET", "DATABASES", "5"), ("CONFIG", "SET", "MaxMemory", "1", "MAXMEMORY", "2"),
    ("CONFIG", "SET", "enable-protected-configs", "yes"), ("CONFIG", "GET", "enable-debug-command"),
    ("CONFIG", "GET", "enable-protected-configs"), ("MULTI",), ("DEBUG", "SLEEP", "0"), ("EXEC",),
    ("EVAL", "return redis.pcall('debug', 'sleep', '0')", "0"), ("PING",),
]


class ProtectedActionsTest(gbtest.GoblinAndRedisCase):
    """Redis 7.0 refuses DEBUG and CONFIG SET of dir and dbfilename (where
    snapshots are written: a client that may change both may write a file
    anywhere) unless enable-debug-command / enable-protected-configs allow
    the client."""

    def steps(self, srv, tcp):
        with Raw(srv, tcp=tcp) as c:
            return [c.call_raw(*cmd) for cmd in PROTECTED_STEPS]

    def test_refused_by_default_as_redis(self):
        with Server("goblin", protected=False) as g, Server("redis", protected=False) as r:
            for tcp in (False, True):
                got, want = self.steps(g, tcp), self.steps(r, tcp)
                for cmd, a, b in zip(PROTECTED_STEPS, got, want):
                    self.assertEqual(a, b, "%s over %s" % (" ".join(cmd), "TCP" if tcp else "the Unix socket"))
            self.assertTrue(got[0].startswith(b"-ERR DEBUG command not allowed."), got[0])

    def test_local_allows_unix_and_loopback_clients(self):
        args = ["--enable-debug-command", "local", "--enable-protected-configs", "local"]
        with Server("goblin", args=args, protected=False) as g, Server("redis", args=args, protected=False) as r:
            for tcp in (False, True):
                got, want = self.steps(g, tcp), self.steps(r, tcp)
                for cmd, a, b in zip(PROTECTED_STEPS, got, want):
                    self.assertEqual(a, b, "%s over %s" % (" ".join(cmd), "TCP" if tcp else "the Unix socket"))
                self.assertEqual(got[0], b"+OK\r\n")
                self.assertEqual(got[2], b"+OK\r\n")

    def test_yes_allows_everyone(self):
        args = ["--enable-debug-command", "yes", "--enable-protected-configs", "yes"]
        with Server("goblin", args=args, protected=False) as g, Raw(g, tcp=True) as c:
            self.assertEqual(c.call_raw("DEBUG", "SLEEP", "0"), b"+OK\r\n")
            self.assertEqual(c.call_raw("CONFIG", "SET", "dbfilename", "other.gdb"), b"+OK\r\n")


if __name__ == "__main__":
    gbtest.run_tests()
