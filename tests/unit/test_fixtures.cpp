// Every NumPy fixture case through the reference evaluator.
#include <doctest/doctest.h>

#include <cstdlib>

#include "eval/evaluator.h"
#include "fixtures.h"
#include "ir/error.h"

using namespace kiln;
using namespace kiln::testing;

TEST_CASE("NumPy fixtures: reference evaluator") {
  const char* filter = std::getenv("KILN_FIXTURE_FILTER");
  auto cases = list_fixture_cases(filter ? filter : "");
  MESSAGE(cases.size() << " fixture cases");
  for (const auto& dir : cases) {
    INFO("case " << dir);
    FixtureCase c;
    try {
      c = load_fixture_case(dir);
    } catch (const std::exception& e) {
      FAIL_CHECK("cannot load: " << std::string(e.what()));
      continue;
    }
    if (!c.error.empty()) {
      try {
        evaluate(c.graph, c.inputs);
        FAIL_CHECK("expected a run-time failure containing \"" << c.error << "\"");
      } catch (const RuntimeFailure& e) {
        CHECK_MESSAGE(std::string(e.what()).find(c.error) != std::string::npos,
                      "error \"" << e.what() << "\" does not contain \"" << c.error << "\"");
      }
      continue;
    }
    std::vector<Array> out;
    try {
      out = evaluate(c.graph, c.inputs);
    } catch (const std::exception& e) {
      FAIL_CHECK("evaluation failed: " << std::string(e.what()));
      continue;
    }
    REQUIRE(out.size() == c.expected.size());
    for (std::size_t k = 0; k < out.size(); ++k) {
      auto diff = compare_arrays(out[k], c.expected[k], c.rtol, c.atol);
      CHECK_MESSAGE(!diff, "output " << k << ": " << diff.value_or(""));
    }
  }
}
