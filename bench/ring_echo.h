/*
 * The ring's own floor: the record protocol of transport/ring/ring_io.h
 * between two pinned threads, with nothing but an echo between a request
 * and its reply. The client writes an 8-byte request (an SBE PING's size)
 * and fences (as the client library does after each publish, to look at
 * the server's state); the echo thread copies it out, consumes it, answers
 * 16 bytes (an SBE "PONG" reply's size) and fences (as the server does
 * before it looks at the client's state). Against the cache-line floor
 * (floor.h) it shows what the ring's layout costs (stamps, two rings, the
 * heads); against a server's round trip, what the server and the client
 * library's code cost on top.
 */
#ifndef GB_BENCH_RING_ECHO_H
#define GB_BENCH_RING_ECHO_H

#include "bench_common.h"

/* The echo thread is created (and pinned to cpu_b) while the caller's
 * affinity still allows cpu_b, as floor.h's, and sleeps until the run:
 * start it before pinning the calling thread. Two rings of ring_bytes (a
 * power of two, at least 4 KiB) in this process's memory. NULL when the
 * rings or the thread cannot be made. */
typedef struct gb_ring_echo gb_ring_echo;
gb_ring_echo *gb_bench_ring_echo_start(int cpu_b, uint64_t ring_bytes);
/* Round trips for `seconds` from the calling thread (pinned by the
 * caller), into h. Once per echo. */
void gb_bench_ring_echo_run(gb_ring_echo *e, double seconds, gb_hist *h);
/* Ends the echo thread (run or not) and frees the rings. */
void gb_bench_ring_echo_stop(gb_ring_echo *e);

#endif
