# User-visible build options. Each one is documented in docs/building.md.
option(GOBLIN_BUILD_TESTS "Build the CMocka unit tests and register integration tests" ON)
option(GOBLIN_WERROR "Treat warnings as errors (on in CI)" OFF)
set(GOBLIN_SANITIZE "" CACHE STRING
    "Sanitizers to build with: empty, or a comma list such as address,undefined")
set(GOBLIN_TUNE "portable" CACHE STRING
    "CPU tuning: portable (baseline ISA), native (-march=native), or an explicit -march/-mcpu value")
option(GOBLIN_FUZZ "Build the libFuzzer harnesses of test/fuzz (clang only; implies ASan+UBSan; see docs/fuzzing.md)" OFF)
