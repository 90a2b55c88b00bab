/*
 * Segmented list: a sequence of bounded leaves plus a leaf index.
 *
 * Leaves hold listpack entries (engine/ds/listpack.c's entry codec, so values
 * cost exactly what they cost in a compact list: 1-byte tag, payload,
 * 1-byte back-length for a short string; integers packed) inside a block
 * with free space at both ends, so pushes and pops at either end of a leaf
 * are O(1) without moving the other entries:
 *
 *   leaf (one heap block, 16-byte header + data):
 *   +---------+---------+---------+----------+--------------------------------+
 *   | cap u32 | head u32| tail u32| count u32| data[cap]                      |
 *   +---------+---------+---------+----------+--------------------------------+
 *     cap    bytes in data[] (whatever the allocator handed out)
 *     head   offset of the first entry; data[0, head) is free
 *     tail   offset one past the last entry; data[tail, cap) is free
 *     count  entries in data[head, tail)
 *
 *   index (one heap block): slots[slot_cap] of 16 bytes, in use
 *   [first, first + nleaves), free slots on both sides:
 *     leaf   8 B  pointer
 *     start  8 B  virtual position of the leaf's first entry
 *
 * `start` values are positions on an unbounded virtual line: list index i is
 * at virtual position slots[first].start + i. A push or pop at the head moves
 * only the head leaf's start, at the tail nothing; an insertion or deletion
 * inside leaf j moves the starts on the shorter side of j. So finding the
 * leaf of an index is a binary search over starts (O(log leaves)) and the
 * ends stay O(1). The walk inside a leaf goes from its nearer end.
 *
 * Leaves obey list-max-listpack-size like Redis's quicklist nodes (as if each
 * leaf were a listpack: entries + 9 header/END bytes), except a leaf holding a
 * single value, which may be larger. A leaf sealed by a new neighbour at its
 * end gives back its slack (shrink to fit), so only the two end leaves carry
 * free space.
 *
 * Per element this costs the listpack entry only (for a 10-byte string, 12
 * bytes) plus 32 bytes of header and index slot per leaf (~0.05 B/element at
 * 8 KiB leaves), against Redis's 32-byte quicklistNode + 7-byte listpack
 * header per node and the same entries.
 *
 * Compression (list-compress-depth d > 0, as Redis's quicklist): the d
 * leaves at each end stay plain; every interior leaf is stored as an LZF
 * block when that saves at least MIN_COMPRESS_IMPROVE bytes of a leaf of at
 * least MIN_COMPRESS_BYTES (Redis's rules; an incompressible interior leaf
 * stays plain):
 *
 *   compressed leaf: | cap = 0 | head = 0 | tail = raw bytes | count | zlen u32 | lzf[zlen] |
 *
 * so count and used() (the raw entry bytes) read the same as for a plain
 * leaf and the index, the starts and the byte totals never look inside.
 * Reads inflate a compressed leaf into a per-list cache leaf and keep the
 * compressed block (a read never recompresses; the next read of the same
 * leaf is free). A write inflates the leaf in place (taking the cache's copy
 * when it has one) and, once the edit is done, settle() compresses what the
 * edit touched again. Leaves change zone only when leaves appear or vanish:
 * each op counts them (churn) and settle() looks only at the leaves within
 * churn of the zone boundaries, so a push that does not open a new leaf
 * costs nothing extra, and one that does compresses one leaf, once.
 */
#include <stdlib.h>

#include "engine/ds/list_impl.h"
#include "engine/base/lzf.h"
#include "engine/base/mem.h"

typedef struct leaf {
    uint32_t cap;
    uint32_t head;
    uint32_t tail;
    uint32_t count;
    unsigned char data[];
} leaf;
_Static_assert(sizeof(leaf) == 16, "leaf header is 16 bytes");

#define ZCACHE 2

typedef struct slot {
    leaf *lf;
    int64_t start;
} slot;
_Static_assert(sizeof(slot) == 16, "index slot is 16 bytes");

struct gb_list_seg {
    slot *slots;
    uint32_t depth; /* list-compress-depth: plain leaves at each end; 0 = off */
    /* Leaves added [.][0] or removed [.][1] since the last settle(), by the
     * side whose zone they shift: [0] moves positions counted from the head,
     * [1] from the tail. */
    size_t churn[2][2];
    /* Read cache: plain copies zcache[k] of compressed leaves zsrc[k]. Two,
     * so a range across a leaf boundary (or walking back and forth over
     * one) finds both; zlast is the one used last, the other goes first. */
    leaf *zcache[ZCACHE];
    const leaf *zsrc[ZCACHE];
    unsigned zlast;
    size_t deflates, inflates; /* work done, for tests */
    size_t slot_cap; /* slots allocated */
    size_t first;    /* first slot in use */
    size_t nleaves;  /* slots in use */
    size_t len;      /* entries */
    size_t bytes;    /* sum of (tail - head): listpack-entry bytes */
    gb_list_limit lim;
    /* Access hint: where the last seek landed (leaf, local index, offset).
     * Valid while hint_ver == ver; every edit that can move entries or
     * leaves bumps ver. Repeated or nearby LINDEX/LSET/LRANGE then walk from
     * the hint instead of from a leaf end. */
    uint64_t ver, hint_ver;
    size_t hint_j;
    uint32_t hint_r, hint_off;
};

/* Listpack header (8) + END (1): the leaf limit counts them, as Redis's
 * node limit does, so a full leaf converts to a listpack of the same size. */
#define LP_OVERHEAD 9
#define LEAF_MIN_CAP 64
/* First capacity of a new end leaf; it doubles up to the limit. */
#define LEAF_START_CAP 512

/* Where a leaf rebuild puts the free space. */
enum { BIAS_FRONT = -1, BIAS_SPLIT = 0, BIAS_BACK = 1 };

static inline uint32_t used(const leaf *lf) { return lf->tail - lf->head; }
/* A compressed leaf has cap 0 (a plain leaf always has room for a byte). */
static inline bool is_z(const leaf *lf) { return lf->cap == 0; }
static inline slot *sl(const gb_list_seg *s, size_t j) { return &s->slots[s->first + j]; }
static inline leaf *lf_at(const gb_list_seg *s, size_t j) { return s->slots[s->first + j].lf; }

static inline bool leaf_accepts(const gb_list_seg *s, const leaf *lf, size_t add_bytes)
{
    return !gb_list_limit_exceeded(&s->lim, LP_OVERHEAD + used(lf) + add_bytes, lf->count + 1u);
}

/* Byte capacity a leaf may usefully grow to. */
static inline size_t leaf_max_data(const gb_list_seg *s)
{
    return s->lim.max_bytes > LP_OVERHEAD ? s->lim.max_bytes - LP_OVERHEAD : LEAF_MIN_CAP;
}

