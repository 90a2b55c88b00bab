/*
 * Writing the dataset as a Redis dump.rdb (RDB version 10, Redis 7.0's;
 * 12, Redis 7.4's, when a hash has field deadlines, which older versions
 * cannot hold),
 * which redis-server 7.0 loads and redis-check-rdb accepts: the way back
 * from Goblin to Redis (`goblin-core --export-rdb FILE`, issue 29).
 *
 * The file: "REDIS0010", AUX fields (goblin-ver, redis-bits, ctime,
 * used-mem, aof-base), each function library (FUNCTION2), then for each
 * database that has keys SELECTDB, RESIZEDB and its keys (EXPIRETIME_MS
 * before a volatile one; type byte, key, object as engine/persist/
 * rdb_object.h writes them), then EOF and the CRC-64 of everything before.
 *
 * It runs to its end on the calling thread (an export tool, not a
 * background save): written to path + ".tmp", synced, then renamed into
 * place, so a crash leaves the previous file or none, never half of one.
 */
#ifndef GB_ENGINE_PERSIST_RDB_SAVE_H
#define GB_ENGINE_PERSIST_RDB_SAVE_H

#include "engine/base/strbuf.h"
#include "engine/core/keyspace/db.h"
#include "engine/core/engine.h"

/* The pieces of the same file, for one built key by key by a background
 * scan (a replica's full sync, engine/persist/repl_fsync.c): the header
 * (magic, AUX fields, function libraries) of the version the dataset
 * needs now, SELECTDB + RESIZEDB, a key (its expiry first), EOF, and the
 * CRC-64 of every byte before it. */
int gb_rdb_version_for(gb_engine *eng);
/* repl_stream_db: the aux field repl-stream-db (gb_repl_stream_db). */
void gb_rdb_put_header(gb_strbuf *b, gb_engine *eng, int version, int repl_stream_db);
void gb_rdb_put_selectdb(gb_strbuf *b, gb_db *db);
void gb_rdb_put_key(gb_strbuf *b, gb_kv *kv);
void gb_rdb_put_eof(gb_strbuf *b);
void gb_rdb_put_crc(gb_strbuf *b, uint64_t crc);

/* A whole RDB without keys, for REPLCONF rdb-filter-only (redis-cli
 * --functions-rdb): the header, the function libraries when functions,
 * EOF and the CRC-64, appended to b. */
void gb_rdb_put_without_data(gb_strbuf *b, gb_engine *eng, bool functions);

/* Returns 0 with *keys set, or -1 with the reason in err. */
int gb_rdb_save_file(gb_engine *eng, const char *path, uint64_t *keys, char *err, size_t errlen);

#endif
