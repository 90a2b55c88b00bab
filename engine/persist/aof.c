#define _POSIX_C_SOURCE 200809L
#include "engine/persist/aof.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/base/helper_thread.h"
#include "engine/base/mem.h"
#include "engine/base/util.h"
#include "engine/core/engine.h"
#include "engine/core/request/gate.h"
#include "engine/core/request/propagate.h"
#include "engine/persist/aof_reader.h"
#include "engine/persist/fileio.h"
#include "engine/persist/manifest.h"
#include "engine/persist/rdb_load.h"
#include "engine/persist/serialize.h"
#include "engine/persist/snapread.h"
#include "platform/clock.h"
#include "platform/file.h"
#include "platform/shm_atomic.h"

enum aof_state {
    AOF_OFF,
    AOF_WAIT_REWRITE, /* logging into an incremental file no manifest names yet: the base is being written */
    AOF_ON,
};

/* The background thread of appendfsync everysec, and of closing an old
 * incremental file after its last sync (a close can wait for the disk). */
typedef struct syncer {
    gb_helper_thread thread;
    bool started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int sync_fd;          /* -1: nothing asked */
    int close_fds[8];
    int nclose;
    bool busy;
    int64_t busy_since_ms;
    bool stop;
    /* the errno of the last everysec sync, 0 when it worked (Redis's
     * aof_bio_fsync_status): written by the thread, read by the engine */
    uint32_t sync_errno;
} syncer;

struct gb_aof {
    gb_engine *eng;
    enum aof_state state;
    gb_prop_sink sink;
    char dir[4096];
    gb_manifest man;         /* what the manifest on disk says (AOF_ON) */

    /* the incremental file being appended */
    int fd;
    int64_t cur_seq;
    char cur_name[GB_MANIFEST_NAME_MAX + 1];
    int db;                  /* database of the last logged command; -1: a SELECT comes first */
    char *buf;               /* commands not yet written */
    size_t len, cap;
    uint64_t cur_size;       /* bytes in the current incremental file */
    uint64_t chain_size;     /* base + earlier incremental files of the chain */
    uint64_t base_size;      /* the chain's size right after the last rewrite */

    /* durability */
    bool unsynced;           /* written or buffered since the last sync */
    int64_t last_sync_ms;
    bool write_failed;
    int write_errno;
    char refusal[256];
    bool sync_failed;       /* the background sync's last try failed (check_background_sync) */
    char sync_refusal[256];
    uint64_t delayed_fsync;
    syncer sy;

    /* a rewrite in progress */
    bool rewriting;
    int64_t rw_base_seq;
    char rw_base_name[GB_MANIFEST_NAME_MAX + 1];
};

/* ---- names and paths ---------------------------------------------------------------------- */

static void file_path(const gb_aof *a, const char *name, char *out, size_t cap) { gb_path_join(out, cap, a->dir, name); }

static void manifest_path(const gb_aof *a, char *out, size_t cap)
{
    char name[300];
    snprintf(name, sizeof name, "%s.manifest", a->eng->cfg.appendfilename);
    file_path(a, name, out, cap);
}

static void name_of(const gb_aof *a, int64_t seq, bool base, char *out, size_t cap)
{
    snprintf(out, cap, "%s.%lld.%s", a->eng->cfg.appendfilename, (long long)seq, base ? "base.gdb" : "incr.aof");
}

static int ensure_dir(gb_aof *a, char *err, size_t errlen)
{
    gb_path_join(a->dir, sizeof a->dir, a->eng->cfg.dir, a->eng->cfg.appenddirname);
    if (mkdir(a->dir, 0755) == 0)
        return gb_sync_parent_dir(a->dir) == 0 ? 0 : 0; /* a lost directory entry costs a rewrite, not data */
    if (errno == EEXIST)
        return 0;
    snprintf(err, errlen, "cannot create the append-only directory '%.300s': %s", a->dir, strerror(errno));
    return -1;
}

