#include "codegen/cpp/backend.h"

#include "codegen/cpp/emit_control_flow.h"
#include "codegen/cpp/emitters.h"
#include "codegen/cpp/scalar_code.h"
#include "codegen/cpp/special_math_select.h"
#include "codegen/cpp/vector_math_select.h"
#include "ops/random.h"
#include "ops/random_core.h"

namespace kiln {

namespace {

// The table plus one entry per RandomVariable class (emit_random.cpp).
std::vector<OpEmitter> with_random_variables(std::vector<OpEmitter> table) {
  for (const auto& d : rv_distributions()) table.push_back({d.op, emit_random_variable, false});
  // MvNormalRV factors its covariance with LAPACK (OpenBLAS): the library links it.
  for (const auto& d : rv_core_distributions())
    table.push_back({d.op, emit_core_random_variable, false, d.kind == kiln_random::core::Kind::MvNormal});
  table.push_back({"PermutationRV", emit_permutation, false});
  table.push_back({"ChoiceWithoutReplacement", emit_choice_without_replacement, false});
  return table;
}

}  // namespace

const std::vector<OpEmitter>& cpp_backend_table() {
  static const std::vector<OpEmitter> table = with_random_variables({
      {"Elemwise", emit_elemwise, false},
      {"DimShuffle", emit_dimshuffle, true},
      {"Shape", emit_shape, false},
      {"Shape_i", emit_shape_i, false},
      {"IfElse", emit_ifelse, false},
      {"Scan", emit_scan, false, false, true},
      {"Subtensor", emit_subtensor, true},
      {"IncSubtensor", emit_inc_subtensor, false},
      {"AdvancedSubtensor1", emit_advanced_subtensor1, false},
      {"AdvancedIncSubtensor1", emit_advanced_inc_subtensor1, false},
      {"AdvancedSubtensor", emit_advanced_subtensor, false},
      {"AdvancedIncSubtensor", emit_advanced_inc_subtensor, false},
      {"Reshape", [](const NodeEmitContext& c) { return NodeCode(emit_reshape(c)); }, false},
      {"SpecifyShape", emit_specify_shape, true},
      {"Alloc", [](const NodeEmitContext& c) { return NodeCode(emit_alloc(c)); }, false},
      {"AllocEmpty", emit_alloc_empty, false},
      {"MakeVector", emit_make_vector, false},
      {"Join", [](const NodeEmitContext& c) { return NodeCode(emit_join(c)); }, false},
      {"Split", emit_split, false},
      {"ARange", [](const NodeEmitContext& c) { return NodeCode(emit_arange(c)); }, false},
      {"Eye", [](const NodeEmitContext& c) { return NodeCode(emit_eye_like(c)); }, false},
      {"Tri", [](const NodeEmitContext& c) { return NodeCode(emit_eye_like(c)); }, false},
      {"ExtractDiag", emit_extract_diag, true},
      {"AllocDiag", emit_alloc_diag, false},
      {"CheckAndRaise", emit_check_and_raise, true},
      {"Assert", emit_check_and_raise, true},
      {"ZeroGrad", emit_pass_through, true},
      {"DisconnectedGrad", emit_pass_through, true},
      {"UndefinedGrad", emit_pass_through, true},
      {"GradClip", emit_pass_through, true},
      {"GradScale", emit_pass_through, true},
      {"Sum", emit_careduce, false},
      {"Prod", emit_careduce, false},
      {"ProdWithoutZeros", emit_careduce, false},
      {"Max", emit_careduce, false},
      {"Min", emit_careduce, false},
      {"All", emit_careduce, false},
      {"Any", emit_careduce, false},
      {"CAReduce", emit_careduce, false},
      {"Argmax", emit_argmax, false},
      {"CumOp", emit_cumop, false},
      {"Softmax", emit_softmax, false},
      {"LogSoftmax", emit_softmax, false},
      {"SoftmaxGrad", emit_softmax_grad, false},
      {"SortOp", emit_sort, false},
      {"ArgSortOp", emit_sort, false},
      {"Repeat", emit_repeat, false},
      {"BroadcastTo", emit_broadcast_to, true},
      {"SearchsortedOp", emit_searchsorted, false},
      {"Nonzero", emit_nonzero, false},
      {"Unique", emit_unique, false},
      {"FillDiagonal", emit_fill_diagonal, false},
      {"FillDiagonalOffset", emit_fill_diagonal, false},
      {"Dot", emit_dot, false, true},
      {"Dot22", emit_dot, false, true},
      {"Dot22Scalar", emit_dot, false, true},
      {"BatchedDot", emit_batched_dot, false, true},
      {"Blockwise", emit_blockwise, false, true, true},
      {"Gemv", emit_gemv, false, true},
      {"CGemv", emit_gemv, false, true},
      {"Gemm", emit_gemm, false, true},
      {"Ger", emit_ger, false, true},
      {"CGer", emit_ger, false, true},
      {"Cholesky", emit_linalg, false, true, true},
      {"Solve", emit_linalg, false, true, true},
      {"SolveTriangular", emit_linalg, false, true, true},
      {"CholeskySolve", emit_linalg, false, true, true},
      {"LU", emit_linalg, false, true, true},
      {"LUFactor", emit_linalg, false, true, true},
      {"PivotToPermutations", emit_linalg, false, true, true},
      {"QR", emit_linalg, false, true, true},
      {"MatrixInverse", emit_linalg, false, true, true},
      {"MatrixPinv", emit_linalg, false, true, true},
      {"Det", emit_linalg, false, true, true},
      {"SLogDet", emit_linalg, false, true, true},
      {"Expm", emit_linalg, false, true, true},
      {"Eig", emit_linalg, false, true, true},
      {"Eigh", emit_linalg, false, true, true},
      {"Eigvalsh", emit_linalg, false, true, true},
      {"SVD", emit_linalg, false, true, true},
      {"KroneckerProduct", emit_linalg, false, true, true},
      {"BlockDiagonal", emit_linalg, false, true, true},
  });
  return table;
}

std::shared_ptr<const Backend> make_cpp_backend() {
  auto b = std::make_shared<Backend>();
  b->name = "cpp";
  b->description = "C++17 for the CPU: OpenMP threads, SLEEF's vector math, CBLAS";
  b->ops = cpp_backend_table();
  b->unsupported = {{"OpFromGraph", "inlined before code generation (rewrite/inline_op_from_graph.h), so it never reaches a backend"}};
  b->templates = "templates/cpp";
  b->prologue = {"runtime/include/kiln/runtime/half.hpp", "runtime/include/kiln/runtime/scalar_math.hpp", "templates/cpp/prologue/runtime.hpp",
                 "templates/cpp/prologue/indexing.hpp", "templates/cpp/prologue/blas.hpp"};
  std::vector<std::string> random_pieces;  // NumPy's Generator, in its layering order
  for (const char* part :
       {"pcg64", "tables", "ziggurat", "continuous", "integers", "discrete", "variables", "multivariate", "core_variables"})
    random_pieces.push_back("runtime/include/kiln/runtime/random/" + std::string(part) + ".hpp");
  b->optional_prologue = {
      // NumPy's complex arithmetic, for graphs with complex values.
      {"std::complex<", {"runtime/include/kiln/runtime/complex.hpp", "templates/cpp/prologue/complex_blas.hpp"}, nullptr, "", ""},
      // Only the special-function pieces (incomplete gamma, Bessel, ...) the graphs call.
      {"", {}, special_math_pieces, "", ""},
      {"kg::linalg::",
       {"runtime/include/kiln/runtime/lapack.hpp", "runtime/include/kiln/runtime/linalg_kernels.hpp",
        "templates/cpp/prologue/linalg.hpp"},
       nullptr, "", ""},
      {"kg::scan::", {"templates/cpp/prologue/scan.hpp"}, nullptr, "", ""},
      // Random draws must round as NumPy's do: no contraction into fused multiply-adds (GCC
      // contracts by default where -march has FMA).
      {"kiln_random::", random_pieces, nullptr,
       "#pragma GCC push_options\n#pragma GCC optimize(\"fp-contract=off\")\n", "#pragma GCC pop_options\n"}};
  // SIMD declarations of libm functions (a no-op unless built with -DKILN_SLEEF): only those of
  // the functions the graphs call (and the prologue's kiln_scalar functions they use call).
  b->declarations.file = "templates/cpp/prologue/vector_math.hpp";
  b->declarations.select = [](const std::string& body, const std::vector<std::string>& graph_code) {
    return select_vector_math(body, called_math_functions(graph_code));
  };
  b->row_block = emit_row_block;
  b->fuse_gathers = true;
  b->split_steps = true;
  b->scalar_classes = [](const std::string& name) { return ScalarTable::cpp().classes(name); };
  b->capabilities = {"blas"};
  return b;
}

}  // namespace kiln
