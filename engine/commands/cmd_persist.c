/*
 * Persistence commands (SAVE, BGSAVE, BGREWRITEAOF, LASTSAVE) and DEBUG's
 * subcommands that Redis's own test tooling relies on (RELOAD, LOADAOF,
 * SLEEP, SET-ACTIVE-EXPIRE, OBJECT, POPULATE, DIGEST, DIGEST-VALUE) and
 * client libraries' tests rely on (PROTOCOL, ERROR, LOG), on top of
 * engine/persist/persist.h.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>

#include "engine/base/mem.h"
#include "engine/base/score.h"
#include "engine/commands/cmd_util.h"
#include "engine/commands/debug_digest.h"
#include "engine/core/engine.h"
#include "engine/persist/persist.h"
#include "engine/script/sha1.h"
#include "engine/types/t_keys.h"
#include "engine/types/t_string.h"
#include "platform/daemon.h"

static void cmd_save(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    (void)argv;
    char err[640];
    if (gb_persist_save(gb_persist_of(c->eng), err, sizeof err) == 0)
        gb_reply_ok(c);
    else if (strncmp(err, "Background", 10) == 0)
        gb_reply_errorf(c, "ERR %s", err);
    else
        gb_reply_error(c, "ERR");
}

static void cmd_bgsave(gb_client *c, int argc, gb_slice *argv)
{
    bool schedule = false;
    if (argc > 1) {
        if (argc == 2 && gb_slice_ieq(argv[1], "schedule")) {
            schedule = true;
        } else {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return;
        }
    }
    char err[640];
    bool in_exec = (c->flags & GB_CLIENT_IN_EXEC) != 0;
    switch (gb_persist_bgsave(gb_persist_of(c->eng), schedule, in_exec, err, sizeof err)) {
    case GB_BGSAVE_STARTED:
        gb_reply_status(c, "Background saving started");
        break;
    case GB_BGSAVE_SCHEDULED:
        gb_reply_status(c, "Background saving scheduled");
        break;
    case GB_BGSAVE_BUSY:
        gb_reply_errorf(c, "ERR %s", err);
        break;
    case GB_BGSAVE_ERROR:
        gb_reply_error(c, "ERR");
        break;
    }
}

static void cmd_bgrewriteaof(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    (void)argv;
    char err[640];
    bool in_exec = (c->flags & GB_CLIENT_IN_EXEC) != 0;
    switch (gb_persist_bgrewriteaof(gb_persist_of(c->eng), in_exec, err, sizeof err)) {
    case GB_BGREWRITE_STARTED:
        gb_reply_status(c, "Background append only file rewriting started");
        break;
    case GB_BGREWRITE_SCHEDULED:
        gb_reply_status(c, "Background append only file rewriting scheduled");
        break;
    case GB_BGREWRITE_BUSY:
        gb_reply_errorf(c, "ERR %s", err);
        break;
    case GB_BGREWRITE_ERROR:
        gb_reply_error(c, "ERR Can't execute an AOF background rewriting. Please check the server logs for more "
                          "information.");
        break;
    }
}

static void cmd_lastsave(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    (void)argv;
    gb_reply_int(c, gb_persist_lastsave(gb_persist_of(c->eng)));
}

/* ---- DEBUG ------------------------------------------------------------------------------ */

static void debug_sleep(gb_client *c, gb_slice arg)
{
    /* Redis's reading, whatever the text: strtod of its leading number (0
     * for none), as whole microseconds in a long long; a value that is
     * negative, or that no long long holds (NaN, inf, past 2^63 µs), sleeps
     * not at all (Redis's nanosleep refuses what its conversion makes of
     * them) and is answered OK like the rest. */
    arg = gb_arg_cstring(arg);
    char *text = gb_malloc(arg.len + 1);
    memcpy(text, arg.ptr, arg.len);
    text[arg.len] = '\0';
    double usecs = strtod(text, NULL) * 1e6;
    gb_free(text);
    if (usecs >= 1 && usecs < 0x1p63) {
        long long u = (long long)usecs;
        /* The whole server sleeps: that is what the command is for (tests
         * of timeouts and of clients that must cope with a stalled
         * server). A signal does not cut it short. */
        struct timespec ts = {(time_t)(u / 1000000), (long)(u % 1000000) * 1000};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
    }
    gb_engine_update_time(c->eng);
    gb_reply_ok(c);
}

