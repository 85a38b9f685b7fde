// PyTensor's scan_push_out_seq (pytensor/scan/rewriting.py): elementwise work of the step
// function that depends only on sequences, non-sequences and constants is done once over whole
// sequences before the loop, and enters the step as a new sequence. An AR(1) likelihood's
// residual (y[t] - phi * y[t-1]) / sigma is then one vectorised loop, and the recurrence is left
// with the running sum alone (bench W11, issue 18).
//
// Pushed out: Elemwise nodes without in-place outputs whose inputs are sequences, tensor
// non-sequences, constants, or other such nodes, and that read at least one sequence. Outside,
// a sequence is x[:rows], rows = max(0, min(n_steps, every sequence's length)): the rows the
// loop reads, and never a shape error of its own when a sequence is too short (the loop still
// has the original sequences, and reports the short one by its number). A non-sequence or a
// constant gains a broadcastable leading dimension. Values read by nodes that stay in the step,
// or returned by it, become new sequences after the old ones (PyTensor puts them first; after
// keeps the old sequences' numbers in messages). While loops are left alone (PyTensor pushes
// out of them too): one may stop early, and rows computed ahead could fail or cost more than
// the loop it ends.
#include <unordered_map>
#include <unordered_set>

#include "ops/constant.h"
#include "ops/dimshuffle.h"
#include "ops/elemwise.h"
#include "ops/scan.h"
#include "ops/shape.h"
#include "ops/subtensor.h"
#include "rewrite/database.h"
#include "rewrite/rule_helpers.h"

namespace kiln {

namespace {

std::optional<VarList> push_out_seq(const FunctionGraph&, const Apply& node) {
  const auto& scan = static_cast<const Scan&>(node.op());
  const ScanInfo& info = scan.info();
  if (info.as_while || info.n_seqs == 0) return std::nullopt;
  const FunctionGraph& inner = scan.inner_graph();
  const VarList& step_inputs = inner.inputs();

  // Each inner value computable outside, and its outer value (one leading dimension more);
  // `per_step` holds those that differ from step to step (they read a sequence).
  std::unordered_map<const Variable*, Var> outer;
  std::unordered_set<const Variable*> per_step;
  Var rows = node.input(0);
  for (int s = 0; s < info.n_seqs; ++s)
    rows = elemwise1(ScalarOp(ScalarOpId::Minimum), {rows, shape_i(node.input(info.seqs_begin() + s), 0)});
  rows = elemwise1(ScalarOp(ScalarOpId::Maximum), {rows, int64_constant(0)});
  for (int s = 0; s < info.n_seqs; ++s) {
    const Variable* v = step_inputs[static_cast<std::size_t>(s)].get();
    outer[v] = subtensor(node.input(info.seqs_begin() + s), {slice(none, rows)});
    per_step.insert(v);
  }
  for (int j = 0; j < info.n_non_seqs; ++j) {
    const Var& v = step_inputs[static_cast<std::size_t>(info.inner_non_seqs_begin() + j)];
    if (v->type().kind != TypeKind::Tensor) continue;
    outer[v.get()] = expand_dims_left(node.input(info.non_seqs_begin() + j), 1);
  }
  std::unordered_set<const Apply*> pushed;
  for (Apply* n : inner.toposort()) {
    if (!elemwise_op(n) || !n->op().destroy_map().empty()) continue;
    VarList outer_inputs;
    bool computable = true, reads_sequence = false;
    for (const Var& in : n->inputs()) {
      if (in->is_constant()) {
        outer_inputs.push_back(expand_dims_left(in, 1));
        continue;
      }
      auto it = outer.find(in.get());
      if (it == outer.end()) {
        computable = false;
        break;
      }
      outer_inputs.push_back(it->second);
      reads_sequence = reads_sequence || per_step.count(in.get()) > 0;
    }
    if (!computable) continue;
    const VarList outs = make_node(n->op_ptr(), outer_inputs)->outputs();
    for (int o = 0; o < n->num_outputs(); ++o) {
      outer[n->output_ptr(o)] = outs[static_cast<std::size_t>(o)];
      if (reads_sequence) per_step.insert(n->output_ptr(o));
    }
    if (reads_sequence) pushed.insert(n);
  }

  // The new sequences: pushed values that a node left in the step reads, or that the step returns.
  VarList frontier;
  std::unordered_set<const Variable*> seen;
  auto add_frontier = [&](const Var& v) {
    if (v->owner() && pushed.count(v->owner()) && seen.insert(v.get()).second) frontier.push_back(v);
  };
  for (Apply* n : inner.toposort())
    if (!pushed.count(n))
      for (const Var& in : n->inputs()) add_frontier(in);
  for (const Var& out : inner.outputs()) add_frontier(out);
  if (frontier.empty()) return std::nullopt;

  // The step function with the new sequence inputs after the old ones.
  std::unordered_map<const Variable*, Var> copy;
  FunctionGraph cloned = inner.clone(&copy);
  VarList new_step_inputs(cloned.inputs().begin(), cloned.inputs().begin() + info.n_seqs);
  std::vector<std::pair<Var, Var>> replaced;
  for (const Var& v : frontier) {
    Var row = make_input(v->type(), v->name());
    new_step_inputs.push_back(row);
    replaced.emplace_back(copy.at(v.get()), row);
  }
  new_step_inputs.insert(new_step_inputs.end(), cloned.inputs().begin() + info.n_seqs, cloned.inputs().end());
  auto step = std::make_shared<FunctionGraph>(new_step_inputs, cloned.outputs(), inner.name());
  step->set_output_names(inner.output_names());
  step->replace_all(replaced, "scan_push_out_seq");

  ScanInfo new_info = info;
  new_info.n_seqs += static_cast<int>(frontier.size());
  VarList outer_inputs = node.inputs();
  VarList new_seqs;
  for (const Var& v : frontier) new_seqs.push_back(outer.at(v.get()));
  outer_inputs.insert(outer_inputs.begin() + info.tap_buffers_begin(), new_seqs.begin(), new_seqs.end());
  auto op = std::make_shared<Scan>(new_info, step, scan.truncate_gradient(), scan.label());
  return make_node(op, outer_inputs)->outputs();
}

}  // namespace

std::vector<NodeRewrite> scan_push_out_rules() {
  NodeRewrite rule;
  rule.name = "scan_push_out_seq";
  rule.tags = {"specialize", "scan_push_out_seq"};
  rule.op_name = "Scan";
  rule.apply = push_out_seq;
  return {rule};
}

}  // namespace kiln