static uint64_t size_of(const gb_aof *a, const char *name)
{
    char path[4400];
    file_path(a, name, path, sizeof path);
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* ---- the syncing thread ------------------------------------------------------------------ */

/* An everysec sync, its outcome kept for the engine (check_background_sync).
 * EBADF and EINVAL (a file closed meanwhile, or one that cannot sync) are
 * not failures, as Redis ignores them. */
static void sync_and_record(syncer *s, int fd)
{
    int rc = gb_file_sync_fd(fd);
    gb_shm_store_release_u32(&s->sync_errno, rc != 0 && errno != EBADF && errno != EINVAL ? (uint32_t)errno : 0);
}

static void *syncer_main(void *arg)
{
    gb_aof *a = arg;
    syncer *s = &a->sy;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->stop && s->sync_fd < 0 && s->nclose == 0)
            pthread_cond_wait(&s->cv, &s->mu);
        if (s->sync_fd >= 0) {
            int fd = s->sync_fd;
            s->sync_fd = -1;
            pthread_mutex_unlock(&s->mu);
            sync_and_record(s, fd);
            pthread_mutex_lock(&s->mu);
        } else if (s->nclose) {
            int fd = s->close_fds[--s->nclose];
            pthread_mutex_unlock(&s->mu);
            gb_file_sync_fd(fd);
            gb_plat_close(fd);
            pthread_mutex_lock(&s->mu);
        } else if (s->stop) {
            break;
        }
        s->busy = s->sync_fd >= 0 || s->nclose > 0;
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static void syncer_start(gb_aof *a)
{
    syncer *s = &a->sy;
    s->sync_fd = -1;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->started = gb_helper_thread_start(&s->thread, "gb-aof-fsync", &a->eng->cfg.helper_cpus, syncer_main, a);
}

static void syncer_stop(gb_aof *a)
{
    syncer *s = &a->sy;
    if (!s->started)
        return;
    pthread_mutex_lock(&s->mu);
    s->stop = true;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    gb_helper_thread_join(&s->thread);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    s->started = false;
}

/* Asks for a sync of fd; false when the previous one is still running. */
static bool syncer_request(gb_aof *a, int fd)
{
    syncer *s = &a->sy;
    if (!s->started) {
        sync_and_record(s, fd);
        return true;
    }
    pthread_mutex_lock(&s->mu);
    bool ok = !s->busy;
    if (ok) {
        s->sync_fd = fd;
        s->busy = true;
        s->busy_since_ms = a->eng->now_ms;
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return ok;
}

/* Hands an old incremental file to the thread: synced, then closed. */
static void syncer_close(gb_aof *a, int fd)
{
    syncer *s = &a->sy;
    bool queued = false;
    if (s->started) {
        pthread_mutex_lock(&s->mu);
        if (s->nclose < (int)GB_ARRAY_LEN(s->close_fds)) {
            s->close_fds[s->nclose++] = fd;
            s->busy = true;
            queued = true;
            pthread_cond_broadcast(&s->cv);
        }
        pthread_mutex_unlock(&s->mu);
    }
    if (!queued) {
        gb_file_sync_fd(fd);
        gb_plat_close(fd);
    }
}

/* ---- appending -------------------------------------------------------------------------------- */

static void buf_put(gb_aof *a, const char *p, size_t n)
{
    if (a->len + n > a->cap) {
        size_t nc = a->cap ? a->cap : 4096;
        while (nc < a->len + n)
            nc *= 2;
        a->buf = gb_realloc(a->buf, nc);
        a->cap = nc;
    }
    memcpy(a->buf + a->len, p, n);
    a->len += n;
}

static void buf_command(gb_aof *a, int argc, const gb_slice *argv)
{
    char hdr[32];
    int k = snprintf(hdr, sizeof hdr, "*%d\r\n", argc);
    buf_put(a, hdr, (size_t)k);
    for (int i = 0; i < argc; i++) {
        k = snprintf(hdr, sizeof hdr, "$%zu\r\n", argv[i].len);
        buf_put(a, hdr, (size_t)k);
        buf_put(a, argv[i].ptr, argv[i].len);
        buf_put(a, "\r\n", 2);
    }
}

/* The propagation sink: every effect, SELECT first where the database
 * changes. */
static void sink_emit(void *ctx, int dbid, int argc, const gb_slice *argv)
{
    gb_aof *a = ctx;
    if (dbid != a->db) {
        char num[16];
        gb_slice sel[2] = {gb_slice_cstr("SELECT"), gb_slice_make(num, gb_ll2str(num, dbid))};
        buf_command(a, 2, sel);
        a->db = dbid;
    }
    buf_command(a, argc, argv);
    a->unsynced = true;
}

static void write_failed(gb_aof *a, int e)
{
    if (!a->write_failed)
        gb_log(GB_LOG_WARNING, "Error writing to the AOF file: %s", strerror(e));
    a->write_failed = true;
    a->write_errno = e;
    snprintf(a->refusal, sizeof a->refusal, "MISCONF Errors writing to the AOF file: %s", strerror(e));
}

/* Whether the fsync thread is syncing now (under its lock). */
static bool syncer_busy(gb_aof *a)
{
    if (!a->sy.started)
        return false;
    pthread_mutex_lock(&a->sy.mu);
    bool busy = a->sy.busy;
    pthread_mutex_unlock(&a->sy.mu);
    return busy;
}

/* The latency monitor's clock: read only while it is on. */
static uint64_t monitor_start(const gb_aof *a)
{
    return a->eng->cfg.latency_monitor_threshold > 0 ? gb_clock_mono_ns() : 0;
}

/* Redis's latency events of flushAppendOnlyFile (this server's rewrite is
 * a thread, not a child: a write is "alone" unless an fsync is pending). */
static void monitor_end(gb_aof *a, const char *event, uint64_t start)
{
    if (start)
        gb_latency_add_sample_if_needed(a->eng, event, (int64_t)((gb_clock_mono_ns() - start) / 1000000));
}

void gb_aof_flush(gb_aof *a, bool sync)
{
    if (a->state == AOF_OFF || a->fd < 0)
        return;
    if (a->len) {
        uint64_t t0 = monitor_start(a);
        int wrote = gb_write_all(a->fd, a->buf, a->len);
        if (t0)
            monitor_end(a, syncer_busy(a) ? "aof-write-pending-fsync" : "aof-write-alone", t0);
        if (wrote != 0) {
            int e = errno;
            /* Leave the file as it was: a half-written command would be a
             * torn record in the middle once the retry appends after it. */
            if (gb_plat_ftruncate(a->fd, (off_t)a->cur_size) != 0 || lseek(a->fd, 0, SEEK_END) < 0)
                gb_log(GB_LOG_WARNING, "Could not remove a partial write from the AOF file: %s", strerror(errno));
            write_failed(a, e);
            if (a->eng->cfg.appendfsync == GB_FSYNC_ALWAYS) {
                /* The replies waiting for this write acknowledge it: it
                 * cannot be taken back, so the server cannot go on. */
                gb_log(GB_LOG_WARNING, "Can't recover from AOF write error when the AOF fsync policy is 'always'. "
                                       "Exiting...");
                exit(1);
            }
            return;
        }
        a->cur_size += a->len;
        a->len = 0;
        if (a->write_failed) {
            gb_log(GB_LOG_NOTICE, "AOF write error looks solved, Redis can write again.");
            a->write_failed = false;
        }
        if (a->cap > (1u << 20)) { /* one burst does not pin its buffer */
            gb_free(a->buf);
            a->buf = NULL;
            a->cap = 0;
        }
    }
    if (sync && a->unsynced) {
        uint64_t t0 = monitor_start(a);
        int synced = gb_file_sync_fd(a->fd);
        monitor_end(a, "aof-fsync-always", t0);
        if (synced != 0) {
            gb_log(GB_LOG_WARNING, "Can't persist AOF for fsync error when the AOF fsync policy is 'always': %s. "
                                   "Exiting...",
                   strerror(errno));
            exit(1);
        }
        a->unsynced = false;
        a->last_sync_ms = a->eng->now_ms;
    }
}

bool gb_aof_unsynced(const gb_aof *a)
{
    return a->state != AOF_OFF && a->unsynced && a->eng->cfg.appendfsync == GB_FSYNC_ALWAYS;
}

/* An everysec sync that failed refuses writes (MISCONF) until one works,
 * as Redis does; the change is logged once each way. */
static void check_background_sync(gb_aof *a)
{
    int e = (int)gb_shm_load_acquire_u32(&a->sy.sync_errno);
    if (e && !a->sync_failed) {
        gb_log(GB_LOG_WARNING, "Fail to fsync the AOF file: %s", strerror(e));
        snprintf(a->sync_refusal, sizeof a->sync_refusal, "MISCONF Errors writing to the AOF file: %s", strerror(e));
    } else if (!e && a->sync_failed) {
        gb_log(GB_LOG_NOTICE, "AOF fsync is now working again");
    }
    a->sync_failed = e != 0;
    if (a->sync_failed)
        a->unsynced = true; /* tried again each second: a sync that works lifts the refusal */
}

void gb_aof_cron(gb_aof *a)
{
    if (a->state == AOF_OFF)
        return;
    check_background_sync(a);
    gb_aof_flush(a, a->eng->cfg.appendfsync == GB_FSYNC_ALWAYS);
    if (a->eng->cfg.appendfsync != GB_FSYNC_EVERYSEC || !a->unsynced || a->len)
        return;
    int64_t now = a->eng->now_ms;
    if (now - a->last_sync_ms < 1000)
        return;
    if (syncer_request(a, a->fd)) {
        a->unsynced = false;
        a->last_sync_ms = now;
    } else if (now - a->sy.busy_since_ms > 2000) {
        a->delayed_fsync++; /* the disk is slower than a sync a second */
    }
}

/* Opens a new incremental file with the next sequence number; writes from
 * now go there. The previous one is flushed and handed to the thread. */
/* A new incremental file: the next sequence number, its name and fd
 * (created, not yet written to). -1 with err. */
static int create_incr(gb_aof *a, int64_t *seq_out, char *name, size_t namecap, char *err, size_t errlen)
{
    int64_t seq = gb_manifest_max_seq(&a->man);
    if (a->cur_seq > seq)
        seq = a->cur_seq;
    if (a->rw_base_seq > seq)
        seq = a->rw_base_seq;
    seq++;
    char path[4400];
    name_of(a, seq, false, name, namecap);
    file_path(a, name, path, sizeof path);
    int fd = gb_plat_open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "cannot create '%.300s': %s", path, strerror(errno));
        return -1;
    }
    gb_sync_parent_dir(path);
    *seq_out = seq;
    return fd;
}

