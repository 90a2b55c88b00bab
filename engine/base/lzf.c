#include "engine/base/lzf.h"

#include <string.h>

/* A literal run is at most 32 bytes: with that much room on both sides it
 * is copied as a fixed 32-byte block (what lies past the run is rewritten by
 * what follows, or is spare room the caller gave). */
#define FAST_SLACK 32

int64_t gb_lzf_decompress(const void *in, size_t in_len, void *out, size_t out_cap)
{
    const unsigned char *ip = in, *in_end = ip + in_len;
    unsigned char *op = out, *out_start = out;
    size_t room = out_cap;
    while (ip < in_end) {
        size_t ctrl = *ip++;
        if (ctrl < 0x20) {
            size_t n = ctrl + 1;
            if (n > (size_t)(in_end - ip) || n > room)
                return -1;
            if (room >= FAST_SLACK && (size_t)(in_end - ip) >= FAST_SLACK)
                memcpy(op, ip, FAST_SLACK); /* fixed size: a couple of wide moves */
            else
                memcpy(op, ip, n);
            ip += n;
            op += n;
            room -= n;
            continue;
        }
        size_t n = ctrl >> 5;
        if (n == 7) {
            if (ip >= in_end)
                return -1;
            n += *ip++;
        }
        n += 2;
        if (ip >= in_end)
            return -1;
        size_t back = ((ctrl & 0x1f) << 8 | *ip++) + 1;
        if (back > (size_t)(op - out_start) || n > room)
            return -1;
        /* Byte by byte: the source may overlap what this copy writes (a run
         * repeats its last bytes), which memmove would not reproduce. */
        const unsigned char *ref = op - back;
        if (back >= 16 && room >= n + 16) {
            /* 16-byte chunks, the last one past n into room that is ours:
             * each chunk's source lies wholly before its destination */
            for (size_t i = 0; i < n; i += 16)
                memcpy(op + i, ref + i, 16);
        } else if (back >= n) {
            memcpy(op, ref, n); /* no overlap */
        } else {
            for (size_t i = 0; i < n; i++)
                op[i] = ref[i];
        }
        op += n;
        room -= n;
    }
    return (int64_t)(op - out_start);
}
