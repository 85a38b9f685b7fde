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
/// Join: each input copied into its region of the output (converted by a copy kernel of the
/// node when its dtype differs).
NodeCode gpu_emit_join(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
/// AllocEmpty: the C++ backend's lengths, then a zero fill on the device.
NodeCode gpu_emit_alloc_empty(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
/// Split: the C++ backend's checks of the sizes (read from the device), each piece copied out.
NodeCode gpu_emit_split(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
/// MakeVector: one work-item writes each 0-d input, converted, into the vector.
NodeCode gpu_emit_make_vector(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
/// Reshape: the C++ backend's shape checks, then a copy in C order (the copy kernels).
NodeCode gpu_emit_reshape(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
/// CheckAndRaise/Assert: a kernel per condition reporting through the device status word.
NodeCode gpu_emit_check_and_raise(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
/// IncSubtensor/SetSubtensor: a copy of x, then a kernel updating the indexed region.
NodeCode gpu_emit_inc_subtensor(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
/// The row gather (AdvancedSubtensor1, and AdvancedSubtensor of one integer vector on axis 0)
/// and the deterministic row scatter (AdvancedIncSubtensor1, AdvancedIncSubtensor of that
/// form); indices are checked through the device status word (emit_indexing.cpp).
NodeCode gpu_emit_advanced_subtensor1(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
NodeCode gpu_emit_advanced_subtensor(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
NodeCode gpu_emit_advanced_inc_subtensor1(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
NodeCode gpu_emit_advanced_inc_subtensor(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
/// Softmax and LogSoftmax (any axis, or every element) and SoftmaxGrad: one work-group per row,
/// its maximum and sums reduced in group-local memory (emit_softmax.cpp).
NodeCode gpu_emit_softmax(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
NodeCode gpu_emit_softmax_grad(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
/// Argmax over any axes: one work-group per output element, first maximum, NaN wins.
NodeCode gpu_emit_argmax(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
/// CumOp (add, mul; any axis or flattened): a chunked parallel scan (emit_cumulative.cpp).
NodeCode gpu_emit_cumop(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
/// Dot, Dot22, Dot22Scalar, BatchedDot, Blockwise of Dot/Dot22, Gemv, Gemm, Ger: the C++
/// backend's host code over device tensors, the device's BLAS (CLBlast, cuBLAS) for float
/// operands it can read in place, else the node's tiled kernel (emit_product.cpp).
NodeCode gpu_emit_product(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
/// The linear-algebra ops the GPU backends run (by the host path), by Op::name.
const std::vector<std::string>& gpu_linalg_ops();
/// Whether `op` (or a Blockwise's core op) is one of them.
bool gpu_emits_linalg(const Op& op);
/// Those ops and Blockwise of them: inputs read to host memory, the C++ backend's LAPACK code
/// run there (the same checks, statuses and messages), outputs uploaded (emit_linalg.cpp).
NodeCode gpu_emit_linalg(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
/// Whether `op` (or a Blockwise's core op) is KroneckerProduct or BlockDiagonal.
bool gpu_emits_structure(const Op& op);
/// KroneckerProduct, BlockDiagonal and Blockwise of them: device kernels writing each output
/// element once, operands converted to the output's dtype (emit_structure.cpp).
NodeCode gpu_emit_structure(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
/// Shape and Shape_i (lengths written by kg::put_int64), AllocDiag (a zero fill and a copy into
/// the diagonal), FillDiagonal/FillDiagonalOffset and Repeat: the C++ backend's host code with
/// device fills (emit_shape_ops.cpp).
NodeCode gpu_emit_shape(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
NodeCode gpu_emit_shape_i(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
NodeCode gpu_emit_alloc_diag(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
NodeCode gpu_emit_fill_diagonal(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
NodeCode gpu_emit_repeat(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
/// SortOp and ArgSortOp (a bitonic sort of tiles in local memory, then merge passes; stable,
/// NaN last) and SearchsortedOp (a binary search per value) (emit_sort.cpp).
NodeCode gpu_emit_sort(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
NodeCode gpu_emit_searchsorted(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
/// Nonzero and Unique: data-dependent output lengths, one number read back per call; elements
/// selected in order by a count, a scan of chunk totals and a write (emit_select.cpp).
NodeCode gpu_emit_nonzero(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
NodeCode gpu_emit_unique(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
/// Nonzero's kernels `name`_count/_offsets/_write for a rank-`rank` tensor of storage type `T`
/// (the coordinates of its nonzero elements; also a boolean mask index's true elements).
std::string gpu_nonzero_kernels(const GpuDialect& d, const std::string& name, const std::string& comment,
                                const std::string& T, int rank);
/// IfElse: the condition read to the host once per call (kg::read_condition, shared with the
/// `if` around each branch's nodes), the branch taken copied to the outputs (emit_shape_ops.cpp).
NodeCode gpu_emit_ifelse(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
/// Scan, driven from the host: the C++ backend's loop over device buffers, its step function
/// (the inner graph's kernels) queued once per step; a while loop reads its condition after
/// each step (emit_shape_ops.cpp).
NodeCode gpu_emit_scan(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
/// `a < b` in NumPy's sort order for dtype `dt` as the GPU dialects spell it (NaN last).
std::string gpu_key_less(DType dt, const std::string& a, const std::string& b);
/// The template data of templates/gpu/sort.mustache for kernels `name`_tile/_merge sorting keys
/// of type `key` and writing `out_type` (the caller adds the key order, the loads and the rows).
TemplateData gpu_sort_data(const GpuDialect& d, const std::string& name, const std::string& comment,
                           const std::string& key, const std::string& out_type);
/// Statements reducing `a[0, gs)` of type `A` into `a[0]` with the device function `combine` in
/// a work-group tree (local memory and barriers; CUDA ends with warp shuffles). The kernel names
/// its work-item `tid` and the group size `gs` (a power of two).
std::string gpu_group_tree(const GpuDialect& d, const std::string& combine, const std::string& A, const std::string& a);
/// RandomVariable: Philox4x64-10 streams, one per output element, parameters checked through
/// the device status word, next_rng one PCG64 step on (emit_random.cpp; docs/random.md).
NodeCode gpu_emit_random_variable(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
/// Whether the GPU backends draw the distribution named `dist_name` (RvDistribution::name).
bool gpu_draws_random_variable(std::string_view dist_name);
/// DirichletRV, CategoricalRV, MultinomialRV and MvNormalRV (draws with core dimensions): one
/// work-item per batch element on its own Philox stream (emit_random.cpp).
NodeCode gpu_emit_core_random_variable(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
/// Whether the GPU backends draw the RandomVariable with core dimensions `op_name`.
bool gpu_draws_core_random_variable(std::string_view op_name);
/// PermutationRV: one work-item and one Philox stream per batch element, a Fisher-Yates shuffle
/// of its rows (emit_random.cpp).
NodeCode gpu_emit_permutation(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
/// ChoiceWithoutReplacement: one work-item draws the indices (Floyd's sampling and a shuffle, or
/// successive draws from p) into the node's workspace, then gathers (emit_random.cpp).
NodeCode gpu_emit_choice_without_replacement(const NodeEmitContext& c, const GpuDialect& d, const std::string& backend);
/// The strided copy kernels every device source has (kg::copy_tensor), and the kernel writing
/// int64 values passed as arguments (kg::put_int64).
std::string gpu_copy_kernels(const GpuDialect& d);

}  // namespace kiln