/* Writes go to fd (seq, name) from now; the previous file is flushed and
 * handed to the thread. */
static void switch_incr(gb_aof *a, int fd, int64_t seq, const char *name)
{
    if (a->fd >= 0) {
        gb_aof_flush(a, false);
        a->chain_size += a->cur_size;
        syncer_close(a, a->fd);
    }
    a->fd = fd;
    a->cur_seq = seq;
    snprintf(a->cur_name, sizeof a->cur_name, "%s", name);
    a->cur_size = 0;
    a->db = -1;
}

static int open_incr(gb_aof *a, char *err, size_t errlen)
{
    char name[GB_MANIFEST_NAME_MAX + 1];
    int64_t seq;
    int fd = create_incr(a, &seq, name, sizeof name, err, errlen);
    if (fd < 0)
        return -1;
    switch_incr(a, fd, seq, name);
    return 0;
}

/* ---- state changes ----------------------------------------------------------------------------- */

static void attach(gb_aof *a)
{
    a->sink = (gb_prop_sink){sink_emit, a, GB_PROP_AOF};
    gb_propagate_attach(a->eng, &a->sink);
}

bool gb_aof_waits_for_base(const gb_aof *a) { return a->state == AOF_WAIT_REWRITE; }

bool gb_aof_on(const gb_aof *a) { return a->state != AOF_OFF; }