static leaf *leaf_alloc(size_t cap)
{
    if (cap > UINT32_MAX - sizeof(leaf))
        cap = UINT32_MAX - sizeof(leaf);
    leaf *lf = gb_malloc(sizeof(leaf) + cap);
    size_t usable = gb_mem_usable(lf) - sizeof(leaf);
    lf->cap = (uint32_t)(usable > UINT32_MAX ? UINT32_MAX : usable);
    lf->head = lf->tail = 0;
    lf->count = 0;
    return lf;
}

/* Capacity for a leaf that must hold `want` bytes and may keep growing
 * (lf == NULL: a new end leaf). */
static size_t grow_cap(const gb_list_seg *s, const leaf *lf, size_t want)
{
    size_t cap = lf ? (size_t)lf->cap * 2 : LEAF_START_CAP;
    size_t max = leaf_max_data(s);
    if (cap > max)
        cap = max;
    return cap < want ? want : cap;
}

/* Copies lf's entries into a block of capacity `cap` (may be lf itself when
 * it is big enough), leaving a gap of `gap` bytes at data offset `at` and
 * placing the free space by bias. Returns the leaf and the gap's offset. */
static leaf *leaf_rebuild(leaf *lf, size_t cap, uint32_t at, size_t gap, int bias, uint32_t *gpos)
{
    uint32_t before = at - lf->head, after = lf->tail - at;
    size_t need = (size_t)before + gap + after;
    leaf *nl = cap == lf->cap ? lf : leaf_alloc(cap);
    size_t free_bytes = nl->cap - need;
    size_t front = bias == BIAS_FRONT ? free_bytes : bias == BIAS_BACK ? 0 : free_bytes / 2;
    if (nl == lf) {
        /* in place: move the two parts so neither overwrites the other */
        unsigned char *d = lf->data;
        uint32_t oh = lf->head;
        size_t nb = front, na = front + before + gap;
        if (na > at) {
            memmove(d + na, d + at, after);
            memmove(d + nb, d + oh, before);
        } else {
            memmove(d + nb, d + oh, before);
            memmove(d + na, d + at, after);
        }
    } else {
        memcpy(nl->data + front, lf->data + lf->head, before);
        memcpy(nl->data + front + before + gap, lf->data + at, after);
        nl->count = lf->count;
        gb_free(lf);
    }
    nl->head = (uint32_t)front;
    nl->tail = (uint32_t)(front + need);
    *gpos = (uint32_t)(front + before);
    return nl;
}

/* Opens `gap` bytes at data offset `at` (head <= at <= tail) by moving the
 * cheaper side, rebuilding (possibly larger) when neither side has room.
 * Returns the leaf (may move) and the gap's offset in *gpos. */
static leaf *leaf_open(const gb_list_seg *s, leaf *lf, uint32_t at, size_t gap, int bias,
                       uint32_t *gpos)
{
    uint32_t before = at - lf->head, after = lf->tail - at;
    size_t front = lf->head, back = lf->cap - lf->tail;
    if (front >= gap && (before <= after || back < gap)) {
        memmove(lf->data + lf->head - gap, lf->data + lf->head, before);
        lf->head -= (uint32_t)gap;
        *gpos = at - (uint32_t)gap;
        return lf;
    }
    if (back >= gap) {
        memmove(lf->data + at + gap, lf->data + at, after);
        lf->tail += (uint32_t)gap;
        *gpos = at;
        return lf;
    }
    size_t want = used(lf) + gap;
    size_t cap = want <= lf->cap ? lf->cap : grow_cap(s, lf, want);
    return leaf_rebuild(lf, cap, at, gap, bias, gpos);
}

/* Removes `gap` bytes at data offset `at` by moving the cheaper side. */
static void leaf_close(leaf *lf, uint32_t at, size_t gap)
{
    uint32_t before = at - lf->head, after = lf->tail - at - (uint32_t)gap;
    if (before < after) {
        memmove(lf->data + lf->head + gap, lf->data + lf->head, before);
        lf->head += (uint32_t)gap;
    } else {
        memmove(lf->data + at, lf->data + at + gap, after);
        lf->tail -= (uint32_t)gap;
    }
}

/* Gives back a leaf's slack once it is no longer at an end. */
static leaf *leaf_seal(leaf *lf)
{
    size_t u = used(lf);
    if (lf->cap - u < 64 && lf->cap - u <= u / 8)
        return lf;
    memmove(lf->data, lf->data + lf->head, u);
    lf->head = 0;
    lf->tail = (uint32_t)u;
    leaf *nl = gb_realloc(lf, sizeof(leaf) + (u ? u : 1));
    size_t usable = gb_mem_usable(nl) - sizeof(leaf);
    nl->cap = (uint32_t)(usable > UINT32_MAX ? UINT32_MAX : usable);
    return nl;
}

/* Entry sizes for walks, with the common cases inline: a string of up to
 * 63 bytes or a 7-bit integer forward; a 1-byte back-length backward. A walk
 * is a chain of dependent loads, so each branch saved shows. */
static inline uint32_t step_fwd(const unsigned char *p)
{
    unsigned t = p[0];
    if (t < 0x80)
        return 2;
    if (t < 0xC0)
        return (t & 0x3F) + 2u;
    return (uint32_t)gb_lp_entry_bytes(p);
}

static inline uint32_t step_back(const unsigned char *end)
{
    unsigned b = end[-1];
    if (!(b & 128))
        return b + 1u;
    return (uint32_t)gb_lp_prev_entry_bytes(end);
}

/* Offset of local entry r, walking from local entry r0 at offset off0. */
static uint32_t walk(const leaf *lf, uint32_t r0, uint32_t off0, uint32_t r)
{
    const unsigned char *d = lf->data;
    uint32_t off = off0;
    for (; r0 < r; r0++)
        off += step_fwd(d + off);
    for (; r0 > r; r0--)
        off -= step_back(d + off);
    return off;
}

/* Gives memory back when a leaf shrank to a quarter of its block (a big
 * value replaced or removed). */
static leaf *leaf_maybe_shrink(leaf *lf)
{
    if (lf->cap > 2 * LEAF_START_CAP && used(lf) < lf->cap / 4)
        return leaf_seal(lf);
    return lf;
}

/* Offset of the local entry r of lf, walking from the nearer end. */
static uint32_t leaf_seek(const leaf *lf, uint32_t r)
{
    if (r <= lf->count / 2)
        return walk(lf, 0, lf->head, r);
    return walk(lf, lf->count, lf->tail, r);
}

/* ---- the index ---- */

/* Ensures room for one more slot before (at_front) or after the used range;
 * recentres or grows the slot array. */
