/*
 * Loading a full sync's payload on a replica (see repl_load.h). Log lines
 * are Redis 7.0's (src/replication.c).
 */
#include "engine/persist/repl_load.h"

#include <string.h>

#include "engine/base/mem.h"
#include "engine/core/engine.h"
#include "engine/core/keyspace/db.h"
#include "engine/core/memory/sliced_free.h"
#include "engine/core/pubsub/tracking.h"
#include "engine/core/request/blocking.h"
#include "engine/core/request/multi.h"
#include "engine/persist/rdb_load.h"
#include "engine/types/t_keys.h"

static bool data_set_empty(const gb_engine *eng)
{
    for (int i = 0; i < eng->ndbs; i++)
        if (gb_db_size(&eng->dbs[i]) > 0)
            return false;
    return true;
}

bool gb_sync_load_in_memory(const gb_engine *eng)
{
    switch (eng->cfg.repl_diskless_load) {
    case GB_DISKLESS_LOAD_SWAPDB:
        return true;
    case GB_DISKLESS_LOAD_ON_EMPTY_DB:
        return data_set_empty(eng);
    default:
        return false;
    }
}

/* The old data set goes, in the background with replica-lazy-flush yes,
 * else here and now (Redis's emptyData with or without EMPTYDB_ASYNC). */
static void flush_everything(gb_engine *eng)
{
    for (int i = 0; i < eng->ndbs; i++)
        gb_keys_flushdb(&eng->dbs[i], eng->cfg.replica_lazy_flush);
    /* Freed before the new data set arrives, not in slices beside it: a
     * replica must not hold both at once. */
    if (!eng->cfg.replica_lazy_flush)
        gb_sliced_free_drain(eng);
    if (eng->scripting)
        eng->scripting->flush_libraries(eng->scripting->ctx);
    gb_tracking_invalidate_flush(eng);
}

/* ---- swapdb: the old data set set aside ------------------------------------ */

typedef struct set_aside {
    gb_db *dbs;     /* the old keys, one database each */
    char **libs;    /* the old function libraries' code */
    size_t *lib_len;
    size_t nlibs, libcap;
} set_aside;

static void keep_library(void *ctx, gb_slice code)
{
    set_aside *a = ctx;
    if (a->nlibs == a->libcap) {
        a->libcap = a->libcap ? a->libcap * 2 : 4;
        a->libs = gb_realloc(a->libs, a->libcap * sizeof *a->libs);
        a->lib_len = gb_realloc(a->lib_len, a->libcap * sizeof *a->lib_len);
    }
    a->libs[a->nlibs] = gb_malloc(code.len ? code.len : 1);
    memcpy(a->libs[a->nlibs], code.ptr, code.len);
    a->lib_len[a->nlibs++] = code.len;
}

/* Every database's keys move into a.dbs (the engine's are left empty), the
 * libraries' code is copied and the libraries dropped. Nothing is visible
 * to a client in between: the load that follows runs to its end first. */
static void set_aside_old(gb_engine *eng, set_aside *a)
{
    memset(a, 0, sizeof *a);
    a->dbs = gb_calloc((size_t)eng->ndbs, sizeof *a->dbs);
    for (int i = 0; i < eng->ndbs; i++) {
        gb_db_init(&a->dbs[i], eng, i);
        if (eng->dbs[i].slot_keys)
            gb_db_count_slots(&a->dbs[i]);
        gb_db_swap_data(&eng->dbs[i], &a->dbs[i]);
    }
    if (eng->scripting) {
        eng->scripting->foreach_library(eng->scripting->ctx, keep_library, a);
        eng->scripting->flush_libraries(eng->scripting->ctx);
    }
}

static void free_set_aside(gb_engine *eng, set_aside *a)
{
    for (int i = 0; i < eng->ndbs; i++) {
        gb_db_flush_lazy(&a->dbs[i]); /* Redis's disklessLoadDiscardTempDb: always in the background */
        gb_db_destroy(&a->dbs[i]);
    }
    gb_free(a->dbs);
    for (size_t i = 0; i < a->nlibs; i++)
        gb_free(a->libs[i]);
    gb_free(a->libs);
    gb_free(a->lib_len);
}

/* The load failed: what it built goes, the old data set comes back. */
static void restore_old(gb_engine *eng, set_aside *a)
{
    for (int i = 0; i < eng->ndbs; i++) {
        gb_db_flush_lazy(&eng->dbs[i]);
        gb_db_swap_data(&eng->dbs[i], &a->dbs[i]);
    }
    if (eng->scripting) {
        eng->scripting->flush_libraries(eng->scripting->ctx);
        for (size_t i = 0; i < a->nlibs; i++) {
            char err[256];
            if (eng->scripting->load_library(eng->scripting->ctx, gb_slice_make(a->libs[i], a->lib_len[i]), err,
                                             sizeof err) != 0)
                gb_log(GB_LOG_WARNING, "A function library could not be restored after the failed sync: %s", err);
        }
    }
    free_set_aside(eng, a);
}

/* The load succeeded: clients watching or waiting on keys learn that the
 * data set changed (Redis's swapMainDbWithTempDb), the old one goes. */
static void discard_old(gb_engine *eng, set_aside *a)
{
    for (int i = 0; i < eng->ndbs; i++) {
        gb_multi_touch_swap(&eng->dbs[i], &a->dbs[i]);
        gb_blocking_signal_db(&eng->dbs[i]);
    }
    gb_tracking_invalidate_flush(eng);
    free_set_aside(eng, a);
    gb_log(GB_LOG_NOTICE, "MASTER <-> REPLICA sync: Discarding old DB in background");
}

/* ---- the load --------------------------------------------------------------- */

static int load_payload(gb_engine *eng, const gb_sync_payload *p, gb_rdb_load_stats *st, char *err, size_t errlen)
{
    if (p->path)
        return gb_rdb_load_file(eng, p->path, st, NULL, NULL, err, errlen);
    return gb_rdb_load_buffer(eng, p->buf, p->len, "the payload from the MASTER", st, NULL, NULL, err, errlen);
}

int64_t gb_sync_load(gb_engine *eng, const gb_sync_payload *p, int *stream_db)
{
    *stream_db = -1;
    bool swap = !p->path && eng->cfg.repl_diskless_load == GB_DISKLESS_LOAD_SWAPDB;
    set_aside old;
    if (swap) {
        set_aside_old(eng, &old);
    } else {
        gb_log(GB_LOG_NOTICE, "MASTER <-> REPLICA sync: Flushing old data");
        flush_everything(eng);
    }
    gb_log(GB_LOG_NOTICE, "MASTER <-> REPLICA sync: Loading DB in memory");
    gb_rdb_load_stats st;
    char err[512] = "";
    int rc = load_payload(eng, p, &st, err, sizeof err);
    if (rc != 0) {
        gb_log(GB_LOG_WARNING, "Failed trying to load the MASTER synchronization DB from %s: %s",
               p->path ? "disk" : "socket", err);
        if (swap) {
            restore_old(eng, &old);
            gb_log(GB_LOG_NOTICE, "MASTER <-> REPLICA sync: Discarding temporary DB in background");
        } else {
            flush_everything(eng); /* what loaded before the error is not the primary's data set */
        }
        return -1;
    }
    if (swap) {
        gb_log(GB_LOG_NOTICE, "MASTER <-> REPLICA sync: Swapping active DB with loaded DB");
        discard_old(eng, &old);
    }
    eng->stats.dirty++; /* Redis: "inform about db change" */
    *stream_db = st.repl_stream_db;
    return (int64_t)st.keys;
}
