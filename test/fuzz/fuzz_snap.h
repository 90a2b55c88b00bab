/*
 * What the two snapshot harnesses (fuzz_snapshot.c: whole files,
 * fuzz_snaprecord.c: records inside a valid file) check after a load.
 *
 * A load that succeeds promises a dataset the engine can use: the compact
 * encodings were checked whole (structure, duplicates, order, scores) and
 * everything else was rebuilt. So every key of every database must answer
 * its type's commands consistently (counts agree with contents, no
 * duplicate members or fields, a sorted set in (score, member) order with
 * no NaN, lookups find what the listing showed), still do so after a write
 * to each key, and the dataset must survive a save and a load unchanged.
 */
#ifndef GB_TEST_FUZZ_SNAP_H
#define GB_TEST_FUZZ_SNAP_H

#include "fuzz_util.h" /* first: it sets the POSIX level */

#include <math.h>

#include "engine/core/request/gate.h"
#include "engine/dataset_dump.h"
#include "engine/persist/persist.h"
#include "engine/persist/serialize.h"
#include "engine/persist/snapread.h"

/* ---- a client that keeps every reply element -------------------------------------------- */

typedef struct snap_item {
    char kind; /* + - : d $ n (status, error, integer, double, bulk, nil) */
    char *s;
    size_t len;
    int64_t i;
    double d;
} snap_item;

typedef struct snap_reply {
    snap_item *items;
    size_t n, cap;
} snap_reply;

static snap_item *sr_add(void *ctx, char kind)
{
    snap_reply *r = ctx;
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 16;
        r->items = realloc(r->items, r->cap * sizeof *r->items);
        FUZZ_CHECK(r->items != NULL, "out of memory");
    }
    snap_item *it = &r->items[r->n++];
    memset(it, 0, sizeof *it);
    it->kind = kind;
    return it;
}
static void sr_text(void *ctx, char kind, const char *s, size_t n)
{
    snap_item *it = sr_add(ctx, kind);
    it->s = (char *)fuzz_dup(s, n);
    it->len = n;
}
static void sr_status(void *ctx, const char *s, size_t n) { sr_text(ctx, '+', s, n); }
static void sr_error(void *ctx, const char *s, size_t n) { sr_text(ctx, '-', s, n); }
static void sr_bulk(void *ctx, const char *s, size_t n) { sr_text(ctx, '$', s, n); }
static void sr_integer(void *ctx, int64_t v) { sr_add(ctx, ':')->i = v; }
static void sr_dbl(void *ctx, double v) { sr_add(ctx, 'd')->d = v; }
static void sr_nil(void *ctx) { sr_add(ctx, 'n'); }
static void sr_array(void *ctx, int64_t n) { (void)ctx, (void)n; }
static size_t sr_deferred(void *ctx)
{
    (void)ctx;
    return 0;
}
static void sr_set_deferred(void *ctx, size_t h, int64_t n) { (void)ctx, (void)h, (void)n; }
static const gb_reply_ops snap_reply_ops = {.status = sr_status, .error = sr_error, .integer = sr_integer,
                                            .dbl = sr_dbl, .bulk = sr_bulk, .nil = sr_nil, .array = sr_array,
                                            .array_deferred = sr_deferred, .set_deferred = sr_set_deferred};

static void sr_clear(snap_reply *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->items[i].s);
    r->n = 0;
}

/* Runs a command of up to 6 arguments on c; its reply in *r. */
static void snap_run(gb_client *c, snap_reply *r, int argc, const gb_slice *args)
{
    sr_clear(r);
    c->rctx = r;
    gb_slice argv[6];
    memcpy(argv, args, (size_t)argc * sizeof *argv);
    gb_gate_execute(c, argc, argv);
    for (size_t i = 0; i < r->n; i++)
        FUZZ_CHECK(r->items[i].kind != '-', "%.*s on a loaded key: %.*s", (int)argv[0].len, argv[0].ptr,
                   (int)r->items[i].len, r->items[i].s);
}

static int64_t snap_int(gb_client *c, snap_reply *r, const char *cmd, gb_slice key)
{
    gb_slice a[2] = {gb_slice_cstr(cmd), key};
    snap_run(c, r, 2, a);
    FUZZ_CHECK(r->n == 1 && r->items[0].kind == ':', "%s answered no integer", cmd);
    return r->items[0].i;
}

static bool item_eq(const snap_item *a, const snap_item *b)
{
    return a->len == b->len && (a->len == 0 || memcmp(a->s, b->s, a->len) == 0);
}

