/*
 * ACL users and their rules, as Redis 7.0 defines them (acl.c): what a rule
 * does to a user, how a user is described back (ACL LIST, ACL GETUSER, the
 * aclfile), and whether a user may run one command with its arguments.
 *
 * A user has flags (on/off, nopass, ...), password hashes, and one or more
 * selectors. The root selector holds the rules given outside parentheses;
 * each "( ... )" rule adds another. A command is allowed when any one
 * selector allows the command itself, every key it names (with the access
 * the key spec says: read for "access", write for insert/update/delete)
 * and every channel it names.
 *
 * A selector's commands are a bitmap over the ids of engine/core/
 * acl_command_ids.h; the first arguments allowed of an otherwise refused
 * command ("+select|0", deprecated in Redis, still honoured) are kept
 * apart, per command.
 *
 * Nothing here knows clients or the engine: the registry, authentication,
 * the log and the gate's use of the check are engine/core/acl/acl.h.
 */
#ifndef GB_ENGINE_ACL_USER_H
#define GB_ENGINE_ACL_USER_H

#include "engine/base/strbuf.h"
#include "engine/core/acl/acl_command_ids.h"
#include "engine/core/acl/acl_list.h"

/* User flags, in the order ACL LIST prints them. */
enum {
    GB_ACL_USER_ON = 1u << 0,
    GB_ACL_USER_OFF = 1u << 1,
    GB_ACL_USER_NOPASS = 1u << 2,
    /* RESTORE payload sanitizing: kept and printed for compatibility with
     * Redis's aclfiles; Goblin Core has no RESTORE for them to govern. */
    GB_ACL_USER_SKIP_SANITIZE = 1u << 3,
    GB_ACL_USER_SANITIZE = 1u << 4,
};
#define GB_ACL_USER_FLAG_COUNT 5
extern const char *const gb_acl_user_flag_names[GB_ACL_USER_FLAG_COUNT];

/* Selector flags. */
enum {
    GB_ACL_SEL_ROOT = 1u << 0,
    GB_ACL_SEL_ALLKEYS = 1u << 1,
    GB_ACL_SEL_ALLCHANNELS = 1u << 2, /* also the value of acl-pubsub-default "allchannels" */
    GB_ACL_SEL_ALLCOMMANDS = 1u << 3,
};

/* A key pattern's permissions (its gb_acl_str tag): "%R~", "%W~", "~". */
enum { GB_ACL_PERM_READ = 1u << 0, GB_ACL_PERM_WRITE = 1u << 1, GB_ACL_PERM_ALL = 3 };

/* The first arguments allowed of one command whose bit is not set. */
typedef struct gb_acl_firstargs {
    uint16_t id;
    gb_acl_list args; /* compared ignoring case, as Redis does */
} gb_acl_firstargs;

typedef struct gb_acl_selector {
    uint32_t flags; /* GB_ACL_SEL_* */
    uint64_t allowed[GB_ACL_WORDS];
    gb_acl_firstargs *firstargs; /* unordered, one per command that has some */
    uint32_t nfirstargs;
    gb_acl_list keys;     /* tags: GB_ACL_PERM_* */
    gb_acl_list channels;
} gb_acl_selector;

typedef struct gb_acl_user {
    char *name; /* NUL-terminated; no spaces or NULs (checked by the callers) */
    size_t namelen;
    uint32_t flags;       /* GB_ACL_USER_* */
    gb_acl_list passwords; /* SHA-256 hex digests */
    gb_acl_selector **selectors; /* [0] is the root */
    uint32_t nselectors;
    /* Derived by gb_acl_user_refresh after every change: the commands some
     * selector allows whatever their arguments (every key, every channel).
     * The gate tests this bit first and looks further only when it is
     * clear. */
    uint64_t fast[GB_ACL_WORDS];
} gb_acl_user;

/* Why a rule was refused: Redis's errno cases, with its texts. */
enum gb_acl_rule_error {
    GB_ACL_RULE_OK = 0,
    GB_ACL_RULE_SYNTAX,          /* EINVAL */
    GB_ACL_RULE_UNKNOWN,         /* ENOENT: command or category */
    GB_ACL_RULE_KEYS_AFTER_ALL,  /* EEXIST */
    GB_ACL_RULE_CHANNELS_AFTER_ALL, /* EISDIR */
    GB_ACL_RULE_NO_SUCH_PASSWORD, /* ENODEV */
    GB_ACL_RULE_BAD_HASH,        /* EBADMSG */
    GB_ACL_RULE_DUPLICATE_USER,  /* EALREADY */
    GB_ACL_RULE_FIRSTARG_OF_SUB, /* ECHILD */
};
const char *gb_acl_rule_error_text(enum gb_acl_rule_error e);

/* What the rules of one change need from the server. */
typedef struct gb_acl_env {
    const gb_acl_commands *cmds;
    uint32_t pubsub_default; /* GB_ACL_SEL_ALLCHANNELS or 0 (acl-pubsub-default) */
} gb_acl_env;

