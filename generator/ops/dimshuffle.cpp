#include "ops/dimshuffle.h"

#include <algorithm>

#include "ir/error.h"
#include "ops/constant.h"
#include "ops/grad_util.h"
#include "ops/reduce.h"
#include "ops/batching.h"

namespace kiln {

DimShuffle::DimShuffle(int input_ndim, std::vector<int> new_order)
    : input_ndim_(input_ndim), new_order_(std::move(new_order)) {
  std::vector<bool> seen(static_cast<std::size_t>(std::max(input_ndim_, 0)), false);
  for (int d : new_order_) {
    if (d == kNewAxis) continue;
    if (d < 0 || d >= input_ndim_)
      throw UserError("DimShuffle: new_order entry " + std::to_string(d) +
                      " is out of range for input_ndim " + std::to_string(input_ndim_));
    if (seen[static_cast<std::size_t>(d)])
      throw UserError("DimShuffle: input dimension " + std::to_string(d) + " appears twice in new_order");
    seen[static_cast<std::size_t>(d)] = true;
  }
  for (int d = 0; d < input_ndim_; ++d)
    if (!seen[static_cast<std::size_t>(d)]) dropped_.push_back(d);
}

bool DimShuffle::is_transpose() const {
  return dropped_.empty() &&
         std::find(new_order_.begin(), new_order_.end(), kNewAxis) == new_order_.end();
}

bool DimShuffle::is_expand_dims() const {
  if (!dropped_.empty()) return false;
  int next = 0;
  for (int d : new_order_)
    if (d != kNewAxis && d != next++) return false;
  return static_cast<int>(new_order_.size()) > input_ndim_;
}

bool DimShuffle::is_squeeze() const {
  if (dropped_.empty()) return false;
  int prev = -1;
  for (int d : new_order_) {
    if (d == kNewAxis || d < prev) return false;
    prev = d;
  }
  return true;
}

Json DimShuffle::props() const {
  Json order = Json::array();
  for (int d : new_order_) {
    if (d == kNewAxis)
      order.push_back("x");
    else
      order.push_back(d);
  }
  return Json{{"input_ndim", input_ndim_}, {"new_order", order}};
}

std::string DimShuffle::str() const {
  auto list = [](const std::vector<int>& v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
  };
  auto axis_or_axes = [&](const std::vector<int>& v) {
    return v.size() == 1 ? "axis=" + std::to_string(v[0]) : "axes=" + list(v);
  };
  if (is_expand_dims()) {
    std::vector<int> axes;
    for (std::size_t i = 0; i < new_order_.size(); ++i)
      if (new_order_[i] == kNewAxis) axes.push_back(static_cast<int>(i));
    return "ExpandDims{" + axis_or_axes(axes) + "}";
  }
  if (is_squeeze()) return "Squeeze{" + axis_or_axes(dropped_) + "}";
  if (is_transpose()) return "Transpose{axes=" + list(new_order_) + "}";
  std::string s = "DimShuffle{order=[";
  for (std::size_t i = 0; i < new_order_.size(); ++i)
    s += (i ? "," : "") + (new_order_[i] == kNewAxis ? std::string("x") : std::to_string(new_order_[i]));
  return s + "]}";
}

std::vector<TensorType> DimShuffle::infer_types(const VarList& inputs) const {
  if (inputs.size() != 1) type_error(*this, "takes 1 input, got " + std::to_string(inputs.size()));
  const TensorType& t = inputs[0]->type();
  if (t.ndim() != input_ndim_)
    type_error(*this, "expects an input of rank " + std::to_string(input_ndim_) + ", got " + t.str());
  for (int d : dropped_)
    if (t.shape[static_cast<std::size_t>(d)] != 1 && t.shape[static_cast<std::size_t>(d)] != kUnknownLength)
      type_error(*this, "cannot drop dimension " + std::to_string(d) + " of static length " +
                            std::to_string(t.shape[static_cast<std::size_t>(d)]) + " (only length 1)");
  Shape shape;
  for (int d : new_order_) shape.push_back(d == kNewAxis ? 1 : t.shape[static_cast<std::size_t>(d)]);
  return {TensorType(t.dtype, shape)};
}

void DimShuffle::perform(const Apply& node, const std::vector<Array>& inputs,
                         std::vector<Array>& outputs) const {
  const Array& x = inputs[0];
  for (int d : dropped_)
    if (x.shape()[static_cast<std::size_t>(d)] != 1)
      throw RuntimeFailure("cannot drop dimension " + std::to_string(d) + " of length " +
                           std::to_string(x.shape()[static_cast<std::size_t>(d)]) +
                           " (it must have length 1)");
  (void)node;
  Shape shape, strides;
  for (int d : new_order_) {
    if (d == kNewAxis) {
      shape.push_back(1);
      strides.push_back(0);
    } else {
      shape.push_back(x.shape()[static_cast<std::size_t>(d)]);
      strides.push_back(x.strides()[static_cast<std::size_t>(d)]);
    }
  }
  outputs[0] = x.view(shape, strides);
}

std::vector<ShapeVars> DimShuffle::infer_shape(const Apply&,
                                               const std::vector<ShapeVars>& input_shapes) const {
  ShapeVars dims;
  for (int d : new_order_)
    dims.push_back(d == kNewAxis ? int64_constant(1) : input_shapes[0][static_cast<std::size_t>(d)]);
  return {dims};
}

Var dimshuffle(const Var& x, const std::vector<int>& order) {
  return apply1(std::make_shared<DimShuffle>(x->ndim(), order), {x});
}

Var expand_dims_left(const Var& x, int n) {
  if (n == 0) return x;
  std::vector<int> order(static_cast<std::size_t>(n), DimShuffle::kNewAxis);
  for (int d = 0; d < x->ndim(); ++d) order.push_back(d);
  return dimshuffle(x, order);
}

Var expand_dims(const Var& x, int axis) {
  int out_nd = x->ndim() + 1;
  int a = axis < 0 ? axis + out_nd : axis;
  if (a < 0 || a >= out_nd)
    throw UserError("expand_dims: axis " + std::to_string(axis) + " is out of range");
  std::vector<int> order;
  for (int d = 0; d < x->ndim(); ++d) order.push_back(d);
  order.insert(order.begin() + a, DimShuffle::kNewAxis);
  return dimshuffle(x, order);
}

Var squeeze(const Var& x, std::vector<int> axes) {
  if (axes.empty())
    for (int d = 0; d < x->ndim(); ++d)
      if (x->type().broadcastable(d)) axes.push_back(d);
  for (auto& a : axes) a = a < 0 ? a + x->ndim() : a;
  std::vector<int> order;
  for (int d = 0; d < x->ndim(); ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) order.push_back(d);
  return dimshuffle(x, order);
}

Var transpose(const Var& x, std::vector<int> axes) {
  if (axes.empty())
    for (int d = x->ndim() - 1; d >= 0; --d) axes.push_back(d);
  for (auto& a : axes) a = a < 0 ? a + x->ndim() : a;
  return dimshuffle(x, axes);
}

Var move_axis(const Var& x, int from, int to) {
  std::vector<int> order;
  for (int d = 0; d < x->ndim(); ++d)
    if (d != from) order.push_back(d);
  order.insert(order.begin() + to, from);
  return dimshuffle(x, order);
}

namespace {
const TensorType& single_input(PropReader& props, const std::vector<TensorType>& input_types) {
  if (input_types.size() != 1)
    throw UserError(props.op_name() + " takes 1 input, got " + std::to_string(input_types.size()));
  return input_types[0];
}
}  // namespace

OpPtr dimshuffle_from_props(PropReader& props, const std::vector<TensorType>&) {
  std::int64_t input_ndim = props.get_int("input_ndim");
  const Json& order = props.raw("new_order");
  props.finish();
  if (input_ndim < 0) props.fail("input_ndim", "must be non-negative");
  if (!order.is_array()) props.fail("new_order", "must be a list of ints and \"x\"");
  std::vector<int> new_order;
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (order[i] == "x")
      new_order.push_back(DimShuffle::kNewAxis);
    else if (order[i].is_number_integer())
      new_order.push_back(order[i].get<int>());
    else
      throw UserError("DimShuffle: new_order entries are ints or \"x\", not " + order[i].dump(),
                      props.where("new_order") + "/" + std::to_string(i));
  }
  try {
    return std::make_shared<DimShuffle>(static_cast<int>(input_ndim), new_order);
  } catch (const UserError& e) {
    throw UserError(e.message(), props.where("new_order"));
  }
}

