"""Details where an independent fuzzing campaign found goblin-core answering
differently from Redis 7.0, each now compared with redis-server side by
side (skipped, saying why, without a redis-server 7.0):

* glob matching in KEYS and SCAN MATCH ("[a-]" is a range, "**" never
  matches an empty key);
* inline commands (a form feed inside a word, a NUL ending the line);
* WATCH of a key that had already expired when it was watched;
* over maxmemory, commands queued in MULTI, and EXEC before AUTH;
* lazy freeing: UNLINK and FLUSHDB ASYNC of a big value keep the server
  answering (the longest PING gap is measured against redis-server's);
* a blocked BZPOPMIN served when ZUNIONSTORE/ZRANGESTORE overwrites its key
  (a deliberate departure, asserted against redis-server's behaviour);
* OBJECT REFCOUNT and DEBUG OBJECT of an integer 0..9999, which Redis holds
  in a shared object (refcount 2147483647) unless COPY made it or an LRU/LFU
  maxmemory policy was in force;
* COPY's, MOVE's and SELECT's DB argument outside a 32-bit integer (Redis's
  range error), and EXPIRE's unknown option echoed whole in its error;
* BLPOP and XREAD BLOCK on 50,000 keys, which must hold nobody up longer
  than on redis-server;
* MODULE with no module loaded, under each enable-module-command setting,
  and `loadmodule`, which stops both servers at start-up.
"""

import socket
import threading
import time
import unittest

import gbtest
from gbtest import Raw, Server, SLOW, encode, parse_info, GoblinAndRedisCase


def both(case, *cmd):
    """The same command on both servers; the replies must be equal."""
    with Raw(case.goblin) as g, Raw(case.redis) as r:
        got, want = g.call(*cmd), r.call(*cmd)
    case.assertEqual(got, want, "%r: goblin %r, redis %r" % (cmd, got, want))
    return got


class Glob(GoblinAndRedisCase):
    KEYS = ["", "a", "b", "]", "^", "_", "`", "-", "[", "\\", "ab", "aXb", "a]b", "*", "?", "hello", "hallo",
            "h]llo", "x-y", "A", "Z"]
    PATTERNS = ["*", "**", "***", "?", "[a-]", "[^a-]", "[]-a]", "[a-c", "[c-a]", "[--0]", "[\\]]", "a[", "[",
                "\\", "*a*", "a*b", "h[a-]llo", "[!a]", "[a-]*", "*[", "[]]", "[A-a]", "x[-]y", "?*", "*?*"]

    def setUp(self):
        for srv in (self.goblin, self.redis):
            with Raw(srv) as c:
                c.call("FLUSHALL")
                for k in self.KEYS:
                    c.call("SET", k, "v")

    def test_keys(self):
        for p in self.PATTERNS:
            with Raw(self.goblin) as g, Raw(self.redis) as r:
                got, want = sorted(g.call("KEYS", p)), sorted(r.call("KEYS", p))
            self.assertEqual(got, want, "KEYS %r" % p)

    def test_scan_match(self):
        for p in self.PATTERNS:
            seen = {}
            for name, srv in (("goblin", self.goblin), ("redis", self.redis)):
                with Raw(srv) as c:
                    cur, out = b"0", set()
                    while True:
                        cur, batch = c.call("SCAN", cur, "MATCH", p, "COUNT", "100")
                        out.update(batch)
                        if cur == b"0":
                            break
                seen[name] = out
            self.assertEqual(seen["goblin"], seen["redis"], "SCAN MATCH %r" % p)


