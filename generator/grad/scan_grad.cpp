// Scan::pullback: the gradient of a Scan as another Scan running over the steps in reverse
// (PyTensor's backward scan, Scan.L_op / pullback in pytensor/scan/op.py), with the same
// semantics — which inputs are differentiable, disconnected or undefined — but a different
// carrier for the adjoints of the tap buffers: instead of PyTensor's mit-mot, the backward scan
// keeps, for a tap output whose oldest tap is -m, a window of m pending adjoints as m sit-sot
// states (a shift register), so it is an ordinary scan (sequences, sit-sot, nit-sot,
// non-sequences) that the reference evaluator and every code generator already run.
//
// Forward step t (0 <= t < N) reads row m + t + tap of buffer k and writes row m + t. Going
// backwards, when step t is differentiated the adjoint of row m + t is complete (only later
// steps read it). The window entering step t holds the pending adjoints of rows t+1 .. t+m,
// its last entry (row m + t) plus the cotangent given for that row is the adjoint of the
// state written at step t; the step's pullback adds the tap cotangents to rows t .. t+m-1,
// which is the window shifted by one. After step 0 the window holds the adjoints of the
// initial rows 0 .. m-1. Non-sequence gradients accumulate in sit-sot states; sequence
// gradients are nit-sot outputs, reversed back afterwards. truncate_gradient=k runs the
// backward scan over the last k steps only (PyTensor's truncated back-propagation).
//
// It lives in grad/, not beside the op in ops/, because it differentiates the step function with
// grad/'s Lop, and ops/ may not include grad/ (tests/layering/check_layers.cmake).
#include <optional>
#include <string>
#include <unordered_set>

#include "grad/grad.h"
#include "ir/error.h"
#include "ops/alloc.h"
#include "ops/assert.h"
#include "ops/constant.h"
#include "ops/grad_util.h"
#include "ops/ifelse.h"
#include "ops/join.h"
#include "ops/math.h"
#include "ops/op_from_graph.h"
#include "ops/scan.h"
#include "ops/shape.h"
#include "ops/subtensor.h"

