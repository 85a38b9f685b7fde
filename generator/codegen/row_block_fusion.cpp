#include "codegen/row_block_fusion.h"

#include <algorithm>
#include <unordered_map>

#include "ops/dimshuffle.h"
#include "ops/elemwise.h"
#include "ops/reduce.h"

namespace kiln {

namespace {

bool is_gemv(const Apply& node) { return node.op().name() == "Gemv" || node.op().name() == "CGemv"; }

bool is_float_dtype(DType dt) { return dt == DType::Float32 || dt == DType::Float64; }

// Whether `a` is Transpose(x) of matrix x.
bool is_transpose_of(const Variable& a, const Variable* x) {
  const Apply* owner = a.owner();
  if (!owner || owner->op().name() != "DimShuffle" || owner->input(0).get() != x) return false;
  const auto& ds = static_cast<const DimShuffle&>(owner->op());
  return ds.new_order() == std::vector<int>{1, 0};
}

// A reduction the fused pass can fold per chunk and join in order: a full reduction of a
// vector with a plain foldable scalar op (no Composite step, not ProdWithoutZeros, whose
// zero-skipping fold cannot be split).
bool is_splittable_full_reduction(const Apply& node) {
  const std::string_view name = node.op().name();
  if (name != "Sum" && name != "Prod" && name != "Max" && name != "Min" && name != "All" && name != "Any" &&
      name != "CAReduce")
    return false;
  const auto& op = static_cast<const CAReduce&>(node.op());
  return node.input(0)->ndim() == 1 && node.output_ptr(0)->ndim() == 0 &&
         op.scalar_op().id() != ScalarOpId::Composite && is_foldable_scalar_op(op.scalar_op().id());
}

// Grows a group from the product `root` (a Gemv of matrix X) through the nodes after it in
// `order`. `depends` tracks every variable downstream of the group, so that a node reading a
// group value both directly and through an outside node is left out (contracting the group to
// one step must not create a cycle).
RowBlockGroup grow_group(Apply* root, const std::vector<Apply*>& order, std::size_t root_pos,
                         const std::unordered_set<const Apply*>& taken, const FunctionGraph& fg) {
  RowBlockGroup g;
  g.matrix = root->input(2).get();
  g.product = root;
  g.nodes.push_back(root);
  std::unordered_set<const Variable*> rows{root->output_ptr(0)}, depends{root->output_ptr(0)};
  g.row_values.push_back(root->output_ptr(0));
  const DType dt = root->output_ptr(0)->dtype();

  for (std::size_t p = root_pos + 1; p < order.size(); ++p) {
    Apply* node = order[p];
    bool reads_rows = false, reads_other_dependent = false;
    for (const auto& in : node->inputs()) {
      if (rows.count(in.get())) reads_rows = true;
      else if (depends.count(in.get())) reads_other_dependent = true;
    }
    bool joined = false;
    if (reads_rows && !reads_other_dependent && !taken.count(node)) {
      const std::string_view name = node->op().name();
      if (name == "Elemwise" && node->output_ptr(0)->ndim() == 1) {
        g.elemwise.push_back(node);
        for (int o = 0; o < node->num_outputs(); ++o) {
          rows.insert(node->output_ptr(o));
          g.row_values.push_back(node->output_ptr(o));
        }
        joined = true;
      } else if (is_gemv(*node) && node->output_ptr(0)->dtype() == dt && rows.count(node->input(3).get()) &&
                 !rows.count(node->input(0).get()) && is_transpose_of(*node->input(2), g.matrix)) {
        g.transposed_products.push_back(node);
        joined = true;
      } else if (is_splittable_full_reduction(*node)) {
        g.reductions.push_back(node);
        joined = true;
      }
    }
    if (joined) g.nodes.push_back(node);
    if (reads_rows || reads_other_dependent)
      for (int o = 0; o < node->num_outputs(); ++o) depends.insert(node->output_ptr(o));
  }

  std::unordered_set<const Apply*> members(g.nodes.begin(), g.nodes.end());
  std::unordered_set<const Variable*> graph_outputs;
  for (const auto& out : fg.outputs()) graph_outputs.insert(out.get());
  for (const Variable* v : g.row_values) {
    if (graph_outputs.count(v)) continue;
    bool outside = false;
    for (const Client& c : fg.clients(v)) outside = outside || !c.node || !members.count(c.node);
    if (!outside) g.internal.insert(v);
  }
  return g;
}

}  // namespace

bool runs_as_steps(const std::vector<Apply*>& order, const std::vector<RowBlockGroup>& groups) {
  std::unordered_map<const Apply*, std::size_t> pos;
  for (std::size_t i = 0; i < order.size(); ++i) pos[order[i]] = i;
  for (const RowBlockGroup& g : groups) {
    std::size_t first = order.size(), last = 0;
    for (const Apply* node : g.nodes) {
      first = std::min(first, pos.at(node));
      last = std::max(last, pos.at(node));
    }
    if (last - first + 1 != g.nodes.size()) return false;
    // The step runs at `first`: every member's inputs from outside the group come before it.
    for (const Apply* node : g.nodes)
      for (const auto& in : node->inputs())
        if (in->owner() && !g.contains(in->owner()) && pos.at(in->owner()) >= first) return false;
  }
  return true;
}

bool RowBlockGroup::contains(const Apply* node) const {
  return std::find(nodes.begin(), nodes.end(), node) != nodes.end();
}

std::vector<RowBlockGroup> find_row_block_groups(const FunctionGraph& fg) {
  const std::vector<Apply*> order = fg.toposort();
  std::vector<RowBlockGroup> groups;
  std::unordered_set<const Apply*> taken;
  for (std::size_t p = 0; p < order.size(); ++p) {
    Apply* node = order[p];
    if (taken.count(node) || !is_gemv(*node)) continue;
    const Variable& z = *node->output_ptr(0);
    const Variable& x = *node->input(2);
    // z must have one element per row of X: a matrix read row by row, a float product, and
    // no static length 1 (which an Elemwise could broadcast against a longer vector).
    if (!is_float_dtype(z.dtype()) || x.ndim() != 2 || z.type().broadcastable(0)) continue;
    if (x.owner() && x.owner()->op().name() == "DimShuffle") continue;  // X itself, not a transpose
    RowBlockGroup g = grow_group(node, order, p, taken, fg);
    if (g.transposed_products.empty()) continue;  // X is read once anyway: BLAS does it best
    for (Apply* member : g.nodes) taken.insert(member);
    groups.push_back(std::move(g));
  }
  // Each group alone contracts to one step; together, moving one group's members next to each
  // other could separate another's. Keep the groups that still form valid single steps.
  while (!groups.empty() && !runs_as_steps(order_with_groups(order, groups), groups)) groups.pop_back();
  return groups;
}

std::vector<Apply*> order_with_groups(const std::vector<Apply*>& order, const std::vector<RowBlockGroup>& groups) {
  std::vector<Apply*> result = order;
  for (const RowBlockGroup& g : groups) {
    std::unordered_map<const Apply*, std::size_t> pos;
    for (std::size_t i = 0; i < result.size(); ++i) pos[result[i]] = i;
    std::size_t first = result.size(), last = 0;
    for (Apply* node : g.nodes) {
      first = std::min(first, pos.at(node));
      last = std::max(last, pos.at(node));
    }
    // Between first and last: members, nodes the group depends on (stay before it) and
    // nodes that depend on the group (move after it).
    std::unordered_set<const Variable*> downstream;
    std::vector<Apply*> before, members, after;
    for (std::size_t i = first; i <= last; ++i) {
      Apply* node = result[i];
      if (g.contains(node)) {
        members.push_back(node);
        for (int o = 0; o < node->num_outputs(); ++o) downstream.insert(node->output_ptr(o));
        continue;
      }
      bool dependent = false;
      for (const auto& in : node->inputs()) dependent = dependent || downstream.count(in.get());
      if (dependent) {
        for (int o = 0; o < node->num_outputs(); ++o) downstream.insert(node->output_ptr(o));
        after.push_back(node);
      } else {
        before.push_back(node);
      }
    }
    std::vector<Apply*> middle = before;
    middle.insert(middle.end(), members.begin(), members.end());
    middle.insert(middle.end(), after.begin(), after.end());
    std::copy(middle.begin(), middle.end(), result.begin() + static_cast<std::ptrdiff_t>(first));
  }
  return result;
}

}  // namespace kiln
