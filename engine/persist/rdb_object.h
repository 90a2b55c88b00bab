/*
 * One value in Redis's RDB object format: what follows a key in a Redis
 * dump.rdb, and the body of a DUMP payload (type byte, object, then the
 * payload's footer, which cmd_dump adds). The readers accept every type and
 * encoding Redis 6.x, 7.0 and 7.2 write for strings, lists, sets, sorted
 * sets and hashes (RDB versions 9 to 11); streams and module types are
 * refused with a reason naming them (issue 29 continues).
 *
 * Writing uses the forms every Redis since 2.x loads and rebuilds in its own
 * encodings (Redis 7.0 converts on load exactly as it would have built the
 * value): strings with Redis's integer encoding for short integers, lists
 * as RDB_TYPE_LIST, sets as RDB_TYPE_SET, sorted sets as RDB_TYPE_ZSET_2
 * (binary doubles), hashes as RDB_TYPE_HASH, streams as Redis 7.0's
 * RDB_TYPE_STREAM_LISTPACKS_2.
 */
#ifndef GB_ENGINE_PERSIST_RDB_OBJECT_H
#define GB_ENGINE_PERSIST_RDB_OBJECT_H

#include "engine/base/rdbstr.h"
#include "engine/base/strbuf.h"
#include "engine/core/keyspace/keyrecord.h"
#include "engine/ds/collection.h"
#include "engine/ds/list.h"
#include "engine/ds/stream.h"

/* Redis's object type bytes (rdb.h). */
enum {
    GB_RDB_TYPE_STRING = 0,
    GB_RDB_TYPE_LIST = 1,
    GB_RDB_TYPE_SET = 2,
    GB_RDB_TYPE_ZSET = 3,
    GB_RDB_TYPE_HASH = 4,
    GB_RDB_TYPE_ZSET_2 = 5,
    GB_RDB_TYPE_MODULE = 6,
    GB_RDB_TYPE_MODULE_2 = 7,
    GB_RDB_TYPE_HASH_ZIPMAP = 9,
    GB_RDB_TYPE_LIST_ZIPLIST = 10,
    GB_RDB_TYPE_SET_INTSET = 11,
    GB_RDB_TYPE_ZSET_ZIPLIST = 12,
    GB_RDB_TYPE_HASH_ZIPLIST = 13,
    GB_RDB_TYPE_LIST_QUICKLIST = 14,
    GB_RDB_TYPE_STREAM_LISTPACKS = 15,
    GB_RDB_TYPE_HASH_LISTPACK = 16,
    GB_RDB_TYPE_ZSET_LISTPACK = 17,
    GB_RDB_TYPE_LIST_QUICKLIST_2 = 18,
    GB_RDB_TYPE_STREAM_LISTPACKS_2 = 19,
    GB_RDB_TYPE_SET_LISTPACK = 20,
    GB_RDB_TYPE_STREAM_LISTPACKS_3 = 21,
    /* Redis 7.4 (RDB 12): hashes with field deadlines (hash-field expiry).
     * METADATA: [min deadline, 8 bytes LE] len { len ttl, field, value }
     *   with ttl 0 for none, else deadline - min + 1 (PRE_GA: no min, ttl
     *   absolute). LISTPACK_EX: [min deadline] a listpack of field, value,
     *   deadline triples (0: none). */
    GB_RDB_TYPE_HASH_METADATA_PRE_GA = 22,
    GB_RDB_TYPE_HASH_LISTPACK_EX_PRE_GA = 23,
    GB_RDB_TYPE_HASH_METADATA = 24,
    GB_RDB_TYPE_HASH_LISTPACK_EX = 25,
};

/* The RDB version Goblin writes (Redis 7.0's; 12, Redis 7.4's, for a hash
 * with field deadlines, which nothing older can hold) and the newest it
 * reads. */
#define GB_RDB_VERSION_WRITTEN 10
#define GB_RDB_VERSION_HFE 12
#define GB_RDB_VERSION_READ_MAX 12

/* A value read from RDB bytes, not yet in any database. */
typedef struct gb_rdb_value {
    enum gb_type type;
    gb_rdb_str str; /* GB_TYPE_STRING: the bytes, in the reader's buffer or owned */
    void *obj;   /* otherwise: what gb_db_add_object takes for type */
} gb_rdb_value;

/* The thresholds a value is rebuilt with (the engine's current config). */
typedef struct gb_rdb_build_config {
    gb_types_config types;
    gb_list_config list;
    gb_stream_limits stream;
} gb_rdb_build_config;

/* Reads the object of rdbtype from r into *out (a string value may point
 * into r's buffer: use it before the buffer goes). Returns true, or false with
 * *why (a static reason) when the bytes are not a value Goblin can hold:
 * damaged, truncated, empty, a member twice, a NaN score, a module type. Nothing is allocated beyond what the bytes left can stand
 * for. */
bool gb_rdb_object_read(gb_rdb_reader *r, int rdbtype, const gb_rdb_build_config *cfg, gb_rdb_value *out,
                        const char **why);
void gb_rdb_value_free(gb_rdb_value *v);

/* The two halves of gb_rdb_object_write, for a dump.rdb where the key
 * name goes between them: the type byte kv is written with, and the
 * object alone. */
int gb_rdb_object_type(const gb_kv *kv);
/* The RDB version a payload or file holding kv needs. */
int gb_rdb_object_version(const gb_kv *kv);
void gb_rdb_object_write_value(gb_strbuf *b, const gb_kv *kv);

/* Appends kv's value as a type byte and the object. Returns false (nothing
 * appended) only for a type Redis has no format for (none today). */
bool gb_rdb_object_write(gb_strbuf *b, const gb_kv *kv);

/* A string in Redis's rdbSaveRawString form without compression: the
 * integer encoding when the bytes are a canonical int32 of at most 11
 * characters, else length and bytes. */
void gb_rdb_write_string_value(gb_strbuf *b, const void *s, size_t n);

#endif
