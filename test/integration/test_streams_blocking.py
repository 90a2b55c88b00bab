"""Blocking stream reads over real sockets, several clients at a time
(issue 17): consumers of one group sharing the work in FIFO order, a
consumer that dies with entries pending and the redelivery (XPENDING,
XCLAIM, XAUTOCLAIM), CLIENT UNBLOCK, a blocked XREAD served after EXEC,
multi-key waiters served from the key that got data, groups and keys that
go away under a waiter, timeouts.

Every scenario runs on redis-server 7.0 and on goblin-core and returns what
its clients observed (exact reply bytes); goblin's must equal Redis's, and
each scenario also asserts what it is about. IDs are explicit, so replies
are byte-comparable; times are left out (XPENDING's idle field).
Waiters are confirmed blocked (INFO blocked_clients) before anything else
happens, so the order is deterministic.
"""

import time
import unittest

import gbtest
from gbtest import SLOW, Raw, Server, wait_until


def blocked_clients(srv):
    return int(srv.info("clients")["blocked_clients"])


def wait_blocked(srv, n):
    if not wait_until(lambda: blocked_clients(srv) == n, 10 * SLOW, interval=0.005):
        raise AssertionError("expected %d blocked clients on %s, have %d" % (n, srv.kind, blocked_clients(srv)))


def waiter(srv, *cmd):
    before = blocked_clients(srv)
    r = Raw(srv)
    r.send_cmd(*cmd)
    wait_blocked(srv, before + 1)
    return r


def pending(p, key, group):
    """XPENDING's extended form without the idle times."""
    return [[e[0], e[1], e[3]] for e in p.call("XPENDING", key, group, "-", "+", 100)]


class StreamBlockingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.servers = [("goblin", Server("goblin"))]
        if gbtest.compare_with_redis():
            cls.servers.append(("redis", Server("redis")))

    @classmethod
    def tearDownClass(cls):
        for _, s in cls.servers:
            s.cleanup()

    def everywhere(self, scenario):
        obs = {}
        for name, srv in self.servers:
            with Raw(srv) as r:
                r.call("FLUSHALL")
            with self.subTest(server=name):
                obs[name] = scenario(srv)
                self.assertEqual(blocked_clients(srv), 0, "a client is still blocked on %s" % name)
        if "redis" in obs:
            self.assertEqual(obs["goblin"], obs["redis"], "goblin-core differs from redis-server")
        return obs["goblin"]

    def test_consumers_of_one_group_share_the_work_in_order(self):
        def sc(srv):
            with Raw(srv) as p:
                p.call("XGROUP", "CREATE", "jobs", "workers", "$", "MKSTREAM")
                ws = [waiter(srv, "XREADGROUP", "GROUP", "workers", "w%d" % i, "BLOCK", 0, "STREAMS", "jobs", ">")
                      for i in range(3)]
                got = []
                for i in range(1, 4):
                    p.call("XADD", "jobs", "%d-0" % i, "job", "j%d" % i)
                    got.append(ws[i - 1].read()[1])
                # A fourth entry with nobody waiting stays for the next read.
                p.call("XADD", "jobs", "4-0", "job", "j4")
                late = ws[0].call_raw("XREADGROUP", "GROUP", "workers", "w0", "COUNT", 10, "STREAMS", "jobs", ">")
                pel = pending(p, "jobs", "workers")
            for w in ws:
                w.close()
            self.assertEqual(got[1], b"*1\r\n*2\r\n$4\r\njobs\r\n*1\r\n*2\r\n$3\r\n2-0\r\n*2\r\n$3\r\njob\r\n$2\r\nj2\r\n")
            self.assertEqual(pel, [[b"1-0", b"w0", 1], [b"2-0", b"w1", 1], [b"3-0", b"w2", 1], [b"4-0", b"w0", 1]])
            return got, late, pel
        self.everywhere(sc)

    def test_redelivery_after_a_consumer_dies(self):
        def sc(srv):
            out = []
            with Raw(srv) as p:
                p.call("XGROUP", "CREATE", "jobs", "g", "$", "MKSTREAM")
                dying = waiter(srv, "XREADGROUP", "GROUP", "g", "dying", "BLOCK", 0, "COUNT", 2, "STREAMS", "jobs", ">")
                p.call("XADD", "jobs", "1-0", "a", "1")
                out.append(dying.read()[1])
                dying.close()  # gone without XACK: 1-0 stays pending for it
                p.call("XADD", "jobs", "2-0", "a", "2")
                p.call("XADD", "jobs", "3-0", "a", "3")
                with Raw(srv) as healthy:
                    out.append(healthy.call_raw("XREADGROUP", "GROUP", "g", "healthy", "COUNT", 1, "STREAMS", "jobs",
                                                ">"))
                    out.append(pending(p, "jobs", "g"))
                    # Another consumer takes the dead one's entry, then acknowledges.
                    out.append(healthy.call_raw("XCLAIM", "jobs", "g", "healthy", 0, "1-0"))
                    out.append(pending(p, "jobs", "g"))
                    out.append(healthy.call_raw("XACK", "jobs", "g", "1-0"))
                    # XAUTOCLAIM sweeps what is left to a third consumer, deleted entries reported.
                    p.call("XREADGROUP", "GROUP", "g", "dying", "STREAMS", "jobs", ">")
                    p.call("XDEL", "jobs", "3-0")
                    out.append(p.call_raw("XAUTOCLAIM", "jobs", "g", "sweeper", 0, "0-0", "COUNT", 10))
                    out.append(pending(p, "jobs", "g"))
                    out.append(p.call_raw("XINFO", "GROUPS", "jobs"))
            self.assertEqual(out[2], [[b"1-0", b"dying", 1], [b"2-0", b"healthy", 1]])
            self.assertEqual(out[4], [[b"1-0", b"healthy", 2], [b"2-0", b"healthy", 1]])
            self.assertEqual(out[7], [[b"2-0", b"sweeper", 2]])
            return out
        self.everywhere(sc)

    def test_client_unblock(self):
        def sc(srv):
            out = []
            w = Raw(srv)
            wid = w.call("CLIENT", "ID")
            with Raw(srv) as p:
                p.call("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
                w.send_cmd("XREAD", "BLOCK", 0, "STREAMS", "s", "$")
                wait_blocked(srv, 1)
                out.append(p.call_raw("CLIENT", "UNBLOCK", wid, "TIMEOUT"))
                out.append(w.read()[1])
                w.send_cmd("XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", "s", ">")
                wait_blocked(srv, 1)
                out.append(p.call_raw("CLIENT", "UNBLOCK", wid, "ERROR"))
                out.append(w.read()[1])
                out.append(w.call_raw("PING"))
                out.append(p.call_raw("XINFO", "GROUPS", "s"))
            w.close()
            self.assertEqual(out[:4], [b":1\r\n", b"*-1\r\n", b":1\r\n",
                                       b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"])
            return out
        self.everywhere(sc)

    def test_xread_served_after_exec(self):
        def sc(srv):
            w = waiter(srv, "XREAD", "BLOCK", 0, "STREAMS", "s", "$")
            with Raw(srv) as p:
                p.send(b"".join(gbtest.encode(*c) for c in (
                    ("MULTI",), ("XADD", "s", "1-0", "f", "a"), ("XLEN", "s"), ("XADD", "s", "2-0", "f", "b"),
                    ("EXEC",))))
                replies = [p.read()[1] for _ in range(5)]
                got = w.read()[1]
            w.close()
            # Served once, after the transaction, with both entries.
            self.assertEqual(got, b"*1\r\n*2\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$1\r\na\r\n"
                                  b"*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\nf\r\n$1\r\nb\r\n")
            return replies, got
        self.everywhere(sc)

    def test_multi_key_waiters_served_from_the_ready_key(self):
        def sc(srv):
            out = []
            with Raw(srv) as p:
                p.call("XADD", "a", "5-0", "f", "old")
                ws = [waiter(srv, "XREAD", "COUNT", 5, "BLOCK", 0, "STREAMS", "a", "b", "$", "0"),
                      waiter(srv, "XREAD", "BLOCK", 0, "STREAMS", "b", "a", "$", "$")]
                p.call("XADD", "b", "1-0", "f", "x")
                out += [w.read()[1] for w in ws]
                w = waiter(srv, "XREAD", "BLOCK", 0, "STREAMS", "a", "b", "$", "$")
                p.call("XADD", "a", "6-0", "f", "y")
                out.append(w.read()[1])
                w.close()
            for w in ws:
                w.close()
            self.assertTrue(all(o.startswith(b"*1\r\n") for o in out), out)
            return out
        self.everywhere(sc)

    def test_group_or_key_gone_under_a_waiter(self):
        def sc(srv):
            out = []
            with Raw(srv) as p:
                p.call("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
                w = waiter(srv, "XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", "s", ">")
                out.append(p.call_raw("XGROUP", "DESTROY", "s", "g"))
                p.call("XADD", "s", "1-0", "f", "v")
                out.append(w.read()[1])
                p.call("XGROUP", "CREATE", "s", "g", "$")
                w.send_cmd("XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", "s", ">")
                wait_blocked(srv, 1)
                p.call("DEL", "s")
                out.append(w.read()[1])
                # A plain XREAD waiter survives the key's deletion and is served by a new stream.
                w.send_cmd("XREAD", "BLOCK", 0, "STREAMS", "s", "$")
                wait_blocked(srv, 1)
                p.call("XADD", "s", "2-0", "f", "v")
                p.call("DEL", "s")
                out.append(w.read()[1])
                w.close()
            self.assertTrue(out[1].startswith(b"-NOGROUP"), out[1])
            self.assertTrue(out[2].startswith(b"-UNBLOCKED"), out[2])
            return out
        self.everywhere(sc)

    def test_a_stream_the_cron_expires_wakes_its_waiter_at_once(self):
        """A stream that expires by the cron's active expiry while an
        XREADGROUP waits on it, no client sending anything: Redis answers
        the waiter at once (its beforeSleep serves the keys the cron made
        ready). goblin-core served it only at some client's next command,
        which in a quiet system could be never."""
        def sc(srv):
            with Raw(srv) as p:
                p.call("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
                p.call("PEXPIRE", "s", 1500)  # after the waiter blocks, on a loaded machine too
                w = waiter(srv, "XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", "s", ">")
                t0 = time.time()
                got = w.read()[1]  # nothing else is sent meanwhile
                waited = time.time() - t0
                w.close()
            self.assertLess(waited, 1.5 + 5 * SLOW)
            return got
        got = self.everywhere(sc)
        self.assertEqual(got, b"-UNBLOCKED the stream key no longer exists\r\n")

    def test_timeouts_and_count(self):
        def sc(srv):
            out = []
            with Raw(srv) as p:
                p.call("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
                with Raw(srv) as w:
                    out.append(w.call_raw("XREAD", "BLOCK", 50, "STREAMS", "s", "$"))
                    out.append(w.call_raw("XREADGROUP", "GROUP", "g", "c", "BLOCK", 50, "STREAMS", "s", ">"))
                    w.send_cmd("XREAD", "COUNT", 2, "BLOCK", 0, "STREAMS", "s", "$")
                    wait_blocked(srv, 1)
                    p.send(b"".join(gbtest.encode("XADD", "s", "%d-0" % i, "f", i) for i in range(1, 4)))
                    [p.read() for _ in range(3)]
                    out.append(w.read()[1])
            self.assertEqual(out[:2], [b"*-1\r\n", b"*-1\r\n"])
            return out
        self.everywhere(sc)


if __name__ == "__main__":
    gbtest.run_tests()