class Inline(GoblinAndRedisCase):
    LINES = [b"SET a\x0cb v\r\n", b"GET a\x0cb\r\n", b"ECHO \x0cx\r\n", b"ECHO x\x0b\r\n",
             b"ECHO \"q\"\x0c\r\n", b"ECHO 'x'\x0b\r\n", b"ECHO \"a\"b\r\n"]

    def test_nul_means_no_line_yet(self):
        # Redis finds the newline with strchr: a NUL before it hides it, so
        # the request waits for more until the inline limit refuses it.
        replies = []
        for srv in (self.goblin, self.redis):
            s = socket.socket(socket.AF_UNIX)
            s.settimeout(0.3)
            s.connect(srv.sock)
            s.sendall(b"ECHO a\x00b\r\n")
            try:
                early = s.recv(100)
            except socket.timeout:
                early = b""
            s.settimeout(5 * SLOW)
            s.sendall(b"x" * 70000)
            data = b""
            while b"\r\n" not in data:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
            s.close()
            replies.append((early, data))
        self.assertEqual(replies[0], replies[1])
        self.assertEqual(replies[0], (b"", b"-ERR Protocol error: too big inline request\r\n"))

    def test_inline_words(self):
        for line in self.LINES:
            replies = []
            for srv in (self.goblin, self.redis):
                s = socket.socket(socket.AF_UNIX)
                s.settimeout(5 * SLOW)
                s.connect(srv.sock)
                s.sendall(line + b"PING\r\n")
                data = b""
                while not data.endswith(b"+PONG\r\n"):
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                s.close()
                replies.append(data)
            self.assertEqual(replies[0], replies[1], "inline %r" % line)


class WatchExpired(GoblinAndRedisCase):
    def run_case(self, srv, reclaim):
        with Raw(srv) as c, Raw(srv) as other:
            c.call("FLUSHALL")
            c.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
            c.call("SET", "k", "v", "PX", "1")
            time.sleep(0.02)  # expired, not yet reclaimed
            self.assertEqual(c.call("WATCH", "k"), b"OK")
            reclaim(other)
            c.call("MULTI")
            c.call("SET", "done", "1")
            res = c.call("EXEC")
            c.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")
            return res

    def test_reclaimed_expired_key_is_no_change(self):
        cases = {
            "read": lambda o: o.call("GET", "k"),
            "exists": lambda o: o.call("EXISTS", "k"),
            "flushall": lambda o: o.call("FLUSHALL"),
            "swapdb": lambda o: o.call("SWAPDB", "0", "1"),
            "recreated": lambda o: o.call("SET", "k", "new"),
        }
        for name, reclaim in cases.items():
            got = self.run_case(self.goblin, reclaim)
            want = self.run_case(self.redis, reclaim)
            self.assertEqual(got, want, "WATCH of an expired key, then %s" % name)
        self.assertEqual(self.run_case(self.goblin, cases["read"]), [b"OK"])
        self.assertEqual(self.run_case(self.goblin, cases["recreated"]), None)

    def test_a_key_that_expires_after_its_watch_fails_exec(self):
        """A watched key that expires after WATCH, reclaimed or not, makes
        EXEC fail as a change would (Redis 7.0's isWatchedKeyExpired);
        goblin-core once committed such a transaction unless active expiry
        happened to have deleted the key first."""
        got = {}
        for name, srv in (("goblin", self.goblin), ("redis", self.redis)):
            with Raw(srv) as c:
                c.call("FLUSHALL")
                c.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
                c.call("SET", "k", "v", "PX", "1000")  # still there at WATCH on a loaded machine
                self.assertEqual(c.call("WATCH", "k"), b"OK")
                time.sleep(1.2)  # expired, not reclaimed
                c.call("MULTI")
                c.call("SET", "done", "1")
                got[name] = (c.call("EXEC"), c.call("EXISTS", "done"))
                c.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        self.assertEqual(got["goblin"], got["redis"])
        self.assertEqual(got["goblin"], (None, 0))


class ScanExpires(GoblinAndRedisCase):
    def test_scan_deletes_the_expired_keys_it_meets(self):
        """SCAN deletes a key past its time that passes its pattern, as an
        expiry (expired_keys, DEL propagated, the event); with TYPE through
        a read lookup, which counts a keyspace hit or miss (Redis 7.0's
        scanGenericCommand). goblin-core only left such keys out."""
        got = {}
        for name, srv in (("goblin", self.goblin), ("redis", self.redis)):
            with Raw(srv) as c:
                c.call("FLUSHALL")
                c.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
                c.call("MSET", "a", "1", "b", "1", "c", "1")
                c.call("PEXPIRE", "a", "1")
                c.call("PEXPIRE", "b", "1")
                time.sleep(0.1)
                c.call("CONFIG", "RESETSTAT")
                out = [c.call("SCAN", "0", "MATCH", "a", "COUNT", "100"), c.call("DBSIZE")]
                out.append(c.call("SCAN", "0", "TYPE", "string", "COUNT", "100"))
                out.append(c.call("DBSIZE"))
                stats = parse_info(c.call("INFO", "stats"))
                out += [stats["expired_keys"], stats["keyspace_hits"], stats["keyspace_misses"]]
                c.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")
                got[name] = out
        self.assertEqual(got["goblin"], got["redis"])
        self.assertEqual(got["goblin"], [[b"0", []], 2, [b"0", [b"c"]], 1, "2", "1", "1"])


