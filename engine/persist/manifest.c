#define _POSIX_C_SOURCE 200809L
#include "engine/persist/manifest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/base/mem.h"
#include "engine/base/util.h"
#include "engine/persist/fileio.h"
#include "goblin/error.h"
#include "platform/file.h"

void gb_manifest_init(gb_manifest *m) { memset(m, 0, sizeof *m); }

void gb_manifest_free(gb_manifest *m)
{
    gb_free(m->files);
    memset(m, 0, sizeof *m);
}

void gb_manifest_add(gb_manifest *m, const char *name, int64_t seq, char type)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 4;
        m->files = gb_realloc(m->files, m->cap * sizeof *m->files);
    }
    gb_manifest_file *f = &m->files[m->n++];
    snprintf(f->name, sizeof f->name, "%s", name);
    f->seq = seq;
    f->type = type;
}

int64_t gb_manifest_max_seq(const gb_manifest *m)
{
    int64_t s = 0;
    for (size_t i = 0; i < m->n; i++)
        if (m->files[i].seq > s)
            s = m->files[i].seq;
    return s;
}

/* A name the log's directory may hold: no path, nothing hidden. */
static bool name_ok(const char *s)
{
    if (!*s || *s == '.' || strlen(s) > GB_MANIFEST_NAME_MAX)
        return false;
    for (; *s; s++)
        if (*s == '/' || (unsigned char)*s < 0x21 || (unsigned char)*s > 0x7e)
            return false;
    return true;
}

static int bad(char *err, size_t errlen, const char *path, int line, const char *why)
{
    snprintf(err, errlen, "'%.300s' line %d: %s", path, line, why);
    return GB_EPARSE;
}

int gb_manifest_read(gb_manifest *m, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT)
            return GB_ENOENT;
        snprintf(err, errlen, "cannot open '%.300s': %s", path, strerror(errno));
        return GB_EIO;
    }
    char line[1024];
    int lineno = 0, rc = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        if (len && line[len - 1] == '\n')
            line[--len] = '\0';
        else if (!feof(f)) {
            rc = bad(err, errlen, path, lineno, "line too long");
            break;
        }
        if (len && line[len - 1] == '\r')
            line[--len] = '\0';
        if (len == 0 || line[0] == '#')
            continue;
        char k1[8], name[GB_MANIFEST_NAME_MAX + 2], k2[8], k3[8], type[4];
        long long seq;
        char extra;
        int n = sscanf(line, "%7s %256s %7s %lld %7s %3s %c", k1, name, k2, &seq, k3, type, &extra);
        if (n != 6 || strcmp(k1, "file") || strcmp(k2, "seq") || strcmp(k3, "type")) {
            rc = bad(err, errlen, path, lineno, "expected 'file <name> seq <n> type <b|i>'");
            break;
        }
        if (!name_ok(name)) {
            rc = bad(err, errlen, path, lineno, "the file name is not a plain name in the log's directory");
            break;
        }
        if (seq <= 0) {
            rc = bad(err, errlen, path, lineno, "the sequence number must be positive");
            break;
        }
        if (strcmp(type, "b") && strcmp(type, "i")) {
            rc = bad(err, errlen, path, lineno, "the type must be b (base) or i (incremental)");
            break;
        }
        if (type[0] == 'b' && m->n) {
            rc = bad(err, errlen, path, lineno, "a base file must come first, and only one");
            break;
        }
        if (m->n == GB_MANIFEST_FILES_MAX) {
            rc = bad(err, errlen, path, lineno, "too many files");
            break;
        }
        /* each incremental file once, in the order written (Redis refuses
         * the same): replayed twice or out of order, its commands would
         * be applied twice or in the wrong order */
        if (type[0] == 'i' && m->n && m->files[m->n - 1].type == 'i' && seq <= m->files[m->n - 1].seq) {
            rc = bad(err, errlen, path, lineno, "Found a non-monotonic sequence number");
            break;
        }
        bool named = false;
        for (size_t i = 0; i < m->n && !named; i++)
            named = strcmp(m->files[i].name, name) == 0;
        if (named) {
            rc = bad(err, errlen, path, lineno, "the file is named twice");
            break;
        }
        gb_manifest_add(m, name, seq, type[0]);
    }
    if (rc == 0 && ferror(f))
        rc = bad(err, errlen, path, lineno, strerror(errno));
    if (rc == 0 && m->n == 0)
        rc = bad(err, errlen, path, lineno, "the manifest names no file");
    fclose(f);
    return rc;
}

int gb_manifest_write(const gb_manifest *m, const char *path, char *err, size_t errlen)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid());
    int fd = gb_plat_open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "cannot create '%.300s': %s", tmp, strerror(errno));
        return -1;
    }
    char line[GB_MANIFEST_NAME_MAX + 64];
    int rc = 0;
    for (size_t i = 0; i < m->n && rc == 0; i++) {
        int k = snprintf(line, sizeof line, "file %s seq %lld type %c\n", m->files[i].name,
                         (long long)m->files[i].seq, m->files[i].type);
        rc = gb_write_all(fd, line, (size_t)k);
    }
    if (rc == 0)
        rc = gb_file_sync_fd(fd);
    int e = errno;
    if (gb_plat_close(fd) != 0 && rc == 0) {
        rc = -1;
        e = errno;
    }
    if (rc == 0 && gb_rename_durably(tmp, path) != 0) {
        rc = -1;
        e = errno;
    }
    if (rc != 0) {
        gb_plat_unlink(tmp);
        snprintf(err, errlen, "cannot write the manifest '%.300s': %s", path, strerror(e));
    }
    return rc;
}
