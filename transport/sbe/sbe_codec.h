/*
 * The SBE codec: Goblin Core's binary protocol (transport/sbe/goblin.xml) as
 * hand-written C11, shared by the server (sbe_server.c) and the client
 * library (sbe_client.c). It knows nothing of the engine: the only project
 * headers it uses are include/goblin/slice.h (gb_slice) and error.h.
 *
 * Wire rules (SBE 1.0, little-endian, docs/sbe.md):
 *
 *   message   = header, root block (header.blockLength bytes), groups, var-data
 *   header    = u16 blockLength | u16 templateId | u16 schemaId | u16 version   (8 bytes)
 *   group     = dimension, numInGroup entries
 *     groupSizeEncoding       u16 blockLength | u16 numInGroup  (4 bytes; typed requests)
 *     largeGroupSizeEncoding  u16 blockLength | u32 numInGroup  (6 bytes; Generic, ArrayReply)
 *   entry     = entry block (dimension.blockLength bytes), then the entry's var-data
 *   var-data  = u32 length | length bytes
 *
 * A decoder uses the blockLength it finds (never its own constant) to step
 * over a block, so a newer peer's appended fields are skipped; a block
 * shorter than this version's is malformed. Bytes after the last var-data a
 * decoder knows are ignored (a newer peer's appended var-data).
 *
 * Encoders write into a caller buffer of `cap` bytes and return the message
 * length, or 0 when it does not fit. Passed buf == NULL they write nothing
 * and return the length the message needs (so a ring client can reserve an
 * exact record first and encode straight into it).
 *
 * Decoders take untrusted bytes: every length and count is checked against
 * the bytes that remain before it is used, and nothing outside [msg, msg+len)
 * is ever read.
 */
#ifndef GB_TRANSPORT_SBE_CODEC_H
#define GB_TRANSPORT_SBE_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "goblin/error.h" /* GB_E* codes */
#include "goblin/slice.h"
#include "goblin/sbe_schema.h" /* schema id/version, template ids, flag bits, reply kinds */

/* ---- schema ---------------------------------------------------------------------- */

/* The numbers every peer must agree on are in include/goblin/sbe_schema.h
 * (public: the client library and other-language clients use the same ones).
 * What follows is how this codec lays them out. */

#define GB_SBE_HEADER_SIZE 8u
#define GB_SBE_HEADER_BLOCK_LENGTH_OFFSET 0u
#define GB_SBE_HEADER_TEMPLATE_ID_OFFSET 2u
#define GB_SBE_HEADER_SCHEMA_ID_OFFSET 4u
#define GB_SBE_HEADER_VERSION_OFFSET 6u

#define GB_SBE_GROUP_DIM_SIZE 4u       /* groupSizeEncoding: u16 blockLength @0, u16 numInGroup @2 */
#define GB_SBE_LARGE_GROUP_DIM_SIZE 6u /* largeGroupSizeEncoding: u16 blockLength @0, u32 numInGroup @2 */
#define GB_SBE_GROUP_MAX 65535u
#define GB_SBE_LARGE_GROUP_MAX UINT32_MAX
#define GB_SBE_VAR_LEN_SIZE 4u         /* varDataEncoding: u32 length @0, bytes @4 */
#define GB_SBE_VAR_MAX 1073741824u     /* varDataEncoding length maxValue (1 GiB) */

/* ---- fixed blocks, field by field -------------------------------------------------
 * Offsets are from the start of the block (right after the header for a root
 * block, right after the dimension or the previous entry for a group entry).
 * The packed structs mirror the blocks byte for byte; the _Static_asserts
 * pin them, and test_sbe_schema.c checks the same constants against the XML.
 * Blocks are not padded: SBE allows unaligned fields and the codec only ever
 * reads them with memcpy. */

