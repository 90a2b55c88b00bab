/*
 * The append-only log (engine/persist/aof.c, aof_reader.c, manifest.c):
 * what is logged replays into the same dataset, across rewrites and with
 * writes during them; a torn last command is cut off (aof-load-truncated)
 * or refused; damage in the middle is refused with the file and offset; an
 * unfinished MULTI at the end is reverted; the manifest refuses what is not
 * a manifest; damaged logs never crash the loader.
 */
#define _GNU_SOURCE /* mkdtemp: glibc hides it under _POSIX_C_SOURCE alone, macOS under any _POSIX_C_SOURCE */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dataset_dump.h"
#include "engine/base/random.h"
#include "engine/modules.h"
#include "engine/persist/aof_reader.h"
#include "engine/persist/manifest.h"
#include "engine/persist/persist.h"
#include "platform/clock.h"
#include "platform/syscalls.h"

static char dir[256];

static gb_engine *engine_with_aof(bool on, const char *fsync)
{
    gb_settings s;
    gb_settings_defaults(&s);
    gb_config_set(&s, "dir", dir, false, NULL, 0);
    gb_config_set(&s, "save", "", false, NULL, 0);
    gb_config_set(&s, "appendonly", on ? "yes" : "no", false, NULL, 0);
    gb_config_set(&s, "appendfsync", fsync, false, NULL, 0);
    gb_engine *eng = gb_engine_new(&s);
    gb_settings_free(&s);
    gb_engine_update_time(eng);
    return eng;
}

static void cmd(gb_engine *eng, const char *line)
{
    collect sink = {0};
    gb_client *c = gb_client_new(eng, &collect_ops, &sink, NULL, NULL, GB_CLIENT_AUTHED);
    char *copy = strdup(line);
    gb_slice argv[64];
    int argc = 0;
    for (char *save = NULL, *t = strtok_r(copy, " ", &save); t && argc < 64; t = strtok_r(NULL, " ", &save))
        argv[argc++] = gb_slice_cstr(t);
    gb_gate_execute(c, argc, argv);
    col_clear(&sink);
    free(sink.items);
    free(copy);
    gb_client_free(c);
}

