/*
 * Population count of a byte range by the widest counting instruction the
 * CPU running the process has, chosen once at run time: a portable build
 * (GOBLIN_TUNE=portable, the baseline ISA) still counts with POPCNT or
 * AVX-512 VPOPCNTDQ where the CPU and the OS support them.
 *
 *   x86-64 - AVX-512 VPOPCNTDQ (64 bytes a step), else POPCNT (8 bytes a
 *            step), else the portable count; the compiler's CPU check
 *            (__builtin_cpu_supports) includes the OS's XCR0 state, so an
 *            OS that does not save ZMM registers never gets the AVX-512
 *            kernel.
 *   other  - the portable count, 8 bytes a step, which the compiler turns
 *            into the architecture's instruction where the build's ISA has
 *            one (arm64: CNT).
 *
 * Same on every OS: the choice depends on the architecture alone.
 */
#ifndef GB_PLATFORM_POPCOUNT_H
#define GB_PLATFORM_POPCOUNT_H

#include <stddef.h>
#include <stdint.h>

/* The number of bits set in the n bytes at p (any alignment). */
uint64_t gb_popcount_bytes(const void *p, size_t n);

/* The kernel gb_popcount_bytes uses on this CPU: "avx512-vpopcntdq",
 * "popcnt" or "portable" (for tests and benchmarks). */
const char *gb_popcount_kernel(void);

/* One kernel by its name ("avx512-vpopcntdq", "popcnt", "portable"), or
 * NULL when this build or this CPU lacks it: the tests check each kernel
 * the machine can run, not only the chosen one. */
typedef uint64_t gb_popcount_fn(const void *p, size_t n);
gb_popcount_fn *gb_popcount_kernel_named(const char *name);

/* The portable kernel, whatever the CPU. */
uint64_t gb_popcount_bytes_portable(const void *p, size_t n);

#endif
