/*
 * ring_cluster_tool: a gb_ring_cluster client for test_ring_cluster.py.
 *
 *   ring_cluster_tool SEED PROTO map                print "node <i> <addr> ring|socket"
 *   ring_cluster_tool SEED PROTO fill PREFIX N      N keys PREFIX:<i> = v<i>, half by typed
 *                                                   SET, half by generic SET; read back
 *                                                   crosswise; then one of each other typed
 *                                                   call on PREFIX-tagged keys; "ok N"
 *   ring_cluster_tool SEED PROTO churn PREFIX TAG STOPFILE
 *                                                   until STOPFILE exists: write
 *                                                   PREFIX:<i> = <i> (every other key
 *                                                   "{TAG}PREFIX:<i>", a slot being moved),
 *                                                   typed and generic in turn, read back
 *                                                   the key written 10 before; prints
 *                                                   "ok <writes> moved <n> ask <n> tryagain <n>"
 *                                                   or "err <i> <words>"
 *
 *   ring_cluster_tool SEED PROTO recover PREFIX STOPFILE
 *                                                   until STOPFILE exists: write
 *                                                   PREFIX:<i> = <i>, counting failures
 *                                                   (a node restarted meanwhile); prints
 *                                                   "ok <writes> errors <n> last_error <i>"
 *
 * PROTO: sbe or resp. Exit status 0 on "ok".
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "goblin/ring_cluster.h"

static gb_ring_cluster *cl;

static int die(const char *what, long i)
{
    printf("err %ld %s: %s\n", i, what, gb_ring_cluster_error(cl));
    return 1;
}

static int mode_map(void)
{
    size_t n = gb_ring_cluster_node_count(cl);
    for (size_t i = 0; i < n; i++)
        printf("node %zu %s %s\n", i, gb_ring_cluster_node_address(cl, i),
               gb_ring_cluster_node_uses_ring(cl, i) ? "ring" : "socket");
    return 0;
}

static void key_name(char *buf, size_t cap, const char *tag, const char *prefix, long i)
{
    if (tag)
        snprintf(buf, cap, "{%s}%s:%ld", tag, prefix, i);
    else
        snprintf(buf, cap, "%s:%ld", prefix, i);
}

/* SET by the typed call (even i) or the generic one (odd i). */
static int write_key(const char *key, const char *val, long i)
{
    if (i % 2 == 0)
        return gb_ring_cluster_set(cl, key, strlen(key), val, strlen(val), 0);
    const char *argv[] = {"SET", key, val};
    gb_reply *r;
    int rv = gb_ring_cluster_command(cl, 3, argv, NULL, &r);
    if (rv == 0 && (r->kind != GB_REPLY_STATUS || strcmp(r->str, "OK") != 0))
        rv = -1;
    gb_reply_free(r);
    return rv;
}

/* GET the other way round from write_key; 0 when it holds val. */
static int check_key(const char *key, const char *val, long i)
{
    char buf[64];
    int64_t len = -1;
    if (i % 2 == 1) {
        if (gb_ring_cluster_get(cl, key, strlen(key), buf, sizeof buf, &len) != 0)
            return -1;
    } else {
        const char *argv[] = {"GET", key};
        gb_reply *r;
        if (gb_ring_cluster_command(cl, 2, argv, NULL, &r) != 0)
            return -1;
        if (r->kind == GB_REPLY_BULK && r->len < sizeof buf) {
            memcpy(buf, r->str, r->len);
            len = (int64_t)r->len;
        }
        gb_reply_free(r);
    }
    return len == (int64_t)strlen(val) && memcmp(buf, val, (size_t)len) == 0 ? 0 : -2;
}

