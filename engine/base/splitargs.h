/*
 * Splitting a line into words the way Redis's sdssplitargs does: words
 * separated by blanks, "double quotes" with C escapes (\n \r \t \b \a \xHH,
 * \<any> for the character itself), 'single quotes' where only \' is an
 * escape, and a closing quote that must end the word. Redis reads `user`
 * lines of its config file and the inside of an ACL selector "( ... )" with
 * it, so Goblin Core must split them identically for the same rules to mean
 * the same thing.
 *
 * The line is read like a C string: a NUL byte ends it (as in Redis).
 */
#ifndef GB_ENGINE_SPLITARGS_H
#define GB_ENGINE_SPLITARGS_H

#include "engine/base/common.h"

/* Splits line[0..len) into *words (one gb_malloc'd block holding the
 * slices and their bytes: its size is bounded by the line's). Returns the
 * number of words (0 for a blank line), or -1 on an unterminated quote or a
 * closing quote followed by something other than a blank; *words is then
 * NULL. Free with gb_split_args_free. */
int gb_split_args(const char *line, size_t len, gb_slice **words);
void gb_split_args_free(gb_slice *words);

#endif
