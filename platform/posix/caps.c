/* Generic POSIX: only what POSIX promises - no pinning, NUMA, huge pages or
 * kernel-assisted parking. */
#include "caps.h"

const char *gb_platform_name(void) { return "posix"; }

bool gb_platform_has(unsigned caps) { return caps == 0; }
