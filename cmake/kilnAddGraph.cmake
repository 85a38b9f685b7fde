# kiln_add_graph(): a kiln graph file as a library target of your own build.
#
#   kiln_add_graph(TARGET <target> GRAPH <graph.json>
#                  [BACKEND <name>] [STATIC | SHARED] [NAME <prefix>] [MARCH <arch>]
#                  [OPTIONS <kiln emit options>...])
#
# At build time `kiln emit --backend <name>` writes <prefix>.h, the source (<prefix>.cpp for
# the cpp backend, the default) and <prefix>_data.S (plus one .bin file per large constant,
# pulled in by .incbin) into ${CMAKE_CURRENT_BINARY_DIR}/kiln/<target>/. What a backend's
# source needs (its suffix and language, OpenMP, BLAS, vector math) comes from
# kilnBackends.cmake, which `kiln backends --cmake` writes from kiln's backend registry.
# It re-runs only when the graph file, a .npy file the graph references (kiln writes a depfile
# listing them) or kiln itself changes, and rewrites only files whose bytes changed.
# The sources are compiled by this project's toolchain with its flags into <target> (STATIC or
# SHARED; by default as BUILD_SHARED_LIBS says). Users of <target> get <prefix>.h on their
# include path and call the graph through its typed C++ wrapper; OpenMP and OpenBLAS are linked,
# and SLEEF's libsleef when found (x86-64): loops calling exp, log, sin, ... then vectorise
# with 1-ULP vector functions (KILN_SLEEF; without it, scalar libm calls).
#
#   NAME     symbol prefix and file name, a C identifier (default: <target> made one).
#   MARCH    adds -march=<arch> to the generated code only (e.g. x86-64-v3). Without it the
#            generated code gets exactly your flags: never -march=native unless you ask.
#   OPTIONS  passed to `kiln emit` (e.g. --rewrites ... ; see `kiln emit --help`).
#
# Usable after find_package(kiln), from kiln's build tree (kiln_DIR=<kiln build dir>), and in
# a project that adds kiln with add_subdirectory() (that project enables ASM itself:
# project(... LANGUAGES CXX ASM)).

include("${CMAKE_CURRENT_LIST_DIR}/kilnBackends.cmake")

# The data file is assembled by the compiler driver (ASM); languages are enabled at file scope.
if(NOT CMAKE_ASM_COMPILER_LOADED)
  enable_language(ASM)
endif()

