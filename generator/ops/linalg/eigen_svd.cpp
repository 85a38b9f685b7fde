#include "ops/linalg/eigen_svd.h"

#include "ops/math.h"
#include "ops/grad_util.h"
#include "ir/error.h"
#include "ops/alloc.h"
#include "ops/array_util.h"
#include "ops/dimshuffle.h"
#include "ops/shape.h"

namespace kiln {

using kiln_linalg::Status;

namespace {

// The inputs of Eigh/Eigvalsh: A, and optionally B of A's shape. Returns the static length.
std::int64_t eigh_inputs(const Op& op, const VarList& inputs, std::vector<DType>& dtypes) {
  if (inputs.size() != 1 && inputs.size() != 2)
    type_error(op, "takes 1 or 2 inputs (A, or A and B), got " + std::to_string(inputs.size()));
  std::int64_t n = kUnknownLength;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const TensorType& t = linalg_input(op, inputs, i, 2);
    n = agreeing_length(op, n, square_static_length(op, t, i), "A and B must have the same shape");
    dtypes.push_back(t.dtype);
  }
  return n;
}

std::string eigh_signature(std::size_t inputs, bool vectors) {
  return std::string(inputs == 2 ? "(m,m),(m,m)" : "(m,m)") + (vectors ? "->(m),(m,m)" : "->(m)");
}

// Runs the eigh kernel on the node's inputs: w, and v when `vectors`.
std::vector<Array> eigh_arrays(const std::vector<Array>& inputs, DType dt, bool lower, bool vectors) {
  const std::int64_t n = square_length(inputs[0], "A");
  if (inputs.size() == 2 && inputs[1].shape() != inputs[0].shape())
    throw RuntimeFailure("A and B must have the same shape, got " + shape_str(inputs[0].shape()) + " and " +
                         shape_str(inputs[1].shape()));
  Array a = matrix_copy(inputs[0], dt);
  Array b = inputs.size() == 2 ? matrix_copy(inputs[1], dt) : Array();
  Array w = Array::empty(dt, {n});
  Array v = vectors ? Array::empty(dt, {n, n}) : Array();
  visit_real(dt, [&](auto t) {
    using T = decltype(t);
    const int ni = lapack_dim(n), ld = std::max(ni, 1);
    KernelWork work(dt, kiln_linalg::eigh_work<T>(ni, vectors, b.defined()));
    check_status(kiln_linalg::eigh<T>(lower, ni, a.data<T>(), ld, b.defined() ? b.data<T>() : nullptr, ld,
                                      w.data<T>(), vectors ? v.data<T>() : nullptr, work.r<T>(), work.i()));
  });
  return vectors ? std::vector<Array>{w, v} : std::vector<Array>{w};
}

// A gradient of a symmetric input read from one triangle: the other triangle's share folded in.
Var fold_to_triangle(const Var& g, bool lower) {
  return lower ? tril(g) + mT(triu(g, 1)) : triu(g) + mT(tril(g, -1));
}

Var row(const Var& v) { return dimshuffle(v, {DimShuffle::kNewAxis, 0}); }
Var column(const Var& v) { return dimshuffle(v, {0, DimShuffle::kNewAxis}); }

}  // namespace

// --- Eigh ---------------------------------------------------------------------------------------

std::string Eigh::gufunc_signature(const std::vector<int>& input_ranks) const {
  return eigh_signature(input_ranks.size(), true);
}

std::vector<TensorType> Eigh::infer_types(const VarList& inputs) const {
  std::vector<DType> dtypes;
  const std::int64_t n = eigh_inputs(*this, inputs, dtypes);
  const DType dt = linalg_output_dtype(dtypes);
  return {TensorType(dt, {n}), TensorType(dt, {n, n})};
}

void Eigh::perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  outputs = eigh_arrays(inputs, node.output_ptr(0)->dtype(), lower_, true);
}

std::vector<ShapeVars> Eigh::infer_shape(const Apply&, const std::vector<ShapeVars>& input_shapes) const {
  return {{input_shapes[0][0]}, input_shapes[0]};
}

