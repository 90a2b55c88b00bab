#define _POSIX_C_SOURCE 200809L
#include "transport/cluster/bus.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "engine/base/mem.h"
#include "engine/base/random.h"
#include "engine/cluster/bus_msg.h"
#include "engine/cluster/cluster.h"
#include "engine/cluster/election.h"
#include "engine/core/request/blocking.h"
#include "engine/core/cluster_mode.h"
#include "engine/core/keyspace/db.h"
#include "engine/core/pubsub/pubsub.h"
#include "engine/core/replication/repl.h"
#include "engine/core/replication/replica.h"
#include "transport/tls/tls_handshaker.h"
#include "transport/tls/tls.h"

#define READ_CHUNK 16384
/* Redis's CLUSTER_MAX_HANDSHAKE_TIMEOUT floor: a handshake gets at least a second. */
#define HANDSHAKE_MIN_MS 1000

typedef struct bus_link bus_link;

struct gb_cluster_bus {
    gb_engine *eng;
    gb_loop *loop;
    uv_tcp_t listener;
    bool listening;
    bus_link *links; /* every open link, inbound and outbound */
    unsigned cron_ticks;
    bool dirty;      /* the state changed: save nodes.conf, check health */
    /* this replica's election (Redis's failover_auth_*) */
    int64_t auth_time;     /* when the election starts (scheduled) or started; 0: none */
    const char *cant_failover_why; /* the reason logged last, and when (Redis logs it once per 10 s) */
    int64_t cant_failover_logged_ms;
    uint64_t auth_epoch;   /* the epoch its request asked votes for */
    int auth_count;        /* votes received */
    int auth_rank;         /* the rank its delay was computed for */
    bool auth_sent;
    int64_t mfstart_for;   /* the CLUSTER FAILOVER (its mf_end) an MFSTART was sent for */
    /* tls-cluster (NULL contexts: plain TCP): accepted links are TLS
     * servers that require the peer's certificate, as Redis's bus; links
     * this node dials are TLS clients. Accepted handshakes run on the
     * handshaker's thread (NULL: on the loop, tls-handshake-thread no). */
    gb_tls_context *tls_accept_ctx;
    gb_tls_context *tls_dial_ctx;
    uint64_t tls_config_changes; /* the engine's count when they were built */
    gb_tls_handshaker *handshaker;
    uv_async_t handshakes_done;
    char plain[READ_CHUNK]; /* a TLS link's decrypted bytes, on their way to the message reader */
};

struct bus_link {
    uv_tcp_t tcp;
    uv_connect_t creq;
    gb_cluster_bus *bus;      /* NULL once dropped: callbacks still pending do nothing */
    gb_cluster_node *node;    /* outbound: the node it reaches; inbound: NULL */
    gb_cluster_node *from;    /* inbound: the node that sends on it, once known */
    bool inbound;
    bool connected;           /* messages may be sent: TCP connected and, with TLS, the handshake done */
    gb_tls_session *tls;      /* tls-cluster: the link's session; NULL: plain TCP */
    int64_t ctime;            /* ms */
    uint8_t *in;              /* the message being read */
    size_t in_len, in_cap;
    uint32_t want;            /* its totlen, once its first 8 bytes are in; 0 before */
    bus_link *next, *prev;
    char readbuf[READ_CHUNK];
};

static gb_cluster *state(const gb_cluster_bus *bus) { return bus->eng->cluster; }
static int64_t now_ms(const gb_cluster_bus *bus) { return bus->eng->now_ms; }
static int64_t node_timeout(const gb_cluster_bus *bus) { return bus->eng->cfg.cluster_node_timeout; }

/* ---- links ---- */

static void link_closed(uv_handle_t *h)
{
    bus_link *l = h->data;
    gb_tls_session_free(l->tls);
    gb_free(l->in);
    gb_free(l);
}

static void link_free(bus_link *l)
{
    gb_cluster_bus *bus = l->bus;
    if (!bus)
        return;
    if (l->node && l->node->link == l)
        l->node->link = NULL;
    if (l->prev)
        l->prev->next = l->next;
    else
        bus->links = l->next;
    if (l->next)
        l->next->prev = l->prev;
    l->bus = NULL;
    l->node = NULL;
    uv_close((uv_handle_t *)&l->tcp, link_closed);
}

static bus_link *link_new(gb_cluster_bus *bus, bool inbound)
{
    bus_link *l = gb_calloc(1, sizeof *l);
    l->bus = bus;
    l->inbound = inbound;
    l->ctime = now_ms(bus);
    uv_tcp_init(gb_loop_uv(bus->loop), &l->tcp);
    l->tcp.data = l;
    l->next = bus->links;
    if (bus->links)
        bus->links->prev = l;
    bus->links = l;
    return l;
}

/* Closes the outbound link of n, if any (its address changed, it is going). */
static void drop_node_link(gb_cluster_node *n)
{
    if (n->link)
        link_free(n->link);
}

/* The state's hook: n is about to go (FORGET, RESET, a handshake that
 * ended); no link may point at it. */
static void node_removed(void *ctx, gb_cluster_node *n)
{
    gb_cluster_bus *bus = ctx;
    drop_node_link(n);
    for (bus_link *l = bus->links; l; l = l->next) {
        if (l->node == n)
            l->node = NULL;
        if (l->from == n)
            l->from = NULL;
    }
}

/* The state's hook for CLUSTER LINKS: every link with its node known. */
static size_t links_hook(void *ctx, gb_cluster_link_info **out)
{
    gb_cluster_bus *bus = ctx;
    size_t n = 0;
    for (bus_link *l = bus->links; l; l = l->next)
        n++;
    gb_cluster_link_info *info = gb_calloc(n ? n : 1, sizeof *info);
    size_t k = 0;
    for (bus_link *l = bus->links; l; l = l->next) {
        const gb_cluster_node *node = l->inbound ? l->from : l->node;
        if (!node)
            continue;
        info[k].inbound = l->inbound;
        memcpy(info[k].node, node->name, GB_CLUSTER_NAMELEN);
        info[k].ctime = l->ctime;
        info[k].send_used = l->connected ? uv_stream_get_write_queue_size((uv_stream_t *)&l->tcp) : 0;
        info[k].writing = info[k].send_used > 0;
        k++;
    }
    *out = info;
    return k;
}

static void del_node(gb_cluster_bus *bus, gb_cluster_node *n)
{
    gb_cluster_del_node(state(bus), n);
    bus->dirty = true;
}

static void write_done(uv_write_t *req, int status)
{
    (void)status; /* a failed write shows up as a read error */
    gb_free(req);
}

/* A write request with room for len bytes after it (req + 1). */
static uv_write_t *write_req_new(size_t len) { return gb_malloc(sizeof(uv_write_t) + len); }

/* Writes the len bytes after req to l's socket; req is freed when done.
 * False when libuv refused (req freed now). */
static bool write_req_send(bus_link *l, uv_write_t *req, size_t len)
{
    uv_buf_t b = uv_buf_init((char *)(req + 1), (unsigned)len);
    if (uv_write(req, (uv_stream_t *)&l->tcp, &b, 1, write_done) == 0)
        return true;
    gb_free(req);
    return false;
}

/* Sends the records l's TLS session has waiting (handshake messages,
 * alerts, encrypted messages), taken straight into the write request. */
static void tls_flush(bus_link *l)
{
    size_t pending;
    while ((pending = gb_tls_output_pending(l->tls)) > 0) {
        uv_write_t *req = write_req_new(pending);
        size_t got = gb_tls_take_output(l->tls, (char *)(req + 1), pending);
        if (!write_req_send(l, req, got))
            return;
    }
}

/* Sends len bytes of msg (copied, or encrypted with tls-cluster) on l. */
static void link_send(bus_link *l, const uint8_t *msg, size_t len)
{
    if (!l->bus || !l->connected)
        return;
    bool sent;
    if (l->tls) {
        sent = gb_tls_write(l->tls, (const char *)msg, len) == 0;
        tls_flush(l);
    } else {
        uv_write_t *req = write_req_new(len);
        memcpy(req + 1, msg, len);
        sent = write_req_send(l, req, len);
    }
    if (sent)
        state(l->bus)->messages_sent++;
}

/* ---- what this node says about itself ---- */

static gb_bus_self self_of(gb_cluster_bus *bus)
{
    gb_cluster *cl = state(bus);
    gb_cluster_node *me = cl->myself;
    const gb_settings *cfg = &bus->eng->cfg;
    gb_cluster_node *primary =
        (me->flags & GB_CNODE_SLAVE) && me->replica_of[0] ? gb_cluster_lookup(cl, me->replica_of, 40) : NULL;
    const gb_cluster_node *src = primary ? primary : me;
    gb_bus_self s = {
        .name = me->name,
        .slots = src->slots,
        .replica_of = me->replica_of[0] ? me->replica_of : NULL,
        .ip = cfg->cluster_announce_ip ? cfg->cluster_announce_ip : "",
        .port = (uint16_t)me->port,
        .pport = (uint16_t)me->pport,
        .cport = (uint16_t)me->cport,
        .flags = (uint16_t)me->flags,
        .state = cl->state == GB_CLUSTER_OK ? 0 : 1, /* Redis's CLUSTER_OK is 0 on the wire */
        .mflags0 = (me->flags & GB_CNODE_MASTER) && cl->mf_end ? GB_BUS_MFLAG0_PAUSED : 0,
        .current_epoch = cl->current_epoch,
        .config_epoch = src->config_epoch,
        .offset = (uint64_t)gb_repl_offset(bus->eng),
        .hostname = me->hostname,
    };
    return s;
}

