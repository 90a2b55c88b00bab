#define _XOPEN_SOURCE 700 /* mkstemp's fdopen, fsync */
#include "engine/cluster/cluster.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "engine/base/common.h"
#include "engine/base/mem.h"
#include "engine/base/random.h"
#include "engine/base/splitargs.h"
#include "engine/base/strbuf.h"
#include "platform/file.h"

/* Redis's CLUSTER_WRITABLE_DELAY: a primary that just started does not
 * say OK at once, so that a partitioned node rejoining has time to learn
 * the configuration has changed. */
#define WRITABLE_DELAY_MS 2000

static gb_cluster_node *node_new(const char *name, uint32_t flags)
{
    gb_cluster_node *n = gb_calloc(1, sizeof *n);
    if (name) {
        memcpy(n->name, name, GB_CLUSTER_NAMELEN);
    } else {
        static const char hex[] = "0123456789abcdef";
        for (int i = 0; i < GB_CLUSTER_NAMELEN; i++)
            n->name[i] = hex[gb_random_below(16)];
    }
    n->name[GB_CLUSTER_NAMELEN] = '\0';
    n->flags = flags;
    n->hostname = gb_strdup("");
    return n;
}

static void node_free(gb_cluster_node *n)
{
    gb_free(n->reports);
    gb_free(n->hostname);
    gb_free(n);
}

static void add_node(gb_cluster *cl, gb_cluster_node *n)
{
    if (cl->nnodes == cl->nodecap) {
        cl->nodecap = cl->nodecap ? cl->nodecap * 2 : 8;
        cl->nodes = gb_realloc(cl->nodes, cl->nodecap * sizeof *cl->nodes);
    }
    cl->nodes[cl->nnodes++] = n;
}

static void close_config_fd(gb_cluster *cl)
{
    if (cl->config_fd >= 0)
        close(cl->config_fd);
    cl->config_fd = -1;
}

gb_cluster *gb_cluster_new(int port, int cport, const char *config_path)
{
    gb_cluster *cl = gb_calloc(1, sizeof *cl);
    cl->myself = node_new(NULL, GB_CNODE_MYSELF | GB_CNODE_MASTER);
    cl->myself->port = port;
    cl->myself->cport = cport;
    add_node(cl, cl->myself);
    cl->config_path = gb_strdup(config_path);
    cl->config_fd = -1;
    cl->lock_fd = -1;
    cl->require_full_coverage = true;
    cl->state = GB_CLUSTER_FAIL;
    cl->size = 1;
    cl->mf_primary_offset = -1;
    return cl;
}

static void drop_nodes(gb_cluster *cl)
{
    for (size_t i = 0; i < cl->nnodes; i++)
        node_free(cl->nodes[i]);
    cl->nnodes = 0;
    cl->myself = NULL;
    memset(cl->slots, 0, sizeof cl->slots);
    gb_cluster_close_open_slots(cl);
}

void gb_cluster_free(gb_cluster *cl)
{
    if (!cl)
        return;
    drop_nodes(cl);
    gb_free(cl->nodes);
    gb_free(cl->forgotten);
    close_config_fd(cl);
    if (cl->lock_fd >= 0)
        close(cl->lock_fd);
    gb_free(cl->config_path);
    gb_free(cl);
}

gb_cluster_node *gb_cluster_lookup(const gb_cluster *cl, const char *name, size_t len)
{
    if (len != GB_CLUSTER_NAMELEN)
        return NULL;
    for (size_t i = 0; i < cl->nnodes; i++)
        if (memcmp(cl->nodes[i]->name, name, GB_CLUSTER_NAMELEN) == 0)
            return cl->nodes[i];
    return NULL;
}

bool gb_cluster_add_slot(gb_cluster *cl, gb_cluster_node *n, unsigned slot)
{
    if (cl->slots[slot])
        return false;
    n->slots[slot >> 3] |= (uint8_t)(1u << (slot & 7));
    n->nslots++;
    cl->slots[slot] = n;
    return true;
}

/* Whether this node serves n's slots: it is n or n's replica (Redis's
 * clusterGetNodesServingMySlots(n) holding myself). */
static bool serves_slots_of(const gb_cluster *cl, const gb_cluster_node *n)
{
    return n == cl->myself || memcmp(cl->myself->replica_of, n->name, GB_CLUSTER_NAMELEN) == 0;
}

bool gb_cluster_del_slot(gb_cluster *cl, unsigned slot)
{
    gb_cluster_node *n = cl->slots[slot];
    if (!n)
        return false;
    if (cl->myself && serves_slots_of(cl, n)) {
        cl->shard_slots_lost[slot >> 3] |= (uint8_t)(1u << (slot & 7));
        cl->any_shard_slot_lost = true;
    }
    n->slots[slot >> 3] &= (uint8_t)~(1u << (slot & 7));
    n->nslots--;
    cl->slots[slot] = NULL;
    return true;
}

static bool is_primary(const gb_cluster_node *n) { return (n->flags & GB_CNODE_MASTER) != 0; }

/* Redis's CLUSTER_MIN_REJOIN_DELAY and CLUSTER_MAX_REJOIN_DELAY. */
#define MIN_REJOIN_DELAY_MS 500
#define MAX_REJOIN_DELAY_MS 5000

