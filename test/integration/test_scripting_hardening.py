"""Scripting corners where hostile scripts used to crash goblin-core or
answer otherwise than redis-server 7.0.15: the bit library (CVE-2024-31449
and a differential test over random and edge inputs), redis.call/pcall's
refusals, replies Lua cannot nest, function names, and the corners of the
cmsgpack and struct libraries, Lua's pattern matching (fixed and random
patterns) and table.sort, and error texts.

Every scenario runs on goblin-core and redis-server and compares the reply
bytes, in RESP2 and RESP3.
"""

import random
import time

import gbtest
from gbtest import Raw, SLOW


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


# Lua 5.1 pattern matching: fixed cases (each under pcall, results and error
# texts as strings) for engine/script/lib_pattern.c against redis-server.
PATTERN_CASES = r"""
local out = {}
local function add(...)
  local r = {}
  for i = 1, select('#', ...) do r[#r + 1] = tostring((select(i, ...))) end
  out[#out + 1] = table.concat(r, '|')
end
local function try(f, ...) add(pcall(f, ...)) end
local function each(s, p) local r = {} for a, b in string.gmatch(s, p) do r[#r + 1] = tostring(a) .. '/' .. tostring(b) end return table.concat(r, ',') end
try(string.find, 'hello world', 'o w') try(string.find, 'hello world', 'o', 6) try(string.find, 'hello world', 'l+')
try(string.find, 'hello', '', 10) try(string.find, 'hello', '', -100) try(string.find, 'hello', 'l', -2)
try(string.find, 'a.b', '.', 1, true) try(string.find, 'a.b', '.', 1, false) try(string.find, 'abc\0def', 'c\0d')
try(string.find, 'abc\0def', 'c\0x') try(string.find, 'abc\0def', '%z') try(string.find, 'abc', '[]')
try(string.find, 'abc', '%') try(string.find, 'abc', '(()') try(string.find, 'abc', 'a)') try(string.find, 'abc', '%1')
try(string.find, 'abc', '(a)%2') try(string.find, 'abc', '(a%1)') try(string.find, 'abc', '%0')
try(string.find, 'THE (quick) fox', '%((%a+)%)') try(string.find, '  x  ', '^%s*(.-)%s*$')
try(string.match, 'key=value', '(%w+)=(%w+)') try(string.match, 'hello', '()ll()') try(string.match, 'f(a(b)c)d', '%b()')
try(string.match, 'f(a(b c)d', '%b()') try(string.match, 'THE (quick) fox', '%f[%a]%a+', 5) try(string.match, 'abc', '%f')
try(string.match, 'abc', '%fa') try(string.match, 'abc', '%b') try(string.match, 'abc', '%ba') try(string.match, '[]]x', '[]]+')
try(string.match, 'a-z', '[a%-z]+') try(string.match, 'hello123', '[^%d]+') try(string.match, 'x$y', 'x$y')
try(string.match, 'xy', 'y$') try(string.match, 'aaa', 'a-b') try(string.match, 'aaab', 'a-b') try(string.match, 'aaab', '^(a*)(.)$')
try(string.match, '2024-01-05', '(%d+)-(%d+)-(%d+)') try(string.match, 'abcabc', '(abc)%1') try(string.match, 'x()x', '()%1')
try(string.match, '\195\128\195\137', '%a+') try(string.match, 'a.b', '%.') try(string.match, 'a', '[a-]') try(string.match, '-', '[a-]')
try(string.match, 'b', '[%a-z]') try(string.match, 'A1 b_', '%W+') try(string.match, '\1\2x', '%c+') try(string.match, 'Ab', '%u%l')
try(string.match, 'f0A', '%x+') try(string.match, 'abc', '%f[%z]') try(string.match, 'abc', '.-%f[%z]') try(string.match, 'abc', '[a', 2)
try(string.match, 'abc', '[a%') try(string.match, 'abc', '[%a') try(string.match, 'a]', '[^]]') try(string.match, 'abc', '(', 1)
try(string.match, 'abc', 'a', 10) try(string.match, 'abc', '^b', 2) try(string.match, 'abc', '^b')
try(string.gsub, 'hello world', 'o', '0') try(string.gsub, 'hello world', '(o)', '%1%1', 1) try(string.gsub, 'hello', '', '-')
try(string.gsub, 'hello', 'l', '%') try(string.gsub, 'hello', 'l', '%2') try(string.gsub, 'hello', '(l)', '%2')
try(string.gsub, 'hello', 'l', '%0%0') try(string.gsub, 'hello', 'l', '%%x%a') try(string.gsub, 'hello', 'l', 5)
try(string.gsub, 'hello', 'l', {l = 'L'}) try(string.gsub, 'hello', 'l', {l = true}) try(string.gsub, 'hello', 'l', {l = false})
try(string.gsub, 'hello', 'l', {l = 7}) try(string.gsub, 'hello', '(h)(e)', function(a, b) return b .. a end)
try(string.gsub, 'hello', 'l', function() return {} end) try(string.gsub, 'hello', 'l', function() end) try(string.gsub, 'hello', 'l', nil)
try(string.gsub, 'hello', 'l', true) try(string.gsub, 'hello', '^h', 'H') try(string.gsub, 'hello', '^', '<') try(string.gsub, 'hello', '$', '>')
try(string.gsub, 'hello', 'l', 'L', 0) try(string.gsub, 'hello', 'l', 'L', -1) try(string.gsub, 'hello', 'l', 'L', 1.9)
try(string.gsub, 'abc', '%w', '%0%0', '2') try(string.gsub, 'abc', '()', '%1') try(string.gsub, 123, 2, 9) try(string.gsub, 'abc', '(', 'x')
try(string.gsub, 'abc', '', string.rep('xy', 5000)) try(string.gsub, string.rep('ab', 5000), 'b', 'cd')
try(string.gsub, 'a\0b\0c', '%z', '.') try(string.gsub, 'hello', 'l', 'L', 'x')
try(each, 'k1=v1, k2=v2', '(%w+)=(%w+)') try(each, 'one two  three', '%a*') try(each, '^a^b', '^.') try(each, 'abc', '()')
try(each, 'abc', '') try(each, 'abc', '%') try(each, nil, 'x')
add(string.gfind == string.gmatch, type(string.gfind)) try(string.find, nil, 'x') try(string.find, 'x') try(string.match, 'x', {})
try(string.find, 'abc', 'b', '2') try(string.find, 'abc', 'b', 'z') try(string.gsub, 'x', 'x', 'y', {})
add(('abc'):find('b'), ('abc'):match('(b)(c)'), ('abc'):gsub('b', 'B'))
try(string.find, string.rep('a', 199), string.rep('a?', 199)) try(string.find, string.rep('a', 20), string.rep('a?', 20) .. 'b')
try(string.find, 'abc', string.rep('(', 33)) try(string.find, 'abc', string.rep('()', 33)) try(string.find, 'abc', string.rep('()', 32))
try(string.match, string.rep('x', 40), string.rep('()', 32))
return out
"""

