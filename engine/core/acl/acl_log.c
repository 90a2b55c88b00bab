#include "engine/core/acl/acl_log.h"

#include "engine/base/mem.h"
#include "engine/core/acl/acl_user.h"

/* Redis's ACL_LOG_GROUPING_MAX_TIME_DELTA, and how many entries a new
 * denial is compared with. */
#define GROUPING_MS 60000
#define GROUPING_SCAN 10

static void unlink_entry(gb_acl_log *log, gb_acl_log_entry *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        log->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        log->tail = e->prev;
    e->prev = e->next = NULL;
    log->n--;
}

static void push_front(gb_acl_log *log, gb_acl_log_entry *e)
{
    e->prev = NULL;
    e->next = log->head;
    if (log->head)
        log->head->prev = e;
    else
        log->tail = e;
    log->head = e;
    log->n++;
}

static void free_entry(gb_acl_log_entry *e)
{
    gb_free(e->object);
    gb_free(e->username);
    gb_free(e->client_info);
    gb_free(e);
}

static bool similar(const gb_acl_log_entry *e, int reason, int context, gb_slice object, gb_slice username,
                    int64_t now_ms)
{
    int64_t delta = e->ctime_ms - now_ms;
    if (delta < 0)
        delta = -delta;
    return e->reason == reason && e->context == context && delta <= GROUPING_MS &&
           gb_slice_eq(gb_slice_make(e->object, e->objlen), object) &&
           gb_slice_eq(gb_slice_make(e->username, e->userlen), username);
}

void gb_acl_log_add(gb_acl_log *log, int reason, int context, gb_slice object, gb_slice username,
                    const char *client_info, int64_t now_ms, size_t max_len)
{
    if (object.len > GB_ACL_LOG_OBJECT_MAX)
        object.len = GB_ACL_LOG_OBJECT_MAX;
    int scanned = 0;
    for (gb_acl_log_entry *e = log->head; e && scanned < GROUPING_SCAN; e = e->next, scanned++) {
        if (!similar(e, reason, context, object, username, now_ms))
            continue;
        unlink_entry(log, e);
        push_front(log, e);
        gb_free(e->client_info);
        e->client_info = gb_strdup(client_info);
        e->ctime_ms = now_ms;
        e->count++;
        return;
    }
    gb_acl_log_entry *e = gb_calloc(1, sizeof *e);
    e->count = 1;
    e->ctime_ms = now_ms;
    e->reason = (uint8_t)reason;
    e->context = (uint8_t)context;
    e->object = gb_memdup(object.ptr, object.len);
    e->objlen = object.len;
    e->username = gb_memdup(username.ptr, username.len);
    e->userlen = username.len;
    e->client_info = gb_strdup(client_info);
    push_front(log, e);
    while (log->n > max_len) {
        gb_acl_log_entry *old = log->tail;
        unlink_entry(log, old);
        free_entry(old);
    }
}

void gb_acl_log_reset(gb_acl_log *log)
{
    while (log->head) {
        gb_acl_log_entry *e = log->head;
        unlink_entry(log, e);
        free_entry(e);
    }
}

const char *gb_acl_log_reason_name(int reason)
{
    switch (reason) {
    case GB_ACL_DENIED_CMD: return "command";
    case GB_ACL_DENIED_KEY: return "key";
    case GB_ACL_DENIED_CHANNEL: return "channel";
    case GB_ACL_DENIED_AUTH: return "auth";
    default: return "unknown";
    }
}

const char *gb_acl_log_context_name(int context)
{
    switch (context) {
    case GB_ACL_CTX_TOPLEVEL: return "toplevel";
    case GB_ACL_CTX_MULTI: return "multi";
    case GB_ACL_CTX_LUA: return "lua";
    default: return "unknown";
    }
}