static bool gossip_candidate(const gb_cluster *cl, const gb_cluster_node *n, const gb_bus_gossip *g, unsigned ng)
{
    if (n == cl->myself || (n->flags & (GB_CNODE_PFAIL | GB_CNODE_HANDSHAKE | GB_CNODE_NOADDR)))
        return false;
    if (!n->link && n->nslots == 0)
        return false;
    for (unsigned i = 0; i < ng; i++)
        if (memcmp(g[i].name, n->name, GB_CLUSTER_NAMELEN) == 0)
            return false;
    return true;
}

static void gossip_entry(gb_bus_gossip *g, const gb_cluster_node *n)
{
    memset(g, 0, sizeof *g);
    memcpy(g->name, n->name, GB_CLUSTER_NAMELEN);
    g->ping_sent = (uint32_t)(n->ping_sent / 1000);
    g->pong_received = (uint32_t)(n->pong_received / 1000);
    memcpy(g->ip, n->ip, sizeof g->ip);
    g->port = (uint16_t)n->port;
    g->cport = (uint16_t)n->cport;
    g->flags = (uint16_t)n->flags;
    g->pport = (uint16_t)n->pport;
}

/* Redis's clusterSendPing: a tenth of the nodes (at least 3) picked at
 * random as gossip, then every node this one suspects (PFAIL). */
static void send_ping(bus_link *l, uint16_t type)
{
    gb_cluster_bus *bus = l->bus;
    gb_cluster *cl = state(bus);
    size_t total = cl->nnodes;
    size_t fresh = total >= 2 ? total - 2 : 0;
    size_t wanted = total / 10 < 3 ? 3 : total / 10;
    if (wanted > fresh)
        wanted = fresh;
    size_t npfail = 0;
    for (size_t i = 0; i < total; i++)
        npfail += (cl->nodes[i]->flags & GB_CNODE_PFAIL) != 0;
    gb_bus_gossip *g = gb_malloc((wanted + npfail + 1) * sizeof *g);
    unsigned ng = 0;
    for (size_t tries = wanted * 3; fresh > 0 && ng < wanted && tries > 0; tries--) {
        gb_cluster_node *n = cl->nodes[gb_random_below(total)];
        if (n == cl->myself || (n->flags & GB_CNODE_PFAIL))
            continue;
        if (!gossip_candidate(cl, n, g, ng)) {
            fresh--;
            continue;
        }
        gossip_entry(&g[ng++], n);
        fresh--;
    }
    for (size_t i = 0; i < total && npfail; i++) {
        gb_cluster_node *n = cl->nodes[i];
        if ((n->flags & GB_CNODE_PFAIL) && !(n->flags & (GB_CNODE_HANDSHAKE | GB_CNODE_NOADDR))) {
            gossip_entry(&g[ng++], n);
            npfail--;
        }
    }
    gb_bus_self self = self_of(bus);
    size_t len = gb_bus_ping_size(&self, ng);
    uint8_t *msg = gb_malloc(len);
    gb_bus_write_ping(msg, type, &self, g, ng);
    if (l->node && type == GB_BUS_PING)
        l->node->ping_sent = now_ms(bus);
    link_send(l, msg, len);
    gb_free(msg);
    gb_free(g);
}

static void send_update(bus_link *l, const gb_cluster_node *about)
{
    if (!l)
        return;
    gb_bus_self self = self_of(l->bus);
    uint8_t *msg = gb_malloc(GB_BUS_UPDATE_LEN);
    gb_bus_write_update(msg, &self, about->name, about->config_epoch, about->slots);
    link_send(l, msg, GB_BUS_UPDATE_LEN);
    gb_free(msg);
}

/* ---- reading messages ---- */

static bool is_null_name(const char *name)
{
    for (int i = 0; i < GB_CLUSTER_NAMELEN; i++)
        if (name[i])
            return false;
    return true;
}

/* The address a peer announced, else the one its link comes from. */
static void peer_ip(bus_link *l, const char *announced, char *out)
{
    if (announced[0] && gb_cluster_valid_ip(announced)) {
        snprintf(out, GB_CLUSTER_IPLEN, "%s", announced);
        return;
    }
    struct sockaddr_storage sa;
    int n = sizeof sa;
    out[0] = '\0';
    if (uv_tcp_getpeername(&l->tcp, (struct sockaddr *)&sa, &n) != 0)
        return;
    if (sa.ss_family == AF_INET)
        uv_ip4_name((struct sockaddr_in *)&sa, out, GB_CLUSTER_IPLEN);
    else
        uv_ip6_name((struct sockaddr_in6 *)&sa, out, GB_CLUSTER_IPLEN);
}

/* This node's own address as a peer reaches it (Redis learns it from the
 * MEET, when cluster-announce-ip says nothing). */
static void learn_my_ip(bus_link *l)
{
    gb_cluster_node *me = state(l->bus)->myself;
    struct sockaddr_storage sa;
    int n = sizeof sa;
    if (uv_tcp_getsockname(&l->tcp, (struct sockaddr *)&sa, &n) != 0)
        return;
    char ip[GB_CLUSTER_IPLEN] = "";
    if (sa.ss_family == AF_INET)
        uv_ip4_name((struct sockaddr_in *)&sa, ip, sizeof ip);
    else
        uv_ip6_name((struct sockaddr_in6 *)&sa, ip, sizeof ip);
    if (ip[0] && strcmp(ip, me->ip) != 0) {
        memcpy(me->ip, ip, sizeof ip);
        gb_log(GB_LOG_NOTICE, "IP address for this node updated to %s", ip);
        l->bus->dirty = true;
    }
}

/* Redis's nodeUpdateAddressIfNeeded, for a PING on an inbound link. */
static void update_address(bus_link *l, gb_cluster_node *n, const gb_bus_msg *m)
{
    if (l == n->link)
        return;
    char ip[GB_CLUSTER_IPLEN];
    peer_ip(l, m->myip, ip);
    if (!ip[0] || (n->port == m->port && n->pport == m->pport && n->cport == m->cport && strcmp(ip, n->ip) == 0))
        return;
    memcpy(n->ip, ip, sizeof ip);
    n->port = m->port;
    n->pport = m->pport;
    n->cport = m->cport;
    drop_node_link(n);
    n->flags &= ~(uint32_t)GB_CNODE_NOADDR;
    gb_log(GB_LOG_NOTICE, "Address updated for node %.40s, now %s:%d", n->name, ip, n->port);
    l->bus->dirty = true;
}

static uint32_t sanitize_flags(uint16_t f)
{
    return f & (GB_CNODE_MASTER | GB_CNODE_SLAVE | GB_CNODE_PFAIL | GB_CNODE_FAIL | GB_CNODE_NOADDR |
                GB_CNODE_NOFAILOVER);
}

/* Sends msg to every node reached (not in handshake). */
static void broadcast(gb_cluster_bus *bus, const uint8_t *msg, size_t len)
{
    gb_cluster *cl = state(bus);
    for (size_t i = 0; i < cl->nnodes; i++) {
        gb_cluster_node *to = cl->nodes[i];
        if (to != cl->myself && to->link && !(to->flags & GB_CNODE_HANDSHAKE))
            link_send(to->link, msg, len);
    }
}

/* Redis's clusterSendFail: FAIL about n to every node reached. */
static void broadcast_fail(gb_cluster_bus *bus, const gb_cluster_node *n)
{
    gb_log(GB_LOG_NOTICE, "Marking node %.40s as failing (quorum reached).", n->name);
    gb_bus_self self = self_of(bus);
    uint8_t msg[GB_BUS_FAIL_LEN];
    gb_bus_write_fail(msg, &self, n->name);
    broadcast(bus, msg, sizeof msg);
    bus->dirty = true;
}

/* A primary's word about n in its gossip: a failure report, or its
 * withdrawal. */
static void note_report(gb_cluster_bus *bus, gb_cluster_node *sender, gb_cluster_node *n, uint16_t gflags)
{
    gb_cluster *cl = state(bus);
    if (!sender || !(sender->flags & GB_CNODE_MASTER) || n == cl->myself)
        return;
    if (gflags & (GB_CNODE_FAIL | GB_CNODE_PFAIL)) {
        gb_cluster_report_failure(n, sender->name, now_ms(bus));
        if (gb_cluster_mark_failing_if_needed(cl, n, now_ms(bus), node_timeout(bus)))
            broadcast_fail(bus, n);
    } else {
        gb_cluster_withdraw_failure(n, sender->name);
    }
}

/* Redis's clusterProcessGossipSection. */
static void process_gossip(gb_cluster_bus *bus, const gb_bus_msg *m, gb_cluster_node *sender)
{
    gb_cluster *cl = state(bus);
    for (unsigned i = 0; i < m->count; i++) {
        gb_bus_gossip g;
        gb_bus_gossip_at(m, i, &g);
        if (!gb_cluster_valid_name(g.name))
            continue;
        gb_cluster_node *n = gb_cluster_lookup(cl, g.name, GB_CLUSTER_NAMELEN);
        if (n) {
            note_report(bus, sender, n, g.flags);
            int64_t pong = (int64_t)g.pong_received * 1000;
            if (!(g.flags & (GB_CNODE_FAIL | GB_CNODE_PFAIL)) && n->ping_sent == 0 && n->nreports == 0 &&
                pong <= now_ms(bus) + 500 && pong > n->pong_received)
                n->pong_received = pong;
            if ((n->flags & (GB_CNODE_FAIL | GB_CNODE_PFAIL)) && gb_cluster_valid_ip(g.ip) &&
                !(g.flags & (GB_CNODE_NOADDR | GB_CNODE_FAIL | GB_CNODE_PFAIL)) &&
                (strcasecmp(n->ip, g.ip) != 0 || n->port != g.port || n->cport != g.cport)) {
                drop_node_link(n);
                memcpy(n->ip, g.ip, sizeof g.ip);
                n->port = g.port;
                n->pport = g.pport;
                n->cport = g.cport;
                n->flags &= ~(uint32_t)GB_CNODE_NOADDR;
            }
        } else if (sender && !(g.flags & GB_CNODE_NOADDR) && g.ip[0] && g.port && g.cport &&
                   !gb_cluster_forgotten(cl, g.name, now_ms(bus))) {
            gb_cluster_node *fresh =
                gb_cluster_add_gossiped(cl, g.name, g.ip, g.port, g.cport, sanitize_flags(g.flags), now_ms(bus));
            if (fresh) {
                fresh->pport = g.pport;
                bus->dirty = true;
            }
        }
    }
}