/* Set (3): expiry int64 @0, flags SetFlags @8 */
#define GB_SBE_SET_BLOCK_LENGTH 9u
#define GB_SBE_SET_EXPIRY_OFFSET 0u
#define GB_SBE_SET_FLAGS_OFFSET 8u
/* Incr (5): delta int64 @0 */
#define GB_SBE_INCR_BLOCK_LENGTH 8u
#define GB_SBE_INCR_DELTA_OFFSET 0u
/* ZAdd (8): flags ZAddFlags @0; members entry: score double @0 */
#define GB_SBE_ZADD_BLOCK_LENGTH 1u
#define GB_SBE_ZADD_FLAGS_OFFSET 0u
#define GB_SBE_ZADD_MEMBER_BLOCK_LENGTH 8u
#define GB_SBE_ZADD_MEMBER_SCORE_OFFSET 0u
/* BLPop (12): timeout double @0 */
#define GB_SBE_BLPOP_BLOCK_LENGTH 8u
#define GB_SBE_BLPOP_TIMEOUT_OFFSET 0u
/* XAdd (15): idMs u64 @0, idSeq u64 @8, maxLen i64 @16, minIdMs u64 @24,
 * minIdSeq u64 @32, limit i64 @40, flags XAddFlags @48; fields entry: empty
 * block, var-data field, value; then var-data key */
#define GB_SBE_XADD_BLOCK_LENGTH 49u
#define GB_SBE_XADD_ID_MS_OFFSET 0u
#define GB_SBE_XADD_ID_SEQ_OFFSET 8u
#define GB_SBE_XADD_MAXLEN_OFFSET 16u
#define GB_SBE_XADD_MINID_MS_OFFSET 24u
#define GB_SBE_XADD_MINID_SEQ_OFFSET 32u
#define GB_SBE_XADD_LIMIT_OFFSET 40u
#define GB_SBE_XADD_FLAGS_OFFSET 48u
/* IntegerReply (103) / DoubleReply (104): value @0 */
#define GB_SBE_INTEGER_REPLY_BLOCK_LENGTH 8u
#define GB_SBE_INTEGER_REPLY_VALUE_OFFSET 0u
#define GB_SBE_DOUBLE_REPLY_BLOCK_LENGTH 8u
#define GB_SBE_DOUBLE_REPLY_VALUE_OFFSET 0u
/* ArrayReply (107): length int64 @0; items entry: integer int64 @0, dbl double @8, kind ReplyKind @16 */
#define GB_SBE_ARRAY_REPLY_BLOCK_LENGTH 8u
#define GB_SBE_ARRAY_REPLY_LENGTH_OFFSET 0u
#define GB_SBE_ARRAY_ITEM_BLOCK_LENGTH 17u
#define GB_SBE_ARRAY_ITEM_INTEGER_OFFSET 0u
#define GB_SBE_ARRAY_ITEM_DBL_OFFSET 8u
#define GB_SBE_ARRAY_ITEM_KIND_OFFSET 16u

/* Message (108): kind MessageKind @0; var-data channel, pattern, payload */
#define GB_SBE_MESSAGE_BLOCK_LENGTH 1u
#define GB_SBE_MESSAGE_KIND_OFFSET 0u
/* Subscription (109): count int64 @0, kind SubscriptionKind @8, nameIsNull BooleanType @9; var-data name */
#define GB_SBE_SUBSCRIPTION_BLOCK_LENGTH 10u
#define GB_SBE_SUBSCRIPTION_COUNT_OFFSET 0u
#define GB_SBE_SUBSCRIPTION_KIND_OFFSET 8u
#define GB_SBE_SUBSCRIPTION_NAME_NULL_OFFSET 9u

