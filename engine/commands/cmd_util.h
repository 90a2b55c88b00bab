/*
 * Helpers shared by the RESP command handlers (engine/cmd_*.c).
 */
#ifndef GB_ENGINE_CMD_UTIL_H
#define GB_ENGINE_CMD_UTIL_H

#include "engine/core/request/client.h"
#include "engine/core/request/command.h"
#include "engine/core/keyspace/db.h"
#include "engine/core/engine.h"
#include "engine/core/pubsub/pubsub.h"
#include "engine/core/request/reply.h"
#include "engine/types/result.h"

/* A keyspace notification about key in the client's database (Redis's
 * notifyKeyspaceEvent; one branch when notifications are off). */
#define gb_notify_key(c, type, event, key) gb_notify_keyspace_event((c)->eng, (type), (event), (key), (c)->db->id)

/* After a command emptied a collection: "del" when the key went with it
 * (the lookup happens only when someone listens). */
static inline void gb_notify_del_if_gone(gb_client *c, gb_slice key)
{
    if (GB_UNLIKELY(c->eng->cfg.notify_keyspace_events & GB_NOTIFY_GENERIC) && !gb_db_lookup_quiet(c->db, key))
        gb_notify_keyspace_event(c->eng, GB_NOTIFY_GENERIC, "del", key, c->db->id);
}

/* A *STORE command: whether its destination exists beforehand (asked only
 * when someone listens), then its event - or "del" when an empty result
 * deleted a destination that existed. */
static inline bool gb_notify_store_begin(gb_client *c, gb_slice dst)
{
    return GB_UNLIKELY(c->eng->cfg.notify_keyspace_events & GB_NOTIFY_GENERIC) && gb_db_lookup_quiet(c->db, dst);
}
static inline void gb_notify_store_end(gb_client *c, int type, const char *event, gb_slice dst, int64_t card,
                                       bool existed)
{
    if (card > 0)
        gb_notify_key(c, type, event, dst);
    else if (existed)
        gb_notify_key(c, GB_NOTIFY_GENERIC, "del", dst);
}

/* An argument as Redis's strcasecmp, strchr and strstr see it: a C
 * string, ending at its first NUL byte ("asc\0x" is ASC there). */
static inline gb_slice gb_arg_text(gb_slice arg)
{
    const char *nul = arg.len ? memchr(arg.ptr, '\0', arg.len) : NULL;
    return nul ? gb_slice_make(arg.ptr, (size_t)(nul - arg.ptr)) : arg;
}
/* Redis's !strcasecmp(arg, word) for an option keyword. */
static inline bool gb_arg_is(gb_slice arg, const char *word) { return gb_slice_ieq(gb_arg_text(arg), word); }

/* Replies with Redis's error text for a failed typed call. */
void gb_reply_result(gb_client *c, gb_result r);

/* Replies a typed call's integer outcome: v for GB_R_OK, else r's error
 * text. */
static inline void gb_reply_int_result(gb_client *c, gb_result r, int64_t v)
{
    if (r == GB_R_OK)
        gb_reply_int(c, v);
    else
        gb_reply_result(c, r);
}

/* Replies a typed read's outcome (GET, HGET): *v for GB_R_OK, nil for
 * GB_R_NOTFOUND, else r's error text. */
static inline void gb_reply_read_result(gb_client *c, gb_result r, const gb_slice *v)
{
    if (r == GB_R_OK)
        gb_reply_slice(c, *v);
    else if (r == GB_R_NOTFOUND)
        gb_reply_nil(c);
    else
        gb_reply_result(c, r);
}

/* An argument as Redis's strcasecmp and strlen see it: a C string, so it
 * ends at its first NUL byte ("get\0x" is GET there). */
static inline gb_slice gb_arg_cstring(gb_slice arg)
{
    const char *nul = memchr(arg.ptr, '\0', arg.len);
    return nul ? gb_slice_make(arg.ptr, (size_t)(nul - arg.ptr)) : arg;
}

/* Parses an integer argument; on failure replies "value is not an integer or
 * out of range" and returns false. */
bool gb_arg_ll(gb_client *c, gb_slice arg, int64_t *out);
/* Redis's getRangeLongFromObjectOrReply with a message: an integer in
 * [min, max], else replies msg (the same text for "not an integer" and "out
 * of range": numkeys, COUNT, LIMIT arguments) and returns false. */
bool gb_arg_ll_range(gb_client *c, gb_slice arg, int64_t min, int64_t max, const char *msg, int64_t *out);
/* The same without a message: "value is not an integer or out of range"
 * for what is not an int64, "value is out of range, value must between
 * <min> and <max>" for one outside [min, max] (Redis's texts, COPY's DB
 * argument, a random count of INT64_MIN, LPOS's RANK). */
bool gb_arg_ll_within(gb_client *c, gb_slice arg, int64_t min, int64_t max, int64_t *out);

/* Parses "numkeys key [key ...] WHERE [COUNT count]" (LMPOP, BLMPOP, ZMPOP,
 * BZMPOP) from argv[numkeys_idx], WHERE being where0 or where1
 * (case-insensitive; *is_where1 says which). Redis's error texts; replies
 * and returns false on bad input. *count is 1 without COUNT. */
bool gb_parse_mpop_args(gb_client *c, int argc, gb_slice *argv, int numkeys_idx, const char *where0,
                        const char *where1, int64_t *numkeys, bool *is_where1, int64_t *count);

/* SCAN-family cursor argument ("ERR invalid cursor"). */
bool gb_parse_scan_cursor(gb_client *c, gb_slice arg, uint64_t *out);

/* Effects several commands choose (engine/core/request/propagate.h): DEL key, and
 * PEXPIREAT key <absolute ms> for any expiry set relative to now. */
void gb_propagate_del(gb_client *c, gb_slice key);
void gb_propagate_pexpireat(gb_client *c, gb_slice key, int64_t when_ms);

#endif
