/* The kernel's range-list format ("0-7,64-71", "1,5,9,13"), as in
 * /sys/devices/system/node/node<N>/cpulist. OS-independent. Strict on
 * purpose: a cpulist we misread would place the ring on the wrong node. */
#include <stddef.h>

#include "common/internal.h"
#include "topology.h"

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Reads a CPU number at *p; -1 if there is none or it is >= GB_CPUSET_MAX
 * (checked digit by digit, so "99999999999999999999" cannot overflow). */
static int read_cpu(const char **p)
{
    const char *s = *p;
    long v = 0;
    if (!is_digit(*s))
        return -1;
    while (is_digit(*s)) {
        v = v * 10 + (*s - '0');
        if (v >= GB_CPUSET_MAX)
            return -1;
        s++;
    }
    *p = s;
    return (int)v;
}

static const char *skip_space(const char *s)
{
    while (is_space(*s))
        s++;
    return s;
}

int gb__topo_parse_cpulist(const char *text, gb_cpuset *out, size_t *bad_at)
{
    if (!text || !out)
        return GB_EINVAL;
    gb_cpuset_zero(out);
    const char *p = skip_space(text);
    if (*p == '\0') /* memory-only nodes (CXL, HBM) have an empty cpulist */
        return 0;
    for (;;) {
        int lo = read_cpu(&p);
        if (lo < 0)
            goto bad;
        int hi = lo;
        p = skip_space(p);
        if (*p == '-') {
            p = skip_space(p + 1);
            hi = read_cpu(&p);
            if (hi < lo) /* also catches a missing or oversized upper bound */
                goto bad;
            p = skip_space(p);
        }
        for (int c = lo; c <= hi; c++)
            gb_cpuset_set(out, c);
        if (*p == '\0')
            return 0;
        if (*p != ',')
            goto bad;
        p = skip_space(p + 1);
    }
bad:
    if (bad_at)
        *bad_at = (size_t)(p - text);
    gb_cpuset_zero(out);
    return GB_EPARSE;
}

int gb_topo_parse_cpulist(const char *text, gb_cpuset *out)
{
    size_t at = 0;
    int rc = gb__topo_parse_cpulist(text, out, &at);
    if (rc == GB_EPARSE)
        return gb__fail(rc, NULL, 0, "malformed CPU list at byte %zu", at);
    return rc;
}
