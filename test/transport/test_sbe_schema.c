/*
 * The C codec matches goblin.xml: this test reads the schema at run time
 * (GOBLIN_SOURCE_DIR/transport/sbe/goblin.xml) with a small XML scanner and
 * checks every template id, block length, field (name, type, primitive size,
 * offset), group (name, dimension, block length, fields, var-data), var-data
 * field and encoding type against sbe_codec.h's constants and metadata, and
 * that the encoders write the block lengths the schema declares.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "transport/sbe/sbe_codec.h"

/* ---- a tiny XML scanner ------------------------------------------------------------ */

typedef struct xattr {
    char *name, *value;
} xattr;

typedef struct xnode {
    char *name;
    xattr *attrs;
    size_t nattrs;
    char *text; /* the character data right after the start tag, trimmed */
    struct xnode **kids;
    size_t nkids;
    struct xnode *parent;
} xnode;

static char *dupn(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    assert_non_null(d);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

static void add_kid(xnode *p, xnode *k)
{
    p->kids = realloc(p->kids, (p->nkids + 1) * sizeof *p->kids);
    assert_non_null(p->kids);
    p->kids[p->nkids++] = k;
    k->parent = p;
}

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
        p++;
    return p;
}

/* Elements, attributes (double or single quotes), comments, <? ?>
 * declarations, and the text right after a start tag (a <choice>'s bit, a
 * <validValue>'s value). Entities are not decoded (the schema uses none).
 * Fails the test on anything malformed. */
static xnode *xml_parse(const char *s)
{
    xnode *doc = calloc(1, sizeof *doc);
    doc->name = dupn("#document", 9);
    xnode *cur = doc;
    const char *p = s;
    while ((p = strchr(p, '<'))) {
        if (!strncmp(p, "<!--", 4)) {
            const char *e = strstr(p, "-->");
            assert_non_null(e);
            p = e + 3;
            continue;
        }
        if (p[1] == '?') {
            const char *e = strstr(p, "?>");
            assert_non_null(e);
            p = e + 2;
            continue;
        }
        if (p[1] == '/') {
            const char *e = strchr(p, '>');
            assert_non_null(e);
            char *name = dupn(p + 2, (size_t)(e - p - 2));
            assert_non_null(cur->parent);
            assert_string_equal(name, cur->name);
            free(name);
            cur = cur->parent;
            p = e + 1;
            continue;
        }
        p++;
        const char *n0 = p;
        while (*p && !strchr(" \t\r\n/>", *p))
            p++;
        xnode *node = calloc(1, sizeof *node);
        node->name = dupn(n0, (size_t)(p - n0));
        add_kid(cur, node);
        for (;;) {
            p = skip_ws(p);
            if (*p == '/') {
                assert_int_equal(p[1], '>');
                p += 2;
                break;
            }
            if (*p == '>') {
                p = skip_ws(p + 1);
                const char *t1 = p;
                while (*t1 && *t1 != '<')
                    t1++;
                const char *t0 = p;
                while (t1 > t0 && strchr(" \t\r\n", t1[-1]))
                    t1--;
                node->text = dupn(t0, (size_t)(t1 - t0));
                cur = node;
                break;
            }
            assert_true(*p != '\0');
            const char *a0 = p;
            while (*p && *p != '=' && !strchr(" \t\r\n", *p))
                p++;
            char *aname = dupn(a0, (size_t)(p - a0));
            p = skip_ws(p);
            assert_int_equal(*p, '=');
            p = skip_ws(p + 1);
            char q = *p;
            assert_true(q == '"' || q == '\'');
            const char *v0 = ++p;
            while (*p && *p != q)
                p++;
            assert_int_equal(*p, q);
            node->attrs = realloc(node->attrs, (node->nattrs + 1) * sizeof *node->attrs);
            node->attrs[node->nattrs].name = aname;
            node->attrs[node->nattrs].value = dupn(v0, (size_t)(p - v0));
            node->nattrs++;
            p++;
        }
    }
    assert_ptr_equal(cur, doc);
    return doc;
}

