// The special-function scalar ops (api/special.h): PyTensor's dtype rules and refusals, the
// loader, closed forms and identities the reference evaluator must meet (independent of the
// SciPy fixtures), and the C++ backend's embedding of the special-function pieces — only into
// sources that call them, each with the pieces it needs.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "api/elementwise.h"
#include "api/special.h"
#include "compile/compile.h"
#include "codegen/cpp/special_math_select.h"
#include "eval/evaluator.h"
#include "io/graph_load.h"
#include "io/graph_save.h"
#include "ir/error.h"
#include "kiln/runtime/special/bessel_ik.hpp"
#include "kiln/runtime/special/bessel_j.hpp"
#include "kiln/runtime/special/hyp2f1.hpp"
#include "kiln/runtime/special/incomplete_beta_grad.hpp"
#include "kiln/runtime/special/incomplete_beta_inverse.hpp"
#include "kiln/runtime/special/incomplete_gamma_grad.hpp"
#include "kiln/runtime/special/incomplete_gamma_inverse.hpp"
#include "kiln/runtime/special/owens_t.hpp"
#include "kiln/runtime/special/polygamma.hpp"
#include "ops/constant.h"
#include "rewrite/pipeline.h"

using namespace kiln;

namespace {

DType out_dtype(ScalarOpId id, std::vector<DType> in) { return ScalarOp(id).output_dtypes(in)[0]; }

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The generated source of a one-output graph f(x) over float64 vectors.
std::string source_of(const std::function<Var(const Var&)>& f) {
  const Var x = make_input(TensorType(DType::Float64, {kUnknownLength}), "x");
  FunctionGraph fg({x}, {f(x)});
  CompileOptions options;
  options.rewrite = false;
  options.name = "g";
  return emit(std::move(fg), options).sources.source;
}

}  // namespace

TEST_CASE("special functions: PyTensor's output dtypes") {
  using D = DType;
  CHECK(out_dtype(ScalarOpId::Erfcinv, {D::Int8}) == D::Float32);
  CHECK(out_dtype(ScalarOpId::I0, {D::Int32}) == D::Float64);
  CHECK(out_dtype(ScalarOpId::GammaInc, {D::Int8, D::Float32}) == D::Float32);
  CHECK(out_dtype(ScalarOpId::GammaInc, {D::Int64, D::Float32}) == D::Float64);
  CHECK(out_dtype(ScalarOpId::Jv, {D::Int16, D::UInt16}) == D::Float32);
  CHECK(out_dtype(ScalarOpId::BetaInc, {D::Int8, D::Int8, D::Float32}) == D::Float32);
  CHECK(out_dtype(ScalarOpId::BetaInc, {D::Float32, D::Float32, D::Int32}) == D::Float64);
  CHECK(out_dtype(ScalarOpId::Hyp2F1, {D::Bool, D::Int8, D::UInt8, D::Float32}) == D::Float32);
  // polygamma: the order must be discrete; the output follows x alone.
  CHECK(out_dtype(ScalarOpId::PolyGamma, {D::Int64, D::Float32}) == D::Float32);
  CHECK(out_dtype(ScalarOpId::PolyGamma, {D::Bool, D::Int16}) == D::Float32);
  CHECK(out_dtype(ScalarOpId::PolyGamma, {D::UInt8, D::Int64}) == D::Float64);
  CHECK_THROWS_WITH_AS(out_dtype(ScalarOpId::PolyGamma, {D::Float64, D::Float64}),
                       doctest::Contains("discrete"), std::invalid_argument);
  CHECK(ScalarOp(ScalarOpId::PolyGamma).operand_dtypes({D::Int8, D::Float32}) ==
        std::vector<DType>{D::Int64, D::Float32});
}

