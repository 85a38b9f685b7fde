// Reductions (PyTensor's CAReduce family): Sum, Prod, ProdWithoutZeros, Max, Min, All, Any and
// the generic CAReduce over a binary scalar op or a two-input Composite `acc, x -> acc'`; and
// Argmax (argmax.cpp). Reduced dimensions are removed from the output (PyTensor's reductions
// do not keep dims). Dtype rules: docs/pytensor_semantics.md section 3.
//
// The end of this header holds two array helpers the family shares with cumulative.cpp and
// softmax.cpp (moving axes last, so that a reduction or scan works on contiguous rows).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

#include "ir/op.h"
#include "ops/props.h"
#include "ops/scalar/scalar_op.h"

namespace kiln {

/// Which CAReduce: the generic one, or a named PyTensor subclass (which fixes the scalar op
/// and the dtype rules).
enum class ReduceKind { CAReduce, Sum, Prod, ProdWithoutZeros, Max, Min, All, Any };

/// Reduced axes after normalisation: sorted, non-negative, distinct; nullopt = every axis.
using ReduceAxes = std::optional<std::vector<int>>;

/// PyTensor's normalize_reduce_axis: null or an empty list -> every axis; negative axes count
/// from the end; the result is sorted. A 0-d input also accepts 0 and -1 (NumPy's rule), which
/// mean "every axis". Throws std::invalid_argument for an out-of-range or repeated axis.
ReduceAxes normalize_reduce_axes(const std::optional<std::vector<std::int64_t>>& axes, int ndim);

/// The reduced axes of an input of rank `ndim`, as an explicit list.
std::vector<int> reduced_axes_list(const ReduceAxes& axes, int ndim);
/// Scalar ops a CAReduce can fold with (associative binary ops: add, mul, max, min, and, or, xor).
bool is_foldable_scalar_op(ScalarOpId id);

/// Output and accumulator dtypes of a reduction.
struct ReduceDTypes {
  DType out;
  DType acc;
};

/// A CAReduce node's op. For the named kinds the scalar op is fixed (Sum: add, Prod and
/// ProdWithoutZeros: mul, Max: maximum, Min: minimum, All: and, Any: or). `dtype` and
/// `acc_dtype` are PyTensor's props; the factories and builders fill them in for Sum, Prod,
/// ProdWithoutZeros and CAReduce (as PyTensor's make_node does) and leave them unset for Max,
/// Min, All and Any (whose clone() drops them).
class CAReduce : public Op {
 public:
  CAReduce(ReduceKind kind, ScalarOp scalar_op, ReduceAxes axis,
           std::optional<DType> dtype = std::nullopt,
           std::optional<DType> acc_dtype = std::nullopt);

  ReduceKind kind() const { return kind_; }
  const ScalarOp& scalar_op() const { return scalar_op_; }
  const ReduceAxes& axis() const { return axis_; }
  std::optional<DType> dtype() const { return dtype_; }
  std::optional<DType> acc_dtype() const { return acc_dtype_; }

  /// Output and accumulator dtypes for an input dtype. Throws std::invalid_argument when the
  /// input or the props are refused (precision-losing acc_dtype, `and` of floats, a Composite
  /// whose types do not fit).
  ReduceDTypes dtypes_for(DType input) const;
  /// The error for a Max or Min over `axis` of length 0 (the evaluator's and generated code's).
  std::string empty_axis_message(int axis) const;

  std::string_view name() const override;
  bool accepts_complex() const override { return true; }
  Json props() const override;
  std::string str() const override;
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;
  /// A Composite scalar op's graph (the fold step, not the node's body).
  std::vector<InnerGraphUse> inner_graphs() const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;

 private:
  ReduceKind kind_;
  ScalarOp scalar_op_;
  ReduceAxes axis_;
  std::optional<DType> dtype_;
  std::optional<DType> acc_dtype_;
};

/// Argmax over some axes (int64 output). Ties give the first occurrence; a NaN wins, the first
/// one (NumPy's rule). Several axes are moved last and flattened in C order (PyTensor's rule).
class Argmax : public Op {
 public:
  explicit Argmax(ReduceAxes axis) : axis_(std::move(axis)) {}
  const ReduceAxes& axis() const { return axis_; }

  std::string_view name() const override { return "Argmax"; }
  Json props() const override;
  std::string str() const override;
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;

