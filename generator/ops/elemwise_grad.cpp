// Elemwise's pullback and pushforward: the scalar op's partial derivatives (scalar_grad.cpp)
// times the cotangent, summed back over broadcast dimensions; a Composite is differentiated
// through its inner graph, expanded into Elemwise nodes over the node's inputs.
#include "api/elementwise.h"
#include "grad/grad.h"
#include "grad/grad_util.h"
#include "grad/replace.h"
#include "ops/elemwise.h"
#include "ops/scalar/composite.h"
#include "ops/scalar/scalar_grad.h"

namespace kiln {

namespace {

// The Composite's inner graph as Elemwise nodes over `inputs`; returns its outputs.
VarList expand_composite(const CompositeGraph& g, const VarList& inputs) {
  VarList values(g.values().size());
  for (int i = 0; i < g.num_inputs(); ++i) values[static_cast<std::size_t>(i)] = inputs[static_cast<std::size_t>(i)];
  for (std::size_t v = 0; v < g.values().size(); ++v)
    if (g.values()[v].is_constant()) values[v] = make_constant(g.values()[v].constant);
  for (const auto& node : g.nodes()) {
    VarList args;
    for (int in : node.inputs) args.push_back(values[static_cast<std::size_t>(in)]);
    VarList outs = node.op.id() == ScalarOpId::Composite
                       ? expand_composite(*node.op.composite_graph(), args)
                       : elemwise(node.op, args);
    for (std::size_t k = 0; k < node.outputs.size(); ++k) values[static_cast<std::size_t>(node.outputs[k])] = outs[k];
  }
  VarList outs;
  for (int o : g.outputs()) outs.push_back(values[static_cast<std::size_t>(o)]);
  return outs;
}

GradOptions lenient() {
  GradOptions o;
  o.disconnected = GradOptions::Disconnected::Zero;
  o.undefined = GradOptions::Undefined::Zero;
  return o;
}

// The Composite expanded over stand-ins for the node's inputs, each output broadcast to the
// node's output shape (an inner output may depend on only some inputs, and so have a smaller
// shape). Derivatives are taken w.r.t. the stand-ins, so they follow only the paths inside the
// Composite: w.r.t. the real inputs, a path from one input to another outside the node (as in
// Composite(a, exp(a))) would be counted again. `to_real` maps the stand-ins back.
struct Expansion {
  VarList outs;
  VarList stand_ins;
  Replacements to_real;
};

Expansion expand_node(const Apply& node, const CompositeGraph& g) {
  Expansion e;
  for (const Var& in : node.inputs()) {
    e.stand_ins.push_back(make_input(in->type()));
    e.to_real.emplace_back(e.stand_ins.back(), in);
  }
  e.outs = expand_composite(g, e.stand_ins);
  for (std::size_t j = 0; j < e.outs.size(); ++j)
    e.outs[j] = broadcast_like(e.outs[j], node.output(static_cast<int>(j)));
  return e;
}

std::vector<GradTerm> composite_pullback(const Apply& node, const CompositeGraph& g, const VarList& ogs) {
  Expansion e = expand_node(node, g);
  VarList cots;
  for (std::size_t j = 0; j < e.outs.size(); ++j) {
    const Var& og = ogs[j];
    cots.push_back(og && is_float(e.outs[j]->dtype()) ? og : nullptr);
  }
  VarList gs = Lop(e.outs, e.stand_ins, cots, lenient());
  std::vector<GradTerm> terms;
  for (std::size_t i = 0; i < gs.size(); ++i) {
    const Var& in = node.input(static_cast<int>(i));
    terms.push_back(is_discrete(in->dtype()) || is_zeros(gs[i])
                        ? GradTerm::disconnected()
                        : GradTerm::of(sum_to_type(graph_replace(gs[i], e.to_real), in->type())));
  }
  return terms;
}

}  // namespace

std::vector<GradTerm> Elemwise::pullback(const Apply& node, const VarList& output_grads) const {
  if (scalar_op_.id() == ScalarOpId::Composite)
    return composite_pullback(node, *scalar_op_.composite_graph(), output_grads);
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
  if (scalar_op_.id() == ScalarOpId::Composite) {
    Expansion e = expand_node(node, *scalar_op_.composite_graph());
    VarList wrt, tangents;
    for (int i = 0; i < node.num_inputs(); ++i)
      if (input_tangents[static_cast<std::size_t>(i)]) {
        wrt.push_back(e.stand_ins[static_cast<std::size_t>(i)]);
        tangents.push_back(input_tangents[static_cast<std::size_t>(i)]);
      }
    VarList ts = Rop(e.outs, wrt, tangents, lenient());
    std::vector<GradTerm> terms;
    for (int j = 0; j < node.num_outputs(); ++j)
      terms.push_back(GradTerm::of(
          broadcast_like(graph_replace(ts[static_cast<std::size_t>(j)], e.to_real), node.output(j))));
    return terms;
  }
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
