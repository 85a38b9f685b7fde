#include "ops/linalg/solves.h"

#include <cctype>

#include "ops/math.h"
#include "ir/error.h"
#include "ops/array_util.h"
#include "ops/dot.h"

namespace kiln {

using kiln_linalg::Status;
using kiln_linalg::Structure;

// --- SolveBase ----------------------------------------------------------------------------------

std::string SolveBase::gufunc_signature(const std::vector<int>&) const {
  return b_ndim_ == 1 ? "(m,m),(m)->(m)" : "(m,m),(m,n)->(m,n)";
}

std::vector<TensorType> SolveBase::infer_types(const VarList& inputs) const {
  require_input_count(*this, inputs, 2);
  const TensorType& a = linalg_input(*this, inputs, 0, 2);
  const TensorType& b = linalg_input(*this, inputs, 1, b_ndim_);
  std::int64_t n = square_static_length(*this, a, 0);
  n = agreeing_length(*this, n, b.shape[0], "A and b must have the same number of rows");
  Shape shape = b.shape;
  shape[0] = n;
  return {TensorType(linalg_output_dtype({a.dtype, b.dtype}), shape)};
}

std::vector<ShapeVars> SolveBase::infer_shape(const Apply&, const std::vector<ShapeVars>& input_shapes) const {
  ShapeVars out = input_shapes[1];
  out[0] = input_shapes[0][1];
  return {out};
}

std::vector<GradTerm> SolveBase::solve_pullback(const Apply& node, const Var& b_bar) const {
  const Var& c = node.output(0);
  const Var A_bar = -(c->ndim() == 1 ? outer(b_bar, c) : mm(b_bar, mT(c)));
  return {linalg_grad_term(A_bar, node.input(0)), linalg_grad_term(b_bar, node.input(1))};
}

namespace {

// Solves on contiguous copies in the output dtype: `kernel(T{}, a, x, n, k)` gets A (a fresh
// copy it may overwrite) and the solution buffer x (b's copy, n x k row-major, k = 1 for a
// vector b) and returns the kernel's status; a singular (or not positive definite) system
// gives NaN, as PyTensor 3.x's does.
template <typename F>
Array solve_on_copies(const Apply& node, const std::vector<Array>& inputs, F&& kernel) {
  const std::int64_t n = square_length(inputs[0], "A");
  const Array& b = inputs[1];
  if (b.shape(0) != n)
    throw RuntimeFailure("incompatible shapes: A has shape " + shape_str(inputs[0].shape()) + ", b has shape " +
                         shape_str(b.shape()));
  const DType dt = node.output_ptr(0)->dtype();
  Array a = matrix_copy(inputs[0], dt);
  Array x = matrix_copy(b, dt);
  const std::int64_t k = b.ndim() == 1 ? 1 : b.shape(1);
  visit_real(dt, [&](auto t) {
    using T = decltype(t);
    const Status s = kernel(t, a.data<T>(), x.data<T>(), lapack_dim(n), lapack_dim(k));
    if (s == Status::Singular || s == Status::NotPositiveDefinite)
      kiln_linalg::fill_nan(x.data<T>(), n, k, k);
    else
      check_status(s);
  });
  return x;
}

}  // namespace

// --- Solve --------------------------------------------------------------------------------------

namespace {

std::string short_assume_a(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "general") return "gen";
  if (s == "symmetric") return "sym";
  if (s == "hermitian") return "her";
  if (s == "positive definite") return "pos";
  return s;
}

}  // namespace

Solve::Solve(const std::string& assume_a, bool lower, int b_ndim)
    : SolveBase(lower, b_ndim), assume_a_(short_assume_a(assume_a)) {
  if (assume_a_ == "gen")
    structure_ = Structure::General;
  else if (assume_a_ == "sym" || assume_a_ == "her")  // equal for real matrices
    structure_ = Structure::Symmetric;
  else if (assume_a_ == "pos")
    structure_ = Structure::PositiveDefinite;
  else if (assume_a_ == "tridiagonal")
    structure_ = Structure::Tridiagonal;
  else if (assume_a_ == "banded")
    throw NotImplementedError("Solve{assume_a='banded'} is not implemented yet in kiln");
  else
    throw UserError("Solve: unknown assume_a \"" + assume_a + "\" (gen, sym, her, pos, tridiagonal)");
}

