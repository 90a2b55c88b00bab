#include "engine/modules.h"

#include "engine/base/mem.h"
#include "engine/persist/persist.h"
#include "engine/script/scripting.h"
#include "engine/types/registry.h"

/* Every command module's table, defined by GB_DEFINE_COMMANDS in its
 * engine/commands/cmd_*.c file. */
#define GB_DECLARE_COMMANDS(mod)                     \
    extern const gb_command_def gb_commands_##mod[]; \
    extern const size_t gb_commands_##mod##_count

GB_DECLARE_COMMANDS(server);
GB_DECLARE_COMMANDS(client);
GB_DECLARE_COMMANDS(command);
GB_DECLARE_COMMANDS(keys);
GB_DECLARE_COMMANDS(string);
GB_DECLARE_COMMANDS(bitmap);
GB_DECLARE_COMMANDS(hll);
GB_DECLARE_COMMANDS(multi);
GB_DECLARE_COMMANDS(list);
GB_DECLARE_COMMANDS(hash);
GB_DECLARE_COMMANDS(hash_ttl);
GB_DECLARE_COMMANDS(set);
GB_DECLARE_COMMANDS(zset);
GB_DECLARE_COMMANDS(stream);
GB_DECLARE_COMMANDS(persist);
GB_DECLARE_COMMANDS(dump);
GB_DECLARE_COMMANDS(script);
GB_DECLARE_COMMANDS(acl);
GB_DECLARE_COMMANDS(pubsub);
GB_DECLARE_COMMANDS(geo);
GB_DECLARE_COMMANDS(sort);
GB_DECLARE_COMMANDS(lcs);
GB_DECLARE_COMMANDS(lolwut);
GB_DECLARE_COMMANDS(introspect);
GB_DECLARE_COMMANDS(memory);
GB_DECLARE_COMMANDS(module);
GB_DECLARE_COMMANDS(repl);
GB_DECLARE_COMMANDS(replica);
GB_DECLARE_COMMANDS(cluster);

gb_engine *gb_engine_new(const gb_settings *cfg)
{
    gb_engine *eng = gb_engine_create(cfg);
    gb_types_init();
#define REG(mod) gb_commands_register(eng, gb_commands_##mod, gb_commands_##mod##_count)
    REG(server);
    REG(client);
    REG(command);
    REG(keys);
    REG(string);
    REG(bitmap);
    REG(hll);
    REG(multi);
    REG(list);
    REG(hash);
    REG(hash_ttl);
    REG(set);
    REG(zset);
    REG(stream);
    REG(persist);
    REG(dump);
    REG(script);
    REG(acl);
    REG(pubsub);
    REG(geo);
    REG(sort);
    REG(lcs);
    REG(lolwut);
    REG(introspect);
    REG(memory);
    REG(module);
    REG(repl);
    REG(replica);
    REG(cluster);
#undef REG
    gb_scripting_new(eng);
    gb_persist_new(eng);
    eng->startup_allocated = gb_mem_used(); /* INFO used_memory_startup, MEMORY STATS startup.allocated */
    return eng;
}
