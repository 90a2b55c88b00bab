/* The SBE paths of the ring client library's calls (ring_client_sbe.c). */
#ifndef GB_RING_CLIENT_SBE_H
#define GB_RING_CLIENT_SBE_H

#include "transport/ring/client/ring_client_internal.h"

int gb_rc_sbe_ping(gb_ring_client *rc);
int gb_rc_sbe_get(gb_ring_client *rc, const void *key, size_t klen, void *buf, size_t cap, int64_t *len);
int gb_rc_sbe_set(gb_ring_client *rc, const void *key, size_t klen, const void *val, size_t vlen, int64_t ttl_ms);
int gb_rc_sbe_del(gb_ring_client *rc, const void *key, size_t klen, int64_t *deleted);
int gb_rc_sbe_incrby(gb_ring_client *rc, const void *key, size_t klen, int64_t by, int64_t *value);
int gb_rc_sbe_hset(gb_ring_client *rc, const void *key, size_t klen, size_t n, const void *const *fields,
                   const size_t *flens, const void *const *values, const size_t *vlens, int64_t *added);
int gb_rc_sbe_hget(gb_ring_client *rc, const void *key, size_t klen, const void *field, size_t flen, void *buf,
                   size_t cap, int64_t *len);
int gb_rc_sbe_zadd(gb_ring_client *rc, const void *key, size_t klen, int flags, size_t n, const double *scores,
                   const void *const *members, const size_t *mlens, int64_t *result, double *score);
int gb_rc_sbe_zscore(gb_ring_client *rc, const void *key, size_t klen, const void *member, size_t mlen, double *score,
                     int *found);
int gb_rc_sbe_lpush(gb_ring_client *rc, const void *key, size_t klen, size_t n, const void *const *vals,
                    const size_t *vlens, int64_t *len);
int gb_rc_sbe_rpop(gb_ring_client *rc, const void *key, size_t klen, void *buf, size_t cap, int64_t *len);
int gb_rc_sbe_publish(gb_ring_client *rc, const void *channel, size_t clen, const void *msg, size_t mlen,
                      int64_t *receivers);
int gb_rc_sbe_xadd(gb_ring_client *rc, const void *key, size_t klen, const gb_ring_xadd_opts *opt, size_t n,
                   const void *const *fields, const size_t *flens, const void *const *values, const size_t *vlens,
                   char *id, size_t cap, int64_t *idlen);
int gb_rc_sbe_next_message(gb_ring_client *rc, gb_ring_message *m, uint64_t timeout_ns);
int gb_rc_sbe_blpop(gb_ring_client *rc, size_t nkeys, const void *const *keys, const size_t *klens, double timeout_s,
                    gb_reply **reply);

#endif
