#include "engine/script/script_eval.h"

#include <lauxlib.h>
#include <stdio.h>

#include "engine/base/mem.h"
#include "engine/base/splitargs.h"
#include "engine/base/util.h"
#include "engine/ds/htable.h"
#include "engine/script/script_run.h"
#include "engine/script/sha1.h"

typedef struct eval_script {
    gb_hnode node;
    char sha[41];   /* lower-case hex */
    uint32_t flags; /* GB_SFLAG_*; GB_SFLAG_EVAL_COMPAT without a shebang */
    int ref;        /* the compiled function, in the interpreter's registry */
    size_t body_len;
} eval_script;

typedef struct gb_eval_cache {
    gb_engine *eng;
    uint64_t *rand_state;
    gb_lua_vm *vm;
    gb_htable scripts;
    size_t body_bytes;
} gb_eval_cache;

static uint64_t script_hash(const gb_hnode *n) { return gb_hash_bytes(((const eval_script *)n)->sha, 40); }

static bool script_key_eq(const gb_hnode *n, const void *key)
{
    return memcmp(((const eval_script *)n)->sha, key, 40) == 0;
}

static const gb_htable_type script_type = {script_hash, script_key_eq};

gb_eval_cache *gb_eval_cache_new(gb_engine *eng, uint64_t *rand_state)
{
    gb_eval_cache *ec = gb_calloc(1, sizeof *ec);
    ec->eng = eng;
    ec->rand_state = rand_state;
    ec->vm = gb_lua_vm_new(eng, rand_state, gb_script_eval_api_register);
    gb_htable_init(&ec->scripts, &script_type);
    return ec;
}

static void free_script(gb_hnode *n, void *ctx)
{
    (void)ctx;
    gb_free(n);
}

void gb_eval_cache_free(gb_eval_cache *ec)
{
    if (!ec)
        return;
    gb_htable_clear(&ec->scripts, free_script, NULL);
    gb_lua_vm_free(ec->vm);
    gb_free(ec);
}

/* The cache entry of a sha as a client wrote it (any case), or NULL. */
static eval_script *find_sha(gb_eval_cache *ec, gb_slice sha)
{
    if (sha.len != 40)
        return NULL;
    char lower[40];
    for (int i = 0; i < 40; i++) {
        char ch = sha.ptr[i];
        lower[i] = ch >= 'A' && ch <= 'Z' ? (char)(ch + 32) : ch;
    }
    return (eval_script *)gb_htable_find(&ec->scripts, lower, gb_hash_bytes(lower, 40));
}

/* ---- the shebang ---------------------------------------------------------------------- */

/* Redis 7.0's evalExtractShebangFlags: "#!lua [flags=a,b]" on the first
 * line, split as sdssplitargs splits (any blank, a CR included, and
 * quotes), every word after the engine a "flags=" list whose names are
 * matched exactly, an empty one included. Sets *flags and *skip (bytes
 * before the code Lua compiles: the line without its newline, so line
 * numbers stay the user's). Returns false with Redis's error in err. */
static bool parse_shebang(gb_slice body, uint32_t *flags, size_t *skip, char *err, size_t errlen)
{
    *flags = GB_SFLAG_EVAL_COMPAT;
    *skip = 0;
    if (body.len < 2 || memcmp(body.ptr, "#!", 2) != 0)
        return true;
    const char *nl = memchr(body.ptr, '\n', body.len);
    if (!nl || memchr(body.ptr, '\0', (size_t)(nl - body.ptr))) { /* (Redis reads a C string) */
        snprintf(err, errlen, "ERR Invalid script shebang");
        return false;
    }
    *skip = (size_t)(nl - body.ptr);
    gb_slice *parts;
    int nparts = gb_split_args(body.ptr, *skip, &parts);
    if (nparts <= 0) {
        snprintf(err, errlen, "ERR Invalid engine in script shebang");
        gb_split_args_free(parts);
        return false;
    }
    bool ok = true;
    if (!gb_slice_eq(parts[0], gb_slice_cstr("#!lua"))) {
        snprintf(err, errlen, "ERR Unexpected engine in script shebang: %.*s", (int)GB_MIN(parts[0].len, 200),
                 parts[0].ptr);
        ok = false;
    }
    *flags = 0;
    for (int j = 1; ok && j < nparts; j++) {
        gb_slice w = parts[j];
        if (w.len < 6 || memcmp(w.ptr, "flags=", 6) != 0) {
            snprintf(err, errlen, "ERR Unknown lua shebang option: %.*s", (int)GB_MIN(w.len, 200), w.ptr);
            ok = false;
            break;
        }
        /* "a,b" is two names, "a," two (the second empty), "" none */
        for (size_t i = 6; ok && i < w.len;) {
            const char *comma = memchr(w.ptr + i, ',', w.len - i);
            size_t flen = comma ? (size_t)(comma - (w.ptr + i)) : w.len - i;
            uint32_t f = gb_script_flag_parse(w.ptr + i, flen);
            if (!f) {
                snprintf(err, errlen, "ERR Unexpected flag in script shebang: %.*s", (int)GB_MIN(flen, 200), w.ptr + i);
                ok = false;
            }
            *flags |= f;
            i += flen + 1;
            if (comma && i == w.len && ok) { /* a trailing comma: an empty last name */
                snprintf(err, errlen, "ERR Unexpected flag in script shebang: ");
                ok = false;
            }
        }
    }
    gb_split_args_free(parts);
    return ok;
}

