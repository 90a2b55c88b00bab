"""Persistence as a user meets it: SAVE, BGSAVE [SCHEDULE], LASTSAVE, the
save policy, SHUTDOWN [SAVE|NOSAVE], SIGTERM, INFO persistence's fields,
MISCONF, DEBUG RELOAD / LOADAOF, CONFIG SET appendonly, BGREWRITEAOF, the
append-only log across restarts, start-up's progress line and its refusal of
damaged files (the message names the file, the offset and the check), and
goblin-check-aof. Where Redis defines a reply, it is compared with
redis-server's.
"""

import glob
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import gbtest
from gbtest import Raw, Server, SLOW, wait_until, parse_info, Err

CHECK_AOF = os.path.join(os.path.dirname(gbtest.GOBLIN), "goblin-check-aof")


def info(c, section="persistence"):
    return parse_info(c.call("INFO", section))


def fill(c, n=300):
    c.send(b"".join(gbtest.encode("SET", "k:%d" % i, "v%d" % i) for i in range(n)))
    for _ in range(n):
        c.read()
    c.call("RPUSH", "list", *[str(i) for i in range(100)])
    c.call("HSET", "hash", "a", "1", "b", "2")
    c.call("SADD", "set", "1", "2", "3")
    c.call("ZADD", "zset", "1.5", "m")
    c.call("SET", "ttl", "v", "EX", "1000")


