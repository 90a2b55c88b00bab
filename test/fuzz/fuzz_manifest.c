/*
 * Fuzz harness: the append-only log's manifest (engine/persist/manifest.h),
 * gb_manifest_read over arbitrary bytes.
 *
 * Input: the manifest file. What is accepted obeys the manifest's rules
 * (plain names, positive sequence numbers, b or i, at most one base and
 * first, at least one file, at most GB_MANIFEST_FILES_MAX) and survives
 * gb_manifest_write and a second read unchanged.
 */
#include "fuzz_util.h"

#include "engine/persist/manifest.h"

static void check_rules(const gb_manifest *m)
{
    FUZZ_CHECK(m->n >= 1 && m->n <= GB_MANIFEST_FILES_MAX, "%zu files", m->n);
    for (size_t i = 0; i < m->n; i++) {
        const gb_manifest_file *f = &m->files[i];
        size_t len = strnlen(f->name, sizeof f->name);
        FUZZ_CHECK(len > 0 && len <= GB_MANIFEST_NAME_MAX && f->name[0] != '.' && !strchr(f->name, '/'),
                   "file %zu is named '%.*s'", i, (int)len, f->name);
        for (size_t k = 0; k < len; k++)
            FUZZ_CHECK(f->name[k] > 0x20 && f->name[k] < 0x7f, "file %zu's name holds byte 0x%02x", i,
                       (unsigned char)f->name[k]);
        FUZZ_CHECK(f->seq > 0, "file %zu has sequence %lld", i, (long long)f->seq);
        FUZZ_CHECK(f->type == 'i' || (f->type == 'b' && i == 0), "file %zu has type '%c'", i, f->type);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[600], err[700];
    fuzz_write_file("appendonly.aof.manifest", data, size, path, sizeof path);
    gb_manifest m;
    gb_manifest_init(&m);
    int rc = gb_manifest_read(&m, path, err, sizeof err);
    FUZZ_CHECK(rc == 0 || rc == GB_EPARSE, "rc %d", rc);
    if (rc == 0) {
        check_rules(&m);
        FUZZ_CHECK(gb_manifest_write(&m, path, err, sizeof err) == 0, "cannot write it back: %s", err);
        gb_manifest again;
        gb_manifest_init(&again);
        rc = gb_manifest_read(&again, path, err, sizeof err);
        FUZZ_CHECK(rc == 0, "what was written does not read back: %s", err);
        FUZZ_CHECK(again.n == m.n, "%zu files, then %zu", m.n, again.n);
        for (size_t i = 0; i < m.n; i++)
            FUZZ_CHECK(strcmp(again.files[i].name, m.files[i].name) == 0 && again.files[i].seq == m.files[i].seq &&
                           again.files[i].type == m.files[i].type,
                       "file %zu reads back differently", i);
        gb_manifest_free(&again);
    } else {
        FUZZ_CHECK(strncmp(err, "'", 1) == 0 && strstr(err, " line "), "a refusal without the line: %s", err);
    }
    gb_manifest_free(&m);
    unlink(path);
    return 0;
}
