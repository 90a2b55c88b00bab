/*
 * What the fuzz harnesses share (docs/fuzzing.md): the libFuzzer entry
 * point's prototype, a check that holds in every build, reading an input
 * piece by piece, a scratch directory for harnesses whose parser reads a
 * file, and an engine to load or execute into.
 *
 * A harness is compiled two ways (test/fuzz/CMakeLists.txt): with libFuzzer,
 * and with replay_main.c for the ctest replay of its corpus and regressions.
 * Nothing here depends on which.
 */
#ifndef GB_TEST_FUZZ_UTIL_H
#define GB_TEST_FUZZ_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mkdtemp, aligned_alloc: macOS hides them under any _POSIX_C_SOURCE */
#endif
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/core/acl/acl.h"
#include "engine/core/config/config.h"
#include "engine/core/engine.h"
#include "engine/core/request/gate.h"
#include "engine/ds/list.h"
#include "engine/types/tobj.h"
#include "engine/core/request/reply.h"
#include "engine/core/request/script_state.h"
#include "engine/modules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An invariant the harness checks. Not assert(): release builds define
 * NDEBUG, and a harness that checks nothing finds only crashes. abort() is
 * what libFuzzer (and the replay test) reports as a failure. */
#define FUZZ_CHECK(cond, ...)                                                          \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);   \
            fprintf(stderr, __VA_ARGS__);                                              \
            fputc('\n', stderr);                                                       \
            abort();                                                                   \
        }                                                                              \
    } while (0)

/* FUZZ_VERBOSE=1 in the environment: harnesses say what became of each
 * input (loaded, refused and why), for checking that seeds get past the
 * first checks. */
static inline bool fuzz_verbose(void)
{
    static int v = -1;
    if (v < 0)
        v = getenv("FUZZ_VERBOSE") != NULL;
    return v;
}

/* ---- taking an input apart --------------------------------------------------------------- */

/* The input as a stream: control bytes first, the bytes under test after.
 * Past the end every take yields zeros, so short inputs still run. */
typedef struct fuzz_in {
    const uint8_t *p;
    size_t left;
} fuzz_in;

static inline uint8_t fuzz_u8(fuzz_in *in)
{
    if (!in->left)
        return 0;
    in->left--;
    return *in->p++;
}

static inline uint16_t fuzz_u16(fuzz_in *in)
{
    uint16_t lo = fuzz_u8(in);
    return (uint16_t)(lo | (uint16_t)fuzz_u8(in) << 8);
}

/* A copy of the n bytes in exactly n bytes of heap (at least 1), so that a
 * read one byte past the end is an ASan report, not a read of the next
 * input byte. */
static inline uint8_t *fuzz_dup(const void *p, size_t n)
{
    uint8_t *d = malloc(n ? n : 1);
    FUZZ_CHECK(d != NULL, "out of memory for %zu bytes", n);
    if (n)
        memcpy(d, p, n);
    return d;
}

/* ---- files ------------------------------------------------------------------------------- */

static char fuzz_dir_path[512];

static void fuzz_dir_remove(void) { rmdir(fuzz_dir_path); }

/* A private directory under $TMPDIR (cmake/run-fuzzers.sh points it at
 * memory: a harness writes a file per input), made on first use and removed
 * at exit; harnesses remove their files after each input. */
