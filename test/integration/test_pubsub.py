"""Pub/sub and keyspace notifications, against redis-server 7 where it is
installed (RESP2; RESP3 pushes are compared by the RESP3 suite).

- framing: SUBSCRIBE/PSUBSCRIBE/SSUBSCRIBE and their UNs (unsubscribe-all
  with nothing subscribed included), message/pmessage/smessage, PUBSUB
  subcommands, byte for byte;
- glob patterns: the receivers PUBLISH counts for a pattern subscriber over
  a table of channels, compared with Redis;
- the RESP2 subscribed-mode restriction and PING's answer there;
- keyspace notifications: the same command stream to both servers with a
  subscriber on __key*__:*, message sequences compared, for every type,
  expiry (lazy and active), key misses and new keys; CONFIG GET/SET of
  notify-keyspace-events and client-output-buffer-limit;
- a subscriber that stops reading is closed at the pubsub output-buffer
  limit while another subscriber still gets every message promptly;
- ACL: a user whose channel permission is revoked loses its subscribers;
- real clients: redis-py's PubSub, and ioredis (installed with npm at
  set-up; skipped with the reason when npm cannot install it).
"""

import os
import shutil
import socket
import subprocess
import tempfile
import time
import unittest

import gbtest
from gbtest import Err, Raw, Server, encode

SLOW = gbtest.SLOW


def read_frames(conn, n):
    return [conn.read()[1] for _ in range(n)]


