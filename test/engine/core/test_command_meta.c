/* engine/core/command_meta.{h,c} and its join with the registered commands:
 * the generated table is sorted and complete, every registered command
 * agrees with what Redis 7.0 says about it, keys are found as Redis finds
 * them (cases checked against redis-server 7.0's COMMAND GETKEYSANDFLAGS),
 * and the gate resolves subcommands with their own arity. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine_harness.h"
#include "engine/core/request/command_meta.h"

static void test_table_sorted_and_found(void **state)
{
    (void)state;
    /* Redis 7.0's 240 commands, the 12 hash-field expiry commands of
     * Redis 7.4/8.0 and Goblin Core's RING (cmake/command_meta_extra.json) */
    assert_int_equal(gb_command_meta_count, 240 + 12 + 1);
    assert_int_equal(gb_command_meta_find("ring")->arity, -2);
    assert_non_null(gb_command_meta_find("hexpire"));
    assert_string_equal(gb_command_meta_find("hsetex")->since, "8.0.0");
    for (size_t i = 0; i < gb_command_meta_count; i++) {
        const gb_command_meta *m = &gb_command_meta_table[i];
        if (i > 0)
            assert_true(strcmp(gb_command_meta_table[i - 1].name, m->name) < 0);
        assert_ptr_equal(gb_command_meta_find(m->name), m);
        assert_non_null(m->summary);
        assert_non_null(m->group);
        for (uint8_t j = 0; j < m->nsubcommands; j++) {
            const gb_command_meta *s = &m->subcommands[j];
            size_t head = strlen(m->name);
            assert_memory_equal(s->name, m->name, head);
            assert_int_equal(s->name[head], '|');
            assert_ptr_equal(gb_command_meta_sub(m, gb_slice_cstr(gb_command_meta_subname(s))), s);
        }
    }
    assert_null(gb_command_meta_find("nosuch"));
    const gb_command_meta *config = gb_command_meta_find("config");
    const gb_command_meta *get = gb_command_meta_sub(config, gb_slice_cstr("GeT"));
    assert_non_null(get);
    assert_string_equal(get->name, "config|get");
    assert_int_equal(get->arity, -3);
    assert_true(get->acl_categories & GB_ACL_DANGEROUS);
    assert_null(gb_command_meta_sub(config, gb_slice_cstr("nosuch")));
}

/* ---- keys: "cmd args..." -> "key FLAG FLAG;key FLAG" ---- */

static void keys_of(const char *line, char *out, size_t cap)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", line);
    gb_slice argv[32];
    int argc = 0;
    for (char *save, *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save))
        argv[argc++] = gb_slice_cstr(t);
    const gb_command_meta *m = gb_command_meta_find(argv[0].ptr);
    assert_non_null(m);
    gb_keys_result r;
    int n = gb_command_keys(m, argc, argv, &r);
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        used += (size_t)snprintf(out + used, cap - used, "%s%.*s", i ? ";" : "", (int)argv[r.keys[i].pos].len,
                                 argv[r.keys[i].pos].ptr);
        for (int b = 0; b < GB_KS_FLAG_COUNT; b++)
            if (r.keys[i].flags & (1u << b))
                used += (size_t)snprintf(out + used, cap - used, " %s", gb_key_spec_flag_names[b]);
    }
    gb_keys_result_free(&r);
}

static void test_keys_as_redis_finds_them(void **state)
{
    (void)state;
    static const struct {
        const char *call, *keys;
    } cases[] = {
        /* each expectation is redis-server 7.0.15's COMMAND GETKEYSANDFLAGS */
        {"get k", "k RO access"},
        {"set k v", "k OW update"},
        {"set k v get", "k RW access update"},
        {"mset a 1 b 2", "a OW update;b OW update"},
        {"sort_ro k by x get y", "k RO access"},
        {"sort k by x store d get y store e", "k RO access;e OW update"},
        {"bitfield k get u8 0", "k RO access"},
        {"bitfield k get u8 0 set u8 0 1", "k RW access update"},
        {"xread count 2 streams a b 0 0", "a RO access;b RO access"},
        {"xread streams a b 0", "a RO access"},
        {"eval s 2 a b c", "a RW access update;b RW access update"},
        {"eval s x a", ""},
        {"zunionstore d 2 a b", "d OW update;a RO access;b RO access"},
        {"lmpop 2 a b left", "a RW access delete;b RW access delete"},
        {"georadius k 1 2 3 m store d", "k RO access;d OW update"},
        {"blpop a b 0", "a RW access delete;b RW access delete"},
        {"lmove s d left right", "s RW access delete;d RW insert"},
        {"zunionstore d 99 a b", ""}, /* a key count past the end */
    };
    char got[512];
    for (size_t i = 0; i < GB_ARRAY_LEN(cases); i++) {
        keys_of(cases[i].call, got, sizeof got);
        if (strcmp(got, cases[i].keys) != 0)
            fail_msg("%s: got '%s', want '%s'", cases[i].call, got, cases[i].keys);
    }
}

