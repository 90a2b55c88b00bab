/* DUMP and RESTORE in Redis's serialised form, interchangeable with
 * redis-server both ways (issue 29).
 *
 * A payload is Redis's: the RDB object (type byte and object, written and
 * read by engine/persist/rdb_object.c), then a footer of the RDB version
 * (2 bytes, little-endian) and a CRC-64 (Jones, the one Redis uses,
 * little-endian) of everything before it. RESTORE follows Redis 7.0.15's
 * restoreCommand step for step: options, BUSYKEY, the TTL, the footer, the
 * object, then the key -- so a bad request gets the error Redis gives it. */
#include "engine/base/crc64.h"
#include "engine/base/mem.h"
#include "engine/base/strbuf.h"
#include "engine/base/util.h"
#include "engine/commands/cmd_util.h"
#include "engine/core/db.h"
#include "engine/core/propagate.h"
#include "engine/persist/rdb_object.h"
#include "engine/types/t_list.h"
#include "engine/types/t_stream.h"
#include "engine/types/tobj.h"

#define ERR_BUSYKEY "BUSYKEY Target key name already exists."
#define ERR_PAYLOAD "ERR DUMP payload version or checksum are wrong"
#define ERR_BAD_FORMAT "ERR Bad data format"
#define DUMP_FOOTER 10 /* RDB version (2) + CRC-64 (8) */

static void put_footer(gb_strbuf *b, int version)
{
    uint8_t ver[2] = {(uint8_t)(version & 0xFF), (uint8_t)(version >> 8)};
    gb_strbuf_add(b, ver, sizeof ver);
    uint64_t crc = gb_crc64(0, (const unsigned char *)b->p, b->len);
    uint8_t le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (uint8_t)(crc >> (8 * i));
    gb_strbuf_add(b, le, sizeof le);
}

/* Redis's verifyDumpPayload: a version this server reads, and the CRC. */
static bool payload_ok(gb_slice p)
{
    if (p.len < DUMP_FOOTER)
        return false;
    const uint8_t *footer = (const uint8_t *)p.ptr + p.len - DUMP_FOOTER;
    unsigned version = (unsigned)footer[0] | (unsigned)footer[1] << 8;
    if (version > GB_RDB_VERSION_READ_MAX)
        return false;
    uint64_t crc = gb_crc64(0, (const unsigned char *)p.ptr, p.len - 8), stored = 0;
    for (int i = 7; i >= 0; i--)
        stored = stored << 8 | footer[2 + i];
    return crc == stored;
}

static void cmd_dump(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    gb_kv *kv = gb_db_lookup_read(c->db, argv[1]);
    if (!kv) {
        gb_reply_nil(c);
        return;
    }
    gb_strbuf b = {0};
    if (!gb_rdb_object_write(&b, kv)) {
        gb_strbuf_free(&b);
        gb_reply_errorf(c, "ERR DUMP of a %s is not supported yet: Goblin Core cannot write it in Redis's format",
                        gb_type_name((enum gb_type)kv->type));
        return;
    }
    put_footer(&b, gb_rdb_object_version(kv));
    gb_reply_bulk(c, b.p, b.len);
    gb_strbuf_free(&b);
}

typedef struct restore_opts {
    bool replace, absttl;
    int64_t idle_s;  /* -1: not given */
    int64_t freq;    /* -1: not given */
} restore_opts;

static bool parse_restore_opts(gb_client *c, int argc, gb_slice *argv, restore_opts *o)
{
    *o = (restore_opts){.idle_s = -1, .freq = -1};
    for (int j = 4; j < argc; j++) {
        int additional = argc - j - 1;
        if (gb_slice_ieq(argv[j], "replace")) {
            o->replace = true;
        } else if (gb_slice_ieq(argv[j], "absttl")) {
            o->absttl = true;
        } else if (gb_slice_ieq(argv[j], "idletime") && additional >= 1 && o->freq == -1) {
            if (!gb_arg_ll(c, argv[j + 1], &o->idle_s))
                return false;
            if (o->idle_s < 0) {
                gb_reply_error(c, "ERR Invalid IDLETIME value, must be >= 0");
                return false;
            }
            j++;
        } else if (gb_slice_ieq(argv[j], "freq") && additional >= 1 && o->idle_s == -1) {
            if (!gb_arg_ll(c, argv[j + 1], &o->freq))
                return false;
            if (o->freq < 0 || o->freq > 255) {
                gb_reply_error(c, "ERR Invalid FREQ value, must be >= 0 and <= 255");
                return false;
            }
            j++;
        } else {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return false;
        }
    }
    return true;
}

