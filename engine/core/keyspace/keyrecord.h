/*
 * gb_kv: one key and its value, as stored in a database's key table.
 *
 * One allocation per key. The header is 32 bytes; an optional expiry field
 * follows it, then the key bytes, then (for short strings) the value bytes:
 *
 *   offset  size  field
 *   0       8     node      chain link in the db's htable (engine/ds/htable.h)
 *   8       8     v         value: int64 (GB_ENC_INT), length of the inline
 *                           bytes (GB_ENC_EMBSTR), gb_str * (GB_ENC_RAW), or
 *                           the type's object pointer (GB_ENC_OBJ)
 *   16      4     keylen    key length in bytes
 *   20      1     type      GB_TYPE_*
 *   21      1     enc       GB_ENC_*
 *   22      1     flags     GB_KV_VOLATILE: the expiry field is present;
 *                           GB_KV_COW_MARK: the background-save mark (db.h);
 *                           GB_KV_SLOT_LINKED: the slot links are present
 *   23      1     lfu       under an LFU maxmemory-policy: the 8-bit logarithmic
 *                           access counter (Redis's LFU counter; 5 for a new
 *                           key); unused (left as it was) under other policies
 *   24      4     atime     the access clock, read by the policy in force
 *                           (engine/core/memory/evict.h), as Redis's 24-bit lru field:
 *                           LRU and the rest: last access, in 1/64 s since the
 *                           engine started (OBJECT IDLETIME divides by 64);
 *                           LFU: the minute of the last counter change, Unix
 *                           minutes mod 65536 (Redis's 16-bit ldt), from which
 *                           the counter decays by one per lfu-decay-time.
 *                           A policy changed at run time reads the other's
 *                           value until keys are touched again, as in Redis.
 *   28      4     vindex    position in the db's volatile-key array (when VOLATILE)
 *   32      8     expire    [VOLATILE only] absolute expiry, Unix milliseconds
 *   32|40   16    slot link [SLOT_LINKED only] previous and next key of the
 *                           same hash slot (cluster mode, database 0:
 *                           engine/core/keyspace/slot_list.h)
 *   32..56  keylen key bytes
 *   ...     v     [EMBSTR only] value bytes
 *
 * A 16-byte key with a 3-byte value therefore costs 51 bytes of payload, one
 * 64-byte malloc chunk, plus an 8-byte bucket slot: ~72 bytes per key where
 * Redis 7 spends ~85 (dictEntry 24 + robj 16 + sds key + embstr).
 *
 * Changing a key's expiry or an inline value may reallocate the gb_kv: code
 * never keeps a gb_kv pointer across such a call (db.c fixes the table link
 * and the volatile array).
 */
#ifndef GB_ENGINE_KEYRECORD_H
#define GB_ENGINE_KEYRECORD_H

#include "engine/base/common.h"
#include "engine/ds/htable.h"

enum gb_type { GB_TYPE_STRING = 0, GB_TYPE_LIST, GB_TYPE_SET, GB_TYPE_ZSET, GB_TYPE_HASH, GB_TYPE_STREAM, GB_TYPE_COUNT };

enum gb_enc {
    GB_ENC_INT = 0, /* string holding a canonical int64: v.i */
    GB_ENC_EMBSTR,  /* string up to GB_INLINE_MAX bytes inline after the key: v.len */
    GB_ENC_RAW,     /* string in its own buffer: v.ptr -> gb_str */
    GB_ENC_OBJ,     /* list/set/zset/hash/stream object: v.ptr; it names its own encoding */
};

#define GB_KV_VOLATILE 0x01u
#define GB_KV_COW_MARK 0x02u
#define GB_KV_SLOT_LINKED 0x04u

/* Strings up to GB_INLINE_MAX bytes live inline in the gb_kv, one
 * allocation with the key (GB_ENC_EMBSTR): a 200-byte cache value costs a
 * 256-byte block instead of a 64-byte record plus a 224-byte buffer, so a
 * cache under maxmemory holds more keys. OBJECT ENCODING still follows
 * Redis's limit: "embstr" up to GB_EMBSTR_MAX bytes, "raw" beyond. */
