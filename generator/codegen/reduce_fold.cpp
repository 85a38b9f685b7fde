#include "codegen/reduce_fold.h"

#include <algorithm>
#include <vector>

#include "ops/reduce.h"

namespace kiln {

CompositeFold analyse_composite_fold(const CompositeGraph& g) {
  const auto& values = g.values();
  std::vector<int> producer(values.size(), -1);
  std::vector<bool> uses_acc(values.size(), false);
  uses_acc[0] = true;
  for (std::size_t n = 0; n < g.nodes().size(); ++n) {
    const auto& node = g.nodes()[n];
    bool dep = false;
    for (int v : node.inputs) dep = dep || uses_acc[static_cast<std::size_t>(v)];
    for (int v : node.outputs) {
      producer[static_cast<std::size_t>(v)] = static_cast<int>(n);
      uses_acc[static_cast<std::size_t>(v)] = dep;
    }
  }
  const auto node_of = [&](int v) -> const CompositeGraph::Node* {
    int n = producer[static_cast<std::size_t>(v)];
    return n < 0 ? nullptr : &g.nodes()[static_cast<std::size_t>(n)];
  };
  // The value `v` is a cast (or a chain of casts) of.
  const auto uncast = [&](int v) {
    for (const auto* n = node_of(v); n && n->op.id() == ScalarOpId::Cast; n = node_of(v)) v = n->inputs[0];
    return v;
  };
  // The dtypes along that chain, and how many casts it has.
  std::vector<DType> chain;
  int casts = 0;
  const auto record_chain = [&](int v) {
    chain.push_back(values[static_cast<std::size_t>(v)].dtype);
    for (const auto* n = node_of(v); n && n->op.id() == ScalarOpId::Cast; n = node_of(v)) {
      v = n->inputs[0];
      chain.push_back(values[static_cast<std::size_t>(v)].dtype);
      ++casts;
    }
  };

  CompositeFold fold;
  const int out = g.outputs()[0];
  const auto* folding = node_of(uncast(out));
  if (!folding || !is_foldable_scalar_op(folding->op.id())) return fold;
  fold.op = folding->op.id();
  fold.found = true;
  if (folding->inputs.size() != 2) return fold;
  const int lhs = folding->inputs[0], rhs = folding->inputs[1];
  int acc_side;
  if (uncast(lhs) == 0 && !uses_acc[static_cast<std::size_t>(rhs)])
    acc_side = lhs;
  else if (uncast(rhs) == 0 && !uses_acc[static_cast<std::size_t>(lhs)])
    acc_side = rhs;
  else
    return fold;
  record_chain(out);
  record_chain(acc_side);
  const bool all_float = std::all_of(chain.begin(), chain.end(), [](DType d) { return is_float(d); });
  const bool all_int = std::all_of(chain.begin(), chain.end(), [](DType d) { return is_discrete(d) && !is_bool(d); });
  const bool ring_op = fold.op == ScalarOpId::Add || fold.op == ScalarOpId::Mul || fold.op == ScalarOpId::And ||
                       fold.op == ScalarOpId::Or || fold.op == ScalarOpId::Xor;
  fold.splittable = casts == 0 || all_float || (all_int && ring_op);
  return fold;
}

}  // namespace kiln
