/* Geo commands (GEOADD, GEOPOS, GEODIST, GEOHASH, GEOSEARCH,
 * GEOSEARCHSTORE, GEORADIUS, GEORADIUSBYMEMBER and their _RO forms): Redis
 * 7.0's argument rules, error texts, replies and events around
 * engine/types/t_geo.h. georadius_generic follows Redis's georadiusGeneric
 * check for check, since that order decides which error a bad request
 * gets (the key's type before anything; a missing key answers before the
 * options of GEORADIUSBYMEMBER are looked at). */
#include "engine/base/mem.h"
#include "engine/base/score.h"
#include "engine/commands/cmd_util.h"
#include "engine/commands/typed.h"
#include "engine/types/t_geo.h"

#define ERR_UNIT "ERR unsupported unit provided. please use M, KM, FT, MI"
#define ERR_DECODE_MEMBER "ERR could not decode requested zset member"

/* An argument as Redis's strcasecmp sees it: a C string, ending at its
 * first NUL byte. */
static bool arg_is(gb_slice arg, const char *word)
{
    const char *nul = memchr(arg.ptr, '\0', arg.len);
    return gb_slice_ieq(nul ? gb_slice_make(arg.ptr, (size_t)(nul - arg.ptr)) : arg, word);
}

/* getDoubleFromObjectOrReply: msg replaces "value is not a valid float". */
static bool parse_double(gb_client *c, gb_slice arg, const char *msg, double *out)
{
    if (gb_score_parse(arg, out) == 0)
        return true;
    gb_reply_error(c, msg ? msg : GB_ERR_NOT_FLOAT);
    return false;
}

/* extractLongLatOrReply: longitude then latitude, within Redis's limits. */
static bool parse_lonlat(gb_client *c, const gb_slice *argv, double xy[2])
{
    if (!parse_double(c, argv[0], NULL, &xy[0]) || !parse_double(c, argv[1], NULL, &xy[1]))
        return false;
    if (xy[0] < GB_GEO_LONG_MIN || xy[0] > GB_GEO_LONG_MAX || xy[1] < GB_GEO_LAT_MIN || xy[1] > GB_GEO_LAT_MAX) {
        gb_reply_errorf(c, "ERR invalid longitude,latitude pair %f,%f", xy[0], xy[1]);
        return false;
    }
    return true;
}

/* Meters per unit; replies and returns a negative number for another word. */
static double parse_unit(gb_client *c, gb_slice arg)
{
    if (arg_is(arg, "m"))
        return 1;
    if (arg_is(arg, "km"))
        return 1000;
    if (arg_is(arg, "ft"))
        return 0.3048;
    if (arg_is(arg, "mi"))
        return 1609.34;
    gb_reply_error(c, ERR_UNIT);
    return -1;
}

/* "<radius> <unit>" into a circle. */
static bool parse_radius(gb_client *c, const gb_slice *argv, gb_geo_shape *shape)
{
    double r;
    if (!parse_double(c, argv[0], "ERR need numeric radius", &r))
        return false;
    if (r < 0) {
        gb_reply_error(c, "ERR radius cannot be negative");
        return false;
    }
    double conv = parse_unit(c, argv[1]);
    if (conv < 0)
        return false;
    shape->type = GB_GEO_CIRCLE;
    shape->radius = r;
    shape->conversion = conv;
    return true;
}

/* "<width> <height> <unit>" into a box. */
static bool parse_box(gb_client *c, const gb_slice *argv, gb_geo_shape *shape)
{
    double w, h;
    if (!parse_double(c, argv[0], "ERR need numeric width", &w) ||
        !parse_double(c, argv[1], "ERR need numeric height", &h))
        return false;
    if (h < 0 || w < 0) {
        gb_reply_error(c, "ERR height or width cannot be negative");
        return false;
    }
    double conv = parse_unit(c, argv[2]);
    if (conv < 0)
        return false;
    shape->type = GB_GEO_BOX;
    shape->width = w;
    shape->height = h;
    shape->conversion = conv;
    return true;
}

/* A distance reply: 4 decimals, a bulk string in both protocols. */
static void reply_distance(gb_client *c, double d)
{
    char buf[GB_GEO_FMT_BUF];
    gb_reply_bulk(c, buf, gb_geo_format_distance(d, buf));
}

/* A coordinate: Redis's addReplyHumanLongDouble ("%.17Lf", trailing zeros
 * cut; a RESP3 double). */
static void reply_coordinate(gb_client *c, double v)
{
    char buf[GB_LONG_DOUBLE_BUF];
    size_t n = gb_format_long_double((long double)v, buf, sizeof buf);
    gb_reply_double_text(c, v, buf, n);
}

