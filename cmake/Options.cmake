# User-visible build options. Each one is documented in docs/building.md.
option(GOBLIN_BUILD_TESTS "Build the CMocka unit tests and register integration tests" ON)
option(GOBLIN_WERROR "Treat warnings as errors (on in CI)" OFF)
set(GOBLIN_SANITIZE "" CACHE STRING
    "Sanitizers to build with: empty, or a comma list such as address,undefined")
set(GOBLIN_TUNE "portable" CACHE STRING
    "CPU tuning: portable (baseline ISA), native (-march=native), or an explicit -march/-mcpu value")
option(GOBLIN_FUZZ "Build the libFuzzer harnesses of test/fuzz (clang only; implies ASan+UBSan; see docs/fuzzing.md)" OFF)
# The process's allocator (docs/allocator.md): jemalloc, as Redis ships,
# except where a sanitizer's runtime must own malloc (GOBLIN_SANITIZE,
# GOBLIN_FUZZ), which get the C library's.
if(GOBLIN_SANITIZE OR GOBLIN_FUZZ)
  set(_gb_default_allocator libc)
else()
  set(_gb_default_allocator jemalloc)
endif()
set(GOBLIN_ALLOCATOR "${_gb_default_allocator}" CACHE STRING "Allocator: jemalloc (default) or libc (default under sanitizers)")
set_property(CACHE GOBLIN_ALLOCATOR PROPERTY STRINGS jemalloc libc)
if(NOT GOBLIN_ALLOCATOR MATCHES "^(jemalloc|libc)$")
  message(FATAL_ERROR "GOBLIN_ALLOCATOR must be jemalloc or libc, not '${GOBLIN_ALLOCATOR}'")
endif()
if(GOBLIN_ALLOCATOR STREQUAL "jemalloc" AND (GOBLIN_SANITIZE OR GOBLIN_FUZZ))
  message(FATAL_ERROR "GOBLIN_ALLOCATOR=jemalloc cannot be combined with sanitizers: their runtime replaces malloc")
endif()
