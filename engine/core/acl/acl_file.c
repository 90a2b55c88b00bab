#define _POSIX_C_SOURCE 200809L
#include "engine/core/acl/acl_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "engine/base/mem.h"
#include "engine/base/splitargs.h"
#include "engine/base/strbuf.h"
#include "engine/core/acl/acl.h"
#include "engine/core/engine.h"
#include "platform/clock.h"
#include "platform/file.h"

/* ---- the aclfile ------------------------------------------------------------------ */

/* The whole file, NUL-terminated (a line may be of any length); NULL with
 * errno set when it cannot be read. */
static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    gb_strbuf b = {0};
    char chunk[16384];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        gb_strbuf_add(&b, chunk, n);
    int failed = ferror(f);
    fclose(f);
    if (failed) {
        gb_strbuf_free(&b);
        errno = EIO;
        return NULL;
    }
    if (!b.p)
        gb_strbuf_add(&b, "", 0);
    *len = b.len;
    return b.p;
}

static bool is_trimmed(char c, const char *set) { return c && strchr(set, c); }

static gb_slice trim(gb_slice s, const char *set)
{
    while (s.len && is_trimmed(s.ptr[0], set)) {
        s.ptr++;
        s.len--;
    }
    while (s.len && is_trimmed(s.ptr[s.len - 1], set))
        s.len--;
    return s;
}

/* Splits on every single space, as Redis's sdssplitlen does: two spaces
 * make an empty word between them. *words is one gb_malloc'd block. */
static int split_spaces(gb_slice line, gb_slice **words)
{
    size_t n = 1;
    for (size_t i = 0; i < line.len; i++)
        n += line.ptr[i] == ' ';
    gb_slice *w = gb_malloc(n * sizeof *w);
    size_t k = 0, start = 0;
    for (size_t i = 0; i <= line.len; i++)
        if (i == line.len || line.ptr[i] == ' ') {
            w[k++] = gb_slice_make(line.ptr + start, i - start);
            start = i + 1;
        }
    *words = w;
    return (int)k;
}

/* The users of an aclfile being read: names unique (checked through the
 * name list's index, so a long file stays linear). */
typedef struct user_set {
    gb_acl_user **users;
    size_t n, cap;
    gb_acl_list names;
} user_set;

static void set_free(user_set *set)
{
    for (size_t i = 0; i < set->n; i++)
        gb_acl_user_free(set->users[i]);
    gb_free(set->users);
    gb_acl_list_free(&set->names);
}

/* One line of the aclfile (Redis's ACLLoadFromFile, line by line); its
 * errors are appended to errors. */
static void load_line(gb_engine *eng, user_set *set, gb_slice line, int linenum, gb_strbuf *errors)
{
    const char *file = eng->cfg.aclfile;
    gb_acl_env env = gb_acl_env_of(eng);
    gb_slice *argv;
    int argc = split_spaces(line, &argv);
    if (argc < 2 || !gb_slice_eq(argv[0], gb_slice_cstr("user"))) {
        gb_strbuf_printf(errors, "%s:%d should start with user keyword followed by the username. ", file, linenum);
        goto out;
    }
    if (gb_acl_has_spaces(argv[1])) {
        /* Redis's text, opening quote included. */
        gb_strbuf_printf(errors, "'%s:%d: username '%.*s' contains invalid characters. ", file, linenum,
                         (int)argv[1].len, argv[1].ptr);
        goto out;
    }
    bool added;
    gb_acl_list_add(&set->names, argv[1], 0, &added);
    if (!added) {
        gb_strbuf_printf(errors, "WARNING: Duplicate user '%.*s' found on line %d. ", (int)argv[1].len, argv[1].ptr,
                         linenum);
        goto out;
    }
    gb_acl_user *u = gb_acl_user_new(&env, argv[1]);
    if (set->n == set->cap) {
        set->cap = set->cap ? set->cap * 2 : 16;
        set->users = gb_realloc(set->users, set->cap * sizeof *set->users);
    }
    set->users[set->n++] = u;
    gb_slice *rules;
    int bad;
    int n = gb_acl_merge_selector_args(argv + 2, argc - 2, &rules, &bad);
    if (n < 0) {
        gb_strbuf_printf(errors, "%s:%d: Unmatched parenthesis in selector definition.", file, linenum);
        goto out;
    }
    /* Redis 7.0.3+'s texts: an unknown command or category is named, each
     * time; of the other errors only a line's first is told, since it may
     * be what made the rest fail. */
    bool told_other = false;
    for (int j = 0; j < n; j++) {
        gb_slice rule = trim(rules[j], "\t\r\n");
        enum gb_acl_rule_error e = gb_acl_user_apply(u, &env, rule);
        if (e == GB_ACL_RULE_UNKNOWN) {
            gb_strbuf_printf(errors, "%s:%d: Error in applying operation '%.*s': %s. ", file, linenum,
                             (int)rule.len, rule.ptr, gb_acl_rule_error_text(e));
        } else if (e && !told_other) {
            gb_strbuf_printf(errors, "%s:%d: %s. ", file, linenum, gb_acl_rule_error_text(e));
            told_other = true;
        }
    }
    gb_acl_user_refresh(u, env.cmds);
    gb_free(rules);
out:
    gb_free(argv);
}

