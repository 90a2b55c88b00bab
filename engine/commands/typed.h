/*
 * Commands with native arguments: what a RESP handler calls once it has
 * parsed its text, and what a binary transport (SBE over the ring) calls
 * with the values it decoded. One implementation of each command's rules,
 * replies and effect (engine/core/request/propagate.h), whichever wire it came
 * from. The transport reaches them through the gate
 * (gb_gate_execute_typed), never directly.
 *
 * Each replies exactly as Redis does to the equivalent RESP command, with
 * two exceptions the caller handles before calling: argument counts (an
 * empty group is the RESP form's arity error) and text that does not parse.
 */
#ifndef GB_ENGINE_COMMANDS_TYPED_H
#define GB_ENGINE_COMMANDS_TYPED_H

#include "engine/core/request/client.h"
#include "engine/ds/list.h"
#include "engine/ds/zset.h"
#include "engine/types/t_stream.h"

/* PING without a message: +PONG. */
void gb_cmd_ping(gb_client *c);

void gb_cmd_get(gb_client *c, gb_slice key);

/* SET's options (Redis's OBJ_* flags); an expiry option takes the value
 * given with it (seconds or milliseconds, relative or a Unix time). */
enum {
    GB_SETOPT_NX = 1u << 0,
    GB_SETOPT_XX = 1u << 1,
    GB_SETOPT_GET = 1u << 2,
    GB_SETOPT_KEEPTTL = 1u << 3,
    GB_SETOPT_PERSIST = 1u << 4, /* GETEX only */
    GB_SETOPT_EX = 1u << 5,
    GB_SETOPT_PX = 1u << 6,
    GB_SETOPT_EXAT = 1u << 7,
    GB_SETOPT_PXAT = 1u << 8,
};
#define GB_SETOPT_ANY_EXPIRE (GB_SETOPT_EX | GB_SETOPT_PX | GB_SETOPT_EXAT | GB_SETOPT_PXAT)

/* SET key value with options. Conflicting options are "ERR syntax error";
 * an expiry out of range "ERR invalid expire time in '<cmdname>' command".
 * reply_int: SETNX's 1/0 instead of OK/nil. */
void gb_cmd_set(gb_client *c, gb_slice key, gb_slice val, unsigned opts, int64_t expire, const char *cmdname,
                bool reply_int);

/* DEL key [key ...] (n >= 1); UNLINK, always lazy. */
void gb_cmd_del(gb_client *c, size_t n, const gb_slice *keys);
void gb_cmd_unlink(gb_client *c, size_t n, const gb_slice *keys);

/* INCRBY key by (INCR, DECR, DECRBY too). */
void gb_cmd_incrby(gb_client *c, gb_slice key, int64_t by);

/* HSET key field value [field value ...] (n >= 1 pairs). */
void gb_cmd_hset(gb_client *c, gb_slice key, size_t n, const gb_slice *fields, const gb_slice *values);
void gb_cmd_hget(gb_client *c, gb_slice key, gb_slice field);

/* ZADD key [flags] score member ... (n >= 1 pairs; flags GB_ZADD_*,
 * incompatible ones refused with Redis's texts; a NaN score is "not a
 * valid float"). ZINCRBY is ZADD INCR. */
void gb_cmd_zadd(gb_client *c, gb_slice key, int flags, size_t n, const double *scores, const gb_slice *members);
/* Redis's option rules for ZADD, each with its own text: replies and
 * returns false when broken (the RESP parser asks before the scores). */
bool gb_cmd_zadd_flags_ok(gb_client *c, int flags, size_t n);
void gb_cmd_zscore(gb_client *c, gb_slice key, gb_slice member);

/* PUBLISH channel message: replies the number of clients that received it
 * (here; in cluster mode the other nodes get it over the bus too). */
void gb_cmd_publish(gb_client *c, gb_slice channel, gb_slice message);
/* After PUBLISH / SPUBLISH delivered a message here: in cluster mode it is
 * carried to the other nodes (Redis's clusterPropagatePublish), otherwise
 * to the replicas, and not to the log (Redis's forceCommandPropagation
 * with PROPAGATE_REPL). */
void gb_cmd_publish_delivered(gb_client *c, bool shard, gb_slice channel, gb_slice message);

/* LPUSH/RPUSH key value [value ...] (n >= 1). */
void gb_cmd_push(gb_client *c, gb_slice key, bool tail, size_t n, const gb_slice *vals);
/* LPOP/RPOP key (one value, no COUNT). */
void gb_cmd_pop(gb_client *c, gb_slice key, bool tail);
/* A pop happened: its event, then "del" if the list went with it
 * (cmd_list.c: every pop shares it). */
void gb_cmd_list_notify_pop(gb_client *c, gb_slice key, gb_list_end end);

/* XADD key ... once parsed: a's ID and trim (a->trim.limit already the
 * work limit: LIMIT's count, or gb_stream_default_trim_limit for "~"
 * without LIMIT), npairs >= 1 field/value pairs interleaved in fv. Replies
 * the new ID, nil (NOMKSTREAM, no key) or Redis's error ("must be greater
 * than 0-0", "equal or smaller than the target stream top item",
 * WRONGTYPE ...). Returns true when the entry was added, something records
 * effects, and the effect must be the rewritten form (*rw: "*" or
 * "<ms>-*" became *id, "~" became "="): the caller then passes its RESP
 * form to gb_xadd_propagate_rewritten. Otherwise the gate records the
 * command as it came. */
bool gb_cmd_xadd(gb_client *c, gb_slice key, const gb_xadd_args *a, size_t npairs, const gb_slice *fv,
                 gb_stream_id *id, gb_xadd_rewrite *rw);
/* Records XADD's (or XTRIM's) effect: argv, its RESP form, with the ID at
 * idpos replaced by id (rw->id) and the threshold at trim_arg (after its
 * "~" at trim_arg - 1) by what the trimming left (rw->trim). */
void gb_xadd_propagate_rewritten(gb_client *c, int argc, const gb_slice *argv, int idpos, gb_stream_id id,
                                 int trim_arg, const gb_xadd_args *a, const gb_xadd_rewrite *rw);

#endif
