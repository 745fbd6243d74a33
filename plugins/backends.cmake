# The build's view of two single sources of truth, read once (included by the top-level
# CMakeLists.txt, so every directory sees the result):
#
# abi/include/memra/cpu_feature_list.h (the CPU features):
#   MEMRA_CPU_FEATURE_NAMES        every feature's /proc/cpuinfo name, in bit order
#   MEMRA_CPU_FEATURE_BIT_<name>   its bit in a required-features mask
# plugins/backends.table (the backends):
#   MEMRA_BACKENDS                 every row's name, in table order (rows whose folder
#                                  plugins/<name>/ this source tree lacks are left out)
#   MEMRA_SHIPPED_BACKENDS         the rows built and installed as plugins (package core or plugin)
#   MEMRA_BACKEND_<name>_PRIORITY, _PACKAGE, _REQUIRES (a list), _FLAGS (a list), _TITLE
#   MEMRA_CPU_FEATURES_BEYOND_SCALAR  every feature the scalar row does not require, comma-separated:
#                                  MEMRA_CPU_EXPERT_DISABLE_FEATURES=<it> plays a CPU that runs only scalar
#   memra_backend_rows             an INTERFACE target whose header memra_backend_rows.h holds the
#                                  rows as an X-macro, for tests and tools
# abi/include/memra/backend.h (the plugin interface):
#   MEMRA_BACKEND_INTERFACE_VERSION  its version, which every manifest states ("interface <n>")
set(memra_feature_list_h ${PROJECT_SOURCE_DIR}/abi/include/memra/cpu_feature_list.h)
set(memra_backend_table ${PROJECT_SOURCE_DIR}/plugins/backends.table)
set(memra_backend_h ${PROJECT_SOURCE_DIR}/abi/include/memra/backend.h)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${memra_feature_list_h} ${memra_backend_table} ${memra_backend_h})

# The interface version: the header's #define, so that the manifests cannot fall behind it.
file(STRINGS ${memra_backend_h} memra_text REGEX "^#define MEMRA_BACKEND_INTERFACE_VERSION ")
string(REGEX REPLACE "^#define MEMRA_BACKEND_INTERFACE_VERSION +([0-9]+)u?( .*)?$" "\\1"
       MEMRA_BACKEND_INTERFACE_VERSION "${memra_text}")
if(NOT MEMRA_BACKEND_INTERFACE_VERSION MATCHES "^[0-9]+$")
  message(FATAL_ERROR "no '#define MEMRA_BACKEND_INTERFACE_VERSION <n>' found in ${memra_backend_h}")
endif()

# The features: rows "X(ID, name, bit, leaf, subleaf, reg, cpuid_bit, state)".
file(READ ${memra_feature_list_h} memra_text)
string(REGEX MATCHALL "\n *X\\([A-Z0-9_]+, *[a-z0-9_]+, *[0-9]+,[^)]*\\)" memra_rows "${memra_text}")
set(MEMRA_CPU_FEATURE_NAMES "")
foreach(row IN LISTS memra_rows)
  string(REGEX REPLACE "^\n *X\\([A-Z0-9_]+, *([a-z0-9_]+), *([0-9]+),.*$" "\\1;\\2" fields "${row}")
  list(GET fields 0 name)
  list(GET fields 1 bit)
  list(APPEND MEMRA_CPU_FEATURE_NAMES ${name})
  set(MEMRA_CPU_FEATURE_BIT_${name} ${bit})
endforeach()
if(NOT MEMRA_CPU_FEATURE_NAMES)
  message(FATAL_ERROR "no MEMRA_CPU_FEATURE_LIST rows found in ${memra_feature_list_h}")
endif()

# memra_cpu_feature_mask(<out> <feature names...>): the mask as a C literal ("0x1e0ull").
function(memra_cpu_feature_mask out)
  set(mask 0)
  foreach(f IN LISTS ARGN)
    if(NOT DEFINED MEMRA_CPU_FEATURE_BIT_${f})
      message(FATAL_ERROR "unknown CPU feature '${f}' (known: ${MEMRA_CPU_FEATURE_NAMES})")
    endif()
    math(EXPR mask "${mask} | (1 << ${MEMRA_CPU_FEATURE_BIT_${f}})" OUTPUT_FORMAT HEXADECIMAL)
  endforeach()
  set(${out} "${mask}ull" PARENT_SCOPE)
