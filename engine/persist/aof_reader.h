/*
 * Reading an append-only log's incremental file: RESP multibulk commands,
 * as the log writes them, and the annotation lines ('#') Redis 7 writes
 * between them, skipped as Redis skips them; nothing else (no inline
 * commands: a log is not a terminal). The reader is strict about the format and says where it
 * broke; it grows its buffer with the bytes the file really has, never by
 * a length the file claims.
 *
 * Shared by start-up (gb_aof_replay, which runs each command through the
 * command gate) and the repair tool (apps/check_aof).
 */
#ifndef GB_ENGINE_PERSIST_AOF_READER_H
#define GB_ENGINE_PERSIST_AOF_READER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "engine/base/common.h"

struct gb_engine;

/* One command parsed from buf[0..len): 1 with its argc arguments in argv
 * (slices into buf; the array grows as needed, its capacity in cap) and
 * the bytes it took in used; 0 when buf holds only part of a command; -1
 * when it is not a command (the reason in why). */
int gb_aof_parse_command(const char *buf, size_t len, gb_slice **argv, int *cap, int *argc, size_t *used,
                         const char **why);

/* Walks path command by command: fn is called for each complete one with
 * its file offset; stops at the first malformed one or a partial one at
 * the end. Returns 0 when the file ended cleanly, 1 when it ended inside a
 * command (*end: where that command began), -1 on a malformed command (*end:
 * its offset, *why) or a read error (errno). fn returning false stops the
 * walk (returns 0 with *end at the command it refused). */
int gb_aof_walk(const char *path, bool (*fn)(void *ctx, int argc, gb_slice *argv, int64_t offset), void *ctx,
                int64_t *end, const char **why);

typedef struct gb_aof_read_result {
    uint64_t commands;
    int64_t truncated_at; /* -1, or where a torn last command was cut off */
} gb_aof_read_result;

/* Replays path into eng through the gate, as a client that is obeyed. A
 * torn last command (or an unfinished MULTI at the end) is cut off the file
 * when allow_truncate, else refused. 0, or a negative code with the file,
 * offset and what to do in err. */
int gb_aof_replay(struct gb_engine *eng, const char *path, bool allow_truncate, gb_aof_read_result *res, char *err,
                  size_t errlen);

#endif
