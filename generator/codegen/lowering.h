// Lowering: where every variable of a graph lives in generated code, and in what order nodes
// run. Inputs are bound from the caller, constants are static arrays, views alias the storage
// of their source, graph outputs are written straight into their final memory, and other
// intermediates get workspace slots, shared by liveness (a slot is reused once every variable
// stored in it — and every view of them — has had its last use).
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "codegen/row_block_fusion.h"
#include "ir/fgraph.h"

namespace kiln {

/// Fused: a row value of a row-block group that nothing outside the group reads, or the
/// output of a gather its one reader computes itself (codegen/gather_fusion.h): no storage.
enum class StorageKind { Input, Constant, Workspace, Output, View, Fused };

struct LoweredVar {
  const Variable* var = nullptr;
  std::string cname;          ///< C identifier in the generated function ("v12")
  StorageKind kind = StorageKind::Workspace;
  int input_index = -1;       ///< Input: position in the graph's inputs
  int constant_index = -1;    ///< Constant: position in LoweredGraph::constants
  int slot = -1;              ///< Workspace: context slot
  int output_index = -1;      ///< Output: the graph output written in place
  const Variable* inplace_of = nullptr;  ///< Workspace: the input whose buffer it overwrites
};

/// A graph output that needs a final copy (it is an input, a constant, a view, or an output
/// listed twice).
struct OutputCopy {
  int output_index;
  const Variable* source;
};

struct LoweredGraph {
  const FunctionGraph* graph = nullptr;
  std::vector<Apply*> order;  ///< toposort
  std::vector<const Variable*> declared;  ///< every variable the function declares, in order
  std::unordered_map<const Variable*, LoweredVar> vars;
  std::vector<const Variable*> constants;
  std::vector<OutputCopy> copies;
  /// Row-block groups (codegen/row_block_fusion.h): each runs as one step, at its first
  /// member's place in `order`, with one workspace slot of its own for partial results.
  std::vector<RowBlockGroup> groups;
  std::vector<int> group_slots;
  std::unordered_map<const Apply*, int> group_of;  ///< member -> index in groups
  /// Gathers read inline by their one Elemwise reader (codegen/gather_fusion.h): no step.
  std::unordered_set<const Apply*> fused_gathers;
  /// Nodes that keep scratch memory across calls (work buffers of linear-algebra kernels):
  /// a slot of their own each, never shared.
  std::unordered_map<const Apply*, int> scratch_slots;
  /// Nodes whose op calls inner graphs as functions of their own (InnerGraphUse::function, a
  /// Scan's step): the names of those functions, in inner_graphs() order (codegen/source.cpp
  /// emits them ahead of the function of this graph).
  std::unordered_map<const Apply*, std::vector<std::string>> inner_functions;
  int first_slot = 0;
  int num_slots = 0;  ///< slots used: [first_slot, first_slot + num_slots)

  const LoweredVar& var(const Variable* v) const;
};

/// Lowers `fg`. `is_view(node)` says whether the backend implements the node's output 0 as a
/// view of its input 0 (no storage of its own). Slots are numbered from `first_slot`.
/// `groups` (from find_row_block_groups) run as single steps. Nodes for which `needs_scratch`
/// holds get a scratch slot (LoweredGraph::scratch_slots). `fused_gathers` (from
/// find_fused_gathers) run inside their reader.
LoweredGraph lower(const FunctionGraph& fg, const std::function<bool(const Apply&)>& is_view,
                   int first_slot = 0, std::vector<RowBlockGroup> groups = {},
                   const std::function<bool(const Apply&)>& needs_scratch = {},
                   std::unordered_set<const Apply*> fused_gathers = {});

}  // namespace kiln
