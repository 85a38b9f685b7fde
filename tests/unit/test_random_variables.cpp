// RandomVariable ops (ops/random.h) beyond the NumPy/PyTensor fixtures
// (tests/fixtures/cases/random_variables): loader refusals that name their place, type
// inference, rewrites that keep every draw, and the missing gradient.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "compile/compile.h"
#include "eval/evaluator.h"
#include "grad/grad.h"
#include "ir/error.h"
#include "ir/fgraph.h"
#include "ops/constant.h"
#include "ops/random.h"
#include "ops/random_choice.h"
#include "ops/random_permutation.h"
#include "ops/reduce.h"
#include "rewrite/pipeline.h"
#include "v2_test_util.h"

using namespace kiln;
using namespace kiln::testing;
using Json = nlohmann::json;

namespace {

const Json kRng = {{"kind", "rng"}, {"bit_generator", "PCG64"}};

// rng, size (none), loc, scale -> NormalRV -> (next, draws), with `props` and `loc_type`.
Json normal_graph(const Json& props, const Json& loc_type = tensor_type("float64", {nullptr})) {
  return graph_json(2,
                    {var("rng", kRng), var("size", {{"kind", "none"}}), var("loc", loc_type),
                     var("scale", tensor_type("float64", Json::array())), var("next", kRng),
                     var("x", tensor_type("float64", {nullptr}))},
                    {node("NormalRV", {"rng", "size", "loc", "scale"}, {"next", "x"}, props)}, {"rng", "loc", "scale"},
                    {"next", "x"});
}

// NumPy's PCG64(0) state in kiln's six words.
Var seed0_rng() {
  Array w = Array::empty(DType::UInt64, {kRngStateWords});
  const std::uint64_t words[6] = {0x1aa1b5345996452dULL, 0x09585eb7a69561e3ULL, 0x418ddadb3af71a82ULL,
                                  0x588133bc447873a9ULL, 0, 0};
  std::copy(words, words + 6, w.data<std::uint64_t>());
  return make_constant(w, "rng", TypeKind::Rng);
}

int count_ops(const FunctionGraph& fg, std::string_view name) {
  int n = 0;
  for (Apply* a : fg.toposort()) n += a->op().name() == name;
  return n;
}

}  // namespace

TEST_CASE("random variables: a NormalRV node loads, and bad props are refused at their pointer") {
  const Json props = {{"name", "normal"}, {"signature", "(),()->()"}, {"dtype", "float64"}};
  CHECK_NOTHROW(load_graph_text(normal_graph(props).dump(), ""));
  CHECK_NOTHROW(load_graph_text(normal_graph({{"name", "normal"}, {"inplace", true}}).dump(), ""));
  struct Case {
    Json props;
    std::string where, words;
  };
  const std::vector<Case> cases = {
      {{{"name", "normal"}, {"dtype", "int64"}}, "/nodes/0/props/dtype", "must be a float dtype"},
      {{{"name", "uniform"}}, "/nodes/0/props/name", "not \"uniform\""},
      {{{"signature", "(),(),()->()"}}, "/nodes/0/props/signature", "signature is \"(),()->()\""},
      {{{"ndim_supp", 1}}, "/nodes/0/props/ndim_supp", "ndim_supp must be 0"},
      {{{"mystery", 1}}, "/nodes/0/props/mystery", "unknown prop"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.props.dump());
    Refusal r = refusal_of(normal_graph(c.props));
    CHECK(r.where == c.where);
    CHECK(r.message.find(c.words) != std::string::npos);
  }
}

TEST_CASE("random variables: type inference refuses what NumPy cannot draw from") {
  const Var rng = seed0_rng();
  const Var x = make_input(TensorType(DType::Float64, {kUnknownLength}), "x");
  const Var xi = make_input(TensorType(DType::Int64, {3}), "n");
  auto refused = [](const std::function<void()>& f, const std::string& words) {
    try {
      f();
    } catch (const UserError& e) {
      CHECK_MESSAGE(std::string(e.what()).find(words) != std::string::npos, e.what());
      return;
    }
    FAIL("accepted");
  };
  refused([&] { random_variable("NormalRV", rng, nullptr, {x}); }, "takes 4 inputs (rng, size, loc, scale)");
  refused([&] { random_variable("NormalRV", x, nullptr, {x, x}); }, "is a tensor");
  refused([&] { random_variable("BinomialRV", rng, nullptr, {x, x}); }, "must have an integer dtype");
  refused([&] { random_variable("NormalRV", rng, make_input(TensorType(DType::Int64, {kUnknownLength})), {x, x}); },
          "static length");
  refused([&] { random_variable("NormalRV", rng, int64_vector_constant({}), {x, x}); }, "size length is incompatible");
  refused([&] { random_variable("PoissonRV", rng, nullptr, {x}, DType::Float64); }, "must be an integer dtype");
  // Static shapes: size decides; otherwise the parameters broadcast (length 1 stretches).
  auto [next, draws] = random_variable("IntegersRV", rng, int64_vector_constant({2, 3}), {xi, xi}, DType::Int32);
  CHECK(next->type() == rng_type());
  CHECK(draws->type() == TensorType(DType::Int32, {2, 3}));
  const Var col = make_input(TensorType(DType::Float64, {kUnknownLength, 1}));
  CHECK(random_variable("NormalRV", rng, nullptr, {col, xi}).second->type().shape == Shape{kUnknownLength, 3});
  CHECK_THROWS_AS(random_variable("ChoiceWithoutReplacement", rng, nullptr, {x}), NotImplementedError);
}