class OverwriteServesWaiter(GoblinAndRedisCase):
    """A deliberate departure (docs/types.md): a client blocked in BZPOPMIN
    on a key that another client then overwrites with a sorted set
    (ZUNIONSTORE, ZRANGESTORE over a string there) is served at once by
    goblin-core. Redis 7.0 does not signal an overwrite, so its waiter
    sleeps until the key is created again (7.2 signals it, as goblin-core
    does). Both behaviours are asserted, so a change in either shows."""

    def waiter_served(self, srv, store):
        with Raw(srv) as waiter, Raw(srv) as writer:
            writer.call("FLUSHALL")
            writer.call("ZADD", "src", "1", "m")
            waiter.send_cmd("BZPOPMIN", "dst", "0")
            gbtest.wait_until(lambda: b"blocked_clients:1" in writer.call("INFO", "clients"), 10 * SLOW)
            writer.call("SET", "dst", "string")  # the wrong type: the waiter keeps waiting
            self.assertEqual(writer.call(*store), 1)
            served = waiter.read_raw_available(timeout=0.5 * SLOW)
            if not served:
                writer.call("DEL", "dst")
                writer.call("ZADD", "dst", "2", "n")  # a key created anew wakes either server
                return False, waiter.read()[1]
            return True, served

    def test_overwrite(self):
        for store in (["ZUNIONSTORE", "dst", "1", "src"], ["ZRANGESTORE", "dst", "src", "0", "-1"]):
            self.assertEqual(self.waiter_served(self.goblin, store),
                             (True, b"*3\r\n$3\r\ndst\r\n$1\r\nm\r\n$1\r\n1\r\n"), store)
            self.assertEqual(self.waiter_served(self.redis, store),
                             (False, b"*3\r\n$3\r\ndst\r\n$1\r\nn\r\n$1\r\n2\r\n"), store)


class BlockedServedFromReadyKey(GoblinAndRedisCase):
    """A client blocked on several keys is served from the key that became
    ready, as Redis 7.0 does: an earlier key holding another type is no
    WRONGTYPE, and of two keys made ready by one EXEC the first to get data
    serves it, not the first in the command."""

    SCENARIOS = [
        (["BZPOPMIN", "bk", "bk2", "0"], [["LPUSH", "bk", "1"], ["ZADD", "bk2", "1", "m"]]),
        (["BLPOP", "a", "b", "0"], [["MULTI"], ["RPUSH", "b", "x"], ["RPUSH", "a", "y"], ["EXEC"]]),
        (["BRPOP", "a", "b", "0"], [["SET", "a", "str"], ["RPUSH", "b", "1", "2"]]),
        (["BLMPOP", "0", "2", "a", "b", "LEFT", "COUNT", "5"], [["SET", "a", "str"], ["RPUSH", "b", "1", "2"]]),
        (["BZMPOP", "0", "2", "z1", "z2", "MAX"], [["HSET", "z1", "f", "v"], ["ZADD", "z2", "1", "a", "2", "b"]]),
        (["BZPOPMAX", "z1", "z2", "0"], [["MULTI"], ["ZADD", "z2", "1", "q"], ["ZADD", "z1", "5", "p"], ["EXEC"]]),
    ]

    def run_case(self, srv, block, writes):
        with Raw(srv) as waiter, Raw(srv) as writer:
            writer.call("FLUSHALL")
            waiter.send_cmd(*block)
            gbtest.wait_until(lambda: b"blocked_clients:1" in writer.call("INFO", "clients"), 10 * SLOW)
            for w in writes:
                writer.call(*w)
            served = waiter.read()[0]
            state = sorted((k, writer.call("TYPE", k)) for k in writer.call("KEYS", "*"))
            return served, state

    def test_scenarios(self):
        for block, writes in self.SCENARIOS:
            got = self.run_case(self.goblin, block, writes)
            want = self.run_case(self.redis, block, writes)
            self.assertEqual(got, want, "%r after %r" % (block, writes))
            self.assertNotIsInstance(got[0], gbtest.Err, block)


