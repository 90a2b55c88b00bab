"""Replication, Goblin as the PRIMARY (issue 29): a real redis-server 7.0
replicates from goblin-core.

  * the dataset written before the replica attached (every type, several
    databases, volatile keys) and the stream after it (SELECT, PEXPIREAT,
    INCRBYFLOAT and SPOP's deterministic effects, MULTI/EXEC) end up on
    the Redis replica: compared key by key (type, value, PEXPIRETIME);
  * a dropped link continues with +CONTINUE (sync_partial_ok on Goblin,
    "Successful partial resynchronization" in Redis's log);
  * WAIT with and without replicas; ROLE and INFO replication against a
    Redis primary with a Redis replica (same fields; the deterministic
    values equal);
  * hostile input: PSYNC with a garbage offset, REPLCONF's errors and
    ACKs from a non-replica, WAIT's errors, byte for byte with Redis; a
    replica that never reads is disconnected by its output limit;
  * min-replicas-to-write's -NOREPLICAS, as Redis answers it.
"""

import re
import socket
import time
import unittest

import gbtest
from gbtest import Raw, Server, parse_info, wait_until

SLOW = gbtest.SLOW


def synced(primary, replica):
    """The replica processed everything the primary streamed."""
    want = int(primary.info("replication")["master_repl_offset"])
    rinfo = replica.info("replication")
    return rinfo.get("master_link_status") == "up" and int(rinfo.get("slave_repl_offset", -1)) == want


def wait_synced(primary, replica):
    assert wait_until(lambda: synced(primary, replica), 20 * SLOW), (
        primary.info("replication"), replica.info("replication"))


def populate(r, tag):
    """Keys of every type in databases 0, 2 and 5 (some volatile)."""
    for db in (0, 2, 5):
        r.call("SELECT", db)
        r.call("SET", "s:%s" % tag, "v%d" % db)
        r.call("SET", "n:%s" % tag, "12345")
        r.call("RPUSH", "l:%s" % tag, "a", "b", "c", db)
        r.call("HSET", "h:%s" % tag, "f1", "v1", "f2", db)
        r.call("SADD", "set:%s" % tag, "x", "y", db)
        r.call("SADD", "iset:%s" % tag, 1, 2, 3)
        r.call("ZADD", "z:%s" % tag, 1, "one", 2.5, "two")
        r.call("XADD", "x:%s" % tag, "1-1", "f", "v")
        r.call("PFADD", "hll:%s" % tag, "a", "b")
        r.call("SET", "vol:%s" % tag, "t", "PX", 600000)
        r.call("EXPIRE", "h:%s" % tag, 900)
    r.call("SELECT", 0)


def value_of(r, key):
    t = r.call("TYPE", key)
    if t == b"string":
        v = r.call("GET", key)
    elif t == b"list":
        v = r.call("LRANGE", key, 0, -1)
    elif t == b"hash":
        v = sorted(r.call("HGETALL", key))
    elif t == b"set":
        v = sorted(r.call("SMEMBERS", key))
    elif t == b"zset":
        v = r.call("ZRANGE", key, 0, -1, "WITHSCORES")
    elif t == b"stream":
        v = r.call("XRANGE", key, "-", "+")
    else:
        v = None
    return t, v, r.call("PEXPIRETIME", key)


def dataset(server):
    out = {}
    with Raw(server) as r:
        for db in range(16):
            r.call("SELECT", db)
            for k in sorted(r.call("KEYS", "*")):
                out[(db, k)] = value_of(r, k)
    return out