PATTERN_ATOMS = ["a", "b", "1", " ", ".", "%a", "%d", "%s", "%w", "%p", "%z", "%A", "[ab]", "[^a]", "[a-c]", "[%d%-]",
                 "[]", "%%", "%(", "-", "$", "^", "(", ")", "()", "%b()", "%bab", "%f[%a]", "%f[%s]", "%1", "%2", "[",
                 "%", "]", "\0"]
PATTERN_CLASSES = ["a", "b", "1", " ", ".", "%a", "%d", "%s", "%w", "%p", "%A", "[ab]", "[^a]", "[a-c]", "[%d%-]"]
PATTERN_QUANTIFIERS = ["*", "+", "-", "?"]

# Every call on one (pattern, subject) pair from ARGV, each result or error
# text joined by '|': find (at 1 and 3), match, gsub with a string and a
# function (at most 2), gmatch (at most 20 matches).
RANDOM_PATTERN_SCRIPT = r"""
local out = {}
for i = 1, #ARGV, 2 do
  local p, s = ARGV[i], ARGV[i + 1]
  local r = {}
  local function add(ok, ...)
    r[#r + 1] = tostring(ok)
    for j = 1, select('#', ...) do r[#r + 1] = tostring((select(j, ...))) end
  end
  add(pcall(string.find, s, p))
  add(pcall(string.find, s, p, 3))
  add(pcall(string.match, s, p))
  add(pcall(string.gsub, s, p, '<%0>'))
  add(pcall(string.gsub, s, p, function(...) return select('#', ...) .. ':' .. tostring((...)) end, 2))
  add(pcall(function()
    local t = {}
    for a, b in string.gmatch(s, p) do
      t[#t + 1] = tostring(a) .. '/' .. tostring(b)
      if #t == 20 then break end
    end
    return table.concat(t, ',')
  end))
  out[#out + 1] = table.concat(r, '|')
end
return out
"""


def random_pattern(rnd):
    """A Lua pattern from atoms, some quantified, sometimes anchored or
    malformed; at most four quantifiers, so that no case backtracks for
    long on redis-server, which cannot be stopped in a pattern."""
    items = []
    quantified = 0
    for _ in range(rnd.randrange(0, 7)):
        if quantified < 4 and rnd.random() < 0.35:
            items.append(rnd.choice(PATTERN_CLASSES) + rnd.choice(PATTERN_QUANTIFIERS))
            quantified += 1
        else:
            items.append(rnd.choice(PATTERN_ATOMS))
    p = "".join(items)
    if rnd.random() < 0.2:
        p = "^" + p
    if rnd.random() < 0.2:
        p += "$"
    return p


def random_subject(rnd):
    return "".join(rnd.choice("aab1 ()-%x\0") for _ in range(rnd.randrange(0, 11)))


# table.sort (engine/script/lib_table.c) on random tables, seeded through
# math.randomseed (Redis's rand48 in both servers): numbers with ties, -0
# and NaN, strings, mixed types, and comparison functions that are orders,
# are not, or raise.
RANDOM_SORT_SCRIPT = r"""
math.randomseed(tonumber(ARGV[1]))
local zero = 0
local specials = {zero, -zero, 0/0, 1, 2, 1.5, -1}
local comps = {
  false,
  function(a, b) return a > b end,
  function(a, b) return a <= b end,
  function(a, b) return true end,
  function(a, b) return false end,
  function(a, b) return (a % 3) < (b % 3) end,
  function(a, b) if a == 7 then error('seven') end return a < b end,
}
local out = {}
for round = 1, 80 do
  local n = math.random(0, 40)
  local kind = math.random(1, 4)
  local t = {}
  for i = 1, n do
    if kind == 1 then t[i] = math.random(1, 10)
    elseif kind == 2 then t[i] = tostring(math.random(1, 30))
    elseif kind == 3 then t[i] = specials[math.random(1, #specials)]
    elseif math.random(1, 6) == 1 then t[i] = 'x'
    else t[i] = math.random(1, 9) end
  end
  local c = comps[math.random(1, #comps)]
  local ok, err = pcall(table.sort, t, c or nil)
  local r = {}
  for i = 1, n do r[i] = tostring(t[i]) end
  out[#out + 1] = tostring(ok) .. ' ' .. tostring(err) .. ': ' .. table.concat(r, ',')
end
return out
"""


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


