/*
 * The client library's calls. Each typed call has an SBE path (native
 * values in a template, ring_client_sbe.c) and a RESP path (the equivalent
 * command), chosen by the protocol the slot was claimed with.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/ring/client/ring_client_internal.h"
#include "transport/ring/client/ring_client_sbe.h"

int gb_ring_submit(gb_ring_client *rc, int argc, const char *const *argv, const size_t *lens)
{
    if (argc <= 0) {
        gb_rc_fail(rc, "a command needs at least its name");
        return GB_EINVAL;
    }
    return rc->proto == GB_RING_SBE ? gb_rc_sbe_submit(rc, argc, argv, lens) : gb_rc_resp_submit(rc, argc, argv, lens);
}

int gb_ring_collect(gb_ring_client *rc, gb_reply **reply)
{
    *reply = NULL;
    return rc->proto == GB_RING_SBE ? gb_rc_sbe_collect(rc, reply) : gb_rc_resp_collect(rc, reply, UINT64_MAX);
}

int gb_ring_command(gb_ring_client *rc, int argc, const char *const *argv, const size_t *lens, gb_reply **reply)
{
    int r = gb_ring_submit(rc, argc, argv, lens);
    if (r != 0)
        return r;
    return gb_ring_collect(rc, reply);
}

/* ---- RESP paths of the typed calls ------------------------------------------------- */

/* Runs a command and checks the reply kind; an error reply becomes
 * GB_EPROTO with the server's words in gb_ring_client_error(). */
static int run(gb_ring_client *rc, int argc, const char *const *argv, const size_t *lens, gb_reply **out)
{
    int r = gb_ring_command(rc, argc, argv, lens, out);
    if (r != 0)
        return r;
    if ((*out)->kind == GB_REPLY_ERROR) {
        gb_rc_fail(rc, "%s", (*out)->str);
        gb_reply_free(*out);
        *out = NULL;
        return GB_EPROTO;
    }
    return 0;
}

static int want_int(gb_ring_client *rc, gb_reply *r, int64_t *out)
{
    if (r->kind != GB_REPLY_INTEGER) {
        gb_rc_fail(rc, "unexpected reply type %d (wanted an integer)", (int)r->kind);
        gb_reply_free(r);
        return GB_EPROTO;
    }
    if (out)
        *out = r->integer;
    gb_reply_free(r);
    return 0;
}

static int want_bulk(gb_ring_client *rc, gb_reply *r, void *buf, size_t cap, int64_t *len)
{
    if (r->kind == GB_REPLY_NIL) {
        *len = -1;
    } else if (r->kind == GB_REPLY_BULK) {
        *len = (int64_t)r->len;
        if (buf && cap)
            memcpy(buf, r->str, r->len < cap ? r->len : cap);
    } else {
        gb_rc_fail(rc, "unexpected reply type %d (wanted a string)", (int)r->kind);
        gb_reply_free(r);
        return GB_EPROTO;
    }
    gb_reply_free(r);
    return 0;
}

int gb_ring_ping(gb_ring_client *rc)
{
    if (rc->proto == GB_RING_SBE)
        return gb_rc_sbe_ping(rc);
    const char *argv[] = {"PING"};
    gb_reply *r;
    int rv = run(rc, 1, argv, NULL, &r);
    if (rv == 0)
        gb_reply_free(r);
    return rv;
}

int gb_ring_get(gb_ring_client *rc, const void *key, size_t klen, void *buf, size_t cap, int64_t *len)
{
    if (rc->proto == GB_RING_SBE)
        return gb_rc_sbe_get(rc, key, klen, buf, cap, len);
    const char *argv[] = {"GET", key};
    size_t lens[] = {3, klen};
    gb_reply *r;
    int rv = run(rc, 2, argv, lens, &r);
    return rv ? rv : want_bulk(rc, r, buf, cap, len);
}

int gb_ring_set(gb_ring_client *rc, const void *key, size_t klen, const void *val, size_t vlen, int64_t ttl_ms)
{
    if (rc->proto == GB_RING_SBE)
        return gb_rc_sbe_set(rc, key, klen, val, vlen, ttl_ms);
    char ttl[24];
    int tl = snprintf(ttl, sizeof ttl, "%lld", (long long)ttl_ms);
    const char *argv[] = {"SET", key, val, "PX", ttl};
    size_t lens[] = {3, klen, vlen, 2, (size_t)tl};
    gb_reply *r;
    int rv = run(rc, ttl_ms > 0 ? 5 : 3, argv, lens, &r);
    if (rv == 0)
        gb_reply_free(r);
    return rv;
}

