/*
 * The stream radix tree and its nodes (engine/ds/stream.c, stream_node.c)
 * under steps the input chooses: XADD with explicit IDs in every delta form,
 * XDEL, XSETID below deleted entries, exact and approximate XTRIM, each
 * followed by every check of the model in test/engine/ds/stream_model.h
 * (ranges both ways, lookups, edges, snapshot bytes read back). Each input
 * byte is one choice; past the end of the input, choices are zeros.
 */
#include "fuzz_util.h"

static fuzz_in in;

/* A choice in [0, n) from the next input bytes (one byte when n <= 256). */
static uint64_t choose(uint64_t n)
{
    uint64_t v = fuzz_u8(&in);
    if (n > 256)
        v = (v << 8) | fuzz_u8(&in);
    return v % n;
}

#define MODEL_BELOW(n) choose(n)
#define MODEL_CHECK(cond, ...) FUZZ_CHECK(cond, __VA_ARGS__)
#include "engine/ds/stream_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    in = (fuzz_in){data, size};
    model_begin();
    /* About one step per three input bytes, at most 2,000. */
    for (int steps = 0; in.left && steps < 2000; steps++)
        model_step();
    model_end();
    return 0;
}
