/*
 * Access control, Redis 7.0's ACL: the engine's users, who a client is,
 * authentication, the permission check the command gate runs, and the log
 * of denials. The rules themselves are engine/core/acl/acl_user.h; the
 * aclfile and the config file's `user` lines engine/core/acl/acl_file.h; the
 * ACL command engine/commands/cmd_acl.c. docs/acl.md tells the whole story.
 *
 * Every client has a user (gb_client.user): "default" when it connects,
 * the one it authenticated as after AUTH or HELLO ... AUTH, and for a ring
 * the user of the connection that claimed it. The gate (core/request/gate.c)
 * checks each command against that user, for every transport, inside
 * MULTI (when queued and again at EXEC), and for scripts through
 * gb_gate_script_permits (core/request/gate.h).
 *
 * The check is built to cost one bit test on the hot path: each user keeps
 * a bitmap of the commands one of its selectors allows with any arguments
 * (every key, every channel). Only a clear bit leads to the full check:
 * the command's own bit per selector, its keys (found from the key specs)
 * against the key patterns, its channels against the channel patterns.
 */
#ifndef GB_ENGINE_ACL_H
#define GB_ENGINE_ACL_H

#include "engine/core/acl/acl_log.h"
#include "engine/core/acl/acl_user.h"
#include "engine/core/request/client.h"

struct gb_engine;
struct gb_command;

typedef struct gb_acl {
    gb_acl_commands cmds;
    gb_acl_user **users; /* sorted by name (bytes, shorter first): ACL LIST's order */
    size_t nusers, cap;
    gb_acl_user *default_user;
    /* The user of clients that replay the log (GB_CLIENT_OBEY): no
     * restriction at all (Redis runs them without a user). Not listed. */
    gb_acl_user *unrestricted;
    gb_acl_log log;
} gb_acl;

/* Redis 7.0's text for a refused connection in protected mode. */
#define GB_ERR_PROTECTED_MODE                                                                                       \
    "DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the "  \
    "default user. In this mode connections are only accepted from the loopback interface. If you want to connect " \
    "from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode " \
    "sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from "   \
    "the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you " \
    "do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected " \
    "mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then "         \
    "restarting the server. 3) If you started the server manually just for testing, restart it with the "          \
    "'--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only "     \
    "need to do one of the above things in order for the server to start accepting connections from the outside."

/* ---- life cycle (core/engine.c, apps/server/main.c) ---- */

/* The users of a new engine: "default" with every permission and, per
 * requirepass, a password or nopass (Redis's ACLCreateDefaultUser). */
gb_acl *gb_acl_new(struct gb_engine *eng);
void gb_acl_free(gb_acl *acl);
/* Gives a registered command its ACL id (core/request/command.c). */
void gb_acl_register_command(struct gb_engine *eng, struct gb_command *cmd);

/* ---- users ---- */

gb_acl_env gb_acl_env_of(const struct gb_engine *eng);
gb_acl_user *gb_acl_find_user(const struct gb_engine *eng, gb_slice name);
/* Applies rules to the user called name (created when absent) all or
 * nothing, as ACL SETUSER does: on an error nothing changes and *bad is
 * the index of the refused rule. rules are already merged
 * (gb_acl_merge_selector_args). */
enum gb_acl_rule_error gb_acl_set_user(struct gb_engine *eng, gb_slice name, const gb_slice *rules, int n, int *bad);
/* Deletes a user (not "default"); its clients are logged out and closed
 * (current: the client running the command, closed after its reply). */
bool gb_acl_delete_user(struct gb_engine *eng, gb_slice name, gb_client *current);
/* Replaces every user with `users` (ACL LOAD; names unique, any order):
 * users that still exist are updated in place, the clients of the others
 * logged out and closed; "default" gets default rules if `users` lacks
 * it. Takes ownership of users[] and the users. */
void gb_acl_replace_users(struct gb_engine *eng, gb_acl_user **users, size_t n, gb_client *current);
/* requirepass changed: the default user's passwords become it, or nopass
 * when it is empty (Redis's ACLUpdateDefaultUserPassword). */
