#include "engine/core/acl/acl_command_ids.h"

#include <stdio.h>
#include <string.h>

#include "engine/base/mem.h"
#include "engine/base/util.h"

/* Redis 7.0's commands_with_channels table (db.c), the ones whose channels
 * the permission check reads. The unsubscribe commands are in Redis's
 * table too, but unsubscribing is never refused. */
static enum gb_acl_channel_use channel_use(const char *name)
{
    static const struct {
        const char *name;
        enum gb_acl_channel_use use;
    } table[] = {{"publish", GB_ACL_CHANNELS_PUBLISH},     {"spublish", GB_ACL_CHANNELS_PUBLISH},
                 {"subscribe", GB_ACL_CHANNELS_SUBSCRIBE}, {"ssubscribe", GB_ACL_CHANNELS_SUBSCRIBE},
                 {"psubscribe", GB_ACL_CHANNELS_PSUBSCRIBE}};
    for (size_t i = 0; i < GB_ARRAY_LEN(table); i++)
        if (strcmp(name, table[i].name) == 0)
            return table[i].use;
    return GB_ACL_CHANNELS_NONE;
}

static uint16_t add(gb_acl_commands *u, const gb_command_meta *m, uint16_t parent)
{
    uint16_t id = u->n++;
    gb_acl_cmd *c = &u->cmd[id];
    c->meta = m;
    c->parent = parent;
    c->nsubs = m->nsubcommands;
    c->channels = (uint8_t)channel_use(m->name);
    c->has_keys = gb_command_has_keys(m);
    c->single_key_pos = (int16_t)gb_command_single_key(m, &c->single_key_flags);
    return id;
}

/* Whether a command of the table is not Redis 7.0's: a later one (the
 * hash-field expiry commands: "7.4.0", "8.0.0") or Goblin Core's own
 * (RING, described in the same table by cmake/command_meta_extra.json). */
static bool after_redis_70(const gb_command_meta *m)
{
    if (strcmp(m->name, "ring") == 0)
        return true;
    int major = 0, minor = 0;
    if (!m->since || sscanf(m->since, "%d.%d", &major, &minor) != 2)
        return false;
    return major > 7 || (major == 7 && minor > 0);
}

void gb_acl_commands_init(gb_acl_commands *u)
{
    u->cmd = gb_calloc(GB_ACL_FUTURE_ID, sizeof *u->cmd);
    u->top = gb_malloc(gb_command_meta_count * sizeof *u->top);
    u->n = 0;
    /* Redis 7.0's commands first, then the later ones: ids below nredis are
     * what category descriptions are chosen over (ACL GETUSER's rules text
     * stays Redis 7.0's; a later command shows as a single-command rule). */
    for (int later = 0; later <= 1; later++) {
        for (size_t i = 0; i < gb_command_meta_count; i++) {
            const gb_command_meta *m = &gb_command_meta_table[i];
            if (after_redis_70(m) != (later == 1))
                continue;
            uint16_t id = add(u, m, GB_ACL_NO_ID);
            u->top[i] = id;
            for (uint8_t j = 0; j < m->nsubcommands; j++)
                add(u, &m->subcommands[j], id);
        }
        if (!later)
            u->nredis = u->n;
    }
}

void gb_acl_commands_free(gb_acl_commands *u)
{
    gb_free(u->cmd);
    gb_free(u->top);
    u->cmd = NULL;
    u->top = NULL;
}

uint16_t gb_acl_commands_id_of(const gb_acl_commands *u, const gb_command_meta *m)
{
    const gb_command_meta *first = gb_command_meta_table, *end = first + gb_command_meta_count;
    if (m >= first && m < end)
        return u->top[m - first];
    /* A subcommand: its container is named before the '|'. */
    const char *bar = strchr(m->name, '|');
    if (bar) {
        char head[64];
        size_t n = (size_t)(bar - m->name);
        if (n < sizeof head) {
            memcpy(head, m->name, n);
            head[n] = '\0';
            const gb_command_meta *parent = gb_command_meta_find(head);
            if (parent && m >= parent->subcommands && m < parent->subcommands + parent->nsubcommands)
                return (uint16_t)(u->top[parent - first] + 1 + (m - parent->subcommands));
        }
    }
    for (uint16_t id = 0; id < u->n; id++)
        if (u->cmd[id].meta == m)
            return id;
    return GB_ACL_NO_ID;
}

uint16_t gb_acl_commands_add_own(gb_acl_commands *u, const gb_command_meta *m)
{
    for (uint16_t id = 0; id < u->n; id++)
        if (strcmp(u->cmd[id].meta->name, m->name) == 0) {
            u->cmd[id].meta = m; /* the same command registered again (a new engine's record) */
            return id;
        }
    if (u->n + 1u + m->nsubcommands > GB_ACL_FUTURE_ID)
        return GB_ACL_NO_ID;
    uint16_t id = add(u, m, GB_ACL_NO_ID);
    for (uint8_t j = 0; j < m->nsubcommands; j++)
        add(u, &m->subcommands[j], id);
    return id;
}

/* A top-level command by (lower-cased) name. */
static const gb_acl_cmd *find_top(const gb_acl_commands *u, const char *name)
{
    const gb_command_meta *m = gb_command_meta_find(name);
    if (m)
        return &u->cmd[u->top[m - gb_command_meta_table]];
    for (uint16_t id = 0; id < u->n; id++)
        if (u->cmd[id].parent == GB_ACL_NO_ID && strcmp(u->cmd[id].meta->name, name) == 0)
            return &u->cmd[id];
    return NULL;
}

const gb_acl_cmd *gb_acl_commands_find(const gb_acl_commands *u, gb_slice name)
{
    const char *bar = memchr(name.ptr, '|', name.len);
    char head[64];
    gb_slice h = bar ? gb_slice_make(name.ptr, (size_t)(bar - name.ptr)) : name;
    if (!gb_ascii_lower(head, sizeof head, h) || memchr(h.ptr, '\0', h.len))
        return NULL;
    const gb_acl_cmd *top = find_top(u, head);
    if (!top || !bar)
        return top;
    /* "name|sub": only a container's subcommand, one level deep. */
    gb_slice sub = gb_slice_make(bar + 1, name.len - h.len - 1);
    if (!top->nsubs || memchr(sub.ptr, '|', sub.len))
        return NULL;
    uint16_t id = gb_acl_commands_id(u, top);
    for (uint16_t j = 1; j <= top->nsubs; j++) {
        const char *subname = gb_command_meta_subname(u->cmd[id + j].meta);
        if (strlen(subname) == sub.len && gb_slice_ieq(sub, subname))
            return &u->cmd[id + j];
    }
    return NULL;
}

uint32_t gb_acl_category_by_name(gb_slice name)
{
    for (int i = 0; i < GB_ACL_CATEGORY_COUNT; i++)
        if (strlen(gb_acl_category_names[i]) == name.len && gb_slice_ieq(name, gb_acl_category_names[i]))
            return 1u << i;
    return 0;
}
