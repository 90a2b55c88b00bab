/*
 * Hash-field expiry commands (Redis 7.4: HEXPIRE, HPEXPIRE, HEXPIREAT,
 * HPEXPIREAT, HTTL, HPTTL, HEXPIRETIME, HPEXPIRETIME, HPERSIST; Redis 8.0:
 * HGETDEL, HGETEX, HSETEX) around engine/ds/hash_ttl.h and
 * engine/core/keyspace/hfe.h. Checks run in Redis's order (the key's type first,
 * then the time, the condition, FIELDS and numfields), since that order
 * decides which error a bad request gets. Per-field replies: -2 no such
 * field, 0 condition not met, 1 done, 2 deleted because the time is in the
 * past; HTTL & co -1 for a field without a deadline; HPERSIST -1/1.
 *
 * Effects, as Redis propagates them: a relative time becomes HPEXPIREAT
 * with the absolute ms and only the fields it set; a field deleted because
 * its new time is past becomes HDEL; HGETDEL is HDEL of what it deleted;
 * HGETEX is the HPEXPIREAT / HPERSIST / HDEL of what it changed.
 */
#include "engine/commands/cmd_util.h"
#include "engine/core/request/propagate.h"
#include "engine/base/mem.h"
#include "engine/base/util.h"
#include "engine/types/t_hash_ttl.h"

#define ERR_FIELDS_MISSING "ERR Mandatory argument FIELDS is missing or not at the right position"
#define ERR_NUMFIELDS_MATCH "ERR The `numfields` parameter must match the number of arguments"
#define ERR_NUMFIELDS_POSITIVE "ERR Number of fields must be a positive integer"
#define ERR_NUMFIELDS_GT0 "ERR Parameter `numFields` should be greater than 0"
#define ERR_EX_NUMFIELDS "ERR numfields should be greater than 0 and match the provided number of fields"
#define ERR_HGETEX_ONE_OF "ERR Only one of EX, PX, EXAT, PXAT or PERSIST arguments can be specified"
#define ERR_HSETEX_ONE_OF "ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified"
#define ERR_HSETEX_COND "ERR Only one of FXX or FNX arguments can be specified"

/* Redis's HFE_MAX_ABS_TIME_MSEC: the API's bound on an absolute time. */
#define HFE_MAX_ABS_MS (GB_HASH_TTL_MAX >> 2)

enum { COND_NONE = 0, COND_NX, COND_XX, COND_GT, COND_LT };
enum { RES_NO_FIELD = -2, RES_NO_TTL = -1, RES_NOT_MET = 0, RES_SET = 1, RES_DELETED = 2 };

/* ---- shared argument parsing -------------------------------------------------- */

/* The hash at key (gb_tobj_lookup's 1 found, 0 missing), or -1 after
 * replying WRONGTYPE: the first step of every handler here. */
static int lookup_hash(gb_client *c, gb_slice key, bool write, gb_tobj *o)
{
    int found = gb_tobj_lookup(c->db, key, GB_TYPE_HASH, write, o);
    if (found < 0)
        gb_reply_error(c, GB_ERR_WRONGTYPE);
    return found;
}

/* "FIELDS numfields field..." with FIELDS at argv[at]: *n fields from
 * argv[at + 2]. numerr is the command's text for a bad numfields. */
static bool parse_fields(gb_client *c, int argc, gb_slice *argv, int at, const char *numerr, int64_t *n)
{
    if (!gb_slice_ieq(argv[at], "FIELDS")) {
        gb_reply_error(c, ERR_FIELDS_MISSING);
        return false;
    }
    if (!gb_arg_ll_range(c, argv[at + 1], 1, INT64_MAX, numerr, n))
        return false;
    if (*n != argc - at - 2) {
        gb_reply_error(c, ERR_NUMFIELDS_MATCH);
        return false;
    }
    return true;
}

static void reply_expire_time_error(gb_client *c, const char *cmd)
{
    gb_reply_errorf(c, "ERR invalid expire time in '%s' command", cmd);
}