// PyTensor's: with F_ij = 1 / (w_j - w_i) off the diagonal, C = V^T g_V and M = diag(g_w) + F * C,
// g_A = V M V^T; for the generalized problem also g_B = -V (M diag(w)) V^T - V diag(diag(C)) V^T / 2.
// Both folded onto the triangle that is read. Assumes distinct eigenvalues.
std::vector<GradTerm> Eigh::pullback(const Apply& node, const VarList& output_grads) const {
  const Var& w = node.output(0);
  const Var& v = node.output(1);
  const Var gw = grad_or_zeros(output_grads[0], w);
  const Var gv = grad_or_zeros(output_grads[1], v);
  const Var on_diagonal = eye(shape_i(w, 0), std::nullopt, 0, DType::Bool);
  const Var F = switch_(on_diagonal, 0.0, 1.0 / (row(w) - column(w)));
  const Var C = mm(mT(v), gv);
  const Var inner = diag_matrix(gw) + F * C;
  const Var ga = mm(mm(v, inner), mT(v));
  std::vector<GradTerm> terms = {linalg_grad_term(fold_to_triangle(ga, lower_), node.input(0))};
  if (node.num_inputs() == 2) {
    const Var gb = -mm(mm(v, inner * row(w)), mT(v)) - 0.5 * mm(mm(v, diag_matrix(diag_of(C))), mT(v));
    terms.push_back(linalg_grad_term(fold_to_triangle(gb, lower_), node.input(1)));
  }
  return terms;
}

// --- Eig ----------------------------------------------------------------------------------------

namespace {
// The dtype NumPy computes Eig in: float32 for float32 (and the integers and bool NumPy's linalg
// would widen to float64, PyTensor then narrowing the result), float64 otherwise.
DType eig_compute_dtype(DType in) { return in == DType::Float32 ? DType::Float32 : DType::Float64; }
}  // namespace

std::string Eig::gufunc_signature(const std::vector<int>&) const { return "(m,m)->(m),(m,m)"; }

std::vector<TensorType> Eig::infer_types(const VarList& inputs) const {
  if (inputs.size() != 1) type_error(*this, "takes 1 input, got " + std::to_string(inputs.size()));
  const TensorType& t = linalg_input(*this, inputs, 0, 2);
  if (t.dtype == DType::Float16) type_error(*this, "float16 is unsupported in linalg (as NumPy's eig)");
  const std::int64_t n = square_static_length(*this, t, 0);
  // np.promote_types(x.dtype, complex64)
  const DType out = upcast(t.dtype, DType::Complex64);
  return {TensorType(out, {n}), TensorType(out, {n, n})};
}

void Eig::perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  const std::int64_t n = square_length(inputs[0], "A");
  const DType compute = eig_compute_dtype(inputs[0].dtype());
  Array a = matrix_copy(inputs[0], compute);
  const DType wide = compute == DType::Float32 ? DType::Complex64 : DType::Complex128;
  Array w = Array::empty(wide, {n}), v = Array::empty(wide, {n, n});
  visit_real(compute, [&](auto t) {
    using T = decltype(t);
    const int ni = lapack_dim(n);
    KernelWork work(compute, kiln_linalg::eig_work<T>(ni));
    check_status(kiln_linalg::eig<T>(ni, a.data<T>(), std::max(ni, 1), w.data<std::complex<T>>(),
                                     v.data<std::complex<T>>(), work.r<T>()));
  });
  const DType out = node.output_ptr(0)->dtype();
  outputs = {astype(w, out).copy(), astype(v, out).copy()};
}

std::vector<ShapeVars> Eig::infer_shape(const Apply&, const std::vector<ShapeVars>& input_shapes) const {
  return {{input_shapes[0][0]}, input_shapes[0]};
}

// --- Eigvalsh -----------------------------------------------------------------------------------

std::string Eigvalsh::gufunc_signature(const std::vector<int>& input_ranks) const {
  return eigh_signature(input_ranks.size(), false);
}

std::vector<TensorType> Eigvalsh::infer_types(const VarList& inputs) const {
  std::vector<DType> dtypes;
  const std::int64_t n = eigh_inputs(*this, inputs, dtypes);
  return {TensorType(linalg_output_dtype(dtypes), {n})};
}

void Eigvalsh::perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  outputs = eigh_arrays(inputs, node.output_ptr(0)->dtype(), lower_, false);
}

