#define _POSIX_C_SOURCE 200809L
#include "engine/persist/repl_fsync.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/base/crc64.h"
#include "engine/base/mem.h"
#include "engine/base/random.h"
#include "engine/base/strbuf.h"
#include "engine/core/replication/repl.h"
#include "engine/persist/cow_scan.h"
#include "engine/persist/fileio.h"
#include "engine/persist/rdb_save.h"
#include "platform/clock.h"
#include "platform/file.h"

/* Bytes the slowest replica may have not yet taken before the scan pauses
 * (beyond what its socket's kernel buffer holds). */
#define FLOW_WINDOW ((size_t)1 << 20)
/* RDB bytes made before they are handed on. */
#define CHUNK ((size_t)64 * 1024)
/* The engine's time per slice: a command waits at most about this long. */
#define SLICE_NS 1000000u
#define MARK_LEN 40

struct gb_fullsync {
    gb_engine *eng;
    bool active;
    bool disk;            /* to a file first, then sent with its length */
    gb_cow_scan *scan;    /* NULL once the RDB is made */
    gb_strbuf buf;        /* RDB bytes made, not yet handed on */
    uint64_t crc;         /* CRC-64 of the RDB bytes handed on */
    uint64_t rdb_bytes;
    int stream_db;        /* database of the last key written; -1: none yet */
    char mark[MARK_LEN];
    uint64_t started_ns;
    int64_t keepalive_ms; /* the last newline to replicas with nothing to receive yet */
    uint64_t longest_slice_ns; /* the engine's longest step on the transfer (the log says it) */
    /* for INFO (gb_fullsync_stats): the scan making the RDB stands for
     * Redis's replication child, which ends when the RDB is made */
    int64_t started_ms, last_secs, last_end_ms;
    /* the disk-based transfer */
    int fd;
    char path[4200];
    uint64_t file_sent;   /* of rdb_bytes, sent to the replicas */
    bool sending_file;
};

gb_fullsync_stats gb_fullsync_stats_of(const gb_fullsync *f)
{
    return (gb_fullsync_stats){.current_secs = f->scan ? (f->eng->now_ms - f->started_ms) / 1000 : -1,
                               .last_secs = f->last_secs,
                               .last_end_ms = f->last_end_ms};
}

gb_fullsync *gb_fullsync_new(gb_engine *eng)
{
    gb_fullsync *f = gb_calloc(1, sizeof *f);
    f->eng = eng;
    f->fd = -1;
    f->last_secs = -1;
    return f;
}

bool gb_fullsync_active(const gb_fullsync *f) { return f->active; }

/* ---- making the RDB ------------------------------------------------------------------- */

/* The scan's emitter: a key into the RDB (SELECTDB and RESIZEDB first
 * where the database changes). Keys past their deadline are written too:
 * a replica keeps them until the primary's DEL, as with Redis. */
static void emit_key(void *ctx, gb_db *db, gb_kv *kv)
{
    gb_fullsync *f = ctx;
    if (f->stream_db != db->id) {
        gb_rdb_put_selectdb(&f->buf, db);
        f->stream_db = db->id;
    }
    gb_rdb_put_key(&f->buf, kv);
}

/* RDB bytes on their way: into the file, or to every replica receiving. */
static int hand_on(gb_fullsync *f, const char *p, size_t n)
{
    f->rdb_bytes += n;
    if (f->disk)
        return gb_write_all(f->fd, p, n);
    gb_repl_fsync_send(f->eng, p, n);
    return 0;
}

static int hand_on_buffer(gb_fullsync *f)
{
    if (!f->buf.len)
        return 0;
    f->crc = gb_crc64(f->crc, f->buf.p, f->buf.len);
    int rc = hand_on(f, f->buf.p, f->buf.len);
    gb_strbuf_reset(&f->buf);
    return rc;
}

/* The scan is done: EOF, the checksum, and the diskless end mark (not
 * part of the RDB). */
static void scan_done(gb_fullsync *f)
{
    if (!f->scan)
        return;
    gb_cow_scan_free(f->scan);
    f->scan = NULL;
    /* Redis's backgroundSaveDoneHandler: the time is kept whether the RDB
     * was made whole or not. */
    f->last_secs = (f->eng->now_ms - f->started_ms + 999) / 1000;
    f->last_end_ms = f->eng->now_ms;
}