static int item_cmp(const snap_item *a, const snap_item *b)
{
    int c = memcmp(a->s, b->s, GB_MIN(a->len, b->len));
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

static int item_qsort_cmp(const void *a, const void *b) { return item_cmp(a, b); }

/* Elements [from, n) stepping by `step` are all different. */
static void check_distinct(snap_reply *r, size_t step, const char *what)
{
    size_t k = r->n / step;
    snap_item *copy = malloc((k ? k : 1) * sizeof *copy);
    for (size_t i = 0; i < k; i++)
        copy[i] = r->items[i * step];
    qsort(copy, k, sizeof *copy, item_qsort_cmp);
    for (size_t i = 1; i < k; i++)
        FUZZ_CHECK(!item_eq(&copy[i - 1], &copy[i]), "a loaded %s holds '%.*s' twice", what, (int)GB_MIN(copy[i].len, 64),
                   copy[i].s);
    free(copy);
}

/* Lookups checked per key: enough to catch an index that disagrees with
 * the listing, bounded so a big collection stays cheap. */
#define SNAP_LOOKUPS 32

static void check_list(gb_client *c, snap_reply *r, gb_slice key)
{
    int64_t n = snap_int(c, r, "LLEN", key);
    FUZZ_CHECK(n >= 1, "a loaded list of %lld elements", (long long)n);
    gb_slice a[4] = {gb_slice_cstr("LRANGE"), key, gb_slice_cstr("0"), gb_slice_cstr("-1")};
    snap_run(c, r, 4, a);
    FUZZ_CHECK((int64_t)r->n == n, "LLEN %lld, LRANGE %zu", (long long)n, r->n);
    snap_reply one = {0};
    for (int64_t i = 0; i < n && i < SNAP_LOOKUPS; i++) {
        char idx[24];
        snprintf(idx, sizeof idx, "%lld", (long long)(i % 2 ? -1 - i / 2 : i / 2));
        int64_t at = i % 2 ? n - 1 - i / 2 : i / 2;
        gb_slice b[3] = {gb_slice_cstr("LINDEX"), key, gb_slice_cstr(idx)};
        snap_run(c, &one, 3, b);
        FUZZ_CHECK(one.n == 1 && item_eq(&one.items[0], &r->items[at]), "LINDEX %s differs from LRANGE", idx);
    }
    sr_clear(&one);
    free(one.items);
}

static void check_set(gb_client *c, snap_reply *r, gb_slice key)
{
    int64_t n = snap_int(c, r, "SCARD", key);
    FUZZ_CHECK(n >= 1, "a loaded set of %lld members", (long long)n);
    gb_slice a[2] = {gb_slice_cstr("SMEMBERS"), key};
    snap_run(c, r, 2, a);
    FUZZ_CHECK((int64_t)r->n == n, "SCARD %lld, SMEMBERS %zu", (long long)n, r->n);
    check_distinct(r, 1, "set");
    snap_reply one = {0};
    for (size_t i = 0; i < r->n && i < SNAP_LOOKUPS; i++) {
        gb_slice b[3] = {gb_slice_cstr("SISMEMBER"), key, gb_slice_make(r->items[i].s, r->items[i].len)};
        snap_run(c, &one, 3, b);
        FUZZ_CHECK(one.n == 1 && one.items[0].i == 1, "SISMEMBER misses a member SMEMBERS lists");
    }
    sr_clear(&one);
    free(one.items);
}

static void check_hash(gb_client *c, snap_reply *r, gb_slice key)
{
    int64_t n = snap_int(c, r, "HLEN", key);
    FUZZ_CHECK(n >= 1, "a loaded hash of %lld fields", (long long)n);
    gb_slice a[2] = {gb_slice_cstr("HGETALL"), key};
    snap_run(c, r, 2, a);
    /* HLEN also counts fields past their deadline that nothing has deleted
     * yet (Redis 8.0's hash-field expiry); HGETALL never shows them. */
    FUZZ_CHECK(r->n % 2 == 0 && (int64_t)r->n <= 2 * n, "HLEN %lld, HGETALL %zu", (long long)n, r->n);
    check_distinct(r, 2, "hash's field");
    snap_reply one = {0};
    for (size_t i = 0; i + 1 < r->n && i < 2 * SNAP_LOOKUPS; i += 2) {
        gb_slice b[3] = {gb_slice_cstr("HGET"), key, gb_slice_make(r->items[i].s, r->items[i].len)};
        snap_run(c, &one, 3, b);
        FUZZ_CHECK(one.n == 1 && one.items[0].kind == '$' && item_eq(&one.items[0], &r->items[i + 1]),
                   "HGET differs from HGETALL");
    }
    sr_clear(&one);
    free(one.items);
}

static void check_zset(gb_client *c, snap_reply *r, gb_slice key)
{
    int64_t n = snap_int(c, r, "ZCARD", key);
    FUZZ_CHECK(n >= 1, "a loaded sorted set of %lld members", (long long)n);
    gb_slice a[5] = {gb_slice_cstr("ZRANGE"), key, gb_slice_cstr("0"), gb_slice_cstr("-1"),
                     gb_slice_cstr("WITHSCORES")};
    snap_run(c, r, 5, a);
    FUZZ_CHECK((int64_t)r->n == 2 * n, "ZCARD %lld, ZRANGE %zu", (long long)n, r->n);
    for (size_t i = 0; i + 1 < r->n; i += 2) {
        FUZZ_CHECK(r->items[i + 1].kind == 'd' && !isnan(r->items[i + 1].d), "a member without a score");
        if (i >= 2) {
            double p = r->items[i - 1].d, s = r->items[i + 1].d;
            FUZZ_CHECK(p < s || (p == s && item_cmp(&r->items[i - 2], &r->items[i]) < 0),
                       "a loaded sorted set out of order at rank %zu", i / 2);
        }
    }
    check_distinct(r, 2, "sorted set's member");
    snap_reply one = {0};
    for (size_t i = 0; i + 1 < r->n && i < 2 * SNAP_LOOKUPS; i += 2) {
        gb_slice m = gb_slice_make(r->items[i].s, r->items[i].len);
        gb_slice b[3] = {gb_slice_cstr("ZSCORE"), key, m};
        snap_run(c, &one, 3, b);
        FUZZ_CHECK(one.n == 1 && one.items[0].kind == 'd' && one.items[0].d == r->items[i + 1].d,
                   "ZSCORE differs from ZRANGE");
        gb_slice k[3] = {gb_slice_cstr("ZRANK"), key, m};
        snap_run(c, &one, 3, k);
        FUZZ_CHECK(one.n == 1 && one.items[0].i == (int64_t)(i / 2), "ZRANK differs from ZRANGE");
    }
    sr_clear(&one);
    free(one.items);
}

/* One write to the key through its type's commands, then undone, so the
 * structure a load built is changed, not only read. A member or field the
 * key already holds is left alone (removing it could empty the key). */
static void touch(gb_client *c, snap_reply *r, int type, gb_slice key)
{
    gb_slice m = gb_slice_cstr("\xff" "fuzz-touch"); /* sorts after any ASCII member */
    switch (type) {
    case GB_TYPE_STRING: {
        gb_slice a[3] = {gb_slice_cstr("APPEND"), key, gb_slice_cstr("")};
        snap_run(c, r, 3, a);
        break;
    }
    case GB_TYPE_LIST: {
        gb_slice a[3] = {gb_slice_cstr("RPUSH"), key, m}, b[2] = {gb_slice_cstr("RPOP"), key};
        snap_run(c, r, 3, a);
        snap_run(c, r, 2, b);
        FUZZ_CHECK(r->n == 1 && item_eq(&r->items[0], &(snap_item){.s = (char *)m.ptr, .len = m.len}),
                   "RPOP does not give back what RPUSH added");
        break;
    }
    case GB_TYPE_SET: {
        gb_slice a[3] = {gb_slice_cstr("SADD"), key, m}, b[3] = {gb_slice_cstr("SREM"), key, m};
        snap_run(c, r, 3, a);
        if (r->items[0].i == 1) {
            snap_run(c, r, 3, b);
            FUZZ_CHECK(r->items[0].i == 1, "SREM misses the member SADD added");
        }
        break;
    }
    case GB_TYPE_HASH: {
        gb_slice a[4] = {gb_slice_cstr("HSETNX"), key, m, m}, b[3] = {gb_slice_cstr("HDEL"), key, m};
        snap_run(c, r, 4, a);
        if (r->items[0].i == 1) {
            snap_run(c, r, 3, b);
            FUZZ_CHECK(r->items[0].i == 1, "HDEL misses the field HSETNX set");
        }
        break;
    }
    default: {
        gb_slice a[5] = {gb_slice_cstr("ZADD"), key, gb_slice_cstr("NX"), gb_slice_cstr("0.5"), m},
                 b[3] = {gb_slice_cstr("ZREM"), key, m};
        snap_run(c, r, 5, a);
        if (r->items[0].i == 1) {
            snap_run(c, r, 3, b);
            FUZZ_CHECK(r->items[0].i == 1, "ZREM misses the member ZADD added");
        }
        break;
    }
    }
}

static void check_key(gb_client *c, snap_reply *r, int type, gb_slice key)
{
    switch (type) {
    case GB_TYPE_STRING: {
        gb_slice a[2] = {gb_slice_cstr("GET"), key};
        snap_run(c, r, 2, a);
        FUZZ_CHECK(r->n == 1 && r->items[0].kind == '$', "GET answered no string");
        size_t len = r->items[0].len;
        FUZZ_CHECK(snap_int(c, r, "STRLEN", key) == (int64_t)len, "STRLEN differs from GET");
        break;
    }
    case GB_TYPE_LIST:
        check_list(c, r, key);
        break;
    case GB_TYPE_SET:
        check_set(c, r, key);
        break;
    case GB_TYPE_HASH:
        check_hash(c, r, key);
        break;
    default:
        check_zset(c, r, key);
        break;
    }
}

/* Every live key: consistent, then written to, then consistent again. */
static void snap_check_dataset(gb_engine *eng)
{
    fuzz_verify_dataset(eng);
    snap_reply r = {0};
    gb_client *c = gb_client_new(eng, &snap_reply_ops, &r, NULL, NULL, GB_CLIENT_AUTHED);
    for (int d = 0; d < eng->ndbs; d++) {
        c->db = &eng->dbs[d];
        /* Names first: the commands below may change the table. */
        size_t nk = 0;
        snap_item *keys = NULL;
        int *types = NULL;
        gb_htable_iter it;
        gb_htable_iter_init(&it, &eng->dbs[d].keys);
        for (gb_hnode *h; (h = gb_htable_iter_next(&it));) {
            gb_kv *kv = (gb_kv *)h;
            if (gb_kv_volatile(kv) && gb_kv_expire(kv) <= eng->now_ms)
                continue;
            keys = realloc(keys, (nk + 1) * sizeof *keys);
            types = realloc(types, (nk + 1) * sizeof *types);
            gb_slice k = gb_kv_key(kv);
            keys[nk] = (snap_item){.s = (char *)fuzz_dup(k.ptr, k.len), .len = k.len};
            types[nk++] = kv->type;
        }
        gb_htable_iter_done(&it);
        for (size_t i = 0; i < nk; i++) {
            gb_slice key = gb_slice_make(keys[i].s, keys[i].len);
            check_key(c, &r, types[i], key);
            touch(c, &r, types[i], key);
            check_key(c, &r, types[i], key);
            free(keys[i].s);
        }
        fuzz_verify_dataset(eng);
        free(keys);
        free(types);
    }
    gb_client_free(c);
    sr_clear(&r);
    free(r.items);
}

/* SAVE a, load into b (emptied, with a's settings), compare every key. */
static void snap_check_roundtrip(gb_engine *a, gb_engine *b)
{
    char err[700];
    FUZZ_CHECK(gb_persist_save(gb_persist_of(a), err, sizeof err) == 0, "SAVE of a loaded dataset failed: %s", err);
    b->now_ms = a->now_ms;
    FUZZ_CHECK(gb_persist_load(gb_persist_of(b), err, sizeof err) == 0, "a loaded dataset, saved, does not load: %s",
               err);
    char *want = dump_dataset(a), *got = dump_dataset(b);
    FUZZ_CHECK(strcmp(want, got) == 0, "a loaded dataset, saved and loaded, differs:\n%.2000s\n---\n%.2000s", want,
               got);
    free(want);
    free(got);
    char path[600];
    fuzz_path(path, sizeof path, "dump.gdb");
    unlink(path);
}

/* Loads the snapshot at path into eng, decoding blocks on the read-ahead
 * thread when read_ahead (as start-up does); true when it loaded. A refusal
 * names the file and an offset. */
static bool snap_load(gb_engine *eng, const char *path, gb_snap_load_stats *st, bool read_ahead)
{
    char err[700];
    gb_snap_reader *r = gb_snap_reader_open(path, err, sizeof err);
    if (!r) {
        FUZZ_CHECK(strstr(err, path) != NULL, "a refusal without the file: %s", err);
        if (fuzz_verbose())
            fprintf(stderr, "snapshot refused: %s\n", err);
        return false;
    }
    if (read_ahead)
        FUZZ_CHECK(gb_snap_reader_read_ahead(r, NULL), "the read-ahead thread did not start");
    bool ok = gb_snap_load(eng, r, st, NULL, NULL);
    if (!ok) {
        const char *why = gb_snap_reader_error(r);
        FUZZ_CHECK(why[0] == '\'' && strstr(why, "' at offset "), "a refusal without the offset: %s", why);
        if (fuzz_verbose())
            fprintf(stderr, "snapshot refused: %s\n", why);
    } else {
        if (fuzz_verbose())
            fprintf(stderr, "snapshot loaded: %llu keys, %llu expired\n", (unsigned long long)st->keys,
                    (unsigned long long)st->expired);
        uint64_t keys = 0;
        for (int d = 0; d < eng->ndbs; d++)
            keys += gb_db_size(&eng->dbs[d]);
        FUZZ_CHECK(keys == st->keys, "%llu keys loaded, %llu in the databases", (unsigned long long)st->keys,
                   (unsigned long long)keys);
    }
    gb_snap_reader_free(r);
    return ok;
}

#endif