/* The sender's role, as its header says. */
static void update_role(gb_cluster_bus *bus, gb_cluster_node *sender, const gb_bus_msg *m)
{
    gb_cluster *cl = state(bus);
    if (is_null_name(m->replica_of)) {
        if (!(sender->flags & GB_CNODE_MASTER) || sender->replica_of[0]) {
            gb_cluster_set_primary(sender);
            bus->dirty = true;
        }
        return;
    }
    if (!gb_cluster_valid_name(m->replica_of))
        return;
    if (!(sender->flags & GB_CNODE_SLAVE) || memcmp(sender->replica_of, m->replica_of, GB_CLUSTER_NAMELEN) != 0) {
        gb_cluster_set_replica_of(cl, sender, m->replica_of);
        bus->dirty = true;
    }
}

/* Deletes the keys of slots this node lost to another (Redis's
 * delKeysInSlot after an UPDATE or a PING that took them). */
static void drop_keys_in_slots(gb_cluster_bus *bus, const uint16_t *lost, int nlost)
{
    if (nlost == 0)
        return;
    gb_db *db = &bus->eng->dbs[0];
    uint8_t gone[GB_CLUSTER_SLOTS / 8] = {0};
    for (int i = 0; i < nlost; i++)
        gone[lost[i] >> 3] |= (uint8_t)(1u << (lost[i] & 7));
    /* collect first: deleting while iterating the table is not allowed */
    size_t n = 0, cap = 64;
    char **keys = gb_malloc(cap * sizeof *keys);
    size_t *lens = gb_malloc(cap * sizeof *lens);
    gb_htable_iter it;
    gb_htable_iter_init(&it, &db->keys);
    for (gb_hnode *h; (h = gb_htable_iter_next(&it)) != NULL;) {
        gb_slice k = gb_kv_key((gb_kv *)h);
        unsigned s = gb_keyslot(k.ptr, k.len);
        if (!((gone[s >> 3] >> (s & 7)) & 1))
            continue;
        if (n == cap) {
            cap *= 2;
            keys = gb_realloc(keys, cap * sizeof *keys);
            lens = gb_realloc(lens, cap * sizeof *lens);
        }
        keys[n] = gb_malloc(k.len ? k.len : 1);
        memcpy(keys[n], k.ptr, k.len);
        lens[n++] = k.len;
    }
    gb_htable_iter_done(&it);
    for (size_t i = 0; i < n; i++) {
        gb_db_delete(db, gb_slice_make(keys[i], lens[i]));
        gb_free(keys[i]);
    }
    gb_free(keys);
    gb_free(lens);
    gb_log(GB_LOG_WARNING, "Deleted %zu keys of %d slots another node now serves", n, nlost);
}

static void end_manual_failover(gb_cluster_bus *bus) { gb_cluster_mode_end_manual_failover(bus->eng); }

/* This node follows primary from now (Redis's clusterSetMaster). */
static void follow(gb_cluster_bus *bus, gb_cluster_node *primary)
{
    gb_cluster *cl = state(bus);
    gb_log(GB_LOG_WARNING, "Configuration change detected. Reconfiguring myself as a replica of %.40s",
           primary->name);
    gb_cluster_set_replica_of(cl, cl->myself, primary->name);
    gb_replica_set_master(bus->eng, primary->ip, primary->port);
    end_manual_failover(bus);
    bus->dirty = true;
}

static int count_bits(const uint8_t *slots)
{
    int n = 0;
    for (unsigned j = 0; j < GB_CLUSTER_SLOTS; j++)
        n += (slots[j >> 3] >> (j & 7)) & 1;
    return n;
}

/* owner claims slots under epoch (Redis's clusterUpdateSlotsConfigWith):
 * what it takes from this node loses its keys here; when this node's
 * primary (itself, or the one it replicates) is left without slots, this
 * node follows owner. */
static void take_slots(gb_cluster_bus *bus, gb_cluster_node *owner, uint64_t epoch, const uint8_t *slots)
{
    gb_cluster *cl = state(bus);
    gb_cluster_node *me = cl->myself;
    gb_cluster_node *current = (me->flags & GB_CNODE_MASTER) ? me : gb_cluster_lookup(cl, me->replica_of, 40);
    int before = current ? current->nslots : 0;
    uint16_t *lost = gb_malloc(GB_CLUSTER_SLOTS * sizeof *lost);
    int nlost = gb_cluster_take_claimed_slots(cl, owner, epoch, slots, bus->eng->dbs[0].slot_keys, lost);
    int migrated = current ? before - current->nslots : 0;
    bool follows = current && owner != me && migrated > 0 && current->nslots == 0 &&
                   (bus->eng->cfg.cluster_allow_replica_migration || count_bits(slots) == migrated);
    if (follows)
        follow(bus, owner); /* the replication's full sync replaces the data */
    else
        drop_keys_in_slots(bus, lost, nlost);
    gb_free(lost);
    bus->dirty = true;
}

/* PING, PONG, MEET after the link's own handshake: the sender's slots,
 * a stale claim answered with an UPDATE, epoch collisions, gossip. */
static void process_sender_state(bus_link *l, gb_cluster_node *sender, const gb_bus_msg *m)
{
    gb_cluster_bus *bus = l->bus;
    gb_cluster *cl = state(bus);
    update_role(bus, sender, m);
    gb_cluster_node *primary =
        (sender->flags & GB_CNODE_MASTER) ? sender : gb_cluster_lookup(cl, sender->replica_of, GB_CLUSTER_NAMELEN);
    bool dirty_slots = primary && memcmp(primary->slots, m->myslots, GB_CLUSTER_SLOTS / 8) != 0;
    if ((sender->flags & GB_CNODE_MASTER) && dirty_slots)
        take_slots(bus, sender, m->config_epoch, m->myslots);
    if (dirty_slots) {
        for (unsigned j = 0; j < GB_CLUSTER_SLOTS; j++) {
            if (!((m->myslots[j >> 3] >> (j & 7)) & 1))
                continue;
            gb_cluster_node *owner = cl->slots[j];
            if (!owner || owner == sender || ((cl->not_claimed[j >> 3] >> (j & 7)) & 1))
                continue;
            if (owner->config_epoch > m->config_epoch) {
                send_update(sender->link, owner);
                break;
            }
        }
    }
    if ((cl->myself->flags & GB_CNODE_MASTER) && (sender->flags & GB_CNODE_MASTER) &&
        m->config_epoch == cl->myself->config_epoch && gb_cluster_resolve_epoch_collision(cl, sender)) {
        gb_log(GB_LOG_VERBOSE, "WARNING: configEpoch collision with node %.40s. configEpoch set to %llu",
               sender->name, (unsigned long long)cl->myself->config_epoch);
        bus->dirty = true;
    }
    process_gossip(bus, m, sender);
    const char *host = m->hostname ? m->hostname : "";
    size_t hl = m->hostname ? m->hostname_len : 0;
    if (!gb_cluster_valid_hostname(host, hl))
        return; /* it would not survive nodes.conf: ignored */
    if (strlen(sender->hostname) != hl || memcmp(sender->hostname, host, hl) != 0) {
        gb_free(sender->hostname);
        sender->hostname = gb_malloc(hl + 1);
        memcpy(sender->hostname, host, hl);
        sender->hostname[hl] = '\0';
        bus->dirty = true;
    }
}

/* A message that names this node as its sender: CLUSTER MEET of this
 * node's own address (or a peer claiming its name). process_message has
 * cleared sender for it, so no state of "another" node is taken from it. */
static bool claims_myself(const gb_cluster *cl, const gb_bus_msg *m)
{
    return memcmp(m->sender, cl->myself->name, GB_CLUSTER_NAMELEN) == 0;
}

