#include "rewrite/fusion.h"

#include <algorithm>
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "ir/branch_schedule.h"
#include "ir/error.h"
#include "ops/elemwise.h"
#include "ops/reduce.h"
#include "ops/scalar/composite.h"
#include "rewrite/rule_helpers.h"

namespace kiln {

namespace {

// Largest number of scalar nodes fused into one Composite (keeps generated loops readable and
// compile times short).
constexpr std::size_t kMaxGroupNodes = 128;

std::vector<bool> broadcast_pattern(const Variable& v) {
  std::vector<bool> p;
  for (int d = 0; d < v.ndim(); ++d) p.push_back(v.type().broadcastable(d));
  return p;
}

// Elemwise nodes that may join a group: one output (fused Composites with several outputs are
// final), and not an Elemwise with no inputs.
bool fusable(const Apply* n) {
  const Elemwise* e = elemwise_op(n);
  return e && n->num_outputs() == 1 && n->num_inputs() > 0;
}

class GroupBuilder {
 public:
  GroupBuilder(const FunctionGraph& fg, const std::vector<Apply*>& order) : fg_(fg) {
    for (std::size_t i = 0; i < order.size(); ++i) topo_[order[i]] = static_cast<int>(i);
    if (has_lazy_nodes(fg)) regions_ = region_paths(branch_schedule(fg));
  }

  // Grows a group from `seed` through its producers and consumers (a worklist, so each node's
  // neighbours are looked at once); returns its nodes in toposort order.
  std::vector<Apply*> grow(Apply* seed, const std::unordered_set<Apply*>& taken,
                           const std::unordered_set<Apply*>& created) {
    group_.clear();
    outside_users_.clear();
    hi_ = topo_[seed];
    pattern_ = broadcast_pattern(*seed->output_ptr(0));
    add(seed);
    std::vector<Apply*> frontier{seed};
    std::vector<Apply*> refused;  // refused for a cycle: may fit once the group has grown
    auto consider = [&](Apply* c) {
      if (group_.size() >= kMaxGroupNodes || group_.count(c) || taken.count(c) || created.count(c) || !fusable(c))
        return;
      if (broadcast_pattern(*c->output_ptr(0)) != pattern_) return;
      // A group spanning a lazy branch's boundary would run branch-only work unconditionally.
      if (!regions_.empty() && regions_.at(c) != regions_.at(seed)) return;
      if (!keeps_acyclic(c)) {
        refused.push_back(c);
        return;
      }
      add(c);
      frontier.push_back(c);
    };
    for (bool grew = true; grew;) {
      std::size_t before = group_.size();
      for (std::size_t i = 0; i < frontier.size(); ++i) {
        for (Apply* c : neighbours(frontier[i])) consider(c);
      }
      frontier.clear();
      std::vector<Apply*> retry;
      retry.swap(refused);
      for (Apply* c : retry) consider(c);
      grew = group_.size() > before && !frontier.empty();
    }
    std::vector<Apply*> nodes(group_.begin(), group_.end());
    std::sort(nodes.begin(), nodes.end(), [&](Apply* a, Apply* b) { return topo_[a] < topo_[b]; });
    return nodes;
  }

 private:
  // Producers and consumers of `n`, in toposort order (deterministic groups).
  std::vector<Apply*> neighbours(Apply* n) {
    std::vector<Apply*> out;
    for (const auto& in : n->inputs())
      if (in->owner()) out.push_back(in->owner());
    for (const Client& c : fg_.clients(n->output_ptr(0)))
      if (c.node) out.push_back(c.node);
    std::sort(out.begin(), out.end(), [&](Apply* a, Apply* b) { return topo_[a] < topo_[b]; });
    return out;
  }

  void add(Apply* n) {
    group_.insert(n);
    outside_users_.erase(n);
    hi_ = std::max(hi_, topo_[n]);
    for (const Client& c : fg_.clients(n->output_ptr(0)))
      if (c.node && !group_.count(c.node)) outside_users_.insert(c.node);
  }

