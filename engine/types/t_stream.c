/*
 * The stream type: its gb_type_ops, lookups, and the typed operations of
 * the work-queue path, on top of engine/ds/stream.h and stream_cg.h.
 */
#include "engine/types/t_stream.h"

#include "engine/base/util.h"
#include "engine/core/request/blocking.h"
#include "engine/core/engine.h"
#include "engine/core/request/propagate.h"
#include "engine/core/pubsub/pubsub.h"

/* ---- the type ---------------------------------------------------------------------------- */

static void stream_free(void *obj) { gb_stream_free(obj); }
static void *stream_dup(const void *obj) { return gb_stream_dup(obj); }
static const char *stream_encoding(const void *obj)
{
    (void)obj;
    return "stream";
}
static size_t stream_mem(const void *obj) { return gb_stream_mem(obj); }
static size_t stream_effort(const void *obj) { return gb_stream_free_effort(obj); }

static bool stream_free_step(void *obj, uint64_t *cursor, size_t max_nodes)
{
    return gb_stream_free_step(obj, cursor, max_nodes);
}

static const gb_type_ops stream_type_ops = {"stream",   stream_free,  stream_dup,      stream_encoding,
                                            stream_mem, stream_effort, stream_free_step};

void gb_stream_type_register(void) { gb_type_register(GB_TYPE_STREAM, &stream_type_ops); }

gb_stream_limits gb_stream_limits_of(const gb_engine *eng)
{
    gb_stream_limits l = {(uint64_t)eng->cfg.stream_node_max_bytes, (uint64_t)eng->cfg.stream_node_max_entries};
    return l;
}

int64_t gb_stream_default_trim_limit(const gb_engine *eng)
{
    /* Redis multiplies in a long long and bounds the result afterwards: a
     * huge setting wraps to a negative product, which the bound turns into
     * 10000 like a setting of 0. The wrap is computed unsigned here. */
    int64_t limit = (int64_t)((uint64_t)100 * (uint64_t)eng->cfg.stream_node_max_entries);
    if (limit <= 0)
        return 10000;
    return limit > 1000000 ? 1000000 : limit;
}

static int stream_of(gb_kv *kv, gb_stream **s)
{
    if (!kv)
        return 0;
    if (kv->type != GB_TYPE_STREAM)
        return -1;
    *s = gb_kv_ptr(kv);
    return 1;
}

int gb_stream_lookup(gb_db *db, gb_slice key, bool write, gb_stream **s)
{
    return stream_of(write ? gb_db_lookup_write(db, key) : gb_db_lookup_read(db, key), s);
}

int gb_stream_lookup_for_groups(gb_db *db, gb_slice key, gb_stream **s)
{
    return stream_of(gb_db_lookup_read_changing(db, key), s);
}

gb_stream *gb_stream_add_key(gb_db *db, gb_slice key)
{
    gb_stream *s = gb_stream_new();
    gb_db_add_object(db, key, GB_TYPE_STREAM, s);
    return s;
}

/* ---- XADD --------------------------------------------------------------------------------- */

gb_xadd_status gb_stream_op_add(gb_db *db, gb_slice key, const gb_xadd_args *a, const gb_slice *fv, size_t nfields,
                                gb_stream_id *id, gb_xadd_rewrite *rewrite)
{
    memset(rewrite, 0, sizeof *rewrite);
    gb_stream *s;
    int found = gb_stream_lookup(db, key, true, &s);
    if (found < 0)
        return GB_XADD_WRONGTYPE;
    if (!found) {
        if (a->nomkstream)
            return GB_XADD_NOKEY;
        s = gb_stream_add_key(db, key);
    }
    if (gb_stream_id_is_max(s->last_id))
        return GB_XADD_EXHAUSTED;
    gb_stream_limits lim = gb_stream_limits_of(db->eng);
    switch (gb_stream_append(s, &lim, fv, nfields, a->id_given ? &a->id : NULL, a->seq_given,
                             (uint64_t)db->eng->now_ms, id)) {
    case GB_STREAM_ID_TOO_SMALL:
        return GB_XADD_ID_TOO_SMALL; /* a key just created stays, empty, as in Redis */
    case GB_STREAM_TOO_LARGE:
        return GB_XADD_TOO_LARGE;
    case GB_STREAM_ADDED:
        break;
    }
    gb_engine_key_modified(db, key);
    gb_notify_keyspace_event(db->eng, GB_NOTIFY_STREAM, "xadd", key, db->id);
    if (a->trim.strategy != GB_TRIM_NONE) {
        if (gb_stream_trim_apply(s, &a->trim) > 0)
            gb_notify_keyspace_event(db->eng, GB_NOTIFY_STREAM, "xtrim", key, db->id);
        if (a->trim.approx) {
            rewrite->trim = true;
            rewrite->trim_len = s->length;
            rewrite->trim_id = gb_stream_first_node_id(s);
        }
    }
    rewrite->id = !a->id_given || !a->seq_given;
    gb_blocking_signal_key(db, key);
    return GB_XADD_OK;
}

