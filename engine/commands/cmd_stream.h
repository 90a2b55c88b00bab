/*
 * What the stream command files (cmd_stream.c: entries, reads, blocking;
 * cmd_stream_group.c: consumer groups and XINFO) share: argument parsing
 * with Redis 7.0's error texts and the reply shapes of IDs and entries.
 */
#ifndef GB_ENGINE_COMMANDS_CMD_STREAM_H
#define GB_ENGINE_COMMANDS_CMD_STREAM_H

#include "engine/core/request/client.h"
#include "engine/types/t_stream.h"

#define GB_XERR_INVALID_ID "ERR Invalid stream ID specified as stream command argument"

/* An ID argument (gb_stream_id_parse's rules); replies the error on failure. */
bool gb_xarg_id(gb_client *c, gb_slice arg, uint64_t missing_seq, bool strict, gb_stream_id *id);
/* A range bound: "(" makes it exclusive (then "-" and "+" are refused);
 * *id is moved one step inward, replying "invalid start ID for the
 * interval" (or end) when there is no step to take. */
bool gb_xarg_range_start(gb_client *c, gb_slice arg, gb_stream_id *id);
bool gb_xarg_range_end(gb_client *c, gb_slice arg, gb_stream_id *id);

void gb_xreply_id(gb_client *c, gb_stream_id id);
/* [id, [field, value, ...]] of the entry it stands on. */
void gb_xreply_entry(gb_client *c, gb_stream_id id, uint32_t nfields, const gb_stream_iter *it);
/* Entries in [start, end] as one array, at most count (0: all). */
uint64_t gb_xreply_range(gb_client *c, const gb_stream *s, const gb_stream_id *start, const gb_stream_id *end,
                         uint64_t count, bool rev);
/* Entries replied one by one (no array around them): the stream visitor
 * XREADGROUP and XCLAIM deliver through. */
gb_stream_visitor gb_xreply_visitor(gb_client *c);

/* An error whose text quotes client strings the way Redis's %s does (up
 * to the first NUL byte, no length limit): the n parts joined. */
void gb_xreply_error_parts(gb_client *c, const gb_slice *parts, size_t n);
/* Redis's addReplySubcommandSyntaxError for XGROUP / XINFO. */
void gb_xreply_subcommand_syntax(gb_client *c, gb_slice sub, const char *container);

/* The text of s up to its first NUL. */
static inline gb_slice gb_xtext(gb_slice s)
{
    const char *nul = s.len ? memchr(s.ptr, '\0', s.len) : NULL;
    return nul ? gb_slice_make(s.ptr, (size_t)(nul - s.ptr)) : s;
}

/* The handlers of cmd_stream_group.c (the table is in cmd_stream.c). */
void gb_cmd_xgroup(gb_client *c, int argc, gb_slice *argv);
void gb_cmd_xack(gb_client *c, int argc, gb_slice *argv);
void gb_cmd_xpending(gb_client *c, int argc, gb_slice *argv);
void gb_cmd_xclaim(gb_client *c, int argc, gb_slice *argv);
void gb_cmd_xautoclaim(gb_client *c, int argc, gb_slice *argv);
void gb_cmd_xinfo(gb_client *c, int argc, gb_slice *argv);

#endif