def keys_of(expr):
    """A script returning the sorted keys of the table expr evaluates to."""
    return ("local t = %s local r = {} for k in pairs(t) do r[#r + 1] = k end table.sort(r) return r" % expr)


class CallsFromScripts(Differential):
    def test_blocking_xread_is_an_error(self):
        """Redis refuses BLOCK from scripts (as its own error, after the
        arguments before it parsed); Goblin answered nil."""
        for script in ["return redis.pcall('xread','BLOCK',0,'STREAMS','s','$')",
                       "return redis.pcall('XREADGROUP','GROUP','g','c','BLOCK',0,'STREAMS','s','>')",
                       "return redis.pcall('xread','COUNT','x','BLOCK',0,'STREAMS','s','$')",
                       "return redis.call('xread','block','10','STREAMS','s','0')"]:
            self.same_both_protocols("EVAL", script, "0")

    def test_self_referencing_table_reply(self):
        """The nested arrays go down to Lua's stack limit, where the inner
        element is Redis's "reached lua stack limit" error (read as raw
        bytes: thousands of levels)."""
        end = b"-ERR reached lua stack limit\r\n"
        for script in ["local a = {}; local b = {a}; a[1] = b; return a",
                       "local a = {}; a[1] = a; return a",
                       "local a = {}; a[1] = {map = {k = a}}; return a"]:
            for resp3 in (False, True):
                got = []
                for srv in (self.goblin, self.redis):
                    with Raw(srv, timeout=20) as c:
                        if resp3:
                            c.call_raw("HELLO", "3")
                        c.send_cmd("EVAL", script, "0")
                        got.append(c.read_until(end) + c.read_raw_available(0.2))
                self.assertTrue(got[1].endswith(end), got[1][-100:])
                self.assertEqual(got[0], got[1], "%r resp3=%s: goblin %d bytes, redis %d bytes" %
                                 (script, resp3, len(got[0]), len(got[1])))

    def test_reply_repeating_its_tables_is_bounded(self):
        """A table holding itself 20,000 times is 20,000^depth elements
        down to the stack limit (found by fuzz_lua; Redis runs out of
        memory on it): the reply stops after a million elements with one
        error, the elements announced past it as nulls, and the server goes
        on serving (goblin-core only)."""
        too_large = b"ERR script reply too large: it repeats its tables past half the script's memory in elements"
        with Raw(self.goblin, timeout=120) as c:
            c.send_cmd("EVAL", "local t = {} for i = 0, 20000 do t[i] = t end return t", "0")
            value, raw = c.read()
            self.assertLess(len(raw), 16 << 20)
            errors, elements, todo = [], 0, [value]
            while todo:
                v = todo.pop()
                elements += 1
                if isinstance(v, list):
                    todo.extend(v)
                elif isinstance(v, gbtest.Err):
                    errors.append(bytes(v))
            self.assertEqual(errors, [too_large])
            self.assertEqual(elements, 1 + (1 << 20) + 2)
            self.assertEqual(c.call_raw("PING"), b"+PONG\r\n")
            # A table repeated within the budget is sent each time, as Redis does.
            self.assertEqual(c.call("EVAL", "local x = {'a', 'b'} return {x, x, {x}}", "0"),
                             [[b"a", b"b"], [b"a", b"b"], [[b"a", b"b"]]])

    def test_function_names_are_case_insensitive(self):
        for srv in (self.goblin, self.redis):
            with Raw(srv) as c:
                c.call("FUNCTION", "FLUSH")
                c.call("FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('test', function() return 1 end)\n"
                       "redis.register_function{function_name='Ro_Fn', callback=function() return 2 end, "
                       "flags={'no-writes'}}")
        self.same("FCALL", "TEST", "0")
        self.same("FCALL", "Test", "0")
        self.same("FCALL_RO", "ro_fn", "0")
        self.same("FCALL_RO", "RO_FN", "0", resp3=True)
        # Another library may not register the same name in another case.
        self.same("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function('TEST', function() return 2 end)")
        self.same("FUNCTION", "DELETE", "lib")
        self.same("FCALL", "test", "0")
        self.same("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function('TEST', function() return 2 end)")
        self.same("FCALL", "test", "0")

    def test_commands_refused_from_scripts(self):
        """Commands Goblin does not have answer what Redis answers a script
        for them when Redis refuses them too: its arity error, or that they
        are not allowed from scripts."""
        for args in [("cluster", "reset"), ("wait", "0", "0"), ("wait", "0"), ("cluster",), ("cluster", "nosuch"),
                     ("nosuchcmd",), ("monitor",), ("failover",), ("sync",), ("replicaof", "no", "one"),
                     ("debug", "sleep", "0"), ("latency", "reset"), ("module", "list"), ("psync", "x", "1"),
                     ("WAIT", "1"), ("Cluster", "RESET", "hard"), ("shutdown",), ("multi",), ("subscribe", "c")]:
            quoted = ",".join("'%s'" % a for a in args)
            self.same_both_protocols("EVAL", "return redis.pcall(%s)" % quoted, "0")
            self.same("EVAL", "return redis.call(%s)" % quoted, "0")