class Differential(gbtest.GoblinAndRedisCase):
    """Each test runs the same steps against both servers and compares."""

    def both(self, fn):
        out = {}
        for srv in (self.goblin, self.redis):
            out[srv.kind] = fn(srv)
        self.assertEqual(out["goblin"], out["redis"])
        return out["goblin"]

    def test_framing(self):
        def run(srv):
            out = []
            with Raw(srv) as a, Raw(srv) as b:
                for cmd in (("unsubscribe",), ("punsubscribe",), ("sunsubscribe",), ("subscribe", "a", "b", "a"),
                            ("ssubscribe", "s1"), ("psubscribe", "p*", "a?"), ("ping",), ("ping", "hi"),
                            ("unsubscribe", "zz"), ("punsubscribe", "zz"), ("sunsubscribe", "zz")):
                    a.send_cmd(*cmd)
                    out.append(read_frames(a, max(1, len(cmd) - 1)))
                out.append(b.call_raw("publish", "a", "hello"))
                out.append(read_frames(a, 1))  # message on a (exact first)
                out.append(b.call_raw("publish", "ax", "x"))
                out.append(read_frames(a, 1))  # pmessage a?
                out.append(b.call_raw("publish", "pq", "\x00bin\r\n"))
                out.append(read_frames(a, 1))
                out.append(b.call_raw("spublish", "s1", "sh"))
                out.append(read_frames(a, 1))
                out.append(b.call_raw("spublish", "a", "not a shard subscriber"))
                out.append(b.call_raw("publish", "s1", "not a channel subscriber"))
                for cmd in (("pubsub", "numsub", "a", "b", "zz"), ("pubsub", "numsub"), ("pubsub", "numpat"),
                            ("pubsub", "shardnumsub", "s1", "a"),
                            ("pubsub", "channels", "b"), ("pubsub", "shardchannels"),
                            ("pubsub", "channels", "a", "b"), ("pubsub", "numpat", "x"), ("pubsub", "nope"),
                            ("pubsub", "help"), ("publish", "a"), ("subscribe",), ("ssubscribe",),
                            ("psubscribe",)):
                    out.append(b.call_raw(*cmd))
                out.append(sorted(b.call("pubsub", "channels", "[ab]")))  # hash order: compared as a set
                # one channel left of each kind: unsubscribe-all's order is defined
                a.send_cmd("unsubscribe", "b")
                out.append(read_frames(a, 1))
                for cmd in (("unsubscribe",), ("punsubscribe", "p*"), ("punsubscribe",), ("sunsubscribe",)):
                    a.send_cmd(*cmd)
                    out.append(read_frames(a, 1))
                out.append(a.call_raw("get", "x"))  # out of subscribed mode
            return out
        self.both(run)

    def test_unsubscribe_all_many(self):
        def run(srv):
            with Raw(srv) as a:
                a.send_cmd("subscribe", *["c%d" % i for i in range(20)])
                read_frames(a, 20)
                # patterns in an order no hash would keep: PUNSUBSCRIBE with
                # no argument confirms them in subscription order (Redis 7.0
                # keeps a client's patterns in a list)
                a.send_cmd("psubscribe", "z*", "a*", "m*", "b*", "q*", "c*")
                read_frames(a, 6)
                a.send_cmd("unsubscribe")
                frames = [a.read()[0] for _ in range(20)]
                # channels: the server's hash order (a dict in Redis too); names and counts are Redis's
                names = sorted(f[1] for f in frames)
                counts = [f[2] for f in frames]
                a.send_cmd("punsubscribe")
                pf = [a.read()[0] for _ in range(6)]
                return names, counts, pf, a.call("ping")
        self.both(run)

    def test_glob_patterns(self):
        patterns = [b"*", b"a*", b"*a", b"a?c", b"a[bc]d", b"a[^b]d", b"a[!b]d", b"a[b-d]e", b"a[d-b]e", b"a\\*b",
                    b"a\\", b"[", b"[a", b"a[", b"*[]*", b"?", b"??", b"*?*", b"h[a-]x", b"\\?", b"a**b", b"[\\]]",
                    b"[a-c-e]", b"news.*", b"__keyspace@0__:*", b"\xff*", b"A*"]
        channels = [b"", b"a", b"ab", b"abc", b"abd", b"acd", b"add", b"abe", b"ace", b"aee", b"a*b", b"axb", b"a\\",
                    b"[", b"[a", b"a[", b"]", b"h-x", b"hax", b"hbx", b"?", b"x", b"ba", b"a-e", b"c", b"-",
                    b"news.art", b"news", b"__keyspace@0__:k", b"\xff\x00", b"Abc"]

        def run(srv):
            out = []
            with Raw(srv) as sub, Raw(srv) as pub:
                for p in patterns:
                    sub.send_cmd("psubscribe", p)
                    sub.read()
                    out.append([pub.call("publish", ch, b"m") for ch in channels])
                    sub.send_cmd("punsubscribe", p)
                    # The pmessages, then the confirmation: read up to it. (A
                    # drain until 50 ms of silence could stop before it on a
                    # loaded machine; the next read then took it for the next
                    # psubscribe's, and PUBLISH ran before that subscription.)
                    pmessages = 0
                    while sub.read()[0][0] != b"punsubscribe":
                        pmessages += 1
                    self.assertEqual(pmessages, sum(out[-1]), p)
                # PUBSUB CHANNELS uses the same rules
                sub.send_cmd("subscribe", *[ch for ch in channels if ch])
                for _ in channels[1:]:
                    sub.read()
                for p in patterns:
                    out.append(sorted(pub.call("pubsub", "channels", p)))
            return out
        self.both(run)

    def test_subscribed_mode_restrictions(self):
        cmds = [("get", "x"), ("set", "x", "1"), ("multi",), ("exec",), ("publish", "c", "m"), ("pubsub", "numpat"),
                ("config", "get", "maxmemory"), ("client", "id"), ("echo", "x"), ("ping", "a", "b"),
                ("subscribe", "d"), ("unsubscribe", "d"), ("spublish", "c", "m"), ("select", "1")]

        def run(srv):
            with Raw(srv) as a:
                a.send_cmd("ssubscribe", "s")
                out = [a.read()[1]]
                for cmd in cmds:
                    a.send_cmd(*cmd)
                    out.append(a.read()[1])
                # leaving every subscription ends the mode
                a.send_cmd("sunsubscribe")
                out.append(a.read()[1])
                out.append(a.call_raw("get", "x"))
                out.append(a.call_raw("ping"))
                return out
        self.both(run)

    def test_multi_with_subscribe(self):
        def run(srv):
            with Raw(srv) as a, Raw(srv) as b:
                out = [a.call_raw("multi"), a.call_raw("subscribe", "m"), a.call_raw("publish", "m", "x")]
                a.send_cmd("exec")
                out.append(a.read()[1])
                out.append(b.call_raw("pubsub", "numsub", "m"))
                return out
        self.both(run)

    def test_publish_may_replicate(self):
        """PUBLISH and SPUBLISH carry Redis's may-replicate flag: CLIENT PAUSE
        WRITE holds them until UNPAUSE, and a read-only script refuses them."""
        def run(srv):
            out = []
            with Raw(srv) as admin, Raw(srv) as c:
                for cmd in (("PUBLISH", "ch", "m"), ("SPUBLISH", "ch", "m")):
                    admin.call("CLIENT", "PAUSE", "10000", "WRITE")
                    c.send_cmd(*cmd)
                    out.append(c.read_raw_available(0.3))  # held: nothing yet
                    admin.call("CLIENT", "UNPAUSE")
                    out.append(c.read())
                out.append(c.call_raw("EVAL_RO", "return redis.call('publish', 'ch', 'm')", "0"))
            return out
        self.both(run)

    def test_config_values(self):
        def run(srv):
            with Raw(srv) as a:
                out = []
                # the normal class's default differs on purpose (goblin bounds it): start both from Redis's
                a.call("config", "set", "client-output-buffer-limit", "normal 0 0 0")
                for v in ("KEA", "Kgx", "Enm", "AKEmnd", "g$lshzxetd", "", "Q", "KA", "Elshz$tdmn", "x"):
                    out.append(a.call_raw("config", "set", "notify-keyspace-events", v))
                    out.append(a.call_raw("config", "get", "notify-keyspace-events"))
                for v in ("pubsub 1mb 2mb 3", "foo 1 2 3", "pubsub 1 2", "replica 1 2 3 normal 5mb 6mb 7", "master 1 2 3",
                          "pubsub x 2 3", "pubsub 1 2 -1", "slave 32mb 8mb 60", "normal 0 0 0"):
                    out.append(a.call_raw("config", "set", "client-output-buffer-limit", v))
                    out.append(a.call_raw("config", "get", "client-output-buffer-limit"))
                a.call("config", "set", "notify-keyspace-events", "")
                a.call("config", "set", "client-output-buffer-limit",
                       "normal %s replica 256mb 64mb 60 pubsub 32mb 8mb 60"
                       % ("1gb 0 0" if srv.kind == "goblin" else "0 0 0"))
                return out
        self.both(run)