class GoblinPrimaryRedisReplica(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        gbtest.require_redis()
        cls.goblin = Server("goblin")
        with Raw(cls.goblin) as r:
            populate(r, "before")
        try:
            cls.replica = Server("redis", args=["--replicaof", "127.0.0.1", cls.goblin.port])
        except BaseException:
            cls.goblin.cleanup()
            raise
        wait_synced(cls.goblin, cls.replica)

    @classmethod
    def tearDownClass(cls):
        cls.replica.cleanup()
        cls.goblin.cleanup()

    def test_1_dataset_and_stream(self):
        with Raw(self.goblin) as r:
            populate(r, "after")
            r.call("SELECT", 2)
            r.call("SET", "f", "10.5")
            r.call("INCRBYFLOAT", "f", "0.1")
            r.call("SADD", "pop", *range(20))
            r.call("SPOP", "pop", 3)
            r.call("SPOP", "pop")
            r.call("SET", "rel", "x")
            r.call("PEXPIRE", "rel", 500000)
            r.call("SELECT", 7)
            self.assertEqual(r.call("MULTI"), b"OK")
            r.call("SET", "m1", "a")
            r.call("LPUSH", "m2", "b")
            r.call("HSET", "m3", "k", "v")
            self.assertEqual(r.call("EXEC"), [b"OK", 1, 1])
            r.call("SET", "gone", "x", "PX", 1)
        time.sleep(0.05)
        with Raw(self.goblin) as r:
            r.call("SELECT", 7)
            self.assertIsNone(r.call("GET", "gone"))  # expired: DEL streamed
        wait_synced(self.goblin, self.replica)
        mine, theirs = dataset(self.goblin), dataset(self.replica)
        self.assertGreater(len(mine), 60)
        self.assertEqual(sorted(mine), sorted(theirs))
        for k in mine:
            self.assertEqual(mine[k], theirs[k], k)
        # and every value of every database, as Redis digests it
        with Raw(self.goblin) as g, Raw(self.replica) as r:
            self.assertEqual(g.call("DEBUG", "DIGEST"), r.call("DEBUG", "DIGEST"))
        self.assertEqual(self.replica.info("replication")["master_link_status"], "up")

    def test_2_partial_resync(self):
        before = self.goblin.info("stats")
        with Raw(self.goblin) as r:
            self.assertEqual(r.call("CLIENT", "KILL", "TYPE", "replica"), 1)
            r.call("SET", "while-away", "1")
        assert wait_until(lambda: self.goblin.info("replication")["connected_slaves"] == "1", 20 * SLOW)
        wait_synced(self.goblin, self.replica)
        after = self.goblin.info("stats")
        self.assertEqual(int(after["sync_partial_ok"]), int(before["sync_partial_ok"]) + 1)
        self.assertEqual(after["sync_full"], before["sync_full"])
        self.assertIn("Successful partial resynchronization", self.replica.log())
        with Raw(self.replica) as r:
            self.assertEqual(r.call("GET", "while-away"), b"1")

    def test_3_wait_and_role(self):
        with Raw(self.goblin) as r:
            r.call("SET", "w", "1")
            self.assertEqual(r.call("WAIT", 1, 5000), 1)
            self.assertEqual(r.call("WAIT", 2, 200), 1)  # times out with the one it has
            role = r.call("ROLE")
            stats = r.call("MEMORY", "STATS")
            stats = dict(zip(stats[::2], stats[1::2]))
        # The replica's link and the backlog are counted where Redis counts them.
        self.assertGreater(stats[b"clients.slaves"], 0)
        self.assertGreater(stats[b"replication.backlog"], 0)
        self.assertEqual(role[0], b"master")
        self.assertEqual(len(role[2]), 1)
        ip, port, off = role[2][0]
        self.assertEqual((ip, int(port)), (b"127.0.0.1", self.replica.port))
        self.assertLessEqual(int(off), role[1])

    def test_5_min_replicas_with_a_replica(self):
        with Raw(self.goblin) as r:
            try:
                r.call("CONFIG", "SET", "min-replicas-to-write", "1")
                assert wait_until(lambda: self.goblin.info("replication").get("min_slaves_good_slaves") == "1",
                                  5 * SLOW)
                self.assertEqual(r.call("SET", "guarded", "1"), b"OK")
                r.call("CONFIG", "SET", "min-replicas-to-write", "2")
                self.assertEqual(r.call("SET", "guarded", "2"),
                                 gbtest.Err(b"NOREPLICAS Not enough good replicas to write."))
            finally:
                r.call("CONFIG", "SET", "min-replicas-to-write", "0")

    def test_4_info_fields_as_redis(self):
        """INFO replication and ROLE of a primary with one replica: the same
        fields as a Redis primary's, the deterministic values equal."""
        rp = Server("redis")
        rr = Server("redis", args=["--replicaof", "127.0.0.1", rp.port])
        try:
            wait_synced(rp, rr)
            for server in (rp, self.goblin):
                with Raw(server) as r:
                    r.call("SET", "x", "1")
                    self.assertEqual(r.call("WAIT", 1, 5000), 1)
            theirs, mine = rp.info("replication"), self.goblin.info("replication")
            self.assertEqual(list(theirs), list(mine))
            for f in ("role", "connected_slaves", "master_failover_state", "master_replid2", "second_repl_offset",
                      "repl_backlog_active", "repl_backlog_size", "repl_backlog_first_byte_offset"):
                self.assertEqual(theirs[f], mine[f], f)
            line = re.compile(r"^ip=127\.0\.0\.1,port=(\d+),state=online,offset=(\d+),lag=\d+$")
            self.assertEqual(int(line.match(mine["slave0"]).group(1)), self.replica.port)
            # Redis subtracts the ACK's cached second from time(NULL), which
            # reads the kernel's coarse clock: just after a second turns,
            # time(NULL) can still be the second before, and Redis prints
            # lag=-1. Goblin's lag is from one clock and is never negative.
            theirs_line = re.compile(r"^ip=127\.0\.0\.1,port=(\d+),state=online,offset=(\d+),lag=(-1|\d+)$")
            self.assertTrue(theirs_line.match(theirs["slave0"]), theirs["slave0"])
            for f in ("sync_full", "sync_partial_ok", "sync_partial_err"):
                self.assertIn(f, rp.info("stats"))
                self.assertIn(f, self.goblin.info("stats"))
            with Raw(rp) as a, Raw(self.goblin) as b:
                ra, rb = a.call("ROLE"), b.call("ROLE")
                self.assertEqual([ra[0], len(ra[2]), len(ra[2][0])], [rb[0], len(rb[2]), len(rb[2][0])])
                self.assertEqual(gbtest.resp_types(ra), gbtest.resp_types(rb))
                self.assertEqual(a.call("CLIENT", "LIST", "TYPE", "replica").count(b"flags=S"),
                                 b.call("CLIENT", "LIST", "TYPE", "replica").count(b"flags=S"))
        finally:
            rr.cleanup()
            rp.cleanup()


class PrimaryProtocolAsRedis(gbtest.GoblinAndRedisCase):
    """Both servers without replicas: the same bytes for the same input."""

    SILENT = {("REPLCONF", "ack"), ("REPLCONF", "ACK"), ("REPLCONF", "getack")}

    def both(self, *cmds):
        """Each command's reply bytes on each server; b"" for the ones that
        answer nothing (REPLCONF ACK / GETACK), after 0.3 s of silence."""
        out = []
        for server in (self.goblin, self.redis):
            with Raw(server) as r:
                got = []
                for c in cmds:
                    r.send_cmd(*c)
                    got.append(r.read_raw_available(0.3) if tuple(c[:2]) in self.SILENT else r.read()[1])
                out.append(got)
        return out

    def test_replconf_and_psync_errors(self):
        cmds = [("REPLCONF", "ack", "notanumber"), ("REPLCONF", "ACK", "12", "FACK", "x"), ("REPLCONF", "foo", "bar"),
                ("REPLCONF", "listening-port", "x"), ("REPLCONF", "listening-port"), ("REPLCONF", "capa", "eof"),
                ("REPLCONF", "getack", "*"), ("REPLCONF", "rdb-only", "2"), ("REPLCONF", "rdb-only", "z"),
                ("REPLCONF", "ip-address", "x" * 300), ("REPLCONF",), ("PSYNC", "?", "garbage"),
                ("PSYNC", "?"), ("PING",)]
        mine, theirs = self.both(*cmds)
        self.assertEqual(mine, theirs)
        self.assertEqual(mine[0], b"")  # ACK from a non-replica: no reply
        self.assertEqual(mine[-3], b"-ERR value is not an integer or out of range\r\n")

    def test_wait_errors_and_timeout(self):
        cmds = [("WAIT", 1, 100), ("WAIT", 0, 0), ("WAIT", "x", 1), ("WAIT", 1, -1), ("WAIT", 1, "y"),
                ("MULTI",), ("WAIT", 1, 0), ("EXEC",), ("EVAL", "return redis.call('wait', 1, 1)", 0)]
        mine, theirs = self.both(*cmds)
        self.assertEqual(mine, theirs)
        self.assertEqual(mine[0], b":0\r\n")
        with Raw(self.goblin) as r:
            t0 = time.time()
            self.assertEqual(r.call("WAIT", 1, 100), 0)
            self.assertGreaterEqual(time.time() - t0, 0.09)

    def test_min_replicas_to_write(self):
        mine, theirs = self.both(("CONFIG", "SET", "min-replicas-to-write", "1"), ("SET", "k", "v"), ("GET", "k"),
                                 ("MULTI",), ("SET", "k", "v"), ("EXEC",),
                                 ("CONFIG", "GET", "min-replicas-to-write"), ("CONFIG", "GET", "min-replicas-max-lag"),
                                 ("CONFIG", "SET", "min-replicas-max-lag", "0"),
                                 ("SET", "k", "v"), ("CONFIG", "SET", "min-replicas-to-write", "0"),
                                 ("CONFIG", "SET", "min-replicas-max-lag", "10"))
        self.assertEqual(mine, theirs)
        self.assertEqual(mine[1], b"-NOREPLICAS Not enough good replicas to write.\r\n")

    def test_client_kill_and_list_by_type(self):
        """TYPE replica / slave / master / pubsub / normal select the same
        clients as on Redis (a subscriber is pubsub, not normal)."""
        out = []
        for server in (self.goblin, self.redis):
            with Raw(server) as sub, Raw(server) as r:
                sub.call("SUBSCRIBE", "ch")
                out.append([r.call("CLIENT", "LIST", "TYPE", "replica"), r.call("CLIENT", "KILL", "TYPE", "slave"),
                            r.call("CLIENT", "KILL", "TYPE", "master"), r.call("CLIENT", "KILL", "TYPE", "replica"),
                            r.call("CLIENT", "KILL", "TYPE", "pubsub"), sub.expect_eof(),
                            r.call("CLIENT", "KILL", "TYPE", "normal"), r.call("CLIENT", "KILL", "TYPE", "bogus")])
        self.assertEqual(out[0], out[1])
        self.assertEqual(out[0][4], 1)

    def test_info_and_role_without_replicas(self):
        mine, theirs = self.goblin.info("replication"), self.redis.info("replication")
        self.assertEqual(list(mine), list(theirs))
        for f in mine:
            if f != "master_replid":
                self.assertEqual(mine[f], theirs[f], f)
        self.assertRegex(mine["master_replid"], "^[0-9a-f]{40}$")
        with Raw(self.goblin) as a, Raw(self.redis) as b:
            self.assertEqual(a.call_raw("ROLE"), b.call_raw("ROLE"))

    def test_config_defaults(self):
        mine, theirs = self.both(("CONFIG", "GET", "repl-backlog-size"), ("CONFIG", "GET", "repl-backlog-ttl"),
                                 ("CONFIG", "GET", "repl-ping-replica-period"),
                                 ("CONFIG", "GET", "client-output-buffer-limit"))
        self.assertEqual(mine[:3], theirs[:3])
        self.assertIn(b"slave 268435456 67108864 60", mine[3])


class HostileReplica(unittest.TestCase):
    def test_replica_that_never_reads_is_disconnected(self):
        with Server("goblin") as g:
            with Raw(g) as r:
                r.call("CONFIG", "SET", "client-output-buffer-limit", "replica 1mb 256kb 1")
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.connect(("127.0.0.1", g.port))
            s.sendall(b"PSYNC ? -1\r\n")  # then never reads
            assert wait_until(lambda: g.info("replication")["connected_slaves"] == "1", 10 * SLOW)
            big = "x" * (256 * 1024)
            with Raw(g) as r:
                for i in range(64):  # 16 MB through the stream
                    r.call("SET", "k%d" % i, big)
                    if g.info("replication")["connected_slaves"] == "0":
                        break
            assert wait_until(lambda: g.info("replication")["connected_slaves"] == "0", 10 * SLOW)
            self.assertGreaterEqual(int(g.info("stats")["client_output_buffer_limit_disconnections"]), 1)
            self.assertTrue(g.ping_ok())
            s.close()

    def test_rdb_larger_than_the_replica_limit(self):
        """The full sync's RDB is not held to the replica's output limit
        (Redis sends it outside the buffer): a dataset four times the hard
        limit still syncs, and the stream after it is limited as before."""
        with Server("goblin") as g:
            with Raw(g) as r:
                r.call("CONFIG", "SET", "client-output-buffer-limit", "replica 1mb 512kb 10")
                for i in range(8):
                    r.call("SET", "big%d" % i, "%d" % i * (512 * 1024))
            rep = Server("redis", args=["--replicaof", "127.0.0.1", g.port])
            try:
                wait_synced(g, rep)
                self.assertEqual(g.info("stats")["client_output_buffer_limit_disconnections"], "0")
                self.assertEqual(g.info("stats")["sync_full"], "1")
                with Raw(rep) as r:
                    self.assertEqual(r.call("STRLEN", "big7"), 512 * 1024)
            finally:
                rep.cleanup()

    def test_replica_output_is_not_counted_for_maxmemory(self):
        """A slow replica's pending stream does not make the primary evict
        (Redis leaves replicas' output out of maxmemory's count)."""
        with Server("goblin") as g:
            with Raw(g) as r:
                for i in range(50):
                    r.call("SET", "keep%d" % i, "v")
                used = int(g.info("memory")["used_memory"])
                r.call("CONFIG", "SET", "client-output-buffer-limit", "replica 0 0 0")
                r.call("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
                r.call("CONFIG", "SET", "maxmemory", used + 4 * 1024 * 1024)
                s = socket.socket()
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                s.connect(("127.0.0.1", g.port))
                s.sendall(b"PSYNC ? -1\r\n")  # then never reads
                assert wait_until(lambda: g.info("replication")["connected_slaves"] == "1", 10 * SLOW)
                big = "x" * (100 * 1024)
                for i in range(200):  # 20 MB of stream, one key rewritten
                    r.call("SET", "big", big)
                self.assertGreater(int(g.info("memory")["used_memory"]), used + 8 * 1024 * 1024)
                self.assertEqual(g.info("stats")["evicted_keys"], "0")
                self.assertEqual(r.call("DBSIZE"), 51)
                s.close()

    def test_backlog_ttl(self):
        """Without replicas for repl-backlog-ttl seconds the backlog goes,
        and with it the history (a new replication ID)."""
        with Server("goblin") as g:
            with Raw(g) as r:
                r.call("CONFIG", "SET", "repl-backlog-ttl", "1")
            s = socket.create_connection(("127.0.0.1", g.port))
            s.sendall(b"PSYNC ? -1\r\n")
            assert wait_until(lambda: g.info("replication")["connected_slaves"] == "1", 10 * SLOW)
            first = g.info("replication")
            self.assertEqual(first["repl_backlog_active"], "1")
            s.close()
            assert wait_until(lambda: g.info("replication")["repl_backlog_active"] == "0", 10 * SLOW)
            self.assertNotEqual(g.info("replication")["master_replid"], first["master_replid"])

    def test_sync_old_protocol(self):
        """SYNC: no +FULLRESYNC line, the RDB at once, then the stream."""
        with Server("goblin") as g:
            with Raw(g) as r:
                r.call("SET", "a", "1")
            with Raw(g) as r:
                r.send(b"SYNC\r\n")
                data = b""
                deadline = time.time() + 10 * SLOW
                # Newlines before the length are the primary's keep-alive (once
                # a second while the RDB goes to its file, as Redis sends them).
                while not re.match(rb"\n*\$(\d+)\r\n", data) and time.time() < deadline:
                    data += r.read_raw_available(0.2)
                m = re.match(rb"\n*\$(\d+)\r\n", data)
                n = int(m.group(1))
                data = data[m.end():]
                while len(data) < n and time.time() < deadline:
                    data += r.read_raw_available(0.2)
                self.assertTrue(data.startswith(b"REDIS0010"), data[:16])
                self.assertGreaterEqual(len(data), n)
                with Raw(g) as w:
                    w.call("SET", "b", "2")
                stream = data[n:] + r.read_raw_available(1.0)
                ping = b"*1\r\n$4\r\nPING\r\n"  # the cron's, at any moment
                self.assertEqual(stream.replace(ping, b""),
                                 b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$1\r\n2\r\n")


if __name__ == "__main__":
    gbtest.run_tests()