int gb_aof_enable(gb_aof *a, char *err, size_t errlen)
{
    if (a->state != AOF_OFF)
        return 0;
    if (ensure_dir(a, err, errlen) != 0)
        return -1;
    /* An older log in the directory: its files go once the new base is
     * in place (gb_aof_rewrite_end), and sequence numbers continue after
     * the ones it used. */
    gb_manifest_free(&a->man);
    gb_manifest_init(&a->man);
    char mpath[4400], ignored[256];
    manifest_path(a, mpath, sizeof mpath);
    if (gb_manifest_read(&a->man, mpath, ignored, sizeof ignored) != 0) {
        gb_manifest_free(&a->man);
        gb_manifest_init(&a->man);
    }
    if (open_incr(a, err, errlen) != 0)
        return -1;
    a->chain_size = 0;
    a->state = AOF_WAIT_REWRITE;
    attach(a);
    return 0;
}

void gb_aof_disable(gb_aof *a)
{
    if (a->state == AOF_OFF)
        return;
    gb_propagate_detach(a->eng, &a->sink);
    gb_aof_flush(a, false);
    syncer_close(a, a->fd); /* synced then closed; the thread may be syncing it now */
    a->fd = -1;
    a->state = AOF_OFF;
    a->rewriting = false;
    a->write_failed = false;
    a->sync_failed = false;
    gb_shm_store_release_u32(&a->sy.sync_errno, 0);
}

