#include "ops/op_from_graph.h"

#include <unordered_map>
#include <unordered_set>

#include "eval/evaluator.h"
#include "grad/grad.h"
#include "io/graph_save.h"
#include "ir/error.h"
#include "ops/constant.h"
#include "ops/shape.h"

namespace kiln {

OpFromGraph::OpFromGraph(std::string label, std::shared_ptr<const FunctionGraph> inner)
    : label_(std::move(label)), inner_(std::move(inner)) {
  KILN_INTERNAL_ASSERT(inner_ != nullptr, "OpFromGraph without an inner graph");
}

Json OpFromGraph::props() const {
  return Json{{"name", label_}, {"inner", Json::parse(graph_object_json(*inner_).dump())}};
}

std::string OpFromGraph::str() const { return label_ + "{inline=False}"; }

bool OpFromGraph::accepts_kind(int, TypeKind) const { return true; }  // infer_types compares with the inner inputs

std::vector<TensorType> OpFromGraph::infer_types(const VarList& inputs) const {
  const VarList& ins = inner_->inputs();
  if (inputs.size() != ins.size())
    type_error(*this, "takes " + std::to_string(ins.size()) + " input(s) (its inner graph's), got " +
                          std::to_string(inputs.size()));
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i]->type().compatible_with(ins[i]->type()))
      type_error(*this, "input " + std::to_string(i) + " (" + inputs[i]->label() + ") has type " +
                            inputs[i]->type().str() + " but the inner graph's input " + std::to_string(i) +
                            " is " + ins[i]->type().str());
  std::vector<TensorType> out;
  for (const auto& o : inner_->outputs()) out.push_back(o->type());
  return out;
}

void OpFromGraph::perform(const Apply&, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  std::vector<Array> results = evaluate(*inner_, inputs);
  for (std::size_t k = 0; k < results.size(); ++k) outputs[k] = results[k];
}

VarList apply_inner_graph(const FunctionGraph& inner, const VarList& inputs, std::vector<Apply*>* nodes) {
  KILN_INTERNAL_ASSERT(inputs.size() == inner.inputs().size(), "apply_inner_graph: wrong number of inputs");
  std::unordered_map<const Variable*, Var> map;
  for (std::size_t i = 0; i < inputs.size(); ++i) map[inner.inputs()[i].get()] = inputs[i];
  auto outer = [&](const Var& v) -> Var {
    auto it = map.find(v.get());
    if (it != map.end()) return it->second;
    KILN_INTERNAL_ASSERT(v->is_constant(), "apply_inner_graph met a variable before its producer");
    return v;  // constants are immutable: shared
  };
  for (Apply* node : inner.toposort()) {
    VarList args;
    for (const auto& in : node->inputs()) args.push_back(outer(in));
    ApplyPtr copy = make_node(node->op_ptr(), args);
    if (nodes) nodes->push_back(copy.get());
    for (int o = 0; o < node->num_outputs(); ++o) {
      Var v = copy->output(o);
      // Inner lengths the file declared (more specific than inference) still hold.
      if (node->output(o)->type().compatible_with(v->type())) v->refine_type(node->output(o)->type());
      v->set_name(node->output_ptr(o)->name());
      map[node->output_ptr(o)] = v;
    }
  }
  VarList out;
  for (const auto& o : inner.outputs()) out.push_back(outer(o));
  return out;
}

VarList op_from_graph(std::string label, std::shared_ptr<const FunctionGraph> inner, const VarList& inputs) {
  return make_node(std::make_shared<OpFromGraph>(std::move(label), std::move(inner)), inputs)->outputs();
}

std::vector<ShapeVars> OpFromGraph::infer_shape(const Apply& node, const std::vector<ShapeVars>& input_shapes) const {
  // The inner graph rebuilt on the node's inputs, and every op's infer_shape along it.
  std::vector<Apply*> nodes;
  VarList outs = apply_inner_graph(*inner_, node.inputs(), &nodes);
  std::unordered_map<const Variable*, ShapeVars> shapes;
  for (int i = 0; i < node.num_inputs(); ++i) shapes[node.input(i).get()] = input_shapes[static_cast<std::size_t>(i)];
  auto shape_of = [&](const Var& v) -> ShapeVars {
    auto it = shapes.find(v.get());
    if (it != shapes.end()) return it->second;
    ShapeVars dims;  // a constant
    for (auto len : v->shape()) dims.push_back(int64_constant(len));
    return dims;
  };
  for (Apply* n : nodes) {
    std::vector<ShapeVars> in_shapes;
    for (const auto& in : n->inputs()) in_shapes.push_back(shape_of(in));
    std::vector<ShapeVars> out_shapes = n->op().infer_shape(*n, in_shapes);
    for (int o = 0; o < n->num_outputs(); ++o) shapes[n->output_ptr(o)] = out_shapes[static_cast<std::size_t>(o)];
  }
  std::vector<ShapeVars> result;
  for (std::size_t k = 0; k < outs.size(); ++k) {
    ShapeVars dims = shape_of(outs[k]);
    const Shape& declared = node.output_ptr(static_cast<int>(k))->shape();
    for (std::size_t d = 0; d < dims.size(); ++d)
      if (declared[d] != kUnknownLength) dims[d] = int64_constant(declared[d]);
    result.push_back(dims);
  }
  return result;
}

