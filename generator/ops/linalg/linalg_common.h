// What the linear-algebra op families share: PyTensor 3.x's output dtype rule, the base class
// that gives each op its gufunc signature (for Blockwise and vectorize), type checks, the
// contiguous copies perform hands to the kernels (kiln/runtime/linalg_kernels.hpp), prop
// readers for the spellings 2.26 and 3.x differ in, and graph helpers for the gradients.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/op.h"
#include "kiln/runtime/linalg_kernels.hpp"
#include "ops/props.h"

namespace kiln {

/// PyTensor 3.x's linalg_output_dtype: each input maps to float32 (float32, bool, 8- and
/// 16-bit integers) or float64 (float64, wider integers); the result is float64 if any is.
DType linalg_output_dtype(const std::vector<DType>& inputs);

/// A linear-algebra core op: a fixed gufunc signature for the core ranks of its inputs, which
/// Blockwise checks signatures against and vectorize_graph batches it with.
class LinalgOp : public Op {
 public:
  /// PyTensor's gufunc_signature ("(m,m),(m,n)->(m,n)") for inputs of these core ranks.
  virtual std::string gufunc_signature(const std::vector<int>& input_ranks) const = 0;
  /// Batched as a Blockwise of itself with that signature.
  std::optional<VarList> vectorize(const Apply& node, const VarList& batched_inputs) const override;
  /// As PyTensor 3.x prints the op (so dprint's Blockwise{core, signature} reads as PyTensor's):
  /// its __props__ in PyTensor's order, with False for the overwrite_* flags kiln ignores (it
  /// never overwrites inputs), then any prop only older files have (on_error, trans).
  std::string str() const override;
};

/// The graph-file names of every linear-algebra op (all of them run as Blockwise core ops).
const std::vector<std::string>& linalg_op_names();

/// True when `a` and `b` are the same signature up to a one-to-one renaming of dimensions.
bool same_signature_shape(const std::string& a, const std::string& b);

/// Applies a core op to `inputs`, or a Blockwise of it when an input has more dimensions than
/// its core rank (`core_ranks[i]`); leading dimensions broadcast as batch dimensions.
VarList apply_linalg(OpPtr op, VarList inputs, const std::vector<int>& core_ranks);
Var apply_linalg1(OpPtr op, VarList inputs, const std::vector<int>& core_ranks);

// --- type checks (make_node) ----------------------------------------------------------------------

/// Input `i` must exist, have rank `rank` and a real dtype (complex: NotImplementedError).
const TensorType& linalg_input(const Op& op, const VarList& inputs, std::size_t i, int rank);
/// Refuses a wrong number of inputs.
void require_input_count(const Op& op, const VarList& inputs, std::size_t count);
/// The common static length of a square matrix's two dimensions (kUnknownLength when neither is
/// known); a type error when both are known and differ.
std::int64_t square_static_length(const Op& op, const TensorType& t, std::size_t input);
/// Two static lengths that must agree (merged), or a type error naming `what`.
std::int64_t agreeing_length(const Op& op, std::int64_t a, std::int64_t b, const std::string& what);

// --- perform helpers ------------------------------------------------------------------------------

/// A fresh C-contiguous copy of `a` converted to `dtype` (kernels overwrite their inputs).
Array matrix_copy(const Array& a, DType dtype);
/// The length of a square matrix; RuntimeFailure "expected a square matrix, got shape (2, 3)".
std::int64_t square_length(const Array& a, const char* what = "input");
/// A length as LAPACK's int; RuntimeFailure when it does not fit.
int lapack_dim(std::int64_t n);
/// Scratch for one kernel call.
struct KernelWork {
  Array reals;
  std::vector<int> ints;
  KernelWork(DType dt, const kiln_linalg::Work& w);
  template <typename T>
  T* r() {
    return reals.data<T>();
  }
  int* i() { return ints.data(); }
};
/// A RuntimeFailure with the kernel's message (the words generated code uses too).
[[noreturn]] void kernel_failure(kiln_linalg::Status s);
/// Throws unless `s` is Ok.
void check_status(kiln_linalg::Status s);
/// Calls f(T{}) with float or double for a float dtype.
template <typename F>
void visit_real(DType dt, F&& f) {
  if (dt == DType::Float32)
    f(float{});
  else
    f(double{});
}

// --- props ----------------------------------------------------------------------------------------

/// `lower` (3.x), or 2.26's `UPLO` ("L"/"U"); `dflt` when neither is given.
bool read_lower(PropReader& props, bool dflt);
/// `b_ndim` (1 or 2) when given; checked against b's core rank by make_node.
std::optional<int> read_b_ndim(PropReader& props);

// --- graph helpers for gradients -------------------------------------------------------------------

/// The transpose of a matrix (its last two dimensions).
Var mT(const Var& x);
/// np.tril(x, k) / np.triu(x, k) of a matrix, as PyTensor builds them (x times a Tri mask).
Var tril(const Var& x, int k = 0);
Var triu(const Var& x, int k = 0);
/// A square matrix with `v` on its diagonal.
Var diag_matrix(const Var& v);
/// The main diagonal of a matrix.
Var diag_of(const Var& x);
/// The identity matrix of x's row count, in x's dtype (PyTensor's identity_like).
Var identity_like(const Var& x);
/// Matrix product of 2-d (or 1-d) operands.
Var mm(const Var& a, const Var& b);
/// A cotangent as input `input`'s gradient: disconnected for a discrete input, else cast.
GradTerm linalg_grad_term(const Var& g, const Var& input);
/// The cotangent `g`, or zeros of `out`'s type when it is null (disconnected).
Var grad_or_zeros(const Var& g, const Var& out);

}  // namespace kiln
