/*
 * HyperLogLog's typed key operations (engine/types/t_hll.h) on string
 * values (engine/core/keyspace/db.h), the representation in engine/base/hll.h.
 */
#include "engine/types/t_hll.h"

#include "engine/base/hll.h"
#include "engine/core/engine.h"

/* Redis's isHLLObjectOrReply for a key that exists. */
static gb_hll_status check_hll(const gb_kv *kv)
{
    if (kv->type != GB_TYPE_STRING)
        return GB_HLL_WRONGTYPE;
    if (kv->enc == GB_ENC_INT) /* never a HLL: Redis refuses a non-sds value */
        return GB_HLL_NOT_HLL;
    gb_slice v = gb_kv_string(kv, NULL);
    return gb_hll_valid_header((const uint8_t *)v.ptr, v.len) ? GB_HLL_OK : GB_HLL_NOT_HLL;
}

static inline uint8_t *bytes(gb_str *s) { return (uint8_t *)s->data; }

/* The value as a heap buffer of its own (Redis's dbUnshareStringValue,
 * which makes OBJECT ENCODING "raw"). */
static gb_str *unshare(gb_db *db, gb_kv *kv)
{
    if (kv->enc == GB_ENC_RAW) {
        gb_str *s = gb_kv_ptr(kv);
        return gb_db_string_writable(db, kv, s->len);
    }
    return gb_db_string_writable(db, kv, 0);
}

/* A new key holding an empty sparse HLL, its value raw as Redis's
 * createHLLObject makes it. */
static gb_str *create_hll(gb_db *db, gb_slice key, gb_kv **kvp)
{
    uint8_t empty[GB_HLL_SPARSE_EMPTY_SIZE];
    gb_hll_init_sparse(empty);
    *kvp = gb_db_add_string(db, key, gb_slice_make((const char *)empty, sizeof empty));
    return gb_db_string_writable(db, *kvp, sizeof empty);
}

/* Redis's hllSparseToDense on the key's value (a no-op for a dense one):
 * the header kept, the registers expanded. False for an invalid sparse
 * string, left as it was. */
static bool make_dense(gb_db *db, gb_kv *kv, gb_str **sp)
{
    gb_str *s = *sp;
    if (gb_hll_encoding(bytes(s)) == GB_HLL_DENSE)
        return true;
    uint8_t raw[GB_HLL_REGISTERS] = {0};
    if (!gb_hll_merge_raw(bytes(s), s->len, raw))
        return false;
    s = gb_db_string_sized(db, kv, GB_HLL_DENSE_SIZE);
    s->data[4] = GB_HLL_DENSE;
    gb_hll_dense_pack(raw, bytes(s) + GB_HLL_HDR_SIZE);
    s->len = GB_HLL_DENSE_SIZE;
    *sp = s;
    return true;
}

/* Redis's hllSparseSet / hllDenseSet by encoding: 1 changed, 0 not, -1
 * corrupt. A sparse value grows in place or goes dense. */
static int set_register(gb_db *db, gb_kv *kv, gb_str **sp, uint32_t index, uint8_t count)
{
    gb_str *s = *sp;
    if (gb_hll_encoding(bytes(s)) == GB_HLL_SPARSE) {
        if (s->cap < s->len + GB_HLL_SPARSE_SLACK)
            *sp = s = gb_db_string_writable(db, kv, s->len + GB_HLL_SPARSE_SLACK);
        size_t max_bytes = (size_t)db->eng->cfg.hll_sparse_max_bytes;
        gb_hll_set_result r = gb_hll_sparse_set(bytes(s), &s->len, index, count, max_bytes);
        if (r != GB_HLL_SET_PROMOTE)
            return (int)r;
        if (!make_dense(db, kv, sp))
            return -1;
        s = *sp;
    }
    return gb_hll_dense_set(bytes(s) + GB_HLL_HDR_SIZE, index, count);
}

gb_hll_status gb_hll_add(gb_db *db, gb_slice key, const gb_slice *eles, size_t n, bool *updated)
{
    gb_kv *kv = gb_db_lookup_write(db, key);
    gb_str *s;
    uint64_t changes = 0;
    *updated = false;
    if (!kv) {
        s = create_hll(db, key, &kv);
        changes++;
    } else {
        gb_hll_status st = check_hll(kv);
        if (st != GB_HLL_OK)
            return st;
        s = unshare(db, kv);
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t index;
        uint8_t count = gb_hll_pattern(eles[i].ptr, eles[i].len, &index);
        int r = set_register(db, kv, &s, index, count);
        if (r < 0)
            return GB_HLL_CORRUPT;
        changes += (uint64_t)r;
    }
    if (changes) {
        gb_hll_cache_invalidate(bytes(s));
        gb_engine_key_modified(db, key);
        db->eng->stats.dirty += changes - 1; /* Redis counts each register changed */
        *updated = true;
    }
    return GB_HLL_OK;
}

