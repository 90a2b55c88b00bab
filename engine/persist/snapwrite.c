#define _POSIX_C_SOURCE 200809L
#include "engine/persist/snapwrite.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>
#include <zstd.h>

#include "engine/base/helper_thread.h"
#include "engine/persist/fileio.h"
#include "engine/persist/snapfmt.h"
#include "platform/clock.h"
#include "platform/file.h"

/* A raw block on its way to the writer thread. */
typedef struct block {
    struct block *next;
    size_t len;
    uint8_t data[];
} block;

struct gb_snap_writer {
    /* engine thread */
    block *cur;              /* being filled */
    uint64_t bytes;          /* stream bytes so far */
    char path[4096], tmp[4096 + 32];
    int level;

    /* shared, under mu */
    pthread_mutex_t mu;
    pthread_cond_t cv;       /* work for the thread, or its outcome */
    block *head, *tail;
    size_t queued;
    size_t peak_queued;      /* the largest backlog so far (tests: the bound holds) */
    /* Written blocks kept for reuse (at most SPARE_BLOCKS): a fresh 1 MB
     * block per megabyte of snapshot made the allocator hand back and
     * re-fault its pages every time (perf: the kernel zeroing pages was
     * 13% of a SAVE's engine-thread time). */
    block *spare;
    unsigned nspare;
    bool closing;            /* no more blocks after the queue */
    uint64_t keys;
    /* The writer's class (WRITER_STARVED_NS explains): idle while it may
     * be raised back, raised while it catches up after going without the
     * CPU that long. */
    bool idle_class;
    bool raised;
    unsigned raises;
    uint64_t opened_ns, first_raise_ns; /* the first raise, counted from the open (the log says when) */
    uint64_t progress_ns;    /* a block was last finished */
    uint64_t depends_ns;     /* the engine began to wait on the thread: a full backlog, a SAVE waiting, the close */
    bool engine_waits;       /* a SAVE sleeps in gb_snap_writer_wait_backlog */
    int outcome;             /* 0 so far so good, 1 file in place, -1 failed */
    bool finished;           /* the thread is done: outcome is final */
    bool stop;               /* abandon: discard and return */
    char err[512];

    /* A background save with no CPU for the thread: the engine compresses
     * and writes the blocks itself, a piece at a time (gb_snap_writer_pump). */
    bool engine_compresses;
    bool in_hand;            /* under mu: the engine holds a block it took from the queue */
    struct {                 /* engine thread: the block in hand */
        block *b;
        size_t fed;          /* its bytes given to zstd */
        size_t stored;       /* compressed bytes so far, at out + GB_SNAP_BLOCK_HEADER_SIZE */
        bool sealed;         /* compressed (or stored raw) and its header made */
        const uint8_t *payload;
        size_t written;      /* of header + payload */
        uint8_t hdr[GB_SNAP_BLOCK_HEADER_SIZE];
    } pump;

    /* writer thread (and, where the engine compresses, the engine's pump) */
    gb_helper_thread thread;
    bool thread_started;
    int fd;
    uint64_t blocks, raw_total, chain;
    XXH3_state_t *chain_state;
    ZSTD_CCtx *cctx;
    uint8_t *out;
    size_t outcap;
};

/* Blocks kept for reuse: as many as the backlog a caller allows plus the
 * one being filled, so a save whose engine thread runs ahead of the writer
 * (one shared CPU: the backlog fills before the writer runs) reuses its
 * blocks instead of freeing and re-faulting them (perf, 2 GB SAVE on one
 * CPU: 4 spares left the kernel zeroing pages for 5% of the time). This
 * keeps no more memory than the backlog bound already allows. */
#define SPARE_BLOCKS (GB_SNAP_WRITER_MAX_BACKLOG + 1u)

