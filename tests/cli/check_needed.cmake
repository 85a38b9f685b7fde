# Checks that a generated library needs only the C/C++ runtime, libm, OpenMP, OpenBLAS and
# SLEEF's vector math (its direct NEEDED entries; OpenBLAS brings libgfortran itself).
# Usage: cmake -DLIBRARY=path.so -P check_needed.cmake
execute_process(COMMAND objdump -p ${LIBRARY} OUTPUT_VARIABLE dump RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "objdump -p ${LIBRARY} failed (${rc})")
endif()
string(REGEX MATCHALL "NEEDED +[^\n]+" needed "${dump}")
if(NOT needed)
  message(FATAL_ERROR "no NEEDED entries in ${LIBRARY}")
endif()
foreach(entry IN LISTS needed)
  string(REGEX REPLACE "NEEDED +" "" lib "${entry}")
  if(NOT lib MATCHES "^(libc|libm|libstdc\\+\\+|libgcc_s|libgomp|libmvec|libopenblas|libsleef)\\.so")
    message(FATAL_ERROR "${LIBRARY} needs ${lib}, which is not allowed")
  endif()
  message(STATUS "needs ${lib}")
endforeach()
