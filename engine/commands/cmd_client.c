/* The client commands modern clients send on connecting or for client-side
 * caching: CLIENT REPLY, PAUSE, UNPAUSE, NO-EVICT, TRACKING, CACHING,
 * GETREDIR, TRACKINGINFO (dispatched from CLIENT in cmd_server.c), RESET
 * and MONITOR. Argument order, error texts and replies are Redis 7.0's
 * (networking.c clientCommand, resetCommand, monitorCommand). */
#include "engine/commands/cmd_client.h"

#include "engine/base/mem.h"
#include "engine/base/util.h"
#include "engine/commands/cmd_util.h"
#include "engine/core/acl.h"
#include "engine/core/blocking.h"
#include "engine/core/engine.h"
#include "engine/core/monitor.h"
#include "engine/core/multi.h"
#include "engine/core/pubsub.h"
#include "engine/core/tracking.h"
#include "platform/clock.h"

/* Redis's addReplySubcommandSyntaxError: a known subcommand with a count
 * of arguments its handler does not take. */
static void subcommand_syntax(gb_client *c, gb_slice sub)
{
    gb_reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try CLIENT HELP.",
                    (int)GB_MIN(sub.len, 128), sub.ptr);
}

/* Whether the client's replies are a RESP stream: an SBE ring answers each
 * call with one typed frame, so it cannot go without replies or receive
 * MONITOR lines. */
static bool speaks_resp(const gb_client *c) { return c->wire_rops->resp2 != NULL; }

static void client_reply(gb_client *c, gb_slice mode)
{
    if (!speaks_resp(c)) {
        gb_reply_error(c, "ERR CLIENT REPLY needs a RESP connection: an SBE ring answers every call");
        return;
    }
    if (gb_slice_ieq(mode, "on")) {
        c->flags &= ~(GB_CLIENT_REPLY_SKIP | GB_CLIENT_REPLY_OFF);
        gb_client_update_reply(c);
        gb_reply_ok(c);
    } else if (gb_slice_ieq(mode, "off")) {
        c->flags |= GB_CLIENT_REPLY_OFF;
        gb_client_update_reply(c);
    } else if (gb_slice_ieq(mode, "skip")) {
        if (!(c->flags & GB_CLIENT_REPLY_OFF))
            c->flags |= GB_CLIENT_REPLY_SKIP_NEXT;
    } else {
        gb_reply_error(c, GB_ERR_SYNTAX);
    }
}

/* CLIENT PAUSE timeout [WRITE|ALL]: the mode first, then the timeout
 * (Redis's getTimeoutFromObjectOrReply, milliseconds). */
static void client_pause(gb_client *c, int argc, gb_slice *argv)
{
    int type = GB_PAUSE_ALL;
    if (argc == 4) {
        if (gb_slice_ieq(argv[3], "write")) {
            type = GB_PAUSE_WRITE;
        } else if (!gb_slice_ieq(argv[3], "all")) {
            gb_reply_error(c, "ERR CLIENT PAUSE mode must be WRITE or ALL");
            return;
        }
    }
    int64_t ms;
    if (!gb_slice2ll(argv[2], &ms)) {
        gb_reply_error(c, "ERR timeout is not an integer or out of range");
        return;
    }
    if (ms < 0) {
        gb_reply_error(c, "ERR timeout is negative");
        return;
    }
    /* Redis 7.0 adds the timeout to the time in ms without an overflow
     * check: a timeout past the int64 range wraps to an end in the past,
     * a pause that is over at once (OK all the same). */
    uint64_t now = gb_clock_mono_ms();
    uint64_t end = ms > INT64_MAX - gb_clock_real_ms() ? now : now + (uint64_t)ms;
    gb_pause_start(c->eng, type, end);
    gb_reply_ok(c);
}

static void client_no_evict(gb_client *c, gb_slice mode)
{
    if (gb_slice_ieq(mode, "on")) {
        c->flags |= GB_CLIENT_NO_EVICT;
    } else if (gb_slice_ieq(mode, "off")) {
        c->flags &= ~GB_CLIENT_NO_EVICT;
    } else {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
    gb_reply_ok(c);
}

bool gb_cmd_client_more(gb_client *c, int argc, gb_slice *argv)
{
    gb_slice sub = argv[1];
    if (gb_slice_ieq(sub, "reply")) {
        client_reply(c, argv[2]);
    } else if (gb_slice_ieq(sub, "pause")) {
        if (argc == 3 || argc == 4)
            client_pause(c, argc, argv);
        else
            subcommand_syntax(c, sub);
    } else if (gb_slice_ieq(sub, "unpause")) {
        gb_pause_lift(c->eng);
        gb_reply_ok(c);
    } else if (gb_slice_ieq(sub, "no-evict")) {
        client_no_evict(c, argv[2]);
    } else if (gb_slice_ieq(sub, "tracking")) {
        gb_tracking_cmd_tracking(c, argc, argv);
    } else if (gb_slice_ieq(sub, "caching")) {
        gb_tracking_cmd_caching(c, argc, argv);
    } else if (gb_slice_ieq(sub, "getredir")) {
        gb_tracking_cmd_getredir(c);
    } else if (gb_slice_ieq(sub, "trackinginfo")) {
        gb_tracking_cmd_trackinginfo(c);
    } else {
        return false;
    }
    return true;
}

/* ---- RESET ---------------------------------------------------------------------- */

/* Redis 7.0's clearClientConnectionState: out of MONITOR, tracking off,
 * every subscription dropped silently, database 0, RESP2, the default user (authenticated if it needs no
 * password), no transaction or WATCH, no name, replies on. */
static void cmd_reset(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    (void)argv;
    gb_engine *eng = c->eng;
    gb_monitor_remove(c);
    gb_tracking_disable(c);
    gb_pubsub_client_free(c);
    c->db = &eng->dbs[0];
    gb_multi_discard(c);
    gb_multi_unwatch_all(c);
    c->flags &= ~(GB_CLIENT_AUTHED | GB_CLIENT_REPLY_OFF | GB_CLIENT_REPLY_SKIP | GB_CLIENT_REPLY_SKIP_NEXT);
    c->user = eng->acl->default_user;
    if (gb_acl_user_is_open(c->user))
        c->flags |= GB_CLIENT_AUTHED;
    gb_free(c->name);
    c->name = NULL;
    gb_client_set_resp(c, 2);
    gb_reply_status(c, "RESET");
}

/* ---- MONITOR -------------------------------------------------------------------- */

static void cmd_monitor(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    (void)argv;
    /* EXEC expects one reply per queued command (Redis's
     * CLIENT_DENY_BLOCKING). */
    if (c->flags & GB_CLIENT_IN_EXEC) {
        gb_reply_error(c, "ERR MONITOR isn't allowed for DENY BLOCKING client");
        return;
    }
    if (!speaks_resp(c)) {
        gb_reply_error(c, "ERR MONITOR needs a RESP connection: an SBE ring answers every call with one frame");
        return;
    }
    if (c->flags & GB_CLIENT_MONITOR)
        return; /* already one: Redis answers nothing */
    gb_monitor_add(c);
    gb_reply_ok(c);
}

GB_DEFINE_COMMANDS(client,
    {"reset", cmd_reset, GB_CMD_NOMULTI},
    {"monitor", cmd_monitor});
