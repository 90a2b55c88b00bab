"""Redis's dump.rdb into Goblin Core (issue 29): start-up loading of a
dump.rdb found under dbfilename, and the one-shot `--import-rdb` tool.

* A redis-server 7.0 dataset of every type and encoding (small values in
  Redis's compact encodings, large ones in its tables; integers; streams
  with consumer groups; TTLs; three databases; a function library) is
  SAVEd by Redis, with and without rdbcompression. Goblin started on that
  dump.rdb must hold the same dataset, key by key with TTLs, and run the
  function. Its first save keeps Redis's file as dump.rdb.redis, byte for
  byte, and writes Goblin's own format; a restart loads that.
* `--import-rdb FILE` converts to dir/dbfilename and exits; it never
  overwrites an existing target. `--export-rdb FILE` writes Goblin's
  dataset as a dump.rdb that redis-check-rdb accepts and redis-server 7.0
  loads to the same keys, TTLs and functions; Redis -> Goblin -> Redis
  gives back the original dataset.
* Older files: an RDB version 9 file (Redis 6) built here byte by byte with
  ziplist lists, hashes and sorted sets, an intset and a zipmap hash loads
  in redis-server 7.0 and in Goblin to the same dataset.
* Damaged files (truncated, a flipped byte, an unknown opcode or module
  data with a valid checksum, a newer version, a database past `databases`)
  stop Goblin's start-up with a message naming the problem -- never a crash,
  never a partial dataset served.
"""

import filecmp
import os
import shutil
import struct
import subprocess
import tempfile
import time

import gbtest
from gbtest import Server

import test_dump_restore as dr


def build_dataset(r):
    r.set("int", "12345")
    r.set("str", "hello")
    r.set("long", "y" * 3000)
    r.set("ttl", "v", px=86400000)
    r.rpush("list", "a", "1", "b" * 80)
    r.rpush("biglist", *[f"e{i}" for i in range(3000)])
    r.sadd("intset", 1, 2, 3, -70000)
    r.sadd("set", "a", "b")
    r.sadd("bigset", *[f"m{i}" for i in range(1000)])
    r.zadd("zset", {"a": 1.5, "b": -2})
    r.zadd("bigzset", {f"m{i}": i / 3 for i in range(500)})
    r.hset("hash", mapping={"f": "v", "n": "7"})
    r.hset("bighash", mapping={f"f{i}": "x" * (i % 90) for i in range(800)})
    for i in range(1, 300):
        r.xadd("stream", {"f": str(i)}, id=f"{i}-0")
    r.xgroup_create("stream", "g", id="0")
    r.xreadgroup("g", "c1", {"stream": ">"}, count=7)
    r.expire("bighash", 100000)
    r.execute_command("SELECT", "2")
    r.set("db2key", "two")
    r.execute_command("SELECT", "15")
    r.hset("db15", "x", "y")
    r.execute_command("SELECT", "0")
    r.execute_command("FUNCTION", "LOAD",
                      "#!lua name=mylib\nredis.register_function('answer', function(keys, args) return 42 end)")


