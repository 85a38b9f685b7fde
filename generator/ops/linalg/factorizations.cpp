#include "ops/linalg/factorizations.h"

#include "ops/math.h"
#include "ops/grad_util.h"
#include "ir/error.h"
#include "ops/advanced_subtensor.h"
#include "ops/array_util.h"
#include "ops/join.h"
#include "ops/linalg/solves.h"
#include "ops/shape.h"
#include "ops/subtensor.h"

namespace kiln {

using kiln_linalg::QrMode;
using kiln_linalg::Status;

// --- Cholesky -----------------------------------------------------------------------------------

Json Cholesky::props() const {
  Json p{{"lower", lower_}};
  if (raise_) p["on_error"] = "raise";
  return p;
}

std::vector<TensorType> Cholesky::infer_types(const VarList& inputs) const {
  require_input_count(*this, inputs, 1);
  const TensorType& x = linalg_input(*this, inputs, 0, 2);
  const std::int64_t n = square_static_length(*this, x, 0);
  return {TensorType(linalg_output_dtype({x.dtype}), {n, n})};
}

void Cholesky::perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  const std::int64_t n = square_length(inputs[0]);
  Array a = matrix_copy(inputs[0], node.output_ptr(0)->dtype());
  visit_real(a.dtype(), [&](auto t) {
    using T = decltype(t);
    const int ni = lapack_dim(n);
    const Status s = kiln_linalg::cholesky<T>(ni, a.data<T>(), std::max(ni, 1), lower_);
    if (s == Status::NotPositiveDefinite && !raise_)
      kiln_linalg::fill_nan(a.data<T>(), n, n, n);
    else
      check_status(s);
  });
  outputs[0] = a;
}

std::vector<ShapeVars> Cholesky::infer_shape(const Apply&, const std::vector<ShapeVars>& input_shapes) const {
  return {input_shapes[0]};
}

// Murray, "Differentiation of the Cholesky decomposition" (arXiv:1602.07527), as PyTensor
// writes it: the gradient lies in the triangle the factorization reads.
std::vector<GradTerm> Cholesky::pullback(const Apply& node, const VarList& output_grads) const {
  Var L = node.output(0);
  Var dz = output_grads[0];
  if (!lower_) {
    L = mT(L);
    dz = mT(dz);
  }
  const Var LtDz = mm(mT(L), dz);
  const Var phi = tril(LtDz) - diag_matrix(diag_of(LtDz) / 2.0);
  const Var Lt = mT(L);
  const Var s = solve_triangular(Lt, mT(solve_triangular(Lt, mT(phi), false)), false);
  const Var sym = s + mT(s);
  const Var grad = (lower_ ? tril(sym) : triu(sym)) - diag_matrix(diag_of(s));
  return {linalg_grad_term(grad, node.input(0))};
}

// --- LU -----------------------------------------------------------------------------------------

LU::LU(bool permute_l, bool p_indices) : permute_l_(permute_l), p_indices_(p_indices) {
  if (permute_l && p_indices) throw UserError("LU: only one of permute_l and p_indices can be true");
}

std::string LU::gufunc_signature(const std::vector<int>&) const {
  if (permute_l_) return "(m,m)->(m,m),(m,m)";
  return p_indices_ ? "(m,m)->(m),(m,m),(m,m)" : "(m,m)->(m,m),(m,m),(m,m)";
}

std::vector<TensorType> LU::infer_types(const VarList& inputs) const {
  require_input_count(*this, inputs, 1);
  const TensorType& x = linalg_input(*this, inputs, 0, 2);
  const std::int64_t n = square_static_length(*this, x, 0);
  const TensorType m(linalg_output_dtype({x.dtype}), {n, n});
  if (permute_l_) return {m, m};
  if (p_indices_) return {TensorType(DType::Int32, {n}), m, m};
  return {m, m, m};
}