static void slots_make_room(gb_list_seg *s, bool at_front)
{
    if (at_front ? s->first > 0 : s->first + s->nleaves < s->slot_cap)
        return;
    size_t cap = s->slot_cap;
    if (s->nleaves + 2 > cap / 2)
        cap = cap ? cap * 2 : 4;
    slot *ns = cap == s->slot_cap ? s->slots : gb_malloc(cap * sizeof(slot));
    size_t nf = (cap - s->nleaves) / 2;
    memmove(ns + nf, s->slots + s->first, s->nleaves * sizeof(slot));
    if (ns != s->slots)
        gb_free(s->slots);
    s->slots = ns;
    s->slot_cap = cap;
    s->first = nf;
}

/* Counts a leaf added (kind 0) or removed (kind 1) at position j of the n
 * leaves there are without it, for settle(). */
static void note_churn(gb_list_seg *s, size_t j, size_t n, int kind)
{
    if (j > 0 || n == 0) /* not at the head: positions from the tail move */
        s->churn[1][kind]++;
    if (j < n || n == 0) /* not at the tail: positions from the head move */
        s->churn[0][kind]++;
}

/* Inserts a slot at position j (0..nleaves), moving the shorter side. */
static void slots_insert(gb_list_seg *s, size_t j, leaf *lf, int64_t start)
{
    note_churn(s, j, s->nleaves, 0);
    bool front = j < s->nleaves - j;
    if (front && s->first == 0)
        front = false;
    if (!front && s->first + s->nleaves == s->slot_cap)
        front = s->first > 0;
    if (front ? s->first == 0 : s->first + s->nleaves == s->slot_cap)
        slots_make_room(s, front);
    if (front) {
        memmove(&s->slots[s->first - 1], &s->slots[s->first], j * sizeof(slot));
        s->first--;
    } else {
        memmove(&s->slots[s->first + j + 1], &s->slots[s->first + j],
                (s->nleaves - j) * sizeof(slot));
    }
    s->nleaves++;
    sl(s, j)->lf = lf;
    sl(s, j)->start = start;
}

static void slots_remove(gb_list_seg *s, size_t j)
{
    note_churn(s, j, s->nleaves - 1, 1);
    if (j < s->nleaves - 1 - j) {
        memmove(&s->slots[s->first + 1], &s->slots[s->first], j * sizeof(slot));
        s->first++;
    } else {
        memmove(&s->slots[s->first + j], &s->slots[s->first + j + 1],
                (s->nleaves - 1 - j) * sizeof(slot));
    }
    s->nleaves--;
    if (s->nleaves == 0)
        s->first = s->slot_cap / 2;
}

/* Records that leaf j gained (delta > 0) or lost entries in its interior:
 * shifts the starts on the shorter side so positions stay consistent. */
static void starts_adjust(gb_list_seg *s, size_t j, long delta)
{
    if (j < s->nleaves / 2) {
        for (size_t i = 0; i <= j; i++)
            sl(s, i)->start -= delta;
    } else {
        for (size_t i = j + 1; i < s->nleaves; i++)
            sl(s, i)->start += delta;
    }
}

static void starts_recompute(gb_list_seg *s)
{
    int64_t pos = 0;
    for (size_t j = 0; j < s->nleaves; j++) {
        sl(s, j)->start = pos;
        pos += lf_at(s, j)->count;
    }
}

/* Leaf holding list index idx (< len) and its local index. */
static size_t find_leaf(const gb_list_seg *s, size_t idx, uint32_t *r)
{
    int64_t v = sl(s, 0)->start + (int64_t)idx;
    size_t lo = 0, hi = s->nleaves - 1;
    if (s->nleaves > 1 && v >= sl(s, hi)->start) {
        lo = hi; /* tail leaf: the common case after the head */
    } else {
        while (lo < hi) {
            size_t mid = (lo + hi + 1) / 2;
            if (sl(s, mid)->start <= v)
                lo = mid;
            else
                hi = mid - 1;
        }
    }
    *r = (uint32_t)(v - sl(s, lo)->start);
    return lo;
}

/* ---- compression (list-compress-depth) ---- */

/* Redis's quicklist rules: a node under 48 bytes is not compressed, nor one
 * whose LZF form would save fewer than 8 bytes. */
#define MIN_COMPRESS_BYTES 48
#define MIN_COMPRESS_IMPROVE 8
/* gb_lzf_compress works on blocks under 4 GiB; a leaf past this (one huge
 * value) stays plain. */
#define MAX_COMPRESS_BYTES (1u << 30)
#define ZLEN_BYTES 4
#define INFLATE_SLACK 32

static inline uint32_t zlen(const leaf *z)
{
    uint32_t n;
    memcpy(&n, z->data, ZLEN_BYTES);
    return n;
}

/* The compressed form of plain leaf lf, or NULL when Redis's rules keep it
 * plain. */
static leaf *leaf_deflate(gb_list_seg *s, const leaf *lf)
{
    if (s)
        s->deflates++;
    size_t raw = used(lf);
    if (raw < MIN_COMPRESS_BYTES || raw > MAX_COMPRESS_BYTES)
        return NULL;
    size_t room = raw - MIN_COMPRESS_IMPROVE - 1; /* larger saves too little */
    leaf *z = gb_malloc(sizeof(leaf) + ZLEN_BYTES + room);
    size_t n = gb_lzf_compress(lf->data + lf->head, raw, z->data + ZLEN_BYTES, room);
    if (n == 0) {
        gb_free(z);
        return NULL;
    }
    z = gb_realloc(z, sizeof(leaf) + ZLEN_BYTES + n);
    z->cap = 0;
    z->head = 0;
    z->tail = (uint32_t)raw;
    z->count = lf->count;
    uint32_t n32 = (uint32_t)n;
    memcpy(z->data, &n32, ZLEN_BYTES);
    return z;
}

/* Inflates compressed leaf z into `into` (reused when big enough, else
 * freed; NULL: a new block). The result has head 0, so offsets found in one
 * inflated copy hold in any other. */
static leaf *leaf_inflate(const leaf *z, leaf *into)
{
    size_t raw = z->tail;
    if (into && (into->cap < raw || into->cap / 4 > raw + INFLATE_SLACK)) {
        /* too small, or a big leaf's copy that would stay held for a small one */
        gb_free(into);
        into = NULL;
    }
    /* spare room past raw lets the decoder copy in wide fixed-size moves */
    leaf *nl = into ? into : leaf_alloc(raw + INFLATE_SLACK);
    int64_t got = gb_lzf_decompress(z->data + ZLEN_BYTES, zlen(z), nl->data, nl->cap);
    if (got != (int64_t)raw) {
        /* our own block no longer decodes: memory is corrupt */
        fprintf(stderr, "segmented list: a compressed leaf does not inflate\n");
        abort();
    }
    nl->head = 0;
    nl->tail = (uint32_t)raw;
    nl->count = z->count;
    return nl;
}

/* Leaf j for reading: itself when plain, else the cache's inflated copy
 * (the compressed block stays as it is). Valid until views of two other
 * compressed leaves or the next edit. */
