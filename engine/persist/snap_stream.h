/*
 * A stream as a snapshot record (the STREAM value of a KEY record; the
 * layout, field by field, is in engine/persist/snapfmt.h), and back.
 *
 * Loading trusts nothing: every node is rebuilt by the data structure's
 * own checker (gb_snode_from_bytes), and the record is refused unless it
 * describes a stream the commands could have built: nodes in ID order
 * without overlap, the length, first and last IDs agreeing with the
 * entries, group names and consumer names unique, every pending entry
 * owned by exactly one consumer of its group. Counts are never used to
 * size an allocation: everything grows as elements are actually read.
 */
#ifndef GB_ENGINE_PERSIST_SNAP_STREAM_H
#define GB_ENGINE_PERSIST_SNAP_STREAM_H

#include "engine/ds/stream.h"
#include "engine/persist/snapread.h"
#include "engine/persist/snapwrite.h"

void gb_snap_write_stream(gb_snap_writer *w, const gb_stream *s);

/* Reads one stream value. NULL on failure: *why says what is wrong with the
 * record (NULL when the reader itself failed: it holds the error). */
gb_stream *gb_snap_load_stream(gb_snap_reader *r, const char **why);

#endif
