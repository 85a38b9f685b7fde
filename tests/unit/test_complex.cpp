// complex64 and complex128: NumPy's complex arithmetic (kiln/runtime/complex.hpp) shared by the
// evaluator and compiled code, graph-file values as [real, imag] pairs, promotion, and the ops
// that refuse complex operands by name. Values NumPy computes are in the fixtures
// (tests/fixtures/cases/complex); these tests pin what the fixtures cannot see.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <string>

#include "compiled.h"
#include "grad/grad.h"
#include "eval/evaluator.h"
#include "io/graph_load.h"
#include "io/graph_save.h"
#include "ir/error.h"
#include "kiln/loader.hpp"
#include "kiln/runtime/dtype.hpp"
#include "ops/array_util.h"
#include "ops/scalar/scalar_op.h"

using namespace kiln;
using namespace kiln::testing;
using c64 = std::complex<float>;
using c128 = std::complex<double>;

namespace {

bool same_bits(c128 a, c128 b) { return std::memcmp(&a, &b, sizeof a) == 0; }

std::string unary_graph(const std::string& dtype, const std::string& op, const std::string& out_dtype) {
  return R"({"format": "kiln-graph", "version": 2, "name": "u",
    "variables": [{"id": "x", "type": {"dtype": ")" + dtype + R"(", "shape": [null]}},
                  {"id": "y", "type": {"dtype": ")" + out_dtype + R"(", "shape": [null]}}],
    "nodes": [{"op": "Elemwise", "props": {"scalar_op": {"name": ")" + op + R"("}}, "inputs": ["x"], "outputs": ["y"]}],
    "inputs": ["x"], "outputs": ["y"]})";
}

}  // namespace

TEST_CASE("complex: the dtypes, their ABI codes, DLPack types and promotion") {
  CHECK(dtype_from_name("complex64") == DType::Complex64);
  CHECK(dtype_size(DType::Complex64) == 8);
  CHECK(dtype_size(DType::Complex128) == 16);
  CHECK(static_cast<int>(DType::Complex64) == KILN_COMPLEX64);
  CHECK(static_cast<int>(DType::Complex128) == KILN_COMPLEX128);
  CHECK(to_dlpack(DType::Complex128).code == kDLComplex);
  CHECK(to_dlpack(DType::Complex128).bits == 128);
  CHECK(from_dlpack(DLDataType{kDLComplex, 64, 1}) == DType::Complex64);
  // NumPy's promotion: the complex type whose parts hold both operands.
  CHECK(upcast(DType::Complex64, DType::Float32) == DType::Complex64);
  CHECK(upcast(DType::Complex64, DType::Float64) == DType::Complex128);
  CHECK(upcast(DType::Complex64, DType::Int8) == DType::Complex64);
  CHECK(upcast(DType::Complex64, DType::Int32) == DType::Complex128);
  CHECK(upcast(DType::Complex64, DType::Float16) == DType::Complex64);
  CHECK(upcast(DType::Bool, DType::Complex128) == DType::Complex128);
  // PyTensor's output types for the parts and for complex().
  CHECK(ScalarOp(ScalarOpId::Abs).output_dtypes({DType::Complex64})[0] == DType::Float32);
  CHECK(ScalarOp(ScalarOpId::Real).output_dtypes({DType::Complex128})[0] == DType::Float64);
  CHECK(ScalarOp(ScalarOpId::Imag).output_dtypes({DType::Float32})[0] == DType::Float32);
  CHECK(ScalarOp(ScalarOpId::Angle).output_dtypes({DType::Complex64})[0] == DType::Float64);
  CHECK(ScalarOp(ScalarOpId::Complex).output_dtypes({DType::Float32, DType::Float32})[0] == DType::Complex64);
  CHECK(ScalarOp(ScalarOpId::Complex).output_dtypes({DType::Float32, DType::Int32})[0] == DType::Complex128);
  CHECK(ScalarOp(ScalarOpId::Exp).output_dtypes({DType::Complex64})[0] == DType::Complex64);
  CHECK(ScalarOp(ScalarOpId::TrueDiv).output_dtypes({DType::Complex64, DType::Int64})[0] == DType::Complex128);
  CHECK_THROWS_WITH_AS(ScalarOp(ScalarOpId::Lt).output_dtypes({DType::Complex64, DType::Complex64}),
                       doctest::Contains("does not take complex numbers"), NotImplementedError);
  CHECK_THROWS_WITH_AS(ScalarOp::cast(DType::Float64).output_dtypes({DType::Complex128}),
                       doctest::Contains("ambiguous"), std::invalid_argument);
}