/* ---- effects ------------------------------------------------------------------------------- */

void gb_stream_propagate_claim(gb_client *c, gb_slice key, gb_slice group, const gb_stream_cg *cg, gb_stream_id id,
                               const gb_stream_nack *nack)
{
    if (!gb_propagating(&c->eng->prop))
        return;
    char idtxt[GB_STREAM_ID_TEXT_MAX], last[GB_STREAM_ID_TEXT_MAX], time[GB_INT_BUF], count[GB_INT_BUF];
    gb_slice argv[14] = {
        gb_slice_cstr("XCLAIM"), key, group, gb_stream_consumer_name(nack->consumer), gb_slice_cstr("0"),
        gb_slice_make(idtxt, gb_stream_id_format(idtxt, id)), gb_slice_cstr("TIME"),
        gb_slice_make(time, gb_ll2str(time, nack->delivery_time)), gb_slice_cstr("RETRYCOUNT"),
        gb_slice_make(count, gb_ull2str(count, nack->delivery_count)), gb_slice_cstr("FORCE"),
        gb_slice_cstr("JUSTID"), gb_slice_cstr("LASTID"), gb_slice_make(last, gb_stream_id_format(last, cg->last_id)),
    };
    gb_propagate_command(c, 14, argv);
}

void gb_stream_propagate_group_id(gb_client *c, gb_slice key, gb_slice group, const gb_stream_cg *cg)
{
    if (!gb_propagating(&c->eng->prop))
        return;
    char last[GB_STREAM_ID_TEXT_MAX], read[GB_INT_BUF];
    gb_slice argv[7] = {
        gb_slice_cstr("XGROUP"), gb_slice_cstr("SETID"), key, group,
        gb_slice_make(last, gb_stream_id_format(last, cg->last_id)), gb_slice_cstr("ENTRIESREAD"),
        gb_slice_make(read, gb_ll2str(read, cg->entries_read)),
    };
    gb_propagate_command(c, 7, argv);
}

void gb_stream_propagate_consumer(gb_client *c, gb_slice key, gb_slice group, gb_slice consumer)
{
    if (!gb_propagating(&c->eng->prop))
        return;
    gb_slice argv[5] = {gb_slice_cstr("XGROUP"), gb_slice_cstr("CREATECONSUMER"), key, group, consumer};
    gb_propagate_command(c, 5, argv);
}

/* ---- delivery ------------------------------------------------------------------------------- */

gb_stream_consumer *gb_stream_consumer_add(gb_client *c, gb_slice key, gb_stream_cg *cg, gb_slice name)
{
    gb_stream_consumer *consumer = gb_stream_consumer_create(cg, name, c->eng->now_ms);
    if (consumer)
        gb_notify_keyspace_event(c->eng, GB_NOTIFY_STREAM, "xgroup-createconsumer", key, c->db->id);
    return consumer;
}

gb_stream_consumer *gb_stream_consumer_touch(const gb_deliver *d, bool *created)
{
    int64_t now = d->c->eng->now_ms;
    gb_stream_consumer *consumer = gb_stream_consumer_lookup(d->group, d->consumer_name);
    *created = consumer == NULL;
    if (consumer) {
        consumer->seen_time = now;
        return consumer;
    }
    consumer = gb_stream_consumer_add(d->c, d->key, d->group, d->consumer_name);
    if (d->noack)
        gb_stream_propagate_consumer(d->c, d->key, d->group_name, d->consumer_name);
    return consumer;
}

/* The group's read counter after it delivers id (Redis 7.0): counted on
 * while nothing deleted lies ahead, else estimated again. ENTRIESREAD and
 * XSETID ENTRIESADDED let a client put the counters anywhere in 64 bits:
 * they wrap past 2^63 - 1, as Redis's long long does on every machine it
 * runs on, without the signed overflow. */
