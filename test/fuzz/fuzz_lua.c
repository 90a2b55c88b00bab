/*
 * Fuzz harness: the conversions between replies and Lua values
 * (engine/script/script_convert.c, docs/scripting.md "Conversions"), and
 * scripts run by EVAL on hostile data (the cjson, cmsgpack and struct
 * decoders, the redis.* API, the sandbox).
 *
 * Input: [mode u8] then
 *   mode bit 0 clear, "reply": one RESP3 reply, as the engine's reply
 *     calls would make it (+ - : $ * , _ % ~ = >; "$-1" and "*-1"; at most
 *     GB_LUA_SINK_DEPTH aggregates deep, as no command nests near that).
 *     It is replayed into the Lua sink as redis.call's reply (gb_reply_*
 *     on the script client, aggregates deferred when bit 3 is set), under
 *     the script's protocol 3 when bit 1 is set (redis.setresp), else 2;
 *     the Lua value it became is then the script's result, written for a
 *     RESP3 caller when bit 2 is set, else a RESP2 one.
 *   mode bit 0 set, "eval": "<script>\0<data>": EVAL <script> 1 k <data>
 *     on an engine (HELLO 3 first when bit 1 is set), so ARGV[1] is the
 *     data: cjson.decode(ARGV[1]), cmsgpack.unpack(ARGV[1]), ...
 *
 * Checks:
 *   reply  the sink built exactly one value, closed every table and said
 *          "error" exactly for an error reply; the result is one
 *          well-formed reply of the caller's protocol (strictly parsed:
 *          lengths, CRLF, no RESP3 type in RESP2) and is what Redis's rules
 *          make of the input: the same strings, integers through a double,
 *          errors with a code, nulls as false (RESP2) or nil (RESP3, which
 *          ends an array), doubles as strings (RESP2) or doubles, maps and
 *          sets as flat arrays (RESP2) or as maps and sets of the input's
 *          pairs and members (RESP3: a Lua table's order is its own).
 *   eval   the caller got exactly one well-formed reply of its protocol;
 *          every value the script left passes its structure's check.
 *
 * A script is bounded: busy-reply-threshold is 1 ms and the transport's
 * busy pump (engine/core/request/script_state.h) is played by the harness, which
 * sends SCRIPT KILL through the gate, or stops a script that wrote as
 * SHUTDOWN NOSAVE would (without shutting down); Lua's heap is bounded by
 * maxmemory's floor (script_vm.h) and one allocation by proto-max-bulk-len
 * (1 MB). string.rep is refused past that limit before it copies
 * (script_vm.c), and the pattern matchers call the hook as the VM does
 * (lib_pattern.c), so a backtracking pattern is killed like a loop.
 */
#include "fuzz_util.h"

#include <math.h>

#include "engine/base/score.h"
#include "engine/core/request/client.h"
#include "engine/script/script_convert.h"
#include "engine/script/script_run.h"
#include "engine/script/script_vm.h"
#include "transport/resp/resp_writer.h"

#define MAX_SCRIPT 4096
#define MAX_DATA (64 * 1024)
/* A reply's nesting in the output: a self-referencing table recurses to
 * Lua's stack limit (a few thousand levels) before its error. */
#define MAX_OUT_DEPTH 100000

/* ---- a strict RESP parser ------------------------------------------------------------------ */

/* What a reply parses into. Nulls ("$-1", "*-1", "_") are type 'N'. */
typedef struct rnode {
    char type;
    const uint8_t *s; /* text of + - $ , ( = (for '=' without its "fmt:") */
    const uint8_t *fmt; /* '=': its three format bytes */
    size_t len;
    int64_t v; /* ':', '#' (1 true, 0 false) */
    double d;  /* ',' */
    size_t n;  /* aggregates: elements (a map: 2 per pair) */
    struct rnode *kids;
} rnode;

static void rnode_free(rnode *r)
{
    for (size_t i = 0; i < r->n && r->kids; i++)
        rnode_free(&r->kids[i]);
    free(r->kids);
    r->kids = NULL;
}