TEST_CASE("complex: NumPy's products, quotients and powers, not C99 Annex G's") {
  using kiln_scalar::c_div;
  using kiln_scalar::c_mul;
  using kiln_scalar::c_pow;
  const double inf = std::numeric_limits<double>::infinity();
  // The textbook product: inf * (1+1j) has inf - 0*inf... NumPy gives (nan+infj) for
  // (1e200+1e200j)**2 (its binary powering multiplies), where Annex G would recover infinities.
  const c128 big(1e200, 1e200);
  const c128 sq = c_mul(big, big);
  CHECK(std::isnan(sq.real()));
  CHECK(sq.imag() == inf);
  CHECK(same_bits(c_pow(big, c128(2, 0)), sq));
  // Smith's quotient: a divisor with a huge part does not overflow.
  const c128 q = c_div(c128(1, 1), c128(1e300, 1e-300));
  CHECK(q.real() == doctest::Approx(1e-300).epsilon(1e-12));
  CHECK(q.imag() == doctest::Approx(1e-300).epsilon(1e-12));
  // Division by zero: a complex inf or nan (NumPy's in1r/|0|, in1i/|0|).
  const c128 z = c_div(c128(1, -1), c128(0, 0));
  CHECK(z.real() == inf);
  CHECK(z.imag() == -inf);
  // Powers: 0**0 is 1, 0 to a positive real power 0, to anything else nan; integer powers by
  // products; the rest C99's cpow.
  CHECK(same_bits(c_pow(c128(0, 0), c128(0, 0)), c128(1, 0)));
  CHECK(same_bits(c_pow(c128(0, 0), c128(2.5, 0)), c128(0, 0)));
  CHECK(std::isnan(c_pow(c128(0, 0), c128(2, 1)).real()));
  CHECK(std::isnan(c_pow(c128(0, 0), c128(-1, 0)).imag()));
  CHECK(same_bits(c_pow(c128(1, 2), c128(3, 0)), c_mul(c128(1, 2), c_mul(c128(1, 2), c128(1, 2)))));
  const c128 inv = c_pow(c128(1, 2), c128(-1, 0));
  CHECK(same_bits(inv, c_div(c128(1, 0), c128(1, 2))));
  const c128 p = c_pow(c128(2, 3), c128(1.5, 0.5));
  CHECK(p.real() == doctest::Approx(-2.1700148014795935).epsilon(1e-15));
  CHECK(p.imag() == doctest::Approx(3.58240177914234).epsilon(1e-15));
}

TEST_CASE("complex: values in graph files are [real, imag] pairs and survive saving") {
  const FunctionGraph g = load_graph_text(R"({"format": "kiln-graph", "version": 2, "name": "k",
    "variables": [{"id": "k", "type": {"dtype": "complex128", "shape": [3]}, "value": [[1, -2], ["nan", "inf"], 0.5]},
                  {"id": "s", "type": {"dtype": "complex64", "shape": []}, "value": [0, -0.0]}],
    "nodes": [], "inputs": [], "outputs": ["k", "s"]})",
                                          "");
  const std::vector<Array> out = evaluate(g, {});
  REQUIRE(out[0].dtype() == DType::Complex128);
  CHECK(same_bits(out[0].data<c128>()[0], c128(1, -2)));
  CHECK(std::isnan(out[0].data<c128>()[1].real()));
  CHECK(out[0].data<c128>()[1].imag() == std::numeric_limits<double>::infinity());
  CHECK(same_bits(out[0].data<c128>()[2], c128(0.5, 0)));  // a real number: imag 0
  CHECK(std::signbit(out[1].data<c64>()[0].imag()));
  const FunctionGraph again = load_graph_text(save_graph_text(g), "");
  const std::vector<Array> out2 = evaluate(again, {});
  CHECK(std::memcmp(out2[0].data(), out[0].data(), out[0].nbytes()) == 0);
  CHECK(std::memcmp(out2[1].data(), out[1].data(), out[1].nbytes()) == 0);

  CHECK_THROWS_WITH_AS(load_graph_text(R"({"format": "kiln-graph", "version": 2, "name": "k",
    "variables": [{"id": "k", "type": {"dtype": "complex64", "shape": [1]}, "value": [[1, 2, 3]]}],
    "nodes": [], "inputs": [], "outputs": ["k"]})",
                                       ""),
                       doctest::Contains("[real, imag] pair"), UserError);
  CHECK_THROWS_WITH_AS(load_graph_text(R"({"format": "kiln-graph", "version": 1, "name": "k",
    "variables": [{"id": "x", "type": {"dtype": "complex64", "shape": [1]}}],
    "nodes": [], "inputs": ["x"], "outputs": ["x"]})",
                                       ""),
                       doctest::Contains("needs graph format version 2"), UserError);
}

