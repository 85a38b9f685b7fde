#include "grad/grad.h"

#include <unordered_map>
#include <optional>
#include <unordered_set>

#include "ir/error.h"
#include "ops/alloc.h"
#include "ops/dimshuffle.h"
#include "ops/grad_util.h"
#include "ops/join.h"
#include "ops/math.h"
#include "ops/reduce.h"
#include "ops/reshape.h"
#include "ops/shape.h"
#include "ops/subtensor.h"
#include "transform/replace.h"
#include "transform/vectorize.h"

namespace kiln {

namespace {

using VarSet = std::unordered_set<const Variable*>;

std::string label(const Var& v) {
  return v->name().empty() ? "the variable of type " + v->type().str() : "\"" + v->name() + "\"";
}

// Apply nodes needed for `outputs`, inputs before users. Variables in `stop` are leaves.
std::vector<Apply*> toposort_from(const VarList& outputs, const VarSet& stop) {
  std::vector<Apply*> order;
  std::unordered_set<const Apply*> seen;
  std::vector<std::pair<Apply*, int>> stack;
  auto push = [&](const Var& v) {
    if (!v || !v->owner() || stop.count(v.get()) || seen.count(v->owner())) return;
    seen.insert(v->owner());
    stack.emplace_back(v->owner(), 0);
  };
  for (const Var& o : outputs) {
    push(o);
    while (!stack.empty()) {
      auto& top = stack.back();
      if (top.second < top.first->num_inputs()) {
        push(top.first->input(top.second++));
      } else {
        order.push_back(top.first);
        stack.pop_back();
      }
    }
  }
  return order;
}

// Variables that depend on one of `wrt` through the nodes of `order`.
VarSet dependents(const std::vector<Apply*>& order, const VarList& wrt, const VarSet& constants) {
  VarSet dep;
  for (const Var& w : wrt) dep.insert(w.get());
  for (Apply* node : order) {
    bool any = false;
    for (const Var& in : node->inputs()) any = any || (dep.count(in.get()) && !constants.count(in.get()));
    if (any)
      for (int j = 0; j < node->num_outputs(); ++j) dep.insert(node->output_ptr(j));
  }
  return dep;
}

VarSet as_set(const VarList& vars) {
  VarSet s;
  for (const Var& v : vars) s.insert(v.get());
  return s;
}

// Why a gradient cannot be computed, and which error class says it.
struct Poison {
  std::string reason;
  bool not_implemented = false;
  explicit operator bool() const { return !reason.empty(); }
};

Poison poison_of(const Apply& node, const GradTerm& term) {
  return {node.op().str() + ": " + term.reason, term.kind == GradTerm::Kind::NotImplemented};
}

[[noreturn]] void raise_poison(const char* fn, const Var& v, const Poison& p) {
  std::string msg = std::string(fn) + ": the gradient with respect to " + label(v) +
                    " cannot be computed: " + p.reason +
                    " (ask for undefined=zero to treat that path as contributing zero)";
  if (p.not_implemented) throw NotImplementedError(msg);
  throw UserError(msg);
}

void check_rank(const Apply& node, int i, const Var& term) {
  if (term->ndim() != node.input(i)->ndim())
    throw InternalError("pullback of " + node.op().str() + " gave a gradient of rank " +
                        std::to_string(term->ndim()) + " for input " + std::to_string(i) +
                        " of rank " + std::to_string(node.input(i)->ndim()));
}

// --- ops whose outputs are their body (ir/inner_graph.h: Elemwise{Composite}, OpFromGraph) ---

GradOptions lenient() {
  GradOptions o;
  o.disconnected = GradOptions::Disconnected::Zero;
  o.undefined = GradOptions::Undefined::Zero;
  return o;
}

// The body expanded over stand-ins for the node's inputs, each output broadcast to the node's
// output shape (an inner output may depend on only some inputs, and so have a smaller shape).
// Derivatives are taken w.r.t. the stand-ins, so they follow only the paths inside the body:
// w.r.t. the real inputs, a path from one input to another outside the node (as in
// Composite(a, exp(a))) would be counted again. `to_real` maps the stand-ins back.
struct Expansion {
  VarList outs;
  VarList stand_ins;
  Replacements to_real;
};

Expansion expand_body(const Apply& node, const InnerGraph& body) {
  Expansion e;
  for (const Var& in : node.inputs()) {
    e.stand_ins.push_back(make_input(in->type()));
    e.to_real.emplace_back(e.stand_ins.back(), in);
  }
  e.outs = body.apply(e.stand_ins);
  for (std::size_t j = 0; j < e.outs.size(); ++j)
    e.outs[j] = broadcast_like(e.outs[j], node.output(static_cast<int>(j)));
  return e;
}

std::vector<GradTerm> body_pullback(const Apply& node, const InnerGraph& body, const VarList& ogs) {
  Expansion e = expand_body(node, body);
  VarList cots;
  for (std::size_t j = 0; j < e.outs.size(); ++j) {
    const Var& og = ogs[j];
    cots.push_back(og && is_float(e.outs[j]->dtype()) ? og : nullptr);
  }
  VarList gs = Lop(e.outs, e.stand_ins, cots, lenient());
  std::vector<GradTerm> terms;
  for (std::size_t i = 0; i < gs.size(); ++i) {
    const Var& in = node.input(static_cast<int>(i));
    terms.push_back(is_discrete(in->dtype()) || is_zeros(gs[i])
                        ? GradTerm::disconnected()
                        : GradTerm::of(sum_to_type(graph_replace(gs[i], e.to_real), in->type())));
  }
  return terms;
}

std::vector<GradTerm> body_pushforward(const Apply& node, const InnerGraph& body, const VarList& input_tangents) {
  Expansion e = expand_body(node, body);
  VarList wrt, tangents;
  for (int i = 0; i < node.num_inputs(); ++i)
    if (input_tangents[static_cast<std::size_t>(i)]) {
      wrt.push_back(e.stand_ins[static_cast<std::size_t>(i)]);
      tangents.push_back(input_tangents[static_cast<std::size_t>(i)]);
    }
  // Only tensor outputs have tangents (an rng or a none passing through has none).
  VarList targets;
  std::vector<int> target_index;
  for (int j = 0; j < node.num_outputs(); ++j) {
    const Var& o = e.outs[static_cast<std::size_t>(j)];
    if (o->type().is_tensor()) {
      targets.push_back(o);
      target_index.push_back(j);
    }
  }
  std::vector<GradTerm> terms(static_cast<std::size_t>(node.num_outputs()), GradTerm::disconnected());
  if (targets.empty()) return terms;
  VarList ts = Rop(targets, wrt, tangents, lenient());
  for (std::size_t k = 0; k < targets.size(); ++k) {
    const int j = target_index[k];
    terms[static_cast<std::size_t>(j)] = GradTerm::of(broadcast_like(graph_replace(ts[k], e.to_real), node.output(j)));
  }
  return terms;
}

const InnerGraph* body_of(const Apply& node, std::vector<InnerGraphUse>& uses) {
  uses = node.op().inner_graphs();
  for (const InnerGraphUse& use : uses)
    if (use.is_body) return use.graph.get();
  return nullptr;
}

// A node with a complex input or output: its derivatives are "not implemented" (PyTensor does
// not differentiate complex graphs either), one term per input (pullback) or output
// (pushforward). nullopt for a node of real values.
std::optional<std::vector<GradTerm>> complex_terms(const Apply& node, int count) {
  bool complex = false;
  for (const Var& v : node.inputs()) complex = complex || (v->type().is_tensor() && is_complex(v->dtype()));
  for (int i = 0; i < node.num_outputs(); ++i)
    complex = complex || (node.output_ptr(i)->type().is_tensor() && is_complex(node.output_ptr(i)->dtype()));
  if (!complex) return std::nullopt;
  return std::vector<GradTerm>(static_cast<std::size_t>(count),
                               GradTerm::not_implemented(node.op().str() + " computes on complex numbers: gradients "
                                                         "through complex values are not implemented in kiln"));
}

// One node's pullback: through its body when it has one, else the op's own rule.
std::vector<GradTerm> node_pullback(const Apply& node, const VarList& ogs) {
  if (auto terms = complex_terms(node, node.num_inputs())) return *terms;
  std::vector<InnerGraphUse> uses;
  if (const InnerGraph* body = body_of(node, uses)) return body_pullback(node, *body, ogs);
  return node.op().pullback(node, ogs);
}

// One node's pushforward, likewise.
std::vector<GradTerm> node_pushforward(const Apply& node, const VarList& tangents) {
  if (auto terms = complex_terms(node, node.num_outputs())) return *terms;
  std::vector<InnerGraphUse> uses;
  if (const InnerGraph* body = body_of(node, uses)) return body_pushforward(node, *body, tangents);
  return node.op().pushforward(node, tangents);
}

// Reverse accumulation shared by grad and Lop.
VarList reverse_mode(const char* fn, const VarList& outputs, const VarList& wrt,
                     const VarList& cotangents, const GradOptions& options) {
  const VarSet constants = as_set(options.consider_constant);
  std::vector<Apply*> order = toposort_from(outputs, constants);
  VarSet dep = dependents(order, wrt, constants);
  const bool raise_undefined = options.undefined == GradOptions::Undefined::Raise;

  std::unordered_map<const Variable*, VarList> terms;
  // The origins of the nodes whose pullbacks gave a variable's terms: the sum of the terms
  // stands for them (ir/provenance.h).
  std::unordered_map<const Variable*, Origins> term_origins;
  std::unordered_map<const Variable*, Poison> poison;
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    const Var& c = cotangents[k];
    if (!c) continue;
    if (c->ndim() != outputs[k]->ndim())
      throw UserError(std::string(fn) + ": the cotangent of output " + std::to_string(k) + " has rank " +
                      std::to_string(c->ndim()) + " but the output has rank " +
                      std::to_string(outputs[k]->ndim()));
    terms[outputs[k].get()].push_back(cast_grad(c, outputs[k]->dtype()));
  }

  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Apply& node = **it;
    if (!dep.count(node.output_ptr(0))) continue;
    VarList ogs(static_cast<std::size_t>(node.num_outputs()));
    Poison inherited;
    bool any = false;
    for (int j = 0; j < node.num_outputs(); ++j) {
      const Variable* out = node.output_ptr(j);
      auto t = terms.find(out);
      if (t != terms.end() && !t->second.empty()) {
        OriginScope scope(term_origins[out]);
        ogs[static_cast<std::size_t>(j)] = cast_grad(add_terms(t->second), out->dtype());
        any = true;
      }
      auto p = poison.find(out);
      if (p != poison.end() && !inherited) inherited = p->second;
    }
    if (!any && !inherited) continue;
    OriginScope scope(node.origins());  // the node's gradient graph stands for the node
    // A poisoned output without a value still asks its op which inputs it is connected to.
    for (int j = 0; j < node.num_outputs(); ++j)
      if (!ogs[static_cast<std::size_t>(j)] && inherited && poison.count(node.output_ptr(j)))
        ogs[static_cast<std::size_t>(j)] = zeros_like(node.output(j));
    std::vector<GradTerm> in_terms = node_pullback(node, ogs);
    KILN_INTERNAL_ASSERT(static_cast<int>(in_terms.size()) == node.num_inputs(),
                         "pullback of " + node.op().str() + " returned the wrong number of terms");
    for (int i = 0; i < node.num_inputs(); ++i) {
      const Var& x = node.input(i);
      if (!dep.count(x.get()) || constants.count(x.get())) continue;
      const GradTerm& term = in_terms[static_cast<std::size_t>(i)];
      switch (term.kind) {
        case GradTerm::Kind::Value:
          check_rank(node, i, term.value);
          terms[x.get()].push_back(cast_grad(term.value, x->dtype()));
          term_origins[x.get()] = merge_origins(term_origins[x.get()], node.origins());
          if (inherited && !poison.count(x.get())) poison[x.get()] = inherited;
          break;
        case GradTerm::Kind::Disconnected:
          break;
        case GradTerm::Kind::Undefined:
        case GradTerm::Kind::NotImplemented:
          if (raise_undefined && !poison.count(x.get())) poison[x.get()] = poison_of(node, term);
          break;
      }
    }
  }

