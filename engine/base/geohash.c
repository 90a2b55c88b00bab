/*
 * Redis 7.0's geohash arithmetic (see geohash.h). Expressions keep Redis's
 * operand order and types on purpose: a reordered sum or a fused
 * multiply-add changes the last digit of a reply.
 */
#include "engine/base/geohash.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>

/* Redis's constants: degrees to radians as M_PI / 180 (not the longer
 * literal it also defines), the earth's quadratic mean radius, and the
 * Mercator extent that sizes a search's boxes. */
#define GEO_PI 3.14159265358979323846 /* M_PI, which strict C11 does not declare */
#define GEO_D_R (GEO_PI / 180.0)
#define GEO_EARTH_RADIUS_M 6372797.560856
#define GEO_MERCATOR_MAX 20037726.37

static inline double deg_rad(double ang) { return ang * GEO_D_R; }
static inline double rad_deg(double ang) { return ang / GEO_D_R; }

static const gb_geo_range WGS84_LON = {GB_GEO_LONG_MIN, GB_GEO_LONG_MAX};
static const gb_geo_range WGS84_LAT = {GB_GEO_LAT_MIN, GB_GEO_LAT_MAX};

/* ---- bit interleaving: latitude in the even bits, longitude in the odd ---- */

static uint64_t spread32(uint64_t v)
{
    v = (v | (v << 16)) & 0x0000FFFF0000FFFFULL;
    v = (v | (v << 8)) & 0x00FF00FF00FF00FFULL;
    v = (v | (v << 4)) & 0x0F0F0F0F0F0F0F0FULL;
    v = (v | (v << 2)) & 0x3333333333333333ULL;
    v = (v | (v << 1)) & 0x5555555555555555ULL;
    return v;
}

static uint64_t interleave64(uint32_t even, uint32_t odd) { return spread32(even) | (spread32(odd) << 1); }

static uint64_t squeeze32(uint64_t v)
{
    v &= 0x5555555555555555ULL;
    v = (v | (v >> 1)) & 0x3333333333333333ULL;
    v = (v | (v >> 2)) & 0x0F0F0F0F0F0F0F0FULL;
    v = (v | (v >> 4)) & 0x00FF00FF00FF00FFULL;
    v = (v | (v >> 8)) & 0x0000FFFF0000FFFFULL;
    v = (v | (v >> 16)) & 0x00000000FFFFFFFFULL;
    return v;
}

/* Even bits in the low half, odd bits in the high half. */
static uint64_t deinterleave64(uint64_t v) { return squeeze32(v) | (squeeze32(v >> 1) << 32); }

/* ---- encode / decode ---- */

static bool range_is_zero(const gb_geo_range *r) { return !r->max && !r->min; }

bool gb_geohash_encode(const gb_geo_range *lon_range, const gb_geo_range *lat_range, double lon, double lat,
                       uint8_t step, gb_geohash *out)
{
    if (step > 32 || step == 0 || range_is_zero(lat_range) || range_is_zero(lon_range))
        return false;
    if (lon > GB_GEO_LONG_MAX || lon < GB_GEO_LONG_MIN || lat > GB_GEO_LAT_MAX || lat < GB_GEO_LAT_MIN)
        return false;
    out->bits = 0;
    out->step = step;
    if (lat < lat_range->min || lat > lat_range->max || lon < lon_range->min || lon > lon_range->max)
        return false;
    double lat_offset = (lat - lat_range->min) / (lat_range->max - lat_range->min);
    double lon_offset = (lon - lon_range->min) / (lon_range->max - lon_range->min);
    lat_offset *= (double)(1ULL << step);
    lon_offset *= (double)(1ULL << step);
    out->bits = interleave64((uint32_t)lat_offset, (uint32_t)lon_offset);
    return true;
}

bool gb_geohash_encode_wgs84(double lon, double lat, uint8_t step, gb_geohash *out)
{
    return gb_geohash_encode(&WGS84_LON, &WGS84_LAT, lon, lat, step, out);
}

uint64_t gb_geohash_align52(gb_geohash h) { return h.bits << (52 - h.step * 2); }

