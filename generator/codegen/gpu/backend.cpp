#include "codegen/gpu/backend.h"

#include <algorithm>

#include "codegen/c_types.h"
#include "codegen/cpp/backend.h"
#include "codegen/cpp/emitters.h"
#include "codegen/gpu/emitters.h"
#include "codegen/gpu/special_select.h"
#include "ir/error.h"
#include "ops/random.h"
#include "ops/random_core.h"

namespace kiln {

namespace {

// The op table of a GPU dialect: kernels for Elemwise, every CAReduce, the fill ops (Alloc,
// ARange, Eye, Tri, AllocEmpty), Join, Split, Reshape, MakeVector, checks (through the device status word),
// indexing, the softmax family, Argmax, CumOp, the matrix products, KroneckerProduct and
// BlockDiagonal; DimShuffle, Subtensor and SpecifyShape are views (host metadata over the same
// buffer: the cpp backend's emitters work on device tensors).
std::vector<OpEmitter> gpu_table(const std::string& backend) {
  const GpuDialect& d = GpuDialect::get(backend);
  const EmitFn elemwise = [&d, backend](const NodeEmitContext& c) { return gpu_emit_elemwise(c, d, backend); };
  const EmitFn reduce = [&d, backend](const NodeEmitContext& c) { return gpu_emit_careduce(c, d, backend); };
  std::vector<OpEmitter> table = {{"Elemwise", elemwise, false},
                                  {"DimShuffle", [](const NodeEmitContext& c) { return NodeCode(emit_dimshuffle(c)); }, true}};
  for (const char* op : {"Sum", "Prod", "ProdWithoutZeros", "Max", "Min", "All", "Any", "CAReduce"})
    table.push_back({op, reduce, false, false, true});
  const auto with_dialect = [&d, backend](NodeCode (*emit)(const NodeEmitContext&, const GpuDialect&, const std::string&)) {
    return EmitFn([&d, backend, emit](const NodeEmitContext& c) { return emit(c, d, backend); });
  };
  table.push_back({"Alloc", with_dialect(gpu_emit_alloc), false});
  table.push_back({"ARange", with_dialect(gpu_emit_arange), false});
  table.push_back({"Eye", with_dialect(gpu_emit_eye_like), false});
  table.push_back({"Tri", with_dialect(gpu_emit_eye_like), false});
  table.push_back({"AllocEmpty", with_dialect(gpu_emit_alloc_empty), false});
  table.push_back({"Join", with_dialect(gpu_emit_join), false});
  table.push_back({"Split", with_dialect(gpu_emit_split), false});
  table.push_back({"Reshape", with_dialect(gpu_emit_reshape), false});
  table.push_back({"MakeVector", with_dialect(gpu_emit_make_vector), false});
  table.push_back({"Shape", with_dialect(gpu_emit_shape), false});
  table.push_back({"Shape_i", with_dialect(gpu_emit_shape_i), false});
  table.push_back({"ExtractDiag", [](const NodeEmitContext& c) { return NodeCode(emit_extract_diag(c)); }, true});
  table.push_back({"BroadcastTo", [](const NodeEmitContext& c) { return NodeCode(emit_broadcast_to(c)); }, true});
  table.push_back({"AllocDiag", with_dialect(gpu_emit_alloc_diag), false});
  table.push_back({"FillDiagonal", with_dialect(gpu_emit_fill_diagonal), false});
  table.push_back({"FillDiagonalOffset", with_dialect(gpu_emit_fill_diagonal), false});
  table.push_back({"Repeat", with_dialect(gpu_emit_repeat), false, false, true});
  table.push_back({"SortOp", with_dialect(gpu_emit_sort), false, false, true});
  table.push_back({"ArgSortOp", with_dialect(gpu_emit_sort), false, false, true});
  table.push_back({"SearchsortedOp", with_dialect(gpu_emit_searchsorted), false});
  table.push_back({"Nonzero", with_dialect(gpu_emit_nonzero), false, false, true});
  table.push_back({"Unique", with_dialect(gpu_emit_unique), false, false, true});
  // IfElse driven from the host: its condition read once, only the branch taken queued.
  table.push_back({"IfElse", with_dialect(gpu_emit_ifelse), false});
  // Scan driven from the host: a loop queueing the step function's kernels, buffers in a slot.
  table.push_back({"Scan", with_dialect(gpu_emit_scan), false, false, true});
  // SpecifyShape is a view whose checks read the requested lengths from the device (kg::read_int).
  table.push_back({"SpecifyShape", [](const NodeEmitContext& c) { return NodeCode(emit_specify_shape(c)); }, true});
  // Checks report through the device status word; the output is a view of input 0.
  table.push_back({"CheckAndRaise", with_dialect(gpu_emit_check_and_raise), true});
  table.push_back({"Assert", with_dialect(gpu_emit_check_and_raise), true});
  // pytensor.gradient's ops pass their input through (host metadata, as on the cpp backend).
  for (const char* op : {"ZeroGrad", "DisconnectedGrad", "UndefinedGrad", "GradClip", "GradScale"})
    table.push_back({op, [](const NodeEmitContext& c) { return NodeCode(emit_pass_through(c)); }, true});
  // Subtensor is a view (the cpp backend's emitter; index scalars are read by kg::read_index).
  table.push_back({"Subtensor", [](const NodeEmitContext& c) { return NodeCode(emit_subtensor(c)); }, true});
  table.push_back({"IncSubtensor", with_dialect(gpu_emit_inc_subtensor), false});
  // Row gather and scatter; other advanced indices are refused by name at compile time.
  table.push_back({"AdvancedSubtensor1", with_dialect(gpu_emit_advanced_subtensor1), false});
  table.push_back({"AdvancedSubtensor", with_dialect(gpu_emit_advanced_subtensor), false, false, true});
  table.push_back({"AdvancedIncSubtensor1", with_dialect(gpu_emit_advanced_inc_subtensor1), false});
  table.push_back({"AdvancedIncSubtensor", with_dialect(gpu_emit_advanced_inc_subtensor), false, false, true});
  // Row-block kernels: one work-group per row.
  table.push_back({"Softmax", with_dialect(gpu_emit_softmax), false});
  table.push_back({"LogSoftmax", with_dialect(gpu_emit_softmax), false});
  table.push_back({"SoftmaxGrad", with_dialect(gpu_emit_softmax_grad), false});
  table.push_back({"Argmax", with_dialect(gpu_emit_argmax), false});
  // A chunked parallel scan; the chunk totals live in the node's workspace slot.
  table.push_back({"CumOp", with_dialect(gpu_emit_cumop), false, false, true});
  // RandomVariables through Philox4x64-10 streams (the distributions emit_random.cpp draws).
  for (const RvDistribution& rv : rv_distributions())
    if (gpu_draws_random_variable(rv.name)) table.push_back({rv.op, with_dialect(gpu_emit_random_variable), false});
  for (const RvCoreDistribution& rv : rv_core_distributions())
    if (gpu_draws_core_random_variable(rv.op))  // MvNormal's factors live in the node's workspace slot
      table.push_back({rv.op, with_dialect(gpu_emit_core_random_variable), false, false,
                       rv.kind == kiln_random::core::Kind::MvNormal});
  table.push_back({"PermutationRV", with_dialect(gpu_emit_permutation), false});
  // ChoiceWithoutReplacement's indices (and Floyd's set or p's weights) in its workspace slot.
  table.push_back({"ChoiceWithoutReplacement", with_dialect(gpu_emit_choice_without_replacement), false, false, true});
  // Matrix products: the device's BLAS (CLBlast, cuBLAS; linked when a graph has one) for
  // float operands it reads in place, else a tiled kernel of the node.
  for (const char* op : {"Dot", "Dot22", "Dot22Scalar", "BatchedDot", "Gemv", "CGemv", "Gemm", "Ger", "CGer"})
    table.push_back({op, with_dialect(gpu_emit_product), false, true});
  // Linear algebra by the host path (emit_linalg.cpp): LAPACK on host copies, results uploaded.
  for (const std::string& op : gpu_linalg_ops()) table.push_back({op, with_dialect(gpu_emit_linalg), false, true, true});
  // Structured matrices built on the device: one work-item per output element (emit_structure.cpp).
  table.push_back({"KroneckerProduct", with_dialect(gpu_emit_structure), false});
  table.push_back({"BlockDiagonal", with_dialect(gpu_emit_structure), false});
  // A Blockwise is a batched product, structured matrix or linear-algebra op.
  table.push_back({"Blockwise",
                   [&d, backend](const NodeEmitContext& c) {
                     const Op& op = c.node().op();
                     if (gpu_emits_structure(op)) return gpu_emit_structure(c, d, backend);
                     return gpu_emits_linalg(op) ? gpu_emit_linalg(c, d, backend) : gpu_emit_product(c, d, backend);
                   },
                   false, true, true});
  return table;
}

// Every op of the cpp backend that the GPU table lacks, with the reason (docs/op_coverage.md).
std::vector<UnsupportedOp> gpu_unsupported(const std::vector<OpEmitter>& table) {
  std::vector<UnsupportedOp> out = {
      {"OpFromGraph", "inlined before code generation (rewrite/inline_op_from_graph.h), so it never reaches a backend"}};
  for (const OpEmitter& e : cpp_backend_table()) {
    if (std::any_of(table.begin(), table.end(), [&](const OpEmitter& g) { return g.op_name == e.op_name; })) continue;
    if (find_rv_distribution(e.op_name)) {
      out.push_back({e.op_name, "no GPU sampler on the Philox streams yet (docs/random.md, \"On the GPU\")"});
      continue;
    }
    if (e.op_name == "Eig") {
      out.push_back({e.op_name, "its results are complex, and the GPU backends have no complex dtype (docs/gpu_backends.md, "
                                "\"Linear algebra\")"});
      continue;
    }
    out.push_back({e.op_name, "no GPU kernel yet (docs/gpu_backends.md lists what the GPU backends do)"});
  }
  return out;
}

// What both GPU backends share: the table, the shape function on the host (the cpp backend's
// emitters over input shapes), device tensor types.
std::shared_ptr<Backend> gpu_backend(const std::string& name) {
  auto b = std::make_shared<Backend>();
  b->name = name;
  b->ops = gpu_table(name);
  b->unsupported = gpu_unsupported(b->ops);
  b->unsupported_dtypes = {{DType::Float16, "no half-precision kernels yet; compute in float32 or use the cpp backend"},
                           {DType::Complex64, "no complex kernels yet; use the cpp backend"},
                           {DType::Complex128, "no complex kernels yet; use the cpp backend"}};
  b->tensor_type = [](const Variable& v) {
    return "kg::DTensor<" + ctype(v.dtype()) + ", " + std::to_string(v.ndim()) + ">";
  };
  auto shapes = std::make_shared<Backend>(*make_cpp_backend());
  shapes->name = name + " (shape function)";
  shapes->template_values = {{"bind_input", "kg::bind_input_shape"}, {"bind_input_values", "kg::bind_input_host"}};
  // The shape function keeps a Reshape or Split whose lengths come from a shape vector's values
  // (read to the host by bind_input_shape); its data is not on the host, so it computes lengths
  // only.
  for (OpEmitter& e : shapes->ops) {
    if (e.op_name == "Reshape")
      e.emit = [](const NodeEmitContext& c) {
        return NodeCode(emit_reshape(c, "// Lengths only: the shape function has no data to copy.\n"));
      };
    if (e.op_name == "Split") e.emit = [](const NodeEmitContext& c) { return NodeCode(emit_split_lengths(c)); };
    // A matrix product reaches the shape function only inside a Scan it runs on the host (a
    // while loop's lengths are known by running it), and a GPU library has no host BLAS.
    if (e.needs_blas)
      e.emit = [](const NodeEmitContext& c) -> NodeCode {
        throw NotImplementedError("`" + c.node().op().str() +
                                  "` in a while loop's step on a GPU backend: the shape function runs such a Scan on the "
                                  "host to learn its lengths, and a GPU library has no host BLAS");
      };
  }
  b->shape_backend = shapes;
  b->impl_template = "templates/cpp/graph_impl.cpp.mustache";
  b->function_template = "templates/gpu/function.mustache";
  b->template_values = {{"context_create", "kg::create_device_context"},
                        {"context_destroy", "kg::destroy_device_context"},
                        {"read_condition", "kg::read_condition"},
                        {"extra_exports", "templates/" + name + "/extra_exports.mustache"}};
  b->prologue = {"runtime/include/kiln/runtime/half.hpp", "runtime/include/kiln/runtime/scalar_math.hpp",
                 "templates/cpp/prologue/runtime.hpp",
                 "templates/cpp/prologue/indexing.hpp", "templates/gpu/prologue/device_status.hpp",
                 "templates/" + name + "/prologue/device_runtime.hpp", "templates/gpu/prologue/device_reads.hpp"};
  // The products' host side, only where a graph has one (its BLAS library is linked then); the
  // cuda backend's device linear algebra (device_linalg.hpp: SolveTriangular's trsm) takes the
  // cuBLAS handle too.
  auto blas = [name](const std::vector<std::string>& code) {
    auto has = [&](const char* marker) {
      return std::any_of(code.begin(), code.end(), [&](const std::string& c) { return c.find(marker) != std::string::npos; });
    };
    const bool product = has("kg::product<");
    std::vector<std::string> files;
    if (product || (name == "cuda" && has("kg::cusolver::")))
      files.push_back("templates/" + name + "/prologue/device_blas.hpp");
    if (product) files.push_back("templates/gpu/prologue/device_blas.hpp");
    return files;
  };
  b->optional_prologue = {{"kg::product<", {}, blas, "", ""}};
  // Linear algebra's host path: the C++ backend's LAPACK code over host copies (OpenBLAS linked).
  b->optional_prologue.push_back({"kg::linalg::",
                                  {"templates/gpu/prologue/host_linalg.hpp", "runtime/include/kiln/runtime/lapack.hpp",
                                   "runtime/include/kiln/runtime/linalg_kernels.hpp", "templates/cpp/prologue/linalg.hpp"},
                                  nullptr,
                                  "",
                                  ""});
  // The cuda backend's device linear algebra (cuSOLVER), after the host path's prologue.
  if (name == "cuda")
    b->optional_prologue.push_back({"kg::cusolver::", {"templates/cuda/prologue/device_linalg.hpp"}, nullptr, "", ""});
  b->optional_prologue.push_back({"kg::scan::", {"templates/cpp/prologue/scan.hpp", "templates/gpu/prologue/device_scan.hpp"}, nullptr, "", ""});
  const GpuDialect& d = GpuDialect::get(name);
  b->device_prelude = d.prelude() + "\n" + gpu_copy_kernels(d);
  b->device_functions = [qualifier = d["special_fn"], mulhi = d["mulhi64"]](const std::vector<std::string>& code) {
    return gpu_special_functions(code, qualifier) + gpu_random_functions(code, mulhi);
  };
  b->scalar_classes = [name](const std::string& op) {
    // A ScalarLoop is written by the shared scalar emitter as a loop over its inner ops.
    if (op == "ScalarLoop") return std::vector<std::string>{};
    std::vector<std::string> classes = gpu_scalar_table(name).classes(op);
    if (classes.empty()) classes = {"no: not spelled for the GPU dialects yet (templates/gpu/scalar_ops.txt)"};
    return classes;
  };
  b->toolchain.openmp = false;
  b->toolchain.vector_math = false;
  b->toolchain.blas = false;
  return b;
}

}  // namespace

std::vector<std::string> gpu_backend_ops() {
  std::vector<std::string> out;
  for (const OpEmitter& e : gpu_table("opencl")) out.emplace_back(e.op_name);
  return out;
}

std::shared_ptr<const Backend> make_opencl_backend() {
  auto b = gpu_backend("opencl");
  b->description = "OpenCL C kernels built at run time over the ICD loader (PoCL on the CPU here); device tensors are "
                   "kDLOpenCL cl_mem buffers";
  b->templates = "templates/opencl";
  b->kernels_in_program = true;
  b->toolchain.libraries = "-lOpenCL";
  // CLBlast for products; OpenBLAS (LAPACK) for linear algebra's host path.
  b->toolchain.blas_libraries = "-lclblast";
  b->toolchain.linalg_libraries = "-lopenblas";
  return b;
}

std::shared_ptr<const Backend> make_cuda_backend() {
  auto b = gpu_backend("cuda");
  b->description = "CUDA kernels in a .cu source for nvcc (the same kernel templates as opencl); device tensors are "
                   "kDLCUDA pointers";
  b->templates = "templates/cuda";
  b->toolchain.source_suffix = ".cu";
  b->toolchain.language = "CUDA";
  b->toolchain.compiler_env = "CUDACXX";
  b->toolchain.default_compiler = "nvcc";
  b->toolchain.libraries = "-lcudart";
  // cuBLAS for products and SolveTriangular, cuSOLVER for Cholesky, Solve, CholeskySolve,
  // MatrixInverse, Det and SLogDet, OpenBLAS (LAPACK) for linear algebra's host path.
  b->toolchain.blas_libraries = "-lcublas";
  b->toolchain.linalg_libraries = "-lcusolver -lopenblas";
  return b;
}

}  // namespace kiln