void LU::perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  const std::int64_t n = square_length(inputs[0]);
  const DType dt = node.output_ptr(permute_l_ ? 0 : 1)->dtype();
  const Array a = astype(inputs[0], dt);
  Array l = Array::empty(dt, {n, n}), u = Array::empty(dt, {n, n});
  Array p = permute_l_ ? Array() : p_indices_ ? Array::empty(DType::Int32, {n}) : Array::empty(dt, {n, n});
  visit_real(dt, [&](auto t) {
    using T = decltype(t);
    const int ni = lapack_dim(n);
    KernelWork w(dt, kiln_linalg::lu_work<T>(ni));
    check_status(kiln_linalg::lu<T>(ni, a.data<T>(), ni, (p.defined() && !p_indices_) ? p.data<T>() : nullptr,
                                    p_indices_ ? p.data<std::int32_t>() : nullptr, l.data<T>(), u.data<T>(),
                                    permute_l_, w.r<T>(), w.i()));
  });
  outputs = permute_l_ ? std::vector<Array>{l, u} : std::vector<Array>{p, l, u};
}

std::vector<ShapeVars> LU::infer_shape(const Apply&, const std::vector<ShapeVars>& input_shapes) const {
  const ShapeVars& s = input_shapes[0];
  if (permute_l_) return {s, s};
  if (p_indices_) return {{s[0]}, s, s};
  return {s, s, s};
}

namespace {

// De Hoog, Anderssen & Lukas: the gradient of B = P^T A from those of its unit-lower L and
// upper U factors (PyTensor's derivation for LU and LUFactor).
Var lu_permuted_grad(const Var& L, const Var& U, const Var& L_bar, const Var& U_bar) {
  const Var x1 = tril(mm(mT(L), L_bar), -1);
  const Var x2 = triu(mm(U_bar, mT(U)));
  const Var LT_inv_x = solve_triangular(mT(L), x1 + x2, false, true);
  return mT(solve_triangular(U, mT(LT_inv_x), false));
}

}  // namespace

std::vector<GradTerm> LU::pullback(const Apply& node, const VarList& output_grads) const {
  const Var& A = node.input(0);
  Var P, L, U, L_bar, U_bar;
  if (permute_l_) {
    // The factors without the permutation folded into L: P L = PL gives L_bar = P^T PL_bar.
    VarList plu = lu(A);
    P = plu[0];
    L = plu[1];
    U = plu[2];
    L_bar = mm(mT(P), grad_or_zeros(output_grads[0], node.output(0)));
    U_bar = grad_or_zeros(output_grads[1], node.output(1));
  } else {
    P = node.output(0);
    L = node.output(1);
    U = node.output(2);
    L_bar = grad_or_zeros(output_grads[1], L);
    U_bar = grad_or_zeros(output_grads[2], U);
  }
  const Var B_bar = lu_permuted_grad(L, U, L_bar, U_bar);
  const Var A_bar = p_indices_ ? take(B_bar, P) : mm(P, B_bar);
  return {linalg_grad_term(A_bar, A)};
}

// --- LUFactor -----------------------------------------------------------------------------------

std::vector<TensorType> LUFactor::infer_types(const VarList& inputs) const {
  require_input_count(*this, inputs, 1);
  const TensorType& x = linalg_input(*this, inputs, 0, 2);
  const std::int64_t n = square_static_length(*this, x, 0);
  return {TensorType(linalg_output_dtype({x.dtype}), {n, n}), TensorType(DType::Int32, {n})};
}

void LUFactor::perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  const std::int64_t n = square_length(inputs[0]);
  const DType dt = node.output_ptr(0)->dtype();
  Array a = matrix_copy(inputs[0], dt);
  Array piv = Array::empty(DType::Int32, {n});
  visit_real(dt, [&](auto t) {
    using T = decltype(t);
    const int ni = lapack_dim(n);
    KernelWork w(dt, kiln_linalg::lu_work<T>(ni));
    check_status(kiln_linalg::lu_factor<T>(ni, a.data<T>(), ni, piv.data<std::int32_t>(), w.r<T>(), w.i()));
  });
  outputs = {a, piv};
}

std::vector<ShapeVars> LUFactor::infer_shape(const Apply&, const std::vector<ShapeVars>& input_shapes) const {
  return {input_shapes[0], {input_shapes[0][0]}};
}

