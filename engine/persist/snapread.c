#define _POSIX_C_SOURCE 200809L
#include "engine/persist/snapread.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>
#include <zstd.h>

#include "engine/base/common.h"
#include "engine/base/helper_thread.h"
#include "engine/base/mem.h"
#include "engine/persist/fileio.h"
#include "engine/persist/snapfmt.h"
#include "platform/file.h"

/* Read-ahead (gb_snap_reader_read_ahead): blocks decoded ahead of the
 * parser, in order, by a helper thread. The parser holds one slot while it
 * reads its records; the thread fills the others. */
#define READ_AHEAD_SLOTS 4

typedef struct decoded_block {
    uint8_t *raw;       /* GB_SNAP_BLOCK_MAX bytes */
    size_t rawlen;
    uint64_t block_off; /* where it began in the file (messages) */
    uint64_t end_off;   /* the file offset after it (progress) */
    bool end;           /* no block: the trailer is next, or fetching failed (fetch_failed) */
} decoded_block;

struct gb_snap_reader {
    char path[4096];
    uint64_t size;       /* of the file */
    int64_t created;

    /* The parser's side: the block whose records are being read. */
    const uint8_t *raw;
    size_t rawlen, rawpos;
    uint64_t block_off;  /* where the current block began (messages) */
    uint64_t parsed_off; /* the file offset after the current block (progress) */
    bool at_end;         /* the blocks are over (the trailer is next, or failed is set) */
    bool failed;
    char err[640];

    /* The file's side (fetch_block): with read-ahead running, touched only
     * by its thread until that thread has been joined. */
    int fd;
    uint64_t off;        /* file bytes consumed */
    uint64_t fetch_off;  /* where the block being fetched began */
    uint8_t *stored;     /* a block as stored */
    size_t storedcap;
    ZSTD_DCtx *dctx;
    uint64_t blocks, raw_total;
    XXH3_state_t *chain;
    bool at_trailer;     /* the next thing in the file is the trailer */
    uint8_t trailer_head[GB_SNAP_BLOCK_HEADER_SIZE]; /* the trailer's first bytes, read as a block header */
    bool fetch_failed;
    char fetch_err[640];

    /* Decoded blocks: slot 0 only without read-ahead; a ring with it. */
    decoded_block slots[READ_AHEAD_SLOTS];
    struct {
        bool running, stop;
        bool holding;    /* the parser holds slots[next_read] */
        unsigned next_read, next_fill, filled; /* filled counts the held slot */
        pthread_mutex_t mu;
        pthread_cond_t cv;
        gb_helper_thread thread;
    } ahead;
};

static void format_failure(char *out, size_t outlen, const char *path, uint64_t off, const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));
static void format_failure(char *out, size_t outlen, const char *path, uint64_t off, const char *fmt, va_list ap)
{
    char what[512];
    vsnprintf(what, sizeof what, fmt, ap);
    snprintf(out, outlen, "'%.200s' at offset %llu: %.400s", path, (unsigned long long)off, what);
}

bool gb_snap_reader_fail(gb_snap_reader *r, const char *fmt, ...)
{
    if (r->failed)
        return false;
    va_list ap;
    va_start(ap, fmt);
    format_failure(r->err, sizeof r->err, r->path, r->block_off, fmt, ap);
    va_end(ap);
    r->failed = true;
    return false;
}

/* A failed check on the file's side: kept apart from the parser's until
 * the parser reaches that point of the file (take_fetch_failure). */