static void set_open(gb_cluster *cl, gb_cluster_node **entry, gb_cluster_node *n)
{
    cl->nopen += (n != NULL) - (*entry != NULL);
    *entry = n;
}

void gb_cluster_set_migrating(gb_cluster *cl, unsigned slot, gb_cluster_node *n)
{
    set_open(cl, &cl->migrating_to[slot], n);
}

void gb_cluster_set_importing(gb_cluster *cl, unsigned slot, gb_cluster_node *n)
{
    set_open(cl, &cl->importing_from[slot], n);
}

void gb_cluster_close_open_slots(gb_cluster *cl)
{
    memset(cl->migrating_to, 0, sizeof cl->migrating_to);
    memset(cl->importing_from, 0, sizeof cl->importing_from);
    cl->nopen = 0;
}

/* Every slot has an owner that is not failed. Each slot has at most one
 * owner and nslots counts a node's (gb_cluster_add_slot/del_slot keep it),
 * so the owned slots of the nodes not failed add up to all of them exactly
 * then: no walk over 16,384 slots on every state update (a reshard runs
 * several per slot moved). */
static bool covers_every_slot(const gb_cluster *cl)
{
    long covered = 0;
    for (size_t i = 0; i < cl->nnodes; i++)
        if (!(cl->nodes[i]->flags & GB_CNODE_FAIL))
            covered += cl->nodes[i]->nslots;
    return covered == GB_CLUSTER_SLOTS;
}

void gb_cluster_update_state(gb_cluster *cl, int64_t now_ms, int64_t node_timeout_ms)
{
    if (cl->started_ms == 0)
        cl->started_ms = now_ms;
    if (is_primary(cl->myself) && cl->state == GB_CLUSTER_FAIL && now_ms - cl->started_ms < WRITABLE_DELAY_MS)
        return;
    int state = !cl->require_full_coverage || covers_every_slot(cl) ? GB_CLUSTER_OK : GB_CLUSTER_FAIL;
    int reachable = 0;
    cl->size = 0;
    for (size_t i = 0; i < cl->nnodes; i++) {
        const gb_cluster_node *n = cl->nodes[i];
        if (is_primary(n) && n->nslots > 0) {
            cl->size++;
            reachable += !(n->flags & (GB_CNODE_FAIL | GB_CNODE_PFAIL));
        }
    }
    if (reachable < cl->size / 2 + 1) {
        state = GB_CLUSTER_FAIL;
        cl->minority_ms = now_ms;
    }
    if (state == cl->state)
        return;
    int64_t rejoin = node_timeout_ms < MIN_REJOIN_DELAY_MS   ? MIN_REJOIN_DELAY_MS
                     : node_timeout_ms > MAX_REJOIN_DELAY_MS ? MAX_REJOIN_DELAY_MS
                                                             : node_timeout_ms;
    /* a primary that was in the minority gives the others time to notice
     * it is back before it takes writes */
    if (state == GB_CLUSTER_OK && is_primary(cl->myself) && now_ms - cl->minority_ms < rejoin)
        return;
    cl->state = state;
}

uint64_t gb_cluster_max_epoch(const gb_cluster *cl)
{
    uint64_t max = cl->current_epoch;
    for (size_t i = 0; i < cl->nnodes; i++)
        if (cl->nodes[i]->config_epoch > max)
            max = cl->nodes[i]->config_epoch;
    return max;
}

bool gb_cluster_bump_epoch(gb_cluster *cl)
{
    gb_cluster_node *me = cl->myself;
    if (me->config_epoch != 0 && me->config_epoch == gb_cluster_max_epoch(cl))
        return false;
    cl->current_epoch++;
    me->config_epoch = cl->current_epoch;
    return true;
}

/* ---- node lines (CLUSTER NODES, nodes.conf) ---- */

static const struct {
    uint32_t flag;
    const char *name;
} flag_names[] = {
    {GB_CNODE_MYSELF, "myself"},       {GB_CNODE_MASTER, "master"},   {GB_CNODE_SLAVE, "slave"},
    {GB_CNODE_PFAIL, "fail?"},         {GB_CNODE_FAIL, "fail"},       {GB_CNODE_HANDSHAKE, "handshake"},
    {GB_CNODE_NOADDR, "noaddr"},       {GB_CNODE_NOFAILOVER, "nofailover"},
};

static void describe_flags(uint32_t flags, gb_strbuf *out)
{
    bool any = false;
    for (size_t i = 0; i < sizeof flag_names / sizeof flag_names[0]; i++)
        if (flags & flag_names[i].flag) {
            if (any)
                gb_strbuf_addc(out, ',');
            gb_strbuf_adds(out, flag_names[i].name);
            any = true;
        }
    if (!any)
        gb_strbuf_adds(out, "noflags");
}

static void describe_slot_range(int first, int last, gb_strbuf *out)
{
    if (first == last)
        gb_strbuf_printf(out, " %d", first);
    else
        gb_strbuf_printf(out, " %d-%d", first, last);
}

/* A node's slots as ranges. Every nodes.conf save writes every node's line
 * (a reshard saves several times for each slot it moves), so the bitmap is
 * read 64 slots at a time: a word wholly inside or wholly outside the
 * current run, the common case, costs one comparison instead of 64 bit
 * tests. */
