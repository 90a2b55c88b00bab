/*
 * The shared-memory layout of one Goblin Core ring slot.
 *
 * This header is the contract between the server and any client process (the
 * C library in include/goblin/ring_client.h, or a client written in another
 * language from docs/ring-protocol.md). Every field is little-endian (the
 * only byte order the server runs on) and every offset is pinned by a
 * _Static_assert below.
 *
 * A slot is one shared-memory object, handed to one client over its Unix
 * socket (SCM_RIGHTS) when it claims the slot:
 *
 *   offset 0                     control block, 8 lines of 128 bytes
 *   offset hdr.req_offset        request ring:  req_capacity bytes  (client -> server)
 *   offset hdr.resp_offset       response ring: resp_capacity bytes (server -> client)
 *
 * Control block lines (each alone in its 128-byte line so that the two
 * processes never write the same line; 128 covers Apple's line size and x86's
 * adjacent-line prefetcher):
 *
 *   line  writer  field
 *   0     server  gb_ring_header (written before the slot is handed out, then read-only)
 *   1     server  req_head      bytes of the request ring the server has consumed
 *   2     client  resp_head     bytes of the response ring the client has consumed
 *   3     server  server_state  RUNNING, PARKED (asleep in its event loop) or PARKED_FOR_ROOM
 *                                 (asleep, holding replies this slot's response ring had no room for)
 *   4     client  client_state  SPINNING or PARKED (asleep on client_wake)
 *   5     server  client_wake   futex word the parked client waits on; the server adds 1 to wake it
 *   6     server  violations    count of protocol violations seen on this slot (diagnostics)
 *   7     -       reserved
 *
 * Rings carry records. A record starts at a 16-byte-aligned position and is
 *
 *   u64 stamp   gb_ring_stamp(P, hdr.stamp_key): written last, with release
 *   u32 length  payload bytes (GB_RING_PAD: a padding record)
 *   u32 zero    reserved
 *   length bytes of payload, then padding to the next multiple of 16
 *
 * Positions are byte counts since the slot was claimed (monotonic u64, never
 * wraps: 2^64 bytes); a record at position P lives at offset P % capacity.
 * The stamp is a function of the position, so a reader recognises a freshly
 * published record without any shared index: stale bytes from an earlier
 * lap carry an earlier position's stamp, and the stamp is 64 bits of the
 * position itself (xor the key), so no earlier position ever shares it. The
 * key is 64 random bits per claim from the operating system, known only to
 * the server and this slot's client, so no other client can plant bytes
 * (say, in a value it stores, later returned through this slot's response
 * ring) that pass for a future record header: a guess is right with
 * probability 2^-63. The writer stores the length and the payload first
 * and the stamp last with release ordering; the reader loads the stamp with
 * acquire ordering and, if it matches, the length and payload are complete.
 *
 * A record never wraps. When one does not fit before the end of the ring,
 * the writer first publishes a padding record (length GB_RING_PAD) covering
 * the rest of the ring, and the record follows at the start.
 *
 * Flow control: a writer may have at most capacity bytes unconsumed, measured
 * against the reader's head (line 1 or 2), which readers publish after
 * consuming (release) and writers re-read only when the ring looks full.
 *
 * Sleeping (spin, then park; no lost wake-up):
 *   - The server, idle for ring-spin-us, stores PARKED in server_state of
 *     every attached slot, issues a full fence, re-checks every ring, and only
 *     then sleeps in its event loop, which watches a wake descriptor.
 *     A slot whose replies wait for room in its response ring (its client
 *     is not reading) gets PARKED_FOR_ROOM instead, and the re-check tries
 *     to move those replies. (Its requests are served all the same; their
 *     replies queue behind, bounded by client-output-buffer-limit.)
 *   - A client, after publishing a request, issues a full fence and reads
 *     server_state; if not RUNNING it signals the wake descriptor it
 *     received with the slot. Every claim gets its own descriptor: a client
 *     that drains or floods its descriptor delays or wakes the server only
 *     on its own behalf.
 *   - A client that finds its response ring empty after consuming records
 *     (and has published no request since) issues a full fence and reads
 *     server_state; if PARKED_FOR_ROOM it signals the wake descriptor: the
 *     room the server waits for is there.
 *   - A client waiting for a reply spins for its budget, then reads
 *     client_wake (w), stores PARKED in client_state, fences, re-checks the
 *     response ring, and waits on client_wake while it still equals w.
 *   - The server, after publishing a reply, fences and reads client_state;
 *     if PARKED it increments client_wake and wakes the waiter.
 *
 * Trust: the server treats this memory as hostile. It reads each header
 * once into a local, checks every length against the capacity, copies the
 * payload out before using it, and on any violation resets the slot and
 * disconnects that client, logging why.
 */
