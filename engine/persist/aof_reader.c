#define _POSIX_C_SOURCE 200809L
#include "engine/persist/aof_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/base/mem.h"
#include "engine/core/engine.h"
#include "engine/core/request/gate.h"
#include "engine/core/request/multi.h"
#include "engine/persist/fileio.h"
#include "platform/file.h"

/* Limits a well-formed log never reaches: a header line, arguments per
 * command, bytes per argument. */
#define HEADER_MAX 32
#define MAX_ARGS (1 << 20)
#define MAX_ARG_LEN ((uint64_t)1 << 32)

/* A "<prefix><digits>\r\n" line at buf: 1 with *v and *used, 0 if more
 * bytes are needed, -1 if it is not one. */
static int header(const char *buf, size_t len, char prefix, uint64_t max, uint64_t *v, size_t *used)
{
    if (len == 0)
        return 0;
    if (buf[0] != prefix)
        return -1;
    uint64_t x = 0;
    size_t i = 1;
    for (; i < len && i < HEADER_MAX; i++) {
        char ch = buf[i];
        if (ch == '\r')
            break;
        if (ch < '0' || ch > '9' || x > max / 10)
            return -1;
        x = x * 10 + (uint64_t)(ch - '0');
    }
    if (i >= HEADER_MAX)
        return -1;
    if (i + 1 >= len)
        return 0;
    if (i == 1 || buf[i + 1] != '\n' || x > max)
        return -1;
    *v = x;
    *used = i + 2;
    return 1;
}

int gb_aof_parse_command(const char *buf, size_t len, gb_slice **argv, int *cap, int *argc, size_t *used,
                         const char **why)
{
    uint64_t n;
    size_t pos;
    int rc = header(buf, len, '*', MAX_ARGS, &n, &pos);
    if (rc <= 0) {
        *why = "expected a command ('*<count>')";
        return rc;
    }
    if (n == 0) {
        *why = "a command with no arguments";
        return -1;
    }
    *argc = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t alen;
        size_t h;
        rc = header(buf + pos, len - pos, '$', MAX_ARG_LEN, &alen, &h);
        if (rc <= 0) {
            *why = "expected an argument ('$<length>')";
            return rc;
        }
        if (len - pos - h < alen + 2)
            return 0;
        const char *data = buf + pos + h;
        if (data[alen] != '\r' || data[alen + 1] != '\n') {
            *why = "an argument is not followed by CRLF";
            return -1;
        }
        if (*argc == *cap) {
            *cap = *cap ? *cap * 2 : 16;
            *argv = gb_realloc(*argv, (size_t)*cap * sizeof **argv);
        }
        (*argv)[(*argc)++] = gb_slice_make(data, (size_t)alen);
        pos += h + alen + 2;
    }
    *used = pos;
    return 1;
}

/* Redis 7's annotations (aof-timestamp-enabled writes "#TS:<unix seconds>"
 * lines between commands): lines beginning with '#', skipped as Redis's
 * loader skips them. Longer than any Redis writes is not an annotation. */
#define ANNOTATION_MAX 1024

/* An annotation line at buf (buf[0] == '#'): 1 with the bytes it takes
 * in used, 0 if more bytes are needed, -1 if it is too long. */
static int annotation(const char *buf, size_t len, size_t *used, const char **why)
{
    const char *nl = memchr(buf, '\n', GB_MIN(len, (size_t)ANNOTATION_MAX));
    if (nl) {
        *used = (size_t)(nl - buf) + 1;
        return 1;
    }
    if (len < ANNOTATION_MAX)
        return 0;
    *why = "an annotation ('#') line longer than 1024 bytes";
    return -1;
}

