// The compiler driver: builds generated sources with the system compiler into a shared
// library (and optionally a standalone program), through a content-addressed cache so an
// unchanged graph is never rebuilt. Safe when several kiln processes build at once: each
// builds in its own temporary folder and publishes with an atomic rename.
#pragma once

#include <string>
#include <vector>

#include "codegen/generated_library.h"
#include "codegen/toolchain.h"
#include "ir/error.h"

namespace kiln {

struct BuildOptions {
  std::string cxx;                    ///< compiler; empty: the toolchain's variable ($CXX; $CUDACXX for cuda), else its default
  std::string march = "native";       ///< -march value; "none" or empty: the compiler's default
  /// x86-64 levels (x86-64, x86-64-v2, -v3, -v4) to compile the graph for, all in one library
  /// that picks the first one the CPU supports when loaded (the last is the fallback). Replaces
  /// `march`. Single-graph libraries only.
  std::vector<std::string> march_variants;
  std::vector<std::string> cxxflags;  ///< extra flags, after kiln's
  std::string opt_level = "-O3";
  /// -ffast-math: faster math (libmvec's vector functions, reassociated sums) at the cost of IEEE
  /// semantics: NaN and inf may be mishandled, signed zeros ignored, results depend on order.
  bool fast_math = false;
  /// SLEEF's 1-ULP vector functions for every vectorised math call, instead of the default mix
  /// (libmvec's; where libmvec is less accurate than NumPy, kiln's own float32 kernels, or
  /// SLEEF's for targets without FMA): about half the speed.
  bool math_1ulp = false;
  /// The GPU architectures of the cuda backend (`sm_NN`: machine code, `compute_NN`: PTX), checked
  /// by driver/nvcc.h; empty: sm_75, sm_80, sm_90 and compute_90.
  std::vector<std::string> cuda_arch;
  bool use_cache = true;
  std::string cache_dir;              ///< empty: $XDG_CACHE_HOME/kiln or ~/.cache/kiln
};

struct BuildResult {
  std::string library_path;  ///< the built libNAME.so
  std::string program_path;  ///< the standalone program (when asked for)
  bool cache_hit = false;
  std::string key;           ///< the cache key (sha256 of sources, flags, compiler identity)
  /// On a miss: why (which part of the key changed since the last build of this library name,
  /// driver/build_key.h), for `kiln compile -v`.
  std::string miss_reason;
  /// What the compiler printed while building the library (warnings; with `-Xptxas -v` in
  /// nvcc's flags, ptxas's report of every kernel, driver/nvcc.h); empty on a cache hit.
  std::string compiler_output;
};

/// The system compiler failed on generated code. The message holds its output and where the
/// generated source was kept.
class CompileFailure : public UserError {
 public:
  using UserError::UserError;
};

/// Builds libNAME.so (and NAME, the standalone program, when `program` is true) with the
/// toolchain of the backend that generated `lib`: the C++ compiler, or nvcc for CUDA sources
/// (driver/nvcc.h; no standalone program there, since it passes host tensors).
BuildResult build_library(const GeneratedLibrary& lib, const BuildOptions& options, bool program = false);

/// The compiler a build would use (`toolchain`: the backend's; the default is the cpp one's).
std::string resolve_compiler(const BuildOptions& options, const Toolchain& toolchain = {});
/// The cache folder a build would use.
std::string resolve_cache_dir(const BuildOptions& options);
/// The folder of the cache entry with this key (BuildResult::key): libNAME.so, NAME.h, NAME.cpp
/// and, when built with the program, NAME_main.cpp and NAME.
std::string cache_entry_dir(const BuildOptions& options, const std::string& key);
/// What identifies the compiler a build would use (its `--version` text), as cache keys hold it.
std::string compiler_identity(const BuildOptions& options);
/// Compiler flags for generated sources of a backend with `toolchain` (also what
/// `kiln_add_graph` uses): OpenMP and SLEEF's vector math when the toolchain uses them.
std::vector<std::string> generated_code_flags(const BuildOptions& options, const Toolchain& toolchain = {});
/// Linker flags for a generated library (libm, OpenBLAS when it calls BLAS, SLEEF's vector math),
/// per the toolchain of the backend that generated it.
std::vector<std::string> generated_code_libraries(const GeneratedLibrary& lib, const BuildOptions& options);
/// Whether this kiln links generated code with SLEEF's libsleef, found when kiln was built
/// (vector_math.hpp: SLEEF's 1-ULP functions for atan2, powf, float32 exp/log/sin/cos where
/// kiln's own kernels do not apply (no FMA, AVX-512), and for everything with --math-1ulp).
bool have_sleef_vector_math();
/// Whether glibc's libmvec (>= 2.35, x86-64) was found when kiln was built: then math calls in
/// vectorised loops run libmvec's vector functions by default (vector_math.hpp).
bool have_libmvec_vector_math();
/// Where vectorised math calls of generated code go with these options, in words (for
/// `kiln --version` and `kiln compile --stats`), e.g. "libmvec + SLEEF (...)".
std::string vector_math_path(const BuildOptions& options);

}  // namespace kiln
