#include "engine/core/introspect/slowlog.h"

#include <stdio.h>
#include <string.h>

#include "engine/base/mem.h"
#include "engine/core/request/command.h"
#include "engine/core/engine.h"
#include "engine/core/introspect/monitor.h"

static char *copy_text(const char *p, size_t n, size_t *len_out)
{
    char *s = gb_malloc(n + 1);
    memcpy(s, p, n);
    s[n] = '\0';
    *len_out = n;
    return s;
}

/* Redis's slowlogCreateEntry: at most 32 arguments, the last of them then
 * saying how many more there were; arguments over 128 bytes cut, saying
 * how many more bytes there were; secrets (AUTH's) as "(redacted)". */
static void copy_argv(gb_slowlog_entry *e, const gb_command *cmd, int argc, const gb_slice *argv)
{
    int n = argc > GB_SLOWLOG_MAX_ARGC ? GB_SLOWLOG_MAX_ARGC : argc;
    e->argc = n;
    e->argv = gb_malloc((size_t)n * sizeof *e->argv);
    e->lens = gb_malloc((size_t)n * sizeof *e->lens);
    for (int j = 0; j < n; j++) {
        char buf[GB_SLOWLOG_MAX_STRING + 48];
        if (n != argc && j == n - 1) {
            int k = snprintf(buf, sizeof buf, "... (%d more arguments)", argc - n + 1);
            e->argv[j] = copy_text(buf, (size_t)k, &e->lens[j]);
        } else if (gb_command_arg_redacted(cmd, argc, argv, j)) {
            e->argv[j] = copy_text("(redacted)", 10, &e->lens[j]);
        } else if (argv[j].len > GB_SLOWLOG_MAX_STRING) {
            memcpy(buf, argv[j].ptr, GB_SLOWLOG_MAX_STRING);
            int k = snprintf(buf + GB_SLOWLOG_MAX_STRING, sizeof buf - GB_SLOWLOG_MAX_STRING, "... (%zu more bytes)",
                             argv[j].len - GB_SLOWLOG_MAX_STRING);
            e->argv[j] = copy_text(buf, GB_SLOWLOG_MAX_STRING + (size_t)k, &e->lens[j]);
        } else {
            e->argv[j] = copy_text(argv[j].ptr, argv[j].len, &e->lens[j]);
        }
    }
}

static void free_entry(gb_slowlog_entry *e)
{
    for (int j = 0; j < e->argc; j++)
        gb_free(e->argv[j]);
    gb_free(e->argv);
    gb_free(e->lens);
    gb_free(e->addr);
    gb_free(e->name);
    gb_free(e);
}

static void drop_oldest(gb_slowlog *log)
{
    free_entry(log->ring[log->start]);
    log->start = (log->start + 1) % log->cap;
    log->n--;
}

static void append(gb_slowlog *log, gb_slowlog_entry *e)
{
    if (log->n == log->cap) {
        size_t cap = log->cap ? log->cap * 2 : 16;
        gb_slowlog_entry **ring = gb_malloc(cap * sizeof *ring);
        for (size_t i = 0; i < log->n; i++)
            ring[i] = log->ring[(log->start + i) % log->cap];
        gb_free(log->ring);
        log->ring = ring;
        log->cap = cap;
        log->start = 0;
    }
    log->ring[(log->start + log->n) % log->cap] = e;
    log->n++;
}

/* A client a script's commands run on has no address: Redis's fake Lua
 * client answers "?:0". */
static void describe_client(gb_client *c, gb_slowlog_entry *e)
{
    gb_client_desc d = {.fd = -1};
    if (c->hooks && c->hooks->describe)
        c->hooks->describe(c, &d);
    e->addr = gb_strdup(d.addr[0] ? d.addr : "?:0");
    e->name = gb_strdup(c->name ? c->name : "");
}

void gb_slowlog_push(gb_engine *eng, gb_client *c, const gb_command *cmd, int argc, const gb_slice *argv,
                     int64_t duration_us)
{
    long long threshold = eng->cfg.slowlog_log_slower_than;
    if (threshold < 0 || duration_us < threshold || (cmd->meta->flags & GB_CMDF_SKIP_SLOWLOG))
        return;
    gb_slowlog *log = &eng->slowlog;
    gb_slowlog_entry *e = gb_calloc(1, sizeof *e);
    e->id = log->next_id++;
    e->time = eng->now_ms / 1000;
    e->duration_us = duration_us;
    copy_argv(e, cmd, argc, argv);
    describe_client(c, e);
    append(log, e);
    gb_slowlog_trim(eng);
}

void gb_slowlog_trim(gb_engine *eng)
{
    gb_slowlog *log = &eng->slowlog;
    while (log->n > (size_t)eng->cfg.slowlog_max_len)
        drop_oldest(log);
}

void gb_slowlog_reset(gb_slowlog *log)
{
    while (log->n)
        drop_oldest(log);
    gb_free(log->ring);
    log->ring = NULL;
    log->cap = log->start = 0;
}

const gb_slowlog_entry *gb_slowlog_get(const gb_slowlog *log, size_t i)
{
    return i < log->n ? log->ring[(log->start + log->n - 1 - i) % log->cap] : NULL;
}