static void reply_position(gb_client *c, const double xy[2])
{
    gb_reply_array(c, 2);
    reply_coordinate(c, xy[0]);
    reply_coordinate(c, xy[1]);
}

/* ---- GEOADD --------------------------------------------------------------------------------- */

/* GEOADD key [NX|XX] [CH] lon lat member [lon lat member ...]: ZADD with
 * each point's 52-bit hash as its score (its reply, its "zadd" event). */
static void cmd_geoadd(gb_client *c, int argc, gb_slice *argv)
{
    int flags = 0, idx = 2;
    for (; idx < argc; idx++) {
        if (arg_is(argv[idx], "nx"))
            flags |= GB_ZADD_NX;
        else if (arg_is(argv[idx], "xx"))
            flags |= GB_ZADD_XX;
        else if (arg_is(argv[idx], "ch"))
            flags |= GB_ZADD_CH;
        else
            break;
    }
    if ((argc - idx) % 3 || ((flags & GB_ZADD_NX) && (flags & GB_ZADD_XX))) {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
    size_t n = (size_t)(argc - idx) / 3;
    if (n == 0) { /* options only: what ZADD says to no pairs */
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
    double *scores = gb_malloc(n * sizeof *scores);
    gb_slice *members = gb_malloc(n * sizeof *members);
    for (size_t i = 0; i < n; i++) {
        const gb_slice *point = &argv[idx + 3 * i];
        double xy[2];
        if (!parse_lonlat(c, point, xy))
            goto done;
        gb_geohash h;
        gb_geohash_encode_wgs84(xy[0], xy[1], GB_GEO_STEP_MAX, &h);
        scores[i] = (double)gb_geohash_align52(h);
        members[i] = point[2];
    }
    gb_cmd_zadd(c, argv[1], flags, n, scores, members);
done:
    gb_free(scores);
    gb_free(members);
}

/* ---- GEOPOS / GEOHASH / GEODIST ------------------------------------------------------------- */

/* The sorted set under key, or NULL when missing; false (WRONGTYPE
 * replied) when the key holds another type. */
static bool read_index(gb_client *c, gb_slice key, gb_tobj *o, const gb_zset **z)
{
    if (gb_geo_read(c->db, key, o, z) == GB_R_OK)
        return true;
    gb_reply_error(c, GB_ERR_WRONGTYPE);
    return false;
}

static void cmd_geopos(gb_client *c, int argc, gb_slice *argv)
{
    gb_tobj o;
    const gb_zset *z;
    if (!read_index(c, argv[1], &o, &z))
        return;
    gb_reply_array(c, argc - 2);
    for (int j = 2; j < argc; j++) {
        double xy[2];
        if (z && gb_geo_member_xy(z, argv[j], xy))
            reply_position(c, xy);
        else
            gb_reply_nil_array(c);
    }
}

static void cmd_geohash(gb_client *c, int argc, gb_slice *argv)
{
    gb_tobj o;
    const gb_zset *z;
    if (!read_index(c, argv[1], &o, &z))
        return;
    gb_reply_array(c, argc - 2);
    for (int j = 2; j < argc; j++) {
        double score;
        if (z && gb_zset_score(z, argv[j], &score)) {
            char hash[11];
            gb_geo_hash_string(score, hash);
            gb_reply_bulk(c, hash, sizeof hash);
        } else {
            gb_reply_nil(c);
        }
    }
}

/* GEODIST key member1 member2 [M|KM|FT|MI] */
static void cmd_geodist(gb_client *c, int argc, gb_slice *argv)
{
    double to_meters = 1;
    if (argc == 5) {
        to_meters = parse_unit(c, argv[4]);
        if (to_meters < 0)
            return;
    } else if (argc > 5) {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
    gb_tobj o;
    const gb_zset *z;
    if (!read_index(c, argv[1], &o, &z))
        return;
    double a[2], b[2];
    if (!z || !gb_geo_member_xy(z, argv[2], a) || !gb_geo_member_xy(z, argv[3], b)) {
        gb_reply_nil(c);
        return;
    }
    reply_distance(c, gb_geo_distance(a[0], a[1], b[0], b[1]) / to_meters);
}

/* ---- GEOSEARCH, GEOSEARCHSTORE, GEORADIUS* ------------------------------------------------- */

enum {
    RADIUS_COORDS = 1 << 0,  /* GEORADIUS[_RO]: centre and radius in fixed places */
    RADIUS_MEMBER = 1 << 1,  /* GEORADIUSBYMEMBER[_RO] */
    RADIUS_NOSTORE = 1 << 2, /* the _RO forms: no STORE/STOREDIST */
    GEOSEARCH = 1 << 3,      /* FROM.../BY... options */
    GEOSEARCHSTORE = 1 << 4, /* destination first, STOREDIST a flag */
};

enum { SORT_NONE, SORT_ASC, SORT_DESC };

typedef struct geo_query {
    gb_geo_shape shape;
    const gb_slice *storekey;
    bool storedist, withdist, withhash, withcoord, any;
    bool frommember, fromloc, byradius, bybox;
    int sort;
    int64_t count; /* 0: all */
} geo_query;

/* The optional arguments from argv[base] on, as Redis's loop reads them.
 * Replies and returns false on an error. */
static bool parse_geo_options(gb_client *c, int argc, gb_slice *argv, int base, int flags, const gb_zset *z,
                              geo_query *q)
{
    bool may_store = !(flags & RADIUS_NOSTORE) && !(flags & GEOSEARCH);
    bool search = flags & GEOSEARCH;
    int remaining = argc - base;
    for (int i = 0; i < remaining; i++) {
        gb_slice arg = argv[base + i];
        const gb_slice *next = &argv[base + i + 1];
        if (arg_is(arg, "withdist"))
            q->withdist = true;
        else if (arg_is(arg, "withhash"))
            q->withhash = true;
        else if (arg_is(arg, "withcoord"))
            q->withcoord = true;
        else if (arg_is(arg, "any"))
            q->any = true;
        else if (arg_is(arg, "asc"))
            q->sort = SORT_ASC;
        else if (arg_is(arg, "desc"))
            q->sort = SORT_DESC;
        else if (arg_is(arg, "count") && i + 1 < remaining) {
            if (!gb_arg_ll(c, *next, &q->count))
                return false;
            if (q->count <= 0) {
                gb_reply_error(c, "ERR COUNT must be > 0");
                return false;
            }
            i++;
        } else if ((arg_is(arg, "store") || arg_is(arg, "storedist")) && i + 1 < remaining && may_store) {
            q->storekey = next;
            q->storedist = arg_is(arg, "storedist");
            i++;
        } else if (arg_is(arg, "storedist") && search && (flags & GEOSEARCHSTORE)) {
            q->storedist = true;
        } else if (arg_is(arg, "frommember") && i + 1 < remaining && search && !q->fromloc) {
            /* A missing key answers once the options are read. */
            if (z && !gb_geo_member_xy(z, *next, q->shape.xy)) {
                gb_reply_error(c, ERR_DECODE_MEMBER);
                return false;
            }
            q->frommember = true;
            i++;
        } else if (arg_is(arg, "fromlonlat") && i + 2 < remaining && search && !q->frommember) {
            if (!parse_lonlat(c, next, q->shape.xy))
                return false;
            q->fromloc = true;
            i += 2;
        } else if (arg_is(arg, "byradius") && i + 2 < remaining && search && !q->bybox) {
            if (!parse_radius(c, next, &q->shape))
                return false;
            q->byradius = true;
            i += 2;
        } else if (arg_is(arg, "bybox") && i + 3 < remaining && search && !q->byradius) {
            if (!parse_box(c, next, &q->shape))
                return false;
            q->bybox = true;
            i += 3;
        } else {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return false;
        }
    }
    return true;
}

/* The rules Redis checks once every option is read. */
static bool geo_query_valid(gb_client *c, gb_slice cmdname, int flags, const geo_query *q)
{
    if (q->storekey && (q->withdist || q->withhash || q->withcoord)) {
        gb_reply_errorf(c, "ERR %s is not compatible with WITHDIST, WITHHASH and WITHCOORD options",
                        (flags & GEOSEARCHSTORE) ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS");
        return false;
    }
    if ((flags & GEOSEARCH) && !(q->frommember || q->fromloc)) {
        gb_reply_errorf(c, "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for %.*s",
                        (int)cmdname.len, cmdname.ptr);
        return false;
    }
    if ((flags & GEOSEARCH) && !(q->byradius || q->bybox)) {
        gb_reply_errorf(c, "ERR exactly one of BYRADIUS and BYBOX can be specified for %.*s", (int)cmdname.len,
                        cmdname.ptr);
        return false;
    }
    if (q->any && !q->count) {
        gb_reply_error(c, "ERR the ANY argument requires COUNT argument");
        return false;
    }
    return true;
}

static void reply_points(gb_client *c, const geo_query *q, const gb_geo_points *pts, size_t n)
{
    int extras = q->withdist + q->withhash + q->withcoord;
    gb_reply_array(c, (int64_t)n);
    for (size_t i = 0; i < n; i++) {
        const gb_geo_point *p = &pts->p[i];
        if (extras)
            gb_reply_array(c, extras + 1);
        gb_reply_slice(c, gb_geo_point_member(pts, p));
        if (q->withdist)
            reply_distance(c, p->dist / q->shape.conversion);
        if (q->withhash)
            gb_reply_int(c, (int64_t)p->score);
        if (q->withcoord) {
            double xy[2] = {p->lon, p->lat};
            reply_position(c, xy);
        }
    }
}

/* Stores the result (or deletes the destination for none) and replies its
 * size, with Redis's events. */
static void store_points(gb_client *c, const geo_query *q, int flags, const gb_geo_points *pts, size_t n)
{
    gb_slice dst = *q->storekey;
    bool existed = gb_notify_store_begin(c, dst);
    gb_geo_store(c->db, dst, pts, n, q->storedist, q->shape.conversion);
    gb_reply_int(c, (int64_t)n);
    gb_notify_store_end(c, GB_NOTIFY_ZSET, (flags & GEOSEARCH) ? "geosearchstore" : "georadiusstore", dst,
                        (int64_t)n, existed);
}

static void run_query(gb_client *c, const gb_zset *z, geo_query *q, int flags)
{
    /* COUNT without an order means the nearest ones (ANY aside). */
    if (q->count && q->sort == SORT_NONE && !q->any)
        q->sort = SORT_ASC;
    gb_geo_points pts = {0};
    gb_geo_search(z, &q->shape, q->any ? (size_t)q->count : 0, &pts);
    if (pts.n == 0 && !q->storekey) {
        gb_reply_array(c, 0);
        gb_geo_points_free(&pts);
        return;
    }
    size_t n = q->count == 0 || pts.n < (uint64_t)q->count ? pts.n : (size_t)q->count;
    if (q->sort != SORT_NONE)
        gb_geo_points_sort(&pts, n, q->sort == SORT_DESC);
    if (q->storekey)
        store_points(c, q, flags, &pts, n);
    else
        reply_points(c, q, &pts, n);
    gb_geo_points_free(&pts);
}

static void georadius_generic(gb_client *c, int argc, gb_slice *argv, int src_index, int flags)
{
    gb_tobj o;
    const gb_zset *z;
    if (!read_index(c, argv[src_index], &o, &z))
        return;
    geo_query q = {.sort = SORT_NONE};
    int base;
    if (flags & RADIUS_COORDS) {
        base = 6;
        if (!parse_lonlat(c, &argv[2], q.shape.xy) || !parse_radius(c, &argv[4], &q.shape))
            return;
    } else if (flags & RADIUS_MEMBER) {
        base = 5;
        if (z) { /* without a key the radius goes unread, as in Redis */
            if (!gb_geo_member_xy(z, argv[2], q.shape.xy)) {
                gb_reply_error(c, ERR_DECODE_MEMBER);
                return;
            }
            if (!parse_radius(c, &argv[3], &q.shape))
                return;
        }
    } else {
        base = (flags & GEOSEARCHSTORE) ? 3 : 2;
        if (flags & GEOSEARCHSTORE)
            q.storekey = &argv[1];
    }
    if (!parse_geo_options(c, argc, argv, base, flags, z, &q) || !geo_query_valid(c, argv[0], flags, &q))
        return;
    if (!z) {
        if (q.storekey)
            store_points(c, &q, flags, NULL, 0);
        else
            gb_reply_array(c, 0);
        return;
    }
    run_query(c, z, &q, flags);
}

static void cmd_georadius(gb_client *c, int argc, gb_slice *argv)
{
    georadius_generic(c, argc, argv, 1, RADIUS_COORDS);
}
static void cmd_georadiusbymember(gb_client *c, int argc, gb_slice *argv)
{
    georadius_generic(c, argc, argv, 1, RADIUS_MEMBER);
}
static void cmd_georadius_ro(gb_client *c, int argc, gb_slice *argv)
{
    georadius_generic(c, argc, argv, 1, RADIUS_COORDS | RADIUS_NOSTORE);
}
static void cmd_georadiusbymember_ro(gb_client *c, int argc, gb_slice *argv)
{
    georadius_generic(c, argc, argv, 1, RADIUS_MEMBER | RADIUS_NOSTORE);
}
static void cmd_geosearch(gb_client *c, int argc, gb_slice *argv) { georadius_generic(c, argc, argv, 1, GEOSEARCH); }
static void cmd_geosearchstore(gb_client *c, int argc, gb_slice *argv)
{
    georadius_generic(c, argc, argv, 2, GEOSEARCH | GEOSEARCHSTORE);
}

GB_DEFINE_COMMANDS(geo,
    {"geoadd", cmd_geoadd},
    {"geodist", cmd_geodist},
    {"geohash", cmd_geohash},
    {"geopos", cmd_geopos},
    {"georadius", cmd_georadius},
    {"georadius_ro", cmd_georadius_ro},
    {"georadiusbymember", cmd_georadiusbymember},
    {"georadiusbymember_ro", cmd_georadiusbymember_ro},
    {"geosearch", cmd_geosearch},
    {"geosearchstore", cmd_geosearchstore});
