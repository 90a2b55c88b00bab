/*
 * Redis's CRC-64 (crc64.c there): the Jones polynomial 0xad93d23594c935a9,
 * reflected input and output, initial value 0, no final xor. Redis puts it
 * at the end of every DUMP / FUNCTION DUMP payload, so Goblin Core must
 * compute the very same value to exchange payloads with it. Check value:
 * gb_crc64(0, "123456789", 9) == 0xe9c6d914c4b8d9ca.
 */
#ifndef GB_ENGINE_CRC64_H
#define GB_ENGINE_CRC64_H

#include <stddef.h>
#include <stdint.h>

/* Continues crc over n more bytes (start with 0). */
uint64_t gb_crc64(uint64_t crc, const void *data, size_t n);
/* The same by the tables alone, whatever the CPU (for tests and
 * benchmarks of the carry-less path). */
uint64_t gb_crc64_tables(uint64_t crc, const void *data, size_t n);

#endif
