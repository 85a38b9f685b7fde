// PyTensor's RandomVariable ops (pytensor/tensor/random/op.py, basic.py), by class name:
// inputs (rng, size, *params), outputs (next_rng, draws). The draws are NumPy Generator's,
// bit for bit: the checks and samplers live in runtime/include/kiln/runtime/random/
// variables.hpp, which both perform and the generated code (codegen/cpp/emit_random.cpp) call.
#pragma once

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/op.h"
#include "kiln/runtime/random/variables.hpp"
#include "ops/props.h"

namespace kiln {

/// One parameter of a distribution: its PyTensor name and whether NumPy reads it as int64
/// (binomial's n, hypergeometric's counts, integers' bounds) rather than as double.
struct RvParam {
  std::string_view name;
  bool integer = false;
};

/// A distribution kiln draws: the PyTensor class, its `name` prop (the NumPy method, or the
/// name of PyTensor's formula), its signature, the kind of its draws and its parameters, and
/// the runtime functions `kiln_random::rv::<name>_check` / `<name>_draw`.
struct RvDistribution {
  std::string_view op;          ///< "NormalRV"
  std::string_view name;        ///< "normal"
  std::string_view signature;   ///< "(),()->()"
  bool integer_draws = false;   ///< int64 draws (dtype an integer) rather than float64 (dtype a float)
  std::vector<RvParam> params;
  const char* (*check)(const kiln_random::rv::Args&) = nullptr;
  double (*draw_real)(kiln_random::Pcg64&, const kiln_random::rv::Args&) = nullptr;
  std::int64_t (*draw_int)(kiln_random::Pcg64&, const kiln_random::rv::Args&) = nullptr;
  /// SciPy's shortcut (ScipyRandomVariables with a scale): when parameter `zero_scale_param`
  /// is 0 everywhere, the draws are parameter `loc_param` (0 when it is -1: SciPy's default
  /// loc) and nothing is drawn. zero_scale_param -1: no such shortcut.
  int zero_scale_param = -1;
  int loc_param = -1;
  /// Distributions SciPy draws in two passes (BetaBinomialRV): one value per output element
  /// drawn over the whole output first, handed to `draw_*` as `Args::first`. Null otherwise.
  double (*first_pass)(kiln_random::Pcg64&, const kiln_random::rv::Args&) = nullptr;
};

/// Every RandomVariable kiln implements.
const std::vector<RvDistribution>& rv_distributions();
/// The distribution of a PyTensor class name, or null.
const RvDistribution* find_rv_distribution(std::string_view op_name);

/// What every RandomVariable op shares: inputs (rng, size, *params), outputs (next_rng, draws),
/// no gradient (PyTensor defines none), never computed ahead of time.
class DrawOp : public Op {
 public:
  /// PyTensor defines no gradient for draws: every input's is undefined.
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;
  bool accepts_kind(int index, TypeKind kind) const override;
  /// Draws are never computed ahead of time.
  bool do_constant_folding(const Apply&) const override { return false; }

 protected:
  /// The generator an rng value (kiln's six uint64 words) holds.
  static kiln_random::Pcg64 generator_of(const Array& rng);
  /// The rng value holding `g`'s state.
  static Array rng_value(const kiln_random::Pcg64& g);
  /// PyTensor's str of a RandomVariable: `normal_rv{"(),()->()"}`.
  static std::string rv_str(std::string_view name, std::string_view signature);
  /// The draws' static shape `size` gives (a length per entry, unknown where computed at run
  /// time), or nullopt when size is None; type errors for a size that is not an integer vector
  /// of static length at least `batch_ndim`, or has a negative constant entry.
  std::optional<Shape> size_shape(const VarList& inputs, int batch_ndim) const;
};

/// A RandomVariable: (rng, size, *params) -> (next_rng, draws). `size` is a none or an integer
/// vector of static length; without it the draws take the parameters' broadcast shape (NumPy
/// broadcasting, length 1 stretching at run time), with it the parameters broadcast to `size`.
/// The draws are NumPy's, made in C order over the output and cast to `dtype`.
class RandomVariable : public DrawOp {
 public:
  RandomVariable(const RvDistribution& dist, DType dtype) : dist_(&dist), dtype_(dtype) {}
  const RvDistribution& distribution() const { return *dist_; }
  DType dtype() const { return dtype_; }

  std::string_view name() const override { return dist_->op; }
  Json props() const override;
  /// PyTensor's `normal_rv{"(),()->()"}`.
  std::string str() const override;
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node, const std::vector<ShapeVars>& input_shapes) const override;

 private:
  const RvDistribution* dist_;
  DType dtype_;
};

/// The static length of one broadcast dimension of the draws from the parameters' static
/// lengths there (1 for a parameter without the dimension): the length any has other than 1, 1
/// when all have 1, unknown otherwise; a type error on `op` when two differ.
std::int64_t rv_static_broadcast(const std::vector<std::int64_t>& lengths, const Op& op, int dim);

/// True for ops each application of which is an event of its own (random draws): rewrites
/// never merge two such nodes, even with equal inputs, nor fold them into constants.
bool is_impure(const Op& op);

/// Builds a draw: `op_name` a RandomVariable class name, `size` null for None (else an integer
/// vector), `dtype` the prop (default: float64 for continuous, int64 for discrete draws).
/// Returns (next_rng, draws).
std::pair<Var, Var> random_variable(std::string_view op_name, const Var& rng, const Var& size, const VarList& params,
                                    std::optional<DType> dtype = std::nullopt);

/// The factory of every RandomVariable class name (the class comes from props.op_name()).
OpPtr random_variable_from_props(PropReader& props, const std::vector<TensorType>& input_types);

}  // namespace kiln
