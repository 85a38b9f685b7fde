#include "ops/elemwise.h"

#include <cctype>

#include "ir/error.h"
#include "ops/array_util.h"
#include "ops/constant.h"
#include "ops/dimshuffle.h"
#include "ops/scalar/composite.h"
#include "ops/scalar/scalar_eval.h"
#include "ops/shape.h"

namespace kiln {

Json Elemwise::props() const {
  Json p{{"scalar_op", scalar_op_.to_json()}};
  // PyTensor's spelling ({"0": 1}); loaders accept and ignore it (kiln plans memory itself).
  if (!inplace_.empty()) {
    Json pattern = Json::object();
    for (const auto& [out, ins] : inplace_) pattern[std::to_string(out)] = ins.at(0);
    p["inplace_pattern"] = pattern;
  }
  return p;
}

std::string Elemwise::str() const {
  // PyTensor prints str(scalar_op).capitalize(): the first letter upper, the rest lower
  // ("EQ" -> "Eq", "Composite{EQ(i0, i1)}" -> "Composite{eq(i0, i1)}").
  std::string s = scalar_op_.str();
  for (std::size_t i = 0; i < s.size(); ++i)
    s[i] = static_cast<char>(i == 0 ? std::toupper(static_cast<unsigned char>(s[i]))
                                    : std::tolower(static_cast<unsigned char>(s[i])));
  return s;
}

Shape broadcast_static_shapes(const std::vector<TensorType>& types) {
  const std::size_t nd = types.empty() ? 0 : types[0].shape.size();
  Shape out(nd, 1);
  for (std::size_t d = 0; d < nd; ++d) {
    std::int64_t known = -2;  // none yet
    bool any_unknown = false;
    for (const auto& t : types) {
      std::int64_t len = t.shape[d];
      if (len == 1) continue;
      if (len == kUnknownLength) {
        any_unknown = true;
      } else if (known == -2) {
        known = len;
      } else if (known != len) {
        throw std::invalid_argument("incompatible static lengths " + std::to_string(known) +
                                    " and " + std::to_string(len) + " in dimension " +
                                    std::to_string(d));
      }
    }
    out[d] = known != -2 ? known : any_unknown ? kUnknownLength : 1;
  }
  return out;
}

Shape elemwise_runtime_shape(const std::vector<TensorType>& types, const std::vector<Array>& inputs) {
  const std::size_t nd = types.empty() ? 0 : types[0].shape.size();
  Shape out(nd, 1);
  for (std::size_t d = 0; d < nd; ++d) {
    int owner = -1;  // the first input that is not statically broadcastable here
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      if (types[k].shape[d] == 1) continue;
      std::int64_t len = inputs[k].shape()[d];
      if (owner < 0) {
        owner = static_cast<int>(k);
        out[d] = len;
      } else if (len != out[d]) {
        bool runtime_broadcast = len == 1 || out[d] == 1;
        throw RuntimeFailure(
            std::string(runtime_broadcast ? "runtime broadcasting not allowed (only dimensions of "
                                            "static length 1 broadcast): "
                                          : "input dimension mismatch: ") +
            "input " + std::to_string(owner) + " has length " + std::to_string(out[d]) +
            " and input " + std::to_string(k) + " has length " + std::to_string(len) +
            " in dimension " + std::to_string(d));
      }
    }
  }
  return out;
}

std::vector<TensorType> Elemwise::infer_types(const VarList& inputs) const {
  if (inputs.empty()) type_error(*this, "needs at least one input (the output shape comes from them)");
  try {
    scalar_op_.check_arity(inputs.size());
  } catch (const std::invalid_argument& e) {
    type_error(*this, e.what());
  }
  std::vector<TensorType> types;
  std::vector<DType> dtypes;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i]->ndim() != inputs[0]->ndim())
      type_error(*this, "input " + std::to_string(i) + " has rank " +
                            std::to_string(inputs[i]->ndim()) + " but input 0 has rank " +
                            std::to_string(inputs[0]->ndim()) +
                            " (insert a DimShuffle to broadcast)");
    types.push_back(inputs[i]->type());
    dtypes.push_back(inputs[i]->dtype());
  }
  std::vector<DType> out_dtypes;
  Shape shape;
  try {
    out_dtypes = scalar_op_.output_dtypes(dtypes);
    shape = broadcast_static_shapes(types);
  } catch (const std::invalid_argument& e) {
    type_error(*this, e.what());
  }
  std::vector<TensorType> out;
  for (DType dt : out_dtypes) out.emplace_back(dt, shape);
  return out;
}