typedef struct __attribute__((packed)) gb_sbe_wire_header {
    uint16_t block_length;
    uint16_t template_id;
    uint16_t schema_id;
    uint16_t version;
} gb_sbe_wire_header;
typedef struct __attribute__((packed)) gb_sbe_wire_set {
    int64_t expiry;
    uint8_t flags;
} gb_sbe_wire_set;
typedef struct __attribute__((packed)) gb_sbe_wire_incr {
    int64_t delta;
} gb_sbe_wire_incr;
typedef struct __attribute__((packed)) gb_sbe_wire_zadd {
    uint8_t flags;
} gb_sbe_wire_zadd;
typedef struct __attribute__((packed)) gb_sbe_wire_zadd_member {
    double score;
} gb_sbe_wire_zadd_member;
typedef struct __attribute__((packed)) gb_sbe_wire_blpop {
    double timeout;
} gb_sbe_wire_blpop;
typedef struct __attribute__((packed)) gb_sbe_wire_xadd {
    uint64_t id_ms;
    uint64_t id_seq;
    int64_t maxlen;
    uint64_t minid_ms;
    uint64_t minid_seq;
    int64_t limit;
    uint8_t flags;
} gb_sbe_wire_xadd;
typedef struct __attribute__((packed)) gb_sbe_wire_array_item {
    int64_t integer;
    double dbl;
    uint8_t kind;
} gb_sbe_wire_array_item;
typedef struct __attribute__((packed)) gb_sbe_wire_group_dim {
    uint16_t block_length;
    uint16_t num_in_group;
} gb_sbe_wire_group_dim;
typedef struct __attribute__((packed)) gb_sbe_wire_large_group_dim {
    uint16_t block_length;
    uint32_t num_in_group;
} gb_sbe_wire_large_group_dim;

typedef struct __attribute__((packed)) gb_sbe_wire_subscription {
    int64_t count;
    uint8_t kind;
    uint8_t name_is_null;
} gb_sbe_wire_subscription;
_Static_assert(sizeof(gb_sbe_wire_subscription) == GB_SBE_SUBSCRIPTION_BLOCK_LENGTH, "Subscription block");
_Static_assert(offsetof(gb_sbe_wire_subscription, kind) == GB_SBE_SUBSCRIPTION_KIND_OFFSET, "Subscription.kind");
_Static_assert(offsetof(gb_sbe_wire_subscription, name_is_null) == GB_SBE_SUBSCRIPTION_NAME_NULL_OFFSET,
               "Subscription.nameIsNull");
