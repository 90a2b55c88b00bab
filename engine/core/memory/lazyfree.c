#include "engine/core/memory/lazyfree.h"

#include <pthread.h>
#include <stdlib.h>

#include "engine/base/helper_thread.h"
#include "engine/base/mem.h"
#include "engine/core/keyspace/db.h"
#include "engine/core/engine.h"
#include "platform/cpu.h"
#include "platform/shm_atomic.h"

/* One job: a record, or a whole table with its volatile array. */
typedef struct job {
    struct job *next;
    gb_kv *kv;
    gb_htable table;
    gb_kv **vol;
    bool is_table;
    uint64_t objects; /* keys it holds: what the counters say of it */
} job;

struct gb_lazyfree {
    gb_helper_thread thread;
    bool started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    job *head, *tail;
    bool stop;
    uint64_t pending;          /* objects queued, not yet freed */
    uint64_t done;             /* objects freed by the thread */
};

static void free_rec(gb_hnode *n, void *ctx)
{
    (void)ctx;
    gb_kv_free((gb_kv *)n);
}

/* Frees everything the job holds, the job too; returns its objects. */
static uint64_t release_job(job *j)
{
    uint64_t objects = j->objects;
    if (j->is_table) {
        gb_htable_clear(&j->table, free_rec, NULL);
        gb_free(j->vol);
    } else {
        gb_kv_free(j->kv);
    }
    gb_free(j);
    return objects;
}

/* A job's objects move from pending to freed once all it held is freed,
 * bucket arrays included (as Redis's lazyfreeFreeDatabase counts after
 * dictRelease): whoever reads lazyfree_pending_objects at 0 then reads a
 * used_memory without any of it. The fence orders the frees' off-thread
 * accounting before the count; gb_lazyfree_pending loads with acquire. */
static void run(gb_lazyfree *lf, job *j)
{
    uint64_t objects = release_job(j);
    gb_shm_fence_full();
    gb_shm_fetch_add_relaxed_u64(&lf->done, objects);
    gb_shm_fetch_add_relaxed_u64(&lf->pending, (uint64_t)0 - objects);
}

static void *main_loop(void *arg)
{
    gb_lazyfree *lf = arg;
    gb_mem_set_offthread();
    /* Below the engine, as the snapshot writer: freeing a million keys
     * takes ~100 ms of CPU, and at the engine's priority on a CPU the two
     * share the scheduler handed it the CPU in slices the engine waited
     * through (FLUSHALL ASYNC itself took 5 ms, the probe saw 3 ms waits).
     * At nice 10 the engine takes the CPU back whenever it has work; the
     * free still gets its share of a busy CPU. Best effort. */
    (void)gb_thread_set_low_priority();
    pthread_mutex_lock(&lf->mu);
    for (;;) {
        while (!lf->head && !lf->stop)
            pthread_cond_wait(&lf->cv, &lf->mu);
        job *j = lf->head;
        if (!j)
            break; /* stop, and nothing left */
        lf->head = j->next;
        if (!lf->head)
            lf->tail = NULL;
        pthread_mutex_unlock(&lf->mu);
        run(lf, j);
        pthread_mutex_lock(&lf->mu);
    }
    pthread_mutex_unlock(&lf->mu);
    return NULL;
}

gb_lazyfree *gb_lazyfree_new(const gb_cpuset *cpus)
{
    gb_lazyfree *lf = gb_calloc(1, sizeof *lf);
    pthread_mutex_init(&lf->mu, NULL);
    pthread_cond_init(&lf->cv, NULL);
    lf->started = gb_helper_thread_start(&lf->thread, "gb-lazyfree", cpus, main_loop, lf);
    return lf;
}

void gb_lazyfree_free(gb_lazyfree *lf)
{
    if (!lf)
        return;
    if (lf->started) {
        pthread_mutex_lock(&lf->mu);
        lf->stop = true;
        pthread_cond_broadcast(&lf->cv);
        pthread_mutex_unlock(&lf->mu);
        gb_helper_thread_join(&lf->thread);
    }
    pthread_mutex_destroy(&lf->mu);
    pthread_cond_destroy(&lf->cv);
    gb_free(lf);
}

static void enqueue(gb_lazyfree *lf, job *j, size_t objects)
{
    if (!lf->started) {
        /* No thread: freed here and now, so neither pending nor lazily
         * freed (Redis counts only what its background thread frees). */
        release_job(j);
        return;
    }
    j->objects = objects;
    gb_shm_fetch_add_relaxed_u64(&lf->pending, objects);
    pthread_mutex_lock(&lf->mu);
    if (lf->tail)
        lf->tail->next = j;
    else
        lf->head = j;
    lf->tail = j;
    pthread_cond_signal(&lf->cv);
    pthread_mutex_unlock(&lf->mu);
}

void gb_lazyfree_kv(gb_engine *eng, gb_kv *kv)
{
    if (gb_kv_free_effort(kv) <= GB_LAZYFREE_THRESHOLD) {
        gb_kv_free(kv);
        return;
    }
    job *j = gb_calloc(1, sizeof *j);
    j->kv = kv;
    enqueue(eng->lazyfree, j, 1);
}

void gb_lazyfree_table(gb_engine *eng, gb_htable *table, gb_kv **vol)
{
    size_t n = gb_htable_size(table);
    job *j = gb_calloc(1, sizeof *j);
    j->is_table = true;
    j->table = *table;
    j->vol = vol;
    enqueue(eng->lazyfree, j, n);
}

size_t gb_lazyfree_pending(const gb_lazyfree *lf) { return (size_t)gb_shm_load_acquire_u64(&lf->pending); }
uint64_t gb_lazyfree_done(const gb_lazyfree *lf) { return gb_shm_load_relaxed_u64(&lf->done); }

void gb_lazyfree_reset_stats(gb_lazyfree *lf) { gb_shm_store_relaxed_u64(&lf->done, 0); }
