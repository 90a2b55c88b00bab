/*
 * The `struct` library scripts get (Roberto Ierusalimschy's struct 0.2,
 * the one Redis bundles as lua_struct.c): struct.pack(fmt, ...),
 * struct.unpack(fmt, data [, pos]), struct.size(fmt). Written for
 * Goblin Core from the library's documented behaviour, with every size
 * and offset checked against the data (scripts are hostile).
 *
 * Format: '<' little, '>' big, '!'[n] alignment, ' ' ignored, 'x' a zero
 * byte, b/B h/H l/L T i[n]/I[n] integers (lower case signed, n <= 32
 * bytes), f float, d double, c[n] n chars (c0: the string's own length;
 * when unpacking, the previous number), s zero-terminated string.
 */
#include <ctype.h>
#include <lauxlib.h>
#include <limits.h>
#include <lua.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MAXINTSIZE 32
#define MAXALIGN offsetof(struct { char c; double d; }, d)

enum { BIG = 0, LITTLE = 1 };

typedef struct header {
    int endian;
    int align;
} header;

static int native_endian(void)
{
    const union {
        int i;
        char c;
    } u = {1};
    return u.c ? LITTLE : BIG;
}

static int getnum(lua_State *L, const char **fmt, int df)
{
    if (!isdigit((unsigned char)**fmt))
        return df;
    int a = 0;
    do {
        int digit = *((*fmt)++) - '0';
        if (a > (INT_MAX / 10) || a * 10 > INT_MAX - digit)
            luaL_error(L, "integral size overflow");
        a = a * 10 + digit; /* the digit's value, not its character: a * 10 + '7' could pass INT_MAX */
    } while (isdigit((unsigned char)**fmt));
    return a;
}

static size_t optsize(lua_State *L, char opt, const char **fmt)
{
    switch (opt) {
    case 'B':
    case 'b':
        return sizeof(char);
    case 'H':
    case 'h':
        return sizeof(short);
    case 'L':
    case 'l':
        return sizeof(long);
    case 'T':
        return sizeof(size_t);
    case 'f':
        return sizeof(float);
    case 'd':
        return sizeof(double);
    case 'x':
        return 1;
    case 'c':
        return (size_t)getnum(L, fmt, 1);
    case 'i':
    case 'I': {
        int sz = getnum(L, fmt, sizeof(int));
        if (sz > MAXINTSIZE)
            luaL_error(L, "integral size %d is larger than limit of %d", sz, MAXINTSIZE);
        return (size_t)sz;
    }
    default:
        return 0;
    }
}

static size_t gettoalign(size_t len, const header *h, int opt, size_t size)
{
    if (size == 0 || opt == 'c')
        return 0;
    if (size > (size_t)h->align)
        size = (size_t)h->align;
    return (size - (len & (size - 1))) & (size - 1);
}

static void controloptions(lua_State *L, int opt, const char **fmt, header *h)
{
    switch (opt) {
    case ' ':
        return;
    case '>':
        h->endian = BIG;
        return;
    case '<':
        h->endian = LITTLE;
        return;
    case '!': {
        int a = getnum(L, fmt, (int)MAXALIGN);
        if (a <= 0 || (a & (a - 1)) != 0)
            luaL_error(L, "alignment %d is not a power of 2", a);
        h->align = a;
        return;
    }
    default:
        luaL_argerror(L, 1, lua_pushfstring(L, "invalid format option '%c'", opt));
    }
}

static void defaultoptions(header *h)
{
    h->endian = native_endian();
    h->align = 1;
}

static void correctbytes(char *b, size_t size, int endian)
{
    if (endian == native_endian())
        return;
    for (size_t i = 0; i < size / 2; i++) {
        char t = b[i];
        b[i] = b[size - 1 - i];
        b[size - 1 - i] = t;
    }
}

/* A number as the 64-bit integer Redis's x86-64 build of the library makes
 * of it (its C casts, undefined out of range, as that build computes them):
 * negative values through int64 (below -2^63: INT64_MIN), others through
 * uint64 (2^64 and beyond, infinity included: 0), NaN 2^63. Defined here
 * for every double. */
static uint64_t number_to_u64(lua_Number n)
{
    if (isnan(n))
        return (uint64_t)1 << 63;
    if (n < 0)
        return n >= -9223372036854775808.0 ? (uint64_t)(int64_t)n : (uint64_t)1 << 63;
    return n < 18446744073709551616.0 ? (uint64_t)n : 0;
}

static void putinteger(lua_State *L, luaL_Buffer *b, int arg, int endian, size_t size)
{
    uint64_t value = number_to_u64(luaL_checknumber(L, arg));
    char buff[MAXINTSIZE];
    for (size_t i = 0; i < size; i++) {
        buff[endian == LITTLE ? i : size - 1 - i] = (char)(value & 0xff);
        value = i < 7 ? value >> 8 : 0;
    }
    luaL_addlstring(b, buff, size);
}

