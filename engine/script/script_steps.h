/*
 * Work a script does inside one C function executes no Lua instruction: a
 * pattern that backtracks (lib_pattern.c) or a sort without a comparison
 * function (lib_table.c) can run for minutes while the VM's count hook,
 * which serves busy-reply-threshold, SCRIPT KILL, FUNCTION KILL and
 * FUNCTION LOAD's timeout (script_run.c, script_func.c), never runs. Such
 * functions count their steps and call that hook themselves every
 * GB_SCRIPT_C_STEPS, as the VM does every GB_SCRIPT_HOOK_INSTRUCTIONS.
 */
#ifndef GB_ENGINE_SCRIPT_STEPS_H
#define GB_ENGINE_SCRIPT_STEPS_H

#include <lua.h>
#include <stdint.h>

#include "engine/base/common.h"

/* About 0.1-1 ms of matching or comparing on the development machine. */
#define GB_SCRIPT_C_STEPS 100000

typedef struct gb_script_steps {
    uint64_t done;
    uint64_t next_hook; /* done's value at the next call */
} gb_script_steps;

#define GB_SCRIPT_STEPS_INIT ((gb_script_steps){0, GB_SCRIPT_C_STEPS})

/* Calls the hook installed on L, whatever its mask (after SCRIPT KILL the
 * hook runs on every line, and a script that caught the error must still
 * stop). The hook may serve other clients, or raise an error that unwinds
 * through the caller: callers hold nothing that needs releasing. */
void gb_script_steps_hook(lua_State *L, gb_script_steps *s);

/* Counts n steps; every GB_SCRIPT_C_STEPS, the hook. */
static inline void gb_script_steps_count(lua_State *L, gb_script_steps *s, uint64_t n)
{
    s->done += n;
    if (GB_UNLIKELY(s->done >= s->next_hook))
        gb_script_steps_hook(L, s);
}

#endif
