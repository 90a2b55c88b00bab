/*
 * INFO errorstats: error replies counted by their code (the first word,
 * "ERR", "WRONGTYPE", ...; "ERR" when the first 32 bytes hold no space), as
 * Redis 7.0 keeps them, in byte order. A script can make up codes
 * (redis.error_reply): past GB_ERRORSTATS_MAX codes new ones are no longer
 * tracked (logged once), as later Redis versions do.
 */
#ifndef GB_ENGINE_ERRORSTATS_H
#define GB_ENGINE_ERRORSTATS_H

#include "engine/base/common.h"

#define GB_ERRORSTATS_MAX 128

typedef struct gb_errorstat {
    char code[32];
    uint64_t count;
} gb_errorstat;

typedef struct gb_errorstats {
    gb_errorstat *v; /* sorted by code */
    size_t n;
    bool full_logged;
} gb_errorstats;

void gb_errorstats_count(gb_errorstats *st, const char *err, size_t len);
void gb_errorstats_reset(gb_errorstats *st);

#endif