static void describe_slot_ranges(const gb_cluster_node *n, gb_strbuf *out)
{
    int start = -1;
    for (int word = 0; word < GB_CLUSTER_SLOTS / 64; word++) {
        uint64_t bits;
        memcpy(&bits, n->slots + word * 8, sizeof bits);
        if (bits == (start < 0 ? 0 : UINT64_MAX))
            continue;
        for (int b = 0; b < 64; b++) {
            int j = word * 64 + b;
            /* the bitmap's byte k holds slots 8k..8k+7, low bit first */
            bool bit = (n->slots[j >> 3] >> (j & 7)) & 1u;
            if (bit && start < 0) {
                start = j;
            } else if (!bit && start >= 0) {
                describe_slot_range(start, j - 1, out);
                start = -1;
            }
        }
    }
    if (start >= 0)
        describe_slot_range(start, GB_CLUSTER_SLOTS - 1, out);
}

/* myself's open slots, [slot->-id] and [slot-<-id]. nopen counts them, so
 * the scan of the two arrays (256 KiB) stops at the last one, and does not
 * start when there is none. */
static void describe_open_slots(const gb_cluster *cl, gb_strbuf *out)
{
    unsigned seen = 0;
    for (int j = 0; seen < cl->nopen && j < GB_CLUSTER_SLOTS; j++) {
        seen += (cl->migrating_to[j] != NULL) + (cl->importing_from[j] != NULL);
        if (cl->migrating_to[j])
            gb_strbuf_printf(out, " [%d->-%s]", j, cl->migrating_to[j]->name);
        else if (cl->importing_from[j])
            gb_strbuf_printf(out, " [%d-<-%s]", j, cl->importing_from[j]->name);
    }
}

void gb_cluster_describe_node(const gb_cluster *cl, const gb_cluster_node *n, bool use_pport, gb_strbuf *out)
{
    gb_strbuf_printf(out, "%s %s:%d@%d", n->name, n->ip, use_pport && n->pport ? n->pport : n->port, n->cport);
    if (n->hostname[0])
        gb_strbuf_printf(out, ",%s", n->hostname);
    gb_strbuf_addc(out, ' ');
    describe_flags(n->flags, out);
    const gb_cluster_node *primary = n->replica_of[0] ? gb_cluster_lookup(cl, n->replica_of, GB_CLUSTER_NAMELEN) : NULL;
    /* A replica shows its primary's epoch (Redis's clusterGenNodeDescription). */
    uint64_t epoch = (n->flags & GB_CNODE_SLAVE) && primary ? primary->config_epoch : n->config_epoch;
    gb_strbuf_printf(out, " %s %lld %lld %llu %s", n->replica_of[0] ? n->replica_of : "-", (long long)n->ping_sent,
                     (long long)n->pong_received, (unsigned long long)epoch,
                     (n->link || (n->flags & GB_CNODE_MYSELF)) ? "connected" : "disconnected");
    describe_slot_ranges(n, out);
    if (n->flags & GB_CNODE_MYSELF)
        describe_open_slots(cl, out);
}

void gb_cluster_describe_nodes(const gb_cluster *cl, uint32_t filter, bool use_pport, gb_strbuf *out)
{
    for (size_t i = 0; i < cl->nnodes; i++) {
        if (cl->nodes[i]->flags & filter)
            continue;
        gb_cluster_describe_node(cl, cl->nodes[i], use_pport, out);
        gb_strbuf_addc(out, '\n');
    }
}

/* ---- nodes.conf ---- */

bool gb_cluster_valid_name(const char *name)
{
    for (int i = 0; i < GB_CLUSTER_NAMELEN; i++) {
        char ch = name[i];
        if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')))
            return false;
    }
    return true;
}

bool gb_cluster_valid_ip(const char *ip)
{
    unsigned char addr[sizeof(struct in6_addr)];
    return inet_pton(AF_INET, ip, addr) == 1 || inet_pton(AF_INET6, ip, addr) == 1;
}

bool gb_cluster_valid_hostname(const char *host, size_t len)
{
    if (len > 255)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = host[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
              c == '.'))
            return false;
    }
    return true;
}

static bool valid_name(gb_slice s) { return s.len == GB_CLUSTER_NAMELEN && gb_cluster_valid_name(s.ptr); }

/* A whole decimal number of at most max (the file is ours, but a person
 * may have edited it). */
