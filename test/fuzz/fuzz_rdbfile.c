/*
 * Fuzz harness: whole Redis dump.rdb files (engine/persist/rdb_load.h), as
 * start-up and --import-rdb read them: the magic and version, every opcode
 * (AUX, RESIZEDB, EXPIRETIME(_MS), IDLE, FREQ, SELECTDB, FUNCTION2,
 * MODULE_AUX), keys of every type, EOF and the CRC-64.
 *
 * Input: [mode u8][file bytes]
 *   mode bit 0: the last 8 bytes are replaced by the right CRC-64, so the
 *               loader gets past the checksum to the records
 *
 * Checked: a refusal says why; a file that loads leaves exactly the keys it
 * counted, every one passing its data structure's own check
 * (fuzz_verify_dataset). The seeds are redis-server 7.0's own dump.rdb
 * files (make_seeds.py) and a hand-built version 9 file of Redis 6's
 * encodings.
 */
#include "fuzz_util.h"

#include "engine/base/crc64.h"
#include "engine/persist/rdb_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static gb_engine *eng;
    if (size < 1)
        return 0;
    if (!eng)
        eng = fuzz_engine_new(NULL, NULL);
    fuzz_engine_reset(eng);
    uint8_t mode = data[0];
    uint8_t *file = fuzz_dup(data + 1, size - 1);
    size_t n = size - 1;
    if ((mode & 1) && n >= 8) {
        uint64_t crc = gb_crc64(0, file, n - 8);
        for (int i = 0; i < 8; i++)
            file[n - 8 + (size_t)i] = (uint8_t)(crc >> (8 * i));
    }
    char path[512], err[512] = "";
    fuzz_write_file("input.rdb", file, n, path, sizeof path);
    free(file);
    gb_rdb_load_stats st;
    int rc = gb_rdb_load_file(eng, path, &st, NULL, NULL, err, sizeof err);
    if (rc != 0) {
        FUZZ_CHECK(err[0] != '\0', "refused (%d) without a reason", rc);
        if (fuzz_verbose())
            fprintf(stderr, "refused: %s\n", err);
        return 0;
    }
    uint64_t keys = 0;
    for (int d = 0; d < eng->ndbs; d++)
        keys += gb_db_size(&eng->dbs[d]);
    FUZZ_CHECK(keys == st.keys, "loaded %llu keys, the databases hold %llu", (unsigned long long)st.keys,
               (unsigned long long)keys);
    fuzz_verify_dataset(eng);
    if (fuzz_verbose())
        fprintf(stderr, "loaded: version %u, %llu keys\n", st.version, (unsigned long long)st.keys);
    return 0;
}
