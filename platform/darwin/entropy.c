/* macOS entropy: arc4random_buf, the system CSPRNG; it cannot fail. */
#include <stdlib.h>

#include "common/internal.h"
#include "entropy.h"

int gb_entropy_fill(void *buf, size_t len)
{
    if (!buf && len)
        return gb__fail(GB_EINVAL, NULL, 0, "entropy: NULL buffer");
    arc4random_buf(buf, len);
    return 0;
}
