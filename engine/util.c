/* Small helpers shared across the engine. */
#include "engine/common.h"

bool gb_slice_ieq(gb_slice a, const char *lit)
{
    size_t i = 0;
    for (; i < a.len; i++) {
        unsigned char x = (unsigned char)a.ptr[i], y = (unsigned char)lit[i];
        if (y == 0)
            return false;
        if (x >= 'A' && x <= 'Z')
            x = (unsigned char)(x + 32);
        if (y >= 'A' && y <= 'Z')
            y = (unsigned char)(y + 32);
        if (x != y)
            return false;
    }
    return lit[i] == 0;
}
