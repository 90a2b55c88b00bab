/*
 * Fuzz harness: the snapshot record decoder (engine/persist/serialize.h)
 * and the compact-encoding validators it hands blobs to
 * (gb_list_from_listpack, gb_set_from_listpack / gb_set_from_intset,
 * gb_hash_from_listpack, gb_zset_from_listpack in engine/ds/), reached
 * behind valid checksums.
 *
 * Input: [settings u8][trailer keys u8][record stream]
 *   settings bit 0: list-implementation pma (else segmented)
 *   settings bit 1: tiny compact-encoding thresholds (2 entries, 8 bytes),
 *                   so loaded compact values convert on load
 *   settings bit 2: load as start-up loads a log's base (eng->loading:
 *                   keys past their expiry are kept)
 * The record stream (AUX, DBSIZE, SELECTDB, KEY ... EOF records,
 * engine/persist/snapfmt.h) is written into a valid file with the engine's
 * own writer (gb_snap_writer_open / gb_snap_put / gb_snap_writer_close,
 * stored blocks, the trailer counting the given keys), then loaded into an
 * empty engine. The seeds are the record streams of the real snapshots of
 * corpus/snapshot/.
 *
 * Checked as fuzz_snapshot: a refusal names the file and the offset; a
 * dataset that loads is consistent, writable and survives a save and a
 * load (fuzz_snap.h).
 */
#include "fuzz_snap.h"

#include "engine/persist/snapwrite.h"

static void tweak(gb_settings *s, void *ctx)
{
    uint8_t bits = *(const uint8_t *)ctx;
    char err[256];
    if (bits & 1)
        FUZZ_CHECK(gb_config_set(s, "list-implementation", "pma", false, err, sizeof err) == 0, "%s", err);
    if (bits & 2) {
        static const char *const tiny[][2] = {
            {"list-max-listpack-size", "2"},    {"hash-max-listpack-entries", "2"},
            {"hash-max-listpack-value", "8"},   {"set-max-intset-entries", "2"},
            {"set-max-listpack-entries", "2"},  {"set-max-listpack-value", "8"},
            {"zset-max-listpack-entries", "2"}, {"zset-max-listpack-value", "8"},
        };
        for (size_t i = 0; i < sizeof tiny / sizeof *tiny; i++)
            FUZZ_CHECK(gb_config_set(s, tiny[i][0], tiny[i][1], false, err, sizeof err) == 0, "%s", err);
    }
}

/* Two engines per combination of the settings bits 0-1, made once and
 * emptied for each input (fuzz_engine_reset): [0] loads the input, [1]
 * the round trip's file. */
static gb_engine *engine(uint8_t bits, int which)
{
    static gb_engine *eng[4][2];
    uint8_t settings = bits & 3;
    if (!eng[settings][which])
        eng[settings][which] = fuzz_engine_new(tweak, &settings);
    fuzz_engine_reset(eng[settings][which]);
    return eng[settings][which];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = {data, size};
    uint8_t bits = fuzz_u8(&in), keys = fuzz_u8(&in);
    gb_engine *eng = engine(bits, 0);

    char path[600], err[700];
    fuzz_path(path, sizeof path, "records.gdb");
    gb_snap_writer *w = gb_snap_writer_open(path, 0, eng->now_ms, NULL, false, err, sizeof err);
    FUZZ_CHECK(w != NULL, "cannot start a snapshot: %s", err);
    gb_snap_put(w, in.p, in.left);
    gb_snap_writer_close(w, keys);
    FUZZ_CHECK(gb_snap_writer_wait(w, err, sizeof err) == 1, "cannot write a snapshot: %s", err);
    gb_snap_writer_free(w);

    eng->loading = bits & 4;
    gb_snap_load_stats st;
    bool ok = snap_load(eng, path, &st, false);
    eng->loading = false;
    if (ok) {
        snap_check_dataset(eng);
        snap_check_roundtrip(eng, engine(bits, 1));
    }
    unlink(path);
    return 0;
}