bool gb_geohash_decode(gb_geohash h, gb_geo_area *area)
{
    if (!h.bits && !h.step)
        return false;
    area->hash = h;
    uint64_t sep = deinterleave64(h.bits);
    double lat_scale = WGS84_LAT.max - WGS84_LAT.min;
    double lon_scale = WGS84_LON.max - WGS84_LON.min;
    uint32_t ilat = (uint32_t)sep;
    uint32_t ilon = (uint32_t)(sep >> 32);
    /* Redis divides by 2^step; multiplying by 2^-step is the same exact
     * operation (a power of two, far from underflow), without a division. */
    double per_cell = 1.0 / (double)(1ULL << h.step);
    /* "+ 1" wraps in 32 bits as Redis's unsigned arithmetic does. */
    area->lat.min = WGS84_LAT.min + (ilat * 1.0 * per_cell) * lat_scale;
    area->lat.max = WGS84_LAT.min + ((uint32_t)(ilat + 1) * 1.0 * per_cell) * lat_scale;
    area->lon.min = WGS84_LON.min + (ilon * 1.0 * per_cell) * lon_scale;
    area->lon.max = WGS84_LON.min + ((uint32_t)(ilon + 1) * 1.0 * per_cell) * lon_scale;
    return true;
}

uint64_t gb_geo_score_bits(double score)
{
    /* x86-64's cvttsd2si answers 2^63 ("integer indefinite") for anything
     * it cannot represent; scores from 2^63 up go through it minus 2^63. */
    const double two63 = 9223372036854775808.0;
    const uint64_t indefinite = 0x8000000000000000ULL;
    if (score >= two63) {
        double rest = score - two63;
        return (rest < two63 ? (uint64_t)(int64_t)rest : indefinite) ^ indefinite;
    }
    if (score >= -two63)
        return (uint64_t)(int64_t)score;
    return indefinite; /* below -2^63, -inf (a sorted set holds no NaN) */
}

static double clamp(double v, double lo, double hi) { return v > hi ? hi : v < lo ? lo : v; }

void gb_geo_decode_score(double score, double xy[2])
{
    gb_geohash h = {.bits = gb_geo_score_bits(score), .step = GB_GEO_STEP_MAX};
    gb_geo_area a;
    gb_geohash_decode(h, &a); /* step 26: never the empty hash */
    xy[0] = clamp((a.lon.min + a.lon.max) / 2, GB_GEO_LONG_MIN, GB_GEO_LONG_MAX);
    xy[1] = clamp((a.lat.min + a.lat.max) / 2, GB_GEO_LAT_MIN, GB_GEO_LAT_MAX);
}

/* ---- distances ---- */

static double lat_distance(double lat1, double lat2) { return GEO_EARTH_RADIUS_M * fabs(deg_rad(lat2) - deg_rad(lat1)); }

double gb_geo_distance(double lon1, double lat1, double lon2, double lat2)
{
    double lon1r = deg_rad(lon1), lon2r = deg_rad(lon2);
    double v = sin((lon2r - lon1r) / 2);
    /* Same longitude: the haversine reduces to the latitude arc. */
    if (v == 0.0)
        return lat_distance(lat1, lat2);
    double lat1r = deg_rad(lat1), lat2r = deg_rad(lat2);
    double u = sin((lat2r - lat1r) / 2);
    double a = u * u + cos(lat1r) * cos(lat2r) * v * v;
    return 2.0 * GEO_EARTH_RADIUS_M * asin(sqrt(a));
}

void gb_geo_matcher_init(gb_geo_matcher *m, const gb_geo_shape *shape)
{
    m->shape = *shape;
    m->radius_m = shape->radius * shape->conversion;
    m->width_m = shape->width * shape->conversion;
    m->height_m = shape->height * shape->conversion;
    m->lon1r = deg_rad(shape->xy[0]);
    m->lat1r = deg_rad(shape->xy[1]);
    m->cos_lat1r = cos(m->lat1r);
    m->lat_reject = m->radius_m * (1 + 1e-9) + 1e-6;
}

/* gb_geo_distance from the centre: the same operations on the same
 * values, with cos(centre latitude) and the point's cosine handed in. */
static double distance_from_centre(const gb_geo_matcher *m, double lat2r, double cos_lat2r, double v,
                                   double lat_arc)
{
    if (v == 0.0)
        return lat_arc;
    double u = sin((lat2r - m->lat1r) / 2);
    double a = u * u + m->cos_lat1r * cos_lat2r * v * v;
    return 2.0 * GEO_EARTH_RADIUS_M * asin(sqrt(a));
}

