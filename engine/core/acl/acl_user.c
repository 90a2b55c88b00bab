/*
 * ACL users and rules with Redis 7.0's semantics (its acl.c is the
 * reference for every branch below: the order rules are recognised in, the
 * errors, and how a bitmap is described back as rules).
 */
#include "engine/core/acl/acl_user.h"

#include <limits.h>

#include "engine/base/mem.h"
#include "engine/base/sha256.h"
#include "engine/base/splitargs.h"
#include "engine/base/util.h"
#include "engine/core/engine.h"

const char *const gb_acl_user_flag_names[GB_ACL_USER_FLAG_COUNT] = {
    "on", "off", "nopass", "skip-sanitize-payload", "sanitize-payload",
};

const char *gb_acl_rule_error_text(enum gb_acl_rule_error e)
{
    switch (e) {
    case GB_ACL_RULE_UNKNOWN:
        return "Unknown command or category name in ACL";
    case GB_ACL_RULE_SYNTAX:
        return "Syntax error";
    case GB_ACL_RULE_KEYS_AFTER_ALL:
        return "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any "
               "effect. Try 'resetkeys' to start with an empty list of patterns";
    case GB_ACL_RULE_CHANNELS_AFTER_ALL:
        return "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any "
               "effect. Try 'resetchannels' to start with an empty list of channels";
    case GB_ACL_RULE_NO_SUCH_PASSWORD:
        return "The password you are trying to remove from the user does not exist";
    case GB_ACL_RULE_BAD_HASH:
        return "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters";
    case GB_ACL_RULE_DUPLICATE_USER:
        return "Duplicate user found. A user can only be defined once in config files";
    case GB_ACL_RULE_FIRSTARG_OF_SUB:
        return "Allowing first-arg of a subcommand is not supported";
    case GB_ACL_RULE_OK:
        break;
    }
    return "Wrong format";
}

/* A rule that is exactly `word`, any case (Redis compares with strcasecmp). */
static bool rule_is(gb_slice r, const char *word) { return gb_slice_ieq(r, word); }

/* The byte at i, or NUL past the end: Redis reads rules as C strings. */
static char at(gb_slice r, size_t i) { return i < r.len ? r.ptr[i] : '\0'; }

static gb_slice tail(gb_slice r, size_t from) { return gb_slice_make(r.ptr + from, r.len - from); }

