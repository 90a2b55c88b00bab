/* Linux process introspection (/proc/<pid>/numa_maps) and the process
 * settings of daemon.h: THP (prctl) and the OOM score (/proc/self). */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include "common/internal.h"
#include "daemon.h"
#include "process.h"

/* Copies the line of the mapping starting at addr into a malloc'd string. */
static int find_line(pid_t pid, const void *addr, char **line_out)
{
    char path[64];
    if (pid == 0)
        snprintf(path, sizeof path, "/proc/self/numa_maps");
    else
        snprintf(path, sizeof path, "/proc/%ld/numa_maps", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT)
            return gb__fail(GB_ENONUMA, NULL, 0, "%s does not exist (kernel without NUMA, or no such process)", path);
        return gb__fail(gb__errno_code(errno), NULL, 0, "%s: %s", path, strerror(errno));
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = GB_ENOENT;
    while ((n = getline(&line, &cap, f)) >= 0) {
        char *end = NULL;
        uintmax_t start = strtoumax(line, &end, 16);
        if (end != line && *end == ' ' && start == (uintmax_t)(uintptr_t)addr) {
            if (n > 0 && line[n - 1] == '\n')
                line[n - 1] = '\0';
            rc = 0;
            break;
        }
    }
    fclose(f);
    if (rc < 0) {
        free(line);
        return gb__fail(rc, NULL, 0, "%s: no mapping starts at %p", path, addr);
    }
    *line_out = line;
    return 0;
}

/* Calls fn for each "N<node>=<pages>" field of the line. */
static void each_node_field(char *line, void (*fn)(void *ctx, const char *field, long node, size_t pages),
                            void *ctx)
{
    char *save = NULL;
    for (char *tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        if (tok[0] != 'N' || tok[1] < '0' || tok[1] > '9')
            continue;
        char *eq = NULL;
        long node = strtol(tok + 1, &eq, 10);
        if (!eq || *eq != '=')
            continue;
        char *end = NULL;
        unsigned long long pages = strtoull(eq + 1, &end, 10);
        if (end == eq + 1 || *end != '\0')
            continue;
        fn(ctx, tok, node, (size_t)pages);
    }
}

int gb_proc_numa_maps_line(pid_t pid, const void *addr, char *out, size_t cap)
{
    char *line = NULL;
    int rc = find_line(pid, addr, &line);
    if (rc < 0)
        return rc;
    size_t len = strlen(line);
    if (!out || len >= cap)
        rc = gb__fail(GB_ERANGE, NULL, 0, "numa_maps line is %zu bytes, buffer %zu", len, cap);
    else
        memcpy(out, line, len + 1);
    free(line);
    return rc;
}

struct join {
    char *out;
    size_t cap, len;
    int overflow;
};

static void join_field(void *ctx, const char *field, long node, size_t pages)
{
    (void)node;
    (void)pages;
    struct join *j = ctx;
    size_t flen = strlen(field);
    size_t need = flen + (j->len ? 1 : 0);
    if (j->len + need >= j->cap) {
        j->overflow = 1;
        return;
    }
    if (j->len)
        j->out[j->len++] = ' ';
    memcpy(j->out + j->len, field, flen);
    j->len += flen;
    j->out[j->len] = '\0';
}

int gb_proc_numa_maps_nodes(pid_t pid, const void *addr, char *out, size_t cap)
{
    if (!out || !cap)
        return gb__fail(GB_EINVAL, NULL, 0, "numa_maps: no output buffer");
    out[0] = '\0';
    char *line = NULL;
    int rc = find_line(pid, addr, &line);
    if (rc < 0)
        return rc;
    struct join j = {.out = out, .cap = cap};
    each_node_field(line, join_field, &j);
    free(line);
    if (j.overflow)
        return gb__fail(GB_ERANGE, NULL, 0, "numa_maps: N<node>= fields do not fit in %zu bytes", cap);
    return 0;
}

struct counts {
    size_t *pages;
    int nnodes;
};

static void count_field(void *ctx, const char *field, long node, size_t pages)
{
    (void)field;
    struct counts *c = ctx;
    if (node >= 0 && node < c->nnodes)
        c->pages[node] += pages;
}

int gb_proc_numa_maps_pages(pid_t pid, const void *addr, size_t *pages, int nnodes)
{
    if (!pages || nnodes < 1)
        return gb__fail(GB_EINVAL, NULL, 0, "numa_maps: no output array");
    memset(pages, 0, sizeof *pages * (size_t)nnodes);
    char *line = NULL;
    int rc = find_line(pid, addr, &line);
    if (rc < 0)
        return rc;
    struct counts c = {.pages = pages, .nnodes = nnodes};
    each_node_field(line, count_field, &c);
    free(line);
    return 0;
}

int gb_plat_thread_cpu_seconds(double *user, double *sys)
{
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) != 0)
        return gb__fail(gb__errno_code(errno), NULL, 0, "getrusage(RUSAGE_THREAD): %s", strerror(errno));
    *user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
    *sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    return 0;
}

int gb_plat_disable_thp(void)
{
    if (prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0)
        return gb__fail(gb__errno_code(errno), NULL, 0, "prctl(PR_SET_THP_DISABLE): %s", strerror(errno));
    return 0;
}

bool gb_plat_thp_always(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!f)
        return false;
    char mode[256];
    bool always = fgets(mode, sizeof mode, f) && strstr(mode, "[always]");
    fclose(f);
    return always;
}

int gb_plat_oom_score_adj_get(int *out)
{
    FILE *f = fopen("/proc/self/oom_score_adj", "r");
    if (!f)
        return gb__fail(gb__errno_code(errno), NULL, 0, "/proc/self/oom_score_adj: %s", strerror(errno));
    int ok = fscanf(f, "%d", out) == 1;
    fclose(f);
    return ok ? 0 : gb__fail(GB_EPARSE, NULL, 0, "/proc/self/oom_score_adj: not a number");
}

int gb_plat_oom_score_adj_set(int value)
{
    FILE *f = fopen("/proc/self/oom_score_adj", "w");
    if (!f)
        return gb__fail(gb__errno_code(errno), NULL, 0, "/proc/self/oom_score_adj: %s", strerror(errno));
    fprintf(f, "%d\n", value);
    int bad = fclose(f) != 0;
    return bad ? gb__fail(gb__errno_code(errno), NULL, 0, "/proc/self/oom_score_adj: %s", strerror(errno)) : 0;
}
