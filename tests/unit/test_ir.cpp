#include <doctest/doctest.h>

#include "api/elementwise.h"
#include "api/graph_builder.h"
#include "eval/evaluator.h"
#include "io/graph_load.h"
#include "io/graph_save.h"
#include "ir/error.h"

using namespace kiln;

TEST_CASE("build, evaluate, save and reload log(1 + x)") {
  GraphBuilder g("log1p_example");
  auto x = g.input("x", f64, {-1});
  g.output(log(1 + x), "y");
  FunctionGraph fg = g.build();
  fg.verify();
  Array in = Array::empty(DType::Float64, {3});
  for (int i = 0; i < 3; ++i) in.data<double>()[i] = i;
  auto out = evaluate(fg, {in});
  REQUIRE(out.size() == 1);
  CHECK(out[0].dtype() == DType::Float64);
  CHECK(out[0].data<double>()[1] == doctest::Approx(std::log(2.0)));

  std::string text = save_graph_text(fg);
  FunctionGraph again = load_graph_text(text, "");
  CHECK(save_graph_text(again) == text);
  auto out2 = evaluate(again, {in});
  CHECK(out2[0].data<double>()[2] == doctest::Approx(std::log(3.0)));
}
