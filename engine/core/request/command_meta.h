/*
 * What Redis 7.0 says about each of its commands: arity, flags, ACL
 * categories, key specs, tips and documentation (COMMAND INFO, COMMAND
 * DOCS), for every command and subcommand.
 *
 * The table (command_meta_table.c) is generated from the reference server
 * by cmake/gen_command_meta.py and covers all 240 Redis 7.0 commands, not
 * only those Goblin Core implements: a command joins the engine's table by
 * name when its module registers a handler (engine/core/request/command.c), and
 * only then does COMMAND show it. The engine uses the facts, not just
 * prints them: subcommand arity in the gate, keys from key specs
 * (COMMAND GETKEYS, ACL key patterns), categories for ACL rules.
 *
 * Every bit enumeration below is in the order Redis emits it, which is the
 * order COMMAND INFO and ACL CAT list them in.
 */
#ifndef GB_ENGINE_CORE_COMMAND_META_H
#define GB_ENGINE_CORE_COMMAND_META_H

#include <stddef.h>
#include <stdint.h>

#include "engine/base/common.h"

/* Command flags (COMMAND INFO's second set). */
enum {
    GB_CMDF_WRITE = 1u << 0,
    GB_CMDF_READONLY = 1u << 1,
    GB_CMDF_DENYOOM = 1u << 2,
    GB_CMDF_MODULE = 1u << 3,
    GB_CMDF_ADMIN = 1u << 4,
    GB_CMDF_PUBSUB = 1u << 5,
    GB_CMDF_NOSCRIPT = 1u << 6,
    GB_CMDF_BLOCKING = 1u << 7,
    GB_CMDF_LOADING = 1u << 8,
    GB_CMDF_STALE = 1u << 9,
    GB_CMDF_SKIP_MONITOR = 1u << 10,
    GB_CMDF_SKIP_SLOWLOG = 1u << 11,
    GB_CMDF_ASKING = 1u << 12,
    GB_CMDF_FAST = 1u << 13,
    GB_CMDF_NO_AUTH = 1u << 14,
    GB_CMDF_MAY_REPLICATE = 1u << 15,
    GB_CMDF_NO_MANDATORY_KEYS = 1u << 16,
    GB_CMDF_NO_ASYNC_LOADING = 1u << 17,
    GB_CMDF_NO_MULTI = 1u << 18,
    GB_CMDF_MOVABLEKEYS = 1u << 19,
    GB_CMDF_ALLOW_BUSY = 1u << 20,
};
#define GB_CMDF_COUNT 21
extern const char *const gb_command_flag_names[GB_CMDF_COUNT];

/* ACL categories (@read, @write, ...). */
enum {
    GB_ACL_KEYSPACE = 1u << 0,
    GB_ACL_READ = 1u << 1,
    GB_ACL_WRITE = 1u << 2,
    GB_ACL_SET = 1u << 3,
    GB_ACL_SORTEDSET = 1u << 4,
    GB_ACL_LIST = 1u << 5,
    GB_ACL_HASH = 1u << 6,
    GB_ACL_STRING = 1u << 7,
    GB_ACL_BITMAP = 1u << 8,
    GB_ACL_HYPERLOGLOG = 1u << 9,
    GB_ACL_GEO = 1u << 10,
    GB_ACL_STREAM = 1u << 11,
    GB_ACL_PUBSUB = 1u << 12,
    GB_ACL_ADMIN = 1u << 13,
    GB_ACL_FAST = 1u << 14,
    GB_ACL_SLOW = 1u << 15,
    GB_ACL_BLOCKING = 1u << 16,
    GB_ACL_DANGEROUS = 1u << 17,
    GB_ACL_CONNECTION = 1u << 18,
    GB_ACL_TRANSACTION = 1u << 19,
    GB_ACL_SCRIPTING = 1u << 20,
};
#define GB_ACL_CATEGORY_COUNT 21
extern const char *const gb_acl_category_names[GB_ACL_CATEGORY_COUNT]; /* without the '@' */

