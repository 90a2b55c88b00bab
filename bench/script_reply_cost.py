#!/usr/bin/env python3
"""Server CPU per EVALSHA of a few scripts, goblin-core against
redis-server and, optionally, an older goblin-core build.

    /usr/bin/python3 bench/script_reply_cost.py --goblin build-release/goblin-core \
        [--base /path/to/older/goblin-core] [--redis /usr/bin/redis-server] [--rounds 9] [--requests 200000] \
        [--suite reply|pattern]

Suite "reply" (the default): scripts that return a table, the cost of
turning it into a reply (engine/script/script_convert.c): the 100
elements of LRANGE 0 99 (a list of 100 integers as strings), and 10 arrays
of 10 numbers built in the script. Suite "pattern": Lua's pattern matching
(engine/script/lib_pattern.c) as scripts use it, each call made 10 times
per script: a timestamp taken apart by string.match, fields read by
string.gmatch, punctuation escaped by string.gsub, a plain string.find,
and a gsub with a function. Suite "sort": table.sort (lib_table.c) of 1,000
numbers, of 300 strings, and of 300 numbers by a function (the table is
built in the script, the same way for every server). Suite "builders":
table.concat of 100 strings and of 100 numbers, string.upper/lower/reverse
and string.rep of short strings (lib_string.c, lib_table.c). Each script
is run
by redis-benchmark (-P 16 -c 10) against a server pinned to core 0, the
client on core 1; the servers alternate within every round (the order
reverses each round), and each row is the server process's user+system
time per request (/proc/<pid>/stat), min, lower quartile and median over
the rounds. Noise on a shared machine only adds time, so the minimum and
the lower quartile are the steadiest figures.
"""
import argparse
import os
import socket
import statistics
import subprocess
import time

SUITES = {
    "reply": {
        "lrange100": "return redis.call('LRANGE', KEYS[1], 0, 99)",
        "nested10x10": "local r = {} for i = 1, 10 do local t = {} for j = 1, 10 do t[j] = j end r[i] = t end return r",
    },
    "pattern": {
        "match_date": "local y for i = 1, 10 do y = string.match('2026-12-07T04:30:00Z', "
                      "'^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)Z$') end return y",
        "gmatch_fields": "local n = 0 for i = 1, 10 do for k, v in string.gmatch('user=ann;role=admin;region=eu-west;"
                         "tier=gold;since=2019', '(%w+)=([^;]+)') do n = n + 1 end end return n",
        "gsub_escape": "local s for i = 1, 10 do s = string.gsub('job:{queue}:[42].retry(3)*high+low?', '%p', '%%%0') "
                       "end return s",
        "find_plain": "local a for i = 1, 10 do a = string.find('the quick brown fox jumps over the lazy dog', "
                      "'lazy', 1, true) end return a",
        "gsub_function": "local s for i = 1, 10 do s = string.gsub('a1 b22 c333 d4444', '%d+', "
                         "function(d) return #d end) end return s",
    },
    "builders": {
        "concat_100": "local t = {} for i = 1, 100 do t[i] = 'item:' .. i end return #table.concat(t, ',')",
        "concat_numbers_100": "local t = {} for i = 1, 100 do t[i] = i * 1.5 end return #table.concat(t, ' ')",
        "upper_lower_10": "local s = 'Job:{Queue}:Retry-Count' local n = 0 for i = 1, 10 do "
                          "n = n + #string.upper(s) + #string.lower(s) + #string.reverse(s) end return n",
        "rep_10": "local n = 0 for i = 1, 10 do n = n + #string.rep('ab', 20) end return n",
    },
    "sort": {
        "numbers_1000": "local t = {} for i = 1, 1000 do t[i] = (i * 7919) % 1000 end table.sort(t) return t[1]",
        "strings_300": "local t = {} for i = 1, 300 do t[i] = 'key:' .. ((i * 7919) % 300) end table.sort(t) "
                       "return t[1]",
        "function_300": "local t = {} for i = 1, 300 do t[i] = (i * 7919) % 300 end "
                        "table.sort(t, function(a, b) return a > b end) return t[1]",
    },
}
PORT = 7811


def cpu_seconds(pid):
    fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cli(*args):
    return subprocess.run(["redis-cli", "-p", str(PORT)] + list(args), capture_output=True, text=True,
                          check=True).stdout.strip()


def start(name, binary):
    args = [binary, "--port", str(PORT), "--save", "", "--appendonly", "no"]
    args += ["--unixsocket", "/tmp/script_reply_cost.sock"] if name != "redis" else []
    p = subprocess.Popen(["taskset", "-c", "0"] + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", PORT)).close()
            return p
        except OSError:
            time.sleep(0.05)
    p.kill()
    raise SystemExit("%s did not start" % binary)


def one_round(servers, order, scripts, requests, samples):
    for name in order:
        p = start(name, servers[name])
        try:
            cli("RPUSH", "l", *[str(i * 1000) for i in range(100)])
            for script, body in scripts.items():
                sha = cli("SCRIPT", "LOAD", body)
                c0 = cpu_seconds(p.pid)
                subprocess.run(["taskset", "-c", "1", "redis-benchmark", "-p", str(PORT), "-n", str(requests),
                                "-c", "10", "-P", "16", "-q", "EVALSHA", sha, "1", "l"],
                               capture_output=True, check=True)
                samples.setdefault((script, name), []).append((cpu_seconds(p.pid) - c0) / requests * 1e6)
        finally:
            p.terminate()
            p.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--goblin", required=True, help="the goblin-core binary measured")
    ap.add_argument("--base", help="an older goblin-core build, measured the same way")
    ap.add_argument("--redis", default="/usr/bin/redis-server", help="redis-server ('' to leave it out)")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--requests", type=int, default=200000, help="EVALSHA calls per script per server per round")
    ap.add_argument("--suite", choices=sorted(SUITES), default="reply", help="which scripts (see above)")
    a = ap.parse_args()
    scripts = SUITES[a.suite]
    servers = {"goblin": a.goblin}
    if a.base:
        servers["base"] = a.base
    if a.redis:
        servers["redis"] = a.redis
    samples = {}
    for r in range(a.rounds):
        order = list(servers) if r % 2 == 0 else list(reversed(servers))
        one_round(servers, order, scripts, a.requests, samples)
    print("server CPU per EVALSHA, us: min / lower quartile / median over %d rounds" % a.rounds)
    for script in scripts:
        row = {}
        for name in servers:
            s = sorted(samples[(script, name)])
            row[name] = (s[0], s[len(s) // 4], statistics.median(s))
        cells = ["%s %.2f / %.2f / %.2f" % (n, *v) for n, v in row.items()]
        ratios = []
        if "base" in row:
            ratios.append("goblin/base %.3f (min) %.3f (q1)" % (row["goblin"][0] / row["base"][0],
                                                               row["goblin"][1] / row["base"][1]))
        if "redis" in row:
            ratios.append("redis/goblin %.2f (median)" % (row["redis"][2] / row["goblin"][2]))
        print("%-12s %s | %s" % (script, " | ".join(cells), "; ".join(ratios)))


if __name__ == "__main__":
    main()
