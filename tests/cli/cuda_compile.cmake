# `kiln compile --backend cuda` builds a shared library through kiln's driver (nvcc): it exports
# the graph's NAME_* entry points and the CUDA ones, needs the shared CUDA runtime (and cuBLAS for
# the product), and a second compile is served by the cache. Built, not run (no GPU needed).
# Prints "skipped: no nvcc" (ctest's SKIP_REGULAR_EXPRESSION) without nvcc.
# Usage: cmake -DKILN=kiln -DGRAPH=samples/logreg_predict.json -DNAME=logreg_predict -DOUT=dir
#              -DCACHE=dir (emptied first) [-DARCH=sm_75] -P cuda_compile.cmake
set(nvcc "$ENV{CUDACXX}")
if(NOT nvcc AND EXISTS /usr/local/cuda/bin/nvcc)
  set(nvcc /usr/local/cuda/bin/nvcc)
endif()
if(NOT nvcc)
  find_program(nvcc_on_path nvcc)
  set(nvcc "${nvcc_on_path}")
endif()
if(NOT nvcc)
  message("skipped: no nvcc (set CUDACXX or install the CUDA toolkit)")
  return()
endif()

set(command ${KILN} compile ${GRAPH} -o ${OUT} --backend cuda --cache-dir ${CACHE} -v)
if(ARCH)
  list(APPEND command --cuda-arch ${ARCH})
endif()
file(REMOVE_RECURSE ${OUT} ${CACHE})  # a cache of its own, empty: the first compile builds
string(TIMESTAMP start "%s")
execute_process(COMMAND ${command} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(TIMESTAMP stop "%s")
math(EXPR seconds "${stop} - ${start}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "kiln compile --backend cuda failed (${rc}):\n${out}\n${err}")
endif()
message(STATUS "${out}${err}built in ${seconds} s")
if(NOT out MATCHES "wrote [^\n]*lib${NAME}\\.so, ${NAME}\\.h, ${NAME}\\.cu\n")
  message(FATAL_ERROR "unexpected output:\n${out}")
endif()

# The exported symbols: every entry point, and nothing else of the library's own.
execute_process(COMMAND nm -D --defined-only ${OUT}/lib${NAME}.so RESULT_VARIABLE rc OUTPUT_VARIABLE symbols)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm -D ${OUT}/lib${NAME}.so failed (${rc})")
endif()
foreach(entry info context_create context_destroy context_set_num_threads context_last_error call output_shapes
              call_into context_set_stream)
  if(NOT symbols MATCHES " T ${NAME}_${entry}\n")
    message(FATAL_ERROR "lib${NAME}.so does not export ${NAME}_${entry}:\n${symbols}")
  endif()
endforeach()
string(REGEX MATCHALL "[0-9a-f]+ [A-Za-z] [^\n]+" defined "${symbols}")
foreach(line IN LISTS defined)
  string(REGEX REPLACE "^[0-9a-f]+ [A-Za-z] " "" symbol "${line}")
  if(NOT symbol MATCHES "^(${NAME}_|_init$|_fini$|_edata$|_end$|__bss_start$)")
    message(FATAL_ERROR "lib${NAME}.so exports ${symbol}, which is not one of its entry points")
  endif()
endforeach()
execute_process(COMMAND objdump -p ${OUT}/lib${NAME}.so OUTPUT_VARIABLE dump)
if(NOT dump MATCHES "NEEDED +libcudart\\.so")
  message(FATAL_ERROR "lib${NAME}.so does not need the shared CUDA runtime:\n${dump}")
endif()
if(NOT dump MATCHES "NEEDED +libcublas\\.so")
  message(FATAL_ERROR "lib${NAME}.so does not need cuBLAS (the graph has a product):\n${dump}")
endif()

# Unchanged: the cache serves it.
execute_process(COMMAND ${command} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "\\(cached\\)")
  message(FATAL_ERROR "the second compile was not served by the cache (${rc}):\n${out}\n${err}")
endif()