  VarList result;
  for (const Var& w : wrt) {
    if (is_discrete(w->dtype())) {
      if (raise_undefined)
        throw UserError(std::string(fn) + ": cannot differentiate with respect to " + label(w) + ": it has dtype " +
                        std::string(dtype_name(w->dtype())) +
                        " and gradients exist only for float variables (ask for undefined=zero to get zeros)");
      result.push_back(zeros_like(w));
      continue;
    }
    auto p = poison.find(w.get());
    if (p != poison.end()) raise_poison(fn, w, p->second);
    auto t = terms.find(w.get());
    if (t == terms.end() || t->second.empty()) {
      if (options.disconnected == GradOptions::Disconnected::Raise)
        throw UserError(std::string(fn) + ": the cost does not depend on " + label(w) +
                        " (it is disconnected from the graph of the cost; ask for disconnected=zero "
                        "to get zeros)");
      result.push_back(zeros_like(w));
      continue;
    }
    OriginScope scope(term_origins[w.get()]);
    result.push_back(cast_grad(add_terms(t->second), w->dtype()));
  }
  return result;
}

// The pushforward of one node by differentiating its pullback (which is linear in the output
// cotangents) with respect to those cotangents: the double-Lop trick.
std::vector<GradTerm> double_lop(const Apply& node, const VarList& tangents) {
  VarList us(static_cast<std::size_t>(node.num_outputs()));
  VarList valid_us;
  Replacements back;
  for (int j = 0; j < node.num_outputs(); ++j) {
    const Var out = node.output(j);
    if (!is_float(out->dtype())) continue;
    us[static_cast<std::size_t>(j)] = make_input(out->type(), "u");
    valid_us.push_back(us[static_cast<std::size_t>(j)]);
    back.emplace_back(us[static_cast<std::size_t>(j)], out);
  }
  std::vector<GradTerm> result(static_cast<std::size_t>(node.num_outputs()), GradTerm::disconnected());
  if (valid_us.empty()) return result;
  std::vector<GradTerm> pb = node_pullback(node, us);
  VarList gs, cots;
  for (int i = 0; i < node.num_inputs(); ++i) {
    const Var& t = tangents[static_cast<std::size_t>(i)];
    if (!t) continue;
    const GradTerm& term = pb[static_cast<std::size_t>(i)];
    if (term.kind == GradTerm::Kind::Value) {
      gs.push_back(term.value);
      cots.push_back(cast(t, grad_dtype(term.value->dtype())));
    } else if (term.kind != GradTerm::Kind::Disconnected) {
      std::string why = term.kind == GradTerm::Kind::NotImplemented ? "has neither a pushforward nor a pullback"
                                                                    : term.reason;
      GradTerm bad = term.kind == GradTerm::Kind::NotImplemented ? GradTerm::not_implemented(why)
                                                                 : GradTerm::undefined(why);
      return std::vector<GradTerm>(result.size(), bad);
    }
  }
  if (gs.empty()) return result;
  GradOptions opts;
  opts.disconnected = GradOptions::Disconnected::Zero;
  VarList jv = reverse_mode("Rop", gs, valid_us, cots, opts);
  jv = graph_replace(jv, back);
  std::size_t k = 0;
  for (int j = 0; j < node.num_outputs(); ++j)
    if (us[static_cast<std::size_t>(j)]) result[static_cast<std::size_t>(j)] = GradTerm::of(jv[k++]);
  return result;
}