enum { P_RESP2 = 2, P_RESP3 = 3, P_INPUT = 4 };

typedef struct rparser {
    const uint8_t *p;
    size_t len, pos;
    int proto;
    int max_depth;
} rparser;

/* The line after the type byte up to CRLF; no CR or LF inside. */
static bool take_line(rparser *rp, const uint8_t **line, size_t *n)
{
    size_t start = rp->pos;
    for (size_t i = start; i < rp->len; i++) {
        if (rp->p[i] == '\n')
            return false;
        if (rp->p[i] == '\r') {
            if (i + 1 >= rp->len || rp->p[i + 1] != '\n')
                return false;
            *line = rp->p + start;
            *n = i - start;
            rp->pos = i + 2;
            return true;
        }
    }
    return false;
}

/* A canonical integer: no '+', no leading zero, no "-0", fits int64. */
static bool line_int(const uint8_t *s, size_t n, int64_t *out)
{
    bool neg = n > 0 && s[0] == '-';
    size_t i = neg;
    if (i == n || n - i > 19 || (s[i] == '0' && n - i > 1) || (neg && s[i] == '0'))
        return false;
    uint64_t v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v > (uint64_t)INT64_MAX + neg)
        return false;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

static bool line_double(const uint8_t *s, size_t n, double *out)
{
    char buf[64];
    if (n == 0 || n >= sizeof buf || memchr(s, 0, n))
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    if (!strcmp(buf, "inf") || !strcmp(buf, "-inf") || !strcmp(buf, "nan")) {
        *out = buf[0] == 'n' ? NAN : buf[0] == '-' ? -INFINITY : INFINITY;
        return true;
    }
    if (strchr(buf, 'n') || strchr(buf, 'N') || strchr(buf, 'x') || strchr(buf, 'X') || buf[0] == ' ')
        return false; /* strtod's inf/nan spellings and hex floats are not RESP */
    char *end;
    *out = strtod(buf, &end);
    return *end == '\0';
}

static bool parse_node(rparser *rp, rnode *r, int depth)
{
    memset(r, 0, sizeof *r);
    if (rp->pos >= rp->len)
        return false;
    char t = (char)rp->p[rp->pos++];
    const uint8_t *line;
    size_t n;
    if (!take_line(rp, &line, &n))
        return false;
    bool r3 = rp->proto != P_RESP2;
    r->type = t;
    switch (t) {
    case '+':
    case '-':
        r->s = line;
        r->len = n;
        /* The engine's status and error texts are C strings. */
        return rp->proto != P_INPUT || !memchr(line, 0, n);
    case ':':
        return line_int(line, n, &r->v);
    case ',':
        r->s = line;
        r->len = n;
        return r3 && line_double(line, n, &r->d);
    case '_':
        r->type = 'N';
        return r3 && n == 0;
    case '(':
        r->s = line;
        r->len = n;
        return r3;
    case '#':
        r->v = n == 1 && line[0] == 't';
        return r3 && n == 1 && (line[0] == 't' || line[0] == 'f');
    case '$':
    case '=': {
        int64_t len;
        if (!line_int(line, n, &len))
            return false;
        if (len == -1 && t == '$' && rp->proto != P_RESP3) {
            r->type = 'N';
            return true;
        }
        if (len < 0 || (uint64_t)len > rp->len - rp->pos || rp->len - rp->pos - (size_t)len < 2)
            return false;
        r->s = rp->p + rp->pos;
        r->len = (size_t)len;
        rp->pos += (size_t)len;
        if (rp->p[rp->pos] != '\r' || rp->p[rp->pos + 1] != '\n')
            return false;
        rp->pos += 2;
        if (t == '=') {
            /* "fmt:" and the text (a script may choose the format) */
            if (!r3 || r->len < 4 || r->s[3] != ':')
                return false;
            r->fmt = r->s;
            r->s += 4;
            r->len -= 4;
        }
        return true;
    }
    case '*':
    case '%':
    case '~':
    case '>': {
        int64_t cnt;
        if (!line_int(line, n, &cnt))
            return false;
        if (t != '*' && (!r3 || (t == '>' && rp->proto != P_INPUT)))
            return false;
        if (cnt == -1 && t == '*' && rp->proto != P_RESP3) {
            r->type = 'N';
            r->v = 1; /* a null array */
            return true;
        }
        if (cnt < 0 || depth >= rp->max_depth)
            return false;
        uint64_t elems = (uint64_t)cnt * (t == '%' ? 2 : 1);
        /* Each element takes at least 3 bytes: no allocation on a count. */
        if ((uint64_t)cnt > (rp->len - rp->pos) / 3 || elems > (rp->len - rp->pos) / 3)
            return false;
        r->n = (size_t)elems;
        r->kids = calloc(r->n ? r->n : 1, sizeof *r->kids);
        FUZZ_CHECK(r->kids != NULL, "out of memory");
        for (size_t i = 0; i < r->n; i++)
            if (!parse_node(rp, &r->kids[i], depth + 1)) {
                r->n = i + 1;
                return false;
            }
        return true;
    }
    default:
        return false;
    }
}