# ---- keyspace notifications ------------------------------------------------------------

# Command streams per family; each runs against an empty database 0.
NOTIFY_STREAMS = {
    "string": [("set", "s", "v"), ("set", "s", "v2", "ex", "100"), ("set", "s", "v3", "keepttl"), ("setnx", "s", "x"),
               ("setnx", "s2", "x"), ("setex", "s3", "100", "v"), ("psetex", "s4", "100000", "v"),
               ("getset", "s", "g"), ("getdel", "s2"), ("getdel", "nokey"), ("getex", "s", "ex", "50"),
               ("getex", "s", "persist"), ("getex", "s", "px", "-1"), ("mset", "m1", "1", "m2", "2"),
               ("msetnx", "m1", "x", "m3", "y"), ("msetnx", "m4", "x", "m5", "y"), ("incr", "i"), ("decr", "i"),
               ("incrby", "i", "5"), ("decrby", "i", "2"), ("incrbyfloat", "f", "1.5"), ("incr", "s3"),
               ("append", "a", "x"), ("append", "a", ""), ("setrange", "r", "2", "ab"), ("setrange", "r", "0", ""),
               ("setrange", "nor", "0", ""), ("set", "s", "v", "nx"), ("set", "n1", "1", "get"),
               ("set", "n1", "2", "xx", "get")],
    "keys": [("set", "k1", "1"), ("set", "k2", "2"), ("del", "k1", "nokey", "k2"), ("set", "k", "v"),
             ("rename", "k", "k2"), ("rename", "k2", "k2"), ("set", "x", "1"), ("renamenx", "k2", "x"),
             ("renamenx", "k2", "y"), ("expire", "y", "100"), ("pexpire", "y", "100000"), ("persist", "y"),
             ("persist", "y"), ("expireat", "y", "1"), ("set", "z", "1"), ("expire", "z", "100", "nx"),
             ("expire", "z", "100", "nx"), ("copy", "z", "z2"), ("copy", "z", "z2"), ("copy", "z", "z2", "replace"),
             ("copy", "z", "z9", "db", "1"), ("move", "z", "2"), ("move", "nokey", "2"), ("unlink", "x", "z2"),
             ("pexpire", "x", "-5"), ("set", "w", "1"), ("pexpire", "w", "-5")],
    "list": [("lpush", "l", "a", "b", "c"), ("rpush", "l", "d"), ("lpushx", "nol", "a"), ("rpushx", "l", "e"),
             ("linsert", "l", "before", "a", "z"), ("linsert", "l", "before", "nope", "z"), ("lset", "l", "0", "q"),
             ("lpop", "l"), ("rpop", "l", "2"), ("lpop", "l", "0"), ("lrem", "l", "0", "nope"), ("lrem", "l", "0", "z"),
             ("ltrim", "l", "0", "0"), ("rpush", "l2", "1", "2"), ("lmove", "l2", "l3", "left", "right"),
             ("rpoplpush", "l2", "l3"), ("lmpop", "2", "nol", "l3", "left", "count", "1"), ("blpop", "l3", "0"),
             ("rpush", "l4", "x"), ("brpoplpush", "l4", "l4", "0"), ("blmove", "l4", "l5", "right", "left", "0"),
             ("brpop", "l5", "0"), ("ltrim", "nol", "0", "1"), ("rpush", "t", "a", "b"), ("ltrim", "t", "5", "6"),
             ("lmpop", "1", "nol", "right")],
    "hash": [("hset", "h", "a", "1", "b", "2"), ("hmset", "h", "c", "3"), ("hsetnx", "h", "a", "x"),
             ("hsetnx", "h", "d", "4"), ("hincrby", "h", "n", "2"), ("hincrbyfloat", "h", "f", "0.5"),
             ("hdel", "h", "nope"), ("hdel", "h", "a", "b"), ("hdel", "h", "c", "d", "n", "f"), ("hget", "h", "a")],
    "set": [("sadd", "s", "a", "b", "c"), ("sadd", "s", "a"), ("srem", "s", "zz"), ("srem", "s", "a"),
            ("smove", "s", "t", "b"), ("smove", "s", "t", "nope"), ("smove", "s", "s", "c"), ("smove", "s", "t", "c"),
            ("sadd", "s", "b"), ("smove", "s", "t", "b"),  # t holds b already: srem, del, no sadd
            ("sadd", "u", "1"), ("spop", "u"), ("sadd", "u", "1", "2", "3"), ("spop", "u", "0"), ("spop", "u", "5"),
            ("spop", "nokey"), ("sadd", "v", "1"), ("spop", "v", "1"),
            ("sadd", "p", "1", "2"), ("sadd", "q", "2", "3"), ("sinterstore", "d", "p", "q"),
            ("sunionstore", "d", "p", "q"), ("sdiffstore", "d", "p", "p"), ("sdiffstore", "d", "p", "p"),
            ("sinterstore", "e", "p", "nokey")],
    "zset": [("zadd", "z", "1", "a", "2", "b", "3", "c"), ("zadd", "z", "1", "a"), ("zadd", "z", "5", "a"),
             ("zincrby", "z", "1", "a"), ("zincrby", "z", "0", "a"), ("zadd", "z", "incr", "2", "b"),
             ("zadd", "z", "xx", "1", "new"), ("zrem", "z", "nope"), ("zrem", "z", "c"),
             ("zremrangebyscore", "z", "100", "200"), ("zadd", "z", "10", "x", "11", "y"),
             ("zremrangebyrank", "z", "0", "0"), ("zremrangebylex", "z", "[x", "[x"), ("zpopmin", "z"),
             ("zpopmax", "z", "0"), ("zpopmax", "z", "5"), ("zadd", "y", "1", "m", "2", "n"),
             ("zmpop", "2", "nokey", "y", "min", "count", "1"), ("bzpopmax", "y", "0"), ("zadd", "w", "1", "q"),
             ("bzmpop", "0", "1", "w", "max"), ("zadd", "a", "1", "x", "2", "y"), ("zadd", "b", "1", "y"),
             ("zunionstore", "d", "2", "a", "b"), ("zinterstore", "d", "2", "a", "b"), ("zdiffstore", "d", "1", "nokey"),
             ("zdiffstore", "d", "1", "nokey"), ("zrangestore", "r", "a", "0", "-1"), ("zrangestore", "r", "a", "5", "6")],
    # every stream event, and the no-ops that have none (issue 27: none fired before)
    "stream": [("xadd", "x", "1-1", "a", "1"), ("xadd", "x", "maxlen", "1", "2-1", "a", "1"),
               ("xadd", "x", "maxlen", "5", "3-1", "a", "1"), ("xtrim", "x", "maxlen", "0"),
               ("xtrim", "x", "maxlen", "0"), ("xadd", "x", "4-1", "a", "1"), ("xdel", "x", "4-1"),
               ("xdel", "x", "4-1"), ("xsetid", "x", "10-0"), ("xgroup", "create", "x", "g", "0"),
               ("xgroup", "create", "x", "g", "0"), ("xgroup", "create", "x2", "g", "0", "mkstream"),
               ("xgroup", "createconsumer", "x", "g", "c1"), ("xgroup", "createconsumer", "x", "g", "c1"),
               ("xadd", "x", "11-1", "a", "1"), ("xreadgroup", "group", "g", "c2", "streams", "x", ">"),
               ("xreadgroup", "group", "g", "c2", "streams", "x", ">"),
               ("xreadgroup", "group", "g", "c5", "noack", "streams", "x", "0"),
               ("xclaim", "x", "g", "c3", "0", "11-1"), ("xclaim", "x", "g", "c6", "0", "99-1"),
               ("xautoclaim", "x", "g", "c4", "0", "0"), ("xack", "x", "g", "11-1"),
               ("xgroup", "setid", "x", "g", "0"), ("xgroup", "delconsumer", "x", "g", "c1"),
               ("xgroup", "delconsumer", "x", "g", "nope"), ("xgroup", "destroy", "x", "g"),
               ("xgroup", "destroy", "x", "g"), ("xadd", "x", "nomkstream", "maxlen", "0", "12-1", "a", "1"),
               ("xadd", "nox", "nomkstream", "1-1", "a", "1"), ("xadd", "x", "1-1", "a", "1"),
               ("multi",), ("xadd", "x", "13-1", "a", "1"), ("xsetid", "x", "20-0"), ("exec",),
               ("eval", "redis.call('xadd', KEYS[1], '30-1', 'a', '1') return redis.call('xdel', KEYS[1], '30-1')",
                "1", "x"),
               ("del", "x")],
}


