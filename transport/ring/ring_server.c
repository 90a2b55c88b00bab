#define _POSIX_C_SOURCE 200809L
#include "transport/ring/ring_server.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/base/helper_thread.h"
#include "engine/core/acl/acl.h"
#include "engine/base/mem.h"
#include "engine/core/request/blocking.h"
#include "engine/core/memory/client_memory.h"
#include "engine/commands/cmd_util.h"
#include "platform/caps.h"
#include "platform/clock.h"
#include "platform/cpu.h"
#include "platform/entropy.h"
#include "platform/errmsg.h"
#include "platform/numa.h"
#include "platform/park.h"
#include "platform/shm.h"
#include "platform/shm_atomic.h"
#include "platform/topology.h"
#include "platform/wakefd.h"
#include "transport/resp/resp_parser.h"
#include "transport/resp/resp_writer.h"
#include "transport/ring/ring_io.h"
#include "transport/ring/ring_proto.h"
#include "transport/sbe/sbe_codec.h"

/* The poller spins over the rings for at most this long before it lets the
 * event loop look at the sockets (one non-blocking epoll/kqueue call), so
 * socket clients wait at most this long while rings are busy. */
#define POLL_SLICE_US 100
/* Records handled per slot per pass, and request bytes (a record may hold
 * a RESP pipeline of up to max_payload bytes, tens of thousands of
 * commands): past either the pass moves on, so one busy client cannot
 * starve the others, nor the sockets past a slice (a client that kept its
 * ring full of 256 KiB records of PINGs held a socket PING for 4 s). */
#define BATCH_PER_SLOT 32
#define BATCH_BYTES_PER_SLOT (64u << 10)
/* For this many passes after a request the poller spins without `pause`.
 * A synchronous client's next request usually follows within a round trip,
 * and x86 `pause` alone delays noticing it by up to ~25 ns on AMD Zen (the
 * whole round trip is ~100-500 ns). Past this window the poller pauses on
 * every idle pass, which yields the core to an SMT sibling and saves power.
 * 512 passes of a few loads each are a few microseconds. */
#define HOT_PASSES 512
/* A claim whose wake descriptor signals this many times in a row without a
 * request arriving in between is flooding it (a correct client signals once
 * per request it publishes, and only while the server is parked): its
 * descriptor is unwatched for MUTE_NS, so the flood costs the server at
 * most one wake-up per MUTE_NS. The slot's requests are still served
 * whenever the server is awake, and at the latest when the loop next wakes
 * (the cron runs hz times a second). */
#define IDLE_WAKES_MAX 8
#define MUTE_NS (10u * 1000u * 1000u)

enum slot_state {
    SLOT_FREE = 0,  /* fresh memory, ready to be claimed */
    SLOT_ATTACHED,  /* claimed: polled, its wake descriptor watched */
    SLOT_REFILLING, /* released: the refill thread is replacing its memory */
    SLOT_DISABLED   /* no memory (shutdown, or a refill failed) */
};

struct ring_slot;

/* One claim's wake descriptor and its watcher. Allocated per claim: the
 * handle outlives the claim until libuv has closed it. */
typedef struct slot_wake {
    uv_poll_t poll;
    gb_wakefd fd;
    struct ring_slot *slot;
} slot_wake;

typedef struct ring_slot {
    int id;
    enum slot_state state;
    gb_shm shm;
    gb_shm retired;      /* released memory the refill thread unmaps and closes */
    slot_wake *wake;     /* this claim's wake descriptor (NULL when not attached) */
    unsigned idle_wakes; /* wake-ups from it since this slot's last request */
    bool muted;          /* its descriptor is unwatched until mute_until */
    uint64_t mute_until; /* gb_clock_mono_ns() */
    int refill_rc;       /* the refill thread's result, with refill_err */
    char refill_err[256];
    struct ring_slot *next_refill;
    gb_ring_ctrl *ctrl;
    gb_ring_reader rd;   /* requests from the client */
    gb_ring_writer wr;   /* replies to the client */
    uint32_t generation;
    const gb_ring_proto_ops *proto;
    void *proto_state;   /* the protocol's per-slot state (reply writer ...) */
    gb_client *exec;     /* engine client that runs this ring's commands */
    gb_client *owner;    /* the control connection that claimed the slot; NULL once it is gone */
    /* The control connection went away: what the client published before
     * that is served (as a socket's bytes are read before its EOF), at
     * most one request ring's worth more, then the slot is released. */
    bool owner_gone;
    uint64_t gone_budget; /* request bytes still served after that */
    gb_outbuf pending;   /* framed replies ([u32 len][bytes]) the ring had no room for */
    char *inbuf;         /* private copy of the current request */
    size_t incap;
    uint64_t requests;
    uint64_t direct_replies; /* replies written onto the ring as they were made (direct_begin; INFO) */
    uint64_t client_wakes; /* futex wake-ups sent to its parked client (INFO) */
    bool resume;         /* unblocked: continue with buffered input */
    bool held;           /* replies wait for the log's sync (appendfsync always) */
    char owner_addr[64];
    struct gb_ring_pool *pool;
} ring_slot;

struct gb_ring_pool {
    gb_settings cfg;     /* copy of what placement needs */
    ring_slot *slots;
    int nslots;
    int nattached;
    ring_slot **active;  /* the attached slots, so the spin loop visits only them */
    uint64_t ring_bytes;  /* per direction, power of two */
    size_t slot_size;
    int node;             /* -1 without NUMA */
    bool numa_verified;
    bool pinned;
    bool huge;
    bool require_seals;   /* memfd platforms: a slot whose size is not sealed is never handed out */
    int nmuted;           /* attached slots whose wake descriptor is unwatched */
    int nheld;            /* attached slots with replies held for the log's sync */
    uint64_t bytes_since_clock; /* request bytes served since pool_poll last read the clock */
    unsigned long guard_faults_seen; /* gb_shm_guard_faults() when last checked */
    uv_loop_t *loop;
    /* The refill thread: a released slot's memory is unmapped, and fresh
     * memory created, bound, faulted in and verified, off the engine
     * thread (hundreds of microseconds per slot), so a client that claims
     * and dies in a loop cannot stall the other clients' requests. It is
     * created before the engine thread is pinned, so it does not share the
     * engine's CPU. */
    gb_helper_thread refill_thread; /* "gb-ring-refill", on the helper CPUs */
    uv_mutex_t refill_mu;
    uv_cond_t refill_cv;
    ring_slot *refill_todo, *refill_todo_tail, *refill_done; /* under refill_mu */
    bool refill_quit;                                         /* under refill_mu */
    bool refill_running;
    /* The thread tells the loop a slot is done through a wake descriptor
     * it signals after letting go of refill_mu, not a uv_async_t: libuv
     * before 1.45 (Debian 12's 1.44) has the loop thread spin while a
     * uv_async_send is under way, and a background-class sender that the
     * send's own wake-up preempts then holds the engine spinning until
     * the CPU is otherwise idle (70% of the engine's time with a client
     * claiming and dying in a loop; the victim's median 8x). */
    gb_wakefd refill_wake;
    uv_poll_t refill_poll;
    bool refill_wake_on; /* written under refill_mu */
    gb_engine *eng;
    bool parked;
    uint64_t last_work_cycles;
    uint64_t last_time_cycles;
    double ns_per_cycle;
    uint64_t violations;  /* all slots, since start (INFO) */
    uint64_t wake_mutes;  /* flooded wake descriptors unwatched (INFO) */
    uint64_t sigbus_caught; /* slots dropped after the SIGBUS guard fired (INFO) */
    uint64_t claims;
    uint64_t parks;              /* times the server stopped spinning and slept (INFO) */
    uint64_t closed_for_memory;  /* ring clients closed by their output limit or maxmemory-clients (INFO) */
    uint64_t slice_cycles, spin_cycles, time_cycles;
    char desc[256];
};

static gb_ring_pool *the_pool; /* RING commands reach the pool through this */

/* ---- slot memory ------------------------------------------------------------ */

static uint64_t pow2_at_least(uint64_t n)
{
    uint64_t p = 4096;
    while (p < n)
        p <<= 1;
    return p;
}

/* Creates (or re-creates) a slot's shared memory: bound to the node, faulted
 * in, verified. Returns 0 or a GB_E* code with err set. */