gb_hll_status gb_hll_count_key(gb_db *db, gb_slice key, uint64_t *card, bool *cached_now)
{
    *card = 0;
    *cached_now = false;
    gb_kv *kv = gb_db_lookup_read(db, key);
    if (!kv)
        return GB_HLL_OK;
    gb_hll_status st = check_hll(kv);
    if (st != GB_HLL_OK)
        return st;
    gb_slice v = gb_kv_string(kv, NULL);
    if (kv->enc != GB_ENC_RAW || !gb_hll_cache_valid((const uint8_t *)v.ptr)) {
        gb_str *s = unshare(db, kv);
        v = gb_slice_make(s->data, s->len);
    }
    const uint8_t *hll = (const uint8_t *)v.ptr;
    if (gb_hll_cache_valid(hll)) {
        *card = gb_hll_cache_get(hll);
        return GB_HLL_OK;
    }
    bool invalid = false;
    *card = gb_hll_count(hll, v.len, &invalid);
    if (invalid)
        return GB_HLL_CORRUPT;
    gb_hll_cache_set((uint8_t *)v.ptr, *card);
    gb_engine_key_modified(db, key);
    *cached_now = true;
    return GB_HLL_OK;
}

/* Merges the HLLs under keys into raw, as PFCOUNT and PFMERGE read them:
 * looked up for reading, in order, the first bad one answering. *dense
 * becomes true when any is dense. */
static gb_hll_status merge_keys(gb_db *db, const gb_slice *keys, size_t n, uint8_t *raw, bool *dense)
{
    for (size_t i = 0; i < n; i++) {
        gb_kv *kv = gb_db_lookup_read(db, keys[i]);
        if (!kv)
            continue;
        gb_hll_status st = check_hll(kv);
        if (st != GB_HLL_OK)
            return st;
        gb_slice v = gb_kv_string(kv, NULL);
        if (gb_hll_encoding((const uint8_t *)v.ptr) == GB_HLL_DENSE)
            *dense = true;
        if (!gb_hll_merge_raw((const uint8_t *)v.ptr, v.len, raw))
            return GB_HLL_CORRUPT;
    }
    return GB_HLL_OK;
}

gb_hll_status gb_hll_count_union(gb_db *db, const gb_slice *keys, size_t n, uint64_t *card)
{
    uint8_t raw[GB_HLL_REGISTERS] = {0};
    bool dense = false;
    gb_hll_status st = merge_keys(db, keys, n, raw, &dense);
    if (st == GB_HLL_OK)
        *card = gb_hll_count_raw(raw);
    return st;
}

gb_hll_status gb_hll_merge(gb_db *db, const gb_slice *keys, size_t n)
{
    uint8_t raw[GB_HLL_REGISTERS] = {0};
    bool use_dense = false;
    gb_hll_status st = merge_keys(db, keys, n, raw, &use_dense);
    if (st != GB_HLL_OK)
        return st;
    gb_slice dst = keys[0];
    gb_kv *kv = gb_db_lookup_write(db, dst);
    gb_str *s = kv ? unshare(db, kv) : create_hll(db, dst, &kv);
    if (use_dense && !make_dense(db, kv, &s))
        return GB_HLL_CORRUPT;
    if (gb_hll_encoding(bytes(s)) == GB_HLL_DENSE) {
        /* dst was one of the inputs: its registers become the maxima */
        gb_hll_dense_pack(raw, bytes(s) + GB_HLL_HDR_SIZE);
    } else {
        /* Register by register as Redis, whose sparse bytes depend on the
         * order of the splits (and which may go dense on the way). */
        for (uint32_t i = 0; i < GB_HLL_REGISTERS; i++)
            if (raw[i])
                set_register(db, kv, &s, i, raw[i]);
    }
    gb_hll_cache_invalidate(bytes(s));
    gb_engine_key_modified(db, dst);
    return GB_HLL_OK;
}

gb_hll_status gb_hll_debug(gb_db *db, gb_slice key, gb_hll_debug_op op, gb_hll_debug_reply *reply)
{
    gb_kv *kv = gb_db_lookup_write(db, key);
    if (!kv)
        return GB_HLL_NO_KEY;
    gb_hll_status st = check_hll(kv);
    if (st != GB_HLL_OK)
        return st;
    gb_str *s = unshare(db, kv);
    bool sparse = gb_hll_encoding(bytes(s)) == GB_HLL_SPARSE;
    reply->encoding = gb_hll_encoding(bytes(s));
    reply->converted = false;
    switch (op) {
    case GB_HLL_DEBUG_GETREG:
    case GB_HLL_DEBUG_TODENSE:
        if (sparse) {
            if (!make_dense(db, kv, &s))
                return GB_HLL_CORRUPT;
            reply->converted = true;
            db->eng->stats.dirty++; /* propagated, as Redis forces it; no key event */
        }
        if (op == GB_HLL_DEBUG_GETREG)
            gb_hll_dense_unpack(bytes(s) + GB_HLL_HDR_SIZE, reply->registers);
        break;
    case GB_HLL_DEBUG_DECODE:
        if (!sparse)
            return GB_HLL_NOT_SPARSE;
        gb_hll_sparse_decode(bytes(s), s->len, reply->out, reply->ctx);
        break;
    case GB_HLL_DEBUG_ENCODING:
    case GB_HLL_DEBUG_UNKNOWN: break;
    }
    return GB_HLL_OK;
}