bool gb_acl_has_spaces(gb_slice s)
{
    for (size_t i = 0; i < s.len; i++) {
        char c = s.ptr[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r' || c == '\0')
            return true;
    }
    return false;
}

/* ---- command bitmaps -------------------------------------------------------- */

static void bits_set(uint64_t *bits, uint16_t id, bool value)
{
    uint64_t mask = 1ull << (id & 63);
    if (value)
        bits[id >> 6] |= mask;
    else
        bits[id >> 6] &= ~mask;
}

/* A command and, for a container, all its subcommands (Redis's
 * ACLChangeSelectorPerm on the bitmap). */
static void bits_change(uint64_t *bits, const gb_acl_commands *cmds, uint16_t id, bool value)
{
    bits_set(bits, id, value);
    for (uint16_t j = 1; j <= cmds->cmd[id].nsubs; j++)
        bits_set(bits, (uint16_t)(id + j), value);
}

static void bits_category(uint64_t *bits, const gb_acl_commands *cmds, uint32_t category, bool value)
{
    for (uint16_t id = 0; id < cmds->n; id++)
        if (cmds->cmd[id].meta->acl_categories & category)
            bits_change(bits, cmds, id, value);
}

/* Counts Redis's commands only (not the server's own, RING): the choice
 * of categories in a description is then exactly Redis's, and a command
 * of our own that does not follow its categories shows as a single rule. */
static void count_category(const uint64_t *bits, const gb_acl_commands *cmds, uint32_t category, unsigned long *on,
                           unsigned long *off)
{
    *on = *off = 0;
    for (uint16_t id = 0; id < cmds->nredis; id++)
        if (cmds->cmd[id].meta->acl_categories & category) {
            if (gb_acl_bit(bits, id))
                (*on)++;
            else
                (*off)++;
        }
}

/* ---- selectors ---------------------------------------------------------------- */

static gb_acl_selector *selector_new(uint32_t flags)
{
    gb_acl_selector *s = gb_calloc(1, sizeof *s);
    s->flags = flags;
    gb_acl_list_init(&s->keys, false);
    gb_acl_list_init(&s->channels, false);
    return s;
}

static void reset_firstargs(gb_acl_selector *s)
{
    for (uint32_t i = 0; i < s->nfirstargs; i++)
        gb_acl_list_free(&s->firstargs[i].args);
    gb_free(s->firstargs);
    s->firstargs = NULL;
    s->nfirstargs = 0;
}

static gb_acl_firstargs *firstargs_of(const gb_acl_selector *s, uint16_t id)
{
    for (uint32_t i = 0; i < s->nfirstargs; i++)
        if (s->firstargs[i].id == id)
            return &s->firstargs[i];
    return NULL;
}

static void reset_firstargs_for(gb_acl_selector *s, uint16_t id)
{
    gb_acl_firstargs *f = firstargs_of(s, id);
    if (!f)
        return;
    gb_acl_list_free(&f->args);
    *f = s->firstargs[--s->nfirstargs];
}

static void add_firstarg(gb_acl_selector *s, uint16_t id, gb_slice arg)
{
    gb_acl_firstargs *f = firstargs_of(s, id);
    if (!f) {
        s->firstargs = gb_realloc(s->firstargs, (s->nfirstargs + 1) * sizeof *s->firstargs);
        f = &s->firstargs[s->nfirstargs++];
        f->id = id;
        gb_acl_list_init(&f->args, true);
    }
    gb_acl_list_add(&f->args, arg, 0, NULL);
}

static void selector_free(gb_acl_selector *s)
{
    gb_acl_list_free(&s->keys);
    gb_acl_list_free(&s->channels);
    reset_firstargs(s);
    gb_free(s);
}

static gb_acl_selector *selector_copy(const gb_acl_selector *src)
{
    gb_acl_selector *s = selector_new(src->flags);
    memcpy(s->allowed, src->allowed, sizeof s->allowed);
    gb_acl_list_copy(&s->keys, &src->keys);
    gb_acl_list_copy(&s->channels, &src->channels);
    for (uint32_t i = 0; i < src->nfirstargs; i++)
        GB_ACL_LIST_EACH(&src->firstargs[i].args, a)
            add_firstarg(s, src->firstargs[i].id, gb_slice_make(a->bytes, a->len));
    return s;
}

/* Clearing any command's bit ends "every command" (Redis's
 * ACLSetSelectorCommandBit). */
static void selector_change(gb_acl_selector *s, const gb_acl_commands *cmds, uint16_t id, bool allow)
{
    bits_change(s->allowed, cmds, id, allow);
    reset_firstargs_for(s, id);
    if (!allow)
        s->flags &= ~GB_ACL_SEL_ALLCOMMANDS;
}

static void selector_category(gb_acl_selector *s, const gb_acl_commands *cmds, uint32_t category, bool allow)
{
    for (uint16_t id = 0; id < cmds->n; id++)
        if (cmds->cmd[id].meta->acl_categories & category)
            selector_change(s, cmds, id, allow);
}

/* "~pattern", "%R~pattern", "%W~pattern", "%RW~pattern". */
static enum gb_acl_rule_error selector_key_pattern(gb_acl_selector *s, gb_slice rule)
{
    if (s->flags & GB_ACL_SEL_ALLKEYS)
        return GB_ACL_RULE_KEYS_AFTER_ALL;
    uint8_t perm = 0;
    size_t offset = 1;
    if (rule.ptr[0] == '%') {
        for (; offset < rule.len; offset++) {
            char c = rule.ptr[offset];
            if ((c == 'R' || c == 'r') && !(perm & GB_ACL_PERM_READ)) {
                perm |= GB_ACL_PERM_READ;
            } else if ((c == 'W' || c == 'w') && !(perm & GB_ACL_PERM_WRITE)) {
                perm |= GB_ACL_PERM_WRITE;
            } else if (c == '~') {
                offset++;
                break;
            } else {
                return GB_ACL_RULE_SYNTAX;
            }
        }
    } else {
        perm = GB_ACL_PERM_ALL;
    }
    gb_slice pattern = tail(rule, offset);
    if (!perm || gb_acl_has_spaces(pattern))
        return GB_ACL_RULE_SYNTAX;
    bool added;
    gb_acl_str *p = gb_acl_list_add(&s->keys, pattern, perm, &added);
    if (!added)
        p->tag |= perm; /* "%R~x %W~x" is "~x" */
    return GB_ACL_RULE_OK;
}

static enum gb_acl_rule_error selector_channel_pattern(gb_acl_selector *s, gb_slice rule)
{
    if (s->flags & GB_ACL_SEL_ALLCHANNELS)
        return GB_ACL_RULE_CHANNELS_AFTER_ALL;
    gb_slice pattern = tail(rule, 1);
    if (gb_acl_has_spaces(pattern))
        return GB_ACL_RULE_SYNTAX;
    gb_acl_list_add(&s->channels, pattern, 0, NULL);
    return GB_ACL_RULE_OK;
}

/* "+cmd", "+container|sub", or "+cmd|firstarg" for a command without
 * subcommands (Redis's deprecated first-argument rule). */
static enum gb_acl_rule_error selector_allow(gb_acl_selector *s, const gb_acl_commands *cmds, gb_slice rule)
{
    gb_slice name = tail(rule, 1);
    const char *bar = NULL;
    for (size_t i = name.len; i > 0; i--)
        if (name.ptr[i - 1] == '|') {
            bar = name.ptr + i - 1;
            break;
        }
    if (!bar) {
        const gb_acl_cmd *c = gb_acl_commands_find(cmds, name);
        if (!c)
            return GB_ACL_RULE_UNKNOWN;
        selector_change(s, cmds, gb_acl_commands_id(cmds, c), true);
        return GB_ACL_RULE_OK;
    }
    gb_slice head = gb_slice_make(name.ptr, (size_t)(bar - name.ptr));
    gb_slice arg = gb_slice_make(bar + 1, name.len - head.len - 1);
    const gb_acl_cmd *c = gb_acl_commands_find(cmds, head);
    if (!c)
        return GB_ACL_RULE_UNKNOWN;
    if (c->parent != GB_ACL_NO_ID)
        return GB_ACL_RULE_FIRSTARG_OF_SUB;
    if (arg.len == 0)
        return GB_ACL_RULE_SYNTAX;
    if (c->nsubs) {
        const gb_acl_cmd *sub = gb_acl_commands_find(cmds, name);
        if (!sub)
            return GB_ACL_RULE_UNKNOWN;
        selector_change(s, cmds, gb_acl_commands_id(cmds, sub), true);
        return GB_ACL_RULE_OK;
    }
    gb_log(GB_LOG_WARNING,
           "Deprecation warning: Allowing a first arg of an otherwise blocked command is a misuse of ACL and may "
           "get disabled in the future (offender: +%.*s)",
           (int)GB_MIN(name.len, 256), name.ptr);
    add_firstarg(s, gb_acl_commands_id(cmds, c), arg);
    return GB_ACL_RULE_OK;
}

/* A rule about keys, channels or commands (Redis's ACLSetSelector). */
static enum gb_acl_rule_error selector_apply(gb_acl_selector *s, const gb_acl_commands *cmds, gb_slice rule)
{
    if (rule_is(rule, "allkeys") || rule_is(rule, "~*")) {
        s->flags |= GB_ACL_SEL_ALLKEYS;
        gb_acl_list_clear(&s->keys);
    } else if (rule_is(rule, "resetkeys")) {
        s->flags &= ~GB_ACL_SEL_ALLKEYS;
        gb_acl_list_clear(&s->keys);
    } else if (rule_is(rule, "allchannels") || rule_is(rule, "&*")) {
        s->flags |= GB_ACL_SEL_ALLCHANNELS;
        gb_acl_list_clear(&s->channels);
    } else if (rule_is(rule, "resetchannels")) {
        s->flags &= ~GB_ACL_SEL_ALLCHANNELS;
        gb_acl_list_clear(&s->channels);
    } else if (rule_is(rule, "allcommands") || rule_is(rule, "+@all")) {
        memset(s->allowed, 0xff, sizeof s->allowed);
        s->flags |= GB_ACL_SEL_ALLCOMMANDS;
        reset_firstargs(s);
    } else if (rule_is(rule, "nocommands") || rule_is(rule, "-@all")) {
        memset(s->allowed, 0, sizeof s->allowed);
        s->flags &= ~GB_ACL_SEL_ALLCOMMANDS;
        reset_firstargs(s);
    } else if (at(rule, 0) == '~' || at(rule, 0) == '%') {
        return selector_key_pattern(s, rule);
    } else if (at(rule, 0) == '&') {
        return selector_channel_pattern(s, rule);
    } else if (at(rule, 0) == '+' && at(rule, 1) != '@') {
        return selector_allow(s, cmds, rule);
    } else if (at(rule, 0) == '-' && at(rule, 1) != '@') {
        const gb_acl_cmd *c = gb_acl_commands_find(cmds, tail(rule, 1));
        if (!c)
            return GB_ACL_RULE_UNKNOWN;
        selector_change(s, cmds, gb_acl_commands_id(cmds, c), false);
    } else if ((at(rule, 0) == '+' || at(rule, 0) == '-') && at(rule, 1) == '@') {
        uint32_t category = gb_acl_category_by_name(tail(rule, 2));
        if (!category)
            return GB_ACL_RULE_UNKNOWN;
        selector_category(s, cmds, category, rule.ptr[0] == '+');
    } else {
        return GB_ACL_RULE_SYNTAX;
    }
    return GB_ACL_RULE_OK;
}

/* "( rules )": a new selector of the words inside, split as Redis's
 * sdssplitargs splits them (an unbalanced quote leaves it empty, as in
 * Redis). */
static enum gb_acl_rule_error user_add_selector(gb_acl_user *u, const gb_acl_env *env, gb_slice rule)
{
    gb_acl_selector *s = selector_new(env->pubsub_default);
    gb_slice *words = NULL;
    int n = gb_split_args(rule.ptr + 1, rule.len - 2, &words);
    for (int i = 0; i < n; i++) {
        enum gb_acl_rule_error e = selector_apply(s, env->cmds, words[i]);
        if (e) {
            gb_split_args_free(words);
            selector_free(s);
            return e;
        }
    }
    gb_split_args_free(words);
    u->selectors = gb_realloc(u->selectors, (u->nselectors + 1) * sizeof *u->selectors);
    u->selectors[u->nselectors++] = s;
    return GB_ACL_RULE_OK;
}

static void clear_selectors(gb_acl_user *u)
{
    for (uint32_t i = 1; i < u->nselectors; i++)
        selector_free(u->selectors[i]);
    u->nselectors = 1;
}

/* ---- users ---------------------------------------------------------------------- */

gb_acl_user *gb_acl_user_new(const gb_acl_env *env, gb_slice name)
{
    gb_acl_user *u = gb_calloc(1, sizeof *u);
    u->name = gb_memdup(name.ptr, name.len);
    u->namelen = name.len;
    u->flags = GB_ACL_USER_OFF;
    gb_acl_list_init(&u->passwords, false);
    u->selectors = gb_malloc(sizeof *u->selectors);
    u->selectors[0] = selector_new(GB_ACL_SEL_ROOT | env->pubsub_default);
    u->nselectors = 1;
    gb_acl_user_refresh(u, env->cmds);
    return u;
}

void gb_acl_user_free(gb_acl_user *u)
{
    if (!u)
        return;
    for (uint32_t i = 0; i < u->nselectors; i++)
        selector_free(u->selectors[i]);
    gb_free(u->selectors);
    gb_acl_list_free(&u->passwords);
    gb_free(u->name);
    gb_free(u);
}

void gb_acl_user_copy_rules(gb_acl_user *dst, const gb_acl_user *src)
{
    for (uint32_t i = 0; i < dst->nselectors; i++)
        selector_free(dst->selectors[i]);
    dst->selectors = gb_realloc(dst->selectors, src->nselectors * sizeof *dst->selectors);
    for (uint32_t i = 0; i < src->nselectors; i++)
        dst->selectors[i] = selector_copy(src->selectors[i]);
    dst->nselectors = src->nselectors;
    gb_acl_list_copy(&dst->passwords, &src->passwords);
    dst->flags = src->flags;
    memcpy(dst->fast, src->fast, sizeof dst->fast);
}

static bool valid_hash(gb_slice h)
{
    if (h.len != GB_SHA256_HEX)
        return false;
    for (size_t i = 0; i < h.len; i++) {
        char c = h.ptr[i];
        if ((c < 'a' || c > 'f') && (c < '0' || c > '9'))
            return false;
    }
    return true;
}

/* ">pass", "#hash", "<pass", "!hash". */
static enum gb_acl_rule_error user_password(gb_acl_user *u, gb_slice rule)
{
    char hex[GB_SHA256_HEX + 1];
    gb_slice hash = tail(rule, 1);
    char kind = rule.ptr[0];
    if (kind == '>' || kind == '<') {
        gb_sha256_hex(hash.ptr, hash.len, hex);
        hash = gb_slice_make(hex, GB_SHA256_HEX);
    } else if (!valid_hash(hash)) {
        return GB_ACL_RULE_BAD_HASH;
    }
    if (kind == '>' || kind == '#') {
        gb_acl_list_add(&u->passwords, hash, 0, NULL);
        u->flags &= ~GB_ACL_USER_NOPASS;
        return GB_ACL_RULE_OK;
    }
    return gb_acl_list_remove(&u->passwords, hash) ? GB_ACL_RULE_OK : GB_ACL_RULE_NO_SUCH_PASSWORD;
}

static void user_reset(gb_acl_user *u, const gb_acl_env *env)
{
    gb_acl_selector *root = u->selectors[0];
    u->flags &= ~GB_ACL_USER_NOPASS;
    gb_acl_list_clear(&u->passwords);
    root->flags &= ~(GB_ACL_SEL_ALLKEYS | GB_ACL_SEL_ALLCHANNELS);
    gb_acl_list_clear(&root->keys);
    gb_acl_list_clear(&root->channels);
    root->flags |= env->pubsub_default;
    u->flags = (u->flags & ~(GB_ACL_USER_ON | GB_ACL_USER_SKIP_SANITIZE)) | GB_ACL_USER_OFF | GB_ACL_USER_SANITIZE;
    clear_selectors(u);
    memset(root->allowed, 0, sizeof root->allowed);
    root->flags &= ~GB_ACL_SEL_ALLCOMMANDS;
    reset_firstargs(root);
}

enum gb_acl_rule_error gb_acl_user_apply(gb_acl_user *u, const gb_acl_env *env, gb_slice rule)
{
    if (rule.len == 0)
        return GB_ACL_RULE_OK;
    char first = rule.ptr[0];
    if (rule_is(rule, "on")) {
        u->flags = (u->flags | GB_ACL_USER_ON) & ~GB_ACL_USER_OFF;
    } else if (rule_is(rule, "off")) {
        u->flags = (u->flags | GB_ACL_USER_OFF) & ~GB_ACL_USER_ON;
    } else if (rule_is(rule, "skip-sanitize-payload")) {
        u->flags = (u->flags | GB_ACL_USER_SKIP_SANITIZE) & ~GB_ACL_USER_SANITIZE;
    } else if (rule_is(rule, "sanitize-payload")) {
        u->flags = (u->flags | GB_ACL_USER_SANITIZE) & ~GB_ACL_USER_SKIP_SANITIZE;
    } else if (rule_is(rule, "nopass")) {
        u->flags |= GB_ACL_USER_NOPASS;
        gb_acl_list_clear(&u->passwords);
    } else if (rule_is(rule, "resetpass")) {
        u->flags &= ~GB_ACL_USER_NOPASS;
        gb_acl_list_clear(&u->passwords);
    } else if (first == '>' || first == '#' || first == '<' || first == '!') {
        return user_password(u, rule);
    } else if (first == '(' && rule.ptr[rule.len - 1] == ')') {
        return user_add_selector(u, env, rule);
    } else if (rule_is(rule, "clearselectors")) {
        clear_selectors(u);
    } else if (rule_is(rule, "reset")) {
        user_reset(u, env);
    } else {
        return selector_apply(u->selectors[0], env->cmds, rule);
    }
    return GB_ACL_RULE_OK;
}

int gb_acl_merge_selector_args(const gb_slice *rules, int n, gb_slice **out, int *bad_index)
{
    size_t bytes = 0;
    for (int i = 0; i < n; i++)
        bytes += rules[i].len + 1;
    size_t slots = n ? (size_t)n : 1;
    gb_slice *merged = gb_malloc(slots * sizeof *merged + bytes + 1);
    char *store = (char *)(merged + slots);
    int m = 0, open = -1;
    for (int i = 0; i < n; i++) {
        gb_slice r = rules[i];
        bool opens = r.len && r.ptr[0] == '(' && r.ptr[r.len - 1] != ')';
        bool closes = r.len && r.ptr[r.len - 1] == ')';
        if (opens || open < 0) {
            /* A new rule; an argument that opens a selector starts over
             * even inside an open one (Redis drops the unclosed part). */
            merged[m] = gb_slice_make(store, r.len);
            open = opens ? i : -1;
            if (!opens)
                m++;
        } else {
            *store++ = ' ';
            merged[m].len += 1 + r.len;
            if (closes) {
                open = -1;
                m++;
            }
        }
        if (r.len)
            memcpy(store, r.ptr, r.len);
        store += r.len;
    }
    if (open >= 0) {
        gb_free(merged);
        *out = NULL;
        *bad_index = open;
        return -1;
    }
    *out = merged;
    return m;
}

/* ---- descriptions ------------------------------------------------------------------- */

static void describe_pattern(gb_strbuf *out, const gb_acl_str *p)
{
    gb_strbuf_adds(out, p->tag == GB_ACL_PERM_ALL ? "~" : p->tag == GB_ACL_PERM_READ ? "%R~" : "%W~");
    gb_strbuf_add(out, p->bytes, p->len);
}

/* Emits the single-command rules that turn `have` into the selector's
 * bitmap, and its first arguments (Redis's
 * ACLDescribeSelectorCommandRulesSingleCommands, in table order). */
static void describe_single_commands(const gb_acl_selector *s, const gb_acl_commands *cmds, uint64_t *have,
                                     gb_strbuf *out)
{
    for (uint16_t id = 0; id < cmds->n; id++) {
        bool want = gb_acl_bit(s->allowed, id);
        if (want != gb_acl_bit(have, id)) {
            gb_strbuf_printf(out, "%c%s ", want ? '+' : '-', cmds->cmd[id].meta->name);
            bits_change(have, cmds, id, want);
        }
        const gb_acl_firstargs *f = want ? NULL : firstargs_of(s, id);
        if (f)
            GB_ACL_LIST_EACH(&f->args, a)
                gb_strbuf_printf(out, "+%s|%s ", cmds->cmd[id].meta->name, a->bytes);
    }
}

void gb_acl_describe_commands(const gb_acl_selector *s, const gb_acl_commands *cmds, gb_strbuf *out)
{
    /* Start from everything (if the selector may run future commands) or
     * nothing; then, greedily, the category that fits the remaining
     * difference best, while some category has more commands in common
     * with it than not; then single commands. `have` is what the rules
     * emitted so far give; `rest` the selector's bitmap with the applied
     * categories taken away (Redis's fake and temp selectors). */
    bool additive = !gb_acl_bit(s->allowed, GB_ACL_FUTURE_ID);
    uint64_t have[GB_ACL_WORDS], rest[GB_ACL_WORDS];
    memset(have, additive ? 0 : 0xff, sizeof have);
    memcpy(rest, s->allowed, sizeof rest);
    gb_strbuf_adds(out, additive ? "-@all " : "+@all ");
    bool applied[GB_ACL_CATEGORY_COUNT] = {false};
    for (;;) {
        int best = -1;
        unsigned long mindiff = INT_MAX, maxsame = 0;
        for (int j = 0; j < GB_ACL_CATEGORY_COUNT; j++) {
            if (applied[j])
                continue;
            unsigned long on, off;
            count_category(rest, cmds, 1u << j, &on, &off);
            unsigned long diff = additive ? off : on, same = additive ? on : off;
            if (same > diff && (diff < mindiff || (diff == mindiff && same > maxsame))) {
                best = j;
                mindiff = diff;
                maxsame = same;
            }
        }
        if (best < 0)
            break;
        bits_category(have, cmds, 1u << best, additive);
        bits_category(rest, cmds, 1u << best, !additive);
        gb_strbuf_printf(out, "%c@%s ", additive ? '+' : '-', gb_acl_category_names[best]);
        applied[best] = true;
    }
    describe_single_commands(s, cmds, have, out);
    gb_strbuf_trim_last(out, ' ');
}

void gb_acl_describe_keys(const gb_acl_selector *s, gb_strbuf *out)
{
    if (s->flags & GB_ACL_SEL_ALLKEYS) {
        gb_strbuf_adds(out, "~*");
        return;
    }
    GB_ACL_LIST_EACH(&s->keys, p) {
        describe_pattern(out, p);
        gb_strbuf_addc(out, ' ');
    }
    gb_strbuf_trim_last(out, ' ');
}

void gb_acl_describe_channels(const gb_acl_selector *s, gb_strbuf *out)
{
    if (s->flags & GB_ACL_SEL_ALLCHANNELS) {
        gb_strbuf_adds(out, "&*");
        return;
    }
    GB_ACL_LIST_EACH(&s->channels, p) {
        gb_strbuf_addc(out, '&');
        gb_strbuf_add(out, p->bytes, p->len);
        gb_strbuf_addc(out, ' ');
    }
    gb_strbuf_trim_last(out, ' ');
}

/* Redis's ACLDescribeSelector: keys, channels (with "resetchannels" first
 * when not all), then the command rules. */
static void describe_selector(const gb_acl_selector *s, const gb_acl_commands *cmds, gb_strbuf *out)
{
    if (s->flags & GB_ACL_SEL_ALLKEYS) {
        gb_strbuf_adds(out, "~* ");
    } else {
        GB_ACL_LIST_EACH(&s->keys, p) {
            describe_pattern(out, p);
            gb_strbuf_addc(out, ' ');
        }
    }
    if (s->flags & GB_ACL_SEL_ALLCHANNELS) {
        gb_strbuf_adds(out, "&* ");
    } else {
        gb_strbuf_adds(out, "resetchannels ");
        GB_ACL_LIST_EACH(&s->channels, p) {
            gb_strbuf_addc(out, '&');
            gb_strbuf_add(out, p->bytes, p->len);
            gb_strbuf_addc(out, ' ');
        }
    }
    gb_acl_describe_commands(s, cmds, out);
}

void gb_acl_describe_user(const gb_acl_user *u, const gb_acl_commands *cmds, gb_strbuf *out)
{
    for (int j = 0; j < GB_ACL_USER_FLAG_COUNT; j++)
        if (u->flags & (1u << j)) {
            gb_strbuf_adds(out, gb_acl_user_flag_names[j]);
            gb_strbuf_addc(out, ' ');
        }
    GB_ACL_LIST_EACH(&u->passwords, p) {
        gb_strbuf_addc(out, '#');
        gb_strbuf_add(out, p->bytes, p->len);
        gb_strbuf_addc(out, ' ');
    }
    for (uint32_t i = 0; i < u->nselectors; i++) {
        if (i)
            gb_strbuf_adds(out, " (");
        describe_selector(u->selectors[i], cmds, out);
        if (i)
            gb_strbuf_addc(out, ')');
    }
}

/* ---- checks --------------------------------------------------------------------------- */

/* A call's keys, found once for all the selectors that look at them. */
typedef struct keys_cache {
    bool found;
    gb_keys_result r;
} keys_cache;

/* Redis's ACLSelectorCheckKey: the access the key spec declares decides
 * which patterns count ("%R~" for a read, "%W~" for a write, "~" for both). */
static uint8_t perms_needed(uint16_t spec_flags)
{
    uint8_t need = 0;
    if (spec_flags & GB_KS_ACCESS)
        need |= GB_ACL_PERM_READ;
    if (spec_flags & (GB_KS_INSERT | GB_KS_DELETE | GB_KS_UPDATE))
        need |= GB_ACL_PERM_WRITE;
    return need;
}

static bool key_permitted(const gb_acl_selector *s, gb_slice key, uint16_t spec_flags)
{
    uint8_t need = perms_needed(spec_flags);
    GB_ACL_LIST_EACH(&s->keys, p) {
        if ((p->tag & need) == need && gb_acl_str_glob(p, key))
            return true;
    }
    return false;
}

static bool channel_in(const gb_acl_list *channels, gb_slice channel, bool is_pattern)
{
    GB_ACL_LIST_EACH(channels, p) {
        /* A PSUBSCRIBE pattern must be one of the user's patterns as it
         * is; a channel name is matched against them. */
        if (is_pattern ? gb_slice_eq(gb_slice_make(p->bytes, p->len), channel) : gb_acl_str_glob(p, channel))
            return true;
    }
    return false;
}

/* Whether the selector lets the command itself run (its bit, "every
 * command", a command usable before AUTH, or an allowed first argument). */
static bool command_permitted(const gb_acl_selector *s, const gb_acl_commands *cmds, uint16_t id,
                              const gb_command_meta *m, int argc, const gb_slice *argv)
{
    if ((s->flags & GB_ACL_SEL_ALLCOMMANDS) || (m->flags & GB_CMDF_NO_AUTH) || gb_acl_bit(s->allowed, id))
        return true;
    const gb_acl_firstargs *f = argc >= 2 ? firstargs_of(s, id) : NULL;
    int idx = id < cmds->n && cmds->cmd[id].parent != GB_ACL_NO_ID ? 2 : 1;
    return f && idx < argc && gb_acl_list_find((gb_acl_list *)&f->args, argv[idx]);
}

static enum gb_acl_denial selector_check(const gb_acl_selector *s, const gb_acl_commands *cmds, uint16_t id,
                                         const gb_command_meta *m, int argc, const gb_slice *argv, int *argpos,
                                         keys_cache *keys)
{
    if (!command_permitted(s, cmds, id, m, argc, argv))
        return GB_ACL_DENIED_CMD;
    const gb_acl_cmd *ac = id < cmds->n ? &cmds->cmd[id] : NULL;
    bool has_keys = ac ? ac->has_keys : gb_command_has_keys(m);
    if (!(s->flags & GB_ACL_SEL_ALLKEYS) && has_keys && ac && ac->single_key_pos) {
        /* One key at a fixed place: what gb_command_keys would find, without
         * building the list (the common case on the hot path). */
        int pos = ac->single_key_pos;
        if (pos < argc && !key_permitted(s, argv[pos], ac->single_key_flags)) {
            *argpos = pos;
            return GB_ACL_DENIED_KEY;
        }
    } else if (!(s->flags & GB_ACL_SEL_ALLKEYS) && has_keys) {
        if (!keys->found) {
            gb_command_keys(m, argc, argv, &keys->r);
            keys->found = true;
        }
        for (int j = 0; j < keys->r.n; j++) {
            int pos = keys->r.keys[j].pos;
            if (!key_permitted(s, argv[pos], keys->r.keys[j].flags)) {
                *argpos = pos;
                return GB_ACL_DENIED_KEY;
            }
        }
    }
    enum gb_acl_channel_use use = id < cmds->n ? cmds->cmd[id].channels : GB_ACL_CHANNELS_NONE;
    if (!(s->flags & GB_ACL_SEL_ALLCHANNELS) && use != GB_ACL_CHANNELS_NONE) {
        int last = use == GB_ACL_CHANNELS_PUBLISH ? GB_MIN(argc - 1, 1) : argc - 1;
        for (int i = 1; i <= last; i++)
            if (!channel_in(&s->channels, argv[i], use == GB_ACL_CHANNELS_PSUBSCRIBE)) {
                *argpos = i;
                return GB_ACL_DENIED_CHANNEL;
            }
    }
    return GB_ACL_ALLOWED;
}

enum gb_acl_denial gb_acl_user_check(const gb_acl_user *u, const gb_acl_commands *cmds, uint16_t id,
                                     const gb_command_meta *m, int argc, const gb_slice *argv, int *argpos)
{
    /* When every selector refuses, the most relevant reason wins: the
     * highest, and among equals the one about the later argument (Redis
     * keeps the argument position across selectors, so do we). */
    enum gb_acl_denial relevant = GB_ACL_DENIED_CMD;
    int pos = 0, relevant_pos = 0;
    keys_cache keys;
    keys.found = false; /* keys.r is filled by gb_command_keys when first needed (no zeroing: hot path) */
    enum gb_acl_denial result = GB_ACL_ALLOWED;
    for (uint32_t i = 0; i < u->nselectors; i++) {
        enum gb_acl_denial d = selector_check(u->selectors[i], cmds, id, m, argc, argv, &pos, &keys);
        if (d == GB_ACL_ALLOWED)
            goto done;
        if (d > relevant || (d == relevant && pos > relevant_pos)) {
            relevant = d;
            relevant_pos = pos;
        }
    }
    result = relevant;
    *argpos = relevant_pos;
done:
    if (keys.found)
        gb_keys_result_free(&keys.r);
    return result;
}

bool gb_acl_user_channel_permits(const gb_acl_user *u, gb_slice channel, bool is_pattern)
{
    for (uint32_t i = 0; i < u->nselectors; i++) {
        const gb_acl_selector *s = u->selectors[i];
        if ((s->flags & GB_ACL_SEL_ALLCHANNELS) || channel_in(&s->channels, channel, is_pattern))
            return true;
    }
    return false;
}

bool gb_acl_user_permits_keys(const gb_acl_user *u, const gb_acl_commands *cmds, uint16_t id, const gb_slice *keys,
                              size_t n, uint16_t flags)
{
    if (id >= cmds->n)
        return false;
    const gb_acl_cmd *c = &cmds->cmd[id];
    for (uint32_t i = 0; i < u->nselectors; i++) {
        const gb_acl_selector *s = u->selectors[i];
        bool command = (s->flags & GB_ACL_SEL_ALLCOMMANDS) || (c->meta->flags & GB_CMDF_NO_AUTH) ||
                       gb_acl_bit(s->allowed, id);
        bool channels = (s->flags & GB_ACL_SEL_ALLCHANNELS) || c->channels == GB_ACL_CHANNELS_NONE;
        if (!command || !channels)
            continue;
        if (s->flags & GB_ACL_SEL_ALLKEYS)
            return true;
        size_t j = 0;
        while (j < n && key_permitted(s, keys[j], flags))
            j++;
        if (j == n)
            return true;
    }
    return false;
}

/* Whether the selector allows id whatever the arguments. */
static bool allows_any_args(const gb_acl_selector *s, const gb_acl_commands *cmds, uint16_t id)
{
    if (id >= cmds->n) /* a command without an id of its own: only "every command, every key, every channel" */
        return gb_acl_bit(s->allowed, id) && (s->flags & GB_ACL_SEL_ALLKEYS) && (s->flags & GB_ACL_SEL_ALLCHANNELS);
    const gb_acl_cmd *c = &cmds->cmd[id];
    bool command = (s->flags & GB_ACL_SEL_ALLCOMMANDS) || (c->meta->flags & GB_CMDF_NO_AUTH) ||
                   gb_acl_bit(s->allowed, id);
    bool keys = (s->flags & GB_ACL_SEL_ALLKEYS) || !c->has_keys;
    bool channels = (s->flags & GB_ACL_SEL_ALLCHANNELS) || c->channels == GB_ACL_CHANNELS_NONE;
    return command && keys && channels;
}

void gb_acl_user_refresh(gb_acl_user *u, const gb_acl_commands *cmds)
{
    memset(u->fast, 0, sizeof u->fast);
    for (uint32_t i = 0; i < u->nselectors; i++) {
        for (uint16_t id = 0; id < cmds->n; id++)
            if (allows_any_args(u->selectors[i], cmds, id))
                bits_set(u->fast, id, true);
        if (allows_any_args(u->selectors[i], cmds, GB_ACL_FUTURE_ID))
            bits_set(u->fast, GB_ACL_FUTURE_ID, true);
    }
}

/* Redis's ACLSelectorHasUnrestrictedKeyAccess: every key, or a pattern of
 * exactly "*" with the access needed. */
static bool selector_unrestricted_keys(const gb_acl_selector *s, uint16_t spec_flags)
{
    if (s->flags & GB_ACL_SEL_ALLKEYS)
        return true;
    uint8_t need = perms_needed(spec_flags);
    GB_ACL_LIST_EACH(&s->keys, p) {
        if ((p->tag & need) == need && p->len == 1 && p->bytes[0] == '*')
            return true;
    }
    return false;
}

bool gb_acl_user_unrestricted_keys(const gb_acl_user *u, const gb_acl_commands *cmds, uint16_t id,
                                   const gb_command_meta *m, int argc, const gb_slice *argv, uint16_t spec_flags)
{
    keys_cache keys;
    keys.found = false;
    bool ok = false;
    for (uint32_t i = 0; i < u->nselectors && !ok; i++) {
        int pos;
        const gb_acl_selector *s = u->selectors[i];
        ok = selector_check(s, cmds, id, m, argc, argv, &pos, &keys) == GB_ACL_ALLOWED &&
             selector_unrestricted_keys(s, spec_flags);
    }
    if (keys.found)
        gb_keys_result_free(&keys.r);
    return ok;
}
