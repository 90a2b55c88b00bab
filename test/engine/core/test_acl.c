/* engine/core/acl*.c: rules (each kind and each error), selectors, key and
 * channel permissions against key specs, category expansion, descriptions
 * (and that they read back to the same permissions), the string sets, the
 * log, authentication, the gate's replies, files. Redis 7.0's behaviour is
 * the reference; test/integration/test_acl_differential.py compares with a
 * live redis-server. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <ctype.h>
#include <stdio.h>
#include <unistd.h>

#include "engine_harness.h"
#include "engine/base/mem.h"
#include "engine/base/random.h"
#include "engine/base/sha256.h"
#include "engine/core/acl/acl.h"
#include "engine/core/acl/acl_file.h"
#include "engine/core/acl/acl_list.h"
#include "engine/core/request/command_meta.h"
#include "engine/base/util.h"
#include "platform/clock.h"

/* ---- helpers ----------------------------------------------------------------------- */

/* Splits on spaces into argv (pointing into buf). */
static int words(char *buf, gb_slice *argv, int max)
{
    int n = 0;
    for (char *save = NULL, *t = strtok_r(buf, " ", &save); t && n < max; t = strtok_r(NULL, " ", &save))
        argv[n++] = gb_slice_cstr(t);
    return n;
}

/* ACL SETUSER name <space-separated rules> through the API. */
static enum gb_acl_rule_error setuser(harness *h, const char *name, const char *rules)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", rules);
    gb_slice argv[128], *merged;
    int bad, n = gb_acl_merge_selector_args(argv, words(buf, argv, 128), &merged, &bad);
    assert_true(n >= 0);
    enum gb_acl_rule_error e = gb_acl_set_user(h->eng, gb_slice_cstr(name), merged, n, &bad);
    gb_free(merged);
    return e;
}

static gb_acl_user *user(harness *h, const char *name) { return gb_acl_find_user(h->eng, gb_slice_cstr(name)); }

/* ACL LIST's form of a user (after "user <name> "). */
static const char *describe(harness *h, const char *name)
{
    static char out[8192];
    gb_strbuf b = {0};
    gb_acl_describe_user(user(h, name), &h->eng->acl->cmds, &b);
    snprintf(out, sizeof out, "%s", gb_strbuf_cstr(&b));
    gb_strbuf_free(&b);
    return out;
}

/* Whether the user may run a command line, any command of Redis's table
 * (implemented here or not); *pos the refused argument. */
static enum gb_acl_denial check(harness *h, const char *name, const char *cmdline, int *pos)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", cmdline);
    gb_slice argv[64];
    int argc = words(buf, argv, 64);
    const gb_acl_commands *cmds = &h->eng->acl->cmds;
    const gb_acl_cmd *c = gb_acl_commands_find(cmds, argv[0]);
    assert_non_null(c);
    if (c->nsubs && argc > 1) {
        char full[128];
        snprintf(full, sizeof full, "%.*s|%.*s", (int)argv[0].len, argv[0].ptr, (int)argv[1].len, argv[1].ptr);
        c = gb_acl_commands_find(cmds, gb_slice_cstr(full));
        assert_non_null(c);
    }
    int p = -1;
    enum gb_acl_denial d =
        gb_acl_user_check(user(h, name), cmds, gb_acl_commands_id(cmds, c), c->meta, argc, argv, &p);
    if (pos)
        *pos = p;
    return d;
}

/* A harness client authenticated as name. */
static void login(harness *h, const char *name) { gb_acl_login(h->c, user(h, name)); }

/* ---- rules ------------------------------------------------------------------------- */

static void test_default_user(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    assert_string_equal(describe(h, "default"), "on nopass ~* &* +@all");
    assert_string_equal(run(h, "ACL WHOAMI"), "$default");
    assert_string_equal(run(h, "ACL USERS"), "*1 $default");
    assert_true(h->c->flags & GB_CLIENT_AUTHED);
    assert_false(gb_acl_auth_required(h->eng));
    harness_free(h);
}

static void test_new_user_and_flags(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    assert_int_equal(setuser(h, "a", ""), GB_ACL_RULE_OK);
    assert_string_equal(describe(h, "a"), "off resetchannels -@all");
    assert_int_equal(setuser(h, "a", "on skip-sanitize-payload nopass"), GB_ACL_RULE_OK);
    assert_string_equal(describe(h, "a"), "on nopass skip-sanitize-payload resetchannels -@all");
    assert_int_equal(setuser(h, "a", "reset"), GB_ACL_RULE_OK);
    assert_string_equal(describe(h, "a"), "off sanitize-payload resetchannels -@all");
    assert_int_equal(setuser(h, "a", "ON Off"), GB_ACL_RULE_OK); /* any case, the last wins */
    assert_string_equal(describe(h, "a"), "off sanitize-payload resetchannels -@all");
    harness_free(h);
}