static void advance_group(gb_stream_cg *cg, const gb_stream *s, gb_stream_id id)
{
    if (cg->entries_read != GB_STREAM_ENTRIES_READ_UNKNOWN && !gb_stream_range_has_tombstones(s, &id, NULL))
        cg->entries_read = (int64_t)((uint64_t)cg->entries_read + 1);
    else if (s->entries_added)
        cg->entries_read = gb_stream_estimate_distance(s, id);
    cg->last_id = id;
}

/* id becomes pending for consumer: a new entry in both pending lists, or
 * one already pending (after an XGROUP SETID back) handed to it afresh. */
static gb_stream_nack *make_pending(gb_stream_cg *cg, gb_stream_consumer *consumer, gb_stream_id id, int64_t now)
{
    uint8_t key[GB_STREAM_ID_KEY];
    gb_stream_id_encode(key, id);
    void *existing = NULL;
    gb_stream_nack *nack = gb_stream_nack_new(consumer, now);
    if (gb_rax_try_insert(&cg->pel, key, sizeof key, nack, &existing)) {
        gb_rax_insert(&consumer->pel, key, sizeof key, nack, NULL);
        return nack;
    }
    gb_stream_nack_free(nack);
    nack = existing;
    gb_rax_remove(&nack->consumer->pel, key, sizeof key, NULL);
    nack->consumer = consumer;
    nack->delivery_time = now;
    nack->delivery_count = 1;
    gb_rax_insert(&consumer->pel, key, sizeof key, nack, NULL);
    return nack;
}

uint64_t gb_stream_deliver_new(const gb_deliver *d, gb_stream_consumer *consumer, gb_stream_id start,
                               const gb_stream_visitor *v)
{
    int64_t now = d->c->eng->now_ms;
    bool propagate_last_id = false;
    uint64_t n = 0;
    gb_stream_iter it;
    gb_stream_iter_start(&it, d->s, &start, NULL, false);
    gb_stream_id id;
    uint32_t nfields;
    while (gb_stream_iter_next(&it, &id, &nfields)) {
        if (gb_stream_id_cmp(id, d->group->last_id) > 0) {
            advance_group(d->group, d->s, id);
            /* Without NOACK the XCLAIMs carry the last ID (LASTID). */
            propagate_last_id = d->noack;
        }
        v->entry(v->ctx, id, nfields, &it);
        if (!d->noack) {
            gb_stream_nack *nack = make_pending(d->group, consumer, id, now);
            gb_stream_propagate_claim(d->c, d->key, d->group_name, d->group, id, nack);
        }
        if (++n == d->count)
            break;
    }
    gb_stream_iter_done(&it);
    if (propagate_last_id)
        gb_stream_propagate_group_id(d->c, d->key, d->group_name, d->group);
    return n;
}

uint64_t gb_stream_deliver_history(const gb_deliver *d, gb_stream_consumer *consumer, gb_stream_id start,
                                   const gb_stream_visitor *v)
{
    int64_t now = d->c->eng->now_ms;
    uint8_t key[GB_STREAM_ID_KEY];
    gb_stream_id_encode(key, start);
    uint64_t n = 0;
    gb_rax_iter ri;
    gb_rax_iter_init(&ri, &consumer->pel);
    for (bool ok = gb_rax_seek(&ri, GB_RAX_GE, key, sizeof key); ok && (!d->count || n < d->count);
         ok = gb_rax_next(&ri), n++) {
        gb_stream_id id = gb_stream_id_decode(ri.key);
        gb_stream_iter it;
        gb_stream_iter_start(&it, d->s, &id, &id, false);
        gb_stream_id got;
        uint32_t nfields;
        if (gb_stream_iter_next(&it, &got, &nfields)) {
            v->entry(v->ctx, id, nfields, &it);
            gb_stream_nack *nack = ri.value;
            nack->delivery_time = now;
            nack->delivery_count++;
            gb_stream_propagate_claim(d->c, d->key, d->group_name, d->group, id, nack);
        } else {
            v->gone(v->ctx, id);
        }
        gb_stream_iter_done(&it);
    }
    gb_rax_iter_done(&ri);
    return n;
}

/* ---- acknowledging ----------------------------------------------------------------------------- */

int64_t gb_stream_op_ack(gb_db *db, gb_stream_cg *cg, const gb_stream_id *ids, size_t n)
{
    int64_t acked = 0;
    for (size_t i = 0; i < n; i++) {
        if (!gb_stream_nack_remove(cg, ids[i]))
            continue;
        acked++;
        /* A change (the gate propagates XACK) that WATCH does not see:
         * Redis 7.0's XACK signals no modified key. */
        db->eng->stats.dirty++;
    }
    return acked;
}
