/*
 * Fuzz harness: the SBE codec (transport/sbe/sbe_codec.h) on hostile
 * messages, and gb_sbe_execute (transport/sbe/sbe_server.h) running them
 * against a real engine.
 *
 * Input: [mode u8] then
 *   mode bit 0 clear: one message, the rest of the input. It goes to the
 *     server's request decoder (gb_sbe_decode_request) and to the client's
 *     reply decoder (gb_sbe_decode_reply): every slice either returns lies
 *     inside the message, every count is one the message can hold, a tree
 *     of array nodes is consistent; and to the push decoder
 *     (gb_sbe_decode_push: Message, Subscription), whose slices lie inside.
 *   mode bit 0 set: up to 32 messages, each [u16 length][bytes], executed
 *     in order by one SBE client of an emptied engine (so MULTI, WATCH, keys
 *     of each type, blocking reach state the earlier messages built). Each
 *     message is answered by exactly one well-formed reply message, or the
 *     server says GB_EPROTO (not our protocol: the ring drops the client,
 *     so the harness stops there). A BLPop that blocks is timed out, as the
 *     ring's deadline would. Afterwards every value passes its data
 *     structure's own check (fuzz_verify_dataset).
 * Commands that leave the scratch directory, sleep or start background
 * work (fuzz_command_denied) are decoded but not executed.
 */
#include "fuzz_util.h"

#include "engine/core/request/blocking.h"
#include "transport/sbe_test_util.h"

#define MAX_MESSAGES 32

static void check_slice(gb_slice s, const uint8_t *msg, size_t len, const char *what)
{
    FUZZ_CHECK(s.len == 0 || ((const uint8_t *)s.ptr >= msg && s.len <= len &&
                              (const uint8_t *)s.ptr - msg <= (ptrdiff_t)(len - s.len)),
               "%s outside the message", what);
}

/* The request decoder: what it returns is inside the message. */
static void decode_request(const uint8_t *msg, size_t len, gb_sbe_scratch *s)
{
    gb_sbe_request req;
    memset(&req, 0, sizeof req);
    const char *why = NULL;
    int rc = gb_sbe_decode_request(msg, len, &req, s, &why);
    FUZZ_CHECK(rc == 0 || rc == GB_EPROTO || rc == GB_ENOENT || rc == GB_EPARSE, "rc %d", rc);
    if (rc != 0) {
        FUZZ_CHECK(why != NULL && *why, "an error without a reason");
        return;
    }
    check_slice(req.key, msg, len, "key");
    check_slice(req.arg, msg, len, "arg");
    /* Each entry takes at least its 4-byte length prefix. */
    FUZZ_CHECK(req.n <= len / GB_SBE_VAR_LEN_SIZE, "%zu entries in %zu bytes", req.n, len);
    /* The scratch arrays hold n entries of the template's group: a for
     * every group, b for HSet's values, d for ZAdd's scores. */
    uint16_t tid = req.hdr.template_id;
    /* XAdd's pairs sit interleaved in a: 2n slices. */
    for (size_t i = 0; tid == GB_SBE_XADD && i < 2 * req.n; i++)
        check_slice(req.a[i], msg, len, "xadd field or value");
    for (size_t i = 0; i < req.n; i++) {
        check_slice(req.a[i], msg, len, "entry");
        if (tid == GB_SBE_HSET)
            check_slice(req.b[i], msg, len, "value entry");
        if (tid == GB_SBE_ZADD)
            (void)req.d[i]; /* inside the scratch array (ASan) */
    }
}

/* The client's push decoder: what it returns is inside the message. */
static void decode_push(const uint8_t *msg, size_t len)
{
    gb_sbe_push_view v;
    int rc = gb_sbe_decode_push(msg, len, &v);
    FUZZ_CHECK(rc == 0 || rc == GB_EPROTO || rc == GB_ENOENT, "rc %d", rc);
    if (rc != 0)
        return;
    FUZZ_CHECK(v.template_id == GB_SBE_MESSAGE || v.template_id == GB_SBE_SUBSCRIPTION, "template %u", v.template_id);
    FUZZ_CHECK(v.kind >= 1 && v.kind <= (v.template_id == GB_SBE_MESSAGE ? 3 : 6), "kind %u", v.kind);
    check_slice(v.channel, msg, len, "channel");
    check_slice(v.pattern, msg, len, "pattern");
    check_slice(v.payload, msg, len, "payload");
}

/* The client's reply decoder: a tree that decodes is consistent. */
static void decode_reply(const uint8_t *msg, size_t len)
{
    gb_sbe_reply_view root;
    size_t nn = 0;
    int rc = gb_sbe_decode_reply(msg, len, &root, NULL, &nn);
    FUZZ_CHECK(rc == 0 || rc == GB_EPROTO || rc == GB_ERANGE, "rc %d", rc);
    if (rc != GB_ERANGE)
        return;
    FUZZ_CHECK(nn > 0 && nn <= len, "%zu nodes claimed by %zu bytes", nn, len);
    gb_sbe_reply_view *nodes = calloc(nn, sizeof *nodes); /* exactly nn: one more is an ASan report */
    size_t got = nn;
    rc = gb_sbe_decode_reply(msg, len, &root, nodes, &got);
    FUZZ_CHECK(rc == 0 || rc == GB_EPROTO, "second decode rc %d", rc);
    if (rc == 0) {
        FUZZ_CHECK(got == nn, "%zu nodes used of %zu asked for", got, nn);
        for (size_t i = 0; i < got; i++) {
            const gb_sbe_reply_view *v = &nodes[i];
            FUZZ_CHECK(v->kind >= GB_SBE_KIND_STATUS && v->kind <= GB_SBE_KIND_ARRAY, "kind %u", v->kind);
            if (v->nelems)
                FUZZ_CHECK(v->elems >= nodes && v->elems + v->nelems <= nodes + got, "elements out of the array");
            if (v->kind == GB_SBE_KIND_STATUS || v->kind == GB_SBE_KIND_ERROR || v->kind == GB_SBE_KIND_BULK)
                check_slice(gb_slice_make(v->ptr, v->len), msg, len, "reply text");
        }
    }
    free(nodes);
}

