"""Scripting corners where hostile scripts used to crash goblin-core or
answer otherwise than redis-server 7.0.15: the bit library (CVE-2024-31449
and a differential test over random and edge inputs), redis.call/pcall's
refusals, replies Lua cannot nest, function names, and the corners of the
cmsgpack and struct libraries and of error texts.

Every scenario runs on goblin-core and redis-server and compares the reply
bytes, in RESP2 and RESP3.
"""

import random

import gbtest
from gbtest import Raw


def lua_number(x):
    """A Lua expression for the double x (exactly: integers as themselves,
    others by %.17g, infinities and NaN by arithmetic)."""
    if x != x:
        return "(0/0)"
    if x in (float("inf"), float("-inf")):
        return "(1/0)" if x > 0 else "(-1/0)"
    if x == int(x) and abs(x) < 2 ** 63:
        return "(%d)" % int(x)
    return "(%.17g)" % x


class Differential(gbtest.GoblinAndRedisCase):
    """Helpers: the same commands on both servers, the reply bytes compared."""

    def same(self, *cmd, resp3=False, label=None):
        got = []
        for srv in (self.goblin, self.redis):
            with Raw(srv, timeout=20) as c:
                if resp3:
                    c.call_raw("HELLO", "3")
                got.append(c.call_raw(*cmd))
        self.assertTrue(self.goblin.alive(), "goblin-core died on %r" % (cmd,))
        self.assertEqual(got[0], got[1], "%s%r:\n  goblin: %r\n  redis:  %r" %
                         (label + " " if label else "", cmd, got[0][:300], got[1][:300]))
        return got[0]

    def same_both_protocols(self, *cmd):
        self.same(*cmd)
        self.same(*cmd, resp3=True)


EDGE_NUMBERS = [0.0, 1.0, -1.0, 2.0 ** 31, -2.0 ** 31, 2.0 ** 31 - 1, -2.0 ** 31 - 1, 2.0 ** 32, 2.0 ** 32 + 1,
                -2.0 ** 32, 2.0 ** 32 - 1, 2.0 ** 51, 2.0 ** 52, 2.0 ** 53, 2.0 ** 53 + 2, 2.0 ** 63, -2.0 ** 63,
                2.0 ** 64, 1e300, -1e300, 5e-324, float("inf"), float("-inf"), float("nan"), 0.5, 1.5, 2.5,
                -0.5, -1.5, -2.5, 3.7, -3.7, 4294967295.5, 2147483647.5, -2147483648.5, 7.0, 8.0, 9.0, 31.0,
                32.0, 33.0, 63.0, 64.0, -8.0, -9.0, -31.0, -32.0, -33.0]
# Arguments that are not numbers, or strings that are.
EDGE_OTHERS = ["'0x10'", "'12'", "' 7 '", "'-2147483648'", "'1e3'", "'abc'", "''", "nil", "{}", "true"]
UNARY = ["tobit", "bnot", "bswap"]
SHIFTS = ["lshift", "rshift", "arshift", "rol", "ror"]
FOLDS = ["band", "bor", "bxor"]


def random_number(rnd):
    kind = rnd.randrange(6)
    if kind == 0:
        return float(rnd.randrange(-2 ** 31, 2 ** 31))
    if kind == 1:
        return float(rnd.randrange(-2 ** 53, 2 ** 53))
    if kind == 2:
        return rnd.uniform(-2 ** 33, 2 ** 33)
    if kind == 3:
        return rnd.choice(EDGE_NUMBERS)
    if kind == 4:
        return float(rnd.randrange(-40, 40))
    return rnd.uniform(-1e20, 1e20) * rnd.choice([1, 1e-10, 1e100])


def random_call(rnd):
    """A bit.* call as Lua source: random and edge arguments, sometimes the
    wrong kind or count."""
    def arg():
        if rnd.random() < 0.08:
            return rnd.choice(EDGE_OTHERS)
        return lua_number(random_number(rnd))
    fn = rnd.choice(UNARY + SHIFTS + FOLDS + ["tohex"] * 4)
    if fn in UNARY:
        args = [arg()]
    elif fn in SHIFTS:
        args = [arg(), arg()]
    elif fn in FOLDS:
        args = [arg() for _ in range(rnd.randrange(0, 5))]
    else:
        args = [arg()] if rnd.random() < 0.2 else [arg(), arg()]
    return fn, args


def calls_script(calls):
    """One script that makes every call under pcall and returns each result
    (or error text) as a string."""
    lines = ["local r = {}", "local function put(ok, v) r[#r + 1] = (ok and 'ok ' or 'err ') .. tostring(v) end"]
    for fn, args in calls:
        lines.append("put(pcall(bit.%s%s))" % (fn, "".join(", " + a for a in args)))
    lines.append("return r")
    return "\n".join(lines)


class BitLibrary(Differential):
    def test_tohex_with_int_min_count_does_not_crash(self):
        """CVE-2024-31449: LuaBitOp 1.0.2's tohex negates -2^31 and writes
        past an 8-byte buffer; Redis's fix (and ours) answers 8 digits."""
        for count in ["-2147483648", "2^31", "-2^31", "2^31 + 2^32", "-2147483648.4"]:
            for x in ["1", "-1", "0x12345678"]:
                self.same_both_protocols("EVAL", "return bit.tohex(%s, %s)" % (x, count), "0")

    def test_edge_inputs(self):
        """Every function on every edge value (2^31, -2^31, 2^32, huge
        doubles, infinities, NaN, halves, strings that are numbers, values
        that are not), shift and digit counts included."""
        calls = []
        values = [lua_number(x) for x in EDGE_NUMBERS] + EDGE_OTHERS
        for v in values:
            calls += [(fn, [v]) for fn in UNARY + ["tohex"]]
            calls += [(fn, [v, v]) for fn in FOLDS]
            calls += [(fn, ["0x12345678", v]) for fn in SHIFTS + ["tohex"]]
            calls += [(fn, [v, "5"]) for fn in SHIFTS + ["tohex"]]
            calls += [(fn, ["-0x7edcba98", v]) for fn in SHIFTS + ["tohex"]]
        calls += [(fn, []) for fn in UNARY + SHIFTS + FOLDS + ["tohex"]]
        for i in range(0, len(calls), 150):
            self.same("EVAL", calls_script(calls[i:i + 150]), "0", label="calls %d-%d" % (i, i + 150))

    def test_random_inputs(self):
        rnd = random.Random(31449)
        calls = [random_call(rnd) for _ in range(4000)]
        for i in range(0, len(calls), 200):
            self.same("EVAL", calls_script(calls[i:i + 200]), "0", label="calls %d-%d" % (i, i + 200))

    def test_results_as_replies(self):
        """The numbers themselves (not their tostring) as replies, and the
        library's table: the same functions, nothing else."""
        self.same_both_protocols("EVAL", "return {bit.tobit(2^31), bit.bnot(0), bit.rol(0x80000001, 1), "
                                 "bit.ror(1, 33), bit.arshift(-1, 31), bit.rshift(-1, 31), bit.bswap(-2)}", "0")
        self.same("EVAL", "local r = {} for k, v in pairs(bit) do r[#r + 1] = k .. '=' .. type(v) end "
                  "table.sort(r) return r", "0")


if __name__ == "__main__":
    gbtest.run_tests()
