#include "engine/core/config/process_settings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/base/mem.h"
#include "engine/base/strbuf.h"

#include "engine/core/engine.h"
#include "engine/base/allocator.h"
#include "goblin/version.h"
#include "platform/daemon.h"
#include "platform/proctitle.h"
#include "platform/service.h"
#include "platform/errmsg.h"
#include "platform/fdlimit.h"

int gb_oom_score_apply(const gb_settings *cfg)
{
    static bool adjusted;
    static int base;
    int value;
    if (cfg->oom_score_adj != GB_OOM_ADJ_NO) {
        if (!adjusted) {
            if (gb_plat_oom_score_adj_get(&base) != 0) {
                gb_log(GB_LOG_WARNING, "Unable to read oom_score_adj: %s", gb_plat_last_error());
                return -1;
            }
            adjusted = true;
        }
        value = atoi(cfg->oom_score_adj_values); /* the master's: the first of three (checked) */
        if (cfg->oom_score_adj != GB_OOM_ADJ_ABSOLUTE)
            value += base;
        value = value > 1000 ? 1000 : value < -1000 ? -1000 : value;
    } else if (adjusted) {
        adjusted = false;
        value = base;
    } else {
        return 0;
    }
    if (gb_plat_oom_score_adj_set(value) != 0) {
        gb_log(GB_LOG_WARNING, "Unable to write oom_score_adj: %s", gb_plat_last_error());
        return -1;
    }
    return 0;
}

void gb_crash_log_apply(const gb_settings *cfg)
{
    if (!cfg->crash_log_enabled) {
        gb_plat_crash_report_remove();
        return;
    }
    if (gb_plat_crash_report_install(gb_log_fd(), "Goblin Core " GOBLIN_VERSION) != 0)
        gb_log(GB_LOG_WARNING, "crash-log-enabled: no crash report: %s", gb_plat_last_error());
    static bool told;
    if (gb_plat_crash_memtest_enable(cfg->crash_memcheck_enabled != 0) != 0 && cfg->crash_memcheck_enabled && !told) {
        told = true;
        gb_log(GB_LOG_NOTICE, "crash-memcheck-enabled does not apply: %s", gb_plat_last_error());
    }
}

void gb_allocator_bg_thread_apply(const gb_settings *cfg)
{
    static bool told;
    if (!gb_allocator_set_background_thread(cfg->jemalloc_bg_thread != 0) && !told) {
        told = true;
        gb_log(GB_LOG_NOTICE, "jemalloc-bg-thread does not apply: the allocator is %s", gb_allocator_name());
    }
}

/* One {variable}'s value (Redis's redisProcTitleGetVariable) into b; false
 * for a name it does not know. */
static bool title_variable(gb_strbuf *b, const char *name, size_t len, const gb_settings *cfg)
{
#define IS(s) (len == sizeof(s) - 1 && memcmp(name, s, len) == 0)
    char num[32];
    if (IS("title")) {
        gb_strbuf_adds(b, cfg && cfg->exec_name ? cfg->exec_name : "");
    } else if (IS("listen-addr")) {
        if (!cfg) {
            gb_strbuf_adds(b, "*:6379");
        } else if (cfg->port) {
            const char *bind = cfg->bind ? cfg->bind : "";
            size_t first = strcspn(bind, " ");
            gb_strbuf_add(b, first ? bind : "*", first ? first : 1);
            snprintf(num, sizeof num, ":%d", cfg->port);
            gb_strbuf_adds(b, num);
        } else {
            gb_strbuf_adds(b, "unixsocket:");
            gb_strbuf_adds(b, cfg->unixsocket ? cfg->unixsocket : "");
        }
    } else if (IS("server-mode")) {
        /* "[cluster]" / "[sentinel]" in Redis: neither mode exists here yet */
    } else if (IS("config-file")) {
        gb_strbuf_adds(b, cfg && cfg->config_file ? cfg->config_file : "-");
    } else if (IS("port")) {
        snprintf(num, sizeof num, "%d", cfg ? cfg->port : 6379);
        gb_strbuf_adds(b, num);
    } else if (IS("tls-port")) {
        gb_strbuf_adds(b, "0");
    } else if (IS("unixsocket")) {
        gb_strbuf_adds(b, !cfg ? "/tmp/x.sock" : cfg->unixsocket ? cfg->unixsocket : "");
    } else {
        return false;
    }
    return true;
#undef IS
}

