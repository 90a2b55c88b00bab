/* process.h for the platform layers without /proc/<pid>/numa_maps (darwin,
 * posix): every call is "not supported". Picked by platform/CMakeLists.txt
 * instead of <os>/process.c. */
#include "common/internal.h"
#include "daemon.h"
#include "process.h"

static int unsupported(void)
{
    return gb__fail(GB_ENOTSUP, NULL, 0, "no /proc/<pid>/numa_maps to read: %s", gb__no_numa_why);
}

int gb_proc_numa_maps_line(pid_t pid, const void *addr, char *out, size_t cap)
{
    (void)pid, (void)addr, (void)out, (void)cap;
    return unsupported();
}

int gb_proc_numa_maps_nodes(pid_t pid, const void *addr, char *out, size_t cap)
{
    (void)pid, (void)addr;
    if (out && cap)
        out[0] = '\0';
    return unsupported();
}

int gb_proc_numa_maps_pages(pid_t pid, const void *addr, size_t *pages, int nnodes)
{
    (void)pid, (void)addr, (void)pages, (void)nnodes;
    return unsupported();
}

int gb_plat_thread_cpu_seconds(double *user, double *sys)
{
    (void)user, (void)sys;
    return gb__fail(GB_ENOTSUP, NULL, 0, "no per-thread CPU usage on this platform");
}

int gb_plat_disable_thp(void) { return gb__fail(GB_ENOTSUP, NULL, 0, "no transparent huge pages to turn off"); }

bool gb_plat_thp_always(void) { return false; }

int gb_plat_oom_score_adj_get(int *out)
{
    (void)out;
    return gb__fail(GB_ENOTSUP, NULL, 0, "no OOM killer score on this platform");
}

int gb_plat_oom_score_adj_set(int value)
{
    (void)value;
    return gb__fail(GB_ENOTSUP, NULL, 0, "no OOM killer score on this platform");
}