/* One of each typed call besides GET/SET, on keys named after the prefix. */
static int other_typed_calls(const char *prefix)
{
    char key[128], buf[64];
    int64_t v = 0, len = 0;
    double score = 0;
    int found = 0;
    snprintf(key, sizeof key, "%s:counter", prefix);
    if (gb_ring_cluster_incrby(cl, key, strlen(key), 5, &v) != 0 || v != 5)
        return die("incrby", 0);
    snprintf(key, sizeof key, "%s:hash", prefix);
    const void *f[] = {"f"}, *val[] = {"hv"};
    size_t fl[] = {1}, vl[] = {2};
    if (gb_ring_cluster_hset(cl, key, strlen(key), 1, f, fl, val, vl, &v) != 0 || v != 1 ||
        gb_ring_cluster_hget(cl, key, strlen(key), "f", 1, buf, sizeof buf, &len) != 0 || len != 2 ||
        memcmp(buf, "hv", 2) != 0)
        return die("hset/hget", 0);
    snprintf(key, sizeof key, "%s:zset", prefix);
    double sc[] = {2.5};
    const void *m[] = {"m"};
    size_t ml[] = {1};
    if (gb_ring_cluster_zadd(cl, key, strlen(key), 0, 1, sc, m, ml, &v, NULL) != 0 || v != 1 ||
        gb_ring_cluster_zscore(cl, key, strlen(key), "m", 1, &score, &found) != 0 || !found || score != 2.5)
        return die("zadd/zscore", 0);
    snprintf(key, sizeof key, "%s:list", prefix);
    const void *items[] = {"a", "b"};
    size_t il[] = {1, 1};
    if (gb_ring_cluster_lpush(cl, key, strlen(key), 2, items, il, &v) != 0 || v != 2 ||
        gb_ring_cluster_rpop(cl, key, strlen(key), buf, sizeof buf, &len) != 0 || len != 1 || buf[0] != 'a')
        return die("lpush/rpop", 0);
    snprintf(key, sizeof key, "%s:gone", prefix);
    if (gb_ring_cluster_set(cl, key, strlen(key), "x", 1, 0) != 0 ||
        gb_ring_cluster_del(cl, key, strlen(key), &v) != 0 || v != 1)
        return die("del", 0);
    /* a keyless command and a movable-key one */
    const char *ping[] = {"PING"};
    gb_reply *r;
    if (gb_ring_cluster_command(cl, 1, ping, NULL, &r) != 0 || r->kind != GB_REPLY_STATUS)
        return die("ping", 0);
    gb_reply_free(r);
    snprintf(key, sizeof key, "%s:counter", prefix);
    const char *eval[] = {"EVAL", "return redis.call('get', KEYS[1])", "1", key};
    if (gb_ring_cluster_command(cl, 4, eval, NULL, &r) != 0 || r->kind != GB_REPLY_BULK || strcmp(r->str, "5") != 0)
        return die("eval", 0);
    gb_reply_free(r);
    return 0;
}

static int mode_fill(const char *prefix, long n)
{
    char key[128], val[32];
    for (long i = 0; i < n; i++) {
        key_name(key, sizeof key, NULL, prefix, i);
        snprintf(val, sizeof val, "v%ld", i);
        if (write_key(key, val, i) != 0)
            return die("write", i);
    }
    for (long i = 0; i < n; i++) {
        key_name(key, sizeof key, NULL, prefix, i);
        snprintf(val, sizeof val, "v%ld", i);
        if (check_key(key, val, i) != 0)
            return die("read", i);
    }
    if (other_typed_calls(prefix) != 0)
        return 1;
    printf("ok %ld\n", n);
    return 0;
}

static int mode_churn(const char *prefix, const char *tag, const char *stopfile)
{
    char key[128], val[32];
    long i = 0;
    for (; access(stopfile, F_OK) != 0; i++) {
        key_name(key, sizeof key, i % 2 ? NULL : tag, prefix, i);
        snprintf(val, sizeof val, "%ld", i);
        if (write_key(key, val, i / 2) != 0)
            return die("write", i);
        if (i >= 10) {
            long j = i - 10;
            key_name(key, sizeof key, j % 2 ? NULL : tag, prefix, j);
            snprintf(val, sizeof val, "%ld", j);
            int rv = check_key(key, val, j / 2);
            if (rv != 0)
                return die(rv == -2 ? "read (wrong value)" : "read", j);
        }
    }
    gb_ring_cluster_stats st;
    gb_ring_cluster_get_stats(cl, &st);
    printf("ok %ld moved %llu ask %llu tryagain %llu\n", i, (unsigned long long)st.moved,
           (unsigned long long)st.ask, (unsigned long long)st.tryagain);
    return 0;
}

static int mode_recover(const char *prefix, const char *stopfile)
{
    char key[128], val[32];
    long i = 0, errors = 0, last_error = -1;
    for (; access(stopfile, F_OK) != 0; i++) {
        key_name(key, sizeof key, NULL, prefix, i);
        snprintf(val, sizeof val, "%ld", i);
        if (write_key(key, val, i) != 0) {
            errors++;
            last_error = i;
            struct timespec pause = {0, 10 * 1000 * 1000};
            nanosleep(&pause, NULL);
        }
    }
    printf("ok %ld errors %ld last_error %ld\n", i, errors, last_error);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: ring_cluster_tool SEED sbe|resp MODE ...\n");
        return 2;
    }
    gb_ring_proto proto = strcmp(argv[2], "resp") == 0 ? GB_RING_RESP : GB_RING_SBE;
    char err[256];
    if (gb_ring_cluster_connect(argv[1], proto, NULL, &cl, err, sizeof err) != 0) {
        printf("err connect %s\n", err);
        return 1;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    int rc = 2;
    if (strcmp(argv[3], "map") == 0)
        rc = mode_map();
    else if (strcmp(argv[3], "fill") == 0 && argc == 6)
        rc = mode_fill(argv[4], atol(argv[5]));
    else if (strcmp(argv[3], "recover") == 0 && argc == 6)
        rc = mode_recover(argv[4], argv[5]);
    else if (strcmp(argv[3], "churn") == 0 && argc == 7)
        rc = mode_churn(argv[4], argv[5], argv[6]);
    else
        fprintf(stderr, "unknown mode or arguments\n");
    gb_ring_cluster_close(cl);
    return rc;
}