/* ---- the join with the registered commands ---- */

typedef struct join_ctx {
    int checked;
    char errors[4096];
    size_t used;
} join_ctx;

static void check_one(gb_command *cmd, void *ctx)
{
    join_ctx *j = ctx;
    const gb_command_def *d = cmd->def;
    const gb_command_meta *m = cmd->meta;
    j->checked++;
#define MISMATCH(...) (j->used += (size_t)snprintf(j->errors + j->used, sizeof j->errors - j->used, __VA_ARGS__))
    if (!gb_command_keys_known(m))
        MISMATCH("%s: keys cannot be found\n", cmd->fullname);
    /* a definition names a handler; all it may add to Redis's description
     * are the engine's own flags */
    if (d->flags & ~(uint32_t)GB_CMD_ENGINE_OWN)
        MISMATCH("%s: flags 0x%x beyond the engine's own\n", d->name, d->flags);
    if (cmd->fullname == d->name && strcmp(m->name, d->name) != 0)
        MISMATCH("%s: joined with Redis's %s\n", d->name, m->name);
#undef MISMATCH
}

static void test_registered_commands_agree_with_redis(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    join_ctx j = {0};
    gb_commands_foreach(h->eng, true, check_one, &j);
    assert_true(j.checked > 150);
    if (j.used)
        fail_msg("%s", j.errors);
    harness_free(h);
}

static void test_gate_resolves_subcommands(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    assert_string_equal(run(h, "CONFIG NOSUCH"), "-ERR unknown subcommand 'NOSUCH'. Try CONFIG HELP.");
    assert_string_equal(run(h, "CONFIG"), "-ERR wrong number of arguments for 'config' command");
    assert_string_equal(run(h, "CONFIG GET"), "-ERR wrong number of arguments for 'config|get' command");
    assert_string_equal(run(h, "config get maxmemory"), "*2 $maxmemory $0");
    /* statistics are the subcommand's (INFO commandstats: cmdstat_config|get) */
    gb_command *config = gb_command_lookup(h->eng, gb_slice_cstr("config"));
    gb_command *get = gb_subcommand_lookup(config, gb_slice_cstr("GET"));
    assert_non_null(get);
    assert_int_equal(get->calls, 1);
    assert_int_equal(get->rejected_calls, 1);
    assert_int_equal(config->calls, 0);
    assert_ptr_equal(gb_command_lookup_fullname(h->eng, gb_slice_cstr("CONFIG|Get")), get);
    /* inside MULTI an unknown subcommand aborts the transaction */
    run(h, "MULTI");
    assert_string_equal(run(h, "OBJECT NOSUCH k"), "-ERR unknown subcommand 'NOSUCH'. Try OBJECT HELP.");
    assert_string_equal(run(h, "EXEC"), "-EXECABORT Transaction discarded because of previous errors.");
    assert_string_equal(run(h, "COMMAND GETKEYS GET a b"), "-ERR Invalid number of arguments specified for command");
    assert_string_equal(run(h, "COMMAND GETKEYS PING x"), "-ERR The command has no key arguments");
    assert_string_equal(run(h, "COMMAND GETKEYS NOSUCH a"), "-ERR Invalid command specified");
    assert_string_equal(run(h, "COMMAND GETKEYS ZUNIONSTORE d 5 a"), "-ERR Invalid arguments specified for command");
    assert_string_equal(run(h, "COMMAND GETKEYS MSET a 1 b 2"), "*2 $a $b");
    harness_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_sorted_and_found),
        cmocka_unit_test(test_keys_as_redis_finds_them),
        cmocka_unit_test(test_registered_commands_agree_with_redis),
        cmocka_unit_test(test_gate_resolves_subcommands),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
