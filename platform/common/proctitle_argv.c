/* proctitle.h where the title lives in argv's memory (Linux, macOS). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"
#include "proctitle.h"

extern char **environ;

static struct {
    char *base, *end; /* the reusable region: argv[0]'s first byte to past the last string in it */
    char **args;      /* the copies of the arguments, reachable from here (leak checkers) */
    int error;
} title_area;

/* Moves every environment string out of the region: a copy of each, in a
 * new array that environ points to (the old strings become the title). */
static int copy_environment(void)
{
    int n = 0;
    while (environ[n])
        n++;
    char **copy = malloc(((size_t)n + 1) * sizeof *copy);
    if (!copy)
        return GB_ENOMEM;
    for (int i = 0; i <= n; i++)
        copy[i] = environ[i] ? strdup(environ[i]) : NULL;
    for (int i = 0; i < n; i++)
        if (!copy[i])
            return GB_ENOMEM;
    environ = copy; /* the old array and strings stay where they are: the title region */
    return 0;
}

int gb_plat_proctitle_init(int argc, char **argv)
{
    if (argc < 1 || !argv[0])
        return title_area.error = gb__fail(GB_EINVAL, NULL, 0, "no argv[0]");
    char *base = argv[0];
    char *end = base + strlen(base) + 1;
    /* The region grows over each string that starts where the last ended:
     * the arguments, then usually the environment right after them. */
    for (int i = 1; i < argc; i++)
        if (argv[i] == end)
            end = argv[i] + strlen(argv[i]) + 1;
    for (int i = 0; environ[i]; i++)
        if (environ[i] == end)
            end = environ[i] + strlen(environ[i]) + 1;
    if (gb__proctitle_keep_program_name() != 0 || copy_environment() != 0)
        return title_area.error = gb__fail(GB_ENOMEM, NULL, 0, "no memory to move the environment");
    title_area.args = calloc((size_t)argc, sizeof *title_area.args);
    if (!title_area.args)
        return title_area.error = gb__fail(GB_ENOMEM, NULL, 0, "no memory to move the arguments");
    for (int i = 0; i < argc; i++) {
        char *copy = strdup(argv[i]);
        if (!copy)
            return title_area.error = gb__fail(GB_ENOMEM, NULL, 0, "no memory to move the arguments");
        argv[i] = title_area.args[i] = copy;
    }
    title_area.base = base;
    title_area.end = end;
    return 0;
}

int gb_plat_proctitle_set(const char *title)
{
    if (!title_area.base)
        return title_area.error ? title_area.error
                                : gb__fail(GB_EINVAL, NULL, 0, "gb_plat_proctitle_init was not called");
    size_t room = (size_t)(title_area.end - title_area.base) - 1;
    size_t n = strlen(title);
    if (n > room)
        n = room;
    memcpy(title_area.base, title, n);
    /* The rest cleared: ps reads up to the region's end, NULs as spaces. */
    memset(title_area.base + n, 0, room + 1 - n);
    return 0;
}
