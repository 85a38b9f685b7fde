// PyTensor's RandomVariables with core dimensions (pytensor/tensor/random/basic.py):
// DirichletRV "(a)->(a)", MultinomialRV "(),(p)->(p)", CategoricalRV "(p)->()" and MvNormalRV
// "(n),(n,n)->(n)" (methods "cholesky", "svd", "eigh"). Inputs (rng, size, *params), outputs (next_rng, draws);
// the batch dimensions of the parameters broadcast (or broadcast to `size`), and each batch
// element is one NumPy call, in C order, as PyTensor's rng_fn loops. Checks and draws live in
// runtime/include/kiln/runtime/random/core_variables.hpp, which perform and the generated code
// (codegen/cpp/emit_random.cpp) both call.
#pragma once

#include <string_view>
#include <vector>

#include "ir/op.h"
#include "kiln/runtime/random/core_variables.hpp"
#include "ops/props.h"
#include "ops/random.h"

namespace kiln {

/// A distribution with core dimensions: the PyTensor class, its `name` and `signature` props,
/// the runtime's kind (which fixes the parameters' core ranks) and the parameter names.
struct RvCoreDistribution {
  std::string_view op;         ///< "DirichletRV"
  std::string_view name;       ///< "dirichlet"
  std::string_view signature;  ///< "(a)->(a)"
  kiln_random::core::Kind kind;
  std::vector<std::string_view> params;
  kiln_random::core::Spec spec() const { return kiln_random::core::spec_of(kind); }
};

/// Every RandomVariable with core dimensions kiln implements.
const std::vector<RvCoreDistribution>& rv_core_distributions();
/// The distribution of a PyTensor class name, or null.
const RvCoreDistribution* find_rv_core_distribution(std::string_view op_name);

/// A RandomVariable with core dimensions: (rng, size, *params) -> (next_rng, draws); draws of
/// shape batch + core, made in C order over the batch, cast to `dtype`.
class CoreRandomVariable : public DrawOp {
 public:
  /// `mv_method`: MvNormalRV's method, 0 "cholesky", 1 "svd", 2 "eigh".
  CoreRandomVariable(const RvCoreDistribution& dist, DType dtype, int mv_method = 0)
      : dist_(&dist), dtype_(dtype), mv_method_(mv_method) {}
  int mv_method() const { return mv_method_; }
  const RvCoreDistribution& distribution() const { return *dist_; }
  DType dtype() const { return dtype_; }

  std::string_view name() const override { return dist_->op; }
  Json props() const override;
  /// PyTensor's `dirichlet_rv{"(a)->(a)"}`.
  std::string str() const override;
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node, const std::vector<ShapeVars>& input_shapes) const override;

 private:
  const RvCoreDistribution* dist_;
  DType dtype_;
  int mv_method_;
};

/// The factory of every class name in rv_core_distributions().
OpPtr core_random_variable_from_props(PropReader& props, const std::vector<TensorType>& input_types);

/// The runtime's view of an array (its data, dtype, shape and strides).
kiln_random::core::Param core_param_of(const Array& a);

/// Cholesky through kiln's linear algebra (LAPACK's potrf, float32 when `single`), lower
/// factor in place: the factorization NumPy's cholesky makes for MvNormalRV.
bool mvnormal_cholesky(int n, double* a, bool single);
/// MvNormalRV's "svd" and "eigh" factors (NumPy's gesdd and syevd through kiln's LAPACK).
bool mvnormal_svd(int n, double* a, bool single);
bool mvnormal_eigh(int n, double* a, bool single);

}  // namespace kiln