#ifndef GOBLIN_RING_LAYOUT_H
#define GOBLIN_RING_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GB_RING_MAGIC UINT64_C(0x474e4952424c4f47) /* "GOBLRING" */
/* 2: 64-bit stamps and keys, 16-byte record headers, 16-byte alignment.
 * 3: server_state PARKED_FOR_ROOM, and the client's wake after reading. */
#define GB_RING_LAYOUT_VERSION 3u
#define GB_RING_LINE 128u
#define GB_RING_CTRL_SIZE (8u * GB_RING_LINE)

enum gb_ring_protocol {
    GB_RING_PROTO_SBE = 1, /* one SBE message per record (transport/sbe/goblin.xml) */
    GB_RING_PROTO_RESP = 2 /* records carry a RESP2 byte stream, pipelining allowed */
};

enum { GB_RING_SERVER_RUNNING = 0, GB_RING_SERVER_PARKED = 1, GB_RING_SERVER_PARKED_FOR_ROOM = 2 };
enum { GB_RING_CLIENT_SPINNING = 0, GB_RING_CLIENT_PARKED = 1 };

/* Record header length marking a padding record (skip to the ring's start). */
#define GB_RING_PAD UINT32_C(0xffffffff)
#define GB_RING_RECORD_HEADER 16u
#define GB_RING_RECORD_ALIGN 16u

/* The header at the start of every record. */
typedef struct gb_ring_record_header {
    uint64_t stamp;    /* 0: gb_ring_stamp(position, key); stored last, release */
    uint32_t len;      /* 8: payload bytes, or GB_RING_PAD */
    uint32_t reserved; /* 12: zero */
} gb_ring_record_header;

_Static_assert(sizeof(gb_ring_record_header) == GB_RING_RECORD_HEADER, "record header is 16 bytes");
_Static_assert(offsetof(gb_ring_record_header, len) == 8, "length after the stamp");

/* The stamp a record at position pos carries: the position mixed with the
 * slot's key, with the low bit forced on so a zeroed (never written) ring
 * never matches. Positions are multiples of 16, so distinct positions give
 * distinct stamps. */
static inline uint64_t gb_ring_stamp(uint64_t pos, uint64_t key) { return (pos ^ key) | 1u; }

static inline uint64_t gb_ring_record_size(uint32_t len)
{
    return (GB_RING_RECORD_HEADER + (uint64_t)len + (GB_RING_RECORD_ALIGN - 1)) & ~(uint64_t)(GB_RING_RECORD_ALIGN - 1);
}

