#define _POSIX_C_SOURCE 200809L
#include "transport/ring/ring_server.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/core/blocking.h"
#include "engine/commands/cmd_util.h"
#include "engine/base/random.h"
#include "platform/clock.h"
#include "platform/cpu.h"
#include "platform/errmsg.h"
#include "platform/numa.h"
#include "platform/park.h"
#include "platform/shm.h"
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
/* Records handled per slot per pass, so one busy client cannot starve the
 * others. */
#define BATCH_PER_SLOT 32
/* For this many passes after a request the poller spins without `pause`.
 * A synchronous client's next request usually follows within a round trip,
 * and x86 `pause` alone delays noticing it by up to ~25 ns on AMD Zen (the
 * whole round trip is ~100-500 ns). Past this window the poller pauses on
 * every idle pass, which yields the core to an SMT sibling and saves power.
 * 512 passes of a few loads each are a few microseconds. */
#define HOT_PASSES 512

enum slot_state { SLOT_FREE = 0, SLOT_ATTACHED, SLOT_DISABLED };

typedef struct ring_slot {
    int id;
    enum slot_state state;
    gb_shm shm;
    gb_ring_ctrl *ctrl;
    gb_ring_reader rd;   /* requests from the client */
    gb_ring_writer wr;   /* replies to the client */
    uint32_t generation;
    const gb_ring_proto_ops *proto;
    void *proto_state;   /* the protocol's per-slot state (reply writer ...) */
    gb_client *exec;     /* engine client that runs this ring's commands */
    gb_client *owner;    /* the control connection that claimed the slot */
    gb_outbuf pending;   /* framed replies ([u32 len][bytes]) the ring had no room for */
    char *inbuf;         /* private copy of the current request */
    size_t incap;
    uint64_t requests;
    bool resume;         /* unblocked: continue with buffered input */
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
    gb_wakefd wake;
    uv_poll_t wake_poll;
    bool wake_poll_on;
    gb_engine *eng;
    gb_net_server *srv;
    bool parked;
    uint64_t last_work_cycles;
    uint64_t last_time_cycles;
    double ns_per_cycle;
    uint64_t violations;  /* all slots, since start (INFO) */
    uint64_t claims;
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
            return rc == GB_EREMOTE ? rc : rc;
        }
    }
    s->ctrl = s->shm.addr;
    return 0;
}

