/*
 * The cluster client (include/goblin/ring_cluster.h, docs/ring_cluster.md):
 * the slot map read with CLUSTER SLOTS, one connection per primary (a ring
 * when the node is on this host and can claim one, else a socket link),
 * the key positions of every command read once with COMMAND, and one
 * dispatcher that routes a call by slot and follows MOVED, ASK and
 * TRYAGAIN for the generic and the typed calls alike.
 *
 * Every count and length in a server's reply is checked before it is
 * used: a hostile node can make a call fail, never crash the library or
 * make it allocate beyond what the reply itself holds.
 */
#define _POSIX_C_SOURCE 200809L
#include "goblin/ring_cluster.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "transport/ring/client/ring_client_internal.h"
#include "transport/ring/client/ring_cluster_route.h"

#define COMMAND_NAME_MAX 64   /* "container|subcommand", NUL included */
#define COMMAND_TABLE_MAX 8192
#define TRYAGAIN_MAX_SLEEP_MS 100

typedef struct cluster_node {
    char host[GB_RCL_HOST_MAX];
    int port;
    char address[GB_RCL_HOST_MAX + 8]; /* "host:port" */
    gb_ring_client *link;               /* a ring client, or a socket link; NULL when dead */
    bool ring;
    /* The connection failed (the node exited or dropped us): the next call
     * routed here connects again, so a restarted node is used again. */
    bool dead;
} cluster_node;

/* What COMMAND says of one command (or "container|subcommand"). */
typedef struct command_keys {
    char name[COMMAND_NAME_MAX]; /* lower case */
    int first_key;               /* argv index of the first key, 0 = none fixed */
    bool movable;                /* keys found by COMMAND GETKEYS */
    bool container;              /* has subcommands: look up "name|sub" */
} command_keys;

struct gb_ring_cluster {
    gb_ring_proto proto;
    gb_ring_client_options opt;
    char *password, *username; /* opt's strings, owned */
    bool force_sockets;
    char seed_host[GB_RCL_HOST_MAX]; /* for slot-map entries that name no address */
    cluster_node *nodes;
    size_t nnodes;
    int last_node; /* keyless calls go here */
    int16_t owner[GB_RING_CLUSTER_SLOTS];
    command_keys *commands;
    size_t ncommands, command_cap;
    gb_ring_cluster_stats stats;
    char err[256];
};

static int fail(gb_ring_cluster *cl, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(gb_ring_cluster *cl, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cl->err, sizeof cl->err, fmt, ap);
    va_end(ap);
    return code;
}

const char *gb_ring_cluster_error(const gb_ring_cluster *cl) { return cl->err; }

/* ---- nodes ----------------------------------------------------------------------------- */

/* CONFIG GET unixsocket over a link: the absolute path, or NULL. */
static char *node_unixsocket(gb_ring_client *link)
{
    const char *argv[] = {"CONFIG", "GET", "unixsocket"};
    gb_reply *r = NULL;
    char *path = NULL;
    if (gb_ring_command(link, 3, argv, NULL, &r) == 0 && r->kind == GB_REPLY_ARRAY && r->nelem == 2 &&
        r->elem[1].kind == GB_REPLY_BULK && r->elem[1].str[0] == '/' && strlen(r->elem[1].str) == r->elem[1].len)
        path = strdup(r->elem[1].str);
    gb_reply_free(r);
    return path;
}

/* CLUSTER MYID over a connection, or "" (copied into id, 41 bytes). */
static void node_id(gb_ring_client *link, char id[41])
{
    const char *argv[] = {"CLUSTER", "MYID"};
    gb_reply *r = NULL;
    id[0] = '\0';
    if (gb_ring_command(link, 2, argv, NULL, &r) == 0 && r->kind == GB_REPLY_BULK && r->len == 40)
        memcpy(id, r->str, 41);
    gb_reply_free(r);
}

/* Whether the ring reaches the node the socket does: a unixsocket path
 * another server now holds (or a node that names one) must not route the
 * slot map's calls to a different node. */
static bool same_node(gb_ring_client *ring, gb_ring_client *tcp)
{
    char a[41], b[41];
    node_id(ring, a);
    node_id(tcp, b);
    return a[0] && strcmp(a, b) == 0;
}

/* A connection to host:port: a ring claimed on the node's Unix socket when
 * the node is on this host and has one, otherwise the socket itself. */