static void test_passwords(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    char hex[GB_SHA256_HEX + 1], p1[GB_SHA256_HEX + 1], rule[128], expect[256];
    gb_sha256_hex("p2", 2, hex);
    gb_sha256_hex("p1", 2, p1);
    snprintf(rule, sizeof rule, "on >p1 #%s >p1", hex);
    assert_int_equal(setuser(h, "a", rule), GB_ACL_RULE_OK);
    snprintf(expect, sizeof expect, "on #%s #%s resetchannels -@all", p1, hex);
    assert_string_equal(describe(h, "a"), expect);
    gb_acl_user *u = user(h, "a");
    assert_int_equal(gb_acl_list_count(&u->passwords), 2); /* ">p1" twice is one password */
    assert_int_equal(setuser(h, "a", "<p1"), GB_ACL_RULE_OK);
    assert_int_equal(gb_acl_list_count(&u->passwords), 1);
    assert_int_equal(setuser(h, "a", "<p1"), GB_ACL_RULE_NO_SUCH_PASSWORD);
    snprintf(rule, sizeof rule, "!%s", hex);
    assert_int_equal(setuser(h, "a", rule), GB_ACL_RULE_OK);
    assert_int_equal(gb_acl_list_count(&u->passwords), 0);
    assert_int_equal(setuser(h, "a", "#abc"), GB_ACL_RULE_BAD_HASH);
    for (int i = 0; i < 64; i++)
        hex[i] = (char)toupper((unsigned char)hex[i]);
    snprintf(rule, sizeof rule, "#%s", hex);
    assert_int_equal(setuser(h, "a", rule), GB_ACL_RULE_BAD_HASH); /* lower-case hex only */
    assert_int_equal(setuser(h, "a", ">x nopass"), GB_ACL_RULE_OK);
    assert_int_equal(gb_acl_list_count(&u->passwords), 0);
    assert_true(u->flags & GB_ACL_USER_NOPASS);
    assert_int_equal(setuser(h, "a", ">y"), GB_ACL_RULE_OK); /* a password ends nopass */
    assert_false(u->flags & GB_ACL_USER_NOPASS);
    assert_int_equal(setuser(h, "a", "resetpass"), GB_ACL_RULE_OK);
    assert_int_equal(gb_acl_list_count(&u->passwords), 0);
    harness_free(h);
}

static void test_rule_errors(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    static const struct {
        const char *rules;
        enum gb_acl_rule_error e;
    } cases[] = {
        {"bogus", GB_ACL_RULE_SYNTAX},          {"+nosuch", GB_ACL_RULE_UNKNOWN},
        {"-nosuch", GB_ACL_RULE_UNKNOWN},       {"+@nosuch", GB_ACL_RULE_UNKNOWN},
        {"+@", GB_ACL_RULE_UNKNOWN},            {"+", GB_ACL_RULE_UNKNOWN},
        {"+get|", GB_ACL_RULE_SYNTAX},          {"+config|get|x", GB_ACL_RULE_FIRSTARG_OF_SUB},
        {"-get|x", GB_ACL_RULE_UNKNOWN},        {"+config|nosuch", GB_ACL_RULE_UNKNOWN},
        {"+|x", GB_ACL_RULE_UNKNOWN},           {"~* ~x", GB_ACL_RULE_KEYS_AFTER_ALL},
        {"allkeys %R~x", GB_ACL_RULE_KEYS_AFTER_ALL}, {"&* &x", GB_ACL_RULE_CHANNELS_AFTER_ALL},
        {"%~x", GB_ACL_RULE_SYNTAX},            {"%RR~x", GB_ACL_RULE_SYNTAX},
        {"%X~x", GB_ACL_RULE_SYNTAX},           {"(on)", GB_ACL_RULE_SYNTAX},
        {"(>pw)", GB_ACL_RULE_SYNTAX},          {")", GB_ACL_RULE_SYNTAX},
    };
    for (size_t i = 0; i < GB_ARRAY_LEN(cases); i++)
        assert_int_equal(setuser(h, "e", cases[i].rules), cases[i].e);
    /* all or nothing: the valid rules before the bad one were not applied */
    assert_null(user(h, "e"));
    assert_string_equal(gb_acl_rule_error_text(GB_ACL_RULE_UNKNOWN), "Unknown command or category name in ACL");
    /* the reply names the merged modifier */
    assert_string_equal(run(h, "ACL SETUSER e (~x on)"), "-ERR Error in ACL SETUSER modifier '(~x on)': Syntax error");
    assert_string_equal(run(h, "ACL SETUSER e x (~y"),
                        "-ERR Unmatched parenthesis in acl selector starting at '(~y'.");
    harness_free(h);
}

static void test_key_patterns(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    assert_int_equal(setuser(h, "a", "%R~a* %W~b* %RW~c* %R~d %W~d %r~e"), GB_ACL_RULE_OK);
    assert_string_equal(describe(h, "a"), "off %R~a* %W~b* ~c* ~d %R~e resetchannels -@all");
    assert_int_equal(setuser(h, "a", "%R"), GB_ACL_RULE_OK); /* Redis 7.0 takes an empty pattern */
    assert_string_equal(describe(h, "a"), "off %R~a* %W~b* ~c* ~d %R~e %R~ resetchannels -@all");
    assert_int_equal(setuser(h, "a", "resetkeys ~x ~x allkeys"), GB_ACL_RULE_OK);
    assert_string_equal(describe(h, "a"), "off ~* resetchannels -@all");
    /* "%RW~*" is a pattern, not allkeys: more patterns may follow */
    assert_int_equal(setuser(h, "a", "resetkeys %RW~* ~y"), GB_ACL_RULE_OK);
    assert_string_equal(describe(h, "a"), "off ~* ~y resetchannels -@all");
    harness_free(h);
}