static bool fetch_fail(gb_snap_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fetch_fail(gb_snap_reader *r, const char *fmt, ...)
{
    if (r->fetch_failed)
        return false;
    va_list ap;
    va_start(ap, fmt);
    format_failure(r->fetch_err, sizeof r->fetch_err, r->path, r->fetch_off, fmt, ap);
    va_end(ap);
    r->fetch_failed = true;
    return false;
}

static bool take_fetch_failure(gb_snap_reader *r)
{
    if (r->fetch_failed && !r->failed) {
        memcpy(r->err, r->fetch_err, sizeof r->err);
        r->failed = true;
    }
    return !r->failed;
}

const char *gb_snap_reader_error(const gb_snap_reader *r) { return r->err; }
uint64_t gb_snap_reader_offset(const gb_snap_reader *r) { return r->parsed_off; }
uint64_t gb_snap_reader_size(const gb_snap_reader *r) { return r->size; }
int64_t gb_snap_reader_created(const gb_snap_reader *r) { return r->created; }

/* Reads exactly n file bytes, or fails saying the file ends early. */
static bool read_file(gb_snap_reader *r, void *dst, size_t n, const char *what)
{
    ssize_t k = gb_read_full(r->fd, dst, n);
    if (k < 0)
        return fetch_fail(r, "read error: %s", strerror(errno));
    r->off += (uint64_t)k;
    if ((size_t)k != n)
        return fetch_fail(r, "file ends inside %s (truncated: the save did not complete)", what);
    return true;
}

gb_snap_reader *gb_snap_reader_open(const char *path, char *err, size_t errlen)
{
    int fd = gb_plat_open(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "cannot open '%s': %s", path, strerror(e));
        errno = e;
        return NULL;
    }
    gb_snap_reader *r = calloc(1, sizeof *r);
    r->fd = fd;
    snprintf(r->path, sizeof r->path, "%s", path);
    struct stat st;
    if (fstat(fd, &st) == 0)
        r->size = (uint64_t)st.st_size;
    r->slots[0].raw = malloc(GB_SNAP_BLOCK_MAX);
    r->dctx = ZSTD_createDCtx();
    r->chain = XXH3_createState();
    if (!r->slots[0].raw || !r->dctx || !r->chain) {
        snprintf(err, errlen, "out of memory opening '%s'", path);
        gb_snap_reader_free(r);
        return NULL;
    }
    XXH3_64bits_reset(r->chain);
    uint8_t hdr[GB_SNAP_HEADER_SIZE];
    if (!read_file(r, hdr, sizeof hdr, "the header")) {
        take_fetch_failure(r);
    } else if (memcmp(hdr, GB_SNAP_MAGIC, 8) != 0) {
        gb_snap_reader_fail(r, "not a Goblin Core snapshot (bad magic)");
    } else if (gb_le64_get(hdr + 24) != XXH3_64bits(hdr, 24)) {
        gb_snap_reader_fail(r, "header checksum mismatch");
    } else if (gb_le32_get(hdr + 8) < GB_SNAP_VERSION_MIN || gb_le32_get(hdr + 8) > GB_SNAP_VERSION) {
        gb_snap_reader_fail(r, "format version %u is not supported (this build reads versions %u to %u)",
                            gb_le32_get(hdr + 8), GB_SNAP_VERSION_MIN, GB_SNAP_VERSION);
    } else if (gb_le32_get(hdr + 12) != 0) {
        gb_snap_reader_fail(r, "unknown header flags 0x%x", gb_le32_get(hdr + 12));
    }
    if (r->failed) {
        snprintf(err, errlen, "%s", r->err);
        gb_snap_reader_free(r);
        return NULL;
    }
    r->created = (int64_t)gb_le64_get(hdr + 16);
    r->parsed_off = r->off;
    return r;
}

static void stop_read_ahead(gb_snap_reader *r)
{
    if (!r->ahead.running)
        return;
    pthread_mutex_lock(&r->ahead.mu);
    r->ahead.stop = true;
    pthread_cond_broadcast(&r->ahead.cv);
    pthread_mutex_unlock(&r->ahead.mu);
    gb_helper_thread_join(&r->ahead.thread);
    pthread_mutex_destroy(&r->ahead.mu);
    pthread_cond_destroy(&r->ahead.cv);
    r->ahead.running = false;
}

void gb_snap_reader_free(gb_snap_reader *r)
{
    if (!r)
        return;
    stop_read_ahead(r);
    gb_plat_close(r->fd);
    for (int i = 0; i < READ_AHEAD_SLOTS; i++)
        free(r->slots[i].raw);
    free(r->stored);
    ZSTD_freeDCtx(r->dctx);
    if (r->chain)
        XXH3_freeState(r->chain);
    free(r);
}

/* The file's side: reads the next block, checks it and decodes it into
 * out. false at the trailer (at_trailer set) or on a failed check
 * (fetch_failed set). */