Json Solve::props() const { return Json{{"assume_a", assume_a_}, {"lower", lower_}, {"b_ndim", b_ndim_}}; }

void Solve::perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  outputs[0] = solve_on_copies(node, inputs, [&](auto t, auto* a, auto* x, int n, int k) {
    using T = decltype(t);
    KernelWork w(node.output_ptr(0)->dtype(), kiln_linalg::solve_work<T>(structure_, n, k));
    return kiln_linalg::solve<T>(structure_, lower_, n, k, a, std::max(n, 1), x, std::max(k, 1), w.r<T>(), w.i());
  });
}

std::vector<GradTerm> Solve::pullback(const Apply& node, const VarList& output_grads) const {
  // A^T has the same structure, with the other triangle.
  const Var b_bar = solve(mT(node.input(0)), output_grads[0], assume_a_, !lower_, b_ndim_);
  return solve_pullback(node, b_bar);
}

// --- SolveTriangular ----------------------------------------------------------------------------

Json SolveTriangular::props() const {
  Json p{{"lower", lower_}, {"unit_diagonal", unit_diagonal_}, {"b_ndim", b_ndim_}};
  if (trans_) p["trans"] = 1;
  return p;
}

void SolveTriangular::perform(const Apply& node, const std::vector<Array>& inputs,
                              std::vector<Array>& outputs) const {
  outputs[0] = solve_on_copies(node, inputs, [&](auto t, auto* a, auto* x, int n, int k) {
    return kiln_linalg::solve_triangular<decltype(t)>(lower_, trans_, unit_diagonal_, n, k, a, n, 1, x, std::max(k, 1));
  });
}

// With M = op(A): x = M^{-1} b, so b_bar = M^{-T} x_bar (the same solve with trans flipped) and
// M_bar = -b_bar x^T; A_bar is M_bar (or its transpose), restricted to the triangle read, with a
// zero diagonal when the diagonal is taken as ones (PyTensor's convention).
std::vector<GradTerm> SolveTriangular::pullback(const Apply& node, const VarList& output_grads) const {
  const Var& A = node.input(0);
  const Var b_bar = solve_triangular(A, output_grads[0], lower_, unit_diagonal_, !trans_, b_ndim_);
  std::vector<GradTerm> terms = solve_pullback(node, b_bar);
  if (terms[0].kind == GradTerm::Kind::Value) {
    Var A_bar = trans_ ? mT(terms[0].value) : terms[0].value;
    A_bar = lower_ ? tril(A_bar) : triu(A_bar);
    if (unit_diagonal_) A_bar = A_bar * (scalar_constant(A_bar->dtype(), 1) - identity_like(A_bar));
    terms[0] = GradTerm::of(A_bar);
  }
  return terms;
}

// --- CholeskySolve ------------------------------------------------------------------------------

void CholeskySolve::perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  outputs[0] = solve_on_copies(node, inputs, [&](auto t, auto* c, auto* x, int n, int k) {
    return kiln_linalg::cholesky_solve<decltype(t)>(lower_, n, k, c, n, 1, x, std::max(k, 1));
  });
}

// PyTensor's: the SolveBase gradient for A = c c^T (b_bar solved with c^T as an upper factor),
// then chained through A(c) onto the triangle of c that is read.
std::vector<GradTerm> CholeskySolve::pullback(const Apply& node, const VarList& output_grads) const {
  const Var& C = node.input(0);
  const Var b_bar = cho_solve(mT(C), output_grads[0], !lower_, b_ndim_);
  std::vector<GradTerm> terms = solve_pullback(node, b_bar);
  if (terms[0].kind == GradTerm::Kind::Value) {
    const Var sym = terms[0].value + mT(terms[0].value);
    // tril(C) where PyTensor has C: the same for a factor, and right when the other triangle
    // holds something (the op never reads it).
    terms[0] = GradTerm::of(lower_ ? tril(mm(sym, tril(C))) : triu(mm(triu(C), sym)));
  }
  return terms;
}