static void cmdf(gb_engine *eng, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cmdf(gb_engine *eng, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    cmd(eng, line);
}

/* The writer thread's turn, as the server's loop sleeps unless a step says
 * GB_BG_MORE (waiting for the writer, or the scan done and the writer
 * finishing the file). The writer runs below this thread: spinning here
 * would leave it only a low-priority share of a CPU the two may share. */
static void wait_for_helper(void)
{
    struct timespec ts = {0, 100 * 1000};
    nanosleep(&ts, NULL);
}

/* Runs the background work (a rewrite) to its end. */
static void settle(gb_engine *eng)
{
    gb_persist *p = gb_persist_of(eng);
    for (int i = 0; gb_persist_bg_in_progress(p); i++) {
        if (gb_engine_background_step(eng, gb_clock_mono_ns() + 1000000) != GB_BG_MORE)
            wait_for_helper();
        gb_engine_cron(eng);
        assert_true(i < 1000000);
    }
    gb_engine_before_replies(eng);
}

static void random_write(gb_engine *eng, int i)
{
    int k = (int)gb_random_below(20);
    switch (gb_random_below(8)) {
    case 0: cmdf(eng, "SET k%d v%d", k, i); break;
    case 1: cmdf(eng, "INCR n%d", k); break;
    case 2: cmdf(eng, "RPUSH l%d %d", k, i); break;
    case 3: cmdf(eng, "LPOP l%d", k); break;
    case 4: cmdf(eng, "HINCRBYFLOAT h%d f 0.5", k); break;
    case 5: cmdf(eng, "SADD s%d %d", k, i % 50); break;
    case 6: cmdf(eng, "SPOP s%d", k); break;
    default: cmdf(eng, "ZINCRBY z%d 1 m%d", k, i % 9); break;
    }
}

static char *reload_and_dump(const char *fsync)
{
    gb_engine *b = engine_with_aof(true, fsync);
    char err[640];
    int rc = gb_persist_load(gb_persist_of(b), err, sizeof err);
    if (rc != 0)
        fail_msg("the log does not load: %s", err);
    settle(b);
    char *d = dump_dataset(b);
    gb_engine_free(b);
    return d;
}

static void clean_dir(void)
{
    char rm[400];
    snprintf(rm, sizeof rm, "rm -rf '%s'/* 2>/dev/null", dir);
    (void)!system(rm);
}

/* Writes, rewrites in the middle (with writes during them), more writes:
 * the log always replays to the dataset. */
static void test_log_replays_across_rewrites(void **state)
{
    (void)state;
    const char *policies[] = {"always", "everysec", "no"};
    for (int pi = 0; pi < 3; pi++) {
        clean_dir();
        gb_engine *a = engine_with_aof(true, policies[pi]);
        char err[640];
        assert_int_equal(gb_persist_load(gb_persist_of(a), err, sizeof err), 0);
        settle(a);
        gb_random_seed(7 + (uint64_t)pi);
        for (int i = 0; i < 3000; i++) {
            random_write(a, i);
            if (i % 700 == 350) {
                assert_int_equal(gb_persist_bgrewriteaof(gb_persist_of(a), false, err, sizeof err), GB_BGREWRITE_STARTED);
                /* writes while the rewrite's snapshot is being taken */
                for (int j = 0; j < 50; j++) {
                    random_write(a, i);
                    gb_engine_background_step(a, gb_clock_mono_ns() + 20000);
                }
                settle(a);
            }
            if (i % 97 == 0)
                gb_engine_before_replies(a);
        }
        gb_engine_before_replies(a);
        char *want = dump_dataset(a);
        gb_engine_free(a);
        char *got = reload_and_dump(policies[pi]);
        assert_string_equal(got, want);
        free(want);
        free(got);
    }
}

static void manifest_path(char *out, size_t cap) { snprintf(out, cap, "%s/appendonlydir/appendonly.aof.manifest", dir); }

/* The last incremental file of the chain, as the manifest names it. */
static void last_incr(char *out, size_t cap)
{
    char mp[400], err[256];
    manifest_path(mp, sizeof mp);
    gb_manifest m;
    gb_manifest_init(&m);
    assert_int_equal(gb_manifest_read(&m, mp, err, sizeof err), 0);
    snprintf(out, cap, "%s/appendonlydir/%s", dir, m.files[m.n - 1].name);
    assert_int_equal(m.files[m.n - 1].type, 'i');
    gb_manifest_free(&m);
}

static void append_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "ab");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* A log whose last command was cut by a crash. */
static void test_torn_tail(void **state)
{
    (void)state;
    clean_dir();
    gb_engine *a = engine_with_aof(true, "always");
    char err[640];
    assert_int_equal(gb_persist_load(gb_persist_of(a), err, sizeof err), 0);
    settle(a);
    cmd(a, "SET kept 1");
    gb_engine_before_replies(a);
    gb_engine_free(a);
    char incr[600];
    last_incr(incr, sizeof incr);
    long good = file_size(incr);
    append_text(incr, "*3\r\n$3\r\nSET\r\n$4\r\nlost\r\n$1\r\n"); /* cut short */

    /* refused without aof-load-truncated */
    gb_engine *b = engine_with_aof(true, "everysec");
    b->cfg.aof_load_truncated = 0;
    assert_int_not_equal(gb_persist_load(gb_persist_of(b), err, sizeof err), 0);
    assert_non_null(strstr(err, "Unexpected end of file"));
    assert_non_null(strstr(err, "goblin-check-aof"));
    gb_engine_free(b);

    /* cut off with it (the default), the file truncated where it broke */
    char *got = reload_and_dump("everysec");
    assert_non_null(strstr(got, "kept"));
    assert_null(strstr(got, "lost"));
    assert_int_equal(file_size(incr), good);
    free(got);

    /* an unfinished transaction at the end is reverted the same way */
    append_text(incr, "*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$4\r\nhalf\r\n$1\r\n1\r\n");
    got = reload_and_dump("everysec");
    assert_null(strstr(got, "half"));
    assert_int_equal(file_size(incr), good);
    free(got);
}

