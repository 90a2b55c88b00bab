"""Scripting as a server lives with it: busy scripts and their killing from
other connections, memory (OOM inside a script, Lua's heap counted and
bounded), scripts inside MULTI and under WATCH, blocking commands inside
scripts, what the append-only log receives (effects, never the script),
functions across restarts (snapshot, log, rewrite), FUNCTION DUMP/RESTORE,
the sandbox (each escape refused), hostile scripts and payloads, INFO.

Where Redis defines the observable behaviour the scenario also runs on
redis-server 7.0 and the replies are compared.
"""

import os
import shutil
import socket
import tempfile
import time
import unittest

import gbtest
from gbtest import Raw, Server, SLOW, wait_until, parse_info, Err, encode

LOOP = "local i = 0 while true do i = i + 1 end"
# A pattern that fails after 2^40 steps of backtracking, all inside one C call.
BACKTRACK = "string.find(string.rep('a', 40), string.rep('a?', 40) .. 'b')"


def both(test):
    """The server kinds a scenario runs on: goblin-core, and redis-server
    7.0 when it is installed."""
    return gbtest.goblin_and_redis()


def start_busy(srv, *cmd):
    """Sends a command that runs a long script and does not wait for it;
    returns the connection and, once others get BUSY, nothing."""
    c = Raw(srv, timeout=60 * SLOW)
    c.send_cmd(*cmd)
    with Raw(srv) as probe:
        ok = wait_until(lambda: isinstance(probe.call("PING"), Err), 10 * SLOW, 0.02)
    if not ok:
        c.close()
        raise AssertionError("the script never became busy")
    return c


