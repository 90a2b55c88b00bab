/*
 * The commands ACL rules can name, each with an id: the bit that stands for
 * it in a selector's command bitmap (engine/core/acl/acl_user.h).
 *
 * The set is the whole command table (engine/core/request/command_meta.h): Redis
 * 7.0's commands, not only those this server implements, then the later
 * ones and the server's own (RING). Rules written for Redis therefore load
 * unchanged ("+xadd" is valid before streams exist), and the category
 * arithmetic that ACL GETUSER and ACL LIST print ("-@all +@read -@hash")
 * counts the same commands Redis counts, so it prints what Redis prints.
 *
 * Ids follow the table: each top-level command, then its subcommands, so a
 * container's subcommands are the ids right after it. The last id of the
 * bitmap is never a command: "+@all" sets it, and it says "allowed to run
 * commands that do not exist yet" (Redis's trick for describing +@all).
 */
#ifndef GB_ENGINE_ACL_COMMAND_IDS_H
#define GB_ENGINE_ACL_COMMAND_IDS_H

#include "engine/core/request/command_meta.h"

#define GB_ACL_MAX_IDS 1024 /* bits in a selector's bitmap, the reserved one included */
#define GB_ACL_WORDS (GB_ACL_MAX_IDS / 64)
#define GB_ACL_FUTURE_ID (GB_ACL_MAX_IDS - 1)
#define GB_ACL_NO_ID UINT16_MAX

/* How a command names pub/sub channels (Redis's getChannelsFromCommand
 * table): the permission check reads them from the arguments. */
enum gb_acl_channel_use {
    GB_ACL_CHANNELS_NONE,
    GB_ACL_CHANNELS_PUBLISH,    /* argv[1] is a channel published to (PUBLISH, SPUBLISH) */
    GB_ACL_CHANNELS_SUBSCRIBE,  /* argv[1..] are channels (SUBSCRIBE, SSUBSCRIBE) */
    GB_ACL_CHANNELS_PSUBSCRIBE, /* argv[1..] are patterns, matched literally against the user's */
};

typedef struct gb_acl_cmd {
    const gb_command_meta *meta; /* meta->name is the name rules use: "get", "config|get" */
    uint16_t parent;             /* the container's id, or GB_ACL_NO_ID */
    uint16_t nsubs;              /* a container: its subcommands are ids id+1 .. id+nsubs */
    uint8_t channels;            /* enum gb_acl_channel_use */
    bool has_keys;               /* gb_command_has_keys: key patterns apply */
    /* gb_command_single_key: the permission check's shortcut for the
     * commands of one key at a fixed place (0: find keys from the specs) */
    int16_t single_key_pos;
    uint16_t single_key_flags;
} gb_acl_cmd;

typedef struct gb_acl_commands {
    gb_acl_cmd *cmd; /* by id; GB_ACL_FUTURE_ID entries */
    uint16_t n;      /* ids in use */
    uint16_t nredis; /* ids below are Redis's commands, the others the server's own */
    uint16_t *top;   /* the id of gb_command_meta_table[i] */
} gb_acl_commands;

void gb_acl_commands_init(gb_acl_commands *u);
void gb_acl_commands_free(gb_acl_commands *u);

/* The id of a command of Redis's table (top-level or subcommand), or of one
 * added with gb_acl_commands_add_own; GB_ACL_NO_ID for any other. */
uint16_t gb_acl_commands_id_of(const gb_acl_commands *u, const gb_command_meta *m);
/* Gives a command Redis does not have an id (once per name); returns it,
 * or GB_ACL_NO_ID when the bitmap is full (the command is then allowed
 * only to users who may run every command). m must outlive u. */
uint16_t gb_acl_commands_add_own(gb_acl_commands *u, const gb_command_meta *m);

/* A command by the name a rule gives it, any case: "get", "config|get",
 * "config" (Redis's lookupCommandBySdsLogic: one '|' at most, a
 * subcommand only of a container). NULL: no such command. */
const gb_acl_cmd *gb_acl_commands_find(const gb_acl_commands *u, gb_slice name);
static inline uint16_t gb_acl_commands_id(const gb_acl_commands *u, const gb_acl_cmd *c)
{
    return (uint16_t)(c - u->cmd);
}

/* GB_ACL_* bit of a category by name, any case, without the '@'; 0 if none. */
uint32_t gb_acl_category_by_name(gb_slice name);

#endif