static leaf *leaf_view(gb_list_seg *s, size_t j)
{
    leaf *lf = lf_at(s, j);
    if (GB_LIKELY(!is_z(lf)))
        return lf;
    unsigned k = s->zlast;
    if (s->zsrc[k] != lf) {
        k ^= 1; /* the other slot (ZCACHE is 2): it holds lf, or is the older */
        if (s->zsrc[k] != lf) {
            s->inflates++;
            s->zcache[k] = leaf_inflate(lf, s->zcache[k]);
            s->zsrc[k] = lf;
        }
        s->zlast = k;
    }
    return s->zcache[k];
}

/* The cache slot holding lf's copy, or -1. */
static inline int cache_slot(const gb_list_seg *s, const leaf *lf)
{
    return s->zsrc[0] == lf ? 0 : s->zsrc[1] == lf ? 1 : -1;
}

/* Drops the cache's oversized copies (one big value's leaf): not kept
 * past an edit, which ends every borrow of them anyway. */
static void cache_drop_oversized(gb_list_seg *s)
{
    for (unsigned k = 0; k < ZCACHE; k++) {
        if (s->zcache[k] && s->zcache[k]->cap > 2 * leaf_max_data(s) + INFLATE_SLACK) {
            gb_free(s->zcache[k]);
            s->zcache[k] = NULL;
            s->zsrc[k] = NULL;
        }
    }
}

/* Frees a leaf, forgetting the cache's copy of it. */
static void leaf_free(gb_list_seg *s, leaf *lf)
{
    int k = cache_slot(s, lf);
    if (k >= 0)
        s->zsrc[k] = NULL;
    gb_free(lf);
}

/* Leaf j for writing: inflated in place when compressed (taking the cache's
 * copy when it holds this leaf). settle() compresses it again. */
static leaf *leaf_plain(gb_list_seg *s, size_t j)
{
    leaf *lf = lf_at(s, j);
    if (GB_LIKELY(!is_z(lf)))
        return lf;
    leaf *nl;
    int k = cache_slot(s, lf);
    if (k >= 0) {
        nl = s->zcache[k];
        s->zcache[k] = NULL;
        s->zsrc[k] = NULL;
    } else {
        s->inflates++;
        nl = leaf_inflate(lf, NULL);
    }
    gb_free(lf);
    sl(s, j)->lf = nl;
    return nl;
}

/* Whether leaf j lies between the `depth` plain leaves of each end. */
static inline bool interior(const gb_list_seg *s, size_t j)
{
    return s->depth && j >= s->depth && s->nleaves - j > s->depth;
}

/* Puts leaf j in the state its zone asks for. */
static void settle_leaf(gb_list_seg *s, size_t j)
{
    leaf *lf = lf_at(s, j);
    if (!interior(s, j)) {
        if (is_z(lf))
            leaf_plain(s, j);
        return;
    }
    if (is_z(lf))
        return;
    leaf *z = leaf_deflate(s, lf);
    if (!z)
        return;
    if (lf->head != 0)
        s->ver++; /* an access hint into this leaf assumed its old layout */
    gb_free(lf);  /* plain: never the cache's source */
    sl(s, j)->lf = z;
}

static void settle_range(gb_list_seg *s, long long lo, long long hi)
{
    if (lo < 0)
        lo = 0;
    if (hi >= (long long)s->nleaves)
        hi = (long long)s->nleaves - 1;
    for (long long j = lo; j <= hi; j++)
        settle_leaf(s, (size_t)j);
}

/* After an edit: a leaf the edit did not touch changes zone only when
 * leaves appeared or vanished on one side of it, and then only within that
 * many leaves of a zone boundary. Settles exactly those windows. */
static void settle(gb_list_seg *s)
{
    cache_drop_oversized(s);
    long long hadd = (long long)s->churn[0][0], hdel = (long long)s->churn[0][1];
    long long tadd = (long long)s->churn[1][0], tdel = (long long)s->churn[1][1];
    memset(s->churn, 0, sizeof s->churn);
    if (s->depth == 0)
        return;
    long long d = s->depth, n = (long long)s->nleaves;
    /* distance from the head now in [d, d+hadd) entered the interior,
     * in [d-hdel, d) left it; the same from the tail */
    if (hadd)
        settle_range(s, d, d + hadd - 1);
    if (hdel)
        settle_range(s, d - hdel, d - 1);
    if (tadd)
        settle_range(s, n - d - tadd, n - 1 - d);
    if (tdel)
        settle_range(s, n - d, n - 1 - d + tdel);
}

/* ---- lifetime ---- */

gb_list_seg *gb_list_seg_new(gb_list_limit lim)
{
    gb_list_seg *s = gb_malloc(sizeof(*s));
    memset(s, 0, sizeof(*s));
    s->lim = lim;
    s->ver = 1;
    s->slot_cap = 4;
    s->slots = gb_malloc(s->slot_cap * sizeof(slot));
    s->first = 2;
    return s;
}

void gb_list_seg_free(gb_list_seg *s)
{
    if (!s)
        return;
    for (size_t j = 0; j < s->nleaves; j++)
        gb_free(lf_at(s, j));
    for (unsigned k = 0; k < ZCACHE; k++)
        gb_free(s->zcache[k]);
    gb_free(s->slots);
    gb_free(s);
}

size_t gb_list_seg_len(const gb_list_seg *s) { return s->len; }
size_t gb_list_seg_lp_bytes(const gb_list_seg *s) { return s->bytes; }
size_t gb_list_seg_leaves(const gb_list_seg *s) { return s->nleaves; }

void gb_list_seg_set_compress_depth(gb_list_seg *s, unsigned depth)
{
    s->depth = depth;
    s->churn[0][0] = s->churn[1][0] = s->nleaves; /* every leaf may need to change */
    settle(s);
}

void gb_list_seg_compress_work(const gb_list_seg *s, size_t *deflates, size_t *inflates)
{
    *deflates = s->deflates;
    *inflates = s->inflates;
}

size_t gb_list_seg_compressed(const gb_list_seg *s)
{
    size_t n = 0;
    for (size_t j = 0; j < s->nleaves; j++)
        n += is_z(lf_at(s, j));
    return n;
}

size_t gb_list_seg_mem(const gb_list_seg *s)
{
    /* compressed leaves count their LZF block; the read cache is real memory too */
    size_t m = gb_mem_accounted((void *)s) + gb_mem_accounted(s->slots) +
               gb_mem_accounted(s->zcache[0]) + gb_mem_accounted(s->zcache[1]);
    for (size_t j = 0; j < s->nleaves; j++)
        m += gb_mem_accounted(lf_at(s, j));
    return m;
}

/* ---- raw entry placement (shared by push, rotate and conversion) ---- */

/* Makes room for an entry of e bytes at `end` and returns where to write it;
 * adds the entry to the counts. */