/* HEXPIRE's time: >= 0, in range once in ms and added to base. */
static bool parse_hexpire_time(gb_client *c, gb_slice arg, int64_t base, bool seconds, const char *cmd, int64_t *when)
{
    int64_t v;
    if (!gb_arg_ll(c, arg, &v))
        return false;
    if (v < 0) {
        gb_reply_error(c, "ERR invalid expire time, must be >= 0");
        return false;
    }
    if (seconds) {
        if (v > HFE_MAX_ABS_MS / 1000) {
            reply_expire_time_error(c, cmd);
            return false;
        }
        v *= 1000;
    }
    if (v > HFE_MAX_ABS_MS - base) {
        reply_expire_time_error(c, cmd);
        return false;
    }
    *when = v + base;
    return true;
}

/* HGETEX/HSETEX's EX, PX, EXAT, PXAT (GETEX's rules: > 0). */
typedef enum ex_unit { EX_NONE = 0, EX_EX, EX_PX, EX_EXAT, EX_PXAT, EX_PERSIST, EX_KEEPTTL } ex_unit;

static ex_unit ex_unit_of(gb_slice arg)
{
    if (gb_slice_ieq(arg, "EX"))
        return EX_EX;
    if (gb_slice_ieq(arg, "PX"))
        return EX_PX;
    if (gb_slice_ieq(arg, "EXAT"))
        return EX_EXAT;
    if (gb_slice_ieq(arg, "PXAT"))
        return EX_PXAT;
    return EX_NONE;
}

static bool parse_ex_time(gb_client *c, ex_unit u, gb_slice arg, const char *cmd, int64_t *when)
{
    int64_t v;
    if (!gb_arg_ll(c, arg, &v))
        return false;
    bool seconds = u == EX_EX || u == EX_EXAT;
    int64_t base = (u == EX_EX || u == EX_PX) ? c->eng->now_ms : 0;
    if (v <= 0 || (seconds && v > HFE_MAX_ABS_MS / 1000)) {
        reply_expire_time_error(c, cmd);
        return false;
    }
    if (seconds)
        v *= 1000;
    if (v > HFE_MAX_ABS_MS - base) {
        reply_expire_time_error(c, cmd);
        return false;
    }
    *when = v + base;
    return true;
}

/* ---- effects ------------------------------------------------------------------ */

/* Propagates `head... FIELDS n fields...` (HPEXPIREAT key ms [cond], HPERSIST key)
 * or, with no FIELDS word (fields_word false), `head... fields...` (HDEL key). */
static void propagate_fields(gb_client *c, int nhead, const gb_slice *head, bool fields_word, size_t n,
                             const gb_slice *fields)
{
    if (!n || !gb_propagating(&c->eng->prop))
        return;
    size_t argc = (size_t)nhead + (fields_word ? 2 : 0) + n;
    gb_slice *eff = gb_malloc(argc * sizeof *eff);
    char num[GB_INT_BUF];
    size_t k = 0;
    for (int i = 0; i < nhead; i++)
        eff[k++] = head[i];
    if (fields_word) {
        eff[k++] = gb_slice_cstr("FIELDS");
        eff[k++] = gb_slice_make(num, gb_ll2str(num, (int64_t)n));
    }
    for (size_t i = 0; i < n; i++)
        eff[k++] = fields[i];
    gb_propagate_command(c, (int)argc, eff);
    gb_free(eff);
}

static void propagate_hpexpireat(gb_client *c, gb_slice key, int64_t when, gb_slice cond, size_t n,
                                 const gb_slice *fields)
{
    char ms[GB_INT_BUF];
    gb_slice head[4] = {gb_slice_cstr("HPEXPIREAT"), key, gb_slice_make(ms, gb_ll2str(ms, when)), cond};
    propagate_fields(c, cond.len ? 4 : 3, head, true, n, fields);
}

static void propagate_hdel(gb_client *c, gb_slice key, size_t n, const gb_slice *fields)
{
    gb_slice head[2] = {gb_slice_cstr("HDEL"), key};
    propagate_fields(c, 2, head, false, n, fields);
}

/* After fields were deleted by a command: the key goes when the hash is
 * empty; `hdel` then `del` (Redis's order). Returns whether the key went. */
