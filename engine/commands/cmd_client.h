/* The client's name, which CLIENT SETNAME (cmd_client.c) and HELLO's
 * SETNAME (cmd_server.c) set. */
#ifndef GB_ENGINE_COMMANDS_CMD_CLIENT_H
#define GB_ENGINE_COMMANDS_CMD_CLIENT_H

#include "engine/core/request/client.h"

/* Redis's rule for a name: printable ASCII without spaces. */
bool gb_client_name_valid(gb_slice name);
/* Sets (a copy of) name; an empty one clears it. */
void gb_client_name_set(gb_client *c, gb_slice name);

#endif
