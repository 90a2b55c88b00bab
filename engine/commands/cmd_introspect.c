/* SLOWLOG and LATENCY (engine/core/introspect/slowlog.h, engine/core/introspect/latency.h), with
 * Redis 7.0's replies and texts. */
#include <stdio.h>
#include <stdlib.h>

#include "engine/base/mem.h"
#include "engine/base/util.h"
#include "engine/commands/cmd_util.h"
#include "engine/core/engine.h"

/* Redis's addReplySubcommandSyntaxError. */
static void reply_syntax(gb_client *c, gb_slice *argv)
{
    char upper[32];
    size_t n = GB_MIN(argv[0].len, sizeof upper - 1);
    for (size_t i = 0; i < n; i++)
        upper[i] = (char)(argv[0].ptr[i] >= 'a' && argv[0].ptr[i] <= 'z' ? argv[0].ptr[i] - 32 : argv[0].ptr[i]);
    upper[n] = '\0';
    gb_reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try %s HELP.",
                    (int)GB_MIN(argv[1].len, 128), argv[1].ptr, upper);
}

/* Redis's addReplyHelp: its header and HELP lines around the command's. */
static void reply_help(gb_client *c, const char *cmd, const char *const *lines, size_t n)
{
    char head[96];
    snprintf(head, sizeof head, "%s <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", cmd);
    gb_reply_array(c, (int64_t)n + 3);
    gb_reply_status(c, head);
    for (size_t i = 0; i < n; i++)
        gb_reply_status(c, lines[i]);
    gb_reply_status(c, "HELP");
    gb_reply_status(c, "    Prints this help.");
}

/* ---- SLOWLOG -------------------------------------------------------------------------- */

static void reply_slowlog_entry(gb_client *c, const gb_slowlog_entry *e)
{
    gb_reply_array(c, 6);
    gb_reply_int(c, (int64_t)e->id);
    gb_reply_int(c, e->time);
    gb_reply_int(c, e->duration_us);
    gb_reply_array(c, e->argc);
    for (int j = 0; j < e->argc; j++)
        gb_reply_bulk(c, e->argv[j], e->lens[j]);
    gb_reply_cstr(c, e->addr);
    gb_reply_cstr(c, e->name);
}

static void cmd_slowlog(gb_client *c, int argc, gb_slice *argv)
{
    gb_slowlog *log = &c->eng->slowlog;
    gb_slice sub = argv[1];
    if (argc == 2 && gb_slice_ieq(sub, "help")) {
        static const char *lines[] = {
            "GET [<count>]",
            "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
            "    Entries are made of:",
            "    id, timestamp, time in microseconds, arguments array, client IP and port,",
            "    client name",
            "LEN",
            "    Return the length of the slowlog.",
            "RESET",
            "    Reset the slowlog.",
        };
        reply_help(c, "SLOWLOG", lines, GB_ARRAY_LEN(lines));
    } else if (argc == 2 && gb_slice_ieq(sub, "reset")) {
        gb_slowlog_reset(log);
        gb_reply_ok(c);
    } else if (argc == 2 && gb_slice_ieq(sub, "len")) {
        gb_reply_int(c, (int64_t)log->n);
    } else if ((argc == 2 || argc == 3) && gb_slice_ieq(sub, "get")) {
        int64_t count = 10;
        if (argc == 3) {
            const char *msg = "ERR count should be greater than or equal to -1";
            if (!gb_slice2ll(argv[2], &count) || count < -1) {
                gb_reply_error(c, msg);
                return;
            }
            if (count == -1)
                count = (int64_t)log->n;
        }
        size_t n = (size_t)count < log->n ? (size_t)count : log->n;
        gb_reply_array(c, (int64_t)n);
        for (size_t i = 0; i < n; i++)
            reply_slowlog_entry(c, gb_slowlog_get(log, i));
    } else {
        reply_syntax(c, argv);
    }
}

/* ---- LATENCY -------------------------------------------------------------------------- */

static void reply_latest(gb_client *c)
{
    gb_latency_monitor *m = &c->eng->latency;
    gb_reply_array(c, (int64_t)m->n);
    for (size_t i = 0; i < m->n; i++) {
        const gb_latency_event *ev = m->events[i];
        const gb_latency_sample *last = &ev->samples[(ev->idx + GB_LATENCY_TS_LEN - 1) % GB_LATENCY_TS_LEN];
        gb_reply_array(c, 4);
        gb_reply_cstr(c, ev->name);
        gb_reply_int(c, last->time);
        gb_reply_int(c, last->latency);
        gb_reply_int(c, ev->max);
    }
}

static void reply_history(gb_client *c, const gb_latency_event *ev)
{
    int n = 0;
    for (int j = 0; ev && j < GB_LATENCY_TS_LEN; j++)
        n += ev->samples[j].time != 0;
    gb_reply_array(c, n);
    for (int j = 0; ev && j < GB_LATENCY_TS_LEN; j++) {
        const gb_latency_sample *x = &ev->samples[(ev->idx + j) % GB_LATENCY_TS_LEN];
        if (!x->time)
            continue;
        gb_reply_array(c, 2);
        gb_reply_int(c, x->time);
        gb_reply_int(c, x->latency);
    }
}

