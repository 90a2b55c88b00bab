/*
 * Hash-field expiry in the keyspace (Redis 7.4/8.0 semantics): the active
 * cycle the cron runs, each database's index of the hashes that have field
 * deadlines, and what deleting an expired field entails (the lazy check
 * every hash read makes is engine/types/t_hash_ttl.h).
 *
 * The index (gb_db.hfe) is a sorted set of key names scored by a deadline
 * no later than the hash's earliest field deadline. It may be stale -- a
 * key renamed away, deleted, flushed, overwritten by another type, its
 * deadlines moved later -- and the active cycle corrects each entry it
 * meets (re-scores it, or drops it); what it must never be is late: every
 * change that gives a field an earlier deadline, and every insertion of a
 * hash with deadlines under a name (RENAME, COPY, MOVE, RESTORE, a load),
 * notes the key with its earliest deadline.
 *
 * An expired field is deleted and propagated as HDEL key field, with the
 * `hexpired` keyspace event (then `del` when it was the hash's last), as
 * Redis does; nothing is deleted while loading or under CLIENT PAUSE (the
 * field reads as gone then).
 */
#ifndef GB_ENGINE_CORE_HFE_H
#define GB_ENGINE_CORE_HFE_H

#include "engine/core/keyspace/db.h"
#include "engine/ds/hash_ttl.h"

/* ---- the per-database index ---- */

/* Notes that the hash under key has a field deadline at when_ms (lowers
 * the key's score, or adds it). */
void gb_hfe_index_note(gb_db *db, gb_slice key, int64_t when_ms);
/* The same after a command gave fields of the hash the deadline when_ms
 * (and maybe cleared or deleted others), the hash's earliest deadline having
 * been min_before (-1: none). The index's entry for a hash with deadlines
 * is never later than its earliest one, so when min_before <= when_ms the
 * entry already is early enough: no index lookup, a cache miss saved on the
 * HEXPIRE path. */
void gb_hfe_index_note_since(gb_db *db, gb_slice key, int64_t min_before, int64_t when_ms);
/* db.c, whenever a record is put in the table: a hash with deadlines gets
 * its index entry under its (new) name. */
void gb_hfe_track_kv(gb_db *db, const gb_kv *kv);
/* Frees db's index (FLUSHDB, shutdown). */
void gb_hfe_index_drop(gb_db *db);

/* ---- expiry ---- */

/* The events a batch of lazy expiries owes (HMGET): `hexpired`, and `del`
 * when the key went. */
void gb_hfe_notify_batch(gb_db *db, gb_slice key, size_t expired, bool key_gone);

/* Deletes the expired fields of the hashes whose index score has passed,
 * at most a bounded number of fields per call, until deadline_ns
 * (monotonic). Returns the fields deleted. */
size_t gb_hfe_active_expire(gb_db *db, uint64_t deadline_ns);

/* Whether an expired field may be deleted now (not while loading, not under
 * CLIENT PAUSE): otherwise it only reads as gone. */
bool gb_hfe_may_delete(const gb_db *db);

/* After fields of the hash h under key (record kv) were deleted by expiry:
 * writes h back into kv, tells WATCH and tracking, deletes the key when h
 * is empty (returns true then). */
bool gb_hfe_settle(gb_db *db, gb_slice key, gb_kv *kv, const gb_hash *h);

/* Propagates HDEL key field for a field that expired (inside a command: part
 * of its unit; in the cron: a unit of its own). */
void gb_hfe_propagate_hdel(gb_db *db, gb_slice key, gb_slice field);

#endif
