#!/usr/bin/env python3
"""Replication, the replica side: goblin-core follows a real redis-server
7.0 primary (REPLICAOF, replicaof at start-up), disk-based and disk-less
full syncs, the command stream, partial resync after a dropped link,
REPLCONF ACK, read-only refusals compared with a redis-server replica, and
a hostile fake primary that must never crash it."""
import glob
import os
import socket
import subprocess
import threading
import time
import unittest

import gbtest
from gbtest import SLOW, Raw, Server, wait_until

TIMEOUT = 20 * SLOW


def info(srv, section):
    return srv.info(section)


def link_up(srv):
    return info(srv, "replication").get("master_link_status") == "up"


def wait_link_up(test, srv):
    test.assertTrue(wait_until(lambda: link_up(srv), TIMEOUT), "the replica's link never came up:\n" + srv.log()[-3000:])


def wait_acked(test, primary):
    """Redis's INFO shows one replica online whose acked offset is the
    primary's offset (the replica's REPLCONF ACK)."""
    def acked():
        rep = info(primary, "replication")
        slave = rep.get("slave0", "")
        fields = dict(kv.split("=", 1) for kv in slave.split(",") if "=" in kv) if isinstance(slave, str) else slave
        return fields.get("state") == "online" and str(fields.get("offset")) == str(rep["master_repl_offset"])
    test.assertTrue(wait_until(acked, TIMEOUT), "the replica never acked the primary's offset: %r" %
                    info(primary, "replication"))


def dump_key(r, key, kind):
    if kind == b"string":
        return r.get(key)
    if kind == b"list":
        return r.lrange(key, 0, -1)
    if kind == b"hash":
        return sorted(r.hgetall(key).items())
    if kind == b"set":
        return sorted(r.smembers(key))
    if kind == b"zset":
        return r.zrange(key, 0, -1, withscores=True)
    if kind == b"stream":
        groups = [(g["name"], g["consumers"], g["pending"], g["last-delivered-id"])
                  for g in r.xinfo_groups(key)]
        pending = [r.xpending(key, g[0])["pending"] for g in groups]
        return (r.xrange(key), groups, pending, r.xinfo_stream(key)["last-generated-id"])
    raise AssertionError("unexpected type %r" % kind)


def snapshot(srv, dbs):
    """Every key of dbs: type, value, and TTL (ms, -1 for none)."""
    out = {}
    for db in dbs:
        r = srv.redis(tcp=True, db=db)
        for key in sorted(r.keys("*")):
            kind = r.type(key)
            out[(db, key)] = (kind, dump_key(r, key, kind), r.pttl(key))
        r.close()
    return out


def digest(srv):
    """DEBUG DIGEST: Redis's digest of every database, the same on
    goblin-core and redis-server for the same data."""
    r = srv.redis(tcp=True)
    try:
        return r.execute_command("DEBUG", "DIGEST")
    finally:
        r.close()


def assert_same_data(test, primary, replica, dbs=(0, 3, 9)):
    """The keys of dbs read back alike (values, types, TTLs within 3 s),
    and the digests of the whole datasets are equal."""
    def same():
        a, b = snapshot(primary, dbs), snapshot(replica, dbs)
        if a.keys() != b.keys():
            return False
        for k in a:
            if a[k][:2] != b[k][:2]:
                return False
            ta, tb = a[k][2], b[k][2]
            if (ta < 0) != (tb < 0) or abs(ta - tb) > 3000:
                return False
        return digest(primary) == digest(replica)
    if not wait_until(same, TIMEOUT, 0.2):
        a, b = snapshot(primary, dbs), snapshot(replica, dbs)
        diff = {k: (a.get(k), b.get(k)) for k in set(a) | set(b) if a.get(k, (0, 0))[:2] != b.get(k, (0, 0))[:2]}
        test.fail("the replica's data differs from the primary's: %r (digests %r, %r)" %
                  (diff, digest(primary), digest(replica)))


def write_everything(r, tag):
    """Data of every type in several databases, written on the primary."""
    p = r.pipeline(transaction=False)
    p.set("s:" + tag, "v" * 100)
    p.set("n:" + tag, 12345)
    p.rpush("l:" + tag, *["e%d" % i for i in range(200)])
    p.hset("h:" + tag, mapping={"f%d" % i: "v%d" % i for i in range(50)})
    p.sadd("set:" + tag, *range(300))
    p.sadd("sset:" + tag, "a", "b", "c")
    p.zadd("z:" + tag, {"m%d" % i: i * 1.5 for i in range(100)})
    p.set("ttl:" + tag, "x", ex=1000)
    p.execute()
    r.xadd("st:" + tag, {"f": "1"}, id="1-1")
    r.xadd("st:" + tag, {"f": "2"}, id="2-1")
    r.xadd("st:" + tag, {"f": "3"}, id="3-1")
    r.xgroup_create("st:" + tag, "g1", id="0")
    r.xreadgroup("g1", "alice", {"st:" + tag: ">"}, count=2)
    r.xack("st:" + tag, "g1", "1-1")
    r.execute_command("SELECT", 3)
    r3 = r  # the same connection: SELECT in the stream
    r3.set("db3:" + tag, "three")
    r3.execute_command("SELECT", 0)