TEST_CASE("complex: ops that do not compute on complex numbers refuse them by name") {
  for (const auto& [op, props] : std::vector<std::pair<std::string, std::string>>{
           {"Max", R"({"axis": null})"}, {"Argmax", R"({"axis": null})"}, {"SortOp", R"({"kind": "quicksort"})"}}) {
    CAPTURE(op);
    const std::string extra = op == "SortOp" ? R"(, "a")" : "";
    const std::string text = R"({"format": "kiln-graph", "version": 2, "name": "r",
      "variables": [{"id": "x", "type": {"dtype": "complex64", "shape": [null]}},
                    {"id": "a", "type": {"dtype": "int64", "shape": []}, "value": 0},
                    {"id": "y", "type": {"dtype": "complex64", "shape": [null]}}],
      "nodes": [{"op": ")" + op + R"(", "props": )" + props + R"(, "inputs": ["x")" + extra + R"(], "outputs": ["y"]}],
      "inputs": ["x"], "outputs": ["y"]})";
    CHECK_THROWS_AS(load_graph_text(text, ""), NotImplementedError);
  }
  CHECK_THROWS_WITH_AS(load_graph_text(unary_graph("complex64", "floor", "complex64"), ""),
                       doctest::Contains("does not take complex numbers"), UserError);
}

