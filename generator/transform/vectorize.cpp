#include "transform/vectorize.h"

#include <algorithm>

#include "ir/error.h"

namespace kiln {

void cannot_vectorize(const Apply& node, const std::string& why) {
  throw NotImplementedError("vectorize_graph: " + node.op().str() + " cannot be vectorized yet" +
                            (why.empty() ? "" : " (" + why + ")"));
}

namespace {

// An op without a batching rule whose outputs are its body (ir/inner_graph.h): the body
// expanded over the node's inputs, then batched node by node.
VarList vectorize_body(const Apply& node, const InnerGraphUse& body, const VarList& inputs) {
  VarList outs = body.graph->apply(node.inputs());
  for (int j = 0; j < node.num_outputs(); ++j)
    if (!(outs[static_cast<std::size_t>(j)]->type() == node.output(j)->type()))
      cannot_vectorize(node, "its body's outputs do not have the node's types");
  Replacements batched;
  for (int i = 0; i < node.num_inputs(); ++i) batched.emplace_back(node.input(i), inputs[static_cast<std::size_t>(i)]);
  return rebuild_graph(outs, batched, vectorize_node);
}

}  // namespace

VarList vectorize_node(const Apply& node, const VarList& inputs) {
  int nb = 0;
  for (int i = 0; i < node.num_inputs(); ++i) {
    const int b = inputs[static_cast<std::size_t>(i)]->ndim() - node.input(i)->ndim();
    if (b < 0) cannot_vectorize(node, "a replacement has fewer dimensions than the variable it replaces");
    nb = std::max(nb, b);
  }
  if (nb == 0) return make_node(node.op_ptr(), inputs)->outputs();
  if (std::optional<VarList> batched = node.op().vectorize(node, inputs)) return *batched;
  for (const InnerGraphUse& use : node.op().inner_graphs())
    if (use.is_body) return vectorize_body(node, use, inputs);
  cannot_vectorize(node);
}

VarList vectorize_graph(const VarList& outputs, const Replacements& replace) {
  for (const auto& [old_var, new_var] : replace) {
    if (!old_var || !new_var) throw UserError("vectorize_graph: a replacement pair holds a null variable");
    const TensorType& core = old_var->type();
    const TensorType& batched = new_var->type();
    const int b = batched.ndim() - core.ndim();
    bool ok = b >= 0 && batched.dtype == core.dtype;
    for (int d = 0; ok && d < core.ndim(); ++d) {
      std::int64_t c = core.shape[static_cast<std::size_t>(d)];
      std::int64_t n = batched.shape[static_cast<std::size_t>(d + b)];
      ok = c == kUnknownLength || n == kUnknownLength || c == n;
    }
    if (!ok)
      throw UserError("vectorize_graph: cannot use a variable of type " + batched.str() + " for one of type " +
                      core.str() + " (it must have the same dtype and end with the same shape)");
  }
  return rebuild_graph(outputs, replace, vectorize_node);
}

Var vectorize_graph(const Var& output, const Replacements& replace) {
  return vectorize_graph(VarList{output}, replace)[0];
}

}  // namespace kiln
