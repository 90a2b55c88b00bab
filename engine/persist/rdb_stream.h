/*
 * Streams in Redis's RDB format (RDB_TYPE_STREAM_LISTPACKS 15, _2 19 of
 * Redis 7.0, _3 21 of 7.2), read into Goblin's own stream and written back
 * as Redis 7.0 writes them (type 19).
 *
 * The object (after its type byte):
 *
 *   nodes      len N, then N times: string  master ID (16 bytes: ms, seq, big-endian)
 *                                   string  a listpack (below)
 *   length     len    live entries
 *   last_id    len ms, len seq
 *   [19, 21]   first_id (len, len), max_deleted_entry_id (len, len), entries_added (len)
 *   groups     len G, then G times:
 *                name string, last_id (len, len), [19, 21] entries_read (len; all ones: unknown)
 *                PEL   len P, P times: ID (16 raw bytes, big-endian), delivery time (8 bytes LE, ms),
 *                                      delivery count (len)
 *                consumers len C, C times: name string, seen time (8 bytes LE, ms),
 *                                      [21] active time (8 bytes LE), PEL len, IDs (16 raw bytes each)
 *
 * A node's listpack: the master entry, then the entries, all numbers as
 * integer entries:
 *
 *   master     count (live) | deleted | nfields | field ... | 0
 *   entry      flags (1 deleted, 2 same fields as the master) | ms - master.ms | seq - master.seq |
 *              (flags & 2 ? value x nfields : nfields | field value ...) | lp-count
 *   lp-count   the entry's elements before it: nfields + 3 with same fields, 2 * nfields + 4 without
 */
#ifndef GB_ENGINE_PERSIST_RDB_STREAM_H
#define GB_ENGINE_PERSIST_RDB_STREAM_H

#include "engine/base/rdbstr.h"
#include "engine/base/strbuf.h"
#include "engine/ds/stream.h"

/* Reads a stream object of rdbtype; NULL with *why when the bytes are not
 * one Goblin can hold (damaged, IDs out of order, counts that disagree,
 * a pending entry no consumer or two consumers own). lim shapes Goblin's
 * own nodes. */
gb_stream *gb_rdb_stream_read(gb_rdb_reader *r, int rdbtype, const gb_stream_limits *lim, const char **why);

/* Appends s as Redis 7.0's RDB_TYPE_STREAM_LISTPACKS_2 object (no type
 * byte), in nodes of at most 100 entries and about 4 KiB (Redis's
 * stream-node-max-entries and -bytes defaults). */
void gb_rdb_stream_write(gb_strbuf *b, const gb_stream *s);

#endif