static bool fetch_block(gb_snap_reader *r, decoded_block *out)
{
    if (r->fetch_failed || r->at_trailer)
        return false;
    r->fetch_off = r->off;
    uint8_t h[GB_SNAP_BLOCK_HEADER_SIZE];
    if (!read_file(r, h, sizeof h, "a block header"))
        return false;
    uint32_t magic = gb_le32_get(h);
    if (magic == GB_SNAP_TRAILER_MAGIC) {
        memcpy(r->trailer_head, h, sizeof h);
        r->at_trailer = true;
        return false;
    }
    if (magic != GB_SNAP_BLOCK_MAGIC)
        return fetch_fail(r, "expected a block, found bytes that are not one (bad block magic)");
    uint32_t stored = gb_le32_get(h + 4), rawlen = gb_le32_get(h + 8);
    uint8_t codec = h[12];
    if (rawlen > GB_SNAP_BLOCK_MAX || rawlen == 0)
        return fetch_fail(r, "block claims %u decoded bytes (1 to %u allowed)", rawlen, GB_SNAP_BLOCK_MAX);
    if (codec > GB_SNAP_CODEC_ZSTD || h[13] || h[14] || h[15])
        return fetch_fail(r, "block has an unknown codec %u", codec);
    size_t limit = codec == GB_SNAP_CODEC_NONE ? rawlen : ZSTD_compressBound(rawlen);
    if (stored > limit || (codec == GB_SNAP_CODEC_NONE && stored != rawlen))
        return fetch_fail(r, "block claims %u stored bytes for %u decoded", stored, rawlen);
    if (stored > r->storedcap) {
        uint8_t *p = realloc(r->stored, stored);
        if (!p)
            return fetch_fail(r, "out of memory for a block");
        r->stored = p;
        r->storedcap = stored;
    }
    if (!read_file(r, r->stored, stored, "a block"))
        return false;
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    XXH3_64bits_update(&st, h, 16);
    XXH3_64bits_update(&st, r->stored, stored);
    uint64_t sum = XXH3_64bits_digest(&st);
    if (sum != gb_le64_get(h + 16))
        return fetch_fail(r, "block checksum mismatch (the file is damaged)");
    XXH3_64bits_update(r->chain, h + 16, 8);
    if (codec == GB_SNAP_CODEC_ZSTD) {
        size_t n = ZSTD_decompressDCtx(r->dctx, out->raw, GB_SNAP_BLOCK_MAX, r->stored, stored);
        if (ZSTD_isError(n) || n != rawlen)
            return fetch_fail(r, "block does not decompress to its %u bytes", rawlen);
    } else {
        memcpy(out->raw, r->stored, stored);
    }
    out->rawlen = rawlen;
    r->blocks++;
    r->raw_total += rawlen;
    return true;
}

/* Fetches into out and records where it was: what the parser needs of a
 * block, whichever thread fetched it. */
static void fetch_into(gb_snap_reader *r, decoded_block *out)
{
    out->end = !fetch_block(r, out);
    out->block_off = r->fetch_off;
    out->end_off = r->off;
}

/* ---- read-ahead ----------------------------------------------------------------------------- */

static void *read_ahead_main(void *arg)
{
    gb_snap_reader *r = arg;
    pthread_mutex_lock(&r->ahead.mu);
    for (;;) {
        while (r->ahead.filled == READ_AHEAD_SLOTS && !r->ahead.stop)
            pthread_cond_wait(&r->ahead.cv, &r->ahead.mu);
        if (r->ahead.stop)
            break;
        decoded_block *b = &r->slots[r->ahead.next_fill];
        pthread_mutex_unlock(&r->ahead.mu);
        fetch_into(r, b); /* the slot is the thread's until counted in filled */
        pthread_mutex_lock(&r->ahead.mu);
        r->ahead.next_fill = (r->ahead.next_fill + 1) % READ_AHEAD_SLOTS;
        r->ahead.filled++;
        pthread_cond_broadcast(&r->ahead.cv);
        if (b->end)
            break; /* nothing after the trailer or a failure: the parser takes over the file */
    }
    pthread_mutex_unlock(&r->ahead.mu);
    return NULL;
}