class ScriptLoading(Differential):
    def test_bodies_that_close_the_wrapper_function(self):
        """CVE-2022-24736: Redis 6 wrapped a script in "function f_<sha>()
        ... end" and a body that closed it early left f_<sha> undefined (a
        NULL dereference). Goblin Core loads the body as its own chunk, as
        Redis 7 does: each is a compile error or runs, as in Redis."""
        for body in ["return 1 end function f() return 2", "end", "return 1 end local x = 1 --",
                     "end f_0123456789abcdef0123456789abcdef01234567 = nil function g() return 1",
                     "#!lua\nreturn 1 end"]:
            self.same_both_protocols("EVAL", body, "0")
            self.same("SCRIPT", "LOAD", body)

    def test_lua_core_corners(self):
        """The system's Lua 5.1.5 is not Redis's patched copy: unpack's
        count overflowed (CVE-2025-46817: the server died); loadstring
        parses with the collector held off (CVE-2025-49844); the string
        metatable stays sealed (CVE-2025-46818)."""
        for script in ["return {pcall(unpack, {}, -2147483648, 2147483647)}",
                       "return {pcall(unpack, {}, -2, 2147483647)}", "return {pcall(unpack, {}, 1, 2147483647)}",
                       "return {pcall(unpack, {}, 2147483600, 2147483647)}",
                       "return select('#', unpack({}, 2147483640, 2147483647))",
                       "return {unpack({1, 2, 3})}", "return {unpack({1, 2, 3}, 2)}", "return {unpack({1, 2, 3}, -1, 1)}",
                       "return {unpack({1, 2, 3}, 3, 1)}", "return {pcall(unpack, 'x')}", "return {pcall(unpack)}",
                       "return {unpack({1, 2}, 1.9, 2.9)}", "return {pcall(unpack, {}, 1, 'x')}",
                       "local t = {} for i = 1, 2000 do t[i] = string.rep('x', 100) .. i end t = nil "
                       "local f = loadstring(string.rep('local a = 1 ', 3000) .. 'return 7') return f()",
                       "return {pcall(loadstring, 'x = [==[ abc')}",
                       "return {pcall(function() getmetatable('').__index = {} end)}",
                       "return {pcall(setmetatable, '', {})}"]:
            self.same("EVAL", script, "0")

    def test_script_flush_after_garbage(self):
        """CVE-2024-46981 (Lua's collector and lua_close on SCRIPT FLUSH):
        a full collection runs before the interpreter is closed; flushes
        between scripts that leave garbage (tables with metatables, packed
        buffers) keep the server serving."""
        for i in range(20):
            self.same("EVAL", "local t = setmetatable({}, {__index = function() return 1 end}) "
                      "for i = 1, 200 do t[i] = cmsgpack.pack({i, tostring(i)}) end return #t + t.x", "0")
            self.same("SCRIPT", "FLUSH", "ASYNC" if i % 2 else "SYNC")
        self.same("EVAL", "return 1", "0")


