/*
 * MULTI, EXEC, DISCARD, WATCH, UNWATCH: the commands over the transaction
 * machinery of engine/core/request/multi.c.
 */
#include "engine/core/request/command.h"
#include "engine/core/request/multi.h"

static void cmd_multi(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    (void)argv;
    if (c->flags & GB_CLIENT_MULTI) {
        gb_reply_error(c, "ERR MULTI calls can not be nested");
        return;
    }
    c->flags |= GB_CLIENT_MULTI;
    gb_reply_ok(c);
}

static void cmd_discard(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    (void)argv;
    if (!(c->flags & GB_CLIENT_MULTI)) {
        gb_reply_error(c, "ERR DISCARD without MULTI");
        return;
    }
    gb_multi_discard(c);
    gb_multi_unwatch_all(c);
    gb_reply_ok(c);
}

static void cmd_watch(gb_client *c, int argc, gb_slice *argv)
{
    if (c->flags & GB_CLIENT_MULTI) {
        gb_reply_error(c, "ERR WATCH inside MULTI is not allowed");
        return;
    }
    for (int i = 1; i < argc; i++)
        gb_multi_watch_key(c, argv[i]);
    gb_reply_ok(c);
}

static void cmd_unwatch(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    (void)argv;
    gb_multi_unwatch_all(c);
    gb_reply_ok(c);
}

GB_DEFINE_COMMANDS(multi,
    {"multi", 1, GB_CMD_NOMULTI | GB_CMD_NOSCRIPT | GB_CMD_ALLOW_BUSY | GB_CMD_FAST | GB_CMD_LOADING | GB_CMD_STALE, 0, 0, 0, cmd_multi, "transactions",
     "Starts a transaction.", "1.2.0"},
    {"exec", 1, GB_CMD_NOMULTI | GB_CMD_NOSCRIPT | GB_CMD_LOADING | GB_CMD_STALE, 0, 0, 0, gb_multi_exec_proc, "transactions",
     "Executes all commands in a transaction.", "1.2.0"},
    {"discard", 1, GB_CMD_NOMULTI | GB_CMD_NOSCRIPT | GB_CMD_ALLOW_BUSY | GB_CMD_FAST | GB_CMD_LOADING | GB_CMD_STALE, 0, 0, 0, cmd_discard,
     "transactions", "Discards a transaction.", "2.0.0"},
    {"watch", -2, GB_CMD_NOMULTI | GB_CMD_NOSCRIPT | GB_CMD_ALLOW_BUSY | GB_CMD_FAST | GB_CMD_LOADING | GB_CMD_STALE, 1, -1, 1, cmd_watch, "transactions",
     "Monitors changes to keys to determine the execution of a transaction.", "2.2.0"},
    {"unwatch", 1, GB_CMD_NOSCRIPT | GB_CMD_ALLOW_BUSY | GB_CMD_FAST | GB_CMD_LOADING | GB_CMD_STALE, 0, 0, 0, cmd_unwatch, "transactions",
     "Forgets about watched keys of a transaction.", "2.2.0"});
