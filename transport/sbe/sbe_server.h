/*
 * The server side of the SBE protocol: executing request messages against
 * the engine and encoding the engine's replies as SBE reply messages.
 *
 * The ring server (transport/ring/) uses it per SBE client like this:
 *
 *     gb_sbe_replier_init(&slot->sbe, eng);                    // at claim
 *     c = gb_client_new(eng, &gb_sbe_reply_ops, &slot->sbe, &hooks, slot, GB_CLIENT_RING);
 *     ...
 *     // each request record, copied out of the ring into private memory:
 *     if (gb_sbe_execute(c, msg, len) == GB_EPROTO) drop the client;
 *     while ((n = gb_sbe_reply_finish(&slot->sbe, &out)) > 0)
 *         publish the n bytes at out.data + out.len - n as one response record;
 *     // when a blocked client is served, hooks->flush runs: finish again.
 *     ...
 *     gb_client_free(c); gb_sbe_replier_free(&slot->sbe);       // at release
 *
 * Every command answers exactly one reply, so finish normally yields one
 * message per request; the loop is what keeps the protocol in step if a
 * command ever answers twice. A blocked BLPOP yields nothing until it is
 * served or times out.
 */
#ifndef GB_TRANSPORT_SBE_SERVER_H
#define GB_TRANSPORT_SBE_SERVER_H

#include "engine/core/request/client.h"
#include "transport/resp/resp_writer.h"
#include "transport/sbe/sbe_codec.h"

struct gb_engine;
struct gb_command;

/* One SBE client's reply accumulator and request scratch (the reply ops'
 * ctx). Opaque to users: initialise, pass to gb_client_new, finish, free. */
/* Where frame mode may put a scalar reply at once, skipping the frame
 * buffer and its copy (the ring: the response ring itself). begin returns
 * room for n bytes, or NULL when the reply must take the frame buffer
 * after all (the transport is holding or queueing replies, or has no room
 * now); commit publishes the first m <= n bytes written there (the
 * replier asks for a scalar reply's bound, then commits its size: one
 * encoding, not a sizing pass and an encoding). */
typedef struct gb_sbe_sink {
    uint8_t *(*begin)(void *ctx, size_t n);
    void (*commit)(void *ctx, size_t n);
    void *ctx;
} gb_sbe_sink;

typedef struct gb_sbe_replier {
    /* The replies since the last finish, as pre-order items (the ArrayReply
     * encoding) whose bytes live in one arena; [head, nitems) are pending. */
    gb_sbe_reply_item *items;
    size_t head, nitems, capitems;
    char *bytes;
    size_t nbytes, capbytes;
    /* Group entries of the request being executed (grows, never shrinks:
     * no allocation per request once warm). */
    gb_sbe_scratch scratch;
    /* The command records typed templates account to (INFO commandstats),
     * resolved once at init; NULL: the template always takes the argv path. */
    struct gb_command *cmds[GB_SBE_REQUEST_MAX + 1];
    struct gb_command *incrby; /* Incr with a delta other than 1 */
    /* Frame mode (gb_sbe_replier_set_frames): where finished replies go as
     * frames of [u32 length, native order][message]. NULL: the caller takes
     * them one by one with gb_sbe_reply_finish. */
    gb_outbuf *frames;
    /* Frame mode's shortcut (gb_sbe_replier_set_sink): none when begin is
     * NULL. */
    gb_sbe_sink sink;
    /* A reply buffer (items, bytes) could not grow: the replies given since
     * are lost, and the client must be dropped (gb_sbe_replier_oom). */
    bool oom;
} gb_sbe_replier;

/* The reply sink; its ctx is a gb_sbe_replier *. */
extern const gb_reply_ops gb_sbe_reply_ops;

/* Prepares r for a client of eng (resolves the commands typed templates
 * account to). */
void gb_sbe_replier_init(gb_sbe_replier *r, struct gb_engine *eng);
void gb_sbe_replier_free(gb_sbe_replier *r);
/* Whether a reply buffer could not grow (fallible allocation failed): the
 * reply stream has a hole; the transport drops this client. */
static inline bool gb_sbe_replier_oom(const gb_sbe_replier *r) { return r->oom; }

/*
 * Encodes the oldest complete reply given since the last finish as ONE SBE
 * reply message appended to out, and returns its size; 0 when there is none
 * (nothing replied yet, e.g. the client blocked in BLPOP). A reply that
 * cannot be encoded at all (an element over 1 GiB) becomes an ErrorReply.
 */
size_t gb_sbe_reply_finish(gb_sbe_replier *r, gb_outbuf *out);

/*
 * Frame mode, for transports that publish message by message (the ring):
 * every finished reply is appended to `frames` as [u32 length][message].
 * A scalar reply given while nothing is pending (PING, GET, SET, INCR ...)
 * is encoded there at once, without becoming an item; arrays still collect
 * items until gb_sbe_reply_finish_frames() moves every complete reply over.
 */
static inline void gb_sbe_replier_set_frames(gb_sbe_replier *r, gb_outbuf *frames) { r->frames = frames; }
/* A sink for frame mode's scalar replies: used only while the frame buffer
 * is empty, so that replies keep their order. */
static inline void gb_sbe_replier_set_sink(gb_sbe_replier *r, gb_sbe_sink sink) { r->sink = sink; }
void gb_sbe_reply_finish_frames(gb_sbe_replier *r);

/*
 * Executes one request message (private memory: the caller copied it out of
 * the ring). c must use gb_sbe_reply_ops. Typed templates are typed calls
 * through the command gate (gb_gate_execute_typed) into the engine's
 * commands with native values (no allocation); BLPop and Generic run as
 * argument vectors (gb_gate_execute). Replies are always the RESP path's.
 *
 * Returns 0 when the message was answered (a malformed one with an
 * "ERR SBE: ..." error reply: the client stays), GB_EPROTO when it is not
 * this protocol at all (shorter than a header, another schema id: drop the
 * client), GB_EINVAL when c is not an SBE client.
 */
int gb_sbe_execute(gb_client *c, const uint8_t *msg, size_t len);

/* The typed call of a request template, or NULL for one that runs as an
 * argument vector (BLPop, Generic); for tests. */
const struct gb_typed_call *gb_sbe_typed_call(unsigned tid);

#endif