class MemoryAndAuth(GoblinAndRedisCase):
    def test_multi_over_maxmemory(self):
        for srv in (self.goblin, self.redis):
            with Raw(srv) as c:
                c.call("SET", "x", "1")
        both(self, "CONFIG", "SET", "maxmemory", "1")
        try:
            with Raw(self.goblin) as g, Raw(self.redis) as r:
                for cmd in (("MULTI",), ("ECHO", "x" * 1000), ("GET", "x"), ("EXEC",)):
                    self.assertEqual(g.call(*cmd), r.call(*cmd), cmd)
        finally:
            both(self, "CONFIG", "SET", "maxmemory", "0")

    def test_exec_before_auth(self):
        both(self, "CONFIG", "SET", "requirepass", "pw")
        try:
            with Raw(self.goblin) as g, Raw(self.redis) as r:
                for cmd in (("MULTI",), ("EXEC",)):
                    self.assertEqual(g.call(*cmd), r.call(*cmd), cmd)
                g.call("AUTH", "pw")
                r.call("AUTH", "pw")
                for cmd in (("CONFIG", "SET", "requirepass", ""),):
                    self.assertEqual(g.call(*cmd), r.call(*cmd), cmd)
        finally:
            for srv in (self.goblin, self.redis):
                with Raw(srv) as c:
                    c.call("AUTH", "pw")
                    c.call("CONFIG", "SET", "requirepass", "")


class ConfigSet(GoblinAndRedisCase):
    CASES = [("hz", "1000"), ("hz", "0"), ("hz", "-1"), ("hz", "10"),
             ("list-max-listpack-size", "-10"), ("list-max-listpack-size", "100000"),
             ("list-max-listpack-size", "-2147483648"), ("list-max-listpack-size", "-2"),
             ("hash-max-listpack-entries", "3000000000"), ("hash-max-listpack-entries", "-1"),
             ("hash-max-listpack-entries", "128"), ("set-max-intset-entries", "3000000000"),
             ("set-max-intset-entries", "512"), ("zset-max-listpack-value", "99999999999"),
             ("zset-max-listpack-value", "64"), ("maxclients", "0"), ("maxclients", "4294967296"),
             ("timeout", "-1"), ("timeout", "2147483647"), ("timeout", "0")]

    def test_ranges_and_clamping(self):
        for name, value in self.CASES:
            both(self, "CONFIG", "SET", name, value)
            both(self, "CONFIG", "GET", name)


