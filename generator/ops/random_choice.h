// PyTensor's ChoiceWithoutReplacement (pytensor/tensor/random/basic.py; what
// pytensor.tensor.random.choice builds for replace=False with a size): inputs (rng, size, a,
// [p,] core_shape), outputs (next_rng, draws). Its rng_fn calls NumPy's
// `Generator.choice(a, core_shape, replace=False, p=p)`, whose checks and both samplers (Floyd's
// or a tail shuffle without p, rounds of cumsum/searchsorted with p) are
// runtime/.../random/core_variables.hpp's choice_indices, called by perform and by generated code.
#pragma once

#include <string>

#include "ops/props.h"
#include "ops/random.h"

namespace kiln {

/// ChoiceWithoutReplacement with signature `signature`: a with `a_core_ndim` core dimensions (0:
/// a is the population size), with or without p, a core shape of `shape_len` entries; draws of
/// `dtype` (PyTensor's: a's dtype). Only unbatched a and p are implemented.
class ChoiceWithoutReplacement : public DrawOp {
 public:
  ChoiceWithoutReplacement(std::string signature, int a_core_ndim, bool has_p, int shape_len, DType dtype)
      : signature_(std::move(signature)), a_core_ndim_(a_core_ndim), has_p_(has_p), shape_len_(shape_len),
        dtype_(dtype) {}
  int a_core_ndim() const { return a_core_ndim_; }
  bool has_p() const { return has_p_; }
  int shape_len() const { return shape_len_; }
  DType dtype() const { return dtype_; }
  /// The input index of the core shape.
  int shape_input() const { return has_p_ ? 4 : 3; }

  std::string_view name() const override { return "ChoiceWithoutReplacement"; }
  Json props() const override;
  /// PyTensor's `choice_without_replacement_rv{"(a0),(a0),(2)->(s0,s1)"}`.
  std::string str() const override;
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node, const std::vector<ShapeVars>& input_shapes) const override;

 private:
  std::string signature_;
  int a_core_ndim_;
  bool has_p_;
  int shape_len_;
  DType dtype_;
};

/// The factory of ChoiceWithoutReplacement nodes (props name, signature, dtype, inplace).
OpPtr choice_without_replacement_from_props(PropReader& props, const std::vector<TensorType>& input_types);

}  // namespace kiln