class BusyScripts(unittest.TestCase):
    def server(self, kind, *args):
        s = Server(kind, ["--busy-reply-threshold", "100"] + list(args)) if kind == "goblin" else \
            Server(kind, ["--busy-reply-threshold", "100"] + list(args))
        self.addCleanup(s.cleanup)
        return s

    def test_busy_then_script_kill_from_a_second_connection(self):
        """Others get BUSY (Redis's text), a connection opened during the
        script is served too, SCRIPT KILL stops it, the caller gets Redis's
        error, and the server serves normally afterwards."""
        seen = {}
        for kind in both(self):
            srv = self.server(kind)
            with Raw(srv) as other:
                busy = start_busy(srv, "EVAL", LOOP, "0")
                with Raw(srv) as late:  # connected while the script runs
                    r = [other.call_raw("GET", "k"), late.call_raw("PING"), other.call_raw("SCRIPT", "LOAD", "return 1"),
                         other.call_raw("FUNCTION", "KILL"), other.call_raw("SHUTDOWN"),
                         other.call_raw("MULTI"), other.call_raw("GET", "k"), other.call_raw("DISCARD"),
                         other.call_raw("FUNCTION", "STATS")]  # BUSY during an EVAL
                    r.append(late.call_raw("SCRIPT", "KILL"))
                killed = busy.read()[1]
                sha = other.call("SCRIPT", "LOAD", LOOP).decode()
                r.append(killed.replace(sha.encode(), b"<sha>"))
                r.append(other.call_raw("PING"))
                busy.close()
            seen[kind] = r
        g = seen["goblin"]
        self.assertEqual(g[0], b"-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n")
        self.assertEqual(g[-3], b"+OK\r\n")
        self.assertEqual(g[-1], b"+PONG\r\n")
        if "redis" in seen:
            self.assertEqual(g, seen["redis"])

    def test_the_caller_leaving_during_its_script(self):
        """The caller closes its connection while its script runs (alone,
        and inside a transaction): the script runs on for everyone else as
        before (BUSY, then SCRIPT KILL), nobody receives its reply, and the
        transaction's rest never runs. goblin-core on io_uring once freed
        the caller at the close: the next connection took its place, hung,
        then got the script's error, and EXEC read its freed queue."""
        seen = {}
        for kind in both(self):
            srv = self.server(kind)
            r = []
            for cmds in ([("EVAL", LOOP, "0")], [("MULTI",), ("EVAL", LOOP, "0"), ("SET", "after", "1"), ("EXEC",)]):
                busy = start_busy(srv, *cmds[-1]) if len(cmds) == 1 else None
                if busy is None:
                    busy = Raw(srv)
                    busy.send(b"".join(encode(*c) for c in cmds))
                    with Raw(srv) as probe:
                        self.assertTrue(wait_until(lambda: probe.call_raw("PING").startswith(b"-BUSY"), 10 * SLOW))
                busy.close()
                time.sleep(0.2)
                with Raw(srv) as late, Raw(srv) as other:
                    r.append(late.call_raw("PING"))
                    r.append(other.call_raw("SCRIPT", "KILL"))
                    r.append(late.read_raw_available(0.3))  # nothing of the script's
                    self.assertTrue(wait_until(lambda: other.call_raw("PING") == b"+PONG\r\n", 10 * SLOW))
                    r.append(other.call_raw("EXISTS", "after"))
            seen[kind] = r
        g = seen["goblin"]
        self.assertTrue(g[0].startswith(b"-BUSY"), g)
        self.assertEqual(g[3], b":0\r\n")
        if "redis" in seen:
            self.assertEqual(g, seen["redis"])

    def test_the_caller_sending_more_during_its_script(self):
        """The script's own client sends more while the script runs: its
        bytes wait, and the running command's arguments stay as they were
        (SLOWLOG shows them). On io_uring the bytes were taken into the
        query buffer, whose growth moved it under the command's arguments:
        SLOWLOG showed freed memory."""
        for kind in both(self):
            srv = self.server(kind)
            marker = "ARGUMENT-MARKER-" + "m" * 40
            timed = ("local s = redis.call('TIME') local t0 = s[1] * 1000000 + s[2] "
                     "while true do local t = redis.call('TIME') "
                     "if t[1] * 1000000 + t[2] - t0 > 800000 then break end end return 1")
            with Raw(srv) as other:
                other.call("SLOWLOG", "RESET")
                busy = start_busy(srv, "EVAL", timed, "0", marker)
                busy.send(b"PING\r\n" * 30000)
                for _ in range(4):  # new connections meanwhile: their buffers take freed memory
                    with Raw(srv) as late:
                        self.assertTrue(late.call_raw("ECHO", "x" * 3000).startswith(b"-BUSY"))
                self.assertEqual(busy.read()[0], 1)
                for _ in range(30000):
                    self.assertEqual(busy.read()[0], b"PONG")
                busy.close()
                entry = [e for e in other.call("SLOWLOG", "GET", "10") if e[3][0].upper() == b"EVAL"][0]
                self.assertEqual(entry[3][2:], [b"0", marker.encode()], kind)
                self.assertTrue(entry[3][1].startswith(timed[:100].encode()), kind)  # (SLOWLOG cuts it at 128)

    def test_function_kill_stats_and_unkillable(self):
        seen = {}
        lib = "#!lua name=busy\nredis.register_function{function_name='spin', callback=function() %s end, " \
              "flags={'no-writes'}}\nredis.register_function('wspin', function(k) redis.call('set', k[1], 'v') %s end)" \
              % (LOOP, LOOP)
        for kind in both(self):
            srv = self.server(kind)
            with Raw(srv) as other:
                other.call("FUNCTION", "LOAD", lib)
                busy = start_busy(srv, "FCALL", "spin", "0", "a1")
                stats = other.call("FUNCTION", "STATS")
                running = stats[1]
                r = [other.call_raw("PING"), other.call_raw("SCRIPT", "KILL"), running[0], running[1], running[2], running[3],
                     other.call_raw("FUNCTION", "KILL")]
                r.append(busy.read()[1])
                busy.close()
                busy = start_busy(srv, "FCALL", "wspin", "1", "w")
                r += [other.call_raw("FUNCTION", "KILL"), other.call_raw("SCRIPT", "KILL")]
                # Only SHUTDOWN NOSAVE ends a script that wrote.
                other.send_cmd("SHUTDOWN", "NOSAVE")
                self.assertTrue(srv.proc.wait(timeout=20 * SLOW) is not None)
                busy.close()
            seen[kind] = r
        g = seen["goblin"]
        self.assertEqual(g[0], b"-BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.\r\n")
        self.assertEqual(g[2:6], [b"name", b"spin", b"command", [b"FCALL", b"spin", b"0", b"a1"]])
        self.assertTrue(g[8].startswith(b"-UNKILLABLE"))
        if "redis" in seen:
            self.assertEqual(g, seen["redis"])

    def assert_killed(self, srv, kill, *cmd):
        """Runs cmd until others get BUSY, stops it with kill (SCRIPT or
        FUNCTION), and checks the caller's error: Redis's text names
        SCRIPT KILL whichever command stopped it."""
        busy = start_busy(srv, *cmd)
        with Raw(srv) as other:
            self.assertEqual(other.call(kill, "KILL"), b"OK", cmd)
            reply = busy.read()[0]
            busy.close()
            self.assertIsInstance(reply, Err, cmd)
            self.assertIn(b"Script killed by user with SCRIPT KILL", reply, cmd)
            self.assertEqual(other.call("PING"), b"PONG")

    def test_pcall_cannot_swallow_a_kill(self):
        srv = self.server("goblin")
        self.assert_killed(srv, "SCRIPT", "EVAL", "while true do pcall(function() while true do end end) end", "0")

    def test_a_backtracking_pattern_is_busy_and_killable(self):
        """Lua 5.1's matcher backtracks in C, where the VM's hook never
        runs: redis-server 7.0.15 answers nobody, SCRIPT KILL included,
        until the pattern fails, so this runs on goblin-core only. Its
        matcher calls the hook (engine/script/lib_pattern.c): others get
        BUSY, SCRIPT KILL and FUNCTION KILL stop it (also when the script
        catches the error), and FUNCTION LOAD's 500 ms limit applies."""
        srv = self.server("goblin")
        scripts = ["return " + BACKTRACK,
                   "while true do pcall(function() return " + BACKTRACK + " end) end",
                   "return string.gsub(string.rep('a', 40), string.rep('a?', 40) .. 'b', 'x')",
                   "for w in string.gmatch(string.rep('a', 40), string.rep('a?', 40) .. 'b') do end",
                   "return string.match(string.rep('a', 40), string.rep('a?', 40) .. 'b')"]
        for script in scripts:
            self.assert_killed(srv, "SCRIPT", "EVAL", script, "0")
        with Raw(srv) as c:
            start = time.monotonic()
            # The loading code has no `string` global; strings' methods work.
            reply = c.call("FUNCTION", "LOAD", "#!lua name=atload\n('a'):rep(40):find(('a?'):rep(40) .. 'b')")
            self.assertEqual(reply, Err(b"ERR Error registering functions: ERR FUNCTION LOAD timeout"))
            self.assertLess(time.monotonic() - start, 5 * SLOW)
            self.assertEqual(c.call("FUNCTION", "LOAD", "#!lua name=bt\nredis.register_function{function_name='bt', "
                                    "callback=function() return " + BACKTRACK + " end, flags={'no-writes'}}"), b"bt")
        self.assert_killed(srv, "FUNCTION", "FCALL", "bt", "0")

    def test_shutdown_nosave_drops_the_half_run_script_from_the_log(self):
        """SHUTDOWN NOSAVE during a writing script: the server exits, and
        after a restart from the append-only log the script's writes are
        not there (it never completed), the writes before it are."""
        d = tempfile.mkdtemp(prefix="gbit-busy-")
        self.addCleanup(shutil.rmtree, d, True)
        srv = Server("goblin", ["--busy-reply-threshold", "100", "--appendonly", "yes", "--appendfsync", "always",
                                "--save", ""], dir=d)
        self.addCleanup(srv.cleanup)
        with Raw(srv) as c:
            # The log starts with a rewrite (its first base): wait for it.
            wait_until(lambda: parse_info(c.call("INFO", "persistence")).get("aof_rewrite_in_progress") == "0" and
                       os.path.exists(os.path.join(d, "appendonlydir")), 10 * SLOW)
            c.call("SET", "before", "1")
        busy = start_busy(srv, "EVAL", "redis.call('set', 'during', '1') " + LOOP, "0")
        with Raw(srv) as other:
            other.send_cmd("SHUTDOWN", "NOSAVE")
            srv.proc.wait(timeout=20 * SLOW)
        busy.close()
        srv2 = Server("goblin", ["--appendonly", "yes", "--save", ""], dir=d)
        self.addCleanup(srv2.cleanup)
        with Raw(srv2) as c:
            self.assertEqual(c.call("GET", "before"), b"1")
            self.assertIsNone(c.call("GET", "during"))

    def test_threshold_zero_never_busy_and_alias(self):
        srv = self.server("goblin")
        with Raw(srv) as c:
            self.assertEqual(c.call("CONFIG", "SET", "lua-time-limit", "0"), b"OK")
            self.assertEqual(c.call("CONFIG", "GET", "busy-reply-threshold"), [b"busy-reply-threshold", b"0"])
            self.assertEqual(c.call("EVAL", "local i = 0 while i < 3000000 do i = i + 1 end return i", "0"), 3000000)


