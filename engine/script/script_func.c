#include "engine/script/script_func.h"

#include <lauxlib.h>
#include <stdio.h>
#include <string.h>

#include "engine/base/crc64.h"
#include "engine/base/mem.h"
#include "engine/base/rdbstr.h"
#include "engine/base/splitargs.h"
#include "engine/base/strbuf.h"
#include "engine/base/util.h"
#include "engine/ds/htable.h"
#include "engine/script/script_run.h"

typedef struct fn_lib fn_lib;

typedef struct fn_def {
    gb_hnode node; /* in by_name */
    fn_lib *lib;
    char *name;
    size_t name_len;
    char *desc; /* NULL: none given */
    uint32_t flags;
    int ref; /* the callback, in the interpreter's registry */
} fn_def;

struct fn_lib {
    char *name;
    char *code;
    size_t code_len;
    fn_def **fns;
    int nfns, capfns;
};

typedef struct gb_functions {
    gb_engine *eng;
    gb_lua_vm *vm;
    int load_api_ref;   /* the globals a library's code sees while it loads */
    fn_lib **libs;      /* in load order */
    size_t nlibs, caplibs;
    gb_htable by_name;  /* every library's functions */
    size_t nfns;
    size_t code_bytes;
    fn_lib *loading;    /* the library redis.register_function adds to */
    uint64_t load_start_ms;
} gb_functions;

/* Function names are case-insensitive, as in Redis 7.0 (its functions
 * dict compares with dictSdsKeyCaseCompare): FCALL TEST finds "test". */
static char fold(char c) { return (char)(c >= 'A' && c <= 'Z' ? c + 32 : c); }

/* The seeded hash of the name with its case folded, a chunk at a time. */
static uint64_t name_hash(const char *p, size_t len)
{
    uint64_t h = gb_hash_bytes(p, 0);
    char buf[128];
    while (len) {
        size_t k = GB_MIN(len, sizeof buf);
        for (size_t i = 0; i < k; i++)
            buf[i] = fold(p[i]);
        h = h * 31 + gb_hash_bytes(buf, k);
        p += k;
        len -= k;
    }
    return h;
}

static bool name_eq(gb_slice a, gb_slice b)
{
    if (a.len != b.len)
        return false;
    for (size_t i = 0; i < a.len; i++)
        if (fold(a.ptr[i]) != fold(b.ptr[i]))
            return false;
    return true;
}

static uint64_t fn_hash(const gb_hnode *n)
{
    const fn_def *f = (const fn_def *)n;
    return name_hash(f->name, f->name_len);
}

static bool fn_key_eq(const gb_hnode *n, const void *key)
{
    const fn_def *f = (const fn_def *)n;
    return name_eq(gb_slice_make(f->name, f->name_len), *(const gb_slice *)key);
}

static const gb_htable_type fn_type = {fn_hash, fn_key_eq};

static fn_def *find_fn(gb_functions *fns, gb_slice name)
{
    return (fn_def *)gb_htable_find(&fns->by_name, &name, name_hash(name.ptr, name.len));
}

static fn_lib *find_lib(gb_functions *fns, gb_slice name, size_t *pos)
{
    for (size_t i = 0; i < fns->nlibs; i++)
        if (gb_slice_eq(gb_slice_cstr(fns->libs[i]->name), name)) {
            if (pos)
                *pos = i;
            return fns->libs[i];
        }
    return NULL;
}

static void lib_free(gb_functions *fns, fn_lib *lib)
{
    for (int i = 0; i < lib->nfns; i++) {
        luaL_unref(fns->vm->L, LUA_REGISTRYINDEX, lib->fns[i]->ref);
        gb_free(lib->fns[i]->name);
        gb_free(lib->fns[i]->desc);
        gb_free(lib->fns[i]);
    }
    gb_free(lib->fns);
    gb_free(lib->name);
    gb_free(lib->code);
    gb_free(lib);
}

/* Takes a library out of the engine (its functions with it) and frees it. */
static void lib_remove(gb_functions *fns, size_t pos)
{
    fn_lib *lib = fns->libs[pos];
    for (int i = 0; i < lib->nfns; i++) {
        gb_slice name = gb_slice_make(lib->fns[i]->name, lib->fns[i]->name_len);
        if (find_fn(fns, name) == lib->fns[i]) /* a same-named one (other case) was never indexed */
            gb_htable_remove(&fns->by_name, &name, name_hash(name.ptr, name.len));
    }
    fns->nfns -= (size_t)lib->nfns;
    fns->code_bytes -= lib->code_len;
    memmove(&fns->libs[pos], &fns->libs[pos + 1], (fns->nlibs - pos - 1) * sizeof *fns->libs);
    fns->nlibs--;
    lib_free(fns, lib);
}