static void remove_file(gb_aof *a, const char *name)
{
    char path[4400];
    file_path(a, name, path, sizeof path);
    if (gb_plat_unlink(path) != 0 && errno != ENOENT)
        gb_log(GB_LOG_WARNING, "Could not remove the old AOF file '%s': %s", path, strerror(errno));
}

int gb_aof_rewrite_begin(gb_aof *a, char *base_path, size_t cap, char *err, size_t errlen)
{
    if (a->state == AOF_OFF) {
        /* BGREWRITEAOF with appendonly no (Redis allows it): a new base
         * and a manifest naming only it; nothing is being logged. */
        if (ensure_dir(a, err, errlen) != 0)
            return -1;
        char mpath[4400], ignored[256];
        manifest_path(a, mpath, sizeof mpath);
        gb_manifest_free(&a->man);
        gb_manifest_init(&a->man);
        if (gb_manifest_read(&a->man, mpath, ignored, sizeof ignored) != 0) {
            gb_manifest_free(&a->man);
            gb_manifest_init(&a->man);
        }
        a->rw_base_seq = gb_manifest_max_seq(&a->man) + 1;
        name_of(a, a->rw_base_seq, true, a->rw_base_name, sizeof a->rw_base_name);
        file_path(a, a->rw_base_name, base_path, cap);
        a->rewriting = true;
        return 0;
    }
    char orphan[GB_MANIFEST_NAME_MAX + 1], name[GB_MANIFEST_NAME_MAX + 1];
    snprintf(orphan, sizeof orphan, "%s", a->cur_name);
    int64_t seq;
    int fd = create_incr(a, &seq, name, sizeof name, err, errlen);
    if (fd < 0)
        return -1;
    if (a->state == AOF_ON) {
        /* The new file joins the chain before any write goes there (Redis's
         * openNewIncrAofForAppend): a crash before the rewrite ends finds
         * every write in the old chain plus this file, and a manifest that
         * cannot be written leaves the writes going where it names. */
        gb_manifest_add(&a->man, name, seq, 'i');
        char mpath[4400];
        manifest_path(a, mpath, sizeof mpath);
        if (gb_manifest_write(&a->man, mpath, err, errlen) != 0) {
            a->man.n--;
            gb_plat_close(fd);
            remove_file(a, name);
            return -1;
        }
    }
    switch_incr(a, fd, seq, name);
    if (a->state == AOF_WAIT_REWRITE && orphan[0]) {
        /* Logged while waiting for a base no manifest names yet: the base
         * begun now contains all of it. */
        remove_file(a, orphan);
    }
    a->rw_base_seq = a->cur_seq; /* the base of the moment this file starts */
    name_of(a, a->rw_base_seq, true, a->rw_base_name, sizeof a->rw_base_name);
    file_path(a, a->rw_base_name, base_path, cap);
    a->rewriting = true;
    return 0;
}


