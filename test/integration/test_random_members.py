"""Random members: HRANDFIELD, SRANDMEMBER, SPOP, ZRANDMEMBER and RANDOMKEY
draw uniformly, in every encoding, with and without counts, on goblin-core
and on redis-server 7.0 (the oracle) alike.

For each key (every encoding: hash listpack/hashtable, set
intset/listpack/hashtable, zset listpack/skiplist, the keyspace) and each
count form, many draws are tallied per member and tested against the
uniform distribution with Pearson's chi-square, the threshold at p = 1e-6
for n - 1 degrees of freedom (a uniform sampler fails one check in a
million; the file makes about 130 checks per server):

  * no count, or a negative count (repetition allowed): every draw is
    independent, the tally is multinomial, X^2 ~ chi2(n - 1);
  * a positive count k < n (distinct members): every reply is a uniform
    k-subset, each member's inclusion count has variance R p (1 - p) with
    covariances -R p (1 - p) / (n - 1), so X^2 * (n - 1) / (n (1 - p)) ~
    chi2(n - 1) (p = k / n, R replies).

Besides the distribution, every reply is checked for its shape: a positive
count gives min(count, n) distinct members of the key (all of them when
count >= n), a negative count |count| members with repeats as often as
independent draws repeat (a binomial check of the share of replies with a
repeat), WITHVALUES/WITHSCORES pair each member with its own value or score.

The thresholds are set explicitly (goblin-core's defaults differ from
Redis 7.0's for hashes). Redis 7.0 has no listpack sets: a small set of
strings is a hashtable there.

Every key of 12 members runs the same checks on both servers, and both
must pass them. The 300-member hashtable keys (hash, set, skiplist's
member table, the keyspace) are held to uniformity on goblin-core only:
Redis 7.0 picks from a hashtable with dictGetFairRandomKey, up to 15
records from neighbouring buckets and one of them at random, close to
uniform only while a table holds about 15 records or fewer. Redis 7.0.15
gave X^2 of about 5000 there (threshold 430 at 299 degrees of freedom);
its figures are printed, not asserted.
"""

import collections
import math
import unittest

import gbtest
from gbtest import Err, Raw, Server