static void lib_add(gb_functions *fns, fn_lib *lib)
{
    if (fns->nlibs == fns->caplibs) {
        fns->caplibs = fns->caplibs ? fns->caplibs * 2 : 8;
        fns->libs = gb_realloc(fns->libs, fns->caplibs * sizeof *fns->libs);
    }
    fns->libs[fns->nlibs++] = lib;
    for (int i = 0; i < lib->nfns; i++) {
        fn_def *f = lib->fns[i];
        /* "test" and "TEST" in one library (Redis allows it): the first
         * registered is the one FCALL finds, as Redis's dictAdd keeps it. */
        if (!find_fn(fns, gb_slice_make(f->name, f->name_len)))
            gb_htable_insert(&fns->by_name, &f->node, name_hash(f->name, f->name_len));
    }
    fns->nfns += (size_t)lib->nfns;
    fns->code_bytes += lib->code_len;
}

/* Redis's functionsVerifyName: letters, digits and '_', at least one. */
static bool name_ok(const char *s, size_t len)
{
    if (len == 0)
        return false;
    for (size_t i = 0; i < len; i++) {
        char ch = s[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_'))
            return false;
    }
    return true;
}

#define ERR_NAME "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"

/* ---- redis.register_function (while a library loads) ------------------------------------- */

static int raise_error(lua_State *L, const char *err)
{
    gb_lua_push_error(L, err, strlen(err));
    return lua_error(L);
}

typedef struct reg_args {
    int name_idx, callback_idx, desc_idx; /* stack slots, 0: not given */
    uint32_t flags;
} reg_args;

/* flags = {'no-writes', ...} */
static const char *read_flags(lua_State *L, int idx, uint32_t *flags)
{
    if (!lua_istable(L, idx))
        return "flags argument to redis.register_function must be a table representing function flags";
    for (int i = 1;; i++) {
        lua_rawgeti(L, idx, i);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            return NULL;
        }
        size_t len;
        const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &len) : NULL;
        uint32_t f = s ? gb_script_flag_parse(s, len) : 0;
        lua_pop(L, 1);
        if (!f)
            return "unknown flag given";
        *flags |= f;
    }
}

/* redis.register_function{function_name=, callback=, flags=, description=}:
 * the values land in stack slots 2 (name), 3 (description), 4 (callback). */
static const char *read_named_args(lua_State *L, reg_args *a)
{
    if (!lua_istable(L, 1))
        return "calling redis.register_function with a single argument is only applicable to Lua table (representing "
               "named arguments).";
    lua_settop(L, 4);
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        if (lua_type(L, -2) != LUA_TSTRING)
            return "named argument key given to redis.register_function is not a string";
        const char *key = lua_tostring(L, -2);
        if (strcmp(key, "function_name") == 0) {
            if (!lua_isstring(L, -1))
                return "function_name argument given to redis.register_function must be a string";
            lua_replace(L, 2);
        } else if (strcmp(key, "description") == 0) {
            if (!lua_isstring(L, -1))
                return "description argument given to redis.register_function must be a string";
            lua_replace(L, 3);
        } else if (strcmp(key, "callback") == 0) {
            if (lua_type(L, -1) != LUA_TFUNCTION)
                return "callback argument given to redis.register_function must be a function";
            lua_replace(L, 4);
        } else if (strcmp(key, "flags") == 0) {
            const char *e = read_flags(L, lua_gettop(L), &a->flags);
            if (e)
                return e;
            lua_pop(L, 1);
        } else {
            return "unknown argument given to redis.register_function";
        }
    }
    if (lua_isnil(L, 2))
        return "redis.register_function must get a function name argument";
    if (lua_isnil(L, 4))
        return "redis.register_function must get a callback argument";
    a->name_idx = 2;
    a->desc_idx = lua_isnil(L, 3) ? 0 : 3;
    a->callback_idx = 4;
    return NULL;
}