class SharedIntegers(GoblinAndRedisCase):
    """Redis holds the integers 0..9999 of string values in shared objects
    and says so in OBJECT REFCOUNT; goblin-core shares nothing but gives the
    same replies (engine/core/keyspace/keyrecord.h, GB_KV_INT_SHARED)."""

    STEPS = [("SET", "a", "5"), ("SET", "big", "10000"), ("SET", "neg", "-1"), ("SET", "lead", "007"),
             ("SET", "text", "abc"), ("SET", "f", "1.5"), ("INCRBYFLOAT", "f", "0.5"), ("INCR", "neg"),
             ("SET", "d", "9998"), ("INCR", "d"), ("COPY", "a", "copied"), ("COPY", "a", "copied2"),
             ("RENAME", "copied2", "renamed_copy"), ("RENAME", "a", "renamed"), ("MSET", "m1", "1", "m2", "x"),
             ("SETNX", "nx", "3"), ("GETSET", "nx", "4"), ("SET", "g", "6", "GET"), ("RPUSH", "list", "1"),
             ("EVAL", "return redis.call('SET', KEYS[1], '42')", "1", "lua")]
    KEYS = ["renamed", "big", "neg", "lead", "text", "f", "d", "copied", "renamed_copy", "m1", "m2", "nx", "g",
            "list", "lua"]

    def refcounts(self):
        for k in self.KEYS:
            both(self, "OBJECT", "REFCOUNT", k)
            # DEBUG OBJECT's first fields (its address differs, and its
            # serializedlength and lru are not kept here)
            with Raw(self.goblin) as g, Raw(self.redis) as r:
                got, want = g.call("DEBUG", "OBJECT", k), r.call("DEBUG", "OBJECT", k)
            self.assertEqual(got.split(b" ")[2:4], want.split(b" ")[2:4], k)

    def test_refcounts(self):
        both(self, "FLUSHALL")
        for cmd in self.STEPS:
            both(self, *cmd)
        self.refcounts()
        both(self, "INCR", "d")            # 10000: an object of its own
        both(self, "INCR", "copied")       # COPY's private 5 becomes a shared 6
        both(self, "OBJECT", "REFCOUNT", "d")
        both(self, "OBJECT", "REFCOUNT", "copied")
        both(self, "DEBUG", "RELOAD")      # loading shares every small integer again
        self.refcounts()

    def test_policies(self):
        """Under an LRU or LFU policy with maxmemory set Redis shares no
        integer (each key needs its own access clock); the others share."""
        both(self, "FLUSHALL")
        try:
            both(self, "CONFIG", "SET", "maxmemory", "1gb")
            for policy in ("allkeys-lru", "volatile-lfu", "allkeys-random", "noeviction"):
                both(self, "CONFIG", "SET", "maxmemory-policy", policy)
                both(self, "SET", policy, "7")
                both(self, "OBJECT", "REFCOUNT", policy)
                both(self, "INCR", policy)
                both(self, "OBJECT", "REFCOUNT", policy)
            both(self, "CONFIG", "SET", "maxmemory", "0")
            both(self, "OBJECT", "REFCOUNT", "allkeys-lru")   # what it was made as
            both(self, "SET", "allkeys-lru", "7")
            both(self, "OBJECT", "REFCOUNT", "allkeys-lru")
        finally:
            both(self, "CONFIG", "SET", "maxmemory", "0")
            both(self, "CONFIG", "SET", "maxmemory-policy", "noeviction")


class RangeErrors(GoblinAndRedisCase):
    def test_copy_db(self):
        both(self, "SET", "src", "v")
        for db in ("9223372036854775807", "-9223372036854775808", "2147483648", "-2147483649", "2147483647",
                   "-1", "16", "abc", "1"):
            both(self, "COPY", "src", "dst", "DB", db, "REPLACE")

    def test_move_and_select_db(self):
        both(self, "SET", "k", "v")
        for db in ("2147483648", "-2147483649", "99999999999", "abc", "16", "-1"):
            both(self, "MOVE", "k", db)
            both(self, "SELECT", db)

    def test_expire_option_echoed_whole(self):
        # Redis prints an unknown option whole, up to its first NUL.
        both(self, "SET", "k", "v")
        for opt in ("x" * 3000, "ab\x00cd" + "y" * 200):
            both(self, "EXPIRE", "k", "10", opt)


class BlockingOnManyKeys(GoblinAndRedisCase):
    def test_blpop_of_many_keys_holds_nobody(self):
        """BLPOP and XREAD BLOCK on 50,000 missing keys: another client's
        PING is answered about as soon as from redis-server (goblin-core once
        compared each key with every key before it: 4.7 s for BLPOP, 3.9 s
        for XREAD, where Redis took 0.2 s)."""
        keys = ["bk%d" % i for i in range(50000)]
        for cmd in (["BLPOP"] + keys + ["0"], ["XREAD", "BLOCK", "0", "STREAMS"] + keys + ["$"] * len(keys)):
            took = {}
            for srv in (self.redis, self.goblin):
                with Raw(srv) as blocked, Raw(srv) as other:
                    t0 = time.monotonic()
                    blocked.send_cmd(*cmd)
                    self.assertEqual(other.call("PING"), b"PONG")
                    took[srv.kind] = time.monotonic() - t0
            self.assertLess(took["goblin"], max(1.0 * SLOW, 5 * took["redis"]), (cmd[0], took))


