/* engine/core/config/config.c: defaults, flags, config files (errors name the line and
 * option), CONFIG SET semantics through the engine. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <unistd.h>

#include "engine_harness.h"
#include "engine/core/config/config.h"

static void test_defaults(void **state)
{
    (void)state;
    gb_settings s;
    gb_settings_defaults(&s);
    assert_int_equal(s.port, 6379);
    assert_string_equal(s.bind, "127.0.0.1");
    assert_string_equal(s.unixsocket, "/tmp/goblin-core.sock");
    assert_int_equal(s.unixsocketperm, 0700);
    assert_int_equal(s.databases, 16);
    assert_int_equal(s.list_max_listpack_size, -2);
    assert_int_equal(s.list_implementation, GB_LISTIMPL_SEGMENTED);
    assert_int_equal(s.proto_max_bulk_len, 512LL * 1024 * 1024);
    assert_int_equal(s.client_obuf_hard, 1024LL * 1024 * 1024);
    assert_int_equal(s.cpu, -1);
    gb_settings_free(&s);
}

static void test_flags(void **state)
{
    (void)state;
    gb_settings s;
    gb_settings_defaults(&s);
    char err[256];
    char *argv[] = {"--port", "0", "--maxmemory", "2mb", "--numa-arena", "--list-implementation", "pma",
                    "--unixsocketperm", "755", "--client-output-buffer-limit", "normal 4mb 1mb 10"};
    assert_int_equal(gb_config_parse_args(&s, 11, argv, err, sizeof err), 0);
    assert_int_equal(s.port, 0);
    assert_int_equal(s.maxmemory, 2 * 1024 * 1024);
    assert_int_equal(s.numa_arena, 1);
    assert_int_equal(s.list_implementation, GB_LISTIMPL_PMA);
    assert_int_equal(s.unixsocketperm, 0755);
    assert_int_equal(s.client_obuf_hard, 4 * 1024 * 1024);
    assert_int_equal(s.client_obuf_soft_seconds, 10);
    char *bad[] = {"--nope", "1"};
    assert_int_not_equal(gb_config_parse_args(&s, 2, bad, err, sizeof err), 0);
    assert_non_null(strstr(err, "--nope"));
    char *badval[] = {"--port", "70000"};
    assert_int_not_equal(gb_config_parse_args(&s, 2, badval, err, sizeof err), 0);
    assert_non_null(strstr(err, "between 0 and 65535"));
    char *missing[] = {"--port"};
    assert_int_not_equal(gb_config_parse_args(&s, 1, missing, err, sizeof err), 0);
    gb_settings_free(&s);
}

static void test_config_file(void **state)
{
    (void)state;
    char path[] = "/tmp/goblin-test-conf-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *text = "# a comment\n"
                       "port 7777\n"
                       "\n"
                       "   requirepass \"se cret\"\n"
                       "bind 127.0.0.1 ::1\n"
                       "hash-max-ziplist-entries 64\n"
                       "save 900 1\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    gb_settings s;
    gb_settings_defaults(&s);
    char err[256];
    char *argv[] = {path, "--port", "8888", "--save", "300", "10", "--save", "60 10000"};
    assert_int_equal(gb_config_parse_args(&s, 8, argv, err, sizeof err), 0);
    assert_int_equal(s.port, 8888); /* the flag wins over the file */
    /* save points add up, the file's and the command line's, as in Redis */
    assert_int_equal(s.save_n, 3);
    assert_int_equal(s.save_seconds[0], 900);
    assert_int_equal(s.save_seconds[2], 60);
    assert_int_equal(s.save_changes[2], 10000);
    assert_string_equal(s.requirepass, "se cret");
    assert_string_equal(s.bind, "127.0.0.1 ::1");
    assert_int_equal(s.hash_max_listpack_entries, 64); /* Redis's old name is accepted */
    unlink(path);

    strcpy(path, "/tmp/goblin-test-conf-XXXXXX");
    fd = mkstemp(path);
    const char *bad = "port 1\nfrobnicate yes\n";
    assert_int_equal(write(fd, bad, strlen(bad)), (ssize_t)strlen(bad));
    close(fd);
    assert_int_not_equal(gb_config_load_file(&s, path, err, sizeof err), 0);
    assert_non_null(strstr(err, ":2:"));
    assert_non_null(strstr(err, "frobnicate"));
    unlink(path);
    gb_settings_free(&s);
}

static void test_config_set_get(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    assert_string_equal(run(h, "CONFIG SET maxmemory 10mb hz 20"), "+OK");
    /* a save point's seconds are at least 1 (Redis's check) */
    const char *saves[] = {"0 1", "1 0"};
    for (int i = 0; i < 2; i++) {
        gb_slice argv[] = {gb_slice_cstr("CONFIG"), gb_slice_cstr("SET"), gb_slice_cstr("save"), gb_slice_cstr(saves[i])};
        h->out.len = 0;
        h->out.buf[0] = '\0';
        gb_gate_execute(h->c, 4, argv);
        assert_string_equal(h->out.buf, i == 0 ? "-ERR CONFIG SET failed (possibly related to argument 'save') - "
                                                 "Invalid save parameters"
                                               : "+OK");
    }
    assert_int_equal(h->eng->cfg.maxmemory, 10 * 1024 * 1024);
    assert_string_equal(run(h, "CONFIG GET maxmemory"), "*2 $maxmemory $10485760");
    assert_string_equal(run(h, "CONFIG SET databases 4"),
                        "-ERR CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config");
    assert_string_equal(run(h, "CONFIG SET nosuch 1"),
                        "-ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'");
    /* all or nothing: the valid first pair is not applied when the second fails */
    assert_string_equal(run(h, "CONFIG SET hz 30 maxmemory lots"),
                        "-ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value");
    assert_int_equal(h->eng->cfg.hz, 20);
    assert_string_equal(run(h, "CONFIG SET requirepass pw"), "+OK");
    assert_string_equal(run(h, "CONFIG GET requirepass"), "*2 $requirepass $pw");
    assert_string_equal(run(h, "CONFIG SET maxmemory"), "-ERR wrong number of arguments for 'config|set' command");
    harness_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_flags),
        cmocka_unit_test(test_config_file),
        cmocka_unit_test(test_config_set_get),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
