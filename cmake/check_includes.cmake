# Checks that every #include "folder/..." in the project points down the
# layers of cmake/layers.cmake. Run as a test:
#   cmake -DPROJECT_SOURCE_DIR=<source> -P cmake/check_includes.cmake
# Prints every include that breaks the layering and fails if there is one.
cmake_minimum_required(VERSION 3.24)
include("${CMAKE_CURRENT_LIST_DIR}/layers.cmake")

set(checked 0)
set(violations "")
file(GLOB_RECURSE sources RELATIVE "${PROJECT_SOURCE_DIR}" "${PROJECT_SOURCE_DIR}/*.h" "${PROJECT_SOURCE_DIR}/*.cpp"
     "${PROJECT_SOURCE_DIR}/*.cu" "${PROJECT_SOURCE_DIR}/*.cuh")
foreach(source ${sources})
  string(REGEX REPLACE "/.*" "" folder "${source}")
  octet_layer_of(${folder} layer)
  if(layer LESS 0)
    continue()  # build folders and anything that is not a layer
  endif()
  file(STRINGS "${PROJECT_SOURCE_DIR}/${source}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"[^\"]+\"")
  foreach(line ${includes})
    string(REGEX REPLACE "^[^\"]*\"([^\"]+)\".*" "\\1" header "${line}")
    if(NOT header MATCHES "/")
      continue()  # a header beside the file itself
    endif()
    string(REGEX REPLACE "/.*" "" to_folder "${header}")
    octet_layer_violation(${folder} ${to_folder} why)
    math(EXPR checked "${checked} + 1")
    if(why)
      string(APPEND violations "  ${source} includes \"${header}\": ${why}\n")
    endif()
  endforeach()
endforeach()
if(violations)
  message(FATAL_ERROR "includes that point up or sideways (see cmake/layers.cmake):\n${violations}")
endif()
message(STATUS "${checked} includes checked: every one points down the layers")
