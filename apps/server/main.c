/*
 * goblin-core: the server.
 *
 * Start-up order matters (see docs/architecture.md): settings, logging, then
 * the parts that must exist before anything else is allocated (the ring pool,
 * placed and verified on --cpu's NUMA node), then the engine, then the
 * listeners. Any failure before the listeners open exits non-zero with one
 * line that says what to do.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "engine/base/mem.h"
#include "engine/core/config/config.h"
#include "engine/core/engine.h"
#include "engine/core/cluster_mode.h"
#include "engine/modules.h"
#include "engine/core/acl/acl.h"
#include "engine/core/acl/acl_file.h"
#include "engine/core/config/process_settings.h"
#include "platform/daemon.h"
#include "platform/errmsg.h"
#include "platform/proctitle.h"
#include "platform/service.h"
#include "engine/persist/persist.h"
#include "engine/persist/rdb_save.h"
#include "transport/replica/link.h"
#include "transport/cluster/bus.h"
#include "transport/loop/loop.h"
#include "transport/net/server.h"
#include "transport/ring/ring_server.h"

#include "goblin/version.h"

static FILE *open_log(const gb_settings *cfg)
{
    if (!cfg->logfile || !cfg->logfile[0])
        return NULL;
    FILE *f = fopen(cfg->logfile, "a");
    if (!f) {
        fprintf(stderr, "goblin-core: cannot open logfile '%s': %s\n", cfg->logfile, strerror(errno));
        exit(1);
    }
    return f;
}

/*
 * GOBLIN_FAULT_ALLOC, for tests only: "N" fails the Nth fallible allocation
 * (a client's buffers, engine/base/mem.h), "N+" that one and every one
 * after, "N@path:line" the Nth one made at that source line, "0" fails
 * nothing and counts. Only whoever starts the process can set it; no
 * command can. Returns -1 when the value is not one of those.
 */
static int arm_fault_injection(void)
{
    const char *v = getenv("GOBLIN_FAULT_ALLOC");
    if (!v || !v[0])
        return 0;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno || end == v || v[0] == '-')
        return -1;
    if (*end == '@') { /* the environment string outlives the injector */
        const char *path = end + 1, *colon = strrchr(path, ':');
        if (!colon || colon == path || n == 0)
            return -1;
        errno = 0;
        long line = strtol(colon + 1, &end, 10);
        if (errno || end == colon + 1 || *end || line <= 0 || line > INT_MAX)
            return -1;
        static char file[256];
        size_t len = (size_t)(colon - path);
        if (len >= sizeof file)
            return -1;
        memcpy(file, path, len);
        file[len] = '\0';
        gb_mem_fault_arm_site(n, file, (int)line);
        gb_log(GB_LOG_WARNING, "GOBLIN_FAULT_ALLOC=%s: allocation failures injected for testing (call %llu at %s:%ld)",
               v, n, file, line);
        return 1;
    }
    bool after = *end == '+';
    if (after)
        end++;
    if (*end)
        return -1;
    gb_mem_fault_arm(n, after);
    gb_log(GB_LOG_WARNING, "GOBLIN_FAULT_ALLOC=%s: allocation failures injected for testing (%s)", v,
           n == 0 ? "counting only" : after ? "that allocation and every one after" : "that one allocation");
    return 1;
}

/* The injector's counts, for the test that set it: one line, then one per
 * call site reached. */
static void report_fault_injection(void)
{
    gb_mem_fault_stats st;
    gb_mem_fault_get(&st);
    gb_log(GB_LOG_WARNING, "Fault injection: %llu fallible allocations at %u sites, %llu failed on purpose",
           (unsigned long long)st.calls, st.sites, (unsigned long long)st.failed);
    if (st.first_failed_file)
        gb_log(GB_LOG_WARNING, "Fault injection: first failed site %s:%d", st.first_failed_file,
               st.first_failed_line);
    const char *file;
    int line;
    uint64_t calls, first;
    for (unsigned i = 0; gb_mem_fault_site(i, &file, &line, &calls, &first); i++)
        gb_log(GB_LOG_WARNING, "Fault injection: site %s:%d reached %llu times (first as call %llu)", file, line,
               (unsigned long long)calls, (unsigned long long)first);
}