bool gb_geo_match(const gb_geo_matcher *m, double score, double xy[2], double *dist)
{
    gb_geo_decode_score(score, xy);
    double lon2r = deg_rad(xy[0]), lat2r = deg_rad(xy[1]);
    /* lat_distance(centre, point): fabs makes the order of the operands moot. */
    double lat_arc = GEO_EARTH_RADIUS_M * fabs(lat2r - m->lat1r);
    if (m->shape.type == GB_GEO_CIRCLE) {
        if (lat_arc > m->lat_reject)
            return false;
        double v = sin((lon2r - m->lon1r) / 2);
        *dist = distance_from_centre(m, lat2r, v == 0.0 ? 0 : cos(lat2r), v, lat_arc);
        return !(*dist > m->radius_m);
    }
    if (lat_arc > m->height_m / 2)
        return false;
    /* The longitude arc along the point's parallel: gb_geo_distance(point,
     * centre at the point's latitude), whose latitude term is sin(0) = 0.
     * Its sine is the negation of the full distance's (sin is odd). */
    double v_back = sin((m->lon1r - lon2r) / 2);
    double cos_lat2r = cos(lat2r);
    double lon_arc = 0;
    if (v_back != 0.0)
        lon_arc = 2.0 * GEO_EARTH_RADIUS_M * asin(sqrt(0.0 * 0.0 + cos_lat2r * cos_lat2r * v_back * v_back));
    if (lon_arc > m->width_m / 2)
        return false;
    *dist = distance_from_centre(m, lat2r, cos_lat2r, -v_back, lat_arc);
    return true;
}

/* ---- the nine boxes of a search ---- */

/* Redis's geohashEstimateStepsByRadius. */
static int steps_for_radius(double range_m, double lat)
{
    if (range_m == 0)
        return 26;
    int step = 1;
    while (range_m < GEO_MERCATOR_MAX) {
        range_m *= 2;
        step++;
    }
    step -= 2; /* so that the range falls inside the boxes in most cases */
    if (lat > 66 || lat < -66) {
        step--;
        if (lat > 80 || lat < -80)
            step--;
    }
    return step < 1 ? 1 : step > 26 ? 26 : step;
}

/* bounds = {min lon, min lat, max lon, max lat} of the shape; parallels
 * shorten towards the poles, so each hemisphere takes its wider edge. */
static void bounding_box(const gb_geo_shape *shape, double bounds[4])
{
    double lon = shape->xy[0], lat = shape->xy[1];
    bool circle = shape->type == GB_GEO_CIRCLE;
    double height = shape->conversion * (circle ? shape->radius : shape->height / 2);
    double width = shape->conversion * (circle ? shape->radius : shape->width / 2);
    const double lat_delta = rad_deg(height / GEO_EARTH_RADIUS_M);
    const double lon_delta_top = rad_deg(width / GEO_EARTH_RADIUS_M / cos(deg_rad(lat + lat_delta)));
    const double lon_delta_bottom = rad_deg(width / GEO_EARTH_RADIUS_M / cos(deg_rad(lat - lat_delta)));
    bool southern = lat < 0;
    bounds[0] = southern ? lon - lon_delta_bottom : lon - lon_delta_top;
    bounds[2] = southern ? lon + lon_delta_bottom : lon + lon_delta_top;
    bounds[1] = lat - lat_delta;
    bounds[3] = lat + lat_delta;
}

/* geohash_move_x / geohash_move_y: the next cell east (d > 0) or west,
 * north or south, wrapping within the step's bits. odd selects the
 * longitude bits. */
static void move_cell(gb_geohash *h, int d, bool odd)
{
    const uint64_t lon_mask = 0xaaaaaaaaaaaaaaaaULL, lat_mask = 0x5555555555555555ULL;
    uint64_t mine = h->bits & (odd ? lon_mask : lat_mask);
    uint64_t other = h->bits & (odd ? lat_mask : lon_mask);
    uint64_t zz = (odd ? lat_mask : lon_mask) >> (64 - h->step * 2);
    if (d > 0)
        mine = mine + (zz + 1);
    else {
        mine = mine | zz;
        mine = mine - (zz + 1);
    }
    mine &= (odd ? lon_mask : lat_mask) >> (64 - h->step * 2);
    h->bits = mine | other;
}

static gb_geohash neighbour(gb_geohash h, int dx, int dy)
{
    if (dx)
        move_cell(&h, dx, true);
    if (dy)
        move_cell(&h, dy, false);
    return h;
}

