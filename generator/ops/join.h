// Join(axis, *tensors) (np.concatenate) and Split{len_splits}(x, axis, sizes) (np.split by
// sizes; its outputs are views of x).
#pragma once

#include "ir/op.h"
#include "ops/alloc.h"
#include "ops/props.h"

namespace kiln {

/// Join(axis, *tensors): the tensors (equal rank >= 1) concatenated along `axis`, a 0-d signed
/// integer that may be a constant or computed at run time. dtype = upcast of the tensors.
class Join : public Op {
 public:
  std::string_view name() const override { return "Join"; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;
};

/// Split{len_splits}(x, axis, sizes): len_splits consecutive pieces of x along `axis` (a 0-d
/// integer), of the lengths in `sizes` (an integer vector that must add up to x's length).
class Split : public Op {
 public:
  explicit Split(int len_splits) : len_splits_(len_splits) {}
  int len_splits() const { return len_splits_; }
  std::string_view name() const override { return "Split"; }
  Json props() const override { return Json{{"len_splits", len_splits_}}; }
  std::string str() const override { return "Split{" + std::to_string(len_splits_) + "}"; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;
  IndexMap view_map() const override;

 private:
  int len_splits_;
};

/// np.concatenate(tensors, axis) as a Join; a single tensor is returned as is (PyTensor's
/// join). A negative literal axis is normalised against the tensors' rank.
Var join(const IntArg& axis, const VarList& tensors);
/// join(axis, tensors) with NumPy's argument order.
Var concatenate(const VarList& tensors, const IntArg& axis = 0);
/// Splits x along `axis` into pieces of the given sizes ({2, 3}, or a 1-d integer Var whose
/// length is known statically).
VarList split(const Var& x, const IntList& sizes, const IntArg& axis = 0);

/// Graph-file factories (registered in ops/op_table.cpp).
OpPtr join_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr split_from_props(PropReader& props, const std::vector<TensorType>& input_types);

}  // namespace kiln