TEST_CASE("special functions: the loader reads them and names a wrong arity") {
  const std::string graph = R"({"format": "kiln-graph", "version": 2, "name": "g",
    "variables": [{"id": "a", "type": {"dtype": "float64", "shape": [null]}},
                  {"id": "y", "type": {"dtype": "float64", "shape": [null]}}],
    "nodes": [{"op": "Elemwise", "props": {"scalar_op": "OP"}, "inputs": [INPUTS], "outputs": ["y"]}],
    "inputs": ["a"], "outputs": ["y"]})";
  auto with = [&](const std::string& op, const std::string& inputs) {
    std::string text = graph;
    text.replace(text.find("OP"), 2, op);
    text.replace(text.find("INPUTS"), 6, inputs);
    return text;
  };
  for (const char* op : {"erfcinv", "ndtri_exp", "i0", "i1"}) CHECK_NOTHROW(load_graph_text(with(op, R"("a")"), ""));
  for (const char* op : {"gammainc", "gammaincc", "gammaincinv", "gammainccinv", "ive", "kve", "jv", "owens_t"})
    CHECK_NOTHROW(load_graph_text(with(op, R"("a", "a")"), ""));
  for (const char* op : {"betainc", "betaincinv"}) CHECK_NOTHROW(load_graph_text(with(op, R"("a", "a", "a")"), ""));
  CHECK_NOTHROW(load_graph_text(with("hyp2f1", R"("a", "a", "a", "a")"), ""));
  try {
    load_graph_text(with("hyp2f1", R"("a", "a", "a")"), "");
    FAIL("hyp2f1 with three inputs loaded");
  } catch (const UserError& e) {
    CHECK(contains(e.what(), "hyp2f1 takes 4 inputs"));
    CHECK(contains(e.what(), "/nodes/0"));
  }
  // PyTensor 2.26 has them too: a version-1 file may hold them.
  {
    std::string v1 = with("gammainc", R"("a", "a")");
    v1.replace(v1.find("\"version\": 2"), 12, "\"version\": 1");
    CHECK_NOTHROW(load_graph_text(v1, ""));
  }
  // polygamma of a float order is refused at load time, naming the node.
  try {
    load_graph_text(with("polygamma", R"("a", "a")"), "");
    FAIL("polygamma with a float order loaded");
  } catch (const UserError& e) {
    CHECK(contains(e.what(), "discrete"));
  }
}

TEST_CASE("special functions: a graph holding one saves as version 1 and loads again, fused too") {
  const Var x = make_input(TensorType(DType::Float64, {kUnknownLength}), "x");
  FunctionGraph plain({x}, {exp(x) + 1});
  CHECK(graph_format_version(plain) == 1);
  FunctionGraph special({x}, {exp(betainc(x, 2, x)) + 1});
  CHECK(graph_format_version(special) == 1);
  const std::string text = save_graph_text(special);
  FunctionGraph again = load_graph_text(text, "");
  CHECK(save_graph_text(again) == text);
  // The same graph fused into a Composite.
  FunctionGraph fused = special.clone();
  PipelineOptions options;
  run_pipeline(fused, options);
  bool composite = false;
  for (Apply* node : fused.toposort()) composite = composite || contains(node->op().str(), "Composite");
  REQUIRE(composite);
  CHECK(graph_format_version(fused) == 1);
  CHECK_NOTHROW(load_graph_text(save_graph_text(fused), ""));
}

TEST_CASE("special functions: closed forms and identities") {
  namespace ks = kiln_special;
  using doctest::Approx;
  for (double x : {0.01, 0.5, 2.0, 7.5, 30.0}) {
    CHECK(ks::gammainc(1.0, x) == Approx(-std::expm1(-x)).epsilon(4e-16));
    CHECK(ks::gammaincc(1.0, x) == Approx(std::exp(-x)).epsilon(4e-16));
    CHECK(ks::gammainc(0.5, x) == Approx(std::erf(std::sqrt(x))).epsilon(4e-16));
    CHECK(ks::gammainccinv(1.0, std::exp(-x)) == Approx(x).epsilon(4e-16));
    CHECK(ks::kve(0.5, x) == Approx(std::sqrt(kiln_special::kPi / (2 * x))).epsilon(8e-16));  // 3 ulps at 0.5
    CHECK(ks::ive(0.5, x) == Approx(std::sqrt(2 / (kiln_special::kPi * x)) * -std::expm1(-2 * x) / 2).epsilon(6e-16));
    CHECK(ks::jv(0.5, x) == Approx(std::sqrt(2 / (kiln_special::kPi * x)) * std::sin(x)).epsilon(1e-15));
    CHECK(ks::erfcinv(std::erfc(x / 10)) == Approx(x / 10).epsilon(4e-16));
  }
  for (double x : {1e-8, 0.1, 0.5, 0.9, 0.999}) {
    CHECK(ks::betainc(1.0, 1.0, x) == Approx(x).epsilon(2e-16));
    CHECK(ks::betainc(2.0, 1.0, x) == Approx(x * x).epsilon(4e-16));
    // I_z(1, 3) = 1 - (1 - z)^3 = y: z = 1 - (1 - y)^(1/3), with y exact (x as y), so the check
    // is well conditioned near y = 1.
    CHECK(ks::betaincinv(1.0, 3.0, x) == Approx(-std::expm1(std::log1p(-x) / 3)).epsilon(1e-15));
    CHECK(ks::hyp2f1(1.0, 1.0, 2.0, x) == Approx(-std::log1p(-x) / x).epsilon(1e-15));
    CHECK(ks::hyp2f1(1.0, 1.0, 2.0, -x * 50) == Approx(std::log1p(x * 50) / (x * 50)).epsilon(1e-15));
    CHECK(ks::hyp2f1(0.5, 1.0, 1.5, -x * x) == Approx(std::atan(x) / x).epsilon(1e-15));
  }
  // Owen's T: T(h, 1) = Phi(h) (1 - Phi(h)) / 2, T(0, a) = atan(a) / (2 pi), odd in a.
  for (double h : {0.3, 1.0, 4.0}) {
    const double q = 0.5 * std::erfc(h / std::sqrt(2.0));
    CHECK(ks::owens_t(h, 1.0) == Approx(0.5 * q * (1 - q)).epsilon(1e-15));
    CHECK(ks::owens_t(-h, -1.0) == -ks::owens_t(h, 1.0));
  }
  CHECK(ks::owens_t(0.0, 3.0) == Approx(std::atan(3.0) / (2 * kiln_special::kPi)).epsilon(1e-15));
  CHECK(ks::polygamma(1, 1.0) == Approx(kiln_special::kPi * kiln_special::kPi / 6).epsilon(4e-16));
  CHECK(ks::polygamma(3, 1.0) == Approx(std::pow(kiln_special::kPi, 4) / 15).epsilon(4e-16));  // 6 zeta(4)
  CHECK(ks::polygamma(2, 0.5) == Approx(-14 * 1.2020569031595942854).epsilon(4e-16));           // -2 * 7 zeta(3)
  CHECK(ks::ndtri_exp(std::log(0.5)) == Approx(0.0).epsilon(1e-15));
  CHECK(ks::ndtri_exp(std::log(0.975)) == Approx(1.959963984540054).epsilon(4e-16));
  CHECK(ks::i0(0.0) == 1.0);
  CHECK(ks::i1(-2.0) == -ks::i1(2.0));
  // Derivative ops: d/da betainc(a, 1, x) = x^a log x; d/dc hyp2f1(1, 1, c, 0) = 0.
  CHECK(ks::betainc_grad_a(2.0, 1.0, 0.3) == Approx(0.09 * std::log(0.3)).epsilon(1e-14));
  CHECK(ks::gammainc_grad_k(1.0, 0.0) == 0.0);
}