bool gb_snap_reader_read_ahead(gb_snap_reader *r, const gb_cpuset *cpus)
{
    if (r->ahead.running || r->failed || r->at_end)
        return false;
    for (int i = 1; i < READ_AHEAD_SLOTS; i++) {
        if (!r->slots[i].raw && !(r->slots[i].raw = malloc(GB_SNAP_BLOCK_MAX)))
            return false;
    }
    pthread_mutex_init(&r->ahead.mu, NULL);
    pthread_cond_init(&r->ahead.cv, NULL);
    /* The parser may be inside slot 0 (a block read before): the ring
     * starts after it, and that block is handed back first. */
    r->ahead.holding = r->raw != NULL;
    r->ahead.next_read = 0;
    r->ahead.next_fill = r->ahead.holding ? 1 : 0;
    r->ahead.filled = r->ahead.holding ? 1 : 0;
    r->ahead.stop = false;
    r->ahead.running = true;
    if (!gb_helper_thread_start(&r->ahead.thread, "gb-snap-read", cpus, read_ahead_main, r)) {
        pthread_mutex_destroy(&r->ahead.mu);
        pthread_cond_destroy(&r->ahead.cv);
        r->ahead.running = false;
        return false;
    }
    return true;
}

/* The next decoded block, in file order: from the read-ahead ring, or
 * fetched here without it. */
static const decoded_block *take_block(gb_snap_reader *r)
{
    if (!r->ahead.running) {
        fetch_into(r, &r->slots[0]);
        return &r->slots[0];
    }
    pthread_mutex_lock(&r->ahead.mu);
    if (r->ahead.holding) { /* the block parsed until now goes back to the thread */
        r->ahead.next_read = (r->ahead.next_read + 1) % READ_AHEAD_SLOTS;
        r->ahead.filled--;
        r->ahead.holding = false;
        pthread_cond_broadcast(&r->ahead.cv);
    }
    while (r->ahead.filled == 0)
        pthread_cond_wait(&r->ahead.cv, &r->ahead.mu);
    r->ahead.holding = true;
    const decoded_block *b = &r->slots[r->ahead.next_read];
    pthread_mutex_unlock(&r->ahead.mu);
    if (b->end)
        stop_read_ahead(r); /* the thread has ended: the file's side is the parser's again */
    return b;
}

/* Makes the next block the current one; false at the end of the blocks
 * (at_end set; failed too when a check failed). */
static bool next_block(gb_snap_reader *r)
{
    if (r->failed || r->at_end)
        return false;
    const decoded_block *b = take_block(r);
    r->block_off = b->block_off;
    r->parsed_off = b->end_off;
    if (b->end) {
        r->at_end = true;
        r->raw = NULL;
        r->rawlen = r->rawpos = 0;
        take_fetch_failure(r);
        return false;
    }
    r->raw = b->raw;
    r->rawlen = b->rawlen;
    r->rawpos = 0;
    return true;
}

/* Makes at least one decoded byte available. */
static bool fill(gb_snap_reader *r)
{
    if (r->rawpos < r->rawlen)
        return true;
    if (next_block(r))
        return true;
    if (!r->failed)
        gb_snap_reader_fail(r, "the records end before their EOF record");
    return false;
}

bool gb_snap_get(gb_snap_reader *r, void *dst, size_t n)
{
    uint8_t *d = dst;
    while (n) {
        if (!fill(r))
            return false;
        size_t k = r->rawlen - r->rawpos;
        if (k > n)
            k = n;
        memcpy(d, r->raw + r->rawpos, k);
        r->rawpos += k;
        d += k;
        n -= k;
    }
    return true;
}

bool gb_snap_get_u8(gb_snap_reader *r, uint8_t *v)
{
    if (GB_LIKELY(r->rawpos < r->rawlen)) {
        *v = r->raw[r->rawpos++];
        return true;
    }
    return gb_snap_get(r, v, 1);
}

bool gb_snap_get_varint(gb_snap_reader *r, uint64_t *v)
{
    uint64_t x = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        uint8_t b;
        if (!gb_snap_get_u8(r, &b))
            return false;
        if (shift == 63 && b > 1)
            return gb_snap_reader_fail(r, "a varint overflows 64 bits");
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return true;
        }
    }
    return gb_snap_reader_fail(r, "a varint longer than 10 bytes");
}

bool gb_snap_get_svarint(gb_snap_reader *r, int64_t *v)
{
    uint64_t u;
    if (!gb_snap_get_varint(r, &u))
        return false;
    *v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
    return true;
}

