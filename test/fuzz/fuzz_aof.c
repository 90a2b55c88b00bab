/*
 * Fuzz harness: the append-only log's reader (engine/persist/aof_reader.h):
 * gb_aof_parse_command over arbitrary bytes, and gb_aof_replay of a file
 * into an empty engine.
 *
 * Input: [mode u8][the log's bytes]
 *   mode bit 0 clear: parse command after command as gb_aof_walk does.
 *     A parsed command lies inside the bytes it says it used and parses
 *     the same from exactly those bytes; every proper prefix of it is
 *     "incomplete", never "malformed" (a log cut short by a crash must be
 *     told from a damaged one: aof-load-truncated depends on it).
 *   mode bit 0 set: replay the bytes as an incremental file into an
 *     emptied engine, as start-up does (eng->loading), allowing a torn tail when
 *     bit 1 is set (the file is then cut there: checked). Every value then
 *     passes its data structure's own check. With bit 2 set,
 *     a dataset the replay built must survive a snapshot: SAVE, load into
 *     another engine, and every key reads back the same.
 * Logs naming commands that leave the scratch directory, sleep or start
 * background work (fuzz_command_denied) are parsed but not replayed.
 */
#include "fuzz_util.h"

#include <sys/stat.h>

#include "engine/base/mem.h"
#include "engine/dataset_dump.h"
#include "engine/persist/aof_reader.h"
#include "engine/persist/persist.h"

/* The longest command whose every prefix is parsed again. */
#define PREFIX_CHECK_MAX 512

static void check_command(const char *buf, size_t used, int argc, const gb_slice *argv)
{
    FUZZ_CHECK(argc >= 1, "a command of %d arguments", argc);
    for (int i = 0; i < argc; i++)
        FUZZ_CHECK(argv[i].ptr >= buf && argv[i].len <= used && argv[i].ptr - buf <= (ptrdiff_t)(used - argv[i].len),
                   "argument %d outside the %zu bytes used", i, used);
    /* Only its own bytes make a command. */
    uint8_t *own = fuzz_dup(buf, used);
    gb_slice *v = NULL;
    int cap = 0, n = 0;
    size_t u = 0;
    const char *why = NULL;
    int rc = gb_aof_parse_command((const char *)own, used, &v, &cap, &n, &u, &why);
    FUZZ_CHECK(rc == 1 && u == used && n == argc, "the command alone parses as rc %d, %zu bytes, %d arguments", rc, u,
               n);
    for (int i = 0; i < n; i++)
        FUZZ_CHECK(v[i].len == argv[i].len && memcmp(v[i].ptr, argv[i].ptr, v[i].len) == 0, "argument %d differs",
                   i);
    /* A torn command is incomplete, not malformed. */
    if (used <= PREFIX_CHECK_MAX)
        for (size_t k = 0; k < used; k++) {
            rc = gb_aof_parse_command((const char *)own, k, &v, &cap, &n, &u, &why);
            FUZZ_CHECK(rc == 0, "the first %zu of %zu bytes of a command parse as %d (%s)", k, used, rc,
                       why ? why : "");
        }
    gb_free(v);
    free(own);
}

static void parse_all(const uint8_t *bytes, size_t len)
{
    char *buf = (char *)fuzz_dup(bytes, len);
    gb_slice *argv = NULL;
    int cap = 0;
    size_t pos = 0;
    for (;;) {
        int argc = 0;
        size_t used = 0;
        const char *why = NULL;
        int rc = gb_aof_parse_command(buf + pos, len - pos, &argv, &cap, &argc, &used, &why);
        FUZZ_CHECK(rc >= -1 && rc <= 1, "rc %d", rc);
        if (rc != 1) {
            FUZZ_CHECK(rc == 0 || (why && *why), "malformed without a reason");
            break;
        }
        FUZZ_CHECK(used > 0 && used <= len - pos, "used %zu of %zu", used, len - pos);
        FUZZ_CHECK(argc <= cap, "%d arguments in an array of %d", argc, cap);
        check_command(buf + pos, used, argc, argv);
        pos += used;
    }
    gb_free(argv);
    free(buf);
}

/* Whether the log holds a command the harness does not run. */
static bool has_denied(const uint8_t *bytes, size_t len)
{
    gb_slice *argv = NULL;
    int cap = 0, argc;
    size_t pos = 0, used;
    const char *why;
    bool denied = false;
    while (!denied && gb_aof_parse_command((const char *)bytes + pos, len - pos, &argv, &cap, &argc, &used, &why) == 1) {
        denied = fuzz_command_denied(argv[0]);
        pos += used;
    }
    gb_free(argv);
    return denied;
}

/* The harness's two engines, made once, emptied for each input
 * (fuzz_engine_reset): a replays, b loads a's snapshot. */
static gb_engine *engine(int which)
{
    static gb_engine *eng[2];
    if (!eng[which])
        eng[which] = fuzz_engine_new(NULL, NULL);
    fuzz_engine_reset(eng[which]);
    return eng[which];
}

/* SAVE, load into the other engine, compare every key. */
static void check_snapshot_roundtrip(gb_engine *a)
{
    char err[700];
    FUZZ_CHECK(gb_persist_save(gb_persist_of(a), err, sizeof err) == 0, "SAVE failed: %s", err);
    gb_engine *b = engine(1);
    b->now_ms = a->now_ms;
    FUZZ_CHECK(gb_persist_load(gb_persist_of(b), err, sizeof err) == 0, "the snapshot does not load: %s", err);
    char *want = dump_dataset(a), *got = dump_dataset(b);
    FUZZ_CHECK(strcmp(want, got) == 0, "the snapshot loads another dataset:\n%.2000s\n---\n%.2000s", want, got);
    free(want);
    free(got);
    char path[600];
    fuzz_path(path, sizeof path, "dump.gdb");
    unlink(path);
}

static void replay(const uint8_t *bytes, size_t len, uint8_t mode)
{
    if (has_denied(bytes, len))
        return;
    char path[600];
    fuzz_write_file("appendonly.aof.1.incr.aof", bytes, len, path, sizeof path);
    gb_engine *eng = engine(0);
    bool allow_truncate = mode & 2;
    gb_aof_read_result res;
    char err[700];
    eng->loading = true;
    int rc = gb_aof_replay(eng, path, allow_truncate, &res, err, sizeof err);
    eng->loading = false;
    FUZZ_CHECK(rc == 0 || rc == GB_EPARSE, "replay rc %d: %s", rc, err);
    if (rc == 0 && res.truncated_at >= 0) {
        struct stat st;
        FUZZ_CHECK(allow_truncate, "cut a file it was not allowed to");
        FUZZ_CHECK(stat(path, &st) == 0 && st.st_size == res.truncated_at, "the file is not cut at %lld",
                   (long long)res.truncated_at);
        FUZZ_CHECK((size_t)res.truncated_at <= len, "cut at %lld, past its %zu bytes", (long long)res.truncated_at,
                   len);
    }
    fuzz_verify_dataset(eng);
    if (rc == 0 && (mode & 4))
        check_snapshot_roundtrip(eng);
    unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = {data, size};
    uint8_t mode = fuzz_u8(&in);
    if (mode & 1)
        replay(in.p, in.left, mode);
    else
        parse_all(in.p, in.left);
    return 0;
}
