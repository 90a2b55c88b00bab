#include "engine/core/process_settings.h"

#include <stdlib.h>

#include "engine/core/engine.h"
#include "engine/base/allocator.h"
#include "goblin/version.h"
#include "platform/daemon.h"
#include "platform/service.h"
#include "platform/errmsg.h"

int gb_oom_score_apply(const gb_settings *cfg)
{
    static bool adjusted;
    static int base;
    int value;
    if (cfg->oom_score_adj != GB_OOM_ADJ_NO) {
        if (!adjusted) {
            if (gb_plat_oom_score_adj_get(&base) != 0) {
                gb_log(GB_LOG_WARNING, "Unable to read oom_score_adj: %s", gb_plat_last_error());
                return -1;
            }
            adjusted = true;
        }
        value = atoi(cfg->oom_score_adj_values); /* the master's: the first of three (checked) */
        if (cfg->oom_score_adj != GB_OOM_ADJ_ABSOLUTE)
            value += base;
        value = value > 1000 ? 1000 : value < -1000 ? -1000 : value;
    } else if (adjusted) {
        adjusted = false;
        value = base;
    } else {
        return 0;
    }
    if (gb_plat_oom_score_adj_set(value) != 0) {
        gb_log(GB_LOG_WARNING, "Unable to write oom_score_adj: %s", gb_plat_last_error());
        return -1;
    }
    return 0;
}

void gb_crash_log_apply(const gb_settings *cfg)
{
    if (!cfg->crash_log_enabled) {
        gb_plat_crash_report_remove();
        return;
    }
    if (gb_plat_crash_report_install(gb_log_fd(), "Goblin Core " GOBLIN_VERSION) != 0)
        gb_log(GB_LOG_WARNING, "crash-log-enabled: no crash report: %s", gb_plat_last_error());
}

void gb_allocator_bg_thread_apply(const gb_settings *cfg)
{
    static bool told;
    if (!gb_allocator_set_background_thread(cfg->jemalloc_bg_thread != 0) && !told) {
        told = true;
        gb_log(GB_LOG_NOTICE, "jemalloc-bg-thread does not apply: the allocator is %s", gb_allocator_name());
    }
}