int gb_ring_del(gb_ring_client *rc, const void *key, size_t klen, int64_t *deleted)
{
    if (rc->proto == GB_RING_SBE)
        return gb_rc_sbe_del(rc, key, klen, deleted);
    const char *argv[] = {"DEL", key};
    size_t lens[] = {3, klen};
    gb_reply *r;
    int rv = run(rc, 2, argv, lens, &r);
    return rv ? rv : want_int(rc, r, deleted);
}

int gb_ring_incrby(gb_ring_client *rc, const void *key, size_t klen, int64_t by, int64_t *value)
{
    if (rc->proto == GB_RING_SBE)
        return gb_rc_sbe_incrby(rc, key, klen, by, value);
    /* The command the SBE template stands for (docs/sbe.md: INCR for a
     * delta of 1, INCRBY otherwise), so that the same call is the same
     * command over either protocol: statistics, and the ACL rule that
     * admits or refuses it. */
    char n[24];
    int nl = snprintf(n, sizeof n, "%lld", (long long)by);
    const char *argv[] = {by == 1 ? "INCR" : "INCRBY", key, n};
    size_t lens[] = {by == 1 ? 4u : 6u, klen, (size_t)nl};
    gb_reply *r;
    int rv = run(rc, by == 1 ? 2 : 3, argv, lens, &r);
    return rv ? rv : want_int(rc, r, value);
}

/* Builds an argv of a fixed prefix plus n pairs/values. */
typedef struct argv_builder {
    const char **argv;
    size_t *lens;
    int argc;
} argv_builder;

static void ab_init(argv_builder *b, size_t max)
{
    b->argv = malloc(max * sizeof *b->argv);
    b->lens = malloc(max * sizeof *b->lens);
    b->argc = 0;
}

static void ab_add(argv_builder *b, const void *p, size_t len)
{
    b->argv[b->argc] = p;
    b->lens[b->argc] = len;
    b->argc++;
}

static void ab_free(argv_builder *b)
{
    free(b->argv);
    free(b->lens);
}

int gb_ring_hset(gb_ring_client *rc, const void *key, size_t klen, size_t n, const void *const *fields,
                 const size_t *flens, const void *const *values, const size_t *vlens, int64_t *added)
{
    if (rc->proto == GB_RING_SBE)
        return gb_rc_sbe_hset(rc, key, klen, n, fields, flens, values, vlens, added);
    argv_builder b;
    ab_init(&b, 2 + 2 * n);
    ab_add(&b, "HSET", 4);
    ab_add(&b, key, klen);
    for (size_t i = 0; i < n; i++) {
        ab_add(&b, fields[i], flens[i]);
        ab_add(&b, values[i], vlens[i]);
    }
    gb_reply *r;
    int rv = run(rc, b.argc, b.argv, b.lens, &r);
    ab_free(&b);
    return rv ? rv : want_int(rc, r, added);
}

int gb_ring_hget(gb_ring_client *rc, const void *key, size_t klen, const void *field, size_t flen, void *buf,
                 size_t cap, int64_t *len)
{
    if (rc->proto == GB_RING_SBE)
        return gb_rc_sbe_hget(rc, key, klen, field, flen, buf, cap, len);
    const char *argv[] = {"HGET", key, field};
    size_t lens[] = {4, klen, flen};
    gb_reply *r;
    int rv = run(rc, 3, argv, lens, &r);
    return rv ? rv : want_bulk(rc, r, buf, cap, len);
}

