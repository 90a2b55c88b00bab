/*
 * Bitmaps' typed key operations (engine/types/t_bitmap.h) on string
 * values (engine/core/keyspace/db.h), the arithmetic in engine/base/bitops.h.
 */
#include "engine/types/t_bitmap.h"

#include "engine/base/mem.h"
#include "engine/core/engine.h"

/* Redis's lookupStringForBitCommand: the string under key, made a heap
 * buffer of its own at least `bytes` long (zero-padded), the key created
 * when absent. *grown: created or lengthened. NULL for another type. */
static gb_str *string_for_bits(gb_db *db, gb_slice key, size_t bytes, bool *grown)
{
    gb_kv *kv = gb_db_lookup_write(db, key);
    if (kv && kv->type != GB_TYPE_STRING)
        return NULL;
    *grown = !kv;
    if (!kv)
        kv = gb_db_add_string(db, key, gb_slice_make("", 0));
    gb_str *s = gb_db_string_writable(db, kv, bytes);
    if (s->len < bytes) {
        memset(s->data + s->len, 0, bytes - s->len);
        s->len = bytes;
        *grown = true;
    }
    return s;
}

gb_result gb_bitmap_getbit(gb_db *db, gb_slice key, uint64_t offset, int *bit)
{
    *bit = 0;
    gb_kv *kv = gb_db_lookup_read(db, key);
    if (!kv)
        return GB_R_OK;
    if (kv->type != GB_TYPE_STRING)
        return GB_R_WRONGTYPE;
    char buf[GB_INT_BUF];
    gb_slice v = gb_kv_string(kv, buf);
    uint64_t byte = offset >> 3;
    if (byte < v.len)
        *bit = ((unsigned char)v.ptr[byte] >> (7 - (offset & 7))) & 1;
    return GB_R_OK;
}

gb_result gb_bitmap_setbit(gb_db *db, gb_slice key, uint64_t offset, int on, int *old, bool *changed)
{
    bool grown;
    gb_str *s = string_for_bits(db, key, (size_t)(offset >> 3) + 1, &grown);
    if (!s)
        return GB_R_WRONGTYPE;
    unsigned char *byte = (unsigned char *)s->data + (offset >> 3);
    unsigned shift = 7 - (unsigned)(offset & 7);
    *old = (*byte >> shift) & 1;
    *changed = grown || *old != on;
    if (*changed) {
        *byte = (unsigned char)((*byte & ~(1u << shift)) | ((unsigned)on << shift));
        gb_engine_key_modified(db, key);
    }
    return GB_R_OK;
}

/* ---- BITFIELD --------------------------------------------------------------------------- */

/* A GET: the integer read from the value's bytes (or none), zero past the
 * end, through a 9-byte window as Redis reads it. */
static int64_t bitfield_get(const unsigned char *p, size_t len, const gb_bitfield_op *op)
{
    unsigned char window[9] = {0};
    uint64_t byte = op->offset >> 3;
    for (uint64_t i = 0; i < sizeof window && byte + i < len; i++)
        window[i] = p[byte + i];
    uint64_t at = op->offset & 7;
    return op->is_signed ? gb_bits_get_signed(window, at, op->bits)
                         : (int64_t)gb_bits_get_unsigned(window, at, op->bits);
}

/* A SET or INCRBY on s (long enough): Redis's bitfieldGeneric, signed and
 * unsigned. False when OVERFLOW FAIL refused it (nothing written). */
static bool bitfield_write(unsigned char *p, const gb_bitfield_op *op, int64_t *reply, bool *changed)
{
    bool incr = op->kind == GB_BF_INCRBY;
    gb_bf_overflow ow = (gb_bf_overflow)op->overflow;
    uint64_t oldbits, newbits;
    if (op->is_signed) {
        int64_t oldval = gb_bits_get_signed(p, op->offset, op->bits), newval, lim;
        int over = incr ? gb_bits_overflow_signed(oldval, op->value, op->bits, ow, &lim)
                        : gb_bits_overflow_signed(op->value, 0, op->bits, ow, &lim);
        if (over && ow == GB_BF_FAIL)
            return false;
        newval = over ? lim : incr ? (int64_t)((uint64_t)oldval + (uint64_t)op->value) : op->value;
        *reply = incr ? newval : oldval;
        oldbits = (uint64_t)oldval;
        newbits = (uint64_t)newval;
    } else {
        uint64_t oldval = gb_bits_get_unsigned(p, op->offset, op->bits), newval, lim;
        int over = incr ? gb_bits_overflow_unsigned(oldval, op->value, op->bits, ow, &lim)
                        : gb_bits_overflow_unsigned((uint64_t)op->value, 0, op->bits, ow, &lim);
        if (over && ow == GB_BF_FAIL)
            return false;
        newval = over ? lim : incr ? oldval + (uint64_t)op->value : (uint64_t)op->value;
        *reply = (int64_t)(incr ? newval : oldval);
        oldbits = oldval;
        newbits = newval;
    }
    gb_bits_set(p, op->offset, op->bits, newbits);
    *changed = oldbits != newbits;
    return true;
}