class LibraryCorners(Differential):
    def test_cmsgpack(self):
        scripts = [
            "return {cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), 0, 0)}",
            "return {cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), 0, 1)}",
            "return {cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), 2)}",
            "return {cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), 5, 1)}",
            "return {cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), -1)}",
            "return {cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), 1, -1)}",
            "return {cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), 1, 3)}",
            "return {cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), 1, 4)}",
            "return {cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), 1, 2^40)}",
            "return {cmsgpack.unpack_limit({}, 'x')}",
            "return {cmsgpack.unpack_one(cmsgpack.pack(1,2,3), 2)}",
            "return {cmsgpack.unpack_one('')}",
            "return {cmsgpack.unpack(cmsgpack.pack(1), 'extra')}",
            "return {tostring(cmsgpack.unpack(string.char(0xcf,255,255,255,255,255,255,255,255)))}",
            "return {tostring(cmsgpack.unpack(string.char(0xcf,0x80,0,0,0,0,0,0,1)))}",
            "return {tostring(cmsgpack.unpack(string.char(0xd1,0xff,0x80)))}",
            "return {cmsgpack.unpack(string.char(0xc4,5,1))}",
            "return {cmsgpack.unpack(string.char(0xc4,1,65))}",
            "return {cmsgpack.unpack(string.char(0xc7,1,1,65))}",
            "return {cmsgpack.unpack(string.char(0xd9,5,65))}",
            "return {cmsgpack.unpack(string.char(0x81,0xc0,1))}",
            "return {cmsgpack.unpack(string.char(0x81,0xcb,0xff,0xf8,0,0,0,0,0,0,1))}",
            "return {pcall(cmsgpack.unpack, string.rep(string.char(0x91), 4010) .. '\\1')}",
            "return {pcall(cmsgpack.unpack, string.rep('\\1', 8010))}",
            "local n = 0 for i = 7980, 8005 do if pcall(cmsgpack.unpack, string.rep('\\1', i)) then n = i end end "
            "return n",
            "local n = 0 for i = 3980, 4005 do if pcall(cmsgpack.unpack_one, string.rep(string.char(0x91), i) .. '\\1') "
            "then n = i end end return n",
            "return {cmsgpack._NAME, cmsgpack._VERSION, cmsgpack._COPYRIGHT, cmsgpack._DESCRIPTION}",
            keys_of("cmsgpack"),
            "return cmsgpack.pack(1/0, -1/0, 0/0, 1e300, 0.5, 2^63, -2^63, 2^64, {1,2,3}, {a=1}, {[1]=1, [3]=3}, true)",
            "local t = {} t[1] = t return cmsgpack.pack(t)",
        ]
        for script in scripts:
            self.same("EVAL", script, "0")

    def test_pack_of_a_table_holding_itself_is_bounded(self):
        """A table holding itself 10 times packs 10^16 values (16 levels):
        Redis's encoder grows its buffer until memory runs out; ours lives
        in Lua's heap, whose blocks are bounded by proto-max-bulk-len, and
        stops walking once it is out of room (goblin-core only)."""
        with Raw(self.goblin, timeout=120) as c:
            c.call("CONFIG", "SET", "proto-max-bulk-len", "8mb")
            try:
                got = c.call_raw("EVAL", "local t = {} for i = 1, 10 do t[i] = t end return #cmsgpack.pack(t)", "0")
            finally:
                c.call("CONFIG", "SET", "proto-max-bulk-len", "512mb")
            self.assertIn(b"not enough memory", got)
            lua = int(gbtest.parse_info(c.call("INFO", "memory"))["used_memory_lua"])
            self.assertLess(lua, 4 << 20, "the 8 MB buffer is given back at once")

    def test_string_rep_as_redis(self):
        """Goblin Core's own string.rep (engine/script/script_vm.c) answers as
        Lua 5.1's: counts cast to an int, methods, errors and their names."""
        scripts = [
            "return {string.rep('ab', 3), string.rep('x', 0), string.rep('x', -5), string.rep('', 1000), "
            "string.rep(12, 2), ('y'):rep(2.9), ('y'):rep('3'), #string.rep('x', 2^32 + 3), #string.rep('x', 2^31), "
            "#string.rep('x', -2^31), #string.rep('abc', 333333), string.rep('ab', 1) == 'ab'}",
            "return redis.sha1hex(string.rep('0123456789', 100001))",
            "return string.rep('x')", "return ('x'):rep('y')", "return string.rep({}, 2)", "return string.rep()",
            "local ok, e = pcall(string.rep, nil, 2) return e", "return string.rep == ('').rep",
        ]
        for script in scripts:
            self.same("EVAL", script, "0")

    def test_string_case_reverse_and_concat_as_redis(self):
        """Goblin Core's own string.upper, string.lower, string.reverse
        (engine/script/lib_string.c) and table.concat (lib_table.c) answer
        as Lua 5.1's: bytes, numbers as strings, ranges, errors; and the
        string and table libraries hold the same names as Redis's."""
        scripts = [
            "return {string.upper('aBc1\\0\\255z'), string.lower('AbC\\0Z\\200'), string.reverse('ab\\0c'), "
            "('x'):upper(), string.upper(12), string.lower(''), string.reverse(''), string.reverse(1.5), "
            "#string.upper(('ab'):rep(100000)), redis.sha1hex(string.lower(('ABCDEFGHIJ'):rep(100001))), "
            "redis.sha1hex(string.reverse(('0123456789'):rep(100001)))}",
            "return string.upper()", "return string.upper({})", "return ('x'):reverse(1)", "return string.lower(nil)",
            "return table.concat({1, {}, 3})", "return table.concat({1, 2, 3}, ', ', 2)",
            "return table.concat({1, 2.5, 'x', 1e100}, 0)", "return table.concat({}, 'x', 1, 1e9)",
            "return table.concat({1, 2, 3}, 'x', 3, 1)", "return table.concat({1, 2, 3}, nil, 1, 3)",
            "return table.concat({1, 2, 3}, {}, 1, 3)", "return table.concat(nil)", "return table.concat({1, 2}, '', 'a')",
            "return table.concat({1, 2, 3}, '-', 2, 2)", "return table.concat({1, 2, 3}, '-', 0)",
            "return table.concat({'a', nil, 'c'}, '-', 1, 3)", "return table.concat({1, 2, 3}, '-', 1, '3')",
            "return table.concat({1e15, 1e16, 1/3, 2^53, -1/0}, ' ')", "return table.concat({}, 'x')",
            "return table.concat({'a\\0b', 'c'}, '\\0')", "return table.concat(string)",
            "local t = {} for i = 1, 20000 do t[i] = i end return redis.sha1hex(table.concat(t, ', '))",
            "local t = {} for i = 1, 300 do t[i] = ('y'):rep(i) end return redis.sha1hex(table.concat(t, ('-'):rep(1000)))",
            "return #table.concat({('x'):rep(100000), ('y'):rep(200000)}, ('z'):rep(300))",
            keys_of("string"), keys_of("table"),
        ]
        for script in scripts:
            self.same("EVAL", script, "0")

    def test_large_strings_are_built_at_memory_speed(self):
        """Lua 5.1 built these results a byte at a time in C, where SCRIPT
        KILL cannot reach: table.concat up to the 512 MB limit held the
        engine 38 s, string.upper of 400 MB 22 s (development machine, the
        suite running). Built in one block they take a few seconds of page
        faults; a result past proto-max-bulk-len is refused at once."""
        refused = rb"^-ERR Error running script [0-9a-f]{40}, not enough memory\r\n$"
        with Raw(self.goblin, timeout=60 * SLOW) as c:
            c.call("CONFIG", "SET", "proto-max-bulk-len", "64mb")
            try:
                for script in ["local t = {} for i = 1, 1000 do t[i] = i end return table.concat(t, ('x'):rep(1e6))",
                               "return string.upper(('x'):rep(2^26 + 1))"]:
                    start = time.monotonic()
                    self.assertRegex(c.call_raw("EVAL", script, "0"), refused, script)
                    self.assertLess(time.monotonic() - start, 2 * SLOW, script)
                self.assertEqual(c.call("EVAL", "local t = {} for i = 1, 40 do t[i] = i end "
                                        "return #table.concat(t, ('x'):rep(2^20))", "0"), 39 * 2 ** 20 + 71)
                self.assertEqual(c.call("EVAL", "return #string.reverse(('ab'):rep(2^24))", "0"), 2 ** 25)
            finally:
                c.call("CONFIG", "SET", "proto-max-bulk-len", "512mb")
            self.assertEqual(c.call_raw("PING"), b"+PONG\r\n")

    def test_string_rep_past_the_bulk_limit_is_refused_at_once(self):
        """A result over proto-max-bulk-len is refused before it is built
        (goblin-core only: Redis builds it until memory runs out). Lua 5.1's
        own string.rep held the engine 13-17 s in C, where SCRIPT KILL cannot
        reach, before its 512 MB piece was refused."""
        refused = rb"^-ERR Error running script [0-9a-f]{40}, not enough memory\r\n$"
        with Raw(self.goblin) as c:
            for script in ["return ('x'):rep(1e10)", "return string.rep('ab', 2^30)"]:
                start = time.monotonic()
                self.assertRegex(c.call_raw("EVAL", script, "0"), refused, script)
                self.assertLess(time.monotonic() - start, 2 * SLOW, script)
            c.call("CONFIG", "SET", "proto-max-bulk-len", "8mb")
            try:
                self.assertRegex(c.call_raw("EVAL", "return string.rep('x', 8 * 2^20 + 1)", "0"), refused)
                self.assertEqual(c.call("EVAL", "return #string.rep('x', 8 * 2^20 - 1024)", "0"), 8 * 2 ** 20 - 1024)
            finally:
                c.call("CONFIG", "SET", "proto-max-bulk-len", "512mb")
            self.assertEqual(c.call_raw("PING"), b"+PONG\r\n")

    def test_patterns_as_redis(self):
        """Goblin Core's own string.find/match/gmatch/gsub
        (engine/script/lib_pattern.c) answer as Lua 5.1's: positions,
        captures, replacements, every error text and quirk."""
        self.same("EVAL", PATTERN_CASES, "0")

    def test_random_patterns_as_redis(self):
        rnd = random.Random(5115)
        for batch in range(8):
            args = []
            for _ in range(150):
                args += [random_pattern(rnd), random_subject(rnd)]
            self.same("EVAL", RANDOM_PATTERN_SCRIPT, "0", *args, label="batch %d" % batch)

    def test_pattern_nesting_is_bounded(self):
        """Lua 5.1 recurses once per quantified item without a limit:
        'a?' 200,000 times overflows the stack (redis-server 7.0.15 dies).
        Past 200 levels goblin-core raises Lua 5.2's "pattern too complex";
        199 items still match (as in Redis: test_patterns_as_redis)."""
        too_deep = rb"^-ERR user_script:1: pattern too complex script: [0-9a-f]{40}, on @user_script:1\.\r\n$"
        with Raw(self.goblin) as c:
            for script in ["return string.find(string.rep('a', 200000), string.rep('a?', 200000))",
                           "return string.find(string.rep('a', 200), string.rep('a?', 200))",
                           "return string.match(string.rep('a', 300), string.rep('a*', 300))",
                           "return string.gsub(string.rep('a', 200000), string.rep('a*', 100000), 'x')",
                           "for w in string.gmatch(string.rep('a', 1000), string.rep('.?', 1000)) do end"]:
                self.assertRegex(c.call_raw("EVAL", script, "0"), too_deep, script[:60])
            self.assertEqual(c.call("EVAL", "return string.find(string.rep('a', 199), string.rep('a?', 199))", "0"), 1)
            self.assertEqual(c.call_raw("PING"), b"+PONG\r\n")

    def test_table_sort_as_redis(self):
        """Goblin Core's own table.sort (engine/script/lib_table.c) compares
        the same pairs in the same order as Lua 5.1's: ties, -0, NaN, mixed
        types, inconsistent and raising comparison functions all end as in
        Redis, error texts and their script lines included."""
        for seed in range(1, 9):
            self.same("EVAL", RANDOM_SORT_SCRIPT, "0", str(seed), label="seed %d" % seed)
        scripts = ["table.sort({1, 'x', 3})", "table.sort({3, 2, 1}, 5)", "table.sort('abc')", "table.sort()",
                   "local t = {} for i = 1, 20 do t[i] = i % 7 end table.sort(t, function(a, b) return true end)",
                   "local t = {3, 1, 2} table.sort(t, nil) return t", "table.sort(string)", "table.sort(KEYS) return KEYS",
                   "local t = {} for i = 1, 1000 do t[i] = (i * 7919) % 1000 end table.sort(t) "
                   "for i = 2, 1000 do if t[i - 1] > t[i] then return 'unsorted' end end return {t[1], t[1000]}",
                   "table.sort(math) return 1", "table.sort(setmetatable({}, {__index = {3, 2, 1}})) return 1"]
        for script in scripts:
            self.same("EVAL", script, "2", "b", "a")

    def test_setmetatable_as_redis(self):
        """setmetatable's errors name the function and the script's line,
        and a read-only table is refused after the argument checks, as in
        Redis (script_vm.c; it used to call Lua's own behind a guard)."""
        scripts = ["setmetatable(1, {})", "setmetatable({}, 1)", "setmetatable({})",
                   "local t = setmetatable({}, {__metatable = 1}) setmetatable(t, {})",
                   "local t = setmetatable({}, {__metatable = false}) return tostring(pcall(setmetatable, t, {}))",
                   "setmetatable(_G, nil)", "setmetatable(string, {})", "setmetatable(string, 1)",
                   "local t = setmetatable({}, {__index = function(t, k) return k .. '!' end}) return t.x",
                   "local mt = {} local t = {} return tostring(setmetatable(t, mt) == t)",
                   "local t = setmetatable({}, {}) setmetatable(t, nil) return tostring(getmetatable(t))",
                   "setmetatable(KEYS, {}) return 1"]
        for script in scripts:
            self.same("EVAL", script, "0")

    def test_table_insert_and_remove_as_redis(self):
        """Goblin Core's own table.insert and table.remove
        (engine/script/lib_table.c): Lua 5.1's positions (insert does not
        check them, remove does), errors that name the function and the
        script's line, and read-only tables refused at the first write, so
        a remove from an empty library table answers nothing, as in Redis."""
        shown = "return {tostring(x), #t, tostring(t[0]), tostring(t[1]), tostring(t[2]), tostring(t[3]), tostring(t[4])}"
        scripts = ["local t = {1, 2, 3} local x = table.remove(t, %s) " % pos + shown
                   for pos in ["7", "0", "-1", "1", "2", "3", "4", "'2'", "nil", "2.7"]]
        scripts += ["local x local t = {1, 2, 3} table.insert(t, %s, 'z') " % pos + shown
                    for pos in ["0", "1", "2", "4", "5", "6", "-2", "'2'", "2.9"]]
        scripts += ["local x local t = {1, 2, 3} table.insert(t, 'z') " + shown,
                    "local t = {} local x = table.remove(t) " + shown,
                    "local t = {} local x = table.remove(t, 3) " + shown,
                    "table.insert({}, 1, 2, 3)", "table.insert({})", "table.insert(nil, 1)", "table.insert({}, 'x', 1)",
                    "table.remove(nil)", "table.remove({1, 2}, 'x')", "table.insert(math, 1)", "table.insert(_G, 1, 2)",
                    "table.insert(string, 'x', 1)", "return table.remove(string)", "return table.remove(math, 1)",
                    "local ok, e = pcall(table.insert, {}, 1, 2, 3) return e",
                    "local ok, e = pcall(table.remove, 'x') return e",
                    "local t = {} for i = 1, 100 do table.insert(t, 1, i) end for i = 1, 50 do table.remove(t, 2) end "
                    "return t"]
        for script in scripts:
            self.same("EVAL", script, "0")

    def test_struct(self):
        scripts = [
            "return {struct.size('s')}", "return {struct.size('c0')}",
            "return {struct.unpack('b', 'abc', -1)}", "return {struct.unpack('', 'abc', -5)}",
            "return {struct.unpack('!8d', string.rep('a', 16), -1)}", "return {struct.unpack('b', 'abc', 0)}",
            "return {struct.unpack('c2147483647', 'abc')}", "return {struct.unpack('c2147483647', 'abc', 2)}",
            "return {struct.pack('c2147483647', 'abc')}", "return {struct.size('c2147483647c2147483647')}",
            "return {struct.size('c21474836470')}", "return {struct.size('!2147483647')}",
            "return {struct.unpack('dc0', struct.pack('d', 1e300) .. 'abc')}",
            "return {struct.unpack('dc0', struct.pack('d', 0/0) .. 'abc')}",
            "return {struct.unpack('bc0', '\\255abc')}",
            "local r = {} for _, v in ipairs({2^63, 2^64, 1e30, 1/0, -1/0, -(2^64), 0/0, -(0/0), 2^63 + 4096}) do "
            "r[#r + 1] = table.concat({struct.pack('>I8', v):byte(1, -1)}, ',') .. '/' .. "
            "table.concat({struct.pack('<i8', v):byte(1, -1)}, ',') end return r",
            "return {tostring(struct.unpack('>i9', string.rep('\\0', 7) .. '\\128\\0'))}",
            "return {tostring(struct.unpack('>i12', string.rep('\\0', 11) .. '\\255'))}",
            "return {tostring(struct.unpack('>i0', ''))}",
            keys_of("struct"),
        ]
        for script in scripts:
            self.same("EVAL", script, "0")

    def test_error_texts_and_tables(self):
        scripts = [
            "return redis.error_reply('\\r\\nabc\\r\\n')", "return redis.error_reply('-\\r\\nabc\\r\\n')",
            "return redis.error_reply('-MY\\r\\nCODE x\\ny')", "return redis.error_reply('a\\0b')",
            "return redis.error_reply('-\\0b')", "return redis.error_reply('\\n\\n\\r')",
            "return redis.error_reply('-ERR \\r\\n')", "return {err='\\r\\nabc\\r\\n'}", "return {err='\\n'}",
            "return {err='a\\0b'}", "return {ok='a\\r\\nb\\0c'}", "return redis.status_reply('a\\0b\\r\\n')",
            "error('a\\r\\nb\\0c')", "error({err='\\r\\nx'})",
            keys_of("redis.pcall('set', {}, 'x')"), keys_of("redis.pcall()"), keys_of("redis.pcall('nosuch')"),
            keys_of("redis.pcall('incr', 'x', 'y')"), keys_of("redis.error_reply('x')"),
            "return redis.pcall('set', {}, 'x')",
            "return {double=0/0}", "return {double=-(0/0)}", "return {double=1/0}", "return {double=-1/0}",
        ]
        for script in scripts:
            self.same_both_protocols("EVAL", script, "0")

    def test_numbers_taken_as_ints(self):
        """redis.setresp/set_repl/log take a number as an int the way
        Redis's x86-64 build casts it (truncated; out of range or NaN is
        INT_MIN): a huge one was undefined behaviour (fuzz_lua, UBSan)."""
        for script in ["redis.setresp(2^200) return 1", "redis.setresp(2.9) return redis.call('ping')",
                       "redis.setresp(0/0) return 1", "redis.set_repl(2^40) return 1", "redis.set_repl(-0.5) return 1",
                       "redis.log(2^40, 'x') return 1", "redis.log(3.5, 'x') return 1", "redis.log(0/0, 'x') return 1"]:
            self.same("EVAL", script, "0")

    def test_globals_through_rawget(self):
        for name in ["redis", "bit", "string", "KEYS", "ARGV", "nosuch", "_G", "cjson", "pcall", "cmsgpack"]:
            self.same("EVAL", "return type(rawget(_G, '%s'))" % name, "0")
        self.same("EVAL", "return type(rawget(redis, 'call'))", "0")
        self.same("EVAL", "return rawget(_G, 'KEYS')[1]", "1", "k")