def collect_notifications(srv, flags, stream, pre=(), sleep_between=None):
    """Runs the stream with a subscriber on __key*__:* and returns
    [(pattern, channel, message), ...] in arrival order, plus the replies."""
    with Raw(srv) as sub, Raw(srv) as c:
        c.call("flushall")
        for cmd in pre:
            c.call(*cmd)
        c.call("config", "set", "notify-keyspace-events", flags)
        sub.send_cmd("psubscribe", "__key*__:*")
        sub.read()
        sub.send_cmd("subscribe", "end")
        sub.read()
        replies = []
        for cmd in stream:
            if cmd == "SLEEP":
                time.sleep(sleep_between)
                continue
            replies.append(c.call_raw(*cmd))
        c.call("config", "set", "notify-keyspace-events", "")
        c.call("publish", "end", "x")
        msgs = []
        while True:
            m = sub.read()[0]
            if m[0] == b"message" and m[1] == b"end":
                break
            msgs.append(tuple(m[1:]))
        return msgs, replies


class KeyspaceNotifications(gbtest.GoblinAndRedisCase):
    def compare(self, flags, stream, **kw):
        g = collect_notifications(self.goblin, flags, stream, **kw)
        r = collect_notifications(self.redis, flags, stream, **kw)
        self.assertEqual(g[1], r[1], "replies differ")
        self.assertEqual(g[0], r[0], "notifications differ")
        return g[0]

    def test_every_family(self):
        for fam, stream in NOTIFY_STREAMS.items():
            with self.subTest(family=fam):
                msgs = self.compare("KEA", stream)
                self.assertTrue(msgs)

    def test_class_filters(self):
        stream = [cmd for s in NOTIFY_STREAMS.values() for cmd in s]
        for flags in ("K$", "El", "Kh", "Es", "Kz", "Eg", "KEg$", "Ex", "KE", "E", "A", "Kt", "Et", "KEgt"):
            with self.subTest(flags=flags):
                self.compare(flags, stream)

    def test_new_and_miss(self):
        stream = [("get", "a"), ("set", "a", "1"), ("set", "a", "2"), ("get", "a"), ("hget", "h", "f"),
                  ("lpush", "l", "x"), ("lpush", "l", "y"), ("sadd", "s", "m"), ("zadd", "z", "1", "m"),
                  ("hset", "h", "f", "v"), ("mget", "a", "nope", "nope2"), ("exists", "nope"), ("incr", "c"),
                  ("append", "ap", "x"), ("lrange", "nol", "0", "-1"), ("smembers", "nos"), ("zscore", "noz", "m"),
                  ("copy", "a", "b")]
        for flags in ("KEn", "KEm", "AKEmn", "En"):
            with self.subTest(flags=flags):
                self.compare(flags, stream)

    def test_expiry(self):
        # one expiring key per pause: which of several the active cycle finds first is chance;
        # and each is the last write before its pause, so no later command's event can come
        # before or after its expiry depending on when the active cycle ran
        stream = [("set", "keep", "v"), ("set", "lazy", "v", "px", "30"),
                  "SLEEP", ("get", "lazy"), ("exists", "lazy"), ("set", "d", "v", "px", "30"), "SLEEP",
                  ("del", "d")]
        msgs = self.compare("KEA", stream, sleep_between=0.3 * SLOW)
        self.assertIn((b"__key*__:*", b"__keyevent@0__:expired", b"lazy"), msgs)
        # active expiry alone (nothing touches the key): both servers report it within a few cron periods
        for srv in (self.goblin, self.redis):
            with Raw(srv) as sub, Raw(srv) as c:
                c.call("config", "set", "notify-keyspace-events", "Ex")
                sub.send_cmd("subscribe", "__keyevent@0__:expired")
                sub.read()
                c.call("set", "gone", "v", "px", "20")
                m = sub.read()[0]
                self.assertEqual(m, [b"message", b"__keyevent@0__:expired", b"gone"], srv.kind)
                c.call("config", "set", "notify-keyspace-events", "")

    def test_other_database(self):
        stream = [("select", "3"), ("set", "k", "v"), ("del", "k"), ("select", "0"), ("set", "k", "v"),
                  ("move", "k", "3")]
        msgs = self.compare("KEA", stream)
        self.assertIn((b"__key*__:*", b"__keyspace@3__:k", b"del"), msgs)