/* Fills the header and the private ring cursors for a new claim. */
static void slot_prepare(gb_ring_pool *pool, ring_slot *s, const gb_ring_proto_ops *proto)
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
    h->stamp_key = (uint32_t)gb_random_u64();
    ctl->server_state = pool->parked ? GB_RING_SERVER_PARKED : GB_RING_SERVER_RUNNING;

    uint8_t *base = (uint8_t *)s->shm.addr;
    s->rd = (gb_ring_reader){base + h->req_offset, h->req_capacity, 0, &ctl->req_head, h->max_payload,
                             h->stamp_key};
    s->wr = (gb_ring_writer){base + h->resp_offset, h->resp_capacity, 0, 0, &ctl->resp_head, h->max_payload,
                             h->stamp_key};
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
    gb_ring_pool *pool = calloc(1, sizeof *pool);
    pool->node = -1;
    pool->nslots = cfg->rings;
    pool->huge = cfg->ring_hugepages != 0;
    pool->ring_bytes = pow2_at_least((uint64_t)cfg->ring_size);
    size_t page = pool->huge ? gb_huge_page_size() : gb_page_size();
    if (page == 0)
        page = gb_page_size();
    size_t raw = (GB_RING_CTRL_SIZE + gb_page_size() - 1) / gb_page_size() * gb_page_size() + 2 * pool->ring_bytes;
    pool->slot_size = (raw + page - 1) / page * page;
    pool->wake.read_fd = pool->wake.write_fd = -1;

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
            free(pool);
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
            free(pool);
            return NULL;
        }
    }

    pool->slots = calloc((size_t)(pool->nslots ? pool->nslots : 1), sizeof *pool->slots);
    pool->active = calloc((size_t)(pool->nslots ? pool->nslots : 1), sizeof *pool->active);
    for (int i = 0; i < pool->nslots; i++) {
        ring_slot *s = &pool->slots[i];
        s->id = i;
        s->pool = pool;
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
            free(pool->slots);
            free(pool->active);
            free(pool);
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
    if (gb_wakefd_open(&pool->wake) != 0) {
        snprintf(err, errlen, "cannot create the rings' wake descriptor: %s", gb_plat_last_error());
        gb_ring_pool_free(pool);
        return NULL;
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
     * state; the client stores PARKED, fences, then re-reads the ring. */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (__atomic_load_n(&s->ctrl->client_state, __ATOMIC_RELAXED) == GB_RING_CLIENT_PARKED) {
        __atomic_fetch_add(&s->ctrl->client_wake, 1, __ATOMIC_RELEASE);
        gb_park_wake((_Atomic uint32_t *)&s->ctrl->client_wake, 1);
    }
}

static void slot_violation(ring_slot *s, const char *why);

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
    /* The client is not reading: keep it, bounded like a socket's output. */
    const gb_settings *cfg = &s->pool->eng->cfg;
    if (cfg->client_obuf_hard > 0 && s->pending.len + len > (size_t)cfg->client_obuf_hard) {
        s->pool->eng->stats.client_obuf_disconnects++;
        slot_violation(s, "replies pending beyond client-output-buffer-limit (the client stopped reading)");
        return false;
    }
    uint32_t l32 = (uint32_t)len;
    gb_outbuf_append(&s->pending, (const char *)&l32, 4);
    gb_outbuf_append(&s->pending, data, len);
    return true;
}

/* Moves queued replies onto the ring while there is room. */
static bool drain_pending(ring_slot *s)
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
            return false;
        }
        if (rc != GB_RING_READY)
            break;
        memcpy(dst, s->pending.data + off + 4, len);
        gb_ring_write_commit(&s->wr, len);
        off += 4 + len;
        wrote = true;
    }
    gb_outbuf_consume(&s->pending, off);
    if (wrote)
        wake_client(s);
    return true;
}

/* Publishes whatever the protocol layer has ready for this slot. */
static bool flush_replies(ring_slot *s)
{
    gb_outbuf *out = s->proto->take_output(s->proto_state);
    if (!out || out->len == 0)
        return true;
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
    if (s->state != SLOT_ATTACHED)
        return;
    s->proto->finish(s->proto_state);
    if (!(c->flags & GB_CLIENT_BLOCKED) && s->proto->has_input(s->proto_state))
        s->resume = true;
    flush_replies(s);
}

static void release_slot(ring_slot *s, bool close_owner, bool refill);

static void exec_close(gb_client *c)
{
    ring_slot *s = c->conn;
    /* CLIENT KILL of the ring client: drop the ring and its control link. */
    if (s->state == SLOT_ATTACHED)
        release_slot(s, true, true);
}

static void exec_describe(const gb_client *c, gb_client_desc *d)
{
    const ring_slot *s = c->conn;
    snprintf(d->addr, sizeof d->addr, "ring:%d@%.48s", s->id, s->owner_addr);
    snprintf(d->laddr, sizeof d->laddr, "ring:%d", s->id);
    d->fd = -1;
    d->obuf = s->pending.len;
    d->omem = s->pending.cap;
}

static const gb_client_hooks exec_hooks = {exec_flush, exec_close, exec_describe, NULL};

/* ---- claim / release --------------------------------------------------------------- */

static void slot_violation(ring_slot *s, const char *why)
{
    if (s->state != SLOT_ATTACHED)
        return;
    __atomic_fetch_add(&s->ctrl->violations, 1, __ATOMIC_RELAXED);
    s->pool->violations++;
    gb_log(GB_LOG_WARNING, "Ring slot %d (client %s): %s; slot reset and client disconnected", s->id, s->owner_addr,
           why);
    release_slot(s, true, true);
}