/* Damage in the middle of a log stops the load with the file and offset. */
static void test_damage_in_the_middle(void **state)
{
    (void)state;
    clean_dir();
    gb_engine *a = engine_with_aof(true, "always");
    char err[640];
    assert_int_equal(gb_persist_load(gb_persist_of(a), err, sizeof err), 0);
    settle(a);
    cmd(a, "SET a 1");
    gb_engine_before_replies(a);
    gb_engine_free(a);
    char incr[600];
    last_incr(incr, sizeof incr);
    long at = file_size(incr);
    append_text(incr, "*2\r\n$3\r\nGET\r\nXa\r\n*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$1\r\n2\r\n");
    gb_engine *b = engine_with_aof(true, "everysec");
    assert_int_not_equal(gb_persist_load(gb_persist_of(b), err, sizeof err), 0);
    assert_non_null(strstr(err, "Bad file format"));
    char off[64];
    snprintf(off, sizeof off, "at offset %ld", at);
    assert_non_null(strstr(err, off));
    gb_engine_free(b);

    /* an unknown command is refused too */
    clean_dir();
    a = engine_with_aof(true, "always");
    assert_int_equal(gb_persist_load(gb_persist_of(a), err, sizeof err), 0);
    settle(a);
    gb_engine_free(a);
    last_incr(incr, sizeof incr);
    append_text(incr, "*1\r\n$7\r\nNOTACMD\r\n");
    b = engine_with_aof(true, "everysec");
    assert_int_not_equal(gb_persist_load(gb_persist_of(b), err, sizeof err), 0);
    assert_non_null(strstr(err, "Unknown command 'NOTACMD'"));
    gb_engine_free(b);
}

static void test_manifest_checks(void **state)
{
    (void)state;
    char path[400], err[512];
    snprintf(path, sizeof path, "%s/m.manifest", dir);
    static const char *const bad[][2] = {
        {"file a.aof seq 1 type x\n", "type must be b"},
        {"file ../etc/passwd seq 1 type i\n", "plain name"},
        {"file a seq 0 type i\n", "positive"},
        {"file a seq 1 type i\nfile b seq 2 type b\n", "base file must come first"},
        {"file b seq 1 type b\nfile i seq 2 type i\nfile i seq 2 type i\n", "non-monotonic"},
        {"file b seq 1 type b\nfile i3 seq 3 type i\nfile i2 seq 2 type i\n", "non-monotonic"},
        {"file b seq 1 type b\nfile i seq 2 type i\nfile i seq 3 type i\n", "named twice"},
        {"garbage\n", "expected 'file"},
        {"", "names no file"},
    };
    for (size_t i = 0; i < GB_ARRAY_LEN(bad); i++) {
        FILE *f = fopen(path, "w");
        fputs(bad[i][0], f);
        fclose(f);
        gb_manifest m;
        gb_manifest_init(&m);
        assert_int_equal(gb_manifest_read(&m, path, err, sizeof err), GB_EPARSE);
        if (!strstr(err, bad[i][1]))
            fail_msg("manifest '%s': '%s' does not say '%s'", bad[i][0], err, bad[i][1]);
        gb_manifest_free(&m);
    }
    gb_manifest m;
    gb_manifest_init(&m);
    gb_manifest_add(&m, "x.1.base.gdb", 1, 'b');
    gb_manifest_add(&m, "x.2.incr.aof", 2, 'i');
    assert_int_equal(gb_manifest_write(&m, path, err, sizeof err), 0);
    gb_manifest back;
    gb_manifest_init(&back);
    assert_int_equal(gb_manifest_read(&back, path, err, sizeof err), 0);
    assert_int_equal(back.n, 2);
    assert_string_equal(back.files[1].name, "x.2.incr.aof");
    assert_int_equal(gb_manifest_max_seq(&back), 2);
    gb_manifest_free(&m);
    gb_manifest_free(&back);
}

/* Flipped bytes, cuts and splices of a log: loaded or refused, never a
 * crash (under ASan in the sanitizer run). */
