"""Real clients against goblin-core: redis-cli (commands, --pipe mass
insertion, --scan, --bigkeys, -x), redis-benchmark over the Unix socket and
TCP, and redis-py (strings, pipelines, WATCH transactions with retries,
scan_iter, expiry, CLIENT, INFO, databases, AUTH/HELLO with --requirepass).
"""

import os
import re
import subprocess
import threading
import time
import unittest

import gbtest
import resp3
from gbtest import Server, SLOW

import redis

CLI = gbtest.REDIS_CLI
BENCH = gbtest.REDIS_BENCHMARK


def run(cmd, input=None, timeout=60):
    p = subprocess.run(cmd, input=input, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout * SLOW)
    return p.returncode, p.stdout, p.stderr


class RedisCli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not CLI:
            gbtest.reference_missing("redis-cli not installed")
        cls.srv = Server("goblin")

    @classmethod
    def tearDownClass(cls):
        cls.srv.cleanup()

    def cli(self, *args, input=None, tcp=False):
        where = ["-h", "127.0.0.1", "-p", str(self.srv.port)] if tcp else ["-s", self.srv.sock]
        rc, out, err = run([CLI] + where + list(args), input=input)
        self.assertEqual(rc, 0, "redis-cli %s failed: %s %s" % (args, out, err))
        return out.decode()

    def test_commands(self):
        self.assertEqual(self.cli("PING"), "PONG\n")
        self.assertEqual(self.cli("SET", "greeting", "hello world"), "OK\n")
        self.assertEqual(self.cli("GET", "greeting", tcp=True), "hello world\n")
        self.assertEqual(self.cli("APPEND", "greeting", "!"), "12\n")
        self.assertEqual(self.cli("INCRBY", "counter", "41"), "41\n")
        self.assertEqual(self.cli("INCR", "counter"), "42\n")
        self.assertIn("ERR value is not an integer or out of range", self.cli("INCR", "greeting"))
        self.assertEqual(self.cli("MGET", "greeting", "nokey", "counter"), "hello world!\n\n42\n")
        self.assertEqual(self.cli("-n", "3", "SET", "indb3", "x"), "OK\n")
        self.assertEqual(self.cli("-n", "3", "DBSIZE"), "1\n")
        self.assertEqual(self.cli("EXISTS", "indb3"), "0\n")
        self.assertEqual(self.cli("--no-raw", "GET", "nokey"), "(nil)\n")
        self.assertEqual(self.cli("--no-raw", "TTL", "greeting"), "(integer) -1\n")
        self.assertIn("ERR unknown command 'NOSUCH', with args beginning with: 'a' ", self.cli("NOSUCH", "a"))
        info = self.cli("INFO", "keyspace")
        self.assertIn("db0:keys=", info)
        self.assertIn("db3:keys=1,expires=0", info)

    def test_stdin_commands_and_x(self):
        out = self.cli(input=b"SET piped 1\nINCR piped\nGET piped\n")
        self.assertEqual(out, "OK\n2\n2\n")
        blob = bytes(range(256)) * 40
        self.assertEqual(self.cli("-x", "SET", "blob", input=blob), "OK\n")
        self.assertEqual(self.cli("STRLEN", "blob"), "%d\n" % len(blob))
        r = self.srv.redis()
        self.assertEqual(r.get("blob"), blob)
        r.close()

    def test_pipe_mass_insertion(self):
        n = 10000
        proto = b"".join(gbtest.encode("SET", "mass:%d" % i, "value-%d" % i) for i in range(n))
        # A few commands that fail: counted as errors by redis-cli --pipe.
        proto += b"".join(gbtest.encode("INCR", "mass:%d" % i) for i in range(5))
        rc, out, err = run([CLI, "-s", self.srv.sock, "--pipe"], input=proto, timeout=120)
        text = out.decode()
        self.assertEqual(rc, 1, "redis-cli --pipe exits 1 when some replies were errors: %s %s" % (text, err))
        self.assertIn("All data transferred. Waiting for the last reply...", text)
        self.assertIn("Last reply received from server.", text)
        self.assertRegex(text, r"errors: 5, replies: %d\b" % (n + 5))
        r = self.srv.redis()
        self.assertEqual(r.get("mass:0"), b"value-0")
        self.assertEqual(r.get("mass:9999"), b"value-9999")
        self.assertEqual(len(r.mget(["mass:%d" % i for i in range(n)])), n)
        self.assertTrue(all(v == b"value-%d" % i for i, v in enumerate(r.mget(["mass:%d" % i for i in range(n)]))))
        r.close()
        # Clean run: exit 0, no errors.
        proto = b"".join(gbtest.encode("SET", "clean:%d" % i, "v") for i in range(2000))
        rc, out, _ = run([CLI, "-h", "127.0.0.1", "-p", str(self.srv.port), "--pipe"], input=proto)
        self.assertEqual(rc, 0)
        self.assertIn("errors: 0, replies: 2000", out.decode())
        # --scan sees all of them.
        scanned = self.cli("--scan", "--pattern", "clean:*").split()
        self.assertEqual(sorted(scanned), sorted("clean:%d" % i for i in range(2000)))

    def test_bigkeys_and_memkeys(self):
        r = self.srv.redis(db=5)
        r.set("big", "x" * 5000)
        r.set("small", "y")
        r.close()
        out = self.cli("-n", "5", "--bigkeys")
        self.assertIn("Biggest string found '\"big\"' has 5000 bytes", out)
        self.assertIn("2 strings with 5001 bytes", out)
        out = self.cli("-n", "5", "--memkeys")
        self.assertRegex(out, r"Biggest string found '\"big\"' has \d+ bytes")


