/* Generic POSIX: only what POSIX promises - no pinning, NUMA, huge pages or
 * kernel-assisted parking. */
#include "caps.h"
#include "common/internal.h"

const char *gb_platform_name(void) { return "posix"; }

bool gb_platform_has(unsigned caps) { return caps == 0; }

const char gb__no_numa_why[] = "the generic POSIX platform layer has no memory-policy API and reads no sysfs";
