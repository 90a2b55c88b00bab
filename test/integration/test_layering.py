"""The transports' layering, checked over the source tree (no server runs).

transport/ holds the server's loop (transport/loop), the wire codecs every
transport may use (transport/resp, transport/sbe, and transport/tls: TLS
records over memory buffers, no libuv of its own, and the helper thread
that completes handshakes on a socket it is handed, shared by the client
sockets and the cluster bus) and the transports themselves: every other
folder (net: TCP and Unix sockets; ring: the shared-memory rings;
replica: the replication link; cluster: the cluster bus).
Two rules (docs/architecture.md, "The loop and its peers"):

1. A transport includes no other transport's headers: they meet only
   through the loop (transport/loop/loop.h) and the engine. The loop and
   the codecs include no transport either.
2. Only the loop touches libuv's timers, signals and the check, idle and
   prepare phases (uv_timer_*, uv_signal_*, uv_check_*, uv_idle_*,
   uv_prepare_*): a transport that needs a deadline, a signal or a pass
   after each iteration asks the loop for it.
"""
import os
import re
import shutil
import tempfile
import unittest

import gbtest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LOOP = "transport/loop"
SHARED = {"loop", "resp", "sbe", "tls"}  # not transports: what transports stand on
LOOP_ONLY = re.compile(r"\buv_(timer|signal|check|idle|prepare)_\w+")
INCLUDE = re.compile(r'^\s*#\s*include\s*"transport/([^/"]+)/', re.M)
SOURCE_DIRS = ("apps", "engine", "platform", "transport", "include", "test", "bench")


def strip_comments_and_strings(text):
    """C source without comments or string literals (a comment may name a
    libuv call; an #include's path is read before this)."""
    pattern = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
    return pattern.sub(lambda m: " " if m.group(0).startswith("/") else '""', text)


def c_files(root):
    for top in SOURCE_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = [d for d in dirnames if not d.startswith("build")]
            for name in filenames:
                if name.endswith((".c", ".h")):
                    path = os.path.join(dirpath, name)
                    yield os.path.relpath(path, root).replace(os.sep, "/")


def transports(root):
    base = os.path.join(root, "transport")
    return sorted(d for d in os.listdir(base) if os.path.isdir(os.path.join(base, d)) and d not in SHARED)


def violations(root):
    """Every break of the two rules under root, one line each."""
    found = []
    names = set(transports(root))
    for rel in c_files(root):
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        parts = rel.split("/")
        if parts[0] == "transport" and len(parts) > 2:
            own = parts[1]
            for other in INCLUDE.findall(text):
                if other != own and other in names:
                    found.append("%s includes transport/%s (%s)" % (
                        rel, other, "a transport includes no other" if own in names else "the loop and the codecs "
                        "include no transport"))
        if rel.startswith(LOOP + "/"):
            continue
        for m in sorted(set(LOOP_ONLY.findall(strip_comments_and_strings(text)))):
            found.append("%s uses uv_%s_* (only %s may)" % (rel, m, LOOP))
    return found


CLIENT_SOURCES = ("transport/ring/client", "transport/sbe/sbe_codec.c", "transport/sbe/sbe_client.c")
INCLUDE_DIRS = ("", "include")  # the client library's include path, relative to the root
QUOTED_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def client_library_files(root):
    """The client library's own sources (.c and .h)."""
    for entry in CLIENT_SOURCES:
        path = os.path.join(root, entry)
        if os.path.isfile(path):
            yield entry
        elif os.path.isdir(path):
            for name in sorted(os.listdir(path)):
                if name.endswith((".c", ".h")):
                    yield entry + "/" + name


def resolve_include(root, including, name):
    """The tree path an #include "name" of file `including` opens, or None
    (a system header)."""
    for base in [os.path.dirname(including)] + list(INCLUDE_DIRS):
        rel = os.path.normpath(os.path.join(base, name)).replace(os.sep, "/")
        if os.path.isfile(os.path.join(root, rel)):
            return rel
    return None


