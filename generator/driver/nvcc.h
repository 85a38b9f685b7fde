// Building the cuda backend's sources with nvcc: which nvcc, for which GPU architectures, with
// which flags (one list, used by the driver, `kiln compile --backend cuda`, and by the test that
// builds every conformance graph's kernels), and reading ptxas's report of each kernel's
// registers, shared memory and spills (`-Xptxas -v`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "driver/build.h"

namespace kiln {

/// The architectures `kiln compile --backend cuda` builds for by default: machine code for
/// Turing (sm_75, the oldest CUDA 13 supports), Ampere (sm_80) and Hopper (sm_90), and PTX for
/// compute_90, which the driver compiles at load time on newer GPUs.
const std::vector<std::string>& default_cuda_architectures();

/// Checks --cuda-arch entries and returns them in order without repeats: each is `sm_NN`
/// (machine code) or `compute_NN` (PTX), NN two or three digits, optionally followed by `a` or
/// `f` (sm_90a, sm_100f). Anything else — spaces, commas inside an entry, options — is refused
/// with a UserError naming the entry: no unchecked text reaches nvcc's command line. Empty: the
/// defaults.
std::vector<std::string> checked_cuda_architectures(const std::vector<std::string>& architectures);

/// nvcc's -gencode flags for checked architectures, one per virtual architecture (PTX is made
/// once for each): `sm_NN` → arch=compute_NN,code=sm_NN; `compute_NN` → code=compute_NN; both →
/// arch=compute_NN,code=[sm_NN,compute_NN].
std::vector<std::string> nvcc_gencode_flags(const std::vector<std::string>& checked_architectures);

/// The flags nvcc compiles a generated .cu into a shared library with (before the inputs):
/// C++17, host code at `options.opt_level`, position-independent code with hidden symbols (the
/// NAME_* entry points are exported by KILN_EXPORT), the shared CUDA runtime (the one the
/// caller's streams and pointers belong to), the -gencode flags of `options.cuda_arch` (or the
/// defaults), --use_fast_math with `options.fast_math`, then `options.cxxflags`.
std::vector<std::string> nvcc_library_flags(const BuildOptions& options);

/// The nvcc a cuda build uses: `options.cxx`, else $CUDACXX, else `nvcc` on PATH, else
/// /usr/local/cuda/bin/nvcc when it exists; "" when none of them is an executable.
std::string find_nvcc(const BuildOptions& options = {});

/// One function ptxas compiled, from its `-v` report.
struct PtxasFunction {
  std::string name;  ///< the kernel's name (demangled to its identifier)
  std::string arch;  ///< "sm_75"
  int registers = 0;
  std::int64_t shared_bytes = 0;  ///< static shared memory
  std::int64_t stack_bytes = 0;   ///< stack frame (local memory)
  std::int64_t spill_store_bytes = 0;
  std::int64_t spill_load_bytes = 0;
};

/// The entry functions (kernels) in nvcc's output with `-Xptxas -v`, in the order ptxas reports
/// them (per architecture).
std::vector<PtxasFunction> parse_ptxas_report(const std::string& nvcc_output);

}  // namespace kiln