class Modules(unittest.TestCase):
    """MODULE as Redis 7.0 answers it with no module loaded. goblin-core
    loads no Redis modules (engine/commands/cmd_module.c): LIST is empty,
    UNLOAD finds nothing, and LOAD/LOADEX, where enable-module-command
    admits them, fail as Redis's load of a missing file does. HELP and
    LIST are not protected; LOAD, LOADEX and UNLOAD are."""

    CASES = [("MODULE", "LIST"), ("MODULE", "HELP"), ("MODULE", "LIST", "x"), ("MODULE", "HELP", "x"),
             ("MODULE",), ("MODULE", "NOSUCH"), ("MODULE", "LOAD"), ("MODULE", "UNLOAD"),
             ("MODULE", "UNLOAD", "a", "b"), ("MODULE", "LOAD", "/nonexistent/mod.so"),
             ("MODULE", "LOAD", "/nonexistent/mod.so", "arg1", "arg2"),
             ("MODULE", "LOADEX", "/nonexistent/mod.so", "CONFIG", "name", "value", "ARGS", "a"),
             ("MODULE", "LOADEX", "/nonexistent/mod.so", "CONFIG", "name"), ("MODULE", "UNLOAD", "ReJSON"),
             ("EVAL", "return redis.call('MODULE', 'LIST')", "0"),
             ("CONFIG", "SET", "enable-module-command", "yes"), ("CONFIG", "GET", "enable-module-command"),
             ("COMMAND", "INFO", "module|list", "module|load", "module|unload")]

    def compare(self, setting):
        args = [] if setting is None else ["--enable-module-command", setting]
        goblin, redis = Server("goblin", args=args), Server("redis", args=args)
        try:
            for cmd in self.CASES:
                with Raw(goblin) as g, Raw(redis) as r:
                    got, want = g.call(*cmd), r.call(*cmd)
                self.assertEqual(got, want, "%s %r" % (setting, cmd))
            if setting in ("yes", "local"):
                self.assertIn("Module /nonexistent/mod.so failed to load: goblin-core does not load Redis modules",
                              goblin.log())
        finally:
            goblin.cleanup()
            redis.cleanup()

    def test_default_refuses_load_and_unload(self):
        self.compare(None)

    def test_yes(self):
        self.compare("yes")

    def test_local(self):
        self.compare("local")  # the Unix socket is local

    def test_loadmodule_stops_start_up(self):
        """Redis stops when a module it is told to load does not load; so
        does goblin-core, for any module, saying why and what to do."""
        for kind in ("goblin", "redis"):
            for how in ("args", "config"):
                args = ["--loadmodule", "/nonexistent/mod.so"] if how == "args" else []
                config = "loadmodule /nonexistent/mod.so\n" if how == "config" else None
                srv = Server(kind, args=args, config=config, wait=False)
                try:
                    self.assertNotEqual(srv.proc.wait(15 * SLOW), 0, (kind, how))
                    log = srv.log()
                    self.assertIn("/nonexistent/mod.so", log, (kind, how))
                    if kind == "goblin":
                        self.assertIn("loadmodule /nonexistent/mod.so: goblin-core does not load Redis modules", log)
                        self.assertIn("remove the line to start without it", log)
                finally:
                    srv.cleanup()


