// PyTensor's scan_save_mem (pytensor/scan/rewriting.py) for the case a likelihood written with
// scan() makes: a mit-sot or sit-sot output read only as out[-1] (a running sum, the last state
// of a filter). scan() gives such an output a buffer of taps + n_steps rows,
// SetSubtensor{:taps}(AllocEmpty(taps + n_steps, ...), init); the loop needs only the taps rows,
// the buffer then being circular (Scan.perform's wrap-around, ops/scan.h), and out[-1] is the
// same value. The rule fires only on that exact shape of buffer, whose length is provably
// taps + n_steps: with a longer buffer, out[-1] would be a zeroed row past the ones written.
#include "ir/error.h"
#include "ops/alloc.h"
#include "ops/constant.h"
#include "ops/elemwise.h"
#include "ops/scan.h"
#include "ops/subtensor.h"
#include "rewrite/database.h"

namespace kiln {

namespace {

// Every use of `out` is x[-1] (a Subtensor with one integer index, constant -1).
bool only_last_row_read(const FunctionGraph& fg, const Variable* out) {
  const auto& clients = fg.clients(out);
  if (clients.empty()) return false;
  for (const Client& c : clients) {
    if (!c.node || c.index != 0) return false;
    const auto* sub = dynamic_cast<const Subtensor*>(&c.node->op());
    if (!sub || sub->index().entries() != std::vector<IndexEntry>{IndexEntry::integer()}) return false;
    if (constant_int(c.node->input(1)) != std::optional<std::int64_t>(-1)) return false;
  }
  return true;
}

// `v` is need + n_steps (an Add of the two, either order, or their sum folded to a constant).
bool is_taps_plus_steps(const Var& v, std::int64_t need, const Var& n_steps) {
  const std::optional<std::int64_t> steps = constant_int(n_steps);
  if (steps && constant_int(v) == std::optional<std::int64_t>(need + *steps)) return true;
  const Apply* add = v->owner();
  const auto* e = add ? dynamic_cast<const Elemwise*>(&add->op()) : nullptr;
  if (!e || e->scalar_op().id() != ScalarOpId::Add || add->num_inputs() != 2) return false;
  for (int i = 0; i < 2; ++i)
    if (constant_int(add->input(i)) == std::optional<std::int64_t>(need) && add->input(1 - i) == n_steps) return true;
  return false;
}

// The buffer of `need` rows that replaces scan()'s buffer `buffer`, or null when `buffer` is not
// SetSubtensor{:need}(AllocEmpty(need + n_steps, ...), init).
Var short_buffer(const Var& buffer, std::int64_t need, const Var& n_steps) {
  const Apply* set = buffer->owner();
  const auto* inc = set ? dynamic_cast<const IncSubtensor*>(&set->op()) : nullptr;
  if (!inc || !inc->set_instead_of_inc() ||
      inc->index().entries() != std::vector<IndexEntry>{IndexEntry::slice(false, true, false)} ||
      constant_int(set->input(2)) != std::optional<std::int64_t>(need))
    return nullptr;
  const Apply* alloc = set->input(0)->owner();
  if (!alloc || !dynamic_cast<const AllocEmpty*>(&alloc->op()) || alloc->num_inputs() < 1 ||
      !is_taps_plus_steps(alloc->input(0), need, n_steps))
    return nullptr;
  VarList lengths = alloc->inputs();
  lengths[0] = int64_constant(need);
  Var empty = make_node(alloc->op_ptr(), lengths)->output(0);
  VarList set_inputs = set->inputs();
  set_inputs[0] = empty;
  return make_node(set->op_ptr(), set_inputs)->output(0);
}

std::optional<VarList> save_mem(const FunctionGraph& fg, const Apply& node) {
  const auto& scan = static_cast<const Scan&>(node.op());
  const ScanInfo& info = scan.info();
  VarList inputs = node.inputs();
  bool changed = false;
  for (int k = info.n_mit_mot(); k < info.n_tap_outs(); ++k) {
    if (!only_last_row_read(fg, node.output_ptr(k))) continue;
    const int at = info.tap_buffers_begin() + k;
    if (Var shorter = short_buffer(inputs[static_cast<std::size_t>(at)], -info.min_tap(k), node.input(0))) {
      inputs[static_cast<std::size_t>(at)] = shorter;
      changed = true;
    }
  }
  if (!changed) return std::nullopt;
  return make_node(node.op_ptr(), inputs)->outputs();
}

}  // namespace

std::vector<NodeRewrite> scan_rules() {
  NodeRewrite rule;
  rule.name = "scan_save_mem";
  rule.tags = {"specialize", "scan_save_mem"};
  rule.op_name = "Scan";
  rule.apply = save_mem;
  // The shortened outputs really have `need` rows (a static 1 for a sit-sot), and are read
  // only through out[-1], which broadcasts nothing.
  rule.exact_shapes = true;
  return {rule};
}

}  // namespace kiln
