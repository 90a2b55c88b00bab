/*
 * The geo commands' typed operations: a geo index is a sorted set whose
 * scores are 52-bit geohashes (engine/base/geohash.h). A search scans the
 * score ranges of the nine boxes covering its area, keeps the points
 * inside it, and hands them back in the order Redis finds them (box by
 * box, each in score order), so that sorting them as Redis does gives
 * Redis's reply.
 */
#ifndef GB_ENGINE_TYPES_T_GEO_H
#define GB_ENGINE_TYPES_T_GEO_H

#include "engine/base/geohash.h"
#include "engine/base/strbuf.h"
#include "engine/types/result.h"
#include "engine/types/tobj.h"

/* One match. The layout is Redis's geoPoint's (four doubles, then 8 bytes
 * naming the member), so that the same qsort on the same input orders ties
 * the same way. */
typedef struct gb_geo_point {
    double lon, lat;
    double dist; /* meters from the centre */
    double score;
    uint64_t member; /* offset of the member in gb_geo_points.names */
} gb_geo_point;

typedef struct gb_geo_points {
    gb_geo_point *p;
    size_t n, cap;
    gb_strbuf names; /* each member: its length (8 bytes), then its bytes */
} gb_geo_points;

static inline gb_slice gb_geo_point_member(const gb_geo_points *pts, const gb_geo_point *p)
{
    uint64_t len;
    memcpy(&len, pts->names.p + p->member, sizeof len);
    return gb_slice_make(pts->names.p + p->member + sizeof len, (size_t)len);
}
void gb_geo_points_free(gb_geo_points *pts);

/* The sorted set under key for reading: *z NULL when the key is missing;
 * GB_R_WRONGTYPE when it holds another type. o keeps the object. */
gb_result gb_geo_read(gb_db *db, gb_slice key, gb_tobj *o, const gb_zset **z);

/* The coordinates of member (GEOPOS, FROMMEMBER); false when absent. */
bool gb_geo_member_xy(const gb_zset *z, gb_slice member, double xy[2]);

/* Appends the points of z inside shape to out, stopping once out holds
 * limit of them (ANY) when limit > 0. */
void gb_geo_search(const gb_zset *z, const gb_geo_shape *shape, size_t limit, gb_geo_points *out);

/* Orders the points by distance (ascending, or descending with desc) as
 * Redis does, so that equal distances come out in Redis's order too: all
 * of them with the C library's qsort when first == pts->n, else only the
 * first `first` with Redis's partial quicksort (its pqsort: Bentley and
 * McIlroy's, skipping partitions outside the range). */
void gb_geo_points_sort(gb_geo_points *pts, size_t first, bool desc);

/* Stores the first n points under dst as a sorted set, scored by their
 * geohash or, with by_dist, by their distance divided by conversion
 * (STORE / STOREDIST); n == 0 deletes dst. Replaces any type. */
void gb_geo_store(gb_db *db, gb_slice dst, const gb_geo_points *pts, size_t n, bool by_dist, double conversion);

#endif