static const char *read_args(lua_State *L, reg_args *a)
{
    int argc = lua_gettop(L);
    memset(a, 0, sizeof *a);
    if (argc < 1 || argc > 2)
        return "wrong number of arguments to redis.register_function";
    if (argc == 1)
        return read_named_args(L, a);
    if (!lua_isstring(L, 1))
        return "first argument to redis.register_function must be a string";
    if (lua_type(L, 2) != LUA_TFUNCTION)
        return "second argument to redis.register_function must be a function";
    a->name_idx = 1;
    a->callback_idx = 2;
    return NULL;
}

static int api_register_function(lua_State *L)
{
    gb_functions *fns = lua_touserdata(L, lua_upvalueindex(1));
    fn_lib *lib = fns->loading;
    if (!lib)
        return raise_error(L, "redis.register_function can only be called on FUNCTION LOAD command");
    reg_args a;
    const char *err = read_args(L, &a);
    if (err)
        return raise_error(L, err);
    size_t nlen;
    const char *name = lua_tolstring(L, a.name_idx, &nlen);
    if (!name_ok(name, nlen))
        return raise_error(L, ERR_NAME);
    for (int i = 0; i < lib->nfns; i++)
        if (gb_slice_eq(gb_slice_make(lib->fns[i]->name, lib->fns[i]->name_len), gb_slice_make(name, nlen)))
            return raise_error(L, "Function already exists in the library");
    fn_def *f = gb_calloc(1, sizeof *f);
    f->lib = lib;
    f->name = gb_memdup(name, nlen);
    f->name_len = nlen;
    if (a.desc_idx) {
        size_t dlen;
        const char *d = lua_tolstring(L, a.desc_idx, &dlen);
        f->desc = gb_memdup(d, dlen);
    }
    f->flags = a.flags;
    lua_pushvalue(L, a.callback_idx);
    f->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    if (lib->nfns == lib->capfns) {
        lib->capfns = lib->capfns ? lib->capfns * 2 : 4;
        lib->fns = gb_realloc(lib->fns, (size_t)lib->capfns * sizeof *lib->fns);
    }
    lib->fns[lib->nfns++] = f;
    return 0;
}

/* What a library's code sees while it loads: redis.register_function,
 * redis.log, the log levels and the version, nothing else. */
static void build_load_api(gb_functions *fns)
{
    lua_State *L = fns->vm->L;
    lua_newtable(L); /* globals while loading */
    lua_newtable(L); /* their redis table */
    lua_pushlightuserdata(L, fns);
    lua_pushcclosure(L, api_register_function, 1);
    lua_setfield(L, -2, "register_function");
    lua_rawgeti(L, LUA_REGISTRYINDEX, fns->vm->globals_ref);
    lua_getfield(L, -1, "redis");
    static const char *const copied[] = {"log",         "LOG_DEBUG",     "LOG_VERBOSE",      "LOG_NOTICE",
                                         "LOG_WARNING", "REDIS_VERSION", "REDIS_VERSION_NUM"};
    for (size_t i = 0; i < GB_ARRAY_LEN(copied); i++) {
        lua_getfield(L, -1, copied[i]);
        lua_setfield(L, -4, copied[i]);
    }
    lua_pop(L, 2);
    gb_lua_push_strict_readonly(L, -1);
    lua_setfield(L, -3, "redis");
    lua_pop(L, 1);
    fns->load_api_ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

/* ---- loading --------------------------------------------------------------------------- */

/* Redis 7.0's functionExtractLibMetaData: "#!<engine> name=<library>" on
 * the first line, split as sdssplitargs splits it (any blank, a CR
 * included, and quotes). On success *words holds the line's words, which
 * *engine and *name point into (free it with gb_split_args_free), and
 * *skip the line's length. */
static bool parse_metadata(gb_slice code, gb_slice **words, gb_slice *engine, gb_slice *name, size_t *skip, char *err,
                           size_t errlen)
{
    *words = NULL;
    if (code.len < 2 || memcmp(code.ptr, "#!", 2) != 0) {
        snprintf(err, errlen, "ERR Missing library metadata");
        return false;
    }
    const char *nl = memchr(code.ptr, '\n', code.len);
    if (!nl) {
        snprintf(err, errlen, "ERR Invalid library metadata");
        return false;
    }
    *skip = (size_t)(nl - code.ptr);
    int n = gb_split_args(code.ptr, *skip, words);
    if (n <= 0) {
        snprintf(err, errlen, "ERR Invalid library metadata");
        return false;
    }
    gb_slice *w = *words;
    *engine = gb_slice_make(w[0].ptr + 2, w[0].len - 2); /* the first word after its "#!" */
    bool have_name = false;
    for (int i = 1; i < n; i++) {
        if (w[i].len >= 5 && gb_slice_ieq(gb_slice_make(w[i].ptr, 5), "name=")) {
            if (have_name) {
                snprintf(err, errlen, "ERR Invalid metadata value, name argument was given multiple times");
                return false;
            }
            *name = gb_slice_make(w[i].ptr + 5, w[i].len - 5);
            have_name = true;
            continue;
        }
        snprintf(err, errlen, "ERR Invalid metadata value given: %.*s", (int)GB_MIN(w[i].len, 200), w[i].ptr);
        return false;
    }
    if (!have_name) {
        snprintf(err, errlen, "ERR Library name was not given");
        return false;
    }
    return true;
}

static void load_timeout_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    gb_functions *fns = gb_scripting_of(gb_lua_vm_of(L)->eng)->fns;
    if (gb_clock_mono_ms() - fns->load_start_ms > GB_FUNCTION_LOAD_TIMEOUT_MS)
        raise_error(L, "FUNCTION LOAD timeout");
}