void Elemwise::perform(const Apply& node, const std::vector<Array>& inputs,
                       std::vector<Array>& outputs) const {
  std::vector<TensorType> types;
  for (const auto& in : node.inputs()) types.push_back(in->type());
  Shape shape = elemwise_runtime_shape(types, inputs);
  std::vector<Array> args;
  for (const auto& in : inputs) args.push_back(broadcast_to(in, shape));
  outputs = eval_scalar_op(scalar_op_, args, shape);
}

std::vector<ShapeVars> Elemwise::infer_shape(const Apply& node,
                                             const std::vector<ShapeVars>& input_shapes) const {
  const int nd = node.input(0)->ndim();
  ShapeVars dims;
  for (int d = 0; d < nd; ++d) {
    Var dim;
    for (int k = 0; k < node.num_inputs() && !dim; ++k)
      if (!node.input(k)->type().broadcastable(d)) dim = input_shapes[static_cast<std::size_t>(k)][static_cast<std::size_t>(d)];
    dims.push_back(dim ? dim : int64_constant(1));
  }
  return std::vector<ShapeVars>(static_cast<std::size_t>(node.num_outputs()), dims);
}

VarList elemwise(const ScalarOp& op, VarList inputs) {
  int nd = 0;
  for (const auto& in : inputs) {
    if (!in) throw UserError("elemwise " + op.str() + ": null input");
    nd = std::max(nd, in->ndim());
  }
  for (auto& in : inputs)
    if (in->ndim() < nd) in = expand_dims_left(in, nd - in->ndim());
  return make_node(std::make_shared<Elemwise>(op), std::move(inputs))->outputs();
}

Var elemwise1(const ScalarOp& op, VarList inputs) {
  VarList outs = elemwise(op, std::move(inputs));
  if (outs.size() != 1) throw UserError(op.str() + " has several outputs");
  return outs[0];
}

OpPtr elemwise_from_props(PropReader& props, const std::vector<TensorType>& /*input_types*/) {
  ScalarOp op = scalar_op_from_json(props.raw("scalar_op"), props.where("scalar_op"));
  props.finish();
  return std::make_shared<Elemwise>(std::move(op));
}

// --- the Composite as an inner graph -------------------------------------------------------------

int CompositeInnerGraph::num_inputs() const { return graph_->num_inputs(); }
int CompositeInnerGraph::num_outputs() const { return static_cast<int>(graph_->outputs().size()); }
std::size_t CompositeInnerGraph::num_nodes() const { return graph_->nodes().size(); }

VarList CompositeInnerGraph::apply(const VarList& inputs) const {
  const CompositeGraph& g = *graph_;
  VarList values(g.values().size());
  for (int i = 0; i < g.num_inputs(); ++i) values[static_cast<std::size_t>(i)] = inputs[static_cast<std::size_t>(i)];
  for (std::size_t v = 0; v < g.values().size(); ++v)
    if (g.values()[v].is_constant()) values[v] = make_constant(g.values()[v].constant);
  for (const auto& node : g.nodes()) {
    VarList args;
    for (int in : node.inputs) args.push_back(values[static_cast<std::size_t>(in)]);
    VarList outs = node.op.id() == ScalarOpId::Composite ? CompositeInnerGraph(node.op.composite_graph()).apply(args)
                                                         : elemwise(node.op, args);
    for (std::size_t k = 0; k < node.outputs.size(); ++k) values[static_cast<std::size_t>(node.outputs[k])] = outs[k];
  }
  VarList outs;
  for (int o : g.outputs()) outs.push_back(values[static_cast<std::size_t>(o)]);
  return outs;
}

std::vector<InnerGraphUse> scalar_inner_graphs(const ScalarOp& op, bool is_body) {
  if (op.id() != ScalarOpId::Composite) return {};
  return {InnerGraphUse{std::make_shared<CompositeInnerGraph>(op.composite_graph()), "Composite", is_body}};
}

std::vector<InnerGraphUse> Elemwise::inner_graphs() const { return scalar_inner_graphs(scalar_op_, true); }

// --- batching rule (vectorize_graph) ---------------------------------------------------------

std::optional<VarList> Elemwise::vectorize(const Apply&, const VarList& batched_inputs) const {
  return elemwise(scalar_op_, batched_inputs);  // Elemwise broadcasts the batch dimensions itself
}

}  // namespace kiln
