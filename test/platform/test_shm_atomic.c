/* platform/shm_atomic.h: what each accessor returns and stores; the two
 * orderings the ring depends on, tried between two threads (message
 * passing through acquire/release, and the store-fence-load handshake of
 * parking, which x86 breaks without the full fence); and the rule that
 * makes the header worth having: outside platform/ and its tests, no
 * source file names a raw atomic operation (a scan of the tree). */
#include "tutil.h"

#include <pthread.h>

#include "clock.h"
#include "shm_atomic.h"

static void test_values(void **state)
{
    (void)state;
    uint64_t w = 0;
    gb_shm_store_release_u64(&w, UINT64_MAX);
    assert_true(gb_shm_load_acquire_u64(&w) == UINT64_MAX);
    gb_shm_store_relaxed_u64(&w, 5);
    assert_true(gb_shm_load_relaxed_u64(&w) == 5);
    assert_true(gb_shm_fetch_add_relaxed_u64(&w, 3) == 5);
    assert_true(w == 8);
    uint32_t h = UINT32_MAX;
    assert_true(gb_shm_fetch_add_release_u32(&h, 1) == UINT32_MAX); /* wraps, as a futex word may */
    assert_true(gb_shm_load_acquire_u32(&h) == 0);
    assert_true(gb_shm_fetch_add_relaxed_u32(&h, 7) == 0);
    gb_shm_store_release_u32(&h, 9);
    assert_true(gb_shm_load_relaxed_u32(&h) == 9);
    gb_shm_store_relaxed_u32(&h, 10);
    assert_true(gb_shm_load_acquire_u32(&h) == 10);
    gb_shm_fence_full();
}

/* ---- two threads ------------------------------------------------------- */

#define ROUND_NS (300u * 1000u * 1000u) /* each litmus test runs this long */

typedef struct {
    _Alignas(128) uint64_t payload[4];
    _Alignas(128) uint64_t seq; /* the publish word */
    _Alignas(128) uint64_t done;
    _Alignas(128) uint32_t flag[2];
    _Alignas(128) uint32_t seen[2];
    _Alignas(128) uint64_t round; /* Dekker: the round both threads play */
    _Alignas(128) uint64_t ack;   /* Dekker: rounds the second thread finished */
    uint64_t bad;
} shared_t;

/* Message passing: the payload stored before a release of seq is what an
 * acquire load of seq sees. */
static void *mp_reader(void *arg)
{
    shared_t *s = arg;
    uint64_t last = 0;
    while (!gb_shm_load_relaxed_u64(&s->done)) {
        uint64_t v = gb_shm_load_acquire_u64(&s->seq);
        if (v == last)
            continue;
        for (int i = 0; i < 4; i++)
            if (gb_shm_load_relaxed_u64(&s->payload[i]) < v) /* at least as new as the seq that published it */
                s->bad++;
        last = v;
    }
    return NULL;
}

static void test_message_passing(void **state)
{
    (void)state;
    shared_t *s = aligned_alloc(128, sizeof(shared_t));
    memset(s, 0, sizeof *s);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, mp_reader, s), 0);
    uint64_t end = gb_clock_mono_ns() + ROUND_NS;
    uint64_t v = 0;
    while (gb_clock_mono_ns() < end)
        for (int k = 0; k < 1000; k++) {
            v++;
            for (int i = 0; i < 4; i++)
                gb_shm_store_relaxed_u64(&s->payload[i], v);
            gb_shm_store_release_u64(&s->seq, v);
        }
    gb_shm_store_relaxed_u64(&s->done, 1);
    pthread_join(th, NULL);
    assert_int_equal(s->bad, 0);
    free(s);
}

/* Dekker (parking's handshake): each side stores its flag, fences, loads
 * the other's. With the full fence at least one sees the other; without it
 * x86's store buffer lets both read 0. */
static void dekker_side(shared_t *s, int me)
{
    gb_shm_store_relaxed_u32(&s->flag[me], 1);
    gb_shm_fence_full();
    s->seen[me] = gb_shm_load_relaxed_u32(&s->flag[1 - me]);
}

static void *dekker_peer(void *arg)
{
    shared_t *s = arg;
    uint64_t r = 0;
    for (;;) {
        uint64_t want = r + 1;
        while (gb_shm_load_acquire_u64(&s->round) < want)
            if (gb_shm_load_relaxed_u64(&s->done))
                return NULL;
        r = want;
        dekker_side(s, 1);
        gb_shm_store_release_u64(&s->ack, r); /* our seen[1] before the ack */
    }
}

static void test_dekker_fence(void **state)
{
    (void)state;
    shared_t *s = aligned_alloc(128, sizeof(shared_t));
    memset(s, 0, sizeof *s);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, dekker_peer, s), 0);
    uint64_t end = gb_clock_mono_ns() + ROUND_NS, rounds = 0;
    while (gb_clock_mono_ns() < end) {
        gb_shm_store_relaxed_u32(&s->flag[0], 0);
        gb_shm_store_relaxed_u32(&s->flag[1], 0);
        gb_shm_store_release_u64(&s->round, ++rounds); /* the cleared flags before the start */
        dekker_side(s, 0);
        while (gb_shm_load_acquire_u64(&s->ack) < rounds)
            ;
        if (s->seen[0] == 0 && s->seen[1] == 0)
            s->bad++;
    }
    gb_shm_store_relaxed_u64(&s->done, 1);
    pthread_join(th, NULL);
    print_message("dekker: %llu rounds\n", (unsigned long long)rounds);
    assert_true(rounds > 0);
    assert_int_equal(s->bad, 0);
    free(s);
}

