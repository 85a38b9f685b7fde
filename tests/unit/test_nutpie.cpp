// The nutpie entry point (kiln compile --nutpie, codegen/nutpie.h): NAME_nutpie_logp gives the
// values of NAME_call with nutpie's return codes, on one context per calling thread; graphs of
// another shape and device backends are refused when compiled.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "api/elementwise.h"
#include "api/graph_builder.h"
#include "compiled.h"
#include "ir/error.h"
#include "ops/alloc.h"
#include "ops/assert.h"
#include "ops/reduce.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

using NutpieLogp = int64_t (*)(uint64_t, const double*, double*, double*, void*);
using NutpieLastError = const char* (*)();

// logp(x) = sum(-x^2/2 + log(x + 10)) for all(x > -50), else an assertion fails;
// gradient -x + 1/(x + 10). x has `length` elements (-1: any).
FunctionGraph density(std::int64_t length) {
  GraphBuilder g("density");
  auto x = g.input("x", f64, {length});
  auto logp = sum(-0.5 * x * x + log(x + 10.0));
  g.output(check_and_raise(logp, {all(gt(x, -50.0))}, "x below the support"), "logp");
  g.output(-x + 1.0 / (x + 10.0), "dlogp");
  return g.build();
}

CompileOptions nutpie_options() {
  CompileOptions o = test_compile_options();
  o.entry_points.nutpie_logp = true;
  return o;
}

}  // namespace

TEST_CASE("nutpie: NAME_nutpie_logp gives logp and the gradient, with nutpie's return codes") {
  for (std::int64_t length : {std::int64_t{-1}, std::int64_t{3}}) {
    CAPTURE(length);
    Artifacts built = compile(density(length), nutpie_options());
    CHECK(built.sources.header.find("density_nutpie_logp(uint64_t dim") != std::string::npos);
    Library so(built.build.library_path);
    auto logp_fn = reinterpret_cast<NutpieLogp>(so.symbol("density_nutpie_logp"));
    auto last_error = reinterpret_cast<NutpieLastError>(so.symbol("density_nutpie_last_error"));
    REQUIRE(so.symbol("density_nutpie_logp") != nullptr);
    REQUIRE(so.symbol("density_nutpie_last_error") != nullptr);
    int user_data = 0;  // not read: nutpie passes its own
    std::vector<double> x = {0.5, -1.0, 2.0}, grad(3, 0.0);
    double logp = 0;
    REQUIRE(logp_fn(3, x.data(), grad.data(), &logp, &user_data) == 0);
    double want = 0;
    for (std::size_t k = 0; k < 3; ++k) {
      want += -0.5 * x[k] * x[k] + std::log(x[k] + 10.0);
      CHECK(grad[k] == doctest::Approx(-x[k] + 1.0 / (x[k] + 10.0)).epsilon(1e-14));
    }
    CHECK(logp == doctest::Approx(want).epsilon(1e-14));
    CHECK(std::string(last_error()) == "");
    // Recoverable: a non-finite gradient (3), a non-finite logp (4), a failed check (KILN_ERR_ASSERT).
    x = {std::numeric_limits<double>::infinity(), 0.0, 0.0};
    CHECK(logp_fn(3, x.data(), grad.data(), &logp, nullptr) == 3);
    CHECK(std::string(last_error()).find("gradient") != std::string::npos);
    x = {-20.0, 0.0, 0.0};  // log(-10): NaN; the gradient stays finite
    CHECK(logp_fn(3, x.data(), grad.data(), &logp, nullptr) == 4);
    x = {-60.0, 0.0, 0.0};
    CHECK(logp_fn(3, x.data(), grad.data(), &logp, nullptr) == KILN_ERR_ASSERT);
    CHECK(std::string(last_error()).find("x below the support") != std::string::npos);
    // Not recoverable: null pointers; a dim other than the graph's static length.
    CHECK(logp_fn(3, nullptr, grad.data(), &logp, nullptr) == -KILN_ERR_ARGUMENT);
    CHECK(logp_fn(3, x.data(), grad.data(), nullptr, nullptr) == -KILN_ERR_ARGUMENT);
    if (length == 3) {
      CHECK(logp_fn(2, x.data(), grad.data(), &logp, nullptr) == -KILN_ERR_INPUT_SHAPE);
    } else {
      CHECK(logp_fn(0, nullptr, nullptr, &logp, nullptr) == 0);
      CHECK(logp == 0.0);
    }
  }
}

TEST_CASE("nutpie: each calling thread has its own context") {
  Artifacts built = compile(density(-1), nutpie_options());
  Library so(built.build.library_path);
  auto logp_fn = reinterpret_cast<NutpieLogp>(so.symbol("density_nutpie_logp"));
  REQUIRE(so.symbol("density_nutpie_logp") != nullptr);
  // Threads with different lengths at once: a shared context would mix their workspaces.
  std::vector<int> failures(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      const std::size_t n = 1 + 37 * static_cast<std::size_t>(t);
      std::vector<double> x(n), grad(n);
      for (int call = 0; call < 200; ++call) {
        for (std::size_t k = 0; k < n; ++k) x[k] = 0.01 * static_cast<double>((k + call) % 13);
        double logp = 0, want = 0;
        if (logp_fn(n, x.data(), grad.data(), &logp, nullptr) != 0) ++failures[t];
        for (std::size_t k = 0; k < n; ++k) {
          want += -0.5 * x[k] * x[k] + std::log(x[k] + 10.0);
          if (std::fabs(grad[k] - (-x[k] + 1.0 / (x[k] + 10.0))) > 1e-12) ++failures[t];
        }
        if (std::fabs(logp - want) > 1e-9 * (1 + std::fabs(want))) ++failures[t];
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) CHECK(failures[t] == 0);
}

TEST_CASE("nutpie: graphs of another shape and device backends are refused when compiled") {
  GraphBuilder g("two_inputs");
  auto a = g.input("a", f64, {-1});
  auto b = g.input("b", f64, {-1});
  g.output(sum(a * b), "logp");
  g.output(b, "grad");
  CHECK_THROWS_WITH_AS(emit(g.build(), nutpie_options()),
                       doctest::Contains("one float64 vector input and two outputs"), UserError);
  GraphBuilder h("float32");
  auto x = h.input("x", f32, {-1});
  h.output(sum(x), "logp");
  h.output(x, "grad");
  CHECK_THROWS_WITH_AS(emit(h.build(), nutpie_options()), doctest::Contains("Vector(float32"), UserError);
  GraphBuilder k("lengths");
  auto y = k.input("y", f64, {3});
  k.output(sum(y), "logp");
  k.output(alloc(sum(y), {4}), "grad");
  CHECK_THROWS_WITH_AS(emit(k.build(), nutpie_options()), doctest::Contains("x of length 3 and a gradient of length 4"),
                       UserError);
  CompileOptions gpu = nutpie_options();
  gpu.backend = "opencl";
  CHECK_THROWS_WITH_AS(emit(density(-1), gpu), doctest::Contains("the opencl backend does not generate it"), UserError);
}