TEST_CASE("random variables: rewrites never merge, fold or drop draws") {
  // Two draws from the same constant state and parameters, and a third chained on the first.
  const Var rng = seed0_rng();
  const Var loc = int64_vector_constant({0, 10, 20});
  const Var scale = scalar_constant(DType::Float64, 2.0);
  auto [next1, a] = random_variable("NormalRV", rng, nullptr, {loc, scale});
  auto [next2, b] = random_variable("NormalRV", rng, nullptr, {loc, scale});
  auto [next3, c] = random_variable("NormalRV", next1, nullptr, {loc, scale});
  // The second chained draw's values are not asked for, only the state after it.
  FunctionGraph fg({}, {a, b, c, next3});
  const std::vector<Array> before = evaluate(fg, {});
  run_pipeline(fg);
  CHECK(count_ops(fg, "NormalRV") == 3);
  const std::vector<Array> after = evaluate(fg, {});
  for (std::size_t k = 0; k < before.size(); ++k) CHECK(values_of(before[k]) == values_of(after[k]));
  // The same state gives the same draws; the chained one continues the stream.
  CHECK(values_of(after[0]) == values_of(after[1]));
  CHECK(values_of(after[0]) != values_of(after[2]));
  // NumPy: Generator(PCG64(0)).normal([0, 10, 20], 2.0)
  CHECK(values_of(after[0])[0] == 0.2514604421867866);
}

TEST_CASE("random variables: no gradient through a draw") {
  const Var mu = make_input(TensorType(DType::Float64, {}), "mu");
  auto [next, x] = random_variable("NormalRV", seed0_rng(), int64_vector_constant({4}), {mu, scalar_constant(DType::Float64, 1.0)});
  try {
    grad(sum(x), mu);
    FAIL("a gradient through NormalRV");
  } catch (const UserError& e) {
    CHECK(std::string(e.what()).find("No gradient defined for random variables") != std::string::npos);
  }
}

// --- RandomVariables with core dimensions (ops/random_core.h) ------------------------------------

TEST_CASE("random variables with core dimensions: static shapes, refusals, props") {
  const Var rng = seed0_rng();
  const Var p = make_input(TensorType(DType::Float64, {2, 3}), "p");
  const Var n = make_input(TensorType(DType::Int64, {kUnknownLength, 1}), "n");
  CHECK(random_variable("DirichletRV", rng, nullptr, {p}).second->type() == TensorType(DType::Float64, {2, 3}));
  CHECK(random_variable("DirichletRV", rng, int64_vector_constant({5, 2}), {p}).second->type() ==
        TensorType(DType::Float64, {5, 2, 3}));
  CHECK(random_variable("MultinomialRV", rng, nullptr, {n, p}).second->type() ==
        TensorType(DType::Int64, {kUnknownLength, 2, 3}));
  CHECK(random_variable("CategoricalRV", rng, nullptr, {p}, DType::Int32).second->type() ==
        TensorType(DType::Int32, {2}));
  const Var cov = make_input(TensorType(DType::Float64, {3, 3}), "cov");
  CHECK(random_variable("MvNormalRV", rng, int64_vector_constant({4, 2}), {p, cov}).second->type() ==
        TensorType(DType::Float64, {4, 2, 3}));
  CHECK_THROWS_WITH_AS(random_variable("MvNormalRV", rng, nullptr, {p, make_input(TensorType(DType::Float64, {2, 2}))}),
                       doctest::Contains("square matrix of mean's length 3"), UserError);
  CHECK_THROWS_WITH_AS(random_variable("DirichletRV", rng, int64_vector_constant({}), {p}),
                       doctest::Contains("size length is incompatible"), UserError);
  CHECK_THROWS_WITH_AS(random_variable("DirichletRV", rng, nullptr, {scalar_constant(DType::Float64, 1.0)}),
                       doctest::Contains("core dimension"), UserError);
  CHECK_THROWS_WITH_AS(random_variable("CategoricalRV", rng, nullptr, {p}, DType::Float64),
                       doctest::Contains("must be an integer dtype"), UserError);
  auto mvn = [](const Json& props) {
    const Json vec = tensor_type("float64", {3}), mat = tensor_type("float64", {3, 3});
    return graph_json(2,
                      {var("rng", kRng), var("size", {{"kind", "none"}}), var("mean", vec), var("cov", mat),
                       var("next", kRng), var("x", vec)},
                      {node("MvNormalRV", {"rng", "size", "mean", "cov"}, {"next", "x"}, props)}, {"rng", "mean", "cov"},
                      {"next", "x"});
  };
  CHECK_NOTHROW(load_graph_text(mvn({{"method", "cholesky"}, {"signature", "(n),(n,n)->(n)"}}).dump(), ""));
  // Methods "svd" and "eigh" load and keep their method.
  for (const char* m : {"svd", "eigh"}) {
    const FunctionGraph fg = load_graph_text(mvn({{"method", m}}).dump(), "");
    CHECK(fg.outputs()[1]->owner()->op().props()["method"] == m);
  }
  CHECK(refusal_of(mvn({{"ndims_params", {1, 1}}})).where == "/nodes/0/props/ndims_params");
  CHECK(refusal_of(mvn({{"method", "qr"}})).where == "/nodes/0/props/method");
}