char *gb_proc_title_expand(const char *tmpl, const gb_settings *cfg)
{
    gb_strbuf b = {0};
    gb_strbuf_adds(&b, ""); /* an empty template still gives a string */
    for (const char *p = tmpl; *p;) {
        const char *open = strchr(p, '{');
        if (!open) {
            gb_strbuf_adds(&b, p);
            break;
        }
        gb_strbuf_add(&b, p, (size_t)(open - p));
        if (open[1] == '{') { /* a quoted brace */
            gb_strbuf_addc(&b, '{');
            p = open + 2;
            continue;
        }
        const char *close = strchr(open + 1, '}');
        if (!close || !title_variable(&b, open + 1, (size_t)(close - open - 1), cfg)) {
            gb_free(b.p);
            return NULL;
        }
        p = close + 1;
    }
    /* sdstrim(res, " "): spaces off both ends */
    size_t start = 0, end = b.len;
    while (start < end && b.p[start] == ' ')
        start++;
    while (end > start && b.p[end - 1] == ' ')
        end--;
    memmove(b.p, b.p + start, end - start);
    b.p[end - start] = '\0';
    return b.p;
}

bool gb_proc_title_valid(const char *tmpl, const gb_settings *cfg)
{
    char *title = gb_proc_title_expand(tmpl, cfg);
    bool ok = title && title[0];
    gb_free(title);
    return ok;
}

int gb_proc_title_apply(const gb_settings *cfg)
{
    if (!cfg->set_proc_title)
        return 0;
    char *title = gb_proc_title_expand(cfg->proc_title_template, cfg);
    if (!title) { /* checked when set: only a bug gets here */
        gb_log(GB_LOG_WARNING, "set-proc-title: proc-title-template is invalid");
        return -1;
    }
    int rc = gb_plat_proctitle_set(title);
    gb_free(title);
    if (rc != 0) {
        gb_log(GB_LOG_WARNING, "set-proc-title: %s", gb_plat_last_error());
        return -1;
    }
    return 0;
}

uint64_t gb_fd_reserved(const gb_settings *cfg) { return 32 + 2 * (uint64_t)(cfg->rings > 0 ? cfg->rings : 0); }

int gb_fd_limit_apply(gb_settings *cfg, bool starting, char *err, size_t errlen)
{
    uint64_t reserved = gb_fd_reserved(cfg), wanted = (uint64_t)cfg->maxclients + reserved, was, now;
    int rc = gb_plat_fd_limit_raise(wanted, &was, &now);
    if (rc == 0) {
        if (now > was)
            gb_log(GB_LOG_NOTICE, "Increased maximum number of open files to %llu (it was originally set to %llu).",
                   (unsigned long long)now, (unsigned long long)was);
        return 0;
    }
    long long fits = now > reserved ? (long long)(now - reserved) : 0;
    if (!starting) {
        snprintf(err, errlen, "The operating system is not able to handle the specified number of clients, try "
                 "with %lld", fits);
        return -1;
    }
    if (fits < 1) {
        snprintf(err, errlen, "Your current 'ulimit -n' of %llu is not enough for the server to start. Please "
                 "increase your open file limit to at least %llu. Exiting.", (unsigned long long)was,
                 (unsigned long long)wanted);
        return -1;
    }
    gb_log(GB_LOG_WARNING, "You requested maxclients of %lld requiring at least %llu max file descriptors.",
           cfg->maxclients, (unsigned long long)wanted);
    gb_log(GB_LOG_WARNING, "Server can't set maximum open files to %llu because of OS error: %s.",
           (unsigned long long)wanted, rc > 0 ? strerror(rc) : "the limit could not be read");
    gb_log(GB_LOG_WARNING, "Current maximum open files is %llu. maxclients has been reduced to %lld to compensate "
           "for low ulimit. If you need higher maxclients increase 'ulimit -n'.", (unsigned long long)now, fits);
    cfg->maxclients = fits;
    return 0;
}