static int end_rdb(gb_fullsync *f)
{
    scan_done(f);
    gb_rdb_put_eof(&f->buf);
    if (hand_on_buffer(f) != 0)
        return -1;
    gb_rdb_put_crc(&f->buf, f->crc);
    int rc = hand_on(f, f->buf.p, f->buf.len);
    gb_strbuf_reset(&f->buf);
    if (!f->disk)
        gb_repl_fsync_send(f->eng, f->mark, MARK_LEN);
    return rc;
}

/* Scans until a chunk is made or the scan ends. */
static int make_chunk(gb_fullsync *f)
{
    while (f->buf.len < CHUNK)
        if (gb_cow_scan_some(f->scan))
            return end_rdb(f);
    return hand_on_buffer(f);
}

/* ---- the transfer ---------------------------------------------------------------------- */

static void reset(gb_fullsync *f)
{
    scan_done(f);
    gb_strbuf_free(&f->buf);
    if (f->fd >= 0) {
        gb_plat_close(f->fd);
        gb_plat_unlink(f->path);
    }
    f->fd = -1;
    f->active = false;
    f->sending_file = false;
}

static void abandon(gb_fullsync *f, const char *why)
{
    gb_log(GB_LOG_WARNING, "Full sync abandoned: %s", why);
    gb_repl_fsync_failed(f->eng);
    reset(f);
}

static void finish(gb_fullsync *f)
{
    double secs = (double)(gb_clock_mono_ns() - f->started_ns) / 1e9;
    gb_log(GB_LOG_NOTICE, "Full sync %s: %llu bytes of RDB in %.3f s (longest engine slice %.2f ms)",
           f->disk ? "sent from disk" : "streamed", (unsigned long long)f->rdb_bytes, secs,
           (double)f->longest_slice_ns / 1e6);
    gb_repl_fsync_done(f->eng, !f->disk);
    reset(f);
}

static void random_mark(char *out)
{
    static const char hex[] = "0123456789abcdef"; /* as Redis's getRandomHexChars */
    for (int i = 0; i < MARK_LEN; i++)
        out[i] = hex[gb_random_u64() & 15];
}