/* Line 0. All sizes in bytes; offsets from the start of the slot. */
typedef struct gb_ring_header {
    uint64_t magic;          /*  0: GB_RING_MAGIC */
    uint32_t layout_version; /*  8: GB_RING_LAYOUT_VERSION */
    uint32_t protocol;       /* 12: enum gb_ring_protocol, fixed per claim */
    uint32_t slot_id;        /* 16: index in the server's pool */
    uint32_t generation;     /* 20: increments each time the slot is handed out */
    uint64_t slot_size;      /* 24: bytes of the whole mapping */
    uint64_t req_offset;     /* 32: request ring start */
    uint64_t req_capacity;   /* 40: power of two */
    uint64_t resp_offset;    /* 48: response ring start */
    uint64_t resp_capacity;  /* 56: power of two */
    uint32_t max_payload;    /* 64: largest record payload either side may send */
    uint16_t sbe_schema_id;  /* 68: SBE schema the server speaks (SBE claims) */
    uint16_t sbe_version;    /* 70 */
    uint32_t server_pid;     /* 72 */
    uint32_t spin_us;        /* 76: the server's ring-spin-us (a hint for clients) */
    uint64_t stamp_key;      /* 80: 64 random bits per claim (the OS's generator), mixed into record stamps */
    uint8_t reserved[GB_RING_LINE - 88];
} gb_ring_header;

typedef struct gb_ring_ctrl {
    gb_ring_header hdr;
    uint64_t req_head; /* line 1, atomic: server writes (release) */
    uint8_t pad1[GB_RING_LINE - 8];
    uint64_t resp_head; /* line 2, atomic: client writes (release) */
    uint8_t pad2[GB_RING_LINE - 8];
    uint32_t server_state; /* line 3, atomic: server writes */
    uint8_t pad3[GB_RING_LINE - 4];
    uint32_t client_state; /* line 4, atomic: client writes */
    uint8_t pad4[GB_RING_LINE - 4];
    uint32_t client_wake; /* line 5, atomic futex word: server increments */
    uint8_t pad5[GB_RING_LINE - 4];
    uint64_t violations; /* line 6: server writes */
    uint8_t pad6[GB_RING_LINE - 8];
    uint8_t reserved[GB_RING_LINE]; /* line 7 */
} gb_ring_ctrl;

_Static_assert(sizeof(gb_ring_header) == GB_RING_LINE, "ring header is one line");
_Static_assert(sizeof(gb_ring_ctrl) == GB_RING_CTRL_SIZE, "control block is 8 lines");
_Static_assert(offsetof(gb_ring_ctrl, req_head) == 1 * GB_RING_LINE, "req_head in line 1");
_Static_assert(offsetof(gb_ring_ctrl, resp_head) == 2 * GB_RING_LINE, "resp_head in line 2");
_Static_assert(offsetof(gb_ring_ctrl, server_state) == 3 * GB_RING_LINE, "server_state in line 3");
_Static_assert(offsetof(gb_ring_ctrl, client_state) == 4 * GB_RING_LINE, "client_state in line 4");
_Static_assert(offsetof(gb_ring_ctrl, client_wake) == 5 * GB_RING_LINE, "client_wake in line 5");
_Static_assert(offsetof(gb_ring_ctrl, violations) == 6 * GB_RING_LINE, "violations in line 6");
_Static_assert(offsetof(gb_ring_header, max_payload) == 64, "header field offsets are the wire contract");
_Static_assert(offsetof(gb_ring_header, stamp_key) == 80, "header field offsets are the wire contract");

/* The claim handshake (docs/ring-protocol.md): on its Unix-socket connection
 * the client sends the RESP command
 *     RING CLAIM <SBE|RESP> <layout-version> [<sbe-schema-version>]
 * and receives, in one sendmsg with two descriptors attached (the slot's
 * memory, then this claim's own wake descriptor), the reply
 *     *4\r\n:<slot_id>\r\n:<slot_size>\r\n:<generation>\r\n:<max_payload>\r\n
 * or a RESP error (pool full, version mismatch) with no descriptors. The slot
 * stays the client's until that connection closes. */
#define GB_RING_CLAIM_COMMAND "RING"
#define GB_RING_CLAIM_SUBCOMMAND "CLAIM"
#define GB_RING_CLAIM_SBE "SBE"   /* the protocol word for GB_RING_PROTO_SBE */
#define GB_RING_CLAIM_RESP "RESP" /* the protocol word for GB_RING_PROTO_RESP */

#ifdef __cplusplus
}
#endif

#endif