bool any_not_implemented(const std::vector<GradTerm>& terms) {
  for (const auto& t : terms)
    if (t.kind == GradTerm::Kind::NotImplemented) return true;
  return false;
}

}  // namespace

VarList Lop(const VarList& outputs, const VarList& wrt, const VarList& cotangents,
            const GradOptions& options) {
  if (outputs.size() != cotangents.size())
    throw UserError("Lop: " + std::to_string(outputs.size()) + " outputs but " +
                    std::to_string(cotangents.size()) + " cotangents");
  return reverse_mode("Lop", outputs, wrt, cotangents, options);
}

VarList grad(const Var& cost, const VarList& wrt, const GradOptions& options) {
  if (!cost) throw UserError("grad: the cost is null");
  if (cost->ndim() != 0)
    throw UserError("grad: the cost must be 0-d (a scalar), but it has type " + cost->type().str() +
                    " (sum it, or use Lop with a cotangent)");
  return reverse_mode("grad", {cost}, wrt, {const_like(cost, 1.0)}, options);
}

Var grad(const Var& cost, const Var& wrt, const GradOptions& options) {
  return grad(cost, VarList{wrt}, options)[0];
}

VarList Rop(const VarList& outputs, const VarList& wrt, const VarList& tangents,
            const GradOptions& options) {
  if (wrt.size() != tangents.size())
    throw UserError("Rop: " + std::to_string(wrt.size()) + " variables but " + std::to_string(tangents.size()) +
                    " tangents");
  const VarSet constants = as_set(options.consider_constant);
  std::vector<Apply*> order = toposort_from(outputs, constants);
  const bool raise_undefined = options.undefined == GradOptions::Undefined::Raise;
  std::unordered_map<const Variable*, Var> tangent;
  std::unordered_map<const Variable*, Poison> poison;
  for (std::size_t i = 0; i < wrt.size(); ++i) {
    if (!tangents[i] || !is_float(wrt[i]->dtype())) continue;
    if (tangents[i]->ndim() != wrt[i]->ndim())
      throw UserError("Rop: the tangent of " + label(wrt[i]) + " has rank " + std::to_string(tangents[i]->ndim()) +
                      " but the variable has rank " + std::to_string(wrt[i]->ndim()));
    tangent[wrt[i].get()] = cast(tangents[i], wrt[i]->dtype());
  }
  for (Apply* node : order) {
    VarList tin(static_cast<std::size_t>(node->num_inputs()));
    bool any = false;
    Poison inherited;
    for (int i = 0; i < node->num_inputs(); ++i) {
      const Variable* x = node->input(i).get();
      if (constants.count(x)) continue;
      auto t = tangent.find(x);
      if (t != tangent.end()) {
        tin[static_cast<std::size_t>(i)] = t->second;
        any = true;
      }
      auto p = poison.find(x);
      if (p != poison.end() && !inherited) inherited = p->second;
    }
    if (inherited) {
      for (int j = 0; j < node->num_outputs(); ++j)
        if (is_float(node->output_ptr(j)->dtype())) poison[node->output_ptr(j)] = inherited;
      continue;
    }
    if (!any) continue;
    OriginScope scope(node->origins());  // the node's tangent graph stands for the node
    std::vector<GradTerm> out_terms = node_pushforward(*node, tin);
    if (any_not_implemented(out_terms)) out_terms = double_lop(*node, tin);
    for (int j = 0; j < node->num_outputs(); ++j) {
      const Var out = node->output(j);
      const GradTerm& term = out_terms[static_cast<std::size_t>(j)];
      if (!is_float(out->dtype())) continue;  // discrete values have no tangent
      if (term.kind == GradTerm::Kind::Value) {
        if (term.value->ndim() != out->ndim())
          throw InternalError("pushforward of " + node->op().str() + " gave a tangent of rank " +
                              std::to_string(term.value->ndim()) + " for output " + std::to_string(j) +
                              " of rank " + std::to_string(out->ndim()));
        tangent[out.get()] = cast(term.value, out->dtype());
      } else if (term.kind != GradTerm::Kind::Disconnected && raise_undefined) {
        poison[out.get()] = poison_of(*node, term);
      }
    }
  }
  VarList result;
  for (const Var& o : outputs) {
    auto p = poison.find(o.get());
    if (p != poison.end()) raise_poison("Rop", o, p->second);
    auto t = tangent.find(o.get());
    if (t != tangent.end()) {
      result.push_back(t->second);
    } else if (options.disconnected == GradOptions::Disconnected::Raise) {
      throw UserError("Rop: " + label(o) + " does not depend on the given variables (it is disconnected; "
                      "ask for disconnected=zero to get zeros)");
    } else {
      result.push_back(zeros_like(o));
    }
  }
  return result;
}

