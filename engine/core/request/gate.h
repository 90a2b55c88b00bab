/*
 * The command gate: the one place every command passes through, whoever
 * sends it - a socket or a RESP ring (argument vectors), an SBE ring (typed
 * calls with native arguments), EXEC running its queue, a blocked client
 * re-served when its key became ready, and later scripts.
 *
 * It is Redis's processCommand + call(), in two steps:
 *
 *   admission   (gb_gate_execute, gb_gate_execute_typed) lookup, arity,
 *               authentication, permissions (ACL, engine/core/acl/acl.h),
 *               memory, MULTI queueing; a rejection inside
 *               MULTI flags the transaction, a rejected EXEC aborts it
 *               (EXECABORT ... because of: <the reason>);
 *   the call    (gb_gate_call) statistics (INFO commandstats), the handler,
 *               write propagation (engine/core/request/propagate.h), then the
 *               clients whose keys became ready are served.
 *
 * Transports decode and hand over; none of them checks authentication,
 * memory, MULTI state or statistics itself. A new rule for every command
 * goes here, and only here.
 */
#ifndef GB_ENGINE_CORE_GATE_H
#define GB_ENGINE_CORE_GATE_H

#include "engine/core/request/client.h"
#include "engine/core/request/command.h"

/* ---- argument vectors built from native values ---- */

/* The RESP form of a typed call: slices, with the text of numbers kept in
 * the builder. Sized at init (nslices arguments, nnums of them numbers):
 * small calls use the builder's own arrays, large ones one allocation each. */
#define GB_ARGV_NUM_ROOM 32 /* bytes for one number's text: any int64, any %.17g double */
typedef struct gb_argv_builder {
    gb_slice *v;
    int n;
    char *num;
    size_t used;
    gb_slice vstack[16];
    char numstack[8 * GB_ARGV_NUM_ROOM];
} gb_argv_builder;

void gb_argv_init(gb_argv_builder *b, size_t nslices, size_t nnums);
void gb_argv_free(gb_argv_builder *b);
static inline void gb_argv_add(gb_argv_builder *b, gb_slice s) { b->v[b->n++] = s; }
static inline void gb_argv_lit(gb_argv_builder *b, const char *lit) { gb_argv_add(b, gb_slice_cstr(lit)); }
void gb_argv_ll(gb_argv_builder *b, int64_t v);
/* Text made from native values (a stream ID: "<ms>-<seq>", "<ms>-*"),
 * copied into the number room: counts as (len + 31) / 32 numbers at init. */
void gb_argv_text(gb_argv_builder *b, const char *s, size_t len);
/* The shortest of %.15g/%.16g/%.17g that reads back as the same double:
 * the text a person would have typed ("0.1"), so that replies quoting an
 * argument match the RESP path's. */
void gb_argv_dbl(gb_argv_builder *b, double v);
/* Formats v as gb_argv_dbl does into p (GB_ARGV_NUM_ROOM bytes); returns
 * its length. */
size_t gb_format_double_arg(char *p, double v);

/* ---- the gate ---- */

/* A command in RESP form (sockets, RESP rings, SBE's generic template).
 * argv is borrowed for the duration of the call; an empty argv runs
 * nothing. */
void gb_gate_execute(gb_client *c, int argc, gb_slice *argv);

/* A typed call's keys: n slices, all found by its command's first key
 * spec. Their access flags (GB_KS_*) are that spec's, from the command
 * description (gb_typed_key_flags); `flags` is set (non-zero) only by a
 * call whose spec leaves them variable (SET: gb_set_key_flags). */
typedef struct gb_typed_keys {
    const gb_slice *keys;
    size_t n;
    uint16_t flags;
} gb_typed_keys;

/* The access flags of a typed call's keys k of cmd. */
static inline uint16_t gb_typed_key_flags(const gb_command *cmd, const gb_typed_keys *k)
{
    if (k->flags || cmd->meta->nkey_specs == 0)
        return k->flags;
    return cmd->meta->key_specs[0].flags;
}

