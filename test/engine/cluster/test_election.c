/* engine/cluster/election.c: a replica's rank among its primary's replicas
 * (Redis's clusterGetSlaveRank) and the delay a worse rank adds while it
 * waits for its election (the rank refresh of clusterHandleSlaveFailover). */
#define _GNU_SOURCE /* mkdtemp */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "engine/cluster/election.h"

#define A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define C "cccccccccccccccccccccccccccccccccccccccc"
#define D "dddddddddddddddddddddddddddddddddddddddd"
#define E "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"
#define F "ffffffffffffffffffffffffffffffffffffffff"

static char dir[64];
static char path[128];

/* myself (A) and C, D replicate B; F replicates E. */
static gb_cluster *replicas_of_b(void)
{
    snprintf(dir, sizeof dir, "/tmp/gb-election-test-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/nodes.conf", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(A " 127.0.0.1:7000@17000 myself,slave " B " 0 0 1 connected\n" B
            " 127.0.0.1:7001@17001 master - 0 0 1 connected 0-99\n" C
            " 127.0.0.1:7002@17002 slave " B " 0 0 1 connected\n" D
            " 127.0.0.1:7003@17003 slave " B " 0 0 1 connected\n" E
            " 127.0.0.1:7004@17004 master - 0 0 2 connected 100-199\n" F
            " 127.0.0.1:7005@17005 slave " E " 0 0 2 connected\n"
            "vars currentEpoch 2 lastVoteEpoch 0\n",
          f);
    fclose(f);
    gb_cluster *cl = gb_cluster_new(7000, 17000, path);
    char err[256];
    assert_int_equal(gb_cluster_load_config(cl, err, sizeof err), 0);
    unlink(path);
    rmdir(dir);
    return cl;
}

static void test_rank_counts_siblings_ahead(void **state)
{
    (void)state;
    gb_cluster *cl = replicas_of_b();
    gb_cluster_node *b = gb_cluster_lookup(cl, B, 40), *c = gb_cluster_lookup(cl, C, 40);
    gb_cluster_node *d = gb_cluster_lookup(cl, D, 40), *f = gb_cluster_lookup(cl, F, 40);
    c->repl_offset = 100;
    d->repl_offset = 50;
    f->repl_offset = 1000; /* another primary's replica: not a rival */
    assert_int_equal(gb_cluster_replica_rank(cl, b, 200), 0);
    assert_int_equal(gb_cluster_replica_rank(cl, b, 80), 1);
    assert_int_equal(gb_cluster_replica_rank(cl, b, 50), 1); /* an equal offset is no better */
    assert_int_equal(gb_cluster_replica_rank(cl, b, 10), 2);
    /* a replica that may not fail over is no rival either */
    c->flags |= GB_CNODE_NOFAILOVER;
    assert_int_equal(gb_cluster_replica_rank(cl, b, 10), 1);
    gb_cluster_free(cl);
}

static void test_overtaken_replica_waits_longer(void **state)
{
    (void)state;
    gb_cluster *cl = replicas_of_b();
    gb_cluster_node *b = gb_cluster_lookup(cl, B, 40), *c = gb_cluster_lookup(cl, C, 40);
    gb_cluster_node *d = gb_cluster_lookup(cl, D, 40);
    uint64_t mine = 80;
    c->repl_offset = 100;
    d->repl_offset = 50;
    int scheduled = gb_cluster_replica_rank(cl, b, mine);
    assert_int_equal(scheduled, 1);
    assert_int_equal(gb_cluster_rank_added_delay(scheduled, gb_cluster_replica_rank(cl, b, mine)), 0);
    /* D's next message says it overtook this replica: one place lost, 1 s more */
    d->repl_offset = 90;
    int now = gb_cluster_replica_rank(cl, b, mine);
    assert_int_equal(now, 2);
    assert_int_equal(gb_cluster_rank_added_delay(scheduled, now), 1000);
    /* the delay stays once added; C falling back does not bring it forward */
    assert_int_equal(gb_cluster_rank_added_delay(now, now), 0);
    c->repl_offset = 10;
    d->repl_offset = 10;
    assert_int_equal(gb_cluster_rank_added_delay(now, gb_cluster_replica_rank(cl, b, mine)), 0);
    /* two places lost at once: 2 s */
    assert_int_equal(gb_cluster_rank_added_delay(0, 2), 2000);
    gb_cluster_free(cl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rank_counts_siblings_ahead),
        cmocka_unit_test(test_overtaken_replica_waits_longer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