/* Reads the aclfile into *set; returns the errors (NULL when none). */
static char *parse_file(gb_engine *eng, user_set *set)
{
    gb_acl_list_init(&set->names, false);
    size_t len = 0;
    char *text = read_file(eng->cfg.aclfile, &len);
    gb_strbuf errors = {0};
    if (!text) {
        gb_strbuf_printf(&errors, "Error loading ACLs, opening file '%s': %s", eng->cfg.aclfile, strerror(errno));
        return errors.p;
    }
    int linenum = 0;
    for (size_t start = 0; start <= len;) {
        const char *nl = memchr(text + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - text) : len;
        linenum++;
        gb_slice line = trim(gb_slice_make(text + start, end - start), " \t\r\n");
        if (line.len)
            load_line(eng, set, line, linenum, &errors);
        start = end + 1;
    }
    gb_free(text);
    if (!errors.len)
        return NULL;
    gb_strbuf_adds(&errors, "WARNING: ACL errors detected, no change to the previously active ACL rules was performed");
    return errors.p;
}

char *gb_acl_file_load(gb_engine *eng, gb_client *current)
{
    user_set set = {0};
    char *errors = parse_file(eng, &set);
    if (errors) {
        set_free(&set);
        return errors;
    }
    gb_acl_replace_users(eng, set.users, set.n, current);
    set.users = NULL;
    set.n = 0;
    set_free(&set);
    return NULL;
}

void gb_acl_users_text(const gb_engine *eng, gb_strbuf *text)
{
    const gb_acl *acl = eng->acl;
    for (size_t i = 0; i < acl->nusers; i++) {
        gb_strbuf_adds(text, "user ");
        gb_strbuf_add(text, acl->users[i]->name, acl->users[i]->namelen);
        gb_strbuf_addc(text, ' ');
        gb_acl_describe_user(acl->users[i], &acl->cmds, text);
        gb_strbuf_addc(text, '\n');
    }
}

int gb_acl_file_save(gb_engine *eng)
{
    const char *path = eng->cfg.aclfile;
    gb_strbuf text = {0};
    gb_acl_users_text(eng, &text);
    gb_strbuf tmp = {0};
    gb_strbuf_printf(&tmp, "%s.tmp-%d-%lld", path, (int)getpid(), (long long)gb_clock_real_ms());
    int rc = GB_EIO;
    int fd = open(gb_strbuf_cstr(&tmp), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        gb_log(GB_LOG_WARNING, "Opening temp ACL file for ACL SAVE: %s", strerror(errno));
        goto out;
    }
    size_t done = 0;
    while (done < text.len) {
        ssize_t w = write(fd, text.p + done, text.len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            gb_log(GB_LOG_WARNING, "Writing ACL file for ACL SAVE: %s", strerror(errno));
            goto out;
        }
        done += (size_t)w;
    }
    if (gb_plat_file_sync(fd) != 0) {
        gb_log(GB_LOG_WARNING, "Syncing ACL file for ACL SAVE: %s", strerror(errno));
        goto out;
    }
    close(fd);
    fd = -1;
    if (rename(gb_strbuf_cstr(&tmp), path) != 0) {
        gb_log(GB_LOG_WARNING, "Renaming ACL file for ACL SAVE: %s", strerror(errno));
        goto out;
    }
    /* The rename itself must survive a crash: sync the directory. */
    const char *slash = strrchr(path, '/');
    gb_strbuf dir = {0};
    if (slash)
        gb_strbuf_add(&dir, path, slash == path ? 1 : (size_t)(slash - path));
    else
        gb_strbuf_adds(&dir, ".");
    (void)gb_plat_dir_sync(gb_strbuf_cstr(&dir));
    gb_strbuf_free(&dir);
    rc = 0;
out:
    if (fd >= 0) {
        close(fd);
        unlink(gb_strbuf_cstr(&tmp));
    } else if (rc != 0) {
        unlink(gb_strbuf_cstr(&tmp));
    }
    gb_strbuf_free(&tmp);
    gb_strbuf_free(&text);
    return rc;
}

