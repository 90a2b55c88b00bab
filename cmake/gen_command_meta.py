#!/usr/bin/env python3
"""Generates engine/core/request/command_meta_table.c from a running Redis 7.0.

Redis describes its commands to clients through COMMAND INFO and COMMAND
DOCS: arity, flags, ACL categories, key specs, tips, documentation and the
argument tree, for every command and subcommand. Goblin Core answers the
same questions, checks ACL categories and finds keys from the same facts,
so it takes them from the reference server instead of retyping 240
commands by hand. The output is committed; this script is run only when
the reference changes:

    redis-server --port 7390 --daemonize yes
    python3 cmake/gen_command_meta.py 7390 cmake/command_meta_extra.json > engine/core/request/command_meta_table.c

The second argument is the supplementary input: commands Redis 7.0 lacks
(hash-field expiry: Redis 7.4/8.0), in the form of Redis's own
src/commands/*.json files. json_command() turns each into what a Redis
that has it answers to COMMAND and COMMAND DOCS (its implied ACL
categories included), so both sources go through the same emitter.

It speaks RESP3 (HELLO 3) so that it sees which replies are maps and sets,
and it fails on any field or flag it does not know rather than drop it.
"""
import json
import socket
import sys

# The orders Redis 7.0 emits these in (server.c addReplyFlagsForCommand,
# addReplyCommandKeySpecs, acl.c ACLCommandCategories, addReplyCommandArgList,
# addReplyCommandDocs). engine/core/request/command_meta.h numbers its bits the same way.
FLAGS = ["write", "readonly", "denyoom", "module", "admin", "pubsub", "noscript", "blocking", "loading",
         "stale", "skip_monitor", "skip_slowlog", "asking", "fast", "no_auth", "may_replicate",
         "no_mandatory_keys", "no_async_loading", "no_multi", "movablekeys", "allow_busy"]
CATEGORIES = ["keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
              "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous",
              "connection", "transaction", "scripting"]
KS_FLAGS = ["RO", "RW", "OW", "RM", "access", "update", "insert", "delete", "not_key", "incomplete",
            "variable_flags"]
ARG_TYPES = ["string", "integer", "double", "key", "pattern", "unix-time", "pure-token", "oneof", "block"]
ARG_FLAGS = ["optional", "multiple", "multiple_token"]
ARG_FIELDS = ["name", "type", "key_spec_index", "token", "since", "deprecated_since", "flags", "arguments"]
DOC_FLAGS = ["deprecated", "syscmd"]
DOC_FIELDS = ["summary", "since", "group", "complexity", "doc_flags", "deprecated_since", "replaced_by",
              "history", "arguments", "subcommands"]