static unsigned char *reserve_end(gb_list_seg *s, gb_list_end end, size_t e)
{
    size_t j = end == GB_LIST_HEAD ? 0 : s->nleaves - 1;
    leaf *lf = s->nleaves ? lf_at(s, j) : NULL;
    uint32_t pos;
    if (lf && leaf_accepts(s, lf, e)) {
        if (end == GB_LIST_HEAD) {
            if (GB_LIKELY(lf->head >= e)) {
                lf->head -= (uint32_t)e;
                pos = lf->head;
            } else {
                lf = leaf_open(s, lf, lf->head, e, BIAS_FRONT, &pos);
                sl(s, j)->lf = lf;
            }
            sl(s, j)->start--;
        } else {
            if (GB_LIKELY(lf->cap - lf->tail >= e)) {
                pos = lf->tail;
                lf->tail += (uint32_t)e;
            } else {
                lf = leaf_open(s, lf, lf->tail, e, BIAS_BACK, &pos);
                sl(s, j)->lf = lf;
            }
        }
    } else {
        /* a new end leaf; the old one is sealed (slack returned) */
        if (lf)
            sl(s, j)->lf = leaf_seal(lf);
        leaf *nl = leaf_alloc(grow_cap(s, NULL, e));
        if (end == GB_LIST_HEAD) {
            nl->head = nl->tail = nl->cap;
            nl->head -= (uint32_t)e;
            pos = nl->head;
            int64_t start = s->nleaves ? sl(s, 0)->start - 1 : 0;
            slots_insert(s, 0, nl, start);
        } else {
            pos = 0;
            nl->tail = (uint32_t)e;
            int64_t start = s->nleaves ? sl(s, j)->start + lf_at(s, j)->count : 0;
            slots_insert(s, s->nleaves, nl, start);
        }
        lf = nl;
    }
    lf->count++;
    s->len++;
    s->bytes += e;
    return lf->data + pos;
}

void gb_list_seg_push(gb_list_seg *s, gb_list_end end, gb_slice v)
{
    s->ver++;
    size_t e = gb_lp_encode(NULL, v);
    gb_lp_encode(reserve_end(s, end, e), v);
    settle(s);
}

gb_list_seg *gb_list_seg_from_listpack(const unsigned char *lp, gb_list_limit lim,
                                       unsigned depth)
{
    gb_list_seg *s = gb_list_seg_new(lim);
    s->depth = depth;
    const unsigned char *p = lp + GB_LP_HEADER_SIZE;
    for (uint32_t i = gb_lp_count(lp); i > 0; i--) {
        size_t e = gb_lp_entry_bytes(p);
        memcpy(reserve_end(s, GB_LIST_TAIL, e), p, e);
        settle(s); /* a leaf that moved into the interior is compressed now, once */
        p += e;
    }
    return s;
}

unsigned char *gb_list_seg_to_listpack(gb_list_seg *s)
{
    unsigned char *lp = gb_lp_new(LP_OVERHEAD + s->bytes);
    for (size_t j = 0; j < s->nleaves; j++) {
        leaf *lf = leaf_view(s, j);
        lp = gb_lp_append_raw(lp, lf->data + lf->head, used(lf), lf->count);
    }
    return lp;
}

/* ---- pops ---- */

static void emit_entry(gb_list_emit_fn emit, void *ctx, const unsigned char *p)
{
    char buf[GB_LP_INT_BUF];
    emit(ctx, gb_lp_get_slice(p, buf));
}

size_t gb_list_seg_pop(gb_list_seg *s, gb_list_end end, size_t count, gb_list_emit_fn emit,
                       void *ctx)
{
    s->ver++;
    if (count > s->len)
        count = s->len;
    size_t left = count;
    while (left) {
        size_t j = end == GB_LIST_HEAD ? 0 : s->nleaves - 1;
        leaf *lf = lf_at(s, j);
        if (left >= lf->count) {
            /* the whole leaf goes: emit, then free it (a compressed one
             * popped unseen, as by LTRIM, is never inflated) */
            leaf *whole = lf;
            if (emit) {
                lf = leaf_view(s, j);
                if (end == GB_LIST_HEAD) {
                    for (uint32_t off = lf->head; off < lf->tail;
                         off += step_fwd(lf->data + off))
                        emit_entry(emit, ctx, lf->data + off);
                } else {
                    for (uint32_t off = lf->tail; off > lf->head;) {
                        off -= step_back(lf->data + off);
                        emit_entry(emit, ctx, lf->data + off);
                    }
                }
            }
            left -= lf->count;
            s->len -= lf->count;
            s->bytes -= used(lf);
            leaf_free(s, whole);
            if (end == GB_LIST_HEAD) {
                s->first++;
                s->nleaves--;
            } else {
                s->nleaves--;
            }
            note_churn(s, end == GB_LIST_HEAD ? 0 : s->nleaves, s->nleaves, 1);
            continue;
        }
        /* partial leaf: the boundary offset moves, no bytes are moved */
        lf = leaf_plain(s, j);
        uint32_t k = (uint32_t)left;
        uint32_t before = used(lf);
        if (end == GB_LIST_HEAD) {
            uint32_t off = lf->head;
            for (uint32_t i = 0; i < k; i++) {
                if (emit)
                    emit_entry(emit, ctx, lf->data + off);
                off += step_fwd(lf->data + off);
            }
            lf->head = off;
            sl(s, 0)->start += k;
        } else {
            uint32_t off = lf->tail;
            for (uint32_t i = 0; i < k; i++) {
                off -= step_back(lf->data + off);
                if (emit)
                    emit_entry(emit, ctx, lf->data + off);
            }
            lf->tail = off;
        }
        lf->count -= k;
        s->len -= k;
        s->bytes -= before - used(lf);
        left = 0;
    }
    if (s->nleaves == 0)
        s->first = s->slot_cap / 2;
    settle(s);
    return count;
}

void gb_list_seg_trim(gb_list_seg *s, size_t head, size_t tail)
{
    gb_list_seg_pop(s, GB_LIST_HEAD, head, NULL, NULL);
    gb_list_seg_pop(s, GB_LIST_TAIL, tail, NULL, NULL);
}

/* ---- by index ---- */

/* Leaf, local index and offset of list index idx, using and refreshing the
 * access hint. */
static uint32_t seek(gb_list_seg *s, size_t idx, size_t *jp, uint32_t *rp)
{
    size_t j;
    uint32_t r, off;
    if (s->hint_ver == s->ver) {
        j = s->hint_j;
        const leaf *lf = lf_at(s, j);
        int64_t v = sl(s, 0)->start + (int64_t)idx, st = sl(s, j)->start;
        if (v >= st && v < st + lf->count) {
            lf = leaf_view(s, j);
            r = (uint32_t)(v - st);
            uint32_t hr = s->hint_r;
            uint32_t dh = r > hr ? r - hr : hr - r;
            if (dh <= r && dh <= lf->count - r)
                off = walk(lf, hr, s->hint_off, r);
            else
                off = leaf_seek(lf, r);
            goto out;
        }
    }
    j = find_leaf(s, idx, &r);
    off = leaf_seek(leaf_view(s, j), r);
out:
    s->hint_ver = s->ver;
    s->hint_j = j;
    s->hint_r = r;
    s->hint_off = off;
    *jp = j;
    *rp = r;
    return off;
}