def write_more(primary, tag):
    """After the sync: a transaction, expiries, a script, a stream group,
    another database, a key that expires on the primary."""
    r = primary.redis(tcp=True)
    with r.pipeline(transaction=True) as p:
        p.incr("tx:" + tag)
        p.lpush("txl:" + tag, "a", "b")
        p.execute()
    r.set("ex:" + tag, "v")
    r.expire("ex:" + tag, 500)
    r.set("pat:" + tag, "v")
    r.pexpireat("pat:" + tag, int(time.time() * 1000) + 800000)
    r.eval("redis.call('set', KEYS[1], ARGV[1]); redis.call('hset', KEYS[2], 'a', ARGV[1]); "
           "return redis.call('incrby', KEYS[3], 7)", 3, "lua:" + tag, "luah:" + tag, "luan:" + tag, "42")
    r.xadd("st2:" + tag, {"a": "b"})
    r.xgroup_create("st2:" + tag, "grp", id="0")
    r.xreadgroup("grp", "bob", {"st2:" + tag: ">"})
    r.set("gone:" + tag, "v", px=100)
    r9 = primary.redis(tcp=True, db=9)
    r9.set("db9:" + tag, "nine")
    r9.zadd("db9z:" + tag, {"a": 1})
    time.sleep(0.3)
    r.get("gone:" + tag)  # expired: the primary deletes it and sends DEL
    r.close()
    r9.close()


class ReplicaOfRedisPrimary(unittest.TestCase):
    """A disk-based primary (repl-diskless-sync no): the payload comes with
    its length."""

    PRIMARY_ARGS = ["--repl-diskless-sync", "no"]

    @classmethod
    def setUpClass(cls):
        gbtest.require_redis()
        cls.primary = Server("redis", args=cls.PRIMARY_ARGS)
        cls.goblin = None

    @classmethod
    def tearDownClass(cls):
        if cls.goblin:
            cls.goblin.cleanup()
        cls.primary.cleanup()

    def start_replica(self):
        g = Server("goblin", args=["--appendonly", "yes"])
        self.__class__.goblin = g
        with Raw(g) as c:
            self.assertEqual(c.call("REPLICAOF", "127.0.0.1", str(self.primary.port)), b"OK")
        return g

    def test_sync_stream_partial_resync_and_promotion(self):
        primary = self.primary
        pr = primary.redis(tcp=True)
        write_everything(pr, "before")
        g = self.start_replica()
        wait_link_up(self, g)
        write_more(primary, "after")
        write_everything(pr, "after2")
        assert_same_data(self, primary, g)
        wait_acked(self, primary)
        self.assertNotIn(b"gone:after", g.redis(tcp=True).keys("*"))
        # WAIT: the primary's REPLCONF GETACK is answered at once (five in
        # a row, together sooner than the once-a-second ACK could make
        # them: waiting for it, five WAITs take 2.5 s on average and under
        # 1 s once in 120 runs; a stall of the machine delays one or two)
        t0 = time.time()
        for i in range(5):
            pr.set("waited", i)
            self.assertEqual(pr.execute_command("WAIT", 1, 5000), 1)
        self.assertLess(time.time() - t0, 1.0 * SLOW)

        # ROLE and INFO replication as Redis words them for a replica
        with Raw(g) as c:
            role = c.call("ROLE")
            self.assertEqual(role[:4], [b"slave", b"127.0.0.1", primary.port, b"connected"])
            self.assertEqual(role[4], int(info(primary, "replication")["master_repl_offset"]))
            self.assertEqual(c.call("REPLICAOF", "127.0.0.1", str(primary.port)),
                             b"OK Already connected to specified master")
        rep = info(g, "replication")
        self.assertEqual(rep["role"], "slave")
        self.assertEqual(str(rep["master_port"]), str(primary.port))
        self.assertEqual(str(rep["slave_repl_offset"]), str(info(primary, "replication")["master_repl_offset"]))

        # a dropped link resumes with a partial resync
        stats = info(primary, "stats")
        full, partial = int(stats["sync_full"]), int(stats["sync_partial_ok"])
        r9 = primary.redis(tcp=True, db=9)
        r9.set("before-kill", "1")
        with Raw(primary) as c:
            c.call("CLIENT", "KILL", "TYPE", "replica")
        r9.set("after-kill", "1")  # no SELECT again in the stream: the replica must stay in db 9
        r9.close()
        pr.set("while-down", "1")
        pr.rpush("l:before", "more")
        self.assertTrue(wait_until(lambda: int(info(primary, "stats")["sync_partial_ok"]) == partial + 1, TIMEOUT),
                        g.log()[-2000:])
        self.assertEqual(int(info(primary, "stats")["sync_full"]), full)
        wait_link_up(self, g)
        assert_same_data(self, primary, g)
        wait_acked(self, primary)

        # a logically expired key reads as absent but stays until the primary's DEL
        pr.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        try:
            pr.set("lazy", "v", px=50)
            wait_acked(self, primary)
            time.sleep(0.2)
            gr = g.redis(tcp=True)
            self.assertIsNone(gr.get("lazy"))  # absent to a client ...
            self.assertEqual(gr.dbsize(), pr.dbsize())  # ... but not deleted, by the read or the cron
            self.assertEqual(int(info(g, "stats")["expired_keys"]), 0)
            pr.get("lazy")  # the primary expires it: DEL reaches the replica
            self.assertTrue(wait_until(lambda: gr.dbsize() == pr.dbsize(), TIMEOUT))
        finally:
            pr.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")

        # REPLICAOF NO ONE: writable again, the data kept
        keys_before = g.redis(tcp=True).dbsize()
        with Raw(g) as c:
            self.assertEqual(c.call("REPLICAOF", "NO", "ONE"), b"OK")
            self.assertEqual(c.call("SET", "mine", "1"), b"OK")
            self.assertEqual(c.call("ROLE")[0], b"master")
        self.assertEqual(g.redis(tcp=True).dbsize(), keys_before + 1)
        self.assertEqual(info(g, "replication")["role"], "master")
        # its log holds the synced data set, not the one the sync replaced
        before = snapshot(g, (0, 3, 9))
        self.assertTrue(wait_until(lambda: str(info(g, "persistence").get("aof_rewrite_in_progress")) == "0", TIMEOUT))
        with Raw(g) as c:
            self.assertEqual(c.call("DEBUG", "LOADAOF"), b"OK")
        after = snapshot(g, (0, 3, 9))
        self.assertEqual({k: v[:2] for k, v in before.items()}, {k: v[:2] for k, v in after.items()})
        self.assertFalse(glob.glob(os.path.join(g.dir, "temp-*.rdb")))
        pr.close()


