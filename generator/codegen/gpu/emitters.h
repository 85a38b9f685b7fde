// The emitters of the GPU backends (opencl, cuda): each renders its node's kernels from the
// shared templates/gpu/*.mustache with a dialect (codegen/gpu/dialect.h) and returns them with
// the host code that launches them (kg::launch of the backend's device runtime).
#pragma once

#include "codegen/backend.h"
#include "codegen/cpp/scalar_code.h"
#include "codegen/gpu/dialect.h"

namespace kiln {

/// The scalar-op spellings of the GPU dialects (templates/gpu/scalar_ops.txt), naming
/// `backend` in what it refuses.
const ScalarTable& gpu_scalar_table(const std::string& backend);

/// Elemwise (fused Composites included): a contiguous kernel and a strided/broadcasting one.
NodeCode gpu_emit_elemwise(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
/// Every CAReduce: a group tree reduction into partials, then one group per output.
NodeCode gpu_emit_careduce(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
/// Alloc (the value broadcast by the copy kernels), ARange and Eye/Tri (fill kernels); their
/// shapes are computed on the host from input values read off the device (emit_fill.cpp).
NodeCode gpu_emit_alloc(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
NodeCode gpu_emit_arange(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
NodeCode gpu_emit_eye_like(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
/// Join of inputs of the output's dtype: each copied into its region of the output.
NodeCode gpu_emit_join(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
/// The strided copy kernels every device source has (kg::copy_tensor).
std::string gpu_copy_kernels(const GpuDialect& d);

}  // namespace kiln
