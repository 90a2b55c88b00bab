/*
 * GB_EXPORT marks the client library's public API. libgoblin-client is built
 * with hidden visibility (-fvisibility=hidden), so a function it exports is
 * one declared with GB_EXPORT in these headers and nothing else: its internal
 * helpers and the platform layer it links stay private to the library
 * (test/transport/check_client_exports.py holds it to that).
 */
#ifndef GOBLIN_EXPORT_H
#define GOBLIN_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define GB_EXPORT __attribute__((visibility("default")))
#else
#define GB_EXPORT
#endif

#endif