class ReplicaOfDisklessPrimary(ReplicaOfRedisPrimary):
    """The same with a disk-less primary: the payload ends with an EOF mark."""

    PRIMARY_ARGS = ["--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0"]


class LogAfterSync(unittest.TestCase):
    """A full sync replaces the data set while the replica's append-only log
    is being rewritten. That rewrite is of the data the sync replaced: it
    is abandoned for a rewrite of the new data set (Redis's
    restartAOFAfterSYNC kills its AOF child and starts another), so the log
    holds what the primary sent. Goblin once only logged that a rewrite was
    already running, and the log kept the old base: a restart lost the
    synced data (seen under ASan, where the replica's first rewrite was
    still running when the sync ended)."""

    def test_sync_during_a_rewrite(self):
        gbtest.require_redis()
        with Server("redis") as primary, Server("goblin", args=["--appendonly", "yes"]) as g, Raw(g) as c:
            pr = primary.redis(tcp=True)
            write_everything(pr, "primary")
            rewriting = lambda: info(g, "persistence")["aof_rewrite_in_progress"] == "1"
            self.assertTrue(wait_until(lambda: not rewriting(), TIMEOUT))
            # a rewrite of a million keys: about half a second, a sync of
            # the primary's few keys a few milliseconds
            self.assertEqual(c.call("DEBUG", "POPULATE", "1000000", "old", "64"), b"OK")
            self.assertEqual(c.call("BGREWRITEAOF"), b"Background append only file rewriting started")
            self.assertEqual(c.call("REPLICAOF", "127.0.0.1", str(primary.port)), b"OK")
            wait_link_up(self, g)
            self.assertIn("Background append only file rewriting abandoned: the sync with the MASTER replaced the "
                          "data set", g.log())
            assert_same_data(self, primary, g)
            self.assertTrue(wait_until(lambda: not rewriting(), TIMEOUT))
            self.assertEqual(c.call("REPLICAOF", "NO", "ONE"), b"OK")
            self.assertEqual(c.call("DEBUG", "LOADAOF"), b"OK")
            self.assertEqual(c.call("DBSIZE"), pr.dbsize())
            self.assertEqual(c.call("DEBUG", "DIGEST"), pr.execute_command("DEBUG", "DIGEST"))
            pr.close()


def sleep_then(srv, seconds):
    """DEBUG SLEEP on srv from a thread (it blocks its caller): the server
    takes nothing from its primary meanwhile, and applies it late."""
    t = threading.Thread(target=lambda: srv.redis(tcp=True).execute_command("DEBUG", "SLEEP", seconds))
    t.start()
    time.sleep(0.1)
    return t


def wait_caught_up(test, primary, replica):
    want = info(primary, "replication")["master_repl_offset"]
    test.assertTrue(wait_until(lambda: info(replica, "replication")["master_repl_offset"] == want, TIMEOUT))


class LateStream(unittest.TestCase):
    """A replica applies its primary's stream late: the stream held through
    a full sync, a backlog replayed after a reconnect, a replica busy for a
    moment (DEBUG SLEEP here). "PEXPIREAT k <passed>" must then not delete k:
    the primary's next command may be PERSIST k, and if k does expire the
    primary's DEL follows (Redis's checkAlreadyExpired is false on a
    replica). Goblin deleted k, the PERSIST found nothing, and the replica
    lost a key its primary kept."""

    def test_passed_deadlines_wait_for_the_primary(self):
        gbtest.require_redis()
        with Server("redis") as primary, Server("goblin") as g, Server("redis") as rr:
            pr = primary.redis(tcp=True)
            for rep in (g, rr):
                rep.redis(tcp=True).execute_command("REPLICAOF", "127.0.0.1", primary.port)
                wait_link_up(self, rep)
            payload = None
            pr.set("src", "restored")
            payload = pr.dump("src")
            sleepers = [sleep_then(rep, 1) for rep in (g, rr)]
            tx = pr.pipeline(transaction=True)  # each deadline and its PERSIST together: no stall between
            tx.set("kept", "v")
            tx.pexpire("kept", 200)
            tx.persist("kept")
            tx.set("getex", "v")
            tx.execute_command("GETEX", "getex", "PX", "200")
            tx.persist("getex")
            tx.restore("restored", 200, payload)
            tx.persist("restored")
            tx.set("gone", "v", px=200)
            tx.execute()
            for t in sleepers:
                t.join()
            for rep in (g, rr):
                wait_caught_up(self, primary, rep)
            got = {}
            for name, rep in (("goblin", g), ("redis", rr)):
                r = rep.redis(tcp=True)
                got[name] = [r.get(k) for k in ("kept", "getex", "restored")] + [r.pttl(k) for k in ("kept", "getex")]
            self.assertEqual(got["goblin"], [b"v", b"v", b"restored", -1, -1])
            self.assertEqual(got["goblin"], got["redis"])
            # the expired key goes with the primary's DEL, on both replicas
            for rep in (g, rr):
                self.assertTrue(wait_until(lambda: rep.redis(tcp=True).execute_command("DBSIZE") ==
                                           pr.dbsize(), TIMEOUT))

    def test_hash_fields_wait_for_the_primary(self):
        """The same for a hash field's deadline (Redis 7.4's HPEXPIRE,
        goblin-core on both sides), and a field past its deadline is not
        deleted by a replica's read: nil to its clients, still there for
        the primary's HDEL (Redis 7.4's hashTypeGetValue)."""
        with Server("goblin") as primary, Server("goblin") as g, Raw(primary) as p, Raw(g) as c:
            self.assertEqual(c.call("REPLICAOF", "127.0.0.1", str(primary.port)), b"OK")
            wait_link_up(self, g)
            p.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
            p.call("HSET", "h", "f", "1", "g", "2")
            p.call("HSET", "h2", "a", "1", "b", "2")
            t = sleep_then(g, 1)
            p.call("MULTI")
            p.call("HPEXPIRE", "h", "200", "FIELDS", "1", "f")
            p.call("HPERSIST", "h", "FIELDS", "1", "f")
            p.call("HPEXPIRE", "h2", "200", "FIELDS", "1", "a")
            p.call("EXEC")
            t.join()
            wait_caught_up(self, primary, g)
            self.assertEqual(c.call("HGET", "h", "f"), b"1")
            self.assertEqual(c.call("HTTL", "h", "FIELDS", "1", "f"), [-1])
            self.assertEqual(c.call("HGET", "h2", "a"), None)  # past its deadline
            self.assertEqual(c.call("HLEN", "h2"), p.call("HLEN", "h2"))  # not deleted: the primary's to do
            self.assertEqual(p.call("HLEN", "h2"), 2)
            self.assertEqual(p.call("HGET", "h2", "a"), None)  # the primary deletes it: HDEL to the replica
            self.assertTrue(wait_until(lambda: c.call("HLEN", "h2") == 1, TIMEOUT))