/* Exactly one reply in p[0..len). On false r holds what was parsed. */
static bool parse_reply(const uint8_t *p, size_t len, int proto, int max_depth, rnode *r)
{
    rparser rp = {p, len, 0, proto, max_depth};
    return parse_node(&rp, r, 0) && rp.pos == len;
}

/* ---- reply mode: input -> sink -> Lua value -> reply ------------------------------------------ */

/* Replays the reply r as a command would make it, to c. */
static void replay(gb_client *c, const rnode *r, bool deferred)
{
    switch (r->type) {
    case '+':
    case '-': {
        char *z = malloc(r->len + 1);
        FUZZ_CHECK(z != NULL, "out of memory");
        memcpy(z, r->s, r->len);
        z[r->len] = '\0';
        if (r->type == '+')
            gb_reply_status(c, z);
        else
            gb_reply_error(c, z);
        free(z);
        return;
    }
    case ':':
        gb_reply_int(c, r->v);
        return;
    case ',':
        gb_reply_double(c, r->d);
        return;
    case '$':
        gb_reply_bulk(c, (const char *)r->s, r->len);
        return;
    case '=': {
        char fmt[4] = {(char)r->fmt[0], (char)r->fmt[1], (char)r->fmt[2], '\0'};
        gb_reply_verbatim_format(c, fmt, (const char *)r->s, r->len);
        return;
    }
    case '(':
        gb_reply_big_number(c, (const char *)r->s, r->len);
        return;
    case '#':
        gb_reply_bool(c, r->v != 0);
        return;
    case 'N':
        if (r->v)
            gb_reply_nil_array(c);
        else
            gb_reply_nil(c);
        return;
    default:
        break;
    }
    int64_t n = (int64_t)r->n;
    size_t h = 0;
    if (deferred && r->type != '>')
        h = gb_reply_array_deferred(c);
    else if (r->type == '*')
        gb_reply_array(c, n);
    else if (r->type == '%')
        gb_reply_map(c, n / 2);
    else if (r->type == '~')
        gb_reply_set(c, n);
    else
        gb_reply_push(c, n);
    for (size_t i = 0; i < r->n; i++)
        replay(c, &r->kids[i], deferred);
    if (deferred && r->type != '>') {
        if (r->type == '%')
            gb_reply_set_deferred_map(c, h, n / 2);
        else if (r->type == '~')
            gb_reply_set_deferred_set(c, h, n);
        else
            gb_reply_set_deferred(c, h, n);
    }
}

/* Redis's (long long) cast of a number, as script_convert.c defines it. */
static int64_t as_integer(double d)
{
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
        return INT64_MIN;
    return (int64_t)d;
}

static bool same_text(const rnode *o, const void *s, size_t n) { return o->len == n && (n == 0 || !memcmp(o->s, s, n)); }

/* Whether the output o is what the input i becomes under the script
 * protocol sr, written for a caller of protocol out (Redis's rules,
 * docs/scripting.md). Nulls inside arrays are handled by the caller. */