class Memory(unittest.TestCase):
    def over_maxmemory(self, c):
        """Some data, then maxmemory far below what is used: every server
        is over it whatever its own accounting counts."""
        for i in range(10):
            c.call("SET", "fill:%d" % i, "x" * 1000)
        c.call("CONFIG", "SET", "maxmemory", "1")

    def test_oom_inside_scripts_matches_redis(self):
        seen = {}
        for kind in both(self):
            with Server(kind) as srv, Raw(srv) as c:
                self.over_maxmemory(c)
                r = [c.call_raw("EVAL", "return redis.call('set', 'x', 'y')", "0"),
                     c.call_raw("EVAL", "return redis.pcall('set', 'x', 'y')['err']", "0"),
                     c.call_raw("EVAL", "return redis.call('get', 'fill:1')", "0"),
                     c.call_raw("EVAL", "redis.call('del', 'fill:1') return 1", "0"),
                     c.call_raw("EVAL", "#!lua\nreturn 1", "0"),
                     c.call_raw("EVAL", "#!lua flags=no-writes\nreturn 2", "0"),
                     c.call_raw("EVAL", "#!lua flags=allow-oom\nreturn redis.call('set', 'x', 'y')", "0"),
                     c.call_raw("MULTI"), c.call_raw("EVAL", "return 1", "0"), c.call_raw("EXEC")]
                c.call("CONFIG", "SET", "maxmemory", "0")
            seen[kind] = r
        g = seen["goblin"]
        self.assertTrue(g[0].startswith(b"-OOM command not allowed when used memory > 'maxmemory'. script:"), g[0])
        self.assertEqual(g[6], b"+OK\r\n")
        if "redis" in seen:
            self.assertEqual(g, seen["redis"])

    def test_lua_memory_is_counted_and_bounded(self):
        with Server("goblin") as srv, Raw(srv) as c:
            info = parse_info(c.call("INFO", "memory"))
            for field in ("used_memory_lua", "used_memory_scripts", "used_memory_vm_eval", "used_memory_vm_functions",
                          "number_of_cached_scripts", "number_of_functions", "number_of_libraries"):
                self.assertIn(field, info)
            before_lua, before = int(info["used_memory_lua"]), int(info["used_memory"])
            # A script that keeps 20 MB in a global-like upvalue of a function library.
            c.call("FUNCTION", "LOAD", "#!lua name=hog\nlocal keep = {}\n"
                   "redis.register_function('hog', function() for i = 1, 20 do keep[i] = string.rep('x', 1000000) .. i end return #keep end)")
            self.assertEqual(c.call("FCALL", "hog", "0"), 20)
            info = parse_info(c.call("INFO", "memory"))
            self.assertGreater(int(info["used_memory_vm_functions"]), 20000000)
            self.assertGreater(int(info["used_memory"]) - before, 20000000)
            c.call("EVAL", "local t = {} for i = 1, 1000 do t[i] = i end return 1", "0")
            self.assertGreaterEqual(int(parse_info(c.call("INFO", "memory"))["used_memory_lua"]), before_lua)
            # One allocation over proto-max-bulk-len is refused: the script
            # gets an error and the server lives.
            r = c.call("EVAL", "return string.rep('x', 1024 * 1024 * 1024)", "0")
            self.assertIsInstance(r, Err)
            self.assertIn(b"not enough memory", r)
            # With maxmemory, Lua's own heap may not pass it (nor 32 MB,
            # whichever is more).
            c.call("CONFIG", "SET", "maxmemory", str(int(info["used_memory"]) + 64 * 1024 * 1024))
            r = c.call("EVAL", "local t = {} for i = 1, 100 do t[i] = string.rep('y', 4000000) .. i end return #t", "0")
            self.assertIsInstance(r, Err)
            self.assertIn(b"not enough memory", r)
            c.call("CONFIG", "SET", "maxmemory", "0")
            self.assertEqual(c.call("PING"), b"PONG")
            # The refused script's garbage is collectable: the heap goes back down.
            c.call("EVAL", "collectgarbage('collect') return 1", "0")
            self.assertLess(int(parse_info(c.call("INFO", "memory"))["used_memory_vm_eval"]), 16 * 1024 * 1024)


