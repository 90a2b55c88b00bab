#include "engine/core/acl/acl.h"
#include "engine/core/pubsub/pubsub.h"

#include <stdlib.h>

#include "engine/base/mem.h"
#include "engine/base/sha256.h"
#include "engine/core/request/command.h"
#include "engine/core/engine.h"
#include "platform/clock.h"

_Static_assert((int)GB_ACL_SEL_ALLCHANNELS == (int)GB_ACL_PUBSUB_DEFAULT_ALLCHANNELS,
               "acl-pubsub-default's setting is the selector flag it sets (engine/core/config/config.h)");

gb_acl_env gb_acl_env_of(const gb_engine *eng)
{
    gb_acl_env env = {&eng->acl->cmds, (uint32_t)eng->cfg.acl_pubsub_default};
    return env;
}

/* Applies rules that are known to be valid (built-in users). */
static void apply_all(gb_acl_user *u, const gb_acl_env *env, const char *const *rules)
{
    for (; *rules; rules++) {
        enum gb_acl_rule_error e = gb_acl_user_apply(u, env, gb_slice_cstr(*rules));
        (void)e; /* constant rules: test_acl checks they apply */
    }
    gb_acl_user_refresh(u, env->cmds);
}

/* Redis's ACLCreateDefaultUser. */
static gb_acl_user *new_default_user(const gb_acl_env *env)
{
    static const char *const rules[] = {"+@all", "~*", "&*", "on", "nopass", NULL};
    gb_acl_user *u = gb_acl_user_new(env, gb_slice_cstr("default"));
    apply_all(u, env, rules);
    return u;
}

/* ---- the table of users ------------------------------------------------------------ */

/* The index of name in the sorted table, or where it would go (*found
 * says which). */
