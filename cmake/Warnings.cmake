# Warnings, sanitizers and tuning flags, applied to every target in the tree.
add_compile_options(-Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
                    -Wno-unused-parameter -Wvla -Wformat=2)
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

# CPU tuning. "portable" adds nothing; presets pick a documented level
# (see docs/building.md): x86-64-v2 for linux-release, -mcpu=apple-m1 for macos-release.
if(GOBLIN_TUNE STREQUAL "native")
  add_compile_options(-march=native)
elseif(NOT GOBLIN_TUNE STREQUAL "portable" AND NOT GOBLIN_TUNE STREQUAL "")
  separate_arguments(_gb_tune_flags UNIX_COMMAND "${GOBLIN_TUNE}")
  add_compile_options(${_gb_tune_flags})
endif()

# Large, hot code paths want -O2 at least in every build that is measured.
if(CMAKE_BUILD_TYPE STREQUAL "Release")
  add_compile_options(-O2)
endif()
