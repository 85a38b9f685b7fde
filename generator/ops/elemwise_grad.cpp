// Elemwise's pullback and pushforward: the scalar op's partial derivatives (scalar_grad.cpp)
// times the cotangent, summed back over broadcast dimensions. A Composite is the node's body
// (Elemwise::inner_graphs): grad differentiates it through its expansion into Elemwise nodes.
#include "ir/error.h"
#include "ops/elemwise.h"
#include "ops/grad_util.h"
#include "ops/math.h"
#include "ops/scalar/scalar_grad.h"

namespace kiln {

std::vector<GradTerm> Elemwise::pullback(const Apply& node, const VarList& output_grads) const {
  KILN_INTERNAL_ASSERT(scalar_op_.id() != ScalarOpId::Composite, "a Composite is differentiated through its body");
  const Var out = node.output(0);
  const Var& gz = output_grads[0];
  std::vector<GradTerm> terms = scalar_partials(scalar_op_, node.inputs(), out);
  for (int i = 0; i < node.num_inputs(); ++i) {
    GradTerm& t = terms[static_cast<std::size_t>(i)];
    if (t.kind != GradTerm::Kind::Value) continue;
    const TensorType& type = node.input(i)->type();
    if (!gz) {
      t = GradTerm::disconnected();
    } else if (is_zeros(t.value)) {
      t = GradTerm::of(zeros_like(node.input(i)));
    } else {
      t = GradTerm::of(sum_to_type(grad_mul(gz, t.value, out), type));
    }
  }
  return terms;
}

std::vector<GradTerm> Elemwise::pushforward(const Apply& node, const VarList& input_tangents) const {
  KILN_INTERNAL_ASSERT(scalar_op_.id() != ScalarOpId::Composite, "a Composite is differentiated through its body");
  const Var out = node.output(0);
  std::vector<GradTerm> partials = scalar_partials(scalar_op_, node.inputs(), out);
  VarList contributions;
  for (int i = 0; i < node.num_inputs(); ++i) {
    const Var& t = input_tangents[static_cast<std::size_t>(i)];
    const GradTerm& p = partials[static_cast<std::size_t>(i)];
    if (!t || p.kind == GradTerm::Kind::Disconnected) continue;
    if (p.kind != GradTerm::Kind::Value) return {p};
    if (is_zeros(p.value)) continue;
    // A partial may be a truth value (maximum's mask): sum the products as numbers.
    contributions.push_back(cast(grad_mul(t, p.value, out), out->dtype()));
  }
  if (contributions.empty()) return {GradTerm::of(zeros_like(out))};
  return {GradTerm::of(broadcast_like(add_terms(contributions), out))};
}

}  // namespace kiln