static int b_pack(lua_State *L)
{
    luaL_Buffer b;
    const char *fmt = luaL_checkstring(L, 1);
    header h;
    int arg = 2;
    size_t totalsize = 0;
    defaultoptions(&h);
    lua_pushnil(L); /* separates the arguments from the buffer */
    luaL_buffinit(L, &b);
    while (*fmt != '\0') {
        int opt = *fmt++;
        size_t size = optsize(L, (char)opt, &fmt);
        size_t toalign = gettoalign(totalsize, &h, opt, size);
        totalsize += toalign;
        while (toalign-- > 0)
            luaL_addchar(&b, '\0');
        switch (opt) {
        case 'b':
        case 'B':
        case 'h':
        case 'H':
        case 'l':
        case 'L':
        case 'T':
        case 'i':
        case 'I':
            putinteger(L, &b, arg++, h.endian, size);
            break;
        case 'x':
            luaL_addchar(&b, '\0');
            break;
        case 'f': {
            float f = (float)luaL_checknumber(L, arg++);
            correctbytes((char *)&f, size, h.endian);
            luaL_addlstring(&b, (char *)&f, size);
            break;
        }
        case 'd': {
            double d = luaL_checknumber(L, arg++);
            correctbytes((char *)&d, size, h.endian);
            luaL_addlstring(&b, (char *)&d, size);
            break;
        }
        case 'c':
        case 's': {
            size_t l;
            const char *s = luaL_checklstring(L, arg++, &l);
            if (size == 0)
                size = l;
            luaL_argcheck(L, l >= size, arg, "string too short");
            luaL_addlstring(&b, s, size);
            if (opt == 's') {
                luaL_addchar(&b, '\0');
                size++;
            }
            break;
        }
        default:
            controloptions(L, opt, &fmt, &h);
        }
        totalsize += size;
    }
    luaL_pushresult(&b);
    return 1;
}

static lua_Number getinteger(const char *buff, int endian, int issigned, size_t size)
{
    uint64_t l = 0;
    for (size_t i = 0; i < size; i++) {
        size_t at = endian == BIG ? i : size - 1 - i;
        l = (l << 8) | (unsigned char)buff[at];
    }
    if (!issigned)
        return (lua_Number)l;
    /* The sign bit is bit size*8 - 1, modulo 64 as x86 takes shift counts:
     * Redis's build of the library shifts by that count for every size, so
     * i9..i32 take their sign from bit 7, 15, ... of the low word, and i0
     * (count -1) from bit 63. */
    unsigned shift = (unsigned)(size * 8 - 1) & 63;
    uint64_t mask = ~(uint64_t)0 << shift;
    if (l & mask)
        l |= mask;
    return l <= INT64_MAX ? (lua_Number)(int64_t)l : -(lua_Number)(~l) - 1;
}

static int b_unpack(lua_State *L)
{
    header h;
    const char *fmt = luaL_checkstring(L, 1);
    size_t ld;
    const char *data = luaL_checklstring(L, 2, &ld);
    /* Redis reads the offset into a size_t: only 0 is refused here; a
     * negative one is a huge position, which every option then finds past
     * the data ("data string too short"), and an empty format returns. */
    lua_Integer start = luaL_optinteger(L, 3, 1);
    luaL_argcheck(L, start != 0, 3, "offset must be 1 or greater");
    size_t pos = (size_t)start - 1;
    int n = 0;
    defaultoptions(&h);
    while (*fmt) {
        int opt = *fmt++;
        size_t size = optsize(L, (char)opt, &fmt);
        pos += gettoalign(pos, &h, opt, size);
        luaL_argcheck(L, size <= ld && pos <= ld - size, 2, "data string too short");
        luaL_checkstack(L, 2, "too many results");
        switch (opt) {
        case 'b':
        case 'B':
        case 'h':
        case 'H':
        case 'l':
        case 'L':
        case 'T':
        case 'i':
        case 'I':
            lua_pushnumber(L, getinteger(data + pos, h.endian, islower(opt), size));
            n++;
            break;
        case 'x':
            break;
        case 'f': {
            float f;
            memcpy(&f, data + pos, size);
            correctbytes((char *)&f, sizeof f, h.endian);
            lua_pushnumber(L, f);
            n++;
            break;
        }
        case 'd': {
            double d;
            memcpy(&d, data + pos, size);
            correctbytes((char *)&d, sizeof d, h.endian);
            lua_pushnumber(L, d);
            n++;
            break;
        }
        case 'c':
            if (size == 0) {
                if (n == 0 || !lua_isnumber(L, -1))
                    luaL_error(L, "format 'c0' needs a previous size");
                size = (size_t)number_to_u64(lua_tonumber(L, -1));
                lua_pop(L, 1);
                n--;
                luaL_argcheck(L, size <= ld && pos <= ld - size, 2, "data string too short");
            }
            lua_pushlstring(L, data + pos, size);
            n++;
            break;
        case 's': {
            const char *e = memchr(data + pos, '\0', ld - pos);
            if (!e)
                luaL_error(L, "unfinished string in data");
            size = (size_t)(e - (data + pos)) + 1;
            lua_pushlstring(L, data + pos, size - 1);
            n++;
            break;
        }
        default:
            controloptions(L, opt, &fmt, &h);
        }
        pos += size;
    }
    lua_pushinteger(L, (lua_Integer)(pos + 1));
    return n + 1;
}

static int b_size(lua_State *L)
{
    header h;
    const char *fmt = luaL_checkstring(L, 1);
    size_t pos = 0;
    defaultoptions(&h);
    while (*fmt) {
        int opt = *fmt++;
        size_t size = optsize(L, (char)opt, &fmt);
        pos += gettoalign(pos, &h, opt, size);
        if (opt == 's')
            luaL_argerror(L, 1, "option 's' has no fixed size");
        else if (opt == 'c' && size == 0)
            luaL_argerror(L, 1, "option 'c0' has no fixed size");
        if (!isalnum(opt))
            controloptions(L, opt, &fmt, &h);
        pos += size;
    }
    lua_pushinteger(L, (lua_Integer)pos);
    return 1;
}

int luaopen_struct(lua_State *L);
int luaopen_struct(lua_State *L)
{
    static const luaL_Reg fns[] = {{"pack", b_pack}, {"unpack", b_unpack}, {"size", b_size}, {NULL, NULL}};
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    return 1;
}
