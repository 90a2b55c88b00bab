#define _POSIX_C_SOURCE 200809L
#include "engine/persist/snapread.h"

#include <errno.h>
#include <fcntl.h>
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
#include "engine/persist/fileio.h"
#include "engine/persist/snapfmt.h"

struct gb_snap_reader {
    int fd;
    char path[4096];
    uint64_t size;       /* of the file */
    uint64_t off;        /* file bytes consumed */
    uint64_t block_off;  /* where the current block began (messages) */
    int64_t created;
    uint8_t *raw;        /* the current block, decoded */
    size_t rawlen, rawpos;
    uint8_t *stored;     /* a block as stored */
    size_t storedcap;
    ZSTD_DCtx *dctx;
    uint64_t blocks, raw_total;
    XXH3_state_t *chain;
    bool at_trailer;     /* the next thing in the file is the trailer */
    uint8_t trailer_head[GB_SNAP_BLOCK_HEADER_SIZE]; /* the trailer's first bytes, read as a block header */
    bool failed;
    char err[640];
};

bool gb_snap_reader_fail(gb_snap_reader *r, const char *fmt, ...)
{
    if (r->failed)
        return false;
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(r->err, sizeof r->err, "'%.200s' at offset %llu: %.400s", r->path, (unsigned long long)r->block_off, what);
    r->failed = true;
    return false;
}

const char *gb_snap_reader_error(const gb_snap_reader *r) { return r->err; }
uint64_t gb_snap_reader_offset(const gb_snap_reader *r) { return r->off; }
uint64_t gb_snap_reader_size(const gb_snap_reader *r) { return r->size; }
int64_t gb_snap_reader_created(const gb_snap_reader *r) { return r->created; }

/* Reads exactly n file bytes, or fails saying the file ends early. */
static bool read_file(gb_snap_reader *r, void *dst, size_t n, const char *what)
{
    ssize_t k = gb_read_full(r->fd, dst, n);
    if (k < 0)
        return gb_snap_reader_fail(r, "read error: %s", strerror(errno));
    r->off += (uint64_t)k;
    if ((size_t)k != n)
        return gb_snap_reader_fail(r, "file ends inside %s (truncated: the save did not complete)", what);
    return true;
}

gb_snap_reader *gb_snap_reader_open(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
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
    r->raw = malloc(GB_SNAP_BLOCK_MAX);
    r->dctx = ZSTD_createDCtx();
    r->chain = XXH3_createState();
    if (!r->raw || !r->dctx || !r->chain) {
        snprintf(err, errlen, "out of memory opening '%s'", path);
        gb_snap_reader_free(r);
        return NULL;
    }
    XXH3_64bits_reset(r->chain);
    uint8_t hdr[GB_SNAP_HEADER_SIZE];
    if (!read_file(r, hdr, sizeof hdr, "the header")) {
        /* keep going to the message below */
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
    return r;
}

void gb_snap_reader_free(gb_snap_reader *r)
{
    if (!r)
        return;
    close(r->fd);
    free(r->raw);
    free(r->stored);
    ZSTD_freeDCtx(r->dctx);
    if (r->chain)
        XXH3_freeState(r->chain);
    free(r);
}

/* Loads the next block into raw; false at the trailer (at_trailer set) or
 * on a failed check. */
static bool next_block(gb_snap_reader *r)
{
    if (r->failed || r->at_trailer)
        return false;
    r->block_off = r->off;
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
        return gb_snap_reader_fail(r, "expected a block, found bytes that are not one (bad block magic)");
    uint32_t stored = gb_le32_get(h + 4), rawlen = gb_le32_get(h + 8);
    uint8_t codec = h[12];
    if (rawlen > GB_SNAP_BLOCK_MAX || rawlen == 0)
        return gb_snap_reader_fail(r, "block claims %u decoded bytes (1 to %u allowed)", rawlen, GB_SNAP_BLOCK_MAX);
    if (codec > GB_SNAP_CODEC_ZSTD || h[13] || h[14] || h[15])
        return gb_snap_reader_fail(r, "block has an unknown codec %u", codec);
    size_t limit = codec == GB_SNAP_CODEC_NONE ? rawlen : ZSTD_compressBound(rawlen);
    if (stored > limit || (codec == GB_SNAP_CODEC_NONE && stored != rawlen))
        return gb_snap_reader_fail(r, "block claims %u stored bytes for %u decoded", stored, rawlen);
    if (stored > r->storedcap) {
        uint8_t *p = realloc(r->stored, stored);
        if (!p)
            return gb_snap_reader_fail(r, "out of memory for a block");
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
        return gb_snap_reader_fail(r, "block checksum mismatch (the file is damaged)");
    XXH3_64bits_update(r->chain, h + 16, 8);
    if (codec == GB_SNAP_CODEC_ZSTD) {
        size_t n = ZSTD_decompressDCtx(r->dctx, r->raw, GB_SNAP_BLOCK_MAX, r->stored, stored);
        if (ZSTD_isError(n) || n != rawlen)
            return gb_snap_reader_fail(r, "block does not decompress to its %u bytes", rawlen);
    } else {
        memcpy(r->raw, r->stored, stored);
    }
    r->rawlen = rawlen;
    r->rawpos = 0;
    r->blocks++;
    r->raw_total += rawlen;
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
            /* Grows with the bytes actually present, never by the claim. */
            size_t nc = *cap ? *cap : 64;
            while (nc < got + k)
                nc *= 2;
            char *p = realloc(*buf, nc);
            if (!p)
                return gb_snap_reader_fail(r, "out of memory for a string of %llu bytes", (unsigned long long)n);
            *buf = p;
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
        return false;
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
