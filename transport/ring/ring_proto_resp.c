/* RESP over a ring: records carry a RESP2 byte stream (pipelining allowed,
 * a command may span records); the same parser and writer as the sockets,
 * so replies are identical byte for byte. */
#include <stdlib.h>
#include <string.h>

#include "engine/base/mem.h"
#include "engine/core/engine.h"
#include "transport/resp/resp_parser.h"
#include "transport/ring/ring_proto.h"

typedef struct resp_state {
    gb_outbuf out;
    gb_resp_parser parser;
    char *in;
    size_t inlen, incap;
} resp_state;

static void *resp_new(struct gb_engine *eng)
{
    (void)eng;
    resp_state *st = gb_try_calloc(1, sizeof *st);
    if (!st)
        return NULL;
    gb_outbuf_init(&st->out);
    gb_resp_parser_init(&st->parser, 512LL * 1024 * 1024);
    return st;
}

static void resp_free(void *p)
{
    resp_state *st = p;
    if (!st)
        return;
    gb_outbuf_free(&st->out);
    gb_resp_parser_free(&st->parser);
    gb_free(st->in);
    gb_free(st);
}

static void *resp_ctx(void *p) { return &((resp_state *)p)->out; }

static int resp_execute(void *p, gb_client *c, char *msg, size_t len)
{
    resp_state *st = p;
    if (msg && len) {
        if (st->inlen + len > (size_t)c->eng->cfg.client_qbuf_limit)
            return GB_EPROTO;
        if (st->inlen + len > st->incap) {
            size_t ncap = st->incap ? st->incap : 4096;
            while (ncap < st->inlen + len)
                ncap *= 2;
            char *in = gb_try_realloc(st->in, ncap);
            if (!in)
                return GB_ENOMEM;
            st->in = in;
            st->incap = ncap;
        }
        memcpy(st->in + st->inlen, msg, len);
        st->inlen += len;
    }
    size_t pos = 0;
    char err[256];
    while (pos < st->inlen && !(c->flags & (GB_CLIENT_BLOCKED | GB_CLIENT_CLOSE_AFTER_REPLY | GB_CLIENT_CLOSE_ASAP))) {
        st->parser.max_bulk = c->eng->cfg.proto_max_bulk_len;
        size_t consumed = 0;
        int rc = gb_resp_parse(&st->parser, st->in + pos, st->inlen - pos, &consumed, err, sizeof err);
        if (rc == GB_RESP_NEED_MORE)
            break;
        if (rc == GB_RESP_ERROR) {
            /* As on a socket: Redis's error text, then the ring is closed. */
            if (st->parser.oom)
                gb_log(GB_LOG_WARNING, "Ring client closed: out of memory for its buffers (argument array)");
            gb_reply_error(c, err);
            c->flags |= GB_CLIENT_CLOSE_AFTER_REPLY;
            st->inlen = 0;
            return 0;
        }
        if (!gb_resp_execute(&st->parser, st->in + pos, c)) { /* as on a socket: this client goes */
            gb_log(GB_LOG_WARNING, "Ring client closed: out of memory for its buffers (argument array)");
            gb_reply_error(c, "ERR out of memory");
            c->flags |= GB_CLIENT_CLOSE_AFTER_REPLY;
            st->inlen = 0;
            return 0;
        }
        gb_resp_parser_reset(&st->parser);
        pos += consumed;
    }
    if (pos) {
        memmove(st->in, st->in + pos, st->inlen - pos);
        st->inlen -= pos;
    }
    return 0;
}

static bool resp_has_input(void *p) { return ((resp_state *)p)->inlen > 0; }

static void resp_finish(void *p) { (void)p; /* RESP replies are already bytes */ }

static gb_outbuf *resp_take(void *p) { return &((resp_state *)p)->out; }

static bool resp_oom(void *p) { return gb_outbuf_oom(&((resp_state *)p)->out); }

const gb_ring_proto_ops gb_ring_proto_resp = {
    .id = 2,
    .name = "resp",
    .stream = true,
    .reply_ops = &gb_resp2_reply_ops,
    .new_state = resp_new,
    .free_state = resp_free,
    .reply_ctx = resp_ctx,
    .execute = resp_execute,
    .has_input = resp_has_input,
    .finish = resp_finish,
    .take_output = resp_take,
    .out_of_memory = resp_oom,
    .encode_error = NULL, /* a stream: never oversize, it is cut into records */
};
