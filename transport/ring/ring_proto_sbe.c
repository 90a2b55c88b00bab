/* SBE over a ring. The SBE codec (transport/sbe/) is landing separately;
 * until it does this table has no execute function and RING CLAIM SBE is
 * refused with a clear error (ring_server.c checks). */
#include "transport/ring/ring_proto.h"

const gb_ring_proto_ops gb_ring_proto_sbe = {.id = 1, .name = "sbe", .stream = false};
