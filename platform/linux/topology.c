/* Linux NUMA topology from sysfs: <root>/devices/system/node/node<N>/cpulist.
 * The root is a parameter so tests replay fake trees. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/internal.h"
#include "topology.h"

#define PATH_CAP 1024
/* A cpulist for 1024 CPUs listed one by one ("0,2,4,...") is ~4.9 KB. */
#define CPULIST_CAP 16384

static const char *root_or_default(const char *root) { return root && *root ? root : "/sys"; }

/* snprintf into a PATH_CAP buffer; a path that does not fit is an error, not
 * a silently different file. */
static int make_path(char *buf, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int make_path(char *buf, char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, PATH_CAP, fmt, ap);
    va_end(ap);
    if (n < 0 || n >= PATH_CAP)
        return gb__fail(GB_EINVAL, err, errlen, "sysfs path longer than %d bytes", PATH_CAP - 1);
    return 0;
}

/* "node12" -> 12; anything else ("node", "node1a", "possible") -> -1. */
static int node_number(const char *name)
{
    if (strncmp(name, "node", 4) != 0 || name[4] == '\0')
        return -1;
    long v = 0;
    for (const char *p = name + 4; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (*p - '0');
        if (v > 1 << 20)
            return -1;
    }
    return (int)v;
}

/* Reads and parses one node's cpulist; the message names the file. */
static int read_node_cpus(const char *dir, int node, gb_cpuset *out, char *err, size_t errlen)
{
    char path[PATH_CAP];
    int prc = make_path(path, err, errlen, "%s/node%d/cpulist", dir, node);
    if (prc < 0)
        return prc;
    FILE *f = fopen(path, "r");
    if (!f)
        return gb__fail(GB_EPARSE, err, errlen, "%s: cannot open (%s); the node directory is incomplete", path,
                        strerror(errno));
    char text[CPULIST_CAP];
    size_t n = fread(text, 1, sizeof text - 1, f);
    int read_error = ferror(f);
    int more = !feof(f) && fgetc(f) != EOF;
    fclose(f);
    if (read_error)
        return gb__fail(GB_EIO, err, errlen, "%s: read error", path);
    if (more)
        return gb__fail(GB_EPARSE, err, errlen, "%s: longer than %d bytes; not a cpulist", path, CPULIST_CAP - 1);
    text[n] = '\0';
    if (strlen(text) != n)
        return gb__fail(GB_EPARSE, err, errlen, "%s: contains a NUL byte; not a cpulist", path);
    size_t at = 0;
    if (gb__topo_parse_cpulist(text, out, &at) != 0) {
        size_t show = strcspn(text + at, "\n");
        return gb__fail(GB_EPARSE, err, errlen, "%s: malformed cpulist at byte %zu near \"%.*s\"", path, at,
                        (int)(show > 16 ? 16 : show), text + at);
    }
    return 0;
}

/* Calls fn for every node directory; stops at the first error it returns. */
typedef int (*node_fn)(void *ctx, const char *dir, int node, char *err, size_t errlen);

static int for_each_node(const char *root, void *ctx, node_fn fn, int *count, char *err, size_t errlen)
{
    char dir[PATH_CAP];
    int prc = make_path(dir, err, errlen, "%s/devices/system/node", root_or_default(root));
    if (prc < 0)
        return prc;
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT)
            return gb__fail(GB_ENONUMA, err, errlen, "%s does not exist: kernel without NUMA support", dir);
        return gb__fail(gb__errno_code(errno), err, errlen, "%s: %s", dir, strerror(errno));
    }
    int rc = 0, seen = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int node = node_number(e->d_name);
        if (node < 0)
            continue;
        seen++;
        if (fn && (rc = fn(ctx, dir, node, err, errlen)) != 0)
            break;
    }
    closedir(d);
    if (rc == 0 && seen == 0)
        rc = gb__fail(GB_ENONUMA, err, errlen, "%s has no node<N> directories", dir);
    if (count)
        *count = seen;
    return rc;
}

struct find_cpu {
    int cpu;
    int node; /* -1 until found */
};

static int find_cpu_in_node(void *ctx, const char *dir, int node, char *err, size_t errlen)
{
    struct find_cpu *f = ctx;
    gb_cpuset cpus;
    int rc = read_node_cpus(dir, node, &cpus, err, errlen);
    if (rc < 0)
        return rc;
    if (!gb_cpuset_test(&cpus, f->cpu))
        return 0;
    if (f->node >= 0)
        return gb__fail(GB_EPARSE, err, errlen, "%s: CPU %d is listed in both node%d/cpulist and node%d/cpulist",
                        dir, f->cpu, f->node < node ? f->node : node, f->node < node ? node : f->node);
    f->node = node;
    return 0;
}

int gb_topo_node_of_cpu(const char *sysfs_root, int cpu, int *node_out, char *err, size_t errlen)
{
    if (!node_out || cpu < 0 || cpu >= GB_CPUSET_MAX)
        return gb__fail(GB_EINVAL, err, errlen, "CPU %d is out of range (0..%d)", cpu, GB_CPUSET_MAX - 1);
    /* Read every node, not just until the first hit: a malformed or
     * contradictory tree is an error whatever order readdir() returns. */
    struct find_cpu f = {.cpu = cpu, .node = -1};
    int rc = for_each_node(sysfs_root, &f, find_cpu_in_node, NULL, err, errlen);
    if (rc < 0)
        return rc;
    if (f.node < 0)
        return gb__fail(GB_ENOENT, err, errlen,
                        "CPU %d is in no NUMA node's cpulist under %s/devices/system/node (offline or "
                        "nonexistent CPU?)",
                        cpu, root_or_default(sysfs_root));
    *node_out = f.node;
    return 0;
}

int gb_topo_node_cpus(const char *sysfs_root, int node, gb_cpuset *out, char *err, size_t errlen)
{
    if (!out || node < 0)
        return gb__fail(GB_EINVAL, err, errlen, "node %d is out of range", node);
    char dir[PATH_CAP], probe[PATH_CAP];
    int prc = make_path(dir, err, errlen, "%s/devices/system/node", root_or_default(sysfs_root));
    if (prc == 0)
        prc = make_path(probe, err, errlen, "%s/node%d", dir, node);
    if (prc < 0)
        return prc;
    DIR *d = opendir(probe);
    if (!d) {
        int rc = for_each_node(sysfs_root, NULL, NULL, NULL, err, errlen);
        if (rc < 0)
            return rc; /* no NUMA tree at all */
        return gb__fail(GB_ENOENT, err, errlen, "%s does not exist: no NUMA node %d", probe, node);
    }
    closedir(d);
    return read_node_cpus(dir, node, out, err, errlen);
}

int gb_topo_node_count(const char *sysfs_root)
{
    int n = 0;
    int rc = for_each_node(sysfs_root, NULL, NULL, &n, NULL, 0);
    return rc < 0 ? rc : n;
}
