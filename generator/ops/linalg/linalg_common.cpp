#include "ops/linalg/linalg_common.h"

#include <algorithm>
#include <map>

#include "ops/math.h"
#include "ops/grad_util.h"
#include "ir/error.h"
#include "ops/alloc.h"
#include "ops/array_util.h"
#include "ops/blockwise.h"
#include "ops/diag.h"
#include "ops/dimshuffle.h"
#include "ops/dot.h"
#include "ops/shape.h"

namespace kiln {

DType linalg_output_dtype(const std::vector<DType>& inputs) {
  for (DType dt : inputs) {
    const bool wide = dt == DType::Float64 || ((is_integer(dt)) && dtype_size(dt) > 2);
    if (wide) return DType::Float64;
  }
  return DType::Float32;
}

const std::vector<std::string>& linalg_op_names() {
  static const std::vector<std::string> names = {
      "Cholesky", "Solve",         "SolveTriangular", "CholeskySolve", "LU",       "LUFactor",
      "PivotToPermutations", "QR", "MatrixInverse",   "MatrixPinv",    "Det",      "SLogDet",
      "Expm",     "Eig",           "Eigh",            "Eigvalsh",      "SVD",              "KroneckerProduct",
      "BlockDiagonal"};
  return names;
}

bool same_signature_shape(const std::string& a, const std::string& b) {
  const GufuncSignature sa = GufuncSignature::parse(a), sb = GufuncSignature::parse(b);
  std::map<std::string, std::string> forward, backward;
  auto same_args = [&](const std::vector<std::vector<std::string>>& x,
                       const std::vector<std::vector<std::string>>& y) {
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (x[i].size() != y[i].size()) return false;
      for (std::size_t j = 0; j < x[i].size(); ++j) {
        auto [f, f_new] = forward.emplace(x[i][j], y[i][j]);
        auto [g, g_new] = backward.emplace(y[i][j], x[i][j]);
        if (f->second != y[i][j] || g->second != x[i][j]) return false;
      }
    }
    return true;
  };
  return same_args(sa.inputs, sb.inputs) && same_args(sa.outputs, sb.outputs);
}

namespace {

// PyTensor 3.x's __props__ of the linear-algebra ops that have any, in its order.
const std::map<std::string_view, std::vector<std::string>>& pytensor_prop_order() {
  static const std::map<std::string_view, std::vector<std::string>> order = {
      {"BlockDiagonal", {"n_inputs"}},
      {"Cholesky", {"lower", "overwrite_a"}},
      {"CholeskySolve", {"lower", "b_ndim", "overwrite_b"}},
      {"Eigh", {"lower", "overwrite_a", "overwrite_b", "driver"}},
      {"Eigvalsh", {"lower", "overwrite_a", "overwrite_b"}},
      {"Expm", {"overwrite_a"}},
      {"LU", {"permute_l", "overwrite_a", "p_indices"}},
      {"LUFactor", {"overwrite_a"}},
      {"MatrixPinv", {"hermitian"}},
      {"PivotToPermutations", {"inverse"}},
      {"QR", {"overwrite_a", "mode", "pivoting"}},
      {"SVD", {"full_matrices", "compute_uv", "overwrite_a"}},
      {"Solve", {"assume_a", "lower", "b_ndim", "overwrite_a", "overwrite_b"}},
      {"SolveTriangular", {"unit_diagonal", "lower", "b_ndim", "overwrite_b"}},
  };
  return order;
}

// The value PyTensor prints for a prop kiln does not keep.
Json unkept_prop_value(const std::string& prop) {
  if (prop == "driver") return "evr";  // Eigh keeps it unless it is this default
  return false;                         // overwrite_a / overwrite_b: kiln never overwrites inputs
}

}  // namespace

std::string LinalgOp::str() const {
  const Json props = this->props();
  const auto found = pytensor_prop_order().find(name());
  if (found == pytensor_prop_order().end()) return Op::str();
  std::string s = std::string(name()) + "{";
  auto add = [&s, first = true](const std::string& key, const Json& value) mutable {
    s += (first ? "" : ", ") + key + "=" + prop_repr(value);
    first = false;
  };
  for (const auto& key : found->second) add(key, props.contains(key) ? props[key] : unkept_prop_value(key));
  for (auto it = props.begin(); it != props.end(); ++it)
    if (std::find(found->second.begin(), found->second.end(), it.key()) == found->second.end()) add(it.key(), it.value());
  return s + "}";
}

std::optional<VarList> LinalgOp::vectorize(const Apply& node, const VarList& batched_inputs) const {
  std::vector<int> core_ranks;
  for (const Var& in : node.inputs()) core_ranks.push_back(in->ndim());
  return blockwise(node.op_ptr(), gufunc_signature(core_ranks), batched_inputs);
}

VarList apply_linalg(OpPtr op, VarList inputs, const std::vector<int>& core_ranks) {
  const auto* linalg = dynamic_cast<const LinalgOp*>(op.get());
  KILN_INTERNAL_ASSERT(linalg && core_ranks.size() == inputs.size(), "apply_linalg: core ranks");
  bool batched = false;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) throw UserError(op->str() + ": input " + std::to_string(i) + " is null");
    if (inputs[i]->ndim() < core_ranks[i])
      throw UserError(op->str() + ": input " + std::to_string(i) + " must have at least " +
                      std::to_string(core_ranks[i]) + " dimension(s), got " + inputs[i]->type().str());
    batched = batched || inputs[i]->ndim() > core_ranks[i];
  }
  if (!batched) return make_node(op, std::move(inputs))->outputs();
  return blockwise(op, linalg->gufunc_signature(core_ranks), std::move(inputs));
}

