/*
 * Hash-field expiry (Redis 7.4's HFE) on top of engine/ds/hash.h: per-field
 * deadlines, absolute Unix milliseconds, for the fields that have one.
 *
 * A hash without field TTLs is exactly what it was (listpack or hashtable,
 * the same bytes). The first HEXPIRE-family call on a hash gives it the
 * third encoding, GB_HASH_TTL: h->p then points to a gb_hash_ex holding the
 * hash's fields, and each deadline is kept with its field, as Redis 7.4
 * keeps it in the field (no per-field index record):
 *
 *   listpack (listpackex)  the fields are in Redis 7.4's listpackex order,
 *                          those with a deadline first, earliest first; so
 *                          the deadlines are one sorted array, `dl`, whose
 *                          i-th entry is the i-th pair's (ndl of them).
 *   hash table             each record ends in a 10-byte trailer (its
 *                          deadline, its slot in a min-heap of the records
 *                          that have one): engine/ds/hash_impl.h.
 *
 * As in Redis, the hash keeps that encoding once it has it (OBJECT ENCODING
 * says "listpackex" while the fields are a listpack, "hashtable" after).
 *
 * Every function of hash.h accepts a GB_HASH_TTL hash: reads see the fields
 * whatever their deadlines (the type layer, which knows the time, filters
 * and deletes the expired ones); HSET's gb_hash_set / gb_hash_set_many and
 * gb_hash_del drop the fields' deadlines; HINCRBY/HINCRBYFLOAT and
 * gb_hash_set_keep_ttl keep them.
 */
#ifndef GB_ENGINE_DS_HASH_TTL_H
#define GB_ENGINE_DS_HASH_TTL_H

#include "engine/ds/hash.h"

#define GB_HASH_TTL 2 /* gb_hash.enc: p is a gb_hash_ex */

/* The largest deadline a field may get (Redis's EB_EXPIRE_TIME_MAX, 2^48-1
 * ms): it fits the 6 bytes a hash table record keeps it in. */
#define GB_HASH_TTL_MAX ((int64_t)0x0000FFFFFFFFFFFF)

typedef struct gb_hash_ex {
    gb_hash fields; /* a plain hash: GB_HASH_LISTPACK or GB_HASH_HASHTABLE */
    int64_t *dl;    /* listpack: the first ndl pairs' deadlines (ms), sorted */
    uint32_t ndl;   /* listpack: how many fields have a deadline */
} gb_hash_ex;

static inline bool gb_hash_has_ttl_enc(const gb_hash *h) { return h->enc == GB_HASH_TTL; }

/* The plain hash holding the fields (h itself when it has no TTL index). */
static inline gb_hash *gb_hash_fields(gb_hash *h)
{
    return h->enc == GB_HASH_TTL ? &((gb_hash_ex *)h->p)->fields : h;
}
static inline const gb_hash *gb_hash_fields_c(const gb_hash *h)
{
    return h->enc == GB_HASH_TTL ? &((const gb_hash_ex *)h->p)->fields : h;
}

/* Gives h the GB_HASH_TTL encoding (no-op when it has it). */
void gb_hash_ttl_enable(gb_hash *h);
/* The field's deadline, or -1 when it has none (or h has no index). */
int64_t gb_hash_ttl_get(const gb_hash *h, gb_slice field);
/* Sets an existing field's deadline (enables the index). While the fields
 * are a listpack, the field moves to its place in Redis 7.4's listpackex
 * order: the fields with a deadline first, earliest first (before those
 * with an equal one), then the others in the order they came. */
void gb_hash_ttl_set(gb_hash *h, gb_slice field, int64_t when_ms);
/* Drops a field's deadline (the field moves to the end, as in Redis); true
 * when it had one. */
bool gb_hash_ttl_clear(gb_hash *h, gb_slice field);
/* Loaders: the deadline of a field read from a file (which has none yet).
 * In a listpack the field goes after the fields with an equal or earlier
 * deadline: deadlines given in the file's order keep the file's order
 * among equals, so a hash saved in Redis's order loads exactly as it was. */
void gb_hash_ttl_load(gb_hash *h, gb_slice field, int64_t when_ms);
/* How many fields have a deadline; the earliest one (-1: none). */
size_t gb_hash_ttl_count(const gb_hash *h);
int64_t gb_hash_ttl_min(const gb_hash *h);
/* Whether the field's deadline has passed at now_ms: a field lives through
 * the millisecond of its deadline, as a key does (Redis's hashTypeIsExpired:
 * when < now). */
static inline bool gb_hash_field_expired(const gb_hash *h, gb_slice field, int64_t now_ms)
{
    if (h->enc != GB_HASH_TTL)
        return false;
    int64_t when = gb_hash_ttl_get(h, field);
    return when >= 0 && when < now_ms;
}
/* Whether any field's deadline has passed at now_ms (one look at the
 * earliest), and how many fields' have. */
static inline bool gb_hash_ttl_any_expired(const gb_hash *h, int64_t now_ms)
{
    int64_t min = h->enc == GB_HASH_TTL ? gb_hash_ttl_min(h) : -1;
    return min >= 0 && min < now_ms;
}
size_t gb_hash_ttl_expired_count(const gb_hash *h, int64_t now_ms);

/* Receives one field and its deadline. */
typedef void (*gb_hash_ttl_emit_fn)(void *ctx, gb_slice field, int64_t when_ms);
/* The fields with a deadline, earliest first. */
void gb_hash_ttl_each(const gb_hash *h, gb_hash_ttl_emit_fn emit, void *ctx);

/* Receives a field about to be deleted because its deadline passed (bytes
 * valid during the call). */
typedef void (*gb_hash_field_fn)(void *ctx, gb_slice field);
/* Deletes at most max fields whose deadline has passed at now_ms, the
 * earliest first, telling each to gone() before it goes; returns how many. */
size_t gb_hash_ttl_expire(gb_hash *h, int64_t now_ms, size_t max, gb_hash_field_fn gone, void *ctx);

/* Sets a field's value keeping its deadline (HSETEX KEEPTTL, HINCRBY);
 * true when the field is new. */
bool gb_hash_set_keep_ttl(gb_hash *h, const gb_types_config *cfg, gb_slice field, gb_slice value);

/* Bytes of the wrapper, the deadline array or heap (MEMORY USAGE), 0
 * without; a hash table's trailers are counted with its records. */
size_t gb_hash_ttl_mem(const gb_hash *h);
/* Internal to hash.c: release / duplicate / verify the wrapper; turn its
 * listpack into a hash table, deadlines kept; HDEL in its listpack. */
void gb_hash_ttl_release(gb_hash *h);
void gb_hash_ttl_dup_into(const gb_hash *src, gb_hash *dst);
bool gb_hash_ttl_verify(const gb_hash *h);
void gb_hash_ttl_to_hashtable(gb_hash *h);
size_t gb_hash_ttl_del_listpack(gb_hash *h, size_t n, const gb_slice *fields);

#endif
