# `make package` (top-level Makefile) / `cmake --build <dir> --target package`:
# a per-OS tarball with the server, the client library, headers, the SBE schema
# and the pkg-config file.
set(CPACK_GENERATOR "TGZ")
set(CPACK_PACKAGE_NAME "goblin-core")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
string(TOLOWER "${CMAKE_SYSTEM_NAME}-${CMAKE_SYSTEM_PROCESSOR}" _gb_sys)
set(CPACK_PACKAGE_FILE_NAME "goblin-core-${PROJECT_VERSION}-${_gb_sys}-${GOBLIN_PLATFORM}")
include(CPack)