static int open_node(gb_ring_cluster *cl, cluster_node *n)
{
    char err[256];
    gb_ring_client *tcp;
    int rv = gb_rc_link_connect(n->host, n->port, NULL, &cl->opt, &tcp, err, sizeof err);
    if (rv != 0)
        return fail(cl, rv, "%s", err);
    n->link = tcp;
    n->ring = false;
    if (cl->force_sockets || !gb_rc_host_is_local(n->host))
        return 0;
    char *path = node_unixsocket(tcp);
    gb_ring_client *ring;
    /* A node that cannot claim (redis-server, a full ring pool) stays on
     * its socket. */
    if (path && gb_ring_client_connect(path, cl->proto, &cl->opt, &ring, err, sizeof err) == 0) {
        if (same_node(ring, tcp)) {
            gb_ring_client_close(tcp);
            n->link = ring;
            n->ring = true;
        } else {
            gb_ring_client_close(ring);
        }
    }
    free(path);
    return 0;
}

/* A node whose connection failed, connected again. */
static int reopen_node(gb_ring_cluster *cl, cluster_node *n)
{
    gb_ring_client_close(n->link);
    n->link = NULL;
    int rv = open_node(cl, n);
    n->dead = rv != 0;
    return rv;
}

/* The index of the node at host:port, connecting to it the first time (a
 * node that does not answer is kept, marked dead: the calls routed to it
 * try again, then read the map again); -1 (cl->err set) when there are
 * too many nodes or the host name is too long. */
static int node_at(gb_ring_cluster *cl, const char *host, int port)
{
    for (size_t i = 0; i < cl->nnodes; i++)
        if (cl->nodes[i].port == port && strcmp(cl->nodes[i].host, host) == 0)
            return (int)i;
    if (cl->nnodes >= GB_RING_CLUSTER_MAX_NODES) {
        fail(cl, GB_ERANGE, "more than %d cluster nodes", GB_RING_CLUSTER_MAX_NODES);
        return -1;
    }
    if (strlen(host) >= GB_RCL_HOST_MAX) {
        fail(cl, GB_EPROTO, "a node's host name is too long");
        return -1;
    }
    cluster_node *grown = realloc(cl->nodes, (cl->nnodes + 1) * sizeof *grown);
    if (!grown) {
        fail(cl, GB_ENOMEM, "out of memory");
        return -1;
    }
    cl->nodes = grown;
    cluster_node *n = &cl->nodes[cl->nnodes];
    memset(n, 0, sizeof *n);
    snprintf(n->host, sizeof n->host, "%s", host);
    n->port = port;
    snprintf(n->address, sizeof n->address, "%s:%d", host, port);
    n->dead = open_node(cl, n) != 0;
    return (int)cl->nnodes++;
}

/* ---- the slot map ---------------------------------------------------------------------- */

static bool reply_int_in(const gb_reply *r, int64_t lo, int64_t hi)
{
    return r->kind == GB_REPLY_INTEGER && r->integer >= lo && r->integer <= hi;
}

/* One CLUSTER SLOTS entry: [start, end, [ip, port, id, ...], replicas...]
 * into owner[]. */
static int map_range(gb_ring_cluster *cl, const gb_reply *e, int16_t *owner)
{
    if (e->kind != GB_REPLY_ARRAY || e->nelem < 3 || !reply_int_in(&e->elem[0], 0, GB_RING_CLUSTER_SLOTS - 1) ||
        !reply_int_in(&e->elem[1], e->elem[0].integer, GB_RING_CLUSTER_SLOTS - 1))
        return fail(cl, GB_EPROTO, "malformed CLUSTER SLOTS entry");
    const gb_reply *primary = &e->elem[2];
    if (primary->kind != GB_REPLY_ARRAY || primary->nelem < 2 || primary->elem[0].kind != GB_REPLY_BULK ||
        primary->elem[0].len >= GB_RCL_HOST_MAX || strlen(primary->elem[0].str) != primary->elem[0].len ||
        !reply_int_in(&primary->elem[1], 1, 65535))
        return fail(cl, GB_EPROTO, "malformed node in CLUSTER SLOTS");
    const char *host = primary->elem[0].str;
    /* "" or "?": the node does not know its address; it is the one asked */
    if (host[0] == '\0' || strcmp(host, "?") == 0)
        host = cl->seed_host;
    int node = node_at(cl, host, (int)primary->elem[1].integer);
    if (node < 0)
        return GB_EPROTO;
    for (int64_t s = e->elem[0].integer; s <= e->elem[1].integer; s++)
        owner[s] = (int16_t)node;
    return 0;
}

