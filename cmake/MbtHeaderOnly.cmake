# mbt_find_header_only(PACKAGE TARGET HEADER VAR [DEFINITION...])
#   Finds the library PACKAGE by its CMake package config, which defines
#   TARGET; where there is none (a GPU host without the Debian package), the
#   directory in the cache variable VAR (or found holding HEADER) becomes the
#   INTERFACE target TARGET, with the compile definitions DEFINITION... (for
#   fmt: FMT_HEADER_ONLY=1, which compiles its formatting code into each user
#   instead of linking libfmt).
function(mbt_find_header_only package target header var)
  find_package(${package} CONFIG QUIET)
  if(${package}_FOUND)
    return()
  endif()
  find_path(${var} ${header})
  if(NOT ${var})
    message(FATAL_ERROR "mbt: ${package} not found (${header}). Install its "
                        "Debian package or set ${var}")
  endif()
  add_library(${target} INTERFACE IMPORTED GLOBAL)
  set_target_properties(${target} PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${${var}}")
  if(ARGN)
    set_target_properties(${target} PROPERTIES
      INTERFACE_COMPILE_DEFINITIONS "${ARGN}")
  endif()
  message(STATUS "mbt: ${package}: the headers in ${${var}}")
endfunction()
