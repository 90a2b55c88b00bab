#define _POSIX_C_SOURCE 200809L
#include "engine/persist/rdb_save.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "engine/base/crc64.h"
#include "engine/base/mem.h"
#include "engine/base/rdbstr.h"
#include "engine/base/util.h"
#include "engine/core/keyspace/db.h"
#include "engine/core/request/script_state.h"
#include "engine/ds/zset.h"
#include "engine/persist/fileio.h"
#include "engine/persist/rdb_object.h"
#include "platform/file.h"

#include "goblin/version.h"

#define OP_FUNCTION2 0xF5
#define OP_AUX 0xFA
#define OP_RESIZEDB 0xFB
#define OP_EXPIRETIME_MS 0xFC
#define OP_SELECTDB 0xFE
#define OP_EOF 0xFF
#define FLUSH_AT ((size_t)1 << 20)

typedef struct writer {
    int fd; /* -1: the bytes stay in buf */
    gb_strbuf buf;
    uint64_t crc;
    int err; /* errno of the first failed write; 0 while none failed */
} writer;

/* Hands the buffered bytes to the file, the CRC running over them. */
static void flush(writer *w)
{
    if (!w->buf.len)
        return;
    w->crc = gb_crc64(w->crc, w->buf.p, w->buf.len);
    if (!w->err && gb_write_all(w->fd, w->buf.p, w->buf.len) != 0)
        w->err = errno ? errno : EIO;
    w->buf.len = 0;
}

static void maybe_flush(writer *w)
{
    if (w->fd >= 0 && w->buf.len >= FLUSH_AT)
        flush(w);
}

static void put_aux(writer *w, const char *name, const char *value)
{
    gb_strbuf_addc(&w->buf, (char)OP_AUX);
    gb_rdb_write_string(&w->buf, name, strlen(name));
    gb_rdb_write_string_value(&w->buf, value, strlen(value));
}

static void put_function(void *ctx, gb_slice code)
{
    writer *w = ctx;
    gb_strbuf_addc(&w->buf, (char)OP_FUNCTION2);
    gb_rdb_write_string(&w->buf, code.ptr, code.len);
    maybe_flush(w);
}

/* RDB 12 (Redis 7.4) when a hash has field deadlines, which nothing older
 * can hold; else Redis 7.0's 10, which every Redis since loads. */
static int file_version(gb_engine *eng)
{
    for (int d = 0; d < eng->ndbs; d++) {
        gb_htable_iter it;
        gb_htable_iter_init(&it, &eng->dbs[d].keys);
        int v = GB_RDB_VERSION_WRITTEN;
        for (gb_hnode *n; v == GB_RDB_VERSION_WRITTEN && (n = gb_htable_iter_next(&it)) != NULL;)
            v = gb_rdb_object_version((const gb_kv *)n);
        gb_htable_iter_done(&it);
        if (v != GB_RDB_VERSION_WRITTEN)
            return v;
    }
    return GB_RDB_VERSION_WRITTEN;
}

/* repl_stream_db >= 0: a full sync's RDB, which names the database its
 * stream is in (Redis writes repl-stream-db with repl-id and repl-offset,
 * which +FULLRESYNC carries here). */
static void put_header(writer *w, gb_engine *eng, int version, int repl_stream_db, bool functions)
{
    char num[GB_INT_BUF];
    gb_strbuf_printf(&w->buf, "REDIS%04d", version);
    put_aux(w, "goblin-ver", GOBLIN_VERSION);
    put_aux(w, "redis-bits", sizeof(void *) == 8 ? "64" : "32");
    gb_ll2str(num, eng->now_ms / 1000);
    put_aux(w, "ctime", num);
    gb_ll2str(num, (int64_t)gb_mem_used());
    put_aux(w, "used-mem", num);
    put_aux(w, "aof-base", "0");
    if (repl_stream_db >= 0) {
        gb_ll2str(num, repl_stream_db);
        put_aux(w, "repl-stream-db", num);
    }
    if (functions && eng->scripting)
        eng->scripting->foreach_library(eng->scripting->ctx, put_function, w);
}

static void put_key(writer *w, gb_kv *kv)
{
    if (gb_kv_volatile(kv)) {
        int64_t when = gb_kv_expire(kv);
        uint8_t le[9] = {OP_EXPIRETIME_MS};
        for (int i = 0; i < 8; i++)
            le[1 + i] = (uint8_t)((uint64_t)when >> (8 * i));
        gb_strbuf_add(&w->buf, le, sizeof le);
    }
    gb_strbuf_addc(&w->buf, (char)gb_rdb_object_type(kv));
    gb_slice key = gb_kv_key(kv);
    gb_rdb_write_string(&w->buf, key.ptr, key.len);
    gb_rdb_object_write_value(&w->buf, kv);
    maybe_flush(w);
}