TEST_CASE("compiled complex: the same bits as the evaluator, fused or not, and the GPU backends refuse it") {
  // z = exp(x) * y / (x + 1j) - conj(y), its parts, |z|, angle, x**y, a complex Sum (complex128
  // accumulator) and Prod, a Dot through CBLAS (zgemv) and complex(re, im) from two floats.
  const FunctionGraph g = load_graph_text(R"({"format": "kiln-graph", "version": 2, "name": "cz",
    "variables": [
      {"id": "x", "type": {"dtype": "complex64", "shape": [null]}},
      {"id": "y", "type": {"dtype": "complex64", "shape": [null]}},
      {"id": "m", "type": {"dtype": "complex128", "shape": [null, null]}},
      {"id": "re", "type": {"dtype": "float32", "shape": [null]}},
      {"id": "i1", "type": {"dtype": "complex64", "shape": [1]}, "value": [[0, 1]]},
      {"id": "e", "type": {"dtype": "complex64", "shape": [null]}},
      {"id": "p", "type": {"dtype": "complex64", "shape": [null]}},
      {"id": "d", "type": {"dtype": "complex64", "shape": [null]}},
      {"id": "q", "type": {"dtype": "complex64", "shape": [null]}},
      {"id": "cy", "type": {"dtype": "complex64", "shape": [null]}},
      {"id": "z", "type": {"dtype": "complex64", "shape": [null]}},
      {"id": "zr", "type": {"dtype": "float32", "shape": [null]}},
      {"id": "zi", "type": {"dtype": "float32", "shape": [null]}},
      {"id": "za", "type": {"dtype": "float32", "shape": [null]}},
      {"id": "zt", "type": {"dtype": "float64", "shape": [null]}},
      {"id": "pw", "type": {"dtype": "complex64", "shape": [null]}},
      {"id": "s", "type": {"dtype": "complex64", "shape": []}},
      {"id": "pr", "type": {"dtype": "complex64", "shape": []}},
      {"id": "mx", "type": {"dtype": "complex128", "shape": [null]}},
      {"id": "mk", "type": {"dtype": "complex64", "shape": [null]}}],
    "nodes": [
      {"op": "Elemwise", "props": {"scalar_op": "exp"}, "inputs": ["x"], "outputs": ["e"]},
      {"op": "Elemwise", "props": {"scalar_op": "mul"}, "inputs": ["e", "y"], "outputs": ["p"]},
      {"op": "Elemwise", "props": {"scalar_op": "add"}, "inputs": ["x", "i1"], "outputs": ["d"]},
      {"op": "Elemwise", "props": {"scalar_op": "true_div"}, "inputs": ["p", "d"], "outputs": ["q"]},
      {"op": "Elemwise", "props": {"scalar_op": "conj"}, "inputs": ["y"], "outputs": ["cy"]},
      {"op": "Elemwise", "props": {"scalar_op": "sub"}, "inputs": ["q", "cy"], "outputs": ["z"]},
      {"op": "Elemwise", "props": {"scalar_op": "real"}, "inputs": ["z"], "outputs": ["zr"]},
      {"op": "Elemwise", "props": {"scalar_op": "imag"}, "inputs": ["z"], "outputs": ["zi"]},
      {"op": "Elemwise", "props": {"scalar_op": "abs"}, "inputs": ["z"], "outputs": ["za"]},
      {"op": "Elemwise", "props": {"scalar_op": "angle"}, "inputs": ["z"], "outputs": ["zt"]},
      {"op": "Elemwise", "props": {"scalar_op": "pow"}, "inputs": ["x", "y"], "outputs": ["pw"]},
      {"op": "Sum", "props": {"axis": null}, "inputs": ["z"], "outputs": ["s"]},
      {"op": "Prod", "props": {"axis": null}, "inputs": ["x"], "outputs": ["pr"]},
      {"op": "Dot", "props": {}, "inputs": ["m", "x"], "outputs": ["mx"]},
      {"op": "Elemwise", "props": {"scalar_op": "complex"}, "inputs": ["re", "re"], "outputs": ["mk"]}],
    "inputs": ["x", "y", "m", "re"], "outputs": ["z", "zr", "zi", "za", "zt", "pw", "s", "pr", "mx", "mk"]})",
                                          "");
  const int n = 37;
  Array x = Array::empty(DType::Complex64, {n}), y = Array::empty(DType::Complex64, {n});
  Array m = Array::empty(DType::Complex128, {3, n}), re = Array::empty(DType::Float32, {n});
  for (int i = 0; i < n; ++i) {
    x.data<c64>()[i] = c64(0.05f * static_cast<float>(i) - 0.9f, 0.3f - 0.02f * static_cast<float>(i));
    y.data<c64>()[i] = c64(std::sin(static_cast<float>(i)), std::cos(0.7f * static_cast<float>(i)));
    re.data<float>()[i] = static_cast<float>(i) / 3.0f;
  }
  x.data<c64>()[3] = c64(0, 0);  // 0 ** y
  y.data<c64>()[5] = c64(2, 0);  // an integer power
  for (int k = 0; k < 3 * n; ++k) m.data<c128>()[k] = c128(k % 5 - 2.0, 0.25 * (k % 3));
  const std::vector<Array> inputs = {x, y, m, re};
  const std::vector<Array> want = evaluate(g, inputs);
  CHECK(same_bits(want[9].data<c64>()[4], c64(4.0f / 3.0f, 4.0f / 3.0f)));

  for (bool rewrite : {false, true}) {
    CAPTURE(rewrite);
    CompileOptions o = test_compile_options();
    o.rewrite = rewrite;
    const BuildResult built = compile_bundle({{&g, "cz"}}, rewrite ? "complex_fused" : "complex_plain", o);
    Library so(built.library_path);
    const CallResult got = call_compiled(so.graph("cz"), inputs);
    REQUIRE(got.status == KILN_OK);
    REQUIRE(got.outputs.size() == want.size());
    for (std::size_t k = 0; k < want.size(); ++k) {
      CAPTURE(k);
      REQUIRE(got.outputs[k].dtype() == want[k].dtype());
      REQUIRE(got.outputs[k].nbytes() == want[k].nbytes());
      if (k == 6 || k == 7 || k == 8) {
        // A Sum, a Prod and a Dot fold in another order (lanes; BLAS): equal to rounding.
        const Array a = astype(got.outputs[k], DType::Complex128), b = astype(want[k], DType::Complex128);
        for (std::int64_t i = 0; i < a.size(); ++i) {
          CHECK(a.data<c128>()[i].real() == doctest::Approx(b.data<c128>()[i].real()).epsilon(1e-6));
          CHECK(a.data<c128>()[i].imag() == doctest::Approx(b.data<c128>()[i].imag()).epsilon(1e-6));
        }
      } else {
        CHECK(std::memcmp(got.outputs[k].data(), want[k].data(), want[k].nbytes()) == 0);
      }
    }
    CHECK(so.graph("cz").inputs[0].dtype == KILN_COMPLEX64);
    CHECK(so.graph("cz").inputs[2].dtype == KILN_COMPLEX128);
  }
  for (const char* backend : {"opencl", "cuda"}) {
    CAPTURE(backend);
    CompileOptions o = test_compile_options();
    o.backend = backend;
    CHECK_THROWS_WITH_AS(emit_bundle({{&g, "cz"}}, "cz", o), doctest::Contains("complex64"), NotImplementedError);
  }
}

