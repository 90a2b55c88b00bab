/*
 * Loading a Redis dump.rdb (RDB versions 1 to 12: Redis up to 7.4) into
 * the engine's databases: at start-up when dbfilename names one (found by
 * its "REDIS" magic, engine/persist/persist.c) and for `--import-rdb FILE`.
 *
 * The file, after "REDIS" and four version digits, is a sequence of
 * opcodes and keys until EOF and the CRC-64 of everything before it:
 *
 *   0xFA AUX       string name, string value (redis-ver, ctime, used-mem...: ignored; repl-stream-db)
 *   0xFB RESIZEDB  len keys, len volatile keys (sizing hints)
 *   0xFC EXPIRE_MS 8 bytes, little-endian Unix ms, for the next key
 *   0xFD EXPIRE    4 bytes, little-endian Unix seconds, for the next key
 *   0xFE SELECTDB  len database number
 *   0xF8 IDLE      len seconds idle, for the next key (OBJECT IDLETIME)
 *   0xF9 FREQ      1 byte LFU counter, for the next key
 *   0xF5 FUNCTION2 string: a function library's code (FUNCTION LOAD)
 *   0xF7 MODULE_AUX, 0xF6 FUNCTION (7.0 release candidates): refused
 *   type byte      string key, then the object (engine/persist/rdb_object.h)
 *   0xFF EOF       then 8 bytes CRC-64, little-endian (0: written without one)
 *
 * Everything is checked before it is trusted; a file that is not whole,
 * a module type, an unknown opcode or a key twice stops the load with a
 * message naming the key, its type and the offset. Keys already expired
 * are skipped, as Redis's primary skips them.
 */
#ifndef GB_ENGINE_PERSIST_RDB_LOAD_H
#define GB_ENGINE_PERSIST_RDB_LOAD_H

#include "engine/core/engine.h"
#include "engine/core/replication/repl.h"

/* Whether the file at path starts with Redis's magic ("REDIS"). */
bool gb_rdb_file_is_redis(const char *path);

typedef struct gb_rdb_load_stats {
    uint64_t keys, expired, functions;
    unsigned version;
    uint64_t bytes;
    /* The aux field repl-stream-db (a full sync's RDB: the database the
     * stream after it is in, where its first write comes without a
     * SELECT), or -1 when the file has none or names no database here. */
    int repl_stream_db;
    gb_repl_saved_history history; /* repl-id, repl-offset, repl-stream-db */
} gb_rdb_load_stats;

/* Loads path into eng's databases (which must not hold its keys).
 * progress, when not NULL, is called every 64 MB. Returns 0, GB_ENOENT when
 * there is no such file, or GB_EPARSE / GB_EIO with the reason in err. */
int gb_rdb_load_file(gb_engine *eng, const char *path, gb_rdb_load_stats *st,
                     void (*progress)(void *ctx, uint64_t done, uint64_t total, const gb_rdb_load_stats *st),
                     void *pctx, char *err, size_t errlen);

/* The same for an RDB held in memory (a replica's diskless load, where the
 * payload never touched the disk); name is what messages call it. */
int gb_rdb_load_buffer(gb_engine *eng, const uint8_t *p, size_t len, const char *name, gb_rdb_load_stats *st,
                       void (*progress)(void *ctx, uint64_t done, uint64_t total, const gb_rdb_load_stats *st),
                       void *pctx, char *err, size_t errlen);

#endif
