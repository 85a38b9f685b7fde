#include "rewrite/blas.h"

#include "ops/math.h"
#include "ops/alloc.h"
#include "ops/array_util.h"
#include "ops/blas.h"
#include "ops/dimshuffle.h"
#include "ops/dot.h"
#include "ops/shape.h"
#include "rewrite/rule_helpers.h"

namespace kiln {

namespace {

const std::vector<std::string> kBlas = {"blas"};

bool blas_dtype(DType dt) { return dt == DType::Float32 || dt == DType::Float64; }

NodeRewrite rule(const std::string& name, const std::string& op_name,
                 std::function<std::optional<VarList>(const FunctionGraph&, const Apply&)> fn,
                 std::optional<ScalarOpId> scalar = std::nullopt) {
  NodeRewrite r;
  r.name = name;
  r.tags = kBlas;
  r.op_name = op_name;
  r.scalar = scalar;
  r.apply = std::move(fn);
  return r;
}

Var zero_of(DType dt) { return scalar_constant(dt, 0); }
Var one_of(DType dt) { return scalar_constant(dt, 1); }

// A matrix product with an inner length of 1 is an outer product: elementwise (fusable, or a Ger
// when added to a matrix), as PyTensor's local_dot22_to_ger_or_gemv does.
bool is_outer_product(const Var& a, const Var& b) {
  return a->type().broadcastable(1) && b->type().broadcastable(0);
}

// Dot of a matrix and a vector -> Gemv(empty, 1, A, x, 0); vector and matrix -> on A's
// transpose; two matrices -> Dot22.
std::optional<VarList> dot_to_blas(const FunctionGraph&, const Apply& node) {
  const Var& a = node.input(0);
  const Var& b = node.input(1);
  DType dt = node.output_ptr(0)->dtype();
  if (!blas_dtype(dt) || a->dtype() != dt || b->dtype() != dt) return std::nullopt;
  if (a->ndim() == 2 && b->ndim() == 1) {
    Var y = alloc_empty(dt, {shape_i(a, 0)});
    return VarList{gemv(y, one_of(dt), a, b, zero_of(dt))};
  }
  if (a->ndim() == 1 && b->ndim() == 2) {
    Var y = alloc_empty(dt, {shape_i(b, 1)});
    return VarList{gemv(y, one_of(dt), transpose(b), a, zero_of(dt))};
  }
  if (a->ndim() == 2 && b->ndim() == 2) {
    if (is_outer_product(a, b)) return VarList{a * b};
    return VarList{dot22(a, b)};
  }
  return std::nullopt;
}

// A scalar usable as alpha/beta: a 0-d value, or a size-1 constant of any rank.
Var as_scalar(const Var& v, DType dt) {
  if (v->ndim() == 0) return cast_to(v, dt);
  if (v->is_constant() && v->value().size() == 1) return make_constant(astype(v->value().view({}, {}), dt));
  // A 0-d value broadcast by an ExpandDims.
  if (v->owner() && v->owner()->op().name() == "DimShuffle" && v->owner()->input(0)->ndim() == 0)
    return cast_to(v->owner()->input(0), dt);
  return nullptr;
}

// The Gemv computing `v` with b = 0 and no other user of `v` (so it can be rewritten freely).
const Apply* fresh_gemv(const FunctionGraph& fg, const Var& v) {
  const Apply* g = v->owner();
  if (!g || g->op().name() != "Gemv" || client_count(fg, v) != 1) return nullptr;
  const Var& b = g->input(4);
  if (!b->is_constant() || b->value().size() != 1 || !pat::is_constant_value(b, 0)) return nullptr;
  return g;
}

// mul(s, gemv(y, a, A, x, 0)) -> gemv(y, a*s, A, x, 0).
std::optional<VarList> scale_into_gemv(const FunctionGraph& fg, const Apply& node) {
  if (node.num_inputs() != 2) return std::nullopt;
  for (int k = 0; k < 2; ++k) {
    const Apply* g = fresh_gemv(fg, node.input(k));
    if (!g) continue;
    DType dt = g->output_ptr(0)->dtype();
    Var s = as_scalar(node.input(1 - k), dt);
    if (!s || node.output_ptr(0)->dtype() != dt) continue;
    return VarList{gemv(g->input(0), g->input(1) * s, g->input(2), g->input(3), g->input(4))};
  }
  return std::nullopt;
}

// add(gemv(_, a, A, x, 0), z) -> gemv(z, a, A, x, 1); add(gemv(...), s*z) -> gemv(z, a, A, x, s).
std::optional<VarList> add_into_gemv(const FunctionGraph& fg, const Apply& node) {
  if (node.num_inputs() != 2) return std::nullopt;
  const Variable& out = *node.output_ptr(0);
  for (int k = 0; k < 2; ++k) {
    const Apply* g = fresh_gemv(fg, node.input(k));
    if (!g) continue;
    DType dt = g->output_ptr(0)->dtype();
    Var z = node.input(1 - k);
    Var beta = one_of(dt);
    if (is_elemwise(z, ScalarOpId::Mul) && z->owner()->num_inputs() == 2 && client_count(fg, z) == 1) {
      for (int j = 0; j < 2; ++j) {
        Var s = as_scalar(z->owner()->input(j), dt);
        if (s && z->owner()->input(1 - j)->type() == out.type()) {
          beta = s;
          z = z->owner()->input(1 - j);
          break;
        }
      }
    }
    // z must be a whole vector of the output's type (no broadcasting into the gemv).
    if (z->type() != out.type() || z->dtype() != dt) continue;
    return VarList{gemv(z, g->input(1), g->input(2), g->input(3), beta)};
  }
  return std::nullopt;
}

// A row or column matrix product is a matrix-vector product (PyTensor's gemm_to_gemv):
// dot22(A (m,k), B (k,1)) -> gemv(.., A, B[:,0], ..)[:, None];
// dot22(A (1,k), B (k,n)) -> gemv(.., B.T, A[0,:], ..)[None, :].
std::optional<VarList> dot22_to_gemv(const FunctionGraph&, const Apply& node) {
  const Var& a = node.input(0);
  const Var& b = node.input(1);
  DType dt = node.output_ptr(0)->dtype();
  if (is_outer_product(a, b)) return VarList{a * b};
  if (b->type().broadcastable(1)) {
    Var y = alloc_empty(dt, {shape_i(a, 0)});
    Var v = gemv(y, one_of(dt), a, squeeze(b, {1}), zero_of(dt));
    return VarList{dimshuffle(v, {0, DimShuffle::kNewAxis})};
  }
  if (a->type().broadcastable(0)) {
    Var y = alloc_empty(dt, {shape_i(b, 1)});
    Var v = gemv(y, one_of(dt), transpose(b), squeeze(a, {0}), zero_of(dt));
    return VarList{dimshuffle(v, {DimShuffle::kNewAxis, 0})};
  }
  return std::nullopt;
}

// mul(s, dot22(A, B)) -> dot22scalar(A, B, s).
std::optional<VarList> scale_into_dot22(const FunctionGraph& fg, const Apply& node) {
  if (node.num_inputs() != 2) return std::nullopt;
  for (int k = 0; k < 2; ++k) {
    const Var& d = node.input(k);
    if (!d->owner() || d->owner()->op().name() != "Dot22" || client_count(fg, d) != 1) continue;
    DType dt = d->dtype();
    Var s = as_scalar(node.input(1 - k), dt);
    if (!s || node.output_ptr(0)->dtype() != dt) continue;
    return VarList{dot22scalar(d->owner()->input(0), d->owner()->input(1), s)};
  }
  return std::nullopt;
}

// add(dot22(A, B) or dot22scalar(A, B, a), C) with C of the output's full type -> gemm.
std::optional<VarList> add_into_gemm(const FunctionGraph& fg, const Apply& node) {
  if (node.num_inputs() != 2) return std::nullopt;
  const Variable& out = *node.output_ptr(0);
  for (int k = 0; k < 2; ++k) {
    const Var& d = node.input(k);
    const Apply* p = d->owner();
    if (!p || client_count(fg, d) != 1) continue;
    std::string name(p->op().name());
    if (name != "Dot22" && name != "Dot22Scalar") continue;
    DType dt = d->dtype();
    const Var& c = node.input(1 - k);
    if (c->type() != out.type() || c->dtype() != dt) continue;
    Var alpha = name == "Dot22" ? one_of(dt) : p->input(2);
    return VarList{gemm(c, alpha, p->input(0), p->input(1), one_of(dt))};
  }
  return std::nullopt;
}

// The vector under x[:, None] or y[None, :].
Var column_of(const Var& v, bool column) {
  const Apply* n = v->owner();
  if (!n || n->op().name() != "DimShuffle" || n->input(0)->ndim() != 1) return nullptr;
  const auto& ds = static_cast<const DimShuffle&>(n->op());
  std::vector<int> want = column ? std::vector<int>{0, DimShuffle::kNewAxis} : std::vector<int>{DimShuffle::kNewAxis, 0};
  return ds.new_order() == want ? n->input(0) : nullptr;
}

// add(A, x[:, None] * y[None, :]) -> ger(A, 1, x, y), and with a scalar factor s in the
// product (a canonical mul chain s * x[:, None] * y[None, :]) -> ger(A, s, x, y).
std::optional<VarList> outer_into_ger(const FunctionGraph& fg, const Apply& node) {
  if (node.num_inputs() != 2) return std::nullopt;
  const Variable& out = *node.output_ptr(0);
  DType dt = out.dtype();
  if (!blas_dtype(dt)) return std::nullopt;
  for (int k = 0; k < 2; ++k) {
    const Var& m = node.input(k);
    const Var& a = node.input(1 - k);
    if (a->type() != out.type()) continue;
    if (!is_elemwise(m, ScalarOpId::Mul) || client_count(fg, m) != 1) continue;
    const Apply* mul = m->owner();
    if (mul->num_inputs() != 2 && mul->num_inputs() != 3) continue;
    Var x, y, alpha = one_of(dt);
    bool ok = true;
    for (int j = 0; j < mul->num_inputs() && ok; ++j) {
      const Var& f = mul->input(j);
      if (!x && (x = column_of(f, true))) continue;
      if (!y && (y = column_of(f, false))) continue;
      Var s = mul->num_inputs() == 3 ? as_scalar(f, dt) : nullptr;
      ok = s && s->dtype() == dt && (alpha = s);
    }
    if (!ok || !x || !y || x->dtype() != dt || y->dtype() != dt) continue;
    return VarList{ger(a, alpha, x, y)};
  }
  return std::nullopt;
}

}  // namespace

std::vector<NodeRewrite> blas_rules() {
  std::vector<NodeRewrite> rules;
  rules.push_back(rule("dot_to_blas", "Dot", dot_to_blas));
  rules.push_back(rule("dot22_to_gemv", "Dot22", dot22_to_gemv));
  rules.push_back(rule("scale_into_gemv", "Elemwise", scale_into_gemv, ScalarOpId::Mul));
  rules.push_back(rule("add_into_gemv", "Elemwise", add_into_gemv, ScalarOpId::Add));
  rules.push_back(rule("scale_into_dot22", "Elemwise", scale_into_dot22, ScalarOpId::Mul));
  rules.push_back(rule("add_into_gemm", "Elemwise", add_into_gemm, ScalarOpId::Add));
  rules.push_back(rule("outer_into_ger", "Elemwise", outer_into_ger, ScalarOpId::Add));
  return rules;
}

}  // namespace kiln
