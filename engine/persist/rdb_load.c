#include "engine/core/replication/replica.h"
#include "engine/persist/rdb_load.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "engine/base/crc64.h"
#include "engine/base/mem.h"
#include "engine/base/rdbstr.h"
#include "engine/base/util.h"
#include "engine/core/keyspace/db.h"
#include "engine/core/memory/evict.h"
#include "engine/core/request/script_state.h"
#include "engine/persist/load_pipe.h"
#include "engine/persist/rdb_object.h"
#include "engine/types/t_list.h"
#include "engine/types/t_stream.h"
#include "engine/types/tobj.h"
#include "platform/file.h"

#define OP_FUNCTION2 0xF5
#define OP_FUNCTION_RC 0xF6
#define OP_MODULE_AUX 0xF7
#define OP_IDLE 0xF8
#define OP_FREQ 0xF9
#define OP_AUX 0xFA
#define OP_RESIZEDB 0xFB
#define OP_EXPIRETIME_MS 0xFC
#define OP_EXPIRETIME 0xFD
#define OP_SELECTDB 0xFE
#define OP_EOF 0xFF

#define MAGIC_LEN 9 /* "REDIS" + 4 version digits */
#define MAX_STRING ((size_t)1 << 32)
#define PROGRESS_EVERY ((uint64_t)64 << 20)

bool gb_rdb_file_is_redis(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    char magic[5];
    bool yes = fread(magic, 1, sizeof magic, f) == sizeof magic && memcmp(magic, "REDIS", 5) == 0;
    fclose(f);
    return yes;
}

typedef struct loader {
    gb_engine *eng;
    gb_rdb_reader r;
    gb_db *db;
    gb_rdb_build_config cfg;
    gb_rdb_load_stats *st;
    char *err;
    size_t errlen;
    /* Keys built and not yet in their tables: they go in some keys later,
     * so the cache misses of their buckets and chains overlap with that
     * work (engine/persist/load_pipe.h; Goblin's own snapshot loader,
     * engine/persist/serialize.c, does the same). */
    gb_load_pipe pipe;
} loader;

