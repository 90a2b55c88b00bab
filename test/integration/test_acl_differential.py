"""ACL compared with redis-server 7.0, reply for reply (skipped, saying why,
without a redis-server 7.0).

Random rule strings (every kind of rule, valid and not, selectors split
over arguments, unbalanced parentheses) are applied to both servers with
ACL SETUSER; after each, the reply, ACL GETUSER and ACL LIST must be equal,
and so must ACL DRYRUN of random commands and the NOPERM replies the
user gets running them for real. ACL CAT, the errors of every subcommand
and the EXEC-time recheck are compared too.

Two differences are normalised, by design: Redis prints the
single-command rules that follow the categories ("+get +set") in its
command hash table's order, which is seeded randomly per process (two
redis-servers disagree with each other); goblin-core prints them in
command table order. The comparison sorts those tokens. And RING, which
Redis does not have, may show as "+ring"/"-ring": those tokens are
dropped. Everything else is compared as sent.
ACL CAT <category> lists the category's commands this server has, in
table order, where Redis lists all of Redis's in hash order: goblin-core's
list must be Redis's restricted to the commands goblin-core implements.

GOBLIN_ACL_DIFF_SEEDS (default 12) and GOBLIN_ACL_DIFF_STEPS (default 150)
size the random part; GOBLIN_ACL_DIFF_SEED runs one seed.
"""

import hashlib
import os
import random
import unittest

import gbtest
import newer_commands
from gbtest import Raw, Err, GoblinAndRedisCase

SEEDS = int(os.environ.get("GOBLIN_ACL_DIFF_SEEDS", "12"))
STEPS = int(os.environ.get("GOBLIN_ACL_DIFF_STEPS", "150"))
ONE_SEED = os.environ.get("GOBLIN_ACL_DIFF_SEED")

CATEGORIES = ["keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap", "hyperloglog",
              "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous", "connection",
              "transaction", "scripting"]
COMMANDS = ["get", "set", "del", "lpush", "hget", "hset", "zadd", "sadd", "incr", "mget", "mset", "config",
            "config|get", "config|set", "client|list", "client", "acl|whoami", "acl", "ping", "echo", "keys",
            "flushall", "info", "xadd", "publish", "subscribe", "eval", "select", "debug", "object|encoding",
            "rename", "copy", "lmove", "sort", "exec", "multi", "auth", "hello", "command|info"]
PASSWORDS = ["p1", "p2", "", "pässword", "x" * 300]


def digest(p):
    return hashlib.sha256(p.encode()).hexdigest()


def random_rule(rng):
    kind = rng.randrange(14)
    if kind == 0:
        return rng.choice(["on", "off", "nopass", "resetpass", "reset", "skip-sanitize-payload", "sanitize-payload",
                           "clearselectors", "ON", "Off"])
    if kind == 1:
        p = rng.choice(PASSWORDS)
        return rng.choice([">" + p, "<" + p, "#" + digest(p), "!" + digest(p), "#" + digest(p).upper(), "#abc",
                           "!" + "0" * 64])
    if kind == 2:
        return rng.choice(["~*", "~k*", "~k1", "~{a}*", "allkeys", "resetkeys", "%R~r*", "%W~w*", "%RW~x*",
                           "%WR~y", "%r~k*", "%~bad", "%R", "%X~x", "%RR~z", "~a b", "%W~k*", "%R~*"])
    if kind == 3:
        return rng.choice(["&*", "&c*", "&c1", "allchannels", "resetchannels", "&a b", "&"])
    if kind in (4, 5, 6):
        return rng.choice("+-") + "@" + rng.choice(CATEGORIES + ["all", "ALL", "Read", "nosuch", ""])
    if kind in (7, 8, 9):
        return rng.choice("+-") + rng.choice(COMMANDS + ["nosuch", "GET", "Config|Get", "config|nosuch", ""])
    if kind == 10:
        return rng.choice(["+select|0", "+select|1", "+get|x", "-get|x", "+config|get|x", "+get|", "+config|",
                           "+debug|sleep", "+SELECT|2", "allcommands", "nocommands", "+|x", "+@"])
    if kind == 11:
        inner = " ".join(random_rule(rng) for _ in range(rng.randrange(4)) if True)
        return "(" + inner + ")"
    if kind == 12:
        return rng.choice(["bogus", "", "(", ")", "()", "(~x", "+get)", "(&c1 +publish)", "(%R~r* +@read)",
                           "(\"~q\" +get)", "(')"])
    return rng.choice(["+@all", "-@all", "~*", "on", "nopass"])


