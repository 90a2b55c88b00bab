/* proctitle.h on Linux: argv's memory (common/proctitle_argv.c); glibc's
 * program_invocation_name points into it, so it is copied out first. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"

int gb__proctitle_keep_program_name(void)
{
    char *name = strdup(program_invocation_name), *short_name = strdup(program_invocation_short_name);
    if (!name || !short_name) {
        free(name);
        free(short_name);
        return GB_ENOMEM;
    }
    program_invocation_name = name;
    program_invocation_short_name = short_name;
    return 0;
}