static bool parse_uint(const char *p, size_t len, unsigned long long max, unsigned long long *out)
{
    if (len == 0 || len > 20)
        return false;
    unsigned long long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (p[i] < '0' || p[i] > '9')
            return false;
        unsigned d = (unsigned)(p[i] - '0');
        if (v > (max - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

static gb_cluster_node *node_by_name(gb_cluster *cl, gb_slice name)
{
    gb_cluster_node *n = gb_cluster_lookup(cl, name.ptr, name.len);
    if (!n) {
        n = node_new(name.ptr, 0);
        add_node(cl, n);
    }
    return n;
}

/* "ip:port@cport[,hostname]" (cport missing in old files: port + 10000). */
static bool parse_address(gb_cluster_node *n, gb_slice a)
{
    char buf[512];
    if (a.len >= sizeof buf)
        return false;
    memcpy(buf, a.ptr, a.len);
    buf[a.len] = '\0';
    char *host = strchr(buf, ',');
    if (host)
        *host++ = '\0';
    gb_free(n->hostname);
    n->hostname = gb_strdup(host ? host : "");
    char *colon = strrchr(buf, ':');
    if (!colon || (size_t)(colon - buf) >= GB_CLUSTER_IPLEN)
        return false;
    *colon = '\0';
    memcpy(n->ip, buf, (size_t)(colon - buf) + 1);
    char *port = colon + 1, *bus = strchr(port, '@');
    if (bus)
        *bus++ = '\0';
    unsigned long long p, b = 0;
    if (!parse_uint(port, strlen(port), 65535, &p) || (bus && !parse_uint(bus, strlen(bus), 65535, &b)))
        return false;
    n->port = (int)p;
    n->cport = bus ? (int)b : (int)p + 10000;
    return true;
}

static bool parse_flags(gb_cluster *cl, gb_cluster_node *n, gb_slice f)
{
    size_t i = 0;
    while (i <= f.len) {
        size_t end = i;
        while (end < f.len && f.ptr[end] != ',')
            end++;
        gb_slice w = gb_slice_make(f.ptr + i, end - i);
        bool known = w.len == 7 && memcmp(w.ptr, "noflags", 7) == 0;
        for (size_t k = 0; !known && k < sizeof flag_names / sizeof flag_names[0]; k++)
            if (strlen(flag_names[k].name) == w.len && strncasecmp(flag_names[k].name, w.ptr, w.len) == 0) {
                n->flags |= flag_names[k].flag;
                known = true;
            }
        if (!known)
            return false;
        i = end + 1;
    }
    if (n->flags & GB_CNODE_MYSELF) {
        if (cl->myself)
            return false; /* two nodes both "myself" */
        cl->myself = n;
    }
    return true;
}

/* "[slot->-name]" (migrating) or "[slot-<-name]" (importing). */
static bool parse_open_slot(gb_cluster *cl, gb_slice w)
{
    const char *dash = memchr(w.ptr, '-', w.len);
    if (!dash || w.ptr[w.len - 1] != ']')
        return false;
    unsigned long long slot;
    if (!parse_uint(w.ptr + 1, (size_t)(dash - w.ptr) - 1, GB_CLUSTER_SLOTS - 1, &slot))
        return false;
    size_t rest = w.len - (size_t)(dash - w.ptr);
    if (rest != 3 + GB_CLUSTER_NAMELEN + 1 || (dash[1] != '>' && dash[1] != '<'))
        return false;
    gb_slice name = gb_slice_make(dash + 3, GB_CLUSTER_NAMELEN);
    if (!valid_name(name))
        return false;
    gb_cluster_node *peer = node_by_name(cl, name);
    if (dash[1] == '>')
        gb_cluster_set_migrating(cl, slot, peer);
    else
        gb_cluster_set_importing(cl, slot, peer);
    return true;
}

static bool parse_slot_range(gb_cluster *cl, gb_cluster_node *n, gb_slice w)
{
    const char *dash = memchr(w.ptr, '-', w.len);
    unsigned long long start, stop;
    size_t first = dash ? (size_t)(dash - w.ptr) : w.len;
    if (!parse_uint(w.ptr, first, GB_CLUSTER_SLOTS - 1, &start))
        return false;
    stop = start;
    if (dash && !parse_uint(dash + 1, w.len - first - 1, GB_CLUSTER_SLOTS - 1, &stop))
        return false;
    for (unsigned long long s = start; s <= stop; s++)
        gb_cluster_add_slot(cl, n, (unsigned)s);
    return true;
}

static bool parse_vars(gb_cluster *cl, gb_slice *w, int argc)
{
    if (argc % 2 == 0)
        return false;
    for (int j = 1; j < argc; j += 2) {
        unsigned long long v;
        if (!parse_uint(w[j + 1].ptr, w[j + 1].len, UINT64_MAX, &v))
            return false;
        if (w[j].len == 12 && strncasecmp(w[j].ptr, "currentEpoch", 12) == 0)
            cl->current_epoch = v;
        else if (w[j].len == 13 && strncasecmp(w[j].ptr, "lastVoteEpoch", 13) == 0)
            cl->last_vote_epoch = v;
    }
    return true;
}

static bool parse_node_line(gb_cluster *cl, gb_slice *w, int argc)
{
    if (argc < 8 || !valid_name(w[0]))
        return false;
    gb_cluster_node *n = node_by_name(cl, w[0]);
    if (!parse_address(n, w[1]) || !parse_flags(cl, n, w[2]))
        return false;
    if (!(w[3].len == 1 && w[3].ptr[0] == '-')) {
        if (!valid_name(w[3]))
            return false;
        node_by_name(cl, w[3]);
        memcpy(n->replica_of, w[3].ptr, GB_CLUSTER_NAMELEN);
        n->replica_of[GB_CLUSTER_NAMELEN] = '\0';
    }
    unsigned long long epoch;
    if (!parse_uint(w[6].ptr, w[6].len, UINT64_MAX, &epoch))
        return false;
    n->config_epoch = (n->flags & GB_CNODE_SLAVE) && n->replica_of[0] ? 0 : epoch;
    for (int j = 8; j < argc; j++) {
        bool ok = w[j].len && w[j].ptr[0] == '[' ? parse_open_slot(cl, w[j]) : parse_slot_range(cl, n, w[j]);
        if (!ok)
            return false;
    }
    return true;
}

static char *read_file(const char *path, size_t *len, int *err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        *err = errno;
        return NULL;
    }
    gb_strbuf b = {0};
    char chunk[65536];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0)
        gb_strbuf_add(&b, chunk, k);
    fclose(f);
    *len = b.len;
    *err = 0;
    return b.p ? b.p : gb_strdup("");
}

int gb_cluster_load_config(gb_cluster *cl, char *err, size_t errlen)
{
    size_t len;
    int e;
    char *text = read_file(cl->config_path, &len, &e);
    if (!text) {
        if (e == ENOENT)
            return 1;
        snprintf(err, errlen, "Loading the cluster node config from %s: %s", cl->config_path, strerror(e));
        return -1;
    }
    if (len == 0) {
        gb_free(text);
        return 1;
    }
    gb_cluster_node *fresh_self = cl->myself;
    int fresh_port = fresh_self->port, fresh_cport = fresh_self->cport;
    drop_nodes(cl);
    bool ok = true;
    int lineno = 0;
    for (size_t i = 0; ok && i < len;) {
        size_t end = i;
        while (end < len && text[end] != '\n')
            end++;
        lineno++;
        gb_slice *w = NULL;
        int argc = end > i ? gb_split_args(text + i, end - i, &w) : 0;
        if (argc < 0)
            ok = false;
        else if (argc > 0 && w[0].len == 4 && strncasecmp(w[0].ptr, "vars", 4) == 0)
            ok = parse_vars(cl, w, argc);
        else if (argc > 0)
            ok = parse_node_line(cl, w, argc);
        if (w)
            gb_split_args_free(w);
        i = end + 1;
    }
    gb_free(text);
    if (ok && !cl->myself) {
        ok = false;
        lineno = 0;
    }
    if (!ok) {
        snprintf(err, errlen, "Unrecoverable error: corrupted cluster config file \"%s\" (line %d).", cl->config_path,
                 lineno);
        drop_nodes(cl);
        cl->myself = node_new(NULL, GB_CNODE_MYSELF | GB_CNODE_MASTER);
        cl->myself->port = fresh_port;
        cl->myself->cport = fresh_cport;
        add_node(cl, cl->myself);
        return -1;
    }
    /* This process's ports win over the file's (Redis takes them from the
     * running server too, at its next save). */
    cl->myself->port = fresh_port;
    cl->myself->cport = fresh_cport;
    uint64_t max = gb_cluster_max_epoch(cl);
    if (max > cl->current_epoch)
        cl->current_epoch = max;
    return 0;
}

/* The most a save may write in place: one page, which a process's death
 * cannot tear (the kernel copies a page or nothing). */
#define IN_PLACE_MAX 4096

/* nodes.conf stays open between in-place saves: a reshard saves several
 * times for every slot it moves, and opening and closing the file each
 * time were two of the five system calls a save made. The file's size is
 * still asked every time (the old text may be longer), and a file that was
 * unlinked or renamed over (st_nlink 0: by our own durable save, or by
 * someone else) is let go and opened again by path. */
static int open_config_fd(gb_cluster *cl, struct stat *st)
{
    if (cl->config_fd >= 0 && fstat(cl->config_fd, st) == 0 && st->st_nlink > 0)
        return cl->config_fd;
    close_config_fd(cl);
    int fd = open(cl->config_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    if (fstat(fd, st) != 0) {
        close(fd);
        return -1;
    }
    return cl->config_fd = fd;
}

/* A save that need not be durable, as Redis 7.0's clusterSaveConfig makes
 * it: the text over the old file's, padded with newlines to the old
 * length (blank lines load as nothing) in one write, then the padding cut.
 * A rename would be crash-safe for larger files too, but ext4 starts
 * writing a file renamed over another back at once (auto_da_alloc), a
 * millisecond or more on the engine thread for each CLUSTER SETSLOT of a
 * reshard. 1 when the file is too large for one page (the caller
 * renames), 0 when written, -1 on an error (err). */
static int save_in_place(gb_cluster *cl, gb_strbuf *b, char *err, size_t errlen)
{
    struct stat st;
    int fd = open_config_fd(cl, &st);
    if (fd < 0) {
        snprintf(err, errlen, "Could not write %s: %s", cl->config_path, strerror(errno));
        return -1;
    }
    size_t len = b->len, total = GB_MAX(len, (size_t)st.st_size);
    if (total > IN_PLACE_MAX)
        return 1;
    char page[IN_PLACE_MAX];
    memcpy(page, b->p, len);
    memset(page + len, '\n', total - len);
    ssize_t k;
    do
        k = pwrite(fd, page, total, 0);
    while (k < 0 && errno == EINTR);
    int rc = 0;
    if (k != (ssize_t)total) {
        snprintf(err, errlen, "Could not write %s: %s", cl->config_path, k < 0 ? strerror(errno) : "short write");
        rc = -1;
    } else if (total > len) {
        (void)!ftruncate(fd, (off_t)len); /* only the padding goes: not critical */
    }
    return rc;
}

int gb_cluster_lock_config(gb_cluster *cl, char *err, size_t errlen)
{
    int fd = open(cl->config_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "Can't open %s in order to acquire a lock: %s", cl->config_path, strerror(errno));
        return -1;
    }
    int rc = gb_plat_file_try_lock(fd);
    if (rc != 0) {
        if (rc == GB_EBUSY)
            snprintf(err, errlen, "Sorry, the cluster configuration file %s is already used by a different Redis "
                     "Cluster node. Please make sure that different nodes use different cluster configuration "
                     "files.", cl->config_path);
        else
            snprintf(err, errlen, "Impossible to lock %s: %s", cl->config_path, strerror(errno));
        close(fd);
        return -1;
    }
    cl->lock_fd = fd;
    return 0;
}

int gb_cluster_save_config(gb_cluster *cl, bool durable, char *err, size_t errlen)
{
    gb_strbuf b = {0};
    gb_cluster_describe_nodes(cl, GB_CNODE_HANDSHAKE, false, &b);
    gb_strbuf_printf(&b, "vars currentEpoch %llu lastVoteEpoch %llu\n", (unsigned long long)cl->current_epoch,
                     (unsigned long long)cl->last_vote_epoch);
    if (!durable) {
        int in_place = save_in_place(cl, &b, err, errlen);
        if (in_place <= 0) {
            gb_strbuf_free(&b);
            return in_place;
        }
    }
    size_t plen = strlen(cl->config_path);
    char *tmp = gb_malloc(plen + 16);
    snprintf(tmp, plen + 16, "%s.tmp-XXXXXX", cl->config_path);
    int rc = -1;
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(err, errlen, "Could not create a temporary file next to %s: %s", cl->config_path, strerror(errno));
        goto out;
    }
    size_t off = 0;
    while (off < b.len) {
        ssize_t k = write(fd, b.p + off, b.len - off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        off += (size_t)k;
    }
    bool written = off == b.len && (!durable || gb_plat_file_sync(fd) == 0);
    int saved_errno = errno;
    /* The file taking nodes.conf's name takes its lock too: the lock is
     * the file's, and the old one leaves with its name. */
    bool locked = cl->lock_fd >= 0 && written && gb_plat_file_try_lock(fd) == 0;
    close_config_fd(cl); /* names the file being replaced */
    if (!written || rename(tmp, cl->config_path) != 0) {
        snprintf(err, errlen, "Could not write %s: %s", cl->config_path, strerror(written ? errno : saved_errno));
        close(fd);
        unlink(tmp);
        goto out;
    }
    if (locked) {
        close(cl->lock_fd);
        cl->lock_fd = fd;
    } else {
        close(fd);
    }
    if (!durable) {
        rc = 0;
        goto out;
    }
    /* the rename itself durable: sync the directory that holds the file */
    char *slash = strrchr(cl->config_path, '/');
    if (slash) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - cl->config_path), cl->config_path);
        (void)gb_plat_dir_sync(dir[0] ? dir : "/");
    } else {
        (void)gb_plat_dir_sync(".");
    }
    rc = 0;