/* A start-up failure: one line in the log, and on the terminal too when the
 * log goes to a file. */
static int fatal(FILE *logf, const char *msg)
{
    gb_log(GB_LOG_WARNING, "Fatal: %s", msg);
    if (logf)
        fprintf(stderr, "goblin-core: %s\n", msg);
    return 1;
}

/* What start-up has built so far, torn down in reverse on every way out. */
typedef struct server_parts {
    gb_settings cfg;
    FILE *logf;
    gb_ring_pool *rings;
    gb_engine *eng;
    gb_loop *loop;
    gb_net_server *srv;
    gb_replica_link *replica_link;
    gb_cluster_bus *cluster_bus;
    bool pidfile_written;
    int supervisor; /* GB_SUPERVISED_*: the manager told of readiness (supervisor_of) */
} server_parts;

/* Redis's createPidFile: daemonized without a pidfile, the default one
 * (Goblin's own name: two servers on one host must not share it). A
 * failure is logged, not fatal, as in Redis. */
static void write_pidfile(server_parts *p)
{
    gb_settings *cfg = &p->cfg;
    if (!cfg->daemonize && !cfg->pidfile[0])
        return;
    if (!cfg->pidfile[0]) {
        gb_free(cfg->pidfile);
        cfg->pidfile = gb_strdup("/var/run/goblin-core.pid");
    }
    char err[512];
    if (gb_plat_write_pidfile(cfg->pidfile, err, sizeof err) != 0) {
        gb_log(GB_LOG_WARNING, "Failed to write PID file: %s", err);
        return;
    }
    p->pidfile_written = true;
}

/* supervised: the service manager to tell, as Redis's redisIsSupervised
 * resolves it (auto: upstart's variable first, then systemd's, else none,
 * silently); a manager asked for whose variable is missing is none (logged
 * once the log is open: log_supervisor). Unlike Redis, which stops for
 * upstart before it loads, this one stops once it listens: the stop is
 * upstart's sign of readiness. */
static int supervisor_of(const gb_settings *cfg)
{
    int mode = cfg->supervised;
    if (mode == GB_SUPERVISED_AUTO)
        mode = gb_plat_upstart_present()   ? GB_SUPERVISED_UPSTART
               : gb_plat_systemd_present() ? GB_SUPERVISED_SYSTEMD
                                           : GB_SUPERVISED_NO;
    if (mode == GB_SUPERVISED_UPSTART && !gb_plat_upstart_present())
        return GB_SUPERVISED_NO;
    if (mode == GB_SUPERVISED_SYSTEMD && !gb_plat_systemd_present())
        return GB_SUPERVISED_NO;
    return mode;
}

/* What Redis logs of supervision at start-up (its redisIsSupervised), and
 * systemd's first status line. */
static void log_supervisor(const server_parts *p)
{
    const gb_settings *cfg = &p->cfg;
    if (p->supervisor == GB_SUPERVISED_SYSTEMD) {
        if (gb_plat_notify_systemd("STATUS=Goblin Core is loading...\n") != 0)
            gb_log(GB_LOG_WARNING, "systemd supervision error: %s", gb_plat_last_error());
        gb_log(GB_LOG_NOTICE, "Supervised by systemd. Please make sure you set appropriate values for "
                              "TimeoutStartSec and TimeoutStopSec in your service unit.");
    } else if (p->supervisor == GB_SUPERVISED_UPSTART) {
        gb_log(GB_LOG_NOTICE, "supervised by upstart, will stop to signal readiness.");
    } else if (cfg->supervised == GB_SUPERVISED_UPSTART) {
        gb_log(GB_LOG_WARNING, "upstart supervision requested, but UPSTART_JOB not found!");
    } else if (cfg->supervised == GB_SUPERVISED_SYSTEMD) {
        gb_log(GB_LOG_WARNING, "systemd supervision error: NOTIFY_SOCKET not found!");
    }
    if (cfg->daemonize && p->supervisor != GB_SUPERVISED_NO)
        gb_log(GB_LOG_NOTICE, "daemonize yes is ignored: the service manager keeps the process in the foreground");
}

