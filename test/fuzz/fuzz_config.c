/*
 * Fuzz harness: settings from text (engine/core/config/config.h): the config file
 * parser (gb_config_load_file) and CONFIG SET's gb_config_set with any name
 * and value.
 *
 * Input: [mode u8] then
 *   mode bit 0 clear: the rest is a config file (written to a scratch file:
 *     the parser reads a path, as the server does);
 *   mode bit 0 set: "<name>\0<value>\0..." for gb_config_set, at run time
 *     (CONFIG SET's rules) when bit 1 is set.
 * Whatever is accepted must read back consistently: every option CONFIG GET
 * then answers is accepted again by gb_config_set on fresh settings and
 * reads back identically (what CONFIG GET shows, CONFIG SET and a config
 * file take back), and the settings survive a deep copy.
 */
#include "fuzz_util.h"

/* CONFIG GET * as "name\0value\0" pairs (a value may hold any byte but NUL). */
typedef struct dump {
    char *s;
    size_t len, cap;
    size_t pairs;
} dump;

static void dump_put(dump *d, const char *s)
{
    size_t n = strlen(s);
    if (d->len + n + 2 > d->cap) {
        size_t cap = d->cap ? d->cap : 4096;
        while (cap < d->len + n + 2)
            cap *= 2;
        d->s = realloc(d->s, cap);
        FUZZ_CHECK(d->s != NULL, "out of memory");
        d->cap = cap;
    }
    memcpy(d->s + d->len, s, n);
    d->len += n;
    d->s[d->len++] = '\0';
}

static void emit(void *ctx, const char *name, const char *value)
{
    dump *d = ctx;
    dump_put(d, name);
    dump_put(d, value);
    d->pairs++;
}

static dump get_all(const gb_settings *s)
{
    dump d = {0};
    gb_config_get(s, gb_slice_cstr("*"), emit, &d);
    FUZZ_CHECK(d.len > 0, "CONFIG GET * answered nothing");
    return d;
}

/* Checks that two dumps are the same, naming the first option that is not. */
static void check_same(const dump *a, const dump *b, const char *what)
{
    FUZZ_CHECK(a->pairs == b->pairs, "%s: %zu options, then %zu", what, a->pairs, b->pairs);
    const char *p = a->s, *q = b->s;
    for (size_t i = 0; i < a->pairs; i++) {
        const char *pv = p + strlen(p) + 1, *qv = q + strlen(q) + 1;
        FUZZ_CHECK(strcmp(p, q) == 0 && strcmp(pv, qv) == 0, "%s: %s '%s', then %s '%s'", what, p, pv, q, qv);
        p = pv + strlen(pv) + 1;
        q = qv + strlen(qv) + 1;
    }
}

/* Every value CONFIG GET shows is one CONFIG SET takes back unchanged. */
static void check_reads_back(const gb_settings *s)
{
    dump before = get_all(s);
    gb_settings again;
    gb_settings_defaults(&again);
    const char *p = before.s;
    for (size_t i = 0; i < before.pairs; i++) {
        const char *name = p, *value = p + strlen(p) + 1;
        p = value + strlen(value) + 1;
        char err[512];
        int rc = gb_config_set(&again, name, value, false, err, sizeof err);
        FUZZ_CHECK(rc == 0, "CONFIG GET shows %s '%s', which CONFIG SET refuses: %s", name, value, err);
    }
    dump after = get_all(&again);
    check_same(&before, &after, "CONFIG GET, CONFIG SET of each value, CONFIG GET");
    gb_settings copy;
    gb_settings_copy(&copy, s);
    dump copied = get_all(&copy);
    check_same(&before, &copied, "settings, then their copy");
    gb_settings_free(&copy);
    gb_settings_free(&again);
    free(before.s);
    free(after.s);
    free(copied.s);
}

static void emit_one(void *ctx, const char *name, const char *value)
{
    (void)name;
    char **shown = ctx;
    free(*shown);
    *shown = strdup(value);
}

/* CONFIG GET of an option just set shows all of its value: a long string
 * (a password, a path) is not cut short. Other options show a normal form
 * ("+5" as "5", "1kb" as "1024", "save" without extra blanks), always far
 * shorter than 1000 bytes; a string is shown as set. */
static void check_shows_whole(const gb_settings *s, const char *name, const char *value)
{
    char *shown = NULL;
    const char *canonical = gb_config_canonical(name);
    gb_config_get(s, gb_slice_cstr(canonical), emit_one, &shown);
    FUZZ_CHECK(shown != NULL, "CONFIG GET %s shows nothing", canonical);
    size_t n = strlen(shown);
    FUZZ_CHECK(!(n < strlen(value) && n >= 1000 && memcmp(shown, value, n) == 0),
               "CONFIG GET %s shows %zu of the %zu bytes set", canonical, n, strlen(value));
    free(shown);
}

/* The next NUL-terminated piece of the input (a copy; the last piece may
 * lack its NUL). */
static char *take_cstr(fuzz_in *in)
{
    const uint8_t *nul = memchr(in->p, 0, in->left);
    size_t n = nul ? (size_t)(nul - in->p) : in->left;
    char *s = malloc(n + 1);
    FUZZ_CHECK(s != NULL, "out of memory");
    memcpy(s, in->p, n);
    s[n] = '\0';
    in->p += n + (nul ? 1 : 0);
    in->left -= n + (nul ? 1 : 0);
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = {data, size};
    uint8_t mode = fuzz_u8(&in);
    gb_settings s;
    gb_settings_defaults(&s);
    char err[1024];
    int rc;
    if (mode & 1) {
        char *name = take_cstr(&in), *value = take_cstr(&in);
        rc = gb_config_set(&s, name, value, mode & 2, err, sizeof err);
        FUZZ_CHECK(rc == 0 || rc == GB_ENOENT || rc == GB_EPERM || rc == GB_EINVAL || rc == GB_ERANGE, "rc %d", rc);
        if (rc == GB_ENOENT)
            FUZZ_CHECK(gb_config_canonical(name) == NULL, "'%s' is an option, yet unknown", name);
        if (rc == 0)
            check_shows_whole(&s, name, value);
        free(name);
        free(value);
    } else {
        char path[600];
        fuzz_write_file("goblin.conf", in.p, in.left, path, sizeof path);
        rc = gb_config_load_file(&s, path, err, sizeof err);
        unlink(path);
        FUZZ_CHECK(rc == 0 || rc == GB_ENOENT || rc == GB_EPARSE || rc == GB_EINVAL, "rc %d", rc);
        /* A refusal names the file and the line. */
        if (rc != 0)
            FUZZ_CHECK(strncmp(err, path, strlen(path)) == 0, "error without the file: %s", err);
    }
    /* A refused CONFIG SET changed nothing; a refused file may have
     * applied the lines before the bad one. */
    if (rc == 0 || !(mode & 1))
        check_reads_back(&s);
    gb_settings_free(&s);
    return 0;
}