out:
    gb_free(tmp);
    gb_strbuf_free(&b);
    return rc;
}

/* ---- what the bus changes ---- */

static bool bit_test(const uint8_t *bits, unsigned i) { return (bits[i >> 3] >> (i & 7)) & 1u; }
static void bit_set(uint8_t *bits, unsigned i) { bits[i >> 3] |= (uint8_t)(1u << (i & 7)); }
static void bit_clear(uint8_t *bits, unsigned i) { bits[i >> 3] &= (uint8_t)~(1u << (i & 7)); }

gb_cluster_node *gb_cluster_start_handshake(gb_cluster *cl, const char *ip, long long port, long long cport,
                                            int64_t now_ms, bool *invalid)
{
    unsigned char addr[sizeof(struct in6_addr)];
    char norm[GB_CLUSTER_IPLEN] = "";
    *invalid = false;
    if (inet_pton(AF_INET, ip, addr) == 1)
        inet_ntop(AF_INET, addr, norm, sizeof norm);
    else if (inet_pton(AF_INET6, ip, addr) == 1)
        inet_ntop(AF_INET6, addr, norm, sizeof norm);
    else
        *invalid = true;
    if (port <= 0 || port > 65535 || cport <= 0 || cport > 65535)
        *invalid = true;
    if (*invalid)
        return NULL;
    for (size_t i = 0; i < cl->nnodes; i++) {
        const gb_cluster_node *n = cl->nodes[i];
        if ((n->flags & GB_CNODE_HANDSHAKE) && strcasecmp(n->ip, norm) == 0 && n->port == port && n->cport == cport)
            return NULL;
    }
    gb_cluster_node *n = node_new(NULL, GB_CNODE_HANDSHAKE | GB_CNODE_MEET);
    memcpy(n->ip, norm, sizeof norm);
    n->port = (int)port;
    n->cport = (int)cport;
    n->ctime = now_ms;
    add_node(cl, n);
    return n;
}