/* The access a key spec declares decides which patterns count. */
static void test_key_permissions(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    assert_int_equal(setuser(h, "a", "on +@all %R~r* %W~w* ~b*"), GB_ACL_RULE_OK);
    int pos;
    assert_int_equal(check(h, "a", "GET r1", NULL), GB_ACL_ALLOWED);
    assert_int_equal(check(h, "a", "GET w1", &pos), GB_ACL_DENIED_KEY);
    assert_int_equal(pos, 1);
    assert_int_equal(check(h, "a", "SET w1 v", NULL), GB_ACL_ALLOWED);
    assert_int_equal(check(h, "a", "SET r1 v", NULL), GB_ACL_DENIED_KEY);
    assert_int_equal(check(h, "a", "SET w1 v GET", NULL), GB_ACL_DENIED_KEY); /* GET makes it a read too */
    assert_int_equal(check(h, "a", "SET b1 v GET", NULL), GB_ACL_ALLOWED);
    assert_int_equal(check(h, "a", "DEL w1", NULL), GB_ACL_ALLOWED);
    assert_int_equal(check(h, "a", "DEL r1", NULL), GB_ACL_DENIED_KEY);
    /* EXISTS neither reads nor writes the value: any pattern will do */
    assert_int_equal(check(h, "a", "EXISTS r1 w1 b1", NULL), GB_ACL_ALLOWED);
    assert_int_equal(check(h, "a", "EXISTS x", NULL), GB_ACL_DENIED_KEY);
    /* COPY reads the source, writes the destination */
    assert_int_equal(check(h, "a", "COPY r1 w1", NULL), GB_ACL_ALLOWED);
    assert_int_equal(check(h, "a", "COPY w1 r1", &pos), GB_ACL_DENIED_KEY);
    assert_int_equal(pos, 1);
    assert_int_equal(check(h, "a", "MSET w1 x w2 y r3 z", &pos), GB_ACL_DENIED_KEY);
    assert_int_equal(pos, 5);
    /* keyless commands and key-less forms need no pattern */
    assert_int_equal(check(h, "a", "PING", NULL), GB_ACL_ALLOWED);
    /* "*" does not match the empty key (Redis's stringmatchlen); allkeys does */
    assert_int_equal(setuser(h, "b", "on +@all %RW~*"), GB_ACL_RULE_OK);
    char empty_get[] = "GET";
    gb_slice argv[2] = {gb_slice_cstr(empty_get), gb_slice_make("", 0)};
    const gb_acl_commands *cmds = &h->eng->acl->cmds;
    const gb_acl_cmd *get = gb_acl_commands_find(cmds, gb_slice_cstr("get"));
    assert_int_equal(gb_acl_user_check(user(h, "b"), cmds, gb_acl_commands_id(cmds, get), get->meta, 2, argv, &pos),
                     GB_ACL_DENIED_KEY);
    assert_int_equal(setuser(h, "b", "allkeys"), GB_ACL_RULE_OK);
    assert_int_equal(gb_acl_user_check(user(h, "b"), cmds, gb_acl_commands_id(cmds, get), get->meta, 2, argv, &pos),
                     GB_ACL_ALLOWED);
    harness_free(h);
}

static void test_channels(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    assert_int_equal(setuser(h, "a", "on +@all ~* &news.* &exact"), GB_ACL_RULE_OK);
    int pos;
    assert_int_equal(check(h, "a", "PUBLISH news.1 m", NULL), GB_ACL_ALLOWED);
    assert_int_equal(check(h, "a", "PUBLISH other m", &pos), GB_ACL_DENIED_CHANNEL);
    assert_int_equal(pos, 1);
    assert_int_equal(check(h, "a", "SUBSCRIBE exact news.x other", &pos), GB_ACL_DENIED_CHANNEL);
    assert_int_equal(pos, 3);
    /* a PSUBSCRIBE pattern must be one of the user's, as written */
    assert_int_equal(check(h, "a", "PSUBSCRIBE news.*", NULL), GB_ACL_ALLOWED);
    assert_int_equal(check(h, "a", "PSUBSCRIBE news.1", NULL), GB_ACL_DENIED_CHANNEL);
    assert_int_equal(check(h, "a", "UNSUBSCRIBE other", NULL), GB_ACL_ALLOWED); /* leaving is never refused */
    gb_acl_login(h->c, user(h, "a"));
    assert_true(gb_acl_check_channel(h->c, gb_slice_cstr("news.2"), false));
    assert_false(gb_acl_check_channel(h->c, gb_slice_cstr("news.2"), true));
    assert_true(gb_acl_check_channel(h->c, gb_slice_cstr("news.*"), true));
    /* acl-pubsub-default allchannels: new users and selectors get &* */
    assert_string_equal(run(h, "CONFIG SET acl-pubsub-default allchannels"), "+OK");
    assert_int_equal(setuser(h, "b", "(+get)"), GB_ACL_RULE_OK);
    assert_string_equal(describe(h, "b"), "off &* -@all (&* -@all +get)");
    assert_int_equal(setuser(h, "b", "reset"), GB_ACL_RULE_OK);
    assert_string_equal(describe(h, "b"), "off sanitize-payload &* -@all");
    harness_free(h);
}

/* "+@cat" grants exactly the commands Redis's table puts in it; a
 * container's rule covers its subcommands. */
static void test_categories(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    const gb_acl_commands *cmds = &h->eng->acl->cmds;
    for (int j = 0; j < GB_ACL_CATEGORY_COUNT; j++) {
        char rule[64];
        snprintf(rule, sizeof rule, "+@%s", gb_acl_category_names[j]);
        assert_int_equal(setuser(h, "a", "reset"), GB_ACL_RULE_OK);
        assert_int_equal(setuser(h, "a", rule), GB_ACL_RULE_OK);
        const gb_acl_user *u = user(h, "a");
        for (uint16_t id = 0; id < cmds->nredis; id++) {
            const gb_acl_cmd *c = &cmds->cmd[id];
            bool in = c->meta->acl_categories & (1u << j);
            bool parent_in = c->parent != GB_ACL_NO_ID && (cmds->cmd[c->parent].meta->acl_categories & (1u << j));
            assert_int_equal(gb_acl_bit(u->selectors[0]->allowed, id), in || parent_in);
        }
    }
    assert_int_equal(setuser(h, "b", "-@all +config"), GB_ACL_RULE_OK);
    assert_int_equal(check(h, "b", "CONFIG SET hz 10", NULL), GB_ACL_ALLOWED);
    assert_int_equal(setuser(h, "b", "-config|set"), GB_ACL_RULE_OK);
    assert_int_equal(check(h, "b", "CONFIG SET hz 10", NULL), GB_ACL_DENIED_CMD);
    assert_int_equal(check(h, "b", "CONFIG GET hz", NULL), GB_ACL_ALLOWED);
    assert_string_equal(describe(h, "b"), "off resetchannels -@all +config -config|set");
    assert_int_equal(gb_acl_category_by_name(gb_slice_cstr("SortedSet")), GB_ACL_SORTEDSET);
    assert_int_equal(gb_acl_category_by_name(gb_slice_cstr("all")), 0);
    harness_free(h);
}

