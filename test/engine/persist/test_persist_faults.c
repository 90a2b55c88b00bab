/*
 * Disk faults during persistence, injected through the platform's syscall
 * table (platform/syscalls.h: persistence's writes, syncs and renames go
 * through gb_plat_write & co): a write that hits ENOSPC, a sync that
 * reports EIO, a rename refused. What a client sees must be Redis 7.0's:
 * the failed BGSAVE recorded (rdb_last_bgsave_status:err) and writes refused
 * with its MISCONF text while stop-writes-on-bgsave-error is on; a failed
 * AOF write recorded (aof_last_write_status:err) and writes refused with
 * "MISCONF Errors writing to the AOF file: <strerror>"; a failed rewrite
 * recorded without refusing writes; and everything back to normal once the
 * disk recovers.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine_harness.h"
#include "engine/persist/persist.h"
#include "platform/clock.h"
#include "platform/syscalls.h"

/* Redis 7.0.15's texts (server.c: shared.bgsaveerr; processCommand's
 * DISK_ERROR_TYPE_AOF branch formats strerror(aof_last_write_errno)). */
#define MISCONF_RDB                                                                                              \
    "-MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands " \
    "that may modify the data set are disabled, because this instance is configured to report errors during "    \
    "writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for "    \
    "details about the RDB error."
#define MISCONF_AOF_ENOSPC "-MISCONF Errors writing to the AOF file: No space left on device"

static char dir[256];

/* ---- the faults ------------------------------------------------------------------------- */

static int fault_errno; /* what the failing call reports */

/* Calls let through before the fault: what a command does when it starts
 * (a BGSAVE's header, a BGREWRITEAOF's new manifest) fails the command
 * itself, what the writer thread does later fails the save. Set before the
 * override, used by one thread at a time. */
static int calls_to_pass;
static gb_syscall_table real;

static bool pass_this_one(void)
{
    if (calls_to_pass <= 0)
        return false;
    calls_to_pass--;
    return true;
}

static ssize_t failing_write(int fd, const void *buf, size_t n)
{
    if (pass_this_one())
        return real.file_write(fd, buf, n);
    errno = fault_errno;
    return -1;
}

static int failing_sync(int fd)
{
    if (pass_this_one())
        return real.file_sync(fd);
    errno = fault_errno;
    return -1;
}

static int failing_rename(const char *from, const char *to)
{
    if (pass_this_one())
        return real.file_rename(from, to);
    errno = fault_errno;
    return -1;
}

typedef enum { FAIL_WRITE, FAIL_SYNC, FAIL_RENAME } fault_kind;

static void inject(fault_kind kind, int e)
{
    fault_errno = e;
    real.file_write = (gb_sys_file_write_fn)gb_syscalls_get("file_write");
    real.file_sync = (gb_sys_file_sync_fn)gb_syscalls_get("file_sync");
    real.file_rename = (gb_sys_file_rename_fn)gb_syscalls_get("file_rename");
    int rc = kind == FAIL_WRITE  ? GB_SYSCALL_OVERRIDE(file_write, failing_write)
             : kind == FAIL_SYNC ? GB_SYSCALL_OVERRIDE(file_sync, failing_sync)
                                 : GB_SYSCALL_OVERRIDE(file_rename, failing_rename);
    assert_int_equal(rc, 0);
}

static void disk_recovers(void) { gb_syscalls_reset(); }

/* ---- an engine in a scratch directory ------------------------------------------------------ */

static bool with_aof;

static void settings(gb_settings *s)
{
    gb_config_set(s, "dir", dir, false, NULL, 0);
    gb_config_set(s, "save", with_aof ? "" : "3600 1", false, NULL, 0);
    gb_config_set(s, "appendonly", with_aof ? "yes" : "no", false, NULL, 0);
    gb_config_set(s, "appendfsync", "everysec", false, NULL, 0);
}

static harness *start(bool aof)
{
    with_aof = aof;
    harness *h = harness_new(settings);
    gb_engine_update_time(h->eng);
    char err[512];
    assert_int_equal(gb_persist_load(gb_persist_of(h->eng), err, sizeof err), 0);
    return h;
}

static void settle(harness *h);

/* An engine whose append-only file exists (its first base written). */
static harness *start_aof(void)
{
    harness *h = start(true);
    settle(h);
    return h;
}

/* Runs the background work (a save or a rewrite) to its end, as the
 * server's loop does: slices, cron, and a nap while the writer thread has
 * the file. */
