#include "engine/cmd_util.h"

#include "engine/reply.h"
#include "engine/util.h"

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
    }
}

bool gb_arg_ll(gb_client *c, gb_slice arg, int64_t *out)
{
    if (gb_slice2ll(arg, out))
        return true;
    gb_reply_error(c, GB_ERR_NOT_INT);
    return false;
}

bool gb_arg_ll_range(gb_client *c, gb_slice arg, int64_t min, int64_t max, const char *err_range, int64_t *out)
{
    if (!gb_arg_ll(c, arg, out))
        return false;
    if (*out < min || *out > max) {
        gb_reply_error(c, err_range ? err_range : GB_ERR_NOT_INT);
        return false;
    }
    return true;
}
