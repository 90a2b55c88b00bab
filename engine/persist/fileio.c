#define _POSIX_C_SOURCE 200809L
#include "engine/persist/fileio.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "platform/file.h"

int gb_write_all(int fd, const void *p, size_t n)
{
    const char *s = p;
    while (n) {
        ssize_t k = gb_plat_write(fd, s, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        s += k;
        n -= (size_t)k;
    }
    return 0;
}

ssize_t gb_read_full(int fd, void *p, size_t n)
{
    char *d = p;
    size_t got = 0;
    while (got < n) {
        ssize_t k = gb_plat_read(fd, d + got, n - got);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (k == 0)
            break;
        got += (size_t)k;
    }
    return (ssize_t)got;
}

int gb_file_sync_fd(int fd) { return gb_plat_file_sync(fd) == 0 ? 0 : -1; }

int gb_sync_parent_dir(const char *path)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    return gb_plat_dir_sync(dir) == 0 ? 0 : -1;
}

int gb_rename_durably(const char *tmp, const char *path)
{
    if (gb_plat_rename(tmp, path) != 0)
        return -1;
    return gb_sync_parent_dir(path);
}

int gb_path_join(char *out, size_t cap, const char *dir, const char *name)
{
    size_t dl = strlen(dir);
    int n = dl && dir[dl - 1] == '/' ? snprintf(out, cap, "%s%s", dir, name) : snprintf(out, cap, "%s/%s", dir, name);
    return n >= 0 && (size_t)n < cap;
}

int gb_remove_prefixed(const char *dir, const char *prefix, bool (*keep)(void *ctx, const char *name), void *ctx)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t pl = strlen(prefix);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (strncmp(e->d_name, prefix, pl) != 0 || (keep && keep(ctx, e->d_name)))
            continue;
        char path[4400];
        if (gb_path_join(path, sizeof path, dir, e->d_name) && gb_plat_unlink(path) == 0)
            n++;
    }
    closedir(d);
    if (n)
        gb_plat_dir_sync(dir);
    return n;
}