class Transactions(unittest.TestCase):
    def test_multi_watch_and_blocking_match_redis(self):
        seen = {}
        for kind in both(self):
            with Server(kind) as srv, Raw(srv) as a, Raw(srv) as b:
                r = []
                r += [a.call_raw("MULTI"), a.call_raw("EVAL", "return redis.call('incr', KEYS[1])", "1", "n"),
                      a.call_raw("EVAL", "return redis.call('incr', KEYS[1])", "1", "n"),
                      a.call_raw("EVAL", "return redis.call('nosuch')", "0"), a.call_raw("EXEC")]
                # WATCH: a script run by another client is a change.
                r += [a.call_raw("WATCH", "w"), b.call_raw("EVAL", "return redis.call('set', 'w', '1')", "0"),
                      a.call_raw("MULTI"), a.call_raw("GET", "w"), a.call_raw("EXEC")]
                # ... and a script that only reads is not.
                r += [a.call_raw("WATCH", "w"), b.call_raw("EVAL", "return redis.call('get', 'w')", "0"),
                      a.call_raw("MULTI"), a.call_raw("GET", "w"), a.call_raw("EXEC")]
                # Blocking commands in scripts: BLPOP is refused, BLMPOP does not block.
                r += [a.call_raw("EVAL", "return redis.call('blpop', 'q', 0)", "0"),
                      a.call_raw("EVAL", "return redis.call('blmpop', 0, 1, 'q', 'LEFT')", "0"),
                      a.call_raw("EVAL", "return redis.call('bzmpop', 0, 1, 'zq', 'MIN')", "0")]
                # A push inside a script wakes a client blocked outside it.
                b.send_cmd("BLPOP", "q", "0")
                # Parked before the script pushes (a fixed pause could be too
                # short on a loaded machine; the BLPOP then popped at once and
                # the wake-up went untested, with the same replies).
                self.assertTrue(wait_until(lambda: parse_info(a.call("INFO", "clients"))["blocked_clients"] == "1",
                                           10 * SLOW, 0.01), kind)
                r += [a.call_raw("EVAL", "redis.call('rpush', 'q', 'x') redis.call('rpush', 'q', 'y') return 1", "0"),
                      b.read()[1], a.call_raw("LRANGE", "q", "0", "-1")]
                # SELECT inside a script does not change the caller's database.
                r += [a.call_raw("EVAL", "redis.call('select', 3) return redis.call('set', 'in3', 'v')", "0"),
                      a.call_raw("EXISTS", "in3"), a.call_raw("SELECT", "3"), a.call_raw("EXISTS", "in3"),
                      a.call_raw("SELECT", "0")]
            seen[kind] = r
        g = seen["goblin"]
        self.assertTrue(g[4].startswith(b"*3\r\n:1\r\n:2\r\n-ERR Unknown Redis command called from script script: "), g[4])
        self.assertEqual(g[9], b"*-1\r\n")
        if "redis" in seen:
            self.assertEqual(g, seen["redis"])


class Permissions(unittest.TestCase):
    def test_acl_applies_to_the_commands_a_script_runs(self):
        """redis.call/pcall run as the user who ran EVAL/FCALL: Redis 7.0's
        NOPERM texts inside the script's error, ACL LOG entries of context
        "lua", redis.acl_check_cmd by the same rules, nothing written on a
        denial."""
        lib = "#!lua name=acl\nredis.register_function('setit', function(k) return redis.call('set', k[1], 'v') end)"
        seen = {}
        for kind in both(self):
            with Server(kind) as srv, Raw(srv) as admin, Raw(srv) as u:
                r = [admin.call_raw("ACL", "SETUSER", "u", "on", "nopass", "~a*", "+@all", "-set"),
                     admin.call_raw("FUNCTION", "LOAD", lib), u.call_raw("AUTH", "u", "x")]
                r += [u.call_raw("EVAL", "return redis.call('set', 'a', '1')", "0"),
                      u.call_raw("EVAL", "return redis.pcall('set', 'a', '1')", "0"),
                      u.call_raw("EVAL", "return redis.call('get', 'b')", "0"),
                      u.call_raw("EVAL", "return redis.call('get', 'a')", "0"),
                      u.call_raw("EVAL", "return redis.call('config', 'get', 'maxmemory')", "0"),
                      u.call_raw("EVAL", "return redis.call('config', 'nosuch')", "0"),
                      u.call_raw("FCALL", "setit", "1", "a"),
                      u.call_raw("EVAL", "return {redis.acl_check_cmd('get', 'a'), redis.acl_check_cmd('get', 'b'), "
                                 "redis.acl_check_cmd('set', 'a', '1') == false, "
                                 "redis.acl_check_cmd('config', 'get', 'x')}", "0"),
                      u.call_raw("EVAL", "return redis.acl_check_cmd('config', 'nosuch')", "0"),
                      admin.call_raw("EXISTS", "a")]
                log = admin.call("ACL", "LOG")
                r.append([(e[3], e[5], e[7], e[9]) for e in log])  # reason, context, object, username
            seen[kind] = r
        g = seen["goblin"]
        self.assertTrue(g[3].startswith(b"-ERR The user executing the script can't run this command or subcommand "
                                        b"script: "), g[3])
        self.assertEqual(g[4], b"-ERR The user executing the script can't run this command or subcommand\r\n")
        self.assertTrue(g[5].startswith(b"-ERR The user executing the script can't access at least one of the keys "
                                        b"mentioned in the command arguments script: "), g[5])
        self.assertEqual(g[-2], b":0\r\n")
        self.assertIn((b"key", b"lua", b"b", b"u"), g[-1])
        if "redis" in seen:
            self.assertEqual(g, seen["redis"])