def split_selector(rng, rules):
    """Sometimes spreads a "( ... )" rule over several arguments, as users do."""
    out = []
    for r in rules:
        if r.startswith("(") and r.endswith(")") and " " in r and rng.random() < 0.5:
            out.extend(r.split(" "))
        else:
            out.append(r)
    return out


def normalise_commands(text):
    """Sorts the single-command rules (Redis's order is its hash table's) and
    drops RING's (goblin-core's own command, in @admin @dangerous @slow
    @connection: a rule set that takes it out of a category it granted
    shows "-ring", which Redis, without RING, has no reason to print), and
    those of the hash-field expiry commands, which Redis 7.0 lacks for the
    same reason (newer_commands.WHY; their categories are checked in
    test_command_meta.py)."""
    own = {"ring"} | set(newer_commands.NAMES)
    words = [w for w in text.split(" ") if not (w[:1] in "+-" and w[1:] in own)]
    fixed = [w for w in words if not (w[:1] in "+-" and not w[1:2] == "@")]
    single = sorted(w for w in words if w[:1] in "+-" and not w[1:2] == "@")
    return " ".join(fixed + single)


def normalise_list_line(line):
    """An ACL LIST line: each part (the root, each "(selector)") normalised."""
    if not isinstance(line, bytes):
        return line
    text = line.decode("latin-1")
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(" and depth == 0:
            parts.append(cur)
            cur = "("
            depth = 1
        elif ch == ")" and depth == 1:
            parts.append(cur + ")")
            cur = ""
            depth = 0
        else:
            cur += ch
    parts.append(cur)
    out = []
    for p in parts:
        if p.startswith("(") and p.endswith(")"):
            out.append("(" + normalise_commands(p[1:-1]) + ")")
        else:
            out.append(normalise_commands(p))
    return "".join(out).encode("latin-1")


def normalise_getuser(reply):
    """ACL GETUSER: the "commands" fields normalised, the selectors too."""
    if not isinstance(reply, list):
        return reply
    out = list(reply)
    for i in range(0, len(out) - 1, 2):
        if out[i] == b"commands":
            out[i + 1] = normalise_commands(out[i + 1].decode("latin-1")).encode("latin-1")
        elif out[i] == b"selectors":
            out[i + 1] = [normalise_getuser(s) for s in out[i + 1]]
    return out


def random_call(rng):
    """A command and arguments to try as the user (all implemented by goblin-core)."""
    key = rng.choice(["k1", "kx", "r1", "w1", "x1", "y", "h1", "{a}b", "other"])
    chan = rng.choice(["c1", "cx", "other", "c*"])
    return rng.choice([
        ["GET", key], ["SET", key, "v"], ["SET", key, "v", "GET"], ["DEL", key, "other"], ["LPUSH", key, "a"],
        ["HGET", key, "f"], ["HSET", key, "f", "v"], ["MGET", key, "k1"], ["MSET", key, "1", "k1", "2"],
        ["EXISTS", key], ["TYPE", key], ["RENAME", key, "k1"], ["COPY", key, "w1"], ["LMOVE", key, "w1", "LEFT",
                                                                                    "RIGHT"],
        ["PING"], ["ECHO", "x"], ["CONFIG", "GET", "maxmemory"],
        ["CLIENT", "LIST"], ["SELECT", "0"], ["SELECT", "1"], ["INCR", key], ["ZADD", key, "1", "m"],
        ["SADD", key, "m"], ["OBJECT", "ENCODING", key], ["KEYS", "*"], ["ACL", "WHOAMI"], ["INFO"],
        ["EXPIRE", key, "10"], ["GETDEL", key], ["SINTERSTORE", "w1", key], ["BLPOP", key, "0.01"],
    ])


class AclDifferential(GoblinAndRedisCase):
    def both(self, *cmd, norm=lambda x: x):
        with Raw(self.goblin) as g, Raw(self.redis) as r:
            got, want = g.call(*cmd), r.call(*cmd)
        # The RESP types too: the normalisers work on parsed replies.
        self.assertEqual((gbtest.resp_types(got), norm(got)), (gbtest.resp_types(want), norm(want)),
                         "%r:\n goblin %r\n redis  %r" % (cmd, got, want))
        return got

    def compare_user(self, name, context):
        self.both("ACL", "GETUSER", name, norm=normalise_getuser)
        self.both("ACL", "LIST", norm=lambda l: [normalise_list_line(x) for x in l] if isinstance(l, list) else l)

    def run_seed(self, seed):
        rng = random.Random(seed)
        name = "u%d" % seed
        history = []
        for step in range(STEPS):
            rules = [random_rule(rng) for _ in range(rng.randrange(1, 6))]
            args = split_selector(rng, rules)
            history.append(args)
            ctx = "seed %d step %d: ACL SETUSER %s %r" % (seed, step, name, args)
            with Raw(self.goblin) as g, Raw(self.redis) as r:
                got, want = g.call("ACL", "SETUSER", name, *args), r.call("ACL", "SETUSER", name, *args)
            self.assertEqual(got, want, ctx)
            self.compare_user(name, ctx)
            for _ in range(3):
                call = random_call(rng)
                self.both("ACL", "DRYRUN", name, *call)
            if step % 10 == 9:
                self.both("ACL", "DELUSER", name)

    def test_random_rules(self):
        seeds = [int(ONE_SEED)] if ONE_SEED else range(1, SEEDS + 1)
        for seed in seeds:
            self.run_seed(seed)

    def test_noperm_replies_when_running(self):
        # The same user on both servers, then real commands as that user.
        rng = random.Random(7)
        setups = [["on", "nopass", "-@all", "+get", "+set", "~k*", "%R~r*", "%W~w*"],
                  ["on", "nopass", "+@all", "-@dangerous", "resetkeys", "~k*", "(~w* +set)"],
                  ["on", ">pw", "+@read", "+@write", "allkeys", "-set", "+select|0", "&c1"],
                  ["on", "nopass", "+@all", "~*", "-config|set", "-client"]]
        for i, setup in enumerate(setups):
            name = "run%d" % i
            self.both("ACL", "SETUSER", name, *setup)
            with Raw(self.goblin) as g, Raw(self.redis) as r:
                pw = "pw" if ">pw" in setup else "x"
                self.assertEqual(g.call("AUTH", name, pw), r.call("AUTH", name, pw))
                for _ in range(60):
                    call = random_call(rng)
                    got, want = g.call(*call), r.call(*call)
                    if isinstance(want, Err) or isinstance(got, Err):
                        self.assertEqual(got, want, "%s %r" % (name, call))

    def test_cat(self):
        self.both("ACL", "CAT")
        with Raw(self.goblin) as g:
            ours = {n.decode() for n in g.call("COMMAND", "LIST")}
        for cat in CATEGORIES + ["READ", "Admin"]:
            with Raw(self.goblin) as g, Raw(self.redis) as r:
                got, want = g.call("ACL", "CAT", cat), r.call("ACL", "CAT", cat)
            want = sorted(n for n in want if n.decode() in ours)
            # RING is goblin-core's own (@admin @slow @dangerous @connection), the
            # hash-field expiry commands Redis 7.4/8.0's (test_command_meta.py)
            own = {b"ring"} | {n.encode() for n in newer_commands.NAMES}
            self.assertEqual(sorted(n for n in got if n not in own), want, cat)
            self.assertEqual(len(got), len(set(got)), cat)
        self.both("ACL", "CAT", "nosuch")
        self.both("ACL", "CAT", "a", "b")

    def test_subcommand_errors(self):
        for cmd in (["ACL"], ["ACL", "nosuch"], ["ACL", "GETUSER"], ["ACL", "GETUSER", "nosuch"],
                    ["ACL", "SETUSER"], ["ACL", "SETUSER", "a b"], ["ACL", "SETUSER", "a\x00b"],
                    ["ACL", "SETUSER", "e", "(", "x"], ["ACL", "SETUSER", "e", "x", "(~y"],
                    ["ACL", "DELUSER"], ["ACL", "DELUSER", "default"], ["ACL", "DELUSER", "nosuch", "default"],
                    ["ACL", "DELUSER", "nosuch"], ["ACL", "LOG", "x"], ["ACL", "LOG", "-1"], ["ACL", "LOG", "1", "2"],
                    ["ACL", "GENPASS", "0"], ["ACL", "GENPASS", "4097"], ["ACL", "GENPASS", "x"],
                    ["ACL", "GENPASS", "1", "2"], ["ACL", "DRYRUN", "nosuch", "get", "x"],
                    ["ACL", "DRYRUN", "default", "nosuch"], ["ACL", "DRYRUN", "default", "get"],
                    ["ACL", "DRYRUN", "default", "config", "nosuch"], ["ACL", "DRYRUN", "default", "get", "k"],
                    ["ACL", "DRYRUN", "default", "config"], ["ACL", "LOAD"], ["ACL", "SAVE"], ["ACL", "LIST", "x"],
                    ["ACL", "WHOAMI"], ["ACL", "HELP"], ["ACL", "help"], ["acl", "cat", "x", "y"],
                    ["ACL", "USERS"]):
            self.both(*cmd)
        with Raw(self.goblin) as g:
            self.assertEqual(len(g.call("ACL", "GENPASS")), 64)
            self.assertEqual(len(g.call("ACL", "GENPASS", "5")), 2)
            self.assertEqual(len(g.call("ACL", "GENPASS", "4096")), 1024)
            self.assertNotEqual(g.call("ACL", "GENPASS"), g.call("ACL", "GENPASS"))

    def test_exec_recheck_and_multi(self):
        for srv in (self.goblin, self.redis):
            with Raw(srv) as c:
                c.call("ACL", "SETUSER", "tx", "on", "nopass", "+@all", "~*", "&*")
        replies = []
        for srv in (self.goblin, self.redis):
            with Raw(srv) as admin, Raw(srv) as c:
                out = [c.call("AUTH", "tx", "x"), c.call("MULTI"), c.call("GET", "foo"), c.call("SET", "bar", "1"),
                       c.call("GET", "bar")]
                admin.call("ACL", "SETUSER", "tx", "resetkeys", "~foo", "-set")
                out.append(c.call("EXEC"))
                admin.call("ACL", "SETUSER", "tx", "+get")
                out += [c.call("MULTI"), c.call("GET", "foo"), c.call("EXEC")]
                out += [c.call("MULTI"), c.call("GET", "bar")]
                admin.call("ACL", "SETUSER", "tx", "-exec")
                out.append(c.call("EXEC"))
                replies.append(out)
        self.assertEqual(replies[0], replies[1])

    def test_auth_errors(self):
        for cmd in (["AUTH", "x"], ["AUTH", "nosuch", "x"], ["AUTH", "a", "b", "c"], ["HELLO", "2", "AUTH", "x", "y"]):
            self.both(*cmd)

    def test_hello_options_act_as_read(self):
        """HELLO's AUTH and SETNAME act left to right as Redis 7.0 reads
        them: what came before a bad option has taken effect, the first
        failure answers; the NOAUTH check comes after them all. goblin-core
        once read every option first, then authenticated, then named."""
        cases = [["HELLO", "2", "AUTH", "hu", "pw", "FOO"], ["HELLO", "2", "AUTH", "hu", "wrong", "FOO"],
                 ["HELLO", "2", "SETNAME", "x", "FOO"], ["HELLO", "2", "SETNAME", "a b", "AUTH", "hu", "wrong"],
                 ["HELLO", "2", "AUTH", "hu", "pw", "AUTH", "hv", "wrong"], ["HELLO", "2", "SETNAME", "nm"],
                 ["HELLO", "2", "SETNAME", "a b"]]
        for srv in (self.goblin, self.redis):
            with Raw(srv) as c:
                c.call("ACL", "SETUSER", "hu", "on", ">pw", "+@all", "~*")
                c.call("ACL", "SETUSER", "hv", "on", ">pw2", "+@all", "~*")
                c.call("ACL", "LOG", "RESET")
        for cmd in cases:
            for locked in (False, True):  # the default user needs a password
                got = []
                for srv in (self.goblin, self.redis):
                    with Raw(srv) as admin, Raw(srv) as c:
                        admin.call("ACL", "SETUSER", "default", "resetpass", ">dp" if locked else "nopass")
                        r = c.call(*cmd)
                        out = [b"<hello reply>" if isinstance(r, list) and r[:1] == [b"server"] else r]
                        admin.call("AUTH", "dp") if locked else None
                        c.call("AUTH", "default", "dp") if locked else None
                        out += [c.call("ACL", "WHOAMI"), c.call("CLIENT", "GETNAME")]
                        out.append([e[e.index(b"reason") + 1] for e in admin.call("ACL", "LOG")])
                        admin.call("ACL", "LOG", "RESET")
                        admin.call("ACL", "SETUSER", "default", "nopass")
                    got.append(out)
                self.assertEqual(got[0], got[1], (cmd, "default locked" if locked else ""))


if __name__ == "__main__":
    import gbtest
    gbtest.run_tests()