_Static_assert(sizeof(gb_sbe_wire_header) == GB_SBE_HEADER_SIZE, "messageHeader is 8 bytes");
_Static_assert(offsetof(gb_sbe_wire_header, template_id) == GB_SBE_HEADER_TEMPLATE_ID_OFFSET, "templateId @2");
_Static_assert(offsetof(gb_sbe_wire_header, schema_id) == GB_SBE_HEADER_SCHEMA_ID_OFFSET, "schemaId @4");
_Static_assert(offsetof(gb_sbe_wire_header, version) == GB_SBE_HEADER_VERSION_OFFSET, "version @6");
_Static_assert(sizeof(gb_sbe_wire_group_dim) == GB_SBE_GROUP_DIM_SIZE, "groupSizeEncoding is 4 bytes");
_Static_assert(sizeof(gb_sbe_wire_large_group_dim) == GB_SBE_LARGE_GROUP_DIM_SIZE, "largeGroupSizeEncoding is 6 bytes");
_Static_assert(sizeof(gb_sbe_wire_set) == GB_SBE_SET_BLOCK_LENGTH, "Set block");
_Static_assert(offsetof(gb_sbe_wire_set, expiry) == GB_SBE_SET_EXPIRY_OFFSET, "Set.expiry");
_Static_assert(offsetof(gb_sbe_wire_set, flags) == GB_SBE_SET_FLAGS_OFFSET, "Set.flags");
_Static_assert(sizeof(gb_sbe_wire_incr) == GB_SBE_INCR_BLOCK_LENGTH, "Incr block");
_Static_assert(offsetof(gb_sbe_wire_incr, delta) == GB_SBE_INCR_DELTA_OFFSET, "Incr.delta");
_Static_assert(sizeof(gb_sbe_wire_zadd) == GB_SBE_ZADD_BLOCK_LENGTH, "ZAdd block");
_Static_assert(offsetof(gb_sbe_wire_zadd, flags) == GB_SBE_ZADD_FLAGS_OFFSET, "ZAdd.flags");
_Static_assert(sizeof(gb_sbe_wire_zadd_member) == GB_SBE_ZADD_MEMBER_BLOCK_LENGTH, "ZAdd.members block");
_Static_assert(offsetof(gb_sbe_wire_zadd_member, score) == GB_SBE_ZADD_MEMBER_SCORE_OFFSET, "ZAdd.members.score");
_Static_assert(sizeof(gb_sbe_wire_blpop) == GB_SBE_BLPOP_BLOCK_LENGTH, "BLPop block");
_Static_assert(offsetof(gb_sbe_wire_blpop, timeout) == GB_SBE_BLPOP_TIMEOUT_OFFSET, "BLPop.timeout");
_Static_assert(sizeof(gb_sbe_wire_xadd) == GB_SBE_XADD_BLOCK_LENGTH, "XAdd block");
_Static_assert(offsetof(gb_sbe_wire_xadd, id_seq) == GB_SBE_XADD_ID_SEQ_OFFSET, "XAdd.idSeq");
_Static_assert(offsetof(gb_sbe_wire_xadd, maxlen) == GB_SBE_XADD_MAXLEN_OFFSET, "XAdd.maxLen");
_Static_assert(offsetof(gb_sbe_wire_xadd, minid_ms) == GB_SBE_XADD_MINID_MS_OFFSET, "XAdd.minIdMs");
_Static_assert(offsetof(gb_sbe_wire_xadd, minid_seq) == GB_SBE_XADD_MINID_SEQ_OFFSET, "XAdd.minIdSeq");
_Static_assert(offsetof(gb_sbe_wire_xadd, limit) == GB_SBE_XADD_LIMIT_OFFSET, "XAdd.limit");
_Static_assert(offsetof(gb_sbe_wire_xadd, flags) == GB_SBE_XADD_FLAGS_OFFSET, "XAdd.flags");
_Static_assert(sizeof(gb_sbe_wire_array_item) == GB_SBE_ARRAY_ITEM_BLOCK_LENGTH, "ArrayReply.items block");
_Static_assert(offsetof(gb_sbe_wire_array_item, integer) == GB_SBE_ARRAY_ITEM_INTEGER_OFFSET, "items.integer");
_Static_assert(offsetof(gb_sbe_wire_array_item, dbl) == GB_SBE_ARRAY_ITEM_DBL_OFFSET, "items.dbl");
_Static_assert(offsetof(gb_sbe_wire_array_item, kind) == GB_SBE_ARRAY_ITEM_KIND_OFFSET, "items.kind");
_Static_assert(sizeof(double) == 8 && sizeof(int64_t) == 8, "SBE double is IEEE-754 binary64");

/* ---- little-endian primitives -----------------------------------------------------
 * memcpy keeps every access alignment-safe (blocks are unpadded); on the
 * little-endian hosts the server runs on it compiles to a plain load/store. */

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define GB_SBE_LE16(x) __builtin_bswap16(x)
#define GB_SBE_LE32(x) __builtin_bswap32(x)
#define GB_SBE_LE64(x) __builtin_bswap64(x)
#else
#define GB_SBE_LE16(x) (x)
#define GB_SBE_LE32(x) (x)
#define GB_SBE_LE64(x) (x)
#endif

static inline uint16_t gb_sbe_get_u16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return GB_SBE_LE16(v);
}
static inline uint32_t gb_sbe_get_u32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return GB_SBE_LE32(v);
}
static inline uint64_t gb_sbe_get_u64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return GB_SBE_LE64(v);
}
static inline int64_t gb_sbe_get_i64(const uint8_t *p) { return (int64_t)gb_sbe_get_u64(p); }
static inline double gb_sbe_get_f64(const uint8_t *p)
{
    uint64_t u = gb_sbe_get_u64(p);
    double d;
    memcpy(&d, &u, 8);
    return d;
}
static inline void gb_sbe_put_u16(uint8_t *p, uint16_t v)
{
    v = GB_SBE_LE16(v);
    memcpy(p, &v, 2);
}
static inline void gb_sbe_put_u32(uint8_t *p, uint32_t v)
{
    v = GB_SBE_LE32(v);
    memcpy(p, &v, 4);
}
static inline void gb_sbe_put_u64(uint8_t *p, uint64_t v)
{
    v = GB_SBE_LE64(v);
    memcpy(p, &v, 8);
}
static inline void gb_sbe_put_i64(uint8_t *p, int64_t v) { gb_sbe_put_u64(p, (uint64_t)v); }
static inline void gb_sbe_put_f64(uint8_t *p, double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    gb_sbe_put_u64(p, u);
}