static bool fail(loader *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(loader *L, const char *fmt, ...)
{
    char what[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(L->err, L->errlen, "Redis RDB file: %s (at byte %zu)", what, L->r.pos);
    return false;
}

static bool read_len(loader *L, uint64_t *v)
{
    bool enc;
    if (gb_rdb_read_len(&L->r, v, &enc) != 0 || enc)
        return fail(L, "a truncated or malformed length");
    return true;
}

static bool read_le(loader *L, int width, uint64_t *v)
{
    if (L->r.len - L->r.pos < (size_t)width)
        return fail(L, "a truncated expiry");
    *v = 0;
    for (int i = width - 1; i >= 0; i--)
        *v = *v << 8 | L->r.p[L->r.pos + (size_t)i];
    L->r.pos += (size_t)width;
    return true;
}

/* An aux field: the replication history (repl-stream-db, repl-id,
 * repl-offset) is kept (gb_rdb_load_stats), the rest are read and let go. */
static bool load_aux(loader *L)
{
    char *name, *value;
    size_t nlen, vlen;
    if (gb_rdb_read_string(&L->r, MAX_STRING, &name, &nlen) != 0)
        return fail(L, "a truncated or malformed string");
    if (gb_rdb_read_string(&L->r, MAX_STRING, &value, &vlen) != 0) {
        gb_free(name);
        return fail(L, "a truncated or malformed string");
    }
    int64_t db;
    if (gb_slice_eq(gb_slice_make(name, nlen), gb_slice_cstr("repl-stream-db")) &&
        gb_slice2ll(gb_slice_make(value, vlen), &db) && db >= 0 && db < L->eng->ndbs)
        L->st->repl_stream_db = (int)db;
    gb_repl_history_aux(&L->st->history, gb_slice_make(name, nlen), gb_slice_make(value, vlen));
    gb_free(name);
    gb_free(value);
    return true;
}

static bool load_function(loader *L)
{
    char *code;
    size_t n;
    if (gb_rdb_read_string(&L->r, MAX_STRING, &code, &n) != 0)
        return fail(L, "a truncated function library");
    const gb_scripting_hooks *sh = L->eng->scripting;
    char why[512] = "this engine has no scripting";
    bool ok = sh && sh->load_library(sh->ctx, gb_slice_make(code, n), why, sizeof why) == 0;
    gb_free(code);
    if (!ok)
        return fail(L, "a function library that does not load: %s", why);
    L->st->functions++;
    return true;
}

/* The type a key of rdbtype would have, for messages. */
static const char *rdb_type_name(int t)
{
    static const char *const names[] = {
        [GB_RDB_TYPE_STRING] = "string",           [GB_RDB_TYPE_LIST] = "list",
        [GB_RDB_TYPE_SET] = "set",                 [GB_RDB_TYPE_ZSET] = "zset",
        [GB_RDB_TYPE_HASH] = "hash",               [GB_RDB_TYPE_ZSET_2] = "zset",
        [GB_RDB_TYPE_MODULE] = "module",           [GB_RDB_TYPE_MODULE_2] = "module",
        [GB_RDB_TYPE_HASH_ZIPMAP] = "hash",        [GB_RDB_TYPE_LIST_ZIPLIST] = "list",
        [GB_RDB_TYPE_SET_INTSET] = "set",          [GB_RDB_TYPE_ZSET_ZIPLIST] = "zset",
        [GB_RDB_TYPE_HASH_ZIPLIST] = "hash",       [GB_RDB_TYPE_LIST_QUICKLIST] = "list",
        [GB_RDB_TYPE_STREAM_LISTPACKS] = "stream", [GB_RDB_TYPE_HASH_LISTPACK] = "hash",
        [GB_RDB_TYPE_ZSET_LISTPACK] = "zset",      [GB_RDB_TYPE_LIST_QUICKLIST_2] = "list",
        [GB_RDB_TYPE_STREAM_LISTPACKS_2] = "stream", [GB_RDB_TYPE_SET_LISTPACK] = "set",
        [GB_RDB_TYPE_STREAM_LISTPACKS_3] = "stream", [GB_RDB_TYPE_HASH_METADATA_PRE_GA] = "hash",
        [GB_RDB_TYPE_HASH_LISTPACK_EX_PRE_GA] = "hash", [GB_RDB_TYPE_HASH_METADATA] = "hash",
        [GB_RDB_TYPE_HASH_LISTPACK_EX] = "hash",
    };
    return t >= 0 && t < (int)GB_ARRAY_LEN(names) && names[t] ? names[t] : "unknown type";
}

/* A key in a message: its first 64 bytes at most. */
#define KEY_SHOWN(len) ((int)((len) < 64 ? (len) : 64))

/* The load fails: dup's key was in its table already. */
static bool fail_twice(loader *L, gb_loaded_key dup)
{
    gb_slice key = gb_kv_key(dup.kv);
    fail(L, "key '%.*s' appears twice in database %d", KEY_SHOWN(key.len), key.ptr, dup.db->id);
    gb_kv_free(dup.kv);
    return false;
}

/* Adds the queued keys to their tables; false (the load fails) when one
 * is there already. */
static bool insert_queued(loader *L)
{
    gb_loaded_key dup;
    return gb_load_pipe_flush(&L->pipe, &dup) || fail_twice(L, dup);
}

/* One key of rdbtype, with the expiry and idle time read before it. */
static bool load_key(loader *L, int rdbtype, int64_t expire_ms, int64_t idle_s, int64_t freq)
{
    gb_rdb_str name;
    if (gb_rdb_read_str(&L->r, MAX_STRING, &name) != 0)
        return fail(L, "a truncated key name");
    const char *key = name.ptr;
    size_t klen = name.len;
    uint64_t hash = gb_db_prefetch_key(L->db, gb_slice_make(key, klen));
    gb_rdb_value v;
    const char *why;
    if (!gb_rdb_object_read(&L->r, rdbtype, &L->cfg, &v, &why)) {
        fail(L, "key '%.*s' (%s, RDB type %d) holds %s", KEY_SHOWN(klen), key, rdb_type_name(rdbtype), rdbtype, why);
        gb_rdb_str_free(&name);
        return false;
    }
    gb_slice k = gb_slice_make(key, klen);
    bool ok = true;
    if (expire_ms >= 0 && expire_ms < L->eng->now_ms && !gb_engine_is_replica(L->eng)) {
        /* already expired: not loaded (Redis's primary skips them too; a
         * replica keeps them for its primary's DEL) */
        gb_rdb_value_free(&v);
        L->st->expired++;
    } else {
        gb_kv *kv = v.type == GB_TYPE_STRING
                        ? gb_db_loaded_string(L->db, k, gb_slice_make(v.str.ptr, v.str.len), expire_ms)
                        : gb_db_loaded_object(L->db, k, v.type, v.obj, expire_ms);
        if (v.type == GB_TYPE_STRING)
            gb_rdb_str_free(&v.str);
        gb_kv_set_lru_or_lfu(L->eng, kv, freq, idle_s);
        gb_loaded_key dup;
        ok = gb_load_pipe_add(&L->pipe, (gb_loaded_key){kv, hash, L->db}, &dup) || fail_twice(L, dup);
        L->st->keys++;
    }
    gb_rdb_str_free(&name);
    return ok;
}

static bool load_body(loader *L, void (*progress)(void *, uint64_t, uint64_t, const gb_rdb_load_stats *), void *pctx)
{
    int64_t expire_ms = -1, idle_s = -1, freq = -1;
    uint64_t next_report = PROGRESS_EVERY;
    for (;;) {
        if (progress && L->r.pos >= next_report) {
            progress(pctx, L->r.pos, L->r.len, L->st);
            next_report += PROGRESS_EVERY;
        }
        int op = gb_rdb_read_byte(&L->r);
        if (op < 0)
            return fail(L, "the file ends before its EOF opcode");
        if (op >= OP_FUNCTION2 && op != OP_EXPIRETIME_MS && op != OP_EXPIRETIME && op != OP_IDLE && op != OP_FREQ &&
            !insert_queued(L)) /* keys go in before SELECTDB, EOF and the rest change what follows */
            return false;
        uint64_t a, b;
        switch (op) {
        case OP_EOF:
            return true;
        case OP_AUX:
            if (!load_aux(L))
                return false;
            break;
        case OP_RESIZEDB: /* the table sized once, as Goblin's own snapshots do */
            if (!read_len(L, &a) || !read_len(L, &b))
                return false;
            gb_htable_reserve(&L->db->keys, (size_t)GB_MIN(a, (uint64_t)(L->r.len - L->r.pos)));
            break;
        case OP_EXPIRETIME_MS:
            if (!read_le(L, 8, &a))
                return false;
            expire_ms = (int64_t)a;
            continue;
        case OP_EXPIRETIME:
            if (!read_le(L, 4, &a))
                return false;
            expire_ms = (int64_t)(uint32_t)a * 1000;
            continue;
        case OP_IDLE:
            if (!read_len(L, &a))
                return false;
            idle_s = a > INT64_MAX ? INT64_MAX : (int64_t)a;
            continue;
        case OP_FREQ:
            if ((freq = gb_rdb_read_byte(&L->r)) < 0)
                return fail(L, "a truncated LFU counter");
            continue;
        case OP_SELECTDB:
            if (!read_len(L, &a))
                return false;
            if (a >= (uint64_t)L->eng->ndbs)
                return fail(L, "database %llu does not exist here (databases is %d)", (unsigned long long)a,
                            L->eng->ndbs);
            L->db = &L->eng->dbs[a];
            break;
        case OP_FUNCTION2:
            if (!load_function(L))
                return false;
            break;
        case OP_MODULE_AUX:
            return fail(L, "module data (opcode 0xF7), which Goblin Core cannot load");
        case OP_FUNCTION_RC:
            return fail(L, "functions in Redis 7.0-rc's format (opcode 0xF6); save again with Redis 7.0.0 or later");
        default:
            if (op > GB_RDB_TYPE_HASH_LISTPACK_EX)
                return fail(L, "an unknown opcode 0x%02X", (unsigned)op);
            if (!load_key(L, op, expire_ms, idle_s, freq))
                return false;
            break;
        }
        expire_ms = -1; /* an expiry, idle time or counter applies to the key right after it */
        idle_s = -1;
        freq = -1;
    }
}

int gb_rdb_load_buffer(gb_engine *eng, const uint8_t *p, size_t len, const char *name, gb_rdb_load_stats *st,
                       void (*progress)(void *ctx, uint64_t done, uint64_t total, const gb_rdb_load_stats *st),
                       void *pctx, char *err, size_t errlen)
{
    memset(st, 0, sizeof *st);
    st->repl_stream_db = -1;
    st->bytes = len;
    unsigned version = 0;
    if (len < MAGIC_LEN || memcmp(p, "REDIS", 5) != 0 || sscanf((const char *)p + 5, "%4u", &version) != 1) {
        snprintf(err, errlen, "%s is not a Redis RDB file (no REDIS magic)", name);
        return GB_EPARSE;
    }
    st->version = version;
    if (version < 1 || version > GB_RDB_VERSION_READ_MAX) {
        snprintf(err, errlen, "%s is RDB version %u; Goblin Core reads versions 1 to %d (Redis up to 7.4)", name,
                 version, GB_RDB_VERSION_READ_MAX);
        return GB_EPARSE;
    }
    loader L = {.eng = eng, .db = &eng->dbs[0], .st = st, .err = err, .errlen = errlen};
    L.cfg = (gb_rdb_build_config){gb_types_cfg(eng), gb_list_config_for(eng), gb_stream_limits_of(eng)};
    /* Version 5 and later end with a CRC-64 of everything before it: checked
     * first, so a damaged file is refused before anything is built. */
    size_t body_end = len;
    if (version >= 5) {
        if (len < MAGIC_LEN + 1 + 8) {
            snprintf(err, errlen, "%s is truncated (no room for its EOF and checksum)", name);
            return GB_EPARSE;
        }
        uint64_t stored = 0;
        for (int i = 7; i >= 0; i--)
            stored = stored << 8 | p[len - 8 + (size_t)i];
        if (stored != 0 && gb_crc64(0, p, len - 8) != stored) {
            snprintf(err, errlen, "%s: wrong checksum: the file is damaged or truncated", name);
            return GB_EPARSE;
        }
        body_end = len - 8;
    }
    L.r = gb_rdb_reader_make(p, body_end);
    L.r.pos = MAGIC_LEN;
    bool loaded = load_body(&L, progress, pctx);
    gb_load_pipe_discard(&L.pipe); /* keys a failed load left queued */
    if (!loaded)
        return GB_EPARSE;
    if (L.r.pos != body_end) {
        snprintf(err, errlen, "Redis RDB file: %zu bytes after the EOF opcode", body_end - L.r.pos);
        return GB_EPARSE;
    }
    return 0;
}

int gb_rdb_load_file(gb_engine *eng, const char *path, gb_rdb_load_stats *st,
                     void (*progress)(void *ctx, uint64_t done, uint64_t total, const gb_rdb_load_stats *st),
                     void *pctx, char *err, size_t errlen)
{
    memset(st, 0, sizeof *st);
    gb_plat_file_map m;
    int rc = gb_plat_file_map_open(path, &m);
    if (rc != 0) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return rc == GB_ENOENT ? GB_ENOENT : GB_EIO;
    }
    rc = gb_rdb_load_buffer(eng, m.ptr, m.len, path, st, progress, pctx, err, errlen);
    gb_plat_file_map_close(&m);
    return rc;
}