namespace {

// The Jacobian of an expression whose size is only known at run time (PyTensor's
// jacobian(vectorize=True)): the pullback of a placeholder cotangent is one row of the
// Jacobian; vectorize_graph batches it over the rows of an identity matrix, so every row comes
// out of one graph whatever the size.
Var jacobian_vectorized(const Var& expression, const Var& wrt, const GradOptions& options) {
  Var cotangent = make_input(expression->type(), "jacobian_cotangent");
  Var row = Lop({expression}, {wrt}, {cotangent}, options)[0];
  Var n = prod(shape(expression));
  Var expression_shape = shape(expression);
  Var out_shape = join(0, {expression_shape, shape(wrt)});
  const int out_ndim = expression->ndim() + wrt->ndim();
  Var basis = reshape(eye(n, std::nullopt, 0, expression->dtype()),
                      join(0, {make_vector({n}, DType::Int64), expression_shape}), 1 + expression->ndim());
  Var rows;
  try {
    rows = vectorize_graph(row, {{cotangent, basis}});
  } catch (const NotImplementedError& e) {
    throw NotImplementedError("jacobian: the expression's shape " + expression->type().shape_str() +
                              " is not static, so kiln batches its pullback with vectorize_graph, which failed: " +
                              e.what());
  }
  // A gradient that does not depend on the cotangent (disconnected, treated as zero).
  if (rows->ndim() != 1 + wrt->ndim()) {
    std::vector<IntArg> lengths;
    for (int d = 0; d < out_ndim; ++d) lengths.emplace_back(at(out_shape, d));
    return alloc(const_like(wrt, 0), IntList(lengths));
  }
  return reshape(rows, out_shape, out_ndim);
}

}  // namespace