namespace {
// ExpandDims and Squeeze name their axes `axis` (one, or PyTensor 2.26's list) or, as PyTensor
// 3.x prints several, `axes`; one of the two.
std::optional<std::vector<std::int64_t>> axis_or_axes(PropReader& props) {
  if (props.has("axis") && props.has("axes")) props.fail("axes", "cannot be given together with \"axis\"");
  if (props.has("axes")) {
    props.raw("axis");
    return props.get_axes("axes");
  }
  props.raw("axes");
  return props.get_axes("axis");
}
}  // namespace

OpPtr expand_dims_from_props(PropReader& props, const std::vector<TensorType>& input_types) {
  auto axes = axis_or_axes(props);
  props.finish();
  const TensorType& t = single_input(props, input_types);
  if (!axes) props.fail("axis", "is required");
  const int out_nd = t.ndim() + static_cast<int>(axes->size());
  std::vector<bool> is_new(static_cast<std::size_t>(out_nd), false);
  for (auto a : *axes) {
    std::int64_t p = a < 0 ? a + out_nd : a;
    if (p < 0 || p >= out_nd || is_new[static_cast<std::size_t>(p)])
      props.fail("axis", "has an invalid or repeated axis " + std::to_string(a));
    is_new[static_cast<std::size_t>(p)] = true;
  }
  std::vector<int> order;
  int next = 0;
  for (int p = 0; p < out_nd; ++p) order.push_back(is_new[static_cast<std::size_t>(p)] ? DimShuffle::kNewAxis : next++);
  return std::make_shared<DimShuffle>(t.ndim(), order);
}