bool gb_snap_get_u64(gb_snap_reader *r, uint64_t *v)
{
    uint8_t b[8];
    if (!gb_snap_get(r, b, 8))
        return false;
    *v = gb_le64_get(b);
    return true;
}

bool gb_snap_get_f64(gb_snap_reader *r, double *v)
{
    uint64_t u;
    if (!gb_snap_get_u64(r, &u))
        return false;
    memcpy(v, &u, 8);
    return true;
}

bool gb_snap_get_str(gb_snap_reader *r, char **buf, size_t *cap, size_t *len, uint64_t max)
{
    uint64_t n;
    if (!gb_snap_get_varint(r, &n))
        return false;
    if (n > max)
        return gb_snap_reader_fail(r, "a string of %llu bytes (at most %llu allowed)", (unsigned long long)n,
                                   (unsigned long long)max);
    size_t got = 0;
    while (got < n) {
        if (!fill(r))
            return false;
        size_t k = r->rawlen - r->rawpos;
        if (k > n - got)
            k = (size_t)(n - got);
        if (got + k > *cap) {
            /* Grows with the bytes actually present, never by the claim.
             * Fail-stop like the rest of a load (Redis's rdbLoad aborts in
             * zmalloc too): a load half done has already replaced the data
             * set, so there is nothing intact to fall back to. */
            size_t nc = *cap ? *cap : 64;
            while (nc < got + k)
                nc *= 2;
            *buf = gb_realloc(*buf, nc);
            *cap = nc;
        }
        memcpy(*buf + got, r->raw + r->rawpos, k);
        r->rawpos += k;
        got += k;
    }
    *len = (size_t)n;
    return true;
}

/* Reads the trailer (its first bytes were taken for a block header) and
 * checks it against the blocks read. */
static bool read_trailer(gb_snap_reader *r, uint8_t t[GB_SNAP_TRAILER_SIZE])
{
    memcpy(t, r->trailer_head, GB_SNAP_BLOCK_HEADER_SIZE);
    if (!read_file(r, t + GB_SNAP_BLOCK_HEADER_SIZE, GB_SNAP_TRAILER_SIZE - GB_SNAP_BLOCK_HEADER_SIZE, "the trailer"))
        return take_fetch_failure(r);
    if (gb_le64_get(t + 40) != XXH3_64bits(t, 40))
        return gb_snap_reader_fail(r, "trailer checksum mismatch");
    if (gb_le64_get(t + 8) != r->blocks || gb_le64_get(t + 16) != r->raw_total)
        return gb_snap_reader_fail(r, "trailer counts %llu blocks / %llu bytes, the file has %llu / %llu",
                                   (unsigned long long)gb_le64_get(t + 8), (unsigned long long)gb_le64_get(t + 16),
                                   (unsigned long long)r->blocks, (unsigned long long)r->raw_total);
    if (gb_le64_get(t + 32) != XXH3_64bits_digest(r->chain))
        return gb_snap_reader_fail(r, "the blocks are not the ones written (chain checksum mismatch)");
    uint8_t extra;
    if (gb_read_full(r->fd, &extra, 1) != 0)
        return gb_snap_reader_fail(r, "bytes after the trailer");
    return true;
}

bool gb_snap_reader_finish(gb_snap_reader *r, uint64_t keys)
{
    if (r->failed)
        return false;
    if (r->rawpos < r->rawlen)
        return gb_snap_reader_fail(r, "bytes after the EOF record");
    if (next_block(r))
        return gb_snap_reader_fail(r, "a block after the EOF record");
    if (r->failed)
        return false;
    uint8_t t[GB_SNAP_TRAILER_SIZE];
    if (!read_trailer(r, t))
        return false;
    if (gb_le64_get(t + 24) != keys)
        return gb_snap_reader_fail(r, "trailer counts %llu keys, the records hold %llu",
                                   (unsigned long long)gb_le64_get(t + 24), (unsigned long long)keys);
    return true;
}

bool gb_snap_reader_verify(gb_snap_reader *r)
{
    while (next_block(r))
        ;
    if (r->failed)
        return false;
    uint8_t t[GB_SNAP_TRAILER_SIZE];
    return read_trailer(r, t);
}