static void settle(harness *h)
{
    gb_persist *p = gb_persist_of(h->eng);
    for (int i = 0; gb_persist_bg_in_progress(p); i++) {
        if (gb_engine_background_step(h->eng, gb_clock_mono_ns() + 1000000) != GB_BG_MORE) {
            struct timespec ts = {0, 100 * 1000};
            nanosleep(&ts, NULL);
        }
        gb_engine_cron(h->eng);
        assert_true(i < 1000000);
    }
    gb_engine_before_replies(h->eng);
}

/* The value of an INFO persistence field. */
static const char *info_field(harness *h, const char *name)
{
    static char value[64];
    const char *all = run(h, "INFO persistence");
    char key[80];
    snprintf(key, sizeof key, "\r\n%s:", name);
    const char *at = strstr(all, key);
    if (!at)
        fail_msg("INFO has no %s: %s", name, all);
    at += strlen(key);
    size_t n = strcspn(at, "\r");
    snprintf(value, sizeof value, "%.*s", (int)n, at);
    return value;
}

static void remove_dir(void)
{
    char cmdline[600];
    snprintf(cmdline, sizeof cmdline, "rm -rf '%s'", dir);
    assert_int_equal(system(cmdline), 0);
}

static int make_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/gb-persist-faults-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int clean_dir(void **state)
{
    (void)state;
    gb_syscalls_reset();
    remove_dir();
    return make_dir(state);
}

/* ---- BGSAVE --------------------------------------------------------------------------------- */

static void bgsave_fails_then_recovers(fault_kind kind, int e)
{
    harness *h = start(false);
    assert_string_equal(run(h, "SET a 1"), "+OK");
    calls_to_pass = kind == FAIL_WRITE ? 1 : 0; /* the header: written as the command starts */
    inject(kind, e);
    assert_string_equal(run(h, "BGSAVE"), "+Background saving started");
    settle(h);
    assert_string_equal(info_field(h, "rdb_last_bgsave_status"), "err");
    assert_string_equal(run(h, "SET b 2"), MISCONF_RDB);
    assert_string_equal(run(h, "GET a"), "$1"); /* reads go on */

    disk_recovers();
    assert_string_equal(run(h, "BGSAVE"), "+Background saving started");
    settle(h);
    assert_string_equal(info_field(h, "rdb_last_bgsave_status"), "ok");
    assert_string_equal(run(h, "SET b 2"), "+OK");
    harness_free(h);
}

static void test_bgsave_write_enospc(void **state)
{
    (void)state;
    bgsave_fails_then_recovers(FAIL_WRITE, ENOSPC);
}

static void test_bgsave_sync_eio(void **state)
{
    (void)state;
    bgsave_fails_then_recovers(FAIL_SYNC, EIO);
}

static void test_bgsave_rename_eio(void **state)
{
    (void)state;
    bgsave_fails_then_recovers(FAIL_RENAME, EIO);
}

/* With stop-writes-on-bgsave-error off, the failure is recorded and
 * writes go on (Redis's writeCommandsDeniedByDiskError). */
static void test_bgsave_failure_without_stop_writes(void **state)
{
    (void)state;
    harness *h = start(false);
    assert_string_equal(run(h, "CONFIG SET stop-writes-on-bgsave-error no"), "+OK");
    calls_to_pass = 1;
    inject(FAIL_WRITE, ENOSPC);
    assert_string_equal(run(h, "BGSAVE"), "+Background saving started");
    settle(h);
    assert_string_equal(info_field(h, "rdb_last_bgsave_status"), "err");
    assert_string_equal(run(h, "SET b 2"), "+OK");
    harness_free(h);
}

/* A save that cannot even write its header fails at once: -ERR, as Redis
 * answers a BGSAVE whose fork fails, and recorded the same way. */
static void test_bgsave_fails_at_its_start(void **state)
{
    (void)state;
    harness *h = start(false);
    calls_to_pass = 0;
    inject(FAIL_WRITE, ENOSPC);
    assert_string_equal(run(h, "BGSAVE"), "-ERR");
    assert_string_equal(info_field(h, "rdb_last_bgsave_status"), "err");
    assert_string_equal(run(h, "SET b 2"), MISCONF_RDB);
    disk_recovers();
    assert_string_equal(run(h, "BGSAVE"), "+Background saving started");
    settle(h);
    assert_string_equal(info_field(h, "rdb_last_bgsave_status"), "ok");
    harness_free(h);
}

/* ---- the append-only file ------------------------------------------------------------------------ */

