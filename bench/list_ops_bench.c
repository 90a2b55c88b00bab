/*
 * list_ops_bench: operation rates of the list representations behind
 * engine/ds/list.h, without the server around them (no parsing, no replies).
 * Shows where each backend spends time; the end-to-end numbers are the
 * work-queue benchmark's job.
 *
 *   build-release/list_ops_bench [list-length] [ops] [value-bytes]
 *
 * For each large representation (segmented, pma) and each operation, a list
 * of `list-length` values ("job:0000001234", value-bytes long, default 16) is built and
 * `ops` operations are timed; destructive rows are refilled in between so
 * the length stays near list-length. Prints Mops/s and ns/op, then memory
 * per element of a 1,000,000-value list.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/ds/list.h"
#include "engine/base/mem.h"
#include "platform/clock.h"

static double now_s(void) { return (double)gb_clock_mono_ns() * 1e-9; }

/* Values are rendered once, outside the timed loops. */
#define NVALS 4096
static char vtab[NVALS][64];
static size_t vlen[NVALS];
static size_t vwidth;

static gb_slice val(size_t i, size_t width)
{
    if (width != vwidth) {
        size_t mod = 1;
        for (size_t d = 4; d < width && mod < 1000000000000ull; d++)
            mod *= 10;
        for (size_t k = 0; k < NVALS; k++)
            vlen[k] = (size_t)snprintf(vtab[k], 64, "job:%0*zu", (int)(width - 4),
                                       (k * 7919) % mod);
        vwidth = width;
    }
    return gb_slice_make(vtab[i % NVALS], vlen[i % NVALS]);
}

/* A sink standing in for the reply writer: copies each value. */
static char sink[1 << 16];
static size_t sink_n;
static void emit_copy(void *ctx, gb_slice v)
{
    (void)ctx;
    if (sink_n + v.len > sizeof sink)
        sink_n = 0;
    memcpy(sink + sink_n, v.ptr, v.len);
    sink_n += v.len;
}
static bool visit_copy(void *ctx, size_t i, gb_slice v)
{
    (void)i;
    emit_copy(ctx, v);
    return true;
}

static gb_list *build(gb_list_impl impl, size_t n, size_t width)
{
    gb_list_config cfg = {-2, impl};
    gb_list *l = gb_list_new(&cfg);
    for (size_t i = 0; i < n; i++) {
        gb_slice v = val(i, width);
        gb_list_push(l, GB_LIST_TAIL, &v, 1);
    }
    return l;
}

typedef enum {
    OP_LLEN,
    OP_LINDEX_MID,
    OP_LINDEX_RAND,
    OP_LRANGE16,
    OP_LSET_MID,
    OP_LPUSH,
    OP_RPUSH,
    OP_LPOP,
    OP_RPOP,
    OP_ROTATE,
    OP_LMPOP8,
    OP_COUNT
} op_t;

static const char *const op_names[OP_COUNT] = {
    "LLEN",          "LINDEX middle", "LINDEX random",  "LRANGE 0 15", "LSET middle", "LPUSH",
    "RPUSH",         "LPOP",           "RPOP",        "LMOVE rotation (RPOPLPUSH)", "LMPOP COUNT 8"};

static size_t g_width = 16;

