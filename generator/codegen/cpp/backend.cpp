#include "codegen/cpp/backend.h"

#include "codegen/cpp/emitters.h"
#include "codegen/cpp/scalar_code.h"
#include "codegen/cpp/vector_math_select.h"

namespace kiln {

const std::vector<OpEmitter>& cpp_backend_table() {
  static const std::vector<OpEmitter> table = {
      {"Elemwise", emit_elemwise, false},
      {"DimShuffle", emit_dimshuffle, true},
      {"Shape", emit_shape, false},
      {"Shape_i", emit_shape_i, false},
      {"Subtensor", emit_subtensor, true},
      {"IncSubtensor", emit_inc_subtensor, false},
      {"AdvancedSubtensor1", emit_advanced_subtensor1, false},
      {"AdvancedIncSubtensor1", emit_advanced_inc_subtensor1, false},
      {"Reshape", emit_reshape, false},
      {"SpecifyShape", emit_specify_shape, true},
      {"Alloc", emit_alloc, false},
      {"AllocEmpty", emit_alloc_empty, false},
      {"MakeVector", emit_make_vector, false},
      {"Join", emit_join, false},
      {"Split", emit_split, false},
      {"ARange", emit_arange, false},
      {"Eye", emit_eye_like, false},
      {"Tri", emit_eye_like, false},
      {"ExtractDiag", emit_extract_diag, true},
      {"AllocDiag", emit_alloc_diag, false},
      {"CheckAndRaise", emit_check_and_raise, true},
      {"Assert", emit_check_and_raise, true},
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
      {"Dot", emit_dot, false, true},
      {"Dot22", emit_dot, false, true},
      {"Dot22Scalar", emit_dot, false, true},
      {"BatchedDot", emit_batched_dot, false, true},
      {"Blockwise", emit_blockwise, false, true},
      {"Gemv", emit_gemv, false, true},
      {"CGemv", emit_gemv, false, true},
      {"Gemm", emit_gemm, false, true},
      {"Ger", emit_ger, false, true},
      {"CGer", emit_ger, false, true},
  };
  return table;
}

std::shared_ptr<const Backend> make_cpp_backend() {
  auto b = std::make_shared<Backend>();
  b->name = "cpp";
  b->description = "C++17 for the CPU: OpenMP threads, SLEEF's vector math, CBLAS";
  b->ops = cpp_backend_table();
  b->templates = "templates/cpp";
  b->prologue = {"runtime/include/kiln/runtime/scalar_math.hpp", "templates/cpp/prologue/runtime.hpp",
                 "templates/cpp/prologue/blas.hpp"};
  // SIMD declarations of libm functions (a no-op unless built with -DKILN_SLEEF): only those of
  // the functions the graphs call (and the prologue's kiln_scalar functions they use call).
  b->declarations.file = "templates/cpp/prologue/vector_math.hpp";
  b->declarations.select = [](const std::string& body, const std::vector<std::string>& graph_code) {
    return select_vector_math(body, called_math_functions(graph_code));
  };
  b->row_block = emit_row_block;
  b->scalar_classes = [](const std::string& name) { return ScalarTable::cpp().classes(name); };
  b->capabilities = {"blas"};
  return b;
}

}  // namespace kiln