  // Adding `x` must not create a path group -> outside -> group (the fused node would depend
  // on itself). Such a path starts at an outside user of the group or of x and stays below
  // the group's last node in toposort order, which bounds the search.
  bool keeps_acyclic(Apply* x) {
    int hi = std::max(hi_, topo_[x]);
    auto in_group = [&](Apply* n) { return n == x || group_.count(n); };
    std::vector<Apply*> stack;
    std::unordered_set<Apply*> seen;
    auto visit = [&](Apply* n) {
      if (n != x && topo_[n] <= hi && seen.insert(n).second) stack.push_back(n);
    };
    for (Apply* u : outside_users_) visit(u);
    for (const Client& c : fg_.clients(x->output_ptr(0)))
      if (c.node && !group_.count(c.node)) visit(c.node);
    while (!stack.empty()) {
      Apply* n = stack.back();
      stack.pop_back();
      for (int o = 0; o < n->num_outputs(); ++o) {
        for (const Client& c : fg_.clients(n->output_ptr(o))) {
          if (!c.node) continue;
          if (in_group(c.node)) return false;
          visit(c.node);
        }
      }
    }
    return true;
  }

  const FunctionGraph& fg_;
  std::unordered_map<const Apply*, int> topo_;
  std::unordered_set<Apply*> group_;
  std::unordered_set<Apply*> outside_users_;  ///< consumers of group values outside the group
  int hi_ = 0;
  std::vector<bool> pattern_;
  std::unordered_map<const Apply*, RegionPath> regions_;  ///< empty when the graph has no lazy node
};

// A size-1 constant (any rank) can live inside the Composite as a scalar constant.
bool scalar_like_constant(const Var& v) { return v->is_constant() && v->value().size() == 1; }

// Builds the Composite of a group and replaces the group's externally used values by the
// outputs of one Elemwise over it; returns that node.
Apply* replace_group(FunctionGraph& fg, const std::vector<Apply*>& nodes) {
  std::unordered_set<const Apply*> in_group(nodes.begin(), nodes.end());
  auto g = std::make_shared<CompositeGraph>();
  std::unordered_map<const Variable*, int> value_of;
  VarList outer_inputs;
  // Outer inputs first (a Composite's inputs precede its constants and nodes).
  for (Apply* n : nodes)
    for (const auto& in : n->inputs()) {
      if ((in->owner() && in_group.count(in->owner())) || value_of.count(in.get()) || scalar_like_constant(in)) continue;
      value_of[in.get()] = g->add_input(in->dtype());
      outer_inputs.push_back(in);
    }
  for (Apply* n : nodes)
    for (const auto& in : n->inputs())
      if (scalar_like_constant(in) && !value_of.count(in.get()))
        value_of[in.get()] = g->add_constant(in->value().view({}, {}).copy());
  VarList replaced;
  for (Apply* n : nodes) {
    std::vector<int> args;
    for (const auto& in : n->inputs()) args.push_back(value_of.at(in.get()));
    int out = g->add_node(elemwise_op(n)->scalar_op(), args)[0];
    value_of[n->output_ptr(0)] = out;
    bool used_outside = false;
    for (const Client& c : fg.clients(n->output_ptr(0))) used_outside = used_outside || !c.node || !in_group.count(c.node);
    if (used_outside) {
      g->add_output(out);
      replaced.push_back(n->output(0));
    }
  }
  VarList fused = elemwise(ScalarOp::composite(g), outer_inputs);
  std::vector<std::pair<Var, Var>> pairs;
  for (std::size_t k = 0; k < replaced.size(); ++k) {
    fused[k]->refine_type(replaced[k]->type());
    pairs.emplace_back(replaced[k], fused[k]);
  }
  fg.replace_all(pairs, "fusion");
  return fused[0]->owner();
}

}  // namespace

RewriteStats fuse_elemwise(FunctionGraph& fg) {
  RewriteStats stats;
  std::vector<Apply*> order = fg.toposort();
  auto builder = std::make_unique<GroupBuilder>(fg, order);
  std::unordered_set<Apply*> taken;    // seeded or grouped already
  std::unordered_set<Apply*> created;  // the fused nodes of this pass
  // Seeds from the outputs backwards, so groups grow from consumers toward producers. Each
  // group is replaced at once and the builder sees the graph with it as one node: two groups
  // that are each fine alone can depend on each other (A -> B -> A through their members).
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Apply* n = *it;
    if (!fg.contains(n) || created.count(n) || taken.count(n) || !fusable(n)) continue;
    std::vector<Apply*> group = builder->grow(n, taken, created);
    for (Apply* m : group) taken.insert(m);
    if (group.size() < 2) continue;
    created.insert(replace_group(fg, group));
    stats.applied["elemwise_fusion"] += 1;
    stats.applied["fused_nodes"] += static_cast<int>(group.size());
    builder = std::make_unique<GroupBuilder>(fg, fg.toposort());
  }
  return stats;
}

