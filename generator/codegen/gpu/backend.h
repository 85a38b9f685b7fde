// The GPU backends: opencl (OpenCL C kernels compiled at run time by the ICD's driver, host
// code in C++ over the ICD loader; runs here on PoCL) and cuda (the same kernels rendered as
// CUDA into a .cu source for nvcc). Both come from one kernel text (templates/gpu/) rendered
// with a dialect table (codegen/gpu/dialect.h); docs/gpu_backends.md describes the design and
// what is not done.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/backend.h"

namespace kiln {

/// The op names the GPU backends implement (the rest are refused at compile time by name).
std::vector<std::string> gpu_backend_ops();

/// The opencl backend, as the registry holds it.
std::shared_ptr<const Backend> make_opencl_backend();
/// The cuda backend: emits a .cu source (nvcc builds it; the driver refuses to).
std::shared_ptr<const Backend> make_cuda_backend();

}  // namespace kiln
