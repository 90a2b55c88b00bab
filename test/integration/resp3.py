"""A RESP3 connection for tests: every reply parsed into a typed tree and
kept as raw bytes (test_resp3.py, test_client_cmds.py).

A reply is a Reply(kind, value, raw):
  kind  one of + - : $ * % ~ , _ # = ( > |   (the RESP3 type byte)
  value bytes for + - $ = ( (for "=" the text after "txt:"), int for ":",
        bytes for "," (the double's text), None for "_" and for "$-1"/"*-1",
        True/False for "#", a list of Replies for "*" "~" ">", a list of
        (key, value) Reply pairs for "%".
"""

import socket
import time

import gbtest
from gbtest import encode


class Reply:
    __slots__ = ("kind", "value", "raw")

    def __init__(self, kind, value, raw):
        self.kind, self.value, self.raw = kind, value, raw

    def __repr__(self):
        return "Reply(%r, %r)" % (self.kind, self.value)


class Conn:
    def __init__(self, target, tcp=False, timeout=None, proto=3):
        self.timeout = timeout or 30 * gbtest.SLOW
        if tcp or not target.sock:
            fam, addr = socket.AF_INET, ("127.0.0.1", target.port)
        else:
            fam, addr = socket.AF_UNIX, target.sock
        self.s = socket.socket(fam, socket.SOCK_STREAM)
        self.s.settimeout(self.timeout)
        self.s.connect(addr)
        self.buf = bytearray()
        self.pos = 0
        self.hello = None
        if proto == 3:
            self.hello = self.call(b"HELLO", b"3")

    def close(self):
        try:
            self.s.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, *args):
        self.s.sendall(encode(*args))

    def call(self, *args):
        self.send(*args)
        return self.read()

    def _fill(self):
        d = self.s.recv(65536)
        if not d:
            raise EOFError("connection closed by server")
        self.buf += d

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n", self.pos)
            if i >= 0:
                line = bytes(self.buf[self.pos:i])
                self.pos = i + 2
                return line
            self._fill()

    def _bytes(self, n):
        while len(self.buf) - self.pos < n + 2:
            self._fill()
        d = bytes(self.buf[self.pos:self.pos + n])
        if self.buf[self.pos + n:self.pos + n + 2] != b"\r\n":
            raise gbtest.ProtocolViolation("bulk not followed by CRLF")
        self.pos += n + 2
        return d

    def _parse(self):
        start = self.pos
        line = self._line()
        t, rest = chr(line[0]), line[1:]
        if t in "+-(":
            v = rest
        elif t == ":":
            v = int(rest)
        elif t == ",":
            v = rest
        elif t == "_":
            v = None
        elif t == "#":
            v = rest == b"t"
        elif t in "$=!":
            n = int(rest)
            if n < 0:
                v = None
            else:
                v = self._bytes(n)
                if t == "=":
                    if v[3:4] != b":":
                        raise gbtest.ProtocolViolation("verbatim string without a format: %r" % v)
                    v = v[4:]
        elif t in "*~>":
            n = int(rest)
            v = None if n < 0 else [self._parse() for _ in range(n)]
        elif t in "%|":
            n = int(rest)
            v = [(self._parse(), self._parse()) for _ in range(n)]
        else:
            raise gbtest.ProtocolViolation("unknown RESP3 type %r" % line)
        return Reply(t, v, bytes(self.buf[start:self.pos]))

    def read(self):
        r = self._parse()
        if self.pos > 65536:
            del self.buf[:self.pos]
            self.pos = 0
        return r

    def pending(self, wait=0.2):
        """Whether more bytes arrive within wait seconds (a push, or a reply
        that should not be there)."""
        if len(self.buf) > self.pos:
            return True
        self.s.settimeout(wait)
        try:
            d = self.s.recv(65536)
        except (socket.timeout, BlockingIOError):
            return False
        finally:
            self.s.settimeout(self.timeout)
        if not d:
            raise EOFError("connection closed by server")
        self.buf += d
        return True


def plain(r):
    """A Reply as plain Python values, types kept apart where RESP3 does:
    ('map', sorted pairs) and ('set', sorted members) compare regardless of
    order, doubles as floats (numerically: Redis 7.0 prints "%.17g",
    goblin-core the shortest text), errors as ('err', text)."""
    k, v = r.kind, r.value
    if k == "-":
        return ("err", v)
    if k == "+":
        return ("status", v)
    if k == ",":
        f = float(v)
        return ("double", "nan" if f != f else f)
    if k in "$=":
        return (k, v)
    if k in ":#(":
        return v
    if k == "_":
        return None
    if k in "*>":
        return None if v is None else (k, [plain(x) for x in v])
    if k == "~":
        return ("set", sorted((plain(x) for x in v), key=repr))
    if k == "%":
        return ("map", sorted(((plain(a), plain(b)) for a, b in v), key=repr))
    raise AssertionError(k)


def shape(r):
    """The types of a Reply, its aggregates' sizes, no values: what RESP3
    promises about a reply whose content is random."""
    k, v = r.kind, r.value
    if k in "*~>":
        return (k, None if v is None else len(v))
    if k == "%":
        return (k, len(v))
    return k


def wait_for(pred, timeout):
    return gbtest.wait_until(pred, timeout * gbtest.SLOW)


def sleep_a_bit(s):
    time.sleep(s * gbtest.SLOW)


class _Bytes(Conn):
    """A parser over bytes already read (no socket): parse_all's reader."""

    def __init__(self, data):
        self.buf = bytearray(data)
        self.pos = 0

    def _fill(self):
        raise gbtest.ProtocolViolation("truncated reply: %r" % bytes(self.buf[-80:]))


def parse_all(data):
    """Every reply in data (a captured byte stream), as Replies."""
    p = _Bytes(data)
    out = []
    while p.pos < len(p.buf):
        out.append(p._parse())
    return out