/* Runs the library's code with the load-time API; registered functions go
 * to lib. Returns false with err. */
static bool run_library_code(gb_functions *fns, fn_lib *lib, size_t skip, char *err, size_t errlen)
{
    gb_lua_vm *vm = fns->vm;
    lua_State *L = vm->L;
    if (gb_lua_vm_load(vm, lib->code + skip, lib->code_len - skip, "@user_function") != 0) {
        snprintf(err, errlen, "ERR Error compiling function: %s", lua_tostring(L, -1));
        lua_pop(L, 1);
        return false;
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, fns->load_api_ref);
    gb_lua_vm_lookup_in(vm);
    fns->loading = lib;
    fns->load_start_ms = gb_clock_mono_ms();
    lua_sethook(L, load_timeout_hook, LUA_MASKCOUNT, GB_SCRIPT_HOOK_INSTRUCTIONS);
    int rc = gb_lua_vm_pcall(vm, 0, 0, 0);
    lua_sethook(L, NULL, 0, 0);
    fns->loading = NULL;
    gb_lua_vm_lookup_globals(vm);
    gb_lua_vm_reset_env(vm);
    if (rc != 0) {
        /* Redis's luaExtractErrorInformation: a string error reads "ERR <it>". */
        const char *msg = NULL;
        if (lua_istable(L, -1)) {
            lua_getfield(L, -1, "err");
            msg = lua_tostring(L, -1);
            snprintf(err, errlen, "ERR Error registering functions: %s", msg ? msg : "(null)");
            lua_pop(L, 1);
        } else {
            msg = lua_tostring(L, -1);
            snprintf(err, errlen, "ERR Error registering functions: ERR %s", msg ? msg : "(null)");
        }
        lua_pop(L, 1);
        return false;
    }
    return true;
}

/* The whole of FUNCTION LOAD: metadata, name, the code's run, collisions,
 * then the library replaces its old version. */
static bool load_library(gb_functions *fns, gb_slice code, bool replace, gb_slice *libname, char *err, size_t errlen)
{
    gb_slice engine, name, *words;
    size_t skip;
    bool ok = parse_metadata(code, &words, &engine, &name, &skip, err, errlen);
    /* the name's rule, then the engine, as Redis checks them */
    if (ok && !name_ok(name.ptr, name.len)) {
        snprintf(err, errlen, "ERR " ERR_NAME);
        ok = false;
    }
    if (ok && !(engine.len == 3 && gb_slice_ieq(engine, "lua"))) {
        snprintf(err, errlen, "ERR Engine '%.*s' not found", (int)GB_MIN(engine.len, 200), engine.ptr);
        ok = false;
    }
    size_t oldpos = 0;
    fn_lib *old = ok ? find_lib(fns, name, &oldpos) : NULL;
    if (old && !replace) {
        snprintf(err, errlen, "ERR Library '%.*s' already exists", (int)GB_MIN(name.len, 200), name.ptr);
        ok = false;
    }
    char *libname_copy = ok ? gb_memdup(name.ptr, name.len) : NULL;
    gb_split_args_free(words);
    if (!ok)
        return false;
    fn_lib *lib = gb_calloc(1, sizeof *lib);
    lib->name = libname_copy;
    lib->code = gb_memdup(code.ptr, code.len);
    lib->code_len = code.len;
    if (!run_library_code(fns, lib, skip, err, errlen))
        goto fail;
    if (lib->nfns == 0) {
        snprintf(err, errlen, "ERR No functions registered");
        goto fail;
    }
    for (int i = 0; i < lib->nfns; i++) {
        fn_def *other = find_fn(fns, gb_slice_make(lib->fns[i]->name, lib->fns[i]->name_len));
        if (other && other->lib != old) {
            snprintf(err, errlen, "ERR Function %s already exists", lib->fns[i]->name);
            goto fail;
        }
    }
    if (old)
        lib_remove(fns, oldpos);
    lib_add(fns, lib);
    if (libname)
        *libname = gb_slice_cstr(lib->name);
    return true;
fail:
    lib_free(fns, lib);
    return false;
}