/* ---- header ---------------------------------------------------------------------- */

typedef struct gb_sbe_header {
    uint16_t block_length;
    uint16_t template_id;
    uint16_t schema_id;
    uint16_t version;
} gb_sbe_header;

/* Reads the header; false when len < 8. */
static inline bool gb_sbe_read_header(const uint8_t *msg, size_t len, gb_sbe_header *h)
{
    if (len < GB_SBE_HEADER_SIZE)
        return false;
    h->block_length = gb_sbe_get_u16(msg + GB_SBE_HEADER_BLOCK_LENGTH_OFFSET);
    h->template_id = gb_sbe_get_u16(msg + GB_SBE_HEADER_TEMPLATE_ID_OFFSET);
    h->schema_id = gb_sbe_get_u16(msg + GB_SBE_HEADER_SCHEMA_ID_OFFSET);
    h->version = gb_sbe_get_u16(msg + GB_SBE_HEADER_VERSION_OFFSET);
    return true;
}

/* Writes a header with this schema's id and version. */
static inline void gb_sbe_write_header(uint8_t *p, uint16_t block_length, uint16_t template_id)
{
    gb_sbe_put_u16(p + GB_SBE_HEADER_BLOCK_LENGTH_OFFSET, block_length);
    gb_sbe_put_u16(p + GB_SBE_HEADER_TEMPLATE_ID_OFFSET, template_id);
    gb_sbe_put_u16(p + GB_SBE_HEADER_SCHEMA_ID_OFFSET, (uint16_t)GB_SBE_SCHEMA_ID);
    gb_sbe_put_u16(p + GB_SBE_HEADER_VERSION_OFFSET, (uint16_t)GB_SBE_SCHEMA_VERSION);
}

/* The template id of a message, or 0 if it is too short or of another schema. */
static inline uint16_t gb_sbe_template_of(const uint8_t *msg, size_t len)
{
    gb_sbe_header h;
    if (!gb_sbe_read_header(msg, len, &h) || h.schema_id != GB_SBE_SCHEMA_ID)
        return 0;
    return h.template_id;
}

/* ---- bounded reading ------------------------------------------------------------- */

/* A read position in an untrusted message; every step checks the bytes left. */
typedef struct gb_sbe_cursor {
    const uint8_t *p;
    const uint8_t *end;
} gb_sbe_cursor;

static inline size_t gb_sbe_left(const gb_sbe_cursor *c) { return (size_t)(c->end - c->p); }

/* Takes n bytes (a block); false when fewer are left. */
static inline bool gb_sbe_take(gb_sbe_cursor *c, size_t n, const uint8_t **out)
{
    if (gb_sbe_left(c) < n)
        return false;
    *out = c->p;
    c->p += n;
    return true;
}

/* Reads one var-data field into a slice that borrows the message. */
static inline bool gb_sbe_take_var(gb_sbe_cursor *c, gb_slice *out)
{
    if (gb_sbe_left(c) < GB_SBE_VAR_LEN_SIZE)
        return false;
    uint32_t n = gb_sbe_get_u32(c->p);
    c->p += GB_SBE_VAR_LEN_SIZE;
    if (n > GB_SBE_VAR_MAX || gb_sbe_left(c) < n)
        return false;
    out->ptr = (const char *)c->p;
    out->len = n;
    c->p += n;
    return true;
}

