/*
 * SLOWLOG: the commands that ran at least slowlog-log-slower-than
 * microseconds, newest first, at most slowlog-max-len of them, each as
 * Redis 7.0 keeps it (engine/commands/cmd_introspect.c answers SLOWLOG).
 * The gate times every call while the log is on (engine/core/request/gate.c) and
 * hands a slow one here with its argument vector.
 */
#ifndef GB_ENGINE_SLOWLOG_H
#define GB_ENGINE_SLOWLOG_H

#include "engine/base/common.h"

struct gb_engine;
struct gb_client;
struct gb_command;

/* Redis's SLOWLOG_ENTRY_MAX_ARGC and SLOWLOG_ENTRY_MAX_STRING. */
#define GB_SLOWLOG_MAX_ARGC 32
#define GB_SLOWLOG_MAX_STRING 128

typedef struct gb_slowlog_entry {
    uint64_t id;
    int64_t time;        /* Unix seconds */
    int64_t duration_us;
    int argc;
    char **argv;         /* each as logged: truncated, redacted */
    size_t *lens;
    char *addr;          /* CLIENT LIST's addr */
    char *name;          /* CLIENT SETNAME's, "" when none */
} gb_slowlog_entry;

typedef struct gb_slowlog {
    gb_slowlog_entry **ring; /* oldest at ring[start], cap slots */
    size_t start, n, cap;
    uint64_t next_id;
} gb_slowlog;

/* Logs the call if it ran long enough (and the command is one Redis logs). */
void gb_slowlog_push(struct gb_engine *eng, struct gb_client *c, const struct gb_command *cmd, int argc,
                     const gb_slice *argv, int64_t duration_us);
/* Drops the oldest entries beyond slowlog-max-len (after CONFIG SET). */
void gb_slowlog_trim(struct gb_engine *eng);
void gb_slowlog_reset(gb_slowlog *log);
/* The i-th newest entry (0: the newest); NULL past the end. */
const gb_slowlog_entry *gb_slowlog_get(const gb_slowlog *log, size_t i);

#endif