gb_functions *gb_functions_new(gb_engine *eng, uint64_t *rand_state)
{
    gb_functions *fns = gb_calloc(1, sizeof *fns);
    fns->eng = eng;
    fns->vm = gb_lua_vm_new(eng, rand_state, gb_script_api_register);
    gb_htable_init(&fns->by_name, &fn_type);
    build_load_api(fns);
    return fns;
}

void gb_functions_free(gb_functions *fns)
{
    if (!fns)
        return;
    while (fns->nlibs)
        lib_remove(fns, fns->nlibs - 1);
    gb_free(fns->libs);
    gb_htable_clear(&fns->by_name, NULL, NULL);
    gb_lua_vm_free(fns->vm);
    gb_free(fns);
}

int gb_functions_load(gb_scripting *sys, gb_slice code, bool replace, char *err, size_t errlen)
{
    /* Only snapshot loading calls this (FUNCTION LOAD is
     * gb_functions_load_command): the library was acknowledged once. */
    sys->fns->vm->obey = true;
    bool ok = load_library(sys->fns, code, replace, NULL, err, errlen);
    sys->fns->vm->obey = false;
    return ok ? 0 : GB_EINVAL;
}

bool gb_functions_load_command(gb_scripting *sys, gb_client *c, gb_slice code, bool replace)
{
    char err[1024];
    gb_slice name;
    /* A log being replayed (GB_CLIENT_OBEY) was acknowledged once: its
     * libraries load as a snapshot's do (gb_functions_load). */
    sys->fns->vm->obey = (c->flags & GB_CLIENT_OBEY) != 0;
    bool ok = load_library(sys->fns, code, replace, &name, err, sizeof err);
    sys->fns->vm->obey = false;
    if (!ok) {
        gb_reply_error(c, err);
        return false;
    }
    gb_reply_slice(c, name);
    return true;
}

bool gb_functions_delete(gb_scripting *sys, gb_slice name)
{
    size_t pos;
    if (!find_lib(sys->fns, name, &pos))
        return false;
    lib_remove(sys->fns, pos);
    return true;
}

void gb_functions_flush(gb_scripting *sys)
{
    gb_functions *fns = sys->fns;
    while (fns->nlibs)
        lib_remove(fns, fns->nlibs - 1);
    lua_gc(fns->vm->L, LUA_GCCOLLECT, 0);
}

void gb_functions_foreach(gb_scripting *sys, void (*fn)(void *ctx, gb_slice code), void *ctx)
{
    for (size_t i = 0; i < sys->fns->nlibs; i++)
        fn(ctx, gb_slice_make(sys->fns->libs[i]->code, sys->fns->libs[i]->code_len));
}

/* ---- FUNCTION LIST / STATS ---------------------------------------------------------------- */

static void reply_flags(gb_client *c, uint32_t flags)
{
    size_t h = gb_reply_array_deferred(c);
    int64_t n = 0;
    for (size_t i = 0; i < GB_ARRAY_LEN(gb_script_flag_names); i++)
        if (flags & (1u << i)) {
            gb_reply_status(c, gb_script_flag_names[i]);
            n++;
        }
    gb_reply_set_deferred_set(c, h, n);
}

/* Maps and a set of flags in RESP3; RESP2 sends them as flat arrays. */
static void reply_library(gb_client *c, const fn_lib *lib, bool with_code)
{
    gb_reply_map(c, with_code ? 4 : 3);
    gb_reply_cstr(c, "library_name");
    gb_reply_cstr(c, lib->name);
    gb_reply_cstr(c, "engine");
    gb_reply_cstr(c, "LUA");
    gb_reply_cstr(c, "functions");
    gb_reply_array(c, lib->nfns);
    for (int i = 0; i < lib->nfns; i++) {
        const fn_def *f = lib->fns[i];
        gb_reply_map(c, 3);
        gb_reply_cstr(c, "name");
        gb_reply_bulk(c, f->name, f->name_len);
        gb_reply_cstr(c, "description");
        if (f->desc)
            gb_reply_cstr(c, f->desc);
        else
            gb_reply_nil(c);
        gb_reply_cstr(c, "flags");
        reply_flags(c, f->flags);
    }
    if (with_code) {
        gb_reply_cstr(c, "library_code");
        gb_reply_bulk(c, lib->code, lib->code_len);
    }
}

