/* DUMP, RESTORE and MIGRATE in Redis's serialised form, interchangeable with
 * redis-server both ways (issue 29).
 *
 * A payload is Redis's: the RDB object (type byte and object, written and
 * read by engine/persist/rdb_object.c), then a footer of the RDB version
 * (2 bytes, little-endian) and a CRC-64 (Jones, the one Redis uses,
 * little-endian) of everything before it. RESTORE follows Redis 7.0.15's
 * restoreCommand step for step: options, BUSYKEY, the TTL, the footer, the
 * object, then the key -- so a bad request gets the error Redis gives it. */
#include <errno.h>
#include <stdio.h>

#include "engine/base/crc64.h"
#include "engine/base/mem.h"
#include "engine/base/strbuf.h"
#include "engine/base/util.h"
#include "engine/commands/cmd_util.h"
#include "engine/core/keyspace/db.h"
#include "engine/core/memory/evict.h"
#include "engine/core/request/propagate.h"
#include "engine/persist/rdb_object.h"
#include "engine/types/t_list.h"
#include "engine/types/t_stream.h"
#include "platform/netsync.h"
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

/* kv's DUMP payload: the object and the footer. */
static void dump_payload(gb_strbuf *b, const gb_kv *kv)
{
    gb_rdb_object_write(b, kv); /* every type of gb_kv has a Redis form */
    put_footer(b, gb_rdb_object_version(kv));
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
    dump_payload(&b, kv);
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
    /* A relative TTL past what 64 bits hold wraps to a time in the past,
     * as Redis's addition does: the key is already expired (with REPLACE
     * the old one is deleted). Capped, it lived for ever. */
    if (ttl && !o.absttl)
        ttl = (int64_t)((uint64_t)ttl + (uint64_t)c->eng->now_ms);
    if (ttl && gb_db_already_expired(c->db, ttl)) { /* the key is gone */
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
    gb_kv_set_lru_or_lfu(c->eng, kv, o.freq, o.idle_s);
    gb_engine_key_modified(c->db, key);
    gb_notify_key(c, GB_NOTIFY_GENERIC, "restore", key);
    gb_reply_ok(c);
}

/* ---- MIGRATE ---------------------------------------------------------------------------- */

/* MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE]
 * [AUTH password] [AUTH2 username password] [KEYS key ...], as Redis
 * 7.0.15's migrateCommand: the keys go to the target as RESTORE commands
 * (DUMP payloads, TTLs relative), written and answered synchronously on
 * this thread within `timeout` ms per step (platform/netsync.h), as Redis
 * does; without COPY each key the target acknowledged is deleted here and
 * the command propagates as DEL of those keys.
 *
 * Connections are kept for the next MIGRATE to the same host:port, as
 * Redis keeps them (MIGRATE_SOCKET_CACHE_ITEMS, _TTL): at most 64, each
 * dropped after 10 s unused (checked at the next MIGRATE) or after an I/O
 * error; a target's error reply keeps it (SELECT is sent again next time). What a client can see of
 * it is Redis's too: SELECT is sent only when the target's database
 * changes, and a connection that authenticated stays authenticated. */
#define MIGRATE_CACHE_ITEMS 64
#define MIGRATE_CACHE_TTL_MS 10000

typedef struct migrate_conn {
    char name[280]; /* host:port; empty when the slot is free */
    int fd;
    int64_t last_dbid; /* -1: SELECT needed */
    int64_t last_use_ms;
    gb_plat_line_reader replies; /* what the target sent, read in blocks */
} migrate_conn;

/* One engine per process serves MIGRATE; the cache is the process's. */
static migrate_conn migrate_cache[MIGRATE_CACHE_ITEMS];

static void migrate_conn_close(migrate_conn *m)
{
    gb_plat_sync_close(m->fd);
    m->name[0] = '\0';
}

/* The cached connection to host:port, or a new one; NULL when connecting
 * failed (*timed_out: no answer in time, or no such host). */
static migrate_conn *migrate_conn_get(const char *host, int port, int timeout, int64_t now_ms, bool *timed_out)
{
    char name[280];
    snprintf(name, sizeof name, "%s:%d", host, port);
    migrate_conn *free_slot = NULL;
    for (size_t i = 0; i < MIGRATE_CACHE_ITEMS; i++) {
        migrate_conn *m = &migrate_cache[i];
        if (m->name[0] && now_ms - m->last_use_ms > MIGRATE_CACHE_TTL_MS)
            migrate_conn_close(m);
        if (m->name[0] && strcmp(m->name, name) == 0) {
            m->last_use_ms = now_ms;
            return m;
        }
        if (!m->name[0] && !free_slot)
            free_slot = m;
    }
    if (!free_slot) { /* full: one goes, as Redis drops one at random */
        free_slot = &migrate_cache[(size_t)now_ms % MIGRATE_CACHE_ITEMS];
        migrate_conn_close(free_slot);
    }
    int fd;
    if (gb_plat_tcp_connect(host, port, timeout, &fd) != 0) {
        *timed_out = errno == ETIMEDOUT || errno == EHOSTUNREACH;
        return NULL;
    }
    snprintf(free_slot->name, sizeof free_slot->name, "%s", name);
    free_slot->fd = fd;
    free_slot->last_dbid = -1;
    free_slot->last_use_ms = now_ms;
    free_slot->replies.start = free_slot->replies.end = 0;
    return free_slot;
}

typedef struct migrate_opts {
    bool copy, replace;
    gb_slice user, password; /* password.ptr NULL: no AUTH */
    int first_key, nkeys;
    int64_t timeout_ms, dbid;
} migrate_opts;

static bool parse_migrate(gb_client *c, int argc, gb_slice *argv, migrate_opts *o)
{
    *o = (migrate_opts){.first_key = 3, .nkeys = 1};
    for (int j = 6; j < argc; j++) {
        int more = argc - 1 - j;
        if (gb_slice_ieq(argv[j], "copy")) {
            o->copy = true;
        } else if (gb_slice_ieq(argv[j], "replace")) {
            o->replace = true;
        } else if (gb_slice_ieq(argv[j], "auth")) {
            if (!more) {
                gb_reply_error(c, GB_ERR_SYNTAX);
                return false;
            }
            o->password = argv[++j];
        } else if (gb_slice_ieq(argv[j], "auth2")) {
            if (more < 2) {
                gb_reply_error(c, GB_ERR_SYNTAX);
                return false;
            }
            o->user = argv[++j];
            o->password = argv[++j];
        } else if (gb_slice_ieq(argv[j], "keys")) {
            if (argv[3].len != 0) {
                gb_reply_error(c, "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string");
                return false;
            }
            o->first_key = j + 1;
            o->nkeys = argc - j - 1;
            break;
        } else {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return false;
        }
    }
    if (!gb_arg_ll(c, argv[5], &o->timeout_ms) || !gb_arg_ll(c, argv[4], &o->dbid))
        return false;
    if (o->timeout_ms <= 0)
        o->timeout_ms = 1000;
    if (o->timeout_ms > INT32_MAX)
        o->timeout_ms = INT32_MAX;
    return true;
}

static void put_bulk(gb_strbuf *b, const void *p, size_t n)
{
    gb_strbuf_printf(b, "$%zu\r\n", n);
    gb_strbuf_add(b, p, n);
    gb_strbuf_add(b, "\r\n", 2);
}

static void put_bulk_ll(gb_strbuf *b, int64_t v)
{
    char num[GB_INT_BUF];
    put_bulk(b, num, gb_ll2str(num, v));
}

/* The whole conversation for the target: AUTH, SELECT (when its database
 * changes), one RESTORE per key still alive (its index kept in sent[]). */
static size_t build_migration(gb_client *c, const migrate_opts *o, gb_slice *argv, bool select, gb_strbuf *cmd,
                              int *sent)
{
    size_t n = 0;
    if (o->password.ptr) {
        gb_strbuf_printf(cmd, "*%d\r\n", o->user.ptr ? 3 : 2);
        put_bulk(cmd, "AUTH", 4);
        if (o->user.ptr)
            put_bulk(cmd, o->user.ptr, o->user.len);
        put_bulk(cmd, o->password.ptr, o->password.len);
    }
    if (select) {
        gb_strbuf_adds(cmd, "*2\r\n");
        put_bulk(cmd, "SELECT", 6);
        put_bulk_ll(cmd, o->dbid);
    }
    gb_strbuf payload = {0};
    for (int j = 0; j < o->nkeys; j++) {
        gb_slice key = argv[o->first_key + j];
        gb_kv *kv = gb_db_lookup_read(c->db, key);
        if (!kv)
            continue;
        int64_t ttl = 0;
        if (gb_kv_volatile(kv)) {
            ttl = gb_kv_expire(kv) - c->eng->now_ms;
            if (ttl < 0)
                continue;
            if (ttl < 1)
                ttl = 1;
        }
        gb_strbuf_printf(cmd, "*%d\r\n", o->replace ? 5 : 4);
        /* In cluster mode the target may be importing the slot: Redis's
         * migrateCommand sends RESTORE-ASKING there. */
        if (c->eng->cluster)
            put_bulk(cmd, "RESTORE-ASKING", 14);
        else
            put_bulk(cmd, "RESTORE", 7);
        put_bulk(cmd, key.ptr, key.len);
        put_bulk_ll(cmd, ttl);
        payload.len = 0;
        dump_payload(&payload, kv);
        put_bulk(cmd, payload.p, payload.len);
        if (o->replace)
            put_bulk(cmd, "REPLACE", 7);
        sent[n++] = o->first_key + j;
    }
    gb_strbuf_free(&payload);
    return n;
}

/* How one attempt went. */
enum migrate_outcome { MIGRATED, TARGET_ERROR, WRITE_FAILED, READ_FAILED };

/* One attempt over conn: sends, reads every reply, deletes what the target
 * took (without COPY), each key by its own reply as Redis's migrateCommand
 * does: a key refused (BUSYKEY) does not keep the ones after it that the
 * target took (they would then be on both sides). *acked counts the
 * RESTOREs acknowledged; *broken: a reply did not come (the connection is
 * out of step with its replies and must not be used again). */
static enum migrate_outcome migrate_once(gb_client *c, const migrate_opts *o, gb_slice *argv, migrate_conn *conn,
                                         int *sent, gb_slice *dels, int *ndel, size_t *acked, bool *broken, char *err,
                                         size_t errlen)
{
    int timeout = (int)o->timeout_ms;
    bool select = conn->last_dbid != o->dbid;
    gb_strbuf cmd = {0};
    size_t nsent = build_migration(c, o, argv, select, &cmd, sent);
    int rc = gb_plat_sync_write(conn->fd, cmd.p, cmd.len, timeout);
    gb_strbuf_free(&cmd);
    if (rc != 0)
        return WRITE_FAILED;
    size_t before = (o->password.ptr ? 1 : 0) + (select ? 1 : 0);
    char line[1024];
    err[0] = '\0';
    bool refused_all = false; /* AUTH or SELECT failed: no RESTORE took */
    for (size_t i = 0; i < before + nsent; i++) {
        if (gb_plat_sync_readline(conn->fd, &conn->replies, line, sizeof line, timeout) < 0) {
            *broken = true;
            return err[0] ? TARGET_ERROR : READ_FAILED;
        }
        if (line[0] == '-') {
            if (!err[0])
                snprintf(err, errlen, "%s", line + 1);
            refused_all |= i < before;
        } else if (i >= before && !refused_all) {
            (*acked)++;
            if (!o->copy) {
                gb_slice key = argv[sent[i - before]];
                gb_db_delete(c->db, key);
                gb_engine_key_modified(c->db, key);
                gb_notify_key(c, GB_NOTIFY_GENERIC, "del", key);
                dels[(*ndel)++] = key;
            }
        }
    }
    if (err[0])
        return TARGET_ERROR;
    conn->last_dbid = o->dbid;
    return MIGRATED;
}

static void cmd_migrate(gb_client *c, int argc, gb_slice *argv)
{
    migrate_opts o;
    if (!parse_migrate(c, argc, argv, &o))
        return;
    int present = 0;
    for (int j = 0; j < o.nkeys; j++)
        present += gb_db_lookup_read(c->db, argv[o.first_key + j]) != NULL;
    if (present == 0) {
        gb_reply_status(c, "NOKEY");
        return;
    }
    char host[256];
    int64_t port;
    if (!gb_slice2ll(argv[2], &port) || port < 0 || port > 65535)
        port = 0; /* Redis's atoi: connects to port 0, which refuses */
    snprintf(host, sizeof host, "%.*s", (int)GB_MIN(argv[1].len, sizeof host - 1), argv[1].ptr);
    int *sent = gb_malloc((size_t)o.nkeys * sizeof *sent);
    gb_slice *dels = gb_malloc(((size_t)o.nkeys + 1) * sizeof *dels);
    int ndel = 1;
    dels[0] = gb_slice_cstr("DEL");
    char err[1024];
    enum migrate_outcome out = READ_FAILED;
    /* Like Redis: a failure before any reply arrived, other than a timeout,
     * is tried once more on a fresh connection (a cached one may have been
     * closed by the target meanwhile). */
    for (int attempt = 0; attempt < 2; attempt++) {
        bool timed_out = false;
        migrate_conn *conn = migrate_conn_get(host, (int)port, (int)o.timeout_ms, c->eng->now_ms, &timed_out);
        if (!conn && timed_out) {
            gb_reply_error(c, "IOERR error or timeout connecting to the client");
            goto done;
        }
        size_t acked = 0;
        bool broken = false;
        /* A refused connection is where Redis, whose blocking connect does
         * not look at the socket's error, fails its first write. */
        out = conn ? migrate_once(c, &o, argv, conn, sent, dels, &ndel, &acked, &broken, err, sizeof err)
                   : WRITE_FAILED;
        if (conn && (broken || ((out == MIGRATED || out == TARGET_ERROR) &&
                                gb_plat_line_reader_pending(&conn->replies))))
            migrate_conn_close(conn); /* replies out of step with commands: the next MIGRATE would misread them */
        else if (conn && out == TARGET_ERROR)
            conn->last_dbid = -1; /* the connection stays (and stays authenticated), as Redis's does */
        else if (conn && out != MIGRATED)
            migrate_conn_close(conn);
        bool retry = (out == WRITE_FAILED || out == READ_FAILED) && acked == 0 && errno != ETIMEDOUT;
        if (!retry)
            break;
    }
    if (ndel > 1)
        gb_propagate_command(c, ndel, dels);
    if (out == MIGRATED)
        gb_reply_ok(c);
    else if (out == TARGET_ERROR)
        gb_reply_errorf(c, "ERR Target instance replied with error: %s", err);
    else
        gb_reply_errorf(c, "IOERR error or timeout %s to target instance", out == WRITE_FAILED ? "writing" : "reading");
done:
    gb_free(dels);
    gb_free(sent);
}

GB_DEFINE_COMMANDS(dump,
    {"dump", cmd_dump},
    {"restore", cmd_restore},
    {"restore-asking", cmd_restore},
    {"migrate", cmd_migrate});