# ---- output buffer limits ------------------------------------------------------------

class SlowSubscriber(unittest.TestCase):
    def slow_subscriber_closed(self, srv):
        with Raw(srv) as admin:
            admin.call("config", "set", "client-output-buffer-limit", "pubsub 256kb 128kb 60")
            admin.call("config", "set", "loglevel", "notice") if srv.kind == "goblin" else None
        stalled = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.connect(srv.sock)
        stalled.sendall(encode("subscribe", "feed"))
        with Raw(srv) as good, Raw(srv) as pub:
            good.call("subscribe", "feed")
            payload = b"x" * 8192
            latencies = []
            closed_at = None
            for i in range(2000):
                t0 = time.perf_counter()
                pub.call("publish", "feed", payload)
                m = good.read()[0]
                latencies.append(time.perf_counter() - t0)
                self.assertEqual(m, [b"message", b"feed", payload])
                if i % 20 == 0:
                    n = pub.call("pubsub", "numsub", "feed")[1]
                    if n == 1:
                        closed_at = i
                        break
            self.assertIsNotNone(closed_at, "%s: the stalled subscriber was never closed" % srv.kind)
            # 256 kB of 8 kB messages, plus what the socket buffers hold
            self.assertLess(closed_at, 1000)
            if srv.kind == "goblin":  # Redis 7.0 has no such field yet (7.2 does)
                info = gbtest.parse_info(pub.call("info", "stats").decode())
                self.assertGreaterEqual(int(info["client_output_buffer_limit_disconnections"]), 1)
            # the good subscriber kept up: the median round trip stays short on a busy machine
            latencies.sort()
            self.assertLess(latencies[len(latencies) // 2], 0.05 * SLOW)
            # and still receives after the other was dropped
            pub.call("publish", "feed", b"after")
            self.assertEqual(good.read()[0], [b"message", b"feed", b"after"])
        stalled.settimeout(10 * SLOW)
        got = b""
        try:
            while True:
                d = stalled.recv(1 << 20)
                if not d:
                    break
                got += d
        except (ConnectionResetError, socket.timeout):
            pass
        stalled.close()
        return srv

    def test_goblin(self):
        with Server("goblin") as srv:
            self.slow_subscriber_closed(srv)
            with open(srv.logpath, "rb") as f:
                self.assertIn(b"scheduled to be closed ASAP for overcoming of output buffer limits", f.read())

    def test_redis(self):
        gbtest.require_redis()
        with Server("redis") as srv:
            self.slow_subscriber_closed(srv)


# ---- rings -----------------------------------------------------------------------------------

RING_TOOL = os.environ.get("RING_TOOL")


def script_input(commands):
    out = bytearray()
    for cmd in commands:
        out += b"%d\n" % len(cmd)
        for a in cmd:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"%d\n" % len(a) + a + b"\n"
    return bytes(out)


class RingSubscriber(unittest.TestCase):
    """A RESP ring client subscribes: messages arrive on its response ring
    (the ring tool reads one reply per command it sends, so a message shows
    up as the answer of its next command); one that stops reading is
    released at the pubsub output-buffer limit while a socket subscriber
    keeps receiving."""

    def setUp(self):
        if not RING_TOOL:
            self.skipTest("RING_TOOL not set (ctest sets it)")

    def test_messages_reach_a_ring_subscriber(self):
        with Server("goblin") as srv, Raw(srv) as pub:
            p = subprocess.Popen([RING_TOOL, srv.sock, "resp", "script"], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            p.stdin.write(script_input([["SUBSCRIBE", "feed"]]))
            p.stdin.flush()
            self.assertTrue(gbtest.wait_until(lambda: pub.call("pubsub", "numsub", "feed")[1] == 1, 10 * SLOW))
            self.assertEqual(pub.call("publish", "feed", "hello"), 1)
            p.stdin.write(script_input([["PING"], ["PING"]]))
            p.stdin.close()
            out = p.stdout.read()
            p.wait(timeout=10 * SLOW)
            self.assertIn(b"*3\r\n$9\r\nsubscribe\r\n$4\r\nfeed\r\n:1\r\n", out)
            self.assertIn(b"*3\r\n$7\r\nmessage\r\n$4\r\nfeed\r\n$5\r\nhello\r\n", out)
            self.assertIn(b"*2\r\n$4\r\npong\r\n$0\r\n\r\n", out)
            self.assertTrue(gbtest.wait_until(lambda: pub.call("pubsub", "numsub", "feed")[1] == 0, 10 * SLOW))

    def test_stalled_ring_subscriber_released(self):
        check_stalled_ring_subscriber_released(self, "resp", b"r")


def check_stalled_ring_subscriber_released(test, proto, fill):
    """A ring subscriber (proto "resp" or "sbe") that reads SUBSCRIBE's
    confirmation and then never reads its ring again is released at the
    pubsub output-buffer limit, while a socket subscriber keeps receiving."""
    with Server("goblin", args=["--ring-size", "65536"]) as srv, Raw(srv) as pub, Raw(srv) as good:
        pub.call("config", "set", "client-output-buffer-limit", "pubsub 256kb 128kb 60")
        p = subprocess.Popen([RING_TOOL, srv.sock, proto, "script"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        p.stdin.write(script_input([["SUBSCRIBE", "feed"]]))
        p.stdin.flush()  # and then reads nothing more: stdin stays open
        test.assertTrue(gbtest.wait_until(lambda: pub.call("pubsub", "numsub", "feed")[1] == 1, 10 * SLOW))
        good.call("subscribe", "feed")
        payload = fill * 8192
        released = None
        for i in range(1000):
            pub.call("publish", "feed", payload)
            test.assertEqual(good.read()[0], [b"message", b"feed", payload])
            if pub.call("pubsub", "numsub", "feed")[1] == 1:
                released = i
                break
        test.assertIsNotNone(released, "the stalled %s ring subscriber was never released" % proto)
        test.assertLess(released, 200)  # 64 KiB of ring + 256 kB pending, in 8 kB messages
        info = gbtest.parse_info(pub.call("info", "stats").decode())
        test.assertGreaterEqual(int(info["client_output_buffer_limit_disconnections"]), 1)
        pub.call("publish", "feed", b"after")
        test.assertEqual(good.read()[0], [b"message", b"feed", b"after"])
        p.stdin.close()
        p.kill()
        p.wait(timeout=10 * SLOW)
        p.stdout.close()
        with open(srv.logpath, "rb") as f:
            lines = [line for line in f.read().splitlines() if b"overcoming of output buffer limits" in line]
        # the engine's one policy, as for a socket subscriber: the ring's client named, its class
        test.assertTrue(any(b"addr=ring:" in line and b"client-output-buffer-limit pubsub" in line for line in lines),
                        lines)


class RingSubscriberCases:
    """A ring client of protocol PROTO subscribes and reads what arrives with
    gb_ring_next_message: over SBE, confirmations as Subscription messages
    and deliveries as Message messages (docs/sbe.md); over a RESP ring, RESP2
    arrays or (after HELLO 3) RESP3 pushes. PUBLISH comes from a socket
    client and from ring publishers (SBE's typed Publish template, RESP)."""
    PROTO = None

    def setUp(self):
        if not RING_TOOL:
            self.skipTest("RING_TOOL not set (ctest sets it)")

    def listen(self, srv, n, *cmd):
        p = subprocess.Popen([RING_TOOL, srv.sock, self.PROTO, "listen", str(n)] + list(cmd), stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        lines = []
        while True:
            line = p.stdout.readline()
            self.assertTrue(line, "the listener exited before it was ready: %r" % lines)
            lines.append(line.decode().rstrip("\n"))
            if lines[-1] == "ready":
                return p, lines

    def finish(self, p):
        out = p.stdout.read().decode().splitlines()
        self.assertEqual(p.wait(timeout=30 * SLOW), 0, out)
        p.stdout.close()
        return out

    def ring_publish(self, srv, n, channel, payload, proto="sbe"):
        out = subprocess.run([RING_TOOL, srv.sock, proto, "publish", str(n), channel, payload],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30 * SLOW)
        self.assertEqual(out.returncode, 0, out.stdout)
        return out.stdout.decode().splitlines()

    def test_messages_from_socket_and_ring_publishers(self):
        with Server("goblin") as srv, Raw(srv) as pub:
            p, head = self.listen(srv, 4, "SUBSCRIBE", "feed", "other")
            self.assertEqual(head, ["subscribe feed 1", "subscribe other 2", "ready"])
            self.assertEqual(pub.call("publish", "feed", "from-socket"), 1)
            self.assertEqual(self.ring_publish(srv, 2, "feed", "from-ring"), ["receivers 1"] * 2)
            self.assertEqual(self.ring_publish(srv, 1, "other", "resp-ring", proto="resp"), ["receivers 1"])
            out = self.finish(p)
            self.assertEqual(out[:4], ["message feed from-socket", "message feed from-ring", "message feed from-ring",
                                       "message other resp-ring"])
            # UNSUBSCRIBE of all: one confirmation per channel, in the client's table order
            unsub = [line.split() for line in out[4:6]]
            self.assertEqual(sorted(u[1] for u in unsub), ["feed", "other"])
            self.assertEqual([u[0] for u in unsub], ["unsubscribe"] * 2)
            self.assertEqual([u[2] for u in unsub], ["1", "0"])
            self.assertEqual(out[6:], ["punsubscribe (nil) 0", "quiet"])

    def test_patterns_and_unsubscribe(self):
        with Server("goblin") as srv, Raw(srv) as pub:
            p, head = self.listen(srv, 3, "PSUBSCRIBE", "news.*")
            self.assertEqual(head, ["psubscribe news.* 1", "ready"])
            self.assertEqual(self.ring_publish(srv, 1, "news.tech", "chips"), ["receivers 1"])
            self.assertEqual(pub.call("publish", "sport", "ignored"), 0)
            self.assertEqual(pub.call("publish", "news.art", "paint"), 1)
            self.assertEqual(pub.call("publish", "news.x", ""), 1)
            out = self.finish(p)
            self.assertEqual(out, ["pmessage news.* news.tech chips", "pmessage news.* news.art paint",
                                   "pmessage news.* news.x ", "unsubscribe (nil) 1", "punsubscribe news.* 0",
                                   "quiet"])
            # unsubscribed: nobody receives any more
            self.assertTrue(gbtest.wait_until(lambda: pub.call("pubsub", "numpat") == 0, 10 * SLOW))
            self.assertEqual(self.ring_publish(srv, 1, "news.tech", "late"), ["receivers 0"])

class SbeRingSubscriber(RingSubscriberCases, unittest.TestCase):
    PROTO = "sbe"

    def test_stalled_sbe_subscriber_released(self):
        check_stalled_ring_subscriber_released(self, "sbe", b"s")


class RespRingSubscriber(RingSubscriberCases, unittest.TestCase):
    PROTO = "resp"


class Resp3RingSubscriber(RingSubscriberCases, unittest.TestCase):
    PROTO = "resp3"


# ---- ACL -----------------------------------------------------------------------------------

class AclRevocation(gbtest.GoblinAndRedisCase):
    def test_revoked_channel_kills_subscriber(self):
        def run(srv):
            with Raw(srv) as admin, Raw(srv) as sub, Raw(srv) as other:
                admin.call("acl", "setuser", "u", "on", "nopass", "+@all", "~*", "resetchannels", "&news.*")
                out = [sub.call_raw("auth", "u", "x"), sub.call_raw("subscribe", "news.a")]
                out.append(sub.call_raw("subscribe", "sport"))
                out.append(other.call_raw("auth", "u", "x"))
                out.append(other.call_raw("publish", "sport", "m"))
                out.append(other.call_raw("publish", "news.b", "m"))
                # still allowed: the subscriber stays
                out.append(admin.call_raw("acl", "setuser", "u", "&other"))
                out.append(admin.call_raw("pubsub", "numsub", "news.a"))
                out.append(admin.call_raw("acl", "setuser", "u", "resetchannels", "&other"))
                out.append(sub.expect_eof())
                out.append(other.call_raw("ping"))
                out.append(admin.call_raw("pubsub", "numsub", "news.a"))
                admin.call("acl", "deluser", "u")
                return out
        g = run(self.goblin)
        r = run(self.redis)
        self.assertEqual(g, r)
        self.assertTrue(g[-3])


# ---- real clients -----------------------------------------------------------------------------

class RealClients(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = Server("goblin")

    @classmethod
    def tearDownClass(cls):
        cls.srv.cleanup()

    def test_redis_py_pubsub(self):
        import redis
        r = redis.Redis(unix_socket_path=self.srv.sock)
        p = r.pubsub()
        p.subscribe("chan")
        p.psubscribe("pat.*")
        got = []
        deadline = time.time() + 10 * SLOW
        while len(got) < 2 and time.time() < deadline:
            m = p.get_message(timeout=0.1)
            if m:
                got.append(m["type"])
        self.assertEqual(got, ["subscribe", "psubscribe"])
        self.assertEqual(r.publish("chan", "hello"), 1)
        self.assertEqual(r.publish("pat.x", "world"), 1)
        msgs = []
        while len(msgs) < 2 and time.time() < deadline:
            m = p.get_message(timeout=0.1)
            if m:
                msgs.append((m["type"], m["channel"], m["data"]))
        self.assertEqual(msgs, [("message", b"chan", b"hello"), ("pmessage", b"pat.x", b"world")])
        self.assertEqual(r.pubsub_numsub("chan"), [(b"chan", 1)])
        self.assertEqual(r.pubsub_numpat(), 1)
        p.close()
        self.assertTrue(gbtest.wait_until(lambda: r.pubsub_numpat() == 0, 10 * SLOW))
        # the thread runner with a handler
        seen = []
        p = r.pubsub()
        p.subscribe(**{"t": lambda m: seen.append(m["data"])})
        th = p.run_in_thread(sleep_time=0.01, daemon=True)
        self.assertTrue(gbtest.wait_until(lambda: r.pubsub_numsub("t")[0][1] == 1, 10 * SLOW))
        for i in range(50):
            r.publish("t", str(i))
        self.assertTrue(gbtest.wait_until(lambda: len(seen) == 50, 10 * SLOW))
        self.assertEqual(seen, [str(i).encode() for i in range(50)])
        th.stop()
        r.close()

    def test_ioredis(self):
        npm, node = shutil.which("npm"), shutil.which("node")
        if not npm or not node:
            gbtest.reference_missing("node/npm not installed")
        cache = os.path.join(os.environ.get("GOBLIN_BUILD_DIR", tempfile.gettempdir()), "node-deps")
        if not os.path.isdir(os.path.join(cache, "node_modules", "ioredis")):
            try:
                res = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", cache, "ioredis@5"],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=180)
            except subprocess.TimeoutExpired:
                gbtest.reference_missing("npm install ioredis timed out (no registry?)")
            if res.returncode != 0:
                gbtest.reference_missing("npm install ioredis failed: %s" % res.stdout.decode(errors="replace")[-300:])
        script = r"""
const Redis = require('ioredis');
const path = process.argv[1];
const sub = new Redis({path}), pub = new Redis({path});
const got = [];
sub.on('message', (ch, msg) => got.push(['message', ch, msg]));
sub.on('pmessage', (p, ch, msg) => got.push(['pmessage', p, ch, msg]));
(async () => {
  await sub.subscribe('a', 'b');
  await sub.psubscribe('x*');
  const n1 = await pub.publish('a', 'one');
  const n2 = await pub.publish('xy', 'two');
  const n3 = await pub.publish('none', 'three');
  await new Promise(r => setTimeout(r, 200));
  await sub.unsubscribe('a', 'b');
  await sub.punsubscribe('x*');
  const pong = await sub.ping();
  console.log(JSON.stringify({n: [n1, n2, n3], got, pong}));
  sub.disconnect(); pub.disconnect();
})().catch(e => { console.error(e); process.exit(1); });
"""
        env = dict(os.environ, NODE_PATH=os.path.join(cache, "node_modules"))
        res = subprocess.run([node, "-e", script, self.srv.sock], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             timeout=60 * SLOW, env=env)
        self.assertEqual(res.returncode, 0, res.stderr.decode(errors="replace"))
        import json
        out = json.loads(res.stdout.decode().strip().splitlines()[-1])
        self.assertEqual(out["n"], [1, 1, 0])
        self.assertEqual(out["got"], [["message", "a", "one"], ["pmessage", "x*", "xy", "two"]])
        self.assertEqual(out["pong"], "PONG")


if __name__ == "__main__":
    gbtest.run_tests()