/* The writer thread runs in the idle class where the OS allows a way
 * back (gb_thread_lower_to_idle): sharing the engine's CPU, it then gives
 * way the instant a request wakes the engine. At nice 10, Linux's EEVDF
 * made a waking engine wait for it (perf sched, 2 GB BGSAVE, 8 clients
 * writing: the engine's wake-up delay p50 48 us, p99 0.35 ms, against
 * 8 / 45 us with no save). But an idle-class thread gets next to nothing
 * of a CPU that the engine or other processes keep busy, so when the
 * engine has waited on it this long (its backlog full, a SAVE waiting, or
 * the stream closed with blocks left) without the thread finishing a
 * block, the engine's side raises it to nice 10 (a save must end); once
 * it has halved the backlog it goes back to the idle class. The engine
 * filling the backlog does not count: the writer runs when it waits. */
#define WRITER_STARVED_NS 50000000u
/* How often a thread waiting for the writer looks for starvation. */
#define STARVATION_CHECK_NS 10000000u

/* ---- the writer thread ----------------------------------------------------------------- */

static void fail_locked(gb_snap_writer *w, const char *what, int e)
{
    if (w->outcome == 0) {
        snprintf(w->err, sizeof w->err, "%s '%.300s': %.100s", what, w->tmp, strerror(e));
        w->outcome = -1;
    }
}

/* The block's header (snapfmt.h: magic, stored and raw sizes, codec, the
 * XXH3 of header and payload), and its checksum into the file's chain. */
static void seal_block(gb_snap_writer *w, uint8_t hdr[GB_SNAP_BLOCK_HEADER_SIZE], const uint8_t *payload,
                       size_t stored, size_t raw_len, uint8_t codec)
{
    memset(hdr, 0, GB_SNAP_BLOCK_HEADER_SIZE);
    gb_le32_put(hdr, GB_SNAP_BLOCK_MAGIC);
    gb_le32_put(hdr + 4, (uint32_t)stored);
    gb_le32_put(hdr + 8, (uint32_t)raw_len);
    hdr[12] = codec;
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    XXH3_64bits_update(&st, hdr, 16);
    XXH3_64bits_update(&st, payload, stored);
    uint64_t sum = XXH3_64bits_digest(&st);
    gb_le64_put(hdr + 16, sum);
    uint8_t sumle[8];
    gb_le64_put(sumle, sum);
    XXH3_64bits_update(w->chain_state, sumle, 8);
    w->blocks++;
    w->raw_total += raw_len;
}

static int write_block(gb_snap_writer *w, const block *b)
{
    const uint8_t *payload = b->data;
    size_t stored = b->len;
    uint8_t codec = GB_SNAP_CODEC_NONE;
    if (w->level != 0) {
        size_t n = ZSTD_compressCCtx(w->cctx, w->out + GB_SNAP_BLOCK_HEADER_SIZE, w->outcap - GB_SNAP_BLOCK_HEADER_SIZE,
                                     b->data, b->len, w->level);
        if (!ZSTD_isError(n) && n < b->len) {
            payload = w->out + GB_SNAP_BLOCK_HEADER_SIZE;
            stored = n;
            codec = GB_SNAP_CODEC_ZSTD;
        }
    }
    uint8_t hdr[GB_SNAP_BLOCK_HEADER_SIZE];
    seal_block(w, hdr, payload, stored, b->len, codec);
    if (gb_write_all(w->fd, hdr, sizeof hdr) != 0 || gb_write_all(w->fd, payload, stored) != 0)
        return -1;
    return 0;
}

static int write_trailer(gb_snap_writer *w, uint64_t keys)
{
    uint8_t t[GB_SNAP_TRAILER_SIZE] = {0};
    gb_le32_put(t, GB_SNAP_TRAILER_MAGIC);
    gb_le64_put(t + 8, w->blocks);
    gb_le64_put(t + 16, w->raw_total);
    gb_le64_put(t + 24, keys);
    gb_le64_put(t + 32, XXH3_64bits_digest(w->chain_state));
    gb_le64_put(t + 40, XXH3_64bits(t, 40));
    return gb_write_all(w->fd, t, sizeof t);
}

/* Wakes whoever waits on the queue: the thread for a new block, the
 * engine for room. Where the engine compresses, only the close concerns
 * the thread: a wake-up per block would only take the CPU from the
 * engine to find nothing to do. */
static void queue_changed_locked(gb_snap_writer *w)
{
    if (!w->engine_compresses || w->closing)
        pthread_cond_broadcast(&w->cv);
}

