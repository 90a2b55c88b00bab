/*
 * The keyspace's own typed operations, whatever the value's type: DEL,
 * EXISTS, TYPE, KEYS, SCAN, RANDOMKEY, RENAME, MOVE, COPY, the EXPIRE and
 * TTL families, PERSIST, OBJECT, SWAPDB and FLUSHDB (see
 * engine/types/t_list.h for what a typed key operation does and does not
 * do, and how they are named).
 */
#ifndef GB_ENGINE_TYPES_T_KEYS_H
#define GB_ENGINE_TYPES_T_KEYS_H

#include "engine/core/keyspace/db.h"
#include "engine/types/result.h"

/* ---- existence and deletion ---- */

/* DEL, UNLINK: *deleted says how many of the n keys existed (and went);
 * lazy: large values are freed off the engine thread (engine/core/memory/lazyfree.h). */
gb_result gb_keys_del(gb_db *db, size_t n, const gb_slice *keys, bool lazy, int64_t *deleted);
/* EXISTS: how many of the n keys exist (a key named twice counts twice),
 * their access clocks untouched (Redis's LOOKUP_NOTOUCH); TOUCH: the same,
 * touching them. */
gb_result gb_keys_exists(gb_db *db, size_t n, const gb_slice *keys, int64_t *count);
gb_result gb_keys_touch(gb_db *db, size_t n, const gb_slice *keys, int64_t *count);
/* TYPE: *name is the type's name ("string", "list", ...), looked up
 * without touching the key (counted as a hit or miss, as Redis counts it).
 * GB_R_NOTFOUND: no such key. */
gb_result gb_keys_type(gb_db *db, gb_slice key, const char **name);

/* ---- iteration ---- */

/* KEYS: sink->len(GB_SINK_LEN_UNKNOWN), then sink->value for each live key
 * the glob pattern matches; *n says how many. */
gb_result gb_keys_keys(gb_db *db, gb_slice pattern, const gb_sink *sink, size_t *n);

/* What SCAN asks for besides its cursor. */
typedef struct gb_keys_scan_opts {
    gb_slice pattern; /* MATCH, when use_pattern */
    bool use_pattern;
    int64_t count;    /* COUNT, >= 1 */
    int type;         /* TYPE: GB_TYPE_*; -1 for any; GB_TYPE_COUNT for a name no type has */
} gb_keys_scan_opts;

/* SCAN: visits buckets from cursor until opts->count keys or ten times as
 * many steps (Redis's reverse-binary cursor); *next, the cursor to go on
 * from (0: done), is set before sink->len(GB_SINK_LEN_UNKNOWN); then
 * sink->value for each live key the pattern and type keep; *n says how
 * many. */
gb_result gb_keys_scan(gb_db *db, uint64_t cursor, const gb_keys_scan_opts *opts, const gb_sink *sink,
                       uint64_t *next, size_t *n);
/* RANDOMKEY: *key borrows a live key's name until the next write.
 * GB_R_NOTFOUND when none was found (an empty db, or only expired keys
 * drawn). */
gb_result gb_keys_randomkey(gb_db *db, gb_slice *key);

/* ---- moving values ---- */

/* RENAME, RENAMENX (nx): src's value and TTL go to dst, replacing what dst
 * held. *renamed is 0 when nx and dst exists, or src and dst are one key
 * (RENAME's OK, RENAMENX's 0). GB_R_NOTFOUND: no src. */
gb_result gb_keys_rename(gb_db *db, gb_slice src, gb_slice dst, bool nx, int64_t *renamed);
/* MOVE key to another database (the caller refuses db itself): *moved is 0
 * when key is missing, or exists in dstdb. */
gb_result gb_keys_move(gb_db *db, gb_slice key, gb_db *dstdb, int64_t *moved);
/* COPY src (in db) to dst (in dstdb; the caller refuses the key itself),
 * with its TTL: *copied is 0 when src is missing, or dst exists and
 * !replace. */