#define GB_EMBSTR_MAX 44
#define GB_INLINE_MAX 512

typedef struct gb_kv {
    gb_hnode node;
    union {
        int64_t i;
        uint64_t len;
        void *ptr;
    } v;
    uint32_t keylen;
    uint8_t type;
    uint8_t enc;
    uint8_t flags;
    uint8_t lfu;
    uint32_t atime;
    uint32_t vindex;
} gb_kv;

_Static_assert(sizeof(gb_kv) == 32, "gb_kv header must stay 32 bytes");

/* A heap string for values too long to embed or grown by APPEND/SETRANGE. */
typedef struct gb_str {
    size_t len;
    size_t cap;
    char data[];
} gb_str;

static inline bool gb_kv_volatile(const gb_kv *kv) { return (kv->flags & GB_KV_VOLATILE) != 0; }

/* The links of a key in its hash slot's list (GB_KV_SLOT_LINKED records). */
typedef struct gb_kv_slot_link {
    gb_kv *prev, *next;
} gb_kv_slot_link;

/* The optional fields' sizes come straight from the flag bits (8 bytes of
 * expiry for 0x01, 16 of slot links for 0x04): no branch on the hot path. */
_Static_assert(GB_KV_VOLATILE << 3 == 8 && GB_KV_SLOT_LINKED << 2 == sizeof(gb_kv_slot_link),
               "gb_kv_key_offset derives field sizes from the flag bits");

static inline size_t gb_kv_key_offset(const gb_kv *kv)
{
    return sizeof(gb_kv) + ((kv->flags & GB_KV_VOLATILE) << 3) + ((kv->flags & GB_KV_SLOT_LINKED) << 2);
}

static inline gb_kv_slot_link *gb_kv_slot_link_of(gb_kv *kv)
{
    return (gb_kv_slot_link *)((char *)kv + sizeof(gb_kv) + ((kv->flags & GB_KV_VOLATILE) << 3));
}

static inline const char *gb_kv_key_ptr(const gb_kv *kv) { return (const char *)kv + gb_kv_key_offset(kv); }

static inline gb_slice gb_kv_key(const gb_kv *kv) { return gb_slice_make(gb_kv_key_ptr(kv), kv->keylen); }

static inline int64_t gb_kv_expire(const gb_kv *kv)
{
    int64_t e;
    memcpy(&e, (const char *)kv + sizeof(gb_kv), sizeof e);
    return e;
}

/* The bytes of a string value. Integer values are rendered into buf, which
 * must hold GB_INT_BUF bytes. */
#define GB_INT_BUF 24
gb_slice gb_kv_string(const gb_kv *kv, char *buf);

/* Per-type behaviour for GB_ENC_OBJ values, registered by each type module
 * (t_list, t_hash, t_set, t_zset, t_stream). */
typedef struct gb_type_ops {
    const char *name;                       /* TYPE reply: "list", "hash", ... */
    void (*free)(void *obj);
    void *(*dup)(const void *obj);          /* COPY */
    const char *(*encoding)(const void *obj); /* OBJECT ENCODING */
    size_t (*mem)(const void *obj);         /* MEMORY USAGE / accounting */
    /* How many allocations freeing obj touches, about: lazy freeing hands
     * it to a thread past GB_LAZYFREE_THRESHOLD (Redis's free effort). */
    size_t (*free_effort)(const void *obj);
    /* Frees about max_nodes of obj's elements per call, resuming at *cursor
     * (0 to start); true once obj is wholly freed, as by free. Lets the
     * engine free a big value between requests (engine/core/memory/
     * sliced_free.h). NULL: free does it in one go (lists, whose
     * elements are packed many to an allocation). A type may keep its
     * state in *cursor and stop reading obj after the first call. */
    bool (*free_step)(void *obj, uint64_t *cursor, size_t max_nodes);
} gb_type_ops;

void gb_type_register(enum gb_type t, const gb_type_ops *ops);
const gb_type_ops *gb_type_get(enum gb_type t);
const char *gb_type_name(enum gb_type t);

#endif