static void xml_free(xnode *n)
{
    for (size_t i = 0; i < n->nkids; i++)
        xml_free(n->kids[i]);
    for (size_t i = 0; i < n->nattrs; i++) {
        free(n->attrs[i].name);
        free(n->attrs[i].value);
    }
    free(n->attrs);
    free(n->kids);
    free(n->text);
    free(n->name);
    free(n);
}

static const char *attr(const xnode *n, const char *name)
{
    for (size_t i = 0; i < n->nattrs; i++)
        if (!strcmp(n->attrs[i].name, name))
            return n->attrs[i].value;
    return NULL;
}

static long attr_long(const xnode *n, const char *name)
{
    const char *v = attr(n, name);
    if (!v)
        fail_msg("<%s> has no %s attribute", n->name, name);
    char *end;
    long x = strtol(v, &end, 10);
    if (*end)
        fail_msg("<%s %s=\"%s\"> is not a number", n->name, name, v);
    return x;
}

static const xnode *kid_named(const xnode *n, const char *tag, const char *name)
{
    for (size_t i = 0; i < n->nkids; i++) {
        const xnode *k = n->kids[i];
        if (!strcmp(k->name, tag) && (!name || (attr(k, "name") && !strcmp(attr(k, "name"), name))))
            return k;
    }
    return NULL;
}

/* ---- the schema -------------------------------------------------------------------- */

static xnode *g_doc;
static const xnode *g_schema, *g_types;

