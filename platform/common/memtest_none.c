/* The crash report's memory test where the process's mappings cannot be
 * listed (macOS, the generic POSIX variant): none, as Redis runs it only
 * where /proc/<pid>/maps exists. Sanitized builds too (their shadow memory
 * is reserved, not backed: platform/CMakeLists.txt). */
#include "common/internal.h"

int gb__memtest_prepare(void) { return gb__fail(GB_ENOTSUP, NULL, 0, "no memory test in this build (it needs /proc/self/maps and no sanitizer)"); }

int gb__memtest_process(int fd)
{
    (void)fd;
    return -1;
}
