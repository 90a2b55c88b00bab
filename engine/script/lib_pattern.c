/*
 * Lua 5.1's pattern matching for scripts: string.find, string.match,
 * string.gmatch (and its old name string.gfind) and string.gsub, written
 * for Goblin Core with the results, errors and quirks of the Lua 5.1.5 that
 * Redis 7.0 embeds, and two bounds that Lua 5.1 lacks:
 *
 * - Nesting. Lua 5.1's matcher recurses on the C stack once for every
 *   quantified item or capture it is inside, without a limit, so a long
 *   pattern ('a?' repeated 200,000 times against as many 'a's) overflows
 *   the stack and kills the process; redis-server 7.0.15 dies on it. Past
 *   PATTERN_MAX_DEPTH nested steps the call fails with "pattern too
 *   complex", the error and the limit Lua 5.2 and later give.
 *
 * - Time. A pattern that backtracks (string.rep('a', 40) against
 *   '(.-)(.-)(.-)(.-)(.-)b'), or a subject of hundreds of megabytes, can
 *   keep the matcher busy for minutes inside one C call, where the VM's
 *   instruction-count hook never runs: busy-reply-threshold, SCRIPT KILL
 *   and FUNCTION LOAD's timeout could not reach it, and every other client
 *   would wait. Here the matcher counts its steps and calls the hook the
 *   VM has installed every GB_SCRIPT_C_STEPS (script_steps.h), as the VM's
 *   own count would have.
 *
 * Patterns are C strings (they end at their first zero byte), as in Lua
 * 5.1; subjects and replacements are Lua strings of any bytes. Character
 * classes use <ctype.h> in the C locale, as Lua does.
 */
#include "engine/script/lib_pattern.h"

#include <ctype.h>
#include <lauxlib.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "engine/script/script_steps.h"

/* Lua 5.2's limit (MAXCCALLS in lstrlib.c): deep enough for any pattern a
 * person writes, and at ~100 bytes a level far from any thread's stack. */
#define PATTERN_MAX_DEPTH 200

#define PATTERN_MAX_CAPTURES 32 /* LUA_MAXCAPTURES */
#define CAPTURE_OPEN (-1)       /* a capture whose ')' is not reached yet */
#define CAPTURE_POSITION (-2)   /* '()': captures where it stands */
#define PATTERN_ESCAPE '%'
#define PATTERN_SPECIALS "^$*+?.([%-"

typedef struct matcher {
    lua_State *L;
    const char *subject, *subject_end;
    int depth;
    gb_script_steps steps; /* one per item tried, per byte scanned or copied */
    int captures;
    struct {
        const char *start;
        ptrdiff_t len; /* or CAPTURE_OPEN, CAPTURE_POSITION */
    } capture[PATTERN_MAX_CAPTURES];
} matcher;

static void matcher_init(matcher *m, lua_State *L, const char *subject, size_t len)
{
    m->L = L;
    m->subject = subject;
    m->subject_end = subject + len;
    m->depth = 0;
    m->steps = GB_SCRIPT_STEPS_INIT;
    m->captures = 0;
}

static inline void count_steps(matcher *m, uint64_t n)
{
    gb_script_steps_count(m->L, &m->steps, n);
}

/* ---- one character against one class ------------------------------------------------- */

/* Where the single-character class at p ends: past "%x", "[...]" or one
 * character. */
static const char *class_end(matcher *m, const char *p)
{
    char first = *p++;
    if (first == PATTERN_ESCAPE) {
        if (*p == '\0')
            luaL_error(m->L, "malformed pattern (ends with '%%')");
        return p + 1;
    }
    if (first == '[') {
        if (*p == '^')
            p++;
        /* The first character after '[' or "[^" belongs to the set even
         * when it is ']'. */
        do {
            if (*p == '\0')
                luaL_error(m->L, "malformed pattern (missing ']')");
            if (*p++ == PATTERN_ESCAPE && *p != '\0')
                p++;
        } while (*p != ']');
        return p + 1;
    }
    return p;
}

/* c against "%<cl>": a letter names a class (upper case: its complement);
 * any other character stands for itself. */