static void test_damaged_logs_never_crash(void **state)
{
    (void)state;
    clean_dir();
    gb_engine *a = engine_with_aof(true, "no");
    char err[640];
    assert_int_equal(gb_persist_load(gb_persist_of(a), err, sizeof err), 0);
    settle(a);
    gb_random_seed(3);
    for (int i = 0; i < 400; i++)
        random_write(a, i);
    gb_engine_before_replies(a);
    gb_engine_free(a);
    char incr[600];
    last_incr(incr, sizeof incr);
    FILE *f = fopen(incr, "rb");
    fseek(f, 0, SEEK_END);
    size_t len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *orig = malloc(len), *m = malloc(2 * len);
    assert_int_equal(fread(orig, 1, len, f), len);
    fclose(f);
    int loaded = 0, refused = 0;
    for (int round = 0; round < 150; round++) {
        memcpy(m, orig, len);
        size_t n = len;
        if (round % 3 == 0) {
            m[gb_random_below(len)] ^= (char)(1u << gb_random_below(8));
        } else if (round % 3 == 1) {
            n = (size_t)gb_random_below(len);
        } else {
            size_t at = (size_t)gb_random_below(len), k = 1 + (size_t)gb_random_below(64);
            if (at + k > len)
                k = len - at;
            memmove(m + at + k, m + at, len - at);
            memcpy(m + at, orig + gb_random_below(len - k + 1), k);
            n = len + k;
        }
        f = fopen(incr, "wb");
        assert_int_equal(fwrite(m, 1, n, f), n);
        fclose(f);
        gb_engine *b = engine_with_aof(true, "no");
        if (gb_persist_load(gb_persist_of(b), err, sizeof err) == 0)
            loaded++;
        else
            refused++;
        gb_engine_free(b);
    }
    assert_true(refused > 0);
    assert_true(loaded > 0); /* truncations load (cut off) */
    free(orig);
    free(m);
}

/* CONFIG SET appendonly yes on a server with data: the log starts with a
 * base of that data. */
static int failing_sync(int fd)
{
    (void)fd;
    errno = EIO;
    return -1;
}

/* Runs the cron until the log's refusal is (or is not) there, or 5 s. */
static bool refusal_becomes(gb_engine *eng, bool present)
{
    for (int i = 0; i < 500; i++) {
        gb_engine_cron(eng);
        if ((gb_persist_write_refusal(gb_persist_of(eng)) != NULL) == present)
            return true;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return false;
}

/* appendfsync everysec: a background sync that fails refuses writes with
 * MISCONF until one works again, as Redis's aof_bio_fsync_status (the
 * error was dropped: writes went on being acknowledged). */
static void test_everysec_sync_failure_refuses_writes(void **state)
{
    (void)state;
    clean_dir();
    gb_engine *eng = engine_with_aof(false, "everysec");
    eng->cfg.appendonly = 1;
    char err[640];
    assert_int_equal(gb_persist_appendonly_changed(gb_persist_of(eng), err, sizeof err), 0);
    settle(eng);
    GB_SYSCALL_OVERRIDE(file_sync, failing_sync);
    cmd(eng, "SET a 1");
    assert_true(refusal_becomes(eng, true));
    assert_string_equal(gb_persist_write_refusal(gb_persist_of(eng)),
                        "MISCONF Errors writing to the AOF file: Input/output error");
    gb_syscalls_override("file_sync", NULL);
    assert_true(refusal_becomes(eng, false));
    gb_engine_free(eng);
}

static void test_enabling_at_runtime(void **state)
{
    (void)state;
    clean_dir();
    gb_engine *a = engine_with_aof(false, "everysec");
    for (int i = 0; i < 200; i++)
        cmdf(a, "SET before:%d %d", i, i);
    a->cfg.appendonly = 1;
    char err[640];
    assert_int_equal(gb_persist_appendonly_changed(gb_persist_of(a), err, sizeof err), 0);
    cmd(a, "SET during 1"); /* while the base is being taken */
    settle(a);
    cmd(a, "SET after 1");
    gb_engine_before_replies(a);
    char *want = dump_dataset(a);
    gb_engine_free(a);
    char *got = reload_and_dump("everysec");
    assert_string_equal(got, want);
    free(want);
    free(got);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/gb-aof-test-XXXXXX");
    assert_non_null(mkdtemp(dir));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char rm[300];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    return system(rm) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_log_replays_across_rewrites), cmocka_unit_test(test_torn_tail),
        cmocka_unit_test(test_damage_in_the_middle),        cmocka_unit_test(test_manifest_checks),
        cmocka_unit_test(test_damaged_logs_never_crash),    cmocka_unit_test(test_enabling_at_runtime),
        cmocka_unit_test(test_everysec_sync_failure_refuses_writes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