gb_cluster_node *gb_cluster_add_gossiped(gb_cluster *cl, const char *name, const char *ip, int port, int cport,
                                         uint32_t flags, int64_t now_ms)
{
    if (gb_cluster_lookup(cl, name, GB_CLUSTER_NAMELEN) || !gb_cluster_valid_ip(ip))
        return NULL;
    gb_cluster_node *n = node_new(name, flags);
    snprintf(n->ip, sizeof n->ip, "%s", ip);
    n->port = port;
    n->cport = cport;
    n->ctime = now_ms;
    add_node(cl, n);
    return n;
}

void gb_cluster_del_node(gb_cluster *cl, gb_cluster_node *n)
{
    if (cl->node_removed)
        cl->node_removed(cl->hook_ctx, n);
    for (unsigned j = 0; j < GB_CLUSTER_SLOTS; j++) {
        if (cl->importing_from[j] == n)
            gb_cluster_set_importing(cl, j, NULL);
        if (cl->migrating_to[j] == n)
            gb_cluster_set_migrating(cl, j, NULL);
        if (cl->slots[j] == n)
            gb_cluster_del_slot(cl, j);
    }
    for (size_t i = 0; i < cl->nnodes; i++)
        if (cl->nodes[i] == n) {
            cl->nodes[i] = cl->nodes[--cl->nnodes];
            break;
        }
    node_free(n);
}

