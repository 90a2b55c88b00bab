/*
 * load_pipe: keys a snapshot loader has built, on their way into their
 * key tables.
 *
 * Adding a loaded key checks that its name is not there already (a hostile
 * or damaged file may hold a key twice), which reads the bucket and every
 * record of its chain: two or three cache misses per key, as many as the
 * rest of a small key's load costs. Adding each key as soon as it is built
 * (or one key later) left those misses mostly exposed, since decoding a
 * small value takes less time than one miss. So the loaders queue what
 * they build here: when a key's name is read its bucket is prefetched
 * (gb_db_prefetch_key), some keys later the first record of its chain,
 * later still that record's successor, and the key goes into its table
 * GB_LOAD_PIPE_DEPTH keys after it was built, everything it reads then
 * already in the cache. Keys go in in file order, so a key met twice is
 * still refused at its second occurrence.
 *
 * Even prefetched, reading a chain's records costs: they lie all over the
 * heap, on small pages, and each prefetch waits for its page walk. The
 * key table's bucket slots carry a 12-bit Bloom filter of their chain
 * (engine/ds/htable.h): a key whose bit is not in its bucket's filter
 * cannot be there, and goes in without a record of the chain being read
 * or prefetched (about 9 keys in 10 at the table's load factor); the
 * others are checked as before. A filter has no false negatives, so a key
 * met twice is still always found.
 */
#ifndef GB_ENGINE_PERSIST_LOAD_PIPE_H
#define GB_ENGINE_PERSIST_LOAD_PIPE_H

#include "engine/core/keyspace/db.h"

#define GB_LOAD_PIPE_DEPTH 16u

typedef struct gb_loaded_key {
    gb_kv *kv;
    uint64_t hash; /* from gb_db_prefetch_key */
    gb_db *db;
} gb_loaded_key;

typedef struct gb_load_pipe {
    gb_loaded_key q[GB_LOAD_PIPE_DEPTH];
    unsigned head, n; /* the oldest entry, and how many are queued */
} gb_load_pipe;

/* Queues k, first adding the oldest queued key to its table when the pipe
 * is full. false when that key's name was in its table already: *dup is
 * then that key, out of the pipe and still the caller's (to report and
 * gb_kv_free); k is queued all the same. */
bool gb_load_pipe_add(gb_load_pipe *p, gb_loaded_key k, gb_loaded_key *dup);
/* Adds every queued key, oldest first (before anything that changes what
 * a key means: another database, the end of the file). false as
 * gb_load_pipe_add on the first key that is there already; the keys after
 * it stay queued. */
bool gb_load_pipe_flush(gb_load_pipe *p, gb_loaded_key *dup);
/* Frees the keys still queued (a load that failed): once the load is
 * over, whatever its outcome. */
void gb_load_pipe_discard(gb_load_pipe *p);

#endif