static bool converts_to(const rnode *i, const rnode *o, int sr, int out)
{
    char buf[GB_SCORE_BUF + 8];
    switch (i->type) {
    case '+':
        return o->type == '+' && same_text(o, i->s, i->len);
    case '-':
        /* "-CODE msg" keeps its code; a text without one gets ERR. */
        if (memchr(i->s, ' ', i->len))
            return o->type == '-' && same_text(o, i->s, i->len);
        return o->type == '-' && o->len == i->len + 4 && !memcmp(o->s, "ERR ", 4) &&
               !memcmp(o->s + 4, i->s, i->len);
    case ':':
        return o->type == ':' && o->v == as_integer((double)i->v);
    case '$':
        return o->type == '$' && same_text(o, i->s, i->len);
    case '=': {
        /* A RESP3 script gets {verbatim_string=} and returns it as one to a
         * RESP3 caller, its format cut at a NUL and space-padded (a C
         * string, as Redis); otherwise it is the string. */
        if (!(sr == 3 && out == 3))
            return o->type == '$' && same_text(o, i->s, i->len);
        char fmt[3] = {' ', ' ', ' '};
        for (int k = 0; k < 3 && i->fmt[k]; k++)
            fmt[k] = (char)i->fmt[k];
        return o->type == '=' && same_text(o, i->s, i->len) && !memcmp(o->fmt, fmt, 3);
    }
    case '(':
        /* {big_number=} for a RESP3 script; a RESP2 caller gets the digits as a string. */
        return o->type == (sr == 3 && out == 3 ? '(' : '$') && same_text(o, i->s, i->len);
    case '#':
        /* A RESP3 script gets a boolean and returns one (RESP2 caller: 1 or
         * 0); a RESP2 script reads it as the integer. */
        if (sr == 3 && out == 3)
            return o->type == '#' && o->v == i->v;
        return o->type == ':' && o->v == i->v;
    case 'N':
        return o->type == 'N';
    case ',': {
        size_t n = gb_score_format(i->d, buf);
        if (sr == 3 && out == 3)
            return o->type == ',' && same_text(o, buf, n);
        return o->type == '$' && same_text(o, buf, n);
    }
    default:
        break;
    }
    bool pairs = i->type == '%', members = i->type == '~';
    if (sr == 2 || !(pairs || members)) {
        /* An array (RESP2: every aggregate): the elements in order, up to
         * the first nil (a RESP3 null; RESP2's false reads as null). */
        size_t want = 0;
        while (want < i->n && !(sr == 3 && i->kids[want].type == 'N'))
            want++;
        if (o->type != '*' || o->n != want)
            return false;
        for (size_t k = 0; k < want; k++)
            if (!converts_to(&i->kids[k], &o->kids[k], sr, out))
                return false;
        return true;
    }
    /* RESP3 map or set: {map=} / {set=} as a map or set (a flat array for
     * a RESP2 caller) of the input's pairs or members in the table's own
     * order, duplicates and nil keys or values gone. */
    char want_type = out == 3 ? (pairs ? '%' : '~') : '*';
    size_t step = pairs ? 2 : 1;
    if (o->type != want_type || o->n % step || o->n > i->n)
        return false;
    for (size_t k = 0; k < o->n; k += step) {
        bool found = false;
        for (size_t j = 0; j + step <= i->n && !found; j += step) {
            const rnode *ik = &i->kids[j];
            if (ik->type == 'N' || (pairs && i->kids[j + 1].type == 'N'))
                continue;
            found = converts_to(ik, &o->kids[k], sr, out) &&
                    (!pairs || converts_to(&i->kids[j + 1], &o->kids[k + 1], sr, out));
        }
        if (!found)
            return false;
    }
    return true;
}

typedef struct reply_rig {
    gb_engine *eng;
    gb_lua_vm *vm;
    uint64_t rand;
    gb_lua_sink sink;
    gb_client *script; /* replies into the sink, as the scripts' client */
    gb_client *caller; /* replies into out */
    gb_outbuf out;
} reply_rig;