/* Returns false when the link was closed. */
static bool process_ping_family(bus_link *l, gb_cluster_node *sender, const gb_bus_msg *m)
{
    gb_cluster_bus *bus = l->bus;
    gb_cluster *cl = state(bus);
    const gb_settings *cfg = &bus->eng->cfg;
    if (m->type == GB_BUS_PING || m->type == GB_BUS_MEET) {
        if ((m->type == GB_BUS_MEET || !cl->myself->ip[0]) && !(cfg->cluster_announce_ip && cfg->cluster_announce_ip[0]))
            learn_my_ip(l);
        if (!sender && m->type == GB_BUS_MEET && !claims_myself(cl, m)) {
            char ip[GB_CLUSTER_IPLEN];
            peer_ip(l, m->myip, ip);
            bool invalid;
            gb_cluster_node *n = gb_cluster_start_handshake(cl, ip, m->port, m->cport, now_ms(bus), &invalid);
            if (n) {
                n->flags &= ~(uint32_t)GB_CNODE_MEET; /* it met us: a PING will do */
                n->pport = m->pport;
                bus->dirty = true;
            }
            process_gossip(bus, m, NULL);
        }
        send_ping(l, GB_BUS_PONG);
    }
    if (!l->inbound && l->node) {
        gb_cluster_node *n = l->node;
        if (n->flags & GB_CNODE_HANDSHAKE) {
            if (sender || claims_myself(cl, m)) {
                /* met under another address: keep the node known by name;
                 * met this node itself: nothing to add (Redis deletes the
                 * handshake node the same way) */
                if (sender)
                    update_address(l, sender, m);
                del_node(bus, n);
                return false;
            }
            if (!gb_cluster_valid_name(m->sender)) {
                link_free(l);
                return false;
            }
            gb_log(GB_LOG_VERBOSE, "Handshake with node %.40s completed.", m->sender);
            gb_cluster_rename_node(n, m->sender);
            n->flags &= ~(uint32_t)GB_CNODE_HANDSHAKE;
            n->flags |= m->flags & (GB_CNODE_MASTER | GB_CNODE_SLAVE);
            bus->dirty = true;
        } else if (memcmp(n->name, m->sender, GB_CLUSTER_NAMELEN) != 0) {
            /* another node answers at that address now */
            n->flags |= GB_CNODE_NOADDR;
            n->ip[0] = '\0';
            n->port = n->pport = n->cport = 0;
            link_free(l);
            bus->dirty = true;
            return false;
        }
    }
    if (sender) {
        sender->flags = (sender->flags & ~(uint32_t)GB_CNODE_NOFAILOVER) | (m->flags & GB_CNODE_NOFAILOVER);
        if (m->type == GB_BUS_PING && !(sender->flags & GB_CNODE_HANDSHAKE))
            update_address(l, sender, m);
    }
    if (!l->inbound && l->node && m->type == GB_BUS_PONG) {
        l->node->pong_received = now_ms(bus);
        l->node->ping_sent = 0;
        if (l->node->flags & GB_CNODE_PFAIL) {
            l->node->flags &= ~(uint32_t)GB_CNODE_PFAIL;
            bus->dirty = true;
        } else if (l->node->flags & GB_CNODE_FAIL) {
            /* Redis's clearNodeFailureIfNeeded: a replica, or a primary
             * without slots, or one failed long enough ago, is back */
            if ((l->node->flags & GB_CNODE_SLAVE) || l->node->nslots == 0 ||
                now_ms(bus) - l->node->fail_time > node_timeout(bus) * 2) {
                l->node->flags &= ~(uint32_t)GB_CNODE_FAIL;
                bus->dirty = true;
            }
        }
    }
    if (sender)
        process_sender_state(l, sender, m);
    return true;
}

static void process_fail(gb_cluster_bus *bus, gb_cluster_node *sender, const gb_bus_msg *m)
{
    if (!sender)
        return;
    gb_cluster_node *n = gb_cluster_lookup(state(bus), m->about, GB_CLUSTER_NAMELEN);
    if (n && !(n->flags & (GB_CNODE_FAIL | GB_CNODE_MYSELF))) {
        gb_log(GB_LOG_NOTICE, "FAIL message received from %.40s about %.40s", sender->name, n->name);
        n->flags = (n->flags | GB_CNODE_FAIL) & ~(uint32_t)GB_CNODE_PFAIL;
        n->fail_time = now_ms(bus);
        bus->dirty = true;
    }
}

/* A replica asks for this primary's vote (Redis's
 * clusterSendFailoverAuthIfNeeded and clusterSendFailoverAuth). */
static void process_auth_request(gb_cluster_bus *bus, gb_cluster_node *sender, const gb_bus_msg *m)
{
    if (!sender)
        return;
    const char *why;
    bool granted = gb_cluster_grant_vote(state(bus), sender, m->current_epoch, m->config_epoch, m->myslots,
                                         (m->mflags0 & GB_BUS_MFLAG0_FORCEACK) != 0, now_ms(bus), node_timeout(bus),
                                         &why);
    if (!granted) {
        if (why)
            gb_log(GB_LOG_WARNING, "Failover auth denied to %.40s: %s", sender->name, why);
        return;
    }
    bus->dirty = true;
    gb_log(GB_LOG_WARNING, "Failover auth granted to %.40s for epoch %llu", sender->name,
           (unsigned long long)state(bus)->current_epoch);
    if (!sender->link)
        return;
    gb_bus_self self = self_of(bus);
    uint8_t msg[GB_BUS_HEADER_LEN];
    gb_bus_write_header(msg, GB_BUS_FAILOVER_AUTH_ACK, GB_BUS_HEADER_LEN, &self);
    link_send(sender->link, msg, sizeof msg);
}

static void process_update(gb_cluster_bus *bus, gb_cluster_node *sender, const gb_bus_msg *m)
{
    if (!sender)
        return;
    gb_cluster_node *n = gb_cluster_lookup(state(bus), m->update_name, GB_CLUSTER_NAMELEN);
    if (!n || n->config_epoch >= m->update_epoch)
        return;
    if (n->flags & GB_CNODE_SLAVE)
        gb_cluster_set_primary(n);
    n->config_epoch = m->update_epoch;
    take_slots(bus, n, m->update_epoch, m->update_slots);
}

/* Another node's PUBLISH for this node's subscribers. */
static void process_publish(gb_cluster_bus *bus, gb_cluster_node *sender, const gb_bus_msg *m)
{
    if (!sender)
        return;
    gb_slice ch = gb_slice_make(m->channel, m->channel_len), msg = gb_slice_make(m->message, m->message_len);
    gb_pubsub_publish(bus->eng, m->type == GB_BUS_PUBLISHSHARD ? GB_PUBSUB_SHARD : GB_PUBSUB_CHANNEL, ch, msg);
}

/* The state's hook for a local PUBLISH/SPUBLISH: to every node, or to the
 * nodes of this node's shard (its primary and that primary's replicas). */
static void publish_hook(void *ctx, bool shard, const char *channel, size_t channel_len, const char *message,
                         size_t message_len)
{
    gb_cluster_bus *bus = ctx;
    gb_cluster *cl = state(bus);
    gb_bus_self self = self_of(bus);
    size_t len = gb_bus_publish_size(channel_len, message_len);
    uint8_t *msg = gb_malloc(len);
    gb_bus_write_publish(msg, shard ? GB_BUS_PUBLISHSHARD : GB_BUS_PUBLISH, &self, channel, channel_len, message,
                         message_len);
    const char *primary = cl->myself->replica_of[0] ? cl->myself->replica_of : cl->myself->name;
    for (size_t i = 0; i < cl->nnodes; i++) {
        gb_cluster_node *to = cl->nodes[i];
        if (to == cl->myself || !to->link || (to->flags & GB_CNODE_HANDSHAKE))
            continue;
        if (shard && strcmp(to->name, primary) != 0 && strcmp(to->replica_of, primary) != 0)
            continue;
        link_send(to->link, msg, len);
    }
    gb_free(msg);
}

/* MFSTART from a replica of this primary: writes pause, and a PING tells
 * the replica the offset to reach (Redis's CLUSTERMSG_TYPE_MFSTART). */
static void process_mfstart(gb_cluster_bus *bus, gb_cluster_node *sender)
{
    gb_cluster *cl = state(bus);
    if (!sender || strcmp(sender->replica_of, cl->myself->name) != 0)
        return;
    end_manual_failover(bus);
    cl->mf_end = now_ms(bus) + 5000;
    memcpy(cl->mf_replica, sender->name, sizeof cl->mf_replica);
    gb_pause_for(bus->eng, GB_PAUSE_FOR_FAILOVER, true);
    gb_log(GB_LOG_WARNING, "Manual failover requested by replica %.40s.", sender->name);
    if (sender->link)
        send_ping(sender->link, GB_BUS_PING);
}

/* A vote for this replica's election. */
static void process_auth_ack(gb_cluster_bus *bus, gb_cluster_node *sender, const gb_bus_msg *m)
{
    if (sender && (sender->flags & GB_CNODE_MASTER) && sender->nslots > 0 && m->current_epoch >= bus->auth_epoch &&
        bus->auth_sent)
        bus->auth_count++;
}

/* One whole message of l (Redis's clusterProcessPacket). False when the
 * link was closed. */