typedef struct gb_sbe_group {
    uint16_t block_length; /* the sender's entry block length (>= ours) */
    uint32_t count;
} gb_sbe_group;

/* Reads a group dimension (large: the 6-byte encoding). Checks that the
 * sender's entry block is at least min_block bytes and that count entries of
 * at least min_block + nvar length prefixes each fit in what is left, so a
 * forged count is rejected before anyone sizes an array by it. */
static inline bool gb_sbe_take_group(gb_sbe_cursor *c, bool large, size_t min_block, size_t nvar, gb_sbe_group *g)
{
    size_t dim = large ? GB_SBE_LARGE_GROUP_DIM_SIZE : GB_SBE_GROUP_DIM_SIZE;
    if (gb_sbe_left(c) < dim)
        return false;
    g->block_length = gb_sbe_get_u16(c->p);
    g->count = large ? gb_sbe_get_u32(c->p + 2) : gb_sbe_get_u16(c->p + 2);
    c->p += dim;
    if (g->block_length < min_block)
        return false;
    uint64_t per = (uint64_t)g->block_length + (uint64_t)nvar * GB_SBE_VAR_LEN_SIZE;
    return (uint64_t)g->count * per <= gb_sbe_left(c);
}

/* ---- bounded writing ------------------------------------------------------------- */

static inline uint8_t *gb_sbe_put_var(uint8_t *p, const void *bytes, size_t n)
{
    gb_sbe_put_u32(p, (uint32_t)n);
    if (n)
        memcpy(p + GB_SBE_VAR_LEN_SIZE, bytes, n);
    return p + GB_SBE_VAR_LEN_SIZE + n;
}

/* ---- requests: encoders (client side) ------------------------------------------- */

size_t gb_sbe_encode_ping(uint8_t *buf, size_t cap);
size_t gb_sbe_encode_get(uint8_t *buf, size_t cap, gb_slice key);
/* flags: GB_SBE_SET_*; expiry in the unit the expiry flag names (ignored without one). */
size_t gb_sbe_encode_set(uint8_t *buf, size_t cap, gb_slice key, gb_slice value, unsigned flags, int64_t expiry);
/* n <= GB_SBE_GROUP_MAX (else 0: send a Generic DEL) */
size_t gb_sbe_encode_del(uint8_t *buf, size_t cap, size_t n, const gb_slice *keys);
size_t gb_sbe_encode_incr(uint8_t *buf, size_t cap, gb_slice key, int64_t delta);
size_t gb_sbe_encode_hset(uint8_t *buf, size_t cap, gb_slice key, size_t n, const gb_slice *fields,
                          const gb_slice *values);
size_t gb_sbe_encode_hget(uint8_t *buf, size_t cap, gb_slice key, gb_slice field);
/* flags: GB_SBE_ZADD_* */
size_t gb_sbe_encode_zadd(uint8_t *buf, size_t cap, gb_slice key, unsigned flags, size_t n, const double *scores,
                          const gb_slice *members);
size_t gb_sbe_encode_zscore(uint8_t *buf, size_t cap, gb_slice key, gb_slice member);
size_t gb_sbe_encode_lpush(uint8_t *buf, size_t cap, gb_slice key, size_t n, const gb_slice *values);
size_t gb_sbe_encode_rpop(uint8_t *buf, size_t cap, gb_slice key);
size_t gb_sbe_encode_blpop(uint8_t *buf, size_t cap, size_t n, const gb_slice *keys, double timeout_s);
/* PUBLISH channel message */
size_t gb_sbe_encode_publish(uint8_t *buf, size_t cap, gb_slice channel, gb_slice message);
/* XAdd's root block: flags GB_SBE_XADD_* say which of the others count. */
typedef struct gb_sbe_xadd_opts {
    unsigned flags;
    uint64_t id_ms, id_seq;       /* the ID, unless AUTO_ID (id_seq: unless AUTO_SEQ) */
    int64_t maxlen;               /* MAXLEN */
    uint64_t minid_ms, minid_seq; /* MINID */
    int64_t limit;                /* LIMIT */
} gb_sbe_xadd_opts;
/* XADD key ... with n field/value pairs (n <= GB_SBE_GROUP_MAX, flags one
 * byte; else 0: send a Generic XADD). */