void gb_functions_list(gb_scripting *sys, gb_client *c, bool with_code, const gb_slice *pattern)
{
    gb_functions *fns = sys->fns;
    size_t h = gb_reply_array_deferred(c);
    int64_t n = 0;
    for (size_t i = 0; i < fns->nlibs; i++) {
        const fn_lib *lib = fns->libs[i];
        if (pattern && !gb_glob_match(pattern->ptr, pattern->len, lib->name, strlen(lib->name), true))
            continue;
        reply_library(c, lib, with_code);
        n++;
    }
    gb_reply_set_deferred(c, h, n);
}

void gb_functions_stats(gb_scripting *sys, gb_client *c)
{
    gb_functions *fns = sys->fns;
    gb_script_run *run = sys->run;
    if (run && run->eval) { /* an EVAL holds the server: Redis answers as its busy error */
        gb_reply_error(c, GB_ERR_BUSY_EVAL);
        return;
    }
    gb_reply_map(c, 2);
    gb_reply_cstr(c, "running_script");
    if (!run || run->eval) {
        gb_reply_nil(c);
    } else {
        gb_reply_map(c, 3);
        gb_reply_cstr(c, "name");
        gb_reply_cstr(c, run->name);
        gb_reply_cstr(c, "command");
        gb_reply_array(c, run->argc);
        for (int i = 0; i < run->argc; i++)
            gb_reply_slice(c, run->argv[i]);
        gb_reply_cstr(c, "duration_ms");
        gb_reply_int(c, (int64_t)(gb_clock_mono_ms() - run->start_ms));
    }
    gb_reply_cstr(c, "engines");
    gb_reply_map(c, 1);
    gb_reply_cstr(c, "LUA");
    gb_reply_map(c, 2);
    gb_reply_cstr(c, "libraries_count");
    gb_reply_int(c, (int64_t)fns->nlibs);
    gb_reply_cstr(c, "functions_count");
    gb_reply_int(c, (int64_t)fns->nfns);
}

/* ---- FUNCTION DUMP / RESTORE ------------------------------------------------------------- */

/* Redis 7.0's payload (docs/scripting.md): for each library the opcode
 * RDB_OPCODE_FUNCTION2 and its code as an RDB string, then a 2-byte RDB
 * version and the CRC-64 of all the bytes before it, both little-endian.
 * Redis 7.0's pre-GA opcode (its release candidates wrote name, engine,
 * optional description and body apart) is read too, as Redis reads it. */
#define OPCODE_FUNCTION2 245
#define OPCODE_FUNCTION_PRE_GA 246
#define DUMP_RDB_VERSION 10u
#define DUMP_FOOTER 10u /* version and CRC */

void gb_functions_dump(gb_scripting *sys, gb_client *c)
{
    gb_functions *fns = sys->fns;
    gb_strbuf b = {0};
    for (size_t i = 0; i < fns->nlibs; i++) {
        gb_strbuf_addc(&b, (char)OPCODE_FUNCTION2);
        gb_rdb_write_string(&b, fns->libs[i]->code, fns->libs[i]->code_len);
    }
    uint8_t footer[DUMP_FOOTER] = {(uint8_t)DUMP_RDB_VERSION, (uint8_t)(DUMP_RDB_VERSION >> 8)};
    gb_strbuf_add(&b, footer, 2);
    uint64_t crc = gb_crc64(0, b.p, b.len);
    for (int i = 0; i < 8; i++)
        footer[2 + i] = (uint8_t)(crc >> (8 * i));
    gb_strbuf_add(&b, footer + 2, 8);
    gb_reply_bulk(c, b.p, b.len);
    gb_strbuf_free(&b);
}

