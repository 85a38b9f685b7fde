// Dot (np.dot of vectors and matrices) and BatchedDot (np.matmul of two 3-d tensors), plus the
// plain-loop matrix product kernel that the BLAS forms (ops/blas) and Blockwise reuse.
//
// Dtypes follow PyTensor: the output is upcast(x, y); integers wrap in the output dtype (as
// NumPy's integer dot does), bool·bool is the OR of ANDs, floats accumulate in their own type.
#pragma once

#include "ir/op.h"
#include "ops/props.h"

namespace kiln {

/// np.dot for 1-d and 2-d operands: vector·vector -> 0-d, matrix·vector, vector·matrix,
/// matrix·matrix. Other ranks are refused at make_node (use matmul / Blockwise for batches).
class Dot : public Op {
 public:
  std::string_view name() const override { return "Dot"; }
  bool accepts_complex() const override { return true; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;
  std::vector<GradTerm> pushforward(const Apply& node, const VarList& input_tangents) const override;
};

/// np.matmul of two 3-d tensors with the batch on axis 0: out[b] = x[b] @ y[b]. The batch
/// lengths must be equal (no broadcasting, as in PyTensor).
class BatchedDot : public Op {
 public:
  std::string_view name() const override { return "BatchedDot"; }
  std::vector<TensorType> infer_types(const VarList& inputs) const override;
  void perform(const Apply& node, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) const override;
  std::vector<ShapeVars> infer_shape(const Apply& node,
                                     const std::vector<ShapeVars>& input_shapes) const override;
  std::vector<GradTerm> pullback(const Apply& node, const VarList& output_grads) const override;
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;
};

/// out[i, j] = sum_k x[i, k] * y[k, j] for 2-d arrays of one dtype and any strides; `out` is a
/// preallocated (m, n) array of that dtype. The caller checks that the inner lengths agree.
void matmul_2d_into(const Array& x, const Array& y, Array& out);

/// np.dot of 1-d/2-d arrays computed in `dtype` (inputs are converted first); a new
/// C-contiguous array. Throws RuntimeFailure when the inner lengths differ.
Array dot_arrays(const Array& x, const Array& y, DType dtype);

/// A length that two static shapes must share: the known one of a and b (kUnknownLength when
/// neither is known). Throws std::invalid_argument when both are known and differ.
std::int64_t merge_static_length(std::int64_t a, std::int64_t b);

/// np.dot: a product with a 0-d operand is an elementwise multiplication; 1-d and 2-d operands
/// give a Dot node; other ranks are refused.
Var dot(const Var& a, const Var& b);

/// The gufunc signature of a Dot of operands of these ranks ("(m,k),(k)->(m)"), for looping
/// it in a Blockwise.
std::string dot_gufunc_signature(int x_ndim, int y_ndim);
/// np.matmul: 1-d/2-d operands give a Dot; operands with batch dimensions give a Blockwise of
/// Dot whose batch dimensions broadcast (only statically-1 ones) like Elemwise. 0-d is refused.
Var matmul(const Var& a, const Var& b);
/// dot of a[i] and b[i] for every i along axis 0: BatchedDot for two 3-d tensors, else a
/// Blockwise of Dot over that one batch dimension (PyTensor's vectorized batched_dot).
Var batched_dot(const Var& a, const Var& b);
/// Outer product of two vectors: dot(x[:, None], y[None, :]), as PyTensor writes it.
Var outer(const Var& x, const Var& y);

OpPtr dot_from_props(PropReader& props, const std::vector<TensorType>& input_types);
OpPtr batched_dot_from_props(PropReader& props, const std::vector<TensorType>& input_types);

}  // namespace kiln