static size_t user_slot(const gb_acl *acl, gb_slice name, bool *found)
{
    size_t lo = 0, hi = acl->nusers;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = gb_slice_cmp(gb_slice_make(acl->users[mid]->name, acl->users[mid]->namelen), name);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

static int user_cmp(const void *a, const void *b)
{
    const gb_acl_user *x = *(gb_acl_user *const *)a, *y = *(gb_acl_user *const *)b;
    return gb_slice_cmp(gb_slice_make(x->name, x->namelen), gb_slice_make(y->name, y->namelen));
}

static void insert_user(gb_acl *acl, gb_acl_user *u)
{
    bool found;
    size_t at = user_slot(acl, gb_slice_make(u->name, u->namelen), &found);
    if (acl->nusers == acl->cap) {
        acl->cap = acl->cap ? acl->cap * 2 : 8;
        acl->users = gb_realloc(acl->users, acl->cap * sizeof *acl->users);
    }
    memmove(acl->users + at + 1, acl->users + at, (acl->nusers - at) * sizeof *acl->users);
    acl->users[at] = u;
    acl->nusers++;
}

gb_acl_user *gb_acl_find_user(const gb_engine *eng, gb_slice name)
{
    bool found;
    size_t at = user_slot(eng->acl, name, &found);
    return found ? eng->acl->users[at] : NULL;
}

gb_acl *gb_acl_new(gb_engine *eng)
{
    gb_acl *acl = gb_calloc(1, sizeof *acl);
    gb_acl_commands_init(&acl->cmds);
    eng->acl = acl;
    gb_acl_env env = gb_acl_env_of(eng);
    acl->default_user = new_default_user(&env);
    insert_user(acl, acl->default_user);
    static const char *const all[] = {"+@all", "~*", "&*", "on", "nopass", NULL};
    acl->unrestricted = gb_acl_user_new(&env, gb_slice_cstr("(replay)"));
    apply_all(acl->unrestricted, &env, all);
    gb_acl_requirepass_changed(eng);
    return acl;
}

void gb_acl_free(gb_acl *acl)
{
    if (!acl)
        return;
    for (size_t i = 0; i < acl->nusers; i++)
        gb_acl_user_free(acl->users[i]);
    gb_free(acl->users);
    gb_acl_user_free(acl->unrestricted);
    gb_acl_log_reset(&acl->log);
    gb_acl_commands_free(&acl->cmds);
    gb_free(acl);
}

void gb_acl_register_command(gb_engine *eng, gb_command *cmd)
{
    gb_acl_commands *u = &eng->acl->cmds;
    uint16_t id = gb_acl_commands_id_of(u, cmd->meta);
    if (id == GB_ACL_NO_ID)
        id = gb_acl_commands_add_own(u, cmd->meta);
    /* No id left: only users who may run every command may run it. */
    cmd->acl_id = id == GB_ACL_NO_ID ? GB_ACL_FUTURE_ID : id;
    /* Users made before the command existed learn whether they may run it
     * with any arguments (a user with +@all may). */
    for (size_t i = 0; i < eng->acl->nusers; i++)
        gb_acl_user_refresh(eng->acl->users[i], u);
    gb_acl_user_refresh(eng->acl->unrestricted, u);
}

/* ---- clients of a user that goes away ------------------------------------------------ */

/* Logs the client out and closes it (after its reply when it is the one
 * running the command), as Redis's ACLFreeUserAndKillClients. */
static void log_out(gb_client *c, gb_client *current)
{
    c->user = c->eng->acl->default_user;
    c->flags &= ~GB_CLIENT_AUTHED;
    if (c == current) {
        c->flags |= GB_CLIENT_CLOSE_AFTER_REPLY;
        return;
    }
    gb_client_kill(c);
}

static void log_out_clients_of(gb_engine *eng, const gb_acl_user *u, gb_client *current)
{
    for (gb_client *c = eng->clients; c; c = c->next)
        if (c->user == u)
            log_out(c, current);
}

/* ---- changing users -------------------------------------------------------------------- */

enum gb_acl_rule_error gb_acl_set_user(gb_engine *eng, gb_slice name, const gb_slice *rules, int n, int *bad)
{
    gb_acl_env env = gb_acl_env_of(eng);
    gb_acl_user *u = gb_acl_find_user(eng, name);
    gb_acl_user *scratch = gb_acl_user_new(&env, name);
    if (u)
        gb_acl_user_copy_rules(scratch, u);
    for (int i = 0; i < n; i++) {
        enum gb_acl_rule_error e = gb_acl_user_apply(scratch, &env, rules[i]);
        if (e) {
            *bad = i;
            gb_acl_user_free(scratch);
            return e;
        }
    }
    gb_acl_user_refresh(scratch, env.cmds);
    if (u) {
        gb_acl_user_copy_rules(u, scratch);
        gb_acl_user_free(scratch);
        gb_pubsub_kill_denied(eng, u, NULL);
    } else {
        insert_user(eng->acl, scratch);
    }
    return GB_ACL_RULE_OK;
}

bool gb_acl_delete_user(gb_engine *eng, gb_slice name, gb_client *current)
{
    gb_acl *acl = eng->acl;
    bool found;
    size_t at = user_slot(acl, name, &found);
    if (!found || acl->users[at] == acl->default_user)
        return false;
    gb_acl_user *u = acl->users[at];
    memmove(acl->users + at, acl->users + at + 1, (acl->nusers - at - 1) * sizeof *acl->users);
    acl->nusers--;
    log_out_clients_of(eng, u, current);
    gb_acl_user_free(u);
    return true;
}

void gb_acl_replace_users(gb_engine *eng, gb_acl_user **users, size_t n, gb_client *current)
{
    gb_acl *acl = eng->acl;
    gb_acl_env env = gb_acl_env_of(eng);
    gb_acl_user **old = acl->users;
    size_t nold = acl->nusers;
    qsort(users, n, sizeof *users, user_cmp);
    acl->users = users;
    acl->nusers = acl->cap = n;
    if (!gb_acl_find_user(eng, gb_slice_cstr("default")))
        insert_user(acl, new_default_user(&env));
    /* As Redis 7.0's ACLLoadFromFile: the default user keeps its identity
     * and its clients, with the file's rules (or a fresh default's); every
     * other user is a new one, and the clients logged in as any old one
     * are logged out and closed, even where the file holds that user with
     * the same rules. Nobody's subscriptions are checked. */
    bool found;
    size_t at = user_slot(acl, gb_slice_cstr("default"), &found);
    for (size_t i = 0; i < nold; i++) {
        if (old[i] == acl->default_user) {
            gb_acl_user_copy_rules(old[i], acl->users[at]);
            gb_acl_user_free(acl->users[at]);
            acl->users[at] = old[i];
        } else {
            log_out_clients_of(eng, old[i], current);
            gb_acl_user_free(old[i]);
        }
    }
    gb_free(old);
    acl->default_user = acl->users[at];
}

void gb_acl_requirepass_changed(gb_engine *eng)
{
    gb_acl_env env = gb_acl_env_of(eng);
    gb_acl_user *u = eng->acl->default_user;
    const char *pass = eng->cfg.requirepass;
    gb_acl_user_apply(u, &env, gb_slice_cstr("resetpass"));
    if (pass && pass[0]) {
        size_t n = strlen(pass);
        char *rule = gb_malloc(n + 2);
        rule[0] = '>';
        memcpy(rule + 1, pass, n + 1);
        gb_acl_user_apply(u, &env, gb_slice_make(rule, n + 1));
        gb_free(rule);
    } else {
        gb_acl_user_apply(u, &env, gb_slice_cstr("nopass"));
    }
}

/* ---- authentication --------------------------------------------------------------------- */

bool gb_acl_auth_required(const gb_engine *eng)
{
    const gb_acl_user *d = eng->acl->default_user;
    return !(d->flags & GB_ACL_USER_NOPASS) || (d->flags & GB_ACL_USER_OFF);
}

bool gb_acl_protected_mode_refuses_remote(const gb_engine *eng)
{
    return eng->cfg.protected_mode && (eng->acl->default_user->flags & GB_ACL_USER_NOPASS);
}

/* Compares every byte whatever the first difference, so the time taken
 * says nothing about how much of a digest matched. */
static bool digests_equal(const char *a, const char *b)
{
    unsigned diff = 0;
    for (int i = 0; i < GB_SHA256_HEX; i++)
        diff |= (unsigned char)a[i] ^ (unsigned char)b[i];
    return diff == 0;
}

static bool credentials_ok(const gb_acl_user *u, gb_slice password)
{
    if (!u || (u->flags & GB_ACL_USER_OFF))
        return false;
    if (u->flags & GB_ACL_USER_NOPASS)
        return true;
    char hex[GB_SHA256_HEX + 1];
    gb_sha256_hex(password.ptr, password.len, hex);
    GB_ACL_LIST_EACH(&u->passwords, p) {
        if (digests_equal(hex, p->bytes))
            return true;
    }
    return false;
}

static enum gb_acl_log_context context_of(const gb_client *c)
{
    return (c->flags & (GB_CLIENT_MULTI | GB_CLIENT_IN_EXEC)) ? GB_ACL_CTX_MULTI : GB_ACL_CTX_TOPLEVEL;
}

static void log_add(gb_client *c, enum gb_acl_denial why, enum gb_acl_log_context ctx, gb_slice object,
                    gb_slice username)
{
    /* Cut at 1 KiB (a long client name): up to acllog-max-len entries keep
     * one each, and a client's name must not multiply in them. */
    char info[1024];
    gb_client_info(c, info, sizeof info);
    gb_acl_log_add(&c->eng->acl->log, why, ctx, object, username, info, gb_clock_real_ms(),
                   (size_t)c->eng->cfg.acllog_max_len);
}

const gb_acl_user *gb_acl_check_credentials(gb_client *c, gb_slice username, gb_slice password, gb_slice argv0)
{
    gb_acl_user *u = gb_acl_find_user(c->eng, username);
    if (credentials_ok(u, password))
        return u;
    log_add(c, GB_ACL_DENIED_AUTH, context_of(c), argv0, username);
    return NULL;
}

/* ---- permission checks --------------------------------------------------------------------- */

enum gb_acl_denial gb_acl_check(const gb_client *c, const gb_command *cmd, int argc, const gb_slice *argv,
                                int *argpos)
{
    return gb_acl_user_check(c->user, &c->eng->acl->cmds, cmd->acl_id, cmd->meta, argc, argv, argpos);
}

bool gb_acl_permits_keys(const gb_client *c, const gb_command *cmd, const gb_slice *keys, size_t n, uint16_t flags)
{
    return gb_acl_user_permits_keys(c->user, &c->eng->acl->cmds, cmd->acl_id, keys, n, flags);
}

bool gb_acl_unrestricted_keys(const gb_client *c, const gb_command *cmd, int argc, const gb_slice *argv,
                              uint16_t spec_flags)
{
    return !c->user ||
           gb_acl_user_unrestricted_keys(c->user, &c->eng->acl->cmds, cmd->acl_id, cmd->meta, argc, argv, spec_flags);
}

void gb_acl_log_denial(gb_client *c, enum gb_acl_denial why, enum gb_acl_log_context ctx, const gb_command *cmd,
                       int argc, const gb_slice *argv, int argpos)
{
    gb_slice object = why == GB_ACL_DENIED_CMD ? gb_slice_cstr(cmd->fullname)
                      : argpos < argc          ? argv[argpos]
                                               : gb_slice_make("", 0);
    log_add(c, why, ctx, object, gb_slice_make(c->user->name, c->user->namelen));
}