/* Key spec flags. */
enum {
    GB_KS_RO = 1u << 0,     /* read only */
    GB_KS_RW = 1u << 1,     /* read and write */
    GB_KS_OW = 1u << 2,     /* overwrite: the old value is not read */
    GB_KS_RM = 1u << 3,     /* removes the key */
    GB_KS_ACCESS = 1u << 4, /* returns, copies or uses the user data */
    GB_KS_UPDATE = 1u << 5,
    GB_KS_INSERT = 1u << 6,
    GB_KS_DELETE = 1u << 7,
    GB_KS_NOT_KEY = 1u << 8,    /* a key name that is not a key (cluster slot only) */
    GB_KS_INCOMPLETE = 1u << 9, /* the spec may miss keys (movable keys) */
    GB_KS_VARIABLE_FLAGS = 1u << 10,
};
#define GB_KS_FLAG_COUNT 11
extern const char *const gb_key_spec_flag_names[GB_KS_FLAG_COUNT];

enum gb_ks_begin { GB_KS_BEGIN_UNKNOWN, GB_KS_BEGIN_INDEX, GB_KS_BEGIN_KEYWORD };
enum gb_ks_find { GB_KS_FIND_UNKNOWN, GB_KS_FIND_RANGE, GB_KS_FIND_KEYNUM };

/* Where a command's keys are, in two steps (Redis's key specs): where to
 * begin (an argument index, or the argument after a keyword searched for
 * from startfrom; a negative startfrom searches backwards from the end),
 * then which arguments from there are keys (a range whose last key is
 * relative to the beginning, -1 the end, -2 the one before..., with limit
 * > 1 meaning "1/limit of what remains"; or a count read from an argument). */
typedef struct gb_key_spec {
    const char *notes;
    uint16_t flags;
    uint8_t begin; /* enum gb_ks_begin */
    uint8_t find;  /* enum gb_ks_find */
    int16_t begin_index;
    int16_t begin_startfrom;
    const char *begin_keyword;
    int16_t range_lastkey, range_keystep, range_limit;
    int16_t keynum_index, keynum_firstkey, keynum_keystep;
} gb_key_spec;

/* COMMAND DOCS argument types and flags. */
enum gb_arg_type {
    GB_ARG_STRING,
    GB_ARG_INTEGER,
    GB_ARG_DOUBLE,
    GB_ARG_KEY,
    GB_ARG_PATTERN,
    GB_ARG_UNIX_TIME,
    GB_ARG_PURE_TOKEN,
    GB_ARG_ONEOF,
    GB_ARG_BLOCK,
};
extern const char *const gb_arg_type_names[GB_ARG_BLOCK + 1];
enum { GB_ARG_OPTIONAL = 1u << 0, GB_ARG_MULTIPLE = 1u << 1, GB_ARG_MULTIPLE_TOKEN = 1u << 2 };
#define GB_ARG_FLAG_COUNT 3
extern const char *const gb_arg_flag_names[GB_ARG_FLAG_COUNT];

typedef struct gb_cmd_arg {
    const char *name;
    const char *token;            /* NULL: none */
    const char *since;            /* NULL: none */
    const char *deprecated_since; /* NULL: none */
    const struct gb_cmd_arg *args; /* a oneof's or block's members */
    uint8_t type;                  /* enum gb_arg_type */
    int8_t key_spec_index;         /* -1: not a key */
    uint8_t flags;                 /* GB_ARG_* */
    uint8_t nargs;
} gb_cmd_arg;

/* Documentation flags. */
enum { GB_DOC_DEPRECATED = 1u << 0, GB_DOC_SYSCMD = 1u << 1 };
#define GB_DOC_FLAG_COUNT 2
extern const char *const gb_doc_flag_names[GB_DOC_FLAG_COUNT];

typedef struct gb_cmd_history {
    const char *version, *change;
} gb_cmd_history;