static void test_aof_write_enospc_then_recovers(void **state)
{
    (void)state;
    harness *h = start_aof();
    assert_string_equal(run(h, "SET a 1"), "+OK");
    gb_engine_before_replies(h->eng);
    assert_string_equal(info_field(h, "aof_last_write_status"), "ok");

    calls_to_pass = 0;
    inject(FAIL_WRITE, ENOSPC);
    assert_string_equal(run(h, "SET b 2"), "+OK"); /* executed; its write to the file fails */
    gb_engine_before_replies(h->eng);
    assert_string_equal(info_field(h, "aof_last_write_status"), "err");
    assert_string_equal(run(h, "SET c 3"), MISCONF_AOF_ENOSPC);
    assert_string_equal(run(h, "GET b"), "$2");

    /* the next flush (each cron, as Redis's serverCron retries) succeeds */
    disk_recovers();
    gb_engine_cron(h->eng);
    gb_engine_before_replies(h->eng);
    assert_string_equal(info_field(h, "aof_last_write_status"), "ok");
    assert_string_equal(run(h, "SET c 3"), "+OK");
    gb_engine_before_replies(h->eng);
    harness_free(h);

    /* and what was refused never happened, while what ran is in the log */
    h = start_aof();
    assert_string_equal(run(h, "MGET a b c"), "*3 $1 $2 $3");
    harness_free(h);
}

/* Redis's text when BGREWRITEAOF cannot switch to a new incremental file
 * (openNewIncrAofForAppend: its manifest not written). */
#define REWRITE_REFUSED "-ERR Can't execute an AOF background rewriting. Please check the server logs for more information."

/* A rewrite that cannot start (the new manifest's sync or rename fails) is
 * refused with Redis's text and recorded; writes go on, as Redis refuses
 * writes for a failed AOF write, never for a failed rewrite. */
static void rewrite_refused_then_recovers(fault_kind kind)
{
    harness *h = start_aof();
    assert_string_equal(run(h, "SET a 1"), "+OK");
    gb_engine_before_replies(h->eng);
    calls_to_pass = 0;
    inject(kind, EIO);
    assert_string_equal(run(h, "BGREWRITEAOF"), REWRITE_REFUSED);
    assert_string_equal(info_field(h, "aof_last_bgrewrite_status"), "err");
    disk_recovers();
    assert_string_equal(run(h, "SET b 2"), "+OK");
    gb_engine_before_replies(h->eng);
    assert_string_equal(info_field(h, "aof_last_write_status"), "ok");
    assert_string_equal(run(h, "BGREWRITEAOF"), "+Background append only file rewriting started");
    settle(h);
    assert_string_equal(info_field(h, "aof_last_bgrewrite_status"), "ok");
    harness_free(h);

    h = start_aof();
    assert_string_equal(run(h, "MGET a b"), "*2 $1 $2");
    harness_free(h);
}

static void test_rewrite_manifest_sync_eio(void **state)
{
    (void)state;
    rewrite_refused_then_recovers(FAIL_SYNC);
}

static void test_rewrite_manifest_rename_eio(void **state)
{
    (void)state;
    rewrite_refused_then_recovers(FAIL_RENAME);
}

/* A rewrite that starts and then cannot put its base in place (the rename
 * after the new manifest's): started, then recorded as failed; the log
 * goes on in the incremental file, so nothing written is lost. */
static void test_rewrite_base_rename_eio(void **state)
{
    (void)state;
    harness *h = start_aof();
    assert_string_equal(run(h, "SET a 1"), "+OK");
    gb_engine_before_replies(h->eng);
    calls_to_pass = 1; /* the new incremental file's manifest */
    inject(FAIL_RENAME, EIO);
    assert_string_equal(run(h, "BGREWRITEAOF"), "+Background append only file rewriting started");
    settle(h);
    assert_string_equal(info_field(h, "aof_last_bgrewrite_status"), "err");
    disk_recovers();
    assert_string_equal(run(h, "SET b 2"), "+OK");
    gb_engine_before_replies(h->eng);
    harness_free(h);

    h = start_aof();
    assert_string_equal(run(h, "MGET a b"), "*2 $1 $2");
    harness_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_bgsave_write_enospc, clean_dir),
        cmocka_unit_test_setup(test_bgsave_sync_eio, clean_dir),
        cmocka_unit_test_setup(test_bgsave_rename_eio, clean_dir),
        cmocka_unit_test_setup(test_bgsave_failure_without_stop_writes, clean_dir),
        cmocka_unit_test_setup(test_bgsave_fails_at_its_start, clean_dir),
        cmocka_unit_test_setup(test_aof_write_enospc_then_recovers, clean_dir),
        cmocka_unit_test_setup(test_rewrite_manifest_sync_eio, clean_dir),
        cmocka_unit_test_setup(test_rewrite_manifest_rename_eio, clean_dir),
        cmocka_unit_test_setup(test_rewrite_base_rename_eio, clean_dir),
    };
    int rc = cmocka_run_group_tests(tests, make_dir, NULL);
    remove_dir();
    return rc;
}