namespace kiln {

namespace {

using VarSet = std::unordered_set<const Variable*>;

// Every variable `roots` are computed from (themselves included).
VarSet ancestors_of(const VarList& roots) {
  VarSet seen;
  std::vector<const Variable*> stack;
  for (const Var& r : roots)
    if (r) stack.push_back(r.get());
  while (!stack.empty()) {
    const Variable* v = stack.back();
    stack.pop_back();
    if (!seen.insert(v).second) continue;
    if (const Apply* a = v->owner())
      for (const Var& in : a->inputs()) stack.push_back(in.get());
  }
  return seen;
}

// x[begin:end][::-1]: the rows a forward step range reads, in the order the backward scan
// visits them.
Var reversed_rows(const Var& x, const IndexScalar& begin, const IndexScalar& end) {
  return subtensor(subtensor(x, {slice(begin, end)}), {slice(none, none, -1)});
}

// `rows` zero rows shaped like the rows of `row_source` (its dimensions from `skip` on), in
// dtype `dt`: the initial buffer of a sit-sot of the backward scan, the steps of a whole buffer.
Var zero_rows(const Var& rows, const Var& row_source, int skip, DType dt) {
  std::vector<IntArg> lengths{rows};
  for (int d = skip; d < row_source->ndim(); ++d) lengths.emplace_back(shape_i(row_source, d));
  return alloc(cast(const_like(row_source, 0.0), dt), IntList(lengths));
}

// A fresh inner input of type `t` named `name`.
Var placeholder(const TensorType& t, const std::string& name) { return make_input(t, name); }

TensorType row_type(const TensorType& outer) {
  return TensorType(outer.dtype, Shape(outer.shape.begin() + 1, outer.shape.end()));
}


// Whether `buffer` statically holds its m initial rows plus one per step of `n_steps` (true),
// statically does not (false), or it is known only at run time (nullopt).
std::optional<bool> static_whole(const Var& buffer, const Var& n_steps, std::int64_t m) {
  const std::int64_t length = buffer->type().shape[0];
  const std::optional<std::int64_t> n = constant_int(n_steps);
  if (length == kUnknownLength || !n) return std::nullopt;
  return length >= m + *n;
}

// A circular tap buffer (shorter than its taps plus the steps, as PyTensor's scan_save_mem
// makes them) has overwritten the early states the backward pass needs. Then the loop runs
// again on whole buffers (the given initial rows, then zeros) — lazily, through an IfElse, when
// only run time can tell — and the cotangents given for the circular buffer's rows (the last
// states, oldest first) move to those states' rows. A while-loop that stops early shortens
// circular buffers differently: there a run-time check refuses them.
void whole_states(const Apply& node, const std::string& who, std::vector<Var>& states, std::vector<Var>& cots) {
  const ScanInfo& in = scan_op(&node)->info();
  if (in.n_tap_outs() == 0) return;
  const Var requested = cast(node.input(0), DType::Int64);
  VarList whole;
  bool all_whole = true, any_circular = false;
  for (int k = 0; k < in.n_tap_outs(); ++k) {
    const Var& buffer = node.input(in.tap_buffers_begin() + k);
    const std::optional<bool> known = static_whole(buffer, node.input(0), -in.min_tap(k));
    all_whole = all_whole && known.value_or(false);
    any_circular = any_circular || (known && !*known);
    whole.push_back(shape_i(buffer, 0) >= requested - in.min_tap(k));
  }
  if (all_whole) return;
  if (in.as_while) {
    states[0] = check_and_raise(states[0], whole,
                                who + ": its gradient needs every state of its tap outputs, but a buffer of this "
                                      "while-loop holds fewer rows than its taps plus n_steps (a circular buffer)",
                                "NotImplementedError");
    return;
  }
  VarList again_in = node.inputs();
  for (int k = 0; k < in.n_tap_outs(); ++k) {
    const Var& buffer = node.input(in.tap_buffers_begin() + k);
    again_in[static_cast<std::size_t>(in.tap_buffers_begin() + k)] = concatenate(
        {subtensor(buffer, {slice(0, -in.min_tap(k))}), zero_rows(requested, buffer, 1, buffer->dtype())});
  }
  const VarList again = make_node(node.op_ptr(), again_in)->outputs();
  VarList then_vals, else_vals;
  std::vector<Var*> picked;
  for (int k = 0; k < in.n_tap_outs(); ++k) {
    then_vals.push_back(states[static_cast<std::size_t>(k)]);
    else_vals.push_back(again[static_cast<std::size_t>(k)]);
    picked.push_back(&states[static_cast<std::size_t>(k)]);
    if (Var& g = cots[static_cast<std::size_t>(k)]) {
      const Var& full = again[static_cast<std::size_t>(k)];
      then_vals.push_back(g);
      else_vals.push_back(inc_subtensor(zeros_like(full, g->dtype()), {slice(shape_i(full, 0) - shape_i(g, 0), none)}, g));
      picked.push_back(&g);
    }
  }
  Var cond = whole[0];
  for (std::size_t k = 1; k < whole.size(); ++k) cond = cond & whole[k];
  const VarList chosen = any_circular ? else_vals : ifelse(cond, then_vals, else_vals, who + " states");
  for (std::size_t i = 0; i < picked.size(); ++i) *picked[i] = chosen[i];
}


// The untraced sit-sot states that are float tensors: PyTensor 3's scan_save_mem turns a sit-sot
// whose trace nobody reads into one (only rng states and such are untraced by nature).
std::vector<int> float_untraced(const ScanInfo& in, const FunctionGraph& step) {
  std::vector<int> out;
  for (int j = 0; j < in.n_untraced_sit_sot; ++j) {
    const Var& v = step.inputs()[static_cast<std::size_t>(in.inner_untraced_begin() + j)];
    if (v->type().is_tensor() && is_float(v->dtype())) out.push_back(j);
  }
  return out;
}

// The same loop with the untraced states `states` traced again as sit-sot (after the others):
// the gradient needs every state, which the untraced form does not keep. Its pullback, mapped
// back to the node's inputs (an untraced state's initial value is row 0 of its buffer; the
// cotangent of its final value goes to the buffer's last row).
std::vector<GradTerm> pullback_traced(const Apply& node, const VarList& output_grads, const std::vector<int>& states) {
  const Scan& op = *scan_op(&node);
  const ScanInfo& in = op.info();
  const FunctionGraph& step = op.inner_graph();
  std::vector<char> moved(static_cast<std::size_t>(in.n_untraced_sit_sot), 0);
  for (int j : states) moved[static_cast<std::size_t>(j)] = 1;
  VarList p;
  for (const Var& v : step.inputs()) p.push_back(make_input(v->type(), v->name()));
  const VarList o = apply_inner_graph(step, p);
  auto pick = [](const VarList& from, int begin, int end) { return VarList(from.begin() + begin, from.begin() + end); };
  auto append = [](VarList& to, const VarList& more) { to.insert(to.end(), more.begin(), more.end()); };

  ScanInfo traced = in;
  VarList ins = pick(p, 0, in.inner_untraced_begin()), outs = pick(o, 0, in.nit_sot_outs_begin() - in.n_mit_mot() + in.n_mit_mot_outs());
  VarList kept_in, kept_out;
  for (int j = 0; j < in.n_untraced_sit_sot; ++j) {
    const Var& vi = p[static_cast<std::size_t>(in.inner_untraced_begin() + j)];
    const Var& vo = o[static_cast<std::size_t>(in.inner_untraced_outs_begin() + j)];
    if (moved[static_cast<std::size_t>(j)]) {
      ins.push_back(vi);
      outs.push_back(vo);
      traced.sit_sot_in_slices.push_back({-1});
    } else {
      kept_in.push_back(vi);
      kept_out.push_back(vo);
    }
  }
  traced.n_untraced_sit_sot -= static_cast<int>(states.size());
  append(ins, kept_in);
  append(ins, pick(p, in.inner_non_seqs_begin(), in.n_inner_inputs()));
  append(outs, pick(o, in.inner_output_of(in.nit_sot_outs_begin()), in.inner_untraced_outs_begin()));
  append(outs, kept_out);
  if (in.as_while) outs.push_back(o.back());
  auto traced_step = std::make_shared<FunctionGraph>(ins, outs, step.name());

  // Outer inputs: a buffer of n_steps + 1 rows per moved state, its initial value in row 0.
  const Var rows = cast(node.input(0), DType::Int64) + 1;
  VarList outer = pick(node.inputs(), 0, in.untraced_begin()), kept_outer;
  std::vector<Var> new_buffers;
  for (int j = 0; j < in.n_untraced_sit_sot; ++j) {
    const Var& init = node.input(in.untraced_begin() + j);
    if (!moved[static_cast<std::size_t>(j)]) {
      kept_outer.push_back(init);
      continue;
    }
    std::vector<IntArg> lengths{rows};
    for (int d = 0; d < init->ndim(); ++d) lengths.emplace_back(shape_i(init, d));
    new_buffers.push_back(inc_subtensor(alloc(cast(const_like(init, 0.0), init->dtype()), IntList(lengths)), {idx(0)}, init));
  }
  append(outer, new_buffers);
  append(outer, kept_outer);
  append(outer, pick(node.inputs(), in.nit_sot_lengths_begin(), in.n_outer_inputs()));
  ApplyPtr again = make_node(std::make_shared<Scan>(traced, traced_step, op.truncate_gradient(), op.label()), outer);

  // Cotangents: the node's, the moved states' on their buffers' last rows.
  VarList grads = pick(output_grads, 0, in.n_tap_outs()), kept_grads;
  for (int j = 0; j < in.n_untraced_sit_sot; ++j) {
    const Var& g = output_grads[static_cast<std::size_t>(in.untraced_outs_begin() + j)];
    if (!moved[static_cast<std::size_t>(j)]) {
      kept_grads.push_back(g);
      continue;
    }
    const Var& buffer = again->output(static_cast<int>(grads.size()));
    grads.push_back(g ? inc_subtensor(zeros_like(buffer, g->dtype()), {idx(-1)}, g) : Var());
  }
  append(grads, pick(output_grads, in.nit_sot_outs_begin(), in.untraced_outs_begin()));
  append(grads, kept_grads);
  const std::vector<GradTerm> t = again->op().pullback(*again, grads);

  // Back to the node's inputs.
  std::vector<GradTerm> result(t.begin(), t.begin() + in.untraced_begin());
  std::size_t moved_at = static_cast<std::size_t>(in.untraced_begin()), kept_at = moved_at + states.size();
  for (int j = 0; j < in.n_untraced_sit_sot; ++j) {
    if (!moved[static_cast<std::size_t>(j)]) {
      result.push_back(t[kept_at++]);
      continue;
    }
    GradTerm b = t[moved_at++];
    if (b.kind == GradTerm::Kind::Value) b.value = at(b.value, 0);
    result.push_back(b);
  }
  result.insert(result.end(), t.begin() + static_cast<std::ptrdiff_t>(kept_at), t.end());
  return result;
}

}  // namespace

std::vector<GradTerm> Scan::pullback(const Apply& node, const VarList& output_grads) const {
  const ScanInfo& in = info_;
  const FunctionGraph& fwd = *inner_;
  const std::string who = "Scan " + label_;
  const auto n_inputs = static_cast<std::size_t>(node.num_inputs());
  std::vector<GradTerm> result(n_inputs, GradTerm::disconnected());
  auto ins = [&](int i) { return node.input(i); };
  auto outs = [&](int k) { return node.output(k); };
  auto g_of = [&](int k) -> Var {
    const Var& g = output_grads[static_cast<std::size_t>(k)];
    return g && is_float(outs(k)->dtype()) ? g : Var();
  };
  // The outer inputs a gradient can flow to: float sequences, tap buffers, non-sequences.
  std::vector<int> candidates;
  for (int s = 0; s < in.n_seqs; ++s) candidates.push_back(in.seqs_begin() + s);
  for (int k = 0; k < in.n_tap_outs(); ++k) candidates.push_back(in.tap_buffers_begin() + k);
  for (int j = 0; j < in.n_non_seqs; ++j) candidates.push_back(in.non_seqs_begin() + j);
  auto refuse_all = [&](const GradTerm& why) {
    for (int i : candidates)
      if (ins(i)->type().is_tensor() && is_float(ins(i)->dtype())) result[static_cast<std::size_t>(i)] = why;
    return result;
  };
  if (in.n_mit_mot() > 0)
    return refuse_all(GradTerm::not_implemented(
        who + " has mit-mot outputs (it is itself a backward scan): second derivatives through Scan are not implemented"));
  const std::vector<int> untraced_floats = float_untraced(in, fwd);
  if (!untraced_floats.empty()) return pullback_traced(node, output_grads, untraced_floats);

  // The forward step applied to fresh inner inputs.
  VarList step_in;
  for (std::size_t i = 0; i < fwd.inputs().size(); ++i)
    step_in.push_back(placeholder(fwd.inputs()[i]->type(), fwd.inputs()[i]->name()));
  const VarList step_out = apply_inner_graph(fwd, step_in);
  auto step_input = [&](int i) { return step_in[static_cast<std::size_t>(i)]; };

  // Float tap outputs carry an adjoint window; float nit-sots take their cotangent per step.
  std::vector<int> carried;  // tap outputs k
  for (int k = 0; k < in.n_tap_outs(); ++k)
    if (is_float(outs(k)->dtype())) carried.push_back(k);
  std::vector<int> nit_with_g;  // nit-sots j with a cotangent
  for (int j = 0; j < in.n_nit_sot; ++j)
    if (g_of(in.nit_sot_outs_begin() + j)) nit_with_g.push_back(j);
  bool any_cotangent = !nit_with_g.empty();
  for (int k : carried) any_cotangent = any_cotangent || g_of(k);
  if (!any_cotangent) return result;

  VarList diff_outs;
  for (int k : carried) diff_outs.push_back(step_out[static_cast<std::size_t>(in.inner_output_of(k))]);
  for (int j : nit_with_g)
    diff_outs.push_back(step_out[static_cast<std::size_t>(in.inner_output_of(in.nit_sot_outs_begin() + j))]);
  const VarSet upstream = ancestors_of(diff_outs);

  // Untraced sit-sot (rng states): not differentiable (PyTensor: "Shared Variable with update").
  for (int j = 0; j < in.n_untraced_sit_sot; ++j) {
    const bool used = upstream.count(step_input(in.inner_untraced_begin() + j).get()) ||
                      output_grads[static_cast<std::size_t>(in.untraced_outs_begin() + j)];
    if (used)
      result[static_cast<std::size_t>(in.untraced_begin() + j)] =
          GradTerm::undefined(who + ": untraced sit-sot " + std::to_string(j) + " (a state updated in place, e.g. an rng) has no gradient");
  }

  // The inner variables gradients are taken with respect to, and the outer input each belongs to.
  VarList wrt;
  std::vector<int> wrt_outer;
  auto consider = [&](int inner, int outer) {
    const Var& v = step_input(inner);
    if (v->type().is_tensor() && is_float(v->dtype()) && upstream.count(v.get())) {
      wrt.push_back(v);
      wrt_outer.push_back(outer);
    }
  };
  for (int s = 0; s < in.n_seqs; ++s) consider(s, in.seqs_begin() + s);
  for (int k : carried)
    for (std::size_t j = 0; j < in.taps(k).size(); ++j) consider(in.inner_tap_input(k, static_cast<int>(j)), in.tap_buffers_begin() + k);
  for (int j = 0; j < in.n_non_seqs; ++j) consider(in.inner_non_seqs_begin() + j, in.non_seqs_begin() + j);
  std::vector<char> connected(n_inputs, 0);
  for (int o : wrt_outer) connected[static_cast<std::size_t>(o)] = 1;
  for (int k : carried)
    if (g_of(k)) connected[static_cast<std::size_t>(in.tap_buffers_begin() + k)] = 1;  // its initial rows are outputs too
  auto refuse_connected = [&](const GradTerm& why) {
    for (std::size_t i = 0; i < n_inputs; ++i)
      if (connected[i]) result[i] = why;
    return result;
  };

  // Backward inner inputs (other than the forward step's): the cotangent rows of the outputs
  // and the adjoint windows. The adjoint of the state written at step t is the window's last
  // entry plus the cotangent given for its row.
  std::vector<Var> cot_row(static_cast<std::size_t>(in.n_tap_outs() + in.n_nit_sot));
  for (int k : carried)
    if (g_of(k)) cot_row[static_cast<std::size_t>(k)] = placeholder(row_type(g_of(k)->type()), "g_row");
  for (int j : nit_with_g) {
    const int k = in.nit_sot_outs_begin() + j;
    cot_row[static_cast<std::size_t>(k)] = placeholder(row_type(g_of(k)->type()), "g_row");
  }
  std::vector<VarList> window(static_cast<std::size_t>(in.n_tap_outs()));
  VarList diff_cots;
  for (int k : carried) {
    const TensorType elem = step_input(in.inner_tap_input(k, 0))->type();
    VarList& w = window[static_cast<std::size_t>(k)];
    for (std::int64_t i = 0; i < -in.min_tap(k); ++i) w.push_back(placeholder(elem, "adjoint"));
    Var adj = w.back();
    if (const Var& c = cot_row[static_cast<std::size_t>(k)]) adj = cast(adj + c, elem.dtype);
    diff_cots.push_back(adj);
  }
  for (int j : nit_with_g) diff_cots.push_back(cot_row[static_cast<std::size_t>(in.nit_sot_outs_begin() + j)]);

  VarList step_grads;
  if (!wrt.empty()) {
    GradOptions opts;
    opts.disconnected = GradOptions::Disconnected::Zero;
    try {
      step_grads = Lop(diff_outs, wrt, diff_cots, opts);
    } catch (const NotImplementedError& e) {
      return refuse_connected(GradTerm::not_implemented(who + ": the step function's gradient: " + e.what()));
    } catch (const UserError& e) {
      return refuse_connected(GradTerm::undefined(who + ": the step function's gradient: " + e.what()));
    }
  }
  {
    VarSet untraced;
    for (int j = 0; j < in.n_untraced_sit_sot; ++j) untraced.insert(step_input(in.inner_untraced_begin() + j).get());
    for (const Variable* v : ancestors_of(step_grads))
      if (untraced.count(v))
        return refuse_connected(GradTerm::undefined(
            who + ": the step's gradient depends on an untraced sit-sot (e.g. an rng state), which the Scan does not keep per step"));
  }
  auto grad_of_inner = [&](int inner) -> Var {
    for (std::size_t w = 0; w < wrt.size(); ++w)
      if (wrt[w] == step_input(inner)) return step_grads[w];
    return Var();
  };

  // The backward step's outputs: the shifted windows, the accumulated non-sequence gradients,
  // the sequence gradients of this step.
  ScanInfo binfo;
  VarList b_seq_in, b_state_in, b_nonseq_in, b_state_out, b_nit_out;
  std::vector<Var> b_seq_outer, b_state_init;
  std::vector<std::pair<int, int>> window_state;  // (k, i) per window state, in order
  std::vector<int> acc_state, seq_nit;           // outer inputs per accumulator / seq gradient
  // Every state of each tap output, and the cotangents given for them, on the rows of a whole
  // buffer (m initial rows, then one per step).
  std::vector<Var> states(static_cast<std::size_t>(in.n_tap_outs()));
  std::vector<Var> cots(static_cast<std::size_t>(in.n_tap_outs() + in.n_nit_sot));
  for (int k = 0; k < in.n_tap_outs(); ++k) states[static_cast<std::size_t>(k)] = outs(k);
  for (std::size_t k = 0; k < cots.size(); ++k) cots[k] = g_of(static_cast<int>(k));
  whole_states(node, who, states, cots);
  // The number of steps to go back over: n_steps, or for a while-loop the steps it ran (from
  // the shortened outputs, as PyTensor's grad_steps).
  Var n_steps = cast(ins(0), DType::Int64);
  if (in.as_while) {
    if (in.n_nit_sot > 0)
      n_steps = shape_i(outs(in.nit_sot_outs_begin()), 0);
    else if (in.n_tap_outs() > 0)
      n_steps = shape_i(states[0], 0) + in.min_tap(0);
  }
  // truncate_gradient=k (PyTensor's grad_steps = minimum(grad_steps, k)): the backward scan
  // goes over only the last k steps, t0 .. n_steps-1. Sequence rows before t0 get no gradient,
  // and the windows end holding rows t0 .. t0+m-1, so an initial row gets an adjoint only when
  // it is one of those.
  Var n_back = n_steps, t0;
  if (truncate_gradient_ >= 0) {
    n_back = minimum(n_steps, int64_constant(truncate_gradient_));
    t0 = n_steps - n_back;
  }
  const IndexScalar first = t0 ? IndexScalar(t0) : IndexScalar(0);
  const Var n_plus_1 = n_back + 1;

  for (int s = 0; s < in.n_seqs; ++s) {
    b_seq_in.push_back(step_input(s));
    b_seq_outer.push_back(reversed_rows(ins(in.seqs_begin() + s), first, n_steps));
  }
  for (int k = 0; k < in.n_tap_outs(); ++k)
    for (std::size_t j = 0; j < in.taps(k).size(); ++j) {
      const std::int64_t from = in.taps(k)[j] - in.min_tap(k);  // row m + tap of step 0
      b_seq_in.push_back(step_input(in.inner_tap_input(k, static_cast<int>(j))));
      b_seq_outer.push_back(reversed_rows(states[static_cast<std::size_t>(k)], t0 ? IndexScalar(t0 + from) : from,
                                          n_steps + from));
    }
  for (int k = 0; k < in.n_tap_outs() + in.n_nit_sot; ++k)
    if (const Var& c = cot_row[static_cast<std::size_t>(k)]) {
      const std::int64_t from = -in.min_tap(k);
      b_seq_in.push_back(c);
      b_seq_outer.push_back(reversed_rows(cots[static_cast<std::size_t>(k)], t0 ? IndexScalar(t0 + from) : from,
                                          n_steps + from));
    }
  for (int k : carried) {
    const VarList& w = window[static_cast<std::size_t>(k)];
    const std::int64_t m = static_cast<std::int64_t>(w.size());
    for (std::int64_t i = 0; i < m; ++i) {
      // Row t + i gets the pending adjoint of the old window's entry i - 1 and the tap i - m.
      Var next;
      if (i >= 1) next = w[static_cast<std::size_t>(i - 1)];
      const auto& taps = in.taps(k);
      for (std::size_t j = 0; j < taps.size(); ++j)
        if (taps[j] == i - m)
          if (Var c = grad_of_inner(in.inner_tap_input(k, static_cast<int>(j)))) next = next ? next + c : c;
      if (!next) next = zeros_like(w[static_cast<std::size_t>(i)]);
      b_state_in.push_back(w[static_cast<std::size_t>(i)]);
      b_state_out.push_back(cast(next, w[static_cast<std::size_t>(i)]->dtype()));
      b_state_init.push_back(zero_rows(n_plus_1, outs(k), 1, w[static_cast<std::size_t>(i)]->dtype()));
      window_state.emplace_back(k, static_cast<int>(i));
    }
  }
  for (int j = 0; j < in.n_non_seqs; ++j) {
    const Var g = grad_of_inner(in.inner_non_seqs_begin() + j);
    if (!g) continue;
    const Var& x = step_input(in.inner_non_seqs_begin() + j);
    const Var acc = placeholder(x->type(), "grad_acc");
    b_state_in.push_back(acc);
    b_state_out.push_back(cast(acc + g, x->dtype()));
    b_state_init.push_back(zero_rows(n_plus_1, ins(in.non_seqs_begin() + j), 0, x->dtype()));
    acc_state.push_back(in.non_seqs_begin() + j);
  }
  for (int s = 0; s < in.n_seqs; ++s)
    if (Var g = grad_of_inner(s)) {
      b_nit_out.push_back(g);
      seq_nit.push_back(in.seqs_begin() + s);
    }
  for (int j = 0; j < in.n_non_seqs; ++j) b_nonseq_in.push_back(step_input(in.inner_non_seqs_begin() + j));

  binfo.n_seqs = static_cast<int>(b_seq_in.size());
  binfo.sit_sot_in_slices.assign(b_state_in.size(), ScanInfo::Taps{-1});
  binfo.n_nit_sot = static_cast<int>(b_nit_out.size());
  binfo.n_non_seqs = static_cast<int>(b_nonseq_in.size());
  VarList b_inputs = b_seq_in, b_outputs = b_state_out;
  b_inputs.insert(b_inputs.end(), b_state_in.begin(), b_state_in.end());
  b_inputs.insert(b_inputs.end(), b_nonseq_in.begin(), b_nonseq_in.end());
  b_outputs.insert(b_outputs.end(), b_nit_out.begin(), b_nit_out.end());
  auto bgraph = std::make_shared<FunctionGraph>(b_inputs, b_outputs, "grad_of_" + label_);

  VarList outer{n_back};
  outer.insert(outer.end(), b_seq_outer.begin(), b_seq_outer.end());
  outer.insert(outer.end(), b_state_init.begin(), b_state_init.end());
  for (std::size_t j = 0; j < b_nit_out.size(); ++j) outer.push_back(n_back);
  for (int j = 0; j < in.n_non_seqs; ++j) outer.push_back(ins(in.non_seqs_begin() + j));
  const VarList back =
      make_node(std::make_shared<Scan>(binfo, bgraph, -1, "grad_of_" + label_), outer)->outputs();

  // Initial rows of each tap buffer: the final window plus the cotangent given for them; the
  // rows the steps overwrite have no gradient.
  std::vector<Var> buffer_grad(n_inputs);
  for (std::size_t st = 0; st < window_state.size(); ++st) {
    const auto [k, i] = window_state[st];
    const int b = in.tap_buffers_begin() + k;
    Var& g = buffer_grad[static_cast<std::size_t>(b)];
    if (!g) g = zeros_like(ins(b));
    const Var entry = at(back[st], -1);
    if (!t0) {
      Var row = entry;
      if (const Var& gk = cots[static_cast<std::size_t>(k)]) row = row + at(gk, i);
      g = inc_subtensor(g, {idx(i)}, row);
      continue;
    }
    // Truncated: the window's entry i is row t0 + i, an initial row when t0 + i < m.
    const std::int64_t m = -in.min_tap(k);
    for (std::int64_t r = i; r < m; ++r)
      g = inc_subtensor(g, {idx(r)}, switch_(eq(t0, r - i), entry, zeros_like(entry)));
    if (i == 0)
      if (const Var& gk = cots[static_cast<std::size_t>(k)])
        for (std::int64_t r = 0; r < m; ++r) g = inc_subtensor(g, {idx(r)}, at(gk, r));
  }
  for (std::size_t i = 0; i < n_inputs; ++i)
    if (buffer_grad[i] && connected[i]) result[i] = GradTerm::of(buffer_grad[i]);
  for (std::size_t a = 0; a < acc_state.size(); ++a)
    result[static_cast<std::size_t>(acc_state[a])] = GradTerm::of(at(back[window_state.size() + a], -1));
  for (std::size_t s = 0; s < seq_nit.size(); ++s) {
    const Var& seq = ins(seq_nit[s]);
    const Var rows = subtensor(back[b_state_out.size() + s], {slice(none, none, -1)});
    result[static_cast<std::size_t>(seq_nit[s])] = GradTerm::of(inc_subtensor(zeros_like(seq), {slice(first, n_steps)}, rows));
  }
  return result;
}

}  // namespace kiln