/* The centre cell and its 8 neighbours in Redis's order. */
static void cells_around(gb_geohash h, gb_geohash cell[9])
{
    static const int8_t d[9][2] = {{0, 0}, {0, 1}, {0, -1}, {1, 0}, {-1, 0}, {1, 1}, {-1, 1}, {1, -1}, {-1, -1}};
    for (int i = 0; i < 9; i++)
        cell[i] = neighbour(h, d[i][0], d[i][1]);
}

enum { C_SELF, C_N, C_S, C_E, C_W, C_NE, C_NW, C_SE, C_SW };

static void zero_cells(gb_geohash cell[9], int a, int b, int c)
{
    cell[a] = cell[b] = cell[c] = (gb_geohash){0, 0};
}

void gb_geo_cover_shape(const gb_geo_shape *shape, gb_geo_cover *out)
{
    double b[4];
    bounding_box(shape, b);
    double min_lon = b[0], min_lat = b[1], max_lon = b[2], max_lat = b[3];
    double lon = shape->xy[0], lat = shape->xy[1];
    double radius_m = shape->type == GB_GEO_CIRCLE ? shape->radius
                                                   : sqrt((shape->width / 2) * (shape->width / 2) +
                                                          (shape->height / 2) * (shape->height / 2));
    radius_m *= shape->conversion;
    int steps = steps_for_radius(radius_m, lat);

    gb_geohash *cell = out->box;
    gb_geohash h = {0, 0};
    gb_geo_area area, n, s, e, w;
    gb_geohash_encode_wgs84(lon, lat, (uint8_t)steps, &h);
    cells_around(h, cell);
    gb_geohash_decode(h, &area);
    /* A box next to the area's edge may still miss part of it: one step
     * coarser then. */
    gb_geohash_decode(cell[C_N], &n);
    gb_geohash_decode(cell[C_S], &s);
    gb_geohash_decode(cell[C_E], &e);
    gb_geohash_decode(cell[C_W], &w);
    bool decrease = n.lat.max < max_lat || s.lat.min > min_lat || e.lon.max < max_lon || w.lon.min > min_lon;
    if (steps > 1 && decrease) {
        steps--;
        gb_geohash_encode_wgs84(lon, lat, (uint8_t)steps, &h);
        cells_around(h, cell);
        gb_geohash_decode(h, &area);
    }
    /* Drop the neighbours on a side the area does not reach. */
    if (steps >= 2) {
        if (area.lat.min < min_lat)
            zero_cells(cell, C_S, C_SW, C_SE);
        if (area.lat.max > max_lat)
            zero_cells(cell, C_N, C_NE, C_NW);
        if (area.lon.min < min_lon)
            zero_cells(cell, C_W, C_SW, C_NW);
        if (area.lon.max > max_lon)
            zero_cells(cell, C_E, C_SE, C_NE);
    }
}

void gb_geo_box_scores(gb_geohash box, double *min, double *max)
{
    *min = (double)gb_geohash_align52(box);
    box.bits++;
    *max = (double)gb_geohash_align52(box);
}

/* ---- reply formats ---- */

size_t gb_geo_format_distance(double d, char *buf)
{
    if (d == 0) {
        memcpy(buf, "0.0000", 7);
        return 6;
    }
    long long scaled = llrint(d * 10000.0);
    size_t n = 0;
    unsigned long long v;
    if (scaled < 0) {
        buf[n++] = '-';
        v = scaled == LLONG_MIN ? (unsigned long long)LLONG_MAX + 1 : (unsigned long long)-scaled;
    } else {
        v = (unsigned long long)scaled;
    }
    n += (size_t)snprintf(buf + n, GB_GEO_FMT_BUF - n, "%llu.%04llu", v / 10000, v % 10000);
    return n;
}

void gb_geo_hash_string(double score, char out[11])
{
    static const char alphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
    /* Redis stores latitudes within +-85.05; the standard geohash spans
     * +-90, so the point is decoded and encoded again. */
    static const gb_geo_range lon_range = {-180, 180}, lat_range = {-90, 90};
    double xy[2];
    gb_geo_decode_score(score, xy);
    gb_geohash h = {0, 0};
    gb_geohash_encode(&lon_range, &lat_range, xy[0], xy[1], 26, &h);
    for (int i = 0; i < 10; i++)
        out[i] = alphabet[(h.bits >> (52 - (i + 1) * 5)) & 0x1f];
    out[10] = '0'; /* 52 bits make 10.4 characters: the 11th is 0, as Redis */
}