static bool finish_deletes(gb_client *c, gb_slice key, gb_tobj *o)
{
    if (o->kv) /* (a lazy expiry may already have taken the emptied key) */
        gb_tobj_sync(o);
    gb_engine_key_modified(c->db, key);
    gb_notify_key(c, GB_NOTIFY_HASH, "hdel", key);
    if (o->kv && gb_hash_len(&o->o.h) != 0)
        return false;
    if (o->kv)
        gb_db_delete(c->db, key);
    o->kv = NULL;
    gb_notify_key(c, GB_NOTIFY_GENERIC, "del", key);
    return true;
}

static void reply_codes(gb_client *c, int64_t n, int code)
{
    gb_reply_array(c, n);
    for (int64_t i = 0; i < n; i++)
        gb_reply_int(c, code);
}

/* ---- HEXPIRE, HPEXPIRE, HEXPIREAT, HPEXPIREAT ----------------------------------- */

static int parse_cond(gb_slice arg)
{
    if (gb_slice_ieq(arg, "NX"))
        return COND_NX;
    if (gb_slice_ieq(arg, "XX"))
        return COND_XX;
    if (gb_slice_ieq(arg, "GT"))
        return COND_GT;
    if (gb_slice_ieq(arg, "LT"))
        return COND_LT;
    return COND_NONE;
}

/* Whether field is in h, given its deadline (gb_hash_ttl_get): a field
 * with one is (the index names only fields the hash has), so the lookup in
 * the fields is needed only for a field without -- one lookup, not two, on
 * the common path of HTTL, HPERSIST and HEXPIRE over fields with TTLs. */
static bool field_exists(const gb_hash *h, gb_slice field, int64_t when)
{
    return when >= 0 || gb_hash_exists(h, field);
}

/* Redis's hashTypeSetEx for one field: what setting its deadline to when
 * does (RES_SET: the caller sets it; RES_DELETED: the caller deletes it). */
static int hexpire_one(const gb_hash *h, gb_slice field, int64_t when, int cond, const gb_db *db)
{
    int64_t prev = gb_hash_ttl_get(h, field);
    if (!field_exists(h, field, prev))
        return RES_NO_FIELD;
    if (prev < 0) {
        if (cond == COND_XX || cond == COND_GT) /* no deadline counts as infinite */
            return RES_NOT_MET;
    } else if (cond == COND_NX || (cond == COND_GT && prev >= when) || (cond == COND_LT && prev <= when)) {
        return RES_NOT_MET;
    }
    return gb_db_already_expired(db, when) ? RES_DELETED : RES_SET;
}

static void hexpire_generic(gb_client *c, int argc, gb_slice *argv, bool relative, bool seconds, const char *cmd)
{
    gb_tobj o;
    gb_slice key = argv[1];
    int found = lookup_hash(c, key, true, &o);
    if (found < 0)
        return;
    int64_t when, n;
    if (!parse_hexpire_time(c, argv[2], relative ? c->eng->now_ms : 0, seconds, cmd, &when))
        return;
    int cond = parse_cond(argv[3]);
    int at = cond ? 4 : 3;
    if (!parse_fields(c, argc, argv, at, ERR_NUMFIELDS_GT0, &n))
        return;
    if (!found) {
        reply_codes(c, n, RES_NO_FIELD);
        return;
    }
    int64_t min_before = o.kv ? gb_hash_ttl_min(&o.o.h) : -1;
    gb_hash_ttl_enable(&o.o.h); /* as Redis: listpackex from the first call on */
    gb_tobj_sync(&o);
    gb_slice *set = gb_malloc((size_t)n * sizeof *set);
    size_t nset = 0, ndel = 0;
    gb_reply_array(c, n);
    for (int64_t i = 0; i < n; i++) {
        gb_slice field = argv[at + 2 + i];
        /* No lazy expiry here: as in Redis 7.4 (hashTypeSetEx), a field past
         * its deadline that no one deleted yet takes the new deadline. */
        int res = o.kv ? hexpire_one(&o.o.h, field, when, cond, c->db) : RES_NO_FIELD;
        if (res == RES_SET) {
            gb_hash_ttl_set(&o.o.h, field, when);
            set[nset++] = field;
        } else if (res == RES_DELETED) {
            propagate_hdel(c, key, 1, &field);
            gb_hash_del(&o.o.h, 1, &field);
            ndel++;
        }
        gb_reply_int(c, res);
    }
    if (o.kv)
        gb_tobj_sync(&o);
    if (nset)
        gb_hfe_index_note_since(c->db, key, min_before, when);
    if (ndel) {
        finish_deletes(c, key, &o);
    } else if (nset) {
        gb_engine_key_modified(c->db, key);
        gb_notify_key(c, GB_NOTIFY_HASH, "hexpire", key);
    }
    propagate_hpexpireat(c, key, when, cond ? argv[3] : gb_slice_make("", 0), nset, set);
    if (ndel && !nset)
        gb_propagate_prevent(c);
    gb_free(set);
}

