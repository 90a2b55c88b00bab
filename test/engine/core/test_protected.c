/* engine/core/request/client.c: who is local (Redis's islocalClient: the Unix
 * socket, TCP from loopback, and here the rings, which share memory with
 * the server) and which protected actions (enable-debug-command,
 * enable-protected-configs, enable-module-command) each setting allows;
 * the gate's refusal of DEBUG and of MODULE LOAD/LOADEX/UNLOAD (not LIST or
 * HELP) for a client the setting does not admit. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "engine/core/request/client.h"
#include "engine/core/config/config.h"
#include "engine_harness.h"

static void test_settings_by_transport(void **state)
{
    (void)state;
    static const struct {
        uint32_t flags;
        bool local;
    } cases[] = {
        {0, false},                      /* TCP from another host */
        {GB_CLIENT_LOOPBACK, true},      /* TCP from 127.0.0.1 or ::1 */
        {GB_CLIENT_UNIX, true},          /* the Unix socket */
        {GB_CLIENT_RING, true},          /* a shared-memory ring */
        {GB_CLIENT_SCRIPT, false},       /* a script's client is none of them */
        {GB_CLIENT_MULTI | GB_CLIENT_AUTHED, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gb_client c;
        memset(&c, 0, sizeof c);
        c.flags = cases[i].flags;
        assert_int_equal(gb_client_is_local(&c), cases[i].local);
        assert_false(gb_client_protected_allowed(&c, GB_PROTECTED_NO));
        assert_true(gb_client_protected_allowed(&c, GB_PROTECTED_YES));
        assert_int_equal(gb_client_protected_allowed(&c, GB_PROTECTED_LOCAL), cases[i].local);
    }
}

static void test_protected_settings_are_dir_and_dbfilename(void **state)
{
    (void)state;
    assert_true(gb_config_is_protected("dir"));
    assert_true(gb_config_is_protected("dbfilename"));
    assert_false(gb_config_is_protected("maxmemory"));
    assert_false(gb_config_is_protected("appendfilename"));
    assert_false(gb_config_is_protected("no-such-option"));
    /* Both switches are set at start-up only, as in Redis 7.0. */
    assert_false(gb_config_is_runtime("enable-debug-command"));
    assert_false(gb_config_is_runtime("enable-protected-configs"));
    assert_false(gb_config_is_runtime("enable-module-command"));
}

static void module_local(gb_settings *s) { s->enable_module_command = GB_PROTECTED_LOCAL; }
static void module_yes(gb_settings *s) { s->enable_module_command = GB_PROTECTED_YES; }

#define MODULE_REFUSED "-ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", " \
                       "you can run it from a local connection, otherwise you need to set this option in the "       \
                       "configuration file, and then restart the server."
#define LOAD_FAILED "-ERR Error loading the extension. Please check the server logs."

/* The harness's client is no Unix socket, loopback or ring: not local. */
static void test_module_subcommands_protected(void **state)
{
    (void)state;
    void (*settings[])(gb_settings *) = {NULL, module_local, module_yes};
    for (size_t i = 0; i < 3; i++) {
        harness *h = harness_new(settings[i]);
        gb_command *module = gb_command_lookup(h->eng, gb_slice_cstr("module"));
        assert_non_null(module);
        static const char *const guarded[] = {"load", "loadex", "unload"}, *const open[] = {"list", "help"};
        for (size_t j = 0; j < 3; j++)
            assert_true(gb_subcommand_lookup(module, gb_slice_cstr(guarded[j]))->flags & GB_CMD_PROTECTED);
        for (size_t j = 0; j < 2; j++)
            assert_false(gb_subcommand_lookup(module, gb_slice_cstr(open[j]))->flags & GB_CMD_PROTECTED);
        bool admitted = settings[i] == module_yes;
        assert_string_equal(run(h, "MODULE LIST"), "*0");
        assert_string_equal(run(h, "MODULE LOAD /nonexistent/mod.so"), admitted ? LOAD_FAILED : MODULE_REFUSED);
        assert_string_equal(run(h, "MODULE LOADEX /nonexistent/mod.so ARGS"),
                            admitted ? LOAD_FAILED : MODULE_REFUSED);
        assert_string_equal(run(h, "MODULE UNLOAD x"),
                            admitted ? "-ERR Error unloading module: no such module with that name" : MODULE_REFUSED);
        /* enable-module-command says nothing of DEBUG (off by default) */
        assert_non_null(strstr(run(h, "DEBUG HELP"), "-ERR DEBUG command not allowed."));
        harness_free(h);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_settings_by_transport),
        cmocka_unit_test(test_protected_settings_are_dir_and_dbfilename),
        cmocka_unit_test(test_module_subcommands_protected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