class Persistence(unittest.TestCase):
    def dir(self):
        d = tempfile.mkdtemp(prefix="gbit-lua-")
        self.addCleanup(shutil.rmtree, d, True)
        return d

    def aof_text(self, d):
        out = b""
        ad = os.path.join(d, "appendonlydir")
        for name in sorted(os.listdir(ad)):
            if name.endswith(".incr.aof"):
                with open(os.path.join(ad, name), "rb") as f:
                    out += f.read()
        return out

    def test_the_log_gets_effects_not_scripts(self):
        d = self.dir()
        with Server("goblin", ["--appendonly", "yes", "--appendfsync", "always", "--save", ""], dir=d) as srv, \
                Raw(srv) as c:
            c.call("EVAL", "redis.call('set', KEYS[1], 'a') redis.call('incr', 'n') return 1", "1", "k")
            c.call("EVAL", "return redis.call('get', 'k')", "0")  # reads: nothing logged
            c.call("EVAL", "redis.call('spop', 'nosuch') return redis.call('incrbyfloat', 'f', '1.5')", "0")
            c.call("EVAL", "redis.call('set', 'seen', '1') redis.set_repl(redis.REPL_NONE) "
                           "redis.call('set', 'unseen', '1') redis.set_repl(redis.REPL_ALL) redis.call('set', 'seen2', '1')", "0")
            c.call("FUNCTION", "LOAD", "#!lua name=l1\nredis.register_function('f', function(k) return redis.call('incr', k[1]) end)")
            c.call("FCALL", "f", "1", "cnt")
            log = self.aof_text(d)
        self.assertNotIn(b"EVAL", log.upper())
        self.assertNotIn(b"FCALL", log.upper())
        # The first script's two writes, as one MULTI/EXEC unit.
        self.assertIn(b"*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\na\r\n*2\r\n$4\r\nincr\r\n$1\r\nn\r\n"
                      b"*1\r\n$4\r\nEXEC\r\n", log)
        self.assertIn(b"SET\r\n$1\r\nf\r\n$3\r\n1.5", log)  # INCRBYFLOAT's effect, a SET
        self.assertIn(b"seen2", log)
        self.assertNotIn(b"unseen", log)
        self.assertIn(b"FUNCTION\r\n$4\r\nLOAD", log.upper())
        # Replaying the log gives the same dataset and libraries.
        with Server("goblin", ["--appendonly", "yes", "--save", ""], dir=d) as srv, Raw(srv) as c:
            self.assertEqual(c.call("MGET", "k", "n", "f", "seen", "unseen", "seen2", "cnt"),
                             [b"a", b"1", b"1.5", b"1", None, b"1", b"1"])
            self.assertEqual(c.call("FCALL", "f", "1", "cnt"), 2)

    def test_set_repl_sends_each_write_where_it_says(self):
        """redis.set_repl(REPL_AOF) writes to the log only, REPL_REPLICA
        (and REPL_SLAVE) to replicas only, REPL_NONE to neither, REPL_ALL to
        both; MULTI and EXEC around the script's writes go to both. Goblin
        once had one switch for both: REPL_REPLICA reached no replica,
        REPL_AOF reached them. A goblin-core and a redis-server primary,
        each with the log on and a goblin-core replica."""
        script = ("redis.call('set', 'both', '1') "
                  "redis.set_repl(redis.REPL_AOF) redis.call('set', 'aofonly', '1') "
                  "redis.set_repl(redis.REPL_REPLICA) redis.call('set', 'replonly', '1') "
                  "redis.set_repl(redis.REPL_SLAVE) redis.call('set', 'slaveonly', '1') "
                  "redis.set_repl(redis.REPL_NONE) redis.call('set', 'nowhere', '1') "
                  "redis.set_repl(redis.REPL_ALL) redis.call('set', 'both2', '1')")
        keys = ("both", "aofonly", "replonly", "slaveonly", "nowhere", "both2")
        seen = {}
        for kind in ("goblin", "redis") if gbtest.compare_with_redis() else ("goblin",):
            d = self.dir()
            with Server(kind, ["--appendonly", "yes", "--appendfsync", "always", "--save", ""], dir=d) as primary, \
                    Server("goblin") as replica, Raw(primary) as c, Raw(replica) as r:
                self.assertTrue(wait_until(lambda: parse_info(c.call("INFO", "persistence"))
                                           ["aof_rewrite_in_progress"] == "0", 10 * SLOW))
                self.assertEqual(r.call("REPLICAOF", "127.0.0.1", str(primary.port)), b"OK")
                self.assertTrue(wait_until(lambda: parse_info(r.call("INFO", "replication"))
                                           .get("master_link_status") == "up", 20 * SLOW))
                c.call("EVAL", script, "0")
                c.call("SET", "last", "1")
                self.assertTrue(wait_until(lambda: r.call("GET", "last") == b"1", 20 * SLOW))
                on_replica = [k for k in keys if r.call("EXISTS", k) == 1]
                log = self.aof_text(d)
                in_log = [k for k in keys if (b"\r\n" + k.encode() + b"\r\n") in log]
                self.assertEqual(c.call("DBSIZE"), len(keys) + 1)  # the primary has them all
            seen[kind] = (on_replica, in_log)
        self.assertEqual(seen["goblin"], (["both", "replonly", "slaveonly", "both2"], ["both", "aofonly", "both2"]))
        if "redis" in seen:
            self.assertEqual(seen["goblin"], seen["redis"])

    def test_functions_survive_snapshot_rewrite_and_reload(self):
        d = self.dir()
        lib = "#!lua name=keep\nredis.register_function{function_name='kf', callback=function(k, a) return a[1] end, " \
              "flags={'no-writes'}, description='kept'}"
        with Server("goblin", ["--save", ""], dir=d) as srv, Raw(srv) as c:
            self.assertEqual(c.call("FUNCTION", "LOAD", lib), b"keep")
            listed = c.call("FUNCTION", "LIST", "WITHCODE")
            self.assertEqual(c.call("SAVE"), b"OK")
            self.assertEqual(c.call("DEBUG", "RELOAD"), b"OK")
            self.assertEqual(c.call("FUNCTION", "LIST", "WITHCODE"), listed)
        with Server("goblin", ["--save", ""], dir=d) as srv, Raw(srv) as c:
            self.assertEqual(c.call("FUNCTION", "LIST", "WITHCODE"), listed)
            self.assertEqual(c.call("FCALL_RO", "kf", "0", "hello"), b"hello")
            # Through a log rewrite: the base snapshot carries the library.
            c.call("CONFIG", "SET", "appendonly", "yes")
            wait_until(lambda: parse_info(c.call("INFO", "persistence")).get("aof_rewrite_in_progress") == "0", 10 * SLOW)
            c.call("FUNCTION", "LOAD", "#!lua name=later\nredis.register_function('lf', function() return 'later' end)")
            c.call("BGREWRITEAOF")
            wait_until(lambda: parse_info(c.call("INFO", "persistence")).get("aof_rewrite_in_progress") == "0", 10 * SLOW)
        with Server("goblin", ["--appendonly", "yes", "--save", ""], dir=d) as srv, Raw(srv) as c:
            self.assertEqual(c.call("FCALL", "lf", "0"), b"later")
            self.assertEqual(c.call("FCALL", "kf", "0", "x"), b"x")

    def test_function_dump_restore(self):
        with Server("goblin") as a, Server("goblin") as b, Raw(a) as ca, Raw(b) as cb:
            ca.call("FUNCTION", "LOAD", "#!lua name=d1\nredis.register_function('d1f', function() return 1 end)")
            ca.call("FUNCTION", "LOAD", "#!lua name=d2\nredis.register_function('d2f', function() return 2 end)")
            payload = ca.call("FUNCTION", "DUMP")
            self.assertEqual((payload[0], payload[-10:-8]), (0xF5, b"\x0a\x00"))  # Redis 7.0's RDB payload
            self.assertEqual(cb.call("FUNCTION", "RESTORE", payload), b"OK")
            self.assertEqual([cb.call("FCALL", "d1f", "0"), cb.call("FCALL", "d2f", "0")], [1, 2])
            # APPEND (the default) refuses a library that exists, changing nothing.
            self.assertEqual(cb.call("FUNCTION", "RESTORE", payload), Err(b"ERR Library d1 already exists"))
            self.assertEqual(cb.call("FUNCTION", "RESTORE", payload, "REPLACE"), b"OK")
            cb.call("FUNCTION", "LOAD", "#!lua name=other\nredis.register_function('o', function() return 3 end)")
            self.assertEqual(cb.call("FUNCTION", "RESTORE", payload, "FLUSH"), b"OK")
            self.assertEqual(cb.call("FCALL", "o", "0"), Err(b"ERR Function not found"))
            # Damaged payloads: every flipped byte, every truncation, garbage.
            bad = Err(b"ERR DUMP payload version or checksum are wrong")
            for i in range(len(payload)):
                damaged = payload[:i] + bytes([payload[i] ^ 0x20]) + payload[i + 1:]
                self.assertEqual(cb.call("FUNCTION", "RESTORE", damaged), bad, "byte %d" % i)
            for n in range(len(payload)):
                self.assertEqual(cb.call("FUNCTION", "RESTORE", payload[:n]), bad, "cut at %d" % n)
            self.assertEqual(cb.call("FUNCTION", "RESTORE", b"\xff" * 40), bad)
            self.assertEqual(cb.call("FCALL", "d2f", "0"), 2)
            # A payload cut inside its first string is refused the same way.
            self.assertEqual(cb.call("FUNCTION", "RESTORE", b"\xf5\xc3@\xad@\xe9\x1f#!lua"), bad)