RewriteStats fuse_reductions(FunctionGraph& fg) {
  RewriteStats stats;
  for (Apply* node : fg.toposort()) {
    if (!fg.contains(node)) continue;
    const std::string name(node->op().name());
    if (name != "Sum" && name != "Prod" && name != "Max" && name != "Min" && name != "All" && name != "Any" &&
        name != "CAReduce")
      continue;
    const auto& red = static_cast<const CAReduce&>(node->op());
    if (red.scalar_op().id() == ScalarOpId::Composite) continue;
    const Var& x = node->input(0);
    Apply* producer = x->owner();
    const Elemwise* ew = elemwise_op(producer);
    if (!ew || producer->num_outputs() != 1 || client_count(fg, x) != 1) continue;
    // The reduction's scalar op takes one element: the producer must have one tensor input
    // (size-1 constants go inside the Composite).
    VarList tensor_inputs;
    for (const auto& in : producer->inputs())
      if (!scalar_like_constant(in)) tensor_inputs.push_back(in);
    if (tensor_inputs.size() != 1) continue;
    // Broadcasting inside the producer (a tensor input smaller than x) would change what is
    // reduced: require the same shape.
    if (tensor_inputs[0]->type().shape != x->type().shape && !(broadcast_pattern(*tensor_inputs[0]) == broadcast_pattern(*x)))
      continue;
    const Var& source = tensor_inputs[0];
    ReduceDTypes dt = red.dtypes_for(x->dtype());
    auto g = std::make_shared<CompositeGraph>();
    int acc = g->add_input(dt.acc);
    int elem = g->add_input(source->dtype());
    std::vector<int> args;
    for (const auto& in : producer->inputs())
      args.push_back(in == source ? elem : g->add_constant(in->value().view({}, {}).copy()));
    int value = g->add_node(ew->scalar_op(), args)[0];
    if (g->values()[static_cast<std::size_t>(value)].dtype != dt.acc) value = g->add_node(ScalarOp::cast(dt.acc), {value})[0];
    ScalarOpId fold = red.scalar_op().id();
    if (red.kind() == ReduceKind::ProdWithoutZeros) continue;
    // Max/Min of an empty axis fail, a generic CAReduce would return its start value: fold
    // them only when every reduced length is statically non-zero.
    if (red.kind() == ReduceKind::Max || red.kind() == ReduceKind::Min) {
      bool non_empty = true;
      for (int a : reduced_axes_list(red.axis(), x->ndim()))
        non_empty = non_empty && x->shape()[static_cast<std::size_t>(a)] > 0;
      if (!non_empty) continue;
    }
    int folded = g->add_node(ScalarOp(fold), {acc, value})[0];
    g->add_output(folded);
    Var fused;
    try {
      fused = careduce(ScalarOp::composite(g), source, reduced_axes_list(red.axis(), x->ndim()), dt.out, dt.acc);
    } catch (const UserError&) {
      continue;  // a combination the reduction refuses (e.g. and/or over non-bool values)
    }
    if (!replacement_problem(*node->output_ptr(0), *fused).empty()) continue;
    fg.replace(node->output(0), fused, "reduction fusion");
    stats.applied["reduction_fusion"] += 1;
  }
  return stats;
}

}  // namespace kiln