void gb_cluster_rename_node(gb_cluster_node *n, const char *name)
{
    memcpy(n->name, name, GB_CLUSTER_NAMELEN);
    n->name[GB_CLUSTER_NAMELEN] = '\0';
}

void gb_cluster_set_primary(gb_cluster_node *n)
{
    /* a replica promoted takes its old primary's place as a valid target of
     * replica migration (Redis's clusterSetNodeAsMaster) */
    if (n->replica_of[0] && !(n->flags & GB_CNODE_MYSELF))
        n->flags |= GB_CNODE_MIGRATE_TO;
    n->flags = (n->flags & ~(uint32_t)GB_CNODE_SLAVE) | GB_CNODE_MASTER;
    n->replica_of[0] = '\0';
}

void gb_cluster_set_replica_of(gb_cluster *cl, gb_cluster_node *n, const char *primary_name)
{
    if (n->flags & GB_CNODE_MASTER) {
        /* a primary turned replica serves nothing any more, and this node
         * then neither imports nor migrates (Redis's clusterSetMaster) */
        for (unsigned j = 0; j < GB_CLUSTER_SLOTS; j++)
            if (cl->slots[j] == n)
                gb_cluster_del_slot(cl, j);
        if (n == cl->myself)
            gb_cluster_close_open_slots(cl);
    }
    n->flags = (n->flags & ~(uint32_t)GB_CNODE_MASTER) | GB_CNODE_SLAVE;
    memcpy(n->replica_of, primary_name, GB_CLUSTER_NAMELEN);
    n->replica_of[GB_CLUSTER_NAMELEN] = '\0';
}

int gb_cluster_take_claimed_slots(gb_cluster *cl, gb_cluster_node *sender, uint64_t epoch, const uint8_t *slots,
                                  const uint32_t *slot_keys, uint16_t *lost)
{
    int nlost = 0;
    if (sender == cl->myself)
        return 0;
    for (unsigned j = 0; j < GB_CLUSTER_SLOTS; j++) {
        if (!bit_test(slots, j)) {
            if (cl->slots[j] == sender)
                bit_set(cl->not_claimed, j);
            continue;
        }
        gb_cluster_node *owner = cl->slots[j];
        if (owner == sender) {
            bit_clear(cl->not_claimed, j);
            continue;
        }
        if (cl->importing_from[j])
            continue;
        bool unclaimed = !owner || bit_test(cl->not_claimed, j);
        if (!unclaimed && owner->config_epoch >= epoch)
            continue;
        if (owner == cl->myself && slot_keys && slot_keys[j])
            lost[nlost++] = (uint16_t)j;
        gb_cluster_del_slot(cl, j);
        gb_cluster_add_slot(cl, sender, j);
        bit_clear(cl->not_claimed, j);
    }
    return nlost;
}

bool gb_cluster_resolve_epoch_collision(gb_cluster *cl, const gb_cluster_node *sender)
{
    gb_cluster_node *me = cl->myself;
    if (sender->config_epoch != me->config_epoch || !is_primary(sender) || !is_primary(me))
        return false;
    if (memcmp(sender->name, me->name, GB_CLUSTER_NAMELEN) <= 0)
        return false;
    cl->current_epoch++;
    me->config_epoch = cl->current_epoch;
    return true;
}

/* Redis's CLUSTER_BLACKLIST_TTL. */
#define FORGET_TTL_MS 60000

bool gb_cluster_forgotten(gb_cluster *cl, const char *name, int64_t now_ms)
{
    /* expired entries go as they are met */
    for (size_t i = 0; i < cl->nforgotten;) {
        if (cl->forgotten[i].until < now_ms) {
            cl->forgotten[i] = cl->forgotten[--cl->nforgotten];
            continue;
        }
        if (memcmp(cl->forgotten[i].name, name, GB_CLUSTER_NAMELEN) == 0)
            return true;
        i++;
    }
    return false;
}