OpPtr squeeze_from_props(PropReader& props, const std::vector<TensorType>& input_types) {
  auto axes = axis_or_axes(props);
  props.finish();
  const TensorType& t = single_input(props, input_types);
  std::vector<bool> drop(static_cast<std::size_t>(t.ndim()), false);
  if (!axes) {
    for (int d = 0; d < t.ndim(); ++d) drop[static_cast<std::size_t>(d)] = t.broadcastable(d);
  } else {
    for (auto a : *axes) {
      if (a < -t.ndim() || a >= t.ndim()) props.fail("axis", "is out of range: " + std::to_string(a));
      drop[static_cast<std::size_t>(a < 0 ? a + t.ndim() : a)] = true;
    }
  }
  std::vector<int> order;
  for (int d = 0; d < t.ndim(); ++d)
    if (!drop[static_cast<std::size_t>(d)]) order.push_back(d);
  return std::make_shared<DimShuffle>(t.ndim(), order);
}

OpPtr matrix_transpose_from_props(PropReader& props, const std::vector<TensorType>& input_types) {
  props.finish();
  const TensorType& t = single_input(props, input_types);
  if (t.ndim() < 2) {
    std::string node = props.where("");
    throw UserError("MatrixTranspose swaps the last two dimensions: its input needs rank >= 2, got " + t.str(),
                    node.substr(0, node.rfind("/props")) + "/inputs/0");
  }
  std::vector<int> order;
  for (int d = 0; d < t.ndim() - 2; ++d) order.push_back(d);
  order.push_back(t.ndim() - 1);
  order.push_back(t.ndim() - 2);
  return std::make_shared<DimShuffle>(t.ndim(), order);
}

OpPtr transpose_from_props(PropReader& props, const std::vector<TensorType>& input_types) {
  const TensorType& t = single_input(props, input_types);
  std::vector<int> order;
  if (props.has("axes")) {
    for (auto a : props.get_int_list("axes")) {
      if (a < -t.ndim() || a >= t.ndim()) props.fail("axes", "is out of range: " + std::to_string(a));
      order.push_back(static_cast<int>(a < 0 ? a + t.ndim() : a));
    }
    if (static_cast<int>(order.size()) != t.ndim())
      props.fail("axes", "must list every dimension of the input once");
  } else {
    props.raw("axes");
    for (int d = t.ndim() - 1; d >= 0; --d) order.push_back(d);
  }
  props.finish();
  try {
    return std::make_shared<DimShuffle>(t.ndim(), order);
  } catch (const UserError& e) {
    throw UserError(e.message(), props.where("axes"));
  }
}

// --- gradients ------------------------------------------------------------------------------

std::vector<GradTerm> DimShuffle::pullback(const Apply& node, const VarList& output_grads) const {
  Var g = output_grads[0];
  // Inserted axes: summed if the cotangent is not statically 1 there, then dropped.
  std::vector<int> inserted;
  for (std::size_t p = 0; p < new_order_.size(); ++p)
    if (new_order_[p] == kNewAxis && !g->type().broadcastable(static_cast<int>(p)))
      inserted.push_back(static_cast<int>(p));
  if (!inserted.empty()) g = expand_reduced(sum(g, inserted), g->ndim(), inserted);
  // Back to the input's order, re-inserting the dropped (length-1) input dimensions.
  std::vector<int> order;
  for (int d = 0; d < input_ndim_; ++d) {
    auto it = std::find(new_order_.begin(), new_order_.end(), d);
    order.push_back(it == new_order_.end() ? kNewAxis : static_cast<int>(it - new_order_.begin()));
  }
  return {GradTerm::of(cast_grad(dimshuffle(g, order), node.input(0)->dtype()))};
}

std::vector<GradTerm> DimShuffle::pushforward(const Apply& node, const VarList& input_tangents) const {
  return linear_pushforward(node, input_tangents, {0});
}

// --- batching rule (vectorize_graph) ---------------------------------------------------------

std::optional<VarList> DimShuffle::vectorize(const Apply& node, const VarList& batched_inputs) const {
  const int nb = only_first_batched(node, batched_inputs);
  std::vector<int> order;
  for (int d = 0; d < nb; ++d) order.push_back(d);
  for (int o : new_order_) order.push_back(o == kNewAxis ? o : o + nb);
  return VarList{dimshuffle(batched_inputs[0], order)};
}

}  // namespace kiln