class Scratch(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gbit-persist-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def server(self, *args, **kw):
        return Server("goblin", args=list(args), dir=self.dir, **kw)

    def refused_start(self, *args):
        """Starts goblin-core on self.dir expecting it to refuse to start:
        asserts a failing exit status and returns its log."""
        srv = Server("goblin", args=list(args), dir=self.dir, wait=False)
        rc = srv.proc.wait(10 * SLOW)
        log = srv.log()
        srv.cleanup()
        self.assertNotEqual(rc, 0)
        return log


class Snapshots(Scratch):
    def test_save_and_restart(self):
        with self.server("--save", "") as srv, Raw(srv) as c:
            fill(c)
            before = c.call("LASTSAVE")
            time.sleep(1.1)
            self.assertEqual(c.call("SAVE"), b"OK")
            self.assertGreater(c.call("LASTSAVE"), before)
            self.assertEqual(info(c)["rdb_changes_since_last_save"], "0")
            self.assertTrue(os.path.exists(os.path.join(self.dir, "dump.gdb")))
            digest = c.call("DEBUG", "DIGEST")
        with self.server("--save", "") as srv, Raw(srv) as c:
            self.assertEqual(c.call("DEBUG", "DIGEST"), digest)  # every value, as saved
            self.assertEqual(c.call("DBSIZE"), 305)
            self.assertEqual(c.call("GET", "k:7"), b"v7")
            self.assertEqual(c.call("LRANGE", "list", "0", "2"), [b"0", b"1", b"2"])
            self.assertGreater(c.call("TTL", "ttl"), 990)
            self.assertIn("DB loaded from disk: 305 keys", srv.log())

    def test_bgsave_replies_and_info(self):
        with self.server("--save", "") as srv, Raw(srv) as c:
            fill(c, 20000)
            self.assertEqual(c.call("BGSAVE"), b"Background saving started")
            # while it runs, a second one is refused or scheduled, as in Redis
            second = c.call("BGSAVE")
            if second != b"Background saving started":
                self.assertEqual(second, Err(b"ERR Background save already in progress"))
            self.assertTrue(wait_until(lambda: info(c)["rdb_bgsave_in_progress"] == "0", 10 * SLOW))
            i = info(c)
            self.assertEqual(i["rdb_last_bgsave_status"], "ok")
            for field in ("rdb_changes_since_last_save", "rdb_last_save_time", "rdb_last_bgsave_time_sec",
                          "rdb_current_bgsave_time_sec", "aof_enabled", "aof_rewrite_in_progress",
                          "aof_last_bgrewrite_status", "aof_last_write_status", "loading"):
                self.assertIn(field, i)
            self.assertEqual(c.call("BGSAVE", "SCHEDULE"), b"Background saving started")
            # SCHEDULE waits for a rewrite, not for another save (Redis 7.0)
            second = c.call("BGSAVE", "SCHEDULE")
            if second != b"Background saving started":
                self.assertEqual(second, Err(b"ERR Background save already in progress"))
            self.assertEqual(c.call("BGSAVE", "NOW"), Err(b"ERR syntax error"))

    def test_a_transaction_is_never_cut_by_a_save(self):
        """BGSAVE and BGREWRITEAOF inside MULTI are scheduled for after
        EXEC (Redis's in_exec), so the snapshot or the log's new base holds
        the whole transaction or none of it; SAVE is refused there. On
        goblin-core a BGREWRITEAOF in EXEC once left x at 3 after a reload
        (the rest of the transaction both in the base and in the new log),
        and a BGSAVE's dump held half the transaction."""
        for kind in ["goblin"] + (["redis"] if gbtest.compare_with_redis() else []):
            with self.subTest(server=kind):
                d = tempfile.mkdtemp(prefix="gbit-tx-")
                self.addCleanup(shutil.rmtree, d, True)
                with Server(kind, dir=d, args=["--save", "", "--appendonly", "yes"]) as srv, Raw(srv) as c:
                    self.assertTrue(wait_until(lambda: info(c)["aof_rewrite_in_progress"] == "0", 10 * SLOW))
                    c.call("SET", "x", "0")
                    c.send(gbtest.encode("MULTI") + gbtest.encode("INCR", "x") + gbtest.encode("BGREWRITEAOF")
                           + gbtest.encode("INCR", "x") + gbtest.encode("EXEC"))
                    replies = [c.read()[0] for _ in range(5)]
                    self.assertEqual(replies[4], [1, b"Background append only file rewriting scheduled", 2], kind)
                    self.assertTrue(wait_until(lambda: info(c)["aof_rewrite_in_progress"] == "0" and
                                               info(c)["aof_rewrite_scheduled"] == "0", 10 * SLOW))
                    c.send(gbtest.encode("MULTI") + gbtest.encode("SET", "a", "1") + gbtest.encode("BGSAVE")
                           + gbtest.encode("SET", "b", "1") + gbtest.encode("EXEC"))
                    replies = [c.read()[0] for _ in range(5)]
                    self.assertEqual(replies[4], [b"OK", b"Background saving scheduled", b"OK"], kind)
                    self.assertTrue(wait_until(lambda: info(c)["rdb_bgsave_in_progress"] == "0" and
                                               info(c)["rdb_changes_since_last_save"] == "0", 10 * SLOW))
                    self.assertEqual(c.call("DEBUG", "LOADAOF"), b"OK")
                    self.assertEqual(c.call("GET", "x"), b"2", kind)
                    c.send(gbtest.encode("MULTI") + gbtest.encode("SAVE") + gbtest.encode("EXEC"))
                    self.assertEqual([c.read()[0] for _ in range(3)][1:],
                                     [Err(b"ERR Command not allowed inside a transaction"),
                                      Err(b"EXECABORT Transaction discarded because of previous errors.")], kind)
                with Server(kind, dir=d, args=["--save", "", "--appendonly", "no"]) as srv, Raw(srv) as c:
                    self.assertEqual(sorted(c.call("KEYS", "*")), [b"a", b"b", b"x"], kind)

    def test_save_policy_fires(self):
        with self.server("--save", "1 5") as srv, Raw(srv) as c:
            fill(c, 10)
            self.assertTrue(wait_until(lambda: info(c)["rdb_changes_since_last_save"] == "0", 10 * SLOW),
                            "the save policy did not run")
            self.assertIn("changes in 1 seconds. Saving...", srv.log())
            self.assertEqual(c.call("CONFIG", "GET", "save"), [b"save", b"1 5"])

    def test_shutdown_variants(self):
        with self.server("--save", "") as srv, Raw(srv) as c:
            fill(c, 5)
            try:
                c.call("SHUTDOWN", "NOSAVE")  # Redis closes without a reply
            except (OSError, EOFError):
                pass
            srv.proc.wait(5 * SLOW)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "dump.gdb")))
        with self.server("--save", "") as srv, Raw(srv) as c:
            fill(c, 5)
            try:
                c.call("SHUTDOWN", "SAVE")
            except (OSError, EOFError):
                pass
            srv.proc.wait(5 * SLOW)
        self.assertTrue(os.path.exists(os.path.join(self.dir, "dump.gdb")))

    def test_sigterm_saves_with_a_policy(self):
        with self.server() as srv, Raw(srv) as c:  # Redis's default policy
            fill(c, 50)
            srv.proc.send_signal(signal.SIGTERM)
            self.assertEqual(srv.proc.wait(10 * SLOW), 0)
            self.assertIn("Saving the final snapshot before exiting.", srv.log())
        with self.server("--save", "") as srv, Raw(srv) as c:
            self.assertEqual(c.call("DBSIZE"), 55)

    def test_misconf_after_a_failed_bgsave(self):
        with self.server("--save", "3600 1") as srv, Raw(srv) as c:
            c.call("SET", "a", "1")
            sub = os.path.join(self.dir, "gone")
            os.mkdir(sub)
            self.assertEqual(c.call("CONFIG", "SET", "dir", sub), b"OK")
            os.rmdir(sub)  # the save cannot create its file any more
            reply = c.call("BGSAVE")
            self.assertTrue(reply == Err(b"ERR") or reply == b"Background saving started", reply)
            self.assertTrue(wait_until(lambda: info(c)["rdb_last_bgsave_status"] == "err", 5 * SLOW))
            err = c.call("SET", "b", "2")
            self.assertTrue(isinstance(err, Err) and err.startswith(b"MISCONF Redis is configured to save RDB"), err)
            self.assertTrue(c.call("PING").startswith(b"MISCONF"))
            self.assertEqual(c.call("GET", "a"), b"1")  # reads go on
            self.assertEqual(c.call("CONFIG", "SET", "stop-writes-on-bgsave-error", "no"), b"OK")
            self.assertEqual(c.call("SET", "b", "2"), b"OK")

    def test_flushall_saves_the_empty_dataset(self):
        """With save points configured, FLUSHALL saves the empty dataset at
        once (Redis 7.0): a server killed right after it does not bring the
        flushed keys back from the previous snapshot."""
        with self.server() as srv, Raw(srv) as c:  # Redis's default save points
            fill(c)
            self.assertEqual(c.call("SAVE"), b"OK")
            c.call("SET", "after-the-save", "1")
            self.assertEqual(c.call("FLUSHALL"), b"OK")
            self.assertEqual(info(c)["rdb_changes_since_last_save"], "0")  # as Redis 7.0.15 reports
            self.assertIn("DB saved on disk: 0 keys", srv.log())
            srv.kill()
        with self.server("--save", "") as srv, Raw(srv) as c:
            self.assertEqual(c.call("DBSIZE"), 0)
        with self.server("--save", "") as srv, Raw(srv) as c:  # no save points: nothing is saved
            c.call("SET", "a", "1")
            self.assertEqual(c.call("SAVE"), b"OK")
            c.call("SET", "b", "2")
            mtime = os.stat(os.path.join(self.dir, "dump.gdb")).st_mtime_ns
            self.assertEqual(c.call("FLUSHALL"), b"OK")
            self.assertEqual(os.stat(os.path.join(self.dir, "dump.gdb")).st_mtime_ns, mtime)
            # SET b, then the two keys FLUSHALL removed (Redis counts the keys; an empty flush adds nothing)
            self.assertEqual(info(c)["rdb_changes_since_last_save"], "3")
            self.assertEqual(c.call("FLUSHALL"), b"OK")
            self.assertEqual(c.call("FLUSHDB"), b"OK")
            self.assertEqual(info(c)["rdb_changes_since_last_save"], "3")

    def test_flushall_abandons_a_bgsave(self):
        """FLUSHALL during a BGSAVE ends the save (Redis kills its child; its
        test "FLUSHALL aborts bgsave"), instead of first writing out every key
        the save had not reached: the save is no longer in progress when the
        reply arrives, it counts as neither a save nor an error (writes go on,
        the changes are still unsaved), and no temporary file is left."""
        with self.server("--save", "") as srv, Raw(srv) as c:
            for i in range(64):  # 256 MB that zstd cannot shrink: a save that takes a while
                c.call("SET", "big:%d" % i, os.urandom(4 << 20))
            self.assertEqual(c.call("BGSAVE"), b"Background saving started")
            self.assertEqual(info(c)["rdb_bgsave_in_progress"], "1")
            self.assertEqual(c.call("FLUSHALL"), b"OK")
            i = info(c)
            self.assertEqual(i["rdb_bgsave_in_progress"], "0")
            self.assertEqual(i["rdb_last_bgsave_status"], "ok")
            self.assertGreaterEqual(int(i["rdb_changes_since_last_save"]), 64)
            self.assertEqual(c.call("SET", "x", "xx"), b"OK")
            self.assertIn("Background saving abandoned: FLUSHALL", srv.log())
            self.assertEqual([f for f in os.listdir(self.dir) if ".tmp-" in f], [])
            self.assertFalse(os.path.exists(os.path.join(self.dir, "dump.gdb")))

    def test_config_checks(self):
        with self.server("--save", "") as srv, Raw(srv) as c:
            self.assertEqual(c.call("CONFIG", "SET", "dbfilename", "a/b"), Err(
                b"ERR CONFIG SET failed (possibly related to argument 'dbfilename') - dbfilename can't be a path, "
                b"just a filename"))
            self.assertEqual(c.call("CONFIG", "SET", "save", "1 2 3"), Err(
                b"ERR CONFIG SET failed (possibly related to argument 'save') - Invalid save parameters"))
            r = c.call("CONFIG", "SET", "dir", os.path.join(self.dir, "missing"))
            self.assertTrue(r.startswith(b"ERR CONFIG SET failed (possibly related to argument 'dir') - "), r)

    def test_debug_reload(self):
        with self.server("--save", "") as srv, Raw(srv) as c:
            fill(c)
            keys, digest = sorted(c.call("KEYS", "*")), c.call("DEBUG", "DIGEST")
            self.assertEqual(c.call("DEBUG", "RELOAD"), b"OK")
            self.assertEqual(sorted(c.call("KEYS", "*")), keys)
            self.assertEqual(c.call("DEBUG", "DIGEST"), digest)
            self.assertEqual(c.call("HGETALL", "hash"), [b"a", b"1", b"b", b"2"])
            self.assertEqual(c.call("DEBUG", "SET-ACTIVE-EXPIRE", "0"), b"OK")
            self.assertEqual(c.call("DEBUG", "SLEEP", "0.1"), b"OK")
            self.assertEqual(c.call("DEBUG", "NOPE"),
                             b"ERR unknown subcommand or wrong number of arguments for 'NOPE'. Try DEBUG HELP.")

    def test_damaged_snapshot_stops_startup(self):
        with self.server("--save", "") as srv, Raw(srv) as c:
            fill(c, 1000)
            self.assertEqual(c.call("SAVE"), b"OK")
        path = os.path.join(self.dir, "dump.gdb")
        with open(path, "r+b") as f:
            f.seek(200)
            b = f.read(1)
            f.seek(200)
            f.write(bytes([b[0] ^ 0x40]))
        log = self.refused_start("--save", "")
        self.assertIn("dump.gdb", log)
        self.assertIn("at offset", log)
        self.assertIn("checksum", log)
        # cut short: refused too
        with open(path, "r+b") as f:
            f.truncate(100)
        log = self.refused_start("--save", "")
        self.assertIn("truncated", log)

    def test_progress_line_for_a_large_load(self):
        with self.server("--save", "") as srv, Raw(srv) as c:
            payload = "x" * 1000
            for base in range(0, 100000, 10000):
                c.send(b"".join(gbtest.encode("SET", "big:%d" % i, payload) for i in range(base, base + 10000)))
                for _ in range(10000):
                    c.read()
            self.assertEqual(c.call("CONFIG", "SET", "rdbcompression", "no"), b"OK")
            self.assertEqual(c.call("SAVE"), b"OK")
        with self.server("--save", "") as srv, Raw(srv) as c:
            self.assertEqual(c.call("DBSIZE"), 100000)
            self.assertRegex(srv.log(), r"Loading: \d+ keys, \d+ of \d+ MB \(\d+%\), \d+ MB/s")


    def test_resetstat_keeps_the_changes_to_save(self):
        """CONFIG RESETSTAT leaves the count of unsaved changes alone, as
        Redis does: it zeroed it, so the save points never saved the writes
        before it (and after a save, rdb_changes_since_last_save read
        18446744073709551615)."""
        with self.server("--save", "") as srv, Raw(srv) as c:
            c.call("SET", "a", "1")
            self.assertEqual(c.call("SAVE"), b"OK")
            c.call("SET", "b", "1")
            c.call("SET", "c", "1")
            self.assertEqual(c.call("CONFIG", "RESETSTAT"), b"OK")
            self.assertEqual(info(c)["rdb_changes_since_last_save"], "2")
            self.assertEqual(c.call("CONFIG", "SET", "save", "1 1"), b"OK")
            self.assertTrue(wait_until(lambda: info(c)["rdb_changes_since_last_save"] == "0", 5 * SLOW))
        with self.server("--save", "") as srv, Raw(srv) as c:
            self.assertEqual(c.call("DBSIZE"), 3)


    def test_rdb_saves_and_resetstat_as_redis(self):
        """rdb_saves counts SAVE and BGSAVE (not DEBUG RELOAD's save), and
        CONFIG RESETSTAT zeroes it and aof_rewrites (aof_delayed_fsync and
        the sync_* counters too), as
        Redis's resetServerStats (goblin-core kept them, and counted DEBUG
        RELOAD)."""
        got = {}
        for kind in ("goblin", "redis"):
            with Server(kind, args=["--save", ""], dir=tempfile.mkdtemp(dir=self.dir)) as srv, Raw(srv) as c:
                c.call("SET", "k", "v")
                seen = [c.call("SAVE"), c.call("DEBUG", "RELOAD")]
                seen.append(info(c)["rdb_saves"])
                c.call("BGREWRITEAOF")
                self.assertTrue(wait_until(lambda: info(c)["aof_rewrite_in_progress"] == "0" and
                                           info(c)["aof_rewrite_scheduled"] == "0", 10 * SLOW))
                seen.append(info(c)["aof_rewrites"])
                c.call("CONFIG", "RESETSTAT")
                i = info(c)
                seen += [i["rdb_saves"], i["aof_rewrites"]]
                got[kind] = seen
        self.assertEqual(got["goblin"], [b"OK", b"OK", "1", "1", "0", "0"])
        self.assertEqual(got["goblin"], got["redis"])