TEST_CASE("Eig: A v = v diag(w) with unit-norm columns, evaluator and compiled; NaN is refused as NumPy does") {
  const FunctionGraph g = load_graph_text(R"({"format": "kiln-graph", "version": 2, "name": "eig",
    "variables": [{"id": "a", "type": {"dtype": "float64", "shape": [null, null]}},
                  {"id": "w", "type": {"dtype": "complex128", "shape": [null]}},
                  {"id": "v", "type": {"dtype": "complex128", "shape": [null, null]}}],
    "nodes": [{"op": "Eig", "props": {}, "inputs": ["a"], "outputs": ["w", "v"]}],
    "inputs": ["a"], "outputs": ["w", "v"]})",
                                          "");
  const int n = 7;
  Array a = Array::empty(DType::Float64, {n, n});
  // A skew-symmetric part gives complex-conjugate eigenvalue pairs.
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) a.data<double>()[i * n + j] = std::sin(1.7 * (i * n + j) + 0.3) + 0.8 * (i - j);
  const auto check_decomposition = [&](const std::vector<Array>& out) {
    REQUIRE(out[0].dtype() == DType::Complex128);
    const c128* w = out[0].data<c128>();
    const c128* v = out[1].data<c128>();
    bool complex_pair = false;
    for (int j = 0; j < n; ++j) {
      complex_pair = complex_pair || w[j].imag() != 0;
      double norm = 0;
      for (int i = 0; i < n; ++i) {
        c128 av = 0;
        for (int k = 0; k < n; ++k) av += a.data<double>()[i * n + k] * v[k * n + j];
        CHECK(std::abs(av - w[j] * v[i * n + j]) < 1e-12);
        norm += std::norm(v[i * n + j]);
      }
      CHECK(norm == doctest::Approx(1.0).epsilon(1e-13));
    }
    CHECK(complex_pair);  // this matrix has complex-conjugate eigenvalue pairs
  };
  const std::vector<Array> want = evaluate(g, {a});
  check_decomposition(want);
  const BuildResult built = build_bundle({{&g, "eig"}}, "complex_eig");
  Library so(built.library_path);
  const CallResult got = call_compiled(so.graph("eig"), {a});
  REQUIRE(got.status == KILN_OK);
  check_decomposition(got.outputs);
  for (int k = 0; k < 2; ++k) CHECK(std::memcmp(got.outputs[k].data(), want[k].data(), want[k].nbytes()) == 0);

  a.data<double>()[3] = std::nan("");
  CHECK_THROWS_WITH(evaluate(g, {a}), doctest::Contains("must not contain infs or NaNs"));
  const CallResult bad = call_compiled(so.graph("eig"), {a});
  CHECK(bad.status == KILN_ERR_LINALG);
  CHECK(bad.error.find("must not contain infs or NaNs") != std::string::npos);
}

TEST_CASE("complex: a gradient through complex values is not implemented, by name") {
  const FunctionGraph g = load_graph_text(R"({"format": "kiln-graph", "version": 2, "name": "gz",
    "variables": [{"id": "x", "type": {"dtype": "float64", "shape": [null]}},
                  {"id": "z", "type": {"dtype": "complex128", "shape": [null]}},
                  {"id": "r", "type": {"dtype": "float64", "shape": [null]}},
                  {"id": "s", "type": {"dtype": "float64", "shape": []}}],
    "nodes": [{"op": "Elemwise", "props": {"scalar_op": "complex"}, "inputs": ["x", "x"], "outputs": ["z"]},
              {"op": "Elemwise", "props": {"scalar_op": "abs"}, "inputs": ["z"], "outputs": ["r"]},
              {"op": "Sum", "props": {"axis": null}, "inputs": ["r"], "outputs": ["s"]}],
    "inputs": ["x"], "outputs": ["s"]})",
                                          "");
  const Var s = g.outputs()[0];
  const Var x = g.inputs()[0];
  CHECK_THROWS_WITH_AS(grad(s, x), doctest::Contains("gradients through complex values are not implemented"),
                       NotImplementedError);
}