# OpenMP and OpenBLAS, which generated code uses, and SLEEF's vector math, which it may use.
# Imported targets are visible in the folder that creates them only, so kiln_add_graph() looks
# again wherever it is called.
macro(_kiln_find_dependencies)
  if(NOT TARGET OpenMP::OpenMP_CXX)
    find_package(OpenMP QUIET COMPONENTS CXX)
  endif()
  if(NOT TARGET kiln::openblas)
    find_library(KILN_OPENBLAS_LIBRARY NAMES openblas DOC "OpenBLAS, linked by kiln-generated code")
    find_path(KILN_CBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas DOC "the folder of OpenBLAS's cblas.h")
    if(KILN_OPENBLAS_LIBRARY AND KILN_CBLAS_INCLUDE_DIR)
      add_library(kiln::openblas INTERFACE IMPORTED)
      set_target_properties(kiln::openblas PROPERTIES
        INTERFACE_LINK_LIBRARIES "${KILN_OPENBLAS_LIBRARY}"
        INTERFACE_INCLUDE_DIRECTORIES "${KILN_CBLAS_INCLUDE_DIR}")
      # Debian's OpenMP build of OpenBLAS (libopenblas0-openmp, same soname), when installed, is
      # found first at run time, as `kiln compile` does: BLAS then shares libgomp's threads with
      # the generated loops instead of a second pool spinning against them.
      get_filename_component(_kiln_blas_dir "${KILN_OPENBLAS_LIBRARY}" DIRECTORY)
      if(EXISTS "${_kiln_blas_dir}/openblas-openmp/libopenblas.so.0")
        set_property(TARGET kiln::openblas APPEND PROPERTY
          INTERFACE_LINK_OPTIONS "LINKER:-rpath,${_kiln_blas_dir}/openblas-openmp")
      endif()
    endif()
  endif()
  # Optional, x86-64 only (templates/cpp/prologue/vector_math.hpp uses x86's vector ABI).
  if(NOT TARGET kiln::sleef AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
    find_library(KILN_SLEEF_LIBRARY NAMES sleef DOC "SLEEF's vector math library, linked by kiln-generated code")
    if(KILN_SLEEF_LIBRARY)
      add_library(kiln::sleef INTERFACE IMPORTED)
      set_target_properties(kiln::sleef PROPERTIES
        INTERFACE_LINK_LIBRARIES "${KILN_SLEEF_LIBRARY}"
        INTERFACE_COMPILE_DEFINITIONS KILN_SLEEF)
    endif()
  endif()
  # glibc's libmvec (>= 2.35): the default source of vector math (vector_math.hpp, issue 20).
  if(NOT TARGET kiln::libmvec AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
    include(CheckCXXSourceCompiles)
    set(CMAKE_REQUIRED_LIBRARIES mvec)
    check_cxx_source_compiles("extern \"C\" void _ZGVdN4v_log1p();
int main() { void (*volatile p)() = _ZGVdN4v_log1p; return p == 0; }" KILN_HAVE_LIBMVEC_FOR_GRAPHS)
    unset(CMAKE_REQUIRED_LIBRARIES)
    if(KILN_HAVE_LIBMVEC_FOR_GRAPHS)
      add_library(kiln::libmvec INTERFACE IMPORTED)
      set_target_properties(kiln::libmvec PROPERTIES
        INTERFACE_LINK_LIBRARIES mvec
        INTERFACE_COMPILE_DEFINITIONS KILN_LIBMVEC)
    endif()
  endif()
  if(NOT TARGET kiln::sleef AND NOT TARGET kiln::libmvec)
    message(WARNING "kiln: neither libmvec (glibc >= 2.35) nor libsleef (libsleef-dev) found: graphs' "
                    "math calls will not be vectorised")
  endif()
endmacro()
_kiln_find_dependencies()

function(kiln_add_graph)
  cmake_parse_arguments(PARSE_ARGV 0 arg "STATIC;SHARED" "TARGET;GRAPH;BACKEND;NAME;MARCH" "OPTIONS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kiln_add_graph: unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_TARGET OR NOT arg_GRAPH)
    message(FATAL_ERROR "kiln_add_graph: TARGET and GRAPH are required")
  endif()
  if(arg_STATIC AND arg_SHARED)
    message(FATAL_ERROR "kiln_add_graph(${arg_TARGET}): give STATIC or SHARED, not both")
  endif()
  if(NOT arg_BACKEND)
    set(arg_BACKEND cpp)
  endif()
  if(NOT arg_BACKEND IN_LIST KILN_BACKENDS)
    message(FATAL_ERROR "kiln_add_graph(${arg_TARGET}): unknown BACKEND ${arg_BACKEND} (kiln has: ${KILN_BACKENDS})")
  endif()
  set(backend KILN_BACKEND_${arg_BACKEND})
  if(NOT CMAKE_${${backend}_LANGUAGE}_COMPILER_LOADED)
    message(FATAL_ERROR "kiln_add_graph(${arg_TARGET}): BACKEND ${arg_BACKEND} generates ${${backend}_LANGUAGE} "
                        "sources: enable that language (project(... LANGUAGES ${${backend}_LANGUAGE}))")
  endif()
  if(NOT TARGET kiln::kiln)
    message(FATAL_ERROR "kiln_add_graph: no kiln::kiln executable target; call find_package(kiln) first")
  endif()
  if(NOT CMAKE_ASM_COMPILER_LOADED)
    # Languages enabled in a subdirectory (kiln's own, under add_subdirectory) stay there.
    message(FATAL_ERROR "kiln_add_graph(${arg_TARGET}): enable the ASM language here (large constants "
                        "are assembled from <prefix>_data.S): project(... LANGUAGES CXX ASM) or "
                        "enable_language(ASM) before kiln_add_graph (find_package(kiln) does it)")
  endif()
  _kiln_find_dependencies()
  if(${backend}_OPENMP AND NOT TARGET OpenMP::OpenMP_CXX)
    message(FATAL_ERROR "kiln_add_graph(${arg_TARGET}): generated code needs OpenMP for C++ (not found)")
  endif()
  if(${backend}_BLAS AND NOT TARGET kiln::openblas)
    message(FATAL_ERROR "kiln_add_graph(${arg_TARGET}): generated code needs OpenBLAS "
                        "(libopenblas and cblas.h not found; on Debian: apt install libopenblas-dev)")
  endif()

  # The prefix names the generated files, so it must be known now and be kept as is by kiln.
  if(arg_NAME)
    set(name "${arg_NAME}")
  else()
    string(MAKE_C_IDENTIFIER "${arg_TARGET}" name)
  endif()
  if(NOT name MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "kiln_add_graph(${arg_TARGET}): NAME \"${name}\" is not a C identifier")
  endif()

  get_filename_component(graph "${arg_GRAPH}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  set(out "${CMAKE_CURRENT_BINARY_DIR}/kiln/${arg_TARGET}")
  set(generated "${out}/${name}.h" "${out}/${name}${${backend}_SUFFIX}" "${out}/${name}_data.S")
  add_custom_command(
    OUTPUT ${generated}
    BYPRODUCTS "${out}/${name}_main.cpp"
    COMMAND kiln::kiln emit "${graph}" -o "${out}" --name "${name}" --backend ${arg_BACKEND}
            --depfile "${out}/${name}.d" ${arg_OPTIONS}
    DEPENDS "${graph}" kiln::kiln
    DEPFILE "${out}/${name}.d"
    COMMENT "kiln: generating ${name} from ${arg_GRAPH}"
    VERBATIM)

  set(type "")
  if(arg_STATIC)
    set(type STATIC)
  elseif(arg_SHARED)
    set(type SHARED)
  endif()
  add_library(${arg_TARGET} ${type} ${generated})
  target_include_directories(${arg_TARGET} PUBLIC "$<BUILD_INTERFACE:${out}>")
  target_compile_features(${arg_TARGET} PUBLIC cxx_std_17)
  target_link_libraries(${arg_TARGET} PUBLIC kiln::runtime)
  if(${backend}_OPENMP)
    target_link_libraries(${arg_TARGET} PRIVATE OpenMP::OpenMP_CXX)
  endif()
  if(${backend}_BLAS)
    target_link_libraries(${arg_TARGET} PRIVATE kiln::openblas)
  endif()
  # The backend's own libraries (-lOpenCL; CMake's CUDA language links the CUDA runtime itself)
  # and BLAS (CLBlast, cuBLAS), as `kiln compile` links them.
  if(NOT ${backend}_LANGUAGE STREQUAL "CUDA")
    target_link_libraries(${arg_TARGET} PRIVATE ${${backend}_LIBRARIES})
  endif()
  target_link_libraries(${arg_TARGET} PRIVATE ${${backend}_BLAS_LIBRARIES})
  # Linear algebra's libraries (a GPU backend's LAPACK and cuSOLVER): the graph is generated at
  # build time, so whether it has linear algebra is not known here; linked always (`kiln
  # compile` links them only into libraries with linear algebra).
  target_link_libraries(${arg_TARGET} PRIVATE ${${backend}_LINALG_LIBRARIES})
  if(${backend}_VECTOR_MATH AND TARGET kiln::sleef)
    target_link_libraries(${arg_TARGET} PRIVATE kiln::sleef)
  endif()
  if(${backend}_VECTOR_MATH AND TARGET kiln::libmvec)
    target_link_libraries(${arg_TARGET} PRIVATE kiln::libmvec)
  endif()
  # Only the <prefix>_* entry points are exported: several graphs link into one program.
  set_target_properties(${arg_TARGET} PROPERTIES
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    POSITION_INDEPENDENT_CODE ON)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    # As `kiln compile` builds it: math functions need not set errno, so loops vectorise.
    target_compile_options(${arg_TARGET} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fno-math-errno>)
  endif()
  if(arg_MARCH)
    target_compile_options(${arg_TARGET} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-march=${arg_MARCH}>)
  endif()
endfunction()