/* ---- the tree: no raw atomics outside the accessor header ------------------ */

/* Blanks out comments and string and character literals (keeping line
 * breaks), so a pattern in prose or in an include path does not count. */
static void strip_comments_and_strings(char *t)
{
    enum { CODE, LINE, BLOCK, STR, CHR } st = CODE;
    for (char *p = t; *p; p++) {
        switch (st) {
        case CODE:
            if (p[0] == '/' && p[1] == '/')
                st = LINE, *p = ' ';
            else if (p[0] == '/' && p[1] == '*')
                st = BLOCK, *p = ' ', *++p = ' ';
            else if (*p == '"')
                st = STR;
            else if (*p == '\'')
                st = CHR;
            break;
        case LINE:
            if (*p == '\n')
                st = CODE;
            else
                *p = ' ';
            break;
        case BLOCK:
            if (p[0] == '*' && p[1] == '/')
                st = CODE, *p = ' ', *++p = ' ';
            else if (*p != '\n')
                *p = ' ';
            break;
        case STR:
        case CHR:
            if (*p == '\\' && p[1])
                *p = ' ', *++p = ' ';
            else if (*p == (st == STR ? '"' : '\''))
                st = CODE;
            else if (*p != '\n')
                *p = ' ';
            break;
        }
    }
}

static const char *const banned[] = {
    "__atomic_", "__sync_", "atomic_load", "atomic_store", "atomic_fetch_", "atomic_exchange",
    "atomic_compare_exchange", "atomic_thread_fence", "atomic_signal_fence", "atomic_flag_", "stdatomic.h",
};

static bool ident_char(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

/* The first banned name in (stripped) code, or NULL. A name counts only at
 * the start of an identifier (so my_atomic_load() is someone's function). */
static const char *find_banned(const char *code, int *line)
{
    for (size_t b = 0; b < sizeof banned / sizeof banned[0]; b++) {
        for (const char *p = code; (p = strstr(p, banned[b])); p++) {
            if (p > code && ident_char(p[-1]))
                continue;
            *line = 1;
            for (const char *q = code; q < p; q++)
                *line += *q == '\n';
            return banned[b];
        }
    }
    return NULL;
}

static void test_scanner_sees_what_it_must(void **state)
{
    (void)state;
    int line = 0;
    char code[] = "int a;\n/* __atomic_load_n in a comment */\nx = \"atomic_store\";\ny = __atomic_load_n(p, 2);\n";
    strip_comments_and_strings(code);
    assert_string_equal(find_banned(code, &line), "__atomic_");
    assert_int_equal(line, 4);
    char ok[] = "// atomic_thread_fence\nz = gb_shm_load_acquire_u64(p); my_atomic_load(q); '\"';\n#include \"x.h\"\n";
    strip_comments_and_strings(ok);
    assert_null(find_banned(ok, &line));
    char inc[] = "#include <stdatomic.h>\n";
    strip_comments_and_strings(inc);
    assert_string_equal(find_banned(inc, &line), "stdatomic.h");
}

static char offenders[8192];
static int files_scanned;
static const char *scan_root;

static int scan_one(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)ftw;
    const char *rel = path + strlen(scan_root) + 1;
    if (strncmp(rel, "test/platform/", 14) == 0) /* platform's own tests: exempt, like platform/ */
        return 0;
    size_t n = strlen(path);
    if (type != FTW_F || n < 2 || path[n - 2] != '.' || (path[n - 1] != 'c' && path[n - 1] != 'h'))
        return 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    char *text = malloc((size_t)sb->st_size + 1);
    size_t got = text ? fread(text, 1, (size_t)sb->st_size, f) : 0;
    fclose(f);
    if (!text)
        return 0;
    text[got] = '\0';
    strip_comments_and_strings(text);
    int line = 0;
    const char *hit = find_banned(text, &line);
    if (hit) {
        size_t used = strlen(offenders);
        snprintf(offenders + used, sizeof offenders - used, "  %s:%d: %s\n", rel, line, hit);
    }
    files_scanned++;
    free(text);
    return 0;
}

static void test_no_raw_atomics_in_tree(void **state)
{
    (void)state;
    const char *root = getenv("GOBLIN_SOURCE_DIR");
    if (!root || !*root)
        skip_because("GOBLIN_SOURCE_DIR is not set (ctest sets it): nothing to scan");
    scan_root = root;
    static const char *const dirs[] = {"apps", "bench", "engine", "include", "transport", "test"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", root, dirs[i]);
        struct stat st;
        if (stat(path, &st) == 0)
            assert_int_equal(nftw(path, scan_one, 16, FTW_PHYS), 0);
    }
    print_message("scanned %d files outside platform/\n", files_scanned);
    assert_true(files_scanned > 50); /* the tree was really there */
    if (offenders[0])
        fail_msg("raw atomic operations outside platform/shm_atomic.h (use its named accessors):\n%s", offenders);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_message_passing),
        cmocka_unit_test(test_dekker_fence),
        cmocka_unit_test(test_scanner_sees_what_it_must),
        cmocka_unit_test(test_no_raw_atomics_in_tree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
