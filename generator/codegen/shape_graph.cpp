#include "codegen/shape_graph.h"

#include <unordered_map>

#include "ir/error.h"
#include "ops/constant.h"
#include "ops/shape.h"

namespace kiln {

FunctionGraph build_shape_graph(const FunctionGraph& fg) {
  // Work on a private copy so the shape graph never shares nodes with `fg`.
  FunctionGraph copy = fg.clone();
  std::unordered_map<const Variable*, ShapeVars> shapes;
  auto shape_of = [&](const Var& v) -> const ShapeVars& {
    auto it = shapes.find(v.get());
    if (it != shapes.end()) return it->second;
    ShapeVars dims;
    for (int d = 0; d < v->ndim(); ++d) {
      std::int64_t len = v->shape()[static_cast<std::size_t>(d)];
      dims.push_back(len != kUnknownLength ? int64_constant(len) : shape_i(v, d));
    }
    return shapes.emplace(v.get(), dims).first->second;
  };
  for (Apply* node : copy.toposort()) {
    std::vector<ShapeVars> in_shapes;
    for (const auto& in : node->inputs()) in_shapes.push_back(shape_of(in));
    std::vector<ShapeVars> out_shapes = output_shapes(*node, in_shapes);
    KILN_INTERNAL_ASSERT(static_cast<int>(out_shapes.size()) == node->num_outputs(),
                         node->label() + ": infer_shape gave the wrong number of outputs");
    for (int o = 0; o < node->num_outputs(); ++o) {
      const Variable* v = node->output_ptr(o);
      ShapeVars dims = out_shapes[static_cast<std::size_t>(o)];
      KILN_INTERNAL_ASSERT(static_cast<int>(dims.size()) == v->ndim(),
                           node->label() + ": infer_shape gave the wrong rank");
      for (int d = 0; d < v->ndim(); ++d) {
        const Var& dim = dims[static_cast<std::size_t>(d)];
        KILN_INTERNAL_ASSERT(dim && dim->dtype() == DType::Int64 && dim->ndim() == 0,
                             node->label() + ": infer_shape must give 0-d int64 lengths");
        std::int64_t len = v->shape()[static_cast<std::size_t>(d)];
        if (len != kUnknownLength) dims[static_cast<std::size_t>(d)] = int64_constant(len);
      }
      shapes[v] = dims;
    }
  }
  VarList outputs;
  for (const auto& out : copy.outputs())
    for (const auto& dim : shape_of(out)) outputs.push_back(dim);
  FunctionGraph g(copy.inputs(), outputs, fg.name() + "_shapes");
  return g;
}

}  // namespace kiln
