/*
 * Lookups over the generated Redis 7.0 command table, and finding a call's
 * keys from its key specs (Redis's getKeysFromCommandWithSpecs).
 */
#include "engine/core/request/command_meta.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/base/mem.h"
#include "engine/base/util.h"

const char *const gb_command_flag_names[GB_CMDF_COUNT] = {
    "write",  "readonly",     "denyoom",      "module", "admin", "pubsub",        "noscript",
    "blocking", "loading",    "stale",        "skip_monitor", "skip_slowlog", "asking", "fast",
    "no_auth", "may_replicate", "no_mandatory_keys", "no_async_loading", "no_multi", "movablekeys", "allow_busy",
};

const char *const gb_acl_category_names[GB_ACL_CATEGORY_COUNT] = {
    "keyspace", "read",  "write",  "set",    "sortedset", "list",      "hash",       "string",
    "bitmap",   "hyperloglog", "geo", "stream", "pubsub", "admin",     "fast",       "slow",
    "blocking", "dangerous", "connection", "transaction", "scripting",
};

const char *const gb_key_spec_flag_names[GB_KS_FLAG_COUNT] = {
    "RO", "RW", "OW", "RM", "access", "update", "insert", "delete", "not_key", "incomplete", "variable_flags",
};

const char *const gb_arg_type_names[GB_ARG_BLOCK + 1] = {
    "string", "integer", "double", "key", "pattern", "unix-time", "pure-token", "oneof", "block",
};

const char *const gb_arg_flag_names[GB_ARG_FLAG_COUNT] = {"optional", "multiple", "multiple_token"};

const char *const gb_doc_flag_names[GB_DOC_FLAG_COUNT] = {"deprecated", "syscmd"};

static int meta_cmp_name(const void *key, const void *elem)
{
    return strcmp(key, ((const gb_command_meta *)elem)->name);
}

const gb_command_meta *gb_command_meta_find(const char *name)
{
    return bsearch(name, gb_command_meta_table, gb_command_meta_count, sizeof(gb_command_meta), meta_cmp_name);
}

const char *gb_command_meta_subname(const gb_command_meta *m)
{
    const char *bar = strchr(m->name, '|');
    return bar ? bar + 1 : m->name;
}

const gb_command_meta *gb_command_meta_sub(const gb_command_meta *m, gb_slice sub)
{
    for (uint8_t i = 0; i < m->nsubcommands; i++) {
        const char *name = gb_command_meta_subname(&m->subcommands[i]);
        if (strlen(name) == sub.len && gb_slice_ieq(sub, name))
            return &m->subcommands[i];
    }
    return NULL;
}

/* ---- keys ---- */

void gb_keys_result_free(gb_keys_result *r)
{
    if (r->keys && r->keys != r->keys_stack)
        gb_free(r->keys);
    r->keys = NULL;
    r->n = r->cap = 0;
}

/* Room for more keys: count is bounded by argc, so a client's number
 * never sizes it. */
static void keys_reserve(gb_keys_result *r, int more)
{
    if (!r->keys) {
        r->keys = r->keys_stack;
        r->cap = (int)GB_ARRAY_LEN(r->keys_stack);
    }
    if (r->n + more <= r->cap)
        return;
    int cap = r->n + more;
    gb_key_ref *keys = gb_malloc((size_t)cap * sizeof *keys);
    memcpy(keys, r->keys, (size_t)r->n * sizeof *keys);
    if (r->keys != r->keys_stack)
        gb_free(r->keys);
    r->keys = keys;
    r->cap = cap;
}

static void keys_add(gb_keys_result *r, int pos, uint16_t flags)
{
    keys_reserve(r, 1);
    r->keys[r->n].pos = pos;
    r->keys[r->n].flags = flags;
    r->n++;
}

static bool arg_is(gb_slice a, const char *word) { return a.len == strlen(word) && gb_slice_ieq(a, word); }

uint16_t gb_set_key_flags(bool with_get)
{
    return with_get ? GB_KS_RW | GB_KS_ACCESS | GB_KS_UPDATE : GB_KS_OW | GB_KS_UPDATE;
}

/* SET: the key is read only when GET is given. */
static int set_keys(int argc, const gb_slice *argv, gb_keys_result *r)
{
    bool with_get = false;
    for (int i = 3; i < argc; i++)
        with_get |= arg_is(argv[i], "get");
    keys_add(r, 1, gb_set_key_flags(with_get));
    return r->n;
}

