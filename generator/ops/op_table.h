// The one table of every op kind a graph file may name. The loader dispatches through it; the
// backends' registries are checked against it (an op missing there fails at compile time).
#pragma once

#include <string_view>
#include <vector>

#include "ir/op.h"
#include "ops/props.h"

namespace kiln {

/// Builds an op from its props. `input_types` are the node's input types (some spellings, like
/// Transpose{axes}, need them to become a canonical op).
using OpFactory = OpPtr (*)(PropReader& props, const std::vector<TensorType>& input_types);

struct OpEntry {
  std::string_view name;  ///< as written in graph files
  OpFactory make;
  /// The Op::name() of the ops `make` builds, when it differs from `name` (a spelling of
  /// another op: ExpandDims builds a DimShuffle). Backends register ops by that name.
  std::string_view op_name = {};

  std::string_view built_op_name() const { return op_name.empty() ? name : op_name; }
  /// False for op kinds the format names but kiln does not implement yet (loading stops).
  bool implemented() const;
};

/// Every op kind, in one list (ops/op_table.cpp).
const std::vector<OpEntry>& op_table();
/// The entry for a name, or null.
const OpEntry* find_op(std::string_view name);

}  // namespace kiln