void gb_cluster_forget(gb_cluster *cl, gb_cluster_node *n, int64_t now_ms)
{
    if (!gb_cluster_forgotten(cl, n->name, now_ms)) {
        cl->forgotten = gb_realloc(cl->forgotten, (cl->nforgotten + 1) * sizeof *cl->forgotten);
        memcpy(cl->forgotten[cl->nforgotten].name, n->name, GB_CLUSTER_NAMELEN);
        cl->forgotten[cl->nforgotten++].until = now_ms + FORGET_TTL_MS;
    } else {
        for (size_t i = 0; i < cl->nforgotten; i++)
            if (memcmp(cl->forgotten[i].name, n->name, GB_CLUSTER_NAMELEN) == 0)
                cl->forgotten[i].until = now_ms + FORGET_TTL_MS;
    }
    gb_cluster_del_node(cl, n);
}

void gb_cluster_reset(gb_cluster *cl, bool hard)
{
    gb_cluster_close_open_slots(cl);
    for (unsigned j = 0; j < GB_CLUSTER_SLOTS; j++)
        gb_cluster_del_slot(cl, j);
    for (size_t i = cl->nnodes; i-- > 0;)
        if (cl->nodes[i] != cl->myself)
            gb_cluster_del_node(cl, cl->nodes[i]);
    if (hard) {
        cl->current_epoch = 0;
        cl->last_vote_epoch = 0;
        cl->myself->config_epoch = 0;
        gb_cluster_node *fresh = node_new(NULL, 0);
        gb_cluster_rename_node(cl->myself, fresh->name);
        node_free(fresh);
    }
}

/* Redis's CLUSTER_FAIL_REPORT_VALIDITY_MULT. */
#define REPORT_VALIDITY_MULT 2

void gb_cluster_report_failure(gb_cluster_node *n, const char *reporter, int64_t now_ms)
{
    for (size_t i = 0; i < n->nreports; i++)
        if (memcmp(n->reports[i].reporter, reporter, GB_CLUSTER_NAMELEN) == 0) {
            n->reports[i].time = now_ms;
            return;
        }
    n->reports = gb_realloc(n->reports, (n->nreports + 1) * sizeof *n->reports);
    memcpy(n->reports[n->nreports].reporter, reporter, GB_CLUSTER_NAMELEN);
    n->reports[n->nreports++].time = now_ms;
}

void gb_cluster_withdraw_failure(gb_cluster_node *n, const char *reporter)
{
    for (size_t i = 0; i < n->nreports; i++)
        if (memcmp(n->reports[i].reporter, reporter, GB_CLUSTER_NAMELEN) == 0) {
            n->reports[i] = n->reports[--n->nreports];
            return;
        }
}

size_t gb_cluster_failure_reports(gb_cluster_node *n, int64_t now_ms, int64_t node_timeout_ms)
{
    int64_t max_age = node_timeout_ms * REPORT_VALIDITY_MULT;
    for (size_t i = 0; i < n->nreports;) {
        if (now_ms - n->reports[i].time > max_age)
            n->reports[i] = n->reports[--n->nreports];
        else
            i++;
    }
    return n->nreports;
}

bool gb_cluster_mark_failing_if_needed(gb_cluster *cl, gb_cluster_node *n, int64_t now_ms, int64_t node_timeout_ms)
{
    if (!(n->flags & GB_CNODE_PFAIL) || (n->flags & GB_CNODE_FAIL))
        return false;
    size_t failures = gb_cluster_failure_reports(n, now_ms, node_timeout_ms) + (is_primary(cl->myself) ? 1 : 0);
    if (failures < (size_t)(cl->size / 2 + 1))
        return false;
    n->flags = (n->flags & ~(uint32_t)GB_CNODE_PFAIL) | GB_CNODE_FAIL;
    n->fail_time = now_ms;
    return true;
}

bool gb_cluster_grant_vote(gb_cluster *cl, gb_cluster_node *replica, uint64_t req_current_epoch,
                           uint64_t req_config_epoch, const uint8_t *claimed, bool force_ack, int64_t now_ms,
                           int64_t node_timeout_ms, const char **why)
{
    gb_cluster_node *me = cl->myself;
    *why = NULL;
    if (!is_primary(me) || me->nslots == 0)
        return false; /* only primaries serving slots vote */
    if (req_current_epoch < cl->current_epoch) {
        *why = "reqEpoch < curEpoch";
        return false;
    }
    if (cl->last_vote_epoch == cl->current_epoch) {
        *why = "already voted for this epoch";
        return false;
    }
    gb_cluster_node *primary =
        replica->replica_of[0] ? gb_cluster_lookup(cl, replica->replica_of, GB_CLUSTER_NAMELEN) : NULL;
    if (is_primary(replica) || !primary || (!(primary->flags & GB_CNODE_FAIL) && !force_ack)) {
        *why = is_primary(replica) ? "it is a master node" : !primary ? "I don't know its master" : "its master is up";
        return false;
    }
    if (now_ms - primary->voted_time < node_timeout_ms * 2) {
        *why = "can't vote about this master so soon";
        return false;
    }
    for (unsigned j = 0; j < GB_CLUSTER_SLOTS; j++) {
        if (!bit_test(claimed, j) || !cl->slots[j] || bit_test(cl->not_claimed, j))
            continue;
        if (cl->slots[j]->config_epoch > req_config_epoch) {
            *why = "a claimed slot has a newer epoch";
            return false;
        }
    }
    cl->last_vote_epoch = cl->current_epoch;
    primary->voted_time = now_ms;
    return true;
}