 private:
  ReduceAxes axis_;
};

/// The axis argument of the numpy-like API: every axis (default, or std::nullopt), one axis
/// (`0`, `-1`) or a list (`{0, 2}`). Negative axes count from the end.
struct AxisArg {
  AxisArg() = default;
  AxisArg(std::nullopt_t) {}                                    // NOLINT: every axis
  AxisArg(int axis) : axes(std::vector<std::int64_t>{axis}) {}  // NOLINT: one axis
  AxisArg(std::initializer_list<int> list)
      : axes(std::vector<std::int64_t>(list.begin(), list.end())) {}
  AxisArg(const std::vector<int>& list)  // NOLINT: a list of axes
      : axes(std::vector<std::int64_t>(list.begin(), list.end())) {}
  AxisArg(const std::optional<std::vector<int>>& list) {  // NOLINT: nullopt = every axis
    if (list) axes = std::vector<std::int64_t>(list->begin(), list->end());
  }
  std::optional<std::vector<std::int64_t>> axes;
};

/// np.sum. Output dtype: `dtype`, else bool and signed ints -> int64, unsigned -> uint64,
/// others unchanged; float32 accumulates in float64 unless `acc_dtype` says otherwise.
Var sum(const Var& x, AxisArg axis = {}, std::optional<DType> dtype = std::nullopt,
        std::optional<DType> acc_dtype = std::nullopt);
/// np.prod (dtype rules as sum).
Var prod(const Var& x, AxisArg axis = {}, std::optional<DType> dtype = std::nullopt,
         std::optional<DType> acc_dtype = std::nullopt);
/// The product of the nonzero elements (0 when there are none), as in gradients of prod.
Var prod_without_zeros(const Var& x, AxisArg axis = {}, std::optional<DType> dtype = std::nullopt,
                       std::optional<DType> acc_dtype = std::nullopt);
/// np.max (same dtype; a zero-length reduced axis fails at run time).
Var max(const Var& x, AxisArg axis = {});
/// np.min (same dtype; a zero-length reduced axis fails at run time).
Var min(const Var& x, AxisArg axis = {});
/// np.all (bool). A non-bool input first becomes `x != 0`, as PyTensor builds it.
Var all(const Var& x, AxisArg axis = {});
/// np.any (bool). A non-bool input first becomes `x != 0`, as PyTensor builds it.
Var any(const Var& x, AxisArg axis = {});
/// np.argmax generalised to several axes (int64).
Var argmax(const Var& x, AxisArg axis = {});
/// np.mean as PyTensor builds it: sum(x) / length for each reduced axis, the lengths cast to
/// float32 when the sum is float32 and float64 otherwise (so an integer input gives float64).
Var mean(const Var& x, AxisArg axis = {}, std::optional<DType> dtype = std::nullopt,
         std::optional<DType> acc_dtype = std::nullopt);
/// The generic CAReduce of a binary scalar op (add, mul, maximum, minimum, and, or, xor) or a
/// two-input Composite `acc, x -> acc'`. Output dtype: `dtype`, else the input's; accumulator:
/// `acc_dtype`, else the Composite's first input dtype, else the input's.
Var careduce(const ScalarOp& op, const Var& x, AxisArg axis = {},
             std::optional<DType> dtype = std::nullopt,
             std::optional<DType> acc_dtype = std::nullopt);

OpPtr careduce_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr sum_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr prod_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr prod_without_zeros_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr max_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr min_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr all_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr any_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr argmax_from_props(PropReader& props, const std::vector<TensorType>& input_types);

// --- helpers shared by the reduction, cumulative and softmax families -------------------------

/// A view of `a` whose dimensions are the ones not in `axes` (in order), then `axes` (in the
/// given order). Made contiguous, each run of the trailing dimensions is one contiguous row.
Array move_axes_last(const Array& a, const std::vector<int>& axes);

/// The inverse of move_axes_last for one axis: a view of `a` (laid out with `axis` last) with
/// that dimension back at position `axis`.
Array move_last_axis_to(const Array& a, int axis);

/// The input count check of the family's factories: the single input type, or a UserError
/// naming the node.
const TensorType& single_input_type(const PropReader& props,
                                    const std::vector<TensorType>& input_types);

/// Reads an axis prop that is null or one integer, normalised against `ndim` (negative counts
/// from the end). Refuses anything else naming the prop's JSON pointer.
std::optional<int> read_single_axis(PropReader& props, const std::string& key, int ndim);

}  // namespace kiln