class RepliesAsRedis(unittest.TestCase):
    """Reply bytes of scripts and FUNCTION beside redis-server 7.0 (a
    read-only audit found each differing): LCS IDX through redis.call, EVAL
    shebangs split as sdssplitargs splits them (CRLF files, quotes, FLAGS=,
    a trailing comma, no newline), EVAL's own API (replicate_commands,
    breakpoint, debug) absent from functions, FUNCTION LOAD's repeated
    REPLACE and FUNCTION FLUSH's arity error."""

    def servers(self):
        """(kind, server) for goblin-core and redis-server, each fresh."""
        for kind in both(self):
            srv = Server(kind)
            self.addCleanup(srv.cleanup)
            yield kind, srv

    CASES = [
        ("EVAL", "return redis.call('lcs','la','lb','idx')", "0"),
        ("EVAL", "local r = redis.call('lcs','la','lb','idx') return type(r)", "0"),
        ("EVAL", "redis.setresp(3) return redis.call('lcs','la','lb','idx','withmatchlen')", "0"),
        ("EVAL", "#!lua\r\nreturn 1", "0"),
        ("EVAL", "#!lua flags=no-writes\r\nreturn 1", "0"),
        ("EVAL", "#!lua FLAGS=no-writes\nreturn 1", "0"),
        ("EVAL", "#!lua flags=no-writes,\nreturn 1", "0"),
        ("EVAL", "#!lua \"flags=no-writes\"\nreturn 1", "0"),
        ("EVAL", "#!lua 'flags=no-writes\nreturn 1", "0"),
        ("EVAL", "#!lua", "0"),
        ("EVAL", "#!", "0"),
        ("EVAL", "#!lua flags=\nreturn 2", "0"),
        ("EVAL", "return {type(redis.breakpoint), type(redis.debug), type(redis.replicate_commands)}", "0"),
        ("FUNCTION", "LOAD", "REPLACE", "REPLACE",
         "#!lua name=t1\nredis.register_function('api', function() return {type(redis.breakpoint), "
         "type(redis.debug), type(redis.replicate_commands), type(redis.call)} end)"),
        ("FCALL", "api", "0"),
        ("FUNCTION", "LOAD", "REPLACE", "BOGUS", "#!lua name=t2\nredis.register_function('x', function() end)"),
        ("FUNCTION", "FLUSH", "SYNC", "x"),
        ("FUNCTION", "FLUSH", "x"),
        ("EVALSHA", "nosuch", "x"), ("EVALSHA", "nosuch", "5"), ("EVALSHA", "a" * 40, "x"),
        # FUNCTION LOAD's first line, split as sdssplitargs; the name's rule before the engine
        ("FUNCTION", "LOAD", "#!lua name=t8\r\nredis.register_function('t8', function() end)"),
        ("FUNCTION", "LOAD", "#! lua name=t7\nredis.register_function('t7', function() end)"),
        ("FUNCTION", "LOAD", "#!\nredis.register_function('t6', function() end)"),
        ("FUNCTION", "LOAD", "#!foo name=a-b\nredis.register_function('t5', function() end)"),
        ("FUNCTION", "LOAD", "#!lua \"name=t10\"\nredis.register_function('t10', function() end)"),
        ("FUNCTION", "LOAD", "#!lua name=t11 'x\nredis.register_function('t11', function() end)"),
    ]

    def test_replies(self):
        seen = {}
        for kind, srv in self.servers():
            with Raw(srv) as c:
                c.call("SET", "la", "ohmytext")
                c.call("SET", "lb", "mynewtext")
                seen[kind] = [c.call_raw(*cmd) for cmd in self.CASES]
                # INFO memory's scripting fields, names in Redis 7.0's order
                fields = [l.split(b":")[0] for l in c.call("INFO", "memory").split(b"\r\n")
                          if b"lua" in l or b"script" in l or b"function" in l or b"librar" in l or b"_vm_" in l]
                seen[kind].append(fields)
        g = seen["goblin"]
        self.assertEqual(g[0], b"*4\r\n$7\r\nmatches\r\n*2\r\n*2\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n"
                               b"*2\r\n*2\r\n:2\r\n:3\r\n*2\r\n:0\r\n:1\r\n$3\r\nlen\r\n:6\r\n")
        self.assertEqual(g[3], b":1\r\n")  # a CRLF file
        if "redis" in seen:
            for cmd, got, want in zip(self.CASES, g, seen["redis"]):
                self.assertEqual(got, want, cmd)


    def test_error_statistics(self):
        """What scripts' errors count (INFO errorstats, total_error_replies,
        commandstats failed_calls and rejected_calls) as in Redis 7.0: a
        command's error once, where it arose, not again when the script
        raises or returns it; a script is not failed by an error it caught;
        a command refused inside a script is a rejected call."""
        scenarios = [
            "redis.call('set','s1','x') return redis.call('incr','s1')",
            "redis.call('set','s1','x') return redis.pcall('incr','s1')",
            "redis.call('set','s1','x') local ok = pcall(redis.call,'incr','s1') return 1",
            "return redis.call('get')",
            "return redis.call('blpop','x','0')",
            "#!lua flags=no-writes\nreturn redis.pcall('set','a','b')",
            "return redis.call('nosuchcommand')",
            "error('plain')",
            "return {err='MYERR custom'}",
        ]

        def stats(c):
            out = {}
            for section in ("errorstats", "stats", "commandstats"):
                for line in c.call("INFO", section).decode().splitlines():
                    if line.startswith(("errorstat_", "total_error_replies", "cmdstat_")):
                        k, v = line.split(":", 1)
                        if k.startswith("cmdstat_"):
                            v = ",".join(f for f in v.split(",") if f.startswith(("calls=", "rejected", "failed")))
                        out[k] = v
            out.pop("cmdstat_config|resetstat", None)
            out.pop("cmdstat_info", None)
            return out

        seen = {}
        for kind, srv in self.servers():
            with Raw(srv) as c:
                got = []
                for body in scenarios:
                    c.call("CONFIG", "RESETSTAT")
                    got.append((body, c.call_raw("EVAL", body, "0"), stats(c)))
                # inside EXEC the failure is the EVAL's, not the EXEC's
                c.call("CONFIG", "RESETSTAT")
                c.send(gbtest.encode("MULTI") + gbtest.encode("EVAL", scenarios[0], "0") + gbtest.encode("EXEC"))
                got.append(("in EXEC", [c.read()[1] for _ in range(3)], stats(c)))
                seen[kind] = got
        g = seen["goblin"]
        self.assertEqual(g[0][2]["total_error_replies"], "1", g[0])
        if "redis" in seen:
            for got, want in zip(g, seen["redis"]):
                self.assertEqual(got, want)

    def test_a_stale_replica(self):
        """replica-serve-stale-data no and the link down: a script without
        flags gets MASTERDOWN, one with flags must allow stale data, and
        inside it only stale-safe commands run (goblin-core ran them all)."""
        cases = [("EVAL", "return 1", "0"), ("EVAL_RO", "return 1", "0"),
                 ("EVAL", "#!lua flags=no-writes\nreturn 1", "0"),
                 ("EVAL", "#!lua flags=allow-stale,no-writes\nreturn redis.call('get','x')", "0"),
                 ("EVAL", "#!lua flags=allow-stale,no-writes\nreturn redis.call('ping')", "0"),
                 ("EVAL", "#!lua flags=allow-stale,no-writes\nreturn type(redis.call('time'))", "0")]
        seen = {}
        for kind, srv in self.servers():
            with Raw(srv) as c:
                c.call("REPLICAOF", "127.0.0.1", "1")
                c.call("CONFIG", "SET", "replica-serve-stale-data", "no")
                seen[kind] = [c.call_raw(*cmd) for cmd in cases]
                c.call("REPLICAOF", "NO", "ONE")
        g = seen["goblin"]
        self.assertTrue(g[0].startswith(b"-MASTERDOWN"), g[0])
        self.assertTrue(g[3].startswith(b"-ERR Can not execute the command on a stale replica"), g[3])
        if "redis" in seen:
            self.assertEqual(g, seen["redis"])


