#include "ir/graph_runner.h"

#include <atomic>

#include "ir/error.h"

namespace kiln {

namespace {
std::atomic<GraphRunner> installed{nullptr};
}  // namespace

void set_graph_runner(GraphRunner runner) { installed.store(runner); }

std::vector<Array> run_graph(const FunctionGraph& fg, const std::vector<Array>& inputs) {
  GraphRunner runner = installed.load();
  KILN_INTERNAL_ASSERT(runner != nullptr, "run_graph: no graph runner is installed (the reference evaluator is not linked in)");
  return runner(fg, inputs);
}

}  // namespace kiln