void gb_list_seg_get(gb_list_seg *s, size_t idx, char *buf, gb_slice *out)
{
    size_t j;
    uint32_t r;
    uint32_t off = seek(s, idx, &j, &r);
    *out = gb_lp_get_slice(leaf_view(s, j)->data + off, buf);
}

/* Inserts a new leaf (holding nl->count new entries) at slot position `at`,
 * shifting the starts of the shorter side. */
static void insert_leaf(gb_list_seg *s, size_t at, leaf *nl)
{
    int64_t c = nl->count;
    size_t n = s->nleaves;
    int64_t start = 0;
    if (n > 0 && at <= n / 2) {
        start = sl(s, at)->start - c;
        for (size_t i = 0; i < at; i++)
            sl(s, i)->start -= c;
    } else if (n > 0) {
        start = sl(s, at - 1)->start + lf_at(s, at - 1)->count;
        for (size_t i = at; i < n; i++)
            sl(s, i)->start += c;
    }
    slots_insert(s, at, nl, start);
}

/* Splits leaf j so that its local entries [r, count) move to a new leaf at
 * j + 1. Both halves are sealed (no slack). */
static void split_leaf(gb_list_seg *s, size_t j, uint32_t r)
{
    leaf *lf = leaf_plain(s, j);
    uint32_t at = leaf_seek(lf, r);
    uint32_t nbytes = lf->tail - at;
    leaf *nl = leaf_alloc(nbytes ? nbytes : 1);
    memcpy(nl->data, lf->data + at, nbytes);
    nl->head = 0;
    nl->tail = nbytes;
    nl->count = lf->count - r;
    lf->tail = at;
    lf->count = r;
    sl(s, j)->lf = leaf_seal(lf);
    slots_insert(s, j + 1, nl, sl(s, j)->start + r);
}

/* Replaces the entry at local r of leaf j (old_e bytes) with v, or inserts v
 * before local r (old_e == 0), keeping leaves within the limit. */
static void leaf_put(gb_list_seg *s, size_t j, uint32_t r, uint32_t at, size_t old_e, gb_slice v)
{
    size_t e = gb_lp_encode(NULL, v);
    leaf *lf = leaf_plain(s, j);
    if (e == old_e) {
        /* same size: rewritten in place; offsets and the hint stay valid */
        gb_lp_encode(lf->data + at, v);
        return;
    }
    s->ver++;
    bool insert = old_e == 0;
    bool fits = insert ? leaf_accepts(s, lf, e)
                       : (lf->count == 1 ||
                          !gb_list_limit_exceeded(&s->lim, LP_OVERHEAD + used(lf) - old_e + e,
                                                  lf->count));
    if (!fits) {
        if (insert) {
            /* prefer a neighbour with room, then a new leaf, then a split */
            if (r == 0 && j > 0 && leaf_accepts(s, lf_at(s, j - 1), e)) {
                j--;
                lf = leaf_plain(s, j);
                r = lf->count;
                at = lf->tail;
            } else if (r == lf->count && j + 1 < s->nleaves &&
                       leaf_accepts(s, lf_at(s, j + 1), e)) {
                j++;
                lf = leaf_plain(s, j);
                r = 0;
                at = lf->head;
            } else if (r == 0 || r == lf->count) {
                leaf *nl = leaf_alloc(e);
                nl->head = 0;
                nl->tail = (uint32_t)e;
                nl->count = 1;
                gb_lp_encode(nl->data, v);
                insert_leaf(s, r == 0 ? j : j + 1, nl);
                s->len++;
                s->bytes += e;
                return;
            } else {
                split_leaf(s, j, r);
                /* v goes at the end of the left half */
                lf = lf_at(s, j);
                r = lf->count;
                if (!leaf_accepts(s, lf, e)) {
                    leaf_put(s, j + 1, 0, UINT32_MAX, 0, v);
                    return;
                }
            }
            at = UINT32_MAX;
        } else {
            /* the new value does not fit beside the others: isolate it */
            if (r + 1 < lf->count)
                split_leaf(s, j, r + 1);
            if (r > 0) {
                split_leaf(s, j, r);
                j++;
                r = 0;
            }
            lf = lf_at(s, j);
            at = UINT32_MAX;
        }
    }
    if (at == UINT32_MAX)
        at = leaf_seek(lf, r);
    unsigned char *dst;
    if (e > old_e) {
        uint32_t gpos;
        int bias = insert && r == 0 ? BIAS_FRONT : insert && r == lf->count ? BIAS_BACK
                                                                            : BIAS_SPLIT;
        lf = leaf_open(s, lf, at + (uint32_t)old_e, e - old_e, bias, &gpos);
        sl(s, j)->lf = lf;
        dst = lf->data + gpos - old_e;
    } else if (e < old_e) {
        uint32_t h = lf->head;
        leaf_close(lf, at + (uint32_t)e, old_e - e);
        dst = lf->data + at + (lf->head - h);
    } else {
        dst = lf->data + at;
    }
    gb_lp_encode(dst, v);
    if (e < old_e) {
        lf = leaf_maybe_shrink(lf);
        sl(s, j)->lf = lf;
    }
    s->bytes += e - old_e;
    if (insert) {
        lf->count++;
        s->len++;
        starts_adjust(s, j, 1);
    }
}

/* After leaf_put at leaf j: it wrote leaf j only (in_place), or possibly a
 * neighbour and leaves split off j. */
static void settle_touched(gb_list_seg *s, size_t j, bool in_place)
{
    if (in_place)
        settle_leaf(s, j);
    else
        settle_range(s, (long long)j - 1, (long long)j + 3);
    settle(s);
}

void gb_list_seg_set(gb_list_seg *s, size_t idx, gb_slice v)
{
    size_t j;
    uint32_t r;
    uint32_t at = seek(s, idx, &j, &r);
    size_t n0 = s->nleaves;
    size_t old_e = gb_lp_entry_bytes(leaf_plain(s, j)->data + at);
    leaf_put(s, j, r, at, old_e, v);
    settle_touched(s, j, n0 == s->nleaves && gb_lp_encode(NULL, v) == old_e);
}

void gb_list_seg_insert_at(gb_list_seg *s, size_t idx, gb_slice v)
{
    s->ver++;
    if (idx == 0) {
        gb_list_seg_push(s, GB_LIST_HEAD, v);
        return;
    }
    if (idx == s->len) {
        gb_list_seg_push(s, GB_LIST_TAIL, v);
        return;
    }
    size_t j;
    uint32_t r;
    uint32_t at = seek(s, idx, &j, &r);
    leaf_put(s, j, r, at, 0, v);
    settle_touched(s, j, false);
}

