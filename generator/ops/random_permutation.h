// PyTensor's PermutationRV (pytensor/tensor/random/basic.py, `permutation`): inputs (rng,
// size, x), outputs (next_rng, draws). Signature "()->(x)": x an integer, the draws NumPy's
// permutation of arange(x). Signature "(x0,...,xk)->(x0,...,xk)": the draws x with its first
// core axis permuted, once per batch element in C order (PyTensor's rng_fn loop over
// rng.permutation). The shuffles are runtime/.../random/core_variables.hpp's permutation_rows,
// which perform and the generated code both call.
#pragma once

#include <string>

#include "ops/props.h"
#include "ops/random.h"

namespace kiln {

/// PermutationRV with `core_ndim` core dimensions in x (0: x is the integer n), as `signature`
/// spells them; draws of `dtype` (PyTensor's: x's dtype).
class PermutationRandomVariable : public DrawOp {
 public:
  PermutationRandomVariable(int core_ndim, std::string signature, DType dtype)
      : core_ndim_(core_ndim), signature_(std::move(signature)), dtype_(dtype) {}
  int core_ndim() const { return core_ndim_; }
  DType dtype() const { return dtype_; }

  std::string_view name() const override { return "PermutationRV"; }
  Json props() const override;
  /// PyTensor's `permutation_rv{"(x0)->(x0)"}`.
  std::string str() const override;
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node, const std::vector<ShapeVars>& input_shapes) const override;

 private:
  int core_ndim_;
  std::string signature_;
  DType dtype_;
};

/// The factory of PermutationRV nodes (props name, signature, dtype, inplace).
OpPtr permutation_from_props(PropReader& props, const std::vector<TensorType>& input_types);

}  // namespace kiln
