#include "engine/core/memory/sliced_free.h"

#include "engine/base/mem.h"
#include "engine/core/engine.h"
#include "engine/core/keyspace/db.h"
#include "platform/clock.h"

/* Elements freed between two readings of the clock: ~20-40 us of frees. */
#define NODES_PER_STEP 512

/* One queued free: a record with a big value, or a whole table. */
typedef struct job {
    struct job *next;
    gb_kv *kv;       /* the record; NULL for a table */
    gb_htable table; /* a flushed database's keys (kv == NULL) */
    gb_kv **vol;     /* and its volatile array */
    uint64_t cursor; /* where the next slice resumes (gb_type_ops.free_step) */
} job;

struct gb_sliced_free {
    job *head, *tail;
};

gb_sliced_free *gb_sliced_free_new(void) { return gb_calloc(1, sizeof(gb_sliced_free)); }

static void push(gb_sliced_free *sf, job *j)
{
    if (sf->tail)
        sf->tail->next = j;
    else
        sf->head = j;
    sf->tail = j;
}

static bool big(const gb_kv *kv)
{
    return kv->enc == GB_ENC_OBJ && gb_kv_ptr(kv) && gb_type_get((enum gb_type)kv->type)->free_step &&
           gb_kv_free_effort(kv) > GB_SLICED_FREE_MIN_EFFORT;
}

void gb_sliced_free_kv(gb_engine *eng, gb_kv *kv)
{
    /* While loading nothing runs the slices, and nobody waits either. */
    if (eng->loading || !big(kv)) {
        gb_kv_free(kv);
        return;
    }
    job *j = gb_calloc(1, sizeof *j);
    j->kv = kv;
    push(eng->sliced_free, j);
}

/* A flushed table's records: a big value becomes a job of its own (queued
 * behind the table), the rest go now. */
static void free_table_record(gb_hnode *n, void *eng) { gb_sliced_free_kv(eng, (gb_kv *)n); }

void gb_sliced_free_table(gb_engine *eng, gb_htable *table, gb_kv **vol)
{
    if (eng->loading || gb_htable_size(table) <= GB_SLICED_FREE_MIN_EFFORT) {
        gb_htable_clear(table, free_table_record, eng);
        gb_free(vol);
        return;
    }
    job *j = gb_calloc(1, sizeof *j);
    j->table = *table;
    j->vol = vol;
    push(eng->sliced_free, j);
}

bool gb_sliced_free_pending(const gb_sliced_free *sf) { return sf->head != NULL; }

/* Frees about NODES_PER_STEP more of j; true once j holds nothing. */
static bool step_job(gb_engine *eng, job *j)
{
    if (!j->kv) {
        if (!gb_htable_clear_step(&j->table, free_table_record, eng, &j->cursor, NODES_PER_STEP))
            return false;
        gb_free(j->vol);
        return true;
    }
    gb_kv *kv = j->kv;
    if (!gb_type_get((enum gb_type)kv->type)->free_step(gb_kv_ptr(kv), &j->cursor, NODES_PER_STEP))
        return false;
    gb_kv_set_ptr(kv, NULL); /* freed: gb_kv_free frees the record alone */
    gb_kv_free(kv);
    return true;
}

bool gb_sliced_free_step(gb_engine *eng, uint64_t deadline_ns)
{
    gb_sliced_free *sf = eng->sliced_free;
    while (sf->head) {
        job *j = sf->head;
        if (step_job(eng, j)) {
            sf->head = j->next; /* read after the step: it may have queued behind j */
            if (!sf->head)
                sf->tail = NULL;
            gb_free(j);
        }
        if (gb_clock_mono_ns() >= deadline_ns)
            break;
    }
    return sf->head != NULL;
}

void gb_sliced_free_drain(gb_engine *eng)
{
    while (gb_sliced_free_step(eng, UINT64_MAX))
        ;
}

void gb_sliced_free_free(gb_sliced_free *sf) { gb_free(sf); }
