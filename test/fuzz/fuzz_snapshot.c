/*
 * Fuzz harness: snapshot files (engine/persist/snapread.h, serialize.h)
 * as they lie on disk: the header, the blocks and their checksums, zstd,
 * the trailer, and the records inside.
 *
 * Input: a whole snapshot file, loaded with gb_snap_reader_open and
 * gb_snap_load into an empty engine (engine/modules.h), as start-up does.
 * The seeds are real files saved by the engine (every type and encoding,
 * compressed and not), so mutations start past the checksums; blocks that
 * a mutation breaks are refused by their checksum, which is what most
 * inputs test. fuzz_snaprecord reaches the record decoder behind valid
 * checksums.
 *
 * Checked: a refusal names the file and the offset; a file that loads also
 * passes the repair tool's check (gb_snap_reader_verify), and its dataset
 * is consistent, writable and survives a save and a load (fuzz_snap.h).
 */
#include "fuzz_snap.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[600];
    fuzz_write_file("input.gdb", data, size, path, sizeof path);
    gb_engine *eng = engine(0);
    gb_snap_load_stats st;
    if (snap_load(eng, path, &st)) {
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