TEST_CASE("special functions: evaluated through Elemwise with broadcasting and float32") {
  const Var k = make_input(TensorType(DType::Float32, {2, 1}), "k");
  const Var x = make_input(TensorType(DType::Float32, {3}), "x");
  FunctionGraph fg({k, x}, {gammainc(k, x), polygamma(2, x)});
  Array kv = Array::empty(DType::Float32, {2, 1}), xv = Array::empty(DType::Float32, {3});
  kv.data<float>()[0] = 1.0f;
  kv.data<float>()[1] = 0.5f;
  for (int i = 0; i < 3; ++i) xv.data<float>()[i] = 0.5f * (i + 1);
  const std::vector<Array> out = evaluate(fg, {kv, xv});
  REQUIRE(out[0].dtype() == DType::Float32);
  REQUIRE(out[0].shape() == Shape{2, 3});
  for (int i = 0; i < 3; ++i) {
    const double xi = 0.5 * (i + 1);
    CHECK(out[0].data<float>()[i] == static_cast<float>(-std::expm1(-xi)));
    CHECK(out[0].data<float>()[3 + i] == static_cast<float>(std::erf(std::sqrt(xi))));
    CHECK(out[1].data<float>()[i] == static_cast<float>(kiln_special::polygamma(2, xi)));
  }
}

TEST_CASE("special functions: generated code embeds only the pieces it calls") {
  // No special function: nothing of runtime/include/kiln/runtime/special/ is embedded.
  const std::string plain = source_of([](const Var& x) { return exp(x) + gammaln(x); });
  CHECK(!contains(plain, "kiln_special"));
  // gammainc: its piece and common.hpp, not the Bessel functions, hyp2f1 or the Duals.
  const std::string gamma = source_of([](const Var& x) { return gammainc(x, x); });
  CHECK(contains(gamma, "namespace igam_detail"));
  CHECK(!contains(gamma, "namespace bessel_detail"));
  CHECK(!contains(gamma, "namespace hyp2f1_detail"));
  CHECK(!contains(gamma, "struct Dual"));
  // Each piece once, after what it includes.
  CHECK(gamma.find("constexpr double kEulerGamma") < gamma.find("namespace igam_detail"));
  CHECK(gamma.find("constexpr double kEulerGamma") == gamma.rfind("constexpr double kEulerGamma"));
  // gammaincinv brings the normal quantile; betainc_grad_a the Duals.
  CHECK(contains(source_of([](const Var& x) { return gammaincinv(x, x); }), "namespace ninv_detail"));
  CHECK(contains(source_of([](const Var& x) { return betainc_grad_a(x, x, x); }), "struct Dual"));
  const std::vector<std::string> pieces = special_math_pieces({"kiln_special::jv(a, b) + kiln_special::i0(c)"});
  REQUIRE(pieces.size() == 4);
  CHECK(contains(pieces[0], "special/common.hpp"));
  CHECK(contains(pieces[1], "special/bessel_common.hpp"));
  CHECK(special_math_pieces({"std::exp(x)"}).empty());
}