void gb_aof_rewrite_end(gb_aof *a, bool ok)
{
    if (!a->rewriting)
        return;
    a->rewriting = false;
    if (!ok) {
        remove_file(a, a->rw_base_name);
        return;
    }
    gb_manifest next;
    gb_manifest_init(&next);
    gb_manifest_add(&next, a->rw_base_name, a->rw_base_seq, 'b');
    if (a->state != AOF_OFF)
        gb_manifest_add(&next, a->cur_name, a->cur_seq, 'i');
    char mpath[4400], err[512];
    manifest_path(a, mpath, sizeof mpath);
    if (gb_manifest_write(&next, mpath, err, sizeof err) != 0) {
        gb_log(GB_LOG_WARNING, "Background AOF rewrite could not switch the manifest: %s", err);
        gb_manifest_free(&next);
        remove_file(a, a->rw_base_name);
        return;
    }
    /* The old chain is history now. */
    for (size_t i = 0; i < a->man.n; i++)
        if (a->state == AOF_OFF || strcmp(a->man.files[i].name, a->cur_name) != 0)
            remove_file(a, a->man.files[i].name);
    gb_manifest_free(&a->man);
    a->man = next;
    if (a->state == AOF_OFF) {
        gb_sync_parent_dir(mpath);
        return;
    }
    a->state = AOF_ON;
    a->chain_size = size_of(a, a->rw_base_name);
    a->base_size = a->chain_size + a->cur_size;
    gb_sync_parent_dir(mpath);
}

/* ---- loading --------------------------------------------------------------------------------- */

/* Whether name ends with suffix. */
static bool ends_with(const char *name, const char *suffix)
{
    size_t n = strlen(name), k = strlen(suffix);
    return n >= k && strcmp(name + n - k, suffix) == 0;
}

/* A log Redis 7 wrote: its base is a Redis RDB ("<n>.base.rdb", with
 * aof-use-rdb-preamble yes, the default) or commands ("<n>.base.aof").
 * Both load; the next rewrite replaces the base with Goblin's format. */
static int load_redis_base(gb_aof *a, const char *name, const char *path, char *err, size_t errlen)
{
    if (ends_with(name, ".base.aof")) {
        gb_aof_read_result res;
        int rc = gb_aof_replay(a->eng, path, false, &res, err, errlen);
        if (rc == 0)
            gb_log(GB_LOG_NOTICE, "Loaded the Redis AOF base '%s': %llu commands", name,
                   (unsigned long long)res.commands);
        return rc;
    }
    gb_rdb_load_stats st;
    int rc = gb_rdb_load_file(a->eng, path, &st, NULL, NULL, err, errlen);
    if (rc == 0)
        gb_log(GB_LOG_NOTICE, "Loaded the Redis AOF base '%s' (RDB version %u): %llu keys (%llu expired, not "
               "loaded), %llu function libraries", name, st.version, (unsigned long long)st.keys,
               (unsigned long long)st.expired, (unsigned long long)st.functions);
    return rc;
}

static int load_base(gb_aof *a, const char *name, char *err, size_t errlen)
{
    char path[4400];
    file_path(a, name, path, sizeof path);
    if (ends_with(name, ".base.aof") || gb_rdb_file_is_redis(path))
        return load_redis_base(a, name, path, err, errlen);
    gb_snap_reader *r = gb_snap_reader_open(path, err, errlen);
    if (!r)
        return GB_EIO;
    if (gb_helper_has_own_cpu(&a->eng->cfg.helper_cpus)) /* as load_snapshot_file */
        (void)gb_snap_reader_read_ahead(r, &a->eng->cfg.helper_cpus);
    gb_snap_load_stats st;
    bool ok = gb_snap_load(a->eng, r, &st, NULL, NULL);
    if (!ok)
        snprintf(err, errlen, "%s", gb_snap_reader_error(r));
    else
        gb_log(GB_LOG_NOTICE, "Loaded the AOF base '%s': %llu keys", name, (unsigned long long)st.keys);
    gb_snap_reader_free(r);
    return ok ? 0 : GB_EPARSE;
}

