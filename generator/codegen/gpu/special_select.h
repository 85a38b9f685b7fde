// Which of the GPU special functions (templates/gpu/special_math.h: erfinv, erfcinv, psi, i0,
// gammainc, ...) a generated source's device code embeds: only the pieces whose kiln_NAME_double
// or kiln_NAME_float its kernels call, after the pieces they need. Kernels that call none get
// none, so their source is byte for byte what it was without them.
#pragma once

#include <string>
#include <vector>

namespace kiln {

/// The device code of the special-function pieces `device_code` (kernel text) calls, each after
/// the pieces it needs, in the file's order, below the file's header comment and the definition
/// of KILN_SPECIAL_FN as `qualifier` (the dialect's special_fn row); empty when it calls none.
std::string gpu_special_functions(const std::vector<std::string>& device_code, const std::string& qualifier);

/// The random-variable functions (templates/gpu/random_math.h: Philox4x64-10 and the samplers)
/// when `device_code` calls one (kiln_rv_ or kiln_philox_), after the definition of KILN_MULHI64
/// as `mulhi` (the dialect's mulhi64 row); empty otherwise, so other sources are unchanged.
std::string gpu_random_functions(const std::vector<std::string>& device_code, const std::string& mulhi);

}  // namespace kiln
