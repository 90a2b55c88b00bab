"""Scripts over shared-memory rings: EVAL, EVALSHA and FCALL sent over a RESP
ring and through the SBE generic template answer byte for byte as over the
Unix socket; a busy script started over a ring is killed from a socket while
the ring waits, and the ring serves normally afterwards.
"""
import os
import subprocess
import time
import unittest

import gbtest
from gbtest import Raw, Server, SLOW, wait_until, Err
from test_rings import PROTOCOLS, RING_TOOL, script_input, split_replies, tool

SHA_SET_GET = None  # filled from SCRIPT LOAD at run time (the same on every server)
SET_GET = "redis.call('set', KEYS[1], ARGV[1]) redis.call('incr', KEYS[2]) return redis.call('get', KEYS[1])"
LIB = ("#!lua name=ringlib\n"
       "redis.register_function('rf', function(k, a) redis.call('hset', k[1], 'f', a[1]) "
       "return redis.call('hgetall', k[1]) end)\n"
       "redis.register_function{function_name='rro', callback=function(k) return redis.call('exists', k[1]) end, "
       "flags={'no-writes'}}")


def corpus(sha):
    return [
        ["EVAL", SET_GET, "2", "k", "n", "v1"], ["SCRIPT", "LOAD", SET_GET], ["EVALSHA", sha, "2", "k", "n", "v2"],
        ["EVALSHA", sha.upper(), "2", "k", "n", "v3"], ["EVALSHA_RO", sha, "2", "k", "n", "v"],
        ["EVALSHA", "0" * 40, "0"], ["EVAL", "return {1, 'two', {3}, redis.status_reply('ok'), false}", "0"],
        ["EVAL", "return redis.error_reply('MY error')", "0"], ["EVAL", "error('raised')", "0"],
        ["FUNCTION", "LOAD", LIB], ["FCALL", "rf", "1", "h", "x"], ["FCALL_RO", "rro", "1", "h"],
        ["FCALL_RO", "rf", "1", "h", "y"], ["FCALL", "nosuch", "0"], ["FUNCTION", "LIST", "LIBRARYNAME", "nomatch"],
        ["MULTI"], ["EVALSHA", sha, "2", "k", "n", "v4"], ["FCALL", "rro", "1", "k"], ["EXEC"], ["GET", "n"],
    ]


@unittest.skipUnless(RING_TOOL, "RING_TOOL (the ring client test tool) is not built")
class ScriptsOverRings(unittest.TestCase):
    def server(self, *args):
        s = Server("goblin", list(args))
        self.addCleanup(s.cleanup)
        return s

    def sha(self):
        with self.server() as s, Raw(s) as c:
            return c.call("SCRIPT", "LOAD", SET_GET).decode()

    def test_scripts_over_rings_equal_the_socket(self):
        sha = self.sha()
        cmds = corpus(sha)
        srv = self.server()
        with Raw(srv) as r:
            want = [r.call_raw(*c) for c in cmds]
        for proto in PROTOCOLS:
            with self.subTest(proto=proto):
                srv = self.server()
                p = tool(srv, proto, "script")
                out, _ = p.communicate(script_input(cmds), timeout=60 * SLOW)
                self.assertEqual(p.returncode, 0, out[-500:])
                got = split_replies(out)
                self.assertEqual(len(got), len(want))
                for i, (g, w) in enumerate(zip(got, want)):
                    self.assertEqual(g, w, "command %d %r over %s" % (i, cmds[i], proto))

    def test_busy_script_on_a_ring_killed_from_a_socket(self):
        for proto in PROTOCOLS:
            with self.subTest(proto=proto):
                srv = self.server("--busy-reply-threshold", "100")
                p = tool(srv, proto, "script")
                p.stdin.write(script_input([["EVAL", "while true do end", "0"]]))
                p.stdin.flush()
                with Raw(srv) as c:
                    self.assertTrue(wait_until(lambda: isinstance(c.call("PING"), Err), 10 * SLOW, 0.02))
                    self.assertEqual(c.call("SCRIPT", "KILL"), b"OK")
                    p.stdin.write(script_input([["PING"], ["EVAL", "return 'after'", "0"]]))
                    out, _ = p.communicate(timeout=60 * SLOW)
                    got = split_replies(out)
                    self.assertEqual(len(got), 3, out)
                    self.assertTrue(got[0].startswith(b"-ERR Script killed by user with SCRIPT KILL..."), got[0])
                    self.assertEqual(got[1:], [b"+PONG\r\n", b"$5\r\nafter\r\n"])
                    self.assertEqual(c.call("PING"), b"PONG")


if __name__ == "__main__":
    gbtest.run_tests()
