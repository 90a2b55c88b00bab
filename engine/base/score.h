/*
 * score: sorted-set scores and float increments, parsed and formatted with
 * Redis's exact rules.
 *
 * Four parsers, because Redis has four different ones and clients depend on
 * each of them:
 *
 *   gb_score_parse          ZADD/ZINCRBY scores, WEIGHTS (Redis string2d):
 *                           strtod on the whole argument; no leading space,
 *                           no trailing bytes; "inf"/"-inf"/"infinity" and
 *                           hex floats ("0x10") accepted (glibc strtod does);
 *                           NaN rejected; overflow ("1e400") and underflow to
 *                           zero ("1e-400") rejected; denormals accepted.
 *   gb_score_parse_range    ZRANGEBYSCORE/ZCOUNT/... bounds (zslParseRange):
 *                           optional "(" for exclusive, then strtod that must
 *                           consume everything up to the first NUL. Looser
 *                           than gb_score_parse on purpose, as in Redis:
 *                           leading spaces, overflow to +-inf and the empty
 *                           string (= 0) are all accepted; only NaN and
 *                           trailing garbage are rejected.
 *   gb_lex_parse_range      ZRANGEBYLEX bounds: "-", "+", "[x", "(x".
 *   gb_parse_long_double    INCRBYFLOAT/HINCRBYFLOAT (string2ld): strtold,
 *                           same strictness as gb_score_parse, at most
 *                           GB_LONG_DOUBLE_BUF-1 bytes.
 *
 * Formatting:
 *
 *   gb_score_format         shortest text that reads back as the same double
 *                           ("1.1", "0.30000000000000004"), integers below
 *                           2^53 without a fraction ("3", "-0"), "inf",
 *                           "-inf". This is what Redis 7.2+ replies (fpconv);
 *                           redis-server 7.0.x replies with "%.17g"
 *                           ("1.1000000000000001"): both read back as the
 *                           same double, so differential tests compare score
 *                           replies numerically.
 *   gb_format_long_double   Redis's ld2string(LD_STR_HUMAN): "%.17Lf" with
 *                           trailing zeros (and a bare '.') trimmed, "-0"
 *                           printed as "0". Byte-identical to Redis on the
 *                           same platform (x87 80-bit long double on x86-64).
 */
#ifndef GB_ENGINE_SCORE_H
#define GB_ENGINE_SCORE_H

#include "engine/base/common.h"

/* Buffer size for gb_score_format (longest: "-2.2250738585072014e-308"). */
#define GB_SCORE_BUF 32
/* Redis's MAX_LONG_DOUBLE_CHARS: the longest INCRBYFLOAT input and output. */
#define GB_LONG_DOUBLE_BUF (5 * 1024)

/* Returns 0, or GB_EPARSE ("ERR value is not a valid float"). */
int gb_score_parse(gb_slice s, double *out);

/* A score interval; minex/maxex: the bound is exclusive ("(1.5"). */
typedef struct gb_score_range {
    double min, max;
    bool minex, maxex;
} gb_score_range;

/* Returns 0, or GB_EPARSE ("ERR min or max is not a float"). */
int gb_score_parse_range(gb_slice min, gb_slice max, gb_score_range *r);
/* Whether no score can satisfy r (min > max, or min == max with an exclusive end). */
bool gb_score_range_empty(const gb_score_range *r);

static inline bool gb_score_gte_min(double v, const gb_score_range *r)
{
    return r->minex ? v > r->min : v >= r->min;
}
static inline bool gb_score_lte_max(double v, const gb_score_range *r)
{
    return r->maxex ? v < r->max : v <= r->max;
}
static inline bool gb_score_in_range(double v, const gb_score_range *r)
{
    return gb_score_gte_min(v, r) && gb_score_lte_max(v, r);
}

/* One end of a lexicographic range. inf = -1 for "-" (below every string),
 * +1 for "+" (above every string), 0 for a string bound s (exclusive when ex).
 * s borrows the argument's bytes. */
typedef struct gb_lex_bound {
    gb_slice s;
    int8_t inf;
    bool ex;
} gb_lex_bound;

typedef struct gb_lex_range {
    gb_lex_bound min, max;
} gb_lex_range;

/* Returns 0, or GB_EPARSE ("ERR min or max not valid string range item"). */
int gb_lex_parse_range(gb_slice min, gb_slice max, gb_lex_range *r);
bool gb_lex_range_empty(const gb_lex_range *r);
/* Compares a member with a bound (<0, 0, >0); an infinite bound never ties. */
int gb_lex_cmp_bound(gb_slice m, const gb_lex_bound *b);
static inline bool gb_lex_gte_min(gb_slice m, const gb_lex_range *r)
{
    int c = gb_lex_cmp_bound(m, &r->min);
    return r->min.ex ? c > 0 : c >= 0;
}
static inline bool gb_lex_lte_max(gb_slice m, const gb_lex_range *r)
{
    int c = gb_lex_cmp_bound(m, &r->max);
    return r->max.ex ? c < 0 : c <= 0;
}

/* Writes the reply form of d into buf (GB_SCORE_BUF bytes, NUL-terminated)
 * and returns its length. */
size_t gb_score_format(double d, char *buf);

/* Returns 0, or GB_EPARSE ("ERR value is not a valid float"). The result may
 * be +-inf when the text says so ("inf"); the caller rejects non-finite
 * increments and results with Redis's messages ("ERR value is NaN or
 * Infinity", "ERR increment would produce NaN or Infinity"). */
int gb_parse_long_double(gb_slice s, long double *out);

/* Writes v into buf (cap bytes, NUL-terminated) as Redis's LD_STR_HUMAN and
 * returns the length, or 0 when it does not fit. GB_LONG_DOUBLE_BUF bytes
 * always fit: the largest finite long double has 4,933 integer digits. */
size_t gb_format_long_double(long double v, char *buf, size_t cap);

#endif