class CjsonGuard(Differential):
    """The system's lua-cjson 2.1.0 sizes its buffer in an int
    (CVE-2022-24834): engine/script/cjson_guard.c stands in front of it."""

    def test_huge_string_is_refused_not_a_heap_overflow(self):
        """len * 6 + 2 wraps past INT_MAX for 357913941 bytes and more: the
        unguarded library wrote past its buffer and the server died. Redis
        (its patched copy) encodes it with 2 GB of buffer; Goblin Core
        refuses (docs/scripting.md, departures)."""
        with Raw(self.goblin, timeout=60) as c:
            got = c.call_raw("EVAL", "local s = string.rep('a', 357913942) return #cjson.encode(s)", "0")
        self.assertTrue(self.goblin.alive())
        self.assertIn(b"Cannot serialise: the JSON text could pass 1 GiB", got)
        with Raw(self.goblin) as c:
            self.assertEqual(c.call_raw("PING"), b"+PONG\r\n")

    def test_sparse_array_past_the_buffer_is_refused(self):
        with Raw(self.goblin, timeout=60) as c:
            got = c.call_raw("EVAL", "cjson.encode_sparse_array(false, 0) local ok, e = pcall(cjson.encode, "
                             "{[2^31 - 1] = 1}) cjson.encode_sparse_array(false, 2, 10) return e", "0")
        self.assertIn(b"Cannot serialise: the JSON text could pass 1 GiB", got)

    def test_everything_else_as_redis(self):
        """The guard's walk stops where the encoder raises, so its errors
        (and their positions) and results are the library's own."""
        scripts = [
            "return cjson.encode({1, 2, {a = 'x'}, 'str', true, false})",
            "local t = {} t[1] = t return cjson.encode(t)", "local t = {} t.a = t t.b = t return cjson.encode(t)",
            "return cjson.encode({[1]=1, [5]=5})", "return cjson.encode({[1]=1, [50]=5})",
            "return cjson.encode({[2^40]=1})", "return cjson.encode({[{}]=1})", "return cjson.encode({1, function() end})",
            "return cjson.encode(0/0)", "return cjson.encode()", "return cjson.encode(1, 2)",
            "return cjson.encode(cjson.null)", "return cjson.decode()", "return cjson.decode('[1', 2)",
            "return cjson.decode({})", "return cjson.decode(string.rep('[', 2000))",
            "local t = {} local c = t for i = 1, 5000 do c[1] = {} c = c[1] end return #cjson.encode(t)",
            "local t = {} local c = t for i = 1, 5000 do c.k = {} c = c.k end return cjson.encode(t)",
            "cjson.encode_max_depth(1e9) local t = {} t[1] = t t[2] = t local ok, e = pcall(cjson.encode, t) "
            "cjson.encode_max_depth(1000) return e",
            "local n = 0 for d = 1300, 4100, 7 do local t = {} local c = t for i = 1, d do c.k = {} c = c.k end "
            "if pcall(cjson.encode, t) then n = d end end return n",
            "local t = {} for i = 1, 100 do t['k' .. i] = {i, 'v' .. i, {x = i / 3}} end return #cjson.encode(t)",
        ]
        for script in scripts:
            self.same("EVAL", script, "0")


if __name__ == "__main__":
    gbtest.run_tests()
