#include "engine/core/introspect/monitor.h"

#include <stdio.h>

#include "engine/base/mem.h"
#include "engine/core/engine.h"
#include "platform/clock.h"

void gb_monitor_add(gb_client *c)
{
    gb_engine *eng = c->eng;
    if (eng->nmonitors == eng->monitorcap) {
        eng->monitorcap = eng->monitorcap ? eng->monitorcap * 2 : 4;
        eng->monitors = gb_realloc(eng->monitors, eng->monitorcap * sizeof *eng->monitors);
    }
    eng->monitors[eng->nmonitors++] = c;
    c->flags |= GB_CLIENT_MONITOR;
}

void gb_monitor_remove(gb_client *c)
{
    gb_engine *eng = c->eng;
    if (!(c->flags & GB_CLIENT_MONITOR))
        return;
    c->flags &= ~GB_CLIENT_MONITOR;
    for (size_t i = 0; i < eng->nmonitors; i++)
        if (eng->monitors[i] == c) {
            memmove(&eng->monitors[i], &eng->monitors[i + 1], (eng->nmonitors - i - 1) * sizeof *eng->monitors);
            eng->nmonitors--;
            break;
        }
    if (eng->nmonitors == 0) {
        gb_free(eng->monitors);
        eng->monitors = NULL;
        eng->monitorcap = 0;
    }
}

typedef struct line {
    char *p;
    size_t len, cap;
} line;

static void put(line *l, const char *s, size_t n)
{
    if (l->len + n > l->cap) {
        l->cap = (l->len + n) * 2;
        l->p = gb_realloc(l->p, l->cap);
    }
    memcpy(l->p + l->len, s, n);
    l->len += n;
}

/* Redis's sdscatrepr: the argument in double quotes, escaped. */
static void put_repr(line *l, gb_slice a)
{
    put(l, "\"", 1);
    for (size_t i = 0; i < a.len; i++) {
        unsigned char ch = (unsigned char)a.ptr[i];
        char esc[5];
        switch (ch) {
        case '\\': put(l, "\\\\", 2); break;
        case '"': put(l, "\\\"", 2); break;
        case '\n': put(l, "\\n", 2); break;
        case '\r': put(l, "\\r", 2); break;
        case '\t': put(l, "\\t", 2); break;
        case '\a': put(l, "\\a", 2); break;
        case '\b': put(l, "\\b", 2); break;
        default:
            if (ch >= 0x20 && ch < 0x7f) { /* isprint in the C locale */
                put(l, (const char *)&ch, 1);
            } else {
                snprintf(esc, sizeof esc, "\\x%02x", ch);
                put(l, esc, 4);
            }
        }
    }
    put(l, "\"", 1);
}

/* Whether argument i of MIGRATE is the password of its AUTH option or the
 * user or password of AUTH2, reading the options from the sixth as
 * migrateCommand does: up to KEYS, or to the first it does not know. */
static bool migrate_secret(int argc, const gb_slice *argv, int i)
{
    for (int j = 6; j < argc; j++) {
        if (gb_slice_ieq(argv[j], "copy") || gb_slice_ieq(argv[j], "replace"))
            continue;
        int secrets = gb_slice_ieq(argv[j], "auth") ? 1 : gb_slice_ieq(argv[j], "auth2") ? 2 : 0;
        if (secrets == 0 || j + secrets >= argc)
            return false; /* KEYS, an unknown option or one missing its arguments: nothing after is secret */
        if (i > j && i <= j + secrets)
            return true;
        j += secrets;
    }
    return false;
}

/* The arguments that carry secrets: everything after AUTH, the user and
 * password of HELLO's AUTH option, the value CONFIG SET gives a password
 * setting, every argument of ACL SETUSER from the user name on, MIGRATE's
 * AUTH and AUTH2 credentials (Redis 7.0's redactClientCommandArgument). */
bool gb_command_arg_redacted(const gb_command *cmd, int argc, const gb_slice *argv, int i)
{
    if (strcmp(cmd->fullname, "auth") == 0)
        return i >= 1;
    if (strcmp(cmd->fullname, "acl|setuser") == 0)
        return i >= 2;
    if (strcmp(cmd->fullname, "migrate") == 0)
        return migrate_secret(argc, argv, i);
    if (strcmp(cmd->fullname, "config|set") == 0)
        return i >= 3 && i % 2 == 1 &&
               (gb_slice_ieq(argv[i - 1], "requirepass") || gb_slice_ieq(argv[i - 1], "masterauth") ||
                gb_slice_ieq(argv[i - 1], "masteruser"));
    if (strcmp(cmd->fullname, "hello") == 0) {
        for (int j = 2; j + 2 < argc; j++)
            if (gb_slice_ieq(argv[j], "auth") && (i == j + 1 || i == j + 2))
                return true;
    }
    return false;
}

/* "unix:<path>" for the Unix socket (its CLIENT LIST addr is "<path>:0"). */
static void client_addr(const gb_client *c, char *out, size_t cap)
{
    gb_client_desc d = {.fd = -1};
    if (c->hooks && c->hooks->describe)
        c->hooks->describe(c, &d);
    if (c->flags & GB_CLIENT_SCRIPT) {
        snprintf(out, cap, "lua"); /* a script's redis.call, as Redis shows it */
    } else if (c->flags & GB_CLIENT_UNIX) {
        size_t n = strlen(d.addr);
        if (n >= 2 && strcmp(d.addr + n - 2, ":0") == 0)
            d.addr[n - 2] = '\0';
        snprintf(out, cap, "unix:%s", d.addr);
    } else {
        snprintf(out, cap, "%s", d.addr);
    }
}

void gb_monitor_feed(gb_client *c, const gb_command *cmd, int argc, const gb_slice *argv)
{
    if (cmd->flags & (GB_CMD_ADMIN | GB_CMD_SKIP_MONITOR))
        return;
    gb_monitor_feed_always(c, cmd, argc, argv);
}

void gb_monitor_feed_always(gb_client *c, const gb_command *cmd, int argc, const gb_slice *argv)
{
    gb_engine *eng = c->eng;
    int64_t us = gb_clock_real_us();
    char addr[160], head[256];
    client_addr(c, addr, sizeof addr);
    int n = snprintf(head, sizeof head, "%lld.%06lld [%d %s]", (long long)(us / 1000000), (long long)(us % 1000000),
                     c->db->id, addr);
    line l = {0};
    put(&l, head, (size_t)(n > 0 ? GB_MIN((size_t)n, sizeof head - 1) : 0));
    for (int i = 0; i < argc; i++) {
        put(&l, " ", 1);
        if (gb_command_arg_redacted(cmd, argc, argv, i))
            put(&l, "\"(redacted)\"", 12);
        else
            put_repr(&l, argv[i]);
    }
    for (size_t i = 0; i < eng->nmonitors; i++) {
        gb_client *m = eng->monitors[i];
        if (m->flags & (GB_CLIENT_CLOSE_ASAP | GB_CLIENT_CLOSE_AFTER_REPLY))
            continue;
        m->rops->status(m->rctx, l.p, l.len);
        /* The client running the command sends its output when it is done. */
        if (m != c && m->hooks && m->hooks->flush)
            m->hooks->flush(m);
    }
    gb_free(l.p);
}
