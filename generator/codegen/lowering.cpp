#include "codegen/lowering.h"

#include <algorithm>
#include <set>

#include "ir/branch_schedule.h"
#include "ir/error.h"

namespace kiln {

const LoweredVar& LoweredGraph::var(const Variable* v) const {
  auto it = vars.find(v);
  KILN_INTERNAL_ASSERT(it != vars.end(), "variable not lowered");
  return it->second;
}

namespace {

// The row-block groups that may run as one step in a graph with lazy nodes: those whose span
// in `order` holds only top-level, non-lazy nodes (moving members together must not move a
// branch's nodes out of their run before the lazy node).
std::vector<RowBlockGroup> groups_outside_branches(const std::vector<Apply*>& order, std::vector<RowBlockGroup> groups,
                                                   const std::unordered_map<const Apply*, RegionPath>& regions) {
  std::unordered_map<const Apply*, std::size_t> pos;
  for (std::size_t i = 0; i < order.size(); ++i) pos[order[i]] = i;
  std::vector<RowBlockGroup> kept;
  for (RowBlockGroup& g : groups) {
    std::size_t first = order.size(), last = 0;
    for (const Apply* node : g.nodes) {
      first = std::min(first, pos.at(node));
      last = std::max(last, pos.at(node));
    }
    bool ok = true;
    for (std::size_t i = first; i <= last && ok; ++i)
      ok = regions.at(order[i]).empty() && order[i]->op().lazy_branches().empty();
    if (ok) kept.push_back(std::move(g));
  }
  return kept;
}

}  // namespace

LoweredGraph lower(const FunctionGraph& fg, const std::function<bool(const Apply&)>& is_view,
                   int first_slot, std::vector<RowBlockGroup> groups,
                   const std::function<bool(const Apply&)>& needs_scratch,
                   std::unordered_set<const Apply*> fused_gathers) {
  LoweredGraph lg;
  lg.fused_gathers = std::move(fused_gathers);
  lg.graph = &fg;
  const BranchSchedule schedule = branch_schedule(fg);
  std::vector<Apply*> flat = schedule.flatten();
  if (has_lazy_nodes(fg)) {
    groups = groups_outside_branches(flat, std::move(groups), region_paths(schedule));
  }
  lg.order = order_with_groups(flat, groups);
  lg.first_slot = first_slot;
  lg.groups = std::move(groups);
  for (std::size_t g = 0; g < lg.groups.size(); ++g)
    for (const Apply* node : lg.groups[g].nodes) lg.group_of[node] = static_cast<int>(g);
  // A group runs as one step: its inputs are read, and its outputs written, anywhere in
  // [first member, last member]; liveness treats the whole range as that step.
  const int end = static_cast<int>(lg.order.size());
  std::vector<int> use_at(static_cast<std::size_t>(end)), alloc_at(static_cast<std::size_t>(end));
  for (int i = 0; i < end; ++i) use_at[static_cast<std::size_t>(i)] = alloc_at[static_cast<std::size_t>(i)] = i;
  for (int i = 0; i < end;) {
    auto g = lg.group_of.find(lg.order[static_cast<std::size_t>(i)]);
    if (g == lg.group_of.end()) {
      ++i;
      continue;
    }
    const int first = i, last = first + static_cast<int>(lg.groups[static_cast<std::size_t>(g->second)].nodes.size()) - 1;
    for (int j = first; j <= last; ++j) {
      use_at[static_cast<std::size_t>(j)] = last;
      alloc_at[static_cast<std::size_t>(j)] = first;
    }
    i = last + 1;
  }
  int counter = 0;
  auto declare = [&](const Variable* v) -> LoweredVar& {
    auto [it, fresh] = lg.vars.try_emplace(v);
    if (fresh) {
      it->second.var = v;
      it->second.cname = "v" + std::to_string(counter++);
      lg.declared.push_back(v);
    }
    return it->second;
  };

  for (std::size_t i = 0; i < fg.inputs().size(); ++i) {
    LoweredVar& lv = declare(fg.inputs()[i].get());
    lv.kind = StorageKind::Input;
    lv.input_index = static_cast<int>(i);
  }
  auto note_constant = [&](const Variable* v) {
    if (!v->is_constant() || lg.vars.count(v)) return;
    LoweredVar& lv = declare(v);
    lv.kind = StorageKind::Constant;
    lv.constant_index = static_cast<int>(lg.constants.size());
    lg.constants.push_back(v);
  };

  // Which graph output (first position) each variable is.
  std::unordered_map<const Variable*, int> first_output;
  for (std::size_t k = 0; k < fg.outputs().size(); ++k)
    first_output.emplace(fg.outputs()[k].get(), static_cast<int>(k));

  // Storage roots: a view shares its source's root.
  std::unordered_map<const Variable*, const Variable*> root;
  for (Apply* node : lg.order) {
    for (const auto& in : node->inputs()) note_constant(in.get());
    // Group members never work in place: their outputs are written row by row while other
    // members still read their inputs.
    const bool grouped = lg.group_of.count(node) > 0;
    const IndexMap destroys = grouped ? IndexMap{} : node->op().destroy_map();
    for (int o = 0; o < node->num_outputs(); ++o) {
      const Variable* v = node->output_ptr(o);
      LoweredVar& lv = declare(v);
      if ((grouped && lg.groups[static_cast<std::size_t>(lg.group_of[node])].internal.count(v)) ||
          lg.fused_gathers.count(node)) {
        lv.kind = StorageKind::Fused;
        root[v] = v;
        continue;
      }
      auto d = destroys.find(o);
      const Variable* overwritten = d == destroys.end() ? nullptr : node->input(d->second.at(0)).get();
      if (overwritten && lg.vars.count(overwritten) && lg.vars[overwritten].kind == StorageKind::Workspace &&
          !first_output.count(v)) {
        // In place: the output takes over its input's buffer (same root, same slot).
        lv.kind = StorageKind::Workspace;
        lv.inplace_of = overwritten;
        root[v] = root.count(overwritten) ? root[overwritten] : overwritten;
      } else if (o == 0 && is_view(*node)) {
        lv.kind = StorageKind::View;
        const Variable* src = node->input(0).get();
        root[v] = root.count(src) ? root[src] : src;
      } else if (first_output.count(v)) {
        lv.kind = StorageKind::Output;
        lv.output_index = first_output[v];
        root[v] = v;
      } else {
        lv.kind = StorageKind::Workspace;
        root[v] = v;
      }
    }
  }
  for (const auto& out : fg.outputs()) note_constant(out.get());

  // Last step at which each storage root is used (graph outputs live to the end).
  std::unordered_map<const Variable*, int> last_use;
  auto root_of = [&](const Variable* v) { return root.count(v) ? root[v] : v; };
  for (int i = 0; i < end; ++i) {
    Apply* node = lg.order[static_cast<std::size_t>(i)];
    const int at = use_at[static_cast<std::size_t>(i)];
    for (const auto& in : node->inputs()) {
      last_use[root_of(in.get())] = std::max(last_use[root_of(in.get())], at);
      // A fused gather's inputs are read where its reader runs.
      if (in->owner() && lg.fused_gathers.count(in->owner()))
        for (const auto& g : in->owner()->inputs()) last_use[root_of(g.get())] = std::max(last_use[root_of(g.get())], at);
    }
    for (int o = 0; o < node->num_outputs(); ++o) {
      const Variable* r = root_of(node->output_ptr(o));
      last_use[r] = std::max(last_use[r], at);
    }
  }
  for (const auto& out : fg.outputs()) last_use[root_of(out.get())] = end;

  // Greedy slot assignment in execution order; a slot frees after its root's last use.
  std::vector<std::pair<int, int>> busy;  // (last use, slot)
  std::set<int> free_slots;
  int next_slot = 0;
  for (int i = 0; i < end; ++i) {
    for (auto it = busy.begin(); it != busy.end();) {
      if (it->first < alloc_at[static_cast<std::size_t>(i)]) {
        free_slots.insert(it->second);
        it = busy.erase(it);
      } else {
        ++it;
      }
    }
    Apply* node = lg.order[static_cast<std::size_t>(i)];
    for (int o = 0; o < node->num_outputs(); ++o) {
      LoweredVar& lv = lg.vars[node->output_ptr(o)];
      if (lv.kind != StorageKind::Workspace) continue;
      if (lv.inplace_of) {
        lv.slot = lg.vars[lv.inplace_of].slot;
        continue;
      }
      int slot;
      if (!free_slots.empty()) {
        slot = *free_slots.begin();
        free_slots.erase(free_slots.begin());
      } else {
        slot = next_slot++;
      }
      lv.slot = first_slot + slot;
      busy.emplace_back(last_use[lv.var], slot);
    }
  }
  // One slot per group for its per-chunk partial results (never shared: it is scratch).
  for (std::size_t g = 0; g < lg.groups.size(); ++g) lg.group_slots.push_back(first_slot + next_slot++);
  if (needs_scratch)
    for (const Apply* node : lg.order)
      if (needs_scratch(*node)) lg.scratch_slots[node] = first_slot + next_slot++;
  lg.num_slots = next_slot;

  for (std::size_t k = 0; k < fg.outputs().size(); ++k) {
    const LoweredVar& lv = lg.vars[fg.outputs()[k].get()];
    if (lv.kind == StorageKind::Output && lv.output_index == static_cast<int>(k)) continue;
    lg.copies.push_back(OutputCopy{static_cast<int>(k), lv.var});
  }
  return lg;
}

}  // namespace kiln
