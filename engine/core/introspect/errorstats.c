#include "engine/core/introspect/errorstats.h"

#include <string.h>

#include "engine/base/mem.h"
#include "engine/core/engine.h"

void gb_errorstats_count(gb_errorstats *st, const char *err, size_t len)
{
    const char *space = memchr(err, ' ', len < 32 ? len : 32);
    size_t k = space ? (size_t)(space - err) : 3;
    const char *code = space ? err : "ERR";
    if (k == 0 || k >= sizeof st->v[0].code) {
        code = "ERR";
        k = 3;
    }
    size_t lo = 0, hi = st->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strncmp(st->v[mid].code, code, k);
        if (c == 0)
            c = st->v[mid].code[k] ? 1 : 0; /* a longer code sorts after its prefix */
        if (c == 0) {
            st->v[mid].count++;
            return;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (st->n == GB_ERRORSTATS_MAX) {
        if (!st->full_logged)
            gb_log(GB_LOG_WARNING, "Errorstats stopped tracking new error codes: %d codes already seen",
                   GB_ERRORSTATS_MAX);
        st->full_logged = true;
        return;
    }
    st->v = gb_realloc(st->v, (st->n + 1) * sizeof *st->v);
    memmove(&st->v[lo + 1], &st->v[lo], (st->n - lo) * sizeof *st->v);
    memcpy(st->v[lo].code, code, k);
    st->v[lo].code[k] = '\0';
    st->v[lo].count = 1;
    st->n++;
}

void gb_errorstats_reset(gb_errorstats *st)
{
    gb_free(st->v);
    *st = (gb_errorstats){0};
}
