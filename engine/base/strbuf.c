#include "engine/base/strbuf.h"

#include <stdarg.h>
#include <stdio.h>

#include "engine/base/mem.h"

static void reserve(gb_strbuf *b, size_t more)
{
    if (b->len + more + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + more + 1)
        cap *= 2;
    b->p = gb_realloc(b->p, cap);
    b->cap = cap;
}

void gb_strbuf_add(gb_strbuf *b, const void *s, size_t n)
{
    reserve(b, n);
    if (n)
        memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void gb_strbuf_printf(gb_strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n <= 0)
        return;
    reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void gb_strbuf_trim_last(gb_strbuf *b, char c)
{
    if (b->len && b->p[b->len - 1] == c)
        b->p[--b->len] = '\0';
}

void gb_strbuf_free(gb_strbuf *b)
{
    gb_free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}