/* A block written (e == 0) or not (errno e): kept for reuse, the backlog
 * shrank. */
static void block_done_locked(gb_snap_writer *w, block *b, int e)
{
    if (w->nspare < SPARE_BLOCKS) {
        b->next = w->spare;
        w->spare = b;
        w->nspare++;
    } else {
        free(b);
    }
    if (e != 0)
        fail_locked(w, "cannot write snapshot", e);
    w->progress_ns = gb_clock_mono_ns();
    queue_changed_locked(w);
}

/* Whether the writer thread has something to do (mu held): stop; or a
 * block to write, unless the engine writes them itself; or the file to
 * finish, once it is closing and every block is written (none queued,
 * none in the engine's hands). */
static bool writer_has_work_locked(const gb_snap_writer *w)
{
    if (w->stop)
        return true;
    if (w->head && !w->engine_compresses)
        return true;
    return w->closing && !w->head && !w->in_hand;
}

static void *writer_main(void *arg)
{
    gb_snap_writer *w = arg;
    /* Below the engine: a save sharing the engine's CPU (no --cpu, or no
     * other CPU to run on) must not hold requests up. Best effort: where
     * the OS cannot, the thread runs at the engine's priority. */
    (void)gb_thread_set_low_priority();
    /* Where the engine compresses, the thread only finishes the file
     * (trailer, sync, rename): mostly waiting on the disk, it stays at
     * nice 10, where a busy engine cannot starve it. */
    bool idle = !w->engine_compresses && gb_thread_lower_to_idle() == 0;
    pthread_mutex_lock(&w->mu);
    w->idle_class = idle;
    for (;;) {
        while (!writer_has_work_locked(w))
            pthread_cond_wait(&w->cv, &w->mu);
        if (w->stop)
            break;
        block *b = w->engine_compresses ? NULL : w->head;
        if (b) {
            w->head = b->next;
            if (!w->head)
                w->tail = NULL;
            w->queued--;
            bool failed = w->outcome != 0;
            pthread_mutex_unlock(&w->mu);
            int rc = failed ? 0 : write_block(w, b);
            int e = errno;
            pthread_mutex_lock(&w->mu);
            block_done_locked(w, b, rc == 0 ? 0 : e ? e : EIO);
            if (w->raised && w->queued <= GB_SNAP_WRITER_MAX_BACKLOG / 2) {
                pthread_mutex_unlock(&w->mu); /* caught up: idle again */
                idle = gb_thread_lower_to_idle() == 0;
                pthread_mutex_lock(&w->mu);
                w->idle_class = idle;
                w->raised = false;
            }
            continue;
        }
        /* closing, queue empty: trailer, sync, rename, sync the directory */
        uint64_t keys = w->keys;
        bool failed = w->outcome != 0;
        pthread_mutex_unlock(&w->mu);
        const char *step = "cannot write snapshot";
        int rc = failed ? -1 : write_trailer(w, keys);
        if (rc == 0) {
            step = "cannot sync snapshot";
            rc = gb_file_sync_fd(w->fd);
        }
        int e = errno;
        if (gb_plat_close(w->fd) != 0 && rc == 0) {
            rc = -1;
            e = errno;
        }
        w->fd = -1;
        if (rc == 0) {
            step = "cannot rename snapshot into place from";
            rc = gb_rename_durably(w->tmp, w->path);
            e = errno;
        }
        if (rc != 0)
            gb_plat_unlink(w->tmp);
        pthread_mutex_lock(&w->mu);
        if (rc != 0 && !failed)
            fail_locked(w, step, e);
        if (w->outcome == 0)
            w->outcome = 1;
        w->finished = true;
        pthread_cond_broadcast(&w->cv);
        break;
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* ---- the engine side ----------------------------------------------------------------- */

/* ---- the engine compressing (a background save with no CPU of its own) -------------- */

/* Sharing the engine's CPU, a writer thread takes turns with the engine
 * at the scheduler's pace, and the engine waits for the CPU after
 * wake-ups (WRITER_STARVED_NS has the figures), even in the idle class
 * once a busy engine has starved it and it is raised. Compressing on the
 * engine thread instead, in pieces between event batches
 * (gb_snapshot_step), leaves the engine's own slice rule to share the
 * CPU: a request waits at most one piece.
 *
 * A piece is input ended with a zstd flush (without flushes zstd buffers
 * 128 KB and compresses it in one call: ~1 ms here), sized to the time
 * the step has left at PUMP_BYTES_PER_US, between PUMP_MIN_PIECE and
 * PUMP_MAX_PIECE; or four times that written to the file. Small pieces
 * cost ratio and speed (2 GB RESP sample, level 1, this VM: one call per
 * 1 MB 171 MB/s, ratio 0.306; 16 KB pieces ~100 us each, 0.310; 4 KB
 * ~28 us each, 126 MB/s, 0.323), so a busy loop's 10 us slices get the
 * smallest pieces and an idle loop's 0.1 ms ones about 15 KB. */
#define PUMP_BYTES_PER_US 150u
#define PUMP_MIN_PIECE (4u * 1024u)
#define PUMP_MAX_PIECE (128u * 1024u)

bool gb_snap_writer_engine_compresses(const gb_snap_writer *w) { return w->engine_compresses; }

/* Takes the next queued block into the engine's hand; false if none. */
static bool pump_take(gb_snap_writer *w)
{
    pthread_mutex_lock(&w->mu);
    block *b = w->head;
    if (b) {
        w->head = b->next;
        if (!w->head)
            w->tail = NULL;
        w->queued--;
        w->in_hand = true;
    }
    bool failed = w->outcome != 0;
    pthread_mutex_unlock(&w->mu);
    if (!b)
        return false;
    memset(&w->pump, 0, sizeof w->pump);
    w->pump.b = b;
    if (failed) {
        w->pump.sealed = true; /* nothing is written any more: straight to done */
        w->pump.written = SIZE_MAX;
    } else if (w->level != 0) {
        ZSTD_CCtx_reset(w->cctx, ZSTD_reset_session_only);
        ZSTD_CCtx_setPledgedSrcSize(w->cctx, b->len);
    }
    return true;
}

/* Compresses the next piece of the block in hand; seals it after the
 * last (stored raw where zstd does not shrink it). */
static void pump_compress(gb_snap_writer *w, size_t piece)
{
    block *b = w->pump.b;
    bool raw = w->level == 0;
    if (!raw) {
        size_t n = b->len - w->pump.fed < piece ? b->len - w->pump.fed : piece;
        bool last = w->pump.fed + n == b->len;
        ZSTD_inBuffer in = {b->data + w->pump.fed, n, 0};
        ZSTD_outBuffer out = {w->out + GB_SNAP_BLOCK_HEADER_SIZE, w->outcap - GB_SNAP_BLOCK_HEADER_SIZE,
                              w->pump.stored};
        size_t left = ZSTD_compressStream2(w->cctx, &out, &in, last ? ZSTD_e_end : ZSTD_e_flush);
        w->pump.fed += in.pos;
        w->pump.stored = out.pos;
        if (!ZSTD_isError(left) && in.pos == n && left == 0 && !last)
            return; /* more to come */
        /* the end, or zstd failed or ran out of room: raw then */
        raw = ZSTD_isError(left) || in.pos != n || left != 0 || w->pump.stored >= b->len;
    }
    w->pump.payload = raw ? b->data : w->out + GB_SNAP_BLOCK_HEADER_SIZE;
    size_t stored = raw ? b->len : w->pump.stored;
    w->pump.stored = stored;
    seal_block(w, w->pump.hdr, w->pump.payload, stored, b->len, raw ? GB_SNAP_CODEC_NONE : GB_SNAP_CODEC_ZSTD);
    w->pump.sealed = true;
}

/* Writes the next piece of the sealed block: header, then payload. */
static int pump_write(gb_snap_writer *w, size_t piece)
{
    size_t pos = w->pump.written;
    if (pos < GB_SNAP_BLOCK_HEADER_SIZE) {
        if (gb_write_all(w->fd, w->pump.hdr + pos, GB_SNAP_BLOCK_HEADER_SIZE - pos) != 0)
            return -1;
        w->pump.written = GB_SNAP_BLOCK_HEADER_SIZE;
        return 0;
    }
    size_t at = pos - GB_SNAP_BLOCK_HEADER_SIZE, left = w->pump.stored - at;
    size_t n = left < piece ? left : piece;
    if (gb_write_all(w->fd, w->pump.payload + at, n) != 0)
        return -1;
    w->pump.written += n;
    return 0;
}

bool gb_snap_writer_pump(gb_snap_writer *w, uint64_t budget_ns)
{
    if (!w->pump.b && !pump_take(w))
        return false;
    uint64_t want = budget_ns / 1000u * PUMP_BYTES_PER_US;
    size_t piece = want < PUMP_MIN_PIECE ? PUMP_MIN_PIECE : want > PUMP_MAX_PIECE ? PUMP_MAX_PIECE : (size_t)want;
    int rc = 0;
    if (!w->pump.sealed)
        pump_compress(w, piece);
    else if (w->pump.written < GB_SNAP_BLOCK_HEADER_SIZE + w->pump.stored)
        rc = pump_write(w, 4 * piece);
    bool done = rc != 0 || (w->pump.sealed && w->pump.written >= GB_SNAP_BLOCK_HEADER_SIZE + w->pump.stored);
    if (done) {
        int e = rc == 0 ? 0 : errno ? errno : EIO;
        pthread_mutex_lock(&w->mu);
        block_done_locked(w, w->pump.b, e);
        w->in_hand = false;
        pthread_mutex_unlock(&w->mu);
        w->pump.b = NULL;
    }
    return true;
}

/* Raises an idle-class writer that work has waited on for
 * WRITER_STARVED_NS. Called with mu held, from the engine's side. */
static void raise_if_starved_locked(gb_snap_writer *w)
{
    if (!w->idle_class || w->raised || !w->head)
        return; /* no blocks left: the thread syncs the file (I/O, not the CPU) */
    if (w->queued < GB_SNAP_WRITER_MAX_BACKLOG && !w->closing && !w->engine_waits)
        return; /* the engine does not wait on it */
    uint64_t since = w->progress_ns > w->depends_ns ? w->progress_ns : w->depends_ns;
    if (gb_clock_mono_ns() - since < WRITER_STARVED_NS)
        return;
    if (gb_thread_raise_from_idle(w->thread.thread) != 0) {
        w->idle_class = false; /* cannot happen after the thread's check; never retried */
        return;
    }
    w->raised = true;
    if (w->raises++ == 0)
        w->first_raise_ns = gb_clock_mono_ns() - w->opened_ns;
}

/* pthread_cond_wait for at most STARVATION_CHECK_NS (a realtime deadline:
 * the portable one; a clock step only changes one wait's length). */
static void wait_a_while_locked(gb_snap_writer *w)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t ns = (uint64_t)ts.tv_nsec + STARVATION_CHECK_NS;
    ts.tv_sec += (time_t)(ns / 1000000000u);
    ts.tv_nsec = (long)(ns % 1000000000u);
    pthread_cond_timedwait(&w->cv, &w->mu, &ts);
}

static block *block_new(gb_snap_writer *w)
{
    pthread_mutex_lock(&w->mu);
    block *b = w->spare;
    if (b) {
        w->spare = b->next;
        w->nspare--;
    }
    pthread_mutex_unlock(&w->mu);
    if (!b)
        b = malloc(sizeof *b + GB_SNAP_BLOCK_MAX);
    if (!b) {
        fprintf(stderr, "goblin-core: out of memory for a snapshot block; aborting\n");
        abort();
    }
    b->next = NULL;
    b->len = 0;
    return b;
}

gb_snap_writer *gb_snap_writer_open(const char *path, int level, int64_t created_ms, const gb_cpuset *cpus,
                                    bool engine_compresses, char *err, size_t errlen)
{
    gb_snap_writer *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    w->fd = -1;
    w->engine_compresses = engine_compresses;
    w->level = level;
    w->opened_ns = gb_clock_mono_ns();
    snprintf(w->path, sizeof w->path, "%s", path);
    snprintf(w->tmp, sizeof w->tmp, "%s.tmp-%ld", path, (long)getpid());
    w->fd = gb_plat_open(w->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (w->fd < 0) {
        snprintf(err, errlen, "cannot create '%s': %s", w->tmp, strerror(errno));
        free(w);
        return NULL;
    }
    uint8_t hdr[GB_SNAP_HEADER_SIZE] = {0};
    memcpy(hdr, GB_SNAP_MAGIC, 8);
    gb_le32_put(hdr + 8, GB_SNAP_VERSION);
    gb_le64_put(hdr + 16, (uint64_t)created_ms);
    gb_le64_put(hdr + 24, XXH3_64bits(hdr, 24));
    if (gb_write_all(w->fd, hdr, sizeof hdr) != 0) {
        snprintf(err, errlen, "cannot write '%s': %s", w->tmp, strerror(errno));
        gb_plat_close(w->fd);
        gb_plat_unlink(w->tmp);
        free(w);
        return NULL;
    }
    w->chain_state = XXH3_createState();
    XXH3_64bits_reset(w->chain_state);
    if (level != 0) {
        w->cctx = ZSTD_createCCtx();
        if (w->cctx) /* for the engine's streaming pieces; the thread passes its level per call */
            ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, level);
        w->outcap = GB_SNAP_BLOCK_HEADER_SIZE + ZSTD_compressBound(GB_SNAP_BLOCK_MAX);
        w->out = malloc(w->outcap);
    }
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    w->cur = block_new(w);
    if (!w->chain_state || (level != 0 && (!w->cctx || !w->out)) ||
        !gb_helper_thread_start(&w->thread, "gb-snapshot", cpus, writer_main, w)) {
        snprintf(err, errlen, "cannot start the snapshot writer thread");
        gb_snap_writer_free(w);
        return NULL;
    }
    w->thread_started = true;
    return w;
}

static void enqueue(gb_snap_writer *w, block *b)
{
    pthread_mutex_lock(&w->mu);
    if (w->tail)
        w->tail->next = b;
    else
        w->head = b;
    w->tail = b;
    if (++w->queued == GB_SNAP_WRITER_MAX_BACKLOG)
        w->depends_ns = gb_clock_mono_ns();
    if (w->queued > w->peak_queued)
        w->peak_queued = w->queued;
    queue_changed_locked(w);
    pthread_mutex_unlock(&w->mu);
}

void gb_snap_put(gb_snap_writer *w, const void *p, size_t n)
{
    const uint8_t *src = p;
    w->bytes += n;
    while (n) {
        size_t room = GB_SNAP_BLOCK_MAX - w->cur->len;
        size_t k = n < room ? n : room;
        memcpy(w->cur->data + w->cur->len, src, k);
        w->cur->len += k;
        src += k;
        n -= k;
        if (w->cur->len == GB_SNAP_BLOCK_MAX) {
            enqueue(w, w->cur);
            w->cur = block_new(w);
        }
    }
}

void gb_snap_put_u8(gb_snap_writer *w, uint8_t v)
{
    if (GB_SNAP_BLOCK_MAX - w->cur->len >= 1) {
        w->cur->data[w->cur->len++] = v;
        w->bytes++;
        if (w->cur->len == GB_SNAP_BLOCK_MAX) {
            enqueue(w, w->cur);
            w->cur = block_new(w);
        }
        return;
    }
    gb_snap_put(w, &v, 1);
}

void gb_snap_put_varint(gb_snap_writer *w, uint64_t v)
{
    uint8_t b[10];
    size_t n = 0;
    do {
        uint8_t byte = (uint8_t)(v & 0x7f);
        v >>= 7;
        b[n++] = (uint8_t)(byte | (v ? 0x80 : 0));
    } while (v);
    gb_snap_put(w, b, n);
}

void gb_snap_put_svarint(gb_snap_writer *w, int64_t v)
{
    gb_snap_put_varint(w, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

void gb_snap_put_str(gb_snap_writer *w, const void *p, size_t n)
{
    gb_snap_put_varint(w, n);
    gb_snap_put(w, p, n);
}

void gb_snap_put_u64(gb_snap_writer *w, uint64_t v)
{
    uint8_t b[8];
    gb_le64_put(b, v);
    gb_snap_put(w, b, 8);
}

void gb_snap_put_f64(gb_snap_writer *w, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    gb_snap_put_u64(w, u);
}

uint64_t gb_snap_writer_bytes(const gb_snap_writer *w) { return w->bytes; }

size_t gb_snap_writer_backlog(gb_snap_writer *w)
{
    pthread_mutex_lock(&w->mu);
    raise_if_starved_locked(w);
    size_t n = w->queued;
    pthread_mutex_unlock(&w->mu);
    return n;
}

bool gb_snap_writer_wait_backlog(gb_snap_writer *w, size_t below)
{
    pthread_mutex_lock(&w->mu);
    w->engine_waits = true;
    w->depends_ns = gb_clock_mono_ns();
    while (w->queued >= below && w->outcome == 0) {
        raise_if_starved_locked(w);
        wait_a_while_locked(w); /* the thread broadcasts after each block */
    }
    w->engine_waits = false;
    bool ok = w->outcome >= 0;
    pthread_mutex_unlock(&w->mu);
    return ok;
}

bool gb_snap_writer_went_idle(gb_snap_writer *w)
{
    pthread_mutex_lock(&w->mu);
    bool r = w->idle_class;
    pthread_mutex_unlock(&w->mu);
    return r;
}

unsigned gb_snap_writer_raises(gb_snap_writer *w, uint64_t *first_after_ns)
{
    pthread_mutex_lock(&w->mu);
    unsigned n = w->raises;
    if (first_after_ns)
        *first_after_ns = w->first_raise_ns;
    pthread_mutex_unlock(&w->mu);
    return n;
}

size_t gb_snap_writer_peak_backlog(gb_snap_writer *w)
{
    pthread_mutex_lock(&w->mu);
    size_t n = w->peak_queued;
    pthread_mutex_unlock(&w->mu);
    return n;
}

bool gb_snap_writer_failed(gb_snap_writer *w)
{
    pthread_mutex_lock(&w->mu);
    raise_if_starved_locked(w);
    bool f = w->outcome < 0;
    pthread_mutex_unlock(&w->mu);
    return f;
}

void gb_snap_writer_close(gb_snap_writer *w, uint64_t keys)
{
    if (w->cur->len)
        enqueue(w, w->cur);
    else
        free(w->cur);
    w->cur = NULL;
    pthread_mutex_lock(&w->mu);
    w->depends_ns = gb_clock_mono_ns();
    w->keys = keys;
    w->closing = true;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

static int outcome_locked(gb_snap_writer *w, char *err, size_t errlen)
{
    if (!w->finished)
        return 0;
    if (w->outcome < 0 && err)
        snprintf(err, errlen, "%s", w->err);
    return w->outcome;
}

int gb_snap_writer_poll(gb_snap_writer *w, char *err, size_t errlen)
{
    pthread_mutex_lock(&w->mu);
    raise_if_starved_locked(w);
    int rc = outcome_locked(w, err, errlen);
    pthread_mutex_unlock(&w->mu);
    return rc;
}

int gb_snap_writer_wait(gb_snap_writer *w, char *err, size_t errlen)
{
    pthread_mutex_lock(&w->mu);
    while (!w->finished) {
        raise_if_starved_locked(w);
        wait_a_while_locked(w);
    }
    int rc = outcome_locked(w, err, errlen);
    pthread_mutex_unlock(&w->mu);
    return rc;
}

void gb_snap_writer_free(gb_snap_writer *w)
{
    if (!w)
        return;
    if (w->thread_started) {
        pthread_mutex_lock(&w->mu);
        w->stop = true;
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->mu);
        gb_helper_thread_join(&w->thread);
    }
    if (w->fd >= 0) {
        gb_plat_close(w->fd);
        gb_plat_unlink(w->tmp); /* abandoned: the previous file stays */
    }
    for (block *b = w->head, *n; b; b = n) {
        n = b->next;
        free(b);
    }
    for (block *b = w->spare, *n; b; b = n) {
        n = b->next;
        free(b);
    }
    free(w->cur);
    free(w->pump.b);
    free(w->out);
    ZSTD_freeCCtx(w->cctx);
    if (w->chain_state)
        XXH3_freeState(w->chain_state);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    free(w);
}
