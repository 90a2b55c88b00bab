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
    {"multi", cmd_multi, GB_CMD_NOT_QUEUED},
    {"exec", gb_multi_exec_proc, GB_CMD_NOT_QUEUED},
    {"discard", cmd_discard, GB_CMD_NOT_QUEUED},
    {"watch", cmd_watch, GB_CMD_NOT_QUEUED},
    {"unwatch", cmd_unwatch});
