# octet's folders as layers, lowest first. A folder may include headers from,
# and link libraries of, folders in lower layers only; folders that share a
# layer stand side by side and may not use each other. Configuring fails on a
# link that breaks this (octet_check_link_layers); the test
# architecture_includes checks every #include of C++ and CUDA and every import
# of the project's Python modules (cmake/check_includes.cmake).
set(OCTET_LAYERS
    "common"
    "data"
    "graph"
    "models"
    "train forecast"
    "calibrate"
    "qmodel"
    "runtime"
    "quant"
    "evaluate interop"
    "report bench"
    "tools python"
    "tests")

# The folders that hold libraries, in build order.
set(OCTET_LIBRARY_FOLDERS common data graph models train forecast calibrate qmodel runtime quant evaluate interop report bench)

# The layer index of a top-level folder, or -1 when it is not a layer.
function(octet_layer_of folder out)
  set(index 0)
  foreach(layer ${OCTET_LAYERS})
    string(REPLACE " " ";" members "${layer}")
    if(folder IN_LIST members)
      set(${out} ${index} PARENT_SCOPE)
      return()
    endif()
    math(EXPR index "${index} + 1")
  endforeach()
  set(${out} -1 PARENT_SCOPE)
endfunction()

# "" when `from_folder` may use `to_folder`, else why not.
function(octet_layer_violation from_folder to_folder out)
  set(${out} "" PARENT_SCOPE)
  if(from_folder STREQUAL to_folder)
    return()
  endif()
  octet_layer_of(${from_folder} from)
  octet_layer_of(${to_folder} to)
  if(from LESS 0 OR to LESS 0)
    return()
  endif()
  if(to EQUAL from)
    set(${out} "${to_folder}/ stands beside ${from_folder}/ in the same layer" PARENT_SCOPE)
  elseif(to GREATER from)
    set(${out} "${to_folder}/ is in a layer above ${from_folder}/" PARENT_SCOPE)
  endif()
endfunction()

# The top-level folder of the project a path lies in.
function(octet_folder_of path out)
  file(RELATIVE_PATH relative "${PROJECT_SOURCE_DIR}" "${path}")
  string(REGEX REPLACE "/.*" "" folder "${relative}")
  set(${out} "${folder}" PARENT_SCOPE)
endfunction()

# Fails configuring when a target links a library of a folder that is not
# below its own.
function(octet_check_link_layers)
  # The folders this configuration added (tests/ only with BUILD_TESTING).
  get_property(folder_dirs DIRECTORY "${PROJECT_SOURCE_DIR}" PROPERTY SUBDIRECTORIES)
  foreach(folder_dir ${folder_dirs})
    octet_folder_of("${folder_dir}" folder)
    get_property(targets DIRECTORY "${folder_dir}" PROPERTY BUILDSYSTEM_TARGETS)
    foreach(target ${targets})
      get_target_property(links ${target} LINK_LIBRARIES)
      get_target_property(interface_links ${target} INTERFACE_LINK_LIBRARIES)
      foreach(link ${links} ${interface_links})
        # "$<LINK_LIBRARY:WHOLE_ARCHIVE,name>" and similar wrap a target name.
        string(REGEX REPLACE "^\\$<[A-Z_]+:([A-Z_]+,)?([^>]+)>$" "\\2" link "${link}")
        if(NOT TARGET "${link}")
          continue()
        endif()
        get_target_property(imported "${link}" IMPORTED)
        if(imported)
          continue()
        endif()
        get_target_property(dir "${link}" SOURCE_DIR)
        octet_folder_of("${dir}" to_folder)
        octet_layer_violation(${folder} "${to_folder}" why)
        if(why)
          message(FATAL_ERROR "octet layers: target ${target} (${folder}/) links ${link}: ${why} "
                              "(cmake/layers.cmake)")
        endif()
      endforeach()
    endforeach()
  endforeach()
endfunction()
