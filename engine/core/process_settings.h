/*
 * Process-wide settings the engine applies at start-up and on CONFIG SET:
 * the OOM killer's score (oom-score-adj, oom-score-adj-values).
 */
#ifndef GB_ENGINE_PROCESS_SETTINGS_H
#define GB_ENGINE_PROCESS_SETTINGS_H

#include "engine/core/config.h"

/* Redis's setOOMScoreAdj for a master: with oom-score-adj yes or relative
 * the first value is added to the score the process had when this was
 * first called, with absolute it is the score, and no restores that
 * original score if it was changed. Returns 0, or -1 (logged) when the
 * score cannot be read or written. */
int gb_oom_score_apply(const gb_settings *cfg);

#endif