endfunction()

# The backends: '|'-separated rows, '#' comments.
file(STRINGS ${memra_backend_table} memra_rows REGEX "^[^#]")
set(MEMRA_BACKENDS "")
set(MEMRA_SHIPPED_BACKENDS "")
set(memra_x_rows "")
foreach(row IN LISTS memra_rows)
  string(REPLACE "|" ";" fields "${row}")
  list(LENGTH fields n)
  if(NOT n EQUAL 6)
    message(FATAL_ERROR "plugins/backends.table: a row needs 6 fields, not ${n}: ${row}")
  endif()
  set(values "")
  foreach(field IN LISTS fields)
    string(STRIP "${field}" field)
    list(APPEND values "${field}")
  endforeach()
  list(GET values 0 name)
  list(GET values 1 priority)
  list(GET values 2 package)
  list(GET values 3 requires)
  list(GET values 4 flags)
  list(GET values 5 title)
  if(NOT name MATCHES "^[a-z0-9_]+$" OR NOT priority MATCHES "^[0-9]+$" OR NOT package MATCHES "^(core|plugin|tests)$")
    message(FATAL_ERROR "plugins/backends.table: bad name, priority or package in: ${row}")
  endif()
  separate_arguments(requires UNIX_COMMAND "${requires}")
  separate_arguments(flags UNIX_COMMAND "${flags}")
  memra_cpu_feature_mask(mask ${requires})  # checks the names
  # A source tree may leave an ISA's folder out (packaging/build-debs builds without it).
  if(NOT EXISTS ${PROJECT_SOURCE_DIR}/plugins/${name}/CMakeLists.txt)
    message(STATUS "backend ${name}: no plugins/${name}/CMakeLists.txt in this source tree, left out")
    continue()
  endif()
  list(APPEND MEMRA_BACKENDS ${name})
  if(NOT package STREQUAL "tests")
    list(APPEND MEMRA_SHIPPED_BACKENDS ${name})
  endif()
  set(MEMRA_BACKEND_${name}_PRIORITY ${priority})
  set(MEMRA_BACKEND_${name}_PACKAGE ${package})
  set(MEMRA_BACKEND_${name}_REQUIRES ${requires})
  set(MEMRA_BACKEND_${name}_FLAGS ${flags})
  set(MEMRA_BACKEND_${name}_TITLE "${title}")
  string(REPLACE ";" " " requires "${requires}")
  string(APPEND memra_x_rows " \\\n    X(${name}, ${priority}, ${package}, \"${requires}\", \"${title}\")")
endforeach()
if(NOT "scalar" IN_LIST MEMRA_SHIPPED_BACKENDS)
  message(FATAL_ERROR "plugins/backends.table: no scalar row (the reference every backend is tested against)")
endif()
set(MEMRA_CPU_FEATURES_BEYOND_SCALAR ${MEMRA_CPU_FEATURE_NAMES})
list(REMOVE_ITEM MEMRA_CPU_FEATURES_BEYOND_SCALAR ${MEMRA_BACKEND_scalar_REQUIRES})
list(JOIN MEMRA_CPU_FEATURES_BEYOND_SCALAR "," MEMRA_CPU_FEATURES_BEYOND_SCALAR)

set(memra_rows_dir ${PROJECT_BINARY_DIR}/generated/backend_rows)
configure_file(${PROJECT_SOURCE_DIR}/plugins/memra_backend_rows.h.in ${memra_rows_dir}/memra_backend_rows.h @ONLY)
add_library(memra_backend_rows INTERFACE)
target_include_directories(memra_backend_rows INTERFACE $<BUILD_INTERFACE:${memra_rows_dir}>)
foreach(v memra_rows memra_text memra_x_rows memra_rows_dir memra_backend_h row fields values field n name bit
          priority package requires flags title mask)
  unset(${v})
endforeach()