gb_result gb_keys_copy(gb_db *db, gb_slice src, gb_db *dstdb, gb_slice dst, bool replace, int64_t *copied);

/* ---- expiry ---- */

/* What an expiry operation did to its key: the caller propagates it as
 * PEXPIREAT, DEL or PERSIST (engine/core/request/propagate.h). */
typedef enum gb_expiry_change {
    GB_EXPIRY_NONE,      /* nothing changed */
    GB_EXPIRY_SET,       /* the key now expires at the time asked */
    GB_EXPIRY_DELETED,   /* the time asked had passed: the key is gone */
    GB_EXPIRY_PERSISTED, /* the key's expiry was removed */
} gb_expiry_change;

/* Gives key (its record kv) the absolute expiry when_ms (Unix ms), or
 * deletes it when that time is not in the future (Redis 7.0); tells WATCH.
 * The typed operations that set expiries (EXPIRE & co, GETEX) end here. */
gb_expiry_change gb_keys_expire_record(gb_db *db, gb_slice key, gb_kv *kv, int64_t when_ms);

/* EXPIRE's conditions (the caller refuses NX with XX, GT or LT, and GT
 * with LT). */
enum {
    GB_EXPIRE_NX = 1u << 0, /* only when the key has no expiry */
    GB_EXPIRE_XX = 1u << 1, /* only when it has one */
    GB_EXPIRE_GT = 1u << 2, /* only to a later time (no expiry counts as infinite) */
    GB_EXPIRE_LT = 1u << 3, /* only to an earlier time */
};

/* EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT with the absolute time when_ms:
 * *change is GB_EXPIRY_NONE when the key is missing or a condition failed,
 * else what gb_keys_expire_record did. */
gb_result gb_keys_expire(gb_db *db, gb_slice key, int64_t when_ms, unsigned flags, gb_expiry_change *change);
/* TTL, PTTL, EXPIRETIME, PEXPIRETIME: *at_ms the absolute expiry (-1:
 * none), *left_ms the time left (>= 0; -1: none). GB_R_NOTFOUND: no such
 * key. */
gb_result gb_keys_ttl(gb_db *db, gb_slice key, int64_t *at_ms, int64_t *left_ms);
/* PERSIST: *persisted is 1 when the key had an expiry, now gone. */
gb_result gb_keys_persist(gb_db *db, gb_slice key, int64_t *persisted);

/* ---- introspection ---- */

typedef struct gb_object_info {
    const char *encoding; /* OBJECT ENCODING: "int", "embstr", "listpack", ... */
    int64_t idle_s;       /* OBJECT IDLETIME: seconds since the last access (LRU clock) */
    int64_t freq;         /* OBJECT FREQ: the decayed LFU counter (meaningful under an LFU policy) */
    int64_t refcount;     /* OBJECT REFCOUNT: redis-server's for its shared integers, else 1 (gb_kv_refcount) */
    const char *representation; /* a list's representation (DEBUG OBJECT); NULL for other types */
    /* a list's list-compress-depth != 0 (Redis's ql_compressed) and the
     * segments stored compressed now */
    bool list_compress;
    size_t compressed_segments;
} gb_object_info;

/* OBJECT, looked up without counting or touching the key. GB_R_NOTFOUND:
 * no such key. */
gb_result gb_keys_object(gb_db *db, gb_slice key, gb_object_info *info);

/* ---- databases ---- */

/* SWAPDB: exchanges the data of a and b (nothing when they are one):
 * WATCH sees every key of both change, and clients blocked on either wake
 * if their key now holds a value. */
gb_result gb_keys_swapdb(gb_db *a, gb_db *b);
/* FLUSHDB: deletes every key of db; WATCH sees them all change; lazy:
 * the values are freed off the engine thread. Counts the keys removed as
 * changes: an empty database changes nothing, so the caller propagates
 * the command itself. */
gb_result gb_keys_flushdb(gb_db *db, bool lazy);

#endif
