#include "ops/ifelse.h"

#include "ops/batching.h"
#include "ops/grad_util.h"
#include "ir/error.h"
#include "kiln/runtime/scalar_math.hpp"

namespace kiln {

namespace {

// The truth of a 0-d condition: nonzero (NaN counts as true, as Python's bool() of it).
bool truth(const Array& cond) {
  bool t = false;
  visit_dtype(cond.dtype(), [&](auto v) {
    using T = decltype(v);
    t = kiln_scalar::convert<bool>(*static_cast<const T*>(cond.element_ptr(nullptr)));
  });
  return t;
}

// Discrete outputs carry no tangent (their cotangent is float, their tangent zero).
bool differentiable(DType dt) { return is_float(dt); }

}  // namespace

IfElse::IfElse(int n_outs, bool as_view, std::string label)
    : n_outs_(n_outs), as_view_(as_view), label_(std::move(label)) {
  if (n_outs_ < 1) throw UserError("IfElse: n_outs must be at least 1, got " + std::to_string(n_outs_));
}

const IfElse* ifelse_op(const Apply* node) { return node ? dynamic_cast<const IfElse*>(&node->op()) : nullptr; }

Json IfElse::props() const {
  Json p{{"as_view", as_view_}, {"n_outs", n_outs_}};
  if (!label_.empty()) p["name"] = label_;
  return p;
}

std::string IfElse::str() const {
  std::string args = label_;
  if (as_view_) args += (args.empty() ? "" : ",") + std::string("inplace");
  return "if{" + args + "}";
}

std::vector<std::vector<int>> IfElse::lazy_branches() const {
  std::vector<std::vector<int>> branches(2);
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < n_outs_; ++i) branches[static_cast<std::size_t>(b)].push_back(branch_input(b, i));
  return branches;
}

int IfElse::select_branch(const std::vector<Array>& inputs) const { return truth(inputs[0]) ? 0 : 1; }

std::vector<TensorType> IfElse::infer_types(const VarList& inputs) const {
  const std::size_t expected = 1 + 2 * static_cast<std::size_t>(n_outs_);
  if (inputs.size() != expected)
    type_error(*this, "takes the condition and " + std::to_string(n_outs_) + " then- and " + std::to_string(n_outs_) +
                          " else-values (" + std::to_string(expected) + " inputs), got " +
                          std::to_string(inputs.size()));
  if (inputs[0]->ndim() != 0)
    type_error(*this, "the condition must be a 0-d value, got " + inputs[0]->type().str());
  std::vector<TensorType> out;
  for (int i = 0; i < n_outs_; ++i) {
    const TensorType& t = inputs[static_cast<std::size_t>(branch_input(0, i))]->type();
    const TensorType& f = inputs[static_cast<std::size_t>(branch_input(1, i))]->type();
    const std::string pair = "output " + std::to_string(i) + ": ";
    if (t.dtype != f.dtype)
      type_error(*this, pair + "both branches must have the same dtype, got then=" + std::string(dtype_name(t.dtype)) +
                            ", else=" + std::string(dtype_name(f.dtype)));
    if (t.ndim() != f.ndim())
      type_error(*this, pair + "both branches must have the same rank, got then=" + t.str() + ", else=" + f.str());
    // Only the static lengths both branches agree on hold for the output.
    Shape shape;
    for (int d = 0; d < t.ndim(); ++d) {
      const auto k = static_cast<std::size_t>(d);
      shape.push_back(t.shape[k] == f.shape[k] ? t.shape[k] : kUnknownLength);
    }
    out.emplace_back(t.dtype, shape);
  }
  return out;
}

void IfElse::perform(const Apply&, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  const int branch = select_branch(inputs);
  for (int i = 0; i < n_outs_; ++i) {
    const Array& v = inputs[static_cast<std::size_t>(branch_input(branch, i))];
    KILN_INTERNAL_ASSERT(v.defined(), "IfElse: the taken branch's value " + std::to_string(i) + " was not computed");
    // Always a copy, as_view or not: no view_map is declared, so in-place rewrites may overwrite it.
    outputs[static_cast<std::size_t>(i)] = v.copy();
  }
}

std::vector<ShapeVars> IfElse::infer_shape(const Apply& node, const std::vector<ShapeVars>& input_shapes) const {
  VarList then_lengths, else_lengths;
  for (int i = 0; i < n_outs_; ++i) {
    for (const Var& l : input_shapes[static_cast<std::size_t>(branch_input(0, i))]) then_lengths.push_back(l);
    for (const Var& l : input_shapes[static_cast<std::size_t>(branch_input(1, i))]) else_lengths.push_back(l);
  }
  std::vector<ShapeVars> out(static_cast<std::size_t>(n_outs_));
  if (then_lengths.empty()) return out;  // every output is 0-d
  const VarList lengths = ifelse(node.input(0), then_lengths, else_lengths, label_.empty() ? "shape" : "shape_" + label_);
  std::size_t k = 0;
  for (int i = 0; i < n_outs_; ++i)
    for (int d = 0; d < node.output_ptr(i)->ndim(); ++d) out[static_cast<std::size_t>(i)].push_back(lengths[k++]);
  return out;
}