typedef struct gb_command_meta {
    const char *name; /* lower case; a subcommand's is "container|sub" */
    int32_t arity;    /* Redis's: N exactly, -N at least N, counting the name (and the subcommand) */
    uint32_t flags;          /* GB_CMDF_* */
    uint32_t acl_categories; /* GB_ACL_* */
    int16_t first_key, last_key, key_step; /* the legacy key range (0 0 0: none) */
    uint8_t doc_flags;                     /* GB_DOC_* */
    uint8_t ntips, nkey_specs, nhistory, nargs, nsubcommands;
    const char *summary, *since, *group;
    const char *complexity, *deprecated_since, *replaced_by; /* NULL: none */
    const char *const *tips;
    const gb_key_spec *key_specs;
    const gb_cmd_history *history;
    const gb_cmd_arg *args;
    const struct gb_command_meta *subcommands; /* sorted by name */
} gb_command_meta;

/* The generated table, sorted by name. */
extern const gb_command_meta gb_command_meta_table[];
extern const size_t gb_command_meta_count;

/* A Redis 7.0 command by name (exact, lower case); NULL if Redis has none. */
const gb_command_meta *gb_command_meta_find(const char *name);
/* A container's subcommand by its (any case) name; NULL if it has none. */
const gb_command_meta *gb_command_meta_sub(const gb_command_meta *m, gb_slice sub);
/* The subcommand's own name: "get" for "config|get". */
const char *gb_command_meta_subname(const gb_command_meta *m);

/* ---- keys ----
 * The keys of a call, found from the command's key specs as Redis's
 * getKeysUsingKeySpecs does: positions into argv with the spec's flags.
 * Specs of unknown form (SORT's BY/GET, MIGRATE's KEYS...) are skipped,
 * as Redis skips them unless the command has its own key function. */
typedef struct gb_key_ref {
    int pos;        /* index into argv */
    uint16_t flags; /* GB_KS_* of the spec that found it */
} gb_key_ref;

typedef struct gb_keys_result {
    gb_key_ref *keys; /* keys_stack or an allocation */
    int n;
    gb_key_ref keys_stack[16];
    int cap;
} gb_keys_result;

/* Finds the keys of argv (argv[0] the command name; for a subcommand m,
 * argv[1] its name) into r, as Redis's getKeysFromCommandWithSpecs does:
 * from the key specs, or for the few commands whose specs cannot say
 * (flags that depend on the arguments: SET, BITFIELD; keys after
 * keywords anywhere: SORT, SORT_RO) from the command's own rule. Returns
 * the number of keys; 0 also when argv's shape cannot be read (a key count
 * that is not a number or runs past the end), for the command itself to
 * reply with the error. r must be released with gb_keys_result_free. */
int gb_command_keys(const gb_command_meta *m, int argc, const gb_slice *argv, gb_keys_result *r);
/* The same with the arguments key specs flag NOT_KEY (shard channels:
 * SPUBLISH, SSUBSCRIBE), which cluster mode routes by their slot (Redis's
 * GET_KEYSPEC_INCLUDE_NOT_KEYS). */
int gb_command_keys_and_channels(const gb_command_meta *m, int argc, const gb_slice *argv, gb_keys_result *r);
/* Whether the keys of m can be found: false for a command whose specs are
 * incomplete and that has no rule of its own (Redis's MIGRATE). Checked
 * for every registered command by the unit tests. */
bool gb_command_keys_known(const gb_command_meta *m);
/* Whether m has keys at all (COMMAND GETKEYS: "The command has no key
 * arguments"). */
bool gb_command_has_keys(const gb_command_meta *m);
/* Where the command's only key is when its specs say it is always the one
 * argument at a fixed index (GET, SET...: gb_command_keys then finds that
 * argument, or none when argv is shorter): the index, and the spec's flags
 * in *flags. 0 for every other command. */
int gb_command_single_key(const gb_command_meta *m, uint16_t *flags);
/* SET's key flags, which its key spec leaves variable: read and updated
 * with GET, overwritten without (the rule gb_command_keys applies). */
uint16_t gb_set_key_flags(bool with_get);
void gb_keys_result_free(gb_keys_result *r);

#endif
