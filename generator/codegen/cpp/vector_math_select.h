// Which parts of templates/cpp/prologue/vector_math.hpp a generated source needs. Each of its
// KILN_VM_* lines declares one libm function's SIMD variants and defines eight forwarding
// wrappers; a graph that calls exp and log1p needs two of those lines, and compiling all
// nineteen costs a sizeable share of a small graph's compile time.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace kiln {

/// The functions that `code` (generated C++) may call as std::NAME or kiln_vm::NAME, directly
/// or through the kiln_scalar functions of runtime/include/kiln/runtime/scalar_math.hpp
/// (followed into their bodies, transitively).
std::set<std::string> called_math_functions(const std::vector<std::string>& code);

/// vector_math.hpp's body (`body`, as split for inclusion) without the KILN_VM_* lines of
/// functions that are not in `called`, and without the blocks of kiln's own kernels
/// (`#if ...  // KILN_VM_KERNELS(exp, log, ...)` to `#endif  // KILN_VM_KERNELS`) none of whose
/// functions is.
std::string select_vector_math(const std::string& body, const std::set<std::string>& called);

}  // namespace kiln