std::vector<GradTerm> IfElse::pullback(const Apply& node, const VarList& output_grads) const {
  std::vector<GradTerm> terms(static_cast<std::size_t>(node.num_inputs()), GradTerm::disconnected());
  // Outputs with a cotangent; the others contribute nothing to either branch.
  std::vector<int> live;
  VarList grads;
  for (int i = 0; i < n_outs_; ++i) {
    const Var& g = output_grads[static_cast<std::size_t>(i)];
    if (!g) continue;
    live.push_back(i);
    grads.push_back(cast_grad(g, node.output_ptr(i)->dtype()));
  }
  if (live.empty()) return terms;
  terms[0] = GradTerm::of(zeros_like(node.input(0)));
  for (int branch = 0; branch < 2; ++branch) {
    // Branch `branch` gets the cotangents when it is taken, zeros of its own shape otherwise.
    VarList zeros;
    for (std::size_t k = 0; k < live.size(); ++k)
      zeros.push_back(zeros_like(node.input(branch_input(branch, live[k])), grads[k]->dtype()));
    const std::string suffix = label_.empty() ? "" : label_ + (branch == 0 ? "_grad_t" : "_grad_f");
    const VarList g = branch == 0 ? ifelse(node.input(0), grads, zeros, suffix) : ifelse(node.input(0), zeros, grads, suffix);
    for (std::size_t k = 0; k < live.size(); ++k)
      terms[static_cast<std::size_t>(branch_input(branch, live[k]))] = GradTerm::of(g[k]);
  }
  return terms;
}

std::vector<GradTerm> IfElse::pushforward(const Apply& node, const VarList& input_tangents) const {
  std::vector<GradTerm> terms(static_cast<std::size_t>(n_outs_), GradTerm::disconnected());
  std::vector<int> live;
  VarList then_t, else_t;
  for (int i = 0; i < n_outs_; ++i) {
    const Var& t = input_tangents[static_cast<std::size_t>(branch_input(0, i))];
    const Var& f = input_tangents[static_cast<std::size_t>(branch_input(1, i))];
    if ((!t && !f) || !differentiable(node.output_ptr(i)->dtype())) continue;
    const DType dt = grad_dtype(node.output_ptr(i)->dtype());
    live.push_back(i);
    then_t.push_back(t ? cast_grad(t, dt) : zeros_like(node.input(branch_input(0, i)), dt));
    else_t.push_back(f ? cast_grad(f, dt) : zeros_like(node.input(branch_input(1, i)), dt));
  }
  if (live.empty()) return terms;
  const VarList out = ifelse(node.input(0), then_t, else_t, label_);
  for (std::size_t k = 0; k < live.size(); ++k) terms[static_cast<std::size_t>(live[k])] = GradTerm::of(out[k]);
  return terms;
}

VarList ifelse(const Var& cond, const VarList& then_vals, const VarList& else_vals, const std::string& label) {
  if (then_vals.size() != else_vals.size())
    throw UserError("ifelse: the then-branch has " + std::to_string(then_vals.size()) + " values, the else-branch " +
                    std::to_string(else_vals.size()));
  VarList inputs{cond};
  inputs.insert(inputs.end(), then_vals.begin(), then_vals.end());
  inputs.insert(inputs.end(), else_vals.begin(), else_vals.end());
  ApplyPtr node = make_node(std::make_shared<IfElse>(static_cast<int>(then_vals.size()), false, label), inputs);
  VarList outs;
  for (int i = 0; i < node->num_outputs(); ++i) outs.push_back(node->output(i));
  return outs;
}

Var ifelse(const Var& cond, const Var& then_val, const Var& else_val, const std::string& label) {
  return ifelse(cond, VarList{then_val}, VarList{else_val}, label)[0];
}

OpPtr ifelse_from_props(PropReader& props, const std::vector<TensorType>&) {
  const std::int64_t n_outs = props.get_int("n_outs");
  const bool as_view = props.get_bool("as_view", false);
  std::string label;
  if (props.has("name")) label = props.get_string("name");
  props.raw("name");  // absent or null: no name
  props.finish();
  if (n_outs < 1 || n_outs > (1 << 20)) props.fail("n_outs", "must be a positive integer, got " + std::to_string(n_outs));
  return std::make_shared<IfElse>(static_cast<int>(n_outs), as_view, label);
}

std::optional<VarList> IfElse::vectorize(const Apply& node, const VarList& batched_inputs) const {
  const std::vector<int> batch = batch_dims(node, batched_inputs);
  if (batch[0] != 0) cannot_vectorize(node, "the condition is batched: each batch element could take another branch");
  VarList then_vals, else_vals;
  for (int i = 0; i < n_outs_; ++i) {
    const auto t = static_cast<std::size_t>(branch_input(0, i)), e = static_cast<std::size_t>(branch_input(1, i));
    const int nb = std::max(batch[t], batch[e]);
    const VarList pair = nb == 0 ? VarList{batched_inputs[t], batched_inputs[e]}
                                 : with_full_batch({batched_inputs[t], batched_inputs[e]}, {batch[t], batch[e]}, nb);
    then_vals.push_back(pair[0]);
    else_vals.push_back(pair[1]);
  }
  return ifelse(batched_inputs[0], then_vals, else_vals, label_);
}

}  // namespace kiln
