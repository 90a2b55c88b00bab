/* engine/cluster/cluster.c: nodes.conf in Redis's format (a file as
 * redis-server 7.0 writes it loads, saves back byte for byte, and every
 * malformed line is refused), slot claims by config epoch, epoch
 * collisions, failover votes, and the checks on what peers send. */
#define _GNU_SOURCE /* mkdtemp: glibc hides it under _POSIX_C_SOURCE alone, macOS under any _POSIX_C_SOURCE */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "engine/base/strbuf.h"
#include "engine/cluster/cluster.h"

#define A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define C "cccccccccccccccccccccccccccccccccccccccc"

static char dir[64];
static char path[128];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/gb-cluster-test-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/nodes.conf", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(path);
    rmdir(dir);
    return 0;
}

static void write_text(const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static char *read_text(void)
{
    static char buf[8192];
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static const char redis_file[] =
    A " 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-100 200 [101->-" B "] [300-<-" C "]\n"
    B " 127.0.0.1:7001@17001,host-b master - 0 1700000000000 2 connected 101-199 201-16383\n"
    C " 127.0.0.1:7002@17002 slave " B " 0 1700000000000 2 connected\n"
    "vars currentEpoch 5 lastVoteEpoch 3\n";

static void test_load_save_round_trip(void **state)
{
    (void)state;
    write_text(redis_file);
    gb_cluster *cl = gb_cluster_new(7000, 17000, path);
    char err[256];
    assert_int_equal(gb_cluster_load_config(cl, err, sizeof err), 0);
    assert_memory_equal(cl->myself->name, A, 40);
    assert_int_equal(cl->nnodes, 3);
    assert_int_equal(cl->current_epoch, 5);
    assert_int_equal(cl->last_vote_epoch, 3);
    assert_ptr_equal(cl->slots[0], cl->myself);
    assert_ptr_equal(cl->slots[200], cl->myself);
    assert_int_equal(cl->myself->nslots, 102);
    gb_cluster_node *b = gb_cluster_lookup(cl, B, 40);
    assert_non_null(b);
    assert_string_equal(b->hostname, "host-b");
    assert_ptr_equal(cl->migrating_to[101], b);
    assert_ptr_equal(cl->importing_from[300], gb_cluster_lookup(cl, C, 40));
    gb_cluster_node *c = gb_cluster_lookup(cl, C, 40);
    assert_true(c->flags & GB_CNODE_SLAVE);
    assert_int_equal(c->config_epoch, 0); /* a replica's own epoch is not kept */
    /* saved: the same lines (times of other nodes are the loader's: zero here) */
    assert_int_equal(gb_cluster_save_config(cl, true, err, sizeof err), 0);
    char *durable = strdup(read_text());
    assert_int_equal(gb_cluster_save_config(cl, false, err, sizeof err), 0); /* the same text, not fsynced */
    const char *saved = read_text();
    assert_string_equal(saved, durable);
    free(durable);
    assert_non_null(strstr(saved, A " 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-100 200 [101->-" B
                                     "] [300-<-" C "]\n"));
    assert_non_null(strstr(saved, "vars currentEpoch 5 lastVoteEpoch 3\n"));
    gb_cluster_free(cl);
}

/* A save that need not be durable overwrites the old file in place (as
 * Redis does) when both fit one page; a longer old file's tail is cut,
 * never left behind; with an old file over a page the new one is renamed
 * in. Every way leaves exactly the new text. */
static void test_save_replaces_longer_files_exactly(void **state)
{
    (void)state;
    write_text(redis_file);
    gb_cluster *cl = gb_cluster_new(7000, 17000, path);
    char err[256];
    assert_int_equal(gb_cluster_load_config(cl, err, sizeof err), 0);
    assert_int_equal(gb_cluster_save_config(cl, true, err, sizeof err), 0);
    char *expected = strdup(read_text());
    static char old[6000];
    const size_t old_lens[] = {strlen(expected) + 1000, 4096, 5999};
    for (size_t i = 0; i < sizeof old_lens / sizeof old_lens[0]; i++) {
        memset(old, 'x', old_lens[i]);
        old[old_lens[i]] = '\0';
        write_text(old);
        assert_int_equal(gb_cluster_save_config(cl, false, err, sizeof err), 0);
        assert_string_equal(read_text(), expected);
    }
    /* in-place saves keep the file open: one deleted, or renamed over, by
     * someone else is written anew at the next save, not into the old one */
    assert_int_equal(gb_cluster_save_config(cl, false, err, sizeof err), 0);
    unlink(path);
    assert_int_equal(gb_cluster_save_config(cl, false, err, sizeof err), 0);
    assert_string_equal(read_text(), expected);
    char other[160];
    snprintf(other, sizeof other, "%s.other", path);
    FILE *f = fopen(other, "w");
    assert_non_null(f);
    fputs("replaced\n", f);
    fclose(f);
    assert_int_equal(rename(other, path), 0);
    assert_int_equal(gb_cluster_save_config(cl, false, err, sizeof err), 0);
    assert_string_equal(read_text(), expected);
    /* and after a durable save (which renames a new file in) as well */
    assert_int_equal(gb_cluster_save_config(cl, true, err, sizeof err), 0);
    write_text(old);
    assert_int_equal(gb_cluster_save_config(cl, false, err, sizeof err), 0);
    assert_string_equal(read_text(), expected);
    free(expected);
    gb_cluster_free(cl);
}

static void test_malformed_files_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {
        A " 127.0.0.1:7000@17000 myself,master - 0 0 0 connected 0-16384\n",   /* slot out of range */
        A " 127.0.0.1:7000@17000 myself,master - 0 0 0 connected 5-x\n",       /* not a number */
        "zz 127.0.0.1:7000@17000 myself,master - 0 0 0 connected\n",           /* not a node name */
        A " 127.0.0.1:7000@17000 myself,master - 0 0\n",                       /* too few fields */
        A " 127.0.0.1@17000 myself,master - 0 0 0 connected\n",                /* no port */
        A " 127.0.0.1:7000@17000 myself,bogus - 0 0 0 connected\n",            /* unknown flag */
        A " 127.0.0.1:7000@17000 myself,master - 0 0 0 connected\n" B
          " 127.0.0.1:7001@17001 myself,master - 0 0 0 connected\n",          /* two of myself */
        B " 127.0.0.1:7001@17001 master - 0 0 0 connected\n",                  /* no myself */
        A " 127.0.0.1:7000@17000 myself,master - 0 0 0 connected [5->-xyz]\n", /* a bad open slot */
        "vars currentEpoch\n" A " 127.0.0.1:7000@17000 myself,master - 0 0 0 connected\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_text(bad[i]);
        gb_cluster *cl = gb_cluster_new(7000, 17000, path);
        char err[256];
        assert_int_equal(gb_cluster_load_config(cl, err, sizeof err), -1);
        assert_non_null(strstr(err, "corrupted cluster config file"));
        assert_non_null(cl->myself); /* still a usable state */
        gb_cluster_free(cl);
    }
}

/* A cluster state with myself (A) and B, both primaries. */
static gb_cluster *two_primaries(void)
{
    write_text(A " 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-99\n" B
                 " 127.0.0.1:7001@17001 master - 0 0 2 connected 100-199\n"
                 "vars currentEpoch 2 lastVoteEpoch 0\n");
    gb_cluster *cl = gb_cluster_new(7000, 17000, path);
    char err[256];
    assert_int_equal(gb_cluster_load_config(cl, err, sizeof err), 0);
    return cl;
}

static void claim(uint8_t *slots, unsigned from, unsigned to)
{
    for (unsigned s = from; s <= to; s++)
        slots[s >> 3] |= (uint8_t)(1u << (s & 7));
}

static void test_slot_claims_by_epoch(void **state)
{
    (void)state;
    gb_cluster *cl = two_primaries();
    gb_cluster_node *b = gb_cluster_lookup(cl, B, 40);
    uint8_t slots[GB_CLUSTER_SLOTS / 8] = {0};
    uint16_t lost[GB_CLUSTER_SLOTS];
    uint32_t keys[GB_CLUSTER_SLOTS] = {0};
    keys[10] = 3;
    claim(slots, 5, 15);
    claim(slots, 100, 199);
    /* an older or equal epoch takes nothing of mine */
    assert_int_equal(gb_cluster_take_claimed_slots(cl, b, 1, slots, keys, lost), 0);
    assert_ptr_equal(cl->slots[10], cl->myself);
    /* a newer one takes them; slot 10 held keys here */
    gb_cluster_set_importing(cl, 12, b);
    assert_int_equal(gb_cluster_take_claimed_slots(cl, b, 3, slots, keys, lost), 1);
    assert_int_equal(lost[0], 10);
    assert_ptr_equal(cl->slots[10], b);
    assert_ptr_equal(cl->slots[12], cl->myself); /* being imported: not taken */
    assert_int_equal(cl->myself->nslots, 100 - 10);
    gb_cluster_free(cl);
}

/* The line writer reads the slot bitmap a byte at a time and the open-slot
 * arrays 16 at a time; against a slot-by-slot reference, over random
 * ownerships (runs of every length, both ends of the slot space, single
 * slots) and random open slots. Full coverage follows the owned slots. */
static void reference_line_tail(const gb_cluster *cl, const gb_cluster_node *n, gb_strbuf *out)
{
    int start = -1;
    for (int j = 0; j <= GB_CLUSTER_SLOTS; j++) {
        bool bit = j < GB_CLUSTER_SLOTS && cl->slots[j] == n;
        if (bit && start < 0)
            start = j;
        if (!bit && start >= 0) {
            if (start == j - 1)
                gb_strbuf_printf(out, " %d", start);
            else
                gb_strbuf_printf(out, " %d-%d", start, j - 1);
            start = -1;
        }
    }
    if (n == cl->myself)
        for (int j = 0; j < GB_CLUSTER_SLOTS; j++) {
            if (cl->migrating_to[j])
                gb_strbuf_printf(out, " [%d->-%s]", j, cl->migrating_to[j]->name);
            else if (cl->importing_from[j])
                gb_strbuf_printf(out, " [%d-<-%s]", j, cl->importing_from[j]->name);
        }
}

static void test_slot_ranges_random(void **state)
{
    (void)state;
    gb_cluster *cl = two_primaries();
    gb_cluster_node *b = gb_cluster_lookup(cl, B, 40);
    uint64_t x = 0x9e3779b97f4a7c15u;
    for (int round = 0; round < 200; round++) {
        for (unsigned j = 0; j < GB_CLUSTER_SLOTS; j++) {
            gb_cluster_del_slot(cl, j);
            gb_cluster_set_migrating(cl, j, NULL);
            gb_cluster_set_importing(cl, j, NULL);
        }
        /* runs of random owner (myself, B, none) and random length: short
         * runs in some rounds, long in others */
        unsigned max_run = round % 3 == 0 ? 3 : round % 3 == 1 ? 40 : 3000;
        for (unsigned j = 0; j < GB_CLUSTER_SLOTS;) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            unsigned len = 1 + (unsigned)(x % max_run), who = (unsigned)(x >> 32) % 3;
            for (unsigned k = 0; k < len && j < GB_CLUSTER_SLOTS; k++, j++)
                if (who < 2)
                    gb_cluster_add_slot(cl, who == 0 ? cl->myself : b, j);
        }
        for (int k = 0; k < round % 5; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            unsigned slot = (unsigned)(x % GB_CLUSTER_SLOTS);
            if (x & (1u << 20))
                gb_cluster_set_migrating(cl, slot, b);
            else
                gb_cluster_set_importing(cl, slot, b);
        }
        unsigned open = 0;
        for (unsigned j = 0; j < GB_CLUSTER_SLOTS; j++)
            open += (cl->migrating_to[j] != NULL) + (cl->importing_from[j] != NULL);
        assert_int_equal(cl->nopen, open);
        const gb_cluster_node *nodes[] = {cl->myself, b};
        for (int i = 0; i < 2; i++) {
            gb_strbuf got = {0}, want = {0};
            gb_cluster_describe_node(cl, nodes[i], false, &got);
            gb_cluster_describe_node(cl, nodes[i], false, &want);
            /* both lines share the node part; compare what follows "connected" */
            const char *tail = strstr(got.p, "connected");
            assert_non_null(tail);
            want.len = (size_t)(strstr(want.p, "connected") - want.p) + strlen("connected");
            reference_line_tail(cl, nodes[i], &want);
            gb_strbuf_addc(&want, '\0');
            gb_strbuf_addc(&got, '\0');
            assert_string_equal(got.p, want.p);
            gb_strbuf_free(&got);
            gb_strbuf_free(&want);
        }
        bool full = true;
        for (unsigned j = 0; j < GB_CLUSTER_SLOTS; j++)
            full = full && cl->slots[j];
        cl->state = -1;
        cl->started_ms = 1;
        gb_cluster_update_state(cl, 1000000, 15000);
        assert_int_equal(cl->state, full ? GB_CLUSTER_OK : GB_CLUSTER_FAIL);
    }
    /* everything owned, then B failed: not covered */
    for (unsigned j = 0; j < GB_CLUSTER_SLOTS; j++)
        if (!cl->slots[j])
            gb_cluster_add_slot(cl, b, j);
    cl->state = -1;
    gb_cluster_update_state(cl, 1000000, 15000);
    assert_int_equal(cl->state, GB_CLUSTER_OK);
    b->flags |= GB_CNODE_FAIL;
    cl->state = -1;
    gb_cluster_update_state(cl, 1000000, 15000);
    assert_int_equal(cl->state, GB_CLUSTER_FAIL);
    gb_cluster_free(cl);
}

