/* engine/intset: sorted-array model, width upgrades 16 -> 32 -> 64. */
#include "types_tutil.h"

#include "engine/ds/intset.h"

static int64_t rand_value(int phase)
{
    /* Phase 0 stays in int16, 1 reaches int32, 2 reaches int64. */
    switch (phase == 0 ? 0 : (int)tu_rand((uint64_t)phase + 1) + (tu_rand(4) == 0 ? 0 : phase - 1)) {
    case 0:
        return (int64_t)tu_rand(200) - 100;
    case 1:
        return (int64_t)tu_rand(200000) - 100000;
    default:
        return (int64_t)gb_random_u64() >> (tu_rand(4) * 8);
    }
}

static void check(const gb_intset *is, const int64_t *model, size_t n)
{
    TU_CHECK(gb_intset_verify(is), "intset verify");
    TU_CHECK(gb_intset_len(is) == n, "len %u vs %zu", gb_intset_len(is), n);
    uint8_t need = 2;
    for (size_t i = 0; i < n; i++) {
        TU_CHECK(gb_intset_get(is, (uint32_t)i) == model[i], "element %zu", i);
        uint8_t w = gb_intset_width_for(model[i]);
        need = w > need ? w : need;
    }
    TU_CHECK(is->width >= need, "width %u below %u", is->width, need);
    TU_CHECK(gb_intset_bytes(is) == 8 + (size_t)is->width * n, "bytes");
}

static void test_model(void **state)
{
    (void)state;
    tu_reseed("intset");
    for (int round = 0; round < 30; round++) {
        gb_intset *is = gb_intset_new();
        int64_t model[600];
        size_t n = 0;
        int phase = round % 3;
        uint8_t max_width = 2;
        for (int op = 0; op < 2000; op++) {
            int64_t v = rand_value(phase);
            if (op == 1000 && phase < 2)
                phase++;
            size_t pos = 0;
            while (pos < n && model[pos] < v)
                pos++;
            bool present = pos < n && model[pos] == v;
            TU_CHECK(gb_intset_find(is, v) == present, "find %" PRId64, v);
            if (tu_rand(100) < 60 && n < GB_ARRAY_LEN(model)) {
                bool added;
                is = gb_intset_add(is, v, &added);
                TU_CHECK(added == !present, "add %" PRId64, v);
                if (!present) {
                    memmove(&model[pos + 1], &model[pos], (n - pos) * sizeof *model);
                    model[pos] = v;
                    n++;
                }
            } else {
                bool removed;
                is = gb_intset_remove(is, v, &removed);
                TU_CHECK(removed == present, "remove %" PRId64, v);
                if (present) {
                    memmove(&model[pos], &model[pos + 1], (n - pos - 1) * sizeof *model);
                    n--;
                }
            }
            check(is, model, n);
            /* Widths never shrink. */
            TU_CHECK(is->width >= max_width, "width shrank");
            max_width = is->width;
        }
        if (n) {
            int64_t r = gb_intset_random(is);
            TU_CHECK(gb_intset_find(is, r), "random member not found");
        }
        gb_intset *c = gb_intset_dup(is);
        check(c, model, n);
        gb_intset_free(c);
        gb_intset_free(is);
    }
}

static void test_upgrade_edges(void **state)
{
    (void)state;
    gb_intset *is = gb_intset_new();
    int64_t vals[] = {5,
                      -5,
                      INT16_MAX,
                      INT16_MIN,
                      INT16_MAX + 1,
                      INT16_MIN - 1,
                      INT32_MAX,
                      INT32_MIN,
                      (int64_t)INT32_MAX + 1,
                      (int64_t)INT32_MIN - 1,
                      INT64_MAX,
                      INT64_MIN};
    uint8_t widths[] = {2, 2, 2, 2, 4, 4, 4, 4, 8, 8, 8, 8};
    for (size_t i = 0; i < GB_ARRAY_LEN(vals); i++) {
        bool added;
        is = gb_intset_add(is, vals[i], &added);
        assert_true(added);
        assert_int_equal(is->width, widths[i]);
        assert_true(gb_intset_verify(is));
        for (size_t j = 0; j <= i; j++)
            assert_true(gb_intset_find(is, vals[j]));
    }
    assert_int_equal(gb_intset_get(is, 0), INT64_MIN);
    assert_int_equal(gb_intset_get(is, gb_intset_len(is) - 1), INT64_MAX);
    assert_false(gb_intset_find(is, 6));
    /* a value wider than the set is never a member */
    gb_intset *small = gb_intset_new();
    small = gb_intset_add(small, 1, NULL);
    assert_false(gb_intset_find(small, INT64_MAX));
    bool removed = true;
    small = gb_intset_remove(small, INT64_MAX, &removed);
    assert_false(removed);
    gb_intset_free(small);
    gb_intset_free(is);
}

int main(void)
{
    tu_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model),
        cmocka_unit_test(test_upgrade_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