static int load_slot_map(gb_ring_cluster *cl, gb_ring_client *link)
{
    const char *argv[] = {"CLUSTER", "SLOTS"};
    gb_reply *r = NULL;
    int rv = gb_ring_command(link, 2, argv, NULL, &r);
    if (rv != 0)
        return fail(cl, rv, "CLUSTER SLOTS: %s", gb_ring_client_error(link));
    if (r->kind == GB_REPLY_ERROR) {
        fail(cl, GB_EPROTO, "CLUSTER SLOTS: %s", r->str);
        gb_reply_free(r);
        return GB_EPROTO;
    }
    if (r->kind != GB_REPLY_ARRAY || r->nelem > GB_RING_CLUSTER_SLOTS) {
        gb_reply_free(r);
        return fail(cl, GB_EPROTO, "CLUSTER SLOTS: not a slot map");
    }
    int16_t owner[GB_RING_CLUSTER_SLOTS];
    memset(owner, 0xff, sizeof owner); /* -1: nobody known */
    for (size_t i = 0; i < r->nelem && rv == 0; i++)
        rv = map_range(cl, &r->elem[i], owner);
    gb_reply_free(r);
    if (rv == 0)
        memcpy(cl->owner, owner, sizeof owner);
    return rv;
}

int gb_ring_cluster_refresh(gb_ring_cluster *cl)
{
    if (cl->nnodes == 0)
        return fail(cl, GB_ECLOSED, "no node connected");
    /* the nodes in turn, the last one used first: one may have gone */
    int rv = fail(cl, GB_ECLOSED, "no node answered CLUSTER SLOTS");
    for (size_t k = 0; k < cl->nnodes && rv != 0; k++) {
        /* by index: reading the map may add nodes, which moves the array */
        size_t i = ((size_t)cl->last_node + k) % cl->nnodes;
        if (cl->nodes[i].dead && reopen_node(cl, &cl->nodes[i]) != 0)
            continue;
        rv = load_slot_map(cl, cl->nodes[i].link);
        if (rv == GB_ECLOSED)
            cl->nodes[i].dead = true;
    }
    return rv;
}

/* ---- key positions ---------------------------------------------------------------------- */

static int compare_command(const void *a, const void *b)
{
    return strcmp(((const command_keys *)a)->name, ((const command_keys *)b)->name);
}

static void lower_copy(char *dst, const char *src, size_t len)
{
    for (size_t i = 0; i < len; i++)
        dst[i] = (char)tolower((unsigned char)src[i]);
    dst[len] = '\0';
}

/* One COMMAND entry, [name, arity, flags, first, last, step, ...,
 * subcommands (index 9)], and its subcommands, into the table. */
static void add_command(gb_ring_cluster *cl, const gb_reply *e, int depth)
{
    if (e->kind != GB_REPLY_ARRAY || e->nelem < 6 || e->elem[0].kind != GB_REPLY_BULK ||
        e->elem[0].len >= COMMAND_NAME_MAX || e->elem[3].kind != GB_REPLY_INTEGER ||
        cl->ncommands >= cl->command_cap)
        return;
    command_keys *c = &cl->commands[cl->ncommands];
    memset(c, 0, sizeof *c);
    lower_copy(c->name, e->elem[0].str, e->elem[0].len);
    c->first_key = e->elem[3].integer > 0 && e->elem[3].integer < 1000 ? (int)e->elem[3].integer : 0;
    const gb_reply *flags = &e->elem[2];
    for (size_t i = 0; flags->kind == GB_REPLY_ARRAY && i < flags->nelem; i++)
        if (flags->elem[i].str && strcmp(flags->elem[i].str, "movablekeys") == 0)
            c->movable = true;
    const gb_reply *subs = e->nelem > 9 ? &e->elem[9] : NULL;
    c->container = subs && subs->kind == GB_REPLY_ARRAY && subs->nelem > 0;
    cl->ncommands++;
    if (c->container && depth == 0)
        for (size_t i = 0; i < subs->nelem; i++)
            add_command(cl, &subs->elem[i], 1);
}

/* How many table rows a COMMAND reply fills: its commands and their
 * subcommands, COMMAND_TABLE_MAX at most. */
