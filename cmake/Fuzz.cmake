# GOBLIN_FUZZ=ON: the libFuzzer build (docs/fuzzing.md). Every library is
# compiled with coverage and comparison tracing for libFuzzer
# (-fsanitize=fuzzer-no-link) plus ASan and UBSan, so a memory error or
# undefined behaviour anywhere under a harness is a crash the fuzzer keeps;
# the harnesses themselves link libFuzzer's main (test/fuzz/CMakeLists.txt).
if(NOT GOBLIN_FUZZ)
  return()
endif()
if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "GOBLIN_FUZZ needs clang (libFuzzer is part of it), not ${CMAKE_C_COMPILER_ID}: "
                      "configure with -DCMAKE_C_COMPILER=clang (cmake/run-fuzzers.sh does)")
endif()
if(GOBLIN_SANITIZE)
  message(FATAL_ERROR "GOBLIN_FUZZ already builds with address,undefined: leave GOBLIN_SANITIZE empty")
endif()

# Fail here, with the package to install, rather than at the first link.
include(CheckCSourceCompiles)
set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer,address,undefined")
check_c_source_compiles(
  "#include <stddef.h>
   #include <stdint.h>
   int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);
   int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return d && n ? 0 : 0; }"
  GB_HAVE_LIBFUZZER)
unset(CMAKE_REQUIRED_FLAGS)
if(NOT GB_HAVE_LIBFUZZER)
  message(FATAL_ERROR "${CMAKE_C_COMPILER} cannot link -fsanitize=fuzzer: install clang's runtime "
                      "libraries (Debian/Ubuntu: libclang-rt-dev, or libclang-rt-<version>-dev for a "
                      "versioned clang; cmake/install-deps.sh --test installs it)")
endif()

add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
add_link_options(-fsanitize=address,undefined -fno-sanitize-recover=all)
message(STATUS "Goblin fuzz build: libFuzzer harnesses with ASan + UBSan")