class ReadOnlyLikeRedis(unittest.TestCase):
    """A goblin replica and a redis-server replica of one primary answer
    normal clients byte for byte alike; replicaof in the configuration."""

    def test_primary_with_a_password(self):
        """masterauth (a long one) and masteruser against a redis-server
        that wants them: PING's NOAUTH is accepted, AUTH follows."""
        gbtest.require_redis()
        pw = "p" * 3000
        with Server("redis", args=["--requirepass", pw, "--repl-diskless-sync-delay", "0"]) as primary:
            pr = primary.redis(tcp=True, password=pw)
            pr.set("secret", "1")
            pr.execute_command("ACL", "SETUSER", "repl", "on", ">" + pw, "+@all", "~*")
            with Server("goblin", args=["--masterauth", pw, "--masteruser", "repl"]) as g:
                with Raw(g) as c:
                    c.call("REPLICAOF", "127.0.0.1", str(primary.port))
                wait_link_up(self, g)
                self.assertTrue(wait_until(lambda: g.redis(tcp=True).get("secret") == b"1", TIMEOUT))
                self.assertIn("Master replied to PING, replication can continue", g.log())
            pr.close()

    def test_blocked_clients_released_like_redis(self):
        """REPLICAOF answers a client blocked on a key with UNBLOCKED and
        closes it, as Redis's disconnectAllBlockedClients."""
        gbtest.require_redis()
        dead = gbtest.free_port()
        with Server("goblin") as g, Server("redis") as r:
            replies = []
            for srv in (g, r):
                with Raw(srv) as blocked, Raw(srv) as admin:
                    blocked.send_cmd("BLPOP", "q", "0")
                    gbtest.wait_blocked_or_answered([(admin, blocked)])
                    self.assertEqual(admin.call("REPLICAOF", "127.0.0.1", str(dead)), b"OK")
                    replies.append(blocked.read()[1])
                    blocked.expect_eof()
            self.assertEqual(replies[0], replies[1])
            self.assertIn(b"UNBLOCKED", replies[0])

    def test_replies_compared_with_a_redis_replica(self):
        gbtest.require_redis()
        with Server("redis", args=["--repl-diskless-sync-delay", "0"]) as primary:
            primary.redis(tcp=True).set("k", "v")
            addr = "127.0.0.1 %d" % primary.port
            with Server("goblin", args=["--replicaof", addr]) as g, \
                    Server("redis", args=["--replicaof", "127.0.0.1", str(primary.port)]) as rr:
                wait_link_up(self, g)
                wait_link_up(self, rr)
                cmds = [("SET", "k", "x"), ("DEL", "k"), ("INCR", "n"), ("GET", "k"),
                        ("EVAL", "return redis.call('set','k','y')", "1", "k"),
                        ("REPLICAOF", "127.0.0.1", "notaport"), ("REPLICAOF", "127.0.0.1", "70000"),
                        ("SLAVEOF", "127.0.0.1", str(primary.port)), ("REPLICAOF", "a")]
                with Raw(g) as a, Raw(rr) as b:
                    for cmd in cmds:
                        self.assertEqual(a.call_raw(*cmd), b.call_raw(*cmd), cmd)
                    # MULTI with a write: refused at queueing, EXEC aborts
                    for conn in (a, b):
                        conn.call("MULTI")
                    self.assertEqual(a.call_raw("SET", "k", "1"), b.call_raw("SET", "k", "1"))
                    self.assertEqual(a.call_raw("EXEC"), b.call_raw("EXEC"))
                # replica-ignore-maxmemory (yes): the replica evicts nothing
                with Raw(g) as c:
                    c.call("CONFIG", "SET", "maxmemory-policy", "allkeys-random")
                    c.call("CONFIG", "SET", "maxmemory", str(g.used_memory() + (1 << 20)))
                pr = primary.redis(tcp=True)
                for i in range(40):
                    pr.set("big:%d" % i, "x" * 100000)
                gr = g.redis(tcp=True)
                self.assertTrue(wait_until(lambda: gr.dbsize() == pr.dbsize(), TIMEOUT))
                self.assertEqual(gr.get("k"), b"v")
                self.assertEqual(int(info(g, "stats")["evicted_keys"]), 0)
                # replica-ignore-maxmemory no: the primary's writes make it
                # evict, as Redis's processCommand does before the master's
                # commands too (it grew past maxmemory: nothing evicted)
                # (Any command to the replica evicts first: the evictions
                # are watched as events, with no command sent meanwhile.)
                with Raw(g) as c:
                    c.call("CONFIG", "SET", "replica-ignore-maxmemory", "no")
                    c.call("CONFIG", "SET", "notify-keyspace-events", "Ee")
                    c.call("CONFIG", "SET", "maxmemory", str(g.used_memory() + (1 << 20)))
                with Raw(g) as sub:
                    sub.call("SUBSCRIBE", "__keyevent@0__:evicted")
                    for i in range(40):
                        pr.set("more:%d" % i, "x" * 100000)
                    wait_acked(self, primary)  # applied
                    events = sub.read_raw_available(1.0)
                self.assertIn(b"$7\r\nmessage\r\n", events, "no eviction while the primary's writes applied")
                self.assertGreater(int(info(g, "stats")["evicted_keys"]), 0)
                self.assertLess(gr.dbsize(), pr.dbsize())
                with Raw(g) as c:
                    c.call("CONFIG", "SET", "replica-ignore-maxmemory", "yes")
                    c.call("CONFIG", "SET", "maxmemory", "0")
                    self.assertEqual(c.call("CONFIG", "GET", "replica-read-only"), [b"replica-read-only", b"yes"])
                    c.call("CONFIG", "SET", "replica-read-only", "no")
                    self.assertEqual(c.call("SET", "local", "1"), b"OK")