class LazyFree(unittest.TestCase):
    """The longest PING gap while a big value is freed, goblin and Redis in
    the same run: a pinging client measures the time between replies while
    another client deletes a 1M-member set (UNLINK) or flushes (FLUSHDB
    ASYNC)."""

    N = 1000000

    def gap_during(self, kind, make, delete):
        """The longest PING gap while delete runs, and the server's own
        measure of the deleting command (its usec in INFO commandstats)."""
        with Server(kind) as srv, Raw(srv) as c:
            make(c)
            c.call("CONFIG", "RESETSTAT")
            stop, gaps = threading.Event(), []

            def pinger():
                with Raw(srv) as p:
                    last = time.perf_counter()
                    while not stop.is_set():
                        p.call("PING")
                        now = time.perf_counter()
                        gaps.append(now - last)
                        last = now

            t = threading.Thread(target=pinger)
            t.start()
            time.sleep(0.2)
            before = len(gaps)
            delete(c)
            time.sleep(0.5)
            stop.set()
            t.join()
            stats = gbtest.parse_info(c.call("INFO", "commandstats"))
            command_us = sum(int(dict(f.split("=") for f in stats[k].split(","))["usec"])
                             for k in ("cmdstat_unlink", "cmdstat_del", "cmdstat_flushdb") if k in stats)
            return (max(gaps[before:]) if len(gaps) > before else 0.0), command_us

    def make_set(self, c):
        for base in range(0, self.N, 100000):
            c.call("SADD", "big", *[str(i) for i in range(base, base + 100000)])
        self.assertEqual(c.call("SCARD", "big"), self.N)

    # What is asserted is the server's own measure of the deleting command
    # (INFO commandstats usec), against redis-server's DEL and FLUSHDB SYNC
    # of the same set in the same run, which free it inside the command:
    # goblin-core's UNLINK and FLUSHDB ASYNC hand the set to the lazy-free
    # thread, and its DEL and FLUSHDB SYNC to the engine's sliced freeing
    # (engine/core/memory/sliced_free.h: freed between events, not inside
    # the command), so all four take a small fraction of that. The longest
    # PING gap meanwhile is printed, not asserted: it is one scheduling
    # hiccup away from any bound on a loaded machine (a CI run saw 88-241 ms
    # with a neighbour test running); bench/stall_probe.py measures it.
    def test_unlink_and_flush_async_do_not_stall(self):
        gbtest.require_redis()
        rows = []
        cases = (("UNLINK", lambda c: self.assertEqual(c.call("UNLINK", "big"), 1),
                  lambda c: self.assertEqual(c.call("DEL", "big"), 1)),
                 ("FLUSHDB ASYNC", lambda c: self.assertEqual(c.call("FLUSHDB", "ASYNC"), b"OK"),
                  lambda c: self.assertEqual(c.call("FLUSHDB", "SYNC"), b"OK")))
        for what, delete, delete_in_foreground in cases:
            gap, command_us = self.gap_during("goblin", self.make_set, delete)
            sliced_gap, sliced_us = self.gap_during("goblin", self.make_set, delete_in_foreground)
            redis_gap, redis_us = self.gap_during("redis", self.make_set, delete_in_foreground)
            rows.append((what, gap, sliced_gap, redis_gap))
            for how, us in ((what, command_us), ("its synchronous form, freed in slices", sliced_us)):
                self.assertLess(us * 10, redis_us, "%s ran %d us on goblin-core; redis-server freed the set "
                                "inside the command in %d us" % (how, us, redis_us))
        print("\n    longest PING gap while freeing a 1M-member set (goblin / goblin synchronous, in slices / "
              "redis synchronous): " + ", ".join("%s %.2f / %.2f / %.2f ms" % (w, g * 1e3, f * 1e3, r * 1e3)
                                                 for w, g, f, r in rows), end=" ")

    def test_lazy_settings(self):
        with Server("goblin") as srv, Raw(srv) as c:
            for name in ("lazyfree-lazy-expire", "lazyfree-lazy-server-del", "lazyfree-lazy-user-del",
                         "lazyfree-lazy-user-flush"):
                self.assertEqual(c.call("CONFIG", "GET", name), [name.encode(), b"no"])
            c.call("CONFIG", "SET", "lazyfree-lazy-user-del", "yes")
            c.call("SADD", "s", *[str(i) for i in range(1000)])
            self.assertEqual(c.call("DEL", "s"), 1)
            self.assertTrue(gbtest.wait_until(
                lambda: int(gbtest.parse_info(c.call("INFO", "memory"))["lazyfreed_objects"]) >= 1, 5 * SLOW))
            self.assertIn("lazyfree_pending_objects", gbtest.parse_info(c.call("INFO", "memory")))


if __name__ == "__main__":
    gbtest.run_tests()