/* "+select|0": only that first argument (Redis's deprecated rule). */
static void test_first_args(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    gb_log_set_level(GB_LOG_WARNING + 1); /* first-argument rules warn (deprecated in Redis) */
    assert_int_equal(setuser(h, "a", "on -@all +select|0 +select|A +SELECT|a"), GB_ACL_RULE_OK);
    assert_int_equal(check(h, "a", "SELECT 0", NULL), GB_ACL_ALLOWED);
    assert_int_equal(check(h, "a", "SELECT a", NULL), GB_ACL_ALLOWED);
    assert_int_equal(check(h, "a", "SELECT 1", NULL), GB_ACL_DENIED_CMD);
    assert_string_equal(describe(h, "a"), "on resetchannels -@all +select|0 +select|A");
    assert_int_equal(setuser(h, "a", "+select"), GB_ACL_RULE_OK); /* the command itself: first args forgotten */
    assert_string_equal(describe(h, "a"), "on resetchannels -@all +select");
    assert_int_equal(setuser(h, "a", "-select +select|2 +@all"), GB_ACL_RULE_OK);
    assert_string_equal(describe(h, "a"), "on resetchannels +@all");
    gb_log_set_level(GB_LOG_NOTICE);
    harness_free(h);
}

static void test_selectors(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    assert_int_equal(setuser(h, "a", "on -@all +get ~k* (+set ~w* &c) ()"), GB_ACL_RULE_OK);
    assert_string_equal(describe(h, "a"), "on ~k* resetchannels -@all +get (~w* resetchannels &c -@all +set) "
                                          "(resetchannels -@all)");
    int pos;
    assert_int_equal(check(h, "a", "GET k1", NULL), GB_ACL_ALLOWED);
    assert_int_equal(check(h, "a", "SET w1 v", NULL), GB_ACL_ALLOWED);
    /* most relevant refusal: a key (selector 2) over a command (selectors 1, 3) */
    assert_int_equal(check(h, "a", "SET k1 v", &pos), GB_ACL_DENIED_KEY);
    assert_int_equal(pos, 1);
    assert_int_equal(check(h, "a", "GET w1", &pos), GB_ACL_DENIED_KEY);
    assert_int_equal(check(h, "a", "LPUSH k1 v", &pos), GB_ACL_DENIED_CMD);
    /* quotes inside a selector are Redis's config quoting */
    assert_int_equal(setuser(h, "a", "clearselectors (\"~q\" +get)"), GB_ACL_RULE_OK);
    assert_string_equal(describe(h, "a"), "on ~k* resetchannels -@all +get (~q resetchannels -@all +get)");
    harness_free(h);
}

static void test_merge_selector_args(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
        int bad;
    } cases[] = {
        {"a (b c) d", "a|(b c)|d", -1},   {"(b c", NULL, 0},          {"x (a (b c)", "x|(b c)", -1},
        {"() ( )", "()|( )", -1},          {"( x ) y", "( x )|y", -1}, {"a ( b", NULL, 1},
    };
    for (size_t i = 0; i < GB_ARRAY_LEN(cases); i++) {
        char buf[128], joined[128] = "";
        snprintf(buf, sizeof buf, "%s", cases[i].in);
        gb_slice argv[16], *out;
        int bad = -1, n = gb_acl_merge_selector_args(argv, words(buf, argv, 16), &out, &bad);
        if (!cases[i].out) {
            assert_int_equal(n, -1);
            assert_int_equal(bad, cases[i].bad);
            continue;
        }
        for (int j = 0; j < n; j++)
            snprintf(joined + strlen(joined), sizeof joined - strlen(joined), "%s%.*s", j ? "|" : "",
                     (int)out[j].len, out[j].ptr);
        assert_string_equal(joined, cases[i].out);
        gb_free(out);
    }
}

/* A description, applied to a new user, gives the same bitmap (Redis
 * checks the same invariant and panics when it fails). */
static void test_descriptions_read_back(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    static const char *const pool[] = {"+@all", "-@all", "+@read", "-@read", "+@write", "-@hash", "+@admin",
                                       "-@dangerous", "+get", "-get", "+config|get", "-config", "+client",
                                       "-client|kill", "+@connection", "-@slow", "+@fast", "+select|0", "+acl",
                                       "-acl|setuser", "+@scripting", "-@pubsub", "+@keyspace", "-@stream"};
    gb_random_seed(42);
    gb_log_set_level(GB_LOG_WARNING + 1); /* "+select|0" warns each time (deprecated in Redis) */
    const gb_acl_commands *cmds = &h->eng->acl->cmds;
    for (int round = 0; round < 300; round++) {
        char rules[1024] = "reset";
        int n = 1 + (int)gb_random_below(8);
        for (int i = 0; i < n; i++)
            snprintf(rules + strlen(rules), sizeof rules - strlen(rules), " %s",
                     pool[gb_random_below(GB_ARRAY_LEN(pool))]);
        assert_int_equal(setuser(h, "a", rules), GB_ACL_RULE_OK);
        gb_strbuf d = {0};
        gb_acl_describe_commands(user(h, "a")->selectors[0], cmds, &d);
        assert_int_equal(setuser(h, "b", "reset"), GB_ACL_RULE_OK);
        assert_int_equal(setuser(h, "b", gb_strbuf_cstr(&d)), GB_ACL_RULE_OK);
        const gb_acl_selector *x = user(h, "a")->selectors[0], *y = user(h, "b")->selectors[0];
        assert_memory_equal(x->allowed, y->allowed, sizeof x->allowed);
        /* first arguments are described where they matter: the command's bit clear */
        assert_int_equal(check(h, "a", "SELECT 0", NULL), check(h, "b", "SELECT 0", NULL));
        assert_int_equal(check(h, "a", "SELECT 1", NULL), check(h, "b", "SELECT 1", NULL));
        gb_strbuf_free(&d);
    }
    gb_log_set_level(GB_LOG_NOTICE);
    harness_free(h);
}