static size_t command_entries(const gb_reply *r)
{
    size_t n = r->nelem;
    for (size_t i = 0; i < r->nelem; i++) {
        const gb_reply *e = &r->elem[i];
        if (e->kind == GB_REPLY_ARRAY && e->nelem > 9 && e->elem[9].kind == GB_REPLY_ARRAY)
            n += e->elem[9].nelem;
    }
    return n < COMMAND_TABLE_MAX ? n + 1 : COMMAND_TABLE_MAX;
}

/* COMMAND, once at connect. Without it every call still arrives: routed
 * to any node, it follows the MOVED that comes back. */
static void load_commands(gb_ring_cluster *cl, gb_ring_client *link)
{
    const char *argv[] = {"COMMAND"};
    gb_reply *r = NULL;
    if (gb_ring_command(link, 1, argv, NULL, &r) != 0)
        return;
    if (r->kind == GB_REPLY_ARRAY) {
        cl->command_cap = command_entries(r);
        cl->commands = calloc(cl->command_cap, sizeof *cl->commands);
        for (size_t i = 0; cl->commands && i < r->nelem; i++)
            add_command(cl, &r->elem[i], 0);
        if (cl->commands)
            qsort(cl->commands, cl->ncommands, sizeof *cl->commands, compare_command);
    }
    gb_reply_free(r);
}

static const command_keys *find_command(const gb_ring_cluster *cl, const char *name, size_t len, const char *sub,
                                        size_t sublen)
{
    command_keys key;
    if (len + (sub ? sublen + 1 : 0) >= COMMAND_NAME_MAX || !cl->commands)
        return NULL;
    lower_copy(key.name, name, len);
    if (sub) {
        key.name[len] = '|';
        lower_copy(key.name + len + 1, sub, sublen);
    }
    return bsearch(&key, cl->commands, cl->ncommands, sizeof key, compare_command);
}

static size_t arg_len(const char *const *argv, const size_t *lens, int i)
{
    return lens ? lens[i] : strlen(argv[i]);
}

/* COMMAND GETKEYS for a command whose keys move (EVAL, XREAD, ZUNION...):
 * the slot of the first key, or -1. */
static int slot_by_getkeys(gb_ring_cluster *cl, int argc, const char *const *argv, const size_t *lens)
{
    if (cl->nnodes == 0 || cl->nodes[cl->last_node].dead || argc > 1024 * 1024)
        return -1;
    const char **av = malloc((size_t)(argc + 2) * sizeof *av);
    size_t *al = malloc((size_t)(argc + 2) * sizeof *al);
    int slot = -1;
    if (av && al) {
        av[0] = "COMMAND";
        al[0] = 7;
        av[1] = "GETKEYS";
        al[1] = 7;
        for (int i = 0; i < argc; i++) {
            av[i + 2] = argv[i];
            al[i + 2] = arg_len(argv, lens, i);
        }
        gb_reply *r = NULL;
        gb_ring_client *link = cl->nodes[cl->last_node].link;
        if (gb_ring_command(link, argc + 2, av, al, &r) == 0 && r->kind == GB_REPLY_ARRAY && r->nelem > 0 &&
            r->elem[0].kind == GB_REPLY_BULK)
            slot = gb_rcl_key_slot(r->elem[0].str, r->elem[0].len);
        gb_reply_free(r);
    }
    free(av);
    free(al);
    return slot;
}

/* The slot a command's first key hashes to, or -1 for a keyless one. */
static int command_slot(gb_ring_cluster *cl, int argc, const char *const *argv, const size_t *lens)
{
    const command_keys *c = find_command(cl, argv[0], arg_len(argv, lens, 0), NULL, 0);
    if (c && c->container && argc > 1) {
        const command_keys *sub = find_command(cl, argv[0], arg_len(argv, lens, 0), argv[1], arg_len(argv, lens, 1));
        c = sub ? sub : c;
    }
    if (!c)
        return -1;
    if (c->first_key > 0 && c->first_key < argc)
        return gb_rcl_key_slot(argv[c->first_key], arg_len(argv, lens, c->first_key));
    if (c->movable)
        return slot_by_getkeys(cl, argc, argv, lens);
    return -1;
}

/* ---- routing and redirections ------------------------------------------------------------ */

/* One try of a call on one node: 0, or an error with *rd filled when the
 * server's refusal was a redirection. */
