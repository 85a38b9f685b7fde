// Helpers for tests that compile graphs: build options pointing at the test cache, and calling
// a compiled graph with kiln::Array values.
#pragma once

#include <string>
#include <vector>

#include "driver/build.h"
#include "kiln/loader.hpp"

namespace kiln::testing {

/// Build options for tests: a cache inside the build tree (content-addressed, so reruns reuse
/// it), -march=native.
BuildOptions test_build_options();

/// Calls a compiled graph on Arrays; returns its status, and outputs/message.
struct CallResult {
  int32_t status = 0;
  std::string error;
  std::vector<Array> outputs;
};
CallResult call_compiled(const kiln_graph_info& info, const std::vector<Array>& inputs, bool into = false,
                         int threads = 1);

}  // namespace kiln::testing
