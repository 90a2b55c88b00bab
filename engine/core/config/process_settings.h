/*
 * Process-wide settings the engine applies at start-up and on CONFIG SET:
 * the OOM killer's score (oom-score-adj, oom-score-adj-values), the crash
 * report (crash-log-enabled), the allocator's background threads
 * (jemalloc-bg-thread).
 */
#ifndef GB_ENGINE_PROCESS_SETTINGS_H
#define GB_ENGINE_PROCESS_SETTINGS_H

#include "engine/core/config/config.h"

/* Redis's setOOMScoreAdj for a master: with oom-score-adj yes or relative
 * the first value is added to the score the process had when this was
 * first called, with absolute it is the score, and no restores that
 * original score if it was changed. Returns 0, or -1 (logged) when the
 * score cannot be read or written. */
int gb_oom_score_apply(const gb_settings *cfg);

/* proc-title-template expanded as Redis's expandProcTitleTemplate does
 * ({{ is a brace; spaces trimmed at both ends), with cfg's values (NULL:
 * placeholders, to validate a template). NULL when the template is
 * malformed or names an unknown variable; gb_free the title. A template
 * is valid when its expansion with the server's values is not empty
 * (gb_proc_title_valid). */
char *gb_proc_title_expand(const char *tmpl, const gb_settings *cfg);
bool gb_proc_title_valid(const char *tmpl, const gb_settings *cfg);
/* set-proc-title: shows the expansion as the process title. Returns 0, or
 * -1 (logged) when it cannot be set. */
int gb_proc_title_apply(const gb_settings *cfg);

/* crash-log-enabled: installs (or removes) the bug report on a fatal
 * signal, written where the log goes (platform/service.h), with
 * crash-memcheck-enabled's memory test at its end. */
void gb_crash_log_apply(const gb_settings *cfg);

/* jemalloc-bg-thread: turns jemalloc's purging threads on or off (logged
 * once where the allocator has none). */
void gb_allocator_bg_thread_apply(const gb_settings *cfg);

/* Descriptors the server keeps for itself beside its clients' (Redis's
 * CONFIG_MIN_RESERVED_FDS, 32: listeners, the log, files being written),
 * and two per ring slot (its memory and its wake descriptor). */
uint64_t gb_fd_reserved(const gb_settings *cfg);

/* maxclients against the open-file limit (Redis's adjustOpenFilesLimit):
 * the limit is raised to maxclients + gb_fd_reserved where the system
 * allows. At start-up (starting) what cannot be had lowers maxclients,
 * logged with Redis's lines, and -1 means too few descriptors to start
 * (err says so); on CONFIG SET maxclients it is refused with Redis's text
 * in err (-1), maxclients left to the caller's rollback. */
int gb_fd_limit_apply(gb_settings *cfg, bool starting, char *err, size_t errlen);

#endif
