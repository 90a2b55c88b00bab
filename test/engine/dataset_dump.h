/*
 * The whole dataset of an engine as sorted text, for tests that compare two
 * engines key by key (replay, snapshot round trips): every live key of every
 * database as "db key type pexpiretime : content", content read through
 * the engine's own commands (sets and hashes sorted, scores exact).
 */
#ifndef GB_TEST_DATASET_DUMP_H
#define GB_TEST_DATASET_DUMP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/core/engine.h"
#include "engine/core/request/gate.h"

typedef struct dd_text {
    char *s;
    size_t len, cap;
} dd_text;

static inline void dd_put(dd_text *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->len + n + 1)
            cap *= 2;
        t->s = realloc(t->s, cap);
        t->cap = cap;
    }
    memcpy(t->s + t->len, s, n);
    t->len += n;
    t->s[t->len] = '\0';
}

static inline void dd_cstr(dd_text *t, const char *s) { dd_put(t, s, strlen(s)); }

/* Collects a reply's scalars as text lines. */
typedef struct collect {
    char **items;
    size_t n, cap;
} collect;

static inline void col_add(collect *c, char kind, const char *s, size_t len)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 16;
        c->items = realloc(c->items, c->cap * sizeof *c->items);
    }
    char *x = malloc(len + 2);
    x[0] = kind;
    memcpy(x + 1, s, len);
    x[len + 1] = '\0';
    c->items[c->n++] = x;
}

static inline void c_status(void *ctx, const char *s, size_t n) { col_add(ctx, '+', s, n); }
static inline void c_error(void *ctx, const char *s, size_t n) { col_add(ctx, '-', s, n); }
static inline void c_int(void *ctx, int64_t v)
{
    char b[32];
    col_add(ctx, ':', b, (size_t)snprintf(b, sizeof b, "%lld", (long long)v));
}
static inline void c_dbl(void *ctx, double v)
{
    char b[64];
    col_add(ctx, '$', b, (size_t)snprintf(b, sizeof b, "%a", v)); /* exact bits */
}
static inline void c_bulk(void *ctx, const char *s, size_t n) { col_add(ctx, '$', s, n); }
static inline void c_nil(void *ctx) { col_add(ctx, 'n', "", 0); }
static inline void c_array(void *ctx, int64_t n)
{
    (void)ctx;
    (void)n;
}
static inline size_t c_deferred(void *ctx)
{
    (void)ctx;
    return 0;
}
static inline void c_set_deferred(void *ctx, size_t h, int64_t n)
{
    (void)ctx;
    (void)h;
    (void)n;
}
static const gb_reply_ops collect_ops = {
    .status = c_status,
    .error = c_error,
    .integer = c_int,
    .dbl = c_dbl,
    .bulk = c_bulk,
    .nil = c_nil,
    .array = c_array,
    .array_deferred = c_deferred,
    .set_deferred = c_set_deferred,
};

static inline int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static inline void col_clear(collect *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->items[i]);
    c->n = 0;
}

/* Runs argv on a collecting client and returns its items, sorted when the
 * reply has no defined order (sets; hash fields paired first). */
static inline void dump_cmd(gb_client *c, collect *col, int argc, gb_slice *argv, int pair_and_sort)
{
    col_clear(col);
    gb_gate_execute(c, argc, argv);
    if (pair_and_sort == 1) {
        qsort(col->items, col->n, sizeof *col->items, cmp_str);
    } else if (pair_and_sort == 2) { /* field, value pairs -> "field\x01value" */
        for (size_t i = 0; i + 1 < col->n; i += 2) {
            size_t a = strlen(col->items[i]), b = strlen(col->items[i + 1]);
            char *x = malloc(a + b + 2);
            memcpy(x, col->items[i], a);
            x[a] = '\x01';
            memcpy(x + a + 1, col->items[i + 1], b + 1);
            free(col->items[i]);
            free(col->items[i + 1]);
            col->items[i / 2] = x;
        }
        col->n /= 2;
        qsort(col->items, col->n, sizeof *col->items, cmp_str);
    } else if (pair_and_sort == 3) {
        /* Left out: a consumer's seen-time (when a command last ran), and a
         * group's read counter and lag: Redis 7.0 propagates XREADGROUP as
         * XCLAIM ... LASTID, which carries no read counter (7.2 added an
         * XGROUP SETID ... ENTRIESREAD after it), and the log replays to
         * what 7.0's would. */
        size_t out = 0;
        for (size_t i = 0; i < col->n; i++) {
            const char *it = col->items[i];
            bool skip = !strcmp(it, "$seen-time") || !strcmp(it, "$entries-read") || !strcmp(it, "$lag");
            if (skip && i + 1 < col->n) {
                free(col->items[i]);
                free(col->items[++i]);
                continue;
            }
            col->items[out++] = col->items[i];
        }
        col->n = out;
    }
}

