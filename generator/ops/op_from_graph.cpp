#include "ops/op_from_graph.h"

#include <unordered_map>

#include "ir/error.h"
#include "ir/graph_key.h"
#include "ir/graph_runner.h"
#include "ops/constant.h"
#include "ops/shape.h"

namespace kiln {

OpFromGraph::OpFromGraph(std::string label, std::shared_ptr<const FunctionGraph> inner)
    : label_(std::move(label)), inner_(std::move(inner)) {
  KILN_INTERNAL_ASSERT(inner_ != nullptr, "OpFromGraph without an inner graph");
}

Json OpFromGraph::props() const { return Json{{"name", label_}}; }

std::string OpFromGraph::structure_key() const { return structural_key(*inner_); }

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
  std::vector<Array> results = run_graph(*inner_, inputs);
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
    std::vector<ShapeVars> out_shapes = output_shapes(*n, in_shapes);
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

// The inner graph as an InnerGraph (ir/inner_graph.h): applied by rebuilding its nodes.
class OpFromGraphBody : public InnerGraph {
 public:
  explicit OpFromGraphBody(std::shared_ptr<const FunctionGraph> inner) : inner_(std::move(inner)) {}
  int num_inputs() const override { return static_cast<int>(inner_->inputs().size()); }
  int num_outputs() const override { return static_cast<int>(inner_->outputs().size()); }
  std::size_t num_nodes() const override { return inner_->toposort().size(); }
  VarList apply(const VarList& inputs) const override { return apply_inner_graph(*inner_, inputs); }

 private:
  std::shared_ptr<const FunctionGraph> inner_;
};

}  // namespace

std::vector<InnerGraphUse> OpFromGraph::inner_graphs() const {
  return {InnerGraphUse{std::make_shared<OpFromGraphBody>(inner_), "inner", true}};
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