static bool in_named_class(int c, int cl)
{
    int in;
    switch (tolower(cl)) {
    case 'a': in = isalpha(c); break;
    case 'c': in = iscntrl(c); break;
    case 'd': in = isdigit(c); break;
    case 'l': in = islower(c); break;
    case 'p': in = ispunct(c); break;
    case 's': in = isspace(c); break;
    case 'u': in = isupper(c); break;
    case 'w': in = isalnum(c); break;
    case 'x': in = isxdigit(c); break;
    case 'z': in = (c == 0); break;
    default: return cl == c;
    }
    return islower(cl) ? in != 0 : in == 0;
}

/* c against the set "[...]" that starts at open and ends at close (its ']'). */
static bool in_set(int c, const char *open, const char *close)
{
    const char *p = open + 1;
    bool negated = *p == '^';
    if (negated)
        p++;
    for (; p < close; p++) {
        if (*p == PATTERN_ESCAPE) {
            p++;
            if (in_named_class(c, (unsigned char)*p))
                return !negated;
        } else if (p[1] == '-' && p + 2 < close) {
            if ((unsigned char)p[0] <= c && c <= (unsigned char)p[2])
                return !negated;
            p += 2;
        } else if ((unsigned char)*p == c) {
            return !negated;
        }
    }
    return negated;
}

/* c against the class [p, ep). */
static bool in_class(int c, const char *p, const char *ep)
{
    switch (*p) {
    case '.': return true;
    case PATTERN_ESCAPE: return in_named_class(c, (unsigned char)p[1]);
    case '[': return in_set(c, p, ep - 1);
    default: return (unsigned char)*p == c;
    }
}

/* Whether the subject's character at s (none at the end) is in [p, ep). */
static bool matches_one(const matcher *m, const char *s, const char *p, const char *ep)
{
    return s < m->subject_end && in_class((unsigned char)*s, p, ep);
}

/* ---- the matcher ----------------------------------------------------------------------- */

static const char *match(matcher *m, const char *s, const char *p);

/* "%bxy" at p (pointing at x): from an x at s to its balancing y. */
static const char *match_balance(matcher *m, const char *s, const char *p)
{
    if (p[0] == '\0' || p[1] == '\0')
        luaL_error(m->L, "unbalanced pattern");
    if (s >= m->subject_end || *s != p[0])
        return NULL;
    const char *start = s;
    int open = 1;
    while (++s < m->subject_end) {
        if (*s == p[1]) {
            if (--open == 0) {
                count_steps(m, (uint64_t)(s - start));
                return s + 1;
            }
        } else if (*s == p[0]) {
            open++;
        }
    }
    count_steps(m, (uint64_t)(s - start));
    return NULL;
}

/* "%fset" with p at '[': s sits where the character before it is not in
 * the set and the one at it is (the subject's edges count as '\0'). */
static const char *match_frontier(matcher *m, const char *s, const char *p, const char **next)
{
    if (*p != '[')
        luaL_error(m->L, "missing '[' after '%%f' in pattern");
    const char *ep = class_end(m, p);
    int before = s == m->subject ? '\0' : (unsigned char)s[-1];
    int at = s < m->subject_end ? (unsigned char)*s : '\0';
    *next = ep;
    if (in_set(before, p, ep - 1) || !in_set(at, p, ep - 1))
        return NULL;
    return s;
}

/* "%1".."%9": the text capture n matched, again at s. */
static const char *match_back_reference(matcher *m, const char *s, int digit)
{
    int n = digit - '1';
    if (n < 0 || n >= m->captures || m->capture[n].len == CAPTURE_OPEN)
        luaL_error(m->L, "invalid capture index");
    /* A position capture's length is negative: as in Lua 5.1, it matches
     * nothing. */
    ptrdiff_t len = m->capture[n].len;
    if (len < 0 || m->subject_end - s < len)
        return NULL;
    count_steps(m, (uint64_t)len);
    return memcmp(m->capture[n].start, s, (size_t)len) == 0 ? s + len : NULL;
}

/* "x*" (and "x+" past its first x): as many as match, then fewer. */
static const char *match_longest(matcher *m, const char *s, const char *p, const char *ep)
{
    ptrdiff_t n = 0;
    while (matches_one(m, s + n, p, ep))
        n++;
    count_steps(m, (uint64_t)n);
    for (; n >= 0; n--) {
        const char *end = match(m, s + n, ep + 1);
        if (end)
            return end;
    }
    return NULL;
}

