/*
 * The command table, shared by every transport.
 *
 * Each command module (cmd_string.c, cmd_keys.c, ...) defines a static array
 * of gb_command_def, which names handlers only, and registers it at
 * start-up. The engine keeps them in a name-indexed table with per-command
 * statistics (INFO commandstats).
 *
 * Each registered command is joined by name with Redis's description of it
 * (engine/core/request/command_meta.h), the one source of its arity (N > 0: exactly
 * N arguments with the name; -N: at least N), flags, key specs and ACL
 * categories: the gate checks arity against it and COMMAND reports it. A
 * command Redis does not have (RING) is described in
 * cmake/command_meta_extra.json like the others. A container command (CONFIG, CLIENT, ...) gets one record per
 * subcommand, as in Redis 7: the gate resolves "CONFIG GET" to config|get,
 * with its own arity and statistics, before anything else.
 */
#ifndef GB_ENGINE_COMMAND_H
#define GB_ENGINE_COMMAND_H

#include "engine/core/request/client.h"
#include "engine/core/request/command_meta.h"

enum {
    GB_CMD_WRITE = 1u << 0,    /* may modify the data set */
    GB_CMD_READONLY = 1u << 1,
    GB_CMD_DENYOOM = 1u << 2,  /* may grow memory: refused over maxmemory */
    GB_CMD_ADMIN = 1u << 3,
    GB_CMD_NOAUTH = 1u << 4,   /* allowed before AUTH (AUTH, HELLO, QUIT) */
    /* executes at once even inside MULTI (MULTI, EXEC, DISCARD, WATCH, QUIT,
     * RESET: processCommand's exceptions); not Redis's no-multi flag
     * (GB_CMDF_NO_MULTI: refused inside MULTI) */
    GB_CMD_NOT_QUEUED = 1u << 5,
    GB_CMD_FAST = 1u << 6,
    GB_CMD_BLOCKING = 1u << 7,
    GB_CMD_MOVABLEKEYS = 1u << 8,
    GB_CMD_LOADING = 1u << 9,
    GB_CMD_STALE = 1u << 10,
    GB_CMD_NOSCRIPT = 1u << 11, /* refused inside scripts (redis.call) */
    GB_CMD_ALLOW_BUSY = 1u << 12, /* admitted while a script is busy (engine/core/request/script_state.h) */
    /* Runs a script (EVAL*, FCALL*): admission checks the flags the script
     * declares (Redis's getCommandFlags), asked of the scripting hooks. */
    GB_CMD_RUNS_SCRIPT = 1u << 13,
    /* DEBUG: refused unless enable-debug-command allows the client
     * (Redis's CMD_PROTECTED, which COMMAND does not show). */
    GB_CMD_PROTECTED = 1u << 14,
    GB_CMD_MAY_REPLICATE = 1u << 20, /* no write, but replicated (PUBLISH): paused by CLIENT PAUSE WRITE */
    GB_CMD_SKIP_MONITOR = 1u << 21,  /* not shown to MONITOR (nor are ADMIN commands) */
};
/* The flags a definition gives its command whatever Redis's description
 * says (Redis decides these by the command itself: processCommand's MULTI
 * exceptions, getCommandFlags' script runners), and MAY_REPLICATE, which
 * Redis's description has but COMMAND INFO, the table's source, does not
 * show (PFCOUNT). */
#define GB_CMD_ENGINE_OWN (GB_CMD_NOT_QUEUED | GB_CMD_RUNS_SCRIPT | GB_CMD_PROTECTED | GB_CMD_MAY_REPLICATE)

typedef void gb_cmd_proc(gb_client *c, int argc, gb_slice *argv);

