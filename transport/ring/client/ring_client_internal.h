/* Internals shared by the ring client library's files. */
#ifndef GB_RING_CLIENT_INTERNAL_H
#define GB_RING_CLIENT_INTERNAL_H

#include <stdbool.h>

#include "goblin/ring_client.h"
#include "goblin/ring_layout.h"
#include "platform/shm.h"
#include "transport/ring/ring_io.h"
#include "transport/sbe/sbe_codec.h"


struct gb_ring_client {
    int ctl_fd;          /* the Unix-socket connection that holds the claim;
                          * for a socket link, the RESP connection itself */
    /* A RESP connection with no ring (ring_cluster_link.c): the cluster
     * client's way to a node it cannot claim a ring on. RESP requests are
     * written to ctl_fd and replies read from it; the ring fields are unset. */
    bool socket_link;
    int wake_fd;         /* this claim's own wake descriptor (write end) */
    gb_ring_proto proto;
    int slot_id;
    gb_shm shm;
    gb_ring_ctrl *ctrl;
    gb_ring_writer wr;   /* requests */
    gb_ring_reader rd;   /* replies */
    uint32_t pending_len; /* payload length of the record handed out by recv */
    bool consumed;        /* replies consumed since the server last looked at our state (room_made) */
    uint64_t spin_cycles;
    double ns_per_cycle;
    /* RESP: reply bytes received but not yet parsed into replies */
    char *stream;
    size_t slen, scap;
    /* RESP: the push gb_ring_next_message handed out, freed by
     * gb_ring_message_done (its strings are the message's) */
    gb_reply *message;
    /* scratch for encoding requests */
    char *scratch;
    size_t scratch_cap;
    char err[256];
};

/* A connected Unix socket, or -1 with the reason in err. */
int gb_rc_connect_unix(const char *path, char *err, size_t errlen);
void gb_rc_fail(gb_ring_client *rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
size_t gb_rc_resp_encode(char *buf, size_t cap, int argc, const char *const *argv, const size_t *lens);
/* Room for a len-byte request record: 0 with *buf, or an error (too
 * large for the ring, the server gone while the ring stayed full, a head
 * the server moved wrongly). The usual case, room at once, is inline (it
 * is on every request's way to the server); the rest waits in
 * gb_rc_send_begin_wait. */
int gb_rc_send_begin_wait(gb_ring_client *rc, size_t len, uint8_t **buf);
static inline int gb_rc_send_begin(gb_ring_client *rc, size_t len, uint8_t **buf)
{
    if (__builtin_expect(len <= rc->wr.max_payload, 1) &&
        __builtin_expect(gb_ring_write_begin(&rc->wr, (uint32_t)len, buf) == GB_RING_READY, 1))
        return 0;
    return gb_rc_send_begin_wait(rc, len, buf);
}
/* Publishes the record, then wakes the server if it sleeps. */
void gb_rc_wake_server(gb_ring_client *rc);
static inline void gb_rc_send_commit(gb_ring_client *rc, size_t len)
{
    gb_ring_write_commit(&rc->wr, (uint32_t)len);
    gb_rc_wake_server(rc);
}
void gb_rc_reply_clear(gb_reply *r);

/* RESP side (ring_client_resp.c) */
int gb_rc_resp_submit(gb_ring_client *rc, int argc, const char *const *argv, const size_t *lens);
int gb_rc_resp_collect(gb_ring_client *rc, gb_reply **reply, uint64_t timeout_ns);
int gb_rc_resp_next_message(gb_ring_client *rc, gb_ring_message *m, uint64_t timeout_ns);

/* socket links (ring_cluster_link.c) */
int gb_rc_link_connect(const char *host, int port, const char *unix_path, const gb_ring_client_options *opt,
                       gb_ring_client **out, char *err, size_t errlen);
int gb_rc_link_submit(gb_ring_client *rc, int argc, const char *const *argv, const size_t *lens);
int gb_rc_link_read(gb_ring_client *rc, uint64_t timeout_ns);
bool gb_rc_host_is_local(const char *host);

/* SBE side (ring_client_sbe.c) */
int gb_rc_sbe_submit(gb_ring_client *rc, int argc, const char *const *argv, const size_t *lens);
int gb_rc_sbe_collect(gb_ring_client *rc, gb_reply **reply);

#endif