static void cmd_hexpire(gb_client *c, int argc, gb_slice *argv) { hexpire_generic(c, argc, argv, true, true, "hexpire"); }
static void cmd_hpexpire(gb_client *c, int argc, gb_slice *argv) { hexpire_generic(c, argc, argv, true, false, "hpexpire"); }
static void cmd_hexpireat(gb_client *c, int argc, gb_slice *argv) { hexpire_generic(c, argc, argv, false, true, "hexpireat"); }
static void cmd_hpexpireat(gb_client *c, int argc, gb_slice *argv)
{
    hexpire_generic(c, argc, argv, false, false, "hpexpireat");
}

/* ---- HTTL, HPTTL, HEXPIRETIME, HPEXPIRETIME ----------------------------------- */

static void httl_generic(gb_client *c, int argc, gb_slice *argv, bool relative, bool seconds)
{
    gb_tobj o;
    int found = lookup_hash(c, argv[1], false, &o);
    if (found < 0)
        return;
    int64_t n;
    if (!parse_fields(c, argc, argv, 2, ERR_NUMFIELDS_POSITIVE, &n))
        return;
    if (!found) {
        reply_codes(c, n, RES_NO_FIELD);
        return;
    }
    int64_t now = c->eng->now_ms, base = relative ? now : 0;
    gb_reply_array(c, n);
    for (int64_t i = 0; i < n; i++) {
        gb_slice field = argv[4 + i];
        int64_t when = gb_hash_ttl_get(&o.o.h, field);
        if (!field_exists(&o.o.h, field, when) || (when >= 0 && when < now)) /* (as gb_hash_field_expired) */
            gb_reply_int(c, RES_NO_FIELD);
        else if (when < 0)
            gb_reply_int(c, RES_NO_TTL);
        else
            gb_reply_int(c, seconds ? (when + 999 - base) / 1000 : when - base);
    }
}

static void cmd_httl(gb_client *c, int argc, gb_slice *argv) { httl_generic(c, argc, argv, true, true); }
static void cmd_hpttl(gb_client *c, int argc, gb_slice *argv) { httl_generic(c, argc, argv, true, false); }
static void cmd_hexpiretime(gb_client *c, int argc, gb_slice *argv) { httl_generic(c, argc, argv, false, true); }
static void cmd_hpexpiretime(gb_client *c, int argc, gb_slice *argv) { httl_generic(c, argc, argv, false, false); }

/* ---- HPERSIST ------------------------------------------------------------------ */

static void cmd_hpersist(gb_client *c, int argc, gb_slice *argv)
{
    gb_tobj o;
    int found = lookup_hash(c, argv[1], true, &o);
    if (found < 0)
        return;
    int64_t n;
    if (!parse_fields(c, argc, argv, 2, ERR_NUMFIELDS_POSITIVE, &n))
        return;
    if (!found) {
        reply_codes(c, n, RES_NO_FIELD);
        return;
    }
    int64_t now = c->eng->now_ms;
    bool changed = false;
    gb_reply_array(c, n);
    for (int64_t i = 0; i < n; i++) {
        gb_slice field = argv[4 + i];
        int64_t when = gb_hash_ttl_get(&o.o.h, field);
        /* Redis 7.4 persists a field during its deadline's own ms (prevExpire
         * < now). Loading or on a replica, a past deadline is not acted on
         * (gb_db_already_expired): the log or the primary persists a field
         * it deleted no time to expire. */
        bool past = when >= 0 && when < now && gb_db_already_expired(c->db, when);
        if (!field_exists(&o.o.h, field, when) || past) {
            gb_reply_int(c, RES_NO_FIELD);
        } else if (when < 0) {
            gb_reply_int(c, RES_NO_TTL);
        } else {
            gb_hash_ttl_clear(&o.o.h, field);
            changed = true;
            gb_reply_int(c, RES_SET);
        }
    }
    if (changed) {
        gb_tobj_sync(&o);
        gb_engine_key_modified(c->db, argv[1]);
        gb_notify_key(c, GB_NOTIFY_HASH, "hpersist", argv[1]);
    }
}

