# Warnings, sanitizers and tuning flags, applied to every target in the tree.
# -Wno-missing-field-initializers: tables leave optional trailing fields
# zero on purpose (a command definition's subcommand list, a reply sink's
# RESP3-only operations), as Redis's command table does.
add_compile_options(-Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
                    -Wno-unused-parameter -Wno-missing-field-initializers -Wvla -Wformat=2)
if(GOBLIN_WERROR)
  add_compile_options(-Werror)
endif()

if(GOBLIN_SANITIZE)
  string(REPLACE "," ";" _gb_sans "${GOBLIN_SANITIZE}")
  foreach(_san IN LISTS _gb_sans)
    add_compile_options(-fsanitize=${_san})
    add_link_options(-fsanitize=${_san})
  endforeach()
  add_compile_options(-fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fno-sanitize-recover=all)
endif()

# CPU tuning (see docs/platform.md, "Tuned builds"). "portable" adds nothing;
# "native" tunes for this machine; anything else is passed to the compiler
# as given. The presets pick documented levels: -march=x86-64-v2 for
# linux-release (every x86-64 server of the last decade), -march=armv8.2-a
# for linux-arm64-release, -mcpu=apple-m1 for macos-release.
if(GOBLIN_TUNE STREQUAL "native")
  set(_gb_tune_flags -march=native)
elseif(NOT GOBLIN_TUNE STREQUAL "portable" AND NOT GOBLIN_TUNE STREQUAL "")
  separate_arguments(_gb_tune_flags UNIX_COMMAND "${GOBLIN_TUNE}")
else()
  set(_gb_tune_flags "")
endif()
if(_gb_tune_flags)
  # Fail at configure time with a sentence, not at the first compile with a
  # compiler error: e.g. linux-release (-march=x86-64-v2) on an arm64 host,
  # or -mcpu=apple-m1 on an Intel Mac without CMAKE_OSX_ARCHITECTURES=arm64.
  include(CheckCSourceCompiles)
  string(MD5 _gb_tune_key "${_gb_tune_flags}")
  set(CMAKE_REQUIRED_FLAGS "${GOBLIN_TUNE}")
  if(GOBLIN_TUNE STREQUAL "native")
    set(CMAKE_REQUIRED_FLAGS "-march=native")
  endif()
  check_c_source_compiles("int main(void) { return 0; }" GB_TUNE_OK_${_gb_tune_key})
  unset(CMAKE_REQUIRED_FLAGS)
  if(NOT GB_TUNE_OK_${_gb_tune_key})
    message(FATAL_ERROR "GOBLIN_TUNE='${GOBLIN_TUNE}' is not accepted by ${CMAKE_C_COMPILER_ID} "
            "${CMAKE_C_COMPILER_VERSION} for ${CMAKE_SYSTEM_PROCESSOR}: use a preset for this "
            "architecture, GOBLIN_TUNE=native, or GOBLIN_TUNE=portable")
  endif()
  add_compile_options(${_gb_tune_flags})
endif()
message(STATUS "Goblin CPU tuning: ${GOBLIN_TUNE}")