Var apply_linalg1(OpPtr op, VarList inputs, const std::vector<int>& core_ranks) {
  VarList outs = apply_linalg(std::move(op), std::move(inputs), core_ranks);
  KILN_INTERNAL_ASSERT(outs.size() == 1, "apply_linalg1: one output");
  return outs[0];
}

// --- type checks ------------------------------------------------------------------------------------

void require_input_count(const Op& op, const VarList& inputs, std::size_t count) {
  if (inputs.size() != count)
    type_error(op, "takes " + std::to_string(count) + " input(s), got " + std::to_string(inputs.size()));
}

const TensorType& linalg_input(const Op& op, const VarList& inputs, std::size_t i, int rank) {
  KILN_INTERNAL_ASSERT(i < inputs.size(), "linalg_input: index");
  const TensorType& t = inputs[i]->type();
  if (!is_float(t.dtype) && !is_discrete(t.dtype))
    throw NotImplementedError(op.str() + ": input " + std::to_string(i) + " has dtype " +
                              std::string(dtype_name(t.dtype)) +
                              "; only real (bool, integer, float) inputs are implemented");
  if (t.ndim() != rank)
    type_error(op, "input " + std::to_string(i) + " must have rank " + std::to_string(rank) +
                       (rank == 2 ? " (a matrix)" : rank == 1 ? " (a vector)" : "") + ", got " + t.str() +
                       " (use Blockwise for batches)");
  return t;
}

std::int64_t agreeing_length(const Op& op, std::int64_t a, std::int64_t b, const std::string& what) {
  try {
    return merge_static_length(a, b);
  } catch (const std::invalid_argument&) {
    type_error(op, what + " (" + std::to_string(a) + " != " + std::to_string(b) + ")");
  }
}

std::int64_t square_static_length(const Op& op, const TensorType& t, std::size_t input) {
  return agreeing_length(op, t.shape[0], t.shape[1],
                         "input " + std::to_string(input) + " must be a square matrix, got static shape " +
                             t.shape_str());
}

// --- perform helpers ------------------------------------------------------------------------------

Array matrix_copy(const Array& a, DType dtype) {
  Array out = astype(a, dtype);
  return out.data() == a.data() ? a.copy() : out;
}

std::int64_t square_length(const Array& a, const char* what) {
  if (a.ndim() != 2 || a.shape(0) != a.shape(1))
    throw RuntimeFailure(std::string(what) + ": expected a square matrix, got shape " + shape_str(a.shape()));
  return a.shape(0);
}

int lapack_dim(std::int64_t n) {
  if (!kiln_linalg::fits_lapack(n))
    throw RuntimeFailure("a matrix dimension of " + std::to_string(n) + " is too large for LAPACK (32-bit)");
  return static_cast<int>(n);
}

KernelWork::KernelWork(DType dt, const kiln_linalg::Work& w)
    : reals(Array::empty(dt, {static_cast<std::int64_t>(w.reals)})), ints(w.ints > 0 ? w.ints : 1) {}

void kernel_failure(kiln_linalg::Status s) { throw RuntimeFailure(kiln_linalg::status_message(s)); }

void check_status(kiln_linalg::Status s) {
  if (s != kiln_linalg::Status::Ok) kernel_failure(s);
}

// --- props ----------------------------------------------------------------------------------------

bool read_lower(PropReader& props, bool dflt) {
  if (props.has("UPLO")) {
    const std::string uplo = props.get_string("UPLO");
    if (uplo != "L" && uplo != "U") props.fail("UPLO", "must be \"L\" or \"U\", not \"" + uplo + "\"");
    if (props.has("lower") && props.get_bool("lower", true) != (uplo == "L"))
      props.fail("lower", "contradicts UPLO");
    return uplo == "L";
  }
  return props.get_bool("lower", dflt);
}

std::optional<int> read_b_ndim(PropReader& props) {
  if (!props.has("b_ndim")) {
    props.raw("b_ndim");  // mark as read (null is allowed)
    return std::nullopt;
  }
  const std::int64_t v = props.get_int("b_ndim");
  if (v != 1 && v != 2) props.fail("b_ndim", "must be 1 or 2, not " + std::to_string(v));
  return static_cast<int>(v);
}

// --- graph helpers ----------------------------------------------------------------------------------

Var mT(const Var& x) {
  std::vector<int> axes;
  for (int d = 0; d < x->ndim(); ++d) axes.push_back(d);
  std::swap(axes[static_cast<std::size_t>(x->ndim() - 1)], axes[static_cast<std::size_t>(x->ndim() - 2)]);
  return transpose(x, axes);
}

Var tril(const Var& x, int k) {
  return x * tri(shape_i(x, x->ndim() - 2), IntArg(shape_i(x, x->ndim() - 1)), k, x->dtype());
}

Var triu(const Var& x, int k) {
  Var below = tri(shape_i(x, x->ndim() - 2), IntArg(shape_i(x, x->ndim() - 1)), k - 1, x->dtype());
  return x * (scalar_constant(x->dtype(), 1) - below);
}

Var diag_matrix(const Var& v) { return alloc_diag(v, 0, v->ndim() - 1, v->ndim()); }

Var diag_of(const Var& x) { return diagonal(x, 0, x->ndim() - 2, x->ndim() - 1); }

Var identity_like(const Var& x) { return eye(shape_i(x, x->ndim() - 2), std::nullopt, 0, x->dtype()); }

Var mm(const Var& a, const Var& b) { return dot(a, b); }

GradTerm linalg_grad_term(const Var& g, const Var& input) {
  if (is_discrete(input->dtype())) return GradTerm::disconnected();
  return GradTerm::of(cast_grad(g, input->dtype()));
}

Var grad_or_zeros(const Var& g, const Var& out) { return g ? g : zeros_like(out, out->dtype()); }

}  // namespace kiln
