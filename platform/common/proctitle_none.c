/* proctitle.h where no title can be set (the generic POSIX variant). */
#include "common/internal.h"
#include "proctitle.h"

int gb_plat_proctitle_init(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

int gb_plat_proctitle_set(const char *title)
{
    (void)title;
    return gb__fail(GB_ENOTSUP, NULL, 0, "process titles are not supported by the generic POSIX platform layer");
}