static bool process_message(bus_link *l, const uint8_t *p, size_t len)
{
    gb_cluster_bus *bus = l->bus;
    gb_cluster *cl = state(bus);
    gb_bus_msg m;
    const char *why = gb_bus_parse(p, len, &m);
    if (why) {
        gb_log(GB_LOG_WARNING, "Ignoring a cluster bus message: %s", why);
        return true;
    }
    cl->messages_received++;
    gb_cluster_node *sender = l->node && !(l->node->flags & GB_CNODE_HANDSHAKE)
                                  ? l->node
                                  : gb_cluster_lookup(cl, m.sender, GB_CLUSTER_NAMELEN);
    if (sender == cl->myself)
        sender = NULL; /* a message claiming to be this node */
    if (sender)
        sender->data_received = now_ms(bus);
    if (sender && l->inbound && !(sender->flags & GB_CNODE_HANDSHAKE))
        l->from = sender;
    if (sender && !(sender->flags & GB_CNODE_HANDSHAKE)) {
        if (m.current_epoch > cl->current_epoch) {
            cl->current_epoch = m.current_epoch;
            bus->dirty = true;
        }
        if (m.config_epoch > sender->config_epoch) {
            sender->config_epoch = m.config_epoch;
            bus->dirty = true;
        }
        sender->repl_offset = m.offset;
        /* CLUSTER FAILOVER: the paused primary's offset to reach */
        if (cl->mf_end && (cl->myself->flags & GB_CNODE_SLAVE) && strcmp(cl->myself->replica_of, sender->name) == 0 &&
            (m.mflags0 & GB_BUS_MFLAG0_PAUSED) && cl->mf_primary_offset == -1) {
            cl->mf_primary_offset = (int64_t)m.offset;
            gb_log(GB_LOG_WARNING, "Received replication offset for paused master manual failover: %lld",
                   (long long)cl->mf_primary_offset);
        }
    }
    switch (m.type) {
    case GB_BUS_PING:
    case GB_BUS_PONG:
    case GB_BUS_MEET:
        return process_ping_family(l, sender, &m);
    case GB_BUS_FAIL:
        process_fail(bus, sender, &m);
        return true;
    case GB_BUS_UPDATE:
        process_update(bus, sender, &m);
        return true;
    case GB_BUS_FAILOVER_AUTH_REQUEST:
        process_auth_request(bus, sender, &m);
        return true;
    case GB_BUS_FAILOVER_AUTH_ACK:
        process_auth_ack(bus, sender, &m);
        return true;
    case GB_BUS_PUBLISH:
    case GB_BUS_PUBLISHSHARD:
        process_publish(bus, sender, &m);
        return true;
    case GB_BUS_MFSTART:
        process_mfstart(bus, sender);
        return true;
    default:
        return true; /* PUBLISH, failover and module messages: not handled yet */
    }
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    bus_link *l = h->data;
    *buf = uv_buf_init(l->readbuf, sizeof l->readbuf);
}

/* Appends the message bytes that arrived; processes each whole message.
 * l may be dropped on the way (l->bus NULL afterwards). */
static void consume(bus_link *l, const uint8_t *p, size_t left)
{
    while (left > 0 && l->bus) {
        size_t need = l->want ? l->want - l->in_len : 8 - l->in_len;
        size_t take = left < need ? left : need;
        if (l->in_len + take > l->in_cap) {
            /* Grown as the bytes arrive (Redis's clusterReadHandler:
             * doubled below 1 MiB, then 1 MiB at a time), never to the
             * length a peer claims before sending it. */
            size_t cap = l->in_cap ? l->in_cap : 8;
            while (cap < l->in_len + take)
                cap = cap < (1u << 20) ? cap * 2 : cap + (1u << 20);
            size_t whole = l->want ? l->want : 8;
            l->in_cap = cap < whole ? cap : whole;
            l->in = gb_realloc(l->in, l->in_cap);
        }
        memcpy(l->in + l->in_len, p, take);
        l->in_len += take;
        p += take;
        left -= take;
        if (!l->want && l->in_len == 8) {
            uint32_t totlen;
            if (!gb_bus_check_prefix(l->in, &totlen)) {
                gb_log(GB_LOG_WARNING, "Bad message length or signature received from Cluster bus.");
                link_free(l);
                return;
            }
            l->want = totlen;
        }
        if (l->want && l->in_len == l->want) {
            bool open = process_message(l, l->in, l->in_len);
            if (!open || !l->bus)
                return;
            l->want = 0;
            l->in_len = 0;
            if (l->in_cap > 65536) {
                gb_free(l->in);
                l->in = NULL;
                l->in_cap = 0;
            }
        }
    }
}

static void link_established(bus_link *l);

/* Why a TLS link ends, at Redis's verbosity for a failed bus connection. */
static void tls_link_failed(bus_link *l, const char *why)
{
    const gb_cluster_node *n = l->inbound ? l->from : l->node;
    if (n)
        gb_log(GB_LOG_VERBOSE, "Connection with Node %.40s at %s:%d failed: %s", n->name, n->ip, n->cport, why);
    else
        gb_log(GB_LOG_VERBOSE, "Error accepting cluster node connection: %s", why);
    link_free(l);
}

/* tls-cluster: len bytes of records arrived on l (none: look at what the
 * session holds already). Advances the handshake of a link this node
 * dialled (an accepted one comes established from the handshaker, or
 * shakes hands here without one), then decrypts the messages. */
static void tls_input(bus_link *l, const char *data, size_t len)
{
    char err[256];
    if (len > 0 && gb_tls_feed(l->tls, data, len) != 0) {
        tls_link_failed(l, "out of memory");
        return;
    }
    if (!l->connected) {
        int rc = gb_tls_handshake(l->tls, err, sizeof err);
        tls_flush(l);
        if (rc < 0)
            tls_link_failed(l, err);
        if (rc <= 0)
            return;
        link_established(l);
    }
    while (l->bus) {
        ssize_t got = gb_tls_read(l->tls, l->bus->plain, sizeof l->bus->plain, err, sizeof err);
        tls_flush(l);
        if (got == GB_TLS_WANT_MORE)
            return;
        if (got < 0) {
            tls_link_failed(l, got == GB_TLS_CLOSED ? "connection closed" : err);
            return;
        }
        consume(l, (const uint8_t *)l->bus->plain, (size_t)got);
    }
}

static void read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    bus_link *l = s->data;
    if (!l->bus || nread == 0)
        return;
    if (nread < 0) {
        link_free(l);
        return;
    }
    gb_engine_update_time(l->bus->eng);
    if (l->tls)
        tls_input(l, buf->base, (size_t)nread);
    else
        consume(l, (const uint8_t *)buf->base, (size_t)nread);
}

static bool start_reading(bus_link *l)
{
    uv_tcp_nodelay(&l->tcp, 1);
    if (uv_read_start((uv_stream_t *)&l->tcp, alloc_cb, read_cb) == 0)
        return true;
    link_free(l);
    return false;
}

/* ---- connections ---- */

/* tls-cluster: the accepted socket goes to the handshaker's thread with a
 * session that requires the peer's certificate (Redis accepts bus links
 * with TLS_CLIENT_AUTH_YES); it comes back established (adopt_established)
 * or closed. libuv owns the accepted descriptor: the thread gets a copy. */
static void hand_to_handshaker(gb_cluster_bus *bus, uv_tcp_t *accepted)
{
    uv_os_fd_t fd;
    int copy = uv_fileno((uv_handle_t *)accepted, &fd) == 0 ? dup(fd) : -1;
    gb_tls_session *s = copy >= 0 ? gb_tls_session_new(bus->tls_accept_ctx, GB_TLS_AUTH_YES) : NULL;
    if (!s || !gb_tls_handshaker_add(bus->handshaker, copy, s, "", "")) {
        gb_log(GB_LOG_WARNING, "Error accepting cluster node connection: out of memory for its TLS handshake");
        gb_tls_session_free(s);
        if (copy >= 0)
            close(copy);
    }
}

static void on_connection(uv_stream_t *server, int status)
{
    gb_cluster_bus *bus = server->data;
    if (status < 0)
        return;
    gb_engine_update_time(bus->eng);
    bus_link *l = link_new(bus, true);
    if (uv_accept(server, (uv_stream_t *)&l->tcp) != 0) {
        link_free(l);
        return;
    }
    if (bus->handshaker) {
        hand_to_handshaker(bus, &l->tcp);
        link_free(l);
        return;
    }
    if (bus->tls_accept_ctx) { /* no handshake thread: the handshake runs here, as its bytes arrive */
        l->tls = gb_tls_session_new(bus->tls_accept_ctx, GB_TLS_AUTH_YES);
        if (!l->tls) {
            tls_link_failed(l, "out of memory");
            return;
        }
        start_reading(l);
        return;
    }
    if (start_reading(l))
        l->connected = true;
}

/* The handshaker's established sockets join the loop as inbound links;
 * what the peer sent after its Finished is read at once. */
static void adopt_established(gb_cluster_bus *bus, gb_tls_handoff *d)
{
    bus_link *l = link_new(bus, true);
    if (uv_tcp_open(&l->tcp, d->fd) != 0) {
        close(d->fd);
        gb_tls_session_free(d->session);
        link_free(l);
        return;
    }
    l->tls = d->session;
    l->connected = true;
    if (start_reading(l))
        tls_input(l, NULL, 0);
}

static void on_handshakes_done(uv_async_t *a)
{
    gb_cluster_bus *bus = a->data;
    gb_tls_handoff done[16];
    size_t n;
    gb_engine_update_time(bus->eng);
    while (bus->handshaker && (n = gb_tls_handshaker_take(bus->handshaker, done, GB_ARRAY_LEN(done))) > 0) {
        for (size_t i = 0; i < n; i++) {
            if (done[i].fd >= 0)
                adopt_established(bus, &done[i]);
            else
                gb_log(GB_LOG_VERBOSE, "Error accepting cluster node connection: %s", done[i].why);
        }
    }
}

/* Called on the handshaker's thread: only the thread-safe wake-up. */
static void wake_for_handshakes(void *ctx)
{
    gb_cluster_bus *bus = ctx;
    uv_async_send(&bus->handshakes_done);
}

/* A link this node dialled can carry messages (TCP connected and, with
 * tls-cluster, its handshake done): Redis's clusterLinkConnectHandler. */
static void link_established(bus_link *l)
{
    l->connected = true;
    if (!l->node)
        return;
    gb_cluster_node *n = l->node;
    /* Redis's clusterLinkConnectHandler: MEET for a node met by CLUSTER
     * MEET, else PING; the ping time of a ping still unanswered stays */
    int64_t old_ping = n->ping_sent;
    send_ping(l, (n->flags & GB_CNODE_MEET) ? GB_BUS_MEET : GB_BUS_PING);
    if (old_ping)
        n->ping_sent = old_ping;
    n->flags &= ~(uint32_t)GB_CNODE_MEET;
}

