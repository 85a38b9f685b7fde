// The random graphs of the pipeline's property test (test_rewrite_property.cpp), for the
// backends that run them too (test_backend_opencl.cpp).
#pragma once

#include <vector>

#include "ir/fgraph.h"
#include "kiln/runtime/array.hpp"

namespace kiln::testing {

/// A seeded random graph: as built, after the default pipeline, its inputs, the reference
/// evaluator's outputs of the graph as built, and the tolerances its dtype allows.
struct PropertyCase {
  FunctionGraph original;
  FunctionGraph rewritten;
  std::vector<Array> inputs;
  std::vector<Array> expected;
  double rtol, atol;
};

/// The few hundred cases of the property test (float64 and float32), the same on every call.
std::vector<PropertyCase> property_cases();

/// Checks outputs `got` (computed as `how` says) against the case's expected ones.
void check_property_outputs(const PropertyCase& c, const std::vector<Array>& got, const char* how);

}  // namespace kiln::testing