/* ---- walks ---- */

size_t gb_list_seg_visit(gb_list_seg *s, size_t first, size_t last, bool rev,
                         gb_list_visit_fn visit, void *ctx)
{
    char buf[GB_LP_INT_BUF];
    size_t done = 0;
    uint32_t r;
    size_t j;
    if (!rev) {
        uint32_t off = seek(s, first, &j, &r);
        leaf *lf = leaf_view(s, j);
        for (size_t i = first; i <= last; i++) {
            if (off == lf->tail) {
                lf = leaf_view(s, ++j);
                off = lf->head;
            }
            done++;
            if (!visit(ctx, i, gb_lp_get_slice(lf->data + off, buf)))
                break;
            off += step_fwd(lf->data + off);
        }
    } else {
        uint32_t off = seek(s, last, &j, &r);
        leaf *lf = leaf_view(s, j);
        off += step_fwd(lf->data + off);
        for (size_t i = last + 1; i-- > first;) {
            if (off == lf->head) {
                lf = leaf_view(s, --j);
                off = lf->tail;
            }
            off -= step_back(lf->data + off);
            done++;
            if (!visit(ctx, i, gb_lp_get_slice(lf->data + off, buf)))
                break;
        }
    }
    return done;
}

/* ---- LREM ---- */

/* Merges leaf j + 1 into leaf j when both fit in one leaf. */
static bool try_merge(gb_list_seg *s, size_t j)
{
    if (j + 1 >= s->nleaves)
        return false;
    leaf *a = lf_at(s, j), *b = lf_at(s, j + 1);
    if (gb_list_limit_exceeded(&s->lim, LP_OVERHEAD + used(a) + used(b), a->count + b->count))
        return false;
    a = leaf_plain(s, j);
    b = leaf_plain(s, j + 1);
    uint32_t gpos;
    a = leaf_open(s, a, a->tail, used(b), BIAS_BACK, &gpos);
    memcpy(a->data + gpos, b->data + b->head, used(b));
    a->count += b->count;
    sl(s, j)->lf = a;
    gb_free(b);
    slots_remove(s, j + 1);
    return true;
}

static bool leaf_has(const leaf *lf, const gb_lp_key *key)
{
    for (uint32_t off = lf->head; off < lf->tail; off += step_fwd(lf->data + off))
        if (gb_lp_key_eq(lf->data + off, key))
            return true;
    return false;
}

size_t gb_list_seg_remove(gb_list_seg *s, gb_slice v, long long count)
{
    s->ver++;
    gb_lp_key key;
    gb_lp_key_init(&key, v);
    size_t limit = count == 0 ? SIZE_MAX : (count < 0 ? (size_t)0 - (size_t)count : (size_t)count); /* no signed negation: count may be LLONG_MIN */
    size_t removed = 0;
    bool fwd = count >= 0;
    size_t scanned = 0;
    for (size_t step = 0; step < s->nleaves && removed < limit; step++, scanned++) {
        size_t j = fwd ? step : s->nleaves - 1 - step;
        if (is_z(lf_at(s, j)) && !leaf_has(leaf_view(s, j), &key))
            continue; /* nothing to remove: the compressed block stays */
        leaf *lf = leaf_plain(s, j);
        unsigned char *d = lf->data;
        uint32_t gone = 0, gone_bytes = 0;
        /* filter in place: keep entries slide over removed ones */
        if (fwd) {
            uint32_t w = lf->head;
            for (uint32_t rd = lf->head; rd < lf->tail;) {
                uint32_t e = (uint32_t)gb_lp_entry_bytes(d + rd);
                if (removed < limit && gb_lp_key_eq(d + rd, &key)) {
                    removed++;
                    gone++;
                    gone_bytes += e;
                } else {
                    if (w != rd)
                        memmove(d + w, d + rd, e);
                    w += e;
                }
                rd += e;
            }
            lf->tail = w;
        } else {
            uint32_t w = lf->tail;
            for (uint32_t rd = lf->tail; rd > lf->head;) {
                uint32_t e = (uint32_t)gb_lp_prev_entry_bytes(d + rd);
                rd -= e;
                if (removed < limit && gb_lp_key_eq(d + rd, &key)) {
                    removed++;
                    gone++;
                    gone_bytes += e;
                } else {
                    w -= e;
                    if (w != rd)
                        memmove(d + w, d + rd, e);
                }
            }
            lf->head = w;
        }
        lf->count -= gone;
        s->len -= gone;
        s->bytes -= gone_bytes;
        if (gone && lf->count)
            sl(s, j)->lf = leaf_maybe_shrink(lf);
    }
    if (removed == 0)
        return 0;
    /* Only the first (fwd) or last `scanned` leaves changed. Drop the empty
     * ones, merge small neighbours (reaching one leaf into the untouched
     * side) and renumber from the untouched side, so the cost follows the
     * scanned part, not the list. */
    size_t keep = s->nleaves - scanned;
    if (fwd) {
        for (size_t j = 0; j < s->nleaves - keep;) {
            leaf *lf = lf_at(s, j);
            if (lf->count == 0) {
                leaf_free(s, lf);
                slots_remove(s, j);
                continue;
            }
            bool crosses = j + 1 == s->nleaves - keep;
            if (j + 1 < s->nleaves && try_merge(s, j)) {
                if (crosses) {
                    keep--; /* the untouched neighbour joined leaf j */
                    break;
                }
                continue;
            }
            j++;
        }
        if (keep > 0 && keep < s->nleaves) {
            for (size_t j = s->nleaves - keep; j-- > 0;)
                sl(s, j)->start = sl(s, j + 1)->start - lf_at(s, j)->count;
        } else {
            starts_recompute(s);
        }
        settle_range(s, 0, (long long)s->nleaves - (long long)keep);
    } else {
        for (size_t j = keep > 0 ? keep - 1 : 0; j < s->nleaves;) {
            leaf *lf = lf_at(s, j);
            if (lf->count == 0) {
                leaf_free(s, lf);
                slots_remove(s, j);
                continue;
            }
            if (try_merge(s, j))
                continue;
            j++;
        }
        if (keep > 0) {
            for (size_t j = keep; j < s->nleaves; j++)
                sl(s, j)->start = sl(s, j - 1)->start + lf_at(s, j - 1)->count;
        } else {
            starts_recompute(s);
        }
        settle_range(s, (long long)keep - 1, (long long)s->nleaves - 1);
    }
    if (s->nleaves == 0)
        s->first = s->slot_cap / 2;
    settle(s);
    return removed;
}

/* ---- rotation ---- */

