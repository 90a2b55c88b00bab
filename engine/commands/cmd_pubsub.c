/*
 * Pub/sub commands: SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE and their UNs,
 * PUBLISH, SPUBLISH, PUBSUB. The state and the delivery are
 * engine/core/pubsub/pubsub.c; the permission to use a channel is checked by the
 * gate (ACL channel rules) before these run, and the RESP2 subscribed-mode
 * restriction too.
 */
#include "engine/base/util.h"
#include "engine/commands/typed.h"
#include "engine/core/request/command.h"
#include "engine/core/engine.h"
#include "engine/core/pubsub/pubsub.h"
#include "engine/cluster/cluster.h"

static void cmd_subscribe(gb_client *c, int argc, gb_slice *argv)
{
    gb_pubsub_subscribe(c, GB_PUBSUB_CHANNEL, argc - 1, argv + 1);
}

static void cmd_psubscribe(gb_client *c, int argc, gb_slice *argv)
{
    gb_pubsub_subscribe(c, GB_PUBSUB_PATTERN, argc - 1, argv + 1);
}

static void cmd_ssubscribe(gb_client *c, int argc, gb_slice *argv)
{
    /* Redis 7.0 refuses it to a client that may not block, EXEC's (where
     * SUBSCRIBE and PSUBSCRIBE have an exception SSUBSCRIBE lacks) */
    if (c->flags & GB_CLIENT_IN_EXEC) {
        gb_reply_error(c, "ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client");
        return;
    }
    gb_pubsub_subscribe(c, GB_PUBSUB_SHARD, argc - 1, argv + 1);
}

static void cmd_unsubscribe(gb_client *c, int argc, gb_slice *argv)
{
    gb_pubsub_unsubscribe(c, GB_PUBSUB_CHANNEL, argc - 1, argv + 1);
}

static void cmd_punsubscribe(gb_client *c, int argc, gb_slice *argv)
{
    gb_pubsub_unsubscribe(c, GB_PUBSUB_PATTERN, argc - 1, argv + 1);
}

static void cmd_sunsubscribe(gb_client *c, int argc, gb_slice *argv)
{
    gb_pubsub_unsubscribe(c, GB_PUBSUB_SHARD, argc - 1, argv + 1);
}

static void cmd_publish(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    gb_cmd_publish(c, argv[1], argv[2]);
}

static void cmd_spublish(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    gb_reply_int(c, (int64_t)gb_pubsub_publish(c->eng, GB_PUBSUB_SHARD, argv[1], argv[2]));
    gb_cmd_publish_delivered(c, true, argv[1], argv[2]);
}

/* ---- PUBSUB ---- */

static const char *const pubsub_help[] = {
    "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CHANNELS [<pattern>]",
    "    Return the currently active channels matching a <pattern> (default: '*').",
    "NUMPAT",
    "    Return number of subscriptions to patterns.",
    "NUMSUB [<channel> ...]",
    "    Return the number of subscribers for the specified channels, excluding",
    "    pattern subscriptions(default: no channels).",
    "SHARDCHANNELS [<pattern>]",
    "    Return the currently active shard level channels matching a <pattern> (default: '*').",
    "SHARDNUMSUB [<shardchannel> ...]",
    "    Return the number of subscribers for the specified shard level channel(s)",
    "HELP",
    "    Prints this help.",
};

typedef struct list_ctx {
    gb_client *c;
    int64_t n;
} list_ctx;

static void list_one(void *ctx, gb_slice name)
{
    list_ctx *l = ctx;
    gb_reply_slice(l->c, name);
    l->n++;
}

static void pubsub_channels(gb_client *c, enum gb_pubsub_kind kind, int argc, gb_slice *argv)
{
    if (argc > 3) {
        gb_reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try PUBSUB HELP.",
                        (int)GB_MIN(argv[1].len, 128), argv[1].ptr);
        return;
    }
    list_ctx l = {c, 0};
    size_t h = gb_reply_array_deferred(c);
    gb_pubsub_channels(c->eng, kind, argc == 3 ? &argv[2] : NULL, list_one, &l);
    gb_reply_set_deferred(c, h, l.n);
}

/* A flat array of channel, count pairs in both protocols: Redis 7.0 sends
 * no map here (addReplyArrayLen), so RESP3 clients see an array too. */
static void pubsub_numsub(gb_client *c, enum gb_pubsub_kind kind, int argc, gb_slice *argv)
{
    gb_reply_array(c, 2 * (int64_t)(argc - 2));
    for (int i = 2; i < argc; i++) {
        gb_reply_slice(c, argv[i]);
        gb_reply_int(c, (int64_t)gb_pubsub_numsub(c->eng, kind, argv[i]));
    }
}

static void cmd_pubsub(gb_client *c, int argc, gb_slice *argv)
{
    gb_slice sub = argv[1];
    if (gb_slice_ieq(sub, "channels"))
        pubsub_channels(c, GB_PUBSUB_CHANNEL, argc, argv);
    else if (gb_slice_ieq(sub, "shardchannels"))
        pubsub_channels(c, GB_PUBSUB_SHARD, argc, argv);
    else if (gb_slice_ieq(sub, "numsub"))
        pubsub_numsub(c, GB_PUBSUB_CHANNEL, argc, argv);
    else if (gb_slice_ieq(sub, "shardnumsub"))
        pubsub_numsub(c, GB_PUBSUB_SHARD, argc, argv);
    else if (gb_slice_ieq(sub, "numpat"))
        gb_reply_int(c, (int64_t)gb_pubsub_count(c->eng, GB_PUBSUB_PATTERN));
    else if (gb_slice_ieq(sub, "help"))
        gb_reply_help(c, pubsub_help, GB_ARRAY_LEN(pubsub_help));
    else
        gb_reply_unknown_subcommand(c, sub, "pubsub");
}

GB_DEFINE_COMMANDS(pubsub,
    {"subscribe", cmd_subscribe},
    {"psubscribe", cmd_psubscribe},
    {"ssubscribe", cmd_ssubscribe},
    {"unsubscribe", cmd_unsubscribe},
    {"punsubscribe", cmd_punsubscribe},
    {"sunsubscribe", cmd_sunsubscribe},
    {"publish", cmd_publish, GB_CMD_MAY_REPLICATE},
    {"spublish", cmd_spublish, GB_CMD_MAY_REPLICATE},
    {"pubsub", cmd_pubsub, 0, "channels help numpat numsub shardchannels shardnumsub"});
