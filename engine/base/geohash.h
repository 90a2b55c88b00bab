/*
 * Redis 7.0's geohash arithmetic, for the GEO* commands: the 52-bit
 * interleaved hash a sorted-set score holds, its decoding, the nine boxes
 * that cover a search area, the haversine distance and the reply formats.
 * Every operation follows Redis's own (src/geohash.c, geohash_helper.c,
 * geo.c) step for step, in the same floating-point order, because replies
 * must match redis-server to the last digit; the file is compiled without
 * floating-point contraction (engine/CMakeLists.txt) for the same reason.
 * Pure functions: no keys, no replies.
 */
#ifndef GB_ENGINE_BASE_GEOHASH_H
#define GB_ENGINE_BASE_GEOHASH_H

#include "engine/base/common.h"

#define GB_GEO_STEP_MAX 26 /* 26 * 2 = 52 bits: what a double holds exactly */
#define GB_GEO_LAT_MIN (-85.05112878)
#define GB_GEO_LAT_MAX 85.05112878
#define GB_GEO_LONG_MIN (-180.0)
#define GB_GEO_LONG_MAX 180.0

typedef struct gb_geohash {
    uint64_t bits;
    uint8_t step; /* bits holds 2 * step interleaved bits; 0 with bits 0: no box */
} gb_geohash;

typedef struct gb_geo_range {
    double min, max;
} gb_geo_range;

typedef struct gb_geo_area {
    gb_geohash hash;
    gb_geo_range lon, lat;
} gb_geo_area;

typedef enum gb_geo_shape_type { GB_GEO_CIRCLE = 1, GB_GEO_BOX = 2 } gb_geo_shape_type;

/* A search area: a circle of radius or a box of width x height, in the
 * unit that conversion (meters per unit) names, around xy = {lon, lat}. */
typedef struct gb_geo_shape {
    gb_geo_shape_type type;
    double xy[2];
    double conversion;
    double radius;
    double width, height;
} gb_geo_shape;

/* The boxes to scan, in Redis's order: the centre's, then north, south,
 * east, west, north-east, north-west, south-east, south-west; a box that
 * cannot hold a match is zeroed (bits 0, step 0). */
typedef struct gb_geo_cover {
    gb_geohash box[9];
} gb_geo_cover;

/* Encodes (lon, lat) into a step-bit-per-axis hash over the given ranges;
 * false outside the ranges or Redis's valid coordinates. */
bool gb_geohash_encode(const gb_geo_range *lon_range, const gb_geo_range *lat_range, double lon, double lat,
                       uint8_t step, gb_geohash *out);
/* Over Redis's ranges (longitude +-180, latitude +-85.05112878). */
bool gb_geohash_encode_wgs84(double lon, double lat, uint8_t step, gb_geohash *out);
/* The hash as a 52-bit sorted-set score (shifted left to 52 bits). */
uint64_t gb_geohash_align52(gb_geohash h);
/* The cell a hash names, over Redis's ranges; false for an empty hash. */
bool gb_geohash_decode(gb_geohash h, gb_geo_area *area);

/* A score as the uint64_t C's conversion gives on x86-64, where Redis runs:
 * defined for every double (negative, huge, infinite), so a sorted set
 * written by ZADD with any score decodes as it does there. */
uint64_t gb_geo_score_bits(double score);
/* The centre of the 52-bit cell a score names, clamped to the valid
 * coordinates (Redis's decodeGeohash); xy = {lon, lat}. */
void gb_geo_decode_score(double score, double xy[2]);

/* Haversine distance in meters over Redis's earth radius. */
double gb_geo_distance(double lon1, double lat1, double lon2, double lat2);

/* The nine boxes covering shape (Redis's geohashCalculateAreasByShapeWGS84). */
void gb_geo_cover_shape(const gb_geo_shape *shape, gb_geo_cover *out);
/* The score range [min, max) that holds every point inside box. */
void gb_geo_box_scores(gb_geohash box, double *min, double *max);

/* Whether the point a score names lies inside a shape (Redis's
 * geoWithinShape), for many points around one centre: gb_geo_match writes
 * the point's coordinates and its distance from the centre in meters. What
 * depends on the centre alone is computed once, and points farther in
 * latitude alone than a circle's radius are refused before any
 * trigonometry (the great-circle distance is never below the latitude arc;
 * the margin covers rounding). Answers and distances are those of Redis's
 * plain computation, bit for bit (test/engine/base/test_geohash.c keeps it
 * as the reference and compares). */
typedef struct gb_geo_matcher {
    gb_geo_shape shape;
    double radius_m, width_m, height_m; /* the shape's sizes in meters, as Redis multiplies them */
    double lon1r, lat1r, cos_lat1r;     /* the centre in radians */
    double lat_reject;                  /* a latitude arc beyond which no point matches */
} gb_geo_matcher;

void gb_geo_matcher_init(gb_geo_matcher *m, const gb_geo_shape *shape);
bool gb_geo_match(const gb_geo_matcher *m, double score, double xy[2], double *dist);

/* Buffer for the formats below. */
#define GB_GEO_FMT_BUF 48
/* A distance with 4 decimals, as Redis's fixedpoint_d2string(d, 4). */
size_t gb_geo_format_distance(double d, char *buf);
/* The 11-character standard geohash (latitude +-90) of a score, as GEOHASH. */
void gb_geo_hash_string(double score, char out[11]);

#endif