static bool bitfield_reads_only(const gb_bitfield_op *ops, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ops[i].kind != GB_BF_GET)
            return false;
    return true;
}

/* The bytes the writes reach: up to the highest bit any of them touches. */
static size_t bitfield_reach(const gb_bitfield_op *ops, size_t n)
{
    uint64_t highest = 0;
    for (size_t i = 0; i < n; i++)
        if (ops[i].kind != GB_BF_GET && ops[i].offset + ops[i].bits - 1 > highest)
            highest = ops[i].offset + ops[i].bits - 1;
    return (size_t)(highest >> 3) + 1;
}

gb_result gb_bitmap_bitfield(gb_db *db, gb_slice key, const gb_bitfield_op *ops, size_t n, gb_bitfield_reply *out,
                             size_t *changes)
{
    *changes = 0;
    if (bitfield_reads_only(ops, n)) {
        gb_kv *kv = gb_db_lookup_read(db, key);
        if (kv && kv->type != GB_TYPE_STRING)
            return GB_R_WRONGTYPE;
        char buf[GB_INT_BUF];
        gb_slice v = kv ? gb_kv_string(kv, buf) : gb_slice_make("", 0);
        for (size_t i = 0; i < n; i++)
            out[i] = (gb_bitfield_reply){bitfield_get((const unsigned char *)v.ptr, v.len, &ops[i]), false};
        return GB_R_OK;
    }
    bool grown;
    gb_str *s = string_for_bits(db, key, bitfield_reach(ops, n), &grown);
    if (!s)
        return GB_R_WRONGTYPE;
    unsigned char *p = (unsigned char *)s->data;
    for (size_t i = 0; i < n; i++) {
        bool changed = false;
        out[i].nil = false;
        if (ops[i].kind == GB_BF_GET)
            out[i].value = bitfield_get(p, s->len, &ops[i]);
        else if (!bitfield_write(p, &ops[i], &out[i].value, &changed))
            out[i].nil = true;
        else if (changed || grown)
            (*changes)++;
    }
    /* A key created or grown changed the dataset even when every write was
     * refused (OVERFLOW FAIL): it is propagated, unlike in Redis, whose log
     * then lacks a key its memory has; the event stays Redis's. */
    if (*changes || grown)
        gb_engine_key_changed(db, key, *changes ? *changes : 1); /* Redis: one per field written */
    return GB_R_OK;
}

/* ---- BITOP ------------------------------------------------------------------------------ */

gb_result gb_bitmap_bitop(gb_db *db, gb_bitop op, gb_slice dst, const gb_slice *srcs, size_t n, size_t *len,
                          bool *dst_deleted)
{
    const unsigned char **src = gb_malloc(n * sizeof *src);
    size_t *lens = gb_malloc(n * sizeof *lens);
    char(*intbufs)[GB_INT_BUF] = NULL; /* integer-encoded sources, rendered */
    size_t maxlen = 0;
    gb_result r = GB_R_OK;
    for (size_t i = 0; i < n; i++) {
        gb_kv *kv = gb_db_lookup_read(db, srcs[i]);
        src[i] = NULL;
        lens[i] = 0;
        if (!kv)
            continue;
        if (kv->type != GB_TYPE_STRING) {
            r = GB_R_WRONGTYPE;
            break;
        }
        if (kv->enc == GB_ENC_INT && !intbufs)
            intbufs = gb_malloc(n * sizeof *intbufs);
        gb_slice v = gb_kv_string(kv, kv->enc == GB_ENC_INT ? intbufs[i] : NULL);
        src[i] = (const unsigned char *)v.ptr;
        lens[i] = v.len;
        maxlen = GB_MAX(maxlen, v.len);
    }
    *len = maxlen;
    *dst_deleted = false;
    if (r == GB_R_OK && maxlen) {
        /* The destination looked up for writing first, as Redis's setKey
         * does: an expired one goes now (its DEL propagated), and storing
         * makes a new key ("new" event). */
        gb_db_lookup_write(db, dst);
        gb_str *s = gb_malloc(sizeof(gb_str) + maxlen);
        s->len = s->cap = maxlen;
        gb_bits_op(op, (unsigned char *)s->data, maxlen, src, lens, n);
        gb_db_set_string_owned(db, dst, s);
        gb_engine_key_modified(db, dst);
    } else if (r == GB_R_OK && gb_db_delete(db, dst)) {
        *dst_deleted = true;
        gb_engine_key_modified(db, dst);
    }
    gb_free(intbufs);
    gb_free(lens);
    gb_free(src);
    return r;
}