def snapshot_of(r, dbs=(0, 2, 15)):
    """Every key of dbs: type, value, TTL in minutes; streams' groups too;
    and DEBUG DIGEST, Redis's digest of every value in every database (the
    same on goblin-core and redis-server for the same data)."""
    out = {"digest": r.execute_command("DEBUG", "DIGEST")}
    for db in dbs:
        r.execute_command("SELECT", str(db))
        for key in sorted(r.scan_iter(count=1000)):
            t, _, v = dr.read_value(r, key)
            pttl = r.pttl(key)
            out[(db, key)] = (t, v, pttl // 60000 if pttl > 0 else pttl)
            if t == b"stream":
                out[(db, key)] = (t, r.execute_command("XRANGE", key, "-", "+"),
                                  r.execute_command("XINFO", "GROUPS", key), pttl)
    r.execute_command("SELECT", "0")
    return out


def redis_rdb(workdir, compression="yes"):
    """A dump.rdb of build_dataset written by redis-server, and the dataset."""
    with Server("redis", args=["--dir", workdir, "--rdbcompression", compression]) as srv:
        r = srv.redis()
        build_dataset(r)
        want = snapshot_of(r)
        r.save()
    return os.path.join(workdir, "dump.rdb"), want


def goblin_fails_on(path):
    """goblin-core started on path as its dbfilename: (exit status, its output)."""
    d = os.path.dirname(path)
    proc = subprocess.run([gbtest.GOBLIN, "--port", "0", "--unixsocket", "", "--rings", "0", "--dir", d,
                           "--dbfilename", os.path.basename(path), "--save", ""],
                          capture_output=True, text=True, timeout=60)
    return proc.returncode, proc.stdout + proc.stderr


def rdb_file(body, version=9):
    data = b"REDIS%04d" % version + body + b"\xff"
    return data + struct.pack("<Q", dr.crc64(data))


class RdbImport(gbtest.GoblinAndRedisCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="gb-rdb-")

    def tearDown(self):
        shutil.rmtree(self.work, ignore_errors=True)

    def test_start_up_on_redis_dump(self):
        for compression in ("yes", "no"):
            with self.subTest(rdbcompression=compression):
                d = tempfile.mkdtemp(dir=self.work)
                path, want = redis_rdb(d, compression)
                original = path + ".orig"
                shutil.copy(path, original)
                with Server("goblin", args=["--dir", d, "--dbfilename", "dump.rdb"], dir=d) as g:
                    r = g.redis()
                    self.assertEqual(snapshot_of(r), want)
                    self.assertEqual(r.execute_command("FCALL", "answer", "0"), 42)
                    self.assertIn("DB loaded from a Redis RDB file (version 10)", g.log())
                    r.save()
                    self.assertTrue(filecmp.cmp(path + ".redis", original, shallow=False))
                    with open(path, "rb") as f:
                        self.assertNotEqual(f.read(5), b"REDIS")
                    r.set("after", "1")
                    r.save()
                with Server("goblin", args=["--dir", d, "--dbfilename", "dump.rdb"], dir=d) as g:
                    r = g.redis()
                    self.assertEqual(r.get("after"), b"1")
                    r.delete("after")
                    self.assertEqual(snapshot_of(r), want)

    def test_start_up_on_redis_aof(self):
        """A Redis 7.0 append-only directory, its base an RDB (the default
        aof-use-rdb-preamble yes) or commands, its incremental file with
        the "#TS:" annotations aof-timestamp-enabled writes: goblin-core
        loads it to the same dataset (it refused both bases and the
        annotations), and its own first rewrite replaces the Redis base."""
        for preamble in ("yes", "no"):
            with self.subTest(aof_use_rdb_preamble=preamble):
                d = tempfile.mkdtemp(dir=self.work)
                with Server("redis", args=["--dir", d, "--appendonly", "yes", "--aof-use-rdb-preamble", preamble,
                                           "--aof-timestamp-enabled", "yes"]) as srv:
                    r = srv.redis()
                    build_dataset(r)
                    r.execute_command("BGREWRITEAOF")
                    self.assertTrue(gbtest.wait_until(
                        lambda: r.info("persistence")["aof_rewrite_in_progress"] == 0 and
                        r.info("persistence")["aof_rewrite_scheduled"] == 0, 30))
                    time.sleep(1.1)  # Redis annotates the first write of a new second
                    r.incr("int")
                    r.execute_command("SELECT", "2")
                    r.append("db2key", "!")
                    r.execute_command("SELECT", "0")
                    want = snapshot_of(r)
                logdir = os.path.join(d, "appendonlydir")
                base = "appendonly.aof.2.base." + ("rdb" if preamble == "yes" else "aof")
                self.assertIn(base, os.listdir(logdir))
                with open(os.path.join(logdir, "appendonly.aof.2.incr.aof"), "rb") as f:
                    head = f.read()
                    self.assertIn(b"#TS:", head, head[:200])
                with Server("goblin", args=["--dir", d, "--appendonly", "yes"], dir=d) as g:
                    r = g.redis()
                    self.assertEqual(snapshot_of(r), want)
                    self.assertEqual(r.execute_command("FCALL", "answer", "0"), 42)
                    self.assertIn("Loaded the Redis AOF base '%s'" % base, g.log())
                    r.execute_command("BGREWRITEAOF")
                    self.assertTrue(gbtest.wait_until(
                        lambda: r.info("persistence")["aof_rewrite_in_progress"] == 0, 30))
                    self.assertNotIn(base, os.listdir(logdir))
                with Server("goblin", args=["--dir", d, "--appendonly", "yes"], dir=d) as g:
                    self.assertEqual(snapshot_of(g.redis()), want)

    def test_import_tool(self):
        path, want = redis_rdb(self.work)
        cmd = [gbtest.GOBLIN, "--import-rdb", path, "--dir", self.work, "--dbfilename", "conv.gdb"]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("Import done", proc.stdout + proc.stderr)
        again = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        self.assertNotEqual(again.returncode, 0)
        self.assertIn("exists already", again.stdout + again.stderr)
        with Server("goblin", args=["--dir", self.work, "--dbfilename", "conv.gdb"], dir=self.work) as g:
            self.assertEqual(snapshot_of(g.redis()), want)

    def test_export_tool_back_to_redis(self):
        # A dataset built on Goblin itself, saved, exported, loaded by Redis.
        d = tempfile.mkdtemp(dir=self.work)
        with Server("goblin", args=["--dir", d], dir=d) as g:
            r = g.redis()
            build_dataset(r)
            want = snapshot_of(r)
            r.save()
        out = os.path.join(d, "back.rdb")
        cmd = [gbtest.GOBLIN, "--dir", d, "--export-rdb", out]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        again = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        self.assertNotEqual(again.returncode, 0)
        self.assertIn("exists already", again.stdout + again.stderr)
        check = shutil.which("redis-check-rdb")
        self.assertIsNotNone(check, "redis-check-rdb comes with redis-tools (cmake/install-deps.sh --test)")
        res = subprocess.run([check, out], capture_output=True, text=True, timeout=120)
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        self.assertIn("RDB looks OK", res.stdout)
        with Server("redis", args=["--dir", d, "--dbfilename", "back.rdb"], dir=d) as srv:
            r = srv.redis()
            self.assertEqual(snapshot_of(r), want)
            self.assertEqual(r.execute_command("FCALL", "answer", "0"), 42)

    def test_round_trip_redis_goblin_redis(self):
        path, want = redis_rdb(self.work)
        subprocess.run([gbtest.GOBLIN, "--import-rdb", path, "--dir", self.work, "--dbfilename", "conv.gdb"],
                       check=True, capture_output=True, timeout=120)
        back = os.path.join(self.work, "back.rdb")
        subprocess.run([gbtest.GOBLIN, "--dir", self.work, "--dbfilename", "conv.gdb", "--export-rdb", back],
                       check=True, capture_output=True, timeout=120)
        with Server("redis", args=["--dir", self.work, "--dbfilename", "back.rdb"], dir=self.work) as srv:
            self.assertEqual(snapshot_of(srv.redis()), want)

    def test_redis_6_encodings_load_as_in_redis(self):
        body = (b"\xfa" + dr.rdb_str(b"redis-ver") + dr.rdb_str(b"6.2.14") + b"\xfe\x00\xfb\x05\x01"
                + b"\x0a" + dr.rdb_str(b"zl-list") + dr.rdb_str(dr.ziplist([b"a", 5, -300, b"x" * 70]))
                + b"\x0d" + dr.rdb_str(b"zl-hash") + dr.rdb_str(dr.ziplist([b"f", b"v", b"n", 12]))
                + b"\x0c" + dr.rdb_str(b"zl-zset") + dr.rdb_str(dr.ziplist([b"m", 1, b"k", b"2.5"]))
                + b"\x0b" + dr.rdb_str(b"intset") + dr.rdb_str(dr.intset([3, 1, 2], 2))
                + b"\xfc" + struct.pack("<Q", 4102444800000)
                + b"\x09" + dr.rdb_str(b"zipmap") + dr.rdb_str(dr.zipmap([(b"a", b"1")])))
        data = rdb_file(body)
        results = []
        for kind in ("redis", "goblin"):
            d = tempfile.mkdtemp(dir=self.work)
            with open(os.path.join(d, "old.rdb"), "wb") as f:
                f.write(data)
            with Server(kind, args=["--dir", d, "--dbfilename", "old.rdb"], dir=d) as srv:
                results.append(snapshot_of(srv.redis(), dbs=(0,)))
        self.assertEqual(results[0], results[1])
        self.assertEqual(len(results[0]), 5 + 1)  # five keys and the digest

    def test_damaged_files_stop_start_up(self):
        path, _ = redis_rdb(self.work)
        with open(path, "rb") as f:
            good = f.read()
        module_aux = rdb_file(b"\xf7" + b"\x00" * 20, version=10)
        cases = {
            "truncated": (good[:len(good) // 2], "checksum"),
            "flipped": (good[:100] + bytes([good[100] ^ 0x40]) + good[101:], "checksum"),
            "unknown-opcode": (rdb_file(b"\xfe\x00\xf0" + dr.rdb_str(b"k"), version=10), "unknown opcode 0xF0"),
            "module": (module_aux, "module"),
            "module-type": (rdb_file(b"\x07" + dr.rdb_str(b"mk") + b"\x00" * 12, version=10), "'mk' (module, RDB type 7)"),
            "newer": (good[:5] + b"0013" + good[9:], "version 13"),
            "database": (rdb_file(b"\xfe\x20" + b"\x00" + dr.rdb_str(b"k") + dr.rdb_str(b"v")), "database 32"),
            "bad-object": (rdb_file(b"\x0e" + dr.rdb_str(b"q") + b"\x01" + dr.rdb_str(b"\x00" * 11)),
                           "key 'q' (list, RDB type 14) holds"),
            "twice": (rdb_file(b"\x00" + dr.rdb_str(b"k") + dr.rdb_str(b"v") + b"\x00" + dr.rdb_str(b"k")
                               + dr.rdb_str(b"w")), "appears twice"),
            # keys go into their table some keys after they are read
            # (engine/persist/load_pipe.h): refused however far apart
            "twice-far": (rdb_file(b"\x00" + dr.rdb_str(b"k") + dr.rdb_str(b"v")
                                   + b"".join(b"\x00" + dr.rdb_str(b"o%d" % i) + dr.rdb_str(b"v") for i in range(100))
                                   + b"\x00" + dr.rdb_str(b"k") + dr.rdb_str(b"w")), "key 'k' appears twice"),
            # a table sized for thousands (RESIZEDB), where most keys go in
            # without their chains being read (per-bucket filters)
            "twice-big": (rdb_file(b"\xfe\x00\xfb\x53\x88\x00"
                                   + b"".join(b"\x00" + dr.rdb_str(b"key%d" % i) + dr.rdb_str(b"v") for i in range(3000))
                                   + b"\x00" + dr.rdb_str(b"key17") + dr.rdb_str(b"w")), "key 'key17' appears twice"),
            "not-eof": (b"REDIS0009\x00" + dr.rdb_str(b"k") + dr.rdb_str(b"v") + b"\x00" * 8, "ends before"),
        }
        for name, (data, expect) in cases.items():
            with self.subTest(case=name):
                p = os.path.join(self.work, name + ".rdb")
                with open(p, "wb") as f:
                    f.write(data)
                rc, out = goblin_fails_on(p)
                self.assertEqual(rc, 1, out)
                self.assertIn(expect, out)
                self.assertNotIn("Ready to accept", out)


if __name__ == "__main__":
    gbtest.run_tests()