def chi2_sf(x, df):
    """P(X >= x) for X ~ chi2(df): the regularized upper incomplete gamma
    Q(df / 2, x / 2), by its series below a + 1 and its continued fraction
    above (Numerical Recipes' gser/gcf)."""
    a, x = df / 2.0, x / 2.0
    if x <= 0:
        return 1.0
    lead = math.exp(-x + a * math.log(x) - math.lgamma(a))
    if x < a + 1:
        term = total = 1.0 / a
        ap = a
        while abs(term) > abs(total) * 1e-15:
            ap += 1
            term *= x / ap
            total += term
        return 1.0 - total * lead
    tiny = 1e-300
    b = x + 1 - a
    c, d = 1 / tiny, 1 / b
    h = d
    for i in range(1, 1000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        h *= d * c
        if abs(d * c - 1) < 1e-15:
            break
    return lead * h


P_FAIL = 1e-6


def chi2_critical(df):
    """The X^2 a uniform sampler exceeds with probability P_FAIL."""
    lo, hi = 0.0, float(df)
    while chi2_sf(hi, df) > P_FAIL:
        hi *= 2
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if chi2_sf(mid, df) > P_FAIL else (lo, mid)
    return hi


def chi2_uniform(tally, members, draws):
    e = draws / len(members)
    return sum((tally.get(m, 0) - e) ** 2 / e for m in members)


def chi2_subsets(tally, members, replies, k):
    n = len(members)
    p = k / n
    return chi2_uniform(tally, members, replies * k) * (n - 1) / (n * (1 - p))


def p_repeat(n, k):
    """Probability that k independent uniform draws from n repeat one."""
    if k > n:
        return 1.0
    q = 1.0
    for i in range(k):
        q *= (n - i) / n
    return 1.0 - q


BATCH = 200  # commands in flight at once: replies never back up into the sender


def pipeline(r, cmds):
    out = []
    for i in range(0, len(cmds), BATCH):
        chunk = cmds[i:i + BATCH]
        r.send(b"".join(gbtest.encode(*c) for c in chunk))
        for _ in chunk:
            v = r.read()[0]
            if isinstance(v, Err):
                raise AssertionError("%r -> %r" % (chunk[0], v))
            out.append(v)
    return out


SMALL, LARGE = 12, 300
# The largest hashtable redis-server samples uniformly (dictGetFairRandomKey's
# window is 15 records).
REDIS_UNIFORM_MAX = 15
DRAWS_PER_MEMBER = 300


def count_forms(n):
    """None (no count), negative counts small and large, positive counts
    small (Redis's path that draws and rejects repeats), most of the key
    (its path that removes from a copy), n and past n."""
    return [None, -1, -3, -(5 * n), 1, max(2, n // 4), n - 2, n, n + 5]


class Key:
    """One key on one server: its type, the encoding it must have, its
    members (field -> value, member -> score, or members)."""

    def __init__(self, kind, typ, enc, n):
        self.kind, self.typ, self.enc, self.n = kind, typ, enc, n
        if typ == "set" and enc == "intset":
            self.members = [str(i * 7 - 40).encode() for i in range(n)]
        elif typ == "keys":
            self.members = [b"key:%d" % i for i in range(n)]
        else:
            self.members = [b"m%d" % i for i in range(n)]
        self.value = {m: b"v" + m for m in self.members}
        self.score = {m: float(i) - 3.5 for i, m in enumerate(self.members)}

    def label(self):
        return "%s %s %s n=%d" % (self.kind, self.typ, self.enc, self.n)

    def thresholds(self):
        big = {"listpack": 1000, "intset": 1000}.get(self.enc, 4)
        cfg = {"hash": [("hash-max-listpack-entries", big)],
               "zset": [("zset-max-listpack-entries", big)],
               "set": [("set-max-intset-entries", big)]}.get(self.typ, [])
        if self.typ == "set" and self.kind == "goblin":
            # Redis 7.0 has no listpack sets (7.2 does, and goblin-core)
            cfg.append(("set-max-listpack-entries", big))
        return cfg

    def create_cmd(self):
        if self.typ == "hash":
            args = []
            for m in self.members:
                args += [m, self.value[m]]
            return ["HSET", "k"] + args
        if self.typ == "zset":
            args = []
            for m in self.members:
                args += [repr(self.score[m]), m]
            return ["ZADD", "k"] + args
        return ["SADD", "k"] + self.members

    def load(self, r):
        for name, v in self.thresholds():
            assert r.call("CONFIG", "SET", name, str(v)) == b"OK", name
        if self.typ == "keys":
            r.call("SELECT", "9")
            r.call("FLUSHDB")
            pipeline(r, [["SET", m, "x"] for m in self.members])
            return
        r.call("SELECT", "0")
        r.call("DEL", "k", "src")
        r.call(*self.create_cmd())
        enc = r.call("OBJECT", "ENCODING", "k")
        want = self.enc
        if self.kind == "redis" and self.typ == "set" and self.enc == "listpack":
            want = "hashtable"
        if self.kind == "goblin" and want == "skiplist":
            want = "btree"  # goblin-core's large sorted sets are a B+tree
        assert enc.decode() == want, "%s: encoding %r" % (self.label(), enc)
        if self.typ == "set":
            r.call("COPY", "k", "src")  # SPOP's trials restart from it


def draw_cmd(key, count, flag=None):
    cmd = {"hash": ["HRANDFIELD", "k"], "set": ["SRANDMEMBER", "k"], "zset": ["ZRANDMEMBER", "k"],
           "keys": ["RANDOMKEY"]}[key.typ]
    if count is not None:
        cmd.append(str(count))
        if flag:
            cmd.append(flag)
    return cmd


class RandomMembers(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        gbtest.require_redis()
        cls.servers = {"goblin": Server("goblin"), "redis": Server("redis")}

    @classmethod
    def tearDownClass(cls):
        for s in cls.servers.values():
            s.cleanup()

    def kinds(self):
        if "redis" not in self.servers:
            self.fail("the oracle is needed: " + gbtest.REDIS_SKIP_REASON)
        return ["goblin", "redis"]

    @staticmethod
    def held_to_it(kind, n):
        """Whether the server's X^2 is asserted (see the module's doc)."""
        return kind == "goblin" or n <= REDIS_UNIFORM_MAX

    # -- one count form on one key ---------------------------------------------
    def replies_for(self, r, key, count, flag):
        per_reply = 1 if count is None else min(abs(count), key.n) if count > 0 else -count
        calls = max(1, DRAWS_PER_MEMBER * key.n // per_reply)
        if key.typ == "set" and flag == "SPOP":
            return self.spop_replies(r, key, count, calls)
        replies = pipeline(r, [draw_cmd(key, count, flag)] * calls)
        return [[x] if count is None else x for x in replies]

    def spop_replies(self, r, key, count, calls):
        """SPOP from a fresh copy of the key each time."""
        if count is None and key.n > SMALL:
            calls = min(calls, 20000)
        cmds = []
        for _ in range(calls):
            cmds.append(["COPY", "src", "k", "REPLACE"])
            cmds.append(["SPOP", "k"] + ([] if count is None else [str(count)]))
        out = pipeline(r, cmds)[1::2]
        return [[x] if count is None else x for x in out]

    def check_form(self, kind, r, key, count, flag=None):
        """Returns X^2 and its threshold for one count form, after checking
        every reply's shape."""
        replies = self.replies_for(r, key, count, flag)
        paired = flag in ("WITHVALUES", "WITHSCORES")
        members = set(key.members)
        tally = collections.Counter()
        with_repeat = 0
        for rep in replies:
            if paired:
                names, extra = rep[0::2], rep[1::2]
                for m, x in zip(names, extra):
                    if flag == "WITHVALUES":
                        self.assertEqual(x, key.value[m], key.label())
                    else:
                        self.assertEqual(float(x), key.score[m], key.label())
                rep = names
            self.assertTrue(set(rep) <= members, "%s: %r" % (key.label(), rep))
            if count is None:
                self.assertEqual(len(rep), 1)
            elif count > 0:
                self.assertEqual(len(rep), min(count, key.n), key.label())
                self.assertEqual(len(set(rep)), len(rep), "%s count %d: repeats %r" % (key.label(), count, rep))
                if count >= key.n:
                    self.assertEqual(set(rep), members)
            else:
                self.assertEqual(len(rep), -count, key.label())
                with_repeat += len(set(rep)) < len(rep)
            tally.update(rep)
        if count is not None and count < 0:
            # repeats as often as independent draws give them (6 sigma)
            p = p_repeat(key.n, -count)
            mean, sd = p * len(replies), math.sqrt(len(replies) * p * (1 - p))
            self.assertLessEqual(abs(with_repeat - mean), 6 * sd + 1e-9,
                                 "%s count %d: %d of %d replies repeat, expected %.1f"
                                 % (key.label(), count, with_repeat, len(replies), mean))
        if count is not None and count >= key.n:
            return None
        df = key.n - 1
        if count is None or count < 0:
            x2 = chi2_uniform(tally, key.members, sum(tally.values()))
        else:
            x2 = chi2_subsets(tally, key.members, len(replies), count)
        return x2, chi2_critical(df)

    def run_key(self, typ, enc, n, flags=(None,)):
        """Every count form on the key, on both servers; the oracle's
        result is asserted too where Redis is uniform."""
        failures = []
        for kind in self.kinds():
            r = self.servers[kind].raw()
            key = Key(kind, typ, enc, n)
            key.load(r)
            for flag in flags:
                for count in count_forms(n):
                    if flag in ("WITHVALUES", "WITHSCORES") and count is None:
                        continue
                    if flag == "SPOP" and count is not None and count < 0:
                        continue  # SPOP takes no negative count
                    res = self.check_form(kind, r, key, count, flag)
                    if res is None:
                        continue
                    x2, crit = res
                    what = "%s %s count=%s: X2=%.1f (threshold %.1f)" % (key.label(), flag or "", count, x2, crit)
                    print(what)
                    if x2 >= crit and self.held_to_it(kind, n):
                        failures.append(what)
            r.close()
        self.assertEqual(failures, [])

    # -- the keys ---------------------------------------------------------------
    def test_hash_listpack(self):
        self.run_key("hash", "listpack", SMALL, (None, "WITHVALUES"))

    def test_hash_hashtable_small(self):
        self.run_key("hash", "hashtable", SMALL, (None, "WITHVALUES"))

    def test_hash_hashtable_large(self):
        self.run_key("hash", "hashtable", LARGE)

    def test_set_intset(self):
        self.run_key("set", "intset", SMALL, (None, "SPOP"))

    def test_set_listpack(self):
        self.run_key("set", "listpack", SMALL, (None, "SPOP"))

    def test_set_hashtable_small(self):
        self.run_key("set", "hashtable", SMALL, (None, "SPOP"))

    def test_set_hashtable_large(self):
        self.run_key("set", "hashtable", LARGE, (None, "SPOP"))

    def test_zset_listpack(self):
        self.run_key("zset", "listpack", SMALL, (None, "WITHSCORES"))

    def test_zset_skiplist(self):
        self.run_key("zset", "skiplist", SMALL, (None, "WITHSCORES"))

    def test_zset_skiplist_large(self):
        self.run_key("zset", "skiplist", LARGE)

    def test_randomkey(self):
        for n in (SMALL, LARGE):
            failures = []
            for kind in self.kinds():
                r = self.servers[kind].raw()
                key = Key(kind, "keys", "db", n)
                key.load(r)
                x2, crit = self.check_form(kind, r, key, None)
                print("%s RANDOMKEY: X2=%.1f (threshold %.1f)" % (key.label(), x2, crit))
                if x2 >= crit and self.held_to_it(kind, n):
                    failures.append("%s: X2=%.1f" % (key.label(), x2))
                r.call("FLUSHDB")
                r.close()
            self.assertEqual(failures, [])


HUGE = "-9223372036854775807"
HUGE_PAIRS = "-4611686018427387903"  # WITHVALUES/WITHSCORES: within +-LONG_MAX/2


class HugeNegativeCounts(unittest.TestCase):
    """A negative count repeats members, so the reply's size is the
    client's number whatever the key holds. redis-server 7.0 builds such a
    reply until memory runs out, every other client waiting; goblin-core
    closes the asking client at once, as one past the hard limit of its
    client-output-buffer-limit class (normal: 1gb), and refuses it to a
    script (the Lua table could not be built). Whatever the limit, a reply
    whose elements, at what each takes in the value, would pass the
    machine's memory is refused with an error."""

    CASES = [("HRANDFIELD", "h", HUGE), ("HRANDFIELD", "h", HUGE_PAIRS, "WITHVALUES"),
             ("SRANDMEMBER", "s", HUGE), ("ZRANDMEMBER", "z", HUGE), ("ZRANDMEMBER", "z", HUGE_PAIRS, "WITHSCORES")]

    def test_the_asker_is_closed_and_the_server_keeps_serving(self):
        with Server("goblin") as srv, Raw(srv) as admin:
            admin.call("HSET", "h", "a", "1", "b", "2")
            admin.call("SADD", "s", "a", "b")
            admin.call("ZADD", "z", "1", "a", "2", "b")
            for i, cmd in enumerate(self.CASES):
                with self.subTest(cmd=" ".join(cmd)), Raw(srv) as c:
                    c.send_cmd(*cmd)
                    c.expect_eof(timeout=5 * gbtest.SLOW)
                    self.assertEqual(admin.call("PING"), b"PONG")
                    stats = gbtest.parse_info(admin.call("INFO", "stats"))
                    self.assertEqual(int(stats["client_output_buffer_limit_disconnections"]), i + 1)
            # a missing key has nothing to repeat: an empty array, as Redis
            for cmd in (("SRANDMEMBER", "nokey", HUGE), ("HRANDFIELD", "nokey", HUGE),
                        ("ZRANDMEMBER", "nokey", HUGE)):
                self.assertEqual(admin.call_raw(*cmd), b"*0\r\n")
            # counts whose reply fits are served
            self.assertEqual(len(admin.call("SRANDMEMBER", "s", "-100000")), 100000)
            # a script gets an error instead of a table it could not hold
            err = admin.call("EVAL", "return redis.pcall('srandmember', KEYS[1], ARGV[1])", "1", "s", HUGE)
            self.assertIsInstance(err, Err)
            self.assertIn(b"too large for a script", err)
            self.assertTrue(srv.ping_ok())

    def test_unlimited_output_keeps_redis_behaviour_for_fitting_counts(self):
        # client-output-buffer-limit normal 0 0 0 (Redis's default) disables
        # the bound, as it does in Redis: counts that fit are served ...
        with Server("goblin", ["--client-output-buffer-limit", "normal 0 0 0"]) as srv, Raw(srv) as c:
            c.call("SADD", "s", "a")
            self.assertEqual(len(c.call("SRANDMEMBER", "s", "-200000")), 200000)
            # ... and one larger than the machine's memory is refused at
            # once, where redis-server would build it until memory ran out
            c.call("HSET", "h", "a", "1")
            c.call("ZADD", "z", "1", "a")
            for cmd in self.CASES:
                with self.subTest(cmd=" ".join(cmd)):
                    self.assertEqual(c.call(*cmd), Err(TOO_LARGE))
            self.assertTrue(srv.ping_ok())

    def test_reply_judged_by_what_the_elements_hold(self):
        """One member of 1 MiB repeated 2,000,000 times is 2 TB: under the
        hard limit by its count of elements, refused by their size."""
        with Server("goblin") as srv, Raw(srv) as c:
            big = "x" * (1 << 20)
            c.call("SADD", "bs", big)
            c.call("HSET", "bh", "f", big)
            c.call("ZADD", "bz", "1", big)
            for cmd in (("SRANDMEMBER", "bs", "-2000000"), ("HRANDFIELD", "bh", "-2000000", "WITHVALUES"),
                        ("ZRANDMEMBER", "bz", "-2000000")):
                with self.subTest(cmd=cmd[0]):
                    self.assertEqual(c.call(*cmd), Err(TOO_LARGE))
            self.assertEqual(len(c.call("SRANDMEMBER", "bs", "-20")), 20)  # 20 MB: served
            self.assertTrue(srv.ping_ok())


TOO_LARGE = b"ERR the reply would take more memory than this machine has (lower the count)"


if __name__ == "__main__":
    gbtest.run_tests()