static inline int cmp_line(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Every live key of every database as "db key type pexpiretime content",
 * sorted. Keys whose expiry has passed at the engine's clock are left out:
 * they are gone for every client, collected or not. */
static inline char *dump_dataset(gb_engine *eng)
{
    gb_client *c = gb_client_new(eng, &collect_ops, NULL, NULL, NULL, 0);
    collect col = {0};
    c->rctx = &col;
    char **lines = NULL;
    size_t nlines = 0, cap = 0;
    for (int d = 0; d < eng->ndbs; d++) {
        gb_db *db = &eng->dbs[d];
        c->db = db;
        /* Collect the names first: the dump's lookups may expire keys. */
        size_t nk = 0;
        char **names = NULL;
        size_t *nlen = NULL;
        gb_htable_iter it;
        gb_htable_iter_init(&it, &db->keys);
        for (gb_hnode *n; (n = gb_htable_iter_next(&it));) {
            gb_kv *kv = (gb_kv *)n;
            if (gb_kv_volatile(kv) && gb_kv_expire(kv) <= eng->now_ms)
                continue;
            names = realloc(names, (nk + 1) * sizeof *names);
            nlen = realloc(nlen, (nk + 1) * sizeof *nlen);
            gb_slice k = gb_kv_key(kv);
            names[nk] = malloc(k.len + 1);
            memcpy(names[nk], k.ptr, k.len);
            nlen[nk] = k.len;
            nk++;
        }
        gb_htable_iter_done(&it);
        for (size_t i = 0; i < nk; i++) {
            gb_slice key = gb_slice_make(names[i], nlen[i]);
            gb_kv *kv = gb_db_lookup_quiet(db, key);
            if (!kv)
                abort(); /* listed as live a moment ago */
            dd_text line = {0};
            char b[96];
            snprintf(b, sizeof b, "%d ", d);
            dd_cstr(&line, b);
            dd_put(&line, key.ptr, key.len);
            snprintf(b, sizeof b, " %s %lld :", gb_type_name((enum gb_type)kv->type), (long long)gb_db_expire_of(kv));
            dd_cstr(&line, b);
            gb_slice argv[5];
            int pair = 0, argc = 2;
            argv[1] = key;
            switch (kv->type) {
            case GB_TYPE_STRING:
                argv[0] = gb_slice_cstr("GET");
                break;
            case GB_TYPE_LIST:
                argv[0] = gb_slice_cstr("LRANGE");
                argv[2] = gb_slice_cstr("0");
                argv[3] = gb_slice_cstr("-1");
                argc = 4;
                break;
            case GB_TYPE_SET:
                argv[0] = gb_slice_cstr("SMEMBERS");
                pair = 1;
                break;
            case GB_TYPE_HASH:
                argv[0] = gb_slice_cstr("HGETALL");
                pair = 2;
                break;
            case GB_TYPE_STREAM: /* entries, groups, pending lists, consumers */
                argv[0] = gb_slice_cstr("XINFO");
                argv[1] = gb_slice_cstr("STREAM");
                argv[2] = key;
                argv[3] = gb_slice_cstr("FULL");
                argc = 4;
                pair = 3;
                break;
            default:
                argv[0] = gb_slice_cstr("ZRANGE");
                argv[2] = gb_slice_cstr("0");
                argv[3] = gb_slice_cstr("-1");
                argv[4] = gb_slice_cstr("WITHSCORES");
                argc = 5;
                break;
            }
            dump_cmd(c, &col, argc, argv, pair);
            for (size_t j = 0; j < col.n; j++) {
                dd_cstr(&line, " ");
                dd_cstr(&line, col.items[j]);
            }
            if (nlines == cap) {
                cap = cap ? cap * 2 : 64;
                lines = realloc(lines, cap * sizeof *lines);
            }
            lines[nlines++] = line.s;
            free(names[i]);
        }
        free(names);
        free(nlen);
    }
    col_clear(&col);
    free(col.items);
    gb_client_free(c);
    if (nlines) /* an empty dataset has no array: qsort(NULL, 0) is undefined */
        qsort(lines, nlines, sizeof *lines, cmp_line);
    dd_text all = {0};
    dd_cstr(&all, "");
    for (size_t i = 0; i < nlines; i++) {
        dd_cstr(&all, lines[i]);
        dd_cstr(&all, "\n");
        free(lines[i]);
    }
    free(lines);
    return all.s;
}

#endif