TEST_CASE("random variables with core dimensions: rewrites keep every draw, no gradient") {
  const Var rng = seed0_rng();
  Array pv = Array::empty(DType::Float64, {3});
  const double pvals[3] = {0.2, 0.5, 0.3};
  std::copy(pvals, pvals + 3, pv.data<double>());
  const Var p = make_constant(pv, "p");
  auto [next1, a] = random_variable("CategoricalRV", rng, int64_vector_constant({4}), {p});
  auto [next2, b] = random_variable("CategoricalRV", rng, int64_vector_constant({4}), {p});
  auto [next3, c] = random_variable("DirichletRV", next1, nullptr, {p});
  FunctionGraph fg({}, {a, b, c, next3});
  const std::vector<Array> before = evaluate(fg, {});
  run_pipeline(fg);
  CHECK(count_ops(fg, "CategoricalRV") == 2);
  CHECK(count_ops(fg, "DirichletRV") == 1);
  const std::vector<Array> after = evaluate(fg, {});
  for (std::size_t k = 0; k < before.size(); ++k) CHECK(values_of(before[k]) == values_of(after[k]));
  CHECK(values_of(after[0]) == values_of(after[1]));
  const Var alpha = make_input(TensorType(DType::Float64, {3}), "alpha");
  auto [next, x] = random_variable("DirichletRV", seed0_rng(), nullptr, {alpha});
  CHECK_THROWS_WITH_AS(grad(sum(x), alpha), doctest::Contains("No gradient defined for random variables"), UserError);
}

TEST_CASE("random variables: PermutationRV's signature, static shapes and refusals") {
  const Var rng = seed0_rng();
  const Var none = make_constant(Array::empty(DType::Bool, {0}), {}, TypeKind::None);
  const Var rows = make_input(TensorType(DType::Float32, {3, 5}), "rows");
  auto draw = [&](int core, const std::string& sig, const Var& size, const Var& x) {
    return make_node(std::make_shared<PermutationRandomVariable>(core, sig, x->dtype()), {rng, size, x})->output(1);
  };
  CHECK(draw(1, "(x0)->(x0)", none, rows)->type() == TensorType(DType::Float32, {3, 5}));
  CHECK(draw(2, "(x0,x1)->(x0,x1)", none, rows)->type() == TensorType(DType::Float32, {3, 5}));
  CHECK(draw(1, "(x0)->(x0)", int64_vector_constant({3}), rows)->type() == TensorType(DType::Float32, {3, 5}));
  CHECK(draw(0, "()->(x)", none, int64_constant(4))->type() == TensorType(DType::Int64, {4}));
  // A size longer than x's batch dimensions: PyTensor 3.0's own draws do not fit its type.
  CHECK_THROWS_AS(draw(1, "(x0)->(x0)", int64_vector_constant({2, 3}), rows), NotImplementedError);
  CHECK_THROWS_WITH_AS(draw(1, "(x0)->(x0)", int64_vector_constant({4}), rows), doctest::Contains("does not broadcast"),
                       UserError);
  CHECK_THROWS_WITH_AS(draw(0, "()->(x)", none, rows), doctest::Contains("0-d integer"), UserError);
  auto graph = [](const Json& props) {
    const Json mat = tensor_type("float64", {2, 2});
    return graph_json(2, {var("rng", kRng), var("size", {{"kind", "none"}}), var("x", mat), var("next", kRng), var("y", mat)},
                      {node("PermutationRV", {"rng", "size", "x"}, {"next", "y"}, props)}, {"rng", "x"}, {"next", "y"});
  };
  CHECK_NOTHROW(load_graph_text(graph({{"signature", "(x0,x1)->(x0,x1)"}, {"dtype", "float64"}}).dump(), ""));
  CHECK_NOTHROW(load_graph_text(graph({{"name", "permutation"}}).dump(), ""));
  CHECK(refusal_of(graph({{"signature", "(x0)->(x1)"}})).where == "/nodes/0/props/signature");
}