static reply_rig *reply_rig_get(void)
{
    static reply_rig *g;
    if (g)
        return g;
    g = calloc(1, sizeof *g);
    FUZZ_CHECK(g != NULL, "out of memory");
    g->eng = fuzz_engine_new(NULL, NULL);
    g->rand = GB_RAND48_INITIAL;
    g->vm = gb_lua_vm_new(g->eng, &g->rand, gb_script_api_register);
    gb_outbuf_init(&g->out);
    g->script = gb_client_new(g->eng, &gb_lua_sink_ops, &g->sink, NULL, NULL, GB_CLIENT_AUTHED);
    g->caller = gb_client_new(g->eng, &gb_resp2_reply_ops, &g->out, NULL, NULL, GB_CLIENT_AUTHED);
    return g;
}

static void run_reply(uint8_t mode, const uint8_t *p, size_t n)
{
    rnode in;
    bool ok = parse_reply(p, n, P_INPUT, GB_LUA_SINK_DEPTH, &in);
    if (!ok) {
        rnode_free(&in);
        return;
    }
    int sr = mode & 2 ? 3 : 2, out = mode & 4 ? 3 : 2;
    reply_rig *g = reply_rig_get();
    lua_State *L = g->vm->L;
    int top = lua_gettop(L);

    /* redis.call: the command replies into the interpreter */
    gb_lua_sink_begin(&g->sink, L, sr);
    g->vm->in_command = true;
    replay(g->script, &in, mode & 8);
    g->vm->in_command = false;
    FUZZ_CHECK(g->sink.depth == 0 && g->sink.values == 1, "sink: depth %d, %d values", g->sink.depth,
               g->sink.values);
    FUZZ_CHECK(lua_gettop(L) == top + 1, "sink left %d values on the stack", lua_gettop(L) - top);
    FUZZ_CHECK(g->sink.error == (in.type == '-'), "sink: error %d for a reply of type %c", g->sink.error, in.type);

    /* return it: the script's result to its caller */
    g->out.len = 0;
    gb_client_set_resp(g->caller, out);
    gb_lua_reply(g->caller, L, sr);
    FUZZ_CHECK(lua_gettop(L) == top, "the reply left %d values on the stack", lua_gettop(L) - top);
    FUZZ_CHECK(!gb_outbuf_oom(&g->out), "out of memory");

    rnode res;
    ok = parse_reply((const uint8_t *)g->out.data, g->out.len, out, MAX_OUT_DEPTH, &res);
    FUZZ_CHECK(ok, "not one well-formed RESP%d reply: %.*s", out, (int)GB_MIN(g->out.len, 300), g->out.data);
    FUZZ_CHECK(converts_to(&in, &res, sr, out), "script RESP%d, caller RESP%d:\n  reply:  %.*s\n  result: %.*s", sr,
               out, (int)GB_MIN(n, 300), p, (int)GB_MIN(g->out.len, 300), g->out.data);
    rnode_free(&res);
    rnode_free(&in);
    if (g->out.cap > (1 << 20)) {
        gb_outbuf_free(&g->out);
        gb_outbuf_init(&g->out);
    }
    /* Lua's garbage now and then: the harness runs millions of inputs */
    static unsigned runs;
    if (++runs % 1024 == 0)
        lua_gc(L, LUA_GCCOLLECT, 0);
}

/* ---- eval mode ------------------------------------------------------------------------------- */

static void eval_settings(gb_settings *s, void *ctx)
{
    (void)ctx;
    char err[256];
    FUZZ_CHECK(gb_config_set(s, "busy-reply-threshold", "1", false, err, sizeof err) == 0, "%s", err);
    FUZZ_CHECK(gb_config_set(s, "maxmemory", "32mb", false, err, sizeof err) == 0, "%s", err);
}

typedef struct eval_rig {
    gb_engine *eng;
    gb_outbuf killer_out;
    gb_client *killer; /* the other client, whose SCRIPT KILL the pump serves */
    unsigned runs;
} eval_rig;

/* The transport's busy pump: another client's SCRIPT KILL arrives; a
 * script that wrote cannot be killed (UNKILLABLE), so then SHUTDOWN
 * NOSAVE's flag stops it (the harness clears it after EVAL). */