/* "x-": as few as let the rest match. */
static const char *match_shortest(matcher *m, const char *s, const char *p, const char *ep)
{
    for (;;) {
        const char *end = match(m, s, ep + 1);
        if (end)
            return end;
        if (!matches_one(m, s, p, ep))
            return NULL;
        s++;
    }
}

static const char *open_capture(matcher *m, const char *s, const char *p, ptrdiff_t kind)
{
    int n = m->captures;
    if (n >= PATTERN_MAX_CAPTURES)
        luaL_error(m->L, "too many captures");
    m->capture[n].start = s;
    m->capture[n].len = kind;
    m->captures = n + 1;
    const char *end = match(m, s, p);
    if (!end)
        m->captures--;
    return end;
}

static const char *close_capture(matcher *m, const char *s, const char *p)
{
    int n = m->captures - 1;
    while (n >= 0 && m->capture[n].len != CAPTURE_OPEN)
        n--;
    if (n < 0)
        luaL_error(m->L, "invalid pattern capture");
    m->capture[n].len = s - m->capture[n].start;
    const char *end = match(m, s, p);
    if (!end)
        m->capture[n].len = CAPTURE_OPEN;
    return end;
}

/* The pattern at p against the subject from s: where the match ends, or
 * NULL. Items that cannot fail later (a plain character, %b, %f, a back
 * reference) loop here; the others recurse once per item. */
static const char *match_items(matcher *m, const char *s, const char *p)
{
    for (;;) {
        count_steps(m, 1);
        switch (*p) {
        case '\0':
            return s;
        case '(':
            if (p[1] == ')')
                return open_capture(m, s, p + 2, CAPTURE_POSITION);
            return open_capture(m, s, p + 1, CAPTURE_OPEN);
        case ')':
            return close_capture(m, s, p + 1);
        case '$':
            if (p[1] == '\0')
                return s == m->subject_end ? s : NULL;
            break; /* elsewhere a '$' is itself */
        case PATTERN_ESCAPE:
            if (p[1] == 'b') {
                s = match_balance(m, s, p + 2);
                if (!s)
                    return NULL;
                p += 4;
                continue;
            }
            if (p[1] == 'f') {
                const char *next;
                s = match_frontier(m, s, p + 2, &next);
                if (!s)
                    return NULL;
                p = next;
                continue;
            }
            if (isdigit((unsigned char)p[1])) {
                s = match_back_reference(m, s, (unsigned char)p[1]);
                if (!s)
                    return NULL;
                p += 2;
                continue;
            }
            break; /* "%x": a class */
        default:
            break;
        }
        const char *ep = class_end(m, p);
        bool one = matches_one(m, s, p, ep);
        switch (*ep) {
        case '?':
            if (one) {
                const char *end = match(m, s + 1, ep + 1);
                if (end)
                    return end;
            }
            p = ep + 1;
            continue;
        case '*':
            return match_longest(m, s, p, ep);
        case '+':
            return one ? match_longest(m, s + 1, p, ep) : NULL;
        case '-':
            return match_shortest(m, s, p, ep);
        default:
            if (!one)
                return NULL;
            s++;
            p = ep;
            continue;
        }
    }
}

static const char *match(matcher *m, const char *s, const char *p)
{
    if (++m->depth > PATTERN_MAX_DEPTH)
        luaL_error(m->L, "pattern too complex");
    const char *end = match_items(m, s, p);
    m->depth--;
    return end;
}

/* ---- captures as Lua values ----------------------------------------------------------- */

/* Capture i of the match [s, e); with no captures, capture 0 is the whole
 * match. */
static void push_capture(matcher *m, int i, const char *s, const char *e)
{
    if (i >= m->captures) {
        if (i != 0)
            luaL_error(m->L, "invalid capture index");
        lua_pushlstring(m->L, s, (size_t)(e - s));
        return;
    }
    ptrdiff_t len = m->capture[i].len;
    if (len == CAPTURE_OPEN)
        luaL_error(m->L, "unfinished capture");
    if (len == CAPTURE_POSITION)
        lua_pushinteger(m->L, m->capture[i].start - m->subject + 1);
    else
        lua_pushlstring(m->L, m->capture[i].start, (size_t)len);
}

/* Every capture, or the whole match when there are none and s is given;
 * returns how many values it pushed. */