static void connected(uv_connect_t *req, int status)
{
    bus_link *l = req->data;
    if (!l->bus)
        return;
    if (status < 0) {
        link_free(l);
        return;
    }
    gb_engine_update_time(l->bus->eng);
    if (!start_reading(l))
        return;
    if (!l->bus->tls_dial_ctx) {
        link_established(l);
        return;
    }
    /* tls-cluster: the ClientHello now, the messages once the handshake is
     * done (tls_input); the handshake never blocks the loop. */
    char err[256];
    l->tls = gb_tls_client_session_new(l->bus->tls_dial_ctx);
    if (!l->tls) {
        tls_link_failed(l, "out of memory");
        return;
    }
    int rc = gb_tls_handshake(l->tls, err, sizeof err);
    tls_flush(l);
    if (rc < 0)
        tls_link_failed(l, err);
}

static void connect_node(gb_cluster_bus *bus, gb_cluster_node *n)
{
    struct sockaddr_storage sa;
    if (uv_ip4_addr(n->ip, n->cport, (struct sockaddr_in *)&sa) != 0 &&
        uv_ip6_addr(n->ip, n->cport, (struct sockaddr_in6 *)&sa) != 0)
        return;
    bus_link *l = link_new(bus, false);
    l->node = n;
    n->link = l;
    if (n->ping_sent == 0)
        n->ping_sent = now_ms(bus); /* a node never reached ages toward PFAIL from now */
    l->creq.data = l;
    if (uv_tcp_connect(&l->creq, &l->tcp, (const struct sockaddr *)&sa, connected) != 0)
        link_free(l);
}

/* ---- a replica's election (Redis's clusterHandleSlaveFailover) ---- */

static void broadcast_pong(gb_cluster_bus *bus)
{
    gb_cluster *cl = state(bus);
    for (size_t i = 0; i < cl->nnodes; i++) {
        gb_cluster_node *to = cl->nodes[i];
        if (to != cl->myself && to->link && !(to->flags & GB_CNODE_HANDSHAKE))
            send_ping(to->link, GB_BUS_PONG);
    }
}

/* The other replicas of primary learn this one's offset at once (Redis's
 * CLUSTER_BROADCAST_LOCAL_SLAVES when an election is scheduled): their
 * ranks, and so their delays, account for it. */
static void pong_sibling_replicas(gb_cluster_bus *bus, const gb_cluster_node *primary)
{
    gb_cluster *cl = state(bus);
    for (size_t i = 0; i < cl->nnodes; i++) {
        gb_cluster_node *to = cl->nodes[i];
        if (to != cl->myself && to->link && !(to->flags & GB_CNODE_HANDSHAKE) && (to->flags & GB_CNODE_SLAVE) &&
            strcmp(to->replica_of, primary->name) == 0)
            send_ping(to->link, GB_BUS_PONG);
    }
}

static int my_rank(gb_cluster_bus *bus, const gb_cluster_node *primary)
{
    return gb_cluster_replica_rank(state(bus), primary, (uint64_t)gb_repl_offset(bus->eng));
}

/* Siblings' offsets that arrived since the election was scheduled: a rank
 * now worse pushes the start back (Redis 7.0; not for a manual failover,
 * nor once the votes were asked for). */
static void refresh_rank(gb_cluster_bus *bus, const gb_cluster_node *primary)
{
    int rank = my_rank(bus, primary);
    int64_t added = gb_cluster_rank_added_delay(bus->auth_rank, rank);
    if (added == 0)
        return;
    bus->auth_time += added;
    bus->auth_rank = rank;
    gb_log(GB_LOG_WARNING, "Replica rank updated to #%d, added %lld milliseconds of delay.", rank, (long long)added);
}

/* Won: this replica serves its primary's slots under the new epoch
 * (Redis's clusterFailoverReplaceYourMaster). */
static void replace_primary(gb_cluster_bus *bus, gb_cluster_node *primary)
{
    gb_cluster *cl = state(bus);
    gb_cluster_node *me = cl->myself;
    gb_log(GB_LOG_WARNING, "Failover election won: I'm the new master.");
    gb_cluster_set_primary(me);
    gb_replica_unset_master(bus->eng);
    for (unsigned j = 0; j < GB_CLUSTER_SLOTS; j++)
        if (cl->slots[j] == primary) {
            gb_cluster_del_slot(cl, j);
            gb_cluster_add_slot(cl, me, j);
        }
    me->config_epoch = bus->auth_epoch;
    gb_log(GB_LOG_WARNING, "configEpoch set to %llu after successful failover", (unsigned long long)me->config_epoch);
    bus->auth_time = 0;
    end_manual_failover(bus);
    bus->dirty = true;
    gb_cluster_mode_changed_durably(bus->eng);
    broadcast_pong(bus);
}

/* CLUSTER FAILOVER's progress (Redis's manualFailoverCheckTimeout and
 * clusterHandleManualFailover). */
static void handle_manual_failover(gb_cluster_bus *bus)
{
    gb_cluster *cl = state(bus);
    if (!cl->mf_end)
        return;
    if (now_ms(bus) > cl->mf_end) {
        gb_log(GB_LOG_WARNING, "Manual failover timed out.");
        end_manual_failover(bus);
        return;
    }
    gb_cluster_node *me = cl->myself;
    if (!(me->flags & GB_CNODE_SLAVE))
        return;
    gb_cluster_node *primary = gb_cluster_lookup(cl, me->replica_of, GB_CLUSTER_NAMELEN);
    if (cl->mf_takeover && primary) {
        /* no election: a new epoch without consensus, and the slots */
        gb_cluster_bump_epoch(cl);
        bus->auth_epoch = me->config_epoch;
        replace_primary(bus, primary);
        return;
    }
    if (!cl->mf_can_start && primary && primary->link && bus->mfstart_for != cl->mf_end) {
        /* ask the primary to pause and tell its offset */
        bus->mfstart_for = cl->mf_end;
        gb_bus_self self = self_of(bus);
        uint8_t msg[GB_BUS_HEADER_LEN];
        gb_bus_write_header(msg, GB_BUS_MFSTART, GB_BUS_HEADER_LEN, &self);
        link_send(primary->link, msg, sizeof msg);
    }
    if (!cl->mf_can_start && cl->mf_primary_offset >= 0 && gb_repl_offset(bus->eng) == cl->mf_primary_offset) {
        cl->mf_can_start = true;
        gb_log(GB_LOG_WARNING, "All master replication stream processed, manual failover can start.");
    }
}

/* Milliseconds this replica's data has been without its primary beyond
 * the node timeout (Redis's data_age in clusterHandleSlaveFailover). */
static int64_t data_age_ms(gb_cluster_bus *bus)
{
    const gb_replica *r = gb_replica_of(bus->eng);
    int64_t age = r->state == GB_REPL_CONNECTED ? (int64_t)(bus->eng->now_mono_ms - r->last_io_ms)
                  : r->down_since_s ? ((int64_t)time(NULL) - (int64_t)r->down_since_s) * 1000
                                    : 0;
    int64_t timeout = node_timeout(bus);
    return age > timeout ? age - timeout : age;
}

/* Why this replica may not start an automatic failover now, or NULL; the
 * same reason is logged once per 10 s, as Redis's clusterLogCantFailover. */
static const char *cannot_fail_over(gb_cluster_bus *bus)
{
    const gb_settings *cfg = &bus->eng->cfg;
    if (!cfg->cluster_replica_validity_factor)
        return NULL;
    int64_t limit = (int64_t)cfg->repl_ping_replica_period * 1000 +
                    node_timeout(bus) * (int64_t)cfg->cluster_replica_validity_factor;
    if (data_age_ms(bus) <= limit)
        return NULL;
    return "Disconnected from master for longer than allowed. Please check the 'cluster-replica-validity-factor' "
           "configuration option.";
}

static void log_cannot_fail_over(gb_cluster_bus *bus, const gb_cluster_node *primary, const char *why)
{
    int64_t now = now_ms(bus);
    if (bus->cant_failover_why == why && now - bus->cant_failover_logged_ms < 10000)
        return;
    bus->cant_failover_why = why;
    /* nothing while the primary failed only recently: the line is for a
     * replica stalled for a long time */
    if (now - primary->fail_time < node_timeout(bus) + 5000)
        return;
    bus->cant_failover_logged_ms = now;
    gb_log(GB_LOG_WARNING, "Currently unable to failover: %s", why);
}

