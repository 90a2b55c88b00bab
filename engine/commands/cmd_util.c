#include "engine/commands/cmd_util.h"

#include "engine/core/engine.h"
#include "engine/core/request/propagate.h"
#include "engine/core/request/reply.h"
#include "engine/base/util.h"

void gb_reply_result(gb_client *c, gb_result r)
{
    switch (r) {
    case GB_R_OK:
        gb_reply_ok(c);
        return;
    case GB_R_NOTFOUND:
        gb_reply_error(c, GB_ERR_NO_KEY);
        return;
    case GB_R_WRONGTYPE:
        gb_reply_error(c, GB_ERR_WRONGTYPE);
        return;
    case GB_R_NOTINT:
        gb_reply_error(c, GB_ERR_NOT_INT);
        return;
    case GB_R_NOTFLOAT:
        gb_reply_error(c, GB_ERR_NOT_FLOAT);
        return;
    case GB_R_OVERFLOW:
        gb_reply_error(c, GB_ERR_OVERFLOW);
        return;
    case GB_R_NAN:
        gb_reply_error(c, "ERR increment would produce NaN or Infinity");
        return;
    case GB_R_TOOBIG:
        gb_reply_error(c, "ERR string exceeds maximum allowed size (proto-max-bulk-len)");
        return;
    case GB_R_SYNTAX:
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    case GB_R_RANGE:
        gb_reply_error(c, "ERR index out of range");
        return;
    case GB_R_SKIPPED:
        gb_reply_nil(c);
        return;
    case GB_R_BADARG: /* the caller replies the parse error it kept; a generic text if it did not */
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
}

bool gb_arg_ll(gb_client *c, gb_slice arg, int64_t *out)
{
    if (gb_slice2ll(arg, out))
        return true;
    gb_reply_error(c, GB_ERR_NOT_INT);
    return false;
}

bool gb_arg_ll_range(gb_client *c, gb_slice arg, int64_t min, int64_t max, const char *msg, int64_t *out)
{
    if (!gb_slice2ll(arg, out) || *out < min || *out > max) {
        gb_reply_error(c, msg);
        return false;
    }
    return true;
}

bool gb_arg_ll_within(gb_client *c, gb_slice arg, int64_t min, int64_t max, int64_t *out)
{
    if (!gb_arg_ll(c, arg, out))
        return false;
    if (*out < min || *out > max) {
        gb_reply_errorf(c, "ERR value is out of range, value must between %lld and %lld", (long long)min, (long long)max);
        return false;
    }
    return true;
}

bool gb_parse_mpop_args(gb_client *c, int argc, gb_slice *argv, int numkeys_idx, const char *where0,
                        const char *where1, int64_t *numkeys, bool *is_where1, int64_t *count)
{
    if (!gb_arg_ll_range(c, argv[numkeys_idx], 1, INT64_MAX, "ERR numkeys should be greater than 0", numkeys))
        return false;
    if (*numkeys > argc - numkeys_idx - 1 - 1) { /* room for the keys and WHERE */
        gb_reply_error(c, GB_ERR_SYNTAX);
        return false;
    }
    int where_idx = numkeys_idx + (int)*numkeys + 1;
    if (gb_slice_ieq(argv[where_idx], where0)) {
        *is_where1 = false;
    } else if (gb_slice_ieq(argv[where_idx], where1)) {
        *is_where1 = true;
    } else {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return false;
    }
    *count = -1;
    for (int j = where_idx + 1; j < argc; j++) {
        if (*count == -1 && gb_slice_ieq(argv[j], "count") && j + 1 < argc) {
            if (!gb_arg_ll_range(c, argv[++j], 1, INT64_MAX, "ERR count should be greater than 0", count))
                return false;
        } else {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return false;
        }
    }
    if (*count == -1)
        *count = 1;
    return true;
}

void gb_propagate_del(gb_client *c, gb_slice key)
{
    gb_slice eff[2] = {gb_slice_cstr("DEL"), key};
    gb_propagate_command(c, 2, eff);
}

void gb_propagate_pexpireat(gb_client *c, gb_slice key, int64_t when_ms)
{
    if (!gb_propagating(&c->eng->prop))
        return;
    char num[GB_INT_BUF];
    gb_slice eff[3] = {gb_slice_cstr("PEXPIREAT"), key, gb_slice_make(num, gb_ll2str(num, when_ms))};
    gb_propagate_command(c, 3, eff);
}
