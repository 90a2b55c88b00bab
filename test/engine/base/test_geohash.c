/* engine/base/geohash.c against figures redis-server 7.0.15 gives (the
 * Palermo/Catania example of Redis's documentation, scores no GEOADD
 * writes) and against properties of the arithmetic: a point lies in the
 * cell its hash names, the nine boxes of a search hold every point of the
 * area, distances are symmetric, the 4-decimal format rounds as llrint. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "engine/base/geohash.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static double rnd_unit(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }

static double rnd_between(double lo, double hi) { return lo + (hi - lo) * rnd_unit(); }

static double score_of(double lon, double lat)
{
    gb_geohash h;
    assert_true(gb_geohash_encode_wgs84(lon, lat, GB_GEO_STEP_MAX, &h));
    return (double)gb_geohash_align52(h);
}

/* "%.17Lf" with trailing zeros cut: how GEOPOS writes a coordinate. */
static void human(double v, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%.17Lf", (long double)v);
    while (n > 0 && buf[n - 1] == '0')
        buf[--n] = '\0';
    if (n > 0 && buf[n - 1] == '.')
        buf[--n] = '\0';
}

static void test_redis_figures(void **state)
{
    (void)state;
    double palermo = score_of(13.361389, 38.115556), catania = score_of(15.087269, 37.502669);
    assert_true(palermo == 3479099956230698.0);
    assert_true(catania == 3479447370796909.0);
    double p[2], c[2];
    char buf[64];
    gb_geo_decode_score(palermo, p);
    gb_geo_decode_score(catania, c);
    human(p[0], buf, sizeof buf);
    assert_string_equal(buf, "13.36138933897018433");
    human(p[1], buf, sizeof buf);
    assert_string_equal(buf, "38.11555639549629859");
    human(c[0], buf, sizeof buf);
    assert_string_equal(buf, "15.08726745843887329");
    gb_geo_format_distance(gb_geo_distance(p[0], p[1], c[0], c[1]), buf);
    assert_string_equal(buf, "166274.1516");
    gb_geo_format_distance(gb_geo_distance(15, 37, p[0], p[1]) / 1000, buf);
    assert_string_equal(buf, "190.4424");
    char hash[12] = {0};
    gb_geo_hash_string(palermo, hash);
    assert_string_equal(hash, "sqc8b49rny0");
    gb_geo_hash_string(catania, hash);
    assert_string_equal(hash, "sqdtr74hyu0");
}

/* What redis-server answers to GEOPOS for scores ZADD can write. */
static void test_scores_geoadd_never_writes(void **state)
{
    (void)state;
    assert_true(gb_geo_score_bits(-1) == UINT64_MAX);
    assert_true(gb_geo_score_bits(1e30) == 0);
    assert_true(gb_geo_score_bits(INFINITY) == 0);
    assert_true(gb_geo_score_bits(-INFINITY) == 0x8000000000000000ull);
    assert_true(gb_geo_score_bits(1e19) == 10000000000000000000ull);
    assert_true(gb_geo_score_bits(0.75) == 0);
    double xy[2];
    char buf[64];
    gb_geo_decode_score(-1, xy);
    assert_true(xy[0] == 180);
    human(xy[1], buf, sizeof buf);
    assert_string_equal(buf, "85.0511287799999991");
    gb_geo_decode_score(1e30, xy);
    human(xy[0], buf, sizeof buf);
    assert_string_equal(buf, "-179.99999731779098511");
    human(xy[1], buf, sizeof buf);
    assert_string_equal(buf, "-85.05112751263942528");
    gb_geo_decode_score(-INFINITY, xy);
    assert_true(xy[0] == 180);
}

/* Encoding then decoding lands in the point's own cell, whose centre is
 * at most half a cell away. */
static void test_round_trip_within_cell(void **state)
{
    (void)state;
    const double cell_lon = 360.0 / (1 << 26), cell_lat = (2 * GB_GEO_LAT_MAX) / (1 << 26);
    for (int i = 0; i < 200000; i++) {
        double lon = rnd_between(-180, 180), lat = rnd_between(-GB_GEO_LAT_MAX, GB_GEO_LAT_MAX);
        double xy[2];
        gb_geo_decode_score(score_of(lon, lat), xy);
        assert_true(fabs(xy[0] - lon) <= cell_lon / 2 + 1e-9);
        assert_true(fabs(xy[1] - lat) <= cell_lat / 2 + 1e-9);
    }
    gb_geohash h;
    assert_false(gb_geohash_encode_wgs84(180.0000001, 0, 26, &h));
    assert_false(gb_geohash_encode_wgs84(0, 85.06, 26, &h));
    assert_false(gb_geohash_encode_wgs84(0, 0, 0, &h));
}

/* Redis's geoWithinShape as written there, on the public pieces: the
 * reference the matcher must equal. */
static double ref_lat_distance(double lat1, double lat2)
{
    const double d_r = 3.14159265358979323846 / 180.0;
    return 6372797.560856 * fabs(lat2 * d_r - lat1 * d_r);
}

static bool ref_within(const gb_geo_shape *s, double score, double xy[2], double *dist)
{
    gb_geo_decode_score(score, xy);
    if (s->type == GB_GEO_CIRCLE) {
        *dist = gb_geo_distance(s->xy[0], s->xy[1], xy[0], xy[1]);
        return !(*dist > s->radius * s->conversion);
    }
    if (ref_lat_distance(xy[1], s->xy[1]) > s->height * s->conversion / 2)
        return false;
    if (gb_geo_distance(xy[0], xy[1], s->xy[0], xy[1]) > s->width * s->conversion / 2)
        return false;
    *dist = gb_geo_distance(s->xy[0], s->xy[1], xy[0], xy[1]);
    return true;
}