std::vector<GradTerm> LUFactor::pullback(const Apply& node, const VarList& output_grads) const {
  const Var& A = node.input(0);
  const Var& LU_ = node.output(0);
  const Var LU_bar = grad_or_zeros(output_grads[0], LU_);
  const Var L = tril(LU_, -1) + identity_like(A);
  const Var U = triu(LU_);
  const Var perm = pivot_to_permutation(node.output(1), false);
  const Var B_bar = lu_permuted_grad(L, U, tril(LU_bar, -1), triu(LU_bar));
  return {linalg_grad_term(take(B_bar, perm), A)};
}

// --- PivotToPermutations ------------------------------------------------------------------------

std::vector<TensorType> PivotToPermutations::infer_types(const VarList& inputs) const {
  require_input_count(*this, inputs, 1);
  const TensorType& p = linalg_input(*this, inputs, 0, 1);
  if (!is_integer(p.dtype)) type_error(*this, "pivots must be integers, got " + p.str());
  return {TensorType(DType::Int64, p.shape)};
}

void PivotToPermutations::perform(const Apply&, const std::vector<Array>& inputs,
                                  std::vector<Array>& outputs) const {
  const Array piv = astype(inputs[0], DType::Int64);
  const std::int64_t n = piv.shape(0);
  Array out = Array::empty(DType::Int64, {n});
  std::vector<std::int64_t> work(static_cast<std::size_t>(n) + 1);
  check_status(kiln_linalg::pivots_to_permutation(n, piv.data<std::int64_t>(), 1, out.data<std::int64_t>(),
                                                  inverse_, work.data()));
  outputs[0] = out;
}

std::vector<ShapeVars> PivotToPermutations::infer_shape(const Apply&,
                                                        const std::vector<ShapeVars>& input_shapes) const {
  return {input_shapes[0]};
}

std::vector<GradTerm> PivotToPermutations::pullback(const Apply&, const VarList&) const {
  return {GradTerm::disconnected()};
}

// --- QR -----------------------------------------------------------------------------------------

const char* qr_mode_name(QrMode mode) {
  switch (mode) {
    case QrMode::Full: return "full";
    case QrMode::Economic: return "economic";
    case QrMode::R: return "r";
    case QrMode::Raw: return "raw";
  }
  return "full";
}

namespace {

std::optional<QrMode> qr_mode_from_name(const std::string& s) {
  if (s == "full" || s == "complete") return QrMode::Full;
  if (s == "economic" || s == "reduced") return QrMode::Economic;
  if (s == "r") return QrMode::R;
  if (s == "raw") return QrMode::Raw;
  return std::nullopt;
}

std::int64_t min_length(std::int64_t m, std::int64_t n) {
  if (m == kUnknownLength || n == kUnknownLength) return (m == 0 || n == 0) ? 0 : kUnknownLength;
  return std::min(m, n);
}

}  // namespace

Json QR::props() const { return Json{{"mode", qr_mode_name(mode_)}, {"pivoting", pivoting_}}; }

std::string QR::gufunc_signature(const std::vector<int>&) const {
  std::string sig;
  switch (mode_) {
    case QrMode::Full: sig = "(m,n)->(m,m),(m,n)"; break;
    case QrMode::Economic: sig = "(m,n)->(m,k),(k,n)"; break;
    case QrMode::R: sig = "(m,n)->(m,n)"; break;
    case QrMode::Raw: sig = "(m,n)->(m,n),(k),(k,n)"; break;
  }
  return pivoting_ ? sig + ",(n)" : sig;
}

std::vector<TensorType> QR::infer_types(const VarList& inputs) const {
  require_input_count(*this, inputs, 1);
  const TensorType& x = linalg_input(*this, inputs, 0, 2);
  const DType dt = linalg_output_dtype({x.dtype});
  const std::int64_t m = x.shape[0], n = x.shape[1], k = min_length(m, n);
  std::vector<TensorType> out;
  switch (mode_) {
    case QrMode::Full: out = {TensorType(dt, {m, m}), TensorType(dt, {m, n})}; break;
    case QrMode::Economic: out = {TensorType(dt, {m, k}), TensorType(dt, {k, n})}; break;
    case QrMode::R: out = {TensorType(dt, {m, n})}; break;
    case QrMode::Raw: out = {TensorType(dt, {m, n}), TensorType(dt, {k}), TensorType(dt, {k, n})}; break;
  }
  if (pivoting_) out.emplace_back(DType::Int32, Shape{n});
  return out;
}

