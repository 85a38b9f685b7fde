// What a backend generates for a graph (or a bundle of graphs): NAME.h (the C ABI and the typed
// C++ wrapper), the source (NAME.cpp: kernels and host code), NAME_main.cpp (a standalone
// program reading and writing .npy files) and the large constants that NAME_data.S assembles
// in (codegen/constants.h). Deterministic: the same graph gives the same bytes.
#pragma once

#include <string>
#include <vector>

#include "codegen/constants.h"

namespace kiln {

struct GeneratedLibrary {
  std::string name;          ///< symbol prefix: the graph's name made a C identifier
  std::string backend;       ///< the backend that generated it (its toolchain builds it)
  std::string source_file;   ///< NAME plus the toolchain's suffix ("NAME.cpp")
  std::string header;        ///< NAME.h (empty for a bundle)
  std::string source;        ///< the source file's text
  std::string main_program;  ///< NAME_main.cpp (empty for a bundle)
  std::vector<DataBlob> blobs;  ///< large constants (NAME_data.S), in symbol order
  bool needs_blas = false;   ///< link BLAS
  /// The source compiles as two translation units, with -DKILN_PART=1 and -DKILN_PART=2, that
  /// a build may run in parallel and link together (or as one, without KILN_PART).
  bool two_part = false;
};

/// Entry points a library may export beside the C ABI's.
struct ExtraEntryPoints {
  bool nutpie_logp = false;  ///< NAME_nutpie_logp (codegen/nutpie.h; kiln compile --nutpie)
};

/// NAME_data.S of a library (codegen/constants.h's data_assembly).
inline std::string data_assembly(const GeneratedLibrary& lib, const std::string& data_dir) {
  return data_assembly(lib.name, lib.blobs, data_dir);
}

}  // namespace kiln