static int slot_memory_create(gb_ring_pool *pool, ring_slot *s, char *err, size_t errlen)
{
    int rc = gb_shm_create(pool->slot_size, pool->huge ? GB_SHM_HUGEPAGES : 0, &s->shm, err, errlen);
    if (rc != 0)
        return rc;
    if (pool->require_seals && !s->shm.sealed) {
        snprintf(err, errlen, "ring slot %d: its memory could not be sealed against resizing (a client could "
                              "truncate it under the server)", s->id);
        gb_shm_close(&s->shm);
        return GB_ENOTSUP;
    }
    if (pool->node >= 0) {
        rc = gb_numa_bind_region(s->shm.addr, s->shm.size, pool->node);
        if (rc != 0) {
            snprintf(err, errlen, "cannot bind ring slot %d to NUMA node %d: %s", s->id, pool->node,
                     gb_plat_last_error());
            gb_shm_close(&s->shm);
            return rc;
        }
    }
    rc = gb_shm_prefault(s->shm.addr, s->shm.size);
    if (rc != 0) {
        snprintf(err, errlen, "cannot fault in ring slot %d (%zu bytes%s%s): %s", s->id, s->shm.size,
                 pool->huge ? ", huge pages" : "", pool->node >= 0 ? " on the bound node" : "",
                 gb_plat_last_error());
        gb_shm_close(&s->shm);
        return rc;
    }
    if (pool->node >= 0) {
        gb_numa_report rep;
        rc = gb_numa_verify(s->shm.addr, s->shm.size, pool->node, &rep);
        if (rc != 0) {
            char what[256];
            gb_numa_report_format(&rep, what, sizeof what);
            snprintf(err, errlen, "ring slot %d is not on NUMA node %d: %s", s->id, pool->node, what);
            gb_shm_close(&s->shm);
            return rc;
        }
    }
    s->ctrl = s->shm.addr;
    return 0;
}

/* Fills the header and the private ring cursors for a new claim. Plain
 * stores: the client has not seen this memory yet (it arrives with the
 * claim's reply, after these stores), and the server never reads the header
 * back - only its private copies in s->rd and s->wr. */
static void slot_prepare(gb_ring_pool *pool, ring_slot *s, const gb_ring_proto_ops *proto, uint64_t key)
{
    gb_ring_ctrl *ctl = s->ctrl;
    size_t page = gb_page_size();
    uint64_t req_off = (GB_RING_CTRL_SIZE + page - 1) / page * page;
    memset(ctl, 0, sizeof *ctl);
    gb_ring_header *h = &ctl->hdr;
    h->magic = GB_RING_MAGIC;
    h->layout_version = GB_RING_LAYOUT_VERSION;
    h->protocol = proto->id;
    h->slot_id = (uint32_t)s->id;
    h->generation = ++s->generation;
    h->slot_size = s->shm.size;
    h->req_offset = req_off;
    h->req_capacity = pool->ring_bytes;
    h->resp_offset = req_off + pool->ring_bytes;
    h->resp_capacity = pool->ring_bytes;
    h->max_payload = (uint32_t)(pool->ring_bytes / 4);
    h->sbe_schema_id = GB_SBE_SCHEMA_ID;
    h->sbe_version = GB_SBE_SCHEMA_VERSION;
    h->server_pid = (uint32_t)getpid();
    h->spin_us = (uint32_t)pool->eng->cfg.ring_spin_us;
    h->stamp_key = key;
    ctl->server_state = pool->parked ? GB_RING_SERVER_PARKED : GB_RING_SERVER_RUNNING;

    uint8_t *base = (uint8_t *)s->shm.addr;
    s->rd = (gb_ring_reader){base + h->req_offset, h->req_capacity, 0, &ctl->req_head, h->max_payload,
                             h->stamp_key};
    s->wr = (gb_ring_writer){base + h->resp_offset, h->resp_capacity, 0, 0, &ctl->resp_head, h->max_payload,
                             h->stamp_key};
}

/* ---- the refill thread --------------------------------------------------------- */

/* Where the refill thread cannot be put in a background class it rests
 * REFILL_REST_FACTOR times as long as each refill took, so refills use at
 * most a quarter of a CPU however fast clients release slots; the cost is
 * that a pool drained by such a client refills at that pace (the claims
 * meanwhile get "ERR ring pool busy"; clients already attached are
 * not affected). The rest is capped so that shutdown never waits long. */
#define REFILL_REST_FACTOR 3
#define REFILL_REST_MAX_NS (100u * 1000u * 1000u)

