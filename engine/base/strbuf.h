/*
 * A growable byte string for text the engine builds before replying or
 * writing it (ACL LIST lines, the aclfile). Always NUL-terminated once
 * anything was added; grows geometrically through gb_realloc.
 */
#ifndef GB_ENGINE_STRBUF_H
#define GB_ENGINE_STRBUF_H

#include "engine/base/common.h"

typedef struct gb_strbuf {
    char *p; /* NULL until something is added */
    size_t len, cap;
} gb_strbuf;

void gb_strbuf_add(gb_strbuf *b, const void *s, size_t n);
static inline void gb_strbuf_adds(gb_strbuf *b, const char *s) { gb_strbuf_add(b, s, strlen(s)); }
static inline void gb_strbuf_addc(gb_strbuf *b, char c) { gb_strbuf_add(b, &c, 1); }
void gb_strbuf_printf(gb_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Drops a trailing byte c if the text ends with it (the space after the
 * last word of a list). */
void gb_strbuf_trim_last(gb_strbuf *b, char c);
static inline const char *gb_strbuf_cstr(const gb_strbuf *b) { return b->p ? b->p : ""; }
static inline void gb_strbuf_reset(gb_strbuf *b) { b->len = 0; if (b->p) b->p[0] = '\0'; }
void gb_strbuf_free(gb_strbuf *b);

#endif