/* Listening: systemd hears READY=1 (its unit's Type=notify start ends),
 * upstart sees the process stop (its job's `expect stop`). */
static void tell_supervisor_ready(const server_parts *p)
{
    if (p->supervisor == GB_SUPERVISED_SYSTEMD) {
        if (gb_plat_notify_systemd("STATUS=Ready to accept connections\n") != 0 ||
            gb_plat_notify_systemd("READY=1\n") != 0)
            gb_log(GB_LOG_WARNING, "Could not tell systemd the server is ready: %s", gb_plat_last_error());
    } else if (p->supervisor == GB_SUPERVISED_UPSTART) {
        gb_plat_notify_upstart();
    }
}

/* The process settings of redis.conf that act at start-up. */
static void apply_process_settings(const gb_settings *cfg)
{
    /* As Redis: only where the kernel hands huge pages to every process
     * ("always"). Under "madvise" turning them off would also refuse the
     * few the engine asks for (big key tables: a load's random bucket
     * reads then miss the TLB too, 20% more CPU loading 1M small keys). */
    if (gb_plat_thp_always() && !(cfg->disable_thp && gb_plat_disable_thp() == 0))
        gb_log(GB_LOG_WARNING, "WARNING You have Transparent Huge Pages (THP) support enabled in your kernel. This "
               "will create latency and memory usage issues with Goblin Core. To fix this issue run the command 'echo "
               "madvise > /sys/kernel/mm/transparent_hugepage/enabled' as root, and add it to your /etc/rc.local in "
               "order to retain the setting after a reboot. Goblin Core must be restarted after THP is disabled (set to "
               "'madvise' or 'never').");
    (void)gb_oom_score_apply(cfg); /* logged when it fails; Redis starts anyway */
    gb_crash_log_apply(cfg);
    gb_allocator_bg_thread_apply(cfg);
    gb_config_log_inert(cfg);
}

static int teardown(server_parts *p, int rc)
{
    bool served = p->srv != NULL;
    gb_loop_free(p->loop); /* every peer closes first: then their structures go */
    if (p->srv)
        gb_net_server_free(p->srv);
    if (p->replica_link)
        gb_replica_link_free(p->replica_link);
    if (p->cluster_bus)
        gb_cluster_bus_free(p->cluster_bus);
    if (p->eng)
        gb_engine_free(p->eng);
    if (p->rings)
        gb_ring_pool_free(p->rings);
    if (served && p->supervisor == GB_SUPERVISED_SYSTEMD)
        (void)gb_plat_notify_systemd("STOPPING=1\n");
    if (rc == 0 && served)
        gb_log(GB_LOG_NOTICE, "Goblin Core is now ready to exit, bye bye...");
    if (p->pidfile_written)
        unlink(p->cfg.pidfile);
    gb_settings_free(&p->cfg);
    if (p->logf)
        fclose(p->logf);
    return rc;
}

/* --import-rdb FILE: a Redis dump.rdb converted to Goblin's snapshot at
 * dir/dbfilename, then exit (nothing listens). An existing target is never
 * overwritten. */
static int import_rdb(server_parts *p, char *err, size_t errlen)
{
    const gb_settings *cfg = &p->cfg;
    char target[4096];
    snprintf(target, sizeof target, "%s/%s", cfg->dir, cfg->dbfilename);
    if (access(target, F_OK) == 0) {
        snprintf(err, errlen, "--import-rdb: %.400s exists already; remove it or choose another --dbfilename",
                 target);
        return -1;
    }
    gb_log(GB_LOG_NOTICE, "Importing the Redis RDB file %s into %s", cfg->import_rdb, target);
    if (gb_persist_load_redis_rdb(p->eng, cfg->import_rdb, err, errlen) != 0)
        return -1;
    if (gb_persist_save(gb_persist_of(p->eng), err, errlen) != 0)
        return -1;
    gb_log(GB_LOG_NOTICE, "Import done: start goblin-core with --dir %s --dbfilename %s to serve it", cfg->dir,
           cfg->dbfilename);
    return 0;
}