static char *read_schema(void)
{
    const char *dir = getenv("GOBLIN_SOURCE_DIR");
    if (!dir)
        dir = ".";
    char path[4096];
    snprintf(path, sizeof path, "%s/transport/sbe/goblin.xml", dir);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s (set GOBLIN_SOURCE_DIR to the source tree)", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static int setup(void **state)
{
    (void)state;
    char *text = read_schema();
    g_doc = xml_parse(text);
    free(text);
    g_schema = kid_named(g_doc, "sbe:messageSchema", NULL);
    assert_non_null(g_schema);
    g_types = kid_named(g_schema, "types", NULL);
    assert_non_null(g_types);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    xml_free(g_doc);
    return 0;
}

static unsigned prim_size(const char *prim)
{
    static const struct {
        const char *name;
        unsigned size;
    } t[] = {{"char", 1},  {"int8", 1},   {"uint8", 1},  {"int16", 2},  {"uint16", 2}, {"int32", 4},
             {"uint32", 4}, {"float", 4}, {"int64", 8}, {"uint64", 8}, {"double", 8}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(t[i].name, prim))
            return t[i].size;
    return 0;
}

/* The primitive a field type stands for: a primitive itself, or an
 * enum/set's encodingType, or a <type>'s primitiveType. */
static const char *resolve_primitive(const char *type)
{
    if (prim_size(type))
        return type;
    for (size_t i = 0; i < g_types->nkids; i++) {
        const xnode *t = g_types->kids[i];
        const char *name = attr(t, "name");
        if (!name || strcmp(name, type))
            continue;
        if (!strcmp(t->name, "enum") || !strcmp(t->name, "set"))
            return attr(t, "encodingType");
        if (!strcmp(t->name, "type"))
            return attr(t, "primitiveType");
    }
    fail_msg("type %s is not defined in the schema", type);
    return NULL;
}

static void test_schema_attributes(void **state)
{
    (void)state;
    assert_string_equal(attr(g_schema, "xmlns:sbe"), "http://fixprotocol.io/2016/sbe");
    assert_int_equal(attr_long(g_schema, "id"), GB_SBE_SCHEMA_ID);
    assert_int_equal(attr_long(g_schema, "version"), GB_SBE_SCHEMA_VERSION);
    assert_string_equal(attr(g_schema, "byteOrder"), "littleEndian");
}

/* A composite's members: names, primitive types, and their offsets. */
static unsigned check_composite(const char *name, size_t n, const char *const *names, const char *const *prims,
                                const unsigned *offsets)
{
    const xnode *c = kid_named(g_types, "composite", name);
    if (!c)
        fail_msg("composite %s missing", name);
    assert_int_equal(c->nkids, n);
    unsigned off = 0;
    for (size_t i = 0; i < n; i++) {
        const xnode *t = c->kids[i];
        assert_string_equal(t->name, "type");
        assert_string_equal(attr(t, "name"), names[i]);
        assert_string_equal(attr(t, "primitiveType"), prims[i]);
        if (offsets)
            assert_int_equal(off, offsets[i]);
        const char *len = attr(t, "length");
        off += prim_size(prims[i]) * (len ? (unsigned)atoi(len) : 1u);
    }
    return off;
}

static void test_composites(void **state)
{
    (void)state;
    static const char *const hn[] = {"blockLength", "templateId", "schemaId", "version"};
    static const char *const hp[] = {"uint16", "uint16", "uint16", "uint16"};
    static const unsigned ho[] = {GB_SBE_HEADER_BLOCK_LENGTH_OFFSET, GB_SBE_HEADER_TEMPLATE_ID_OFFSET,
                                  GB_SBE_HEADER_SCHEMA_ID_OFFSET, GB_SBE_HEADER_VERSION_OFFSET};
    assert_int_equal(check_composite("messageHeader", 4, hn, hp, ho), GB_SBE_HEADER_SIZE);

    static const char *const gn[] = {"blockLength", "numInGroup"};
    static const char *const gp[] = {"uint16", "uint16"};
    static const unsigned go[] = {0, 2};
    assert_int_equal(check_composite("groupSizeEncoding", 2, gn, gp, go), GB_SBE_GROUP_DIM_SIZE);
    static const char *const lp[] = {"uint16", "uint32"};
    assert_int_equal(check_composite("largeGroupSizeEncoding", 2, gn, lp, go), GB_SBE_LARGE_GROUP_DIM_SIZE);

    static const char *const vn[] = {"length", "varData"};
    static const char *const vp[] = {"uint32", "uint8"};
    assert_int_equal(check_composite("varDataEncoding", 2, vn, vp, NULL), GB_SBE_VAR_LEN_SIZE);
    const xnode *v = kid_named(g_types, "composite", "varDataEncoding");
    assert_int_equal(attr_long(v->kids[0], "maxValue"), GB_SBE_VAR_MAX);
    assert_int_equal(attr_long(v->kids[1], "length"), 0);
}

typedef struct named_value {
    const char *name;
    long value;
} named_value;

/* A set's choices or an enum's valid values, exactly these and no others;
 * returns the <choice>/<validValue> text of each, in nv's order. */
static void check_values(const char *tag, const char *name, const named_value *nv, size_t n, bool bits)
{
    const xnode *s = kid_named(g_types, tag, name);
    if (!s)
        fail_msg("%s %s missing", tag, name);
    assert_string_equal(attr(s, "encodingType"), "uint8");
    assert_int_equal(s->nkids, n);
    for (size_t i = 0; i < n; i++) {
        const xnode *ch = kid_named(s, bits ? "choice" : "validValue", nv[i].name);
        if (!ch || !ch->text)
            fail_msg("%s %s has no %s", tag, name, nv[i].name);
        long v = strtol(ch->text, NULL, 10);
        if ((bits ? 1L << v : v) != nv[i].value)
            fail_msg("%s.%s is %s in the schema, %ld in the codec", name, nv[i].name, ch->text, nv[i].value);
    }
}

static void test_sets_and_enums(void **state)
{
    (void)state;
    static const named_value setf[] = {{"nx", GB_SBE_SET_NX},     {"xx", GB_SBE_SET_XX},
                                       {"ex", GB_SBE_SET_EX},     {"px", GB_SBE_SET_PX},
                                       {"exAt", GB_SBE_SET_EXAT}, {"pxAt", GB_SBE_SET_PXAT},
                                       {"keepTtl", GB_SBE_SET_KEEPTTL}, {"get", GB_SBE_SET_GET}};
    check_values("set", "SetFlags", setf, 8, true);

    static const named_value zf[] = {{"nx", GB_SBE_ZADD_NX}, {"xx", GB_SBE_ZADD_XX}, {"gt", GB_SBE_ZADD_GT},
                                     {"lt", GB_SBE_ZADD_LT}, {"ch", GB_SBE_ZADD_CH}, {"incr", GB_SBE_ZADD_INCR}};
    check_values("set", "ZAddFlags", zf, 6, true);
    long all = 0;
    for (size_t i = 0; i < 6; i++)
        all |= zf[i].value;
    assert_int_equal(all, GB_SBE_ZADD_ALL);

    static const named_value xf[] = {{"autoId", GB_SBE_XADD_AUTO_ID},   {"autoSeq", GB_SBE_XADD_AUTO_SEQ},
                                     {"noMkStream", GB_SBE_XADD_NOMKSTREAM}, {"maxLen", GB_SBE_XADD_MAXLEN},
                                     {"minId", GB_SBE_XADD_MINID},     {"approx", GB_SBE_XADD_APPROX},
                                     {"limit", GB_SBE_XADD_LIMIT}};
    check_values("set", "XAddFlags", xf, 7, true);
    all = 0;
    for (size_t i = 0; i < 7; i++)
        all |= xf[i].value;
    assert_int_equal(all, GB_SBE_XADD_ALL);

    static const named_value kinds[] = {{"status", GB_SBE_KIND_STATUS}, {"error", GB_SBE_KIND_ERROR},
                                        {"integer", GB_SBE_KIND_INTEGER}, {"double", GB_SBE_KIND_DOUBLE},
                                        {"bulk", GB_SBE_KIND_BULK},     {"nil", GB_SBE_KIND_NIL},
                                        {"array", GB_SBE_KIND_ARRAY}};
    check_values("enum", "ReplyKind", kinds, 7, false);

    static const named_value mk[] = {{"message", GB_SBE_MSG_MESSAGE},
                                     {"pmessage", GB_SBE_MSG_PMESSAGE},
                                     {"smessage", GB_SBE_MSG_SMESSAGE}};
    check_values("enum", "MessageKind", mk, 3, false);
    static const named_value sk[] = {{"subscribe", GB_SBE_SUB_SUBSCRIBE},       {"unsubscribe", GB_SBE_SUB_UNSUBSCRIBE},
                                     {"psubscribe", GB_SBE_SUB_PSUBSCRIBE},     {"punsubscribe", GB_SBE_SUB_PUNSUBSCRIBE},
                                     {"ssubscribe", GB_SBE_SUB_SSUBSCRIBE},     {"sunsubscribe", GB_SBE_SUB_SUNSUBSCRIBE}};
    check_values("enum", "SubscriptionKind", sk, 6, false);
    static const named_value bt[] = {{"false", 0}, {"true", 1}};
    check_values("enum", "BooleanType", bt, 2, false);
}

/* Fields of a block (message root or group entry) against the codec's
 * descriptors; returns the block length they add up to. */
static unsigned check_fields(const char *where, const xnode *parent, const gb_sbe_field_desc *f, size_t nf)
{
    size_t k = 0;
    unsigned off = 0, end = 0;
    for (size_t i = 0; i < parent->nkids; i++) {
        const xnode *x = parent->kids[i];
        if (strcmp(x->name, "field"))
            continue;
        if (k >= nf)
            fail_msg("%s: the schema has field %s the codec does not know", where, attr(x, "name"));
        const char *type = attr(x, "type");
        const char *prim = resolve_primitive(type);
        unsigned size = prim_size(prim);
        if (attr(x, "offset"))
            off = (unsigned)attr_long(x, "offset");
        if (strcmp(attr(x, "name"), f[k].name) || strcmp(type, f[k].type) || strcmp(prim, f[k].primitive) ||
            off != f[k].offset || size != f[k].size)
            fail_msg("%s.%s: schema says %s (%s, %u bytes) @%u, codec says %s %s (%s, %u bytes) @%u", where,
                     attr(x, "name"), type, prim, size, off, f[k].name, f[k].type, f[k].primitive, f[k].size,
                     f[k].offset);
        off += size;
        if (off > end)
            end = off;
        k++;
    }
    if (k != nf)
        fail_msg("%s: the codec has %zu fields, the schema %zu", where, nf, k);
    return end;
}

static void check_data(const char *where, const xnode *parent, const char *const *d, size_t nd)
{
    size_t k = 0;
    for (size_t i = 0; i < parent->nkids; i++) {
        const xnode *x = parent->kids[i];
        if (strcmp(x->name, "data"))
            continue;
        if (k >= nd || strcmp(attr(x, "name"), d[k]))
            fail_msg("%s: var-data %s is not the codec's #%zu", where, attr(x, "name"), k);
        assert_string_equal(attr(x, "type"), "varDataEncoding");
        k++;
    }
    if (k != nd)
        fail_msg("%s: the codec has %zu var-data fields, the schema %zu", where, nd, k);
}

/* SBE's order inside a message or entry: fields, then groups, then data. */
static void check_order(const char *where, const xnode *parent)
{
    int stage = 0;
    for (size_t i = 0; i < parent->nkids; i++) {
        const char *t = parent->kids[i]->name;
        int s = !strcmp(t, "field") ? 0 : !strcmp(t, "group") ? 1 : !strcmp(t, "data") ? 2 : -1;
        if (s < 0)
            fail_msg("%s: unexpected <%s>", where, t);
        if (s < stage)
            fail_msg("%s: <%s> after a later section (SBE order is fields, groups, data)", where, t);
        stage = s;
    }
}

static void test_messages(void **state)
{
    (void)state;
    size_t seen = 0;
    for (size_t i = 0; i < g_schema->nkids; i++) {
        const xnode *m = g_schema->kids[i];
        if (strcmp(m->name, "sbe:message"))
            continue;
        const char *name = attr(m, "name");
        unsigned id = (unsigned)attr_long(m, "id");
        const gb_sbe_message_desc *d = NULL;
        for (size_t k = 0; k < gb_sbe_message_count; k++)
            if (gb_sbe_messages[k].id == id)
                d = &gb_sbe_messages[k];
        if (!d)
            fail_msg("message %s (id %u) is not in the codec", name, id);
        assert_string_equal(d->name, name);
        assert_string_equal(gb_sbe_template_name(id), name);
        check_order(name, m);
        unsigned bl = check_fields(name, m, d->fields, d->nfields);
        assert_int_equal(bl, d->block_length);
        assert_int_equal(attr_long(m, "blockLength"), d->block_length);
        size_t ng = 0;
        for (size_t k = 0; k < m->nkids; k++) {
            const xnode *g = m->kids[k];
            if (strcmp(g->name, "group"))
                continue;
            if (ng >= d->ngroups)
                fail_msg("%s: group %s is not in the codec", name, attr(g, "name"));
            const gb_sbe_group_desc *gd = &d->groups[ng++];
            char where[128];
            snprintf(where, sizeof where, "%s.%s", name, gd->name);
            assert_string_equal(attr(g, "name"), gd->name);
            assert_string_equal(attr(g, "dimensionType"), gd->dimension);
            check_order(where, g);
            unsigned gbl = check_fields(where, g, gd->fields, gd->nfields);
            assert_int_equal(gbl, gd->block_length);
            assert_int_equal(attr_long(g, "blockLength"), gd->block_length);
            check_data(where, g, gd->data, gd->ndata);
        }
        assert_int_equal(ng, d->ngroups);
        check_data(name, m, d->data, d->ndata);
        seen++;
    }
    assert_int_equal(seen, gb_sbe_message_count);
}

/* The encoders write the header the schema describes: the template id, the
 * root block length, this schema's id and version; and the group dimension
 * block lengths. */
static void test_encoders_follow_schema(void **state)
{
    (void)state;
    uint8_t buf[256];
    gb_slice k = gb_slice_cstr("k");
    double sc = 1;
    for (unsigned t = 1; t <= GB_SBE_SUBSCRIPTION; t++) {
        const char *name = gb_sbe_template_name(t);
        if (!name)
            continue;
        size_t n = 0;
        switch (t) {
        case GB_SBE_PING: n = gb_sbe_encode_ping(buf, sizeof buf); break;
        case GB_SBE_GET: n = gb_sbe_encode_get(buf, sizeof buf, k); break;
        case GB_SBE_SET: n = gb_sbe_encode_set(buf, sizeof buf, k, k, GB_SBE_SET_PX, 5); break;
        case GB_SBE_DEL: n = gb_sbe_encode_del(buf, sizeof buf, 1, &k); break;
        case GB_SBE_INCR: n = gb_sbe_encode_incr(buf, sizeof buf, k, 2); break;
        case GB_SBE_HSET: n = gb_sbe_encode_hset(buf, sizeof buf, k, 1, &k, &k); break;
        case GB_SBE_HGET: n = gb_sbe_encode_hget(buf, sizeof buf, k, k); break;
        case GB_SBE_ZADD: n = gb_sbe_encode_zadd(buf, sizeof buf, k, 0, 1, &sc, &k); break;
        case GB_SBE_ZSCORE: n = gb_sbe_encode_zscore(buf, sizeof buf, k, k); break;
        case GB_SBE_LPUSH: n = gb_sbe_encode_lpush(buf, sizeof buf, k, 1, &k); break;
        case GB_SBE_RPOP: n = gb_sbe_encode_rpop(buf, sizeof buf, k); break;
        case GB_SBE_BLPOP: n = gb_sbe_encode_blpop(buf, sizeof buf, 1, &k, 0.5); break;
        case GB_SBE_GENERIC: n = gb_sbe_encode_generic(buf, sizeof buf, 1, &k); break;
        case GB_SBE_PUBLISH: n = gb_sbe_encode_publish(buf, sizeof buf, k, k); break;
        case GB_SBE_XADD: {
            gb_sbe_xadd_opts o = {.flags = GB_SBE_XADD_MINID | GB_SBE_XADD_APPROX, .id_ms = 5, .minid_ms = 1};
            n = gb_sbe_encode_xadd(buf, sizeof buf, k, &o, 1, &k, &k);
            break;
        }
        case GB_SBE_STATUS_REPLY: n = gb_sbe_encode_status_reply(buf, sizeof buf, "OK", 2); break;
        case GB_SBE_ERROR_REPLY: n = gb_sbe_encode_error_reply(buf, sizeof buf, "ERR x", 5); break;
        case GB_SBE_INTEGER_REPLY: n = gb_sbe_encode_integer_reply(buf, sizeof buf, 7); break;
        case GB_SBE_DOUBLE_REPLY: n = gb_sbe_encode_double_reply(buf, sizeof buf, 1.5); break;
        case GB_SBE_BULK_REPLY: n = gb_sbe_encode_bulk_reply(buf, sizeof buf, "v", 1); break;
        case GB_SBE_NIL_REPLY: n = gb_sbe_encode_nil_reply(buf, sizeof buf); break;
        case GB_SBE_MESSAGE: n = gb_sbe_encode_message(buf, sizeof buf, GB_SBE_MSG_PMESSAGE, k, k, k); break;
        case GB_SBE_SUBSCRIPTION: n = gb_sbe_encode_subscription(buf, sizeof buf, GB_SBE_SUB_SUBSCRIBE, &k, 1); break;
        case GB_SBE_ARRAY_REPLY: {
            gb_sbe_reply_item it = {.integer = 1, .kind = GB_SBE_KIND_INTEGER};
            n = gb_sbe_encode_array_reply(buf, sizeof buf, 1, 1, &it, "");
            break;
        }
        default: fail_msg("template %u (%s) has no encoder in this test", t, name);
        }
        assert_true(n >= GB_SBE_HEADER_SIZE);
        gb_sbe_header h;
        assert_true(gb_sbe_read_header(buf, n, &h));
        const gb_sbe_message_desc *d = NULL;
        for (size_t i = 0; i < gb_sbe_message_count; i++)
            if (gb_sbe_messages[i].id == t)
                d = &gb_sbe_messages[i];
        assert_non_null(d);
        assert_int_equal(h.template_id, t);
        assert_int_equal(h.block_length, d->block_length);
        assert_int_equal(h.schema_id, GB_SBE_SCHEMA_ID);
        assert_int_equal(h.version, GB_SBE_SCHEMA_VERSION);
        if (d->ngroups) {
            const uint8_t *dim = buf + GB_SBE_HEADER_SIZE + d->block_length;
            assert_int_equal(gb_sbe_get_u16(dim), d->groups[0].block_length);
            unsigned count = !strcmp(d->groups[0].dimension, "largeGroupSizeEncoding") ? gb_sbe_get_u32(dim + 2)
                                                                                         : gb_sbe_get_u16(dim + 2);
            assert_int_equal(count, 1);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema_attributes),
        cmocka_unit_test(test_composites),
        cmocka_unit_test(test_sets_and_enums),
        cmocka_unit_test(test_messages),
        cmocka_unit_test(test_encoders_follow_schema),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
