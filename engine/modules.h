/*
 * The engine as the server runs it: the core (engine/core) with every
 * value type (engine/types) and every command module (engine/commands)
 * registered, and persistence (engine/persist) as its service. The only
 * file above the command handlers.
 */
#ifndef GB_ENGINE_MODULES_H
#define GB_ENGINE_MODULES_H

#include "engine/core/engine.h"

/* Builds the server's engine from settings (copied). Out of memory here,
 * at start-up, is fatal (engine/base/mem.h). */
gb_engine *gb_engine_new(const gb_settings *cfg);

#endif