/* A new user: "off", no passwords, a root selector with no commands, no
 * keys, and channels as acl-pubsub-default says (Redis's ACLCreateUser). */
gb_acl_user *gb_acl_user_new(const gb_acl_env *env, gb_slice name);
void gb_acl_user_free(gb_acl_user *u);
/* dst takes src's rules (not its name). */
void gb_acl_user_copy_rules(gb_acl_user *dst, const gb_acl_user *src);

/* Applies one rule (Redis's ACLSetUser: "on", ">pass", "~key*", "+@read",
 * "(~x +get)", "reset", ...; the empty rule does nothing). On error the
 * user may be half changed: callers apply rules to a scratch copy. Call
 * gb_acl_user_refresh when done. */
enum gb_acl_rule_error gb_acl_user_apply(gb_acl_user *u, const gb_acl_env *env, gb_slice rule);
/* Recomputes the derived fast bitmap. */
void gb_acl_user_refresh(gb_acl_user *u, const gb_acl_commands *cmds);

/* Rules split over several arguments are joined: "(~x" "+get)" is the one
 * selector "(~x +get)" (Redis's ACLMergeSelectorArguments). Returns the
 * number of merged rules in *out (slices into one gb_malloc'd block, free
 * with gb_free), or -1 when a '(' is never closed; *bad_index is then the
 * index of the argument that opened it. */
int gb_acl_merge_selector_args(const gb_slice *rules, int n, gb_slice **out, int *bad_index);

/* Whether a user name or pattern has a space or a NUL (not allowed: ACL
 * LIST's one-line form could not be read back). */
bool gb_acl_has_spaces(gb_slice s);

/* ---- descriptions ---- */

/* ACL LIST's form of the user's rules, without "user <name> ": flags,
 * "#<hash>" passwords, the root selector, " (<selector>)" for the others. */
void gb_acl_describe_user(const gb_acl_user *u, const gb_acl_commands *cmds, gb_strbuf *out);
/* A selector's command rules as Redis derives them from its bitmap:
 * "+@all" or "-@all", the categories that fit best, then single commands
 * (in command table order; Redis's order is its hash table's). */
void gb_acl_describe_commands(const gb_acl_selector *s, const gb_acl_commands *cmds, gb_strbuf *out);
/* ACL GETUSER's "keys" and "channels" fields of a selector. */
void gb_acl_describe_keys(const gb_acl_selector *s, gb_strbuf *out);
void gb_acl_describe_channels(const gb_acl_selector *s, gb_strbuf *out);

/* ---- checks ---- */

/* What a check found (Redis's ACL_DENIED_* values: the highest is the most
 * relevant when several selectors refuse). */
enum gb_acl_denial {
    GB_ACL_ALLOWED = 0,
    GB_ACL_DENIED_CMD = 1,
    GB_ACL_DENIED_KEY = 2,
    GB_ACL_DENIED_AUTH = 3,
    GB_ACL_DENIED_CHANNEL = 4,
};

/* Whether u may run the command with this id and description (m: for a
 * command without an id of its own, id is GB_ACL_FUTURE_ID) with these
 * arguments (argv[0] its name; for a subcommand argv[1] the subcommand's).
 * Redis's ACLCheckAllUserCommandPerm: when every selector refuses, the
 * reason of the most relevant one, and in *argpos the argument (key or
 * channel) that it refused. */
enum gb_acl_denial gb_acl_user_check(const gb_acl_user *u, const gb_acl_commands *cmds, uint16_t id,
                                     const gb_command_meta *m, int argc, const gb_slice *argv, int *argpos);
/* Whether one of u's selectors allows the channel (is_pattern: the
 * channel is a PSUBSCRIBE pattern, compared literally). */
bool gb_acl_user_channel_permits(const gb_acl_user *u, gb_slice channel, bool is_pattern);
/* The typed calls' shortcut: true when some selector lets command id run
 * whatever its arguments but the keys, and every one of the n keys with
 * access `flags` (GB_KS_*). False says only "ask gb_acl_user_check" (which
 * then gives the exact denial); a true here is a true there. */
bool gb_acl_user_permits_keys(const gb_acl_user *u, const gb_acl_commands *cmds, uint16_t id, const gb_slice *keys,
                              size_t n, uint16_t flags);

/* Redis's ACLUserCheckCmdWithUnrestrictedKeyAccess: whether one selector
 * lets this call run and reach every key with access spec_flags (GB_KS_*):
 * SORT's BY and GET read keys named by the data, so they need it. */
bool gb_acl_user_unrestricted_keys(const gb_acl_user *u, const gb_acl_commands *cmds, uint16_t id,
                                   const gb_command_meta *m, int argc, const gb_slice *argv, uint16_t spec_flags);

static inline bool gb_acl_bit(const uint64_t *bits, uint16_t id) { return (bits[id >> 6] >> (id & 63)) & 1; }

#endif
