#include "engine/persist/load_pipe.h"

#include "engine/base/mem.h"
#include "platform/mem.h"

/* How many keys after it was queued a key's chain head is prefetched, and
 * its second record: far enough apart that each fetch has arrived before
 * the next one reads it (the bucket, prefetched when the name was read,
 * before the head; the head before its successor). */
#define HEAD_AT 5u
#define NEXT_AT 10u

/* ---- per-bucket cells ------------------------------------------------------------------------ */

/* A cell: the chain's length in the low bits (CHAIN_UNKNOWN: that many or
 * more, no longer counted) and one bit per record above them. */
#define CHAIN_BITS 0xfu
#define CHAIN_UNKNOWN 15u
/* Smaller tables: their chains are in the cache anyway. */
#define CELLS_FROM_BUCKETS 1024u

static uint16_t bloom_bit(uint64_t hash)
{
    /* the hash's top bits: the bucket index uses the bottom ones */
    return (uint16_t)(16u << ((hash >> 60) % 12u));
}

static void drop_cells(gb_load_buckets *s)
{
    gb_free(s->cell);
    s->cell = NULL;
}

/* The cells of db's table, made when the pipe first inserts into it if
 * the table is empty and settled; NULL when there are none (or no longer:
 * a table that grew or began to rehash, a file that lied about its count,
 * has lost them for good). */
static uint16_t *cells_for(gb_load_buckets *s, gb_db *db)
{
    if (s->db != db) {
        drop_cells(s);
        s->db = db;
        const gb_htable *ht = &db->keys;
        uint64_t buckets = ht->tab[0] ? ht->mask[0] + 1 : 0;
        if (gb_htable_size(ht) == 0 && buckets >= CELLS_FROM_BUCKETS && gb_htable_settled(ht, ht->mask[0])) {
            size_t bytes = (size_t)buckets * sizeof *s->cell;
            s->cell = gb_malloc(bytes);
            (void)gb_plat_advise_huge_pages(s->cell, bytes); /* read at random, as the buckets */
            memset(s->cell, 0, bytes);
            s->mask = ht->mask[0];
        }
    }
    if (s->cell && !gb_htable_settled(&db->keys, s->mask))
        drop_cells(s);
    return s->cell;
}

/* Whether the key's cell says it cannot be in its table already. */
static bool surely_absent(uint16_t cell, uint64_t hash)
{
    return (cell & CHAIN_BITS) < CHAIN_UNKNOWN && !(cell & bloom_bit(hash));
}

/* The cell of k's bucket while its cells are kept (for prefetching), else
 * NULL. */
static uint16_t *cell_of(const gb_load_pipe *p, const gb_loaded_key *k)
{
    return p->seen.db == k->db && p->seen.cell ? &p->seen.cell[k->hash & p->seen.mask] : NULL;
}

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
    uint16_t *cells = cells_for(&p->seen, k.db);
    uint16_t *cell = cells ? &cells[k.hash & p->seen.mask] : NULL;
    if (cell && surely_absent(*cell, k.hash)) {
        gb_db_insert_loaded_known(k.db, k.kv, k.hash, (*cell & CHAIN_BITS) + 1u);
    } else if (!gb_db_insert_loaded(k.db, k.kv, k.hash)) {
        *dup = k;
        return false;
    }
    if (cell) {
        unsigned len = *cell & CHAIN_BITS;
        *cell = (uint16_t)(*cell | bloom_bit(k.hash));
        if (len < CHAIN_UNKNOWN)
            *cell = (uint16_t)(*cell + 1u);
    }
    return true;
}

bool gb_load_pipe_add(gb_load_pipe *p, gb_loaded_key k, gb_loaded_key *dup)
{
    bool ok = p->n < GB_LOAD_PIPE_DEPTH || insert_oldest(p, dup);
    p->q[(p->head + p->n) % GB_LOAD_PIPE_DEPTH] = k;
    p->n++;
    const uint16_t *cell = cell_of(p, &k);
    if (cell)
        __builtin_prefetch(cell);
    /* A chain is fetched only for a key its cell cannot clear (or with no
     * cells): fetching costs a page walk per record even ahead of time. */
    if (p->n > HEAD_AT) {
        const gb_loaded_key *h = queued(p, HEAD_AT);
        if (!(cell = cell_of(p, h)) || !surely_absent(*cell, h->hash))
            gb_db_prefetch_chain(h->db, h->hash);
    }
    if (p->n > NEXT_AT) {
        const gb_loaded_key *h = queued(p, NEXT_AT);
        if (!(cell = cell_of(p, h)) || !surely_absent(*cell, h->hash))
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
    drop_cells(&p->seen);
    p->seen.db = NULL;
}
