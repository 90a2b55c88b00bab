/*
 * What a ring slot speaks: one table per protocol, chosen at claim time.
 * The ring server (ring_server.c) moves records; the protocol turns request
 * records into engine calls and replies into output bytes.
 */
#ifndef GB_TRANSPORT_RING_PROTO_H
#define GB_TRANSPORT_RING_PROTO_H

#include "engine/core/request/client.h"

struct gb_engine;
#include "transport/resp/resp_writer.h"

typedef struct gb_ring_proto_ops {
    uint32_t id;          /* enum gb_ring_protocol */
    const char *name;     /* "sbe", "resp" */
    bool stream;          /* replies form a byte stream that may be cut anywhere */
    const gb_reply_ops *reply_ops;
    /* NULL when memory runs out (the claim is refused). */
    void *(*new_state)(struct gb_engine *eng);
    void (*free_state)(void *st);
    void *(*reply_ctx)(void *st); /* ctx for reply_ops */
    /* Executes one request record (msg is a private, writable copy), or, with
     * msg == NULL, continues with input buffered earlier (a RESP client that
     * was blocked mid-pipeline). Returns 0, GB_EPROTO when the bytes
     * cannot be a message of this protocol, or GB_ENOMEM when they cannot
     * be buffered (either way the slot is then dropped). */
    int (*execute)(void *st, gb_client *c, char *msg, size_t len);
    /* Whether input is buffered that execute(NULL) would continue with. */
    bool (*has_input)(void *st);
    /* Turns everything replied since the last call into output (SBE: one
     * message). Called after each request and after a blocked client was
     * served. */
    void (*finish)(void *st);
    /* The output to publish; the caller empties it (len = 0) once published.
     * Stream protocols: raw bytes. Message protocols: frames of a u32 length
     * followed by that many bytes, one frame per record. */
    gb_outbuf *(*take_output)(void *st);
    /* Whether a reply buffer could not grow (fallible allocation failed):
     * the output has a hole, and the slot is dropped. */
    bool (*out_of_memory)(void *st);
    /* Message protocols: encodes an error reply (for a reply too large for
     * the ring) into buf; returns its length or 0. */
    size_t (*encode_error)(char *buf, size_t cap, const char *msg);
    /* Message protocols, optional: where a one-message reply may be written
     * straight onto the response ring while take_output is empty. begin
     * returns room for one record of n bytes or NULL (then the reply takes
     * take_output's path); commit publishes the record. */
    void (*set_direct)(void *st, uint8_t *(*begin)(void *ctx, size_t n), void (*commit)(void *ctx, size_t n),
                       void *ctx);
} gb_ring_proto_ops;

extern const gb_ring_proto_ops gb_ring_proto_resp;
extern const gb_ring_proto_ops gb_ring_proto_sbe;

#endif