size_t gb_sbe_encode_xadd(uint8_t *buf, size_t cap, gb_slice key, const gb_sbe_xadd_opts *o, size_t n,
                          const gb_slice *fields, const gb_slice *values);
/* argv[0] is the command name. */
size_t gb_sbe_encode_generic(uint8_t *buf, size_t cap, size_t argc, const gb_slice *argv);

/* ---- requests: decoders (server side) ------------------------------------------- */

/* Arrays for a request's group entries, reused from request to request (the
 * server keeps one per client: no allocation once it has grown).
 * realloc_fn/free_fn: the allocator they grow with, NULL for the C
 * library's (this codec is also built into the client library, which has
 * no engine allocator); the server sets its accounted, fallible one. They
 * survive gb_sbe_scratch_free. */
typedef struct gb_sbe_scratch {
    gb_slice *a;
    gb_slice *b;
    double *d;
    size_t cap;
    void *(*realloc_fn)(void *p, size_t n); /* NULL on failure, p kept */
    void (*free_fn)(void *p);
} gb_sbe_scratch;

/* Makes room for n entries; GB_ENOMEM. */
int gb_sbe_scratch_reserve(gb_sbe_scratch *s, size_t n);
/* Frees the arrays (keeps the allocator). */
void gb_sbe_scratch_free(gb_sbe_scratch *s);

/* A decoded request. Slices borrow the message bytes. Group entries are in
 * the scratch arrays; a[-1] and a[n] are valid spare slots (for the server
 * to turn the keys into an argv in place: name first, timeout last). */
typedef struct gb_sbe_request {
    gb_sbe_header hdr;
    int64_t i64;    /* Set.expiry, Incr.delta */
    double f64;     /* BLPop.timeout */
    unsigned flags; /* Set.flags, ZAdd.flags, XAdd.flags */
    gb_sbe_xadd_opts xadd; /* XAdd's root block */
    gb_slice key;   /* every keyed template; Publish.channel */
    gb_slice arg;   /* Set.value, HGet.field, ZScore.member, Publish.message */
    size_t n;       /* entries of the template's group */
    gb_slice *a;    /* Del/BLPop keys, LPush values, HSet fields, ZAdd members, Generic args;
                     * XAdd: field, value, field, value ... (2n slices, a[2n] spare) */
    gb_slice *b;    /* HSet values */
    double *d;      /* ZAdd scores */
} gb_sbe_request;

/* Decodes one request template's body (hdr already read, schema checked).
 * Returns 0, or GB_EPARSE with *why naming what is wrong (a static string),
 * or GB_ENOMEM. */
typedef int gb_sbe_request_decoder(const uint8_t *msg, size_t len, gb_sbe_request *req, gb_sbe_scratch *s,
                                   const char **why);

/* Indexed by template id (1..GB_SBE_REQUEST_MAX); NULL elsewhere. */
extern gb_sbe_request_decoder *const gb_sbe_request_decoders[GB_SBE_REQUEST_MAX + 1];

/* Reads the header and dispatches to the template's decoder.
 * GB_EPROTO: shorter than a header or another schema id (*why set);
 * GB_ENOENT: not a request template; else as the decoders. */
int gb_sbe_decode_request(const uint8_t *msg, size_t len, gb_sbe_request *req, gb_sbe_scratch *s, const char **why);

/* ---- replies: encoders (server side) -------------------------------------------- */

size_t gb_sbe_encode_status_reply(uint8_t *buf, size_t cap, const char *s, size_t len);
size_t gb_sbe_encode_error_reply(uint8_t *buf, size_t cap, const char *s, size_t len);
size_t gb_sbe_encode_integer_reply(uint8_t *buf, size_t cap, int64_t v);
size_t gb_sbe_encode_double_reply(uint8_t *buf, size_t cap, double v);
size_t gb_sbe_encode_bulk_reply(uint8_t *buf, size_t cap, const char *s, size_t len);
size_t gb_sbe_encode_nil_reply(uint8_t *buf, size_t cap);

