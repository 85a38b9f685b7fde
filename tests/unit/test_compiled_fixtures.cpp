// The conformance check (PyTensor's compare-with-perform): every NumPy fixture case compiled
// with the C++ backend, called through the C ABI both ways (kiln-allocated outputs, and
// output_shapes + call_into), and compared with NumPy's expected values and with the reference
// evaluator. All cases of a fixture family are compiled into one library.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <algorithm>
#include <future>
#include <map>
#include <thread>

#include "codegen/cpp/library.h"
#include "compiled.h"
#include "eval/evaluator.h"
#include "fixtures.h"
#include "ir/error.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

void check_case(const FixtureCase& c, const kiln_graph_info& info) {
  std::vector<Array> reference;
  if (c.error.empty()) reference = evaluate(c.graph, c.inputs);
  for (bool into : {false, true}) {
    INFO("case " << c.name << std::string(into ? " (output_shapes + call_into)" : " (call)"));
    CallResult r = call_compiled(info, c.inputs, into);
    if (!c.error.empty()) {
      CHECK_MESSAGE(r.status != KILN_OK, "expected a failure containing \"" << c.error << "\"");
      if (!into || r.status != KILN_OK)
        CHECK_MESSAGE(r.error.find(c.error) != std::string::npos,
                      "error \"" << r.error << "\" does not contain \"" << c.error << "\"");
      continue;
    }
    if (r.status != KILN_OK || r.outputs.size() != c.expected.size()) {
      FAIL_CHECK(std::string(kiln_status_name(r.status)) << ": " << r.error);
      continue;
    }
    for (std::size_t k = 0; k < r.outputs.size(); ++k) {
      auto vs_numpy = compare_arrays(r.outputs[k], c.expected[k], c.rtol, c.atol);
      CHECK_MESSAGE(!vs_numpy, "output " << k << " vs NumPy: " << vs_numpy.value_or(""));
      auto vs_perform = compare_arrays(r.outputs[k], reference[k], c.rtol, c.atol);
      CHECK_MESSAGE(!vs_perform, "output " << k << " vs perform: " << vs_perform.value_or(""));
    }
  }
}

}  // namespace

TEST_CASE("NumPy fixtures: compiled C++ backend") {
  const char* filter = std::getenv("KILN_FIXTURE_FILTER");
  std::map<std::string, std::vector<FixtureCase>> families;
  for (const auto& dir : list_fixture_cases(filter ? filter : "")) {
    try {
      FixtureCase c = load_fixture_case(dir);
      std::string family = c.name.substr(0, c.name.find('/'));
      families[family].push_back(std::move(c));
    } catch (const std::exception& e) {
      FAIL_CHECK("cannot load " << dir << ": " << std::string(e.what()));
    }
  }
  // Generate every family's library first, then build them concurrently (one compiler process
  // per core: the bundles are the bulk of the suite's time), then check in this thread.
  struct Bundle {
    std::string family;
    std::vector<std::pair<const FunctionGraph*, std::string>> graphs;
    std::vector<const FixtureCase*> cases;
    CppLibrary lib;
    std::future<BuildResult> built;
  };
  std::vector<Bundle> bundles;
  for (auto& [family, cases] : families) {
    INFO("family " << family);
    Bundle b;
    b.family = family;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      // Generate each alone first, so one op the backend lacks fails only its own cases.
      try {
        generate_cpp_bundle({{&cases[i].graph, "c" + std::to_string(i)}}, "probe");
      } catch (const std::exception& e) {
        FAIL_CHECK("case " << cases[i].name << ": " << std::string(e.what()));
        continue;
      }
      b.graphs.emplace_back(&cases[i].graph, "c" + std::to_string(i));
      b.cases.push_back(&cases[i]);
    }
    if (b.graphs.empty()) continue;
    b.lib = generate_cpp_bundle(b.graphs, "fixtures_" + family);
    bundles.push_back(std::move(b));
  }
  const std::size_t parallel = std::max(2u, std::thread::hardware_concurrency());
  for (std::size_t start = 0; start < bundles.size(); start += parallel) {
    std::size_t end = std::min(bundles.size(), start + parallel);
    for (std::size_t i = start; i < end; ++i)
      bundles[i].built = std::async(std::launch::async, [&lib = bundles[i].lib] {
        return build_library(lib, test_build_options());
      });
    for (std::size_t i = start; i < end; ++i) bundles[i].built.wait();
  }
  for (auto& b : bundles) {
    INFO("family " << b.family);
    BuildResult built;
    try {
      built = b.built.get();
    } catch (const std::exception& e) {
      FAIL_CHECK("building the " << b.family << " bundle failed: " << std::string(e.what()));
      continue;
    }
    Library so(built.library_path);
    for (std::size_t i = 0; i < b.graphs.size(); ++i) check_case(*b.cases[i], so.graph(b.graphs[i].second));
  }
}
