/*
 * The main() a harness gets outside the libFuzzer build: runs
 * LLVMFuzzerTestOneInput once on every file named, and on every file of
 * every directory named (in name order, so a failure reproduces the same
 * way), and says how many it ran. A directory that does not exist is
 * skipped: regressions/<harness>/ only exists once that harness has found
 * something. A failing input aborts in the harness; its path is printed
 * first so the report names it.
 *
 * The ctest tests (label fuzz-regression) run it over test/fuzz/corpus/<h>
 * and test/fuzz/regressions/<h>; run by hand, it replays a crash file that
 * libFuzzer wrote.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mkdtemp, aligned_alloc: macOS hides them under any _POSIX_C_SOURCE */
#endif
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_util.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 4096;
            buf = realloc(buf, cap);
            FUZZ_CHECK(buf != NULL, "out of memory reading %s", path);
        }
        size_t k = fread(buf + len, 1, cap - len, f);
        len += k;
        if (k == 0)
            break;
    }
    bool bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        fprintf(stderr, "replay: cannot read %s\n", path);
        return -1;
    }
    fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
    /* Exactly len bytes, as libFuzzer passes them: a harness that reads
     * past its input is caught here too. */
    uint8_t *exact = fuzz_dup(buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Runs every regular file of dir; returns how many, or -1. */
static long run_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT)
            return 0;
        fprintf(stderr, "replay: cannot open %s: %s\n", dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        names = realloc(names, (n + 1) * sizeof *names);
        FUZZ_CHECK(names != NULL, "out of memory listing %s", dir);
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    if (n > 1) /* names is NULL for an empty folder, which qsort may not be given */
        qsort(names, n, sizeof *names, cmp_names);
    long ran = 0;
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            if (run_file(path) != 0)
                ran = -1;
            else if (ran >= 0)
                ran++;
        }
        free(names[i]);
    }
    free(names);
    return ran;
}

int main(int argc, char **argv)
{
    long total = 0;
    bool failed = false;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        long k;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
            k = run_dir(argv[i]);
        else if (stat(argv[i], &st) != 0 && errno == ENOENT)
            k = 0;
        else
            k = run_file(argv[i]) == 0 ? 1 : -1;
        if (k < 0)
            failed = true;
        else
            total += k;
    }
    if (failed)
        return 1;
    /* Nothing at all means a misspelt folder, not a clean corpus. */
    if (total == 0) {
        fprintf(stderr, "replay: no input found in the paths given\n");
        return 1;
    }
    printf("replay: %ld inputs ran without a finding\n", total);
    return 0;
}
