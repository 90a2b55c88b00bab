/* CLIENT subcommands beyond the basic ones (cmd_client.c). */
#ifndef GB_ENGINE_COMMANDS_CMD_CLIENT_H
#define GB_ENGINE_COMMANDS_CMD_CLIENT_H

#include "engine/core/request/client.h"

/* CLIENT REPLY|PAUSE|UNPAUSE|NO-EVICT|TRACKING|CACHING|GETREDIR|
 * TRACKINGINFO (argv[1]; the gate checked Redis's arity). Returns false,
 * having replied nothing, for another subcommand. */
bool gb_cmd_client_more(gb_client *c, int argc, gb_slice *argv);

#endif