/* ---- compiling ----------------------------------------------------------------------------- */

/* Compiles body under its sha; replies the error and returns NULL when it
 * does not compile. */
static eval_script *compile(gb_eval_cache *ec, gb_client *c, gb_slice body, const char sha[41])
{
    uint32_t flags;
    size_t skip;
    char err[512];
    if (!parse_shebang(body, &flags, &skip, err, sizeof err)) {
        gb_reply_error(c, err);
        return NULL;
    }
    lua_State *L = ec->vm->L;
    if (gb_lua_vm_load(ec->vm, body.ptr + skip, body.len - skip, "@user_script") != 0) {
        const char *msg = lua_tostring(L, -1);
        gb_reply_errorf(c, "ERR Error compiling script (new function): %s", msg ? msg : "?");
        lua_pop(L, 1);
        return NULL;
    }
    eval_script *s = gb_malloc(sizeof *s);
    memcpy(s->sha, sha, 41);
    s->flags = flags;
    s->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    s->body_len = body.len;
    gb_htable_insert(&ec->scripts, &s->node, gb_hash_bytes(s->sha, 40));
    ec->body_bytes += body.len;
    return s;
}

static eval_script *find_or_compile(gb_eval_cache *ec, gb_client *c, gb_slice body)
{
    char sha[41];
    gb_sha1_hex(body.ptr, body.len, sha);
    eval_script *s = (eval_script *)gb_htable_find(&ec->scripts, sha, gb_hash_bytes(sha, 40));
    return s ? s : compile(ec, c, body, sha);
}

/* ---- commands ---------------------------------------------------------------------------- */

void gb_eval_command(gb_scripting *sys, gb_client *c, int argc, gb_slice *argv, bool by_sha, bool ro)
{
    gb_eval_cache *ec = sys->eval;
    if (by_sha && argv[1].len != 40) { /* no sha at all: Redis says so before reading numkeys */
        gb_reply_error(c, "NOSCRIPT No matching script. Please use EVAL.");
        return;
    }
    int64_t numkeys;
    if (!gb_slice2ll(argv[2], &numkeys)) {
        gb_reply_error(c, GB_ERR_NOT_INT);
        return;
    }
    if (numkeys > argc - 3) {
        gb_reply_error(c, "ERR Number of keys can't be greater than number of args");
        return;
    }
    if (numkeys < 0) {
        gb_reply_error(c, "ERR Number of keys can't be negative");
        return;
    }
    gb_script_prefetch pf;
    gb_script_prefetch_buckets(&pf, c, argv + 3, (int)numkeys);
    eval_script *s = by_sha ? find_sha(ec, argv[1]) : find_or_compile(ec, c, argv[1]);
    if (!s) {
        if (by_sha)
            gb_reply_error(c, "NOSCRIPT No matching script. Please use EVAL.");
        return;
    }
    gb_script_run run;
    if (!gb_script_prepare(sys, &run, ec->vm, c, s->sha, s->flags, ro, true))
        return;
    run.argc = argc;
    run.argv = argv;
    lua_State *L = ec->vm->L;
    gb_lua_push_slices(L, argv + 3, (int)numkeys);
    gb_lua_vm_set_global(ec->vm, "KEYS");
    gb_lua_push_slices(L, argv + 3 + numkeys, argc - 3 - (int)numkeys);
    gb_lua_vm_set_global(ec->vm, "ARGV");
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->ref);
    gb_script_prefetch_records(&pf);
    gb_script_call(sys, &run, 0);
}

void gb_eval_script_load(gb_scripting *sys, gb_client *c, gb_slice body)
{
    eval_script *s = find_or_compile(sys->eval, c, body);
    if (s)
        gb_reply_bulk(c, s->sha, 40);
}

bool gb_eval_script_exists(gb_scripting *sys, gb_slice sha) { return find_sha(sys->eval, sha) != NULL; }

void gb_eval_script_flush(gb_scripting *sys)
{
    gb_eval_cache *old = sys->eval;
    sys->eval = gb_eval_cache_new(old->eng, old->rand_state);
    gb_eval_cache_free(old);
}

uint32_t gb_eval_command_flags(gb_scripting *sys, uint32_t cmd_flags, int argc, const gb_slice *argv, bool by_sha)
{
    if (argc < 2)
        return cmd_flags;
    uint32_t flags;
    if (by_sha) {
        eval_script *s = find_sha(sys->eval, argv[1]);
        if (!s)
            return cmd_flags;
        flags = s->flags;
    } else {
        size_t skip;
        char err[8];
        if (!parse_shebang(argv[1], &flags, &skip, err, sizeof err))
            return cmd_flags; /* the command reports the error */
    }
    return gb_script_cmd_flags(cmd_flags, flags);
}

size_t gb_eval_scripts(const gb_eval_cache *ec) { return gb_htable_size(&ec->scripts); }

size_t gb_eval_cache_bytes(const gb_eval_cache *ec)
{
    return ec->body_bytes + gb_htable_size(&ec->scripts) * sizeof(eval_script) + gb_htable_overhead_bytes(&ec->scripts);
}

size_t gb_eval_vm_bytes(const gb_eval_cache *ec) { return ec->vm->heap; }
