/*
 * CLIENT TRACKING: server-assisted client-side caching, as Redis 7.0 does
 * it (tracking.c).
 *
 * Default mode: after a read-only command of a tracking client, its keys
 * are remembered with the client's id (unless OPTIN without CLIENT CACHING
 * YES, or OPTOUT with CLIENT CACHING NO). When such a key is modified
 * (gb_engine_key_modified, expiry, eviction) each remembered client gets one
 * invalidation and the key is forgotten until read again. The table is
 * keyed by key name only, across databases, as Redis's, and holds at most
 * tracking-table-max-keys keys: over it, before the next command, random
 * keys are invalidated as if modified (Redis's trackingLimitUsedSlots).
 *
 * BCAST mode: the client names prefixes (none: every key); every modified
 * key under one is collected, and after the command the clients of that
 * prefix get the keys collected so far in one message (Redis batches per
 * event-loop iteration; here per command, so a pipeline of writes yields
 * one message per command rather than one per batch).
 *
 * The message: a RESP3 push ["invalidate", [key, ...]]; FLUSHDB/FLUSHALL
 * send ["invalidate", null]. With REDIRECT id the message goes to that
 * client instead: a push if it speaks RESP3, else (RESP2) a pub/sub message
 * on __redis__:invalidate if it is subscribed; a RESP3 client whose
 * redirect target went away gets ["tracking-redir-broken", id] (flag 'R').
 * A client never gets its own invalidations in the middle of a reply: those
 * caused by its command go out after the command's reply. NOLOOP: no
 * invalidation for keys the client modified itself.
 */
#ifndef GB_ENGINE_CORE_TRACKING_H
#define GB_ENGINE_CORE_TRACKING_H

#include "engine/core/request/client.h"
#include "engine/core/request/command.h"

struct gb_engine;

enum {
    GB_TRACK_BCAST = 1u << 0,
    GB_TRACK_OPTIN = 1u << 1,
    GB_TRACK_OPTOUT = 1u << 2,
    GB_TRACK_NOLOOP = 1u << 3,
    GB_TRACK_CACHING = 1u << 4,      /* CLIENT CACHING given for the next command */
    GB_TRACK_BROKEN_REDIR = 1u << 5, /* the redirect target is gone */
};

typedef struct gb_client_tracking {
    uint32_t flags;     /* GB_TRACK_* */
    uint64_t redirect;  /* client id, 0: none */
    gb_slice *prefixes; /* BCAST prefixes (owned copies) */
    int nprefixes;
} gb_client_tracking;

/* CLIENT TRACKING ON|OFF ..., CLIENT CACHING, CLIENT GETREDIR, CLIENT
 * TRACKINGINFO: argument checks, error texts and replies of Redis 7.0.
 * argv[0] is "client", argv[1] the subcommand. */
void gb_tracking_cmd_tracking(gb_client *c, int argc, gb_slice *argv);
void gb_tracking_cmd_caching(gb_client *c, int argc, gb_slice *argv);
void gb_tracking_cmd_getredir(gb_client *c);
void gb_tracking_cmd_trackinginfo(gb_client *c);

/* Turns tracking off (CLIENT TRACKING OFF, RESET). */
void gb_tracking_disable(gb_client *c);
/* c is being freed. */
void gb_tracking_client_gone(gb_client *c);

/* After a read-only command cmd of a tracking client (the gate). */
void gb_tracking_remember(gb_client *c, const gb_command *cmd, int argc, const gb_slice *argv);
/* A command c sent is done: CLIENT CACHING's one-command window closes
 * (unless inside MULTI or the command was CLIENT ...). */
void gb_tracking_command_done(gb_client *c, const gb_command *cmd);
/* The gate is about to run a command for c. */
void gb_tracking_set_current(struct gb_engine *eng, gb_client *c);

/* key was modified in some database. */
void gb_tracking_invalidate_key(struct gb_engine *eng, gb_slice key);
/* key expired or was evicted: a change no client made (Redis's
 * signalModifiedKey(NULL, ...)), so a BCAST NOLOOP client gets it even
 * when its own command found the key expired. */
void gb_tracking_invalidate_expired(struct gb_engine *eng, gb_slice key);
/* Outside commands (the cron, background work): the broadcast batches
 * that work collected go out (Redis sends them before the loop sleeps). */
void gb_tracking_flush_broadcast(struct gb_engine *eng);
/* FLUSHDB / FLUSHALL: every tracking client gets ["invalidate", null]. */
void gb_tracking_invalidate_flush(struct gb_engine *eng);
/* After the outermost command: the current client's own invalidations and
 * the broadcast batches go out. */
void gb_tracking_after_command(struct gb_engine *eng);

/* CLIENT LIST's redir= (-1 when not tracking) and flags 'R', 'B'. */
long long gb_tracking_redirect_id(const gb_client *c);
bool gb_tracking_broken_redirect(const gb_client *c);
bool gb_tracking_bcast(const gb_client *c);

/* INFO's tracking_clients, tracking_total_keys (keys remembered),
 * tracking_total_items (client ids over them) and tracking_total_prefixes
 * (BCAST prefixes). */
size_t gb_tracking_clients(const struct gb_engine *eng);
size_t gb_tracking_total_keys(const struct gb_engine *eng);
size_t gb_tracking_total_items(const struct gb_engine *eng);
size_t gb_tracking_total_prefixes(const struct gb_engine *eng);

void gb_tracking_engine_free(struct gb_engine *eng);

#endif
