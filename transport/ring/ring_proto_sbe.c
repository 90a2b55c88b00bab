/* SBE over a ring: one SBE message per request record, one reply message per
 * reply record (transport/sbe/: codec, typed dispatch, reply encoder). */
#include <stdlib.h>
#include <string.h>

#include "engine/base/mem.h"
#include "transport/ring/ring_proto.h"
#include "transport/sbe/sbe_server.h"

typedef struct sbe_state {
    gb_sbe_replier replier;
    gb_outbuf out; /* frames: u32 length + message */
} sbe_state;

static void *sbe_new(struct gb_engine *eng)
{
    sbe_state *st = gb_try_calloc(1, sizeof *st);
    if (!st)
        return NULL;
    gb_sbe_replier_init(&st->replier, eng);
    gb_outbuf_init(&st->out);
    gb_sbe_replier_set_frames(&st->replier, &st->out);
    return st;
}

static void sbe_free(void *p)
{
    sbe_state *st = p;
    if (!st)
        return;
    gb_sbe_replier_free(&st->replier);
    gb_outbuf_free(&st->out);
    gb_free(st);
}

static void *sbe_ctx(void *p) { return &((sbe_state *)p)->replier; }

static int sbe_execute(void *p, gb_client *c, char *msg, size_t len)
{
    (void)p;
    if (!msg)
        return 0; /* no input is ever buffered: one message per record */
    int rc = gb_sbe_execute(c, (const uint8_t *)msg, len);
    return rc == GB_EPROTO ? GB_EPROTO : 0;
}

static bool sbe_has_input(void *p)
{
    (void)p;
    return false;
}

/* Every complete reply becomes one frame: a u32 length, then the message. */
static void sbe_finish(void *p) { gb_sbe_reply_finish_frames(&((sbe_state *)p)->replier); }

static gb_outbuf *sbe_take(void *p) { return &((sbe_state *)p)->out; }

static bool sbe_oom(void *p)
{
    sbe_state *st = p;
    return gb_outbuf_oom(&st->out) || gb_sbe_replier_oom(&st->replier);
}

static size_t sbe_encode_error(char *buf, size_t cap, const char *msg)
{
    return gb_sbe_encode_error_reply((uint8_t *)buf, cap, msg, strlen(msg));
}

static void sbe_set_direct(void *p, uint8_t *(*begin)(void *ctx, size_t n), void (*commit)(void *ctx, size_t n),
                           void *ctx)
{
    gb_sbe_replier_set_sink(&((sbe_state *)p)->replier, (gb_sbe_sink){begin, commit, ctx});
}

const gb_ring_proto_ops gb_ring_proto_sbe = {
    .id = 1,
    .name = "sbe",
    .stream = false,
    .reply_ops = &gb_sbe_reply_ops,
    .new_state = sbe_new,
    .free_state = sbe_free,
    .reply_ctx = sbe_ctx,
    .execute = sbe_execute,
    .has_input = sbe_has_input,
    .finish = sbe_finish,
    .take_output = sbe_take,
    .out_of_memory = sbe_oom,
    .encode_error = sbe_encode_error,
    .set_direct = sbe_set_direct,
};
