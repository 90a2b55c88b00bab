/*
 * A sandboxed Lua 5.1 interpreter as Redis 7.0 gives scripts one
 * (docs/scripting.md, "Sandbox"):
 *
 *   - its memory comes from the engine's allocator (INFO used_memory counts
 *     it, maxmemory sees it); one allocation over proto-max-bulk-len, or
 *     growth of Lua's own heap past max(maxmemory, GB_LUA_HEAP_FLOOR) when
 *     maxmemory is set, is refused and the script gets Lua's "not enough
 *     memory" instead of the server aborting;
 *   - the libraries Redis loads: base (without print, dofile, loadfile),
 *     table, string, math (random/randomseed as Redis's rand48), cjson,
 *     cmsgpack, bit, struct; no os, io, package, debug;
 *   - globals read-only: scripts see _G as a proxy whose reads of a missing
 *     name fail with "Script attempted to access nonexistent global
 *     variable" and whose writes fail with "Attempt to modify a readonly
 *     table", as do writes to every library table, the string metatable,
 *     rawset/setmetatable on any of them. Stock Lua has no read-only
 *     tables (Redis patches its Lua), hence the proxies;
 *   - loadstring/load refuse precompiled chunks (bytecode is not checked by
 *     Lua 5.1 and can corrupt the interpreter).
 */
#ifndef GB_ENGINE_SCRIPT_VM_H
#define GB_ENGINE_SCRIPT_VM_H

#include <lua.h>

#include "engine/base/common.h"
#include "engine/script/script_heap.h"

struct gb_engine;
struct gb_script_run;

/* Lua's heap may always reach this much under maxmemory (bytes). */
#define GB_LUA_HEAP_FLOOR (32u * 1024 * 1024)

typedef struct gb_lua_vm {
    lua_State *L;
    struct gb_engine *eng;
    struct gb_script_run *run; /* the script running in this interpreter, or NULL */
    uint64_t *rand_state;      /* rand48 state, shared by the engine's interpreters as in Redis */
    size_t heap;               /* bytes Lua holds now (its allocator's count) */
    gb_lua_heap small;         /* where Lua's blocks of up to GB_LUA_SMALL_MAX bytes live */
    /* A command is replying into the interpreter (redis.call): Lua must
     * not raise in the middle of the engine's code, so allocations are not
     * refused (out of memory is fatal then, as for any engine allocation). */
    bool in_command;
    /* Lua code is running under a protected call (or compiling): only then
     * may an allocation fail, because only then does Lua's error reach a
     * handler. Elsewhere (the engine pushing a script's arguments, storing
     * a compiled function) a refused allocation would be an unprotected
     * error - Lua 5.1 then exits the process - so there, as for any engine
     * allocation, out of memory is fatal and nothing is refused. */
    int protected_depth;
    /* Loading what the dataset already holds (a snapshot's or a log's
     * function libraries): refusing memory there would fail the load of an
     * acknowledged dataset, so nothing is refused (fatal if truly out). */
    bool obey;
    int globals_ref;           /* registry: the real globals table */
    int proxy_ref;             /* registry: the read-only proxy scripts see as _G */
    int lookup_ref;            /* registry: the proxy's __index closure (its upvalue is what names resolve in) */
} gb_lua_vm;

/* The registry key under which a vm stores itself (lightuserdata). */
extern const char gb_lua_vm_key;

/* Creates an interpreter; `api` adds the redis table's functions to the
 * table on top of the stack (the caller's API: eval or functions).
 * Out of memory at creation is fatal, as any start-up allocation. */
gb_lua_vm *gb_lua_vm_new(struct gb_engine *eng, uint64_t *rand_state, void (*api)(lua_State *L, gb_lua_vm *vm));
void gb_lua_vm_free(gb_lua_vm *vm);

/* lua_pcall with the interpreter's allocations fallible for its duration
 * (protected_depth); every script, library load and compile goes through
 * this or gb_lua_vm_load. */
int gb_lua_vm_pcall(gb_lua_vm *vm, int nargs, int nresults, int errfunc);

/* The vm a C function called from Lua runs in. */
gb_lua_vm *gb_lua_vm_of(lua_State *L);

/* The largest block the interpreter of L may allocate: proto-max-bulk-len
 * for a vm's (script_vm.c refuses larger ones with Lua's "not enough
 * memory"), SIZE_MAX for another. */
size_t gb_lua_block_limit(lua_State *L);

/* Whether the value at idx is a read-only table (a proxy scripts see in
 * place of a library or the globals); false in an interpreter that is not
 * a vm's. */
bool gb_lua_is_readonly(lua_State *L, int idx);

/* Raises Redis's "Attempt to modify a readonly table". */
int gb_lua_raise_readonly(lua_State *L);

/* Pushes a read-only proxy of the table at idx (replacing nothing). */
void gb_lua_push_readonly(lua_State *L, int idx);

/* Pushes a read-only proxy of the table at idx whose reads of a missing
 * key fail with "Script attempted to access nonexistent global variable". */
void gb_lua_push_strict_readonly(lua_State *L, int idx);

/* Makes names in scripts resolve in the table on top of the stack (popped)
 * instead of the real globals (FUNCTION LOAD's restricted API); pass
 * LUA_NOREF-like behaviour with gb_lua_vm_lookup_globals to restore. */
void gb_lua_vm_lookup_in(gb_lua_vm *vm);
void gb_lua_vm_lookup_globals(gb_lua_vm *vm);

/* Sets a global in the real globals table (KEYS, ARGV), value on top
 * (popped): scripts see it but cannot write it. */
void gb_lua_vm_set_global(gb_lua_vm *vm, const char *name);

/* Puts the thread's globals back to the proxy (a script may have changed
 * them with setfenv(0, ...)). */
void gb_lua_vm_reset_env(gb_lua_vm *vm);

/* Loads code as a function whose environment is the proxy; on error
 * pushes the message and returns non-zero (lua_load's codes). Binary
 * chunks are refused. */
int gb_lua_vm_load(gb_lua_vm *vm, const char *code, size_t len, const char *chunkname);

/* The error handler scripts run under (Redis's __redis__err__handler):
 * turns any error into a table {err=, source=, line=}. */
int gb_lua_error_handler(lua_State *L);

/* Pushes Redis's error table for an error text (luaPushError): "-CODE msg"
 * or "msg" (code ERR), stored as "CODE msg"; the text ends at a NUL and
 * the message loses the CR and LF at either end, as in Redis. */
void gb_lua_push_error(lua_State *L, const char *err, size_t len);

/* Puts engine/script/cjson_guard.c's checks in front of the encode and
 * decode of the cjson table at idx (the system's lua-cjson 2.1.0 corrupts
 * memory past 1 GiB of buffer: CVE-2022-24834). */
void gb_lua_guard_cjson(lua_State *L, int idx);

/* Redis's rand48 (math.random): deterministic, the same on every machine. */
int32_t gb_rand48_next(uint64_t *state);
void gb_rand48_seed(uint64_t *state, int32_t seed);
#define GB_RAND48_INITIAL 0x1234ABCD330Eull
#define GB_RAND48_MAX INT32_MAX

#endif
