"""Model-based test of streams (issue 17): random XADD / XDEL / XTRIM /
XRANGE / XREVRANGE / XLEN and consumer-group operations (XGROUP CREATE,
SETID, DESTROY, CREATECONSUMER, DELCONSUMER, XREADGROUP new and history,
XACK, XPENDING, XCLAIM, XAUTOCLAIM) checked after every step against a
plain Python model of a stream: a sorted list of entries, a last ID,
entries-added and max-deleted ID, and per group a last-delivered ID, a
pending list and consumers.

Node sizes are set small and random per seed (stream-node-max-entries /
-bytes), so entries cross node boundaries all the time and approximate
trimming, which removes whole nodes, is held to what it may do: keep at
least the target, remove only a prefix, never more than exact trimming.

The same seeds also run against redis-server 7.0, which checks the model
itself (skipped, with the reason, when redis-server 7.0 is missing).

Environment: GOBLIN_STREAMS_MODEL_SEEDS (default 12),
GOBLIN_STREAMS_MODEL_OPS (default 1500).
"""

import bisect
import os
import random
import unittest

import gbtest
from gbtest import Err, Raw, Server

SEEDS = int(os.environ.get("GOBLIN_STREAMS_MODEL_SEEDS", "12"))
OPS = int(os.environ.get("GOBLIN_STREAMS_MODEL_OPS", "1500"))


def fmt_id(i):
    return b"%d-%d" % i


def parse_id(b):
    ms, seq = b.split(b"-")
    return (int(ms), int(seq))


class Group:
    def __init__(self, last):
        self.last = last
        self.pel = {}  # id -> [consumer, delivery count]
        self.consumers = {}  # name -> set of ids


class Model:
    def __init__(self):
        self.ids = []  # sorted
        self.fields = {}  # id -> [f, v, ...]
        self.last = (0, 0)
        self.added = 0
        self.max_deleted = (0, 0)
        self.groups = {}
        self.exists = False

    def add(self, i, fv):
        bisect.insort(self.ids, i)
        self.fields[i] = fv
        self.last = i
        self.added += 1
        self.exists = True

    def delete(self, i):
        if i not in self.fields:
            return 0
        self.ids.remove(i)
        del self.fields[i]
        self.max_deleted = max(self.max_deleted, i)
        return 1

    def trim_to(self, keep_from):
        """Removes the entries before index keep_from."""
        for i in self.ids[:keep_from]:
            del self.fields[i]
        removed = keep_from
        self.ids = self.ids[keep_from:]
        return removed

    def range(self, lo, hi, count=None, rev=False):
        a = bisect.bisect_left(self.ids, lo)
        b = bisect.bisect_right(self.ids, hi)
        sel = self.ids[a:b]
        if rev:
            sel = sel[::-1]
        if count is not None:
            sel = sel[:count]
        return [[fmt_id(i), self.fields[i]] for i in sel]

    def consumer(self, g, name):
        return g.consumers.setdefault(name, set())