int gb_ring_zadd(gb_ring_client *rc, const void *key, size_t klen, int flags, size_t n, const double *scores,
                 const void *const *members, const size_t *mlens, int64_t *result, double *score)
{
    if (rc->proto == GB_RING_SBE)
        return gb_rc_sbe_zadd(rc, key, klen, flags, n, scores, members, mlens, result, score);
    argv_builder b;
    ab_init(&b, 8 + 2 * n);
    char *nums = malloc(n * 32 + 1);
    ab_add(&b, "ZADD", 4);
    ab_add(&b, key, klen);
    static const struct {
        int bit;
        const char *name;
    } opts[] = {{GB_RING_ZADD_NX, "NX"}, {GB_RING_ZADD_XX, "XX"}, {GB_RING_ZADD_GT, "GT"},
                {GB_RING_ZADD_LT, "LT"}, {GB_RING_ZADD_CH, "CH"}, {GB_RING_ZADD_INCR, "INCR"}};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        if (flags & opts[i].bit)
            ab_add(&b, opts[i].name, strlen(opts[i].name));
    for (size_t i = 0; i < n; i++) {
        int l = snprintf(nums + i * 32, 32, "%.17g", scores[i]);
        ab_add(&b, nums + i * 32, (size_t)l);
        ab_add(&b, members[i], mlens[i]);
    }
    gb_reply *r;
    int rv = run(rc, b.argc, b.argv, b.lens, &r);
    ab_free(&b);
    free(nums);
    if (rv)
        return rv;
    if (flags & GB_RING_ZADD_INCR) {
        if (r->kind == GB_REPLY_NIL) {
            *result = 0;
        } else if (r->kind == GB_REPLY_BULK) {
            *result = 1;
            if (score)
                *score = strtod(r->str, NULL);
        } else {
            gb_rc_fail(rc, "unexpected reply type %d to ZADD INCR", (int)r->kind);
            gb_reply_free(r);
            return GB_EPROTO;
        }
        gb_reply_free(r);
        return 0;
    }
    return want_int(rc, r, result);
}

int gb_ring_zscore(gb_ring_client *rc, const void *key, size_t klen, const void *member, size_t mlen, double *score,
                   int *found)
{
    if (rc->proto == GB_RING_SBE)
        return gb_rc_sbe_zscore(rc, key, klen, member, mlen, score, found);
    const char *argv[] = {"ZSCORE", key, member};
    size_t lens[] = {6, klen, mlen};
    gb_reply *r;
    int rv = run(rc, 3, argv, lens, &r);
    if (rv)
        return rv;
    *found = r->kind == GB_REPLY_BULK;
    if (*found)
        *score = strtod(r->str, NULL);
    gb_reply_free(r);
    return 0;
}

int gb_ring_lpush(gb_ring_client *rc, const void *key, size_t klen, size_t n, const void *const *vals,
                  const size_t *vlens, int64_t *len)
{
    if (rc->proto == GB_RING_SBE)
        return gb_rc_sbe_lpush(rc, key, klen, n, vals, vlens, len);
    argv_builder b;
    ab_init(&b, 2 + n);
    ab_add(&b, "LPUSH", 5);
    ab_add(&b, key, klen);
    for (size_t i = 0; i < n; i++)
        ab_add(&b, vals[i], vlens[i]);
    gb_reply *r;
    int rv = run(rc, b.argc, b.argv, b.lens, &r);
    ab_free(&b);
    return rv ? rv : want_int(rc, r, len);
}

int gb_ring_rpop(gb_ring_client *rc, const void *key, size_t klen, void *buf, size_t cap, int64_t *len)
{
    if (rc->proto == GB_RING_SBE)
        return gb_rc_sbe_rpop(rc, key, klen, buf, cap, len);
    const char *argv[] = {"RPOP", key};
    size_t lens[] = {4, klen};
    gb_reply *r;
    int rv = run(rc, 2, argv, lens, &r);
    return rv ? rv : want_bulk(rc, r, buf, cap, len);
}

int gb_ring_blpop(gb_ring_client *rc, size_t nkeys, const void *const *keys, const size_t *klens, double timeout_s,
                  gb_reply **reply)
{
    if (rc->proto == GB_RING_SBE)
        return gb_rc_sbe_blpop(rc, nkeys, keys, klens, timeout_s, reply);
    argv_builder b;
    ab_init(&b, 2 + nkeys);
    char t[32];
    int tl = snprintf(t, sizeof t, "%.6f", timeout_s);
    ab_add(&b, "BLPOP", 5);
    for (size_t i = 0; i < nkeys; i++)
        ab_add(&b, keys[i], klens[i]);
    ab_add(&b, t, (size_t)tl);
    int rv = run(rc, b.argc, b.argv, b.lens, reply);
    ab_free(&b);
    return rv;
}

int gb_ring_publish(gb_ring_client *rc, const void *channel, size_t clen, const void *msg, size_t mlen,
                    int64_t *receivers)
{
    if (rc->proto == GB_RING_SBE)
        return gb_rc_sbe_publish(rc, channel, clen, msg, mlen, receivers);
    const char *argv[] = {"PUBLISH", channel, msg};
    size_t lens[] = {7, clen, mlen};
    gb_reply *r;
    int rv = run(rc, 3, argv, lens, &r);
    return rv ? rv : want_int(rc, r, receivers);
}