static void test_epoch_collision(void **state)
{
    (void)state;
    gb_cluster *cl = two_primaries();
    gb_cluster_node *b = gb_cluster_lookup(cl, B, 40);
    b->config_epoch = cl->myself->config_epoch = 2;
    /* B's name is greater than mine: I take a new epoch */
    assert_true(gb_cluster_resolve_epoch_collision(cl, b));
    assert_int_equal(cl->myself->config_epoch, 3);
    assert_int_equal(cl->current_epoch, 3);
    assert_false(gb_cluster_resolve_epoch_collision(cl, b)); /* no collision any more */
    gb_cluster_free(cl);
}

static void test_votes(void **state)
{
    (void)state;
    gb_cluster *cl = two_primaries();
    gb_cluster_node *b = gb_cluster_lookup(cl, B, 40);
    gb_cluster_node *r = gb_cluster_add_gossiped(cl, C, "127.0.0.1", 7002, 17002, GB_CNODE_SLAVE, 0);
    assert_non_null(r);
    gb_cluster_set_replica_of(cl, r, B);
    uint8_t slots[GB_CLUSTER_SLOTS / 8] = {0};
    claim(slots, 100, 199);
    const char *why;
    int64_t now = 1000000;
    /* its primary is up */
    assert_false(gb_cluster_grant_vote(cl, r, 3, 2, slots, false, now, 1000, &why));
    b->flags |= GB_CNODE_FAIL;
    /* an epoch behind mine */
    assert_false(gb_cluster_grant_vote(cl, r, 1, 2, slots, false, now, 1000, &why));
    cl->current_epoch = 3;
    assert_true(gb_cluster_grant_vote(cl, r, 3, 2, slots, false, now, 1000, &why));
    assert_int_equal(cl->last_vote_epoch, 3);
    /* one vote per epoch */
    assert_false(gb_cluster_grant_vote(cl, r, 3, 2, slots, false, now, 1000, &why));
    /* a new epoch, but too soon for the same primary */
    cl->current_epoch = 4;
    assert_false(gb_cluster_grant_vote(cl, r, 4, 2, slots, false, now + 100, 1000, &why));
    /* later: yes, unless a claimed slot has a newer epoch than the request's */
    cl->myself->config_epoch = 9;
    claim(slots, 0, 0);
    assert_false(gb_cluster_grant_vote(cl, r, 4, 2, slots, false, now + 5000, 1000, &why));
    gb_cluster_free(cl);
}

