/*
 * Write propagation: every change to the dataset, once, in order, as a
 * command that replays it.
 *
 * The contract (what an append-only log, a replica or a test sink may rely
 * on):
 *
 *   - A command that changed the dataset emits its effect after it ran:
 *     its own argument vector when that replays it exactly, otherwise the
 *     deterministic form its handler chose (gb_propagate_command): a served
 *     BLPOP is the LPOP that happened, SPOP the SREM of what was popped,
 *     INCRBYFLOAT a SET of the result, a relative expiry an absolute
 *     PEXPIREAT / SET ... PXAT.
 *   - A command that changed nothing (stats.dirty did not move) emits
 *     nothing, whatever its name.
 *   - A key found expired, wherever that happens, emits DEL key before the
 *     effect of the command that found it (gb_propagate_expired).
 *   - The effects of one top-level call (a command, a whole EXEC, later a
 *     script) are a unit: more than one is wrapped in MULTI ... EXEC so a
 *     consumer applies them atomically. A blocked client served after a
 *     command is its own unit, after the command's.
 *   - Each effect carries the number of the database it applies to; a sink
 *     that writes a stream emits SELECT when it changes.
 *   - An effect goes to the log and to replicas alike, unless a script
 *     sent its commands to one of them only (redis.set_repl); a unit's
 *     MULTI and EXEC go to both, as Redis's propagatePendingCommands.
 *   - Typed (SBE) calls propagate exactly as their RESP forms.
 *
 * With no sink attached nothing is recorded: the cost on a command is one
 * load and a predictable branch (gb_propagating).
 */
#ifndef GB_ENGINE_CORE_PROPAGATE_H
#define GB_ENGINE_CORE_PROPAGATE_H

#include "engine/core/request/client.h"

struct gb_engine;
struct gb_db;

/* Where an effect goes (Redis's PROPAGATE_AOF / PROPAGATE_REPL): both,
 * unless a script chose otherwise with redis.set_repl. */
enum { GB_PROP_AOF = 1u, GB_PROP_REPL = 2u, GB_PROP_ALL = 3u };

/* A consumer of effects. emit gets one replayable command at a time; argv
 * is valid only during the call. target: GB_PROP_AOF or GB_PROP_REPL, the
 * effects it gets; 0: every effect (a test's sink). */
typedef struct gb_prop_sink {
    void (*emit)(void *ctx, int dbid, int argc, const gb_slice *argv);
    void *ctx;
    unsigned target;
} gb_prop_sink;

/* One recorded effect, waiting for the end of its unit. */
typedef struct gb_prop_effect {
    int dbid;
    unsigned targets; /* GB_PROP_*: the sinks it goes to */
    gb_argv_copy argv;
} gb_prop_effect;

/* The engine's propagation state (gb_engine.prop). */
typedef struct gb_propagation {
    const gb_prop_sink **sinks;
    size_t nsinks;
    gb_prop_effect *pending; /* the current unit's effects */
    size_t npending, cappending;
    int depth;               /* nesting of gb_gate_call frames (engine/core/request/gate.c) */
    bool explicit_effect;    /* the running command chose its own effect */
    bool flushing;
} gb_propagation;

/* Attaches a sink (kept by pointer: it must outlive the attachment). */
void gb_propagate_attach(struct gb_engine *eng, const gb_prop_sink *sink);
void gb_propagate_detach(struct gb_engine *eng, const gb_prop_sink *sink);
void gb_propagate_destroy(struct gb_engine *eng);

/* Whether any sink listens: handlers test it before building an effect. */
static inline bool gb_propagating(const gb_propagation *p) { return p->nsinks != 0; }

/* The running command's effect, in the client's current database, instead
 * of its argument vector (call once per effect: SPOP COUNT may emit
 * several). */
void gb_propagate_command(gb_client *c, int argc, const gb_slice *argv);

/* The running command propagates nothing of its own even if it changed
 * the dataset (Redis's preventCommandPropagation): its effects, if any, are
 * the ones it recorded with gb_propagate_command (XREADGROUP, XCLAIM). */
void gb_propagate_prevent(gb_client *c);

/* A key of db was found expired and deleted: emits DEL key. */
void gb_propagate_expired(struct gb_db *db, gb_slice key);

/* Appends one effect to the current unit (the gate and the functions
 * above; sinks see it at the end of the unit). */
void gb_propagate_record(struct gb_engine *eng, int dbid, int argc, const gb_slice *argv);

/* Drops the current unit unseen: a script stopped by SHUTDOWN NOSAVE never
 * happened for the log (the server exits before its unit would end). */
void gb_propagate_discard(struct gb_engine *eng);

/* The effects recorded since the unit held `mark` of them go only where
 * targets says (GB_PROP_*; 0: nowhere, they are dropped): a script's
 * redis.set_repl, for the commands it calls after it. */
void gb_propagate_target_since(struct gb_engine *eng, size_t mark, unsigned targets);

/* Hands the current unit to the sinks: the gate at the end of its
 * outermost call, the cron after active expiry. */
void gb_propagate_flush(struct gb_engine *eng);

#endif