typedef int (*attempt_fn)(gb_ring_client *link, void *ctx, gb_rcl_redirect *rd);

static int route(const gb_ring_cluster *cl, int slot)
{
    if (slot >= 0 && cl->owner[slot] >= 0)
        return cl->owner[slot];
    /* keyless, or a slot nobody serves: the node used last, if alive */
    for (size_t k = 0; k < cl->nnodes; k++) {
        size_t i = ((size_t)cl->last_node + k) % cl->nnodes;
        if (!cl->nodes[i].dead)
            return (int)i;
    }
    return cl->nnodes ? cl->last_node : -1;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int send_asking(gb_ring_cluster *cl, gb_ring_client *link)
{
    const char *argv[] = {"ASKING"};
    gb_reply *r = NULL;
    int rv = gb_ring_command(link, 1, argv, NULL, &r);
    if (rv != 0)
        fail(cl, rv, "ASKING: %s", gb_ring_client_error(link));
    else if (r->kind != GB_REPLY_STATUS)
        rv = fail(cl, GB_EPROTO, "ASKING: %s", r->kind == GB_REPLY_ERROR ? r->str : "unexpected reply");
    gb_reply_free(r);
    return rv;
}

/* Runs attempt on the node that serves slot, following MOVED (the slot is
 * remapped), ASK (ASKING then the call on the named node, the map kept)
 * and TRYAGAIN (a short sleep), GB_RING_CLUSTER_MAX_REDIRECTS times at most. */
static int dispatch(gb_ring_cluster *cl, int slot, attempt_fn attempt, void *ctx)
{
    int node = route(cl, slot);
    bool asking = false, refreshed = false;
    unsigned pause_ms = 1;
    for (int hop = 0;; hop++) {
        if (node < 0)
            return fail(cl, GB_ECLOSED, "no cluster node to send to");
        cluster_node *cn = &cl->nodes[node];
        if (cn->dead && reopen_node(cl, cn) != 0) {
            /* Gone for good, perhaps (a failover): once per call, ask the
             * others who serves the slot now. */
            if (refreshed || asking)
                return GB_ECLOSED;
            refreshed = true;
            char why[sizeof cl->err];
            snprintf(why, sizeof why, "%s", cl->err);
            if (gb_ring_cluster_refresh(cl) != 0 || route(cl, slot) == node)
                return fail(cl, GB_ECLOSED, "%s", why);
            node = route(cl, slot);
            continue;
        }
        gb_ring_client *link = cn->link;
        if (asking) {
            int rv = send_asking(cl, link);
            if (rv != 0) {
                cn->dead = rv == GB_ECLOSED;
                return rv;
            }
        }
        gb_rcl_redirect rd = {0};
        int rv = attempt(link, ctx, &rd);
        if (rv == 0) {
            cl->last_node = node;
            return 0;
        }
        /* Not retried here: the node may have run the command before it
         * went. The next call routed to it connects again. */
        if (rv == GB_ECLOSED)
            cn->dead = true;
        if (rd.kind == GB_RCL_NOT_REDIRECT)
            return fail(cl, rv, "%s", gb_ring_client_error(link));
        if (hop >= GB_RING_CLUSTER_MAX_REDIRECTS)
            return fail(cl, GB_EPROTO, "too many cluster redirections (%d), the last from %s", hop,
                        cl->nodes[node].address);
        asking = false;
        if (rd.kind == GB_RCL_TRYAGAIN) {
            cl->stats.tryagain++;
            sleep_ms(pause_ms);
            pause_ms = pause_ms * 2 > TRYAGAIN_MAX_SLEEP_MS ? TRYAGAIN_MAX_SLEEP_MS : pause_ms * 2;
            node = route(cl, slot);
            continue;
        }
        /* ":port": the node that answered did not know the host */
        char host[GB_RCL_HOST_MAX];
        snprintf(host, sizeof host, "%s", rd.host[0] ? rd.host : cl->nodes[node].host);
        node = node_at(cl, host, rd.port);
        if (node < 0)
            return GB_EPROTO;
        if (rd.kind == GB_RCL_MOVED) {
            cl->stats.moved++;
            cl->owner[rd.slot] = (int16_t)node;
        } else {
            cl->stats.ask++;
            asking = true;
        }
    }
}

/* A typed call's refusal: its words, read for a redirection. */
static int typed_result(gb_ring_client *link, int rv, gb_rcl_redirect *rd)
{
    if (rv == GB_EPROTO)
        gb_rcl_parse_redirect(link->err, strlen(link->err), rd);
    return rv;
}

/* ---- the generic call -------------------------------------------------------------------- */

typedef struct generic_call {
    int argc;
    const char *const *argv;
    const size_t *lens;
    gb_reply *reply;
} generic_call;

static int attempt_generic(gb_ring_client *link, void *ctx, gb_rcl_redirect *rd)
{
    generic_call *c = ctx;
    gb_reply *r = NULL;
    int rv = gb_ring_command(link, c->argc, c->argv, c->lens, &r);
    if (rv != 0)
        return rv;
    if (r->kind == GB_REPLY_ERROR && gb_rcl_parse_redirect(r->str, r->len, rd) != GB_RCL_NOT_REDIRECT) {
        gb_rc_fail(link, "%s", r->str);
        gb_reply_free(r);
        return GB_EPROTO;
    }
    c->reply = r;
    return 0;
}

int gb_ring_cluster_command(gb_ring_cluster *cl, int argc, const char *const *argv, const size_t *lens,
                            gb_reply **reply)
{
    *reply = NULL;
    if (argc <= 0)
        return fail(cl, GB_EINVAL, "a command needs at least its name");
    generic_call c = {argc, argv, lens, NULL};
    int rv = dispatch(cl, command_slot(cl, argc, argv, lens), attempt_generic, &c);
    if (rv == 0)
        *reply = c.reply;
    return rv;
}

/* ---- typed calls: each an argument block and a one-line attempt --------------------------- */

typedef struct typed_call {
    const void *key;
    size_t klen;
    const void *a, *b;          /* value / field / member */
    size_t alen, blen;
    size_t n;                   /* pairs or elements */
    const void *const *v1, *const *v2;
    const size_t *l1, *l2;
    const double *scores;
    int flags;
    int64_t num;                /* ttl, increment */
    void *buf;
    size_t cap;
    int64_t *out;
    double *dout;
    int *found;
} typed_call;

static int attempt_get(gb_ring_client *l, void *x, gb_rcl_redirect *rd)
{
    typed_call *c = x;
    return typed_result(l, gb_ring_get(l, c->key, c->klen, c->buf, c->cap, c->out), rd);
}
static int attempt_set(gb_ring_client *l, void *x, gb_rcl_redirect *rd)
{
    typed_call *c = x;
    return typed_result(l, gb_ring_set(l, c->key, c->klen, c->a, c->alen, c->num), rd);
}
static int attempt_del(gb_ring_client *l, void *x, gb_rcl_redirect *rd)
{
    typed_call *c = x;
    return typed_result(l, gb_ring_del(l, c->key, c->klen, c->out), rd);
}
static int attempt_incrby(gb_ring_client *l, void *x, gb_rcl_redirect *rd)
{
    typed_call *c = x;
    return typed_result(l, gb_ring_incrby(l, c->key, c->klen, c->num, c->out), rd);
}
static int attempt_hset(gb_ring_client *l, void *x, gb_rcl_redirect *rd)
{
    typed_call *c = x;
    return typed_result(l, gb_ring_hset(l, c->key, c->klen, c->n, c->v1, c->l1, c->v2, c->l2, c->out), rd);
}
static int attempt_hget(gb_ring_client *l, void *x, gb_rcl_redirect *rd)
{
    typed_call *c = x;
    return typed_result(l, gb_ring_hget(l, c->key, c->klen, c->a, c->alen, c->buf, c->cap, c->out), rd);
}
static int attempt_zadd(gb_ring_client *l, void *x, gb_rcl_redirect *rd)
{
    typed_call *c = x;
    return typed_result(
        l, gb_ring_zadd(l, c->key, c->klen, c->flags, c->n, c->scores, c->v1, c->l1, c->out, c->dout), rd);
}
static int attempt_zscore(gb_ring_client *l, void *x, gb_rcl_redirect *rd)
{
    typed_call *c = x;
    return typed_result(l, gb_ring_zscore(l, c->key, c->klen, c->a, c->alen, c->dout, c->found), rd);
}
static int attempt_lpush(gb_ring_client *l, void *x, gb_rcl_redirect *rd)
{
    typed_call *c = x;
    return typed_result(l, gb_ring_lpush(l, c->key, c->klen, c->n, c->v1, c->l1, c->out), rd);
}
static int attempt_rpop(gb_ring_client *l, void *x, gb_rcl_redirect *rd)
{
    typed_call *c = x;
    return typed_result(l, gb_ring_rpop(l, c->key, c->klen, c->buf, c->cap, c->out), rd);
}

static int typed(gb_ring_cluster *cl, attempt_fn attempt, typed_call *c)
{
    return dispatch(cl, gb_rcl_key_slot(c->key, c->klen), attempt, c);
}

int gb_ring_cluster_get(gb_ring_cluster *cl, const void *key, size_t klen, void *buf, size_t cap, int64_t *len)
{
    typed_call c = {.key = key, .klen = klen, .buf = buf, .cap = cap, .out = len};
    return typed(cl, attempt_get, &c);
}

int gb_ring_cluster_set(gb_ring_cluster *cl, const void *key, size_t klen, const void *val, size_t vlen,
                        int64_t ttl_ms)
{
    typed_call c = {.key = key, .klen = klen, .a = val, .alen = vlen, .num = ttl_ms};
    return typed(cl, attempt_set, &c);
}

int gb_ring_cluster_del(gb_ring_cluster *cl, const void *key, size_t klen, int64_t *deleted)
{
    typed_call c = {.key = key, .klen = klen, .out = deleted};
    return typed(cl, attempt_del, &c);
}

int gb_ring_cluster_incrby(gb_ring_cluster *cl, const void *key, size_t klen, int64_t by, int64_t *value)
{
    typed_call c = {.key = key, .klen = klen, .num = by, .out = value};
    return typed(cl, attempt_incrby, &c);
}

int gb_ring_cluster_hset(gb_ring_cluster *cl, const void *key, size_t klen, size_t n, const void *const *fields,
                         const size_t *flens, const void *const *values, const size_t *vlens, int64_t *added)
{
    typed_call c = {.key = key, .klen = klen, .n = n, .v1 = fields, .l1 = flens, .v2 = values, .l2 = vlens,
                    .out = added};
    return typed(cl, attempt_hset, &c);
}

int gb_ring_cluster_hget(gb_ring_cluster *cl, const void *key, size_t klen, const void *field, size_t flen, void *buf,
                         size_t cap, int64_t *len)
{
    typed_call c = {.key = key, .klen = klen, .a = field, .alen = flen, .buf = buf, .cap = cap, .out = len};
    return typed(cl, attempt_hget, &c);
}

int gb_ring_cluster_zadd(gb_ring_cluster *cl, const void *key, size_t klen, int flags, size_t n, const double *scores,
                         const void *const *members, const size_t *mlens, int64_t *result, double *score)
{
    typed_call c = {.key = key, .klen = klen, .flags = flags, .n = n, .scores = scores, .v1 = members, .l1 = mlens,
                    .out = result, .dout = score};
    return typed(cl, attempt_zadd, &c);
}

int gb_ring_cluster_zscore(gb_ring_cluster *cl, const void *key, size_t klen, const void *member, size_t mlen,
                           double *score, int *found)
{
    typed_call c = {.key = key, .klen = klen, .a = member, .alen = mlen, .dout = score, .found = found};
    return typed(cl, attempt_zscore, &c);
}

int gb_ring_cluster_lpush(gb_ring_cluster *cl, const void *key, size_t klen, size_t n, const void *const *vals,
                          const size_t *vlens, int64_t *len)
{
    typed_call c = {.key = key, .klen = klen, .n = n, .v1 = vals, .l1 = vlens, .out = len};
    return typed(cl, attempt_lpush, &c);
}

int gb_ring_cluster_rpop(gb_ring_cluster *cl, const void *key, size_t klen, void *buf, size_t cap, int64_t *len)
{
    typed_call c = {.key = key, .klen = klen, .buf = buf, .cap = cap, .out = len};
    return typed(cl, attempt_rpop, &c);
}

/* ---- connect, close, diagnostics ----------------------------------------------------------- */

static bool any_node_alive(const gb_ring_cluster *cl)
{
    for (size_t i = 0; i < cl->nnodes; i++)
        if (!cl->nodes[i].dead)
            return true;
    return false;
}

static int copy_options(gb_ring_cluster *cl, const gb_ring_client_options *opt)
{
    if (!opt)
        return 0;
    cl->opt = *opt;
    cl->password = opt->password ? strdup(opt->password) : NULL;
    cl->username = opt->username ? strdup(opt->username) : NULL;
    if ((opt->password && !cl->password) || (opt->username && !cl->username))
        return GB_ENOMEM;
    cl->opt.password = cl->password;
    cl->opt.username = cl->username;
    return 0;
}

/* The seed's own connection, a socket link (Unix path or host:port). */
static int connect_seed(gb_ring_cluster *cl, const char *seed, gb_ring_client **link, char *err, size_t errlen)
{
    if (strchr(seed, '/')) {
        snprintf(cl->seed_host, sizeof cl->seed_host, "127.0.0.1");
        return gb_rc_link_connect(NULL, 0, seed, &cl->opt, link, err, errlen);
    }
    int port;
    if (!gb_rcl_split_address(seed, strlen(seed), cl->seed_host, sizeof cl->seed_host, &port)) {
        snprintf(err, errlen, "the seed is neither a socket path nor host:port: %s", seed);
        return GB_EINVAL;
    }
    return gb_rc_link_connect(cl->seed_host, port, NULL, &cl->opt, link, err, errlen);
}

int gb_ring_cluster_connect(const char *seed, gb_ring_proto proto, const gb_ring_client_options *opt,
                            gb_ring_cluster **out, char *err, size_t errlen)
{
    *out = NULL;
    if (proto != GB_RING_SBE && proto != GB_RING_RESP) {
        snprintf(err, errlen, "protocol must be GB_RING_SBE or GB_RING_RESP");
        return GB_EINVAL;
    }
    gb_ring_cluster *cl = calloc(1, sizeof *cl);
    if (!cl) {
        snprintf(err, errlen, "out of memory");
        return GB_ENOMEM;
    }
    cl->proto = proto;
    const char *force = getenv("GOBLIN_RING_CLUSTER_SOCKETS");
    cl->force_sockets = force && strcmp(force, "1") == 0;
    memset(cl->owner, 0xff, sizeof cl->owner);
    gb_ring_client *seed_link = NULL;
    int rv = copy_options(cl, opt);
    if (rv == 0)
        rv = connect_seed(cl, seed, &seed_link, err, errlen);
    else
        snprintf(err, errlen, "out of memory");
    if (rv == 0) {
        rv = load_slot_map(cl, seed_link);
        if (rv == 0)
            load_commands(cl, seed_link);
        else
            snprintf(err, errlen, "%s", cl->err);
    }
    gb_ring_client_close(seed_link);
    if (rv == 0 && cl->nnodes == 0) {
        snprintf(err, errlen, "the cluster has no slots assigned");
        rv = GB_EPROTO;
    }
    if (rv == 0 && !any_node_alive(cl)) {
        snprintf(err, errlen, "no node of the slot map answers: %s", cl->err);
        rv = GB_ECLOSED;
    }
    if (rv != 0) {
        gb_ring_cluster_close(cl);
        return rv;
    }
    *out = cl;
    return 0;
}

void gb_ring_cluster_close(gb_ring_cluster *cl)
{
    if (!cl)
        return;
    for (size_t i = 0; i < cl->nnodes; i++)
        gb_ring_client_close(cl->nodes[i].link);
    free(cl->nodes);
    free(cl->commands);
    free(cl->password);
    free(cl->username);
    free(cl);
}

size_t gb_ring_cluster_node_count(const gb_ring_cluster *cl) { return cl->nnodes; }

const char *gb_ring_cluster_node_address(const gb_ring_cluster *cl, size_t i)
{
    return i < cl->nnodes ? cl->nodes[i].address : NULL;
}

int gb_ring_cluster_node_uses_ring(const gb_ring_cluster *cl, size_t i)
{
    return i < cl->nnodes ? cl->nodes[i].ring : -1;
}

int gb_ring_cluster_slot_node(const gb_ring_cluster *cl, int slot)
{
    return slot >= 0 && slot < GB_RING_CLUSTER_SLOTS ? cl->owner[slot] : -1;
}

gb_ring_client *gb_ring_cluster_node_client(gb_ring_cluster *cl, size_t i)
{
    return i < cl->nnodes ? cl->nodes[i].link : NULL;
}

void gb_ring_cluster_get_stats(const gb_ring_cluster *cl, gb_ring_cluster_stats *out) { *out = cl->stats; }