static void busy_pump(void *ctx)
{
    eval_rig *g = ctx;
    g->killer_out.len = 0;
    gb_slice argv[2] = {gb_slice_cstr("SCRIPT"), gb_slice_cstr("KILL")};
    gb_gate_execute(g->killer, 2, argv);
    FUZZ_CHECK(g->killer_out.len > 0, "SCRIPT KILL got no reply");
    if (g->killer_out.len > 11 && !memcmp(g->killer_out.data, "-UNKILLABLE", 11))
        g->eng->shutdown_requested = true;
}

static eval_rig *eval_rig_get(void)
{
    static eval_rig *g;
    if (g)
        return g;
    g = calloc(1, sizeof *g);
    FUZZ_CHECK(g != NULL, "out of memory");
    g->eng = fuzz_engine_new(eval_settings, NULL);
    fuzz_engine_deny_commands(g->eng);
    gb_outbuf_init(&g->killer_out);
    g->killer = gb_client_new(g->eng, &gb_resp2_reply_ops, &g->killer_out, NULL, NULL, GB_CLIENT_AUTHED);
    g->eng->busy_pump.pump = busy_pump;
    g->eng->busy_pump.ctx = g;
    return g;
}

static void run_eval(uint8_t mode, const uint8_t *p, size_t n)
{
    const uint8_t *nul = memchr(p, 0, n);
    size_t slen = nul ? (size_t)(nul - p) : n;
    const uint8_t *data = nul ? nul + 1 : p + n;
    size_t dlen = nul ? n - slen - 1 : 0;
    if (slen > MAX_SCRIPT || dlen > MAX_DATA)
        return;
    eval_rig *g = eval_rig_get();
    gb_outbuf out;
    gb_outbuf_init(&out);
    gb_client *c = gb_client_new(g->eng, &gb_resp2_reply_ops, &out, NULL, NULL, GB_CLIENT_AUTHED);
    int proto = mode & 2 ? 3 : 2;
    gb_client_set_resp(c, proto);
    /* exact-size copies: a read past the script or the data is reported */
    char *script = (char *)fuzz_dup(p, slen), *blob = (char *)fuzz_dup(data, dlen);
    gb_slice argv[5] = {gb_slice_cstr("EVAL"), gb_slice_make(script, slen), gb_slice_cstr("1"), gb_slice_cstr("k"),
                        gb_slice_make(blob, dlen)};
    gb_gate_execute(c, 5, argv);
    g->eng->shutdown_requested = false;
    FUZZ_CHECK(!gb_outbuf_oom(&out), "out of memory");
    rnode res;
    bool ok = parse_reply((const uint8_t *)out.data, out.len, proto, MAX_OUT_DEPTH, &res);
    FUZZ_CHECK(ok, "EVAL: not one well-formed RESP%d reply (%zu bytes): %.*s", proto, out.len,
               (int)GB_MIN(out.len, 300), out.data);
    if (fuzz_verbose())
        fprintf(stderr, "EVAL -> %.*s\n", (int)GB_MIN(out.len, 200), out.data);
    rnode_free(&res);
    FUZZ_CHECK(!g->eng->script.caller, "script state left behind");
    fuzz_verify_dataset(g->eng);
    gb_client_free(c);
    gb_outbuf_free(&out);
    free(script);
    free(blob);
    fuzz_engine_reset(g->eng);
    /* Every distinct script stays in the cache: empty it now and then. */
    if (++g->runs % 256 == 0) {
        g->killer_out.len = 0;
        gb_slice flush[2] = {gb_slice_cstr("SCRIPT"), gb_slice_cstr("FLUSH")};
        gb_gate_execute(g->killer, 2, flush);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = {data, size};
    uint8_t mode = fuzz_u8(&in);
    if (in.left > MAX_SCRIPT + 1 + MAX_DATA)
        return 0;
    if (mode & 1)
        run_eval(mode, in.p, in.left);
    else
        run_reply(mode, in.p, in.left);
    return 0;
}
