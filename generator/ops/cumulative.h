// CumOp: cumulative sum or product along one axis (np.cumsum / np.cumprod), or over the
// flattened input when the axis is null. The output keeps the input dtype and accumulates in
// it (integers wrap; bool sums are `or`, bool products `and`), as PyTensor's C code does.
#pragma once

#include <optional>

#include "ir/op.h"
#include "ops/props.h"

namespace kiln {

/// CumOp's `mode`.
enum class CumMode { Add, Mul };

class CumOp : public Op {
 public:
  /// `axis`: a non-negative axis, or nullopt for the flattened input (1-d output).
  CumOp(std::optional<int> axis, CumMode mode) : axis_(axis), mode_(mode) {}
  std::optional<int> axis() const { return axis_; }
  CumMode mode() const { return mode_; }

  std::string_view name() const override { return "CumOp"; }
  bool accepts_complex() const override { return true; }
  Json props() const override;
  /// PyTensor's spelling: Cumsum{axis=0}, Cumprod{axis=None}.
  std::string str() const override;
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;

 private:
  std::optional<int> axis_;
  CumMode mode_;
};

/// np.cumsum in the input's dtype; `axis` may be negative; nullopt flattens.
Var cumsum(const Var& x, std::optional<int> axis = std::nullopt);
/// np.cumprod in the input's dtype; `axis` may be negative; nullopt flattens.
Var cumprod(const Var& x, std::optional<int> axis = std::nullopt);

OpPtr cumop_from_props(PropReader& props, const std::vector<TensorType>& input_types);

}  // namespace kiln
