/* Formatting a gb_numa_report for the user. OS-independent (the report is
 * filled only on Linux, but the server formats it wherever it runs). */
#include <stdarg.h>
#include <stdio.h>

#include "numa.h"

/* Appends to buf like snprintf, tracking the length it would have had. */
static void add(char *buf, size_t cap, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void add(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *dst = *len < cap ? buf + *len : NULL;
    int n = vsnprintf(dst, dst ? cap - *len : 0, fmt, ap);
    va_end(ap);
    if (n > 0)
        *len += (size_t)n;
}

static const char *pages_word(size_t n) { return n == 1 ? "page" : "pages"; }

int gb_numa_report_format(const gb_numa_report *rep, char *buf, size_t cap)
{
    size_t len = 0;
    if (cap)
        buf[0] = '\0';
    if (!rep)
        return 0;
    const char *sep = "";
    for (int n = 0; n < GB_NUMA_REPORT_NODES; n++) {
        if (!rep->per_node[n])
            continue;
        add(buf, cap, &len, "%s%zu %s on node %d", sep, rep->per_node[n], pages_word(rep->per_node[n]), n);
        sep = ", ";
    }
    if (rep->pages_beyond) {
        add(buf, cap, &len, "%s%zu %s on nodes >= %d", sep, rep->pages_beyond, pages_word(rep->pages_beyond),
            GB_NUMA_REPORT_NODES);
        sep = ", ";
    }
    if (rep->absent) {
        add(buf, cap, &len, "%s%zu %s not faulted", sep, rep->absent, pages_word(rep->absent));
        sep = ", ";
    }
    if (rep->failed) {
        add(buf, cap, &len, "%s%zu %s unreadable", sep, rep->failed, pages_word(rep->failed));
        sep = ", ";
    }
    if (!*sep)
        add(buf, cap, &len, "no pages");
    add(buf, cap, &len, " (wanted node %d)", rep->node);
    if (cap && len >= cap)
        buf[cap - 1] = '\0';
    return (int)len;
}
