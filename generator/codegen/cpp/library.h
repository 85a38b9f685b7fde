// The C++ backend's output for a graph: NAME.h (C ABI + typed C++ wrapper), NAME.cpp (the
// kernels, one block per node, plus the shape function), and NAME_main.cpp (a standalone
// program reading and writing .npy files). Deterministic: the same graph gives the same bytes.
#pragma once

#include <string>

#include "ir/fgraph.h"

namespace kiln {

struct CppLibrary {
  std::string name;          ///< symbol prefix: the graph's name made a C identifier
  std::string header;        ///< NAME.h
  std::string source;        ///< NAME.cpp
  std::string main_program;  ///< NAME_main.cpp
  bool needs_blas = false;   ///< link OpenBLAS
};

/// Generates the sources. `name` overrides the symbol prefix (sanitised either way).
/// Throws NotImplementedError naming the first op the backend lacks.
CppLibrary generate_cpp_library(const FunctionGraph& fg, const std::string& name = "");

}  // namespace kiln
