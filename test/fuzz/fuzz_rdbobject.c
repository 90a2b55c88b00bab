/*
 * Fuzz harness: Redis's RDB object decoder (engine/persist/rdb_object.h)
 * and the compact-encoding readers under it (rdb_compact.h: listpack,
 * ziplist, intset, zipmap), which RESTORE payloads from any client and
 * Redis dump files reach.
 *
 * Input: [settings u8][rdb type u8][object bytes]
 *   settings bit 0: tiny compact-encoding thresholds (2 entries, 8 bytes),
 *                   so decoded values convert as they are built
 *   settings bit 1: lists of the pma representation (else segmented)
 *
 * Checked: a refusal gives a reason; an accepted value is written back in
 * Redis's format (gb_rdb_object_write) and that payload decodes again to the
 * same value: the same payload bytes, or for sets and hashes (whose order
 * is their hash table's) the same elements (the writer loses nothing the
 * reader accepted). The seeds (make_seeds.py) are
 * Redis 7.0's own DUMP bodies and hand-built old encodings.
 */
#include "fuzz_util.h"

#include "engine/base/mem.h"
#include "engine/persist/rdb_object.h"
#include "engine/types/registry.h"

static gb_rdb_build_config config_for(uint8_t settings)
{
    gb_rdb_build_config cfg;
    gb_types_config_defaults(&cfg.types);
    cfg.list = (gb_list_config)GB_LIST_CONFIG_DEFAULT;
    if (settings & 1) {
        cfg.types.hash_max_listpack_entries = 2;
        cfg.types.hash_max_listpack_value = 8;
        cfg.types.set_max_intset_entries = 2;
        cfg.types.set_max_listpack_entries = 2;
        cfg.types.set_max_listpack_value = 8;
        cfg.types.zset_max_listpack_entries = 2;
        cfg.types.zset_max_listpack_value = 8;
        cfg.list.max_listpack_size = 2;
    }
    if (settings & 2)
        cfg.list.large_impl = GB_LIST_PMA;
    cfg.stream = (gb_stream_limits){(settings & 1) ? 64 : 4096, (settings & 1) ? 2 : 100};
    return cfg;
}

/* The value's payload body (type byte and object) as Goblin writes it. */
static void write_value(const gb_rdb_value *v, gb_strbuf *out)
{
    if (v->type == GB_TYPE_STRING) {
        gb_strbuf_addc(out, GB_RDB_TYPE_STRING);
        gb_rdb_write_string_value(out, v->str.ptr, v->str.len);
        return;
    }
    /* A record with no key: the header, then the value field. */
    union {
        gb_kv kv;
        char bytes[sizeof(gb_kv) + sizeof(void *)];
    } rec;
    memset(&rec, 0, sizeof rec);
    rec.kv.type = v->type;
    rec.kv.enc = GB_ENC_OBJ;
    gb_kv_set_ptr(&rec.kv, v->obj);
    FUZZ_CHECK(gb_rdb_object_write(out, &rec.kv), "type %d accepted but not writable", (int)v->type);
}

static bool decode(const gb_rdb_build_config *cfg, const void *p, size_t n, gb_rdb_value *v, const char **why)
{
    gb_rdb_reader r = gb_rdb_reader_make(p, n);
    int type = gb_rdb_read_byte(&r);
    if (type < 0) {
        *why = "empty";
        return false;
    }
    return gb_rdb_object_read(&r, type, cfg, v, why);
}

/* The elements of a written set or hash body (RDB_TYPE_SET: members;
 * RDB_TYPE_HASH: "field\0value" pairs; RDB_TYPE_HASH_METADATA: the same
 * with each field's deadline), sorted: their order is the hash
 * table's, which two builds of the same value need not share. */
typedef struct elems {
    char **s;
    size_t *len, n;
} elems;

static int cmp_elem(const void *a, const void *b)
{
    const char *const *x = a, *const *y = b;
    size_t lx, ly;
    memcpy(&lx, *x, sizeof lx);
    memcpy(&ly, *y, sizeof ly);
    int c = memcmp(*x + sizeof lx, *y + sizeof ly, lx < ly ? lx : ly);
    return c ? c : (lx > ly) - (lx < ly);
}

