#include "ir/branch_schedule.h"

#include <map>
#include <unordered_set>


namespace kiln {

namespace {

// A region key: (lazy node, branch), or {nullptr, -1} for the region being built.
using RegionKey = std::pair<const Apply*, int>;
constexpr RegionKey kHere{nullptr, -1};

// The branch of `node` whose inputs include input `index`, or -1.
int branch_of_input(const Apply& node, int index) {
  const auto branches = node.op().lazy_branches();
  for (std::size_t b = 0; b < branches.size(); ++b)
    for (int i : branches[b])
      if (i == index) return static_cast<int>(b);
  return -1;
}

// The schedule of a region given its nodes in toposort order. A node belongs to a branch of a
// lazy node of this region when every use of its outputs lies in that branch (directly, as a
// branch input, or through nodes already placed in it); graph outputs and uses outside the
// region keep a node here. Visiting consumers before producers decides each node once.
BranchSchedule build_region(const FunctionGraph& fg, const std::vector<Apply*>& nodes) {
  std::unordered_set<const Apply*> here(nodes.begin(), nodes.end());
  std::unordered_map<const Apply*, RegionKey> owner;
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    Apply* node = *it;
    RegionKey key = kHere;
    bool first = true, stays = false;
    for (int o = 0; o < node->num_outputs() && !stays; ++o) {
      for (const Client& c : fg.clients(node->output_ptr(o))) {
        if (!c.node || !here.count(c.node)) {
          stays = true;
          break;
        }
        RegionKey use = owner.at(c.node);
        if (use == kHere) {
          const int b = branch_of_input(*c.node, c.index);
          if (b >= 0) use = RegionKey{c.node, b};
        }
        if (first) key = use;
        else if (use != key) stays = true;
        first = false;
        if (stays) break;
      }
    }
    owner[node] = stays || first ? kHere : key;
  }
  BranchSchedule s;
  std::map<RegionKey, std::vector<Apply*>> members;
  for (Apply* node : nodes) {
    const RegionKey key = owner.at(node);
    if (key != kHere) members[key].push_back(node);
  }
  for (Apply* node : nodes) {
    if (owner.at(node) != kHere) continue;
    BranchSchedule::Step step;
    step.node = node;
    const std::size_t n_branches = node->op().lazy_branches().size();
    for (std::size_t b = 0; b < n_branches; ++b) {
      auto m = members.find(RegionKey{node, static_cast<int>(b)});
      step.branches.push_back(m == members.end() ? BranchSchedule{} : build_region(fg, m->second));
    }
    s.steps.push_back(std::move(step));
  }
  return s;
}

void collect_paths(const BranchSchedule& s, RegionPath& path, std::unordered_map<const Apply*, RegionPath>& out) {
  for (const auto& step : s.steps) {
    for (std::size_t b = 0; b < step.branches.size(); ++b) {
      path.emplace_back(step.node, static_cast<int>(b));
      collect_paths(step.branches[b], path, out);
      path.pop_back();
    }
    out[step.node] = path;
  }
}

}  // namespace

void BranchSchedule::flatten_into(std::vector<Apply*>& out) const {
  for (const auto& step : steps) {
    for (const auto& b : step.branches) b.flatten_into(out);
    out.push_back(step.node);
  }
}

std::vector<Apply*> BranchSchedule::flatten() const {
  std::vector<Apply*> out;
  flatten_into(out);
  return out;
}

bool has_lazy_nodes(const FunctionGraph& fg) {
  for (Apply* node : fg.toposort())
    if (!node->op().lazy_branches().empty()) return true;
  return false;
}

BranchSchedule branch_schedule(const FunctionGraph& fg) {
  const std::vector<Apply*> order = fg.toposort();
  bool lazy = false;
  for (Apply* node : order) lazy = lazy || !node->op().lazy_branches().empty();
  if (!lazy) {
    BranchSchedule s;
    for (Apply* node : order) s.steps.push_back({node, {}});
    return s;
  }
  return build_region(fg, order);
}

std::unordered_map<const Apply*, RegionPath> region_paths(const BranchSchedule& schedule) {
  std::unordered_map<const Apply*, RegionPath> out;
  RegionPath path;
  collect_paths(schedule, path, out);
  return out;
}

}  // namespace kiln