/* Replies one field's value, or nil when it is missing or past its deadline
 * (then deleted, lazily: *expired counts it). True when a value went out. */
static bool reply_field(gb_client *c, gb_slice key, gb_tobj *o, gb_slice field, size_t *expired)
{
    gb_slice v;
    char buf[GB_HASH_VALUE_BUF];
    if (o->kv && gb_hfe_expire_field(c->db, key, o, field, false)) {
        (*expired)++;
    } else if (o->kv && gb_hash_get(&o->o.h, field, &v, buf)) {
        gb_reply_slice(c, v);
        return true;
    }
    gb_reply_nil(c);
    return false;
}

/* ---- HGETDEL ------------------------------------------------------------------- */

/* HGETDEL key FIELDS numfields field [field ...] */
static void cmd_hgetdel(gb_client *c, int argc, gb_slice *argv)
{
    gb_tobj o;
    gb_slice key = argv[1];
    int found = lookup_hash(c, key, true, &o);
    if (found < 0)
        return;
    int64_t n;
    if (!parse_fields(c, argc, argv, 2, ERR_NUMFIELDS_POSITIVE, &n))
        return;
    gb_slice *deleted = gb_malloc((size_t)n * sizeof *deleted);
    size_t ndel = 0, expired = 0;
    gb_reply_array(c, n);
    for (int64_t i = 0; i < n; i++) {
        gb_slice field = argv[4 + i];
        if (reply_field(c, key, &o, field, &expired)) {
            gb_hash_del(&o.o.h, 1, &field);
            deleted[ndel++] = field;
        }
    }
    gb_hfe_notify_batch(c->db, key, expired, expired && !o.kv && !ndel);
    if (ndel) {
        finish_deletes(c, key, &o);
        propagate_hdel(c, key, ndel, deleted);
    }
    gb_free(deleted);
}

/* ---- HGETEX -------------------------------------------------------------------- */