static int push_captures(matcher *m, const char *s, const char *e)
{
    int n = (m->captures == 0 && s) ? 1 : m->captures;
    luaL_checkstack(m->L, n, "too many captures");
    for (int i = 0; i < n; i++)
        push_capture(m, i, s, e);
    return n;
}

/* ---- string.find, string.match ------------------------------------------------------- */

/* Lua 5.1's relative position: negative counts back from the end. */
static ptrdiff_t relative_position(ptrdiff_t pos, size_t len)
{
    if (pos < 0)
        pos += (ptrdiff_t)len + 1;
    return pos >= 0 ? pos : 0;
}

/* The first occurrence of the bytes [needle, +nlen) in [hay, +hlen). */
static const char *find_plain(const char *hay, size_t hlen, const char *needle, size_t nlen)
{
    if (nlen == 0)
        return hay;
    while (hlen >= nlen) {
        const char *first = memchr(hay, needle[0], hlen - nlen + 1);
        if (!first)
            return NULL;
        if (memcmp(first + 1, needle + 1, nlen - 1) == 0)
            return first;
        hlen -= (size_t)(first + 1 - hay);
        hay = first + 1;
    }
    return NULL;
}

static int find_or_match(lua_State *L, bool find)
{
    size_t len, plen;
    const char *s = luaL_checklstring(L, 1, &len);
    const char *p = luaL_checklstring(L, 2, &plen);
    ptrdiff_t init = relative_position(luaL_optinteger(L, 3, 1), len) - 1;
    if (init < 0)
        init = 0;
    else if ((size_t)init > len)
        init = (ptrdiff_t)len;
    /* The plain search compares all plen bytes; the pattern below ends at
     * its first zero byte, and so does this look for specials (Lua 5.1). */
    if (find && (lua_toboolean(L, 4) || strpbrk(p, PATTERN_SPECIALS) == NULL)) {
        const char *at = find_plain(s + init, len - (size_t)init, p, plen);
        if (at) {
            lua_pushinteger(L, at - s + 1);
            lua_pushinteger(L, at - s + (ptrdiff_t)plen);
            return 2;
        }
        lua_pushnil(L);
        return 1;
    }
    matcher m;
    matcher_init(&m, L, s, len);
    bool anchored = *p == '^';
    if (anchored)
        p++;
    const char *from = s + init;
    do {
        m.captures = 0;
        const char *end = match(&m, from, p);
        if (end) {
            if (!find)
                return push_captures(&m, from, end);
            lua_pushinteger(L, from - s + 1);
            lua_pushinteger(L, end - s);
            return push_captures(&m, NULL, NULL) + 2;
        }
    } while (from++ < m.subject_end && !anchored);
    lua_pushnil(L);
    return 1;
}

static int pattern_find(lua_State *L)
{
    return find_or_match(L, true);
}

static int pattern_match(lua_State *L)
{
    return find_or_match(L, false);
}

/* ---- string.gmatch --------------------------------------------------------------------- */

/* The iterator: upvalues are the subject, the pattern and where the next
 * search starts. A '^' is an ordinary character here, as in Lua 5.1. */
static int gmatch_next(lua_State *L)
{
    size_t len;
    const char *s = lua_tolstring(L, lua_upvalueindex(1), &len);
    const char *p = lua_tostring(L, lua_upvalueindex(2));
    matcher m;
    matcher_init(&m, L, s, len);
    for (const char *from = s + (size_t)lua_tointeger(L, lua_upvalueindex(3)); from <= m.subject_end; from++) {
        m.captures = 0;
        const char *end = match(&m, from, p);
        if (end) {
            lua_Integer next = end - s;
            if (end == from) /* an empty match: move on by one */
                next++;
            lua_pushinteger(L, next);
            lua_replace(L, lua_upvalueindex(3));
            return push_captures(&m, from, end);
        }
    }
    return 0;
}

static int pattern_gmatch(lua_State *L)
{
    luaL_checkstring(L, 1);
    luaL_checkstring(L, 2);
    lua_settop(L, 2);
    lua_pushinteger(L, 0);
    lua_pushcclosure(L, gmatch_next, 3);
    return 1;
}

/* ---- string.gsub ----------------------------------------------------------------------- */

/* Appends n bytes: a few a byte at a time, as Lua does; more into the
 * buffer's free room, or as one string (Lua 5.1's luaL_addlstring goes a
 * byte at a time however many there are). */
