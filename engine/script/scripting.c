#include "engine/script/scripting.h"

#include <stdio.h>

#include "engine/base/mem.h"
#include "engine/base/util.h"
#include "engine/script/script_eval.h"
#include "engine/script/script_func.h"
#include "engine/script/script_run.h"

/* ---- the core's hooks (engine/core/request/script_state.h) ------------------------------------------- */

static uint32_t hook_command_flags(void *ctx, gb_client *c, uint32_t cmd_flags, int argc, const gb_slice *argv)
{
    (void)c;
    gb_scripting *sys = ctx;
    if (argc < 1)
        return cmd_flags;
    /* EVAL, EVAL_RO, EVALSHA, EVALSHA_RO, FCALL, FCALL_RO */
    if (argv[0].len >= 5 && gb_slice_ieq(gb_slice_make(argv[0].ptr, 5), "fcall"))
        return gb_functions_command_flags(sys, cmd_flags, argc, argv);
    bool by_sha = argv[0].len >= 7 && gb_slice_ieq(gb_slice_make(argv[0].ptr, 7), "evalsha");
    return gb_eval_command_flags(sys, cmd_flags, argc, argv, by_sha);
}

static void hook_info_memory(void *ctx, void (*line)(void *lctx, const char *text), void *lctx)
{
    gb_scripting *sys = ctx;
    size_t lua = gb_eval_vm_bytes(sys->eval);
    size_t vm_functions = gb_functions_vm_bytes(sys->fns);
    size_t scripts = gb_eval_cache_bytes(sys->eval) + gb_functions_code_bytes(sys->fns);
    size_t nlibs, nfns = gb_functions_count(sys->fns, &nlibs);
    char buf[96], human[32];
    /* Redis 7.0's fields, in its order */
    snprintf(buf, sizeof buf, "used_memory_lua:%zu", lua);
    line(lctx, buf);
    snprintf(buf, sizeof buf, "used_memory_vm_eval:%zu", lua);
    line(lctx, buf);
    gb_human_bytes(human, sizeof human, (double)lua);
    snprintf(buf, sizeof buf, "used_memory_lua_human:%s", human);
    line(lctx, buf);
    snprintf(buf, sizeof buf, "used_memory_scripts_eval:%zu", gb_eval_cache_bytes(sys->eval));
    line(lctx, buf);
    snprintf(buf, sizeof buf, "number_of_cached_scripts:%zu", gb_eval_scripts(sys->eval));
    line(lctx, buf);
    snprintf(buf, sizeof buf, "number_of_functions:%zu", nfns);
    line(lctx, buf);
    snprintf(buf, sizeof buf, "number_of_libraries:%zu", nlibs);
    line(lctx, buf);
    snprintf(buf, sizeof buf, "used_memory_vm_functions:%zu", vm_functions);
    line(lctx, buf);
    snprintf(buf, sizeof buf, "used_memory_vm_total:%zu", lua + vm_functions);
    line(lctx, buf);
    gb_human_bytes(human, sizeof human, (double)(lua + vm_functions));
    snprintf(buf, sizeof buf, "used_memory_vm_total_human:%s", human);
    line(lctx, buf);
    snprintf(buf, sizeof buf, "used_memory_functions:%zu", gb_functions_code_bytes(sys->fns));
    line(lctx, buf);
    snprintf(buf, sizeof buf, "used_memory_scripts:%zu", scripts);
    line(lctx, buf);
    gb_human_bytes(human, sizeof human, (double)scripts);
    snprintf(buf, sizeof buf, "used_memory_scripts_human:%s", human);
    line(lctx, buf);
}

static void hook_foreach_library(void *ctx, void (*fn)(void *fctx, gb_slice code), void *fctx)
{
    gb_functions_foreach(ctx, fn, fctx);
}

static int hook_load_library(void *ctx, gb_slice code, char *err, size_t errlen)
{
    return gb_functions_load(ctx, code, false, err, errlen);
}

static void hook_flush_libraries(void *ctx) { gb_functions_flush(ctx); }

static void hook_destroy(void *ctx)
{
    gb_scripting *sys = ctx;
    gb_eval_cache_free(sys->eval);
    gb_functions_free(sys->fns);
    sys->eng->scripting = NULL;
    gb_free(sys);
}

gb_scripting *gb_scripting_new(gb_engine *eng)
{
    gb_scripting *sys = gb_calloc(1, sizeof *sys);
    sys->eng = eng;
    sys->rand_state = GB_RAND48_INITIAL;
    sys->client.eng = eng;
    sys->client.db = &eng->dbs[0];
    sys->client.resp = 2;
    sys->client.flags = GB_CLIENT_SCRIPT | GB_CLIENT_AUTHED;
    sys->client.rops = &gb_lua_sink_ops;
    sys->client.rctx = &sys->sink;
    sys->eval = gb_eval_cache_new(eng, &sys->rand_state);
    sys->fns = gb_functions_new(eng, &sys->rand_state);
    sys->hooks = (gb_scripting_hooks){
        .command_flags = hook_command_flags,
        .info_memory = hook_info_memory,
        .foreach_library = hook_foreach_library,
        .load_library = hook_load_library,
        .flush_libraries = hook_flush_libraries,
        .destroy = hook_destroy,
        .ctx = sys,
    };
    eng->scripting = &sys->hooks;
    return sys;
}
