/* The cluster client's pure parts (ring_cluster_route.c): hash slots and
 * the parsing of redirection errors, apart so that unit tests reach them. */
#ifndef GB_RING_CLUSTER_ROUTE_H
#define GB_RING_CLUSTER_ROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GB_RCL_HOST_MAX 256 /* a host name's bytes, NUL included */

typedef enum gb_rcl_redirect_kind {
    GB_RCL_NOT_REDIRECT = 0,
    GB_RCL_MOVED,
    GB_RCL_ASK,
    GB_RCL_TRYAGAIN,
} gb_rcl_redirect_kind;

typedef struct gb_rcl_redirect {
    gb_rcl_redirect_kind kind;
    int slot;                    /* MOVED, ASK */
    char host[GB_RCL_HOST_MAX];  /* MOVED, ASK; "" when the server named none (":port") */
    int port;
} gb_rcl_redirect;

uint16_t gb_rcl_crc16(const void *data, size_t len);
int gb_rcl_key_slot(const void *key, size_t klen);

/* Reads an error reply's text (without the '-'): "MOVED <slot> <host>:<port>",
 * "ASK <slot> <host>:<port>" or "TRYAGAIN ...". Anything else, or a
 * redirection with a slot outside 0..16383, a port outside 1..65535, a
 * host too long or a missing field, is GB_RCL_NOT_REDIRECT. */
gb_rcl_redirect_kind gb_rcl_parse_redirect(const char *text, size_t len, gb_rcl_redirect *out);

/* Splits "host:port" at its last ':' (IPv6 hosts keep theirs). */
bool gb_rcl_split_address(const char *text, size_t len, char *host, size_t hostcap, int *port);

#endif
