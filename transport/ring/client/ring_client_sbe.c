/* The SBE paths of the client library's calls. The SBE codec
 * (transport/sbe/) is landing separately; until then a client that claimed
 * an SBE slot cannot exist (the server refuses the claim), and these report
 * GB_ENOTSUP with a sentence should one be called anyway. */
#include "transport/ring/client/ring_client_sbe.h"

static int unavailable(gb_ring_client *rc)
{
    gb_rc_fail(rc, "this client library was built without the SBE codec");
    return GB_ENOTSUP;
}

int gb_rc_sbe_submit(gb_ring_client *rc, int argc, const char *const *argv, const size_t *lens)
{
    (void)argc, (void)argv, (void)lens;
    return unavailable(rc);
}
int gb_rc_sbe_collect(gb_ring_client *rc, gb_reply **reply)
{
    (void)reply;
    return unavailable(rc);
}
int gb_rc_sbe_ping(gb_ring_client *rc) { return unavailable(rc); }
int gb_rc_sbe_get(gb_ring_client *rc, const void *key, size_t klen, void *buf, size_t cap, int64_t *len)
{
    (void)key, (void)klen, (void)buf, (void)cap, (void)len;
    return unavailable(rc);
}
int gb_rc_sbe_set(gb_ring_client *rc, const void *key, size_t klen, const void *val, size_t vlen, int64_t ttl_ms)
{
    (void)key, (void)klen, (void)val, (void)vlen, (void)ttl_ms;
    return unavailable(rc);
}
int gb_rc_sbe_del(gb_ring_client *rc, const void *key, size_t klen, int64_t *deleted)
{
    (void)key, (void)klen, (void)deleted;
    return unavailable(rc);
}
int gb_rc_sbe_incrby(gb_ring_client *rc, const void *key, size_t klen, int64_t by, int64_t *value)
{
    (void)key, (void)klen, (void)by, (void)value;
    return unavailable(rc);
}
int gb_rc_sbe_hset(gb_ring_client *rc, const void *key, size_t klen, size_t n, const void *const *fields,
                   const size_t *flens, const void *const *values, const size_t *vlens, int64_t *added)
{
    (void)key, (void)klen, (void)n, (void)fields, (void)flens, (void)values, (void)vlens, (void)added;
    return unavailable(rc);
}
int gb_rc_sbe_hget(gb_ring_client *rc, const void *key, size_t klen, const void *field, size_t flen, void *buf,
                   size_t cap, int64_t *len)
{
    (void)key, (void)klen, (void)field, (void)flen, (void)buf, (void)cap, (void)len;
    return unavailable(rc);
}
int gb_rc_sbe_zadd(gb_ring_client *rc, const void *key, size_t klen, int flags, size_t n, const double *scores,
                   const void *const *members, const size_t *mlens, int64_t *result, double *score)
{
    (void)key, (void)klen, (void)flags, (void)n, (void)scores, (void)members, (void)mlens, (void)result, (void)score;
    return unavailable(rc);
}
int gb_rc_sbe_zscore(gb_ring_client *rc, const void *key, size_t klen, const void *member, size_t mlen, double *score,
                     int *found)
{
    (void)key, (void)klen, (void)member, (void)mlen, (void)score, (void)found;
    return unavailable(rc);
}
int gb_rc_sbe_lpush(gb_ring_client *rc, const void *key, size_t klen, size_t n, const void *const *vals,
                    const size_t *vlens, int64_t *len)
{
    (void)key, (void)klen, (void)n, (void)vals, (void)vlens, (void)len;
    return unavailable(rc);
}
int gb_rc_sbe_rpop(gb_ring_client *rc, const void *key, size_t klen, void *buf, size_t cap, int64_t *len)
{
    (void)key, (void)klen, (void)buf, (void)cap, (void)len;
    return unavailable(rc);
}
int gb_rc_sbe_blpop(gb_ring_client *rc, size_t nkeys, const void *const *keys, const size_t *klens, double timeout_s,
                    gb_reply **reply)
{
    (void)nkeys, (void)keys, (void)klens, (void)timeout_s, (void)reply;
    return unavailable(rc);
}