static void release_slot(ring_slot *s, bool close_owner, bool refill)
{
    if (s->state != SLOT_ATTACHED)
        return;
    gb_ring_pool *pool = s->pool;
    s->state = SLOT_FREE;
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
    if (close_owner && owner && owner->hooks && owner->hooks->close) {
        owner->flags |= GB_CLIENT_CLOSE_ASAP;
        owner->hooks->close(owner);
    }
    /* The old client may still have the memory mapped and keep writing to
     * it: the next claimer gets fresh pages, never these. */
    gb_shm_close(&s->shm);
    s->ctrl = NULL;
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

/* A control connection (or any client) went away: free the slot it owns. */
static void on_client_free(void *ctx, gb_client *c)
{
    gb_ring_pool *pool = ctx;
    if (pool->nattached == 0 || (c->flags & GB_CLIENT_RING))
        return;
    for (int i = 0; i < pool->nslots; i++)
        if (pool->slots[i].state == SLOT_ATTACHED && pool->slots[i].owner == c)
            release_slot(&pool->slots[i], false, true);
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
    ring_slot *s = NULL;
    for (int i = 0; i < pool->nslots && !s; i++)
        if (pool->slots[i].state == SLOT_FREE)
            s = &pool->slots[i];
    if (!s) {
        gb_reply_errorf(c, "ERR ring pool exhausted: all %d slots are claimed (start the server with more --rings, "
                           "or use the socket)", pool->nslots);
        return;
    }
    slot_prepare(pool, s, proto);
    s->proto = proto;
    s->proto_state = proto->new_state(c->eng);
    gb_outbuf_init(&s->pending);
    gb_client_desc d = {.fd = -1};
    if (c->hooks->describe)
        c->hooks->describe(c, &d);
    snprintf(s->owner_addr, sizeof s->owner_addr, "%.40s#%llu", d.addr, (unsigned long long)c->id);
    s->owner = c;
    s->exec = gb_client_new(c->eng, proto->reply_ops, proto->reply_ctx(s->proto_state), &exec_hooks, s,
                            GB_CLIENT_RING | GB_CLIENT_AUTHED);
    s->exec->db = c->db;
    s->state = SLOT_ATTACHED;
    pool->active[pool->nattached++] = s;
    pool->claims++;

    char reply[128];
    int n = snprintf(reply, sizeof reply, "*4\r\n:%d\r\n:%zu\r\n:%u\r\n:%u\r\n", s->id, s->shm.size, s->generation,
                     s->ctrl->hdr.max_payload);
    int fds[2] = {s->shm.fd, pool->wake.write_fd};
    int rc = c->hooks->send_with_fds(c, reply, (size_t)n, fds, 2);
    if (rc != 0) {
        gb_log(GB_LOG_VERBOSE, "Ring slot %d: could not hand the slot to %s (%s)", s->id, s->owner_addr,
               gb_strerror(rc));
        release_slot(s, false, true);
        gb_reply_error(c, "ERR could not pass the ring descriptors (send RING CLAIM alone, not pipelined)");
        return;
    }
    gb_log(GB_LOG_VERBOSE, "Ring slot %d claimed by %s (%s)", s->id, s->owner_addr, proto->name);
    if (pool->parked) /* make sure the loop notices the new ring soon */
        gb_wakefd_signal(pool->wake.write_fd);
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

static const gb_command_def ring_commands[] = {
    {"ring", -2, GB_CMD_ADMIN | GB_CMD_NOSCRIPT, 0, 0, 0, cmd_ring, "connection",
     "Claims or releases a shared-memory ring slot (Unix socket only).", "7.0.0"},
};

/* ---- serving a slot ------------------------------------------------------------------- */

/* Handles up to BATCH_PER_SLOT requests of one slot. Returns true if it did
 * anything. */
static bool serve_slot(ring_slot *s)
{
    /* The busy pump (a script past busy-reply-threshold) polls the rings
     * from inside the script's command: its own ring is in the middle of
     * that request and waits for it to end. */
    if (GB_UNLIKELY(s->exec == s->pool->eng->script.caller))
        return false;
    if (s->pending.len && !drain_pending(s))
        return true;
    if (s->pending.len)
        return false; /* the client must read before it gets more */
    bool worked = false;
    if (s->resume && !(s->exec->flags & GB_CLIENT_BLOCKED)) {
        s->resume = false;
        s->proto->execute(s->proto_state, s->exec, NULL, 0);
        if (s->state != SLOT_ATTACHED || !flush_replies(s))
            return true;
        worked = true;
    }
    for (int n = 0; n < BATCH_PER_SLOT; n++) {
        if (s->state != SLOT_ATTACHED || (s->exec->flags & GB_CLIENT_BLOCKED))
            break;
        const uint8_t *payload;
        uint32_t len;
        int rc = gb_ring_read_peek(&s->rd, &payload, &len);
        if (rc == GB_RING_EMPTY)
            break;
        if (rc == GB_RING_BAD) {
            slot_violation(s, "malformed request record (bad length or padding)");
            return true;
        }
        /* Private copy first: the client can rewrite ring bytes at any time. */
        if (len > s->incap) {
            size_t cap = len < 256 ? 256 : len;
            char *inbuf = realloc(s->inbuf, cap);
            if (!inbuf) {
                slot_violation(s, "no memory to copy the request");
                return true;
            }
            s->inbuf = inbuf;
            s->incap = cap;
        }
        memcpy(s->inbuf, payload, len);
        gb_ring_read_consume(&s->rd, len);
        s->requests++;
        worked = true;
        rc = s->proto->execute(s->proto_state, s->exec, s->inbuf, len);
        if (s->state != SLOT_ATTACHED)
            return true; /* the command released the slot (CLIENT KILL on itself) */
        s->proto->finish(s->proto_state);
        if (rc != 0) {
            slot_violation(s, rc == GB_EPROTO   ? "request is not a valid message for the claimed protocol"
                              : rc == GB_ENOMEM ? "no memory to buffer the request"
                                                : "request rejected");
            return true;
        }
        if (s->exec->flags & (GB_CLIENT_CLOSE_AFTER_REPLY | GB_CLIENT_CLOSE_ASAP)) {
            flush_replies(s);
            release_slot(s, true, true);
            return true;
        }
        if (!flush_replies(s))
            return true;
    }
    return worked;
}

/* ---- poller ------------------------------------------------------------------------------ */

static void set_server_state(gb_ring_pool *pool, uint32_t st)
{
    for (int i = 0; i < pool->nattached; i++)
        __atomic_store_n(&pool->active[i]->ctrl->server_state, st, __ATOMIC_RELAXED);
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
        set_server_state(pool, GB_RING_SERVER_RUNNING);
        gb_wakefd_drain(pool->wake.read_fd);
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
        /* The clock (about 10 ns) is read every 16 passes only, never
         * between a request and the next poll. */
        if (iter & 15)
            continue;
        now = gb_cycles_now();
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
    uint64_t now = gb_cycles_now();
    pool->spin_cycles = (uint64_t)((double)pool->eng->cfg.ring_spin_us * 1000.0 / pool->ns_per_cycle);
    if (now - pool->last_work_cycles < pool->spin_cycles)
        return false;
    set_server_state(pool, GB_RING_SERVER_PARKED);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    for (int i = 0; i < pool->nattached; i++) {
        ring_slot *s = pool->active[i];
        const uint8_t *p;
        uint32_t l;
        bool blocked = (s->exec->flags & GB_CLIENT_BLOCKED) != 0;
        if ((!blocked && gb_ring_read_peek(&s->rd, &p, &l) != GB_RING_EMPTY) || s->pending.len) {
            set_server_state(pool, GB_RING_SERVER_RUNNING);
            return false;
        }
    }
    pool->parked = true;
    return true;
}

static void wake_cb(uv_poll_t *h, int status, int events)
{
    (void)status;
    (void)events;
    gb_ring_pool *pool = h->data;
    gb_wakefd_drain(pool->wake.read_fd);
}

static void pool_shutdown(void *ctx)
{
    gb_ring_pool *pool = ctx;
    for (int i = 0; i < pool->nslots; i++)
        release_slot(&pool->slots[i], false, false);
    if (pool->wake_poll_on) {
        uv_poll_stop(&pool->wake_poll);
        uv_close((uv_handle_t *)&pool->wake_poll, NULL);
        pool->wake_poll_on = false;
    }
}

/* ---- INFO ------------------------------------------------------------------------------------ */

static void info_section(void *ctx, const char *section, void (*line)(void *lctx, const char *text), void *lctx)
{
    gb_ring_pool *pool = ctx;
    if (strcmp(section, "rings") != 0)
        return;
    char buf[256];
    line(lctx, "# Rings");
    snprintf(buf, sizeof buf, "ring_slots:%d", pool->nslots);
    line(lctx, buf);
    snprintf(buf, sizeof buf, "ring_slots_claimed:%d", pool->nattached);
    line(lctx, buf);
    snprintf(buf, sizeof buf, "ring_claims_total:%llu", (unsigned long long)pool->claims);
    line(lctx, buf);
    snprintf(buf, sizeof buf, "ring_violations_total:%llu", (unsigned long long)pool->violations);
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
    for (int i = 0; i < pool->nslots; i++) {
        ring_slot *s = &pool->slots[i];
        const char *st = s->state == SLOT_ATTACHED ? "claimed" : s->state == SLOT_FREE ? "free" : "disabled";
        if (s->state == SLOT_ATTACHED)
            snprintf(buf, sizeof buf, "ring%d:state=%s,protocol=%s,client=%s,generation=%u,requests=%llu,violations=%llu",
                     i, st, s->proto->name, s->owner_addr, s->generation, (unsigned long long)s->requests,
                     (unsigned long long)__atomic_load_n(&s->ctrl->violations, __ATOMIC_RELAXED));
        else
            snprintf(buf, sizeof buf, "ring%d:state=%s,generation=%u", i, st, s->generation);
        line(lctx, buf);
    }
}

/* ---- wiring ----------------------------------------------------------------------------------- */

void gb_ring_pool_attach(gb_ring_pool *pool, gb_engine *eng, gb_net_server *srv)
{
    the_pool = pool;
    pool->eng = eng;
    pool->srv = srv;
    pool->ns_per_cycle = eng->ns_per_cycle > 0 ? eng->ns_per_cycle : 1.0;
    pool->slice_cycles = (uint64_t)(POLL_SLICE_US * 1000.0 / pool->ns_per_cycle);
    pool->spin_cycles = (uint64_t)((double)eng->cfg.ring_spin_us * 1000.0 / pool->ns_per_cycle);
    pool->time_cycles = (uint64_t)(50 * 1000.0 / pool->ns_per_cycle); /* refresh the clock every 50 us */
    gb_commands_register(eng, ring_commands, GB_ARRAY_LEN(ring_commands));
    eng->client_free_hook = on_client_free;
    eng->client_free_ctx = pool;
    eng->info_provider.section = info_section;
    eng->info_provider.ctx = pool;
    gb_net_poller p = {pool_poll, pool_prepare_sleep, pool_shutdown, pool};
    gb_net_server_set_poller(srv, &p);
    uv_poll_init(gb_net_server_loop(srv), &pool->wake_poll, pool->wake.read_fd);
    pool->wake_poll.data = pool;
    uv_poll_start(&pool->wake_poll, UV_READABLE, wake_cb);
    pool->wake_poll_on = true;
}

void gb_ring_pool_free(gb_ring_pool *pool)
{
    if (!pool)
        return;
    for (int i = 0; i < pool->nslots; i++) {
        release_slot(&pool->slots[i], false, false);
        gb_shm_close(&pool->slots[i].shm);
        free(pool->slots[i].inbuf);
    }
    free(pool->slots);
    free(pool->active);
    gb_wakefd_close(&pool->wake);
    if (the_pool == pool)
        the_pool = NULL;
    free(pool);
}