/* Redis's verifyDumpPayload: a version it can read, and the checksum. */
static bool payload_ok(gb_slice payload)
{
    const uint8_t *p = (const uint8_t *)payload.ptr;
    size_t len = payload.len;
    if (len < DUMP_FOOTER)
        return false;
    const uint8_t *footer = p + len - DUMP_FOOTER;
    if ((unsigned)(footer[0] | footer[1] << 8) > DUMP_RDB_VERSION)
        return false;
    uint64_t crc = 0;
    for (int i = 7; i >= 0; i--)
        crc = crc << 8 | footer[2 + i];
    return gb_crc64(0, p, len - 8) == crc;
}

/* A pre-GA record: name, engine, a description flag (and description), and
 * the body, put together as Redis does ("#!<engine> name=<name>\n<body>",
 * each part up to its first NUL as Redis's %s takes it). */
static char *read_pre_ga(gb_rdb_reader *r, size_t max, size_t *len, char *err, size_t errlen)
{
    char *part[4] = {NULL, NULL, NULL, NULL}; /* name, engine, description, body */
    size_t l, n;
    uint64_t has_desc = 0;
    bool enc;
    const char *why = NULL;
    if (gb_rdb_read_string(r, max, &part[0], &l))
        why = "Failed loading library name";
    else if (gb_rdb_read_string(r, max, &part[1], &l))
        why = "Failed loading engine name";
    else if (gb_rdb_read_len(r, &has_desc, &enc))
        why = "Failed loading library description indicator";
    else if (has_desc && gb_rdb_read_string(r, max, &part[2], &l))
        why = "Failed loading library description";
    else if (gb_rdb_read_string(r, max, &part[3], &l))
        why = "Failed loading library blob";
    char *code = NULL;
    if (why) {
        snprintf(err, errlen, "ERR %s", why);
    } else {
        gb_strbuf b = {0};
        gb_strbuf_adds(&b, "#!");
        gb_strbuf_adds(&b, part[1]);
        gb_strbuf_adds(&b, " name=");
        gb_strbuf_adds(&b, part[0]);
        gb_strbuf_addc(&b, '\n');
        gb_strbuf_adds(&b, part[3]);
        n = b.len;
        code = b.p;
        *len = n;
    }
    for (int i = 0; i < 4; i++)
        gb_free(part[i]);
    return code;
}

/* Reads the next record and loads its library into fns (empty of the
 * libraries before the restore: Redis loads a payload into a context of
 * its own first, and so gives its errors). */
static bool restore_record(gb_functions *fns, gb_rdb_reader *r, size_t max, char *err, size_t errlen)
{
    int type = gb_rdb_read_byte(r);
    char *code = NULL;
    size_t len = 0;
    if (type == OPCODE_FUNCTION_PRE_GA) {
        code = read_pre_ga(r, max, &len, err, errlen);
    } else if (type != OPCODE_FUNCTION2) {
        snprintf(err, errlen, "ERR given type is not a function");
    } else if (gb_rdb_read_string(r, max, &code, &len)) {
        code = NULL;
        snprintf(err, errlen, "ERR Failed loading library payload");
    }
    if (!code)
        return false;
    bool ok = load_library(fns, gb_slice_make(code, len), false, NULL, err, errlen);
    gb_free(code);
    return ok;
}

/* The libraries' code as they were before the restore. */
typedef struct saved_libs {
    char **name, **code;
    size_t *len;
    size_t n;
} saved_libs;

static saved_libs save_libs(gb_functions *fns)
{
    size_t n = fns->nlibs;
    saved_libs s = {gb_malloc((n + 1) * sizeof(char *)), gb_malloc((n + 1) * sizeof(char *)),
                    gb_malloc((n + 1) * sizeof(size_t)), n};
    for (size_t i = 0; i < n; i++) {
        s.name[i] = gb_strdup(fns->libs[i]->name);
        s.code[i] = gb_memdup(fns->libs[i]->code, fns->libs[i]->code_len);
        s.len[i] = fns->libs[i]->code_len;
    }
    return s;
}

static void free_saved(saved_libs *s)
{
    for (size_t i = 0; i < s->n; i++) {
        gb_free(s->name[i]);
        gb_free(s->code[i]);
    }
    gb_free(s->name);
    gb_free(s->code);
    gb_free(s->len);
}

static void put_back(gb_scripting *sys, const saved_libs *s)
{
    char err[256];
    gb_functions_flush(sys);
    for (size_t i = 0; i < s->n; i++)
        if (!load_library(sys->fns, gb_slice_make(s->code[i], s->len[i]), false, NULL, err, sizeof err))
            gb_log(GB_LOG_WARNING, "FUNCTION RESTORE: could not put a library back: %s", err);
}