/* The hot path's bitmap: set for what a user may run with any arguments. */
static void test_fast_bitmap(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    gb_command *get = gb_command_lookup(h->eng, gb_slice_cstr("get"));
    gb_command *ping = gb_command_lookup(h->eng, gb_slice_cstr("ping"));
    gb_command *auth = gb_command_lookup(h->eng, gb_slice_cstr("auth"));
    assert_true(gb_acl_permits_any_args(user(h, "default"), get->acl_id));
    assert_int_equal(setuser(h, "a", "on -@all +get +ping ~k*"), GB_ACL_RULE_OK);
    assert_false(gb_acl_permits_any_args(user(h, "a"), get->acl_id)); /* keys to check */
    assert_true(gb_acl_permits_any_args(user(h, "a"), ping->acl_id));
    assert_true(gb_acl_permits_any_args(user(h, "a"), auth->acl_id)); /* usable before AUTH: always */
    assert_int_equal(setuser(h, "a", "(+get ~*)"), GB_ACL_RULE_OK);
    assert_true(gb_acl_permits_any_args(user(h, "a"), get->acl_id));
    harness_free(h);
}

/* ---- the string sets and the log ----------------------------------------------------- */

static void test_acl_list(void **state)
{
    (void)state;
    gb_acl_list l;
    gb_acl_list_init(&l, true);
    bool added;
    gb_acl_list_add(&l, gb_slice_cstr("Abc"), 1, &added);
    assert_true(added);
    gb_acl_str *s = gb_acl_list_add(&l, gb_slice_cstr("aBC"), 2, &added);
    assert_false(added);
    assert_string_equal(s->bytes, "Abc");
    /* 100,000 strings, then remove every other one: linear, order kept */
    char buf[32];
    for (int i = 0; i < 100000; i++) {
        snprintf(buf, sizeof buf, "k%d", i);
        gb_acl_list_add(&l, gb_slice_cstr(buf), 0, NULL);
    }
    for (int i = 0; i < 100000; i += 2) {
        snprintf(buf, sizeof buf, "K%d", i);
        assert_true(gb_acl_list_remove(&l, gb_slice_cstr(buf)));
    }
    assert_false(gb_acl_list_remove(&l, gb_slice_cstr("k0")));
    assert_int_equal(gb_acl_list_count(&l), 50001);
    int prev = -1, seen = 0;
    GB_ACL_LIST_EACH(&l, x) {
        if (x->bytes[0] != 'k')
            continue;
        int v = atoi(x->bytes + 1);
        assert_true(v > prev && v % 2 == 1);
        prev = v;
        seen++;
    }
    assert_int_equal(seen, 50000);
    gb_acl_list copy;
    gb_acl_list_init(&copy, true);
    gb_acl_list_copy(&copy, &l);
    assert_non_null(gb_acl_list_find(&copy, gb_slice_cstr("K99999")));
    gb_acl_list_free(&copy);
    gb_acl_list_free(&l);
}

static void test_log(void **state)
{
    (void)state;
    gb_acl_log log = {0};
    gb_slice u = gb_slice_cstr("u");
    gb_acl_log_add(&log, GB_ACL_DENIED_KEY, GB_ACL_CTX_TOPLEVEL, gb_slice_cstr("k"), u, "one", 1000, 3);
    gb_acl_log_add(&log, GB_ACL_DENIED_CMD, GB_ACL_CTX_TOPLEVEL, gb_slice_cstr("get"), u, "two", 1000, 3);
    /* like the older entry: counted there, moved to the front */
    gb_acl_log_add(&log, GB_ACL_DENIED_KEY, GB_ACL_CTX_TOPLEVEL, gb_slice_cstr("k"), u, "three", 2000, 3);
    assert_int_equal(log.n, 2);
    assert_int_equal(log.head->count, 2);
    assert_string_equal(log.head->client_info, "three");
    /* another context, or more than 60 s later, is another entry */
    gb_acl_log_add(&log, GB_ACL_DENIED_KEY, GB_ACL_CTX_MULTI, gb_slice_cstr("k"), u, "4", 2000, 3);
    gb_acl_log_add(&log, GB_ACL_DENIED_KEY, GB_ACL_CTX_TOPLEVEL, gb_slice_cstr("k"), u, "5", 62001, 3);
    assert_int_equal(log.n, 3); /* acllog-max-len: the oldest went */
    assert_string_equal(log.tail->client_info, "three");
    /* a huge object is kept only in part */
    char *big = malloc(1 << 20);
    memset(big, 'x', 1 << 20);
    gb_acl_log_add(&log, GB_ACL_DENIED_KEY, GB_ACL_CTX_TOPLEVEL, gb_slice_make(big, 1 << 20), u, "6", 3000, 3);
    assert_int_equal(log.head->objlen, GB_ACL_LOG_OBJECT_MAX);
    free(big);
    gb_acl_log_add(&log, GB_ACL_DENIED_KEY, GB_ACL_CTX_TOPLEVEL, gb_slice_cstr("z"), u, "7", 3000, 0);
    assert_int_equal(log.n, 0); /* max 0: nothing kept */
    gb_acl_log_reset(&log);
    assert_string_equal(gb_acl_log_reason_name(GB_ACL_DENIED_CHANNEL), "channel");
    assert_string_equal(gb_acl_log_context_name(GB_ACL_CTX_LUA), "lua");
}

/* ---- the engine: authentication, the gate, users going away ---------------------------- */