class Resp3:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.f = self.sock.makefile("rb")

    def call(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a.encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.sock.sendall(out)
        return self.read()

    def read(self):
        line = self.f.readline()[:-2]
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            return self.f.read(int(rest) + 2)[:-2].decode()
        if kind in (b"*", b"~"):
            return [self.read() for _ in range(int(rest))]
        if kind == b"%":
            return [(self.read(), self.read()) for _ in range(int(rest))]
        raise RuntimeError("unexpected reply %r" % line)


def c_str(s):
    if s is None:
        return "NULL"
    out = '"'
    for ch in s:
        if ch in '"\\':
            out += "\\" + ch
        elif 32 <= ord(ch) < 127:
            out += ch
        else:
            raise ValueError("non-ASCII text %r" % s)
    return out + '"'


def ident(name):
    return "".join(ch if ch.isalnum() else "_" for ch in name)


def ordered_bits(values, order, what):
    """The bits of values in order; they must appear in that order."""
    idx = [order.index(v) for v in values]
    if idx != sorted(idx):
        raise ValueError("%s out of the expected order: %r" % (what, values))
    return idx


def check_fields(pairs, order, what):
    keys = [k for k, _ in pairs]
    unknown = [k for k in keys if k not in order]
    if unknown or [order.index(k) for k in keys] != sorted(order.index(k) for k in keys):
        raise ValueError("%s fields %r (known order %r)" % (what, keys, order))
    return dict(pairs)


class Emitter:
    def __init__(self):
        self.lines = []

    def emit(self, s=""):
        self.lines.append(s)

    def args(self, prefix, args):
        """Emits the argument tree (children first); returns the array name."""
        children = []
        for i, a in enumerate(args):
            m = check_fields(a, ARG_FIELDS, "argument")
            if m["type"] not in ARG_TYPES:
                raise ValueError("argument type %r" % m["type"])
            sub = None
            if "arguments" in m:
                sub = self.args("%s_%d" % (prefix, i), [x for x in m["arguments"]])
            children.append((m, sub))
        name = prefix
        self.emit("static const gb_cmd_arg %s[] = {" % name)
        for m, sub in children:
            flags = " | ".join("GB_ARG_" + ARG_FLAGS[b].upper() for b in
                               ordered_bits(m.get("flags", []), ARG_FLAGS, "argument flags")) or "0"
            self.emit("    {%s, %s, %s, %s, %s, GB_ARG_%s, %d, %s, %d}," % (
                c_str(m["name"]), c_str(m.get("token")), c_str(m.get("since")), c_str(m.get("deprecated_since")),
                sub or "NULL", ident(m["type"]).upper(), m.get("key_spec_index", -1), flags,
                len(m.get("arguments", []))))
        self.emit("};")
        return name

    def key_specs(self, prefix, specs):
        name = prefix + "_keys"
        self.emit("static const gb_key_spec %s[] = {" % name)
        for spec in specs:
            m = check_fields(spec, ["notes", "flags", "begin_search", "find_keys"], "key spec")
            flags = " | ".join("GB_KS_" + KS_FLAGS[b].upper() for b in
                               ordered_bits(m["flags"], KS_FLAGS, "key spec flags")) or "0"
            bs = dict(m["begin_search"])
            bspec = dict(bs["spec"])
            fk = dict(m["find_keys"])
            fspec = dict(fk["spec"])
            if bs["type"] == "index":
                begin = ".begin = GB_KS_BEGIN_INDEX, .begin_index = %d" % bspec["index"]
            elif bs["type"] == "keyword":
                begin = ".begin = GB_KS_BEGIN_KEYWORD, .begin_keyword = %s, .begin_startfrom = %d" % (
                    c_str(bspec["keyword"]), bspec["startfrom"])
            elif bs["type"] == "unknown":
                begin = ".begin = GB_KS_BEGIN_UNKNOWN"
            else:
                raise ValueError("begin_search %r" % bs)
            if fk["type"] == "range":
                find = ".find = GB_KS_FIND_RANGE, .range_lastkey = %d, .range_keystep = %d, .range_limit = %d" % (
                    fspec["lastkey"], fspec["keystep"], fspec["limit"])
            elif fk["type"] == "keynum":
                find = ".find = GB_KS_FIND_KEYNUM, .keynum_index = %d, .keynum_firstkey = %d, .keynum_keystep = %d" % (
                    fspec["keynumidx"], fspec["firstkey"], fspec["keystep"])
            elif fk["type"] == "unknown":
                find = ".find = GB_KS_FIND_UNKNOWN"
            else:
                raise ValueError("find_keys %r" % fk)
            self.emit("    {.notes = %s, .flags = %s, %s, %s}," % (c_str(m.get("notes")), flags, begin, find))
        self.emit("};")
        return name

    def command(self, info, doc):
        """Emits one command (subcommands first); returns its initializer."""
        (name, arity, flags, first, last, step, cats, tips, specs, subs) = info
        d = check_fields(doc, DOC_FIELDS, "docs of " + name)
        prefix = "m_" + ident(name)
        flag_bits = ordered_bits(flags, FLAGS, name + " flags")
        cat_bits = ordered_bits([c[1:] for c in cats], CATEGORIES, name + " categories")
        doc_bits = ordered_bits(d.get("doc_flags", []), DOC_FLAGS, name + " doc flags")
        sub_inits = []
        if subs:
            sub_docs = dict(d["subcommands"])
            for s in sorted(subs, key=lambda x: x[0]):
                sub_inits.append(self.command(s, sub_docs[s[0]]))
            if sorted(sub_docs) != sorted(s[0] for s in subs):
                raise ValueError(name + ": subcommands differ between INFO and DOCS")
        elif "subcommands" in d:
            raise ValueError(name + ": DOCS has subcommands, INFO none")
        fields = [".name = %s" % c_str(name), ".arity = %d" % arity,
                  ".flags = %s" % (" | ".join("GB_CMDF_" + FLAGS[b].upper() for b in flag_bits) or "0"),
                  ".acl_categories = %s" % (" | ".join("GB_ACL_" + CATEGORIES[b].upper() for b in cat_bits) or "0"),
                  ".first_key = %d, .last_key = %d, .key_step = %d" % (first, last, step),
                  ".summary = %s, .since = %s, .group = %s" % (c_str(d["summary"]), c_str(d["since"]),
                                                              c_str(d["group"]))]
        if "complexity" in d:
            fields.append(".complexity = %s" % c_str(d["complexity"]))
        if doc_bits:
            fields.append(".doc_flags = %s" % " | ".join("GB_DOC_" + DOC_FLAGS[b].upper() for b in doc_bits))
        for f in ("deprecated_since", "replaced_by"):
            if f in d:
                fields.append(".%s = %s" % (f, c_str(d[f])))
        if tips:
            self.emit("static const char *const %s_tips[] = {%s};" % (prefix, ", ".join(c_str(t) for t in tips)))
            fields.append(".tips = %s_tips, .ntips = %d" % (prefix, len(tips)))
        if specs:
            fields.append(".key_specs = %s, .nkey_specs = %d" % (self.key_specs(prefix, specs), len(specs)))
        if "history" in d:
            self.emit("static const gb_cmd_history %s_history[] = {%s};" % (
                prefix, ", ".join("{%s, %s}" % (c_str(v), c_str(t)) for v, t in d["history"])))
            fields.append(".history = %s_history, .nhistory = %d" % (prefix, len(d["history"])))
        if "arguments" in d:
            fields.append(".args = %s, .nargs = %d" % (self.args(prefix + "_args", d["arguments"]),
                                                       len(d["arguments"])))
        if sub_inits:
            self.emit("static const gb_command_meta %s_subs[] = {" % prefix)
            for s in sub_inits:
                self.emit("    {%s}," % s)
            self.emit("};")
            fields.append(".subcommands = %s_subs, .nsubcommands = %d" % (prefix, len(sub_inits)))
        return ", ".join(fields)


def json_command(name, j):
    """(COMMAND INFO entry, COMMAND DOCS fields) of a command described in
    Redis's JSON format, as Redis's server.c would reply them."""
    flags = [f.lower() for f in j.get("command_flags", [])]
    cats = {c.lower() for c in j.get("acl_categories", [])}
    # setImplicitACLCategories (server.c)
    if "write" in flags:
        cats.add("write")
    elif "readonly" in flags:
        cats.add("read")
    if "admin" in flags:
        cats |= {"admin", "dangerous"}
    if "pubsub" in flags:
        cats.add("pubsub")
    if "blocking" in flags:
        cats.add("blocking")
    cats.add("fast" if "fast" in flags else "slow")
    cats = ["@" + c for c in CATEGORIES if c in cats]

    def ks_flag(f):
        return f if f in ("RO", "RW", "OW", "RM") else f.lower()

    specs, first = [], (0, 0, 0)
    for ks in j.get("key_specs", []):
        (btype, bspec), = ks["begin_search"].items()
        (ftype, fspec), = ks["find_keys"].items()
        if btype == "index":
            begin = [("type", "index"), ("spec", [("index", bspec["pos"])])]
        else:
            begin = [("type", "keyword"), ("spec", [("keyword", bspec["keyword"]), ("startfrom", bspec["startfrom"])])]
        if ftype == "range":
            find = [("type", "range"), ("spec", [("lastkey", fspec["lastkey"]), ("keystep", fspec["step"]),
                                                 ("limit", fspec["limit"])])]
        else:
            find = [("type", "keynum"), ("spec", [("keynumidx", fspec["keynumidx"]), ("firstkey", fspec["firstkey"]),
                                                  ("keystep", fspec["step"])])]
        m = [("notes", ks["notes"])] if "notes" in ks else []
        specs.append(m + [("flags", [ks_flag(f) for f in ks["flags"]]), ("begin_search", begin), ("find_keys", find)])
        if not any(first) and btype == "index" and ftype == "range" and fspec["lastkey"] >= 0:
            first = (bspec["pos"], bspec["pos"] + fspec["lastkey"], fspec["step"])
    tips = [t.lower() for t in j.get("command_tips", [])]
    info = (name, j["arity"], flags, first[0], first[1], first[2], cats, tips, specs, [])

    def arg(a):
        m = [("name", a["name"]), ("type", a["type"])]
        if "key_spec_index" in a:
            m.append(("key_spec_index", a["key_spec_index"]))
        for f in ("token", "since", "deprecated_since"):
            if f in a:
                m.append((f, a[f]))
        fl = [f for f in ARG_FLAGS if a.get(f)]
        if fl:
            m.append(("flags", fl))
        if "arguments" in a:
            m.append(("arguments", [arg(x) for x in a["arguments"]]))
        return m

    doc = [("summary", j["summary"]), ("since", j["since"]), ("group", j["group"])]
    if "complexity" in j:
        doc.append(("complexity", j["complexity"]))
    if j.get("history"):
        doc.append(("history", [tuple(h) for h in j["history"]]))
    if "arguments" in j:
        doc.append(("arguments", [arg(a) for a in j["arguments"]]))
    return info, doc


def main():
    r = Resp3(int(sys.argv[1]) if len(sys.argv) > 1 else 6379)
    r.call("HELLO", "3")
    version = dict(r.call("HELLO", "3"))["version"]
    if not version.startswith("7.0."):
        sys.exit("the reference must be Redis 7.0, this is %s" % version)
    infos = r.call("COMMAND")
    docs = dict(r.call("COMMAND", "DOCS"))
    extra = sys.argv[2] if len(sys.argv) > 2 else None
    if extra:
        with open(extra) as f:
            for name, j in json.load(f)["commands"].items():
                if name in docs:
                    sys.exit("%s: %s is Redis %s's already" % (extra, name, version))
                infos.append(None)
                infos[-1], docs[name] = json_command(name, j)
    infos = sorted(infos, key=lambda x: x[0])
    e = Emitter()
    e.emit("/* Generated by cmake/gen_command_meta.py from Redis %s's COMMAND and COMMAND DOCS%s." % (
        version, " and %s" % extra if extra else ""))
    e.emit(" * Do not edit: regenerate (see the script). Layout: engine/core/request/command_meta.h. */")
    e.emit('#include "engine/core/request/command_meta.h"')
    e.emit("")
    e.emit("/* clang-format off */")
    tops = [e.command(info, docs[info[0]]) for info in infos]
    e.emit("")
    e.emit("const gb_command_meta gb_command_meta_table[] = {")
    for t in tops:
        e.emit("    {%s}," % t)
    e.emit("};")
    e.emit("const size_t gb_command_meta_count = %d;" % len(tops))
    e.emit("/* clang-format on */")
    print("\n".join(e.lines))


if __name__ == "__main__":
    main()
