/*
 * Helpers shared by the RESP command handlers (engine/cmd_*.c).
 */
#ifndef GB_ENGINE_CMD_UTIL_H
#define GB_ENGINE_CMD_UTIL_H

#include "engine/client.h"
#include "engine/command.h"
#include "engine/result.h"

/* Replies with Redis's error text for a failed typed call. */
void gb_reply_result(gb_client *c, gb_result r);

/* Parses an integer argument; on failure replies "value is not an integer or
 * out of range" and returns false. */
bool gb_arg_ll(gb_client *c, gb_slice arg, int64_t *out);
/* Same, additionally requiring min <= v <= max, else replies err_range
 * (NULL: the not-an-integer text). */
bool gb_arg_ll_range(gb_client *c, gb_slice arg, int64_t min, int64_t max, const char *err_range, int64_t *out);

/* SCAN-family cursor argument ("ERR invalid cursor"). */
bool gb_parse_scan_cursor(gb_client *c, gb_slice arg, uint64_t *out);

struct gb_engine;
struct gb_db;
/* FLUSHDB for one database: tells WATCHers, frees everything. */
void gb_flush_db(struct gb_engine *eng, struct gb_db *db);

#endif