static uint64_t put_db(writer *w, gb_db *db)
{
    if (!gb_db_size(db))
        return 0;
    gb_rdb_put_selectdb(&w->buf, db);
    uint64_t keys = 0;
    gb_htable_iter it;
    gb_htable_iter_init(&it, &db->keys);
    for (gb_hnode *node; (node = gb_htable_iter_next(&it)) != NULL;) {
        gb_kv *kv = (gb_kv *)node;
        if (gb_kv_expired_at(kv, db->eng->now_ms))
            continue; /* expired, not yet reaped: Redis would not load it either */
        put_key(w, kv);
        keys++;
    }
    gb_htable_iter_done(&it);
    return keys;
}

/* The dataset's RDB, header to checksum. */
static void put_dataset(writer *w, gb_engine *eng, uint64_t *keys)
{
    *keys = 0;
    put_header(w, eng, file_version(eng), -1, true);
    for (int d = 0; d < eng->ndbs; d++)
        *keys += put_db(w, &eng->dbs[d]);
    gb_strbuf_addc(&w->buf, (char)OP_EOF);
}

static void put_crc(gb_strbuf *b, uint64_t crc)
{
    uint8_t le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (uint8_t)(crc >> (8 * i));
    gb_strbuf_add(b, le, sizeof le);
}

int gb_rdb_save_file(gb_engine *eng, const char *path, uint64_t *keys, char *err, size_t errlen)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    writer w = {.fd = gb_plat_open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
    if (w.fd < 0) {
        snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
        return -1;
    }
    put_dataset(&w, eng, keys);
    flush(&w);
    put_crc(&w.buf, w.crc);
    flush(&w); /* the checksum itself (the running CRC is done with) */
    gb_strbuf_free(&w.buf);
    if (!w.err && gb_plat_file_sync(w.fd) != 0)
        w.err = errno;
    if (gb_plat_close(w.fd) != 0 && !w.err)
        w.err = errno;
    if (!w.err && gb_plat_rename(tmp, path) != 0)
        w.err = errno;
    if (w.err) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(w.err));
        gb_plat_unlink(tmp);
        return -1;
    }
    return 0;
}

/* ---- the pieces, for an RDB built by a background scan ---------------------------------- */

int gb_rdb_version_for(gb_engine *eng)
{
    /* Only a database that indexes hashes with field deadlines can hold
     * one: the exact (whole) look is taken only then. */
    for (int d = 0; d < eng->ndbs; d++)
        if (eng->dbs[d].hfe && gb_zset_card(eng->dbs[d].hfe) > 0)
            return file_version(eng);
    return GB_RDB_VERSION_WRITTEN;
}

void gb_rdb_put_header(gb_strbuf *b, gb_engine *eng, int version, int repl_stream_db)
{
    writer w = {.fd = -1, .buf = *b};
    put_header(&w, eng, version, repl_stream_db, true);
    *b = w.buf;
}

void gb_rdb_put_without_data(gb_strbuf *b, gb_engine *eng, bool functions)
{
    size_t start = b->len;
    writer w = {.fd = -1, .buf = *b};
    put_header(&w, eng, gb_rdb_version_for(eng), -1, functions);
    *b = w.buf;
    gb_rdb_put_eof(b);
    gb_rdb_put_crc(b, gb_crc64(0, b->p + start, b->len - start));
}

void gb_rdb_put_selectdb(gb_strbuf *b, gb_db *db)
{
    gb_strbuf_addc(b, (char)OP_SELECTDB);
    gb_rdb_write_len(b, (uint64_t)db->id);
    gb_strbuf_addc(b, (char)OP_RESIZEDB);
    gb_rdb_write_len(b, gb_db_size(db));
    gb_rdb_write_len(b, gb_db_volatile_count(db));
}

void gb_rdb_put_key(gb_strbuf *b, gb_kv *kv)
{
    writer w = {.fd = -1, .buf = *b};
    put_key(&w, kv);
    *b = w.buf;
}

void gb_rdb_put_eof(gb_strbuf *b) { gb_strbuf_addc(b, (char)OP_EOF); }

void gb_rdb_put_crc(gb_strbuf *b, uint64_t crc) { put_crc(b, crc); }