/* One node of an array reply, pre-order. Bytes live at base + off (the
 * caller's arena), so the node array stays valid when the arena moves. */
typedef struct gb_sbe_reply_item {
    int64_t integer; /* integer value; array: element count (-1 null) */
    double dbl;
    size_t off;
    size_t len;
    uint8_t kind; /* enum gb_sbe_kind */
} gb_sbe_reply_item;

/* The size an ArrayReply of n items carrying `bytes` bytes of var-data in all
 * needs (SIZE_MAX if it cannot be encoded at all: n or a length too large). */
size_t gb_sbe_array_reply_size(size_t n, size_t bytes);
/* An ArrayReply: `length` top-level elements (-1: null array), then the
 * items of the whole tree in pre-order. */
size_t gb_sbe_encode_array_reply(uint8_t *buf, size_t cap, int64_t length, size_t n, const gb_sbe_reply_item *items,
                                 const char *base);

/* ---- pushes: encoders (server side), decoder (client side) -------------------- */

/* Message: kind GB_SBE_MSG_*; pattern empty unless pmessage. */
size_t gb_sbe_encode_message(uint8_t *buf, size_t cap, unsigned kind, gb_slice channel, gb_slice pattern,
                             gb_slice payload);
/* Subscription: kind GB_SBE_SUB_*; name NULL: Redis's nil name. */
size_t gb_sbe_encode_subscription(uint8_t *buf, size_t cap, unsigned kind, const gb_slice *name, int64_t count);

/* A decoded push; slices borrow the message. */
typedef struct gb_sbe_push_view {
    uint16_t template_id; /* GB_SBE_MESSAGE or GB_SBE_SUBSCRIPTION */
    uint8_t kind;         /* GB_SBE_MSG_* or GB_SBE_SUB_* */
    bool name_is_null;    /* Subscription: no name */
    int64_t count;        /* Subscription */
    gb_slice channel;     /* Message: the channel; Subscription: the name */
    gb_slice pattern;     /* Message: the pattern (pmessage), else empty */
    gb_slice payload;     /* Message */
} gb_sbe_push_view;

/* Decodes a Message or Subscription (untrusted bytes). 0; GB_ENOENT when
 * msg is another template; GB_EPROTO when malformed (a short block, a
 * length past the end, a kind the schema does not have). */
int gb_sbe_decode_push(const uint8_t *msg, size_t len, gb_sbe_push_view *v);

/* ---- metadata (what test_sbe_schema.c compares with goblin.xml) ---------------- */

typedef struct gb_sbe_field_desc {
    const char *name;
    const char *type;      /* the XML type: int64, double, SetFlags, ... */
    const char *primitive; /* its primitive encoding: int64, double, uint8 */
    unsigned offset;
    unsigned size;
} gb_sbe_field_desc;

typedef struct gb_sbe_group_desc {
    const char *name;
    const char *dimension; /* groupSizeEncoding or largeGroupSizeEncoding */
    unsigned block_length;
    const gb_sbe_field_desc *fields;
    size_t nfields;
    const char *const *data; /* var-data names, in order */
    size_t ndata;
} gb_sbe_group_desc;

typedef struct gb_sbe_message_desc {
    const char *name;
    unsigned id;
    unsigned block_length;
    const gb_sbe_field_desc *fields;
    size_t nfields;
    const gb_sbe_group_desc *groups;
    size_t ngroups;
    const char *const *data;
    size_t ndata;
} gb_sbe_message_desc;

extern const gb_sbe_message_desc gb_sbe_messages[];
extern const size_t gb_sbe_message_count;

/* The template's name ("ZAdd") or NULL. */
const char *gb_sbe_template_name(unsigned id);

#endif
