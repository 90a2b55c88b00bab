/*
 * Users from files: the config file's `user` lines (and --user flags) at
 * start-up, and the aclfile (at start-up, ACL LOAD, ACL SAVE), with Redis
 * 7.0's formats and error texts.
 *
 * `user` lines are split like Redis's config lines (quotes allowed); an
 * aclfile line is split on single spaces, as Redis does, so what ACL SAVE
 * writes reads back exactly. Either way every line is checked before
 * anything changes, and the errors name the file and line.
 */
#ifndef GB_ENGINE_ACL_FILE_H
#define GB_ENGINE_ACL_FILE_H

#include "engine/base/strbuf.h"
#include "engine/core/request/client.h"

struct gb_engine;

/* The `user` lines of the configuration, then the aclfile (not both, as
 * in Redis). Returns 0, or a negative GB_E* code with err saying which
 * line and rule failed (the server does not start). */
int gb_acl_load_at_startup(struct gb_engine *eng, char *err, size_t errlen);

/* ACL LOAD: reads the aclfile and, when every line is valid, replaces the
 * users with it (gb_acl_replace_users; current is the client asking).
 * Returns NULL, or the errors found (gb_malloc'd, Redis's text: every bad
 * line, then "WARNING: ACL errors detected, no change to the previously
 * active ACL rules was performed"), nothing changed. */
char *gb_acl_file_load(struct gb_engine *eng, gb_client *current);

/* Every user as ACL LIST shows it, one "user ..." line each (ACL SAVE's
 * file, CONFIG REWRITE's user lines). */
void gb_acl_users_text(const struct gb_engine *eng, gb_strbuf *text);

/* ACL SAVE: writes every user as ACL LIST shows it to a temporary file
 * beside the aclfile, syncs it and renames it over. Returns 0, or a
 * negative GB_E* code with the reason logged. */
int gb_acl_file_save(struct gb_engine *eng);

#endif
