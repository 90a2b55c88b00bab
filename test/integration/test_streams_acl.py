"""Stream commands under ACL and COMMAND GETKEYS (issue 17 over main's
command metadata): the keys XREAD / XREADGROUP name after STREAMS, the key
of each XGROUP / XINFO subcommand, and the NOPERM replies a user limited to
some keys gets, byte for byte with redis-server 7.0.
"""

import unittest

import gbtest
from gbtest import Raw, Server

ADMIN = [
    ["COMMAND", "GETKEYS", "XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "a", "b", "0", "0"],
    ["COMMAND", "GETKEYS", "XREAD", "COUNT", "1", "BLOCK", "0", "STREAMS", "a", "b", "c", "0", "0", "0"],
    ["COMMAND", "GETKEYSANDFLAGS", "XREAD", "STREAMS", "a", "0"],
    ["COMMAND", "GETKEYSANDFLAGS", "XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", ">"],
    ["COMMAND", "GETKEYSANDFLAGS", "XGROUP", "CREATE", "k", "g", "$"],
    ["COMMAND", "GETKEYSANDFLAGS", "XINFO", "STREAM", "k"],
    ["COMMAND", "GETKEYS", "XADD", "k", "*", "f", "v"],
    ["XGROUP", "NOPE"], ["XGROUP", "CREATE", "x"], ["XINFO"], ["XINFO", "HELP", "x"],
    ["ACL", "SETUSER", "u", "on", "nopass", "~a*", "+@all"],
    ["XADD", "b", "1-0", "f", "v"], ["XGROUP", "CREATE", "b", "g", "0"],
]
AS_USER = [
    ["XREAD", "STREAMS", "a", "b", "0", "0"],
    ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "a1", "b", "0", "0"],
    ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "a1", ">"],
    ["XADD", "b", "*", "f", "v"], ["XADD", "a1", "2-0", "f", "v"], ["XINFO", "STREAM", "b"],
    ["XGROUP", "CREATE", "b", "g2", "0"], ["XGROUP", "CREATE", "a1", "g", "0"],
    ["XREAD", "COUNT", "1", "STREAMS", "a1", "0"],
]


def observe(kind):
    with Server(kind) as s, Raw(s) as c:
        out = [c.call_raw(*cmd) for cmd in ADMIN]
        c.call("AUTH", "u", "x")
        return out + [c.call_raw(*cmd) for cmd in AS_USER]


class StreamAclTest(unittest.TestCase):
    def test_keys_and_permissions_as_redis(self):
        got = observe("goblin")
        self.assertEqual(got[1], b"*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n")
        self.assertTrue(got[len(ADMIN)].startswith(b"-NOPERM"), got[len(ADMIN)])
        gbtest.require_redis()
        want = observe("redis")
        for cmd, g, w in zip(ADMIN + AS_USER, got, want):
            self.assertEqual(g, w, cmd)


if __name__ == "__main__":
    gbtest.run_tests()