/* DEBUG OBJECT key: Redis's "key:value" fields that hold here (the
 * encoding as OBJECT ENCODING reports it, the idle time, and for a list
 * Redis 7.0's ql_compressed: whether list-compress-depth was set when it was
 * created), then for a list the representation behind "quicklist"
 * (segmented or pma) and how many of its segments are compressed now. */
static void debug_object(gb_client *c, gb_slice key)
{
    gb_object_info info;
    if (gb_keys_object(c->db, key, &info) != GB_R_OK) {
        gb_reply_error(c, GB_ERR_NO_KEY);
        return;
    }
    char line[256];
    int n = snprintf(line, sizeof line, "Value at:%p refcount:%lld encoding:%s lru_seconds_idle:%lld",
                     (void *)gb_db_lookup_quiet(c->db, key), (long long)info.refcount, info.encoding,
                     (long long)info.idle_s);
    if (info.representation)
        snprintf(line + n, sizeof line - (size_t)n,
                 " ql_compressed:%d representation:%s compressed_segments:%zu",
                 info.list_compress ? 1 : 0, info.representation, info.compressed_segments);
    gb_reply_status(c, line);
}

/* Redis's getPositiveLongFromObjectOrReply: one text for "not an
 * integer" and "negative". */
static bool arg_not_negative(gb_client *c, gb_slice arg, int64_t *out)
{
    return gb_arg_ll_range(c, arg, 0, INT64_MAX, "ERR value is out of range, must be positive", out);
}

/* Redis's snprintf into a 128-byte buffer: texts are cut to 127 bytes. */
#define POPULATE_TEXT 128

static size_t populate_text(char *buf, gb_slice prefix, int64_t j)
{
    int n = snprintf(buf, POPULATE_TEXT, "%.*s:%lld", (int)GB_MIN(prefix.len, POPULATE_TEXT), prefix.ptr,
                     (long long)j);
    return GB_MIN((size_t)n, POPULATE_TEXT - 1);
}

/* DEBUG POPULATE count [prefix] [size] (Redis's debug.c): the string keys
 * "<prefix>:<j>" for j in [0, count) (prefix "key", read up to its first
 * zero byte), each holding "value:<j>", or with size that text cut or
 * padded with zero bytes to size bytes. A key that exists, of any type,
 * is left as it is. As in Redis the keys are neither logged nor
 * replicated and raise no keyspace event: DEBUG is not a write command;
 * nor do they count as changes for the save points (Redis adds them with
 * dbAdd, which leaves server.dirty alone). */
static void debug_populate(gb_client *c, int argc, gb_slice *argv)
{
    int64_t count, size = 0;
    if (!arg_not_negative(c, argv[2], &count))
        return;
    /* Redis first sizes its key table for count keys and answers this when
     * the allocation fails (past a count near 2^60 it dies instead). The
     * same bound, without the allocation: one 8-byte bucket per key more
     * than the machine's memory. */
    size_t machine = gb_plat_total_system_memory();
    if ((uint64_t)count > (machine ? machine : SIZE_MAX) / sizeof(void *)) {
        gb_reply_error(c, "ERR OOM in dictTryExpand");
        return;
    }
    if (argc == 5 && !arg_not_negative(c, argv[4], &size))
        return;
    /* Redis allocates any size asked for, and dies when it cannot. */
    if (size > c->eng->cfg.proto_max_bulk_len) {
        gb_reply_error(c, "ERR string exceeds maximum allowed size (proto-max-bulk-len)");
        return;
    }
    gb_slice prefix = argc >= 4 ? gb_arg_cstring(argv[3]) : gb_slice_cstr("key");
    /* Zero bytes past the text; the texts only grow with j, so each
     * overwrites the last. */
    char *padded = size && count ? gb_calloc(1, (size_t)size) : NULL;
    uint64_t dirty = c->eng->stats.dirty;
    for (int64_t j = 0; j < count; j++) {
        char key[POPULATE_TEXT], text[POPULATE_TEXT];
        size_t klen = populate_text(key, prefix, j);
        size_t tlen = populate_text(text, gb_slice_cstr("value"), j);
        gb_slice value = gb_slice_make(text, tlen);
        if (padded) {
            memcpy(padded, text, GB_MIN((size_t)size, tlen));
            value = gb_slice_make(padded, (size_t)size);
        }
        gb_string_set(c->db, gb_slice_make(key, klen), value, GB_SET_NX, -1, NULL, NULL, NULL);
    }
    gb_free(padded);
    c->eng->stats.dirty = dirty;
    gb_reply_ok(c);
}