std::vector<ShapeVars> Eigvalsh::infer_shape(const Apply&, const std::vector<ShapeVars>& input_shapes) const {
  return {{input_shapes[0][0]}};
}

std::vector<GradTerm> Eigvalsh::pullback(const Apply& node, const VarList& output_grads) const {
  const Var& gw = output_grads[0];
  const bool generalized = node.num_inputs() == 2;
  const VarList wv = eigh(node.input(0), lower_, generalized ? node.input(1) : nullptr);
  const Var& v = wv[1];
  std::vector<GradTerm> terms = {
      linalg_grad_term(fold_to_triangle(mm(mm(v, diag_matrix(gw)), mT(v)), lower_), node.input(0))};
  if (generalized) {
    const Var gb = -mm(mm(v, diag_matrix(gw * wv[0])), mT(v));
    terms.push_back(linalg_grad_term(fold_to_triangle(gb, lower_), node.input(1)));
  }
  return terms;
}

// --- SVD ----------------------------------------------------------------------------------------

std::string SVD::gufunc_signature(const std::vector<int>&) const {
  if (!uv_) return "(m,n)->(k)";
  return full_ ? "(m,n)->(m,m),(k),(n,n)" : "(m,n)->(m,k),(k),(k,n)";
}

std::vector<TensorType> SVD::infer_types(const VarList& inputs) const {
  require_input_count(*this, inputs, 1);
  const TensorType& x = linalg_input(*this, inputs, 0, 2);
  const DType dt = linalg_output_dtype({x.dtype});
  const std::int64_t m = x.shape[0], n = x.shape[1];
  const std::int64_t k = (m == 0 || n == 0) ? 0 : (m == kUnknownLength || n == kUnknownLength) ? kUnknownLength
                                                                                                  : std::min(m, n);
  if (!uv_) return {TensorType(dt, {k})};
  if (full_) return {TensorType(dt, {m, m}), TensorType(dt, {k}), TensorType(dt, {n, n})};
  return {TensorType(dt, {m, k}), TensorType(dt, {k}), TensorType(dt, {k, n})};
}

void SVD::perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  const DType dt = node.output_ptr(0)->dtype();
  const std::int64_t m = inputs[0].shape(0), n = inputs[0].shape(1), k = std::min(m, n);
  Array a = matrix_copy(inputs[0], dt);
  Array s = Array::empty(dt, {k});
  Array u = uv_ ? Array::empty(dt, {m, full_ ? m : k}) : Array();
  Array vt = uv_ ? Array::empty(dt, {full_ ? n : k, n}) : Array();
  visit_real(dt, [&](auto t) {
    using T = decltype(t);
    const int mi = lapack_dim(m), ni = lapack_dim(n);
    KernelWork w(dt, kiln_linalg::svd_work<T>(mi, ni, full_, uv_));
    check_status(kiln_linalg::svd<T>(mi, ni, a.data<T>(), full_, uv_, uv_ ? u.data<T>() : nullptr, s.data<T>(),
                                     uv_ ? vt.data<T>() : nullptr, w.r<T>(), w.i()));
  });
  outputs = uv_ ? std::vector<Array>{u, s, vt} : std::vector<Array>{s};
}

std::vector<ShapeVars> SVD::infer_shape(const Apply&, const std::vector<ShapeVars>& input_shapes) const {
  const Var& m = input_shapes[0][0];
  const Var& n = input_shapes[0][1];
  const Var k = minimum(m, n);
  if (!uv_) return {{k}};
  if (full_) return {{m, m}, {k}, {n, n}};
  return {{m, k}, {k}, {k, n}};
}