class Sandbox(unittest.TestCase):
    ESCAPES = [
        ("return os.execute('true')", b"nonexistent global variable 'os'"),
        ("return io.open('/etc/passwd')", b"nonexistent global variable 'io'"),
        ("return require('os')", b"nonexistent global variable 'require'"),
        ("return loadfile('/etc/passwd')", b"nonexistent global variable 'loadfile'"),
        ("return dofile('/etc/passwd')", b"nonexistent global variable 'dofile'"),
        ("return debug.getinfo(1)", b"nonexistent global variable 'debug'"),
        ("return getfenv(0)", b"nonexistent global variable 'getfenv'"),
        ("return setfenv(0, {})", b"nonexistent global variable 'setfenv'"),
        ("return package.loaded", b"nonexistent global variable 'package'"),
        ("return newproxy(true)", b"nonexistent global variable 'newproxy'"),
        ("leak = 1", b"Attempt to modify a readonly table"),
        ("_G.leak = 1", b"Attempt to modify a readonly table"),
        ("rawset(_G, 'leak', 1)", b"Attempt to modify a readonly table"),
        ("setmetatable(_G, nil)", b"Attempt to modify a readonly table"),
        ("string.leak = 1", b"Attempt to modify a readonly table"),
        ("redis.call = function() return 1 end", b"Attempt to modify a readonly table"),
        ("getmetatable('').__index = {}", b"Attempt to modify a readonly table"),
        ("getmetatable('').__index.leak = 1", b"Attempt to modify a readonly table"),
        ("getmetatable(_G).__index = nil", b"Attempt to modify a readonly table"),
        ("rawset(string, 'upper', nil)", b"Attempt to modify a readonly table"),
        ("table.insert(_G, 'leak')", b"Attempt to modify a readonly table"),
        ("table.insert(cjson, 'leak')", b"Attempt to modify a readonly table"),
        ("coroutine.wrap(function() leak = 1 end)()", b"Attempt to modify a readonly table"),
        ("return loadstring(string.dump(function() return 1 end))()", b"attempt to call a nil value"),
        ("local s = string.dump(function() return 1 end) local done = false "
         "return load(function() if done then return nil end done = true return s end)()", b"attempt to call a nil value"),
        ("return loadstring('leak = 1')()", b"Attempt to modify a readonly table"),
    ]

    def test_each_escape_is_refused_and_nothing_leaks(self):
        with Server("goblin") as srv, Raw(srv) as c:
            for script, want in self.ESCAPES:
                r = c.call("EVAL", script, "0")
                self.assertIsInstance(r, Err, script)
                self.assertIn(want, r, script)
            # Nothing written by any of them is visible to a later script.
            self.assertEqual(c.call("EVAL", "return {type(rawget(_G, 'leak')), type(string.upper), type(redis.call), #_G}",
                                    "0"), [b"nil", b"function", b"function", 0])
            # Functions see the same sandbox; the loading code sees less.
            r = c.call("FUNCTION", "LOAD", "#!lua name=esc\nos.exit()")
            self.assertIn(b"nonexistent global variable 'os'", r)
            r = c.call("FUNCTION", "LOAD", "#!lua name=esc\nredis.register_function('e', function() leak = 1 end)")
            self.assertEqual(r, b"esc")
            self.assertIn(b"Attempt to modify a readonly table", c.call("FCALL", "e", "0"))

    def test_hostile_scripts_do_not_hurt_the_server(self):
        with Server("goblin") as srv, Raw(srv) as c:
            hostile = [
                "error({})", "error(setmetatable({}, {__tostring = function() return 'x' end}))",
                "return cmsgpack.unpack('\\145')", "return cmsgpack.unpack(string.rep('\\145', 100000))",
                "return cmsgpack.unpack('\\221\\255\\255\\255\\255')", "return cmsgpack.unpack('\\219\\255\\255\\255\\255x')",
                "return cmsgpack.unpack('\\193')", "return struct.unpack('i32', 'x')", "return struct.pack('i33', 1)",
                "return struct.unpack('c99999999999', 'x')", "return struct.unpack('c0', 'x')",
                "return struct.unpack('>!8 i8', 'x', 99999)", "return struct.size('!3i')",
                "return cjson.decode(string.rep('[', 100000))", "return cjson.decode('{\"a\":')",
                "local t = {} t[1] = t return t", "local t = {} t.err = t return t",
                "local function f() f() end f()", "local function f(n) return 1 + f(n) end return f(1)",
                "return string.rep('x', -1)", "return ('x'):rep(1e10)", "return table.concat({}, 'x', 1, 1e9)",
                "return redis.call(string.rep('x', 100000))", "return redis.sha1hex(string.rep('x', 10000000))",
                "return select(-1)", "return unpack({}, 1, 1e8)", "return tostring(tonumber('0x' .. string.rep('f', 1000)))",
            ]
            for s in hostile:
                # Some replies nest thousands deep: read bytes, not a parse.
                c.send_cmd("EVAL", s, "0")
                c.send_cmd("PING")
                data = bytearray()
                deadline = time.time() + 30 * SLOW
                while not data.endswith(b"+PONG\r\n") and time.time() < deadline:
                    chunk = c.s.recv(1 << 20)
                    self.assertTrue(chunk, "connection closed after %r" % s)
                    data += chunk
                self.assertTrue(data.endswith(b"+PONG\r\n"), s)
        self.assertTrue(srv.proc.returncode in (0, None) or srv.proc.returncode == -15, srv.log())

    def test_cached_scripts_and_flush(self):
        with Server("goblin") as srv, Raw(srv) as c:
            sha = c.call("SCRIPT", "LOAD", "return 'cached'").decode()
            self.assertEqual(c.call("EVALSHA", sha, "0"), b"cached")
            self.assertEqual(int(parse_info(c.call("INFO", "memory"))["number_of_cached_scripts"]), 1)
            self.assertEqual(c.call("SCRIPT", "FLUSH"), b"OK")
            self.assertEqual(c.call("EVALSHA", sha, "0"), Err(b"NOSCRIPT No matching script. Please use EVAL."))
            self.assertEqual(int(parse_info(c.call("INFO", "memory"))["number_of_cached_scripts"]), 0)


if __name__ == "__main__":
    gbtest.run_tests()