void QR::perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  const DType dt = node.output_ptr(0)->dtype();
  const Array a = astype(inputs[0], dt);
  const std::int64_t m = a.shape(0), n = a.shape(1), k = std::min(m, n);
  Array q, r, h, tau, jpvt;
  if (mode_ == QrMode::Full || mode_ == QrMode::Economic) q = Array::empty(dt, {m, mode_ == QrMode::Full ? m : k});
  r = Array::empty(dt, {(mode_ == QrMode::Full || mode_ == QrMode::R) ? m : k, n});
  if (mode_ == QrMode::Raw) {
    h = Array::empty(dt, {m, n});
    tau = Array::empty(dt, {k});
  }
  if (pivoting_) jpvt = Array::empty(DType::Int32, {n});
  visit_real(dt, [&](auto t) {
    using T = decltype(t);
    const int mi = lapack_dim(m), ni = lapack_dim(n);
    KernelWork w(dt, kiln_linalg::qr_work<T>(mode_, pivoting_, mi, ni));
    check_status(kiln_linalg::qr<T>(mode_, pivoting_, mi, ni, a.data<T>(), std::max(ni, 1),
                                    q.defined() ? q.data<T>() : nullptr, r.data<T>(),
                                    h.defined() ? h.data<T>() : nullptr, tau.defined() ? tau.data<T>() : nullptr,
                                    pivoting_ ? jpvt.data<std::int32_t>() : nullptr, w.r<T>(), w.i()));
  });
  switch (mode_) {
    case QrMode::Full:
    case QrMode::Economic: outputs = {q, r}; break;
    case QrMode::R: outputs = {r}; break;
    case QrMode::Raw: outputs = {h, tau, r}; break;
  }
  if (pivoting_) outputs.push_back(jpvt);
}

std::vector<ShapeVars> QR::infer_shape(const Apply&, const std::vector<ShapeVars>& input_shapes) const {
  const Var& m = input_shapes[0][0];
  const Var& n = input_shapes[0][1];
  const Var k = minimum(m, n);
  std::vector<ShapeVars> out;
  switch (mode_) {
    case QrMode::Full: out = {{m, m}, {m, n}}; break;
    case QrMode::Economic: out = {{m, k}, {k, n}}; break;
    case QrMode::R: out = {{m, n}}; break;
    case QrMode::Raw: out = {{m, n}, {k}, {k, n}}; break;
  }
  if (pivoting_) out.push_back({n});
  return out;
}

// PyTensor's QR gradient (Liao, Liu, Wang & Xiang, arXiv:1903.09650). PyTensor picks the m >= n
// or m < n formula with a lazy ifelse when the shape is unknown; kiln has no lazy branch, so it
// needs the static shape to choose.
std::vector<GradTerm> QR::pullback(const Apply& node, const VarList& output_grads) const {
  const Var& A = node.input(0);
  if (mode_ == QrMode::Raw) return {GradTerm::not_implemented("the gradient of QR is not implemented for mode=raw")};
  if (pivoting_) return {GradTerm::not_implemented("the gradient of QR is not implemented with pivoting")};
  const std::int64_t m = A->shape()[0], n = A->shape()[1];
  if (m == kUnknownLength || n == kUnknownLength)
    return {GradTerm::not_implemented(
        "the gradient of QR needs the matrix's static shape (kiln has no lazy ifelse to choose between PyTensor's "
        "m >= n and m < n formulas at run time)")};
  if (mode_ == QrMode::Full && m > n)
    return {GradTerm::not_implemented("the gradient of QR is not implemented for m x n matrices with m > n and "
                                      "mode=full")};
  Var Q, R, dQ, dR;
  if (mode_ == QrMode::R) {
    VarList qr_econ = qr(A, "economic");
    Q = qr_econ[0];
    R = qr_econ[1];
    dQ = zeros_like(Q, Q->dtype());
    dR = subtensor(output_grads[0], {slice(none, std::min(m, n))});  // scipy's R is m x n here
  } else {
    Q = node.output(0);
    R = node.output(1);
    dQ = grad_or_zeros(output_grads[0], Q);
    dR = grad_or_zeros(output_grads[1], R);
  }
  const auto copyltu = [](const Var& x) { return tril(x) + mT(tril(x, -1)); };
  Var A_bar;
  if (m >= n) {
    const Var M = mm(R, mT(dR)) - mm(mT(dQ), Q);
    const Var K = dQ + mm(Q, copyltu(M));
    A_bar = mT(solve_triangular(R, mT(K), false));
  } else {
    const Var Y = subtensor(A, {slice(), slice(m)});
    const Var U = subtensor(R, {slice(), slice(none, m)});
    const Var dU = subtensor(dR, {slice(), slice(none, m)});
    const Var dV = subtensor(dR, {slice(), slice(m)});
    const Var dQ_Yt_dV = dQ + mm(Y, mT(dV));
    const Var M = mm(U, mT(dU)) - mm(mT(dQ_Yt_dV), Q);
    const Var X_bar = mT(solve_triangular(U, mT(dQ_Yt_dV + mm(Q, copyltu(M))), false));
    const Var Y_bar = mm(Q, dV);
    A_bar = join(1, {X_bar, Y_bar});
  }
  return {linalg_grad_term(A_bar, A)};
}