Var jacobian(const Var& expression, const Var& wrt, const GradOptions& options) {
  if (expression->ndim() == 0) return grad(expression, wrt, options);
  if (!expression->type().fully_static()) return jacobian_vectorized(expression, wrt, options);
  std::int64_t n = 1;
  for (std::int64_t len : expression->shape()) n *= len;
  std::vector<IntArg> out_shape;
  for (std::int64_t len : expression->shape()) out_shape.emplace_back(len);
  for (const Var& l : lengths_of(wrt)) out_shape.emplace_back(l);
  if (n == 0) return alloc(const_like(wrt, 0), IntList(out_shape));
  // A statically sized expression: one gradient per element, joined (works for every op with
  // a pullback, whether or not vectorize_graph knows it).
  Var flat = reshape(expression, IntList{-1});
  VarList rows;
  for (std::int64_t i = 0; i < n; ++i) {
    Var row = grad(at(flat, i), wrt, options);
    rows.push_back(expand_dims_left(row, 1));
  }
  Var stacked = rows.size() == 1 ? rows[0] : join(0, rows);
  return reshape(stacked, IntList(out_shape));
}

Var hessian(const Var& cost, const Var& wrt, const GradOptions& options) {
  if (cost->ndim() != 0)
    throw UserError("hessian: the cost must be 0-d (a scalar), but it has type " + cost->type().str());
  Var g = grad(cost, wrt, options);
  // A linear cost has a gradient that no longer depends on wrt: its Hessian is zero.
  GradOptions second = options;
  second.disconnected = GradOptions::Disconnected::Zero;
  if (wrt->ndim() == 0) return grad(g, wrt, second);
  return jacobian(g, wrt, second);
}

}  // namespace kiln