TEST_CASE("random variables: ChoiceWithoutReplacement's signature, static shapes and refusals") {
  const Var rng = seed0_rng();
  const Var none = make_constant(Array::empty(DType::Bool, {0}), {}, TypeKind::None);
  const Var mat = make_input(TensorType(DType::Int16, {8, 3}), "a");
  const Var p = make_input(TensorType(DType::Float64, {8}), "p");
  auto draw = [&](const std::string& sig, int a_core, bool has_p, int len, VarList in) {
    in.insert(in.begin(), {rng, none});
    return make_node(std::make_shared<ChoiceWithoutReplacement>(sig, a_core, has_p, len, in[2]->dtype()), in)->output(1);
  };
  // A constant core shape gives static lengths; a's other dimensions follow.
  CHECK(draw("(a0,a1),(2)->(s0,s1,a1)", 2, false, 2, {mat, int64_vector_constant({2, 2})})->type() ==
        TensorType(DType::Int16, {2, 2, 3}));
  CHECK(draw("(a0,a1),(a0),(1)->(s0,a1)", 2, true, 1, {mat, p, make_input(TensorType(DType::Int64, {1}))})->type() ==
        TensorType(DType::Int16, {kUnknownLength, 3}));
  CHECK(draw("(),(0)->()", 0, false, 0, {int64_constant(5), int64_vector_constant({})})->type() ==
        TensorType(DType::Int64, {}));
  // Batched a or p: not implemented; a 0-d float a, a core shape of the wrong length: refused.
  const Var mats = make_input(TensorType(DType::Int16, {2, 8, 3}), "as");
  CHECK_THROWS_AS(draw("(a0,a1),(1)->(s0,a1)", 2, false, 1, {mats, int64_vector_constant({2})}), NotImplementedError);
  CHECK_THROWS_AS(draw("(a0),(a0),(1)->(s0)", 1, true, 1,
                       {make_input(TensorType(DType::Float64, {8})), make_input(TensorType(DType::Float64, {2, 8})),
                        int64_vector_constant({2})}),
                  NotImplementedError);
  CHECK_THROWS_WITH_AS(draw("(),(1)->(s0)", 0, false, 1, {make_input(TensorType(DType::Float64, {})), int64_vector_constant({2})}),
                       doctest::Contains("population size"), UserError);
  CHECK_THROWS_WITH_AS(draw("(a0,a1),(1)->(s0,a1)", 2, false, 1, {mat, int64_vector_constant({2, 2})}),
                       doctest::Contains("length 1"), UserError);
  auto graph = [](const Json& props) {
    const Json vec = tensor_type("float64", {5});
    return graph_json(2, {var("rng", kRng), var("size", {{"kind", "none"}}), var("x", vec), var("k", tensor_type("int64", {1})),
                          var("next", kRng), var("y", tensor_type("float64", Json::array({nullptr})))},
                      {node("ChoiceWithoutReplacement", {"rng", "size", "x", "k"}, {"next", "y"}, props)}, {"rng", "x", "k"},
                      {"next", "y"});
  };
  CHECK_NOTHROW(load_graph_text(graph({{"signature", "(a0),(1)->(s0)"}, {"dtype", "float64"}}).dump(), ""));
  CHECK(refusal_of(graph({{"name", "choice_without_replacement"}})).where == "/nodes/0/props/signature");
  CHECK(refusal_of(graph({{"signature", "(a0)->(s0)"}})).where == "/nodes/0/props/signature");
}

TEST_CASE("random variables: a library drawing MvNormalRV links LAPACK, one drawing Dirichlet does not need to") {
  // (The fixture tests load libraries into a process that has LAPACK already, so they would not
  // notice an unlinked potrf.)
  const Var mean = make_input(TensorType(DType::Float64, {3}), "mean");
  const Var cov = make_input(TensorType(DType::Float64, {3, 3}), "cov");
  const Var rng = make_input(rng_type(), "rng");
  auto [next, x] = random_variable("MvNormalRV", rng, nullptr, {mean, cov});
  CHECK(emit(FunctionGraph({rng, mean, cov}, {next, x})).sources.needs_blas);
  auto [next2, y] = random_variable("DirichletRV", rng, nullptr, {mean});
  CHECK_FALSE(emit(FunctionGraph({rng, mean}, {next2, y})).sources.needs_blas);
}