static void collect(const gb_strbuf *b, elems *e)
{
    gb_rdb_reader r = gb_rdb_reader_make(b->p, b->len);
    int type = gb_rdb_read_byte(&r);
    uint64_t n, ttl = 0;
    bool enc, meta = type == GB_RDB_TYPE_HASH_METADATA;
    if (meta)
        r.pos += 8; /* the earliest deadline */
    FUZZ_CHECK(gb_rdb_read_len(&r, &n, &enc) == 0 && !enc, "own payload has no count");
    e->n = (size_t)n;
    e->s = malloc(e->n * sizeof *e->s + 1);
    for (size_t i = 0; i < e->n; i++) {
        char *f, *v = NULL;
        size_t flen, vlen = 0;
        if (meta) /* the field's deadline, compared with it */
            FUZZ_CHECK(gb_rdb_read_len(&r, &ttl, &enc) == 0 && !enc, "own payload unreadable");
        FUZZ_CHECK(gb_rdb_read_string(&r, SIZE_MAX, &f, &flen) == 0, "own payload unreadable");
        if (type == GB_RDB_TYPE_HASH || meta)
            FUZZ_CHECK(gb_rdb_read_string(&r, SIZE_MAX, &v, &vlen) == 0, "own payload unreadable");
        size_t total = flen + (v ? 1 + vlen : 0) + sizeof ttl;
        e->s[i] = malloc(sizeof total + total + 1);
        memcpy(e->s[i], &total, sizeof total);
        memcpy(e->s[i] + sizeof total, f, flen);
        if (v) {
            e->s[i][sizeof total + flen] = '\0';
            memcpy(e->s[i] + sizeof total + flen + 1, v, vlen);
        }
        memcpy(e->s[i] + sizeof total + total - sizeof ttl, &ttl, sizeof ttl);
        gb_free(f);
        gb_free(v);
    }
    qsort(e->s, e->n, sizeof *e->s, cmp_elem);
}

static bool same_value(const gb_strbuf *a, const gb_strbuf *b)
{
    if (a->len != b->len)
        return false;
    if (memcmp(a->p, b->p, a->len) == 0)
        return true;
    if (a->p[0] != GB_RDB_TYPE_SET && a->p[0] != GB_RDB_TYPE_HASH && a->p[0] != GB_RDB_TYPE_HASH_METADATA)
        return false; /* strings, lists and sorted sets have one order */
    elems x, y;
    collect(a, &x);
    collect(b, &y);
    bool same = x.n == y.n;
    for (size_t i = 0; i < x.n; i++) {
        if (same && cmp_elem(&x.s[i], &y.s[i]) != 0)
            same = false;
        free(x.s[i]);
        if (i < y.n)
            free(y.s[i]);
    }
    free(x.s);
    free(y.s);
    return same;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool types_ready;
    if (!types_ready) { /* the type table gb_rdb_value_free frees through */
        gb_types_init();
        types_ready = true;
    }
    if (size < 2)
        return 0;
    gb_rdb_build_config cfg = config_for(data[0]);
    gb_rdb_value v;
    const char *why = NULL;
    if (!decode(&cfg, data + 1, size - 1, &v, &why)) {
        FUZZ_CHECK(why != NULL, "refused without a reason");
        if (fuzz_verbose())
            fprintf(stderr, "refused: %s\n", why);
        return 0;
    }
    gb_strbuf first = {0}, second = {0};
    write_value(&v, &first);
    gb_rdb_value again;
    FUZZ_CHECK(decode(&cfg, first.p, first.len, &again, &why), "own payload refused: %s", why);
    write_value(&again, &second);
    FUZZ_CHECK(same_value(&first, &second), "value changed over a round trip (%zu vs %zu payload bytes)", first.len,
               second.len);
    if (fuzz_verbose())
        fprintf(stderr, "accepted: type %d, %zu payload bytes\n", (int)v.type, first.len);
    gb_rdb_value_free(&v);
    gb_rdb_value_free(&again);
    gb_strbuf_free(&first);
    gb_strbuf_free(&second);
    return 0;
}
