// kiln bisect: where a compiled graph first goes wrong. The graph is compiled with every
// intermediate exposed as an output and run beside the reference evaluator on the same inputs;
// the first node in topological order whose compiled value differs beyond tolerance is the
// one whose kernel (or a rewrite of it) is wrong — the tool a user or a backend author needs
// when a compiled result is wrong.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compile/compile.h"
#include "ir/fgraph.h"

namespace kiln {

struct BisectOptions {
  CompileOptions compile;  ///< backend, rewrites and build of the library under test
  /// Elements of floating dtypes match when |compiled - reference| <= atol + rtol * |reference|
  /// (NaN matches NaN); others must be equal. Unset: 1e-6 / 1e-9 for float64, 1e-4 / 1e-6 for
  /// float32 and float16 (compiled code may use fused multiply-adds and 1-ULP vector math).
  std::optional<double> rtol, atol;
};

/// The first difference found.
struct BisectMismatch {
  std::size_t node_index = 0;  ///< position of the node in fg.toposort()
  int output = 0;              ///< which output of it
  std::string node_line;       ///< `Dot 'Xw'`: its op and the variable, as dprint names them
  std::string origins;         ///< its JSON pointers and ops as written ("/nodes/0 Dot")
  std::string difference;      ///< "dtype ...", "shape ...", or "at [i, j]: compiled x, reference y"
};

struct BisectResult {
  std::size_t nodes_checked = 0;
  std::optional<BisectMismatch> first;  ///< none: every exposed value agrees
};

/// Compiles `fg` with every tensor intermediate as an output and compares each with the
/// reference evaluator on `inputs`. A call of the compiled library that fails is a
/// RuntimeFailure naming the node (as `kiln run` reports it).
BisectResult bisect(const FunctionGraph& fg, const std::vector<Array>& inputs, const BisectOptions& options);

}  // namespace kiln