class RedisBenchmark(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not BENCH:
            gbtest.reference_missing("redis-benchmark not installed")
        cls.srv = Server("goblin")

    @classmethod
    def tearDownClass(cls):
        cls.srv.cleanup()

    def bench(self, where, extra=()):
        cmd = [BENCH] + where + ["-t", "set,get,incr", "-n", "20000", "-q"] + list(extra)
        rc, out, err = run(cmd, timeout=120)
        self.assertEqual(rc, 0, "%s: %s %s" % (cmd, out, err))
        # -q prints progress with \r, then one line per test.
        text = out.decode().replace("\r", "\n")
        rates = {}
        for m in re.finditer(r"^(SET|GET|INCR): ([0-9.]+) requests per second", text, re.M):
            rates[m.group(1)] = float(m.group(2))
        self.assertEqual(set(rates), {"SET", "GET", "INCR"}, text)
        for k, v in rates.items():
            self.assertGreater(v, 0, k)
        # Only the expected warning: goblin-core has no "save" setting.
        for line in err.decode().splitlines():
            self.assertIn("Could not fetch server CONFIG", line)
        print("\n    %s: %s" % (" ".join(where[:2]), ", ".join("%s %.0f/s" % kv for kv in sorted(rates.items()))),
              end=" ")
        return rates

    def test_unix_socket(self):
        self.bench(["-s", self.srv.sock])
        self.assertTrue(self.srv.ping_ok())

    def test_tcp(self):
        self.bench(["-h", "127.0.0.1", "-p", str(self.srv.port)])

    def test_tcp_pipelined_many_clients_random_keys(self):
        self.bench(["-h", "127.0.0.1", "-p", str(self.srv.port)], ["-P", "16", "-c", "40", "-r", "1000"])
        r = self.srv.redis()
        self.assertGreater(r.dbsize(), 1)
        # -r: random key names for SET/GET ("key:NNN") and INCR ("counter:NNN").
        self.assertGreater(len(r.keys("key:0*")), 1)
        self.assertGreater(len(r.keys("counter:0*")), 1)
        r.close()


class RedisPy(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = Server("goblin")

    @classmethod
    def tearDownClass(cls):
        cls.srv.cleanup()

    def setUp(self):
        self.r = self.srv.redis()
        self.r.flushall()

    def tearDown(self):
        self.r.close()

    def test_strings(self):
        r = self.r
        self.assertTrue(r.set("s", "v"))
        self.assertEqual(r.get("s"), b"v")
        self.assertIsNone(r.set("s", "w", nx=True))
        self.assertTrue(r.set("s", "w", xx=True))
        self.assertEqual(r.set("s", "x", get=True), b"w")
        self.assertTrue(r.set("s", "y", ex=100))
        self.assertTrue(r.set("s", "z", keepttl=True))
        self.assertGreater(r.ttl("s"), 90)
        self.assertEqual(r.append("s", "123"), 4)
        self.assertEqual(r.getrange("s", 1, -1), b"123")
        self.assertEqual(r.setrange("s", 6, "!"), 7)
        self.assertEqual(r.get("s"), b"z123\x00\x00!")
        self.assertEqual(r.strlen("s"), 7)
        self.assertTrue(r.mset({"a": 1, "b": 2}))
        self.assertEqual(r.mget("a", "b", "nokey"), [b"1", b"2", None])
        self.assertFalse(r.msetnx({"a": 3, "c": 4}))
        self.assertEqual(r.incr("a"), 2)
        self.assertEqual(r.incrby("a", 40), 42)
        self.assertEqual(r.decr("a"), 41)
        self.assertEqual(r.decrby("a", 41), 0)
        self.assertEqual(r.getset("a", "new"), b"0")
        self.assertEqual(r.getdel("a"), b"new")
        self.assertIsNone(r.get("a"))
        self.assertTrue(r.setnx("n", 1))
        self.assertFalse(r.setnx("n", 2))
        self.assertTrue(r.setex("e", 100, "v"))
        self.assertTrue(r.psetex("p", 100000, "v"))
        self.assertEqual(r.getex("e", persist=True), b"v")
        self.assertEqual(r.ttl("e"), -1)
        self.assertEqual(r.getex("e", px=50000), b"v")
        self.assertGreater(r.pttl("e"), 40000)
        with self.assertRaises(redis.ResponseError) as cm:
            r.incr("s")
        self.assertIn("not an integer", str(cm.exception))
        with self.assertRaises(redis.ResponseError):
            r.incrby("n", 2 ** 63 - 1)
        big = os.urandom(1 << 20)
        self.assertTrue(r.set("big", big))
        self.assertEqual(r.get("big"), big)
        self.assertEqual(r.object("encoding", "n"), b"int")
        self.assertEqual(r.type("big"), b"string")

    def test_pipeline(self):
        p = self.r.pipeline(transaction=False)
        for i in range(2000):
            p.set("p:%d" % i, i)
            p.incr("p:%d" % i)
        p.get("p:1999")
        p.incr("p:0x")
        p.get("p:0x")
        res = p.execute(raise_on_error=False)
        self.assertEqual(len(res), 4003)
        self.assertEqual(res[:4], [True, 1, True, 2])
        self.assertEqual(res[4000], b"2000")
        self.assertEqual(res[4001:], [1, b"1"])
        self.assertEqual(self.r.dbsize(), 2001)

    def test_transactions_with_watch_retries(self):
        self.r.set("counter", 0)
        threads, per_thread = 4, 100
        retries = [0]
        lock = threading.Lock()

        def worker():
            c = self.srv.redis()
            try:
                for _ in range(per_thread):
                    while True:
                        try:
                            with c.pipeline() as p:
                                p.watch("counter")
                                v = int(p.get("counter"))
                                p.multi()
                                p.set("counter", v + 1)
                                p.execute()
                            break
                        except redis.WatchError:
                            with lock:
                                retries[0] += 1
            finally:
                c.close()

        ts = [threading.Thread(target=worker) for _ in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(120 * SLOW)
        self.assertEqual(int(self.r.get("counter")), threads * per_thread)
        print("\n    %d WATCH conflicts retried" % retries[0], end=" ")

        # r.transaction() helper with a forced conflict on the first try.
        other = self.srv.redis()
        calls = [0]

        def tx(pipe):
            calls[0] += 1
            v = int(pipe.get("counter"))
            if calls[0] == 1:
                other.incr("counter")  # invalidates the WATCH
            pipe.multi()
            pipe.set("counter", v * 2)
        self.r.transaction(tx, "counter")
        other.close()
        self.assertEqual(calls[0], 2)
        self.assertEqual(int(self.r.get("counter")), (threads * per_thread + 1) * 2)

        # Errors inside a transaction.
        p = self.r.pipeline()
        p.set("t", "abc")
        p.incr("t")
        p.get("t")
        res = p.execute(raise_on_error=False)
        self.assertEqual(res[0], True)
        self.assertIsInstance(res[1], redis.ResponseError)
        self.assertEqual(res[2], b"abc")
        with self.assertRaises(redis.ResponseError) as cm:
            p = self.r.pipeline()
            p.set("t", "1")
            p.execute_command("SET", "t")  # wrong arity: refused at queue time, EXEC aborts
            p.execute()
        self.assertIn("wrong number of arguments for 'set' command", str(cm.exception))
        self.assertEqual(self.r.get("t"), b"abc")

    def test_scan_iter(self):
        n = 5000
        p = self.r.pipeline(transaction=False)
        for i in range(n):
            p.set("scan:%d" % i, "v")
        p.set("other", "v")
        p.execute()
        seen = list(self.r.scan_iter(match="scan:*", count=100))
        self.assertGreaterEqual(len(seen), n)
        self.assertEqual(set(seen), {b"scan:%d" % i for i in range(n)})
        everything = set(self.r.scan_iter(count=7))
        self.assertEqual(len(everything), n + 1)
        self.assertEqual(set(self.r.scan_iter(_type="string", match="other")), {b"other"})
        self.assertEqual(set(self.r.scan_iter(_type="list")), set())
        self.assertEqual(len(self.r.keys("scan:1*")), 1111)
        # Keys added and removed during the iteration: all present ones
        # that existed from start to end are returned.
        it = self.r.scan_iter(count=50)
        got = set()
        for i, k in enumerate(it):
            got.add(k)
            if i == 100:
                for j in range(2000):
                    self.r.set("during:%d" % j, "v")
                self.r.delete(*["scan:%d" % j for j in range(4000, 5000)])
        self.assertTrue({b"scan:%d" % i for i in range(4000)} <= got)

    def test_expiry(self):
        r = self.r
        r.set("x", "v")
        self.assertTrue(r.expire("x", 100))
        self.assertIn(r.ttl("x"), (99, 100))
        self.assertFalse(r.expire("x", 50, gt=True))
        self.assertTrue(r.expire("x", 50, lt=True))
        self.assertFalse(r.expire("x", 10, nx=True))
        self.assertTrue(r.expire("x", 10, xx=True))
        now = int(time.time())
        self.assertTrue(r.expireat("x", now + 1000))
        self.assertAlmostEqual(r.execute_command("EXPIRETIME", "x"), now + 1000, delta=1)
        self.assertTrue(r.pexpire("x", 200000))  # (no stall before PERSIST reaches it)
        self.assertTrue(0 < r.pttl("x") <= 200000)
        self.assertTrue(r.persist("x"))
        self.assertEqual(r.ttl("x"), -1)
        self.assertEqual(r.ttl("nokey"), -2)
        r.set("short", "v", px=100)
        time.sleep(0.25)
        self.assertIsNone(r.get("short"))
        self.assertFalse(r.exists("short"))
        r.set("gone", "v")
        self.assertTrue(r.expire("gone", -1))
        self.assertEqual(r.exists("gone"), 0)

    def test_client_commands(self):
        r = self.r
        self.assertTrue(r.client_setname("tester"))
        self.assertIn(r.client_getname(), ("tester", b"tester"))  # redis-py 4.3 decodes it
        my_id = r.client_id()
        clients = r.client_list()
        me = [c for c in clients if int(c["id"]) == my_id]
        self.assertEqual(len(me), 1)
        self.assertEqual(me[0]["name"], "tester")
        for field in ("addr", "fd", "age", "idle", "db", "cmd"):
            self.assertIn(field, me[0])
        other = self.srv.redis(tcp=True)
        other.client_setname("victim")
        other_id = other.client_id()
        self.assertTrue(any(c["name"] == "victim" and c["addr"].startswith("127.0.0.1:") for c in r.client_list()))
        self.assertEqual(r.client_kill_filter(_id=other_id), 1)
        self.assertFalse(any(c.get("name") == "victim" for c in r.client_list()))
        other.close()
        with self.assertRaises(redis.ResponseError):
            r.client_setname("has space")

    def test_info(self):
        r = self.r
        r.set("k", "v")
        r.set("kx", "v", ex=100)
        info = r.info()
        for field in ("redis_version", "tcp_port", "uptime_in_seconds", "connected_clients", "used_memory",
                      "total_commands_processed", "keyspace_hits"):
            self.assertIn(field, info)
        self.assertEqual(info["tcp_port"], self.srv.port)
        self.assertEqual(info["db0"], {"keys": 2, "expires": 1, "avg_ttl": info["db0"]["avg_ttl"]})
        stats = r.info("commandstats")
        self.assertGreaterEqual(stats["cmdstat_set"]["calls"], 2)
        self.assertIn("usec_per_call", stats["cmdstat_set"])
        # Commandstats time 1 call in 16 and scale up: 40 calls (3 timed)
        # still report every call and a positive time for all of them.
        r.config_resetstat()
        for i in range(40):
            r.incr("counter")
        incr = r.info("commandstats")["cmdstat_incrby"]  # redis-py sends INCRBY key 1
        self.assertEqual(incr["calls"], 40)
        self.assertGreater(incr["usec_per_call"], 0)
        self.assertAlmostEqual(incr["usec"], incr["usec_per_call"] * 40, delta=1 + incr["usec"] * 0.05)
        self.assertEqual(set(r.info("memory")) >= {"used_memory", "used_memory_human", "maxmemory"}, True)
        self.assertTrue(r.config_resetstat())
        self.assertEqual(r.info("stats")["keyspace_hits"], 0)
        self.assertEqual(r.config_get("maxmemory-policy"), {"maxmemory-policy": "noeviction"})
        self.assertGreater(r.command_count(), 50)
        cmds = r.command()  # redis-py parses COMMAND's reply
        self.assertEqual(cmds["get"]["arity"], 2)
        self.assertIn("readonly", cmds["get"]["flags"])
        self.assertEqual(len(r.time()), 2)

    def test_databases(self):
        r0 = self.r
        r1 = self.srv.redis(db=1)
        try:
            r0.set("a", "in0")
            r1.set("a", "in1")
            r1.set("b", "only1")
            self.assertTrue(r0.swapdb(0, 1))
            self.assertEqual(r0.get("a"), b"in1")
            self.assertEqual(r1.get("a"), b"in0")
            self.assertTrue(r0.move("b", 1))
            self.assertFalse(r0.exists("b"))
            self.assertEqual(r1.get("b"), b"only1")
            self.assertFalse(r1.move("nokey", 0))
            self.assertTrue(r0.copy("a", "a2", destination_db=2))
            r2 = self.srv.redis(db=2)
            self.assertEqual(r2.get("a2"), b"in1")
            r2.close()
            with self.assertRaises(redis.ResponseError) as cm:
                r0.execute_command("SELECT", 16)
            self.assertIn("DB index is out of range", str(cm.exception))
            r16 = self.srv.redis(db=16)
            with self.assertRaises(redis.ResponseError):
                r16.ping()
            r16.close()
        finally:
            r1.close()


class RedisPyAuth(unittest.TestCase):
    PW = "pa ss\"word"

    @classmethod
    def setUpClass(cls):
        cls.srv = Server("goblin", args=["--requirepass", cls.PW])

    @classmethod
    def tearDownClass(cls):
        cls.srv.cleanup()

    def test_noauth_and_wrongpass(self):
        r = self.srv.redis()
        with self.assertRaises(redis.AuthenticationError):
            r.get("k")
        r.close()
        r = self.srv.redis(password="wrong")
        # redis-py 4.x raises WRONGPASS from its connect-time AUTH as a plain
        # ResponseError (the same with redis-server).
        with self.assertRaises(redis.ResponseError) as cm:
            r.ping()
        self.assertIn("invalid username-password pair", str(cm.exception))
        r.close()

    def test_auth(self):
        for kw in ({"password": self.PW}, {"username": "default", "password": self.PW}):
            for tcp in (False, True):
                r = self.srv.redis(tcp=tcp, **kw)
                self.assertTrue(r.ping())
                self.assertTrue(r.set("k", "v"))
                r.close()
        r = self.srv.redis(username="someone", password=self.PW)
        with self.assertRaises(redis.ResponseError) as cm:
            r.ping()
        self.assertIn("WRONGPASS", str(cm.exception))
        r.close()

    def test_hello(self):
        r = self.srv.redis()
        hello = r.execute_command("HELLO", 2, "AUTH", "default", self.PW, "SETNAME", "via-hello")
        fields = dict(zip(hello[::2], hello[1::2]))
        self.assertEqual(fields[b"proto"], 2)
        self.assertEqual(fields[b"version"], b"7.0.15")
        self.assertIn(b"id", fields)
        self.assertIn(r.client_getname(), ("via-hello", b"via-hello"))
        self.assertTrue(r.set("after-hello", 1))
        r.close()
        # HELLO 3 switches to RESP3 (redis-py 4 reads RESP2 only: a raw
        # RESP3 connection checks the map), HELLO 2 back.
        with resp3.Conn(self.srv, proto=2) as c:
            self.assertEqual(c.call("AUTH", self.PW).raw, b"+OK\r\n")
            h = c.call("HELLO", "3")
            self.assertEqual(h.kind, "%")
            self.assertEqual({k.value: v.value for k, v in h.value}[b"proto"], 3)
            self.assertEqual(c.call("GET", "nokey").raw, b"_\r\n")
            self.assertEqual(c.call("HELLO", "2").kind, "*")
            self.assertEqual(c.call("GET", "nokey").raw, b"$-1\r\n")
        fresh = self.srv.redis()
        with self.assertRaises(redis.AuthenticationError) as cm:  # a NOAUTH reply
            fresh.execute_command("HELLO", 2)
        self.assertIn("HELLO must be called with the client already authenticated", str(cm.exception))
        with self.assertRaises(redis.ResponseError) as cm:
            fresh.execute_command("HELLO", 2, "AUTH", "default", "nope")
        self.assertIn("WRONGPASS", str(cm.exception))
        fresh.close()


if __name__ == "__main__":
    gbtest.run_tests()