static const char *const debug_help[] = {
    "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DIGEST",
    "    Output a hex signature representing the current DB content.",
    "DIGEST-VALUE <key> [<key> ...]",
    "    Output a hex signature of the values of all the specified keys.",
    "ERROR <string>",
    "    Return a Redis protocol error with <string> as message. Useful for clients",
    "    unit tests to simulate Redis errors.",
    "LOG <message>",
    "    Write <message> to the server log.",
    "LOADAOF",
    "    Flush the append-only log to disk, empty the dataset, and load it back from the log.",
    "OBJECT <key>",
    "    Show low level info about the <key> and associated value.",
    "PROTOCOL <type>",
    "    Reply with a test value of the specified type. <type> can be: string,",
    "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
    "    true, false.",
    "POPULATE <count> [<prefix>] [<size>]",
    "    Create <count> string keys named key:<num>. If <prefix> is specified then",
    "    it is used instead of the 'key' prefix. These are not propagated to",
    "    replicas. Cluster slots are not respected so keys not belonging to the",
    "    current node can be created in cluster mode.",
    "RELOAD",
    "    Save the dataset to disk, empty it, and load it back from the file.",
    "SET-ACTIVE-EXPIRE <0|1>",
    "    Turn the active expiry cycle off or on (lazy expiry stays on).",
    "SLEEP <seconds>",
    "    Stop the server for <seconds> (decimals allowed).",
    "HELP",
    "    Prints this help.",
};

static void reply_digest(gb_client *c, const uint8_t digest[20])
{
    char hex[41];
    gb_sha1_to_hex(digest, hex);
    gb_reply_status_len(c, hex, 40);
}

/* DEBUG DIGEST-VALUE key ...: each value's digest, all zero for a missing
 * key; a key that has expired but is still stored is digested, as Redis
 * looks in its dict without expiring. */
static void debug_digest_value(gb_client *c, int argc, gb_slice *argv)
{
    gb_reply_array(c, argc - 2);
    for (int j = 2; j < argc; j++) {
        uint8_t digest[20] = {0};
        const gb_kv *kv = gb_db_find_stored(c->db, argv[j]);
        if (kv)
            gb_value_digest(kv, digest);
        reply_digest(c, digest);
    }
}

/* DEBUG PROTOCOL <type>: Redis's sample reply of each type, for client
 * libraries' tests of their RESP2 and RESP3 parsers. */
static void debug_protocol(gb_client *c, gb_slice type)
{
    if (gb_slice_ieq(type, "string")) {
        gb_reply_cstr(c, "Hello World");
    } else if (gb_slice_ieq(type, "integer")) {
        gb_reply_int(c, 12345);
    } else if (gb_slice_ieq(type, "double")) {
        gb_reply_double(c, 3.141);
    } else if (gb_slice_ieq(type, "bignum")) {
        gb_reply_big_number(c, "1234567999999999999999999999999999999", 37);
    } else if (gb_slice_ieq(type, "null")) {
        gb_reply_nil(c);
    } else if (gb_slice_ieq(type, "array") || gb_slice_ieq(type, "set")) {
        (gb_slice_ieq(type, "set") ? gb_reply_set : gb_reply_array)(c, 3);
        for (int j = 0; j < 3; j++)
            gb_reply_int(c, j);
    } else if (gb_slice_ieq(type, "map")) {
        gb_reply_map(c, 3);
        for (int j = 0; j < 3; j++) {
            gb_reply_int(c, j);
            gb_reply_bool(c, j == 1);
        }
    } else if (gb_slice_ieq(type, "attrib")) {
        if (gb_reply_attribute(c, 1)) { /* RESP3 only */
            gb_reply_cstr(c, "key-popularity");
            gb_reply_array(c, 2);
            gb_reply_cstr(c, "key:123");
            gb_reply_int(c, 90);
        }
        /* an attribute describes a reply: one follows */
        gb_reply_cstr(c, "Some real reply following the attribute");
    } else if (gb_slice_ieq(type, "push")) {
        if (c->resp < 3) {
            gb_reply_error(c, "ERR RESP2 is not supported by this command");
            return;
        }
        gb_reply_push(c, 2);
        gb_reply_cstr(c, "server-cpu-usage");
        gb_reply_int(c, 42);
        /* a push is no reply: the one a client waits for follows */
        gb_reply_cstr(c, "Some real reply following the push reply");
    } else if (gb_slice_ieq(type, "true") || gb_slice_ieq(type, "false")) {
        gb_reply_bool(c, gb_slice_ieq(type, "true"));
    } else if (gb_slice_ieq(type, "verbatim")) {
        gb_reply_verbatim(c, "This is a verbatim\nstring", 25);
    } else {
        gb_reply_error(c, "ERR Wrong protocol type name. Please use one of the following: "
                          "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false");
    }
}

