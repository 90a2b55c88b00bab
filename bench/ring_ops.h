/*
 * The operations the latency benchmarks time, over a ring (client library,
 * SBE or RESP) or over a socket (synchronous RESP), so that every path runs
 * exactly the same workload:
 *
 *   PING     no key
 *   GET      one 16-byte value under one of 1,000 keys
 *   SET      one 16-byte value under one of 1,000 keys
 *   ZADD1    one member (of 1,000, rotating) with a new score into one key
 *   ZADD10   ten members with new scores into one key
 *   HSET1    one field (of 1,000, rotating) into one key
 *   HSET10   ten fields into one key
 *
 * The sorted set and the hash stay at 1,000 elements (the large encodings),
 * so ZADD/HSET time updates of a real structure, not the empty case.
 */
#ifndef GB_BENCH_RING_OPS_H
#define GB_BENCH_RING_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "bench_common.h"
#include "goblin/ring_client.h"

typedef enum { OP_PING, OP_GET, OP_SET, OP_ZADD1, OP_ZADD10, OP_HSET1, OP_HSET10, OP_COUNT } bench_op;

extern const char *const bench_op_names[OP_COUNT];

/* Prepares the data the op reads (GET's keys, the 1,000-member zset/hash). */
int bench_ring_prepare(gb_ring_client *rc);
int bench_sock_prepare(gb_resp_conn *c);

/* One synchronous round trip of op number i (i varies keys/members/scores). */
int bench_ring_once(gb_ring_client *rc, bench_op op, uint64_t i);
int bench_sock_once(gb_resp_conn *c, bench_op op, uint64_t i);

/* Times op for `seconds` after a warm-up; fills h with nanoseconds per
 * round trip. Returns 0 or -1 (a call failed). */
int bench_ring_run(gb_ring_client *rc, bench_op op, double seconds, gb_hist *h);
int bench_sock_run(gb_resp_conn *c, bench_op op, double seconds, gb_hist *h);

#endif
