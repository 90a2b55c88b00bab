#include "engine/persist/load_pipe.h"

#include "engine/base/mem.h"

/* How many keys after it was queued a key's chain head is prefetched, and
 * its second record: far enough apart that each fetch has arrived before
 * the next one reads it (the bucket, prefetched when the name was read,
 * before the head; the head before its successor). */
#define HEAD_AT 5u
#define NEXT_AT 10u

/* ---- the queue --------------------------------------------------------------------------------- */

static gb_loaded_key *queued(gb_load_pipe *p, unsigned age_from_newest)
{
    return &p->q[(p->head + p->n - 1 - age_from_newest) % GB_LOAD_PIPE_DEPTH];
}

static bool insert_oldest(gb_load_pipe *p, gb_loaded_key *dup)
{
    gb_loaded_key k = p->q[p->head];
    p->head = (p->head + 1) % GB_LOAD_PIPE_DEPTH;
    p->n--;
    if (!gb_db_insert_loaded(k.db, k.kv, k.hash)) {
        *dup = k;
        return false;
    }
    return true;
}

bool gb_load_pipe_add(gb_load_pipe *p, gb_loaded_key k, gb_loaded_key *dup)
{
    bool ok = p->n < GB_LOAD_PIPE_DEPTH || insert_oldest(p, dup);
    p->q[(p->head + p->n) % GB_LOAD_PIPE_DEPTH] = k;
    p->n++;
    /* (A chain's records are fetched only for a key its bucket's filter
     * cannot clear: fetching costs a page walk per record even ahead of
     * time. The prefetches ask the filter.) */
    if (p->n > HEAD_AT) {
        const gb_loaded_key *h = queued(p, HEAD_AT);
        gb_db_prefetch_chain(h->db, h->hash);
    }
    if (p->n > NEXT_AT) {
        const gb_loaded_key *h = queued(p, NEXT_AT);
        gb_db_prefetch_chain_next(h->db, h->hash);
    }
    return ok;
}

bool gb_load_pipe_flush(gb_load_pipe *p, gb_loaded_key *dup)
{
    while (p->n) {
        if (!insert_oldest(p, dup))
            return false;
    }
    return true;
}

void gb_load_pipe_discard(gb_load_pipe *p)
{
    for (; p->n; p->n--, p->head = (p->head + 1) % GB_LOAD_PIPE_DEPTH)
        gb_kv_free(p->q[p->head].kv);
}