/* Keeps the manifest and the files it names. */
/* Whether s is "<digits>" then what follows (advanced past both). */
static bool skip_number_then(const char **s, const char *then)
{
    const char *p = *s;
    if (*p < '0' || *p > '9')
        return false;
    while (*p >= '0' && *p <= '9')
        p++;
    size_t n = strlen(then);
    if (strncmp(p, then, n) != 0)
        return false;
    *s = p + n;
    return true;
}

/* Whether name (after appendfilename) is one this log writes: a base or an
 * incremental file "<n>.base.gdb" / "<n>.incr.aof", a snapshot's
 * temporary "<n>.base.gdb.tmp-<pid>", or the manifest's "manifest.tmp-<pid>".
 * Nothing else in the directory is the log's to delete (an operator's
 * "appendonly.aof.manifest.bak" stays). */
static bool own_form(const char *rest)
{
    if (*rest++ != '.')
        return false;
    const char *p = rest;
    if (strncmp(p, "manifest.tmp-", 13) == 0) {
        p += 13;
        return skip_number_then(&p, "") && *p == '\0';
    }
    if (!skip_number_then(&p, ".base.gdb") && !skip_number_then(&p, ".incr.aof"))
        return false;
    if (*p == '\0')
        return true;
    return strncmp(p, ".tmp-", 5) == 0 && (p += 5, skip_number_then(&p, "")) && *p == '\0';
}

static bool named_or_foreign(void *ctx, const char *name)
{
    const gb_aof *a = ctx;
    if (!own_form(name + strlen(a->eng->cfg.appendfilename)))
        return true; /* not one of this log's forms: kept */
    for (size_t i = 0; i < a->man.n; i++)
        if (strcmp(a->man.files[i].name, name) == 0)
            return true;
    return false;
}

int gb_aof_load(gb_aof *a, char *err, size_t errlen)
{
    gb_engine *eng = a->eng;
    gb_path_join(a->dir, sizeof a->dir, eng->cfg.dir, eng->cfg.appenddirname);
    char mpath[4400];
    manifest_path(a, mpath, sizeof mpath);
    gb_manifest_free(&a->man);
    gb_manifest_init(&a->man);
    int rc = gb_manifest_read(&a->man, mpath, err, errlen);
    if (rc != 0)
        return rc;
    /* Files of this log the manifest does not name are leftovers of a
     * rewrite or a manifest switch a crash interrupted. */
    int removed = gb_remove_prefixed(a->dir, eng->cfg.appendfilename, named_or_foreign, a);
    if (removed)
        gb_log(GB_LOG_NOTICE, "Removed %d append-only file(s) no manifest names (an interrupted rewrite)", removed);
    uint64_t t0 = gb_clock_mono_ns();
    eng->loading = true;
    uint64_t commands = 0;
    for (size_t i = 0; i < a->man.n && rc == 0; i++) {
        const gb_manifest_file *f = &a->man.files[i];
        if (f->type == 'b') {
            rc = load_base(a, f->name, err, errlen);
            continue;
        }
        char path[4400];
        file_path(a, f->name, path, sizeof path);
        bool last = i + 1 == a->man.n;
        gb_aof_read_result res;
        rc = gb_aof_replay(eng, path, last && eng->cfg.aof_load_truncated, &res, err, errlen);
        commands += res.commands;
        if (rc == 0 && res.truncated_at >= 0)
            gb_log(GB_LOG_WARNING,
                   "!!! Warning: short read while loading the AOF file %s!!! The last command, cut short by a "
                   "crash, was dropped: the file is truncated at offset %lld. AOF loaded anyway because "
                   "aof-load-truncated is enabled",
                   f->name, (long long)res.truncated_at);
    }
    eng->loading = false;
    if (rc != 0)
        return rc;
    /* Append to the last incremental file of the chain. */
    const gb_manifest_file *last = &a->man.files[a->man.n - 1];
    if (last->type != 'i') {
        if (open_incr(a, err, errlen) != 0)
            return GB_EIO;
        gb_manifest_add(&a->man, a->cur_name, a->cur_seq, 'i');
        if (gb_manifest_write(&a->man, mpath, err, errlen) != 0)
            return GB_EIO;
    } else {
        char path[4400];
        file_path(a, last->name, path, sizeof path);
        a->fd = gb_plat_open(path, O_WRONLY | O_APPEND | O_CLOEXEC, 0);
        if (a->fd < 0) {
            snprintf(err, errlen, "cannot open '%.300s' for appending: %s", path, strerror(errno));
            return GB_EIO;
        }
        a->cur_seq = last->seq;
        snprintf(a->cur_name, sizeof a->cur_name, "%s", last->name);
        a->cur_size = size_of(a, last->name);
        a->db = -1;
    }
    a->chain_size = 0;
    for (size_t i = 0; i + 1 < a->man.n; i++)
        a->chain_size += size_of(a, a->man.files[i].name);
    a->base_size = a->chain_size + a->cur_size;
    a->state = AOF_ON;
    attach(a);
    double secs = (double)(gb_clock_mono_ns() - t0) / 1e9;
    gb_log(GB_LOG_NOTICE, "DB loaded from append only file: %llu commands after the base, %.3f seconds",
           (unsigned long long)commands, secs);
    return 0;
}