class ReplicaRulesLikeRedis(unittest.TestCase):
    """Rules of the replication link that goblin-core once broke, each run
    on a goblin-core pair and a redis-server pair with the same outcome:
    a writable replica's INCR of a key past its deadline makes a new key
    (goblin-core wrote into the expired record, where the write stayed
    invisible); a replica's link may not touch the primary's keyspace (it
    is exempt from CLIENT PAUSE); a replica without capa psync2 reads a
    bare +CONTINUE."""

    def kinds(self):
        return ["goblin"] + (["redis"] if gbtest.compare_with_redis() else [])

    def pair(self, kind):
        args = ["--repl-diskless-sync-delay", "0"] if kind == "redis" else []
        primary, replica = Server(kind, args=args), Server(kind)
        self.addCleanup(primary.cleanup)
        self.addCleanup(replica.cleanup)
        with Raw(replica) as c:
            self.assertEqual(c.call("REPLICAOF", "127.0.0.1", str(primary.port)), b"OK")
        wait_link_up(self, replica)
        return primary, replica

    def test_writable_replica_writes_over_an_expired_key(self):
        results = []
        for kind in self.kinds():
            primary, replica = self.pair(kind)
            with Raw(primary) as p:
                p.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
                for k in ("f1", "f2"):
                    p.call("SET", k, "5", "PX", "300")
                p.call("ZADD", "fz", "1", "m")
                p.call("PEXPIRE", "fz", "300")
                p.call("SET", "marker", "1")
            self.assertTrue(wait_until(lambda: replica.redis(tcp=True).get("marker") == b"1", TIMEOUT))
            time.sleep(0.6)
            with Raw(replica) as c:
                c.call("CONFIG", "SET", "replica-read-only", "no")
                results.append([c.call(*cmd) for cmd in (
                    ("INCRBYFLOAT", "f1", "1.5"), ("GET", "f1"), ("TTL", "f1"), ("DECR", "f2"), ("GET", "f2"),
                    ("ZINCRBY", "fz", "1", "m"), ("ZSCORE", "fz", "m"))])
        self.assertEqual(results[0], [b"1.5", b"1.5", -1, -1, b"-1", b"1", b"1"])
        self.assertEqual(len(set(map(repr, results))), 1, results)

    def test_a_replica_link_cannot_write(self):
        for kind in self.kinds():
            with Server(kind) as primary, Raw(primary) as link, Raw(primary) as admin:
                link.send_cmd("PSYNC", "?", "-1")
                link.send_cmd("SET", "hacked", "1")
                link.send_cmd("INCR", "hackctr")
                link.send_cmd("GET", "secret")
                time.sleep(0.5)
                self.assertEqual(admin.call("EXISTS", "hacked", "hackctr"), 0, kind)
                self.assertNotIn(b"interact", link.read_raw_available(0.5), kind)  # refused silently

    def test_a_transaction_past_the_replicas_query_buffer_limit(self):
        """The primary's stream is held to no client-query-buffer-limit
        (Redis exempts its master client): goblin-core once dropped the
        link at a transaction bigger than the limit, resumed before its
        MULTI and dropped again, for ever."""
        for kind in self.kinds():
            primary, replica = self.pair(kind)
            with Raw(replica) as c:
                self.assertEqual(c.call("CONFIG", "SET", "client-query-buffer-limit", "1mb"), b"OK")
            with Raw(primary) as p:
                p.call("CONFIG", "SET", "repl-backlog-size", "20mb")
            with Raw(primary) as p:
                p.send(gbtest.encode("MULTI") + b"".join(gbtest.encode("SET", "big%d" % i, "x" * 100000)
                                                         for i in range(30)) + gbtest.encode("EXEC"))
                for _ in range(32):
                    p.read()
                p.call("SET", "after", "1")
            self.assertTrue(wait_until(lambda: replica.redis(tcp=True).get("after") == b"1", TIMEOUT), kind)
            self.assertEqual(replica.redis(tcp=True).dbsize(), 31)

    def test_a_replica_that_stops_reading_or_acking_is_dropped(self):
        """repl-timeout on the primary's side (Redis's replicationCron): a
        replica that stops reading during its full sync, and one that
        reads its stream but never ACKs, are disconnected with Redis's log
        line; goblin-core once kept both for ever, and the first held every
        later full sync and BGSAVE."""
        for kind in self.kinds():
            with Server(kind, args=["--repl-timeout", "2", "--repl-diskless-sync", "yes",
                                    "--repl-diskless-sync-delay", "0"]) as primary:
                with Raw(primary) as admin:
                    admin.call("DEBUG", "POPULATE", "300000", "key", "100")
                    stuck = Raw(primary)
                    self.addCleanup(stuck.close)
                    stuck.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                    stuck.call("REPLCONF", "capa", "eof", "capa", "psync2")
                    stuck.send_cmd("PSYNC", "?", "-1")  # and never reads
                    self.assertTrue(wait_until(
                        lambda: "Disconnecting timedout replica (full sync)" in primary.log(), 20 * SLOW), kind)
                    self.assertTrue(wait_until(lambda: admin.call("BGSAVE") in (b"Background saving started", b"Background saving scheduled"), 10 * SLOW))
                    quiet = Raw(primary)
                    self.addCleanup(quiet.close)
                    quiet.call("REPLCONF", "capa", "eof", "capa", "psync2")
                    quiet.send_cmd("PSYNC", "?", "-1")
                    stop = time.time() + 20 * SLOW
                    while "Disconnecting timedout replica (streaming sync)" not in primary.log() and time.time() < stop:
                        quiet.read_raw_available(0.2)  # reads all it is sent, ACKs nothing
                    self.assertIn("Disconnecting timedout replica (streaming sync)", primary.log(), kind)

    def test_link_down_since_after_moving_to_another_primary(self):
        dead = gbtest.free_port()
        for kind in self.kinds():
            primary, replica = self.pair(kind)
            with Raw(replica) as c:
                self.assertEqual(c.call("REPLICAOF", "127.0.0.1", str(dead)), b"OK")
            time.sleep(1.2)
            self.assertNotEqual(info(replica, "replication")["master_link_down_since_seconds"], "-1", kind)

    def test_rdb_only_and_functions_rdb(self):
        """redis-cli --functions-rdb (REPLCONF rdb-only 1 and rdb-filter-only
        functions) gets an RDB with the function libraries and no keys, and
        an rdb-only replica is closed after its RDB, never streamed to
        (goblin-core refused rdb-filter-only and kept rdb-only replicas)."""
        lib = "#!lua name=mylib\nredis.register_function('f1', function() return 1 end)"
        for kind in self.kinds():
            with Server(kind, args=["--repl-diskless-sync-delay", "0"]) as srv:
                with Raw(srv) as c:
                    self.assertEqual(c.call("FUNCTION", "LOAD", lib), b"mylib")
                    c.call("SET", "secretkey", "v")
                path = os.path.join(srv.dir, "f.rdb")
                out = subprocess.run([gbtest.REDIS_CLI, "-p", str(srv.port), "--functions-rdb", path],
                                     capture_output=True, timeout=30 * SLOW)
                self.assertEqual(out.returncode, 0, (kind, out.stderr))
                rdb = open(path, "rb").read()
                self.assertTrue(rdb.startswith(b"REDIS0010"), kind)
                self.assertIn(b"register_function", rdb)
                self.assertNotIn(b"secretkey", rdb)
                with Raw(srv) as c, Raw(srv) as admin:
                    self.assertEqual(c.call("REPLCONF", "capa", "eof", "rdb-only", "1"), b"OK")
                    c.send_cmd("SYNC")
                    self.assertTrue(wait_until(lambda: b"secretkey" in (c.buf + c.read_raw_available(0.2)), TIMEOUT))
                    c.expect_eof()
                    self.assertEqual(info(srv, "replication")["connected_slaves"], "0", kind)
                    self.assertEqual(admin.call("REPLCONF", "rdb-filter-only", "keys"),
                                     gbtest.Err(b"ERR Unsupported rdb-filter-only option: keys"))

    def test_bare_continue_without_psync2(self):
        for kind in self.kinds():
            primary, replica = self.pair(kind)
            r = info(primary, "replication")
            for capa, want in ((("capa", "eof"), b"+CONTINUE\r\n"),
                               (("capa", "eof", "capa", "psync2"),
                                b"+CONTINUE " + r["master_replid"].encode() + b"\r\n")):
                with Raw(primary) as c:
                    self.assertEqual(c.call("REPLCONF", *capa), b"OK")
                    c.send_cmd("PSYNC", r["master_replid"], str(int(r["master_repl_offset"]) + 1))
                    got = c.read_raw_available(1.0)
                    self.assertTrue(got.startswith(want), (kind, capa, got[:60]))


