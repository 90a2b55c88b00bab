#include "engine/core/request/propagate.h"

#include "engine/base/mem.h"
#include "engine/core/keyspace/db.h"
#include "engine/core/engine.h"

void gb_propagate_attach(gb_engine *eng, const gb_prop_sink *sink)
{
    gb_propagation *p = &eng->prop;
    const gb_prop_sink **s = gb_realloc(p->sinks, (p->nsinks + 1) * sizeof *s);
    s[p->nsinks++] = sink;
    p->sinks = s;
}

void gb_propagate_detach(gb_engine *eng, const gb_prop_sink *sink)
{
    gb_propagation *p = &eng->prop;
    for (size_t i = 0; i < p->nsinks; i++) {
        if (p->sinks[i] == sink) {
            memmove(&p->sinks[i], &p->sinks[i + 1], (p->nsinks - i - 1) * sizeof *p->sinks);
            p->nsinks--;
            return;
        }
    }
}

static void drop_pending(gb_propagation *p)
{
    for (size_t i = 0; i < p->npending; i++)
        gb_argv_copy_free(&p->pending[i].argv);
    p->npending = 0;
}

void gb_propagate_destroy(gb_engine *eng)
{
    gb_propagation *p = &eng->prop;
    drop_pending(p);
    gb_free(p->pending);
    gb_free(p->sinks);
    memset(p, 0, sizeof *p);
}

void gb_propagate_record(gb_engine *eng, int dbid, int argc, const gb_slice *argv)
{
    gb_propagation *p = &eng->prop;
    if (!p->nsinks)
        return;
    if (p->npending == p->cappending) {
        p->cappending = p->cappending ? p->cappending * 2 : 8;
        p->pending = gb_realloc(p->pending, p->cappending * sizeof *p->pending);
    }
    gb_prop_effect *e = &p->pending[p->npending++];
    e->dbid = dbid;
    e->targets = GB_PROP_ALL;
    e->argv = gb_argv_copy_make(NULL, argc, argv);
}

void gb_propagate_command(gb_client *c, int argc, const gb_slice *argv)
{
    gb_propagation *p = &c->eng->prop;
    p->explicit_effect = true;
    gb_propagate_record(c->eng, c->db->id, argc, argv);
}

void gb_propagate_prevent(gb_client *c) { c->eng->prop.explicit_effect = true; }

void gb_propagate_expired(gb_db *db, gb_slice key)
{
    if (!gb_propagating(&db->eng->prop))
        return;
    gb_slice argv[2] = {gb_slice_cstr("DEL"), key};
    gb_propagate_record(db->eng, db->id, 2, argv);
    /* Outside any command (the cron's active expiry) the deletion is a unit
     * of its own, handed over at once. */
    if (db->eng->prop.depth == 0)
        gb_propagate_flush(db->eng);
}

void gb_propagate_discard(gb_engine *eng) { drop_pending(&eng->prop); }

void gb_propagate_target_since(gb_engine *eng, size_t mark, unsigned targets)
{
    gb_propagation *p = &eng->prop;
    if (!targets) {
        while (p->npending > mark)
            gb_argv_copy_free(&p->pending[--p->npending].argv);
        return;
    }
    for (size_t i = mark; i < p->npending; i++)
        p->pending[i].targets &= targets;
}

static void emit_to(gb_propagation *p, unsigned targets, int dbid, int argc, const gb_slice *argv)
{
    for (size_t i = 0; i < p->nsinks; i++)
        if (!p->sinks[i]->target || (p->sinks[i]->target & targets))
            p->sinks[i]->emit(p->sinks[i]->ctx, dbid, argc, argv);
}

void gb_propagate_flush(gb_engine *eng)
{
    gb_propagation *p = &eng->prop;
    if (!p->npending || p->flushing)
        return;
    /* A sink may run code that records (it should not, but a re-entrant
     * flush must not emit the unit twice). */
    p->flushing = true;
    bool wrap = p->npending > 1;
    int first_db = p->pending[0].dbid;
    if (wrap) {
        gb_slice multi = gb_slice_cstr("MULTI");
        emit_to(p, GB_PROP_ALL, first_db, 1, &multi);
    }
    for (size_t i = 0; i < p->npending; i++)
        emit_to(p, p->pending[i].targets, p->pending[i].dbid, p->pending[i].argv.argc, p->pending[i].argv.argv);
    if (wrap) {
        gb_slice exec = gb_slice_cstr("EXEC");
        emit_to(p, GB_PROP_ALL, p->pending[p->npending - 1].dbid, 1, &exec);
    }
    drop_pending(p);
    p->flushing = false;
}
