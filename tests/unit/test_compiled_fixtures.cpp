// The conformance check (PyTensor's compare-with-perform): every NumPy fixture case compiled
// by a backend, called through the C ABI both ways (kiln-allocated outputs, and output_shapes
// + call_into), and compared with NumPy's expected values and with the reference evaluator.
// The cases compile as bundles of many graphs per library.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "compiled.h"
#include "eval/evaluator.h"
#include "fixtures.h"
#include "ir/error.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

void check_case(const FixtureCase& c, const Library& so, const std::string& name, const FixtureCall& call) {
  std::vector<Array> reference;
  if (c.error.empty()) reference = evaluate(c.graph, c.inputs);
  for (bool into : {false, true}) {
    INFO("case " << c.name << std::string(into ? " (output_shapes + call_into)" : " (call)"));
    CallResult r = call ? call(so, name, c.inputs, into) : call_compiled(so.graph(name), c.inputs, into);
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

void kiln::testing::check_fixtures_compiled(const CompileOptions& options,
                                            const std::function<bool(const FixtureCase&)>& claims,
                                            const FixtureCall& call, std::size_t per_bundle) {
  const char* filter = std::getenv("KILN_FIXTURE_FILTER");
  std::map<std::string, std::vector<FixtureCase>> families;
  for (const auto& dir : list_fixture_cases(filter ? filter : "")) {
    try {
      FixtureCase c = load_fixture_case(dir);
      if (!claims(c)) continue;
      std::string family = c.name.substr(0, c.name.find('/'));
      families[family].push_back(std::move(c));
    } catch (const std::exception& e) {
      FAIL_CHECK("cannot load " << dir << ": " << std::string(e.what()));
    }
  }
  const std::string& backend = options.backend;
  // Every case that generates alone joins the build; one op the backend lacks then fails only
  // its own cases. The rest compile as bundles of a few dozen graphs, several at once.
  NamedGraphs graphs;
  std::vector<const FixtureCase*> built_cases;
  for (auto& [family, cases] : families) {
    for (const FixtureCase& c : cases) {
      const std::string name = "c" + std::to_string(graphs.size());
      try {
        emit_bundle({{&c.graph, name}}, "probe", options);
      } catch (const std::exception& e) {
        FAIL_CHECK("case " << c.name << ": " << std::string(e.what()));
        continue;
      }
      graphs.emplace_back(&c.graph, name);
      built_cases.push_back(&c);
    }
  }
  MESSAGE(built_cases.size() << " fixture cases through the " << backend << " backend");
  for (const BuiltBundle& bundle : build_in_bundles(graphs, "fixtures_" + backend, per_bundle, options)) {
    if (!bundle.error.empty()) {
      FAIL_CHECK("building a bundle of " << bundle.members.size() << " cases (" << built_cases[bundle.members[0]]->name
                                         << ", ...) failed: " << bundle.error);
      continue;
    }
    Library so(bundle.library_path);
    for (std::size_t i : bundle.members) check_case(*built_cases[i], so, graphs[i].second, call);
  }
}

TEST_CASE("NumPy fixtures: compiled C++ backend") {
  check_fixtures_compiled(test_compile_options(), [](const FixtureCase&) { return true; });
}
