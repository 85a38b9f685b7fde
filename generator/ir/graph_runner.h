// How an op runs a graph it holds on values (OpFromGraph's perform, a Scan step): through the
// reference evaluator, which sits above the ops (eval/) and registers itself here when it is
// linked in. Ops call run_graph and so need not include eval/.
#pragma once

#include <vector>

#include "ir/fgraph.h"

namespace kiln {

/// Evaluates a graph on values, one per input; returns one array per output.
using GraphRunner = std::vector<Array> (*)(const FunctionGraph&, const std::vector<Array>&);

/// Installs the runner (eval/evaluator.cpp does, at start-up).
void set_graph_runner(GraphRunner runner);

/// Runs `fg` on `inputs` with the installed runner; an InternalError when none is installed.
std::vector<Array> run_graph(const FunctionGraph& fg, const std::vector<Array>& inputs);

}  // namespace kiln