class Run:
    def __init__(self, conn, seed):
        self.c = conn
        self.rng = random.Random(seed)
        self.m = Model()
        self.seed = seed
        self.step = 0
        self.hist = []

    def call(self, *args):
        self.hist.append(b" ".join(a if isinstance(a, bytes) else str(a).encode() for a in args))
        return self.c.call(*args)

    def expect(self, got, want, what):
        if got != want:
            raise AssertionError("seed %d step %d %s:\n  server: %r\n  model:  %r\n  recent:\n    %s"
                                 % (self.seed, self.step, what, got, want,
                                    "\n    ".join(h.decode(errors="replace") for h in self.hist[-12:])))

    # ---- generators ----

    def rand_ms(self):
        return self.rng.choice([self.m.last[0], self.m.last[0] + 1, self.m.last[0] + self.rng.randint(0, 50),
                                self.rng.randint(0, self.m.last[0] + 5)])

    def any_id(self):
        if self.m.ids and self.rng.random() < 0.7:
            i = self.rng.choice(self.m.ids)
            return i if self.rng.random() < 0.8 else (i[0], i[1] + self.rng.choice([-1, 1]) if i[1] else 1)
        return (self.rng.randint(0, self.m.last[0] + 2), self.rng.randint(0, 3))

    def fv(self):
        if self.rng.random() < 0.6:
            return [b"name", b"job%d" % self.rng.randint(0, 99), b"n", b"%d" % self.rng.randint(-5, 10 ** 6)]
        out = []
        for _ in range(self.rng.randint(1, 4)):
            out += [self.rng.choice([b"a", b"b", b"c", b"long" * 20]),
                    self.rng.choice([b"1", b"x", b"", b"v" * self.rng.randint(0, 300), b"-42"])]
        return out

    # ---- operations ----

    def op_xadd(self):
        m, fv = self.m, self.fv()
        if self.rng.random() < 0.3:  # "<ms>-*": the next sequence in the last ID's ms, else 0
            ms = self.rand_ms()
            arg, want = b"%d-*" % ms, (ms, m.last[1] + 1) if ms == m.last[0] else (ms, 0)
        else:
            want = (self.rand_ms(), self.rng.randint(0, 3))
            arg = fmt_id(want)
        r = self.call("XADD", "s", arg, *fv)
        if want <= m.last or want == (0, 0):
            self.expect(isinstance(r, Err), True, "XADD %s refused" % arg.decode())
            return
        self.expect(r, fmt_id(want), "XADD %s" % arg.decode())
        m.add(want, fv)

    def op_xdel(self):
        ids = [self.any_id() for _ in range(self.rng.randint(1, 4))]
        r = self.call("XDEL", "s", *[fmt_id(i) for i in ids])
        n = sum(self.m.delete(i) for i in ids)
        self.expect(r, n, "XDEL")

    def op_xtrim(self):
        m = self.m
        approx = self.rng.random() < 0.4
        if self.rng.random() < 0.5:
            n = self.rng.randint(0, len(m.ids) + 2)
            args, exact_from = ["MAXLEN", "~" if approx else "=", n], max(0, len(m.ids) - n)
        else:
            lo = self.any_id()
            args, exact_from = ["MINID", "~" if approx else "=", fmt_id(lo)], bisect.bisect_left(m.ids, lo)
        r = self.call("XTRIM", "s", *args)
        if not approx:
            self.expect(r, m.trim_to(exact_from), "XTRIM exact")
            return
        # Whole nodes from the head: at most the exact count, a prefix.
        self.expect(isinstance(r, int) and 0 <= r <= exact_from, True, "XTRIM ~ removes at most %d" % exact_from)
        m.trim_to(r)
        self.expect(self.call("XRANGE", "s", "-", "+", "COUNT", 1)[:1], m.range((0, 0), (2 ** 64, 0), 1),
                    "XTRIM ~ removed a prefix")

    def op_xrange(self):
        a, b = sorted([self.any_id(), self.any_id()])
        count = self.rng.choice([None, 1, 3, 50])
        rev = self.rng.random() < 0.4
        lo_excl = self.rng.random() < 0.2
        lo_arg = (b"(" if lo_excl else b"") + fmt_id(a)
        args = ["XREVRANGE", "s", fmt_id(b), lo_arg] if rev else ["XRANGE", "s", lo_arg, fmt_id(b)]
        if count is not None:
            args += ["COUNT", count]
        lo = (a[0], a[1] + 1) if lo_excl else a
        r = self.call(*args)
        if lo_excl and a[1] == 2 ** 64 - 1:
            return
        self.expect(r, self.m.range(lo, b, count, rev), " ".join(map(str, args)))

    def op_xlen(self):
        self.expect(self.call("XLEN", "s"), len(self.m.ids), "XLEN")

    def op_group(self):
        m, name = self.m, self.rng.choice([b"g1", b"g2"])
        r = self.rng.random()
        if r < 0.4:
            start = self.rng.choice([b"0", b"$", fmt_id(self.any_id())])
            res = self.call("XGROUP", "CREATE", "s", name, start, "MKSTREAM")
            if name in m.groups:
                self.expect(res, Err(b"BUSYGROUP Consumer Group name already exists"), "XGROUP CREATE twice")
                return
            self.expect(res, b"OK", "XGROUP CREATE")
            m.exists = True
            m.groups[name] = Group(m.last if start == b"$" else (0, 0) if start == b"0" else parse_id(start))
        elif name not in m.groups:
            return
        elif r < 0.55:
            start = self.rng.choice([b"0", b"$", fmt_id(self.any_id())])
            self.expect(self.call("XGROUP", "SETID", "s", name, start), b"OK", "XGROUP SETID")
            m.groups[name].last = m.last if start == b"$" else (0, 0) if start == b"0" else parse_id(start)
        elif r < 0.6:
            self.expect(self.call("XGROUP", "DESTROY", "s", name), 1, "XGROUP DESTROY")
            del m.groups[name]
        elif r < 0.75:
            cname = self.rng.choice([b"alice", b"bob", b"carol"])
            g = m.groups[name]
            self.expect(self.call("XGROUP", "CREATECONSUMER", "s", name, cname), 0 if cname in g.consumers else 1,
                        "XGROUP CREATECONSUMER")
            m.consumer(g, cname)
        else:
            cname = self.rng.choice([b"alice", b"bob", b"carol"])
            g = m.groups[name]
            owned = g.consumers.pop(cname, None)
            for i in owned or ():
                del g.pel[i]
            self.expect(self.call("XGROUP", "DELCONSUMER", "s", name, cname), len(owned or ()), "XGROUP DELCONSUMER")

    def op_readgroup(self):
        m = self.m
        if not m.groups:
            return
        name = self.rng.choice(sorted(m.groups))
        g, cname = m.groups[name], self.rng.choice([b"alice", b"bob", b"carol"])
        count = self.rng.choice([1, 2, 5, 100])
        if self.rng.random() < 0.7:
            r = self.call("XREADGROUP", "GROUP", name, cname, "COUNT", count, "STREAMS", "s", ">")
            sel = [i for i in m.ids if i > g.last][:count]
            c = m.consumer(g, cname) if sel else None  # nothing to read: no consumer made
            for i in sel:
                if i in g.pel:
                    g.consumers[g.pel[i][0]].discard(i)
                g.pel[i] = [cname, 1]
                c.add(i)
                g.last = i
            want = [[b"s", [[fmt_id(i), m.fields[i]] for i in sel]]] if sel else None
            self.expect(r, want, "XREADGROUP >")
        else:
            r = self.call("XREADGROUP", "GROUP", name, cname, "COUNT", count, "STREAMS", "s", "0")
            c = m.consumer(g, cname)
            sel = sorted(c)[:count]
            for i in sel:  # delivered again (an entry deleted since is only named)
                g.pel[i][1] += i in m.fields
            self.expect(r, [[b"s", [[fmt_id(i), m.fields.get(i)] for i in sel]]], "XREADGROUP history")

    def op_xack(self):
        m = self.m
        if not m.groups:
            return
        name = self.rng.choice(sorted(m.groups))
        g = m.groups[name]
        pool = sorted(g.pel) + [self.any_id()]
        ids = list({self.rng.choice(pool) for _ in range(self.rng.randint(1, 3))})
        n = 0
        for i in ids:
            if i in g.pel:
                g.consumers[g.pel.pop(i)[0]].discard(i)
                n += 1
        self.expect(self.call("XACK", "s", name, *[fmt_id(i) for i in ids]), n, "XACK")

    def op_xpending(self):
        m = self.m
        if not m.groups:
            return
        name = self.rng.choice(sorted(m.groups))
        g = m.groups[name]
        if self.rng.random() < 0.5:
            ids = sorted(g.pel)
            if not ids:
                want = [0, None, None, None]
            else:
                per = {}
                for i in ids:
                    per[g.pel[i][0]] = per.get(g.pel[i][0], 0) + 1
                want = [len(ids), fmt_id(ids[0]), fmt_id(ids[-1]), [[k, b"%d" % v] for k, v in sorted(per.items())]]
            self.expect(self.call("XPENDING", "s", name), want, "XPENDING summary")
            return
        cname = self.rng.choice([None, b"alice", b"bob"])
        args = ["XPENDING", "s", name, "-", "+", 1000] + ([cname] if cname else [])
        got = [[e[0], e[1], e[3]] for e in self.call(*args)]
        want = [[fmt_id(i), g.pel[i][0], g.pel[i][1]] for i in sorted(g.pel) if cname is None or g.pel[i][0] == cname]
        self.expect(got, want, "XPENDING extended")

    def claim(self, g, i, cname, justid):
        old = g.pel[i][0]
        g.consumers[old].discard(i)
        self.m.consumer(g, cname).add(i)
        g.pel[i] = [cname, g.pel[i][1] + (0 if justid else 1)]

    def op_xclaim(self):
        m = self.m
        if not m.groups:
            return
        name = self.rng.choice(sorted(m.groups))
        g, cname = m.groups[name], self.rng.choice([b"alice", b"bob", b"carol"])
        pool = sorted(g.pel) + [self.any_id()]
        ids = sorted({self.rng.choice(pool) for _ in range(self.rng.randint(1, 3))})
        justid = self.rng.random() < 0.5
        r = self.call("XCLAIM", "s", name, cname, 0, *[fmt_id(i) for i in ids], *(["JUSTID"] if justid else []))
        want = []  # the consumer is made at the first entry it claims
        for i in ids:
            if i not in g.pel:
                continue
            if i not in m.fields:  # deleted from the stream: dropped from the pending list
                g.consumers[g.pel.pop(i)[0]].discard(i)
                continue
            self.claim(g, i, cname, justid)
            want.append(fmt_id(i) if justid else [fmt_id(i), m.fields[i]])
        self.expect(r, want, "XCLAIM")

    def op_xautoclaim(self):
        m = self.m
        if not m.groups:
            return
        name = self.rng.choice(sorted(m.groups))
        g, cname = m.groups[name], self.rng.choice([b"alice", b"bob", b"carol"])
        start = self.rng.choice([(0, 0)] + sorted(g.pel)[:3])
        count = self.rng.choice([1, 2, 10])
        justid = self.rng.random() < 0.3
        r = self.call("XAUTOCLAIM", "s", name, cname, 0, fmt_id(start), "COUNT", count,
                      *(["JUSTID"] if justid else []))
        scan = [i for i in sorted(g.pel) if i >= start]
        claimed, deleted, left = [], [], count
        k = 0
        while k < len(scan) and left:
            i = scan[k]
            k += 1
            left -= 1
            if i not in m.fields:
                g.consumers[g.pel.pop(i)[0]].discard(i)
                deleted.append(fmt_id(i))
                continue
            self.claim(g, i, cname, justid)
            claimed.append(fmt_id(i) if justid else [fmt_id(i), m.fields[i]])
        cursor = fmt_id(scan[k]) if k < len(scan) else b"0-0"
        self.expect(r, [cursor, claimed, deleted], "XAUTOCLAIM")

    def check_info(self):
        m = self.m
        if not m.exists:
            return
        info = self.call("XINFO", "STREAM", "s")
        d = dict(zip(info[::2], info[1::2]))
        want = {b"length": len(m.ids), b"last-generated-id": fmt_id(m.last), b"entries-added": m.added,
                b"max-deleted-entry-id": fmt_id(m.max_deleted), b"groups": len(m.groups),
                b"first-entry": m.range((0, 0), (2 ** 64, 0), 1)[0] if m.ids else None,
                b"last-entry": m.range((0, 0), (2 ** 64, 0), 1, True)[0] if m.ids else None}
        self.expect({k: d[k] for k in want}, want, "XINFO STREAM")
        groups = self.call("XINFO", "GROUPS", "s")
        got = [[g[1], g[3], g[5], g[7]] for g in groups]  # name, consumers, pending, last-delivered-id
        want = [[n, len(g.consumers), len(g.pel), fmt_id(g.last)] for n, g in sorted(m.groups.items())]
        self.expect(got, want, "XINFO GROUPS")

    def go(self, nops):
        self.call("DEL", "s")
        ops = [(self.op_xadd, 30), (self.op_xdel, 6), (self.op_xtrim, 4), (self.op_xrange, 10), (self.op_xlen, 2),
               (self.op_group, 4), (self.op_readgroup, 10), (self.op_xack, 5), (self.op_xpending, 4),
               (self.op_xclaim, 4), (self.op_xautoclaim, 3)]
        fns, weights = [f for f, _ in ops], [w for _, w in ops]
        for self.step in range(nops):
            self.rng.choices(fns, weights)[0]()
            if self.step % 25 == 0:
                self.check_info()
        self.check_info()
        self.expect(self.call("XRANGE", "s", "-", "+"), m_all(self.m), "final XRANGE")


def m_all(m):
    return m.range((0, 0), (2 ** 64, 0))


def node_config(seed):
    rng = random.Random(seed * 7919)
    return [("stream-node-max-entries", str(rng.choice([2, 3, 5, 10, 100]))),
            ("stream-node-max-bytes", str(rng.choice([0, 64, 200, 4096])))]


def run_against(kind, test):
    with Server(kind) as srv, Raw(srv) as c:
        for seed in range(1, SEEDS + 1):
            for name, value in node_config(seed):
                test.assertEqual(c.call("CONFIG", "SET", name, value), b"OK")
            Run(c, seed).go(OPS)


class StreamsModelTest(unittest.TestCase):
    def test_goblin_against_the_model(self):
        run_against("goblin", self)

    def test_the_model_against_redis(self):
        gbtest.require_redis()
        run_against("redis", self)


if __name__ == "__main__":
    gbtest.run_tests()