class AppendOnly(Scratch):
    def test_a_lower_proto_max_bulk_len_keeps_what_the_log_holds(self):
        """The log replays past proto-max-bulk-len, as Redis's does (its
        mustObeyClient): started again with a lower limit, APPEND and
        SETRANGE results and SETBIT offsets beyond it were refused on
        replay, and the keys came back short or missing, silently."""
        with self.server("--save", "", "--appendonly", "yes") as srv, Raw(srv) as c:
            for _ in range(3):
                c.call("APPEND", "big", "x" * 600000)
            c.call("SETRANGE", "range", "1500000", "end")
            c.call("SETBIT", "bits", "12000000", "1")
        with self.server("--save", "", "--appendonly", "yes", "--proto-max-bulk-len", "1mb") as srv, \
                Raw(srv) as c:
            self.assertEqual(c.call("STRLEN", "big"), 1800000)
            self.assertEqual(c.call("GETRANGE", "range", "1500000", "-1"), b"end")
            self.assertEqual((c.call("STRLEN", "bits"), c.call("BITCOUNT", "bits")), (1500001, 1))
            self.assertEqual(c.call("APPEND", "big", "y"),
                             Err(b"ERR string exceeds maximum allowed size (proto-max-bulk-len)"))

    def test_save_and_flushall_beside_a_rewrite(self):
        """SAVE and FLUSHALL's save while a log rewrite runs: Redis saves in
        the foreground beside its rewrite child, and FLUSHALL with save
        points saves the emptied dataset at once. goblin-core refused the
        SAVE, and left the last dump in place after the FLUSHALL, so a
        restart without the log brought the flushed keys back."""
        with self.server("--save", "3600 1", "--appendonly", "yes", "--auto-aof-rewrite-percentage", "0") as srv, \
                Raw(srv) as c:
            self.assertTrue(wait_until(lambda: info(c)["aof_rewrite_in_progress"] == "0", 10 * SLOW))
            for i in range(16):  # 64 MB that zstd cannot shrink: a rewrite that takes many steps
                c.call("SET", "big:%d" % i, os.urandom(4 << 20))
            self.assertEqual(c.call("SAVE"), b"OK")
            c.send(gbtest.encode("BGREWRITEAOF") + gbtest.encode("INFO", "persistence") +
                   gbtest.encode("FLUSHALL") + gbtest.encode("SET", "after", "1") + gbtest.encode("SAVE") +
                   gbtest.encode("INFO", "persistence"))
            self.assertEqual(c.read()[0], b"Background append only file rewriting started")
            self.assertEqual(parse_info(c.read()[0])["aof_rewrite_in_progress"], "1")
            self.assertEqual(c.read()[0], b"OK")
            self.assertEqual(c.read()[0], b"OK")
            self.assertEqual(c.read()[0], b"OK", "SAVE beside the rewrite")
            self.assertEqual(parse_info(c.read()[0])["rdb_changes_since_last_save"], "0")
            self.assertIn("DB saved on disk: 0 keys", srv.log())
            self.assertIn("DB saved on disk: 1 keys", srv.log())
            self.assertTrue(wait_until(lambda: info(c)["aof_rewrite_in_progress"] == "0", 20 * SLOW))
            self.assertEqual(info(c)["aof_last_bgrewrite_status"], "ok")
            srv.proc.kill()
            srv.proc.wait()
        with self.server("--save", "", "--appendonly", "yes") as srv, Raw(srv) as c:
            self.assertEqual(c.call("KEYS", "*"), [b"after"], "the log")
        shutil.rmtree(os.path.join(self.dir, "appendonlydir"))
        with self.server("--save", "") as srv, Raw(srv) as c:
            self.assertEqual(c.call("KEYS", "*"), [b"after"], "the dump")

    def test_a_failed_first_base_is_tried_again(self):
        """CONFIG SET appendonly yes whose first base cannot be written (a
        directory stands where it goes): the rewrite is tried again at once
        and the log works, as Redis reschedules a log still waiting for its
        base (goblin-core gave up, and a restart came up empty); three
        failures in a row make it wait a minute, then longer."""
        os.makedirs(os.path.join(self.dir, "appendonlydir", "appendonly.aof.2.base.gdb"))
        with self.server("--save", "") as srv, Raw(srv) as c:
            c.call("SET", "before", "1")
            self.assertEqual(c.call("CONFIG", "SET", "appendonly", "yes"), b"OK")
            c.call("SET", "after", "1")
            self.assertTrue(wait_until(lambda: info(c)["aof_last_bgrewrite_status"] == "ok" and
                                       info(c)["aof_rewrite_in_progress"] == "0" and
                                       info(c)["aof_rewrite_scheduled"] == "0", 10 * SLOW), info(c))
            self.assertIn("Background AOF rewrite failed", srv.log())
            self.assertEqual(info(c)["aof_rewrites_consecutive_failures"], "0")
            c.call("SET", "later", "1")
        with self.server("--save", "", "--appendonly", "yes") as srv, Raw(srv) as c:
            self.assertEqual(sorted(c.call("KEYS", "*")), [b"after", b"before", b"later"])

    def test_a_blocking_command_in_the_log_does_not_block(self):
        """A BLPOP found in a log (written by hand or another tool: neither
        server logs one) answers at once on replay, as Redis's replay
        client never blocks; goblin-core's replay client once blocked, and
        the RPUSH after it fed the waiter: k held [b], where Redis loads
        [a, b]."""
        with self.server("--save", "", "--appendonly", "yes") as srv, Raw(srv) as c:
            self.assertTrue(wait_until(lambda: info(c)["aof_rewrite_in_progress"] == "0", 10 * SLOW))
            c.call("SET", "x", "1")
        logdir = os.path.join(self.dir, "appendonlydir")
        incr = [f for f in os.listdir(logdir) if f.endswith(".incr.aof")][0]
        with open(os.path.join(logdir, incr), "ab") as f:
            f.write(gbtest.encode("BLPOP", "k", "0") + gbtest.encode("RPUSH", "k", "a", "b"))
        with self.server("--save", "", "--appendonly", "yes") as srv, Raw(srv) as c:
            self.assertEqual(c.call("LRANGE", "k", "0", "-1"), [b"a", b"b"])

    def test_start_up_removes_only_its_own_leftovers(self):
        """Start-up deletes the log's files the manifest does not name (an
        interrupted rewrite's), and nothing else: an operator's copy of the
        manifest or of a log file stays (goblin-core once deleted every file
        whose name began with appendfilename); a manifest naming a file
        twice is refused, as Redis refuses it."""
        with self.server("--save", "", "--appendonly", "yes") as srv, Raw(srv) as c:
            self.assertTrue(wait_until(lambda: info(c)["aof_rewrite_in_progress"] == "0", 10 * SLOW))
            c.call("INCR", "n")
            c.call("INCR", "n")
        logdir = os.path.join(self.dir, "appendonlydir")
        manifest = os.path.join(logdir, "appendonly.aof.manifest")
        incr = [f for f in os.listdir(logdir) if f.endswith(".incr.aof")][0]
        shutil.copy(manifest, manifest + ".bak")
        shutil.copy(os.path.join(logdir, incr), os.path.join(logdir, incr + ".orig"))
        open(os.path.join(logdir, "appendonly.aof.99.incr.aof"), "w").close()
        with self.server("--save", "", "--appendonly", "yes") as srv, Raw(srv) as c:
            self.assertEqual(c.call("GET", "n"), b"2")
        left = sorted(os.listdir(logdir))
        self.assertNotIn("appendonly.aof.99.incr.aof", left)
        self.assertIn("appendonly.aof.manifest.bak", left)
        self.assertIn(incr + ".orig", left)
        with open(manifest) as f:
            text = f.read()
        line = [l for l in text.splitlines() if " type i" in l][-1]
        with open(manifest, "a") as f:
            f.write(line + "\n")
        log = self.refused_start("--save", "", "--appendonly", "yes")
        self.assertIn("Found a non-monotonic sequence number", log)

    def test_shutdown_during_the_first_base_keeps_the_log(self):
        """appendonly on at start-up over a snapshot: the log's first base is
        still being written when SHUTDOWN comes, and what was written
        meanwhile lives in a file no manifest names yet. The shutdown
        finishes the base (Redis refuses to exit there) and nothing is lost:
        abandoning it lost the writes (seen in CI, where the base's fsync was
        slow enough for a test to stop its server first)."""
        with self.server("--save", "") as srv, Raw(srv) as c:
            for i in range(64):  # 256 MB that zstd cannot shrink: a base that takes a while
                c.call("SET", "big:%d" % i, os.urandom(4 << 20))
            self.assertEqual(c.call("SAVE"), b"OK")
        with self.server("--save", "", "--appendonly", "yes") as srv, Raw(srv) as c:
            self.assertEqual(info(c)["aof_rewrite_in_progress"], "1", "the first base was already written")
            self.assertEqual(c.call("SET", "late", "1"), b"OK")
            try:
                c.call("SHUTDOWN")
            except (OSError, EOFError):
                pass
            srv.proc.wait(60 * SLOW)
            self.assertIn("Writing the initial AOF base before exiting.", srv.log())
        os.remove(os.path.join(self.dir, "dump.gdb"))  # what loads next is the log alone
        with self.server("--save", "", "--appendonly", "yes") as srv, Raw(srv) as c:
            self.assertEqual(c.call("GET", "late"), b"1")
            self.assertEqual(c.call("DBSIZE"), 65)

    def test_log_survives_restart_and_kill(self):
        with self.server("--appendonly", "yes", "--save", "") as srv, Raw(srv) as c:
            fill(c)
            c.call("INCRBYFLOAT", "f", "1.5")
            c.call("SELECT", "3")
            c.call("SET", "in3", "x")
            i = info(c)
            self.assertEqual(i["aof_enabled"], "1")
            self.assertTrue(wait_until(lambda: info(c)["aof_rewrite_in_progress"] == "0", 10 * SLOW))
            digest = c.call("DEBUG", "DIGEST")
            srv.kill()  # SIGKILL: everything written before the replies is in the log
        with self.server("--appendonly", "yes", "--save", "") as srv, Raw(srv) as c:
            self.assertEqual(c.call("DEBUG", "DIGEST"), digest)  # every value, every database
            self.assertEqual(c.call("GET", "k:299"), b"v299")
            self.assertEqual(c.call("GET", "f"), b"1.5")
            c.call("SELECT", "3")
            self.assertEqual(c.call("GET", "in3"), b"x")
            manifest = glob.glob(os.path.join(self.dir, "appendonlydir", "*.manifest"))
            self.assertEqual(len(manifest), 1)

    def logged_dirs(self):
        """(kind, directory, arguments): redis-server where it is here, then
        goblin-core, each in a fresh directory with the log on, synced at
        every write."""
        for kind in ("redis", "goblin") if gbtest.compare_with_redis() else ("goblin",):
            d = tempfile.mkdtemp(prefix="gbit-persist-%s-" % kind)
            self.addCleanup(shutil.rmtree, d, True)
            yield kind, d, ["--appendonly", "yes", "--appendfsync", "always", "--save", ""]

    def logged_server(self, kind, args, d):
        """A server of logged_dirs whose first log rewrite is done."""
        srv = Server(kind, args=args, dir=d)
        with Raw(srv) as c:
            self.assertTrue(wait_until(lambda: info(c)["aof_rewrite_in_progress"] == "0", 10 * SLOW))
        return srv

    def test_deadlines_passed_by_the_restart_keep_what_followed(self):
        """The log holds "PEXPIREAT k <deadline>" and then "PERSIST k" for a
        key that lives on. Replayed after the deadline, the PEXPIREAT must
        not delete the key (Redis's checkAlreadyExpired is false while
        loading) or the PERSIST finds nothing and an acknowledged key is
        lost; likewise GETEX, RESTORE with a TTL and a hash field's
        HPEXPIRE. Keys left to expire are gone after the restart all the
        same. Compared with redis-server's replies, the hash field (Redis
        7.4's) with goblin-core alone."""
        payload = None
        results = {}
        for kind, d, args in self.logged_dirs():
            with self.logged_server(kind, args, d) as srv, Raw(srv) as c:
                c.call("SET", "src", "restored")
                payload = payload or c.call("DUMP", "src")
                # each deadline and what undoes it in one transaction: a
                # stall of the machine between them cannot expire the key
                pairs = [("SET", "kept", "v"), ("PEXPIRE", "kept", "300"), ("PERSIST", "kept"),
                         ("SET", "getex", "v"), ("GETEX", "getex", "PX", "300"), ("PERSIST", "getex"),
                         ("RESTORE", "restored", "300", payload), ("PERSIST", "restored"),
                         ("SET", "gone", "v", "PX", "300"), ("SET", "gone2", "v"), ("PEXPIRE", "gone2", "300")]
                if kind == "goblin":
                    pairs += [("HSET", "h", "f", "1", "g", "2"), ("HPEXPIRE", "h", "300", "FIELDS", "1", "f"),
                              ("HPERSIST", "h", "FIELDS", "1", "f")]
                c.call("MULTI")
                for cmd in pairs:
                    c.call(*cmd)
                self.assertNotIsInstance(c.call("EXEC"), Err)
                time.sleep(0.6)  # every deadline above has passed
                srv.kill()
            with Server(kind, args=args, dir=d) as srv, Raw(srv) as c:
                self.assertTrue(wait_until(lambda: info(c)["loading"] == "0", 10 * SLOW))  # PING answers sooner
                got = [c.call("GET", k) for k in ("kept", "getex", "restored", "gone", "gone2")]
                got += [c.call("PTTL", k) for k in ("kept", "getex", "restored")]
                results[kind] = got
                if kind == "goblin":
                    fields = c.call("HGETALL", "h")
                    self.assertEqual(dict(zip(fields[::2], fields[1::2])), {b"f": b"1", b"g": b"2"})
                    self.assertEqual(c.call("HTTL", "h", "FIELDS", "1", "f"), [-1])
        self.assertEqual(results["goblin"], [b"v", b"v", b"restored", None, None, -1, -1, -1])
        if "redis" in results:
            self.assertEqual(results["goblin"], results["redis"])

    def test_an_error_while_loading_the_log(self):
        """A command of the log that fails when replayed (here LPUSH over a
        string, appended by hand) is logged as Redis logs it and counted in
        INFO's unexpected_error_replies; the server starts. Under
        propagation-error-behavior panic it stops instead, with Redis's
        line. Compared with redis-server."""
        lpush = b"*3\r\n$5\r\nLPUSH\r\n$1\r\nk\r\n$1\r\nx\r\n"
        # Redis quotes its shared error objects with their "-" ('-WRONGTYPE ...'), the
        # others without; goblin-core always without
        want_log = re.compile(r"== CRITICAL == This server is sending an error to its AOF-loading-client: "
                              r"'-?WRONGTYPE Operation against a key holding the wrong kind of value' after "
                              r"processing the command 'lpush'")
        for kind, d, args in self.logged_dirs():
            with self.logged_server(kind, args, d) as srv, Raw(srv) as c:
                c.call("SET", "k", "v")
                srv.kill()
            incr = sorted(glob.glob(os.path.join(d, "appendonlydir", "*.incr.aof")))
            with open(incr[-1], "ab") as f:
                f.write(lpush)
            with Server(kind, args=args, dir=d) as srv, Raw(srv) as c:
                self.assertTrue(wait_until(lambda: info(c)["loading"] == "0", 10 * SLOW))
                self.assertEqual(c.call("GET", "k"), b"v", kind)
                self.assertEqual(info(c, "stats")["unexpected_error_replies"], "1", kind)
                self.assertRegex(srv.log(), want_log, kind)
            srv = Server(kind, args=args + ["--propagation-error-behavior", "panic"], dir=d, wait=False)
            try:
                self.assertNotEqual(srv.proc.wait(15 * SLOW), 0, kind)
                self.assertIn("This server panicked sending an error to its AOF-loading-client after processing "
                              "the command 'lpush'", srv.log(), kind)
            finally:
                srv.cleanup()

    def test_empty_flushes_reach_the_log(self):
        """FLUSHDB and FLUSHALL of nothing change no counter, yet are logged
        (Redis forces their propagation)."""
        with self.server("--appendonly", "yes", "--save", "") as srv, Raw(srv) as c:
            self.assertTrue(wait_until(lambda: info(c)["aof_rewrite_in_progress"] == "0", 10 * SLOW))
            self.assertEqual(c.call("FLUSHALL"), b"OK")
            self.assertEqual(c.call("FLUSHDB"), b"OK")
            self.assertEqual(info(c)["rdb_changes_since_last_save"], "0")
            incr = sorted(glob.glob(os.path.join(self.dir, "appendonlydir", "*.incr.aof")))
            self.assertTrue(incr)
            with open(incr[-1], "rb") as f:
                log = f.read()
            self.assertIn(b"*1\r\n$8\r\nFLUSHALL\r\n*1\r\n$7\r\nFLUSHDB\r\n", log)

    def test_bgrewriteaof(self):
        with self.server("--appendonly", "yes", "--save", "") as srv, Raw(srv) as c:
            for i in range(2000):
                c.call("INCR", "counter")
            self.assertTrue(wait_until(lambda: info(c)["aof_rewrite_in_progress"] == "0", 10 * SLOW))
            size = int(info(c)["aof_current_size"])
            self.assertEqual(c.call("BGREWRITEAOF"), b"Background append only file rewriting started")
            self.assertTrue(wait_until(lambda: info(c)["aof_rewrite_in_progress"] == "0", 10 * SLOW))
            self.assertEqual(info(c)["aof_last_bgrewrite_status"], "ok")
            self.assertLess(int(info(c)["aof_current_size"]), size)
            files = sorted(os.listdir(os.path.join(self.dir, "appendonlydir")))
            self.assertEqual(len(files), 3, files)  # base, incremental, manifest
            c.call("INCR", "counter")
        with self.server("--appendonly", "yes", "--save", "") as srv, Raw(srv) as c:
            self.assertEqual(c.call("GET", "counter"), b"2001")

    def test_auto_rewrite_by_growth(self):
        with self.server("--appendonly", "yes", "--save", "", "--auto-aof-rewrite-min-size", "100kb",
                         "--auto-aof-rewrite-percentage", "50") as srv, Raw(srv) as c:
            # The log's first base (aof_rewrites 1) must be written before the
            # SETs: the size after a rewrite counts what arrived during it, so
            # SETs that all land while a slow first base is written (ASan under
            # a loaded CI machine) leave no growth to trigger the second.
            self.assertTrue(wait_until(lambda: info(c)["aof_rewrite_in_progress"] == "0", 10 * SLOW))
            self.assertEqual(info(c)["aof_rewrites"], "1")
            for i in range(3000):
                c.call("SET", "key", "x" * 100)
            self.assertTrue(wait_until(lambda: int(info(c)["aof_rewrites"]) >= 2, 10 * SLOW))
            self.assertIn("Starting automatic rewriting of AOF", srv.log())

    def test_config_set_appendonly(self):
        with self.server("--save", "") as srv, Raw(srv) as c:
            fill(c)
            self.assertEqual(c.call("CONFIG", "SET", "appendonly", "yes"), b"OK")
            c.call("SET", "after", "1")
            self.assertTrue(wait_until(lambda: info(c)["aof_rewrite_in_progress"] == "0", 10 * SLOW))
        with self.server("--appendonly", "yes", "--save", "") as srv, Raw(srv) as c:
            self.assertEqual(c.call("DBSIZE"), 306)
            self.assertEqual(c.call("DEBUG", "LOADAOF"), b"OK")
            self.assertEqual(c.call("DBSIZE"), 306)
            self.assertEqual(c.call("CONFIG", "SET", "appendonly", "no"), b"OK")
            self.assertEqual(info(c)["aof_enabled"], "0")

    def test_torn_log_and_the_repair_tool(self):
        with self.server("--appendonly", "yes", "--appendfsync", "always", "--save", "") as srv, Raw(srv) as c:
            c.call("SET", "a", "1")
            self.assertTrue(wait_until(lambda: info(c)["aof_rewrite_in_progress"] == "0", 10 * SLOW))
            c.call("SET", "b", "2")
        incr = sorted(glob.glob(os.path.join(self.dir, "appendonlydir", "*.incr.aof")))[-1]
        with open(incr, "ab") as f:
            f.write(b"*3\r\n$3\r\nSET\r\n$1\r\nc")
        # refused without aof-load-truncated, with what to do
        srv = Server("goblin", args=["--appendonly", "yes", "--save", "", "--aof-load-truncated", "no"],
                     dir=self.dir, wait=False)
        rc = srv.proc.wait(10 * SLOW)
        log = srv.log()
        srv.cleanup()
        self.assertNotEqual(rc, 0)
        self.assertIn("Unexpected end of file", log)
        self.assertIn("goblin-check-aof", log)
        manifest = glob.glob(os.path.join(self.dir, "appendonlydir", "*.manifest"))[0]
        out = subprocess.run([CHECK_AOF, manifest], capture_output=True, text=True)
        self.assertEqual(out.returncode, 1)
        self.assertIn("cut short", out.stdout)
        out = subprocess.run([CHECK_AOF, "--fix", manifest], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stdout)
        self.assertIn("Fixed", out.stdout)
        with self.server("--appendonly", "yes", "--save", "", "--aof-load-truncated", "no") as srv, Raw(srv) as c:
            self.assertEqual(c.call("MGET", "a", "b", "c"), [b"1", b"2", None])

    def test_garbage_in_the_middle_stops_startup(self):
        with self.server("--appendonly", "yes", "--save", "") as srv, Raw(srv) as c:
            c.call("SET", "a", "1")
            self.assertTrue(wait_until(lambda: info(c)["aof_rewrite_in_progress"] == "0", 10 * SLOW))
            c.call("SET", "b", "2")
        incr = sorted(glob.glob(os.path.join(self.dir, "appendonlydir", "*.incr.aof")))[-1]
        with open(incr, "rb") as f:
            data = f.read()
        with open(incr, "wb") as f:
            f.write(data[:5] + b"#" + data[6:])
        log = self.refused_start("--appendonly", "yes", "--save", "")
        self.assertIn("Bad file format reading the append only file", log)
        self.assertIn("at offset", log)


