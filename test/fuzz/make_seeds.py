#!/usr/bin/env python3
"""Writes the seed corpora of test/fuzz/corpus/ (docs/fuzzing.md).

    test/fuzz/make_seeds.py path/to/goblin-core

Each harness's input layout is described at the top of its fuzz_<name>.c;
the seeds here follow it. The persistence seeds are made by the engine
itself: a goblin-core started in a scratch directory is given small mixed
datasets (every type and encoding, expiries, two databases), saves them
(SAVE, compressed and not) and logs them (appendonly yes), and its files
become the seeds of snapshot, snaprecord, aof and manifest.

Run again after a format change and commit the result; the fuzzers grow
their own corpora in scratch copies, never here.
"""
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")


def write(harness, name, data):
    d = os.path.join(CORPUS, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def resp(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


# ---- resp: [flags][max_bulk][seed u16] stream ---------------------------------------------

def resp_seeds():
    seeds = {
        "multibulk-get": (0, 0, 1, resp("GET", "k")),
        "multibulk-pipeline": (0, 0, 7, resp("SET", "k", "hello") + resp("PING") + resp("ECHO", "")),
        "inline-quotes": (0, 0, 3, b"SET k \"a\\x41\\n b\" 'it\\'s'\r\nPING\n  \r\n"),
        "inline-then-multibulk": (0, 0, 9, b"PING\r\n" + resp("PING")),
        "empty-and-negative": (0, 0, 5, b"*0\r\n*-1\r\n\r\n"),
        "unauth-too-many": (1, 0, 11, b"*11\r\n$1\r\na\r\n"),
        "unauth-inline": (1, 0, 13, b"AUTH pass\r\na b c d e f g h i j k\r\n"),
        "small-max-bulk": (2, 4, 17, resp("abcd", "abcde")),
        "big-bulk-partial": (0, 0, 19, b"*1\r\n$100\r\n" + b"x" * 40),
        "leading-zero-and-sign": (0, 0, 23, b"*2\r\n$03\r\nGET\r\n$+1\r\nk\r\n"),
        "bad-prefix": (0, 0, 29, b"*2\r\n$3\r\nGET\r\n:1\r\nk\r\n"),
        "unbalanced": (0, 0, 31, b"SET \"abc\r\n"),
        "nul-in-inline": (0, 0, 37, b"GET a\x00b\r\nPING\r\n"),
    }
    for name, (flags, small, seed, body) in seeds.items():
        write("resp", name, bytes([flags, small]) + struct.pack("<H", seed) + body)


# ---- sbe: [mode] message, or [mode|1] ([u16 len] message)* --------------------------------

SCHEMA, VERSION = 18242, 1


def hdr(block_len, tid):
    return struct.pack("<HHHH", block_len, tid, SCHEMA, VERSION)


def var(b):
    b = b if isinstance(b, bytes) else b.encode()
    return struct.pack("<I", len(b)) + b


def group(entries, block=b"", large=False):
    dim = struct.pack("<HI" if large else "<HH", len(block) if entries else 0, len(entries))
    return dim + b"".join(entries)


def sbe_messages():
    return {
        "ping": hdr(0, 1),
        "get": hdr(0, 2) + var("k"),
        "set-px-nx": hdr(9, 3) + struct.pack("<qB", 100, 1 | 8) + var("k") + var("v"),
        "set-get-ex": hdr(9, 3) + struct.pack("<qB", 5, 128 | 4) + var("n") + var("10"),
        "del": hdr(0, 4) + group([var("k"), var("l"), var("")]),
        "incr": hdr(8, 5) + struct.pack("<q", -7) + var("n"),
        "hset": hdr(0, 6) + group([var("f1") + var("v1"), var("f2") + var("2")]) + var("h"),
        "hget": hdr(0, 7) + var("h") + var("f1"),
        "zadd": hdr(1, 8) + struct.pack("<B", 16)
        + struct.pack("<HH", 8, 2) + struct.pack("<d", 1.5) + var("a") + struct.pack("<d", -2) + var("b") + var("z"),
        "zscore": hdr(0, 9) + var("z") + var("a"),
        "lpush": hdr(0, 10) + group([var("x"), var("y"), var("1")]) + var("l"),
        "rpop": hdr(0, 11) + var("l"),
        "blpop": hdr(8, 12) + struct.pack("<d", 0.01) + group([var("l"), var("m")]),
        "generic-lrange": hdr(0, 13) + group([var("LRANGE"), var("l"), var("0"), var("-1")], large=True),
        "generic-multi": hdr(0, 13) + group([var("MULTI")], large=True),
        "generic-exec": hdr(0, 13) + group([var("EXEC")], large=True),
        "generic-subscribe": hdr(0, 13) + group([var("SUBSCRIBE"), var("ch")], large=True),
        "publish": hdr(0, 14) + var("ch") + var("msg"),
        # XAdd: idMs, idSeq, maxLen, minIdMs, minIdSeq, limit, flags (docs/sbe.md)
        "xadd": hdr(49, 15) + struct.pack("<QQqQQqB", 1, 1, 0, 0, 0, 0, 0)
        + group([var("f") + var("v"), var("n") + var("1")]) + var("st"),
        "xadd-auto-maxlen-approx": hdr(49, 15) + struct.pack("<QQqQQqB", 0, 0, 2, 0, 0, 0, 1 | 8 | 32)
        + group([var("f") + var("v")]) + var("st"),
        "xadd-partial-minid-limit": hdr(49, 15) + struct.pack("<QQqQQqB", 5, 0, 0, 1, 0, 10, 2 | 16 | 32 | 64)
        + group([var("f") + var("")]) + var("st"),
        "xadd-nomkstream-limit-exact": hdr(49, 15) + struct.pack("<QQqQQqB", 9, 0, 1, 0, 0, 5, 4 | 8 | 64)
        + group([var("f") + var("v")]) + var("none"),
        "reply-array": hdr(8, 107) + struct.pack("<q", 2) + struct.pack("<HI", 17, 3)
        + struct.pack("<qdB", 1, 0, 3) + var("")
        + struct.pack("<qdB", 1, 0, 7) + var("")
        + struct.pack("<qdB", 0, 0, 5) + var("ab"),
        "reply-status": hdr(0, 101) + var("OK"),
        "reply-double": hdr(8, 104) + struct.pack("<d", 2.5),
        "push-pmessage": hdr(1, 108) + struct.pack("<B", 2) + var("news") + var("n*") + var("hello"),
        "push-unsubscribe-nil": hdr(10, 109) + struct.pack("<qBB", 0, 2, 1) + var(""),
    }


def sbe_seeds():
    msgs = sbe_messages()
    for name, m in msgs.items():
        write("sbe", "decode-" + name, b"\x00" + m)
    session = ["set-px-nx", "get", "lpush", "rpop", "hset", "hget", "zadd", "zscore", "incr", "del",
               "generic-multi", "get", "generic-lrange", "generic-exec", "blpop", "ping"]
    write("sbe", "execute-session", b"\x01" + b"".join(struct.pack("<H", len(msgs[n])) + msgs[n] for n in session))
    write("sbe", "execute-publish", b"\x01" + b"".join(struct.pack("<H", len(msgs[n])) + msgs[n]
                                                      for n in ("publish", "generic-multi", "publish", "generic-exec",
                                                                "generic-subscribe", "publish", "ping")))
    write("sbe", "execute-xadd", b"\x01" + b"".join(struct.pack("<H", len(msgs[n])) + msgs[n]
                                                   for n in ("xadd", "xadd-auto-maxlen-approx", "xadd-partial-minid-limit",
                                                             "xadd-nomkstream-limit-exact", "generic-multi", "xadd",
                                                             "generic-exec")))
    for name in ("blpop", "generic-lrange", "zadd"):
        write("sbe", "execute-" + name, b"\x01" + struct.pack("<H", len(msgs[name])) + msgs[name])


# ---- ring: [mode][capacity][key u32][start u16][head delta u16] records or ring bytes ---------

RING_PAD = 0xffffffff


RING_HEADER = 16  # include/goblin/ring_layout.h, layout 2: u64 stamp, u32 length, u32 reserved
RING_ALIGN = 16


def ring_stamp(pos, key):
    return (pos ^ key) | 1


def ring_bytes(cap, key, start, records):
    """A request ring as an honest client leaves it: records from position
    start, a padding record where one would not fit before the end."""
    ring = bytearray(cap)
    pos = start
    for r in records:
        size = (RING_HEADER + len(r) + RING_ALIGN - 1) & ~(RING_ALIGN - 1)
        idx = pos % cap
        if idx + size > cap:
            ring[idx:idx + RING_HEADER] = struct.pack("<QII", ring_stamp(pos, key), RING_PAD, 0)
            pos += cap - idx
            idx = 0
        ring[idx:idx + RING_HEADER] = struct.pack("<QII", ring_stamp(pos, key), len(r), 0)
        ring[idx + RING_HEADER:idx + RING_HEADER + len(r)] = r
        pos += size
    return bytes(ring)


def ring_seeds():
    key = 0x5eed1234c0ffee00

    def head(mode, cap_sel, start_units, delta):
        return struct.pack("<BBQHH", mode, cap_sel, key, start_units, delta)

    def recs(items, cap_sel=0):
        assert all(len(m) <= (256 << cap_sel) // 4 for m in items), "a record longer than max_payload"
        return b"".join(struct.pack("<H", len(m)) + m for m in items)

    pipeline = [resp("SET", "k", "v") + resp("GET", "k")[:9], resp("GET", "k")[9:] + resp("LPUSH", "l", "a", "b"),
                resp("BLPOP", "nothing", "0") + resp("LRANGE", "l", "0", "-1"), b"PING\r\nECHO hi\r\n"]
    write("ring", "records-resp-exec", head(5, 1, 3, 0x1000) + recs(pipeline, 1))
    write("ring", "records-resp-partial-exec", head(5, 1, 60, 0x1000) + recs([b"*2\r\n$3\r\nGET", b"\r\n$1\r\nk\r\n"]))
    write("ring", "records-resp-error-exec", head(5, 0, 0, 0x0fff) + recs([b"*1\r\n$x\r\n", resp("PING")]))
    write("ring", "records-resp-large-reply", head(5, 2, 0, 0) + recs([resp("SET", "k", "x" * 150), resp("GET", "k")], 2))
    msgs = sbe_messages()
    session = [msgs[n] for n in ("set-px-nx", "get", "lpush", "generic-multi", "generic-lrange", "generic-exec",
                                 "blpop", "zadd", "zscore", "hset", "hget")]
    write("ring", "records-sbe-exec", head(7, 2, 1, 0x1000) + recs(session, 2))
    write("ring", "records-wrap", head(1, 0, 28, 0x6000) + recs([b"a" * 60, b"b" * 61, b"c" * 30, b"d" * 64]))
    write("ring", "raw-resp-exec", head(4, 0, 30, 0x1000) +
          ring_bytes(256, key, 30 * RING_ALIGN, [resp("SET", "a", "1"), resp("INCR", "a"), b"GET a\r\n"]))
    write("ring", "raw-sbe-exec", head(6, 0, 0, 0x1000) + ring_bytes(256, key, 0, [msgs["set-px-nx"], msgs["get"]]))
    write("ring", "raw-pad-at-start", head(0, 0, 0, 0) + struct.pack("<QII", ring_stamp(0, key), RING_PAD, 0))
    write("ring", "raw-too-long", head(0, 0, 0, 0) + struct.pack("<QII", ring_stamp(0, key), 65, 0))
    # Records that fill the ring to its end: the next header would be the next lap's.
    write("ring", "raw-full-lap", head(0, 0, 0, 0) + ring_bytes(256, key, 0, [b"x" * 48] * 4))


# ---- config: [0] file, or [1|2] name\0value -------------------------------------------------

def config_seeds():
    write("config", "file-typical", b"\x00" + b"""# a typical file
port 7000
bind 127.0.0.1 ::1
requirepass "s3cr\\"et"
maxmemory 4gb
save 3600 1
save 300 100
client-output-buffer-limit normal 256mb 64mb 60
list-max-ziplist-size -2
dir ./
dbfilename 'dump.gdb'
appendonly no
""")
    write("config", "file-errors", b"\x00" + b"port 70000\nunknown-option 1\n")
    write("config", "file-quotes", b"\x00" + b"requirepass \"a\\x41\\n\"\nlogfile ''\nsave ''\n")
    for name, value in (("maxmemory", "1kb"), ("hz", "0"), ("save", "900 1 300 10"),
                        ("client-output-buffer-limit", "normal 1gb 0 0"), ("loglevel", "WARNING"),
                        ("requirepass", "pw"), ("unixsocketperm", "755"), ("port", "+80"),
                        ("list-max-listpack-size", "-5"), ("dir", "/")):
        write("config", "set-" + name, b"\x03" + name.encode() + b"\x00" + value.encode())


# ---- manifest and aof: made by the server ---------------------------------------------------

def manifest_seeds():
    write("manifest", "base-and-incr", b"file appendonly.aof.1.base.gdb seq 1 type b\n"
                                       b"file appendonly.aof.1.incr.aof seq 1 type i\n")
    write("manifest", "comments-crlf", b"# made by hand\r\nfile a.aof seq 7 type i\r\nfile b.aof seq 8 type i\r\n")
    write("manifest", "bad-name", b"file ../etc/passwd seq 1 type i\n")


class Server:
    def __init__(self, binary, directory, *args):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.proc = subprocess.Popen([binary, "--port", str(self.port), "--unixsocket", "", "--rings", "0",
                                      "--dir", directory, "--save", "",
                                      "--enable-protected-configs", "yes"] + list(args),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            try:
                self.sock = socket.create_connection(("127.0.0.1", self.port))
                break
            except OSError:
                time.sleep(0.05)
        else:
            raise RuntimeError("goblin-core did not start")
        self.buf = b""

    def call(self, *args):
        self.sock.sendall(resp(*args))
        return self._reply()

    def _line(self):
        while b"\r\n" not in self.buf:
            self.buf += self.sock.recv(65536)
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind in (b"+", b":"):
            return rest
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self.buf += self.sock.recv(65536)
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data
        return [self._reply() for _ in range(int(rest))]

    def save(self):
        """SAVE, once the log's first rewrite (started by appendonly yes) is done."""
        for _ in range(200):
            try:
                return self.call("SAVE")
            except RuntimeError as e:
                if "in progress" not in str(e):
                    raise
                time.sleep(0.05)
        raise RuntimeError("SAVE kept finding a background job in progress")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)


def fill(srv):
    """Every type and encoding the thresholds allow, expiries, two databases."""
    srv.call("SET", "int", "12345")
    srv.call("SET", "neg", "-9223372036854775808")
    srv.call("SET", "emb", "hello")
    srv.call("SET", "raw", "x" * 80)
    srv.call("SET", "ttl", "v", "PX", "600000000")
    srv.call("RPUSH", "list", "a", "b", "3", "c", "-17", "")
    srv.call("SADD", "intset", "1", "2", "3", "-5", "9223372036854775807")
    srv.call("SADD", "set", "a", "b", "c")
    srv.call("HSET", "hash", "f1", "v1", "f2", "2", "f3", "")
    srv.call("ZADD", "zset", "1", "a", "2.5", "b", "-3", "c", "inf", "top", "-inf", "bottom")
    srv.call("PEXPIRE", "list", "700000000")
    srv.call("SELECT", "3")
    srv.call("SET", "other-db", "1")
    srv.call("HSET", "h3", "k", "v")
    srv.call("SELECT", "0")


def snapshot_records(data):
    """The record stream and key count of an uncompressed one-block snapshot."""
    assert data[:8] == b"GOBLINSN"
    magic, stored, raw, codec = struct.unpack_from("<IIIB", data, 32)
    assert magic == 0x4B4C4247 and codec == 0 and stored == raw, "expected one stored block"
    trailer = data[56 + stored:]
    assert len(trailer) == 48 and trailer[:4] == b"GEND", "expected one block"
    keys = struct.unpack_from("<Q", trailer, 24)[0]
    return data[56:56 + stored], keys


def persistence_seeds(binary):
    runs = {
        "compact": [],
        "large": ["--list-max-listpack-size", "2", "--hash-max-listpack-entries", "2",
                  "--set-max-intset-entries", "2", "--set-max-listpack-entries", "2",
                  "--zset-max-listpack-entries", "2"],
        "pma": ["--list-implementation", "pma", "--list-max-listpack-size", "1"],
    }
    for run, args in runs.items():
        d = tempfile.mkdtemp(prefix="gb-seeds-")
        try:
            srv = Server(binary, d, "--appendonly", "yes", "--rdbcompression", "no", *args)
            try:
                fill(srv)
                for key in ("int", "neg", "emb", "raw", "list", "intset", "set", "hash", "zset"):
                    body = srv.call("DUMP", key)[:-10]  # the footer is RESTORE's, not the decoder's
                    write("rdbobject", run + "-" + key, bytes([{"compact": 0, "large": 1, "pma": 2}[run]]) + body)
                if run == "compact":  # a stream with groups, then gone again (the snapshot seeds stay as they were)
                    for i in range(1, 40):
                        srv.call("XADD", "st", f"{i}-1", "f", str(i), *(["g", "x" * i] if i % 3 else []))
                    srv.call("XDEL", "st", "5-1")
                    srv.call("XGROUP", "CREATE", "st", "grp", "0")
                    srv.call("XREADGROUP", "GROUP", "grp", "alice", "COUNT", "3", "STREAMS", "st", ">")
                    srv.call("XREADGROUP", "GROUP", "grp", "bob", "COUNT", "2", "STREAMS", "st", ">")
                    write("rdbobject", "stream", b"\x00" + srv.call("DUMP", "st")[:-10])
                    write("rdbobject", "stream-tiny", b"\x01" + srv.call("DUMP", "st")[:-10])
                    srv.call("DEL", "st")
                srv.save()
                srv.call("CONFIG", "SET", "rdbcompression", "yes")
                srv.call("CONFIG", "SET", "dbfilename", "dump-zstd.gdb")
                srv.save()
            finally:
                srv.stop()
            plain = open(os.path.join(d, "dump.gdb"), "rb").read()
            zstd = open(os.path.join(d, "dump-zstd.gdb"), "rb").read()
            # mode byte (fuzz_snapshot.c): 0 as is, 1 checksums made right
            write("snapshot", run + ".gdb", b"\x00" + plain)
            write("snapshot", run + "-zstd.gdb", b"\x00" + zstd)
            write("snapshot", run + "-fixsums.gdb", b"\x01" + plain)
            write("snapshot", run + "-zstd-fixsums.gdb", b"\x01" + zstd)
            records, keys = snapshot_records(plain)
            settings = {"compact": 0, "large": 2, "pma": 1}[run]
            write("snaprecord", run, bytes([settings, keys & 0xFF]) + records)
            aofdir = os.path.join(d, "appendonlydir")
            for name in sorted(os.listdir(aofdir)):
                data = open(os.path.join(aofdir, name), "rb").read()
                if name.endswith(".manifest"):
                    write("manifest", "server-" + run, data)
                elif name.endswith(".incr.aof") and data:
                    write("aof", "parse-" + run, b"\x00" + data)
                    write("aof", "replay-" + run, b"\x05" + data)
        finally:
            shutil.rmtree(d)
    write("aof", "replay-torn", b"\x03" + resp("SET", "a", "1") + resp("MULTI") + resp("INCR", "a")[:-3])
    write("aof", "parse-bad", b"\x00" + resp("SET", "a", "1") + b"*1\r\n$3\r\nGETX\r\n")


# ---- snaprecord: hand-made records with every compact entry encoding ------------------------
# (engine/persist/snapfmt.h, engine/ds/listpack.c). The server's seeds above
# hold what small datasets hold; these add every integer width and string
# length form, intsets of each width, and the element-by-element records.

INT_RE = re.compile(rb"-?(0|[1-9][0-9]*)")


def as_int(b):
    """gb_lp_str2int: the canonical integers the encoder stores as such."""
    if len(b) > 20 or not INT_RE.fullmatch(b) or b == b"-0":
        return None
    v = int(b)
    return v if -2**63 <= v < 2**63 else None


def varint(n):
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        if not n:
            return out + bytes([b])
        out += bytes([b | 0x80])


def svarint(v):
    return varint(((v << 1) ^ (v >> 63)) & 0xFFFFFFFFFFFFFFFF)  # zigzag


def sstr(b):
    b = b if isinstance(b, bytes) else b.encode()
    return varint(len(b)) + b


def backlen(n):
    k = 1 if n <= 127 else 2 if n < 16384 else 3 if n < 2097152 else 4
    out = bytearray(k)
    for i in range(k):
        out[k - 1 - i] = ((n >> (7 * i)) & 127) | (128 if i != k - 1 else 0)
    return bytes(out)


def lp_entry(b):
    b = b if isinstance(b, bytes) else b.encode()
    v = as_int(b)
    if v is not None:
        u = v & 0xFFFFFFFFFFFFFFFF
        if 0 <= v <= 127:
            enc = bytes([v])
        elif -4096 <= v <= 4095:
            enc = bytes([0xC0 | ((u >> 8) & 0x1F), u & 0xFF])
        else:
            for tag, width in ((0xF1, 2), (0xF2, 3), (0xF3, 4), (0xF4, 8)):
                if -(1 << (8 * width - 1)) <= v < (1 << (8 * width - 1)):
                    enc = bytes([tag]) + (u & ((1 << (8 * width)) - 1)).to_bytes(width, "little")
                    break
    elif len(b) <= 63:
        enc = bytes([0x80 | len(b)]) + b
    elif len(b) <= 4095:
        enc = bytes([0xE0 | (len(b) >> 8), len(b) & 0xFF]) + b
    else:
        enc = b"\xF0" + struct.pack("<I", len(b)) + b
    return enc + backlen(len(enc))


def listpack(items):
    body = b"".join(lp_entry(i) for i in items)
    return struct.pack("<II", 8 + len(body) + 1, len(items)) + body + b"\xFF"


def zscore(d):
    """engine/ds/zset.c score_encode: integers as text, else the 8 bytes (+'x')."""
    if d == d and abs(d) < 2.0**63 and d == int(d) and not (d == 0 and struct.pack("<d", d)[7] & 0x80):
        return str(int(d)).encode()
    raw = struct.pack("<d", d)
    return raw + b"x" if as_int(raw) is not None else raw


def intset(width, values):
    fmt = {2: "<h", 4: "<i", 8: "<q"}[width]
    return struct.pack("<BxxxI", width, len(values)) + b"".join(struct.pack(fmt, v) for v in sorted(values))


def key(t, name, value, expire=None):
    head = b"\xFD" + bytes([t, 1 if expire is not None else 0])
    return head + (struct.pack("<Q", expire) if expire is not None else b"") + sstr(name) + value


def snaprecord_seeds():
    ints = ["0", "127", "-1", "128", "4095", "-4096", "32767", "-32768", "8388607", "-8388608",
            "2147483647", "-2147483648", "9223372036854775807", "-9223372036854775808"]
    strs = ["", "a", "x" * 63, "y" * 64, "z" * 300, "007", "-0", "+1", "1.5"]
    zs = sorted([(1.0, b"a"), (2.5, b"b"), (-3.0, b"c"), (float("inf"), b"top"), (float("-inf"), b"bottom"),
                 (0.1, b"tenth"), (2.0**70, b"huge")])
    recs = {  # name: the KEY records
        "list-listpack": [key(6, "l", sstr(listpack(ints + strs)))],
        "set-listpack": [key(7, "s", sstr(listpack(["a", "b", "-5", "100000", "x" * 70])))],
        "intset-16": [key(8, "i2", sstr(intset(2, [-3, 1, 7])))],
        "intset-32": [key(8, "i4", sstr(intset(4, [-70000, 5, 70000])))],
        "intset-64": [key(8, "i8", sstr(intset(8, [-2**40, 0, 2**40])))],
        "hash-listpack": [key(9, "h", sstr(listpack(["f", "v", "n", "12", "long", "w" * 100, "", "empty"])))],
        "zset-listpack": [key(10, "z", sstr(listpack([x for sc, m in zs for x in (m, zscore(sc))])))],
        "elements": [key(2, "L", varint(3) + sstr("a") + sstr("1") + sstr("")),
                     key(3, "S", varint(2) + sstr("m") + sstr("2")),
                     key(4, "H", varint(1) + sstr("f") + sstr("v")),
                     key(5, "Z", varint(2) + sstr("m") + struct.pack("<d", 1.5) + sstr("n") + struct.pack("<d", -0.0)),
                     key(0, "str", sstr("hello")),
                     key(1, "num", svarint(-42), expire=2**62)],
        # version 5's HASH_TTL: pairs, then deadlines (field, Unix ms); one past
        # already, one far; then one naming a field the hash lacks (refused)
        "hash-ttl": [key(12, "HT", varint(3) + sstr("f") + sstr("v") + sstr("g") + sstr("12") + sstr("h") + sstr("x")
                         + varint(2) + sstr("f") + varint(1) + sstr("g") + varint(2**47))],
        "hash-ttl-nofield": [key(12, "HX", varint(1) + sstr("f") + sstr("v") + varint(1) + sstr("zz") + varint(5))],
    }
    aux = b"\xFA" + sstr("goblin-ver") + sstr("0.1.0") + b"\xFB" + varint(0) + varint(1)
    for name, keys in recs.items():
        # settings bits (fuzz_snaprecord.c): 1 pma lists, 2 tiny thresholds, 4 loading
        for settings in (0, 1, 4) if name == "elements" else (0, 2):
            body = aux + b"\xFE" + varint(0) + b"".join(keys) + b"\xFF" + varint(len(keys))
            write("snaprecord", "%s-%d" % (name, settings), bytes([settings, len(keys)]) + body)


# ---- lua: [mode] RESP3 reply, or [mode|1] script \0 data ----------------------------------------

def lua_seeds():
    # reply mode bits (fuzz_lua.c): 2 script RESP3, 4 caller RESP3, 8 deferred aggregates
    replies = {
        "status": b"+OK\r\n",
        "error-code": b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
        "error-no-code": b"-nocode\r\n",
        "integers": b"*4\r\n:0\r\n:-1\r\n:9223372036854775807\r\n:-9223372036854775808\r\n",
        "int-2p53": b"*2\r\n:9007199254740993\r\n:-9007199254740993\r\n",
        "bulk-binary": b"$6\r\na\x00b\r\nc\r\n",
        "bulk-empty-null": b"*3\r\n$0\r\n\r\n$-1\r\n*-1\r\n",
        "null-in-array": b"*3\r\n:1\r\n_\r\n:3\r\n",
        "doubles": b"*5\r\n,1.5\r\n,-0\r\n,inf\r\n,-inf\r\n,nan\r\n",
        "double-exp": b",1.7976931348623157e+308\r\n",
        "nested": b"*3\r\n:1\r\n*2\r\n$1\r\na\r\n*1\r\n*0\r\n+OK\r\n",
        "map": b"%2\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n*2\r\n:2\r\n:3\r\n",
        "map-dup-null": b"%3\r\n$1\r\nk\r\n:1\r\n$1\r\nk\r\n:2\r\n_\r\n:3\r\n",
        "map-int-keys": b"%2\r\n:1\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\ny\r\n",
        "set": b"~3\r\n$1\r\nm\r\n:5\r\n$1\r\nm\r\n",
        "verbatim": b"=8\r\ntxt:info\r\n",
        "push": b">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\nx\r\n",
        "errors-inside": b"*2\r\n-ERR inner\r\n%1\r\n+OK\r\n-X y\r\n",
        "deep": b"*1\r\n" * 31 + b":7\r\n",
        "xinfo-like": b"%2\r\n$6\r\nlength\r\n:2\r\n$7\r\nentries\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n",
    }
    for name, body in replies.items():
        for bits in (0, 2 | 4 | 8):
            write("lua", "reply-%s-%d" % (name, bits), bytes([bits]) + body)
    scripts = {
        "cjson-decode": ("return cjson.encode(cjson.decode(ARGV[1]))", b'{"a":[1,2.5,"x",null,true],"b":{"c":{}}}'),
        "cjson-deep": ("return cjson.decode(ARGV[1])", b"[" * 40 + b"1" + b"]" * 40),
        "cjson-numbers": ("local t = cjson.decode(ARGV[1]) return {t[1], t[2], t[3], tostring(t[4])}",
                          b"[1e308, -0, 123456789012345678901234567890, 1e-400]"),
        "cjson-bad": ("return {pcall(cjson.decode, ARGV[1])}", b'{"a":\x00 [1,}'),
        "cmsgpack-unpack": ("return {cmsgpack.unpack(ARGV[1])}",
                            b"\x93\x01\xa1x\x82\xa1a\xc3\xa1b\xcb\x3f\xf8\x00\x00\x00\x00\x00\x00"),
        "cmsgpack-roundtrip": ("return cmsgpack.pack(cmsgpack.unpack(ARGV[1]))", b"\xdc\x00\x03\xc0\xc2\xd3" + b"\x80" + b"\x00" * 7),
        "cmsgpack-truncated": ("return {pcall(cmsgpack.unpack, ARGV[1])}", b"\xdd\xff\xff\xff\xff\x01"),
        "cmsgpack-limit": ("return {cmsgpack.unpack_limit(ARGV[1], 2, 1)}", b"\x01\x02\x03\xa2hi"),
        "cmsgpack-str32": ("return {pcall(cmsgpack.unpack, ARGV[1])}", b"\xdb\x00\x00\x00\x05hello\xc4\x02ab\xd9\x01z"),
        "struct-unpack": ("return {struct.unpack('>i4 <I2 d s', ARGV[1])}", b"\x00\x00\x00\x05\x01\x00" + b"\x00" * 8 + b"str\x00"),
        "struct-pack": ("return struct.pack('!4 b h i8 c0', 1, -2, 3, ARGV[1])", b"blob"),
        "return-types": ("return {1, 'two', 3.99, true, false, {ok='fine'}, {err='E bad'}, {double=2.5}, ARGV[1]}", b"a\x00b"),
        "return-map-set": ("return {map={a=1, [ARGV[1]]={set={x=true}}}, set={y=true}}", b"k"),
        "return-bignum-verbatim": ("return {{big_number='12345678901234567890'}, {verbatim_string={format='txt', string=ARGV[1]}}}", b"v"),
        "return-nil-hole": ("return {1, nil, 3}", b""),
        "return-deep": ("local t = {} for i = 1, 200 do t = {t} end return t", b""),
        "return-error-newlines": ("return redis.error_reply(ARGV[1])", b"MY\r\nline\nbreak"),
        "return-status-newlines": ("return redis.status_reply(ARGV[1])", b"A\r\nB"),
        "call-hgetall-resp3": ("redis.call('hset', KEYS[1], 'f', ARGV[1], 'g', 2) redis.setresp(3) return redis.call('hgetall', KEYS[1])", b"v"),
        "call-smembers-resp3": ("redis.call('sadd', KEYS[1], ARGV[1], 'b') redis.setresp(3) local r = redis.call('smembers', KEYS[1]) return r", b"a"),
        "call-zscore-resp3": ("redis.call('zadd', KEYS[1], 1.5, 'm') redis.setresp(3) return {redis.call('zscore', KEYS[1], 'm'), redis.call('get', 'none')}", b""),
        "call-info-verbatim": ("redis.setresp(3) local r = redis.call('client', 'info') return type(r)", b""),
        "call-error": ("return redis.pcall('incr', ARGV[1], 'x')", b"k"),
        "call-lrange": ("redis.call('rpush', KEYS[1], ARGV[1], 2, 3.5) return redis.call('lrange', KEYS[1], 0, -1)", b"x"),
        "call-xrange": ("redis.call('xadd', KEYS[1], '1-0', 'f', ARGV[1]) return redis.call('xrange', KEYS[1], '-', '+')", b"v"),
        "busy-loop": ("local i = 0 while true do i = i + 1 end", b""),
        "busy-after-write": ("redis.call('set', KEYS[1], ARGV[1]) while true do end", b"v"),
        "big-table": ("local t = {} for i = 1, 20000 do t[i] = i end return t", b""),
    }
    for name, (script, data) in scripts.items():
        # bit 1: a RESP3 caller, for the scripts whose replies differ there
        bits = 3 if "resp3" in name or name.startswith("return-") else 1
        write("lua", "eval-%s" % name, bytes([bits]) + script.encode() + b"\x00" + data)


def stream_seeds():
    """fuzz_stream: every byte is a choice of the model's next step (see
    test/engine/ds/stream_model.h); seeded random bytes of a few lengths,
    and runs biased towards XDEL and XSETID (choice bytes 45-91)."""
    import random
    for n, length in enumerate((64, 600, 3000)):
        rng = random.Random(n)
        write("stream", "random-%d" % length, bytes(rng.randrange(256) for _ in range(length)))
    rng = random.Random(99)
    write("stream", "deletes-and-setids", bytes(rng.choice((rng.randrange(256), 50 + rng.randrange(40)))
                                                for _ in range(2000)))


# ---- lualib: calls [fn][nargs] and arguments [kind]... (fuzz_lualib.c) ---------------------------

LUALIB_FUNCTIONS = ["bit.tobit", "bit.tohex", "bit.bnot", "bit.band", "bit.bor", "bit.bxor", "bit.lshift",
                    "bit.rshift", "bit.arshift", "bit.rol", "bit.ror", "bit.bswap", "struct.pack", "struct.unpack",
                    "struct.size", "cmsgpack.pack", "cmsgpack.unpack", "cmsgpack.unpack_one",
                    "cmsgpack.unpack_limit", "cjson.encode", "cjson.decode", "cjson.encode_max_depth",
                    "cjson.decode_max_depth", "cjson.encode_sparse_array", "cjson.encode_number_precision",
                    "cjson.encode_invalid_numbers", "cjson.decode_invalid_numbers", "cjson.encode_keep_buffer",
                    "struct.pack", "cmsgpack.pack", "cjson.encode"]
LUALIB_EDGES = [0.0, 1.0, -1.0, 2.0 ** 31, -2.0 ** 31, 2.0 ** 31 - 1, 2.0 ** 32, -2.0 ** 32, 2.0 ** 52, 2.0 ** 53,
                2.0 ** 63, -2.0 ** 63, 2.0 ** 64, 1e300, 0.5, -0.5, 1.5, 2.5, -0.0, "inf", "-inf", "nan"]
LUALIB_FORMAT = "<>!xbBhHlLTiIfdcs0123456789 "


class L:
    """Argument encoders of fuzz_lualib.c's input."""
    nil = b"\x00"
    last = b"\x09"
    self_table = b"\x0a"
    null = b"\x0b"

    @staticmethod
    def boolean(v):
        return b"\x01" + bytes([1 if v else 0])

    @staticmethod
    def int32(v):
        return b"\x02" + struct.pack("<i", v)

    @staticmethod
    def double(v):
        return b"\x03" + struct.pack(">d", v)

    @staticmethod
    def edge(v):
        return b"\x04" + bytes([LUALIB_EDGES.index(v)])

    @staticmethod
    def string(b):
        b = b if isinstance(b, bytes) else b.encode()
        return (b"\x05" + bytes([len(b)]) + b) if len(b) < 256 else (b"\x06" + struct.pack("<H", len(b)) + b)

    @staticmethod
    def format(f):
        return b"\x07" + bytes([len(f)]) + bytes(LUALIB_FORMAT.index(c) for c in f)

    @staticmethod
    def table(values, as_map=False, keys=None):
        out = b"\x08" + bytes([len(values) | (8 if as_map else 0)])
        for i, v in enumerate(values):
            out += (keys[i] if as_map else b"") + v
        return out


def lualib_call(fn, *args):
    index = fn if isinstance(fn, int) else LUALIB_FUNCTIONS.index(fn)
    return bytes([index, len(args)]) + b"".join(args)


ROUND_TRIP_MSGPACK = bytes([len(LUALIB_FUNCTIONS)])
ROUND_TRIP_JSON = bytes([len(LUALIB_FUNCTIONS) + 1])


def lualib_seeds():
    c = lualib_call
    seeds = {
        "bit-all": b"".join(c(f, L.int32(0x12345678), L.int32(5)) for f in LUALIB_FUNCTIONS[:12]),
        "bit-edges": b"".join(c(f, L.edge(e), L.edge(2.0 ** 31)) for f in ("bit.tohex", "bit.rol", "bit.arshift")
                              for e in LUALIB_EDGES),
        "bit-strings": c("bit.band", L.string("0x10"), L.string(" 7 "), L.string("abc")),
        "struct-round": c("struct.pack", L.format(">i4 <I2 d s"), L.int32(-5), L.int32(7), L.double(2.5),
                          L.string("str")) + c("struct.unpack", L.format(">i4 <I2 d s"), L.last),
        "struct-size": c("struct.size", L.format("!4 b h i8 c3 x")) + c("struct.size", L.format("s")),
        "struct-c0": c("struct.unpack", L.format("bc0"), L.string(b"\x03abc")),
        "cmsgpack-round": c("cmsgpack.pack", L.table([L.int32(1), L.string("x"), L.double(0.1), L.boolean(True)]))
        + c("cmsgpack.unpack", L.last),
        "cmsgpack-limit": c("cmsgpack.pack", L.int32(1), L.int32(2), L.int32(3))
        + c("cmsgpack.unpack_limit", L.last, L.int32(0), L.int32(1)),
        "cmsgpack-raw": c("cmsgpack.unpack", L.string(b"\x93\x01\xa1x\x82\xa1a\xc3\xa1b\xcb\x3f\xf8" + b"\x00" * 6)),
        "cmsgpack-uint64": c("cmsgpack.unpack", L.string(b"\xcf" + b"\xff" * 8)),
        "cjson-round": c("cjson.encode", L.table([L.string("a"), L.table([L.int32(1)])], True,
                                                 [b"\x80", b"\x81"])) + c("cjson.decode", L.last),
        "cjson-settings": c("cjson.encode_sparse_array", L.boolean(True), L.int32(1), L.int32(1))
        + c("cjson.encode", L.table([L.int32(1)], True, [b"\x05"])),
        "cjson-decode": c("cjson.decode", L.string(b'{"a":[1,2.5,"x",null,true],"b":{"c":{}}}')),
        "self-table": c("cjson.encode", L.self_table) + c("cmsgpack.pack", L.self_table),
        "round-trips": ROUND_TRIP_MSGPACK + L.table([L.edge(2.0 ** 63), L.string("s")], True, [b"\x81", b"\x01"])
        + ROUND_TRIP_JSON + L.table([L.edge(-0.0), L.null]),
    }
    for name, data in seeds.items():
        write("lualib", name, data)


def lualib_regressions():
    """One input per known CVE of the script libraries (docs/fuzzing.md)."""
    c = lualib_call
    regressions = {
        # bit.tohex's count of -2^31: LuaBitOp 1.0.2 negated it and wrote past an 8-byte buffer
        "cve-2024-31449-bit-tohex-int-min": c("bit.tohex", L.int32(1), L.edge(-2.0 ** 31))
        + c("bit.tohex", L.int32(1), L.edge(2.0 ** 31)) + c("bit.tohex", L.int32(1), L.int32(-2 ** 31)),
        # struct's bounds check overflowed (pos + size) and negative offsets read before the data
        "cve-2018-11219-struct-bounds": c("struct.unpack", L.format("f"), L.string("xxxxxxxxxxxxx"), L.int32(-3))
        + c("struct.unpack", L.format("c9"), L.string("abc"), L.int32(2 ** 31 - 1))
        + c("struct.unpack", L.format("!8d"), L.string("a" * 16), L.int32(-1)),
        # struct's getnum wrapped a long count to a negative size
        "cve-2020-14147-struct-getnum": c("struct.size", L.format("i2147483648"))
        + c("struct.pack", L.format("c2147483647"), L.string("abc"))
        + c("struct.unpack", L.format("c2147483647"), L.string("abc"))
        + c("struct.size", L.format("c2147483647c2147483647")),
        # cmsgpack pushed results without growing Lua's stack
        "cve-2018-11218-cmsgpack-stack": c("cmsgpack.unpack", L.string(b"\x01" * 9000))
        + c("cmsgpack.unpack", L.string(b"\x91" * 5000 + b"\x01"))
        + c("cmsgpack.unpack", L.string(b"\x81\x01" * 5000 + b"\x01")),
        # nested values deeper than Lua's stack (reply conversions: fuzz_lua's reply mode; here the libraries)
        "cve-2021-32626-lua-stack": c("cjson.encode_max_depth", L.int32(2 ** 30)) + c("cjson.encode", L.self_table)
        + c("cmsgpack.pack", L.self_table) + c("cjson.decode_max_depth", L.int32(2 ** 30))
        + c("cjson.decode", L.string(b"[" * 9000)),
        # int-sized lengths in cjson's buffer and cmsgpack's: string sizes around the encodings' limits (the
        # 358 MB input itself is test_scripting_hardening.py's CjsonGuard)
        "cve-2022-24834-lengths": c("cjson.encode", L.string(b'"' * 65535)) + c("cmsgpack.pack", L.string(b"x" * 65535))
        + c("cmsgpack.unpack", L.string(b"\xdb\xff\xff\xff\xff")) + c("cmsgpack.unpack", L.string(b"\xdd\xff\xff\xff\xff"))
        + c("cjson.encode_sparse_array", L.boolean(False), L.int32(0))
        + c("cjson.encode", L.table([L.int32(1)], True, [b"\x0f"])),
        # cmsgpack.unpack_limit(s, 0, 0), uint64 >= 2^63, bin, nil map keys (Redis's results)
        "redis-cmsgpack-corners": c("cmsgpack.unpack_limit", L.string(b"\x01\x02"), L.int32(0), L.int32(0))
        + c("cmsgpack.unpack", L.string(b"\xcf\x80" + b"\x00" * 7)) + c("cmsgpack.unpack", L.string(b"\xc4\x05\x01"))
        + c("cmsgpack.unpack", L.string(b"\x81\xc0\x01")),
    }
    d = os.path.join(HERE, "regressions", "lualib")
    os.makedirs(d, exist_ok=True)
    for name, data in regressions.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


# ---- rdbobject: Redis's older compact encodings, which 7.0 reads but no longer writes ---------

def rdb_len(n):
    return bytes([n]) if n < 64 else bytes([0x40 | n >> 8, n & 0xFF])


def rdb_str(b):
    return rdb_len(len(b)) + b


def ziplist(entries):
    """Strings and small ints (immediate 0..12, int8, int16) as Redis 6 wrote them."""
    body, prev, tail = b"", 0, 10
    for e in entries:
        if isinstance(e, int):
            enc = bytes([0xF1 + e]) if 0 <= e <= 12 else (b"\xfe" + struct.pack("<b", e) if -128 <= e < 128
                                                          else b"\xc0" + struct.pack("<h", e))
        else:
            enc = bytes([len(e)]) + e
        tail = 10 + len(body)
        entry = bytes([prev]) + enc
        body += entry
        prev = len(entry)
    return struct.pack("<IIH", 10 + len(body) + 1, tail, len(entries)) + body + b"\xff"


def rdbfile_seeds():
    """redis-server 7.0's own dump.rdb of a small mixed dataset (if redis-server
    is here), and a hand-built version 9 file of Redis 6's encodings."""
    body = (b"\xfa" + rdb_str(b"redis-ver") + rdb_str(b"6.2.14") + b"\xfe\x00\xfb\x03\x01"
            + b"\x0a" + rdb_str(b"l") + rdb_str(ziplist([b"a", 5, -300]))
            + b"\xfc" + struct.pack("<Q", 4102444800000)
            + b"\x0d" + rdb_str(b"h") + rdb_str(ziplist([b"f", b"v"]))
            + b"\xfe\x01\x00" + rdb_str(b"s") + rdb_str(b"v") + b"\xff")
    write("rdbfile", "redis6", b"\x01" + b"REDIS0009" + body + b"\x00" * 8)
    redis = shutil.which("redis-server")
    if not redis:
        print("redis-server not found: rdbfile gets only the hand-built seed")
        return
    d = tempfile.mkdtemp(prefix="gb-seeds-")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([redis, "--port", str(port), "--dir", d, "--save", "", "--appendonly", "no"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                c = socket.create_connection(("127.0.0.1", port))
                break
            except OSError:
                time.sleep(0.05)
        cmds = [("SET", "int", "12"), ("SET", "s", "hello"), ("SET", "t", "v", "PX", "999999999"),
                ("RPUSH", "l", "a", "1"), ("SADD", "is", "1", "2"), ("SADD", "ss", "a", "b"),
                ("ZADD", "z", "1", "a"), ("HSET", "h", "f", "v"), ("XADD", "x", "1-1", "f", "v"),
                ("XGROUP", "CREATE", "x", "g", "0"), ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "x", ">"),
                ("SELECT", "3"), ("SET", "other", "1"),
                ("FUNCTION", "LOAD", "#!lua name=l\nredis.register_function('f', function() return 1 end)"),
                ("SAVE",)]
        for cmd in cmds:
            c.sendall(resp(*cmd))
            time.sleep(0.02)
        time.sleep(0.3)
        c.close()
        with open(os.path.join(d, "dump.rdb"), "rb") as f:
            data = f.read()
        write("rdbfile", "redis7", b"\x00" + data)
        write("rdbfile", "redis7-fixsum", b"\x01" + data)
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(d, ignore_errors=True)


def rdbobject_seeds():
    old = {
        "list-ziplist": b"\x0a" + rdb_str(ziplist([b"a", 5, -300, b"xyz"])),
        "list-quicklist1": b"\x0e" + rdb_len(2) + rdb_str(ziplist([b"a", 1])) + rdb_str(ziplist([b"b" * 30])),
        "hash-ziplist": b"\x0d" + rdb_str(ziplist([b"f1", b"v1", b"f2", 17])),
        "hash-zipmap": b"\x09" + rdb_str(b"\x01\x01a\x01\x00b\xff"),
        "zset-ziplist": b"\x0c" + rdb_str(ziplist([b"m1", 1, b"m2", b"2.5"])),
        "zset-text": b"\x03" + rdb_len(2) + rdb_str(b"a") + b"\x031.5" + rdb_str(b"b") + b"\xfe",
        "set-intset": b"\x0b" + rdb_str(struct.pack("<IIhhh", 2, 3, -7, 1, 5)),
        "set-listpack": b"\x14" + rdb_str(b"\x0d\x00\x00\x00\x02\x00\x81a\x02\x81b\x02\xff"),
    }
    for name, body in old.items():
        write("rdbobject", name, b"\x00" + body)
        write("rdbobject", name + "-tiny", b"\x01" + body)

# ---- hll: [limit selector][element seed] HLL string ----------------------------------------

def hll_seeds():
    """HLL strings as Redis writes them (sparse built from random runs,
    dense) and the corruptions the differential test also sends."""
    import random
    rng = random.Random(28)

    def header(enc, card=0, stale=True):
        c = bytearray(struct.pack("<Q", card))
        if stale:
            c[7] |= 0x80
        return b"HYLL" + bytes([enc]) + b"\0\0\0" + bytes(c)

    def xzero(n):
        return bytes([0x40 | ((n - 1) >> 8), (n - 1) & 0xff])

    def val(v, n):
        return bytes([0x80 | ((v - 1) << 2) | (n - 1)])

    def sparse(nvals):
        body, left = b"", 16384
        for _ in range(nvals):
            gap = rng.randint(0, min(left - 4, 2 * 16384 // (nvals + 1)))
            if gap > 64:
                body += xzero(gap)
            elif gap:
                body += bytes([gap - 1])
            n = rng.randint(1, 4)
            body += val(rng.randint(1, 32), n)
            left -= gap + n
        while left:
            n = min(left, 16384)
            body += xzero(n) if n > 64 else bytes([n - 1])
            left -= n
        return header(1) + body

    seeds = {
        "empty-sparse": header(1) + xzero(16384),
        "redis-abc": header(1) + b"`\xf3\x80P\xb1\x84K\xfb\x80BZ",
        "sparse-10": sparse(10),
        "sparse-300": sparse(300),
        "sparse-cached": header(1, 1234, False) + xzero(16384),
        "dense-zero": header(0) + bytes(12288),
        "dense-random": header(0) + bytes(rng.randrange(256) for _ in range(12288)),
        "sparse-too-few": header(1) + xzero(16383),
        "sparse-too-many": header(1) + xzero(16384) * 3,
        "sparse-val-crosses": header(1) + xzero(16382) + val(5, 4),
        "sparse-cut-xzero": header(1) + xzero(255) + b"\x7f",
        "bad-magic": b"HYLX" + header(1)[4:] + xzero(16384),
        "bad-encoding": header(2) + xzero(16384),
        "short": b"HYLL\x01",
    }
    for i, (name, data) in enumerate(sorted(seeds.items())):
        write("hll", name, bytes([i % 5, (i * 37) % 256]) + data)


# ---- tls: [auth][seed u16] what a client sends to tls-port ------------------------------

def tls_seeds():
    """Real first flights of Python's ssl client (TLS 1.3, 1.2 only), and
    them cut, doubled or followed by garbage; some through the handshake
    thread's call."""
    import ssl

    def hello(maximum):
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        ctx.maximum_version = maximum
        inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
        obj = ctx.wrap_bio(inc, out, server_side=False, server_hostname="localhost")
        try:
            obj.do_handshake()
        except ssl.SSLWantReadError:
            pass
        return out.read()
    h13 = hello(ssl.TLSVersion.TLSv1_3)
    h12 = hello(ssl.TLSVersion.TLSv1_2)
    seeds = {
        "hello-tls13": (1, 1, h13),
        "hello-tls12": (1, 5, h12),
        "hello-tls13-no-auth": (0, 9, h13),
        "hello-tls13-optional": (2, 3, h13),
        "hello-cut": (1, 7, h13[: len(h13) // 2]),
        "hello-twice": (1, 11, h13 + h13),
        "hello-then-garbage": (1, 13, h12 + b"\x17\x03\x03\x00\x05hello" + b"PING\r\n"),
        "plain-resp": (1, 1, b"*1\r\n$4\r\nPING\r\n"),
        "huge-record-length": (1, 1, b"\x16\x03\x01\xff\xff" + b"\x01" * 64),
        "alert": (1, 1, b"\x15\x03\x03\x00\x02\x02\x28"),
    }
    for name in ("hello-tls13", "hello-twice", "hello-then-garbage"):  # through gb_tls_handshake (mode bit 2)
        auth, seed, body = seeds[name]
        seeds[name + "-handshake-call"] = (auth | 4, seed, body)
    for name, (auth, seed, body) in sorted(seeds.items()):
        write("tls", name, bytes([auth]) + struct.pack("<H", seed) + body)


# ---- luastdlib: [op][a][b][len]subject[len]pattern rest (fuzz_luastdlib.c) ----------------------
def luastdlib_call(op, a, b, subject, pattern=b"", rest=b""):
    return bytes([op, a & 0xFF, b & 0xFF, len(subject)]) + subject + bytes([len(pattern)]) + pattern + rest


def luastdlib_seeds():
    c = luastdlib_call
    text = b"hello world, key:123 = [value] (nested (parens)) %s 0x1F"
    seeds = {
        "find-class": c(0, 1, -1, text, b"%d+"),
        "find-init-negative": c(0, -10, -1, text, b"%a+"),
        "find-plain": c(1, 2, -1, text, b"(n"),
        "match-captures": c(2, 1, -1, text, b"(%w+):(%d+)"),
        "match-position-capture": c(2, 1, -1, text, b"()=()"),
        "match-balanced": c(2, 1, -1, text, b"%b()"),
        "match-frontier": c(2, 1, -1, text, b"%f[%w]%w+"),
        "match-back-reference": c(2, 1, -1, b"abcabc", b"(abc)%1"),
        "match-set-ranges": c(2, 1, -1, text, b"[%a_][%w_]*"),
        "match-anchored": c(2, 1, -1, text, b"^hello"),
        "match-lazy": c(2, 1, -1, text, b"%[(.-)%]"),
        "match-malformed": c(2, 1, -1, text, b"[a"),
        "match-bad-capture": c(2, 1, -1, text, b"%2"),
        "match-unfinished": c(2, 1, -1, text, b"(a"),
        "match-ends-with-percent": c(2, 1, -1, text, b"a%"),
        "match-zero-byte": c(2, 1, -1, b"a\x00b", b"a\x00c"),
        "match-optional-run": c(2, 1, -1, b"a" * 30, b"a?" * 30 + b"a" * 30),
        "gmatch-words": c(3, 1, -1, text, b"%a+"),
        "gmatch-empty": c(3, 1, -1, text, b"x*"),
        "gmatch-anchor-literal": c(3, 1, -1, b"^a^a", b"^a"),
        "gsub-string": c(4, 1, -1, text, b"(%w+)", b"<%1>"),
        "gsub-count": c(4, 1, 2, text, b"o", b"0"),
        "gsub-whole-match": c(4, 1, -1, text, b"%d", b"%0%0"),
        "gsub-percent-at-end": c(4, 1, -1, text, b"l", b"x%"),
        "gsub-bad-index": c(4, 1, -1, text, b"l", b"%9"),
        "gsub-table": c(5, 1, -1, b"abcxyzd", b"%a", b"aAbB"),
        "gsub-function": c(6, 1, -1, b"a b c d e", b"(%a)( ?)", b"-"),
        "sort-numbers": c(7, 0, -1, bytes(range(200, 0, -3))),
        "sort-strings": c(7, 1, -1, b"the quick brown fox jumps over the lazy dog"),
        "sort-mixed": c(7, 2, -1, bytes(range(0, 64))),
        "sort-logged": c(8, 1, 0, b"sorting these letters"),
        "sort-inconsistent": c(8, 1, 1, bytes(range(0, 90))),
        "insert-middle": c(9, 3, 0, b"abcdef"),
        "insert-far": c(9, 100, 0, b"abc"),
        "insert-append": c(9, 1, -1, b"abc"),
        "remove-first": c(10, 1, 0, b"abcdef"),
        "remove-last": c(10, 0, -1, b"abcdef"),
        "remove-empty": c(10, 0, -1, b""),
        "concat-range": c(11, 2, 5, b"abcdefgh", b"", b", "),
        "concat-bad-value": c(11, 0, -1, b"abcdefgh", b"", b"-"),
        "strings": c(12, 5, -1, b"Hello, World"),
    }
    for name, data in sorted(seeds.items()):
        write("luastdlib", name, data)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    resp_seeds()
    sbe_seeds()
    ring_seeds()
    config_seeds()
    manifest_seeds()
    snaprecord_seeds()
    lua_seeds()
    stream_seeds()
    lualib_seeds()
    lualib_regressions()
    luastdlib_seeds()
    rdbobject_seeds()
    rdbfile_seeds()
    hll_seeds()
    tls_seeds()
    persistence_seeds(os.path.abspath(sys.argv[1]))


if __name__ == "__main__":
    main()