/* HGETEX key [EX seconds | PX ms | EXAT s | PXAT ms | PERSIST] FIELDS numfields field [field ...] */
static void cmd_hgetex(gb_client *c, int argc, gb_slice *argv)
{
    gb_tobj o;
    gb_slice key = argv[1];
    int found = lookup_hash(c, key, true, &o);
    if (found < 0)
        return;
    ex_unit unit = EX_NONE;
    int64_t when = 0, n = 0;
    int at = 2;
    for (; at < argc && !gb_slice_ieq(argv[at], "FIELDS"); at++) {
        ex_unit u = ex_unit_of(argv[at]);
        if (u == EX_NONE && gb_slice_ieq(argv[at], "PERSIST"))
            u = EX_PERSIST;
        if (u == EX_NONE) {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return;
        }
        if (unit != EX_NONE) {
            gb_reply_error(c, ERR_HGETEX_ONE_OF);
            return;
        }
        unit = u;
        if (u == EX_PERSIST)
            continue;
        if (++at >= argc) {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return;
        }
        if (!parse_ex_time(c, u, argv[at], "hgetex", &when))
            return;
    }
    if (at + 1 >= argc) {
        gb_reply_error(c, ERR_FIELDS_MISSING);
        return;
    }
    if (!gb_arg_ll_range(c, argv[at + 1], 1, INT64_MAX, ERR_EX_NUMFIELDS, &n))
        return;
    if (n != argc - at - 2) {
        gb_reply_error(c, ERR_EX_NUMFIELDS);
        return;
    }
    const gb_slice *fields = argv + at + 2;
    size_t expired = 0;
    gb_reply_array(c, n);
    for (int64_t i = 0; i < n; i++)
        reply_field(c, key, &o, fields[i], &expired);
    gb_hfe_notify_batch(c->db, key, expired, expired && !o.kv);
    if (unit == EX_NONE || !o.kv)
        return;
    /* The fields that are there get the new deadline, lose theirs, or go. */
    gb_slice *hit = gb_malloc((size_t)n * sizeof *hit);
    size_t nhit = 0;
    for (int64_t i = 0; i < n; i++) {
        bool exists = gb_hash_exists(&o.o.h, fields[i]);
        if (unit == EX_PERSIST ? exists && gb_hash_ttl_clear(&o.o.h, fields[i]) : exists)
            hit[nhit++] = fields[i];
    }
    if (nhit && unit == EX_PERSIST) {
        gb_tobj_sync(&o);
        gb_engine_key_modified(c->db, key);
        gb_notify_key(c, GB_NOTIFY_HASH, "hpersist", key);
        gb_slice head[2] = {gb_slice_cstr("HPERSIST"), key};
        propagate_fields(c, 2, head, true, nhit, hit);
    } else if (nhit && gb_db_already_expired(c->db, when)) {
        gb_hash_del(&o.o.h, nhit, hit);
        finish_deletes(c, key, &o);
        propagate_hdel(c, key, nhit, hit);
    } else if (nhit) {
        int64_t min_before = gb_hash_ttl_min(&o.o.h);
        for (size_t i = 0; i < nhit; i++)
            gb_hash_ttl_set(&o.o.h, hit[i], when);
        gb_tobj_sync(&o);
        gb_hfe_index_note_since(c->db, key, min_before, when);
        gb_engine_key_modified(c->db, key);
        gb_notify_key(c, GB_NOTIFY_HASH, "hexpire", key);
        propagate_hpexpireat(c, key, when, gb_slice_make("", 0), nhit, hit);
    }
    if (!nhit)
        gb_propagate_prevent(c);
    gb_free(hit);
}

/* ---- HSETEX -------------------------------------------------------------------- */

typedef struct hsetex_args {
    int cond;      /* COND_NONE, COND_NX (FNX), COND_XX (FXX) */
    ex_unit unit;  /* EX_NONE, EX_KEEPTTL or a time */
    int64_t when;
    int64_t n;     /* pairs from argv[at] */
    int at;
} hsetex_args;

static bool parse_hsetex(gb_client *c, int argc, gb_slice *argv, hsetex_args *a)
{
    int i = 2;
    for (; i < argc && !gb_slice_ieq(argv[i], "FIELDS"); i++) {
        ex_unit u = ex_unit_of(argv[i]);
        if (gb_slice_ieq(argv[i], "FNX") || gb_slice_ieq(argv[i], "FXX")) {
            if (a->cond != COND_NONE) {
                gb_reply_error(c, ERR_HSETEX_COND);
                return false;
            }
            a->cond = gb_slice_ieq(argv[i], "FNX") ? COND_NX : COND_XX;
            continue;
        }
        if (u == EX_NONE && gb_slice_ieq(argv[i], "KEEPTTL"))
            u = EX_KEEPTTL;
        if (u == EX_NONE) {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return false;
        }
        if (a->unit != EX_NONE) {
            gb_reply_error(c, ERR_HSETEX_ONE_OF);
            return false;
        }
        a->unit = u;
        if (u == EX_KEEPTTL)
            continue;
        if (++i >= argc) {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return false;
        }
        if (!parse_ex_time(c, u, argv[i], "hsetex", &a->when))
            return false;
    }
    if (i + 1 >= argc) {
        gb_reply_error(c, ERR_FIELDS_MISSING);
        return false;
    }
    if (!gb_arg_ll_range(c, argv[i + 1], 1, INT64_MAX / 2, ERR_EX_NUMFIELDS, &a->n))
        return false;
    if (a->n * 2 != argc - i - 2) {
        gb_reply_error(c, ERR_EX_NUMFIELDS);
        return false;
    }
    a->at = i + 2;
    return true;
}