namespace {

// Whether `out` depends on `in` (a walk up the owners from `out`).
bool depends_on(const Var& out, const Variable* in) {
  std::vector<const Variable*> stack{out.get()};
  std::unordered_set<const Variable*> seen;
  while (!stack.empty()) {
    const Variable* v = stack.back();
    stack.pop_back();
    if (v == in) return true;
    if (!v->owner() || !seen.insert(v).second) continue;
    for (const auto& i : v->owner()->inputs()) stack.push_back(i.get());
  }
  return false;
}

bool differentiable(const Var& v) { return v->type().is_tensor() && is_float(v->dtype()); }

}  // namespace

std::vector<GradTerm> OpFromGraph::pullback(const Apply& node, const VarList& output_grads) const {
  std::vector<GradTerm> terms(static_cast<std::size_t>(node.num_inputs()), GradTerm::disconnected());
  VarList outs = apply_inner_graph(*inner_, node.inputs());
  VarList costs, cotangents, wrt;
  std::vector<std::size_t> wrt_index;
  for (std::size_t k = 0; k < outs.size(); ++k)
    if (output_grads[k] && differentiable(outs[k])) {
      costs.push_back(outs[k]);
      cotangents.push_back(output_grads[k]);
    }
  for (int i = 0; i < node.num_inputs(); ++i) {
    const Var& x = node.input(i);
    if (!differentiable(x)) continue;
    bool connected = false;
    for (const auto& c : costs) connected = connected || depends_on(c, x.get());
    if (!connected) continue;
    wrt.push_back(x);
    wrt_index.push_back(static_cast<std::size_t>(i));
  }
  if (wrt.empty()) return terms;
  GradOptions options;
  options.disconnected = GradOptions::Disconnected::Zero;
  try {
    VarList grads = Lop(costs, wrt, cotangents, options);
    for (std::size_t j = 0; j < wrt.size(); ++j) terms[wrt_index[j]] = GradTerm::of(grads[j]);
  } catch (const NotImplementedError& e) {
    for (std::size_t i : wrt_index) terms[i] = GradTerm::not_implemented(str() + ": " + e.message());
  } catch (const UserError& e) {
    for (std::size_t i : wrt_index) terms[i] = GradTerm::undefined(str() + ": " + e.message());
  }
  return terms;
}

std::vector<GradTerm> OpFromGraph::pushforward(const Apply& node, const VarList& input_tangents) const {
  std::vector<GradTerm> terms(static_cast<std::size_t>(node.num_outputs()), GradTerm::disconnected());
  VarList outs = apply_inner_graph(*inner_, node.inputs());
  VarList wrt, tangents, targets;
  std::vector<std::size_t> target_index;
  for (int i = 0; i < node.num_inputs(); ++i)
    if (input_tangents[static_cast<std::size_t>(i)] && differentiable(node.input(i))) {
      wrt.push_back(node.input(i));
      tangents.push_back(input_tangents[static_cast<std::size_t>(i)]);
    }
  for (std::size_t k = 0; k < outs.size(); ++k) {
    if (!differentiable(outs[k])) continue;
    bool connected = false;
    for (const auto& x : wrt) connected = connected || depends_on(outs[k], x.get());
    if (!connected) continue;
    targets.push_back(outs[k]);
    target_index.push_back(k);
  }
  if (targets.empty()) return terms;
  GradOptions options;
  options.disconnected = GradOptions::Disconnected::Zero;
  try {
    VarList results = Rop(targets, wrt, tangents, options);
    for (std::size_t j = 0; j < targets.size(); ++j)
      if (results[j]) terms[target_index[j]] = GradTerm::of(results[j]);
  } catch (const NotImplementedError& e) {
    for (std::size_t k : target_index) terms[k] = GradTerm::not_implemented(str() + ": " + e.message());
  } catch (const UserError& e) {
    for (std::size_t k : target_index) terms[k] = GradTerm::undefined(str() + ": " + e.message());
  }
  return terms;
}

OpPtr op_from_graph_from_props(PropReader& props, const std::vector<TensorType>&) {
  // PyTensor's OpFromGraph without a name prints as its class name.
  const std::string label = props.has("name") ? props.get_string("name") : (props.raw("name"), "OpFromGraph");
  if (label.empty()) props.fail("name", "must not be empty (PyTensor prints it; \"OpFromGraph\" by default)");
  std::shared_ptr<const FunctionGraph> inner = props.get_inner_graph("inner");
  props.finish();
  return std::make_shared<OpFromGraph>(label, std::move(inner));
}

}  // namespace kiln
