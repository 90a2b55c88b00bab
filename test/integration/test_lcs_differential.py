"""Differential test of LCS (issue 28): goblin-core against redis-server 7.0
(Debian's 7.0.15), both started here.

Random pairs of strings (small alphabets so that matches are long and
many, binary bytes, integer-encoded values, empty and missing keys, lengths
up to a few hundred bytes) are compared under every option combination:
plain, LEN, IDX, MINMATCHLEN n (negative, zero, large), WITHMATCHLEN, in
any order and case, with bad arguments (LEN with IDX, a missing or
non-integer MINMATCHLEN, unknown words, wrong-type keys), in RESP2 and
RESP3 (IDX is a map there), replies byte for byte.

Directed: Redis's bound on the table it allocates ((len1+1)*(len2+1)
4-byte cells against proto-max-bulk-len: just under and just over), and
the strings beyond 65535 bytes, where Goblin's table switches to 4-byte
cells.

Environment: GOBLIN_LCS_PAIRS (default 1000).
"""

import os
import random

import gbtest
from gbtest import Raw

PAIRS = int(os.environ.get("GOBLIN_LCS_PAIRS", "1000"))


def rand_string(rng):
    kind = rng.random()
    if kind < 0.1:
        return str(rng.randint(-10 ** 12, 10 ** 12)).encode()
    n = rng.choice([0, 1, 2, 5, 10, 30, 60, 120, 300])
    if kind < 0.6:
        alphabet = rng.choice([b"ab", b"abc", b"ACGT", b"a\x00"])
    else:
        alphabet = bytes(range(256))
    s = bytes(rng.choice(alphabet) for _ in range(n))
    if rng.random() < 0.3 and s:  # shared runs, as LCS is used on versions of one text
        cut = rng.randrange(len(s))
        s = s[:cut] + s[cut:] * 2
    return s


def rand_options(rng):
    opts = []
    if rng.random() < 0.5:
        opts.append([rng.choice([b"IDX", b"idx", b"Idx"])])
    if rng.random() < 0.25:
        opts.append([rng.choice([b"LEN", b"len"])])
    if rng.random() < 0.4:
        opts.append([rng.choice([b"MINMATCHLEN", b"minmatchlen"]),
                     rng.choice([b"0", b"1", b"2", b"3", b"5", b"-4", b"100", b"9223372036854775807"])])
    if rng.random() < 0.4:
        opts.append([rng.choice([b"WITHMATCHLEN", b"withmatchlen"])])
    if rng.random() < 0.05:
        opts.append(rng.choice([[b"MINMATCHLEN"], [b"MINMATCHLEN", b"x"], [b"FOO"], [b"IDX\x00"]]))
    rng.shuffle(opts)
    return [w for o in opts for w in o]


class LcsDifferentialTest(gbtest.GoblinAndRedisCase):
    def both(self, conns, argv):
        a, b = conns[0].call_raw(*argv), conns[1].call_raw(*argv)
        self.assertEqual(a, b, argv)

    def connections(self, resp3):
        conns = (Raw(self.goblin), Raw(self.redis))
        for c in conns:
            self.addCleanup(c.close)
            if resp3:
                c.call("HELLO", "3")
        return conns

    def test_random_pairs_and_options(self):
        rng = random.Random(28)
        for resp3 in (False, True):
            conns = self.connections(resp3)
            self.both(conns, [b"FLUSHALL"])
            self.both(conns, [b"RPUSH", b"list", b"a"])
            for i in range(PAIRS // 2):
                for k in (b"a", b"b"):
                    if rng.random() < 0.05:
                        self.both(conns, [b"DEL", k])
                    else:
                        self.both(conns, [b"SET", k, rand_string(rng)])
                keys = [b"a", b"b"]
                if rng.random() < 0.05:
                    keys[rng.randrange(2)] = rng.choice([b"list", b"nokey"])
                opts = rand_options(rng)
                self.both(conns, [b"LCS"] + keys + opts)
                self.both(conns, [b"LCS"] + keys + [b"IDX", b"WITHMATCHLEN"])
                self.both(conns, [b"LCS", keys[1], keys[0], b"LEN"])

    def test_table_bound_follows_proto_max_bulk_len(self):
        conns = self.connections(False)
        for c in conns:
            c.call("CONFIG", "SET", "proto-max-bulk-len", "1048576")
        try:
            # (len1+1)*(len2+1)*4 against 1 MiB: 511*512*4 fits, 512*512*4 does not.
            self.both(conns, [b"SET", b"x", b"ab" * 255])
            self.both(conns, [b"SET", b"y", b"ba" * 255 + b"a"])
            self.both(conns, [b"LCS", b"x", b"y", b"LEN"])
            self.both(conns, [b"APPEND", b"x", b"b"])
            self.both(conns, [b"LCS", b"x", b"y", b"LEN"])
            self.both(conns, [b"LCS", b"x", b"y", b"IDX"])
            self.both(conns, [b"LCS", b"x", b"nokey"])  # (512+1)*(0+1) cells: fine
        finally:
            for c in conns:
                c.call("CONFIG", "SET", "proto-max-bulk-len", "536870912")

    def test_long_strings_use_wide_cells(self):
        conns = self.connections(True)
        rng = random.Random(7)
        a = bytes(rng.choice(b"ab") for _ in range(70000))
        self.both(conns, [b"SET", b"long", a])
        self.both(conns, [b"SET", b"short", a[1000:1040] + b"zz" + a[5:30]])
        self.both(conns, [b"LCS", b"long", b"short", b"IDX", b"MINMATCHLEN", b"3", b"WITHMATCHLEN"])
        self.both(conns, [b"LCS", b"short", b"long"])


if __name__ == "__main__":
    gbtest.run_tests()
