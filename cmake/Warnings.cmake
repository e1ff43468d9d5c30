# One place for the warning set, so g++ 12 and clang 14 builds stay warning-free alike.
# No -Wnull-dereference: g++ 12 at -O2 reports false positives inside <optional>.
function(gw_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
    -Wcast-align -Woverloaded-virtual -Wconversion -Wsign-conversion
    -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough)
  if(GW_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# A module library gw_<name>: every .cpp below src/<name>/ (so adding a file needs no
# CMake edit), public include root src/.
function(gw_module name)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  if(NOT srcs)
    add_library(gw_${name} INTERFACE)
    target_include_directories(gw_${name} INTERFACE ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(gw_${name} INTERFACE ${ARG_DEPS})
    return()
  endif()
  add_library(gw_${name} STATIC ${srcs})
  target_include_directories(gw_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(gw_${name} PUBLIC ${ARG_DEPS})
  gw_warnings(gw_${name})
endfunction()

# Adds every direct or second-level subfolder of the current folder that has a CMakeLists.txt
# (tests/<module>/, tests/sources/<part>/, bench/<topic>/).
function(gw_add_child_dirs)
  file(GLOB lists CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*/CMakeLists.txt
       ${CMAKE_CURRENT_SOURCE_DIR}/*/*/CMakeLists.txt)
  list(SORT lists)
  foreach(l ${lists})
    get_filename_component(d ${l} DIRECTORY)
    add_subdirectory(${d})
  endforeach()
endfunction()

# A test executable registered with ctest. LABELS may include "gpu".
function(gw_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE ${GW_SOURCE_DIR_DEFINE} ${GW_BINARY_DIR_DEFINE})
  gw_warnings(${name})
  gtest_discover_tests(${name} PROPERTIES LABELS "${ARG_LABELS}" DISCOVERY_TIMEOUT 60)
endfunction()