static inline const char *fuzz_scratch_dir(void)
{
    if (!fuzz_dir_path[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(fuzz_dir_path, sizeof fuzz_dir_path, "%s/gb-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        FUZZ_CHECK(mkdtemp(fuzz_dir_path) != NULL, "mkdtemp %s: %s", fuzz_dir_path, strerror(errno));
        atexit(fuzz_dir_remove);
    }
    return fuzz_dir_path;
}

/* dir/name into path. */
static inline void fuzz_path(char *path, size_t cap, const char *name)
{
    int n = snprintf(path, cap, "%s/%s", fuzz_scratch_dir(), name);
    FUZZ_CHECK(n > 0 && (size_t)n < cap, "path too long");
}

/* Writes n bytes as the scratch file `name`; its path into path. */
static inline void fuzz_write_file(const char *name, const void *p, size_t n, char *path, size_t cap)
{
    fuzz_path(path, cap, name);
    FILE *f = fopen(path, "wb");
    FUZZ_CHECK(f != NULL, "cannot create %s: %s", path, strerror(errno));
    FUZZ_CHECK(n == 0 || fwrite(p, 1, n, f) == n, "cannot write %s", path);
    FUZZ_CHECK(fclose(f) == 0, "cannot write %s: %s", path, strerror(errno));
}

/* ---- a reply sink that keeps nothing ------------------------------------------------------ */

static inline void fz_status(void *ctx, const char *s, size_t n) { (void)ctx, (void)s, (void)n; }
static inline void fz_integer(void *ctx, int64_t v) { (void)ctx, (void)v; }
static inline void fz_dbl(void *ctx, double v) { (void)ctx, (void)v; }
static inline void fz_nil(void *ctx) { (void)ctx; }
static inline void fz_array(void *ctx, int64_t n) { (void)ctx, (void)n; }
static inline size_t fz_deferred(void *ctx)
{
    (void)ctx;
    return 0;
}
static inline void fz_set_deferred(void *ctx, size_t h, int64_t n) { (void)ctx, (void)h, (void)n; }
static const gb_reply_ops fuzz_discard_ops = {.status = fz_status, .error = fz_status, .integer = fz_integer,
                                              .dbl = fz_dbl, .bulk = fz_status, .nil = fz_nil, .array = fz_array,
                                              .array_deferred = fz_deferred, .set_deferred = fz_set_deferred};

/* ---- an engine ---------------------------------------------------------------------------- */

/* The server's engine (every type and command, persistence attached) with
 * its files in the scratch directory, no automatic saves, and the smallest
 * proto-max-bulk-len: a command may not grow a string past 1 MB, so an
 * input of a few bytes (SETRANGE k 500000000 x) cannot spend a second
 * filling memory. tweak, when not NULL, changes the settings further.
 * The log is silenced: a harness runs millions of inputs. */
static inline gb_engine *fuzz_engine_new(void (*tweak)(gb_settings *s, void *ctx), void *ctx)
{
    gb_log_set_level(GB_LOG_WARNING + 1);
    gb_settings s;
    gb_settings_defaults(&s);
    char err[256];
    FUZZ_CHECK(gb_config_set(&s, "dir", fuzz_scratch_dir(), false, err, sizeof err) == 0, "%s", err);
    FUZZ_CHECK(gb_config_set(&s, "save", "", false, err, sizeof err) == 0, "%s", err);
    FUZZ_CHECK(gb_config_set(&s, "proto-max-bulk-len", "1mb", false, err, sizeof err) == 0, "%s", err);
    if (tweak)
        tweak(&s, ctx);
    gb_engine *eng = gb_engine_new(&s);
    gb_settings_free(&s);
    gb_engine_update_time(eng);
    return eng;
}

/* Empties eng for the next input, as a fresh engine would be: every
 * database flushed (FLUSHALL SYNC through the gate, so WATCH, blocking and
 * the expiry arrays see it as a client's would be), not loading, the clock
 * now. Harnesses keep their engines across inputs because making one
 * calibrates the cycle counter (milliseconds: a fresh engine per input
 * would cap a harness at a few hundred inputs per second). */
static inline void fuzz_engine_reset(gb_engine *eng)
{
    gb_client *c = gb_client_new(eng, &fuzz_discard_ops, NULL, NULL, NULL, GB_CLIENT_AUTHED);
    gb_slice argv[2] = {gb_slice_cstr("FLUSHALL"), gb_slice_cstr("SYNC")};
    gb_gate_execute(c, 2, argv);
    gb_client_free(c);
    for (int d = 0; d < eng->ndbs; d++)
        FUZZ_CHECK(gb_db_size(&eng->dbs[d]) == 0, "database %d not empty after FLUSHALL", d);
    if (eng->scripting) /* FLUSHALL keeps function libraries; a fresh engine has none */
        eng->scripting->flush_libraries(eng->scripting->ctx);
    eng->loading = false;
    gb_engine_update_time(eng);
}

/* Every value of every database passes its data structure's own check
 * (gb_list_verify, gb_set_verify, ... : the invariants the code relies on,
 * deeper than any reply shows), so a command or a load that left a
 * structure inconsistent is caught at the input that did it. Strings and
 * streams have no such check (a stream was once read as a sorted set
 * here: fuzz_lua's XADD seed crashed the check itself). */
static inline void fuzz_verify_dataset(gb_engine *eng)
{
    for (int d = 0; d < eng->ndbs; d++) {
        gb_htable_iter it;
        gb_htable_iter_init(&it, &eng->dbs[d].keys);
        for (gb_hnode *h; (h = gb_htable_iter_next(&it));) {
            gb_kv *kv = (gb_kv *)h;
            gb_slice k = gb_kv_key(kv);
            char why[256] = "";
            bool ok = true;
            if (kv->type == GB_TYPE_LIST) {
                ok = gb_list_verify(gb_kv_ptr(kv));
            } else if (kv->type == GB_TYPE_SET || kv->type == GB_TYPE_HASH || kv->type == GB_TYPE_ZSET) {
                gb_tobj_hdr o = gb_tobj_unpack(gb_kv_ptr(kv));
                ok = kv->type == GB_TYPE_SET    ? gb_set_verify(&o.s)
                     : kv->type == GB_TYPE_HASH ? gb_hash_verify(&o.h)
                                                : gb_zset_verify(&o.z, why, sizeof why);
            }
            FUZZ_CHECK(ok, "db %d key '%.*s' (type %d) fails its structure's check %s", d, (int)GB_MIN(k.len, 64),
                       k.ptr, kv->type, why);
        }
        gb_htable_iter_done(&it);
    }
}

/* Commands a harness that executes fuzzer-chosen commands does not run:
 * they leave the scratch directory (CONFIG SET dir, logfile), sleep
 * (DEBUG SLEEP), or start background threads and files that outlive the
 * input (SAVE, BGSAVE, BGREWRITEAOF, SHUTDOWN's save). What they parse is
 * covered by the command tests; running them here would only make inputs
 * slow and results depend on the ones before. */
static const char *const fuzz_denied_commands[] = {"config", "debug", "save", "bgsave", "bgrewriteaof", "shutdown"};

static inline bool fuzz_command_denied(gb_slice name)
{
    for (size_t i = 0; i < sizeof fuzz_denied_commands / sizeof *fuzz_denied_commands; i++)
        if (gb_slice_ieq(name, fuzz_denied_commands[i]))
            return true;
    return false;
}

/* The same commands refused by the gate's permission step, for harnesses
 * that hand a client's byte stream to the engine and so cannot filter each
 * command first (fuzz_ring): the default user, every client's, loses them,
 * and ACL, which could give them back. */
static inline void fuzz_engine_deny_commands(gb_engine *eng)
{
    enum { N = sizeof fuzz_denied_commands / sizeof *fuzz_denied_commands };
    char rules[N + 1][32];
    gb_slice r[N + 1];
    for (size_t i = 0; i <= N; i++) {
        snprintf(rules[i], sizeof rules[i], "-%s", i < N ? fuzz_denied_commands[i] : "acl");
        r[i] = gb_slice_cstr(rules[i]);
    }
    int bad = -1;
    FUZZ_CHECK(gb_acl_set_user(eng, gb_slice_cstr("default"), r, N + 1, &bad) == 0, "ACL rule %d refused", bad);
}

#endif