// --- builders -----------------------------------------------------------------------------------

Var cholesky(const Var& x, bool lower, bool raise_on_error) {
  return apply_linalg1(std::make_shared<Cholesky>(lower, raise_on_error), {x}, {2});
}

VarList lu(const Var& a, bool permute_l, bool p_indices) {
  return apply_linalg(std::make_shared<LU>(permute_l, p_indices), {a}, {2});
}

VarList lu_factor(const Var& a) { return apply_linalg(std::make_shared<LUFactor>(), {a}, {2}); }

Var pivot_to_permutation(const Var& pivots, bool inverse) {
  return apply_linalg1(std::make_shared<PivotToPermutations>(inverse), {pivots}, {1});
}

VarList qr(const Var& a, const std::string& mode, bool pivoting) {
  const auto m = qr_mode_from_name(mode);
  if (!m) throw UserError("qr: unknown mode \"" + mode + "\" (full, economic, r, raw, complete, reduced)");
  return apply_linalg(std::make_shared<QR>(*m, pivoting), {a}, {2});
}

// --- graph-file factories -------------------------------------------------------------------------

OpPtr cholesky_from_props(PropReader& props, const std::vector<TensorType>&) {
  const bool lower = props.get_bool("lower", true);
  bool raise = false;
  if (props.has("on_error")) {
    const std::string e = props.get_string("on_error");
    if (e != "raise" && e != "nan") props.fail("on_error", "must be \"raise\" or \"nan\", not \"" + e + "\"");
    raise = e == "raise";
  }
  props.finish();
  return std::make_shared<Cholesky>(lower, raise);
}

OpPtr lu_from_props(PropReader& props, const std::vector<TensorType>&) {
  const bool permute_l = props.get_bool("permute_l", false);
  const bool p_indices = props.get_bool("p_indices", false);
  props.finish();
  if (permute_l && p_indices) props.fail("p_indices", "cannot be true together with permute_l");
  return std::make_shared<LU>(permute_l, p_indices);
}

OpPtr lu_factor_from_props(PropReader& props, const std::vector<TensorType>&) {
  props.finish();
  return std::make_shared<LUFactor>();
}

OpPtr pivot_to_permutations_from_props(PropReader& props, const std::vector<TensorType>&) {
  const bool inverse = props.get_bool("inverse", true);
  props.finish();
  return std::make_shared<PivotToPermutations>(inverse);
}

OpPtr qr_from_props(PropReader& props, const std::vector<TensorType>&) {
  const std::string mode = props.has("mode") ? props.get_string("mode") : "full";
  const bool pivoting = props.get_bool("pivoting", false);
  props.finish();
  const auto m = qr_mode_from_name(mode);
  if (!m) props.fail("mode", "must be \"full\", \"economic\", \"r\" or \"raw\", not \"" + mode + "\"");
  return std::make_shared<QR>(*m, pivoting);
}

}  // namespace kiln