# ---- a hostile primary -------------------------------------------------------------

def read_command(f):
    """One RESP array command from a file-like socket reader, or None."""
    line = f.readline()
    if not line:
        return None
    if not line.startswith(b"*"):
        return [line.strip()]
    args = []
    for _ in range(int(line[1:])):
        n = int(f.readline()[1:])
        args.append(f.read(n + 2)[:-2])
    return args


class FakePrimary:
    """Answers the handshake, then sends `payload` in reply to PSYNC (and,
    with hold, keeps the connection open for hold seconds)."""

    def __init__(self, payload, hold=0.0):
        self.payload = payload
        self.hold = hold
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.seen = []
        self.stop = False
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        self.sock.settimeout(0.2)
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self.connections += 1
            try:
                self.handle(conn)
            except OSError:
                pass
            finally:
                conn.close()

    def handle(self, conn):
        conn.settimeout(5)
        f = conn.makefile("rb")
        while True:
            cmd = read_command(f)
            if cmd is None:
                return
            self.seen.append(cmd)
            name = cmd[0].upper()
            if name == b"PING":
                conn.sendall(b"+PONG\r\n")
            elif name in (b"REPLCONF", b"AUTH"):
                conn.sendall(b"+OK\r\n")
            elif name == b"PSYNC":
                conn.sendall(self.payload)
                deadline = time.time() + self.hold
                while time.time() < deadline and not self.stop:
                    time.sleep(0.05)
                return

    def close(self):
        self.stop = True
        self.sock.close()
        self.thread.join(2)


REPLID = b"a" * 40


def valid_rdb():
    """A small real RDB file written by redis-server 7.0."""
    with Server("redis") as r:
        r.redis(tcp=True).set("fromrdb", "1")
        r.redis(tcp=True).save()
        with open(os.path.join(r.dir, "dump.rdb"), "rb") as f:
            return f.read()