typedef struct cdf_ctx {
    gb_client *c;
    int n;
} cdf_ctx;

static void count_bucket(void *ctx, int64_t usec, uint64_t cumulative)
{
    (void)usec, (void)cumulative;
    ((cdf_ctx *)ctx)->n++;
}

static void reply_bucket(void *ctx, int64_t usec, uint64_t cumulative)
{
    cdf_ctx *k = ctx;
    gb_reply_int(k->c, usec);
    gb_reply_int(k->c, (int64_t)cumulative);
}

/* Redis's fillCommandCDF. */
static void reply_cdf(gb_client *c, const gb_command *cmd)
{
    const gb_latency_hist *h = cmd->latency_hist;
    gb_reply_cstr(c, cmd->fullname);
    gb_reply_map(c, 2);
    gb_reply_cstr(c, "calls");
    gb_reply_int(c, (int64_t)h->total);
    gb_reply_cstr(c, "histogram_usec");
    cdf_ctx k = {c, 0};
    gb_latency_hist_cdf(h, count_bucket, &k);
    gb_reply_map(c, k.n);
    gb_latency_hist_cdf(h, reply_bucket, &k);
}

typedef struct hist_pass {
    gb_client *c; /* NULL: counting */
    int n;
} hist_pass;

static void hist_visit(gb_command *cmd, void *ctx)
{
    hist_pass *p = ctx;
    if (!cmd->latency_hist)
        return;
    p->n++;
    if (p->c)
        reply_cdf(p->c, cmd);
}

/* The named commands (a container with its subcommands), unknown ones
 * skipped; argv NULL: every command. */
static void visit_named(gb_engine *eng, int argc, gb_slice *argv, hist_pass *p)
{
    if (!argv) {
        gb_commands_foreach(eng, true, hist_visit, p);
        return;
    }
    for (int j = 0; j < argc; j++) {
        gb_command *cmd = gb_command_lookup_fullname(eng, argv[j]);
        if (!cmd)
            continue;
        hist_visit(cmd, p);
        for (uint8_t i = 0; i < cmd->nsubs; i++)
            hist_visit(&cmd->subs[i], p);
    }
}

static void reply_histogram(gb_client *c, int argc, gb_slice *argv)
{
    hist_pass count = {NULL, 0};
    visit_named(c->eng, argc, argv, &count);
    gb_reply_map(c, count.n);
    hist_pass reply = {c, 0};
    visit_named(c->eng, argc, argv, &reply);
}

static void reply_text(gb_client *c, char *text)
{
    gb_reply_verbatim(c, text ? text : "", text ? strlen(text) : 0);
    gb_free(text);
}

static void cmd_latency(gb_client *c, int argc, gb_slice *argv)
{
    gb_engine *eng = c->eng;
    gb_slice sub = argv[1];
    if (argc == 3 && gb_slice_ieq(sub, "history")) {
        reply_history(c, gb_latency_event_find(&eng->latency, argv[2]));
    } else if (argc == 3 && gb_slice_ieq(sub, "graph")) {
        const gb_latency_event *ev = gb_latency_event_find(&eng->latency, argv[2]);
        if (!ev)
            gb_reply_errorf(c, "ERR No samples available for event '%.*s'", (int)GB_MIN(argv[2].len, 256),
                            argv[2].ptr);
        else
            reply_text(c, gb_latency_graph(ev, eng->now_ms / 1000));
    } else if (argc == 2 && gb_slice_ieq(sub, "latest")) {
        reply_latest(c);
    } else if (argc == 2 && gb_slice_ieq(sub, "doctor")) {
        reply_text(c, gb_latency_doctor(eng));
    } else if (gb_slice_ieq(sub, "reset")) {
        int n = 0;
        if (argc == 2)
            n = gb_latency_reset(&eng->latency, NULL);
        for (int j = 2; j < argc; j++)
            n += gb_latency_reset(&eng->latency, &argv[j]);
        gb_reply_int(c, n);
    } else if (gb_slice_ieq(sub, "histogram")) {
        reply_histogram(c, argc - 2, argc > 2 ? argv + 2 : NULL);
    } else if (argc == 2 && gb_slice_ieq(sub, "help")) {
        static const char *lines[] = {
            "DOCTOR",
            "    Return a human readable latency analysis report.",
            "GRAPH <event>",
            "    Return an ASCII latency graph for the <event> class.",
            "HISTORY <event>",
            "    Return time-latency samples for the <event> class.",
            "LATEST",
            "    Return the latest latency samples for all events.",
            "RESET [<event> ...]",
            "    Reset latency data of one or more <event> classes.",
            "    (default: reset all data for all event classes)",
            "HISTOGRAM [COMMAND ...]",
            /* one line of Redis's help, kept whole (a split literal here reads as a missing comma) */
            "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
            "    If no commands are specified then all histograms are replied.",
        };
        reply_help(c, "LATENCY", lines, GB_ARRAY_LEN(lines));
    } else {
        reply_syntax(c, argv);
    }
}

GB_DEFINE_COMMANDS(introspect,
    {"slowlog", cmd_slowlog, 0, "get help len reset"},
    {"latency", cmd_latency, 0, "doctor graph help histogram history latest reset"});