static void handle_replica_failover(gb_cluster_bus *bus)
{
    gb_cluster *cl = state(bus);
    gb_cluster_node *me = cl->myself;
    bool manual = cl->mf_end && cl->mf_can_start;
    /* cluster-replica-no-failover stops only an automatic failover */
    if (!(me->flags & GB_CNODE_SLAVE) || !me->replica_of[0] || (bus->eng->cfg.cluster_replica_no_failover && !manual))
        return;
    gb_cluster_node *primary = gb_cluster_lookup(cl, me->replica_of, GB_CLUSTER_NAMELEN);
    if (!primary || (!manual && !(primary->flags & GB_CNODE_FAIL)) || primary->nslots == 0)
        return;
    const char *why = manual ? NULL : cannot_fail_over(bus);
    if (why) {
        log_cannot_fail_over(bus, primary, why);
        return;
    }
    int64_t now = now_ms(bus), timeout = node_timeout(bus);
    int64_t auth_timeout = timeout * 2 < 2000 ? 2000 : timeout * 2;
    int64_t retry = auth_timeout * 2;
    if (now - bus->auth_time > retry) {
        int rank = manual ? 0 : my_rank(bus, primary);
        /* a manual failover starts at once (Redis: no delay, rank 0) */
        bus->auth_time =
            manual ? now : now + 500 + (int64_t)gb_random_below(500) + (int64_t)rank * GB_CLUSTER_RANK_DELAY_MS;
        bus->auth_rank = rank;
        bus->auth_count = 0;
        bus->auth_sent = false;
        if (manual)
            return;
        gb_log(GB_LOG_WARNING, "Start of election delayed for %lld milliseconds (rank #%d, offset %lld).",
               (long long)(bus->auth_time - now), rank, (long long)gb_repl_offset(bus->eng));
        pong_sibling_replicas(bus, primary);
        return;
    }
    if (!bus->auth_sent && !cl->mf_end)
        refresh_rank(bus, primary);
    if (now < bus->auth_time || now - bus->auth_time > auth_timeout)
        return; /* not yet, or this election expired: the next starts after retry */
    if (!bus->auth_sent) {
        cl->current_epoch++;
        bus->auth_epoch = cl->current_epoch;
        gb_log(GB_LOG_WARNING, "Starting a failover election for epoch %llu.", (unsigned long long)cl->current_epoch);
        gb_bus_self self = self_of(bus);
        if (manual)
            self.mflags0 |= GB_BUS_MFLAG0_FORCEACK; /* voters need not see the primary failed */
        uint8_t msg[GB_BUS_HEADER_LEN];
        gb_bus_write_header(msg, GB_BUS_FAILOVER_AUTH_REQUEST, GB_BUS_HEADER_LEN, &self);
        broadcast(bus, msg, sizeof msg);
        bus->auth_sent = true;
        bus->dirty = true;
        return;
    }
    if (bus->auth_count >= cl->size / 2 + 1)
        replace_primary(bus, primary);
}

/* ---- replica migration (Redis's clusterHandleSlaveMigration) ---- */

#define MIGRATION_DELAY_MS 5000 /* CLUSTER_SLAVE_MIGRATION_DELAY: an orphan's own replicas may still be switching */

static bool is_replica_of(const gb_cluster_node *r, const gb_cluster_node *p)
{
    return (r->flags & GB_CNODE_SLAVE) && strcmp(r->replica_of, p->name) == 0;
}

/* p's replicas that are not failing; with timed_out, not PFAIL either. */
static int working_replicas(const gb_cluster *cl, const gb_cluster_node *p, bool timed_out)
{
    uint32_t bad = GB_CNODE_FAIL | (timed_out ? GB_CNODE_PFAIL : 0);
    int n = 0;
    for (size_t i = 0; i < cl->nnodes; i++)
        n += is_replica_of(cl->nodes[i], p) && !(cl->nodes[i]->flags & bad);
    return n;
}

/* Redis's MIGRATE_TO: a primary becomes a valid target once it has a
 * replica and stops being one when none names it any more (a failing
 * replica still does). */
static void update_migrate_to(gb_cluster *cl)
{
    for (size_t i = 0; i < cl->nnodes; i++) {
        gb_cluster_node *p = cl->nodes[i];
        int listed = 0;
        for (size_t j = 0; j < cl->nnodes; j++)
            listed += is_replica_of(cl->nodes[j], p);
        if (listed > 0)
            p->flags |= GB_CNODE_MIGRATE_TO;
        else if (p->listed_replicas > 0)
            p->flags &= ~(uint32_t)GB_CNODE_MIGRATE_TO;
        p->listed_replicas = listed;
    }
}

static bool orphaned(const gb_cluster *cl, const gb_cluster_node *n)
{
    return (n->flags & GB_CNODE_MASTER) && !(n->flags & GB_CNODE_FAIL) && (n->flags & GB_CNODE_MIGRATE_TO) &&
           working_replicas(cl, n, false) == 0;
}

/* A replica of a primary with the most working replicas (at least two,
 * more than cluster-migration-barrier) moves to a primary that serves
 * slots but has lost its last working replica, after that has lasted 5 s;
 * of the replicas that could, the one with the smallest name moves. */
static void handle_replica_migration(gb_cluster_bus *bus)
{
    gb_cluster *cl = state(bus);
    gb_cluster_node *me = cl->myself;
    update_migrate_to(cl);
    if (!(me->flags & GB_CNODE_SLAVE) || !bus->eng->cfg.cluster_allow_replica_migration)
        return;
    gb_cluster_node *mine = gb_cluster_lookup(cl, me->replica_of, GB_CLUSTER_NAMELEN);
    if (!mine || cl->state != GB_CLUSTER_OK)
        return;
    int most = 0, orphans = 0;
    for (size_t i = 0; i < cl->nnodes; i++) {
        const gb_cluster_node *n = cl->nodes[i];
        if (n == me || (n->flags & (GB_CNODE_NOADDR | GB_CNODE_HANDSHAKE)) || !(n->flags & GB_CNODE_MASTER) ||
            (n->flags & GB_CNODE_FAIL))
            continue;
        int ok = working_replicas(cl, n, false);
        orphans += ok == 0 && n->nslots > 0 && (n->flags & GB_CNODE_MIGRATE_TO);
        most = ok > most ? ok : most;
    }
    if (!orphans || most < 2 || working_replicas(cl, mine, false) != most ||
        working_replicas(cl, mine, true) <= bus->eng->cfg.cluster_migration_barrier)
        return;
    gb_cluster_node *target = NULL;
    const gb_cluster_node *candidate = me;
    int64_t now = now_ms(bus);
    for (size_t i = 0; i < cl->nnodes; i++) {
        gb_cluster_node *n = cl->nodes[i];
        if (orphaned(cl, n)) {
            if (!target && n->nslots > 0)
                target = n;
            if (!n->orphaned_time)
                n->orphaned_time = now;
        } else {
            n->orphaned_time = 0;
        }
        if ((n->flags & GB_CNODE_MASTER) && working_replicas(cl, n, false) == most)
            for (size_t j = 0; j < cl->nnodes; j++)
                if (is_replica_of(cl->nodes[j], n) && memcmp(cl->nodes[j]->name, candidate->name, GB_CLUSTER_NAMELEN) < 0)
                    candidate = cl->nodes[j];
    }
    if (!target || candidate != me || now - target->orphaned_time <= MIGRATION_DELAY_MS)
        return;
    gb_log(GB_LOG_WARNING, "Migrating to orphaned master %.40s", target->name);
    gb_cluster_set_replica_of(cl, me, target->name);
    gb_replica_set_master(bus->eng, target->ip, target->port);
    bus->dirty = true;
}

/* ---- the cron (Redis's clusterCron, every 100 ms) ---- */

static bool handshake_expired(const gb_cluster_bus *bus, const gb_cluster_node *n)
{
    int64_t limit = node_timeout(bus) > HANDSHAKE_MIN_MS ? node_timeout(bus) : HANDSHAKE_MIN_MS;
    return (n->flags & GB_CNODE_HANDSHAKE) && now_ms(bus) - n->ctime > limit;
}

/* Every second: a PING to the node, among five picked at random, whose
 * last PONG is the oldest. */
static void ping_random_node(gb_cluster_bus *bus)
{
    gb_cluster *cl = state(bus);
    gb_cluster_node *oldest = NULL;
    for (int i = 0; i < 5 && cl->nnodes > 1; i++) {
        gb_cluster_node *n = cl->nodes[gb_random_below(cl->nnodes)];
        if (n == cl->myself || !n->link || !((bus_link *)n->link)->connected || n->ping_sent ||
            (n->flags & GB_CNODE_HANDSHAKE))
            continue;
        if (!oldest || n->pong_received < oldest->pong_received)
            oldest = n;
    }
    if (oldest)
        send_ping(oldest->link, GB_BUS_PING);
}

static void check_node(gb_cluster_bus *bus, gb_cluster_node *n)
{
    int64_t now = now_ms(bus), timeout = node_timeout(bus);
    bus_link *l = n->link;
    /* a TLS handshake not done within the timeout: dial again */
    if (l && l->tls && !l->connected && now - l->ctime > timeout) {
        tls_link_failed(l, "TLS handshake timed out");
        l = NULL;
    }
    /* a link silent for half the timeout while a ping waits: reconnect */
    if (l && l->connected && now - l->ctime > timeout && n->ping_sent && now - n->ping_sent > timeout / 2 &&
        now - n->data_received > timeout / 2) {
        link_free(l);
        l = NULL;
    }
    if (l && l->connected && n->ping_sent == 0 && now - n->pong_received > timeout / 2) {
        send_ping(l, GB_BUS_PING);
        return;
    }
    if (n->ping_sent == 0)
        return;
    int64_t delay = now - n->ping_sent;
    int64_t data_delay = now - n->data_received;
    if (data_delay < delay)
        delay = data_delay;
    if (delay > timeout && !(n->flags & (GB_CNODE_PFAIL | GB_CNODE_FAIL))) {
        gb_log(GB_LOG_NOTICE, "*** NODE %.40s possibly failing", n->name);
        n->flags |= GB_CNODE_PFAIL;
        bus->dirty = true;
    }
}

/* The flags myself takes from the configuration (Redis's
 * clusterUpdateMyselfFlags): nofailover, gossiped to the others. */