/* ---- reporting ---------------------------------------------------------------------------------- */

void gb_aof_reset_stats(gb_aof *a) { a->delayed_fsync = 0; }

uint64_t gb_aof_size(const gb_aof *a) { return a->chain_size + a->cur_size + a->len; }
uint64_t gb_aof_base_size(const gb_aof *a) { return a->base_size; }

const char *gb_aof_write_refusal(const gb_aof *a)
{
    return a->write_failed ? a->refusal : a->sync_failed && a->state != AOF_OFF ? a->sync_refusal : NULL;
}

static void out(void (*line)(void *, const char *), void *lctx, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void out(void (*line)(void *, const char *), void *lctx, const char *fmt, ...)
{
    char b[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    line(lctx, b);
}

size_t gb_aof_buffer_bytes(const gb_aof *a) { return a->buf ? gb_mem_accounted(a->buf) : 0; }

void gb_aof_info(const gb_aof *a, bool rewrite_pending, void (*line)(void *lctx, const char *text), void *lctx)
{
    out(line, lctx, "aof_last_write_status:%s", a->write_failed || a->sync_failed ? "err" : "ok");
    if (a->state == AOF_OFF)
        return;
    out(line, lctx, "aof_current_size:%llu", (unsigned long long)gb_aof_size(a));
    out(line, lctx, "aof_base_size:%llu", (unsigned long long)a->base_size);
    out(line, lctx, "aof_pending_rewrite:%d", rewrite_pending ? 1 : 0);
    out(line, lctx, "aof_buffer_length:%zu", a->len);
    out(line, lctx, "aof_pending_bio_fsync:%d", a->sy.busy ? 1 : 0);
    out(line, lctx, "aof_delayed_fsync:%llu", (unsigned long long)a->delayed_fsync);
}

/* ---- life cycle --------------------------------------------------------------------------------- */

gb_aof *gb_aof_new(gb_engine *eng)
{
    gb_aof *a = gb_calloc(1, sizeof *a);
    a->eng = eng;
    a->fd = -1;
    a->db = -1;
    gb_manifest_init(&a->man);
    syncer_start(a);
    return a;
}

void gb_aof_free(gb_aof *a)
{
    if (!a)
        return;
    gb_aof_disable(a);
    syncer_stop(a);
    gb_manifest_free(&a->man);
    gb_free(a->buf);
    gb_free(a);
}
