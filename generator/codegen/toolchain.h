// How a backend's generated sources are built: the source file's suffix and language, the
// compiler, and what the code needs from the system (OpenMP, SLEEF's vector math, BLAS). The
// driver turns it into commands (driver/build.h); CMake's kiln_add_graph reads the same facts
// from cmake/kilnBackends.cmake, which `kiln backends --cmake` writes from the registry.
#pragma once

#include <string>
#include <vector>

namespace kiln {

/// A backend's build recipe. The defaults are the cpp backend's.
struct Toolchain {
  std::string source_suffix = ".cpp";  ///< NAME.cpp (NAME.cu for a CUDA backend)
  std::string language = "CXX";        ///< the CMake language that compiles the source
  std::string compiler_env = "CXX";    ///< the environment variable naming the compiler
  std::string default_compiler = "c++";
  bool openmp = true;       ///< -fopenmp: the generated loops use OpenMP threads
  bool vector_math = true;  ///< SLEEF's vector math, when kiln was built with libsleef
  bool blas = true;         ///< OpenBLAS, linked into libraries whose code calls BLAS
  std::string libraries;    ///< linked into every library of the backend ("-lOpenCL"), space-separated
  /// Linked into libraries whose code calls BLAS, for a backend with its own ("-lclblast"),
  /// space-separated.
  std::string blas_libraries;
  /// Linked after those into libraries whose source has linear algebra (the `kg::linalg::`
  /// prologue): a GPU backend's LAPACK for its host path and cuSOLVER ("-lcusolver -lopenblas"),
  /// space-separated. Empty: blas_libraries (or OpenBLAS) covers it.
  std::string linalg_libraries;
  /// Why the driver cannot build this backend's sources (empty: it can). The source can still
  /// be emitted and built by the backend's own compiler. (A CUDA language backend is built by
  /// nvcc, driver/nvcc.h.)
  std::string no_driver_build;
};

}  // namespace kiln
