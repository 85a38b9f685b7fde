// Linear-algebra rewrites PyTensor applies that change cost or accuracy
// (pytensor/tensor/rewriting/blockwise.py and rewriting/linalg/ in 3.x):
//  - canonicalize: a Blockwise without batch dimensions (or only static-1 ones) becomes its core
//    op, so the BLAS rules see a plain Dot (z[None, :] @ z[:, None] becomes a BLAS call) and
//    the rules below see plain linear-algebra ops;
//  - stabilize: Solve(assume_a="pos") becomes Cholesky + CholeskySolve (same triangle, NaN on
//    failure as before); inv(X) @ b and b @ inv(X) become solves; det of a Cholesky factor or
//    of LU's triangular factors becomes the product of its diagonal;
//  - specialize: log(det(X)), log(abs(det(X))) and sign(det(X)) use SLogDet when det(X) has no
//    other use.
// Each rule matches a core op or a Blockwise of one (linalg_core gives the core op of either).
#include <cmath>
#include <limits>

#include "ops/math.h"
#include "ops/grad_util.h"
#include "ops/blockwise.h"
#include "ops/dimshuffle.h"
#include "ops/dot.h"
#include "ops/linalg/linalg.h"
#include "ops/reduce.h"
#include "rewrite/database.h"
#include "rewrite/rule_helpers.h"

