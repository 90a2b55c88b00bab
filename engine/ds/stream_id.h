/*
 * Stream entry IDs: <ms>-<seq>, two unsigned 64-bit numbers, ordered by
 * ms then seq. In radix-tree keys they are 16 bytes big-endian, so byte
 * order is ID order.
 */
#ifndef GB_ENGINE_DS_STREAM_ID_H
#define GB_ENGINE_DS_STREAM_ID_H

#include "engine/base/common.h"

typedef struct gb_stream_id {
    uint64_t ms;
    uint64_t seq;
} gb_stream_id;

#define GB_STREAM_ID_KEY 16      /* bytes of an ID as a tree key */
#define GB_STREAM_ID_TEXT_MAX 42 /* "18446744073709551615-18446744073709551615" + NUL */

static inline gb_stream_id gb_stream_id_make(uint64_t ms, uint64_t seq)
{
    gb_stream_id id = {ms, seq};
    return id;
}

static inline int gb_stream_id_cmp(gb_stream_id a, gb_stream_id b)
{
    if (a.ms != b.ms)
        return a.ms < b.ms ? -1 : 1;
    if (a.seq != b.seq)
        return a.seq < b.seq ? -1 : 1;
    return 0;
}

static inline bool gb_stream_id_is_zero(gb_stream_id id) { return id.ms == 0 && id.seq == 0; }
static inline bool gb_stream_id_is_max(gb_stream_id id) { return id.ms == UINT64_MAX && id.seq == UINT64_MAX; }

/* The next ID; false (and 0-0) past the last possible one. */
bool gb_stream_id_incr(gb_stream_id *id);
/* The previous ID; false (and the maximum ID) before 0-0. */
bool gb_stream_id_decr(gb_stream_id *id);

void gb_stream_id_encode(uint8_t key[GB_STREAM_ID_KEY], gb_stream_id id);
gb_stream_id gb_stream_id_decode(const uint8_t key[GB_STREAM_ID_KEY]);

/* "<ms>-<seq>" into buf (GB_STREAM_ID_TEXT_MAX bytes); returns its length. */
size_t gb_stream_id_format(char *buf, gb_stream_id id);

/* Parsing an ID argument as Redis 7.0's streamGenericParseIDOrReply does
 * (byte for byte the same acceptance: the text is taken up to its first NUL,
 * split at its first '-', each part read by string2ull, which falls back to
 * strtoull and so accepts leading blanks, '+' and zeros beyond int64).
 *
 *   "-" and "+" are 0-0 and the maximum ID unless strict;
 *   "<ms>" alone takes missing_seq as its sequence;
 *   "<ms>-*" is accepted when seq_given is not NULL: *seq_given = false.
 * Returns false for anything else (Redis: "Invalid stream ID specified as
 * stream command argument"). */
bool gb_stream_id_parse(gb_slice s, uint64_t missing_seq, bool strict, gb_stream_id *id, bool *seq_given);

#endif
