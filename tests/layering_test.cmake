# Fails when a file under src/ includes a header of a module its own module
# must not depend on (cmake/layering_rules.cmake): an include can break the
# layering without a link. The link graph is checked at configure time.
# Usage: cmake -DSRC=<repo>/src -P layering_test.cmake
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/../cmake/StrataLayering.cmake)
strata_check_includes(${SRC})
message(STATUS "layering: no forbidden includes")
