/* proctitle.h on macOS: argv's memory (common/proctitle_argv.c);
 * getprogname() points into it, so it is copied out first. */
#include <stdlib.h>
#include <string.h>

#include "common/internal.h"

int gb__proctitle_keep_program_name(void)
{
    char *name = strdup(getprogname());
    if (!name)
        return GB_ENOMEM;
    setprogname(name);
    return 0;
}
