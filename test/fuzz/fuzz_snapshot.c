/*
 * Fuzz harness: snapshot files (engine/persist/snapread.h, serialize.h)
 * as they lie on disk: the header, the blocks and their checksums, zstd,
 * the trailer, and the records inside.
 *
 * Input: [mode u8][a whole snapshot file], loaded with gb_snap_reader_open
 * and gb_snap_load into an empty engine (engine/modules.h), as start-up
 * does.
 *   mode bit 0 clear: the file as given. Most mutations break a checksum,
 *     and being refused for it is what those inputs test.
 *   mode bit 0 set: every checksum is made right first (the header's, each
 *     block's, the chain and the trailer's; not the trailer's counts), so
 *     mutations of block sizes, codecs, zstd frames and counts get past
 *     them. fuzz_snaprecord reaches the records behind valid checksums.
 *   mode bit 1 set: blocks are decoded on the read-ahead thread, as at
 *     start-up (gb_snap_reader_read_ahead); clear, on the loading thread.
 * The seeds are real files saved by the engine (every type and encoding,
 * compressed and not).
 *
 * Checked: a refusal names the file and the offset; a file that loads also
 * passes the repair tool's check (gb_snap_reader_verify), and its dataset
 * is consistent, writable and survives a save and a load (fuzz_snap.h).
 */
#include "fuzz_snap.h"

#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack, as snapread.c */
#include <xxhash.h>

#include "engine/persist/snapfmt.h"

/* The harness's two engines, made once, emptied for each input
 * (fuzz_engine_reset): a loads the input, b the round trip's file. */
static gb_engine *engine(int which)
{
    static gb_engine *eng[2];
    if (!eng[which])
        eng[which] = fuzz_engine_new(NULL, NULL);
    fuzz_engine_reset(eng[which]);
    return eng[which];
}

/* Rewrites every checksum of the file in f[0..n) (engine/persist/snapfmt.h)
 * as a writer would have computed it, walking blocks by their stored sizes
 * while they fit. */
static void fix_checksums(uint8_t *f, size_t n)
{
    if (n < GB_SNAP_HEADER_SIZE)
        return;
    gb_le64_put(f + 24, XXH3_64bits(f, 24));
    XXH3_state_t *chain = XXH3_createState();
    XXH3_64bits_reset(chain);
    size_t off = GB_SNAP_HEADER_SIZE;
    while (n - off >= GB_SNAP_BLOCK_HEADER_SIZE && gb_le32_get(f + off) == GB_SNAP_BLOCK_MAGIC) {
        uint8_t *h = f + off;
        uint32_t stored = gb_le32_get(h + 4);
        if (stored > n - off - GB_SNAP_BLOCK_HEADER_SIZE)
            break;
        XXH3_state_t st;
        XXH3_64bits_reset(&st);
        XXH3_64bits_update(&st, h, 16);
        XXH3_64bits_update(&st, h + GB_SNAP_BLOCK_HEADER_SIZE, stored);
        gb_le64_put(h + 16, XXH3_64bits_digest(&st));
        XXH3_64bits_update(chain, h + 16, 8);
        off += GB_SNAP_BLOCK_HEADER_SIZE + stored;
    }
    if (n - off >= GB_SNAP_TRAILER_SIZE && gb_le32_get(f + off) == GB_SNAP_TRAILER_MAGIC) {
        gb_le64_put(f + off + 32, XXH3_64bits_digest(chain));
        gb_le64_put(f + off + 40, XXH3_64bits(f + off, 40));
    }
    XXH3_freeState(chain);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = {data, size};
    uint8_t mode = fuzz_u8(&in);
    uint8_t *file = fuzz_dup(in.p, in.left);
    if (mode & 1)
        fix_checksums(file, in.left);
    char path[600];
    fuzz_write_file("input.gdb", file, in.left, path, sizeof path);
    free(file);
    gb_engine *eng = engine(0);
    gb_snap_load_stats st;
    if (snap_load(eng, path, &st, (mode & 2) != 0)) {
        char err[700];
        gb_snap_reader *r = gb_snap_reader_open(path, err, sizeof err);
        FUZZ_CHECK(r != NULL, "a file that loaded does not open: %s", err);
        FUZZ_CHECK(gb_snap_reader_verify(r), "a file that loaded fails verification: %s", gb_snap_reader_error(r));
        gb_snap_reader_free(r);
        snap_check_dataset(eng);
        snap_check_roundtrip(eng, engine(1));
    }
    unlink(path);
    return 0;
}
