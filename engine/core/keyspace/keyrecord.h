/*
 * gb_kv: one key and its value, as stored in a database's key table.
 *
 * One allocation per key: a 16-byte header, the optional fields its flags
 * name, the key bytes, then the value. Every field after the header sits
 * at an offset computed from the flags and the key's length, so a key
 * pays only for what it has:
 *
 *   offset  size  field
 *   0       8     node      chain link in the db's htable (engine/ds/htable.h)
 *   8       4     lru       the access clock, read by the policy in force
 *                           (engine/core/memory/evict.h), one field for both
 *                           as Redis's 24-bit lru: LRU and the rest: last
 *                           access in 1/64 s since the engine started (OBJECT
 *                           IDLETIME divides by 64); LFU: the minute of the
 *                           last counter change (Unix minutes mod 65536,
 *                           Redis's ldt) << 8 | the 8-bit logarithmic access
 *                           counter. A policy changed at run time reads the
 *                           other's value until keys are touched again, as
 *                           in Redis.
 *   12      4     bits      type (3 bits, GB_TYPE_*), enc (2, GB_ENC_*),
 *                           flags (3: GB_KV_VOLATILE the expiry field is
 *                           present; GB_KV_COW_MARK the background-save mark,
 *                           db.h; GB_KV_SLOT_LINKED the slot links are
 *                           present), klen (14: the key's length, or
 *                           GB_KV_KLEN_LONG when the long-length field holds
 *                           it), vlen (10: an embedded string's length;
 *                           for an INT value, GB_KV_INT_SHARED or
 *                           GB_KV_INT_PRIVATE, below)
 *   16      16    expiry    [VOLATILE only] absolute expiry in Unix ms (8),
 *                           the key's position in the db's volatile-key
 *                           array (4), 4 unused
 *   +       16    slot link [SLOT_LINKED only] previous and next key of the
 *                           same hash slot (cluster mode, database 0:
 *                           engine/core/keyspace/slot_list.h)
 *   +       8     long len  [klen == GB_KV_KLEN_LONG only] the key's length
 *   +       klen  key bytes
 *   +       vlen  value     EMBSTR: the bytes, right after the key
 *   align 8 8     value     INT: the int64; RAW: the gb_str pointer; OBJ: the
 *                           type's object pointer: in the first 8-aligned
 *                           word at or after the key's end. Every record has
 *                           room for this word (gb_kv_record_size), so any
 *                           string record takes an INT or RAW value where it
 *                           stands.
 *
 * A 12-byte key with a 16-byte value therefore costs 44 bytes, one 48-byte
 * allocation, plus an 8-byte bucket slot: ~56 bytes per key where Redis 7
 * spends ~104 (dictEntry 24 + robj 16 + sds key + embstr); with a 100-byte
 * value, exactly 128 bytes. Before this layout (a 32-byte header holding
 * the value word, a separate LFU byte and the volatile index in every key)
 * the same records took 64 and 160. Keys of 16,383 bytes and more are rare
 * enough to pay 8 bytes for their length.
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
    GB_ENC_INT = 0, /* string holding a canonical int64: gb_kv_int */
    GB_ENC_EMBSTR,  /* string up to GB_INLINE_MAX bytes inline after the key: gb_kv_embstr */
    GB_ENC_RAW,     /* string in its own buffer: gb_kv_ptr -> gb_str */
    GB_ENC_OBJ,     /* list/set/zset/hash/stream object: gb_kv_ptr; it names its own encoding */
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

/* Keys of this length or longer keep it in the long-length field. */
#define GB_KV_KLEN_LONG 0x3FFFu

typedef struct gb_kv {
    gb_hnode node;
    uint32_t lru;
    unsigned type : 3;
    unsigned enc : 2;
    unsigned flags : 3;
    unsigned klen : 14;
    unsigned vlen : 10;
} gb_kv;

_Static_assert(sizeof(gb_kv) == 16, "gb_kv header must stay 16 bytes");
_Static_assert(GB_TYPE_COUNT <= 8, "gb_kv's type field has 3 bits");
_Static_assert(GB_INLINE_MAX < 1024, "gb_kv's vlen field has 10 bits");

/* The expiry field of a VOLATILE record. */
typedef struct gb_kv_expiry {
    int64_t at_ms;
    uint32_t vindex;
    uint32_t unused;
} gb_kv_expiry;

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

/* The optional fields' sizes come straight from the flag bits (16 bytes of
 * expiry for 0x01, 16 of slot links for 0x04): no branch on the hot path. */
_Static_assert(GB_KV_VOLATILE << 4 == sizeof(gb_kv_expiry) && GB_KV_SLOT_LINKED << 2 == sizeof(gb_kv_slot_link),
               "gb_kv_key_offset derives field sizes from the flag bits");

/* The header and optional fields of a record with these flags and key length. */
static inline size_t gb_kv_fields_size(unsigned flags, size_t keylen)
{
    return sizeof(gb_kv) + ((flags & GB_KV_VOLATILE) << 4) + ((flags & GB_KV_SLOT_LINKED) << 2) +
           ((size_t)(keylen >= GB_KV_KLEN_LONG) << 3);
}

/* klen never exceeds GB_KV_KLEN_LONG, and equals it exactly when the
 * long-length field is present. */
static inline size_t gb_kv_key_offset(const gb_kv *kv) { return gb_kv_fields_size(kv->flags, kv->klen); }