void gb_acl_requirepass_changed(struct gb_engine *eng);

/* ---- authentication ---- */

/* Whether a new client of u starts authenticated (nopass and on). */
static inline bool gb_acl_user_is_open(const gb_acl_user *u)
{
    return (u->flags & GB_ACL_USER_NOPASS) && !(u->flags & GB_ACL_USER_OFF);
}
/* Whether a client that has not authenticated must (Redis's
 * authRequired): the default user has a password or is off. */
bool gb_acl_auth_required(const struct gb_engine *eng);
/* AUTH/HELLO: the user the pair names when the password is right and the
 * user on (NULL otherwise). A failure is logged (reason "auth", object
 * argv0: the command's name as the client wrote it). */
const gb_acl_user *gb_acl_check_credentials(gb_client *c, gb_slice username, gb_slice password, gb_slice argv0);
/* Makes c that user, authenticated. */
static inline void gb_acl_login(gb_client *c, const gb_acl_user *u)
{
    c->user = u;
    c->flags |= GB_CLIENT_AUTHED;
}
/* Makes c act as `as` does: the same user, authenticated or not alike. A
 * ring's client runs as the connection that claimed it, so what the
 * claimer may not do, its ring may not either; the user is shared, not
 * copied, so ACL SETUSER changes apply to both at once, as they do to a
 * Redis connection, and ACL DELUSER closes both. */
static inline void gb_acl_act_as(gb_client *c, const gb_client *as)
{
    c->user = as->user;
    c->flags = (c->flags & ~(uint32_t)GB_CLIENT_AUTHED) | (as->flags & GB_CLIENT_AUTHED);
}
/* Protected mode (Redis 7.0): refuse connections from anywhere but the
 * loopback interface while the default user needs no password. The
 * transport asks at accept time and knows where the peer is. */
bool gb_acl_protected_mode_refuses_remote(const struct gb_engine *eng);

/* ---- permission checks ---- */

/* The hot-path test: the user may run cmd whatever its arguments. */
static inline bool gb_acl_permits_any_args(const gb_acl_user *u, uint16_t acl_id) { return gb_acl_bit(u->fast, acl_id); }
/* The full check of a call (argv[0] the command's name). */
enum gb_acl_denial gb_acl_check(const gb_client *c, const struct gb_command *cmd, int argc, const gb_slice *argv,
                                int *argpos);
/* Typed calls: whether c's user may run cmd on exactly these keys, all
 * with access `flags` (gb_acl_user_permits_keys: false means "run the
 * full check", not "denied"). */
bool gb_acl_permits_keys(const gb_client *c, const struct gb_command *cmd, const gb_slice *keys, size_t n,
                         uint16_t flags);
/* Whether c's user may run cmd with these arguments on any key at all
 * with access spec_flags (a NULL user: yes). */
bool gb_acl_unrestricted_keys(const gb_client *c, const struct gb_command *cmd, int argc, const gb_slice *argv,
                              uint16_t spec_flags);
/* Records a denial in ACL LOG (object: the command's full name, the key or
 * channel at argpos, or for auth the given object). */
void gb_acl_log_denial(gb_client *c, enum gb_acl_denial why, enum gb_acl_log_context ctx,
                       const struct gb_command *cmd, int argc, const gb_slice *argv, int argpos);
/* Pub/sub: whether c's user may use the channel (is_pattern: a
 * PSUBSCRIBE pattern, compared literally with the user's patterns). The
 * gate already checks PUBLISH, SPUBLISH, SUBSCRIBE, SSUBSCRIBE and
 * PSUBSCRIBE calls by their arguments; this is for everything else that
 * must ask (re-checking existing subscriptions after ACL SETUSER or ACL
 * LOAD changed a user's channels, as Redis's ACLKillPubsubClientsIfNeeded
 * does). */
static inline bool gb_acl_check_channel(const gb_client *c, gb_slice channel, bool is_pattern)
{
    return gb_acl_user_channel_permits(c->user, channel, is_pattern);
}

#endif