static void refill_pace(uint64_t took_ns)
{
    uint64_t rest = took_ns * REFILL_REST_FACTOR;
    if (rest > REFILL_REST_MAX_NS)
        rest = REFILL_REST_MAX_NS;
    struct timespec ts = {(time_t)(rest / 1000000000u), (long)(rest % 1000000000u)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static void *refill_main(void *arg)
{
    gb_ring_pool *pool = arg;
    /* Its work (unmapping, zeroing and faulting in two rings' pages: about
     * 1 ms of CPU per slot on the development VM, 15 ms where each page is
     * faulted in by touch) runs only when the engine and the clients leave a
     * CPU idle. Where the OS has no such class (the generic POSIX layer) the
     * thread paces itself instead, or a client that claims and dies in a
     * loop would keep it busy on a whole CPU beside the engine. */
    bool paced = gb_thread_set_background() != 0;
    uv_mutex_lock(&pool->refill_mu);
    for (;;) {
        while (!pool->refill_todo && !pool->refill_quit)
            uv_cond_wait(&pool->refill_cv, &pool->refill_mu);
        ring_slot *s = pool->refill_todo;
        if (!s)
            break; /* quitting with nothing left */
        pool->refill_todo = s->next_refill;
        if (!pool->refill_todo)
            pool->refill_todo_tail = NULL;
        bool quitting = pool->refill_quit;
        uv_mutex_unlock(&pool->refill_mu);
        /* The slot is SLOT_REFILLING: the engine thread touches neither
         * s->shm nor s->retired until it is handed back below. */
        uint64_t began = gb_clock_mono_ns();
        gb_shm_close(&s->retired);
        s->refill_rc = quitting ? GB_ECLOSED : slot_memory_create(pool, s, s->refill_err, sizeof s->refill_err);
        uint64_t took = gb_clock_mono_ns() - began;
        uv_mutex_lock(&pool->refill_mu);
        s->next_refill = pool->refill_done;
        pool->refill_done = s;
        int wake_fd = pool->refill_wake_on ? pool->refill_wake.write_fd : -1;
        bool pace = paced && !pool->refill_quit;
        uv_mutex_unlock(&pool->refill_mu);
        /* Outside the lock: the signal may wake the engine, which then
         * takes the lock and preempts this thread at once. The descriptor
         * stays open until the thread has been joined (refill_stop). */
        if (wake_fd >= 0)
            (void)gb_wakefd_signal(wake_fd);
        if (pace)
            refill_pace(took);
        uv_mutex_lock(&pool->refill_mu);
    }
    uv_mutex_unlock(&pool->refill_mu);    return NULL;
}

/* Engine thread: slots the refill thread has finished are free again. */
static void refill_collect(gb_ring_pool *pool)
{
    uv_mutex_lock(&pool->refill_mu);
    ring_slot *done = pool->refill_done;
    pool->refill_done = NULL;
    uv_mutex_unlock(&pool->refill_mu);
    while (done) {
        ring_slot *s = done;
        done = s->next_refill;
        s->next_refill = NULL;
        if (s->refill_rc == 0) {
            s->state = SLOT_FREE;
        } else {
            s->state = SLOT_DISABLED;
            gb_shm_close(&s->shm);
            if (s->refill_rc != GB_ECLOSED)
                gb_log(GB_LOG_WARNING, "Ring slot %d disabled: %s", s->id, s->refill_err);
        }
    }
}

static void refill_wake_cb(uv_poll_t *h, int status, int events)
{
    (void)status;
    (void)events;
    gb_ring_pool *pool = h->data;
    (void)gb_wakefd_drain(pool->refill_wake.read_fd);
    refill_collect(pool);
}

/* Hands a released slot's memory to the refill thread. */
static void refill_enqueue(gb_ring_pool *pool, ring_slot *s)
{
    s->state = SLOT_REFILLING;
    s->next_refill = NULL;
    uv_mutex_lock(&pool->refill_mu);
    if (pool->refill_todo_tail)
        pool->refill_todo_tail->next_refill = s;
    else
        pool->refill_todo = s;
    pool->refill_todo_tail = s;
    uv_cond_signal(&pool->refill_cv);
    uv_mutex_unlock(&pool->refill_mu);
}

/* Stops the refill thread (it closes what is queued without refilling) and
 * takes back every slot it held. Idempotent. */
static void refill_stop(gb_ring_pool *pool)
{
    if (!pool->refill_running)
        return;
    uv_mutex_lock(&pool->refill_mu);
    pool->refill_quit = true;
    uv_cond_signal(&pool->refill_cv);
    uv_mutex_unlock(&pool->refill_mu);
    gb_helper_thread_join(&pool->refill_thread);
    pool->refill_running = false;
    refill_collect(pool);
    uv_cond_destroy(&pool->refill_cv);
    uv_mutex_destroy(&pool->refill_mu);
}

/* ---- placement --------------------------------------------------------------- */

/* Appends to the start-up notes. */
static void note(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void note(char *buf, size_t cap, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used + 3 >= cap)
        return;
    if (used) {
        strcpy(buf + used, "; ");
        used += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, cap - used, fmt, ap);
    va_end(ap);
}

gb_ring_pool *gb_ring_pool_create(const gb_settings *cfg, char *err, size_t errlen, char *log, size_t loglen)
{
    log[0] = '\0';
    gb_ring_pool *pool = gb_try_calloc(1, sizeof *pool);
    if (!pool) {
        snprintf(err, errlen, "out of memory creating the ring pool");
        return NULL;
    }
    pool->node = -1;
    pool->nslots = cfg->rings;
    pool->huge = cfg->ring_hugepages != 0;
    pool->ring_bytes = pow2_at_least((uint64_t)cfg->ring_size);
    size_t page = pool->huge ? gb_huge_page_size() : gb_page_size();
    if (page == 0)
        page = gb_page_size();
    size_t raw = (GB_RING_CTRL_SIZE + gb_page_size() - 1) / gb_page_size() * gb_page_size() + 2 * pool->ring_bytes;
    pool->slot_size = (raw + page - 1) / page * page;
    pool->require_seals = gb_platform_has(GB_CAP_MEMFD);

    /* Kept off the engine's --cpu with the other helper threads: a refill
     * faults in two rings' pages, work the pinned engine must not share its
     * core with. */
    if (pool->nslots > 0 && uv_mutex_init(&pool->refill_mu) == 0) {
        if (uv_cond_init(&pool->refill_cv) == 0) {
            if (gb_helper_thread_start(&pool->refill_thread, "gb-ring-refill", &cfg->helper_cpus, refill_main, pool))
                pool->refill_running = true;
            else
                uv_cond_destroy(&pool->refill_cv);
        }
        if (!pool->refill_running)
            uv_mutex_destroy(&pool->refill_mu);
    }
    if (pool->nslots > 0 && !pool->refill_running)
        note(log, loglen, "no refill thread: released ring slots get fresh memory on the engine thread");

    if (cfg->cpu >= 0) {
        int rc = gb_cpu_pin_current_thread(cfg->cpu);
        if (rc == 0) {
            pool->pinned = true;
            note(log, loglen, "engine pinned to CPU %d", cfg->cpu);
        } else if (rc == GB_ENOTSUP) {
            note(log, loglen, "CPU pinning is not supported on this platform (--cpu %d): running unpinned", cfg->cpu);
        } else {
            snprintf(err, errlen, "cannot pin the engine to CPU %d: %s (pick one of the CPUs this process may use)",
                     cfg->cpu, gb_plat_last_error());
            refill_stop(pool);
            gb_free(pool);
            return NULL;
        }
        int node = -1;
        char terr[256];
        rc = gb_topo_node_of_cpu(NULL, cfg->cpu, &node, terr, sizeof terr);
        if (rc == 0 && gb_numa_available() == 1) {
            pool->node = node;
            note(log, loglen, "ring pool bound strictly to NUMA node %d", node);
        } else {
            note(log, loglen, "no NUMA placement (%s): ring binding and --numa-arena are logged no-ops",
                 rc == 0 ? "kernel or container without NUMA" : terr);
        }
    }

    if (pool->node >= 0) {
        /* Strict for the pool: the pages must land on the node or not at all. */
        int rc = gb_numa_set_strict(pool->node);
        if (rc != 0) {
            snprintf(err, errlen, "cannot bind memory strictly to NUMA node %d: %s", pool->node, gb_plat_last_error());
            refill_stop(pool);
            gb_free(pool);
            return NULL;
        }
    }

    pool->slots = gb_try_calloc((size_t)(pool->nslots ? pool->nslots : 1), sizeof *pool->slots);
    pool->active = gb_try_calloc((size_t)(pool->nslots ? pool->nslots : 1), sizeof *pool->active);
    if (!pool->slots || !pool->active) {
        snprintf(err, errlen, "out of memory creating the ring pool's %d slots", pool->nslots);
        gb_numa_reset();
        gb_free(pool->slots);
        gb_free(pool->active);
        refill_stop(pool);
        gb_free(pool);
        return NULL;
    }
    for (int i = 0; i < pool->nslots; i++) {
        ring_slot *s = &pool->slots[i];
        s->id = i;
        s->pool = pool;
        s->shm = s->retired = (gb_shm){.fd = -1};
        char why[512];
        if (slot_memory_create(pool, s, why, sizeof why) != 0) {
            if (pool->node >= 0)
                snprintf(err, errlen,
                         "%s. The ring pool must live on node %d, the node of --cpu %d: free memory%s on that node, "
                         "choose a CPU on another node, or lower --rings/--ring-size",
                         why, pool->node, cfg->cpu, pool->huge ? " (huge pages: raise nr_hugepages)" : "");
            else
                snprintf(err, errlen, "%s%s", why,
                         pool->huge ? ". Reserve huge pages (vm.nr_hugepages) or start with --ring-hugepages no" : "");
            for (int j = 0; j < i; j++)
                gb_shm_close(&pool->slots[j].shm);
            gb_numa_reset();
            gb_free(pool->slots);
            gb_free(pool->active);
            refill_stop(pool);
            gb_free(pool);
            return NULL;
        }
        s->state = SLOT_FREE;
    }
    if (pool->node >= 0) {
        pool->numa_verified = true;
        gb_numa_reset();
        if (cfg->numa_arena) {
            if (gb_numa_set_preferred(pool->node) == 0)
                note(log, loglen, "--numa-arena: all other memory prefers node %d (best effort)", pool->node);
            else
                note(log, loglen, "--numa-arena could not be applied (%s): continuing without it",
                     gb_plat_last_error());
        }
    } else if (cfg->numa_arena && cfg->cpu < 0) {
        note(log, loglen, "--numa-arena has no effect without --cpu");
    }
    snprintf(pool->desc, sizeof pool->desc, "%d rings x %llu KiB per direction%s%s", pool->nslots,
             (unsigned long long)(pool->ring_bytes / 1024), pool->huge ? ", huge pages" : "",
             pool->numa_verified ? ", placement verified" : "");
    if (pool->node >= 0) {
        size_t used = strlen(pool->desc);
        snprintf(pool->desc + used, sizeof pool->desc - used, " on node %d", pool->node);
    }
    return pool;
}

const char *gb_ring_pool_describe(const gb_ring_pool *pool) { return pool->desc; }

/* ---- publishing replies -------------------------------------------------------- */

static void wake_client(ring_slot *s)
{
    /* Dekker with the client's park: our record store, full fence, then its
     * state; the client stores PARKED, fences, then re-reads the ring. The
     * state is client-written: relaxed, and a lie costs only this slot (a
     * futex wake per reply). */
    gb_shm_fence_full();
    if (gb_shm_load_relaxed_u32(&s->ctrl->client_state) == GB_RING_CLIENT_PARKED) {
        /* RELEASE: pairs with the client's acquire load of client_wake in
         * gb_park_wait: the reply published before the increment is visible
         * to a client that wakes on it. */
        gb_shm_fetch_add_release_u32(&s->ctrl->client_wake, 1);
        gb_park_wake((_Atomic uint32_t *)&s->ctrl->client_wake, 1);
        s->client_wakes++;
    }
}

static void slot_violation(ring_slot *s, const char *why);
static void slot_drop_oom(ring_slot *s, const char *which);
static bool slot_closing(const ring_slot *s);
static void slot_close_later(ring_slot *s);

/* The client is not reading: its replies wait in `pending`, bounded by
 * client-output-buffer-limit as a socket's are (the engine's policy, one
 * for every transport, on what the ring has not taken). Over it the client
 * is marked for closing and gets nothing more; the slot is released by
 * serve_slot, never here (PUBLISH may be iterating the subscribers).
 * Returns false if the slot had to be dropped. */
static bool queue_pending(ring_slot *s, const char *data, size_t len)
{
    if (s->exec && gb_client_obuf_enforce(s->exec, s->pending.len + len))
        return true;
    uint32_t l32 = (uint32_t)len;
    gb_outbuf_append(&s->pending, (const char *)&l32, 4);
    gb_outbuf_append(&s->pending, data, len);
    if (GB_UNLIKELY(gb_outbuf_oom(&s->pending))) {
        if (s->exec && s->exec->pubsub) {
            /* A message lost: the subscriber goes, by serve_slot as above. */
            gb_log(GB_LOG_WARNING,
                   "Ring slot %d (client %s) closed: out of memory for its buffers (pending messages)", s->id,
                   s->owner_addr);
            slot_close_later(s);
            return true;
        }
        slot_drop_oom(s, "pending replies");
        return false;
    }
    return true;
}

/* Puts one reply message on the response ring, or queues it. Returns false
 * if the slot had to be dropped. */
static bool publish(ring_slot *s, const char *data, size_t len)
{
    if (len > s->wr.max_payload) {
        /* Never happens for RESP (split by the caller); for SBE the protocol
         * layer replaces oversize replies with an error first. */
        slot_violation(s, "reply larger than the ring's maximum record");
        return false;
    }
    if (s->pending.len == 0) {
        uint8_t *dst;
        int rc = gb_ring_write_begin(&s->wr, (uint32_t)len, &dst);
        if (rc == GB_RING_READY) {
            memcpy(dst, data, len);
            gb_ring_write_commit(&s->wr, (uint32_t)len);
            return true;
        }
        if (rc == GB_RING_BAD) {
            slot_violation(s, "response-ring head moved backwards or past what was written");
            return false;
        }
    }
    return queue_pending(s, data, len);
}

/* Moves queued replies onto the ring while there is room. Returns
 * DRAIN_DROPPED if the slot had to be dropped, DRAIN_MOVED if at least one
 * reply went, DRAIN_STUCK if the ring still has no room for the first. */
enum { DRAIN_DROPPED = -1, DRAIN_STUCK = 0, DRAIN_MOVED = 1 };
static int drain_pending(ring_slot *s)
{
    size_t off = 0;
    bool wrote = false;
    while (off < s->pending.len) {
        uint32_t len;
        memcpy(&len, s->pending.data + off, 4);
        uint8_t *dst;
        int rc = gb_ring_write_begin(&s->wr, len, &dst);
        if (rc == GB_RING_BAD) {
            slot_violation(s, "response-ring head moved backwards or past what was written");
            return DRAIN_DROPPED;
        }
        if (rc != GB_RING_READY)
            break;
        memcpy(dst, s->pending.data + off + 4, len);
        gb_ring_write_commit(&s->wr, len);
        off += 4 + len;
        wrote = true;
    }
    gb_outbuf_consume(&s->pending, off);
    if (!wrote)
        return DRAIN_STUCK;
    s->idle_wakes = 0; /* the client made room and said so: not a flood */
    wake_client(s);
    return DRAIN_MOVED;
}

/* The protocol's direct path (ring_proto.h, set_direct): a reply written
 * onto the ring as it is made, without the copy through take_output, and
 * before the command's bookkeeping after it (its timing, statistics and
 * propagation), when nothing may stand between it and the client: no
 * replies queued for room before it. Never under appendfsync always: a
 * reply acknowledging a write must wait for the log's sync (flush_replies
 * holds it), and the write reaches the log only after its reply is made.
 * (That setting is also the only one under which replies are ever held,
 * gb_engine_replies_held: nothing else to ask here.) */
static uint8_t *direct_begin(void *ctx, size_t n)
{
    ring_slot *s = ctx;
    if (s->pending.len || n > s->wr.max_payload || s->pool->eng->cfg.appendfsync == GB_FSYNC_ALWAYS ||
        slot_closing(s))
        return NULL;
    uint8_t *dst;
    /* NOT_READY (no room) and BAD (a head the client moved wrongly) alike:
     * the reply takes the ordinary path, which queues it or drops the slot. */
    return gb_ring_write_begin(&s->wr, (uint32_t)n, &dst) == GB_RING_READY ? dst : NULL;
}

static void direct_commit(void *ctx, size_t n)
{
    ring_slot *s = ctx;
    gb_ring_write_commit(&s->wr, (uint32_t)n);
    s->direct_replies++;
    wake_client(s);
}

/* Publishes whatever the protocol layer has ready for this slot. */
static bool flush_replies(ring_slot *s)
{
    if (GB_UNLIKELY(slot_closing(s)))
        return false;
    if (GB_UNLIKELY(s->proto->out_of_memory(s->proto_state))) {
        slot_drop_oom(s, "reply buffer");
        return false;
    }
    /* Nothing to publish: the usual case for SBE, whose replies went
     * straight onto the ring (direct_commit). */
    gb_outbuf *out = s->proto->take_output(s->proto_state);
    if (!out || out->len == 0)
        return true;
    /* appendfsync always: a reply on the ring is seen by the client at once,
     * so replies that acknowledge a write stay in the protocol's buffer until
     * the log is synced (release_held, once per pass over the rings: one
     * sync for every client's writes, as the socket server does per loop
     * iteration). */
    if (GB_UNLIKELY(gb_engine_replies_held(s->pool->eng))) {
        if (!s->held) {
            s->held = true;
            s->pool->nheld++;
        }
        return true;
    }
    bool ok = true;
    size_t off = 0;
    if (s->proto->stream) {
        /* RESP is a byte stream: cut it into records of at most max_payload. */
        while (ok && off < out->len) {
            size_t n = GB_MIN(out->len - off, (size_t)s->wr.max_payload);
            ok = publish(s, out->data + off, n);
            off += n;
        }
    } else {
        /* One message per frame, one frame per record. */
        while (ok && off + 4 <= out->len) {
            uint32_t len;
            memcpy(&len, out->data + off, 4);
            const char *msg = out->data + off + 4;
            if (len > s->wr.max_payload) {
                char err[160], enc[256];
                snprintf(err, sizeof err,
                         "ERR reply of %u bytes exceeds the ring's largest record (%u bytes): use the socket for it",
                         len, s->wr.max_payload);
                size_t n = s->proto->encode_error(enc, sizeof enc, err);
                ok = publish(s, enc, n);
            } else {
                ok = publish(s, msg, len);
            }
            off += 4 + (size_t)len;
        }
    }
    if (ok) {
        out->len = 0;
        wake_client(s);
    }
    return ok;
}

/* ---- the slot's engine client ---------------------------------------------------- */

static void exec_flush(gb_client *c)
{
    ring_slot *s = c->conn;
    if (s->state != SLOT_ATTACHED || (c->flags & GB_CLIENT_CLOSE_ASAP))
        return;
    s->proto->finish(s->proto_state);
    if (!(c->flags & GB_CLIENT_BLOCKED) && s->proto->has_input(s->proto_state))
        s->resume = true;
    flush_replies(s);
}

static void release_slot(ring_slot *s, bool close_owner, bool refill);

static void exec_close(gb_client *c)
{
    /* CLIENT KILL of the ring client, or ACL DELUSER of its user: the slot
     * and its control link are dropped by the poller's next look at the
     * slot (serve_slot), which follows this command. Not here: the caller
     * may be walking the engine's client list, and releasing frees c (the
     * hook's contract, engine/core/request/client.h). */
    if (c->flags & GB_CLIENT_CLOSED_FOR_MEMORY) { /* counted once, whatever closes it again */
        ((ring_slot *)c->conn)->pool->closed_for_memory++;
        c->flags &= ~GB_CLIENT_CLOSED_FOR_MEMORY;
    }
    c->flags |= GB_CLIENT_CLOSE_ASAP;
}

static void exec_describe(const gb_client *c, gb_client_desc *d)
{
    const ring_slot *s = c->conn;
    snprintf(d->addr, sizeof d->addr, "ring:%d@%.48s", s->id, s->owner_addr);
    snprintf(d->laddr, sizeof d->laddr, "ring:%d", s->id);
    d->fd = -1;
    d->obuf = s->pending.len;
    d->obl = s->pending.len; /* replies waiting for room in the ring: its reply buffer */
    d->rbs = s->pending.cap;
}

static const gb_client_hooks exec_hooks = {exec_flush, exec_close, exec_describe, NULL};

/* ---- claim / release --------------------------------------------------------------- */

/* Whether the slot is marked for release (slot_close_later, exec_close):
 * nothing more is read from or written to its rings. */
static bool slot_closing(const ring_slot *s) { return (s->exec->flags & GB_CLIENT_CLOSE_ASAP) != 0; }

/* Marks the slot for release by serve_slot, its next look at the slot
 * (the client sees its control link close). Never released on the spot:
 * the engine may be iterating its client (PUBLISH over the subscribers,
 * MONITOR, tracking, serving waiters), running its script, or in the
 * middle of its command, and releasing frees it, as Redis frees such a
 * client asynchronously. */
static void slot_close_later(ring_slot *s) { s->exec->flags |= GB_CLIENT_CLOSE_ASAP; }

static void slot_violation(ring_slot *s, const char *why)
{
    if (s->state != SLOT_ATTACHED || slot_closing(s))
        return;
    gb_shm_fetch_add_relaxed_u64(&s->ctrl->violations, 1); /* diagnostics for the client; orders nothing */
    s->pool->violations++;
    gb_log(GB_LOG_WARNING, "Ring slot %d (client %s): %s; slot reset and client disconnected", s->id, s->owner_addr,
           why);
    slot_close_later(s);
}

/* A buffer of the slot's could not grow: the client's reply stream has a
 * hole, so the slot is released and its control connection closed, as for
 * a violation (the client sees the same: its slot reset). Not counted as a
 * violation: the client did nothing wrong. */
static void slot_drop_oom(ring_slot *s, const char *which)
{
    if (s->state != SLOT_ATTACHED || slot_closing(s))
        return;
    gb_log(GB_LOG_WARNING, "Ring slot %d (client %s) closed: out of memory for its buffers (%s); slot reset and "
                           "client disconnected", s->id, s->owner_addr, which);
    slot_close_later(s);
}

static void wake_closed(uv_handle_t *h) { gb_free(h->data); }

/* Stops watching the claim's wake descriptor and closes it: the client may
 * keep its copy, which from now on reaches nobody. */
static void slot_wake_close(ring_slot *s)
{
    slot_wake *w = s->wake;
    if (!w)
        return;
    s->wake = NULL;
    if (s->muted)
        s->pool->nmuted--;
    s->muted = false;
    uv_poll_stop(&w->poll); /* after this the descriptor may be closed (libuv's rule) */
    gb_wakefd_close(&w->fd);
    uv_close((uv_handle_t *)&w->poll, wake_closed);
}

static void release_slot(ring_slot *s, bool close_owner, bool refill)
{
    if (s->state != SLOT_ATTACHED)
        return;
    gb_ring_pool *pool = s->pool;
    s->state = SLOT_FREE;
    s->owner_gone = false;
    if (s->held) {
        s->held = false;
        pool->nheld--;
    }
    for (int i = 0; i < pool->nattached; i++)
        if (pool->active[i] == s) {
            pool->active[i] = pool->active[--pool->nattached];
            break;
        }
    gb_client *exec = s->exec, *owner = s->owner;
    s->exec = NULL;
    s->owner = NULL;
    if (exec)
        gb_client_free(exec);
    s->proto->free_state(s->proto_state);
    s->proto_state = NULL;
    gb_outbuf_free(&s->pending);
    slot_wake_close(s);
    if (close_owner && owner && owner->hooks && owner->hooks->close) {
        owner->flags |= GB_CLIENT_CLOSE_ASAP;
        owner->hooks->close(owner);
    }
    /* The old client may still have the memory mapped and keep writing to
     * it: the next claimer gets fresh pages, never these. Unguarded here, on
     * the engine thread (the guard table has one writer). */
    gb_shm_unguard(&s->shm);
    s->ctrl = NULL;
    if (refill && pool->refill_running && pool->refill_wake_on) {
        s->retired = s->shm;
        s->shm = (gb_shm){.fd = -1};
        refill_enqueue(pool, s);
        return;
    }
    gb_shm_close(&s->shm);
    if (!refill) {
        s->state = SLOT_DISABLED;
        return;
    }
    char why[512];
    if (slot_memory_create(pool, s, why, sizeof why) != 0) {
        s->state = SLOT_DISABLED;
        gb_log(GB_LOG_WARNING, "Ring slot %d disabled: %s", s->id, why);
    }
}

static void slot_mute(ring_slot *s)
{
    uv_poll_stop(&s->wake->poll);
    s->muted = true;
    s->mute_until = gb_clock_mono_ns() + MUTE_NS;
    s->pool->nmuted++;
    s->pool->wake_mutes++;
    gb_log(GB_LOG_VERBOSE, "Ring slot %d (client %s): its wake descriptor signals without requests; unwatched for "
                           "%u ms at a time", s->id, s->owner_addr, MUTE_NS / 1000000u);
}

static void wake_cb(uv_poll_t *h, int status, int events);

static void slot_unmute(ring_slot *s)
{
    s->muted = false;
    s->idle_wakes = 0;
    s->pool->nmuted--;
    if (s->wake)
        uv_poll_start(&s->wake->poll, UV_READABLE, wake_cb);
}

static void unmute_expired(gb_ring_pool *pool)
{
    uint64_t now = gb_clock_mono_ns();
    for (int i = 0; i < pool->nattached; i++)
        if (pool->active[i]->muted && now >= pool->active[i]->mute_until)
            slot_unmute(pool->active[i]);
}

/* This claim's descriptor was signalled: consume it. The loop then runs its
 * check phase, whose poll serves the request that came with the signal. */
static void wake_cb(uv_poll_t *h, int status, int events)
{
    (void)events;
    slot_wake *w = h->data;
    ring_slot *s = w->slot;
    if (status < 0 || gb_wakefd_drain(w->fd.read_fd) < 0) {
        /* The descriptor failed (it is ours, so it should not): stop
         * watching it rather than spin on an error. The slot is still
         * served whenever the loop is awake. */
        uv_poll_stop(h);
        return;
    }
    if (s && s->wake == w && ++s->idle_wakes > IDLE_WAKES_MAX && !s->muted)
        slot_mute(s);
}

/* A control connection (or any client) went away: the slot it owns is
 * released by serve_slot once the requests published before are served
 * (owner_gone). Not here: its ring client may be the caller of the script
 * running now (the busy pump reads the sockets), or in the middle of a
 * command. */
static void on_client_free(void *ctx, gb_client *c)
{
    gb_ring_pool *pool = ctx;
    if (pool->nattached == 0 || (c->flags & GB_CLIENT_RING))
        return;
    for (int i = 0; i < pool->nslots; i++) {
        ring_slot *s = &pool->slots[i];
        if (s->state == SLOT_ATTACHED && s->owner == c) {
            s->owner = NULL;
            s->owner_gone = true;
            s->gone_budget = s->rd.cap;
        }
    }
}

static ring_slot *slot_of_owner(gb_ring_pool *pool, const gb_client *c)
{
    for (int i = 0; i < pool->nslots; i++)
        if (pool->slots[i].state == SLOT_ATTACHED && pool->slots[i].owner == c)
            return &pool->slots[i];
    return NULL;
}

static void ring_claim(gb_client *c, int argc, gb_slice *argv)
{
    gb_ring_pool *pool = the_pool;
    const gb_ring_proto_ops *proto = NULL;
    if (gb_slice_ieq(argv[2], "sbe"))
        proto = &gb_ring_proto_sbe;
    else if (gb_slice_ieq(argv[2], "resp"))
        proto = &gb_ring_proto_resp;
    else {
        gb_reply_error(c, "ERR RING CLAIM protocol must be SBE or RESP");
        return;
    }
    if (!c->hooks || !c->hooks->send_with_fds) {
        gb_reply_error(c, "ERR RING CLAIM works only on the Unix socket (the slot travels as a file descriptor)");
        return;
    }
    int64_t layout;
    if (!gb_arg_ll(c, argv[3], &layout))
        return;
    if (layout != GB_RING_LAYOUT_VERSION) {
        gb_reply_errorf(c, "ERR ring layout version mismatch: this server speaks %u, the client %lld (upgrade the "
                           "client library)", GB_RING_LAYOUT_VERSION, (long long)layout);
        return;
    }
    if (argc == 5 && proto == &gb_ring_proto_sbe) {
        int64_t v;
        if (!gb_arg_ll(c, argv[4], &v))
            return;
        if (v > GB_SBE_SCHEMA_VERSION) {
            gb_reply_errorf(c, "ERR SBE schema version %lld is newer than this server's %u", (long long)v,
                            GB_SBE_SCHEMA_VERSION);
            return;
        }
    }
    if (c->flags & (GB_CLIENT_MULTI | GB_CLIENT_IN_EXEC)) {
        gb_reply_error(c, "ERR RING CLAIM is not allowed inside a transaction");
        return;
    }
    if (slot_of_owner(pool, c)) {
        gb_reply_error(c, "ERR this connection already holds a ring slot (one per connection)");
        return;
    }
    if (pool->refill_running)
        refill_collect(pool); /* slots refilled since the loop last looked */
    ring_slot *s = NULL;
    int refilling = 0;
    for (int i = 0; i < pool->nslots && !s; i++) {
        if (pool->slots[i].state == SLOT_FREE)
            s = &pool->slots[i];
        refilling += pool->slots[i].state == SLOT_REFILLING;
    }
    if (!s && refilling) {
        gb_reply_errorf(c, "ERR ring pool busy: %d of %d slots are being given fresh memory (retry in a few "
                           "milliseconds)", refilling, pool->nslots);
        return;
    }
    if (!s) {
        gb_reply_errorf(c, "ERR ring pool exhausted: all %d slots are claimed (start the server with more --rings, "
                           "or use the socket)", pool->nslots);
        return;
    }
    if (pool->require_seals && !s->shm.sealed) { /* never: creation refuses unsealed memory */
        gb_reply_error(c, "ERR ring slot memory is not sealed against resizing; refusing to hand it out");
        return;
    }
    /* The stamp key: 64 bits no other client can predict (not the engine's
     * generator, whose outputs SRANDMEMBER and RANDOMKEY reveal). */
    uint64_t key;
    if (gb_entropy_fill(&key, sizeof key) != 0) {
        gb_reply_errorf(c, "ERR cannot read the operating system's random source for the ring key: %s",
                        gb_plat_last_error());
        return;
    }
    /* The protocol's per-client state (reply writer, input buffer). */
    void *proto_state = proto->new_state(c->eng);
    if (!proto_state) {
        gb_log(GB_LOG_WARNING, "RING CLAIM refused: out of memory for the slot's buffers");
        gb_reply_error(c, "ERR out of memory for the ring slot's buffers");
        return;
    }
    /* This claim's own wake descriptor: no other client holds it, so none
     * can drain the wake-ups this one sends. */
    slot_wake *w = gb_try_calloc(1, sizeof *w);
    if (!w) {
        proto->free_state(proto_state);
        gb_log(GB_LOG_WARNING, "RING CLAIM refused: out of memory for the slot's buffers");
        gb_reply_error(c, "ERR out of memory for the ring slot's buffers");
        return;
    }
    if (gb_wakefd_open(&w->fd) != 0) {
        gb_reply_errorf(c, "ERR cannot create the ring's wake descriptor: %s", gb_plat_last_error());
        proto->free_state(proto_state);
        gb_free(w);
        return;
    }
    w->slot = s;
    int urc = uv_poll_init(pool->loop, &w->poll, w->fd.read_fd);
    if (urc != 0) {
        gb_wakefd_close(&w->fd);
        proto->free_state(proto_state);
        gb_free(w);
        gb_reply_errorf(c, "ERR cannot watch the ring's wake descriptor: %s", uv_strerror(urc));
        return;
    }
    w->poll.data = w; /* after init: wake_cb and wake_closed find the claim through it */
    /* A client that truncates or frees its memory under us makes our next
     * access fault: the guard turns that SIGBUS into a flag on this slot. */
    if (gb_shm_guard(&s->shm) != 0) {
        gb_wakefd_close(&w->fd);
        proto->free_state(proto_state);
        uv_close((uv_handle_t *)&w->poll, wake_closed);
        gb_reply_errorf(c, "ERR cannot guard the ring slot's memory: %s", gb_plat_last_error());
        return;
    }
    uv_poll_start(&w->poll, UV_READABLE, wake_cb);
    s->wake = w;
    s->idle_wakes = 0;
    s->muted = false;
    slot_prepare(pool, s, proto, key);
    s->proto = proto;
    s->proto_state = proto_state;
    if (proto->set_direct)
        proto->set_direct(proto_state, direct_begin, direct_commit, s);
    gb_outbuf_init(&s->pending);
    gb_client_desc d = {.fd = -1};
    if (c->hooks->describe)
        c->hooks->describe(c, &d);
    snprintf(s->owner_addr, sizeof s->owner_addr, "%.40s#%llu", d.addr, (unsigned long long)c->id);
    s->owner = c;
    s->exec = gb_client_new(c->eng, proto->reply_ops, proto->reply_ctx(s->proto_state), &exec_hooks, s,
                            GB_CLIENT_RING);
    /* The claim runs as the user that claimed it (the gate has already
     * refused RING CLAIM to a connection that has not authenticated): the
     * ring is that connection's faster path, never a way around its ACL. */
    gb_acl_act_as(s->exec, c);
    s->exec->db = c->db;
    s->state = SLOT_ATTACHED;
    pool->active[pool->nattached++] = s;
    pool->claims++;

    char reply[128];
    int n = snprintf(reply, sizeof reply, "*4\r\n:%d\r\n:%zu\r\n:%u\r\n:%u\r\n", s->id, s->shm.size, s->generation,
                     s->ctrl->hdr.max_payload);
    int fds[2] = {s->shm.fd, w->fd.write_fd};
    int rc = c->hooks->send_with_fds(c, reply, (size_t)n, fds, 2);
    if (rc != 0) {
        gb_log(GB_LOG_VERBOSE, "Ring slot %d: could not hand the slot to %s (%s)", s->id, s->owner_addr,
               gb_strerror(rc));
        release_slot(s, false, true);
        gb_reply_error(c, "ERR could not pass the ring descriptors (send RING CLAIM alone, not pipelined)");
        return;
    }
    /* The loop's check phase runs after this command and polls the new ring
     * (it is in `active`), so no wake-up is needed even if the pool was
     * parked. */
    gb_log(GB_LOG_VERBOSE, "Ring slot %d claimed by %s (%s)", s->id, s->owner_addr, proto->name);
}

static void cmd_ring(gb_client *c, int argc, gb_slice *argv)
{
    if (!the_pool || the_pool->nslots == 0) {
        gb_reply_error(c, "ERR rings are disabled on this server (started with --rings 0)");
        return;
    }
    if (gb_slice_ieq(argv[1], "claim")) {
        if (argc < 4 || argc > 5) {
            gb_reply_wrong_arity(c, "ring|claim");
            return;
        }
        ring_claim(c, argc, argv);
    } else if (gb_slice_ieq(argv[1], "release") && argc == 2) {
        ring_slot *s = slot_of_owner(the_pool, c);
        if (!s) {
            gb_reply_error(c, "ERR this connection holds no ring slot");
            return;
        }
        release_slot(s, false, true);
        gb_reply_ok(c);
    } else if (gb_slice_ieq(argv[1], "help") && argc == 2) {
        static const char *lines[] = {
            "RING <subcommand> [<arg> ...]. Subcommands are:",
            "CLAIM <SBE|RESP> <layout-version> [<sbe-schema-version>]",
            "    Take a free ring slot; its memory and the wake descriptor arrive with the reply (SCM_RIGHTS).",
            "    The slot is yours until this connection closes.",
            "RELEASE",
            "    Give the slot back now.",
            "HELP",
            "    Print this help.",
        };
        gb_reply_help(c, lines, GB_ARRAY_LEN(lines));
    } else {
        gb_reply_unknown_subcommand(c, argv[1], "ring");
    }
}

/* RING's arity, flags and ACL categories: cmake/command_meta_extra.json. */
static const gb_command_def ring_commands[] = {
    {"ring", cmd_ring},
};

/* ---- serving a slot ------------------------------------------------------------------- */

/* A slot whose client is leaving: killed or dropped (slot_closing:
 * released now), after QUIT (once its replies are on the ring: Redis
 * writes everything before closing), or with its control connection gone
 * (once the requests published before are served). True when released. */
static bool serve_leaving(ring_slot *s, bool *worked)
{
    gb_client *exec = s->exec;
    if (slot_closing(s)) {
        release_slot(s, !s->owner_gone, true);
        *worked = true;
        return true;
    }
    if (exec->flags & GB_CLIENT_CLOSE_AFTER_REPLY) {
        int drained = s->pending.len ? drain_pending(s) : DRAIN_STUCK;
        if (drained == DRAIN_MOVED)
            *worked = true;
        if (drained == DRAIN_DROPPED || s->owner_gone || (s->pending.len == 0 && !s->held)) {
            release_slot(s, !s->owner_gone, true);
            *worked = true;
        }
        return true; /* nothing more is read from its ring */
    }
    if (s->owner_gone && ((exec->flags & GB_CLIENT_BLOCKED) || s->gone_budget == 0)) {
        release_slot(s, false, true);
        *worked = true;
        return true;
    }
    return false;
}

/* Handles up to BATCH_PER_SLOT requests of one slot. Returns true if it did
 * anything. */
static bool serve_slot(ring_slot *s)
{
    /* The busy pump (a script past busy-reply-threshold) polls the rings
     * from inside the script's command: its own ring is in the middle of
     * that request and waits for it to end. */
    if (GB_UNLIKELY(s->exec == s->pool->eng->script.caller))
        return false;
    bool worked = false;
    if (GB_UNLIKELY((s->exec->flags & (GB_CLIENT_CLOSE_ASAP | GB_CLIENT_CLOSE_AFTER_REPLY)) || s->owner_gone) &&
        serve_leaving(s, &worked))
        return worked;
    if (s->pending.len) {
        /* Requests are served all the same, their replies queued behind
         * these, as a socket client's are: a client may send a pipeline of
         * any size before it reads (waiting for room to send while we waited
         * for it to read would deadlock both). client-output-buffer-limit
         * and maxmemory-clients bound what waits (queue_pending). */
        int drained = drain_pending(s);
        if (drained == DRAIN_DROPPED)
            return true;
        worked = drained == DRAIN_MOVED;
    }
    if (s->resume && !(s->exec->flags & GB_CLIENT_BLOCKED)) {
        s->resume = false;
        s->proto->execute(s->proto_state, s->exec, NULL, 0);
        if (!flush_replies(s))
            return true;
        worked = true;
    }
    size_t batch_bytes = 0;
    for (int n = 0; n < BATCH_PER_SLOT && batch_bytes < BATCH_BYTES_PER_SLOT; n++) {
        if (s->exec->flags & GB_CLIENT_BLOCKED)
            break;
        const uint8_t *payload;
        uint32_t len;
        int rc = gb_ring_read_peek(&s->rd, &payload, &len);
        if (rc == GB_RING_EMPTY) {
            if (s->owner_gone)
                s->gone_budget = 0; /* all it published is served */
            break;
        }
        if (rc == GB_RING_BAD) {
            slot_violation(s, "malformed request record (bad length or padding)");
            return true;
        }
        /* Private copy first: the client can rewrite ring bytes at any time. */
        if (len > s->incap) {
            size_t cap = len < 256 ? 256 : len;
            char *inbuf = gb_try_realloc(s->inbuf, cap);
            if (!inbuf) {
                slot_drop_oom(s, "request copy");
                return true;
            }
            s->inbuf = inbuf;
            s->incap = cap;
        }
        memcpy(s->inbuf, payload, len);
        gb_ring_read_consume(&s->rd, len);
        batch_bytes += len;
        s->pool->bytes_since_clock += len;
        if (GB_UNLIKELY(s->owner_gone))
            s->gone_budget -= GB_MIN(s->gone_budget, (uint64_t)len);
        s->requests++;
        worked = true;
        s->idle_wakes = 0; /* its wake-ups are followed by requests: not a flood */
        if (s->muted)
            slot_unmute(s);
        rc = s->proto->execute(s->proto_state, s->exec, s->inbuf, len);
        s->proto->finish(s->proto_state);
        if (rc == GB_ENOMEM) {
            slot_drop_oom(s, "request buffer");
            return true;
        }
        if (rc != 0) {
            slot_violation(s, rc == GB_EPROTO ? "request is not a valid message for the claimed protocol"
                                              : "request rejected");
            return true;
        }
        if (!flush_replies(s))
            return true;
        if (s->exec->flags & (GB_CLIENT_CLOSE_AFTER_REPLY | GB_CLIENT_CLOSE_ASAP))
            return true; /* released by serve_leaving, at once or once its replies are on the ring */
        if (GB_UNLIKELY(s->owner_gone && s->gone_budget == 0))
            break;
    }
    /* The ring is the client's traffic: its control connection is not idle
     * for `timeout` while the ring serves requests. */
    if (worked && s->owner)
        s->owner->last_ms = s->exec->last_ms;
    return worked;
}

/* ---- poller ------------------------------------------------------------------------------ */

/* RUNNING, or parked: PARKED_FOR_ROOM in the slots whose replies wait for
 * room in their response ring (their client wakes the server once it has
 * read), PARKED in the others. */
static void set_server_state(gb_ring_pool *pool, bool parked)
{
    /* Relaxed: ordered against the re-check of the rings by the full fence
     * in pool_prepare_sleep (the client pairs it with its own fence after
     * publishing a request or consuming replies). */
    for (int i = 0; i < pool->nattached; i++) {
        ring_slot *s = pool->active[i];
        uint32_t st = !parked ? GB_RING_SERVER_RUNNING
                      : s->pending.len ? GB_RING_SERVER_PARKED_FOR_ROOM
                                       : GB_RING_SERVER_PARKED;
        gb_shm_store_relaxed_u32(&s->ctrl->server_state, st);
    }
}

/* A SIGBUS in slot memory (the client truncated or freed it under us) was
 * caught by the guard, which replaced that slot's mapping with zero pages:
 * drop each slot it happened to. */
static void drop_faulted(gb_ring_pool *pool)
{
    pool->guard_faults_seen = gb_shm_guard_faults();
    for (int i = pool->nattached - 1; i >= 0; i--) {
        if (i >= pool->nattached)
            continue;
        ring_slot *s = pool->active[i];
        if (!gb_shm_faulted(&s->shm))
            continue;
        pool->sigbus_caught++;
        slot_violation(s, "the client truncated or freed the slot's memory under the server (SIGBUS caught)");
    }
}

/* The durability point for ring replies: what the rings' commands wrote
 * reaches the log (synced under appendfsync always), then the replies held
 * for it are published. */
static void release_held(gb_ring_pool *pool)
{
    gb_engine_before_replies(pool->eng);
    pool->nheld = 0;
    for (int i = pool->nattached - 1; i >= 0; i--) {
        if (i >= pool->nattached)
            continue; /* a failed flush released slots */
        ring_slot *s = pool->active[i];
        if (s->held) {
            s->held = false;
            flush_replies(s); /* holds again if the sync could not complete */
        }
    }
}

static bool poll_once(gb_ring_pool *pool)
{
    bool worked = false;
    /* serve_slot may release slots (reordering `active`): a slot moved into
     * an index already passed waits for the next pass, which is soon. */
    for (int i = 0; i < pool->nattached; i++)
        if (serve_slot(pool->active[i]))
            worked = true;
    if (worked && pool->eng->nready)
        gb_blocking_serve_ready(pool->eng);
    if (GB_UNLIKELY(pool->nheld))
        release_held(pool);
    return worked;
}

/* The engine's clock (expiry decisions) is at most time_cycles stale when a
 * request is served: refreshed by the poller, cheaply, not per command. */
static inline void refresh_engine_time(gb_ring_pool *pool, uint64_t now)
{
    if (now - pool->last_time_cycles > pool->time_cycles) {
        gb_engine_update_time(pool->eng);
        pool->last_time_cycles = now;
    }
}

static bool pool_poll(void *ctx)
{
    gb_ring_pool *pool = ctx;
    if (pool->nattached == 0)
        return false;
    if (pool->parked) {
        pool->parked = false;
        set_server_state(pool, false);
    }
    uint64_t start = gb_cycles_now(), now = start;
    refresh_engine_time(pool, start);
    bool any = false, worked = false;
    unsigned idle_passes = HOT_PASSES;
    for (unsigned iter = 1;; iter++) {
        if (poll_once(pool)) {
            any = worked = true;
            idle_passes = 0;
        } else if (++idle_passes > HOT_PASSES) {
            gb_cpu_relax();
        }
        /* The clock (about 10 ns) is read every 16 passes, never between a
         * request and the next poll, unless the passes since served so
         * many request bytes (pipelines) that they may have taken long. */
        if ((iter & 15) && pool->bytes_since_clock < BATCH_BYTES_PER_SLOT)
            continue;
        pool->bytes_since_clock = 0;
        now = gb_cycles_now();
        if (gb_shm_guard_faults() != pool->guard_faults_seen)
            drop_faulted(pool);
        if (worked) {
            pool->last_work_cycles = now;
            worked = false;
        } else if (now - pool->last_work_cycles > pool->spin_cycles) {
            break;
        }
        refresh_engine_time(pool, now);
        if (now - start > pool->slice_cycles || pool->nattached == 0)
            break;
    }
    return any;
}

/* Called when the loop is about to block: only after the spin budget, and
 * only once every ring has been re-checked after announcing PARKED. */
static bool pool_prepare_sleep(void *ctx)
{
    gb_ring_pool *pool = ctx;
    if (pool->nattached == 0)
        return true;
    if (pool->nmuted)
        unmute_expired(pool);
    if (pool->nheld) /* replies a socket's command produced for a ring (a served BLPOP) */
        release_held(pool);
    if (gb_shm_guard_faults() != pool->guard_faults_seen)
        drop_faulted(pool);
    uint64_t now = gb_cycles_now();
    pool->spin_cycles = (uint64_t)((double)pool->eng->cfg.ring_spin_us * 1000.0 / pool->ns_per_cycle);
    if (now - pool->last_work_cycles < pool->spin_cycles)
        return false;
    set_server_state(pool, true);
    /* Dekker with a client's publish (or its reads): the states, full fence,
     * then the rings; the client stores its record (or its response-ring
     * head), fences, then reads the state. */
    gb_shm_fence_full();
    for (int i = 0; i < pool->nattached; i++) {
        ring_slot *s = pool->active[i];
        /* a slot to release at the next pass (serve_leaving) */
        if ((s->exec->flags & GB_CLIENT_CLOSE_ASAP) || s->owner_gone ||
            ((s->exec->flags & GB_CLIENT_CLOSE_AFTER_REPLY) && !s->pending.len && !s->held))
            goto stay_awake;
        /* Replies waiting for room: sleep unless the client made some
         * meanwhile. A client that stops reading costs nothing. */
        if (s->pending.len && drain_pending(s) != DRAIN_STUCK)
            goto stay_awake;
        const uint8_t *p;
        uint32_t l;
        if (!(s->exec->flags & GB_CLIENT_BLOCKED) && gb_ring_read_peek(&s->rd, &p, &l) != GB_RING_EMPTY)
            goto stay_awake;
    }
    pool->parked = true;
    pool->parks++;
    return true;
stay_awake:
    set_server_state(pool, false);
    return false;
}

/* One pass from inside a busy script (the loop's busy pump). */
static void pool_busy_pump(void *ctx) { (void)pool_poll(ctx); }

static void pool_shutdown(void *ctx)
{
    gb_ring_pool *pool = ctx;
    for (int i = 0; i < pool->nslots; i++)
        release_slot(&pool->slots[i], false, false);
    refill_stop(pool); /* joined: nothing signals the descriptor any more */
    if (pool->refill_wake_on) {
        pool->refill_wake_on = false;
        uv_poll_stop(&pool->refill_poll); /* before the descriptor closes (libuv's rule) */
        uv_close((uv_handle_t *)&pool->refill_poll, NULL);
        gb_wakefd_close(&pool->refill_wake);
    }
}

/* ---- INFO ------------------------------------------------------------------------------------ */

static void info_section(void *ctx, const char *section, void (*line)(void *lctx, const char *text), void *lctx)
{
    gb_ring_pool *pool = ctx;
    if (strcmp(section, "rings") != 0)
        return;
    char buf[512];
    line(lctx, "# Rings");
    snprintf(buf, sizeof buf, "ring_slots:%d", pool->nslots);
    line(lctx, buf);
    snprintf(buf, sizeof buf, "ring_slots_claimed:%d", pool->nattached);
    line(lctx, buf);
    snprintf(buf, sizeof buf, "ring_claims_total:%llu", (unsigned long long)pool->claims);
    line(lctx, buf);
    snprintf(buf, sizeof buf, "ring_violations_total:%llu", (unsigned long long)pool->violations);
    line(lctx, buf);
    snprintf(buf, sizeof buf, "ring_wake_mutes_total:%llu", (unsigned long long)pool->wake_mutes);
    line(lctx, buf);
    snprintf(buf, sizeof buf, "ring_sigbus_caught_total:%llu", (unsigned long long)pool->sigbus_caught);
    line(lctx, buf);
    snprintf(buf, sizeof buf, "ring_size_per_direction:%llu", (unsigned long long)pool->ring_bytes);
    line(lctx, buf);
    snprintf(buf, sizeof buf, "ring_hugepages:%s", pool->huge ? "yes" : "no");
    line(lctx, buf);
    snprintf(buf, sizeof buf, "ring_numa_node:%d", pool->node);
    line(lctx, buf);
    snprintf(buf, sizeof buf, "ring_placement_verified:%s", pool->numa_verified ? "yes" : "no");
    line(lctx, buf);
    snprintf(buf, sizeof buf, "ring_engine_pinned:%s", pool->pinned ? "yes" : "no");
    line(lctx, buf);
    snprintf(buf, sizeof buf, "ring_server_parked:%s", pool->parked ? "yes" : "no");
    line(lctx, buf);
    snprintf(buf, sizeof buf, "ring_server_parks_total:%llu", (unsigned long long)pool->parks);
    line(lctx, buf);
    snprintf(buf, sizeof buf, "ring_clients_closed_for_memory_total:%llu", (unsigned long long)pool->closed_for_memory);
    line(lctx, buf);
    for (int i = 0; i < pool->nslots; i++) {
        ring_slot *s = &pool->slots[i];
        const char *st = s->state == SLOT_ATTACHED    ? "claimed"
                         : s->state == SLOT_FREE      ? "free"
                         : s->state == SLOT_REFILLING ? "refilling"
                                                      : "disabled";
        if (s->state == SLOT_ATTACHED) {
            /* client_state is the client's to write: any other value is shown as it is not. */
            uint32_t cst = gb_shm_load_relaxed_u32(&s->ctrl->client_state);
            const char *cs = cst == GB_RING_CLIENT_PARKED ? "parked" : cst == GB_RING_CLIENT_SPINNING ? "spinning" : "invalid";
            snprintf(buf, sizeof buf,
                     "ring%d:state=%s,protocol=%s,client=%s,generation=%u,requests=%llu,direct_replies=%llu,"
                     "violations=%llu,client_state=%s,client_wakes=%llu,pending_bytes=%zu",
                     i, st, s->proto->name, s->owner_addr, s->generation, (unsigned long long)s->requests,
                     (unsigned long long)s->direct_replies,
                     (unsigned long long)gb_shm_load_relaxed_u64(&s->ctrl->violations), cs,
                     (unsigned long long)s->client_wakes, s->pending.len);
        } else
            snprintf(buf, sizeof buf, "ring%d:state=%s,generation=%u", i, st, s->generation);
        line(lctx, buf);
    }
}

/* ---- wiring ----------------------------------------------------------------------------------- */

/* The refill thread's wake descriptor, watched by the loop. False (and
 * released slots are then refilled on the engine thread) when it cannot
 * be opened. */
static bool refill_wake_open(gb_ring_pool *pool)
{
    if (gb_wakefd_open(&pool->refill_wake) != 0) {
        gb_log(GB_LOG_WARNING, "Ring slots will be refilled on the engine thread: no wake descriptor for the "
                               "refill thread (%s)", gb_plat_last_error());
        return false;
    }
    if (uv_poll_init(pool->loop, &pool->refill_poll, pool->refill_wake.read_fd) != 0) {
        gb_log(GB_LOG_WARNING, "Ring slots will be refilled on the engine thread: the loop cannot watch the "
                               "refill thread's wake descriptor");
        gb_wakefd_close(&pool->refill_wake);
        return false;
    }
    pool->refill_poll.data = pool;
    uv_poll_start(&pool->refill_poll, UV_READABLE, refill_wake_cb);
    return true;
}

int gb_ring_pool_attach(gb_ring_pool *pool, gb_engine *eng, gb_loop *loop)
{
    const gb_loop_peer peer = {
        .name = "rings",
        .ctx = pool,
        .poll = pool_poll,
        .prepare_sleep = pool_prepare_sleep,
        .busy_pump = pool_busy_pump,
        .shutdown = pool_shutdown,
    };
    if (gb_loop_add_peer(loop, &peer) != 0)
        return -1;
    the_pool = pool;
    pool->eng = eng;
    pool->loop = gb_loop_uv(loop);
    pool->ns_per_cycle = eng->ns_per_cycle > 0 ? eng->ns_per_cycle : 1.0;
    pool->slice_cycles = (uint64_t)(POLL_SLICE_US * 1000.0 / pool->ns_per_cycle);
    pool->spin_cycles = (uint64_t)((double)eng->cfg.ring_spin_us * 1000.0 / pool->ns_per_cycle);
    pool->time_cycles = (uint64_t)(50 * 1000.0 / pool->ns_per_cycle); /* refresh the clock every 50 us */
    gb_commands_register(eng, ring_commands, GB_ARRAY_LEN(ring_commands));
    eng->client_free_hook = on_client_free;
    eng->client_free_ctx = pool;
    eng->info_provider.section = info_section;
    eng->info_provider.ctx = pool;
    if (pool->refill_running && refill_wake_open(pool)) {
        uv_mutex_lock(&pool->refill_mu);
        pool->refill_wake_on = true;
        uv_mutex_unlock(&pool->refill_mu);
    }
    return 0;
}

void gb_ring_pool_free(gb_ring_pool *pool)
{
    if (!pool)
        return;
    refill_stop(pool); /* before touching slots it may hold */
    for (int i = 0; i < pool->nslots; i++) {
        release_slot(&pool->slots[i], false, false);
        gb_shm_close(&pool->slots[i].shm);
        gb_shm_close(&pool->slots[i].retired);
        gb_free(pool->slots[i].inbuf);
    }
    gb_free(pool->slots);
    gb_free(pool->active);
    if (the_pool == pool)
        the_pool = NULL;
    gb_free(pool);
}
