/* engine/core/request/client.c: who is local (Redis's islocalClient: the Unix
 * socket, TCP from loopback, and here the rings, which share memory with
 * the server) and which protected actions (enable-debug-command,
 * enable-protected-configs) each setting allows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "engine/core/request/client.h"
#include "engine/core/config/config.h"

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
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_settings_by_transport),
        cmocka_unit_test(test_protected_settings_are_dir_and_dbfilename),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
