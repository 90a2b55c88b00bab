/*
 * t_hash: the hash value object. One type, two representations, chosen and
 * changed by the object itself (Redis 7 rules):
 *
 *   listpack   at most hash-max-listpack-entries fields, no field or value
 *              longer than hash-max-listpack-value bytes: one block of
 *              field, value, field, value, ... in insertion order (values
 *              that are canonical integers are stored as integers).
 *   hashtable  otherwise: an htable of one-allocation records.
 *
 * Conversion goes one way; deleting fields never converts back, as in
 * Redis. OBJECT ENCODING reports "listpack" or "hashtable".
 *
 * hashtable record (one malloc block per field):
 *
 *   offset  size    field
 *   0       8       next    htable chain link (gb_hnode)
 *   8       1..5    flen    field length, varint (LEB128)
 *   ..      flen    field bytes
 *   ..      1..5    vlen    value length, varint
 *   ..      vlen    value bytes
 *   ..      10      deadline trailer, only in a hash with field TTLs
 *                   (engine/ds/hash_impl.h, engine/ds/hash_ttl.h)
 *
 * A 10-byte field with a 10-byte value takes 30 bytes (a 40-byte-usable
 * chunk). Overwriting a value rewrites it in place when the chunk has room,
 * else reallocates the record and relinks it.
 */
#ifndef GB_ENGINE_T_HASH_H
#define GB_ENGINE_T_HASH_H

#include "engine/base/common.h"
#include "engine/ds/collection.h"

typedef enum gb_hash_enc {
    GB_HASH_LISTPACK = 0,
    GB_HASH_HASHTABLE,
} gb_hash_enc;

/* 16 bytes; the fields are private to t_hash.c. */
typedef struct gb_hash {
    uint8_t enc;
    uint8_t pad[7];
    void *p; /* listpack, or the hashtable's struct */
} gb_hash;

/* Buffer for values the listpack keeps as integers (rendered on read). */
#define GB_HASH_VALUE_BUF 24

/* Receives one field and its value; bytes valid only during the call. */
typedef void (*gb_hash_emit_fn)(void *ctx, gb_slice field, gb_slice value);

/* An empty hash (listpack). */
gb_hash *gb_hash_new(void);
/* A hash about to receive size_hint fields (a snapshot's or an RDB's):
 * past hash-max-listpack-entries it starts as the hash table, sized once,
 * as Redis's rdbLoadObject does, rather than as a listpack searched on
 * every add and then converted and grown. */
gb_hash *gb_hash_new_sized(const gb_types_config *cfg, size_t size_hint);
/* A hash made from an untrusted listpack of field, value pairs (a
 * snapshot's), taking ownership of lp (size bytes, gb_malloc'd). NULL (lp
 * freed, *why set) when it is not one: a damaged listpack, an odd count, a
 * field twice, no fields. Past the thresholds it becomes a hash table. */
gb_hash *gb_hash_from_listpack(unsigned char *lp, size_t size, const gb_types_config *cfg, const char **why);
/* The listpack of a listpack-encoded hash, or NULL: what a snapshot stores
 * as it is. */
static inline const unsigned char *gb_hash_listpack(const gb_hash *h)
{
    return h->enc == GB_HASH_LISTPACK ? (const unsigned char *)h->p : NULL;
}
void gb_hash_free(gb_hash *h);
/* Frees the representation only, for a header the caller owns (the
 * command layer keeps headers on the stack; see engine/commands/cmd_collection.h). */
void gb_hash_release(gb_hash *h);
/* gb_hash_release a slice at a time (engine/core/memory/sliced_free.h): frees
 * about max_nodes elements of a large encoding per call, resuming at
 * *cursor (0 to start); true once the representation is gone, as after
 * gb_hash_release. A compact encoding goes in one call. */
bool gb_hash_release_step(gb_hash *h, uint64_t *cursor, size_t max_nodes);
gb_hash *gb_hash_dup(const gb_hash *h);

static inline gb_hash_enc gb_hash_encoding(const gb_hash *h) { return (gb_hash_enc)h->enc; }
const char *gb_hash_encoding_name(const gb_hash *h);
size_t gb_hash_len(const gb_hash *h);
/* Bytes held (listpack or records + buckets), as allocated: the 16-byte header
 * not counted (the keyspace holds none, engine/commands/cmd_collection.h). */
size_t gb_hash_payload_mem(const gb_hash *h);

/* HSET one pair; returns true when the field is new. */
bool gb_hash_set(gb_hash *h, const gb_types_config *cfg, gb_slice field, gb_slice value);
/* HSET/HMSET: n pairs; returns how many fields were new. Like Redis, converts
 * first when any argument is too long for the listpack. */
size_t gb_hash_set_many(gb_hash *h, const gb_types_config *cfg, size_t n, const gb_slice *fields,
                        const gb_slice *values);
/* HSETNX: sets only a new field; returns whether it did. */
bool gb_hash_setnx(gb_hash *h, const gb_types_config *cfg, gb_slice field, gb_slice value);

/* HGET: true and *value when present; buf (GB_HASH_VALUE_BUF bytes) may
 * receive the rendered bytes of an integer value. */
bool gb_hash_get(const gb_hash *h, gb_slice field, gb_slice *value, char *buf);
bool gb_hash_exists(const gb_hash *h, gb_slice field);
/* HSTRLEN: 0 when absent. */
size_t gb_hash_strlen(const gb_hash *h, gb_slice field);
/* HDEL: returns how many of the n fields were removed. */
size_t gb_hash_del(gb_hash *h, size_t n, const gb_slice *fields);

/* HINCRBY: 0 and *out = the new value; GB_EINVAL when the current value is
 * not an integer ("ERR hash value is not an integer"); GB_ERANGE when the
 * result would overflow ("ERR increment or decrement would overflow"). A
 * missing field counts as 0. Nothing changes on error. */
int gb_hash_incrby(gb_hash *h, const gb_types_config *cfg, gb_slice field, int64_t incr, int64_t *out);
/* HINCRBYFLOAT: the caller first rejects a NaN/infinite increment ("ERR
 * value is NaN or Infinity"). Returns 0 with the stored text of the new
 * value in out (GB_LONG_DOUBLE_BUF bytes, see score.h) and its length;
 * GB_EINVAL when the current value is not a float ("ERR hash value is not a
 * float"); GB_ERANGE when the sum is NaN or infinite ("ERR increment would
 * produce NaN or Infinity"). */
int gb_hash_incrbyfloat(gb_hash *h, const gb_types_config *cfg, gb_slice field, long double incr, char *out,
                        size_t *outlen);

/* HGETALL/HKEYS/HVALS: every pair, listpack in insertion order. */
void gb_hash_each(const gb_hash *h, gb_hash_emit_fn emit, void *ctx);
/* HRANDFIELD with a count: count > 0 emits min(count, len) distinct fields
 * (the whole hash in gb_hash_each order when count >= len); count < 0 emits
 * -count fields that may repeat. */
void gb_hash_random(const gb_hash *h, int64_t count, gb_hash_emit_fn emit, void *ctx);
/* HSCAN: a batch and the next cursor (0: done); listpack hashes emit
 * everything at once and return 0. */
uint64_t gb_hash_scan(gb_hash *h, uint64_t cursor, gb_hash_emit_fn emit, void *ctx);

/* Structural check for tests. */
bool gb_hash_verify(const gb_hash *h);

#endif