def cpu_list(text):
    """Linux's CPU list format ("0-2,5") as a sorted list of ints."""
    cpus = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        cpus.extend(range(int(lo), int(hi or lo) + 1))
    return sorted(cpus)


class HelperThreads(Scratch):
    """With --cpu, the engine's helper threads (lazy freeing, log fsync, the
    snapshot writer) run on the other CPUs the server may use, not on the
    pinned engine CPU. Reads /proc (Linux): skipped elsewhere, saying so."""

    def threads(self, pid, nice=None):
        """{thread name: {allowed CPUs}}; with a dict for nice, also fills
        {thread name: {nice values}}. Each value is paired with the name
        read in the same file: a new helper names itself, moves and lowers
        itself while we look, so a name from comm with a nice value read a
        moment later from stat could pair the engine's inherited name with
        the helper's nice 10 (seen once in CI)."""
        out = {}
        for task in glob.glob("/proc/%d/task/*" % pid):
            try:
                with open(os.path.join(task, "status")) as f:
                    fields = dict(l.rstrip("\n").split(":\t", 1) for l in f if ":\t" in l)
                with open(os.path.join(task, "stat")) as f:
                    stat = f.read()
            except OSError:
                continue  # the thread ended while we looked
            if "Name" not in fields or "Cpus_allowed_list" not in fields:
                continue
            out.setdefault(fields["Name"], set()).add(tuple(cpu_list(fields["Cpus_allowed_list"].strip())))
            if nice is not None:
                # the name is field 2, in parentheses; after the ")" that
                # ends it: state is field 3, nice field 19
                name = stat[stat.index("(") + 1:stat.rindex(")")]
                nice.setdefault(name, set()).add(int(stat[stat.rindex(")") + 2:].split()[16]))
        return out

    def test_helpers_leave_the_engine_cpu(self):
        if not os.path.exists("/proc/self/task"):
            self.skipTest("thread affinities are read from /proc (Linux only)")
        allowed = sorted(os.sched_getaffinity(0))
        if len(allowed) < 2:
            self.skipTest("needs two CPUs to keep helpers off the engine's")
        engine_cpu, others = allowed[-1], allowed[:-1]
        with self.server("--cpu", str(engine_cpu), "--appendonly", "yes", "--save", "") as srv, Raw(srv) as c:
            if srv.info("rings").get("ring_engine_pinned") != "yes":
                # the generic POSIX platform has no affinity call: --cpu is logged as unsupported there
                self.skipTest("this platform build does not pin threads (%s)" % srv.log()[-200:])
            for i in range(2000):
                c.call("SET", "key:%d" % i, "v" * 100)
            # the snapshot writer lives for one save: look while one runs,
            # until it has been seen after it lowered itself (a look just
            # after it started reads nice 0)
            seen, nice = {}, {}
            c.call("BGSAVE")
            deadline = time.time() + 10 * SLOW
            while time.time() < deadline and 10 not in nice.get("gb-snapshot", ()):
                seen.update(self.threads(srv.pid, nice))
                if c.call("INFO", "persistence").find(b"rdb_bgsave_in_progress:1") < 0:
                    c.call("BGSAVE")
            seen.update(self.threads(srv.pid, nice))
        self.assertEqual(seen.get("goblin-core"), {(engine_cpu,)}, seen)
        self.assertEqual(nice.get("goblin-core"), {0}, nice)
        if "gb-snapshot" in nice:
            # below the engine (gb_thread_set_low_priority), so a save sharing
            # its CPU never holds requests up; a sample taken before the
            # thread lowered itself reads 0
            self.assertTrue(nice["gb-snapshot"] <= {0, 10} and 10 in nice["gb-snapshot"], nice)
        for helper in ("gb-lazyfree", "gb-aof-fsync", "gb-snapshot", "gb-ring-refill"):
            if helper == "gb-snapshot" and helper not in seen:
                continue  # a save can end between two looks; the unit test covers the writer
            self.assertEqual(seen.get(helper), {tuple(others)}, (helper, seen))

    def test_a_save_ends_while_clients_saturate_the_engine_cpu(self):
        """The server may run on one CPU only, so the background save has
        no CPU for its writer thread and the engine compresses and writes
        the file itself, in pieces between requests (the log says so);
        clients keeping that CPU busy do not stop the save: it ends and the
        file holds the dataset while redis-benchmark keeps overwriting it.
        (The generic POSIX platform layer sees no CPU limits: there the
        writer thread shares the CPU, and the save must still end. A writer
        thread starved on a busy CPU is test_snapshot.c's test.)"""
        if not hasattr(os, "sched_setaffinity"):
            self.skipTest("needs sched_setaffinity (Linux)")
        if not gbtest.REDIS_BENCHMARK:
            gbtest.reference_missing("redis-benchmark not installed")
        allowed = sorted(os.sched_getaffinity(0))
        if len(allowed) < 2:
            self.skipTest("needs two CPUs: the engine's and the clients'")
        engine_cpu, client_cpu = allowed[-1], allowed[0]
        with gbtest.start_on_one_cpu(lambda extra: self.server("--save", "", *extra), engine_cpu) as srv, \
                Raw(srv) as c:
            # every key redis-benchmark's -r 100000 names ("key:" and 12
            # digits), so that its SETs overwrite and the snapshot's size is known
            keys = 100000
            for start in range(0, keys, 5000):
                c.send(b"".join(gbtest.encode("SET", "key:%012d" % i, "v" * 300) for i in range(start, start + 5000)))
                for _ in range(5000):
                    c.read()
            flood = subprocess.Popen([gbtest.REDIS_BENCHMARK, "-s", srv.sock, "-t", "set", "-r", str(keys), "-d", "300",
                                      "-P", "64", "-c", "4", "-n", "1000000000", "-q"], stdout=subprocess.DEVNULL,
                                     preexec_fn=lambda: os.sched_setaffinity(0, {client_cpu}))
            try:
                time.sleep(0.5)
                self.assertEqual(c.call("BGSAVE"), b"Background saving started")
                self.assertTrue(wait_until(lambda: info(c)["rdb_bgsave_in_progress"] == "0", timeout=120 * SLOW),
                                "the save did not end while the engine's CPU was saturated")
            finally:
                flood.kill()
                flood.wait()
            self.assertEqual(info(c)["rdb_last_bgsave_status"], "ok", srv.log()[-2000:])
            if srv.engine_pinned():
                self.assertIn("the engine thread compresses the snapshot in small pieces", srv.log())
            self.assertEqual(c.call("DBSIZE"), keys)
        with self.server("--save", "") as srv, Raw(srv) as c:
            self.assertEqual(c.call("DBSIZE"), keys)
            self.assertEqual(len(c.call("GET", "key:%012d" % 99999)), 300)


if __name__ == "__main__":
    gbtest.run_tests()