static bool open_file(gb_fullsync *f)
{
    char name[64];
    snprintf(name, sizeof name, "temp-fullsync-%d.rdb", (int)getpid());
    gb_path_join(f->path, sizeof f->path, f->eng->cfg.dir, name);
    f->fd = gb_plat_open(f->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (f->fd < 0) {
        gb_log(GB_LOG_WARNING, "Full sync: cannot create %s: %s", f->path, strerror(errno));
        return false;
    }
    return true;
}

/* Whether the waiting replicas' scan starts now: a diskless one after its
 * delay (or with enough replicas), a disk-based one at once; never while
 * another scan (a BGSAVE) holds the engine. */
static bool due(gb_fullsync *f, bool *disk)
{
    gb_engine *eng = f->eng;
    int64_t oldest = 0;
    bool all_eof = true;
    size_t n = gb_repl_fsync_waiting(eng, &oldest, &all_eof);
    if (n == 0 || eng->cow.active)
        return false;
    *disk = !eng->cfg.repl_diskless_sync || !all_eof;
    if (*disk)
        return true;
    int max = eng->cfg.repl_diskless_sync_max_replicas;
    return (max > 0 && n >= (size_t)max) || eng->now_ms - oldest >= (int64_t)eng->cfg.repl_diskless_sync_delay * 1000;
}

static void start(gb_fullsync *f, bool disk)
{
    gb_engine *eng = f->eng;
    f->disk = disk;
    if (disk && !open_file(f)) {
        gb_repl_fsync_start(eng);
        abandon(f, "no file for the RDB");
        return;
    }
    f->active = true;
    f->started_ms = eng->now_ms;
    f->crc = 0;
    f->rdb_bytes = f->file_sent = 0;
    f->stream_db = -1;
    f->started_ns = gb_clock_mono_ns();
    f->longest_slice_ns = 0;
    /* The moment of the RDB: the header, the scan and +FULLRESYNC's offset
     * with no command between them. */
    gb_rdb_put_header(&f->buf, eng, gb_rdb_version_for(eng), gb_repl_stream_db(eng));
    f->scan = gb_cow_scan_begin(eng, emit_key, f);
    size_t n = gb_repl_fsync_start(eng);
    gb_log(GB_LOG_NOTICE, "Starting a full sync for %zu replica(s), %s", n,
           disk ? "through a file on disk" : "diskless (streamed to the sockets)");
    if (!disk) {
        random_mark(f->mark);
        char hdr[64];
        int len = snprintf(hdr, sizeof hdr, "$EOF:%.*s\r\n", MARK_LEN, f->mark);
        gb_repl_fsync_send(eng, hdr, (size_t)len);
    }
}

void gb_fullsync_cron(gb_fullsync *f)
{
    bool disk;
    if (!f->active && due(f, &disk))
        start(f, disk);
    /* Once a second, as Redis's replicationCron: a newline to replicas
     * waiting for a scan, and to those whose RDB is still going to the
     * file (they have had nothing since +FULLRESYNC). */
    gb_engine *eng = f->eng;
    if (eng->now_ms - f->keepalive_ms >= 1000) {
        gb_repl_fsync_keepalive(eng, f->active && f->disk && !f->sending_file);
        f->keepalive_ms = eng->now_ms;
    }
}

/* The file is made: its length, then its bytes as the sockets take them. */
static void begin_sending_file(gb_fullsync *f)
{
    char hdr[32];
    int len = snprintf(hdr, sizeof hdr, "$%llu\r\n", (unsigned long long)f->rdb_bytes);
    gb_repl_fsync_send(f->eng, hdr, (size_t)len);
    f->sending_file = true;
}

static int send_file_chunk(gb_fullsync *f)
{
    char chunk[CHUNK];
    size_t want = (size_t)GB_MIN((uint64_t)sizeof chunk, f->rdb_bytes - f->file_sent);
    ssize_t n = gb_plat_pread(f->fd, chunk, want, (off_t)f->file_sent);
    if (n <= 0)
        return -1;
    gb_repl_fsync_send(f->eng, chunk, (size_t)n);
    f->file_sent += (uint64_t)n;
    return 0;
}

/* One piece of work; GB_BG_WAITING when the replicas must take what they
 * have first. */
static gb_bg_state work(gb_fullsync *f, size_t pending)
{
    bool to_socket = !f->disk || f->sending_file;
    if (to_socket && pending >= FLOW_WINDOW)
        return GB_BG_WAITING;
    if (f->sending_file) {
        if (send_file_chunk(f) != 0) {
            abandon(f, "the RDB file could not be read");
            return GB_BG_IDLE;
        }
        if (f->file_sent == f->rdb_bytes)
            finish(f);
        return GB_BG_MORE;
    }
    if (make_chunk(f) != 0) {
        abandon(f, "the RDB file could not be written");
        return GB_BG_IDLE;
    }
    if (!f->scan) {
        if (f->disk)
            begin_sending_file(f);
        else
            finish(f);
    }
    return GB_BG_MORE;
}

/* Work until the slice's end, the replicas' window or the transfer's end. */
static gb_bg_state slice(gb_fullsync *f, uint64_t until)
{
    for (;;) {
        size_t pending;
        if (gb_repl_fsync_receivers(f->eng, &pending) == 0) {
            abandon(f, "no replica is left to receive it");
            return GB_BG_IDLE;
        }
        gb_bg_state st = work(f, pending);
        if (st != GB_BG_MORE || !f->active || gb_clock_mono_ns() >= until)
            return f->active ? st : GB_BG_IDLE;
    }
}

gb_bg_state gb_fullsync_step(gb_fullsync *f)
{
    uint64_t t0 = gb_clock_mono_ns();
    if (!f->active) {
        gb_fullsync_cron(f);
        if (!f->active)
            return GB_BG_IDLE;
    }
    gb_bg_state st = slice(f, t0 + SLICE_NS);
    uint64_t took = gb_clock_mono_ns() - t0;
    if (took > f->longest_slice_ns)
        f->longest_slice_ns = took;
    return st;
}

void gb_fullsync_free(gb_fullsync *f)
{
    if (!f)
        return;
    reset(f);
    gb_free(f);
}