/* FNX: none of the fields is there; FXX: all are. */
static bool hsetex_condition_met(gb_db *db, gb_slice key, gb_tobj *o, const hsetex_args *a, gb_slice *argv)
{
    if (a->cond == COND_NONE)
        return true;
    for (int64_t i = 0; i < a->n; i++) {
        gb_slice field = argv[a->at + 2 * i];
        bool there = o->kv && !gb_hfe_expire_field(db, key, o, field, true) && gb_hash_exists(&o->o.h, field);
        if (there != (a->cond == COND_XX))
            return false;
    }
    return true;
}

/* HSETEX key [FNX | FXX] [EX | PX | EXAT | PXAT | KEEPTTL] FIELDS numfields field value [field value ...] */
static void cmd_hsetex(gb_client *c, int argc, gb_slice *argv)
{
    gb_tobj o;
    gb_slice key = argv[1];
    int found = lookup_hash(c, key, true, &o);
    if (found < 0)
        return;
    hsetex_args a = {0};
    if (!parse_hsetex(c, argc, argv, &a))
        return;
    if (!hsetex_condition_met(c->db, key, &o, &a, argv)) {
        gb_reply_int(c, 0);
        return;
    }
    int64_t min_before = o.kv ? gb_hash_ttl_min(&o.o.h) : -1;
    if (!o.kv)
        gb_tobj_add(c->db, key, GB_TYPE_HASH, gb_hash_new(), &o);
    gb_types_config cfg = gb_types_cfg(c->eng);
    bool timed = a.unit != EX_NONE && a.unit != EX_KEEPTTL;
    bool past = timed && gb_db_already_expired(c->db, a.when);
    gb_slice *fields = gb_malloc((size_t)a.n * sizeof *fields);
    for (int64_t i = 0; i < a.n; i++) {
        fields[i] = argv[a.at + 2 * i];
        gb_slice value = argv[a.at + 2 * i + 1];
        if (a.unit == EX_KEEPTTL) /* the value changes, the deadline stays */
            gb_hash_set_keep_ttl(&o.o.h, &cfg, fields[i], value);
        else
            gb_hash_set(&o.o.h, &cfg, fields[i], value); /* drops the deadline, as HSET */
        if (timed && !past)
            gb_hash_ttl_set(&o.o.h, fields[i], a.when);
    }
    gb_tobj_sync(&o);
    gb_engine_key_modified(c->db, key);
    gb_reply_int(c, 1);
    gb_notify_key(c, GB_NOTIFY_HASH, "hset", key);
    if (past) {
        gb_hash_del(&o.o.h, (size_t)a.n, fields);
        finish_deletes(c, key, &o);
        propagate_hdel(c, key, (size_t)a.n, fields);
    } else if (timed) {
        gb_hfe_index_note_since(c->db, key, min_before, a.when);
        gb_notify_key(c, GB_NOTIFY_HASH, "hexpire", key);
        if (a.unit != EX_PXAT && gb_propagating(&c->eng->prop)) {
            /* A relative or second time becomes PXAT with the absolute ms. */
            char ms[GB_INT_BUF];
            gb_slice *eff = gb_malloc((size_t)argc * sizeof *eff);
            int k = 0;
            eff[k++] = gb_slice_cstr("HSETEX");
            eff[k++] = key;
            eff[k++] = gb_slice_cstr("PXAT");
            eff[k++] = gb_slice_make(ms, gb_ll2str(ms, a.when));
            for (int i = a.at - 2; i < argc; i++)
                eff[k++] = argv[i];
            gb_propagate_command(c, k, eff);
            gb_free(eff);
        }
    }
    gb_free(fields);
}

GB_DEFINE_COMMANDS(hash_ttl,
    {"hexpire", cmd_hexpire},
    {"hpexpire", cmd_hpexpire},
    {"hexpireat", cmd_hexpireat},
    {"hpexpireat", cmd_hpexpireat},
    {"httl", cmd_httl},
    {"hpttl", cmd_hpttl},
    {"hexpiretime", cmd_hexpiretime},
    {"hpexpiretime", cmd_hpexpiretime},
    {"hpersist", cmd_hpersist},
    {"hgetdel", cmd_hgetdel},
    {"hgetex", cmd_hgetex},
    {"hsetex", cmd_hsetex});