class HostilePrimary(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        gbtest.require_redis()
        cls.rdb = valid_rdb()
        cls.goblin = Server("goblin", args=["--repl-timeout", "2"])

    @classmethod
    def tearDownClass(cls):
        cls.goblin.cleanup()

    def survive(self, payload, log_text, hold=0.0, attempts=2):
        """goblin-core follows a fake primary sending payload: it keeps
        serving, logs log_text, retries, leaves no temporary file."""
        g = self.goblin
        fake = FakePrimary(payload, hold)
        try:
            with Raw(g) as c:
                c.call("SET", "mark", "1") if info(g, "replication")["role"] == "master" else None
                first = self.own_history(g)
                self.assertEqual(c.call("REPLICAOF", "127.0.0.1", str(fake.port)), b"OK")
                ok = wait_until(lambda: fake.connections >= attempts, TIMEOUT + hold * attempts)
                self.assertTrue(ok, "no retry after %r:\n%s" % (payload[:60], g.log()[-2000:]))
                self.assertEqual(c.call("PING"), b"PONG")
                self.assertIn(log_text, g.log())
                psync = [cmd for cmd in fake.seen if cmd[0].upper() == b"PSYNC"]
                self.assertTrue(psync and psync[0] == first, fake.seen)
                self.assertNotEqual(info(g, "replication")["master_link_status"], "up")
                c.call("REPLICAOF", "NO", "ONE")
        finally:
            fake.close()
        self.assertTrue(g.alive())
        self.assertTrue(wait_until(lambda: not glob.glob(os.path.join(g.dir, "temp-*.rdb")), 5))

    @staticmethod
    def own_history(g):
        """The PSYNC a primary turned replica sends first, as redis-server
        does (replicationCacheMasterUsingMyself): its own replication ID
        and offset + 1, so an old primary rejoining after a failover
        continues partially."""
        repl = info(g, "replication")
        return [b"PSYNC", repl["master_replid"].encode(), str(int(repl["master_repl_offset"]) + 1).encode()]

    def test_handshake_order(self):
        fake = FakePrimary(b"-ERR go away\r\n")
        g = self.goblin
        first = self.own_history(g)
        try:
            with Raw(g) as c:
                c.call("CONFIG", "SET", "masterauth", "secret")
                c.call("CONFIG", "SET", "masteruser", "repl")
                c.call("CONFIG", "SET", "replica-announce-ip", "10.1.2.3")
                c.call("REPLICAOF", "127.0.0.1", str(fake.port))
                self.assertTrue(wait_until(lambda: any(cmd[0] == b"PSYNC" for cmd in fake.seen), TIMEOUT))
                c.call("REPLICAOF", "NO", "ONE")
                for name in ("masterauth", "masteruser", "replica-announce-ip"):
                    c.call("CONFIG", "SET", name, "")
        finally:
            fake.close()
        self.assertEqual(fake.seen[:6], [
            [b"PING"], [b"AUTH", b"repl", b"secret"], [b"REPLCONF", b"listening-port", str(g.port).encode()],
            [b"REPLCONF", b"ip-address", b"10.1.2.3"], [b"REPLCONF", b"capa", b"eof", b"capa", b"psync2"], first])

    def test_a_ping_answered_with_garbage_ends_the_handshake(self):
        """Only +PONG or an authentication refusal lets the handshake go on,
        as in Redis's syncWithMaster: a peer that is no Redis primary (an
        HTTP proxy answered one) is told nothing, masterauth least of all."""
        class GarblingPrimary(FakePrimary):
            def handle(self, conn):
                f = conn.makefile("rb")
                conn.settimeout(5)
                while True:
                    cmd = read_command(f)
                    if cmd is None:
                        return
                    self.seen.append(cmd)
                    conn.sendall(b"\x00\x01 garbage\r\n" if cmd[0].upper() == b"PING" else b"+OK\r\n")

        fake = GarblingPrimary(b"")
        g = self.goblin
        try:
            with Raw(g) as c:
                c.call("CONFIG", "SET", "masterauth", "secret")
                c.call("REPLICAOF", "127.0.0.1", str(fake.port))
                self.assertTrue(wait_until(lambda: fake.connections >= 2, TIMEOUT))
                c.call("REPLICAOF", "NO", "ONE")
                c.call("CONFIG", "SET", "masterauth", "")
        finally:
            fake.close()
        self.assertEqual({cmd[0] for cmd in fake.seen}, {b"PING"})
        self.assertIn("Error reply to PING from master", g.log())

    def test_garbage_instead_of_fullresync(self):
        self.survive(b"HELLO I am not a primary\r\n", "Unexpected reply to PSYNC from master")

    def test_truncated_payload(self):
        self.survive(b"+FULLRESYNC " + REPLID + b" 0\r\n$%d\r\n" % len(self.rdb) + self.rdb[:20],
                     "I/O error trying to sync with MASTER: connection lost")

    def test_corrupt_rdb(self):
        bad = b"REDIS0009" + b"\xfe\x00\x00\x03key\xff\xff\xff\xff\xff\xff\xff\xff" + b"\x01" * 30
        self.survive(b"+FULLRESYNC " + REPLID + b" 0\r\n$%d\r\n" % len(bad) + bad,
                     "Failed trying to load the MASTER synchronization DB from disk")

    def test_payload_longer_than_announced(self):
        # what follows the payload is the command stream: garbage there is a protocol error
        self.survive(b"+FULLRESYNC " + REPLID + b" 0\r\n$%d\r\n" % len(self.rdb) + self.rdb + b"*x\r\nnonsense",
                     "Protocol error")

    def test_reply_line_without_end(self):
        self.survive(b"+" + b"A" * 5000, "a reply line over")

    def test_blocking_command_in_the_stream(self):
        """A primary never sends BLPOP; one that does must not park the
        master client: the commands after it still apply."""
        def cmd(*args):
            return gbtest.encode(*args)
        stream = cmd("BLPOP", "q", "0") + cmd("SET", "after-blpop", "v") + cmd("BLMOVE", "a", "b", "LEFT", "LEFT", "0")
        stream += cmd("RPUSH", "after-blmove", "x")
        fake = FakePrimary(b"+FULLRESYNC " + REPLID + b" 0\r\n$%d\r\n" % len(self.rdb) + self.rdb + stream, hold=30)
        g = self.goblin
        try:
            with Raw(g) as c:
                c.call("REPLICAOF", "127.0.0.1", str(fake.port))
                self.assertTrue(wait_until(lambda: c.call("EXISTS", "after-blmove") == 1, TIMEOUT), g.log()[-2000:])
                self.assertEqual(c.call("GET", "after-blpop"), b"v")
                self.assertEqual(c.call("GET", "fromrdb"), b"1")
                self.assertEqual(c.call("INFO", "clients").count(b"blocked_clients:0"), 1)
                self.assertEqual(c.call("ROLE")[3], b"connected")
                c.call("REPLICAOF", "NO", "ONE")
                c.call("FLUSHALL")
        finally:
            fake.close()

    def test_huge_length(self):
        before = self.goblin.used_memory()
        payload = b"+FULLRESYNC " + REPLID + b" 0\r\n$999999999999999\r\n" + b"\x00" * 1000
        self.survive(payload, "receiving 999999999999999 bytes", hold=1.0)
        self.assertLess(self.goblin.used_memory() - before, 16 << 20)

    def test_bad_eof_mark_and_error_payload(self):
        self.survive(b"+FULLRESYNC " + REPLID + b" 0\r\n\n\n-ERR out of disk\r\n",
                     "MASTER aborted replication with an error: ERR out of disk")
        self.survive(b"+FULLRESYNC " + REPLID + b" 0\r\n$EOF:short\r\n",
                     "Bad protocol from MASTER, the payload length is not a number")

    def test_stale_data_refused_like_redis(self):
        """replica-serve-stale-data no with the link down: MASTERDOWN, as a
        redis-server replica of the same unreachable primary replies."""
        dead = gbtest.free_port()
        with Server("goblin", args=["--replicaof", "127.0.0.1 %d" % dead, "--replica-serve-stale-data", "no"]) as g, \
                Server("redis", args=["--replicaof", "127.0.0.1", str(dead),
                                      "--replica-serve-stale-data", "no"]) as rr:
            with Raw(g) as a, Raw(rr) as b:
                for cmd in [("GET", "k"), ("SET", "k", "v"), ("PING",), ("DBSIZE",)]:
                    self.assertEqual(a.call_raw(*cmd), b.call_raw(*cmd), cmd)


class PrePsyncPrimary(FakePrimary):
    """A primary from before PSYNC (Redis 2.6): PSYNC and REPLCONF are
    unknown commands; SYNC gets the RDB as a bulk string, then the stream.
    It keeps the link open for `hold` seconds, recording what the replica
    sends meanwhile (`after_sync`)."""

    STREAM = gbtest.encode("SET", "from-stream", "1") + gbtest.encode("INCR", "counter")

    def __init__(self, rdb, hold):
        self.after_sync = []
        super().__init__(b"$%d\r\n%s" % (len(rdb), rdb), hold)

    def handle(self, conn):
        conn.settimeout(0.2)
        f = conn.makefile("rb")
        synced_at = None
        while synced_at is None or time.time() < synced_at + self.hold:
            try:
                cmd = read_command(f)
            except (socket.timeout, OSError):
                if self.stop:
                    return
                continue
            if cmd is None:
                return
            if synced_at is not None:
                self.after_sync.append(cmd)
                continue
            self.seen.append(cmd)
            name = cmd[0].upper()
            if name == b"PING":
                conn.sendall(b"+PONG\r\n")
            elif name == b"SYNC":
                conn.sendall(self.payload + self.STREAM)
                synced_at = time.time()
            else:
                conn.sendall(b"-ERR unknown command '%s'\r\n" % cmd[0])


class PrePsyncFallback(unittest.TestCase):
    """A primary that answers PSYNC with -ERR is asked for SYNC, as Redis
    7.0's syncWithMaster does ("Retrying with SYNC..."): the replica loads
    the payload, applies the stream after it and sends no REPLCONF ACK
    (such a primary has no REPLCONF), on goblin-core as on redis-server."""

    def replicate(self, kind, rdb):
        fake = PrePsyncPrimary(rdb, hold=3.0)
        srv = Server(kind)
        try:
            with Raw(srv) as c:
                self.assertEqual(c.call("REPLICAOF", "127.0.0.1", str(fake.port)), b"OK")
                self.assertTrue(wait_until(lambda: c.call("GET", "counter") == b"1", TIMEOUT), srv.log()[-2000:])
                got = [c.call("GET", "fromrdb"), c.call("GET", "from-stream")]
                role = c.call("ROLE")[0]
            time.sleep(2.0)  # a replica ACKs once a second: none may come
            names = [cmd[0].upper() for cmd in fake.seen]
            self.assertIn(b"PSYNC", names)
            self.assertEqual(names[-1], b"SYNC")
            self.assertIn("Retrying with SYNC...", srv.log())
            self.assertIn("Master does not support PSYNC or is in error state (reply: -ERR unknown command "
                          "'PSYNC')", srv.log())
            return got, role, fake.after_sync
        finally:
            srv.cleanup()
            fake.close()

    def test_sync_after_psync_refused(self):
        rdb = valid_rdb()
        goblin = self.replicate("goblin", rdb)
        self.assertEqual(goblin, ([b"1", b"1"], b"slave", []))
        if gbtest.compare_with_redis():
            self.assertEqual(goblin, self.replicate("redis", rdb))


if __name__ == "__main__":
    gbtest.run_tests()
