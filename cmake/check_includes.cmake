# Checks that every #include "folder/..." of C++ and CUDA, and every Python
# import of a module the project holds, points down the layers of
# cmake/layers.cmake. Run as a test:
#   cmake -DPROJECT_SOURCE_DIR=<source> -P cmake/check_includes.cmake
# Prints every include or import that breaks the layering and fails if there is one.
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

# Python: the modules the project holds are its packages (folders with an
# __init__.py, e.g. python/octet) and its .py files, each by the folder of
# layers it lies in; `import x` and `from x import y` of one of them is
# checked like an include. Other imports (the standard library, numpy,
# torch) and relative ones are not the project's.
file(GLOB_RECURSE python_sources RELATIVE "${PROJECT_SOURCE_DIR}" "${PROJECT_SOURCE_DIR}/*.py")
set(layered_python_sources "")
set(python_modules "")
foreach(source ${python_sources})
  string(REGEX REPLACE "/.*" "" folder "${source}")
  octet_layer_of(${folder} layer)
  if(layer LESS 0)
    continue()
  endif()
  list(APPEND layered_python_sources ${source})
  get_filename_component(name "${source}" NAME_WE)
  if(name STREQUAL "__init__")
    get_filename_component(package_dir "${source}" DIRECTORY)
    get_filename_component(name "${package_dir}" NAME)
  endif()
  set(python_folder_of_${name} ${folder})
  list(APPEND python_modules ${name})
endforeach()
foreach(source ${layered_python_sources})
  string(REGEX REPLACE "/.*" "" folder "${source}")
  file(STRINGS "${PROJECT_SOURCE_DIR}/${source}" imports REGEX "^[ \t]*(import|from)[ \t]+[A-Za-z_]")
  foreach(line ${imports})
    # The modules a line names: `from a.b import c` names a; `import a.b, c as d` names a and c.
    if(line MATCHES "^[ \t]*from[ \t]+([A-Za-z_][A-Za-z0-9_]*)")
      set(names ${CMAKE_MATCH_1})
    else()
      string(REGEX REPLACE "^[ \t]*import[ \t]+" "" names "${line}")
      string(REGEX REPLACE "#.*" "" names "${names}")
      string(REGEX REPLACE "[ \t]+as[ \t]+[A-Za-z0-9_]+" "" names "${names}")
      string(REGEX REPLACE "\\.[A-Za-z0-9_.]*" "" names "${names}")
      string(REGEX REPLACE "[ \t]" "" names "${names}")
      string(REPLACE "," ";" names "${names}")
    endif()
    foreach(name ${names})
      if(NOT name IN_LIST python_modules)
        continue()
      endif()
      octet_layer_violation(${folder} ${python_folder_of_${name}} why)
      math(EXPR checked "${checked} + 1")
      if(why)
        string(APPEND violations "  ${source} imports ${name} (${python_folder_of_${name}}/): ${why}\n")
      endif()
    endforeach()
  endforeach()
endforeach()

if(violations)
  message(FATAL_ERROR "includes and imports that point up or sideways (see cmake/layers.cmake):\n${violations}")
endif()
message(STATUS "${checked} includes and imports checked: every one points down the layers")