// PyTensor's (after autograd and Seeger et al., "Auto-differentiating linear algebra").
std::vector<GradTerm> SVD::pullback(const Apply& node, const VarList& output_grads) const {
  const Var& A = node.input(0);
  const DType dt = node.output(0)->dtype();
  const auto s_grad_only = [&](const Var& U, const Var& VT, const Var& ds) {
    return linalg_grad_term(mm(U * row(ds), VT), A);
  };
  if (!uv_) {
    const VarList usv = svd(A, false, true);
    return {s_grad_only(usv[0], usv[2], output_grads[0])};
  }
  if (full_) return {GradTerm::not_implemented("the gradient of SVD is not implemented for full_matrices=True")};
  const Var& U = node.output(0);
  const Var& s = node.output(1);
  const Var& VT = node.output(2);
  if (!output_grads[0] && !output_grads[2]) return {s_grad_only(U, VT, output_grads[1])};
  const Var dU = grad_or_zeros(output_grads[0], U);
  const Var ds = grad_or_zeros(output_grads[1], s);
  const Var dVT = grad_or_zeros(output_grads[2], VT);
  const Var V = mT(VT), dV = mT(dVT);
  const Var m = shape_i(A, 0), n = shape_i(A, 1);
  const Var k = minimum(m, n);
  const Var I_k = eye(k, std::nullopt, 0, dt);
  // s_i^2 - s_j^2 kept away from zero (robust to repeated singular values, not right there).
  const auto h = [&](const Var& t) {
    const Var sign_t = switch_(eq(t, 0), 1, sgn(t));
    return maximum(abs(t), 1e-8) * sign_t;
  };
  const Var E = (scalar_constant(dt, 1) - I_k) / (h(row(s) - column(s)) * h(row(s) + column(s)));
  const Var utgu = mm(mT(U), dU);
  const Var vtgv = mm(VT, dV);
  Var A_bar = (E * (utgu - mT(utgu))) * row(s);
  A_bar = A_bar + I_k * column(ds);
  A_bar = A_bar + column(s) * (E * (vtgv - mT(vtgv)));
  A_bar = mm(mm(U, A_bar), VT);
  const Var wide = A_bar + mm(mm(U / row(s), dVT), eye(n, std::nullopt, 0, dt) - mm(V, mT(V)));
  const Var tall = A_bar + mT(mm(mm(V / row(s), mT(dU)), eye(m, std::nullopt, 0, dt) - mm(U, mT(U))));
  const std::int64_t ms = A->shape()[0], ns = A->shape()[1];
  Var grad;
  if (ms != kUnknownLength && ns != kUnknownLength)
    grad = ms == ns ? A_bar : ms < ns ? wide : tall;
  else
    grad = switch_(eq(m, n), A_bar, switch_(lt(m, n), wide, tall));
  return {linalg_grad_term(grad, A)};
}

// --- builders -----------------------------------------------------------------------------------

VarList eigh(const Var& a, bool lower, const Var& b) {
  if (b) return apply_linalg(std::make_shared<Eigh>(lower), {a, b}, {2, 2});
  return apply_linalg(std::make_shared<Eigh>(lower), {a}, {2});
}

Var eigvalsh(const Var& a, bool lower, const Var& b) {
  if (b) return apply_linalg1(std::make_shared<Eigvalsh>(lower), {a, b}, {2, 2});
  return apply_linalg1(std::make_shared<Eigvalsh>(lower), {a}, {2});
}

VarList svd(const Var& a, bool full_matrices, bool compute_uv) {
  return apply_linalg(std::make_shared<SVD>(full_matrices, compute_uv), {a}, {2});
}

Json Eigh::props() const {
  Json p{{"lower", lower_}};
  if (driver_ != "evr") p["driver"] = driver_;
  return p;
}

// --- graph-file factories -------------------------------------------------------------------------

OpPtr eigh_from_props(PropReader& props, const std::vector<TensorType>&) {
  const bool lower = read_lower(props, true);
  std::string driver = "evr";
  if (props.has("driver")) {
    driver = props.get_string("driver");  // LAPACK's choice; kiln always uses evr
    if (driver != "evr" && driver != "evd") props.fail("driver", "must be \"evr\" or \"evd\", not \"" + driver + "\"");
  }
  props.finish();
  return std::make_shared<Eigh>(lower, driver);
}

OpPtr eig_from_props(PropReader& props, const std::vector<TensorType>&) {
  props.finish();
  return std::make_shared<Eig>();
}

OpPtr eigvalsh_from_props(PropReader& props, const std::vector<TensorType>&) {
  const bool lower = read_lower(props, true);
  props.finish();
  return std::make_shared<Eigvalsh>(lower);
}

OpPtr svd_from_props(PropReader& props, const std::vector<TensorType>&) {
  const bool full = props.get_bool("full_matrices", true);
  const bool uv = props.get_bool("compute_uv", true);
  props.finish();
  return std::make_shared<SVD>(full, uv);
}

}  // namespace kiln
