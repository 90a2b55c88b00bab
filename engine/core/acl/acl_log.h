/*
 * ACL LOG: the recent denials (a command, a key or a channel refused, an
 * authentication that failed), newest first, as Redis 7.0 keeps them.
 *
 * A denial like one of the ten newest entries (same reason, context,
 * object and user, within 60 seconds) bumps that entry's count and moves
 * it to the front instead of adding one, so a client retrying in a loop
 * fills one entry, not the log. The log holds at most acllog-max-len
 * entries (checked as entries are added, as in Redis); an entry's object
 * is kept up to GB_ACL_LOG_OBJECT_MAX bytes, so a denied client cannot
 * park its 512 MB key names in the server's memory.
 */
#ifndef GB_ENGINE_ACL_LOG_H
#define GB_ENGINE_ACL_LOG_H

#include "engine/base/common.h"

#define GB_ACL_LOG_OBJECT_MAX 1024

/* Where the denied command came from (Redis's ACL_LOG_CTX_*). */
enum gb_acl_log_context { GB_ACL_CTX_TOPLEVEL, GB_ACL_CTX_MULTI, GB_ACL_CTX_LUA };

typedef struct gb_acl_log_entry {
    struct gb_acl_log_entry *prev, *next;
    uint64_t count;
    int64_t ctime_ms;   /* wall clock of the last occurrence */
    uint8_t reason;     /* enum gb_acl_denial */
    uint8_t context;    /* enum gb_acl_log_context */
    char *object;       /* the command, key or channel (or the AUTH/HELLO word) */
    size_t objlen;
    char *username;
    size_t userlen;
    char *client_info;  /* the client's CLIENT LIST line at the last occurrence */
} gb_acl_log_entry;

typedef struct gb_acl_log {
    gb_acl_log_entry *head, *tail; /* newest, oldest */
    size_t n;
} gb_acl_log;

/* Records one denial; client_info is copied. */
void gb_acl_log_add(gb_acl_log *log, int reason, int context, gb_slice object, gb_slice username,
                    const char *client_info, int64_t now_ms, size_t max_len);
void gb_acl_log_reset(gb_acl_log *log);

/* The texts ACL LOG shows for a reason and a context. */
const char *gb_acl_log_reason_name(int reason);
const char *gb_acl_log_context_name(int context);

#endif
