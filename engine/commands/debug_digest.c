/*
 * Redis 7.0's dataset digest (its debug.c), over goblin-core's values.
 *
 * Two ways of adding bytes to a 20-byte digest:
 *   xor: digest ^= SHA1(bytes). Order-free: used for the elements of sets,
 *        hashes and sorted sets, and for the keys of a database.
 *   mix: digest = SHA1(digest ^ SHA1(bytes)). Order matters: used for the
 *        elements of lists and streams, and for a key's parts.
 * A key's digest starts at zero: mix(key), mix(its Redis type number as 4
 * big-endian bytes), the value, then xor("!!expire!!") when it has an
 * expiry (its time is not part of it). An element of a set is xored in;
 * a hash's field and value, and a sorted set's member and score ("%.17g"),
 * are mixed into a zeroed element digest that is then xored in. Integers
 * are digested as their decimal text, as Redis decodes them first.
 */
#include "engine/commands/debug_digest.h"

#include <stdio.h>
#include <string.h>

#include "engine/core/engine.h"
#include "engine/ds/hash.h"
#include "engine/ds/list.h"
#include "engine/ds/set.h"
#include "engine/ds/stream.h"
#include "engine/ds/stream_node.h"
#include "engine/ds/zset.h"
#include "engine/script/sha1.h"
#include "engine/types/tobj.h"

/* Redis's OBJ_* numbers: its type 5 is a module's value, 6 a stream. */
static const uint32_t redis_type_number[GB_TYPE_COUNT] = {
    [GB_TYPE_STRING] = 0, [GB_TYPE_LIST] = 1, [GB_TYPE_SET] = 2,
    [GB_TYPE_ZSET] = 3,   [GB_TYPE_HASH] = 4, [GB_TYPE_STREAM] = 6,
};

static void xor_digest(uint8_t digest[20], const void *p, size_t len)
{
    uint8_t h[20];
    gb_sha1(p, len, h);
    for (int i = 0; i < 20; i++)
        digest[i] ^= h[i];
}

static void mix_digest(uint8_t digest[20], const void *p, size_t len)
{
    xor_digest(digest, p, len);
    gb_sha1(digest, 20, digest);
}

static void mix_slice(uint8_t digest[20], gb_slice s) { mix_digest(digest, s.ptr, s.len); }

static bool list_element(void *digest, size_t index, gb_slice v)
{
    (void)index;
    mix_slice(digest, v);
    return true;
}

static void set_member(void *digest, gb_slice m) { xor_digest(digest, m.ptr, m.len); }

static void hash_pair(void *digest, gb_slice f, gb_slice v)
{
    uint8_t e[20] = {0};
    mix_slice(e, f);
    mix_slice(e, v);
    xor_digest(digest, e, 20);
}

static void zset_member(void *digest, gb_slice m, double score)
{
    uint8_t e[20] = {0};
    char buf[64];
    int n = snprintf(buf, sizeof buf, "%.17g", score);
    mix_slice(e, m);
    mix_digest(e, buf, (size_t)n);
    xor_digest(digest, e, 20);
}

/* Each entry in ID order: its ID as "<ms>.<seq>", then each field and
 * value (consumer groups are not part of a stream's digest in Redis). */
static void stream_digest(const gb_stream *s, uint8_t digest[20])
{
    gb_stream_iter it;
    gb_stream_iter_start(&it, s, NULL, NULL, false);
    gb_stream_id id;
    uint32_t nfields;
    while (gb_stream_iter_next(&it, &id, &nfields)) {
        char text[48];
        int n = snprintf(text, sizeof text, "%llu.%llu", (unsigned long long)id.ms, (unsigned long long)id.seq);
        mix_digest(digest, text, (size_t)n);
        gb_snode_pairs pp;
        gb_stream_iter_pairs(&it, &pp);
        gb_slice f, v;
        while (gb_snode_pairs_next(&pp, &f, &v)) {
            mix_slice(digest, f);
            mix_slice(digest, v);
        }
    }
    gb_stream_iter_done(&it);
}

void gb_value_digest(const gb_kv *kv, uint8_t digest[20])
{
    uint32_t t = redis_type_number[kv->type];
    uint8_t be[4] = {(uint8_t)(t >> 24), (uint8_t)(t >> 16), (uint8_t)(t >> 8), (uint8_t)t};
    mix_digest(digest, be, sizeof be);
    gb_tobj_hdr o;
    switch (kv->type) {
    case GB_TYPE_STRING: {
        char num[GB_INT_BUF];
        mix_slice(digest, gb_kv_string(kv, num));
        break;
    }
    case GB_TYPE_LIST:
        gb_list_range(gb_kv_ptr(kv), 0, -1, false, list_element, digest);
        break;
    case GB_TYPE_SET:
        o = gb_tobj_unpack(gb_kv_ptr(kv));
        gb_set_members(&o.s, set_member, digest);
        break;
    case GB_TYPE_ZSET:
        o = gb_tobj_unpack(gb_kv_ptr(kv));
        gb_zset_range_rank(&o.z, 0, -1, false, zset_member, digest);
        break;
    case GB_TYPE_HASH:
        o = gb_tobj_unpack(gb_kv_ptr(kv));
        gb_hash_each(&o.h, hash_pair, digest);
        break;
    case GB_TYPE_STREAM:
        stream_digest(gb_kv_ptr(kv), digest);
        break;
    default:
        break;
    }
    if (gb_kv_volatile(kv))
        xor_digest(digest, "!!expire!!", 10);
}

void gb_dataset_digest(gb_engine *eng, uint8_t out[20])
{
    memset(out, 0, 20);
    for (int j = 0; j < eng->ndbs; j++) {
        gb_db *db = &eng->dbs[j];
        if (gb_db_size(db) == 0)
            continue;
        /* the database's number, so the same keys in another one differ */
        uint8_t be[4] = {(uint8_t)((uint32_t)j >> 24), (uint8_t)((uint32_t)j >> 16), (uint8_t)((uint32_t)j >> 8),
                         (uint8_t)j};
        mix_digest(out, be, sizeof be);
        gb_htable_iter it;
        gb_htable_iter_init(&it, &db->keys);
        for (gb_hnode *node; (node = gb_htable_iter_next(&it));) {
            const gb_kv *kv = (const gb_kv *)node;
            uint8_t digest[20] = {0};
            mix_slice(digest, gb_kv_key(kv));
            gb_value_digest(kv, digest);
            xor_digest(out, digest, 20);
        }
        gb_htable_iter_done(&it);
    }
}
