#include "engine/ds/stream_id.h"

#include <errno.h>
#include <stdlib.h>

#include "engine/base/util.h"

bool gb_stream_id_incr(gb_stream_id *id)
{
    if (id->seq != UINT64_MAX) {
        id->seq++;
        return true;
    }
    if (id->ms == UINT64_MAX) {
        id->ms = id->seq = 0;
        return false;
    }
    id->ms++;
    id->seq = 0;
    return true;
}

bool gb_stream_id_decr(gb_stream_id *id)
{
    if (id->seq != 0) {
        id->seq--;
        return true;
    }
    if (id->ms == 0) {
        id->ms = id->seq = UINT64_MAX;
        return false;
    }
    id->ms--;
    id->seq = UINT64_MAX;
    return true;
}

void gb_stream_id_encode(uint8_t key[GB_STREAM_ID_KEY], gb_stream_id id)
{
    for (int i = 0; i < 8; i++) {
        key[i] = (uint8_t)(id.ms >> (56 - 8 * i));
        key[8 + i] = (uint8_t)(id.seq >> (56 - 8 * i));
    }
}

gb_stream_id gb_stream_id_decode(const uint8_t key[GB_STREAM_ID_KEY])
{
    gb_stream_id id = {0, 0};
    for (int i = 0; i < 8; i++) {
        id.ms = (id.ms << 8) | key[i];
        id.seq = (id.seq << 8) | key[8 + i];
    }
    return id;
}

size_t gb_stream_id_format(char *buf, gb_stream_id id)
{
    size_t n = gb_ull2str(buf, id.ms);
    buf[n++] = '-';
    n += gb_ull2str(buf + n, id.seq);
    return n;
}

/* A text of digits only (leading zeros too: redis-benchmark's
 * __rand_int__ pads to 12): 1 and its value, or 0 past UINT64_MAX (a
 * text that starts with a digit and overflows fails in string2ull below
 * whatever follows). Exactly string2ull's conclusion for such a text,
 * without strtoull's locale and errno work. -1: not digits only. */
static int digits2ull(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return 0; /* strtoull: ERANGE, whatever follows */
        v = v * 10 + d;
    }
    if (p == s || *p != '\0')
        return -1;
    *out = v;
    return 1;
}

/* Redis's string2ull: string2ll's canonical form when it fits (negative:
 * invalid), else whatever strtoull reads the whole text as. */
static bool string2ull(const char *s, uint64_t *out)
{
    int digits = digits2ull(s, out);
    if (digits >= 0)
        return digits == 1;
    int64_t ll;
    if (gb_str2ll(s, strlen(s), &ll)) {
        if (ll < 0)
            return false;
        *out = (uint64_t)ll;
        return true;
    }
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == EINVAL || errno == ERANGE || !(*s != '\0' && *end == '\0'))
        return false;
    *out = v;
    return true;
}

bool gb_stream_id_parse(gb_slice s, uint64_t missing_seq, bool strict, gb_stream_id *id, bool *seq_given)
{
    char buf[128];
    if (s.len > sizeof buf - 1)
        return false;
    memcpy(buf, s.ptr, s.len);
    buf[s.len] = '\0';
    if (strict && (buf[0] == '-' || buf[0] == '+') && buf[1] == '\0')
        return false;
    if (seq_given)
        *seq_given = true;
    if (buf[0] == '-' && buf[1] == '\0') {
        *id = gb_stream_id_make(0, 0);
        return true;
    }
    if (buf[0] == '+' && buf[1] == '\0') {
        *id = gb_stream_id_make(UINT64_MAX, UINT64_MAX);
        return true;
    }
    uint64_t ms, seq;
    char *dash = strchr(buf, '-');
    if (dash)
        *dash = '\0';
    if (!string2ull(buf, &ms))
        return false;
    if (!dash) {
        seq = missing_seq;
    } else if (seq_given && dash[1] == '*' && dash[2] == '\0') {
        seq = 0;
        *seq_given = false;
    } else if (!string2ull(dash + 1, &seq)) {
        return false;
    }
    *id = gb_stream_id_make(ms, seq);
    return true;
}