static void test_requirepass_and_auth(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    assert_string_equal(run(h, "AUTH x"), "-ERR AUTH <password> called without any password configured for the "
                                          "default user. Are you sure your configuration is correct?");
    assert_string_equal(run(h, "CONFIG SET requirepass pw"), "+OK");
    assert_true(gb_acl_auth_required(h->eng));
    gb_client *c2 = gb_client_new(h->eng, &harness_ops, &h->out, NULL, NULL, 0);
    assert_false(c2->flags & GB_CLIENT_AUTHED);
    gb_client *saved = h->c;
    h->c = c2;
    assert_string_equal(run(h, "GET k"), "-NOAUTH Authentication required.");
    assert_string_equal(run(h, "AUTH nope"), "-WRONGPASS invalid username-password pair or user is disabled.");
    assert_string_equal(run(h, "AUTH default pw"), "+OK");
    assert_string_equal(run(h, "GET k"), "$nil");
    /* a user that is off cannot log in, even with nopass */
    assert_int_equal(setuser(h, "off", "off nopass +@all"), GB_ACL_RULE_OK);
    assert_string_equal(run(h, "AUTH off x"), "-WRONGPASS invalid username-password pair or user is disabled.");
    assert_int_equal(setuser(h, "on", "on >secret +@all ~*"), GB_ACL_RULE_OK);
    assert_string_equal(run(h, "HELLO 2 AUTH on wrong"), "-WRONGPASS invalid username-password pair or user is "
                                                          "disabled.");
    assert_string_equal(run(h, "AUTH on secret"), "+OK");
    assert_string_equal(run(h, "ACL WHOAMI"), "$on");
    /* both failures are in the log, newest first, as the client wrote the command */
    assert_int_equal(h->eng->acl->log.n, 3);
    assert_memory_equal(h->eng->acl->log.head->object, "HELLO", 5);
    assert_memory_equal(h->eng->acl->log.tail->object, "AUTH", 4);
    /* nopass again: clients that never logged in may run commands (Redis
     * asks authRequired at each command) */
    gb_client *c3 = gb_client_new(h->eng, &harness_ops, &h->out, NULL, NULL, 0);
    char err[128];
    assert_int_equal(gb_config_set(&h->eng->cfg, "requirepass", "", true, err, sizeof err), 0);
    gb_acl_requirepass_changed(h->eng);
    h->c = c3;
    assert_false(c3->flags & GB_CLIENT_AUTHED);
    assert_string_equal(run(h, "GET k"), "$nil");
    gb_client_free(c3);
    h->c = saved;
    gb_client_free(c2);
    harness_free(h);
}

static void test_gate_denials(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    assert_int_equal(setuser(h, "a", "on nopass -@all +get +set +multi +exec ~k*"), GB_ACL_RULE_OK);
    login(h, "a");
    assert_string_equal(run(h, "GET k1"), "$nil");
    assert_string_equal(run(h, "GET x"), "-NOPERM this user has no permissions to access one of the keys used as "
                                         "arguments");
    assert_string_equal(run(h, "LPUSH k1 a"), "-NOPERM this user has no permissions to run the 'lpush' command");
    assert_string_equal(run(h, "CONFIG GET hz"), "-NOPERM this user has no permissions to run the 'config|get' "
                                                 "command");
    assert_string_equal(run(h, "NOSUCH"), "-ERR unknown command 'NOSUCH', with args beginning with: ");
    assert_string_equal(run(h, "GET"), "-ERR wrong number of arguments for 'get' command"); /* arity first */
    /* inside MULTI a denial flags the transaction */
    assert_string_equal(run(h, "MULTI"), "+OK");
    assert_string_equal(run(h, "GET x"), "-NOPERM this user has no permissions to access one of the keys used as "
                                         "arguments");
    assert_string_equal(run(h, "EXEC"), "-EXECABORT Transaction discarded because of previous errors.");
    /* rules changed between queueing and EXEC */
    assert_string_equal(run(h, "MULTI"), "+OK");
    assert_string_equal(run(h, "GET k1"), "+QUEUED");
    assert_string_equal(run(h, "SET k1 v"), "+QUEUED");
    assert_int_equal(setuser(h, "a", "-get"), GB_ACL_RULE_OK);
    assert_string_equal(run(h, "EXEC"), "*2 -NOPERM ACLs rules changed between the moment the transaction was "
                                        "accumulated and the EXEC call. This command is no longer allowed for the "
                                        "following reason: no permission to execute the command or subcommand +OK");
    const gb_acl_log_entry *e = h->eng->acl->log.head;
    assert_int_equal(e->context, GB_ACL_CTX_MULTI);
    assert_int_equal(e->reason, GB_ACL_DENIED_CMD);
    assert_memory_equal(e->object, "get", 3);
    assert_non_null(strstr(e->client_info, " user=a "));
    harness_free(h);
}

static void test_script_check(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    assert_int_equal(setuser(h, "a", "on nopass +@all -lpush ~k*"), GB_ACL_RULE_OK);
    login(h, "a");
    gb_command *get = gb_command_lookup(h->eng, gb_slice_cstr("get"));
    gb_command *lpush = gb_command_lookup(h->eng, gb_slice_cstr("lpush"));
    gb_slice ok[] = {gb_slice_cstr("get"), gb_slice_cstr("k1")}, key[] = {gb_slice_cstr("get"), gb_slice_cstr("x")};
    gb_slice push[] = {gb_slice_cstr("lpush"), gb_slice_cstr("k1"), gb_slice_cstr("v")};
    assert_null(gb_gate_script_permits(h->c, get, 2, ok));
    assert_string_equal(gb_gate_script_permits(h->c, get, 2, key),
                        "The user executing the script can't access at least one of the keys mentioned in the "
                        "command arguments");
    assert_string_equal(gb_gate_script_permits(h->c, lpush, 3, push),
                        "The user executing the script can't run this command or subcommand");
    assert_int_equal(h->eng->acl->log.head->context, GB_ACL_CTX_LUA);
    harness_free(h);
}