static double run_op(gb_list_impl impl, op_t op, size_t n, size_t ops)
{
    gb_list *l = build(impl, n, g_width);
    volatile size_t acc = 0;
    char ib[GB_LIST_INT_BUF];
    gb_slice v;
    /* refill/drain in chunks outside the timed region */
    size_t chunk = n / 2 < 50000 ? n / 2 : 50000;
    if (chunk == 0)
        chunk = 1;
    double total = 0;
    size_t done = 0;
    while (done < ops) {
        size_t k = ops - done < chunk ? ops - done : chunk;
        if (op == OP_LMPOP8 && k * 16 > n)
            k = n / 16; /* drain at most half, then refill */
        double t0 = now_s();
        switch (op) {
        case OP_LLEN:
            for (size_t i = 0; i < k; i++)
                acc += gb_list_len(l);
            break;
        case OP_LINDEX_MID:
            for (size_t i = 0; i < k; i++) {
                gb_list_index(l, (long long)(gb_list_len(l) / 2), ib, &v);
                acc += v.len;
            }
            break;
        case OP_LINDEX_RAND: {
            size_t x = 88172645463325252ull, len = gb_list_len(l);
            for (size_t i = 0; i < k; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                gb_list_index(l, (long long)(x % len), ib, &v);
                acc += v.len;
            }
            break;
        }
        case OP_LRANGE16:
            for (size_t i = 0; i < k; i++)
                acc += gb_list_range(l, 0, 15, false, visit_copy, NULL);
            break;
        case OP_LSET_MID:
            for (size_t i = 0; i < k; i++)
                gb_list_set(l, (long long)(gb_list_len(l) / 2), val(i, g_width));
            break;
        case OP_LPUSH:
        case OP_RPUSH:
            for (size_t i = 0; i < k; i++) {
                gb_slice x = val(i, g_width);
                gb_list_push(l, op == OP_LPUSH ? GB_LIST_HEAD : GB_LIST_TAIL, &x, 1);
            }
            break;
        case OP_LPOP:
        case OP_RPOP:
            for (size_t i = 0; i < k; i++)
                gb_list_pop(l, op == OP_LPOP ? GB_LIST_HEAD : GB_LIST_TAIL, 1, emit_copy, NULL);
            break;
        case OP_ROTATE:
            for (size_t i = 0; i < k; i++)
                gb_list_move(l, GB_LIST_TAIL, l, GB_LIST_HEAD, emit_copy, NULL);
            break;
        case OP_LMPOP8:
            for (size_t i = 0; i < k; i++)
                gb_list_pop(l, GB_LIST_HEAD, 8, emit_copy, NULL);
            break;
        default:
            break;
        }
        total += now_s() - t0;
        done += k;
        /* restore the length */
        if (op == OP_LPUSH || op == OP_RPUSH) {
            gb_list_trim(l, op == OP_LPUSH ? (long long)k : 0,
                         op == OP_LPUSH ? -1 : -(long long)k - 1);
        } else if (op == OP_LPOP || op == OP_RPOP || op == OP_LMPOP8) {
            size_t miss = n - gb_list_len(l);
            for (size_t i = 0; i < miss; i++) {
                gb_slice x = val(i, g_width);
                gb_list_push(l, GB_LIST_TAIL, &x, 1);
            }
        }
    }
    gb_list_free(l);
    (void)acc;
    return total / (double)ops;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 100000;
    size_t ops = argc > 2 ? strtoull(argv[2], NULL, 0) : 2000000;
    size_t width = argc > 3 ? strtoull(argv[3], NULL, 0) : 16;
    if (width < 5 || width > 60)
        width = 16;
    printf("list_ops_bench: %zu-value list, %zu ops per row, %zu-byte values\n\n", n, ops, width);
    g_width = width;
    printf("%-28s %14s %14s %8s\n", "operation", "segmented", "pma", "pma/seg");
    for (int op = 0; op < OP_COUNT; op++) {
        double s = run_op(GB_LIST_SEGMENTED, (op_t)op, n, ops);
        double p = run_op(GB_LIST_PMA, (op_t)op, n, ops);
        printf("%-28s %9.1f ns/op %9.1f ns/op %7.2fx\n", op_names[op], s * 1e9, p * 1e9, s / p);
    }
    printf("\nmemory per element, 1,000,000 values (gb_list_mem_usage / n):\n");
    static const size_t widths[] = {8, 16, 32};
    for (size_t w = 0; w < 3; w++) {
        for (int impl = 0; impl < 2; impl++) {
            gb_list *l = build((gb_list_impl)impl, 1000000, widths[w]);
            printf("  %-10s %2zu-byte values: %6.2f B/value\n", impl ? "pma" : "segmented",
                   widths[w], (double)gb_list_mem_usage(l) / 1e6);
            gb_list_free(l);
        }
    }
    /* integer values stay integers in listpack entries */
    for (int impl = 0; impl < 2; impl++) {
        gb_list_config cfg = {-2, (gb_list_impl)impl};
        gb_list *l = gb_list_new(&cfg);
        char b[24];
        for (size_t i = 0; i < 1000000; i++) {
            gb_slice x = gb_slice_make(b, (size_t)snprintf(b, sizeof b, "%zu", i));
            gb_list_push(l, GB_LIST_TAIL, &x, 1);
        }
        printf("  %-10s integers 0..999999:  %6.2f B/value\n", impl ? "pma" : "segmented",
               (double)gb_list_mem_usage(l) / 1e6);
        gb_list_free(l);
    }
    return 0;
}