void gb_list_seg_rotate(gb_list_seg *s, gb_list_end from)
{
    s->ver++;
    if (s->len < 2)
        return;
    gb_list_end to = from == GB_LIST_HEAD ? GB_LIST_TAIL : GB_LIST_HEAD;
    size_t js = from == GB_LIST_HEAD ? 0 : s->nleaves - 1;
    leaf *src = lf_at(s, js);
    uint32_t off = from == GB_LIST_HEAD
                       ? src->head
                       : src->tail - (uint32_t)gb_lp_prev_entry_bytes(src->data + src->tail);
    size_t e = gb_lp_entry_bytes(src->data + off);
    unsigned char tmp[256];
    unsigned char *copy = NULL;
    if (s->nleaves == 1) {
        /* one leaf: the entry changes ends inside the block, through its
         * free space when there is some, else through a copy */
        if (from == GB_LIST_TAIL && src->head >= e) {
            memcpy(src->data + src->head - e, src->data + off, e);
            src->head -= (uint32_t)e;
            src->tail -= (uint32_t)e;
            sl(s, 0)->start--;
            return;
        }
        if (from == GB_LIST_HEAD && src->cap - src->tail >= e) {
            memcpy(src->data + src->tail, src->data + off, e);
            src->tail += (uint32_t)e;
            src->head += (uint32_t)e;
            sl(s, 0)->start++;
            return;
        }
    }
    if (s->nleaves == 1 || !leaf_accepts(s, lf_at(s, to == GB_LIST_HEAD ? 0 : s->nleaves - 1), e)) {
        /* the destination may be a new leaf or this very block: copy out */
        copy = e <= sizeof tmp ? tmp : gb_malloc(e);
        memcpy(copy, src->data + off, e);
        gb_list_seg_pop(s, from, 1, NULL, NULL);
        memcpy(reserve_end(s, to, e), copy, e);
        if (copy != tmp)
            gb_free(copy);
        settle(s);
        return;
    }
    /* different leaves: straight copy into the destination, then drop */
    unsigned char *dst = reserve_end(s, to, e);
    src = lf_at(s, from == GB_LIST_HEAD ? 0 : s->nleaves - 1);
    memcpy(dst, src->data + off, e);
    gb_list_seg_pop(s, from, 1, NULL, NULL);
}

/* ---- self-check ---- */

/* The entries of a plain leaf (or an inflated copy) walk to its count. */
static bool verify_entries(const leaf *lf, size_t j)
{
    uint32_t off = lf->head, n = 0;
    while (off < lf->tail) {
        size_t e = gb_lp_entry_bytes(lf->data + off);
        GB_LIST_CHECK(e > 1 || lf->data[off] < 0x80, "leaf %zu bad entry", j);
        GB_LIST_CHECK(off + e <= lf->tail, "leaf %zu entry past tail", j);
        GB_LIST_CHECK(gb_lp_prev_entry_bytes(lf->data + off + e) == e,
                      "leaf %zu back-length mismatch", j);
        off += (uint32_t)e;
        n++;
    }
    GB_LIST_CHECK(n == lf->count, "leaf %zu count %u, walked %u", j, lf->count, n);
    return true;
}

/* A compressed leaf inflates to valid entries; the cache, when it holds
 * this leaf, holds exactly them. */
static bool verify_compressed(const gb_list_seg *s, const leaf *z, size_t j)
{
    GB_LIST_CHECK(z->head == 0 && z->tail >= MIN_COMPRESS_BYTES, "leaf %zu compressed bounds", j);
    GB_LIST_CHECK(sizeof(leaf) + ZLEN_BYTES + zlen(z) <= gb_mem_usable((void *)z) &&
                      zlen(z) + MIN_COMPRESS_IMPROVE < z->tail,
                  "leaf %zu compressed length %u of %u", j, zlen(z), z->tail);
    leaf *plain = leaf_inflate(z, NULL);
    bool ok = verify_entries(plain, j);
    int k = cache_slot(s, z);
    if (ok && k >= 0) {
        const leaf *c = s->zcache[k];
        ok = c->tail == plain->tail && c->count == plain->count && c->head == 0 &&
             memcmp(c->data, plain->data, plain->tail) == 0;
        if (!ok)
            fprintf(stderr, "list verify: leaf %zu cached copy differs\n", j);
    }
    gb_free(plain);
    return ok;
}

/* Exactly the interior leaves are compressed: an interior leaf is plain
 * only when Redis's rules refuse to compress it. */
static bool verify_zone(const gb_list_seg *s, const leaf *lf, size_t j)
{
    if (!interior(s, j)) {
        GB_LIST_CHECK(!is_z(lf), "leaf %zu of %zu compressed within depth %u of an end", j,
                      s->nleaves, s->depth);
        return true;
    }
    if (is_z(lf))
        return true;
    leaf *z = leaf_deflate(NULL, lf);
    gb_free(z);
    GB_LIST_CHECK(z == NULL, "interior leaf %zu of %zu (depth %u) left plain", j, s->nleaves,
                  s->depth);
    return true;
}

bool gb_list_seg_verify(const gb_list_seg *s)
{
    GB_LIST_CHECK(s->first + s->nleaves <= s->slot_cap, "slot range past the index");
    size_t len = 0, bytes = 0;
    unsigned cache_found = 0;
    GB_LIST_CHECK(s->zsrc[0] == NULL || s->zsrc[0] != s->zsrc[1], "one leaf cached twice");
    for (size_t j = 0; j < s->nleaves; j++) {
        const leaf *lf = lf_at(s, j);
        GB_LIST_CHECK(lf->count > 0, "leaf %zu is empty", j);
        if (!verify_zone(s, lf, j))
            return false;
        if (is_z(lf)) {
            if (!verify_compressed(s, lf, j))
                return false;
            cache_found += cache_slot(s, lf) >= 0;
        } else {
            GB_LIST_CHECK(lf->head <= lf->tail && lf->tail <= lf->cap, "leaf %zu bounds", j);
            GB_LIST_CHECK(sizeof(leaf) + lf->cap <= gb_mem_usable((void *)lf),
                          "leaf %zu cap past its block", j);
            if (!verify_entries(lf, j))
                return false;
        }
        GB_LIST_CHECK(lf->count == 1 ||
                          !gb_list_limit_exceeded(&s->lim, LP_OVERHEAD + used(lf), lf->count),
                      "leaf %zu over the limit (%u entries, %u bytes)", j, lf->count, used(lf));
        if (j > 0)
            GB_LIST_CHECK(sl(s, j)->start == sl(s, j - 1)->start + lf_at(s, j - 1)->count,
                          "leaf %zu start inconsistent", j);
        len += lf->count;
        bytes += used(lf);
    }
    GB_LIST_CHECK(cache_found == (unsigned)(s->zsrc[0] != NULL) + (unsigned)(s->zsrc[1] != NULL),
                  "the read cache holds a leaf the list no longer has");
    GB_LIST_CHECK(len == s->len, "len %zu, leaves hold %zu", s->len, len);
    GB_LIST_CHECK(bytes == s->bytes, "bytes %zu, leaves hold %zu", s->bytes, bytes);
    return true;
}
