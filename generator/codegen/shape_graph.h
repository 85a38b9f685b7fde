// The shape graph: a graph computing a graph's output shapes from its inputs, built from
// every op's infer_shape. Generated libraries compile it as `output_shapes`, so callers can
// size their outputs before `call_into` without running the whole graph.
#pragma once

#include "ir/fgraph.h"

namespace kiln {

/// A graph with fg's inputs (cloned) and one 0-d int64 output per output dimension of fg
/// (all of output 0's lengths, then output 1's, ...). Static lengths become constants.
FunctionGraph build_shape_graph(const FunctionGraph& fg);

}  // namespace kiln