static void update_my_flags(gb_cluster_bus *bus)
{
    gb_cluster_node *me = state(bus)->myself;
    uint32_t want = bus->eng->cfg.cluster_replica_no_failover ? GB_CNODE_NOFAILOVER : 0;
    if ((me->flags & GB_CNODE_NOFAILOVER) != want) {
        me->flags = (me->flags & ~(uint32_t)GB_CNODE_NOFAILOVER) | want;
        bus->dirty = true;
    }
}

static void refresh_tls_contexts(gb_cluster_bus *bus);

/* cluster-link-sendbuf-limit: a link to or from a known node whose unsent
 * bytes exceed it is closed (Redis's freeClusterLinkOnBufferLimitReached);
 * the node is dialled again as after any lost link. */
static void free_links_over_limit(gb_cluster_bus *bus)
{
    long long limit = bus->eng->cfg.cluster_link_sendbuf_limit;
    if (limit <= 0)
        return;
    for (bus_link *l = bus->links, *next; l; l = next) {
        next = l->next;
        if (!l->node || !l->connected)
            continue;
        size_t queued = uv_stream_get_write_queue_size((uv_stream_t *)&l->tcp);
        if (queued <= (size_t)limit)
            continue;
        gb_log(GB_LOG_WARNING, "Freeing cluster link(%s node %.40s, used memory: %zu) due to exceeding send buffer "
               "memory limit.", l->inbound ? "from" : "to", l->node->name, queued);
        state(bus)->links_buffer_limit_exceeded++;
        link_free(l);
    }
}

static void bus_cron(void *ctx)
{
    gb_cluster_bus *bus = ctx;
    gb_cluster *cl = state(bus);
    gb_engine_update_time(bus->eng);
    refresh_tls_contexts(bus);
    for (size_t i = 0; i < cl->nnodes;) {
        gb_cluster_node *n = cl->nodes[i];
        if (n == cl->myself || (n->flags & GB_CNODE_NOADDR)) {
            i++;
            continue;
        }
        if (handshake_expired(bus, n)) {
            del_node(bus, n); /* the last node took its place at i */
            continue;
        }
        if (!n->link && n->ip[0] && n->cport)
            connect_node(bus, n);
        i++;
    }
    if (++bus->cron_ticks % 10 == 0)
        ping_random_node(bus);
    update_my_flags(bus);
    free_links_over_limit(bus);
    handle_manual_failover(bus);
    handle_replica_failover(bus);
    handle_replica_migration(bus);
    for (size_t i = 0; i < cl->nnodes; i++) {
        gb_cluster_node *n = cl->nodes[i];
        if (n != cl->myself && !(n->flags & (GB_CNODE_NOADDR | GB_CNODE_HANDSHAKE)))
            check_node(bus, n);
    }
    if (bus->dirty) {
        bus->dirty = false;
        gb_cluster_mode_changed_durably(bus->eng); /* epochs and votes among what the bus changes */
    }
}

/* ---- life ---- */

static void bus_shutdown(void *ctx)
{
    gb_cluster_bus *bus = ctx;
    if (bus->handshaker) {
        gb_tls_handshaker_stop(bus->handshaker); /* the sockets it holds close */
        bus->handshaker = NULL;
        uv_close((uv_handle_t *)&bus->handshakes_done, NULL);
    }
    while (bus->links)
        link_free(bus->links);
    if (bus->listening) {
        bus->listening = false;
        uv_close((uv_handle_t *)&bus->listener, NULL);
    }
    gb_cluster *cl = state(bus);
    for (size_t i = 0; i < cl->nnodes; i++)
        cl->nodes[i]->link = NULL;
    cl->node_removed = NULL;
    cl->publish = NULL;
    cl->links = NULL;
}

/* The first address of `bind` ("*": every IPv4 address). */
static void bus_bind_address(const gb_settings *cfg, char *out, size_t n)
{
    const char *b = cfg->bind && cfg->bind[0] ? cfg->bind : "*";
    while (*b == ' ' || *b == '-')
        b++;
    size_t k = strcspn(b, " ");
    snprintf(out, n, "%.*s", (int)k, b);
    if (strcmp(out, "*") == 0)
        snprintf(out, n, "0.0.0.0");
}

/* tls-cluster: the contexts of the bus's two sides, from the tls-*
 * settings (the dialling side shows tls-client-cert-file's identity, or
 * the server's). 0, or -1 with the reason in err. */
static int make_tls_contexts(gb_cluster_bus *bus, char *err, size_t errlen)
{
    const gb_settings *cfg = &bus->eng->cfg;
    bus->tls_config_changes = bus->eng->tls_config_changes;
    if (!cfg->tls_cluster)
        return 0;
    gb_tls_config tc = gb_tls_config_from(cfg);
    bus->tls_accept_ctx = gb_tls_context_new(&tc, err, errlen);
    if (bus->tls_accept_ctx)
        bus->tls_dial_ctx = gb_tls_client_context_new(&tc, err, errlen);
    return bus->tls_dial_ctx ? 0 : -1;
}

/* After a CONFIG SET of tls-* (a certificate rotated): new contexts for the
 * links made from now on, as Redis's bus takes the server's new context;
 * open links keep theirs. When they cannot be built the old ones stay. */
static void refresh_tls_contexts(gb_cluster_bus *bus)
{
    if (!bus->tls_accept_ctx || bus->tls_config_changes == bus->eng->tls_config_changes)
        return;
    if (!bus->eng->cfg.tls_cluster) { /* whether the bus is TLS is decided at start-up */
        bus->tls_config_changes = bus->eng->tls_config_changes;
        return;
    }
    gb_tls_context *accept_ctx = bus->tls_accept_ctx, *dial_ctx = bus->tls_dial_ctx;
    char err[512];
    if (make_tls_contexts(bus, err, sizeof err) != 0) {
        gb_tls_context_free(bus->tls_accept_ctx);
        bus->tls_accept_ctx = accept_ctx;
        bus->tls_dial_ctx = dial_ctx;
        gb_log(GB_LOG_WARNING, "Cluster bus: the TLS settings could not be applied, it keeps the old ones: %s", err);
        return;
    }
    gb_tls_context_free(accept_ctx);
    gb_tls_context_free(dial_ctx);
}

/* tls-cluster: the thread that shakes hands with accepted links; without
 * it (tls-handshake-thread no, or it cannot start) they shake hands on the
 * loop, without blocking it. */
static void start_handshaker(gb_cluster_bus *bus)
{
    const gb_settings *cfg = &bus->eng->cfg;
    if (!bus->tls_accept_ctx || !cfg->tls_handshake_thread ||
        uv_async_init(gb_loop_uv(bus->loop), &bus->handshakes_done, on_handshakes_done) != 0)
        return;
    bus->handshakes_done.data = bus;
    bus->handshaker = gb_tls_handshaker_start(&cfg->helper_cpus, wake_for_handshakes, bus);
    if (!bus->handshaker) {
        gb_log(GB_LOG_WARNING, "Cluster bus TLS handshakes run on the engine thread: the handshake thread could not start");
        uv_close((uv_handle_t *)&bus->handshakes_done, NULL);
    }
}

gb_cluster_bus *gb_cluster_bus_new(gb_engine *eng, gb_loop *loop, char *err, size_t errlen)
{
    err[0] = '\0';
    if (!eng->cluster)
        return NULL;
    gb_cluster_bus *bus = gb_calloc(1, sizeof *bus);
    bus->eng = eng;
    bus->loop = loop;
    const gb_settings *cfg = &eng->cfg;
    if (make_tls_contexts(bus, err, errlen) != 0)
        return bus; /* freed by the caller */
    int cport = gb_cluster_mode_bus_port(cfg);
    char addr[128];
    bus_bind_address(cfg, addr, sizeof addr);
    struct sockaddr_storage sa;
    int rc = uv_ip4_addr(addr, cport, (struct sockaddr_in *)&sa);
    if (rc != 0)
        rc = uv_ip6_addr(addr, cport, (struct sockaddr_in6 *)&sa);
    if (rc == 0)
        rc = uv_tcp_init(gb_loop_uv(loop), &bus->listener);
    if (rc == 0) {
        bus->listening = true;
        bus->listener.data = bus;
        rc = uv_tcp_bind(&bus->listener, (const struct sockaddr *)&sa, 0);
        if (rc == 0)
            rc = uv_listen((uv_stream_t *)&bus->listener, cfg->tcp_backlog, on_connection);
    }
    if (rc != 0) {
        snprintf(err, errlen, "Failed listening on port %d (cluster), aborting: %s", cport, uv_strerror(rc));
        if (bus->listening)
            uv_close((uv_handle_t *)&bus->listener, NULL);
        bus->listening = false;
        return bus; /* freed by the caller after the loop: the handle closes with it */
    }
    state(bus)->node_removed = node_removed;
    state(bus)->publish = publish_hook;
    state(bus)->links = links_hook;
    state(bus)->hook_ctx = bus;
    gb_loop_peer peer = {.name = "cluster-bus", .ctx = bus, .cron = bus_cron, .shutdown = bus_shutdown};
    if (gb_loop_add_peer(loop, &peer) != 0) {
        snprintf(err, errlen, "the event loop has no room for the cluster bus");
        return bus;
    }
    start_handshaker(bus);
    gb_log(GB_LOG_NOTICE, "Cluster bus listening on %s:%d%s", addr, cport, bus->tls_accept_ctx ? " (TLS)" : "");
    return bus;
}

void gb_cluster_bus_free(gb_cluster_bus *bus)
{
    if (!bus)
        return;
    gb_tls_context_free(bus->tls_accept_ctx);
    gb_tls_context_free(bus->tls_dial_ctx);
    gb_free(bus);
}