typedef struct gb_command_def {
    /* Lower case; the command's arity, flags, key specs, ACL categories and
     * documentation are Redis's description under this name
     * (engine/core/request/command_meta_table.c), never written here. */
    const char *name;
    gb_cmd_proc *proc;
    uint32_t flags; /* only GB_CMD_ENGINE_OWN bits: what the description does not say */
    /* A container (CONFIG, CLIENT, ...): the subcommands its handler
     * implements, space-separated ("get set help"); NULL: all of Redis's. */
    const char *subcommands;
    /* Of a GB_CMD_PROTECTED container: the subcommands the protection
     * covers, space-separated (Redis protects MODULE LOAD, LOADEX and
     * UNLOAD, not LIST or HELP); NULL: all of them. */
    const char *protected_subcommands;
} gb_command_def;

typedef struct gb_command {
    const gb_command_def *def;    /* the handler (a subcommand shares its container's) */
    const gb_command_meta *meta;  /* what Redis says about it: arity, flags, keys, docs */
    const char *fullname;         /* "get", "config|get": errors, INFO commandstats */
    uint32_t flags;               /* GB_CMD_*, from Redis's flags for it (the gate acts on these) */
    struct gb_command *subs;      /* a container's implemented subcommands, sorted by name */
    uint8_t nsubs;
    uint16_t acl_id;              /* its bit in ACL command bitmaps (engine/core/acl/acl_command_ids.h) */
    /* INFO commandstats */
    uint64_t calls;
    uint64_t timed_calls; /* the calls whose duration was measured (gb_command_timed) */
    uint64_t cycles;      /* their cycle-counter ticks; INFO converts with eng->ns_per_cycle */
    uint64_t rejected_calls;
    uint64_t failed_calls;
    /* latency-tracking's histogram (engine/core/introspect/latency.h), made at the
     * first call timed with it on; CONFIG RESETSTAT drops it */
    struct gb_latency_hist *latency_hist;
} gb_command;

/* Commandstats time one call in GB_CMD_TIMING_PERIOD (a command's first call,
 * then every 16th) and INFO extrapolates usec from them. Reading the cycle
 * counter costs about 10 ns (rdtsc on this project's VMs); twice per call
 * that was a tenth of a ring round trip, on its critical path. */
#define GB_CMD_TIMING_PERIOD 16u
static inline bool gb_command_timed(const gb_command *cmd) { return cmd->calls % GB_CMD_TIMING_PERIOD == 0; }

struct gb_engine;

void gb_commands_destroy(struct gb_engine *eng);
void gb_commands_register(struct gb_engine *eng, const gb_command_def *defs, size_t n);
/* Case-insensitive lookup of a command by name; NULL if unknown. */
gb_command *gb_command_lookup(struct gb_engine *eng, gb_slice name);
/* A container's subcommand by name (any case); NULL if it has none or
 * does not implement it. */
gb_command *gb_subcommand_lookup(gb_command *container, gb_slice name);
/* By full name, "get" or "config|get" (COMMAND INFO/DOCS take these). */
gb_command *gb_command_lookup_fullname(struct gb_engine *eng, gb_slice fullname);
static inline bool gb_command_is_container(const gb_command *cmd) { return cmd->meta->nsubcommands != 0; }
static inline bool gb_command_arity_ok(const gb_command *cmd, int argc)
{
    int arity = cmd->meta->arity;
    return arity > 0 ? argc == arity : argc >= -arity;
}
void gb_commands_reset_stats(struct gb_engine *eng);
/* Visits the top-level commands; with_subs: also each container's
 * subcommands, after it. */
void gb_commands_foreach(struct gb_engine *eng, bool with_subs, void (*fn)(gb_command *cmd, void *ctx), void *ctx);

#define GB_DEFINE_COMMANDS(mod, ...)                                             \
    const gb_command_def gb_commands_##mod[] = {__VA_ARGS__};                    \
    const size_t gb_commands_##mod##_count = sizeof(gb_commands_##mod) / sizeof(gb_command_def)

/* Helpers for handlers. */
void gb_reply_wrong_arity(gb_client *c, const char *cmdname);
void gb_reply_unknown_subcommand(gb_client *c, gb_slice sub, const char *cmdname);

#endif