/* BITFIELD: read only when every operation is a GET (a syntax error counts
 * as a write: the safer guess, as in Redis). */
static int bitfield_keys(int argc, const gb_slice *argv, gb_keys_result *r)
{
    bool readonly = true;
    for (int i = 2; i < argc && readonly; i++) {
        int remaining = argc - i - 1;
        if (arg_is(argv[i], "get") && remaining >= 2)
            i += 2;
        else if (arg_is(argv[i], "overflow") && remaining >= 1)
            i += 1;
        else
            readonly = false;
    }
    keys_add(r, 1, readonly ? GB_KS_RO | GB_KS_ACCESS : GB_KS_RW | GB_KS_ACCESS | GB_KS_UPDATE);
    return r->n;
}

/* SORT: the sorted key, and the last STORE's destination; BY and GET take
 * patterns, not keys. SORT_RO has no STORE. */
static int sort_keys(int argc, const gb_slice *argv, gb_keys_result *r, bool may_store)
{
    keys_add(r, 1, GB_KS_RO | GB_KS_ACCESS);
    int store = 0;
    for (int i = 2; may_store && i < argc; i++) {
        if (arg_is(argv[i], "limit"))
            i += 2;
        else if (arg_is(argv[i], "get") || arg_is(argv[i], "by"))
            i += 1;
        else if (arg_is(argv[i], "store") && i + 1 < argc)
            store = i + 1;
    }
    if (store)
        keys_add(r, store, GB_KS_OW | GB_KS_UPDATE);
    return r->n;
}

static int sort_rw_keys(int argc, const gb_slice *argv, gb_keys_result *r) { return sort_keys(argc, argv, r, true); }
static int sort_ro_keys(int argc, const gb_slice *argv, gb_keys_result *r) { return sort_keys(argc, argv, r, false); }

/* MIGRATE as Redis 7.0 finds its keys: its key specs first, argv[3] and
 * the arguments after a KEYS searched backwards from the one before last;
 * that second spec is incomplete, so when it finds KEYS migrateGetKeys
 * decides: every argument after KEYS (none when argv[3] is not empty: the
 * command itself refuses that), COPY, REPLACE, AUTH <pw> and AUTH2 <user>
 * <pw> skipped. A KEYS only in the last place is never found: argv[3]. */
static int migrate_keys(int argc, const gb_slice *argv, gb_keys_result *r)
{
    bool keyword = false;
    for (int i = argc - 2; i >= 1 && !keyword; i--)
        keyword = arg_is(argv[i], "keys");
    if (!keyword) {
        keys_add(r, 3, GB_KS_RW | GB_KS_ACCESS | GB_KS_DELETE);
        return r->n;
    }
    int first = 3, num = 1;
    for (int i = 6; i < argc; i++) {
        if (arg_is(argv[i], "keys")) {
            if (argv[3].len > 0) {
                num = 0;
            } else {
                first = i + 1;
                num = argc - first;
            }
            break;
        }
        if (arg_is(argv[i], "auth"))
            i += 1;
        else if (arg_is(argv[i], "auth2"))
            i += 2;
    }
    for (int i = 0; i < num; i++)
        keys_add(r, first + i, GB_KS_RW | GB_KS_ACCESS | GB_KS_DELETE);
    return r->n;
}

typedef int key_rule(int argc, const gb_slice *argv, gb_keys_result *r);

/* The commands whose key specs Redis does not trust (variable flags,
 * unknown positions) and the rule it uses instead. */
static key_rule *own_key_rule(const gb_command_meta *m)
{
    static const struct {
        const char *name;
        key_rule *rule;
    } rules[] = {{"set", set_keys},           {"bitfield", bitfield_keys},     {"sort", sort_rw_keys},
                 {"sort_ro", sort_ro_keys},   {"migrate", migrate_keys}};
    for (size_t i = 0; i < GB_ARRAY_LEN(rules); i++)
        if (strcmp(m->name, rules[i].name) == 0)
            return rules[i].rule;
    return NULL;
}

static bool specs_trusted(const gb_command_meta *m)
{
    for (uint8_t j = 0; j < m->nkey_specs; j++) {
        const gb_key_spec *s = &m->key_specs[j];
        if ((s->flags & (GB_KS_INCOMPLETE | GB_KS_VARIABLE_FLAGS)) || s->begin == GB_KS_BEGIN_UNKNOWN ||
            s->find == GB_KS_FIND_UNKNOWN)
            return false;
    }
    return true;
}