/* Every reply the server produced decodes; returns how many there were
 * (Message pushes not counted) and, in *confirmations, how many of them
 * were Subscription pushes (one per name: SUBSCRIBE a b answers two); in
 * *messages the Message pushes, which only come after a reply: with no
 * other client here, only from a transaction that subscribed and published
 * to itself, after EXEC's reply. */
static size_t take_replies(sbe_conn *c, size_t *confirmations, size_t *messages)
{
    size_t n, count = 0;
    *confirmations = *messages = 0;
    while ((n = gb_sbe_reply_finish(&c->r, &c->out)) > 0) {
        const uint8_t *m = (const uint8_t *)c->out.data + c->out.len - n;
        if (fuzz_verbose())
            fprintf(stderr, "  reply template %u, %zu bytes\n", n >= 4 ? (unsigned)(m[2] | m[3] << 8) : 0, n);
        gb_sbe_push_view pv;
        int pr = gb_sbe_decode_push(m, n, &pv);
        if (pr != GB_ENOENT) {
            FUZZ_CHECK(pr == 0, "the server wrote a push its client cannot decode (rc %d)", pr);
            if (pv.template_id == GB_SBE_MESSAGE) {
                FUZZ_CHECK(count > 0, "a Message before the request's reply");
                (*messages)++;
                continue;
            }
            FUZZ_CHECK(pv.template_id == GB_SBE_SUBSCRIPTION, "a push of template %u", pv.template_id);
            (*confirmations)++;
            count++;
            continue;
        }
        gb_sbe_reply_view root;
        size_t nn = 0;
        int rc = gb_sbe_decode_reply(m, n, &root, NULL, &nn);
        if (rc == GB_ERANGE) {
            gb_sbe_reply_view *nodes = calloc(nn, sizeof *nodes);
            rc = gb_sbe_decode_reply(m, n, &root, nodes, &nn);
            free(nodes);
        }
        if (rc != 0) {
            for (size_t k = 0; k < n && k < 96; k++)
                fprintf(stderr, "%02x%s", m[k], k % 16 == 15 ? "\n" : " ");
            fprintf(stderr, "\n");
        }
        FUZZ_CHECK(rc == 0, "the server wrote a reply its client cannot decode (rc %d, %zu bytes above)", rc, n);
        count++;
    }
    c->out.len = 0;
    return count;
}

static bool denied(const uint8_t *msg, size_t len, gb_sbe_scratch *s)
{
    gb_sbe_request req;
    const char *why;
    return gb_sbe_decode_request(msg, len, &req, s, &why) == 0 && req.hdr.template_id == GB_SBE_GENERIC &&
           req.n > 0 && fuzz_command_denied(req.a[0]);
}

static void execute(fuzz_in *in)
{
    static gb_engine *eng;
    if (!eng)
        eng = fuzz_engine_new(NULL, NULL);
    fuzz_engine_reset(eng);
    sbe_conn *c = sbe_conn_new(eng);
    gb_sbe_scratch s = {0};
    for (int i = 0; i < MAX_MESSAGES && in->left; i++) {
        size_t len = fuzz_u16(in);
        if (len > in->left)
            len = in->left;
        uint8_t *msg = fuzz_dup(in->p, len);
        in->p += len;
        in->left -= len;
        decode_request(msg, len, &s);
        if (denied(msg, len, &s)) {
            free(msg);
            continue;
        }
        int rc = gb_sbe_execute(c->c, msg, len);
        free(msg);
        FUZZ_CHECK(rc == 0 || rc == GB_EPROTO, "gb_sbe_execute rc %d", rc);
        if (fuzz_verbose())
            fprintf(stderr, "request %d: %zu bytes, rc %d, out %zu bytes\n", i, len, rc, c->out.len);
        if (c->c->flags & GB_CLIENT_BLOCKED)
            gb_blocking_unblock(c->c, GB_UNBLOCK_TIMEOUT);
        size_t confirmations, messages;
        size_t replies = take_replies(c, &confirmations, &messages);
        if (rc == GB_EPROTO) {
            FUZZ_CHECK(replies == 0, "%zu replies to a message that is not ours", replies);
            break;
        }
        FUZZ_CHECK(replies == 1 || (replies > 1 && confirmations == replies), "%zu replies to one request", replies);
        FUZZ_CHECK(messages == 0 || confirmations == 0, "messages after a SUBSCRIBE's own confirmations");
    }
    gb_sbe_scratch_free(&s);
    sbe_conn_free(c);
    fuzz_verify_dataset(eng);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = {data, size};
    uint8_t mode = fuzz_u8(&in);
    if (mode & 1) {
        execute(&in);
        return 0;
    }
    uint8_t *msg = fuzz_dup(in.p, in.left);
    gb_sbe_scratch s = {0};
    decode_request(msg, in.left, &s);
    gb_sbe_scratch_free(&s);
    decode_reply(msg, in.left);
    decode_push(msg, in.left);
    free(msg);
    return 0;
}
