/*
 * RESP2 request parser: multibulk ("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n") and
 * inline ("GET k\r\n") requests, incremental, with Redis's limits and
 * error texts.
 *
 * The parser never owns the bytes. The caller keeps a buffer of unconsumed
 * input and calls gb_resp_parse() on it; the parser remembers how far it got
 * inside a partial request (so feeding a 512 MB argument in small pieces is
 * linear, not quadratic) and reports argument positions as offsets from the
 * start of the request, which stay valid when the caller compacts its buffer.
 *
 * Hostile input: counts and lengths are validated before anything is sized
 * by them; the argument array grows as arguments actually arrive (never
 * sized by a client's "*2147483647").
 */
#ifndef GB_TRANSPORT_RESP_PARSER_H
#define GB_TRANSPORT_RESP_PARSER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/base/common.h"

/* Redis's PROTO_INLINE_MAX_SIZE: longest inline request / header line. */
#define GB_RESP_INLINE_MAX (64 * 1024)
/* Unauthenticated clients: at most this many arguments of at most this size. */
#define GB_RESP_UNAUTH_MAX_ARGS 10
#define GB_RESP_UNAUTH_MAX_BULK 16384

typedef struct gb_resp_arg {
    size_t off; /* from the start of the request */
    size_t len;
} gb_resp_arg;

typedef struct gb_resp_parser {
    /* request in progress */
    int kind;            /* 0 none yet, 1 multibulk, 2 inline */
    size_t pos;          /* bytes of the request parsed so far */
    int64_t remaining;   /* multibulk arguments still expected */
    int64_t bulk_len;    /* length of the bulk being read, -1 between bulks */
    /* arguments found so far */
    gb_resp_arg *args;
    int argc;
    int cap;
    size_t args_bytes;   /* their lengths added up */
    /* the client's limits, set by the caller */
    int64_t max_bulk;    /* proto-max-bulk-len */
    bool unauthenticated;
    /* The last GB_RESP_ERROR was the argument array failing to grow (out of
     * memory), not the client's bytes: the transport logs it as such. */
    bool oom;
} gb_resp_parser;

enum gb_resp_status {
    GB_RESP_NEED_MORE = 0, /* no complete request yet */
    GB_RESP_COMMAND = 1,   /* a request is complete */
    GB_RESP_ERROR = -1,    /* protocol error: reply with err, then close */
};

void gb_resp_parser_init(gb_resp_parser *p, int64_t max_bulk);
void gb_resp_parser_free(gb_resp_parser *p);

/*
 * Parses from buf[0..len) (buf starts at the current request). Inline
 * requests are unescaped in place, so buf must be writable. On
 * GB_RESP_COMMAND, *consumed is the request's length and p->args/p->argc
 * describe its arguments (argc may be 0 for an empty request, which the
 * caller skips); call gb_resp_parser_reset() before the next request. On
 * GB_RESP_ERROR, err holds Redis's text (e.g. "ERR Protocol error: invalid
 * bulk length").
 */
int gb_resp_parse(gb_resp_parser *p, char *buf, size_t len, size_t *consumed, char *err, size_t errlen);

void gb_resp_parser_reset(gb_resp_parser *p);

/* Fills argv (at least p->argc slices) pointing into buf. */
void gb_resp_args_to_slices(const gb_resp_parser *p, const char *buf, gb_slice *argv);

/* Arguments gb_resp_execute passes from the stack; more are allocated. */
#define GB_RESP_STACK_ARGS 32

struct gb_client;
/* Runs the request gb_resp_parse just completed (buf: its first byte) on
 * client c through the command gate (gb_gate_execute); an empty request
 * runs nothing. False, with nothing run, when the argument array of a
 * request with more than GB_RESP_STACK_ARGS arguments cannot be allocated:
 * the caller drops that client and keeps serving everyone else. */
bool gb_resp_execute(const gb_resp_parser *p, const char *buf, struct gb_client *c);

/* Bytes of input the current partial request still needs at least (for
 * sizing reads of big bulks), 0 if unknown. */
size_t gb_resp_bytes_wanted(const gb_resp_parser *p);
/* Bytes of the arguments found so far (all of them once a request is
 * complete, until gb_resp_parser_reset): Redis's argv-mem. */
size_t gb_resp_args_bytes(const gb_resp_parser *p);

#endif