bool gb_command_keys_known(const gb_command_meta *m) { return specs_trusted(m) || own_key_rule(m); }

bool gb_command_has_keys(const gb_command_meta *m)
{
    for (uint8_t j = 0; j < m->nkey_specs; j++)
        if (!(m->key_specs[j].flags & GB_KS_NOT_KEY))
            return true;
    return own_key_rule(m) != NULL;
}

int gb_command_single_key(const gb_command_meta *m, uint16_t *flags)
{
    if (!specs_trusted(m))
        return 0;
    const gb_key_spec *only = NULL;
    for (uint8_t j = 0; j < m->nkey_specs; j++) {
        const gb_key_spec *s = &m->key_specs[j];
        if (s->flags & GB_KS_NOT_KEY)
            continue;
        if (only)
            return 0;
        only = s;
    }
    if (!only || only->begin != GB_KS_BEGIN_INDEX || only->find != GB_KS_FIND_RANGE || only->range_lastkey != 0 ||
        only->begin_index < 1)
        return 0;
    *flags = only->flags;
    return only->begin_index;
}

/* Where a spec's keys begin: 0 when its keyword is absent. */
static int spec_begin(const gb_key_spec *s, int argc, const gb_slice *argv)
{
    if (s->begin == GB_KS_BEGIN_INDEX)
        return s->begin_index;
    int start = s->begin_startfrom > 0 ? s->begin_startfrom : argc + s->begin_startfrom;
    int end = s->begin_startfrom > 0 ? argc - 1 : 1;
    for (int i = start; i != end; i = start <= end ? i + 1 : i - 1) {
        if (i >= argc || i < 1)
            break;
        if (arg_is(argv[i], s->begin_keyword))
            return i + 1;
    }
    return 0;
}

/* Adds one spec's keys; false when argv does not fit the spec. */
static bool spec_keys(const gb_key_spec *s, int arity, int argc, const gb_slice *argv, gb_keys_result *r)
{
    int first = spec_begin(s, argc, argv);
    if (first == 0)
        return true; /* the keyword is optional and absent */
    int last, step;
    if (s->find == GB_KS_FIND_RANGE) {
        step = s->range_keystep;
        if (s->range_lastkey >= 0)
            last = first + s->range_lastkey;
        else if (!s->range_limit)
            last = argc + s->range_lastkey;
        else
            last = first + ((argc - first) / s->range_limit + s->range_lastkey);
    } else {
        step = s->keynum_keystep;
        if (first + s->keynum_index >= argc)
            return false;
        int64_t numkeys;
        if (!gb_slice2ll(argv[first + s->keynum_index], &numkeys) || numkeys < 0 || numkeys > argc)
            return false;
        first += s->keynum_firstkey;
        last = first + (int)numkeys - 1;
    }
    if (last >= argc || last < first || first >= argc)
        return false;
    keys_reserve(r, (last - first) / step + 1);
    for (int i = first; i <= last; i += step) {
        if (i >= argc) {
            if (arity < 0)
                continue; /* variadic: the command replies with its own error */
            return false;
        }
        keys_add(r, i, s->flags);
    }
    return true;
}

static int command_keys(const gb_command_meta *m, int argc, const gb_slice *argv, gb_keys_result *r,
                        bool with_channels)
{
    /* Not a memset: this runs for every call of a user limited to some
     * keys, and zeroing keys_stack was a measurable share of it. */
    r->keys = NULL;
    r->n = r->cap = 0;
    if (!specs_trusted(m)) {
        key_rule *rule = own_key_rule(m);
        return rule ? rule(argc, argv, r) : 0;
    }
    for (uint8_t j = 0; j < m->nkey_specs; j++) {
        const gb_key_spec *s = &m->key_specs[j];
        if ((s->flags & GB_KS_NOT_KEY) && !with_channels)
            continue;
        if (!spec_keys(s, m->arity, argc, argv, r)) {
            r->n = 0;
            return 0;
        }
    }
    return r->n;
}

int gb_command_keys(const gb_command_meta *m, int argc, const gb_slice *argv, gb_keys_result *r)
{
    return command_keys(m, argc, argv, r, false);
}

int gb_command_keys_and_channels(const gb_command_meta *m, int argc, const gb_slice *argv, gb_keys_result *r)
{
    return command_keys(m, argc, argv, r, true);
}
