/*
 * goblin-check-aof: checks an append-only log and, with --fix, cuts a
 * damaged incremental file back to its last whole command, so the server
 * starts again (what came after the damage is lost, and the tool says how
 * many bytes). Redis's redis-check-aof does the same for Redis's logs.
 *
 *   goblin-check-aof [--fix] <dir>/appendonlydir/appendonly.aof.manifest
 *   goblin-check-aof [--fix] <file>.incr.aof
 *   goblin-check-aof <file>.base.gdb        (a snapshot: checked, never changed)
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/persist/aof_reader.h"
#include "engine/persist/fileio.h"
#include "engine/persist/manifest.h"
#include "engine/persist/snapread.h"

static bool count_one(void *ctx, int argc, gb_slice *argv, int64_t offset)
{
    (void)argc, (void)argv, (void)offset;
    (*(long long *)ctx)++;
    return true;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* 0 fine (or fixed), 1 damaged. */
static int check_incr(const char *path, bool fix, bool may_fix)
{
    long long commands = 0;
    int64_t end = 0;
    const char *why = NULL;
    int rc = gb_aof_walk(path, count_one, &commands, &end, &why);
    struct stat st;
    long long size = stat(path, &st) == 0 ? (long long)st.st_size : -1;
    if (rc < 0 && !why) {
        fprintf(stderr, "%s: cannot read: %s\n", path, strerror(errno));
        return 1;
    }
    if (rc == 0) {
        printf("%s: OK, %lld commands, %lld bytes\n", path, commands, size);
        return 0;
    }
    printf("%s: %s at offset %lld after %lld good commands; %lld bytes follow it\n", path,
           rc == 1 ? "the last command is cut short" : why, (long long)end, commands, size - (long long)end);
    if (!fix) {
        printf("Run again with --fix to cut the file at offset %lld (the bytes after it are lost).\n", (long long)end);
        return 1;
    }
    if (!may_fix) {
        printf("Not fixed: it is not the last file of the log, and cutting it would drop every later write. Restore "
               "it from a backup, or remove it and the files after it from the manifest by hand.\n");
        return 1;
    }
    int fd = open(path, O_WRONLY);
    if (fd < 0 || ftruncate(fd, (off_t)end) != 0 || gb_file_sync_fd(fd) != 0) {
        fprintf(stderr, "%s: cannot truncate: %s\n", path, strerror(errno));
        return 1;
    }
    close(fd);
    printf("Fixed: %s cut at offset %lld (%lld bytes removed).\n", path, (long long)end, size - (long long)end);
    return 0;
}

static int check_base(const char *path)
{
    char err[700];
    gb_snap_reader *r = gb_snap_reader_open(path, err, sizeof err);
    if (!r) {
        printf("%s\n", err);
        return 1;
    }
    bool ok = gb_snap_reader_verify(r);
    printf("%s: %s\n", path, ok ? "OK (every block and the trailer check)" : gb_snap_reader_error(r));
    gb_snap_reader_free(r);
    return ok ? 0 : 1;
}

static int check_manifest(const char *path, bool fix)
{
    gb_manifest m;
    gb_manifest_init(&m);
    char err[600];
    int rc = gb_manifest_read(&m, path, err, sizeof err);
    if (rc != 0) {
        printf("%s\n", rc == GB_ENOENT ? "no such manifest" : err);
        return 1;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    int bad = 0;
    for (size_t i = 0; i < m.n; i++) {
        char file[4400];
        gb_path_join(file, sizeof file, dir, m.files[i].name);
        bad |= m.files[i].type == 'b' ? check_base(file) : check_incr(file, fix, i + 1 == m.n);
    }
    gb_manifest_free(&m);
    return bad;
}

int main(int argc, char **argv)
{
    bool fix = false;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--fix") == 0)
            fix = true;
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            path = NULL, argc = 0;
        else
            path = argv[i];
    }
    if (!path) {
        fprintf(stderr,
                "Usage: goblin-check-aof [--fix] <appendonly.aof.manifest | file.incr.aof | file.base.gdb>\n"
                "Checks Goblin Core's append-only log. With --fix, cuts a damaged last incremental file back to\n"
                "its last whole command so the server can start (the bytes after the damage are lost).\n");
        return 2;
    }
    if (ends_with(path, ".manifest"))
        return check_manifest(path, fix);
    if (ends_with(path, ".gdb"))
        return check_base(path);
    return check_incr(path, fix, true);
}
