# The layers of docs/architecture.md as CMake targets, so that a forbidden include fails to
# compile instead of waiting for a review.
#
# All headers share two roots (include/ and src/), so an include path of either root would let
# every layer see every other. Instead each layer gets staging directories under the build tree
# that hold symbolic links to its own headers only, at the path they are included by
# ("webnn/builder.h", "backends/cpu/gemm.h"):
#   <build>/layers/<target>/public   headers the layers above may include (a PUBLIC include dir,
#                                    so it reaches exactly the targets that link this layer)
#   <build>/layers/<target>/private  headers only the layer itself (and the tests) include
# A layer's sources therefore see their own headers and those of the layers they link,
# transitively downward, and nothing else: `#include "webnn/builder.h"` in a backend is
# "No such file or directory". The links point at the sources, so an edited header takes effect
# at once; the globs are CONFIGURE_DEPENDS, so a new header is linked at the next build.

set(WEBNN_LAYER_STAGE_DIR ${CMAKE_BINARY_DIR}/layers)
set(WEBNN_LAYER_WARNINGS -Wall -Wextra -Wno-unused-parameter)

# The path a header is included by: relative to include/ or to src/.
function(_webnn_include_path out header)
  foreach(root ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src)
    file(RELATIVE_PATH rel ${root} ${header})
    if(NOT rel MATCHES "^\\.\\./")
      set(${out} ${rel} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "webnn_layer: ${header} is neither under include/ nor under src/")
endfunction()

function(_webnn_stage dir headers)
  file(REMOVE_RECURSE ${dir})  # drop links to headers that moved or were deleted
  file(MAKE_DIRECTORY ${dir})
  foreach(header ${headers})
    _webnn_include_path(rel ${header})
    get_filename_component(parent ${dir}/${rel} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    file(CREATE_LINK ${header} ${dir}/${rel} SYMBOLIC)
  endforeach()
endfunction()

# webnn_layer(<target>
#   SOURCES <globs>            the layer's .cc files
#   HEADERS <globs>            headers the layers above may include
#   PRIVATE_HEADERS <globs>    headers of the layer's own sources (minus HEADERS)
#   DEPENDS <targets>)         the layers directly below it that it may include
# All globs are relative to the project root. A layer without sources (yet) is an INTERFACE
# target, so dependents can link it before its first .cc exists.
function(webnn_layer target)
  cmake_parse_arguments(L "" "" "SOURCES;HEADERS;PRIVATE_HEADERS;DEPENDS" ${ARGN})
  list(TRANSFORM L_SOURCES PREPEND ${PROJECT_SOURCE_DIR}/)
  list(TRANSFORM L_HEADERS PREPEND ${PROJECT_SOURCE_DIR}/)
  list(TRANSFORM L_PRIVATE_HEADERS PREPEND ${PROJECT_SOURCE_DIR}/)
  set(sources "")
  set(headers "")
  set(private "")
  if(L_SOURCES)
    file(GLOB sources CONFIGURE_DEPENDS ${L_SOURCES})
  endif()
  if(L_HEADERS)
    file(GLOB headers CONFIGURE_DEPENDS ${L_HEADERS})
  endif()
  if(L_PRIVATE_HEADERS)
    file(GLOB private CONFIGURE_DEPENDS ${L_PRIVATE_HEADERS})
    if(headers)
      list(REMOVE_ITEM private ${headers})
    endif()
  endif()

  set(stage ${WEBNN_LAYER_STAGE_DIR}/${target})
  _webnn_stage(${stage}/public "${headers}")
  _webnn_stage(${stage}/private "${private}")

  if(sources)
    add_library(${target} STATIC ${sources} ${headers} ${private})
    target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${stage}/public>
                                         PRIVATE $<BUILD_INTERFACE:${stage}/private>)
    target_link_libraries(${target} PUBLIC ${L_DEPENDS})
    target_compile_options(${target} PRIVATE ${WEBNN_LAYER_WARNINGS})
  else()
    add_library(${target} INTERFACE ${headers} ${private})
    target_include_directories(${target} INTERFACE $<BUILD_INTERFACE:${stage}/public>)
    target_link_libraries(${target} INTERFACE ${L_DEPENDS})
  endif()
  set_property(TARGET ${target} PROPERTY WEBNN_PRIVATE_STAGE ${stage}/private)
  set_property(GLOBAL APPEND PROPERTY WEBNN_LAYERS ${target})
endfunction()

# An INTERFACE target that sees every layer's private headers too: for the tests (and fuzzers,
# benchmarks) that check internals. Never linked by a layer.
function(webnn_internals_target target)
  get_property(layers GLOBAL PROPERTY WEBNN_LAYERS)
  add_library(${target} INTERFACE)
  foreach(layer ${layers})
    get_property(private TARGET ${layer} PROPERTY WEBNN_PRIVATE_STAGE)
    target_include_directories(${target} INTERFACE ${private})
    target_link_libraries(${target} INTERFACE ${layer})
  endforeach()
endfunction()

# A ctest that compiles a one-line file `#include "<header>"` with the include paths of
# `layer`'s own sources. FORBIDDEN: passes only when the compiler cannot find the header (so
# it fails when the layering leaks); otherwise passes only when the file compiles (the control
# that the check itself works).
function(webnn_layer_include_test layer header)
  cmake_parse_arguments(T "FORBIDDEN" "" "" ${ARGN})
  string(MAKE_C_IDENTIFIER "${layer}_${header}" id)
  set(src ${CMAKE_BINARY_DIR}/layer_checks/${id}.cc)
  file(WRITE ${src} "#include \"${header}\"\n")
  add_library(layer_check_${id} OBJECT EXCLUDE_FROM_ALL ${src})
  get_property(private TARGET ${layer} PROPERTY WEBNN_PRIVATE_STAGE)
  if(private)
    target_include_directories(layer_check_${id} PRIVATE ${private})
  endif()
  target_link_libraries(layer_check_${id} PRIVATE ${layer})
  if(T_FORBIDDEN)
    set(name "layering.${layer}.forbids.${header}")
  else()
    set(name "layering.${layer}.allows.${header}")
  endif()
  add_test(NAME ${name}
           COMMAND ${CMAKE_COMMAND} --build ${CMAKE_BINARY_DIR} --target layer_check_${id})
  # One build at a time in the build tree; LABELS for `ctest -L layering`.
  set_tests_properties(${name} PROPERTIES RESOURCE_LOCK webnn_build_tree LABELS layering)
  if(T_FORBIDDEN)
    string(REGEX REPLACE "([.+])" "\\\\\\1" header_re "${header}")
    set_tests_properties(${name} PROPERTIES PASS_REGULAR_EXPRESSION
      "${header_re}['\"]?:? (No such file or directory|file not found)")
  endif()
endfunction()
