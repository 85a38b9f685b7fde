// The NumPy fixture harness: loads tests/fixtures/cases/<family>/<case>/ (see
// tests/fixtures/gen/common.py for the layout) and compares arrays with tolerances.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compile/compile.h"
#include "compiled.h"
#include "ir/fgraph.h"

namespace kiln::testing {

struct FixtureCase {
  std::string dir;   ///< absolute path of the case folder
  std::string name;  ///< "<family>/<case>"
  FunctionGraph graph;
  std::vector<Array> inputs;    ///< in graph.inputs() order, views applied
  std::vector<Array> expected;  ///< one per graph output (empty when `error` is set)
  std::optional<double> rtol, atol;
  std::string error;  ///< expected run-time failure substring
};

/// Every case folder under tests/fixtures/cases, sorted; `filter` keeps the names ("family/case")
/// that contain it, or one of its parts when it is a comma-separated list.
std::vector<std::string> list_fixture_cases(const std::string& filter = "");
FixtureCase load_fixture_case(const std::string& dir);

/// Nothing when `actual` matches `expected` (same dtype and shape; exact for bool and integers;
/// |a - e| <= atol + rtol * |e| for floats, NaN matching NaN); else a description.
std::optional<std::string> compare_arrays(const Array& actual, const Array& expected,
                                          std::optional<double> rtol = std::nullopt,
                                          std::optional<double> atol = std::nullopt);

/// The conformance check through a backend: every fixture case `claims` selects (filtered by
/// $KILN_FIXTURE_FILTER) compiled with `options` (its backend) and called both ways, compared
/// with NumPy and with the reference evaluator (test_compiled_fixtures.cpp).
/// `call` runs graph `name` of a built library on host inputs (default: call_compiled, for CPU
/// backends; a device backend moves inputs and outputs across).
using FixtureCall = std::function<CallResult(const Library& so, const std::string& name, const std::vector<Array>& inputs,
                                             bool into)>;
void check_fixtures_compiled(const CompileOptions& options, const std::function<bool(const FixtureCase&)>& claims,
                             const FixtureCall& call = {}, std::size_t per_bundle = 48);

/// A NumPy-style view of `base` per a case's "view" JSON (transpose / slices).
Array apply_view(const Array& base, const std::string& view_json);

}  // namespace kiln::testing