int gb_ring_xadd(gb_ring_client *rc, const void *key, size_t klen, const gb_ring_xadd_opts *opt, size_t n,
                 const void *const *fields, const size_t *flens, const void *const *values, const size_t *vlens,
                 char *id, size_t cap, int64_t *idlen)
{
    static const gb_ring_xadd_opts auto_id = {.flags = GB_RING_XADD_AUTO_ID};
    if (!opt)
        opt = &auto_id;
    /* Flags no XADD command line can say: refused here, on either protocol. */
    if (((opt->flags & GB_RING_XADD_AUTO_ID) && (opt->flags & GB_RING_XADD_AUTO_SEQ)) ||
        ((opt->flags & GB_RING_XADD_APPROX) && !(opt->flags & (GB_RING_XADD_MAXLEN | GB_RING_XADD_MINID))) ||
        (opt->flags & ~(int)GB_SBE_XADD_ALL)) {
        gb_rc_fail(rc, "XADD flags: AUTO_ID with AUTO_SEQ, APPROX without MAXLEN or MINID, or unknown bits");
        return GB_EINVAL;
    }
    if (rc->proto == GB_RING_SBE)
        return gb_rc_sbe_xadd(rc, key, klen, opt, n, fields, flens, values, vlens, id, cap, idlen);
    /* The command line the template stands for, in the server's order
     * (sbe_server.c's to_argv), so both protocols refuse alike. */
    int f = opt->flags;
    const char *trim_word = (f & GB_RING_XADD_APPROX) ? "~" : "=";
    char maxlen[24], minid[48], limit[24], idtxt[48];
    argv_builder b;
    ab_init(&b, 12 + 2 * n);
    ab_add(&b, "XADD", 4);
    ab_add(&b, key, klen);
    if (f & GB_RING_XADD_NOMKSTREAM)
        ab_add(&b, "NOMKSTREAM", 10);
    if (f & GB_RING_XADD_MAXLEN) {
        ab_add(&b, "MAXLEN", 6);
        ab_add(&b, trim_word, 1);
        ab_add(&b, maxlen, (size_t)snprintf(maxlen, sizeof maxlen, "%lld", (long long)opt->maxlen));
    }
    if (f & GB_RING_XADD_MINID) {
        ab_add(&b, "MINID", 5);
        ab_add(&b, trim_word, 1);
        ab_add(&b, minid, (size_t)snprintf(minid, sizeof minid, "%llu-%llu", (unsigned long long)opt->minid_ms,
                                           (unsigned long long)opt->minid_seq));
    }
    if (f & GB_RING_XADD_LIMIT) {
        ab_add(&b, "LIMIT", 5);
        ab_add(&b, limit, (size_t)snprintf(limit, sizeof limit, "%lld", (long long)opt->limit));
    }
    if (f & GB_RING_XADD_AUTO_ID)
        ab_add(&b, "*", 1);
    else if (f & GB_RING_XADD_AUTO_SEQ)
        ab_add(&b, idtxt, (size_t)snprintf(idtxt, sizeof idtxt, "%llu-*", (unsigned long long)opt->id_ms));
    else
        ab_add(&b, idtxt, (size_t)snprintf(idtxt, sizeof idtxt, "%llu-%llu", (unsigned long long)opt->id_ms,
                                           (unsigned long long)opt->id_seq));
    for (size_t i = 0; i < n; i++) {
        ab_add(&b, fields[i], flens[i]);
        ab_add(&b, values[i], vlens[i]);
    }
    gb_reply *r;
    int rv = run(rc, b.argc, b.argv, b.lens, &r);
    ab_free(&b);
    return rv ? rv : want_bulk(rc, r, id, cap, idlen);
}

int gb_ring_next_message(gb_ring_client *rc, gb_ring_message *m, uint64_t timeout_ns)
{
    return rc->proto == GB_RING_SBE ? gb_rc_sbe_next_message(rc, m, timeout_ns)
                                    : gb_rc_resp_next_message(rc, m, timeout_ns);
}

void gb_ring_message_done(gb_ring_client *rc)
{
    if (rc->proto == GB_RING_SBE) {
        gb_ring_client_recv_done(rc);
        return;
    }
    gb_reply_free(rc->message);
    rc->message = NULL;
}