/* ---- start-up -------------------------------------------------------------------------- */

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return GB_EINVAL;
}

/* One `user` line of the configuration, applied to the live users (a
 * failure stops the server from starting, so there is nothing to undo).
 * Redis's ACLLoadConfiguredUsers: "default" is reset first. */
static int load_config_user(gb_engine *eng, const gb_config_user *line, gb_acl_list *seen, char *err, size_t errlen)
{
    gb_slice *words;
    int n = gb_split_args(line->line, strlen(line->line), &words);
    if (n < 0)
        return fail(err, errlen, "%s: unbalanced quotes in the user line", line->origin);
    int rc = 0;
    gb_slice *rules = NULL;
    if (n == 0) {
        rc = fail(err, errlen, "%s: a user line needs a user name: user <name> [rules ...]", line->origin);
        goto out;
    }
    gb_slice name = words[0];
    if (gb_acl_has_spaces(name)) {
        rc = fail(err, errlen, "%s: Spaces not allowed in ACL usernames", line->origin);
        goto out;
    }
    bool added;
    gb_acl_list_add(seen, name, 0, &added);
    if (!added) {
        rc = fail(err, errlen, "%s: user '%.*s': %s", line->origin, (int)name.len, name.ptr,
                  gb_acl_rule_error_text(GB_ACL_RULE_DUPLICATE_USER));
        goto out;
    }
    int bad;
    int m = gb_acl_merge_selector_args(words + 1, n - 1, &rules, &bad);
    if (m < 0) {
        rc = fail(err, errlen, "%s: user '%.*s': Unmatched parenthesis in acl selector starting at '%.*s'.",
                  line->origin, (int)name.len, name.ptr, (int)words[1 + bad].len, words[1 + bad].ptr);
        goto out;
    }
    gb_slice reset = gb_slice_cstr("reset");
    bool exists = gb_acl_find_user(eng, name) != NULL;
    enum gb_acl_rule_error e = exists ? gb_acl_set_user(eng, name, &reset, 1, &bad) : GB_ACL_RULE_OK;
    if (!e)
        e = gb_acl_set_user(eng, name, rules, m, &bad);
    if (e) {
        rc = fail(err, errlen, "%s: Error loading ACL rule '%.*s' for the user named '%.*s': %s", line->origin,
                  (int)rules[bad].len, rules[bad].ptr, (int)name.len, name.ptr, gb_acl_rule_error_text(e));
        goto out;
    }
    if (gb_acl_find_user(eng, name)->flags & GB_ACL_USER_OFF)
        gb_log(GB_LOG_NOTICE,
               "The user '%.*s' is disabled (there is no 'on' modifier in the user description). Make sure this is "
               "not a configuration error.",
               (int)name.len, name.ptr);
out:
    gb_free(rules);
    gb_split_args_free(words);
    return rc;
}

int gb_acl_load_at_startup(gb_engine *eng, char *err, size_t errlen)
{
    const gb_settings *cfg = &eng->cfg;
    bool have_file = cfg->aclfile && cfg->aclfile[0];
    if (have_file && cfg->nusers)
        return fail(err, errlen,
                    "users are defined both by `user` lines (%s) and by aclfile '%s': define them in one place "
                    "only, the aclfile or the configuration",
                    cfg->users[0].origin, cfg->aclfile);
    gb_acl_list seen;
    gb_acl_list_init(&seen, false);
    int rc = 0;
    for (int i = 0; i < cfg->nusers && rc == 0; i++)
        rc = load_config_user(eng, &cfg->users[i], &seen, err, errlen);
    gb_acl_list_free(&seen);
    if (rc || !have_file)
        return rc;
    char *errors = gb_acl_file_load(eng, NULL);
    if (errors) {
        rc = fail(err, errlen, "ACL errors in aclfile: %s", errors);
        gb_free(errors);
    }
    return rc;
}