/* Redis's libraryJoin: fns holds the payload's libraries; the ones from
 * before join them, those with a payload library's name refused (APPEND)
 * or dropped (REPLACE), then a function defined twice refused. The ones
 * from before are put first again, as they were listed. */
static bool join_saved(gb_functions *fns, const saved_libs *s, bool replace, char *err, size_t errlen)
{
    size_t restored = fns->nlibs;
    bool *drop = gb_calloc(s->n + 1, sizeof *drop);
    bool ok = true;
    for (size_t i = 0; i < s->n && ok; i++) {
        drop[i] = find_lib(fns, gb_slice_cstr(s->name[i]), NULL) != NULL;
        if (drop[i] && !replace) {
            snprintf(err, errlen, "ERR Library %s already exists", s->name[i]);
            ok = false;
        }
    }
    for (size_t i = 0; i < s->n && ok; i++)
        if (!drop[i])
            ok = load_library(fns, gb_slice_make(s->code[i], s->len[i]), false, NULL, err, errlen);
    gb_free(drop);
    if (!ok)
        return false;
    size_t kept = fns->nlibs - restored;
    fn_lib **order = gb_malloc((fns->nlibs + 1) * sizeof *order);
    memcpy(order, fns->libs + restored, kept * sizeof *order);
    memcpy(order + kept, fns->libs, restored * sizeof *order);
    memcpy(fns->libs, order, fns->nlibs * sizeof *order);
    gb_free(order);
    return true;
}

bool gb_functions_restore(gb_scripting *sys, gb_client *c, gb_slice payload, char policy)
{
    gb_functions *fns = sys->fns;
    if (!payload_ok(payload)) {
        gb_reply_error(c, "ERR DUMP payload version or checksum are wrong");
        return false;
    }
    /* No string in it can be longer than a bulk string may be. */
    size_t max = (size_t)c->eng->cfg.proto_max_bulk_len;
    saved_libs saved = save_libs(fns);
    gb_functions_flush(sys);
    char err[1024];
    bool ok = true;
    /* Like Redis, records are read while more than the footer is left, and
     * a record's bytes may run into the footer. */
    gb_rdb_reader r = gb_rdb_reader_make(payload.ptr, payload.len);
    while (ok && r.len - r.pos > DUMP_FOOTER)
        ok = restore_record(fns, &r, max, err, sizeof err);
    if (ok && policy != 'F')
        ok = join_saved(fns, &saved, policy == 'R', err, sizeof err);
    if (!ok) {
        put_back(sys, &saved);
        gb_reply_error(c, err);
    } else {
        gb_reply_ok(c);
    }
    free_saved(&saved);
    return ok;
}

/* ---- FCALL ------------------------------------------------------------------------------ */

void gb_functions_fcall(gb_scripting *sys, gb_client *c, int argc, gb_slice *argv, bool ro)
{
    gb_functions *fns = sys->fns;
    fn_def *f = find_fn(fns, argv[1]);
    if (!f) {
        gb_reply_error(c, "ERR Function not found");
        return;
    }
    int64_t numkeys;
    if (!gb_slice2ll(argv[2], &numkeys)) {
        gb_reply_error(c, "ERR Bad number of keys provided");
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
    gb_script_run run;
    if (!gb_script_prepare(sys, &run, fns->vm, c, f->name, f->flags, ro, false))
        return;
    run.argc = argc;
    run.argv = argv;
    lua_State *L = fns->vm->L;
    lua_rawgeti(L, LUA_REGISTRYINDEX, f->ref);
    gb_lua_push_slices(L, argv + 3, (int)numkeys);
    gb_lua_push_slices(L, argv + 3 + numkeys, argc - 3 - (int)numkeys);
    gb_script_prefetch_records(&pf);
    gb_script_call(sys, &run, 2);
}

uint32_t gb_functions_command_flags(gb_scripting *sys, uint32_t cmd_flags, int argc, const gb_slice *argv)
{
    if (argc < 2)
        return cmd_flags;
    fn_def *f = find_fn(sys->fns, argv[1]);
    return f ? gb_script_cmd_flags(cmd_flags, f->flags) : cmd_flags;
}

size_t gb_functions_count(const gb_functions *fns, size_t *libraries)
{
    *libraries = fns->nlibs;
    return fns->nfns;
}

size_t gb_functions_code_bytes(const gb_functions *fns) { return fns->code_bytes; }

size_t gb_functions_vm_bytes(const gb_functions *fns) { return fns->vm->heap; }