static bool box_holds(const gb_geo_cover *cv, double score)
{
    for (int i = 0; i < 9; i++) {
        if (!cv->box[i].bits && !cv->box[i].step)
            continue;
        double min, max;
        gb_geo_box_scores(cv->box[i], &min, &max);
        if (score >= min && score < max)
            return true;
    }
    return false;
}

/* Every point inside a search area lies in one of its nine boxes (what
 * makes the range scans complete), for radii from meters to continents. */
static void test_cover_holds_every_match(void **state)
{
    (void)state;
    for (int i = 0; i < 3000; i++) {
        gb_geo_shape s = {.conversion = 1};
        s.xy[0] = rnd_between(-180, 180);
        s.xy[1] = rnd_between(-80, 80);
        double r = pow(10, rnd_between(0, 6.5));
        if (i % 2) {
            s.type = GB_GEO_CIRCLE;
            s.radius = r;
        } else {
            s.type = GB_GEO_BOX;
            s.width = r;
            s.height = r * rnd_between(0.2, 2);
        }
        gb_geo_cover cv;
        gb_geo_cover_shape(&s, &cv);
        for (int j = 0; j < 50; j++) {
            /* A point near the centre, within about twice the radius. */
            double dlat = rnd_between(-2, 2) * r / 111000.0, dlon = rnd_between(-2, 2) * r / 111000.0;
            double lon = s.xy[0] + dlon, lat = s.xy[1] + dlat;
            if (lon < -180 || lon > 180 || lat < -GB_GEO_LAT_MAX || lat > GB_GEO_LAT_MAX)
                continue;
            double score = score_of(lon, lat), xy[2], dist;
            if (ref_within(&s, score, xy, &dist))
                assert_true(box_holds(&cv, score));
        }
    }
}

/* The matcher answers as Redis's plain computation, to the bit, near and far from the
 * edge of circles and boxes of every size, also across the antimeridian. */
static void test_matcher_equals_within(void **state)
{
    (void)state;
    for (int i = 0; i < 4000; i++) {
        gb_geo_shape s = {.conversion = (i % 3) ? 1 : 1609.34};
        s.xy[0] = (i % 7) ? rnd_between(-180, 180) : 179.99 * ((i & 1) ? 1 : -1);
        s.xy[1] = rnd_between(-GB_GEO_LAT_MAX, GB_GEO_LAT_MAX);
        double r = pow(10, rnd_between(-1, 7));
        s.type = (i & 1) ? GB_GEO_CIRCLE : GB_GEO_BOX;
        s.radius = r;
        s.width = r * rnd_between(0.1, 2);
        s.height = r * rnd_between(0.1, 2);
        gb_geo_matcher m;
        gb_geo_matcher_init(&m, &s);
        for (int j = 0; j < 100; j++) {
            double k = r * s.conversion / 111000.0 * rnd_between(0, 2);
            double lon = s.xy[0] + rnd_between(-k, k), lat = s.xy[1] + rnd_between(-k, k);
            lon = lon > 180 ? lon - 360 : lon < -180 ? lon + 360 : lon;
            if (lat < -GB_GEO_LAT_MAX || lat > GB_GEO_LAT_MAX || lon < -180 || lon > 180)
                continue;
            double score = score_of(lon, lat), xy1[2], xy2[2], d1 = -1, d2 = -1;
            bool in1 = ref_within(&s, score, xy1, &d1), in2 = gb_geo_match(&m, score, xy2, &d2);
            assert_int_equal(in1, in2);
            if (in1)
                assert_memory_equal(&d1, &d2, sizeof d1);
        }
    }
}

static void test_distance(void **state)
{
    (void)state;
    for (int i = 0; i < 10000; i++) {
        double a = rnd_between(-180, 180), b = rnd_between(-85, 85), c = rnd_between(-180, 180),
               d = rnd_between(-85, 85);
        double ab = gb_geo_distance(a, b, c, d);
        assert_true(ab >= 0 && ab <= 3.1416 * 6372797.560856);
        assert_true(fabs(ab - gb_geo_distance(c, d, a, b)) < 1e-6);
    }
    /* Same meridian: the latitude arc alone. */
    assert_true(gb_geo_distance(10, 0, 10, 1) == 6372797.560856 * fabs(1 * (3.14159265358979323846 / 180.0) - 0));
}

static void test_format_distance(void **state)
{
    (void)state;
    char buf[GB_GEO_FMT_BUF];
    static const struct {
        double d;
        const char *want;
    } cases[] = {
        {0, "0.0000"},         {0.00004, "0.0000"},        {0.00005, "0.0000"}, /* llrint: ties to even */
        {0.00016, "0.0002"},   {1.23456, "1.2346"},        {0.775, "0.7750"},
        {12345.6789, "12345.6789"}, {-2.5, "-2.5000"},     {20037726.37, "20037726.3700"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = gb_geo_format_distance(cases[i].d, buf);
        assert_string_equal(buf, cases[i].want);
        assert_int_equal(n, strlen(cases[i].want));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_redis_figures),
        cmocka_unit_test(test_scores_geoadd_never_writes),
        cmocka_unit_test(test_round_trip_within_cell),
        cmocka_unit_test(test_cover_holds_every_match),
        cmocka_unit_test(test_matcher_equals_within),
        cmocka_unit_test(test_distance),
        cmocka_unit_test(test_format_distance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
