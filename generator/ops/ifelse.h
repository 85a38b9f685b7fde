// IfElse{as_view, n_outs, name}(cond, *then_vals, *else_vals): PyTensor's lazy conditional
// (pytensor/ifelse.py). Output i is then_vals[i] when the 0-d `cond` is nonzero, else
// else_vals[i]. Work needed only by the branch not taken is never done: the evaluator and the
// code generator run each branch's exclusive nodes inside the branch (ir/branch_schedule.h).
#pragma once

#include <string>

#include "ir/op.h"
#include "ops/props.h"

namespace kiln {

class IfElse : public Op {
 public:
  /// `n_outs` pairs of branch values; `as_view` (PyTensor's hint that outputs may alias the
  /// taken branch's values) is kept and printed, but outputs are always copies; `label` is
  /// PyTensor's optional name (printing only).
  IfElse(int n_outs, bool as_view = false, std::string label = "");

  int n_outs() const { return n_outs_; }
  bool as_view() const { return as_view_; }
  const std::string& label() const { return label_; }
  /// Input index of the then-branch (branch 0) or else-branch (branch 1) value of output i.
  int branch_input(int branch, int i) const { return 1 + branch * n_outs_ + i; }

  std::string_view name() const override { return "IfElse"; }
  /// {"as_view", "n_outs"}, plus "name" when the op has one.
  Json props() const override;
  /// PyTensor's form: "if{}", "if{name,inplace}".
  std::string str() const override;
  /// Branch 0 reads the then-values, branch 1 the else-values.
  std::vector<std::vector<int>> lazy_branches() const override;
  /// 0 (then) when the condition (inputs[0]) is nonzero, else 1.
  int select_branch(const std::vector<Array>& inputs) const override;
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  /// An IfElse of the branches' lengths (shapes are only known once the branch is chosen).
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  /// PyTensor's: each branch's inputs get an IfElse of the cotangents and zeros; the condition
  /// gets zeros (it is taken to select the same branch under a small perturbation).
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  /// PyTensor's R_op: an IfElse of the branches' tangents.
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;
  /// Batched branch values (each output's pair broadcast to the batch dimensions either has);
  /// a batched condition is refused (each batch element could take another branch).
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;

 private:
  int n_outs_;
  bool as_view_;
  std::string label_;
};

/// The IfElse node, when `node` is one (null otherwise, and for a null node).
const IfElse* ifelse_op(const Apply* node);


/// ifelse(cond, then, else): one IfElse over the pairs (then[i], else[i]); its outputs.
VarList ifelse(const Var& cond, const VarList& then_vals, const VarList& else_vals, const std::string& label = "");
/// The one-output form.
Var ifelse(const Var& cond, const Var& then_val, const Var& else_val, const std::string& label = "");

/// Graph-file factory (registered in ops/op_table.cpp): props n_outs (required), as_view
/// (default false), name (a string or null).
OpPtr ifelse_from_props(PropReader& props, const std::vector<TensorType>& input_types);

}  // namespace kiln