namespace kiln {

namespace {

/// The op of `node`, looking through a Blockwise.
const Op* core_of(const Apply* node) {
  if (!node) return nullptr;
  if (const auto* bw = dynamic_cast<const Blockwise*>(&node->op())) return &bw->core_op();
  return &node->op();
}

template <typename T>
const T* core_as(const Apply* node) {
  return dynamic_cast<const T*>(core_of(node));
}

// --- a Blockwise without (real) batch dimensions becomes its core op --------------------------------

std::optional<VarList> unbatched_blockwise(const FunctionGraph&, const Apply& node) {
  const auto& op = static_cast<const Blockwise&>(node.op());
  const int nb = op.batch_ndim(node);
  for (const Var& in : node.inputs())
    for (int d = 0; d < nb; ++d)
      if (!in->type().broadcastable(d)) return std::nullopt;
  std::vector<int> batch_axes;
  for (int d = 0; d < nb; ++d) batch_axes.push_back(d);
  VarList core_inputs;
  for (const Var& in : node.inputs()) core_inputs.push_back(nb ? squeeze(in, batch_axes) : in);
  VarList outs = make_node(op.core_op_ptr(), core_inputs)->outputs();
  for (Var& out : outs) out = expand_dims_left(out, nb);
  return outs;
}

// --- Solve(assume_a="pos") -> Cholesky + CholeskySolve ----------------------------------------------

std::optional<VarList> pos_solve_to_cholesky(const FunctionGraph&, const Apply& node) {
  const auto* s = core_as<Solve>(&node);
  if (!s || s->structure() != kiln_linalg::Structure::PositiveDefinite) return std::nullopt;
  const Var factor = cholesky(node.input(0), s->lower());
  return VarList{cho_solve(factor, node.input(1), s->lower(), s->b_ndim())};
}

// --- inv(X) @ b -> solve(X, b); b @ inv(X) -> solve(X^T, b^T)^T ---------------------------------------

// X when v is inv(X) (a MatrixInverse, plain or batched), else null.
Var inverted(const Var& v) {
  return core_as<MatrixInverse>(v->owner()) ? v->owner()->input(0) : nullptr;
}

std::optional<VarList> inverse_product_to_solve(const FunctionGraph&, const Apply& node) {
  const Op* core = core_of(&node);
  if (!core || core->name() != "Dot") return std::nullopt;
  const Var& l = node.input(0);
  const Var& r = node.input(1);
  const int nb = dynamic_cast<const Blockwise*>(&node.op()) ? static_cast<const Blockwise&>(node.op()).batch_ndim(node) : 0;
  const int r_core = r->ndim() - nb, l_core = l->ndim() - nb;
  Var out;
  if (Var x = inverted(l); x && l_core == 2) {
    out = solve(x, r, "gen", false, r_core);
  } else if (Var y = inverted(r); y && r_core == 2) {
    out = l_core == 1 ? solve(mT(y), l, "gen", false, 1) : mT(solve(mT(y), mT(l), "gen", false, 2));
  } else {
    return std::nullopt;
  }
  return VarList{match_dtype(out, *node.output_ptr(0))};
}

// --- det of a triangular factor -> product of its diagonal ------------------------------------------

// True when `v` is known to be triangular: a Cholesky factor, or LU's L (unit) or U.
bool triangular_factor(const Var& v, bool& unit) {
  const Apply* owner = v->owner();
  unit = false;
  if (core_as<Cholesky>(owner)) return true;
  if (const auto* lu_op = core_as<LU>(owner)) {
    if (lu_op->permute_l()) return v->index() == 1;  // P L is not triangular; U is
    unit = v->index() == 1;
    return v->index() >= 1;
  }
  return false;
}

std::optional<VarList> det_of_triangular(const FunctionGraph&, const Apply& node) {
  if (!core_as<Det>(&node)) return std::nullopt;
  const Var& x = node.input(0);
  bool unit = false;
  if (!triangular_factor(x, unit)) return std::nullopt;
  const Var& out = node.output(0);
  if (unit) return VarList{ones_like(out, out->dtype())};
  return VarList{match_dtype(prod(diag_of(x), -1), *out)};
}

// --- log(det), log(abs(det)), sign(det) -> SLogDet --------------------------------------------------

// det(X)'s node when `v` is det(X) and every use of it is log, sign, or abs feeding only logs.
const Apply* det_used_only_by_slogdet_forms(const FunctionGraph& fg, const Var& v) {
  const Apply* det_node = v->owner();
  if (!core_as<Det>(det_node)) return nullptr;
  for (const Client& c : fg.clients(v.get())) {
    const Elemwise* e = elemwise_op(c.node);
    if (!e) return nullptr;
    const ScalarOpId id = e->scalar_op().id();
    if (id == ScalarOpId::Log || id == ScalarOpId::Sgn) continue;
    if (id != ScalarOpId::Abs) return nullptr;
    for (const Client& c2 : fg.clients(c.node->output_ptr(0))) {
      const Elemwise* e2 = elemwise_op(c2.node);
      if (!e2 || e2->scalar_op().id() != ScalarOpId::Log) return nullptr;
    }
  }
  return det_node;
}

VarList slogdet_of(const Apply* det_node) { return slogdet(det_node->input(0)); }

std::optional<VarList> log_det_to_slogdet(const FunctionGraph& fg, const Apply& node) {
  const Var& x = node.input(0);
  if (const Apply* d = det_used_only_by_slogdet_forms(fg, x)) {
    // log(det) is NaN for a negative determinant.
    VarList sl = slogdet_of(d);
    const Var nan = scalar_constant(sl[1]->dtype(), std::numeric_limits<double>::quiet_NaN());
    return VarList{match_dtype(switch_(eq(sl[0], -1), nan, sl[1]), *node.output_ptr(0))};
  }
  if (is_elemwise(x, ScalarOpId::Abs))
    if (const Apply* d = det_used_only_by_slogdet_forms(fg, x->owner()->input(0)))
      return VarList{match_dtype(slogdet_of(d)[1], *node.output_ptr(0))};
  return std::nullopt;
}

std::optional<VarList> sign_det_to_slogdet(const FunctionGraph& fg, const Apply& node) {
  if (const Apply* d = det_used_only_by_slogdet_forms(fg, node.input(0)))
    return VarList{match_dtype(slogdet_of(d)[0], *node.output_ptr(0))};
  return std::nullopt;
}

NodeRewrite rule(std::string name, std::string tag, std::string op_name,
                 std::function<std::optional<VarList>(const FunctionGraph&, const Apply&)> apply,
                 std::optional<ScalarOpId> scalar = std::nullopt) {
  NodeRewrite r;
  r.name = std::move(name);
  r.tags = {std::move(tag), "linalg"};
  r.op_name = std::move(op_name);
  r.scalar = scalar;
  r.apply = std::move(apply);
  return r;
}

}  // namespace

std::vector<NodeRewrite> linalg_rules() {
  std::vector<NodeRewrite> rules;
  rules.push_back(rule("unbatched_blockwise_to_core", "canonicalize", "Blockwise", unbatched_blockwise));
  for (const char* op : {"Solve", "Blockwise"})
    rules.push_back(rule(std::string("pos_solve_to_cholesky_") + op, "stabilize", op, pos_solve_to_cholesky));
  for (const char* op : {"Dot", "Blockwise"})
    rules.push_back(rule(std::string("inverse_product_to_solve_") + op, "stabilize", op, inverse_product_to_solve));
  for (const char* op : {"Det", "Blockwise"})
    rules.push_back(rule(std::string("det_of_triangular_") + op, "stabilize", op, det_of_triangular));
  rules.push_back(rule("log_det_to_slogdet", "specialize", "Elemwise", log_det_to_slogdet, ScalarOpId::Log));
  rules.push_back(rule("sign_det_to_slogdet", "specialize", "Elemwise", sign_det_to_slogdet, ScalarOpId::Sgn));
  return rules;
}

}  // namespace kiln
