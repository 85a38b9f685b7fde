# The layering rules of generator/ (docs/ARCHITECTURE.md), checked on every #include line:
#   ir/        includes only ir/ and util/        (the graph IR knows no concrete op)
#   util/      includes only util/
#   transform/ includes only transform/ and ir/   (graph_replace, vectorize_graph: op-agnostic)
#   ops/       includes only ops/, ir/, transform/, util/   (no grad/, api/, io/, codegen/, ...)
#   codegen/   never includes driver/, cli/ or compile/ (the driver builds what codegen writes)
#   driver/    never includes cli/ or compile/
cmake_minimum_required(VERSION 3.20)
# Run as: cmake -DROOT=<source dir> -P check_layers.cmake
file(GLOB_RECURSE files RELATIVE "${ROOT}/generator" "${ROOT}/generator/*.h" "${ROOT}/generator/*.cpp")
set(allowed_ir "ir|util")
set(allowed_util "util")
set(allowed_transform "transform|ir|util")
set(allowed_ops "ops|ir|transform|util")
set(forbidden_codegen "driver|cli|compile")
set(forbidden_driver "cli|compile")
# Known exceptions, each "file: include" and why; the list must only shrink. OpFromGraph (from
# the v2 format) evaluates its inner graph with the reference evaluator and writes it into its
# props with the graph writer: PyTensor keeps it above the tensor ops (compile/builders.py);
# moving it there needs the op table to take factories from above.
set(exceptions
  "ops/op_from_graph.cpp: #include \"eval/evaluator.h\""
  "ops/op_from_graph.cpp: #include \"io/graph_save.h\"")
set(violations "")
set(used_exceptions "")
foreach(rel IN LISTS files)
  string(REGEX MATCH "^[a-z_]+" layer "${rel}")
  file(STRINGS "${ROOT}/generator/${rel}" includes REGEX "^#include \"[a-z_]+/")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^#include \"([a-z_]+)/.*" "\\1" target "${line}")
    if(target STREQUAL "kiln")  # the runtime headers (runtime/include/kiln/): every layer may use them
      continue()
    endif()
    set(bad FALSE)
    if(DEFINED allowed_${layer} AND NOT target MATCHES "^(${allowed_${layer}})$")
      set(bad TRUE)
    elseif(DEFINED forbidden_${layer} AND target MATCHES "^(${forbidden_${layer}})$")
      set(bad TRUE)
    endif()
    if(bad AND "${rel}: ${line}" IN_LIST exceptions)
      list(APPEND used_exceptions "${rel}: ${line}")
      set(bad FALSE)
    endif()
    if(bad)
      string(APPEND violations "  generator/${rel}: ${line}\n")
    endif()
  endforeach()
endforeach()
foreach(e IN LISTS exceptions)
  if(NOT e IN_LIST used_exceptions)
    string(APPEND violations "  ${e} is listed as an exception but no longer happens: remove it from the list\n")
  endif()
endforeach()
if(violations)
  message(FATAL_ERROR "include arrows against the layering (docs/ARCHITECTURE.md, \"Layers\"):\n${violations}")
endif()
list(LENGTH files count)
list(LENGTH exceptions n_exceptions)
message(STATUS "layering: ${count} files, no include against the layers but the ${n_exceptions} listed exceptions")