// --- builders -----------------------------------------------------------------------------------

namespace {

int default_b_ndim(const Var& b, std::optional<int> b_ndim) {
  if (!b) throw UserError("solve: b is null");
  if (b_ndim) {
    if (*b_ndim != 1 && *b_ndim != 2) throw UserError("solve: b_ndim must be 1 or 2");
    return *b_ndim;
  }
  return std::min(b->ndim(), 2);
}

}  // namespace

Var solve(const Var& a, const Var& b, const std::string& assume_a, bool lower, std::optional<int> b_ndim) {
  const int bn = default_b_ndim(b, b_ndim);
  return apply_linalg1(std::make_shared<Solve>(assume_a, lower, bn), {a, b}, {2, bn});
}

Var solve_triangular(const Var& a, const Var& b, bool lower, bool unit_diagonal, bool trans,
                     std::optional<int> b_ndim) {
  const int bn = default_b_ndim(b, b_ndim);
  return apply_linalg1(std::make_shared<SolveTriangular>(lower, unit_diagonal, bn, trans), {a, b}, {2, bn});
}

Var cho_solve(const Var& c, const Var& b, bool lower, std::optional<int> b_ndim) {
  const int bn = default_b_ndim(b, b_ndim);
  return apply_linalg1(std::make_shared<CholeskySolve>(lower, bn), {c, b}, {2, bn});
}

// --- graph-file factories -------------------------------------------------------------------------

namespace {

// b_ndim from the prop, else b's (core) rank as the node gives it.
int b_ndim_of(PropReader& props, const std::vector<TensorType>& input_types) {
  if (auto v = read_b_ndim(props)) return *v;
  if (input_types.size() == 2 && (input_types[1].ndim() == 1 || input_types[1].ndim() == 2))
    return input_types[1].ndim();
  return 2;
}

}  // namespace

OpPtr solve_from_props(PropReader& props, const std::vector<TensorType>& input_types) {
  const std::string assume_a = props.has("assume_a") ? props.get_string("assume_a") : "gen";
  const bool lower = props.get_bool("lower", false);
  const int b_ndim = b_ndim_of(props, input_types);
  props.finish();
  try {
    return std::make_shared<Solve>(assume_a, lower, b_ndim);
  } catch (const NotImplementedError& e) {
    throw NotImplementedError(e.message(), props.where("assume_a"));
  } catch (const UserError& e) {
    throw UserError(e.message(), props.where("assume_a"));
  }
}

OpPtr solve_triangular_from_props(PropReader& props, const std::vector<TensorType>& input_types) {
  const bool lower = props.get_bool("lower", false);
  const bool unit = props.get_bool("unit_diagonal", false);
  const int b_ndim = b_ndim_of(props, input_types);
  bool trans = false;
  if (props.has("trans")) {  // 2.26: 0/"N", 1/"T", 2/"C" (the conjugate transpose, the transpose for reals)
    const Json& t = props.raw("trans");
    if (t.is_number_integer() && t.get<std::int64_t>() >= 0 && t.get<std::int64_t>() <= 2)
      trans = t.get<std::int64_t>() != 0;
    else if (t.is_string() && (t == "N" || t == "T" || t == "C"))
      trans = t != "N";
    else
      props.fail("trans", "must be 0, 1, 2, \"N\", \"T\" or \"C\", not " + t.dump());
  }
  props.finish();
  return std::make_shared<SolveTriangular>(lower, unit, b_ndim, trans);
}

OpPtr cholesky_solve_from_props(PropReader& props, const std::vector<TensorType>& input_types) {
  const bool lower = props.get_bool("lower", false);
  const int b_ndim = b_ndim_of(props, input_types);
  props.finish();
  return std::make_shared<CholeskySolve>(lower, b_ndim);
}

}  // namespace kiln