def client_engine_includes(root):
    """Every engine/ include the client library reaches, each header read
    once: "<source> reaches <engine file> (via a -> b -> ...)"."""
    found, seen = [], set()
    stack = [(rel, (rel,)) for rel in client_library_files(root)]
    while stack:
        rel, chain = stack.pop()
        if rel in seen:
            continue
        seen.add(rel)
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for name in QUOTED_INCLUDE.findall(text):
            target = resolve_include(root, rel, name)
            if target is None:
                continue
            if target.startswith("engine/"):
                found.append("%s reaches %s (via %s)" % (chain[0], target, " -> ".join(chain + (target,))))
            else:
                stack.append((target, chain + (target,)))
    return sorted(found)


RAW_ALLOC = re.compile(r"(?<![\w.>])(malloc|calloc|realloc|free|strdup|strndup)\s*\(")
RAW_ALLOC_DIRS = ("engine/persist", "transport")
RAW_ALLOC_ALLOWED = {
    # the client library builds without the engine (rule 3)
    "transport/ring/client/ring_client.c": "client library",
    "transport/ring/client/ring_client_calls.c": "client library",
    "transport/ring/client/ring_client_resp.c": "client library",
    "transport/ring/client/ring_client_sbe.c": "client library",
    "transport/ring/client/ring_cluster.c": "client library",
    "transport/ring/client/ring_cluster_link.c": "client library",
    # Reviewed (issue 32 item 5); each keeps the system allocator because
    # its memory crosses threads or is not the data set's:
    "engine/persist/snapread.c":
        "the reader and its block buffers: the read-ahead thread fills the slots and grows the stored-block "
        "buffer while the engine parses; they live only while a file loads (Redis's rio buffers are not in "
        "used_memory either). The strings it hands the engine's parser are gb_realloc'd",
    "engine/persist/snapwrite.c":
        "a save's blocks are allocated on the engine thread and freed on the gb-snapshot writer thread; "
        "in Redis a save's buffers are the fork child's, outside used_memory, so counting them would let "
        "maxmemory evict because a BGSAVE runs",
    "transport/tls/tls_handshaker.c":
        "the handshaker's lists are grown by the engine thread (inbox) and by the TLS handshake thread "
        "(active, outbox, records in flight); a connection in its handshake has no client yet, and its "
        "memory is not the data set's",
    "transport/tls/tls.c":
        "a session is made on the engine thread and freed on the TLS handshake thread when its handshake "
        "fails; its bulk is OpenSSL's own heap, which no policy of ours counts, and the context is its shell",
}


def raw_alloc_files(root):
    """The files under RAW_ALLOC_DIRS whose code (comments and strings
    aside) calls malloc, calloc, realloc, free, strdup or strndup."""
    found = []
    for rel in c_files(root):
        if not rel.startswith(tuple(d + "/" for d in RAW_ALLOC_DIRS)):
            continue
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            if RAW_ALLOC.search(strip_comments_and_strings(f.read())):
                found.append(rel)
    return sorted(found)


