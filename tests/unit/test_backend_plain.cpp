// The backend seam proved by a second backend that lives in the tests ("plain",
// tests/backend/): it passes the conformance cases of the ops it claims through the compile
// API's backend option, lacks the rest with a compile-time error that names op, props and
// backend, and gets no BLAS rewrites since it has no BLAS.
#include <doctest/doctest.h>

#include <set>

#include "../backend/plain_backend.h"
#include "api/elementwise.h"
#include "api/graph_builder.h"
#include "codegen/backend.h"
#include "compiled.h"
#include "fixtures.h"
#include "ir/error.h"
#include "ops/dot.h"
#include "ops/softmax.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

CompileOptions plain_options() {
  register_plain_backend();
  CompileOptions o = test_compile_options();
  o.backend = "plain";
  o.build.opt_level = "-O1";  // a seam test: compile time matters more than speed
  return o;
}

// Whether every op of the case's graph is one the plain backend implements, on dtypes it takes.
bool plain_claims(const FixtureCase& c) {
  static const std::vector<std::string> ops = plain_backend_ops();
  for (const Variable* v : c.graph.variables())
    if (v->type().is_tensor() && is_complex(v->dtype())) return false;
  for (const Apply* node : c.graph.toposort())
    if (std::find(ops.begin(), ops.end(), std::string(node->op().name())) == ops.end()) return false;
  return true;
}

}  // namespace

TEST_CASE("NumPy fixtures: compiled plain backend (a second backend through the seam)") {
  check_fixtures_compiled(plain_options(), plain_claims);
}

TEST_CASE("backend seam: an op a backend lacks is a compile-time error naming op, props and backend") {
  const CompileOptions o = plain_options();
  GraphBuilder g("lacks");
  auto x = g.input("x", DType::Float64, {-1, -1});
  g.output(softmax(x, 1), "y");
  try {
    emit(g.build(), o);
    FAIL("expected a NotImplementedError");
  } catch (const NotImplementedError& e) {
    const std::string what = e.what();
    CHECK_MESSAGE(what.find("`Softmax{axis=1}` has no plain implementation") != std::string::npos, what);
    CHECK_MESSAGE(what.find("outside the seam test") != std::string::npos, what);  // the stated reason
  }
  CompileOptions unknown = o;
  unknown.backend = "nosuch";
  GraphBuilder h("unknown");
  h.output(exp(h.input("x", DType::Float64, {-1})), "y");
  CHECK_THROWS_WITH_AS(emit(h.build(), unknown), doctest::Contains("unknown backend \"nosuch\" (kiln has: cpp, opencl, cuda, plain"),
                       UserError);
}

TEST_CASE("backend seam: rewrites that need a capability run only for backends that have it") {
  auto graph = [] {
    GraphBuilder g("affine");
    auto X = g.input("X", DType::Float64, {-1, -1});
    auto w = g.input("w", DType::Float64, {-1});
    g.output(dot(X, w) * 2.0 + 1.0, "z");
    return g.build();
  };
  auto op_names = [](const FunctionGraph& fg) {
    std::set<std::string> names;
    for (const Apply* node : fg.toposort()) names.insert(std::string(node->op().name()));
    return names;
  };
  CompileOptions o = plain_options();
  o.rewrite = true;
  FunctionGraph for_plain = graph();
  rewrite_for_backend(for_plain, o);
  CHECK(op_names(for_plain).count("Dot") == 1);
  CHECK(op_names(for_plain).count("Gemv") == 0);
  o.backend = "cpp";
  FunctionGraph for_cpp = graph();
  rewrite_for_backend(for_cpp, o);
  CHECK(op_names(for_cpp).count("Dot") == 0);
  CHECK(op_names(for_cpp).count("Gemv") == 1);
}