/* A typed call: native arguments and how to run them. */
typedef struct gb_typed_call {
    /* Runs the call on its native arguments and replies. Returns false,
     * having changed and replied nothing, when only the RESP form can
     * answer exactly as Redis (a syntax error's text, an arity error): the
     * gate then runs that form instead. */
    bool (*run)(gb_client *c, void *args);
    /* Builds the call's RESP form (command name first): for MULTI's queue,
     * the fallback above, and propagation. */
    void (*to_argv)(void *args, gb_argv_builder *b);
    /* The call's keys, for a user limited to some keys (NULL: none, or the
     * call leaves the check to its RESP form). They must be exactly the
     * keys, in order, that the RESP form's key specs find, and with
     * gb_typed_key_flags their access flags (test_sbe_server checks every
     * typed call against gb_command_keys of its to_argv). */
    void (*keys)(void *args, gb_typed_keys *k);
} gb_typed_call;

/* Admits and runs a typed call of cmd (resolved once by the transport)
 * exactly as gb_gate_execute would run its RESP form. */
void gb_gate_execute_typed(gb_client *c, gb_command *cmd, const gb_typed_call *t, void *args);

/* Runs an admitted command (EXEC's queue, a blocked client's re-execution,
 * scripts): statistics, the handler, propagation; at the outermost call,
 * serving the clients whose keys became ready. */
void gb_gate_call(gb_client *c, gb_command *cmd, int argc, gb_slice *argv);

/* EXEC runs each queued command through this: the permission check again
 * (the user's rules may have changed since it was queued; Redis 7.0's
 * "NOPERM ACLs rules changed ..." reply in its place, logged with context
 * "multi"), then gb_gate_call. */
void gb_gate_call_queued(gb_client *c, gb_command *cmd, int argc, gb_slice *argv);

/* Scripts: the permission check of a command a script calls (redis.call,
 * redis.pcall), as the user of `caller`, the client that ran EVAL or
 * FCALL. Returns NULL when the user may run it: the script engine then
 * runs it with gb_gate_call. Otherwise the denial is recorded in ACL LOG
 * (context "lua", caller's client info) and the reason is returned in
 * Redis 7.0's words for the script's error ("The user executing the
 * script can't run this command or subcommand", ...); the command must
 * not run. cmd is the resolved command (a container's subcommand, as
 * gb_gate_execute resolves it) and argv[0] its name. */
const char *gb_gate_script_permits(gb_client *caller, gb_command *cmd, int argc, gb_slice *argv);

/* ---- commands a script runs (engine/script: redis.call) ---- */

enum {
    GB_SCRIPT_READ_ONLY = 1u << 0,     /* EVAL_RO/FCALL_RO, or "no-writes": writes refused */
    GB_SCRIPT_ALLOW_OOM = 1u << 1,     /* "allow-oom": memory never refuses a command */
    GB_SCRIPT_OOM_AT_START = 1u << 2,  /* used memory was over maxmemory when the script began */
    GB_SCRIPT_CROSS_SLOT = 1u << 3,    /* "allow-cross-slot-keys": keys of several slots (cluster mode) */
};

typedef struct gb_script_call_state {
    uint32_t rules; /* GB_SCRIPT_* */
    bool wrote;     /* a write command has run: SCRIPT KILL refuses, memory no longer refuses */
    int slot;       /* cluster mode: the slot the script's keys so far hash to; -1: none yet */
    char err[192];  /* an ACL denial's text, "ERR " and gb_gate_script_permits's reason */
} gb_script_call_state;

/* Admits and runs one command for a script, on the script's client c
 * (its reply goes to c's sink). Returns NULL when it ran, otherwise the
 * error Redis gives the script, code first ("ERR Unknown Redis command
 * called from script", "OOM command not allowed ...", an ACL denial of
 * the caller's user as gb_gate_script_permits words it), and nothing ran
 * or replied. The error lives until the next call with st. */
const char *gb_gate_script_call(gb_client *c, int argc, gb_slice *argv, gb_script_call_state *st);
/* Whether c is on a replica that serves no stale data while its link is
 * down (replica-serve-stale-data no): what a script may then run. */
bool gb_gate_stale_refused(const gb_client *c);

#endif