int gb_aof_walk(const char *path, bool (*fn)(void *ctx, int argc, gb_slice *argv, int64_t offset), void *ctx,
                int64_t *end, const char **why)
{
    int fd = gb_plat_open(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    char *buf = NULL;
    size_t cap = 0, len = 0, pos = 0;
    int64_t base = 0; /* file offset of buf[0] */
    bool eof = false;
    gb_slice *argv = NULL;
    int argcap = 0, rc = 0;
    *why = NULL;
    for (;;) {
        int argc;
        size_t used;
        /* Nothing buffered: read first (buf is still NULL before the first
         * read, and arithmetic on a null pointer is undefined behaviour). */
        int p = 0;
        if (pos < len && buf[pos] == '#') {
            p = annotation(buf + pos, len - pos, &used, why);
            if (p == 1) {
                pos += used;
                continue;
            }
        } else if (pos < len) {
            p = gb_aof_parse_command(buf + pos, len - pos, &argv, &argcap, &argc, &used, why);
        }
        if (p == 1) {
            if (!fn(ctx, argc, argv, base + (int64_t)pos)) {
                *end = base + (int64_t)pos;
                break;
            }
            pos += used;
            continue;
        }
        if (p < 0) {
            *end = base + (int64_t)pos;
            rc = -1;
            break;
        }
        if (eof) {
            *end = base + (int64_t)pos;
            rc = pos < len ? 1 : 0;
            break;
        }
        /* More bytes: keep the partial command at the front, read after it. */
        if (pos > 0) {
            memmove(buf, buf + pos, len - pos);
            base += (int64_t)pos;
            len -= pos;
            pos = 0;
        }
        if (cap - len < (1u << 20)) {
            cap = cap ? cap * 2 : (4u << 20);
            buf = gb_realloc(buf, cap);
        }
        size_t want = cap - len;
        ssize_t k = gb_read_full(fd, buf + len, want);
        if (k < 0) {
            *end = base;
            rc = -1; /* *why stays NULL: a read error, errno says which */
            break;
        }
        len += (size_t)k;
        eof = (size_t)k < want;
    }
    gb_free(argv);
    gb_free(buf);
    gb_plat_close(fd);
    return rc;
}

/* ---- replay ---------------------------------------------------------------------------------- */

static void r_status(void *ctx, const char *s, size_t n) { (void)ctx, (void)s, (void)n; }
static void r_integer(void *ctx, int64_t v) { (void)ctx, (void)v; }
static void r_dbl(void *ctx, double v) { (void)ctx, (void)v; }
static void r_nil(void *ctx) { (void)ctx; }
static void r_array(void *ctx, int64_t n) { (void)ctx, (void)n; }
static size_t r_deferred(void *ctx)
{
    (void)ctx;
    return 0;
}
static void r_set_deferred(void *ctx, size_t h, int64_t n) { (void)ctx, (void)h, (void)n; }
/* The log's commands ran before and answered then: replies go nowhere. */
static const gb_reply_ops discard_ops = {
    .status = r_status,
    .error = r_status,
    .integer = r_integer,
    .dbl = r_dbl,
    .bulk = r_status,
    .nil = r_nil,
    .array = r_array,
    .array_deferred = r_deferred,
    .set_deferred = r_set_deferred,
};

typedef struct replay_ctx {
    gb_engine *eng;
    gb_client *c;
    uint64_t commands;
    int64_t multi_at;     /* where the open MULTI began */
    char unknown[128];    /* a command the server does not know */
    int64_t unknown_at;
} replay_ctx;

static bool run_one(void *ctx, int argc, gb_slice *argv, int64_t offset)
{
    replay_ctx *rc = ctx;
    if (!gb_command_lookup(rc->eng, argv[0])) {
        snprintf(rc->unknown, sizeof rc->unknown, "%.*s", (int)GB_MIN(argv[0].len, 100), argv[0].ptr);
        rc->unknown_at = offset;
        return false;
    }
    bool was_multi = rc->c->flags & GB_CLIENT_MULTI;
    gb_gate_execute(rc->c, argc, argv);
    if (!was_multi && (rc->c->flags & GB_CLIENT_MULTI))
        rc->multi_at = offset;
    rc->commands++;
    return true;
}

static int cut(const char *path, int64_t at, char *err, size_t errlen)
{
    int fd = gb_plat_open(path, O_WRONLY | O_CLOEXEC, 0);
    if (fd < 0 || gb_plat_ftruncate(fd, (off_t)at) != 0 || gb_file_sync_fd(fd) != 0) {
        snprintf(err, errlen, "cannot truncate '%.300s' at offset %lld: %s", path, (long long)at, strerror(errno));
        if (fd >= 0)
            gb_plat_close(fd);
        return GB_EIO;
    }
    gb_plat_close(fd);
    return 0;
}

int gb_aof_replay(gb_engine *eng, const char *path, bool allow_truncate, gb_aof_read_result *res, char *err,
                  size_t errlen)
{
    replay_ctx rc = {.eng = eng, .multi_at = -1, .unknown_at = -1};
    rc.c = gb_client_new(eng, &discard_ops, NULL, NULL, NULL, GB_CLIENT_AUTHED | GB_CLIENT_OBEY);
    res->commands = 0;
    res->truncated_at = -1;
    int64_t end = 0;
    const char *why = NULL;
    int w = gb_aof_walk(path, run_one, &rc, &end, &why);
    bool open_multi = rc.c->flags & GB_CLIENT_MULTI;
    gb_client_free(rc.c); /* discards an unfinished MULTI */
    res->commands = rc.commands;
    if (rc.unknown_at >= 0) {
        snprintf(err, errlen, "Unknown command '%s' reading the append only file '%.300s' at offset %lld", rc.unknown,
                 path, (long long)rc.unknown_at);
        return GB_EPARSE;
    }
    if (w < 0 && !why) {
        snprintf(err, errlen, "cannot read the append only file '%.300s': %s", path, strerror(errno));
        return GB_EIO;
    }
    if (w < 0) {
        snprintf(err, errlen,
                 "Bad file format reading the append only file '%.300s' at offset %lld: %s. Make a backup of it, "
                 "then use goblin-check-aof --fix on it to cut the log there (what follows is lost)",
                 path, (long long)end, why);
        return GB_EPARSE;
    }
    /* A torn last command, or a transaction whose EXEC never got written:
     * both are a crash in the middle of writing. */
    if (w == 1 || open_multi) {
        int64_t at = open_multi ? rc.multi_at : end;
        if (!allow_truncate) {
            snprintf(err, errlen,
                     "Unexpected end of file reading the append only file '%.300s' at offset %lld. Make a backup "
                     "of it, then use goblin-check-aof --fix on it, or set aof-load-truncated yes and restart",
                     path, (long long)at);
            return GB_EPARSE;
        }
        int c = cut(path, at, err, errlen);
        if (c != 0)
            return c;
        res->truncated_at = at;
    }
    return 0;
}