/* --export-rdb FILE: the dataset start-up would load, written as a Redis
 * dump.rdb, then exit (nothing listens). An existing FILE is never
 * overwritten. */
static int export_rdb(server_parts *p, char *err, size_t errlen)
{
    const char *target = p->cfg.export_rdb;
    if (access(target, F_OK) == 0) {
        snprintf(err, errlen, "--export-rdb: %.400s exists already; remove it or choose another path", target);
        return -1;
    }
    if (gb_persist_load(gb_persist_of(p->eng), err, errlen) != 0)
        return -1;
    uint64_t keys;
    if (gb_rdb_save_file(p->eng, target, &keys, err, errlen) != 0)
        return -1;
    gb_log(GB_LOG_NOTICE, "Export done: %llu keys written to %s as a Redis RDB file (version 10)",
           (unsigned long long)keys, target);
    return 0;
}

int main(int argc, char **argv)
{
    server_parts p = {0};
    gb_settings *cfg = &p.cfg;
    /* First: argv's memory becomes the process title's (set-proc-title);
     * argv itself points at copies afterwards. */
    int title_rc = gb_plat_proctitle_init(argc, argv);
    /* SORT ... ALPHA collates with strcoll in the environment's
     * LC_COLLATE, as redis-server (which sets only that category). */
    setlocale(LC_COLLATE, "");
    gb_settings_defaults(cfg);
    char err[512];
    int rc = gb_config_parse_args(cfg, argc - 1, argv + 1, err, sizeof err);
    cfg->exec_name = argv[0];
    if (rc == 1) /* --help, --version */
        return teardown(&p, 0);
    if (rc != 0) {
        fprintf(stderr, "goblin-core: %s\n", err);
        return teardown(&p, 1);
    }
    /* Before any thread starts: only the calling thread survives fork. A
     * server a service manager supervises stays in the foreground, as
     * Redis's (the manager tracks this pid). */
    p.supervisor = supervisor_of(cfg);
    if (cfg->daemonize && p.supervisor == GB_SUPERVISED_NO && gb_plat_daemonize(err, sizeof err) != 0) {
        fprintf(stderr, "goblin-core: daemonize: %s\n", err);
        return teardown(&p, 1);
    }
    p.logf = open_log(cfg);
    gb_log_set(cfg->loglevel, p.logf);
    if (cfg->syslog_enabled)
        gb_log_to_syslog(cfg->syslog_ident, cfg->syslog_facility);
    write_pidfile(&p);
    log_supervisor(&p);
    apply_process_settings(cfg);
    if (gb_fd_limit_apply(cfg, true, err, sizeof err) != 0)
        return teardown(&p, fatal(p.logf, err));

    if ((cfg->import_rdb && cfg->import_rdb[0]) || (cfg->export_rdb && cfg->export_rdb[0])) {
        /* a conversion: no rings, nothing listens */
        if (cfg->import_rdb[0] && cfg->export_rdb[0])
            return teardown(&p, fatal(p.logf, "--import-rdb and --export-rdb are two separate runs"));
        p.eng = gb_engine_new(cfg);
        int done = cfg->import_rdb[0] ? import_rdb(&p, err, sizeof err) : export_rdb(&p, err, sizeof err);
        return teardown(&p, done == 0 ? 0 : fatal(p.logf, err));
    }

    /* Helper threads (lazy freeing, snapshot writing, log fsync, ring
     * refills) get the CPUs this process may use minus the engine's:
     * recorded now, before the ring pool pins this thread and every thread
     * it starts would inherit the one CPU. */
    if (cfg->cpu >= 0 && gb_cpu_allowed(&cfg->helper_cpus) == 0) {
        gb_cpuset_clear(&cfg->helper_cpus, cfg->cpu);
        if (gb_cpuset_count(&cfg->helper_cpus) == 0)
            gb_log(GB_LOG_WARNING, "--cpu %d is the only CPU this process may use: helper threads (saves, lazy "
                   "freeing, log fsync) will share it with the engine", cfg->cpu);
    }

    /* The ring pool comes first: pinned, placed on the engine CPU's NUMA node
     * and verified before anything else allocates (docs/numa.md). */
    char placement[1024] = "";
    p.rings = gb_ring_pool_create(cfg, err, sizeof err, placement, sizeof placement);
    if (!p.rings)
        return teardown(&p, fatal(p.logf, err));

    p.eng = gb_engine_new(cfg);
    char *exe = realpath(argv[0], NULL); /* INFO's executable, as Redis's absolute argv[0] */
    snprintf(p.eng->executable, sizeof p.eng->executable, "%s", exe ? exe : argv[0]);
    free(exe);
    /* Cluster mode's state before the data: keys count by slot as they load. */
    if (gb_cluster_mode_start(p.eng, err, sizeof err) != 0)
        return teardown(&p, fatal(p.logf, err));
    if (gb_persist_load(gb_persist_of(p.eng), err, sizeof err) != 0)
        return teardown(&p, fatal(p.logf, err));
    /* The loop, then its peers: the sockets and the rings, which know
     * nothing of each other. */
    p.loop = gb_loop_new(p.eng, err, sizeof err);
    if (!p.loop)
        return teardown(&p, fatal(p.logf, err));
    p.srv = gb_net_server_new(p.eng, p.loop, err, sizeof err);
    if (!p.srv)
        return teardown(&p, fatal(p.logf, err));
    if (gb_ring_pool_attach(p.rings, p.eng, p.loop) != 0)
        return teardown(&p, fatal(p.logf, "the event loop has no room for the rings"));
    p.replica_link = gb_replica_link_new(p.eng, p.loop, err, sizeof err);
    if (!p.replica_link)
        return teardown(&p, fatal(p.logf, err));
    p.cluster_bus = gb_cluster_bus_new(p.eng, p.loop, err, sizeof err);
    if (err[0])
        return teardown(&p, fatal(p.logf, err));
    /* Users last: their rules may name any command, RING included. */
    if (gb_acl_load_at_startup(p.eng, err, sizeof err) != 0)
        return teardown(&p, fatal(p.logf, err));
    struct utsname un;
    uname(&un);
    gb_log(GB_LOG_NOTICE, "Goblin Core %s (Redis %s compatible) starting, pid %ld, %s %s %s", GOBLIN_VERSION,
           "7.0.15", (long)getpid(), un.sysname, un.release, un.machine);
    gb_log(GB_LOG_NOTICE, "Listening on %s; %d databases; maxmemory %s; lists: %s", gb_net_server_describe(p.srv),
           cfg->databases, cfg->maxmemory ? "set" : "unlimited",
           cfg->list_implementation == GB_LISTIMPL_PMA ? "pma" : "segmented");
    gb_log(GB_LOG_NOTICE, "Rings: %s%s%s", gb_ring_pool_describe(p.rings), placement[0] ? "; " : "", placement);
    if (gb_acl_auth_required(p.eng))
        gb_log(GB_LOG_NOTICE, "Password protection is on (the default user has a password or is off)");
    else if (cfg->bind && strstr(cfg->bind, "0.0.0.0") && !cfg->protected_mode)
        gb_log(GB_LOG_WARNING, "Listening on all interfaces without a password and with protected-mode off: "
                               "anyone who can reach this host can read and change all data. Set --requirepass, "
                               "define users (docs/acl.md) or bind to 127.0.0.1.");
    /* Armed last: what start-up allocates is not a client's, and counting
     * from here gives every run of a test the same numbers. */
    int fault = arm_fault_injection();
    if (fault < 0)
        return teardown(&p, fatal(p.logf, "GOBLIN_FAULT_ALLOC must be N, N+, N@file:line or 0 (a test-only setting; see --help)"));
    if (title_rc != 0 && cfg->set_proc_title)
        gb_log(GB_LOG_WARNING, "set-proc-title: %s", gb_strerror(title_rc));
    else
        (void)gb_proc_title_apply(cfg); /* logged when it fails */
    gb_log(GB_LOG_NOTICE, "Ready to accept connections");
    tell_supervisor_ready(&p);

    gb_loop_run(p.loop);
    if (fault)
        report_fault_injection();
    return teardown(&p, 0);
}