static inline gb_kv_expiry *gb_kv_expiry_of(gb_kv *kv) { return (gb_kv_expiry *)(kv + 1); }

static inline gb_kv_slot_link *gb_kv_slot_link_of(gb_kv *kv)
{
    return (gb_kv_slot_link *)((char *)kv + sizeof(gb_kv) + ((kv->flags & GB_KV_VOLATILE) << 4));
}

static inline size_t gb_kv_keylen(const gb_kv *kv)
{
    if (GB_LIKELY(kv->klen != GB_KV_KLEN_LONG))
        return kv->klen;
    uint64_t n;
    memcpy(&n, (const char *)kv + gb_kv_key_offset(kv) - sizeof n, sizeof n);
    return (size_t)n;
}

static inline const char *gb_kv_key_ptr(const gb_kv *kv) { return (const char *)kv + gb_kv_key_offset(kv); }

static inline gb_slice gb_kv_key(const gb_kv *kv) { return gb_slice_make(gb_kv_key_ptr(kv), gb_kv_keylen(kv)); }

static inline int64_t gb_kv_expire(const gb_kv *kv) { return ((const gb_kv_expiry *)(kv + 1))->at_ms; }

/* Whether kv's deadline has passed at now_ms. A key lives through the
 * millisecond of its deadline and is gone after it, as Redis's keyIsExpired
 * (now > when): in that millisecond PTTL reads 0, not -2. A deadline a
 * command gives is judged differently (gb_db_already_expired: when <= now). */
static inline bool gb_kv_expired_at(const gb_kv *kv, int64_t now_ms)
{
    return gb_kv_volatile(kv) && gb_kv_expire(kv) < now_ms;
}

/* Where the key ends, from the record's start: an embedded string's bytes
 * begin there. Every field before the key is a multiple of 8 bytes, so the
 * key's end is as aligned as its length, whatever the flags. */
static inline size_t gb_kv_key_end(const gb_kv *kv) { return gb_kv_key_offset(kv) + gb_kv_keylen(kv); }

/* The value word of an INT, RAW or OBJ record: the first 8-aligned word at
 * or after the key's end. Aligned so that a pointer in it is where leak
 * checkers (LeakSanitizer, valgrind) and debuggers look for pointers. */
static inline size_t gb_kv_word_offset(size_t key_end) { return (key_end + 7) & ~(size_t)7; }
static inline char *gb_kv_word(const gb_kv *kv) { return (char *)kv + gb_kv_word_offset(gb_kv_key_end(kv)); }

/* Bytes a record needs for its fields, key and value: room for the value
 * word always, so that any string record takes an int or a heap string
 * where it stands, and for embstr_len bytes embedded (0 for other values). */
static inline size_t gb_kv_record_size(size_t key_end, size_t embstr_len)
{
    return GB_MAX(key_end + embstr_len, gb_kv_word_offset(key_end) + 8);
}

/* GB_ENC_RAW's gb_str, GB_ENC_OBJ's object. */
static inline void *gb_kv_ptr(const gb_kv *kv)
{
    void *p;
    memcpy(&p, gb_kv_word(kv), sizeof p);
    return p;
}

static inline void gb_kv_set_ptr(gb_kv *kv, const void *p) { memcpy(gb_kv_word(kv), &p, sizeof p); }

/* What an INT record's vlen says: whether redis-server would hold this
 * value in one of its shared integer objects, which OBJECT REFCOUNT and
 * DEBUG OBJECT report as 2147483647 for integers 0..9999
 * (gb_kv_refcount). Redis shares an integer it makes from an argument or
 * a result (SET, INCR, loading) while no LRU or LFU maxmemory policy is
 * in force, and never COPY's duplicate; a renamed or moved value keeps
 * what it was. Nothing is shared here: the mark only keeps that reply. */
#define GB_KV_INT_SHARED 0u
#define GB_KV_INT_PRIVATE 1u
#define GB_SHARED_INTEGERS 10000 /* Redis's OBJ_SHARED_INTEGERS */
#define GB_SHARED_REFCOUNT 2147483647 /* Redis's OBJ_SHARED_REFCOUNT (INT_MAX) */

/* GB_ENC_INT's integer. */
static inline int64_t gb_kv_int(const gb_kv *kv)
{
    int64_t i;
    memcpy(&i, gb_kv_word(kv), sizeof i);
    return i;
}

static inline void gb_kv_set_int(gb_kv *kv, int64_t i) { memcpy(gb_kv_word(kv), &i, sizeof i); }

/* OBJECT REFCOUNT's reply: redis-server's for a shared integer, else 1. */
static inline int64_t gb_kv_refcount(const gb_kv *kv)
{
    if (kv->type != GB_TYPE_STRING || kv->enc != GB_ENC_INT || kv->vlen != GB_KV_INT_SHARED)
        return 1;
    int64_t v = gb_kv_int(kv);
    return v >= 0 && v < GB_SHARED_INTEGERS ? GB_SHARED_REFCOUNT : 1;
}

/* GB_ENC_EMBSTR's bytes. */
static inline gb_slice gb_kv_embstr(const gb_kv *kv)
{
    return gb_slice_make((const char *)kv + gb_kv_key_end(kv), kv->vlen);
}

/* Stores an embedded string; the record has room for it. */
static inline void gb_kv_set_embstr(gb_kv *kv, gb_slice val)
{
    kv->vlen = (unsigned)val.len;
    if (val.len)
        memcpy((char *)kv + gb_kv_key_end(kv), val.ptr, val.len);
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