static void test_peer_text_checks(void **state)
{
    (void)state;
    assert_true(gb_cluster_valid_ip("127.0.0.1"));
    assert_true(gb_cluster_valid_ip("::1"));
    assert_false(gb_cluster_valid_ip("127.0.0.1 x"));
    assert_false(gb_cluster_valid_ip("a\nb"));
    assert_false(gb_cluster_valid_ip(""));
    assert_true(gb_cluster_valid_hostname("node-1.example_x", 16));
    assert_false(gb_cluster_valid_hostname("a b", 3));
    assert_false(gb_cluster_valid_hostname("a\n", 2));
    assert_true(gb_cluster_valid_name(A));
    assert_false(gb_cluster_valid_name("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"));
    gb_cluster *cl = two_primaries();
    assert_null(gb_cluster_add_gossiped(cl, C, "not an ip", 7002, 17002, GB_CNODE_MASTER, 0));
    bool invalid;
    assert_null(gb_cluster_start_handshake(cl, "127.0.0.1", 0, 10000, 0, &invalid));
    assert_true(invalid);
    assert_null(gb_cluster_start_handshake(cl, "nohost", 7005, 17005, 0, &invalid));
    assert_true(invalid);
    assert_non_null(gb_cluster_start_handshake(cl, "127.0.0.1", 7005, 17005, 0, &invalid));
    /* the same address while its handshake runs: nothing new */
    assert_null(gb_cluster_start_handshake(cl, "127.0.0.1", 7005, 17005, 0, &invalid));
    assert_false(invalid);
    gb_cluster_free(cl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_load_save_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_save_replaces_longer_files_exactly, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed_files_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slot_claims_by_epoch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slot_ranges_random, setup, teardown),
        cmocka_unit_test_setup_teardown(test_epoch_collision, setup, teardown),
        cmocka_unit_test_setup_teardown(test_votes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_peer_text_checks, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