static void test_deleted_user_logs_out(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    assert_int_equal(setuser(h, "a", "on nopass +@all ~*"), GB_ACL_RULE_OK);
    gb_client *other = gb_client_new(h->eng, &harness_ops, &h->out, NULL, NULL, 0);
    gb_acl_login(other, user(h, "a"));
    login(h, "a");
    assert_string_equal(run(h, "ACL DELUSER a nosuch"), ":1");
    assert_true(other->flags & GB_CLIENT_CLOSE_ASAP);
    assert_false(other->flags & GB_CLIENT_AUTHED);
    assert_ptr_equal(other->user, user(h, "default"));
    assert_true(h->c->flags & GB_CLIENT_CLOSE_AFTER_REPLY); /* the one asking: after its reply */
    assert_string_equal(run(h, "ACL DELUSER default"), "-ERR The 'default' user cannot be removed");
    gb_client_free(other);
    harness_free(h);
}

/* ---- files ------------------------------------------------------------------------------- */

static char aclpath[256];

static void with_aclfile(gb_settings *s)
{
    gb_free(s->aclfile);
    s->aclfile = gb_strdup(aclpath);
}

static void write_file(const char *text)
{
    FILE *f = fopen(aclpath, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_aclfile(void **state)
{
    (void)state;
    snprintf(aclpath, sizeof aclpath, "/tmp/gb-test-acl-%d.acl", (int)getpid());
    write_file("user alice on >pw ~a* +get\n\n  user bob off  \r\n");
    harness *h = harness_new(with_aclfile);
    char err[1024];
    assert_int_equal(gb_acl_load_at_startup(h->eng, err, sizeof err), 0);
    assert_string_equal(run(h, "ACL USERS"), "*3 $alice $bob $default");
    assert_string_equal(describe(h, "bob"), "off resetchannels -@all");
    /* SAVE then LOAD gives the same users; every user but default is a new
     * one, so a client of a user the file keeps as it was is logged out and
     * closed all the same (Redis 7.0's ACLLoadFromFile); default's stays */
    assert_int_equal(setuser(h, "carol", "on nopass +@read (~x +set)"), GB_ACL_RULE_OK);
    gb_client *carol = gb_client_new(h->eng, &harness_ops, &h->out, NULL, NULL, 0);
    gb_acl_login(carol, user(h, "carol"));
    gb_client *plain = gb_client_new(h->eng, &harness_ops, &h->out, NULL, NULL, 0);
    const gb_acl_user *default_before = plain->user;
    assert_string_equal(run(h, "ACL SAVE"), "+OK");
    assert_string_equal(run(h, "ACL SETUSER carol -@all"), "+OK");
    assert_string_equal(run(h, "ACL LOAD"), "+OK");
    assert_true(carol->flags & GB_CLIENT_CLOSE_ASAP);
    assert_ptr_equal(carol->user, user(h, "default"));
    assert_false(plain->flags & GB_CLIENT_CLOSE_ASAP);
    assert_ptr_equal(plain->user, default_before);
    assert_string_equal(describe(h, "carol"), "on nopass resetchannels -@all +@read (~x resetchannels -@all +set)");
    /* errors: every bad line named, nothing changed */
    write_file("user alice on +nosuch\nnot a user line\nuser alice on\nuser x (~y\n");
    char expect[2048];
    snprintf(expect, sizeof expect,
             "-ERR %s:1: Error in applying operation '+nosuch': Unknown command or category name in ACL. %s:2 should "
             "start with user keyword followed by "
             "the username. WARNING: Duplicate user 'alice' found on line 3. %s:4: Unmatched parenthesis in selector "
             "definition.WARNING: ACL errors detected, no change to the previously active ACL rules was performed",
             aclpath, aclpath, aclpath);
    assert_string_equal(run(h, "ACL LOAD"), expect);
    assert_non_null(user(h, "carol"));
    /* a user missing from the file is gone */
    write_file("user alice on\n");
    assert_string_equal(run(h, "ACL LOAD"), "+OK");
    assert_null(user(h, "carol"));
    assert_string_equal(describe(h, "default"), "on nopass ~* &* +@all");
    gb_client_free(carol);
    harness_free(h);
    unlink(aclpath);
}

static void with_user_lines(gb_settings *s)
{
    char err[256];
    char *argv[] = {"--user", "alice on \">a b\" ~k* +get", "--user", "default on nopass -@all +ping"};
    assert_int_equal(gb_config_parse_args(s, 4, argv, err, sizeof err), 0);
}

static void test_config_user_lines(void **state)
{
    (void)state;
    harness *h = harness_new(with_user_lines);
    char err[1024];
    assert_int_equal(gb_acl_load_at_startup(h->eng, err, sizeof err), 0);
    char hex[GB_SHA256_HEX + 1], expect[256];
    gb_sha256_hex("a b", 3, hex);
    snprintf(expect, sizeof expect, "on #%s ~k* resetchannels -@all +get", hex);
    assert_string_equal(describe(h, "alice"), expect);
    /* "default" was reset first, as in Redis */
    assert_string_equal(describe(h, "default"), "on nopass sanitize-payload resetchannels -@all +ping");
    harness_free(h);
}

static void with_bad_user_line(gb_settings *s)
{
    char err[256];
    char *argv[] = {"--user", "alice on +nosuch"};
    assert_int_equal(gb_config_parse_args(s, 2, argv, err, sizeof err), 0);
}

static void test_config_user_line_errors(void **state)
{
    (void)state;
    harness *h = harness_new(with_bad_user_line);
    char err[1024];
    assert_int_not_equal(gb_acl_load_at_startup(h->eng, err, sizeof err), 0);
    assert_string_equal(err, "--user: Error loading ACL rule '+nosuch' for the user named 'alice': Unknown command "
                             "or category name in ACL");
    harness_free(h);
}

/* ---- hostile sizes ------------------------------------------------------------------------ */

/* A SETUSER with 200,000 key and channel patterns costs linear time,
 * and a huge password is hashed, not kept. */
static void test_big_rule_lists(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    int n = 200000;
    gb_slice *rules = malloc((size_t)(n + 2) * sizeof *rules);
    char *text = malloc((size_t)n * 24);
    for (int i = 0; i < n; i++) {
        char *p = text + (size_t)i * 24;
        snprintf(p, 24, i % 2 ? "~key:%d" : "&chan:%d", i / 2);
        rules[i] = gb_slice_cstr(p);
    }
    size_t big = 16 << 20;
    char *pass = malloc(big);
    memset(pass, 'p', big);
    pass[0] = '>';
    rules[n] = gb_slice_make(pass, big);
    int bad;
    uint64_t t0 = gb_clock_mono_ns();
    assert_int_equal(gb_acl_set_user(h->eng, gb_slice_cstr("big"), rules, n + 1, &bad), GB_ACL_RULE_OK);
    uint64_t ms = (gb_clock_mono_ns() - t0) / 1000000;
    assert_true(ms < 5000);
    assert_int_equal(gb_acl_list_count(&user(h, "big")->selectors[0]->keys), n / 2);
    assert_int_equal(gb_acl_list_count(&user(h, "big")->selectors[0]->channels), n / 2);
    assert_int_equal(gb_acl_list_count(&user(h, "big")->passwords), 1);
    free(pass);
    free(text);
    free(rules);
    harness_free(h);
}

/* gb_acl_str_glob's byte comparisons for literal and "prefix*" patterns
 * agree with the general matcher (Redis's stringmatchlen) on random
 * patterns and strings over a small alphabet that includes every special
 * character, NUL and the empty string. */
static void test_glob_shapes_match_the_matcher(void **state)
{
    (void)state;
    static const char alphabet[] = {'a', 'b', ':', '*', '?', '[', ']', '\\', '\0'};
    gb_random_seed(7);
    gb_acl_list l;
    gb_acl_list_init(&l, false);
    int shapes[3] = {0};
    for (int round = 0; round < 4000; round++) {
        char pat[8], str[8];
        size_t plen = gb_random_u64() % 7, slen = gb_random_u64() % 7;
        /* Half the patterns are "literal + stars", the shape the shortcut takes. */
        bool prefix_form = gb_random_u64() % 2;
        for (size_t i = 0; i < plen; i++)
            pat[i] = prefix_form && i + 2 >= plen && plen > 0 ? '*' : alphabet[gb_random_u64() % sizeof alphabet];
        for (size_t i = 0; i < slen; i++)
            str[i] = alphabet[gb_random_u64() % 3]; /* the literal part's letters */
        if (gb_random_u64() % 4 == 0 && plen >= 2 && slen >= 2)
            memcpy(str, pat, 2); /* often share a prefix */
        const gb_acl_str *p = gb_acl_list_add(&l, gb_slice_make(pat, plen), 0, NULL);
        shapes[p->glob_shape]++;
        gb_slice sl = gb_slice_make(str, slen);
        assert_int_equal(gb_acl_str_glob(p, sl), gb_glob_match(pat, plen, str, slen, false));
    }
    for (int i = 0; i < 3; i++)
        assert_true(shapes[i] > 100); /* every shape was exercised */
    gb_acl_list_free(&l);
}

/* The permission check's single-key shortcut finds exactly the key
 * gb_command_keys finds, for every command it applies to, at every argc. */
static void test_single_key_shortcut_matches_specs(void **state)
{
    (void)state;
    gb_slice argv[8];
    for (int i = 0; i < 8; i++)
        argv[i] = gb_slice_cstr("k");
    int covered = 0;
    for (size_t i = 0; i < gb_command_meta_count; i++) {
        const gb_command_meta *top = &gb_command_meta_table[i];
        for (int sub = -1; sub < (int)top->nsubcommands; sub++) {
            const gb_command_meta *m = sub < 0 ? top : &top->subcommands[sub];
            uint16_t flags = 0;
            int pos = gb_command_single_key(m, &flags);
            if (pos == 0)
                continue;
            covered++;
            for (int argc = 1; argc <= 8; argc++) {
                gb_keys_result r;
                int n = gb_command_keys(m, argc, argv, &r);
                if (pos < argc) {
                    assert_int_equal(n, 1);
                    assert_int_equal(r.keys[0].pos, pos);
                    assert_int_equal(r.keys[0].flags, flags);
                } else {
                    assert_int_equal(n, 0);
                }
                gb_keys_result_free(&r);
            }
        }
    }
    assert_true(covered > 100); /* GET, SET, HSET, LPUSH, ZADD, XADD ... */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_user),
        cmocka_unit_test(test_new_user_and_flags),
        cmocka_unit_test(test_passwords),
        cmocka_unit_test(test_rule_errors),
        cmocka_unit_test(test_key_patterns),
        cmocka_unit_test(test_key_permissions),
        cmocka_unit_test(test_channels),
        cmocka_unit_test(test_categories),
        cmocka_unit_test(test_first_args),
        cmocka_unit_test(test_selectors),
        cmocka_unit_test(test_merge_selector_args),
        cmocka_unit_test(test_descriptions_read_back),
        cmocka_unit_test(test_fast_bitmap),
        cmocka_unit_test(test_acl_list),
        cmocka_unit_test(test_log),
        cmocka_unit_test(test_requirepass_and_auth),
        cmocka_unit_test(test_gate_denials),
        cmocka_unit_test(test_script_check),
        cmocka_unit_test(test_deleted_user_logs_out),
        cmocka_unit_test(test_aclfile),
        cmocka_unit_test(test_config_user_lines),
        cmocka_unit_test(test_config_user_line_errors),
        cmocka_unit_test(test_big_rule_lists),
        cmocka_unit_test(test_glob_shapes_match_the_matcher),
        cmocka_unit_test(test_single_key_shortcut_matches_specs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