/* Builds the value of a payload whose footer checked out. */
static bool decode_payload(gb_client *c, gb_slice p, gb_rdb_value *v)
{
    gb_rdb_reader r = gb_rdb_reader_make(p.ptr, p.len - DUMP_FOOTER);
    gb_rdb_build_config cfg = {gb_types_cfg(c->eng), gb_list_config_for(c->eng), gb_stream_limits_of(c->eng)};
    int type = gb_rdb_read_byte(&r);
    const char *why = NULL;
    if (type < 0 || !gb_rdb_object_read(&r, type, &cfg, v, &why))
        return false;
    return true;
}

static gb_kv *add_value(gb_db *db, gb_slice key, gb_rdb_value *v)
{
    gb_kv *kv;
    if (v->type == GB_TYPE_STRING) {
        kv = gb_db_add_string(db, key, gb_slice_make(v->str.ptr, v->str.len));
        gb_rdb_str_free(&v->str);
    } else {
        kv = gb_db_add_object(db, key, v->type, v->obj);
    }
    memset(v, 0, sizeof *v);
    return kv;
}

static void cmd_restore(gb_client *c, int argc, gb_slice *argv)
{
    restore_opts o;
    if (!parse_restore_opts(c, argc, argv, &o))
        return;
    gb_slice key = argv[1];
    if (!o.replace && gb_db_lookup_write(c->db, key)) {
        gb_reply_error(c, ERR_BUSYKEY);
        return;
    }
    int64_t ttl;
    if (!gb_arg_ll(c, argv[2], &ttl))
        return;
    if (ttl < 0) {
        gb_reply_error(c, "ERR Invalid TTL value, must be >= 0");
        return;
    }
    if (!payload_ok(argv[3])) {
        gb_reply_error(c, ERR_PAYLOAD);
        return;
    }
    gb_rdb_value v;
    if (!decode_payload(c, argv[3], &v)) {
        gb_reply_error(c, ERR_BAD_FORMAT);
        return;
    }
    bool deleted = o.replace && gb_db_delete(c->db, key);
    if (ttl && !o.absttl)
        ttl = ttl > INT64_MAX - c->eng->now_ms ? INT64_MAX : ttl + c->eng->now_ms;
    if (ttl && ttl <= c->eng->now_ms) { /* checkAlreadyExpired: the key is gone */
        gb_rdb_value_free(&v);
        if (deleted) {
            gb_propagate_del(c, key);
            gb_engine_key_modified(c->db, key);
            gb_notify_key(c, GB_NOTIFY_GENERIC, "del", key);
        }
        gb_reply_ok(c);
        return;
    }
    gb_kv *kv = add_value(c->db, key, &v);
    if (ttl) {
        kv = gb_db_set_expire(c->db, kv, ttl);
        if (!o.absttl && gb_propagating(&c->eng->prop)) {
            /* Propagated with the absolute deadline, as Redis rewrites it. */
            char when[GB_INT_BUF];
            gb_slice *args = gb_malloc(((size_t)argc + 1) * sizeof *args);
            for (int j = 0; j < argc; j++)
                args[j] = j == 2 ? gb_slice_make(when, gb_ll2str(when, ttl)) : argv[j];
            args[argc] = gb_slice_cstr("ABSTTL");
            gb_propagate_command(c, argc + 1, args);
            gb_free(args);
        }
    }
    if (o.idle_s >= 0)
        gb_db_set_idle(c->db, kv, o.idle_s);
    gb_engine_key_modified(c->db, key);
    gb_notify_key(c, GB_NOTIFY_GENERIC, "restore", key);
    gb_reply_ok(c);
}

#define W (GB_CMD_WRITE | GB_CMD_DENYOOM)
#define R GB_CMD_READONLY

GB_DEFINE_COMMANDS(dump,
    {"dump", 2, R, 1, 1, 1, cmd_dump, "generic", "Return a serialized version of the value stored at the specified key.",
     "2.6.0"},
    {"restore", -4, W, 1, 1, 1, cmd_restore, "generic",
     "Create a key using the provided serialized value, previously obtained using DUMP.", "2.6.0"});