static void buffer_add(luaL_Buffer *b, const char *bytes, size_t n)
{
    if (n <= 8) {
        while (n--)
            luaL_addchar(b, *bytes++);
        return;
    }
    size_t room = (size_t)(b->buffer + LUAL_BUFFERSIZE - b->p);
    if (n <= room) {
        memcpy(b->p, bytes, n);
        b->p += n;
        return;
    }
    lua_pushlstring(b->L, bytes, n);
    luaL_addvalue(b);
}

/* A replacement string: "%0" is the whole match, "%1".."%9" a capture,
 * '%' before anything else that character. A '%' that ends the string
 * adds a zero byte (Lua 5.1 reads its terminator). */
static void add_replacement_string(matcher *m, luaL_Buffer *b, const char *s, const char *e)
{
    size_t len;
    const char *r = lua_tolstring(m->L, 3, &len);
    count_steps(m, len);
    for (size_t i = 0; i < len; i++) {
        if (r[i] != PATTERN_ESCAPE) {
            size_t plain = 1;
            while (i + plain < len && r[i + plain] != PATTERN_ESCAPE)
                plain++;
            buffer_add(b, r + i, plain);
            i += plain - 1;
            continue;
        }
        i++;
        int c = i < len ? (unsigned char)r[i] : '\0';
        if (!isdigit(c)) {
            luaL_addchar(b, (char)c);
        } else if (c == '0') {
            buffer_add(b, s, (size_t)(e - s));
        } else {
            push_capture(m, c - '1', s, e);
            luaL_addvalue(b);
        }
    }
}

/* What replaces the match [s, e): argument 3 as a string, called as a
 * function with the captures, or indexed as a table by the first; false
 * or nil keeps the match. */
static void add_replacement(matcher *m, luaL_Buffer *b, const char *s, const char *e)
{
    lua_State *L = m->L;
    switch (lua_type(L, 3)) {
    case LUA_TFUNCTION: {
        lua_pushvalue(L, 3);
        int n = push_captures(m, s, e);
        lua_call(L, n, 1);
        break;
    }
    case LUA_TTABLE:
        push_capture(m, 0, s, e);
        lua_gettable(L, 3);
        break;
    default: /* a string or a number */
        add_replacement_string(m, b, s, e);
        return;
    }
    if (!lua_toboolean(L, -1)) {
        lua_pop(L, 1);
        lua_pushlstring(L, s, (size_t)(e - s));
    } else if (!lua_isstring(L, -1)) {
        luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
    }
    luaL_addvalue(b);
}

static int pattern_gsub(lua_State *L)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    const char *p = luaL_checkstring(L, 2);
    int replacement = lua_type(L, 3);
    /* Lua 5.1's luaL_optint: the default too goes through an int. */
    int max_replacements = (int)luaL_optinteger(L, 4, (lua_Integer)(len + 1));
    luaL_argcheck(L,
                  replacement == LUA_TNUMBER || replacement == LUA_TSTRING || replacement == LUA_TFUNCTION ||
                      replacement == LUA_TTABLE,
                  3, "string/function/table expected");
    bool anchored = *p == '^';
    if (anchored)
        p++;
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    matcher m;
    matcher_init(&m, L, s, len);
    int replaced = 0;
    while (replaced < max_replacements) {
        m.captures = 0;
        const char *end = match(&m, s, p);
        if (end) {
            replaced++;
            add_replacement(&m, &b, s, end);
        }
        if (end && end > s)
            s = end;
        else if (s < m.subject_end)
            luaL_addchar(&b, *s++);
        else
            break;
        if (anchored)
            break;
    }
    buffer_add(&b, s, (size_t)(m.subject_end - s));
    luaL_pushresult(&b);
    lua_pushinteger(L, replaced);
    return 2;
}

void gb_lua_install_patterns(lua_State *L)
{
    lua_pushcfunction(L, pattern_find);
    lua_setfield(L, -2, "find");
    lua_pushcfunction(L, pattern_match);
    lua_setfield(L, -2, "match");
    lua_pushcfunction(L, pattern_gsub);
    lua_setfield(L, -2, "gsub");
    /* One function under both names: string.gfind == string.gmatch, as in
     * Lua 5.1 built with LUA_COMPAT_GFIND (Redis's and Debian's). */
    lua_pushcfunction(L, pattern_gmatch);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "gmatch");
    lua_setfield(L, -2, "gfind");
}