class Layering(unittest.TestCase):
    def test_the_tree_keeps_the_rules(self):
        self.assertEqual(violations(ROOT), [])

    def test_the_client_library_needs_no_engine(self):
        self.assertEqual(client_engine_includes(ROOT), [])
        # the scan sees the library's sources and follows their includes
        files = list(client_library_files(ROOT))
        self.assertIn("transport/ring/client/ring_client.c", files)
        self.assertIn("transport/sbe/sbe_codec.c", files)

    def test_the_client_check_catches_an_engine_include(self):
        """Two headers deep, as sbe_codec.h once reached engine/base/common.h."""
        tmp = tempfile.mkdtemp(prefix="gb-layering-")
        try:
            def write(rel, text):
                path = os.path.join(tmp, rel)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    f.write(text)
            write("transport/ring/client/ring_client.c", '#include "transport/sbe/sbe_codec.h"\n#include <stdio.h>\n')
            write("transport/sbe/sbe_codec.h", '#include "goblin/slice.h"\n#include "engine/base/common.h"\n')
            write("transport/sbe/sbe_codec.c", '#include "sbe_codec.h"\n')
            write("include/goblin/slice.h", "int x;\n")
            write("engine/base/common.h", "int y;\n")
            # each header is read once: the engine include is named once,
            # with the chain that first reached it
            found = client_engine_includes(tmp)
            self.assertEqual(len(found), 1, found)
            self.assertRegex(found[0], r"^transport/\S+ reaches engine/base/common.h \(via transport/\S+ -> "
                                       r"transport/sbe/sbe_codec.h -> engine/base/common.h\)$")
        finally:
            shutil.rmtree(tmp)

    def test_raw_allocation_only_where_listed(self):
        self.assertEqual(raw_alloc_files(ROOT), sorted(RAW_ALLOC_ALLOWED))

    def test_the_allocation_scan_reads_code_only(self):
        tmp = tempfile.mkdtemp(prefix="gb-layering-")
        try:
            def write(rel, text):
                path = os.path.join(tmp, rel)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    f.write(text)
            write("transport/loop/loop.c", "/* free(loop) */ p = gb_try_calloc(1, 8); gb_free(p); s.free(x);\n")
            write("transport/net/server.c", "void f(void) { char *p = malloc(4); free(p); }\n")
            write("engine/persist/aof.c", 'const char *s = "realloc("; char *t = gb_strdup(s);\n')
            write("transport/ring/ring_server.c", "char *copy = strdup(name);\n")
            write("engine/core/keyspace/db.c", "void g(void) { free(0); }\n")  # outside the scanned folders
            self.assertEqual(raw_alloc_files(tmp), ["transport/net/server.c", "transport/ring/ring_server.c"])
        finally:
            shutil.rmtree(tmp)

    def test_the_transports_are_found(self):
        # the rules mean nothing if the scan sees no transport
        self.assertTrue({"net", "ring"} <= set(transports(ROOT)), transports(ROOT))
        self.assertTrue(os.path.isfile(os.path.join(ROOT, LOOP, "loop.c")))

    def test_the_check_catches_each_break(self):
        """A copy of the layout with one break of each kind: each is named."""
        tmp = tempfile.mkdtemp(prefix="gb-layering-")
        try:
            def write(rel, text):
                path = os.path.join(tmp, rel)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    f.write(text)
            write("transport/loop/loop.c", "uv_timer_start(&t, cb, 1, 1);\n")
            write("transport/resp/resp_writer.h", "int x;\n")
            write("transport/net/server.c", '#include "transport/resp/resp_writer.h"\n'
                                            '#include "transport/loop/loop.h"\n'
                                            "/* uv_idle_start is the loop's */\n")
            write("transport/ring/ring_server.h", '#include "transport/net/server.h"\n')
            write("transport/repl/link.c", "static uv_signal_t sig;\n")
            write("transport/loop/peers.c", '#include "transport/ring/ring_server.h"\n')
            write("engine/core/cron.c", 'const char *s = "uv_check_start";\nvoid f(void) { uv_prepare_init(0, 0); }\n')
            found = violations(tmp)
            self.assertEqual(sorted(found), sorted([
                "transport/ring/ring_server.h includes transport/net (a transport includes no other)",
                "transport/loop/peers.c includes transport/ring (the loop and the codecs include no transport)",
                "transport/repl/link.c uses uv_signal_* (only transport/loop may)",
                "engine/core/cron.c uses uv_prepare_* (only transport/loop may)",
            ]))
        finally:
            shutil.rmtree(tmp)


if __name__ == "__main__":
    gbtest.run_tests()
