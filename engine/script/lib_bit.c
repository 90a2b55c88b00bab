/*
 * The `bit` library scripts get: LuaBitOp 1.0.2's API (bit.tobit, tohex,
 * bnot, band, bor, bxor, lshift, rshift, arshift, rol, ror, bswap) with the
 * results of the copy Redis 7.0.15 bundles, tohex's CVE-2024-31449 fix
 * included. Written for Goblin Core so that the server's safety does not
 * rest on whichever LuaBitOp build a machine has (the unpatched 1.0.2 that
 * distributions ship overflows a stack buffer on bit.tohex(x, -2^31)).
 *
 * Numbers become 32-bit values the way LuaBitOp does it on doubles: the
 * argument plus 2^52 + 2^51, rounded to nearest by the addition, and the
 * low 32 bits of that sum's representation. That is the number modulo 2^32
 * for everything within +-2^51 (fractions round half to even), and a
 * well-defined bit pattern for the rest (huge values, infinities and NaN
 * give the low bits of their own representation, often 0). Results are
 * signed 32-bit numbers. Every step here is defined C: no signed overflow,
 * no shift by 32, no implementation-defined conversion.
 */
#include <lauxlib.h>
#include <lua.h>
#include <stdint.h>
#include <string.h>

/* 2^52 + 2^51: added to a double, puts its integer part, modulo 2^32, in
 * the low bits of the sum's mantissa. */
#define BIT_MAGIC 6755399441055744.0

/* Argument idx as 32 bits (LuaBitOp's barg): strings that are numbers
 * count as those numbers; anything else is a type error. */
static uint32_t bit_arg(lua_State *L, int idx)
{
    volatile double sum = (double)lua_tonumber(L, idx) + BIT_MAGIC; /* rounded as a double, never wider */
    double d = sum;
    uint64_t rep;
    memcpy(&rep, &d, sizeof rep);
    uint32_t b = (uint32_t)rep;
    if (b == 0 && !lua_isnumber(L, idx))
        luaL_typerror(L, idx, "number");
    return b;
}

/* The 32 bits as the signed number LuaBitOp returns. */
static int bit_push(lua_State *L, uint32_t b)
{
    int32_t s = b <= INT32_MAX ? (int32_t)b : -(int32_t)(~b) - 1;
    lua_pushnumber(L, (lua_Number)s);
    return 1;
}

/* A shift or rotation count: its low 5 bits. */
static unsigned bit_count(lua_State *L, int idx) { return bit_arg(L, idx) & 31u; }

static int bit_tobit(lua_State *L) { return bit_push(L, bit_arg(L, 1)); }

static int bit_bnot(lua_State *L) { return bit_push(L, ~bit_arg(L, 1)); }

static int bit_band(lua_State *L)
{
    uint32_t b = bit_arg(L, 1);
    for (int i = lua_gettop(L); i > 1; i--)
        b &= bit_arg(L, i);
    return bit_push(L, b);
}

static int bit_bor(lua_State *L)
{
    uint32_t b = bit_arg(L, 1);
    for (int i = lua_gettop(L); i > 1; i--)
        b |= bit_arg(L, i);
    return bit_push(L, b);
}

static int bit_bxor(lua_State *L)
{
    uint32_t b = bit_arg(L, 1);
    for (int i = lua_gettop(L); i > 1; i--)
        b ^= bit_arg(L, i);
    return bit_push(L, b);
}

static int bit_lshift(lua_State *L)
{
    uint32_t b = bit_arg(L, 1);
    return bit_push(L, b << bit_count(L, 2));
}

static int bit_rshift(lua_State *L)
{
    uint32_t b = bit_arg(L, 1);
    return bit_push(L, b >> bit_count(L, 2));
}

/* Arithmetic shift: the sign bit fills in (written on unsigned values,
 * where C defines every shift). */
static int bit_arshift(lua_State *L)
{
    uint32_t b = bit_arg(L, 1);
    unsigned n = bit_count(L, 2);
    return bit_push(L, (b & 0x80000000u) ? ~(~b >> n) : b >> n);
}

/* Rotations by 0 leave the value as it is (LuaBitOp's b >> 32 there is
 * undefined in C; x86 gives b, and so does this). */
static int bit_rol(lua_State *L)
{
    uint32_t b = bit_arg(L, 1);
    unsigned n = bit_count(L, 2);
    return bit_push(L, n ? (b << n) | (b >> (32 - n)) : b);
}

static int bit_ror(lua_State *L)
{
    uint32_t b = bit_arg(L, 1);
    unsigned n = bit_count(L, 2);
    return bit_push(L, n ? (b >> n) | (b << (32 - n)) : b);
}

static int bit_bswap(lua_State *L)
{
    uint32_t b = bit_arg(L, 1);
    b = (b >> 24) | ((b >> 8) & 0xff00u) | ((b & 0xff00u) << 8) | (b << 24);
    return bit_push(L, b);
}

/* bit.tohex(x [, n]): the low |n| hex digits of x (n 8 when absent, at
 * most 8 digits), upper case when n is negative. n = -2^31, whose negation
 * does not fit, counts as -(2^31 - 1), as in Redis's fix. */
static int bit_tohex(lua_State *L)
{
    uint32_t b = bit_arg(L, 1);
    uint32_t n = lua_isnone(L, 2) ? 8 : bit_arg(L, 2);
    const char *digits = "0123456789abcdef";
    if (n & 0x80000000u) { /* negative: its magnitude, at least 1 below 2^31 */
        n = n == 0x80000000u ? 0x7fffffffu : ~n + 1;
        digits = "0123456789ABCDEF";
    }
    if (n > 8)
        n = 8;
    char buf[8];
    for (uint32_t i = n; i-- > 0; b >>= 4)
        buf[i] = digits[b & 15];
    lua_pushlstring(L, buf, n);
    return 1;
}

int luaopen_bit(lua_State *L);
int luaopen_bit(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"tobit", bit_tobit}, {"bnot", bit_bnot},     {"band", bit_band},       {"bor", bit_bor},
        {"bxor", bit_bxor},   {"lshift", bit_lshift}, {"rshift", bit_rshift},   {"arshift", bit_arshift},
        {"rol", bit_rol},     {"ror", bit_ror},       {"bswap", bit_bswap},     {"tohex", bit_tohex},
        {NULL, NULL},
    };
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    return 1;
}