/* DEBUG ERROR <string>: "-<string>" as it is (line breaks made spaces), not
 * counted as an error reply, as Redis writes it past its error accounting. */
static void debug_error(gb_client *c, gb_slice text)
{
    char *copy = gb_memdup(text.ptr, text.len);
    for (size_t i = 0; i < text.len; i++)
        if (copy[i] == '\r' || copy[i] == '\n')
            copy[i] = ' ';
    c->rops->error(c->rctx, copy, text.len);
    gb_free(copy);
}

static void cmd_debug(gb_client *c, int argc, gb_slice *argv)
{
    gb_slice sub = argv[1];
    if (gb_slice_ieq(sub, "help") && argc == 2) {
        gb_reply_help(c, debug_help, GB_ARRAY_LEN(debug_help));
    } else if (gb_slice_ieq(sub, "digest") && argc == 2) {
        uint8_t digest[20];
        gb_dataset_digest(c->eng, digest);
        reply_digest(c, digest);
    } else if (gb_slice_ieq(sub, "digest-value")) {
        debug_digest_value(c, argc, argv);
    } else if (gb_slice_ieq(sub, "protocol") && argc == 3) {
        debug_protocol(c, argv[2]);
    } else if (gb_slice_ieq(sub, "error") && argc == 3) {
        debug_error(c, argv[2]);
    } else if (gb_slice_ieq(sub, "log") && argc == 3) {
        gb_slice text = gb_arg_cstring(argv[2]); /* Redis logs it as a C string */
        gb_log(GB_LOG_WARNING, "DEBUG LOG: %.*s", (int)GB_MIN(text.len, 4096), text.ptr);
        gb_reply_ok(c);
    } else if (gb_slice_ieq(sub, "sleep") && argc == 3) {
        debug_sleep(c, argv[2]);
    } else if (gb_slice_ieq(sub, "populate") && argc >= 3 && argc <= 5) {
        debug_populate(c, argc, argv);
    } else if (gb_slice_ieq(sub, "object") && argc == 3) {
        debug_object(c, argv[2]);
    } else if (gb_slice_ieq(sub, "set-active-expire") && argc == 3) {
        int64_t on;
        if (!gb_arg_ll(c, argv[2], &on))
            return;
        c->eng->active_expire_enabled = on != 0;
        gb_reply_ok(c);
    } else if (gb_slice_ieq(sub, "loadaof") && argc == 2) {
        char err[640];
        int rc = gb_persist_debug_loadaof(gb_persist_of(c->eng), err, sizeof err);
        if (rc == GB_EINVAL) {
            gb_reply_errorf(c, "ERR %s", err);
            return;
        }
        if (rc != 0) {
            gb_reply_error(c, "ERR Error trying to load the AOF files, check server logs.");
            return;
        }
        gb_log(GB_LOG_WARNING, "Append Only File loaded by DEBUG LOADAOF");
        gb_reply_ok(c);
    } else if (gb_slice_ieq(sub, "reload") && argc == 2) {
        char err[640];
        gb_persist *p = gb_persist_of(c->eng);
        int rc = gb_persist_debug_reload(p, err, sizeof err);
        if (rc == GB_EIO) {
            gb_reply_error(c, "ERR"); /* Redis's reply when the save fails */
            return;
        }
        if (rc != 0) {
            gb_reply_error(c, "ERR Error trying to load the RDB dump, check server logs.");
            return;
        }
        gb_log(GB_LOG_WARNING, "DB reloaded by DEBUG RELOAD");
        gb_reply_ok(c);
    } else {
        /* DEBUG has no subcommand table in Redis: its addReplySubcommandSyntaxError */
        gb_reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try DEBUG HELP.",
                        (int)GB_MIN(sub.len, 128), sub.ptr);
    }
}

GB_DEFINE_COMMANDS(persist,
    {"save", cmd_save},
    {"bgsave", cmd_bgsave},
    {"bgrewriteaof", cmd_bgrewriteaof},
    {"lastsave", cmd_lastsave},
    {"debug", cmd_debug, GB_CMD_PROTECTED});
