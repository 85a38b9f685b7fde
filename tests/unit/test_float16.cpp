// float16 (NumPy's half): the conversions every path shares (kiln/runtime/half.hpp), and the
// rule that each operation is computed in float32 and rounded once when stored — in the
// evaluator and in compiled code, fused or not. Values NumPy computes are in the fixtures
// (elemwise/*float16*, reduce/*float16*); these tests pin what the fixtures cannot see.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "compile/compile.h"
#include "compiled.h"
#include "eval/evaluator.h"
#include "io/graph_load.h"
#include "ir/error.h"
#include "kiln/loader.hpp"
#include "kiln/runtime/dtype.hpp"

using namespace kiln;
using namespace kiln::testing;
using kiln_scalar::half;

namespace {

bool is_nan_bits(std::uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }

Array half_vector(std::initializer_list<double> values) {
  Array a = Array::empty(DType::Float16, {static_cast<std::int64_t>(values.size())});
  std::int64_t i = 0;
  for (double v : values) a.data<half>()[i++] = half(v);
  return a;
}

}  // namespace

TEST_CASE("float16: every half converts to float exactly and back to the same bits") {
  for (std::uint32_t b = 0; b <= 0xffffu; ++b) {
    const half h = half::from_bits(static_cast<std::uint16_t>(b));
    const float f = h;
    CAPTURE(b);
    CHECK(half(f).bits == b);
    CHECK(std::isnan(f) == is_nan_bits(h.bits));
    if (!std::isnan(f)) CHECK(half(static_cast<double>(f)).bits == b);
  }
  CHECK(static_cast<float>(half::from_bits(0x3c00)) == 1.0f);
  CHECK(static_cast<float>(half::from_bits(0x7bff)) == 65504.0f);
  CHECK(static_cast<float>(half::from_bits(0x0001)) == std::ldexp(1.0f, -24));
  CHECK(static_cast<float>(half::from_bits(0x8000)) == 0.0f);
  CHECK(std::signbit(static_cast<float>(half::from_bits(0x8000))));
}

TEST_CASE("float16: a conversion rounds once, to nearest, ties to even") {
  // Between every two neighbouring positive finite halves: the midpoint goes to the even one,
  // anything off it to the nearer; doubles carry the midpoints exactly.
  for (std::uint16_t b = 0; b < 0x7bff; ++b) {
    const double lo = static_cast<float>(half::from_bits(b));
    const double hi = static_cast<float>(half::from_bits(static_cast<std::uint16_t>(b + 1)));
    const double mid = (lo + hi) / 2;
    CAPTURE(b);
    CHECK(half(mid).bits == ((b & 1) ? b + 1 : b));
    CHECK(half(std::nextafter(mid, 0.0)).bits == b);
    CHECK(half(std::nextafter(mid, 1e9)).bits == b + 1);
    CHECK(half(-mid).bits == (((b & 1) ? b + 1 : b) | 0x8000));
  }
  CHECK(half(65519.99).bits == 0x7bff);
  CHECK(half(65520.0).bits == 0x7c00);  // the midpoint above the largest half: to infinity
  CHECK(half(1e300).bits == 0x7c00);
  CHECK(half(-1e300).bits == 0xfc00);
  CHECK(half(std::ldexp(1.0, -25)).bits == 0);  // half the smallest subnormal: ties to 0
  CHECK(half(std::ldexp(1.0, -25) * 1.0000001).bits == 1);
  CHECK(half(1e-300).bits == 0);
  CHECK(half(-1e-300).bits == 0x8000);
  // One rounding from double, not two through float: 1 + 2^-11 + 2^-30 is above the tie
  // between 1 and 1 + 2^-10, but float would first round it onto the tie (then to even, 1).
  CHECK(half(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30)).bits == 0x3c01);
  CHECK(half(static_cast<float>(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30))).bits == 0x3c00);
  CHECK(is_nan_bits(half(std::nan("")).bits));
  CHECK(half(std::int64_t{70000}).bits == 0x7c00);
  CHECK(half(std::int64_t{-2049}).bits == half(-2048.0).bits);  // ties to even at 2^11
}

TEST_CASE("compiled float16: each operation rounds as NumPy's float16 loops, fused or not") {
  // s = a * b + c with a = b = 1 + 2^-10 and c = -(1 + 2^-9): a * b = 1 + 2^-9 + 2^-20 rounds
  // to 1 + 2^-9 in float16, so s is 0 (NumPy's np.float16 arithmetic); computed in float32
  // without rounding in between it would be 2^-20. The rewrites fuse both into one Composite;
  // its intermediate must still round. Beside it: float16 * float32 is float32 (NumPy's
  // promotion), a Sum (float32 accumulator), a small constant and one large enough to be
  // stored as a data blob.
  std::string big = "[";
  for (int i = 0; i < 3000; ++i) big += (i ? ", " : "") + std::to_string(i % 7 == 0 ? 0.333 : -1.0 / (i + 1));
  big += "]";
  const FunctionGraph g = load_graph_text(R"({"format": "kiln-graph", "version": 2, "name": "round16",
    "variables": [
      {"id": "a", "type": {"dtype": "float16", "shape": [null]}},
      {"id": "b", "type": {"dtype": "float16", "shape": [null]}},
      {"id": "c", "type": {"dtype": "float16", "shape": [null]}},
      {"id": "w", "type": {"dtype": "float32", "shape": [null]}},
      {"id": "p", "type": {"dtype": "float16", "shape": [null]}},
      {"id": "s", "type": {"dtype": "float16", "shape": [null]}},
      {"id": "sw", "type": {"dtype": "float32", "shape": [null]}},
      {"id": "t", "type": {"dtype": "float16", "shape": []}},
      {"id": "k", "type": {"dtype": "float16", "shape": [3]}, "value": [0.1, -65504, "nan"]},
      {"id": "kbig", "type": {"dtype": "float16", "shape": [3000]}, "value": )" + big + R"(}],
    "nodes": [
      {"op": "Elemwise", "props": {"scalar_op": {"name": "mul"}}, "inputs": ["a", "b"], "outputs": ["p"]},
      {"op": "Elemwise", "props": {"scalar_op": {"name": "add"}}, "inputs": ["p", "c"], "outputs": ["s"]},
      {"op": "Elemwise", "props": {"scalar_op": {"name": "mul"}}, "inputs": ["s", "w"], "outputs": ["sw"]},
      {"op": "Sum", "props": {"axis": null}, "inputs": ["p"], "outputs": ["t"]}],
    "inputs": ["a", "b", "c", "w"], "outputs": ["s", "sw", "t", "k", "kbig"]})",
                                          "");
  const double x = 1.0 + std::ldexp(1.0, -10), y = -(1.0 + std::ldexp(1.0, -9));
  Array w = Array::empty(DType::Float32, {3});
  for (int i = 0; i < 3; ++i) w.data<float>()[i] = 3.0f;
  const std::vector<Array> inputs = {half_vector({x, 2.0, 0.1}), half_vector({x, 3.0, 0.1}), half_vector({y, 1.0, 0.0}), w};
  const std::vector<Array> want = evaluate(g, inputs);
  REQUIRE(want[0].dtype() == DType::Float16);
  CHECK(want[0].data<half>()[0].bits == 0);            // rounded between the two operations
  CHECK(static_cast<float>(want[0].data<half>()[1]) == 7.0f);
  const float tenth = half(0.1);
  CHECK(want[0].data<half>()[2].bits == half(tenth * tenth).bits);
  CHECK(want[1].dtype() == DType::Float32);
  CHECK(want[2].dtype() == DType::Float16);
  CHECK(want[3].data<half>()[0].bits == half(0.1).bits);

  const BuildResult built = build_bundle({{&g, "round16"}}, "float16_rounding");
  Library so(built.library_path);
  for (bool into : {false, true}) {
    CAPTURE(into);
    const CallResult got = call_compiled(so.graph("round16"), inputs, into);
    REQUIRE(got.status == KILN_OK);
    REQUIRE(got.outputs.size() == want.size());
    for (std::size_t k = 0; k < want.size(); ++k) {
      CAPTURE(k);
      REQUIRE(got.outputs[k].dtype() == want[k].dtype());
      REQUIRE(got.outputs[k].nbytes() == want[k].nbytes());
      CHECK(std::memcmp(got.outputs[k].data(), want[k].data(), want[k].nbytes()) == 0);
    }
  }
  const kiln_graph_info& info = so.graph("round16");
  CHECK(info.inputs[0].dtype == KILN_FLOAT16);
  CHECK(info.outputs[1].dtype == KILN_FLOAT32);
}

TEST_CASE("float16: the GPU backends refuse it by name; version-1 files cannot say it") {
  const char* text = R"({"format": "kiln-graph", "version": 2, "name": "h",
    "variables": [{"id": "x", "type": {"dtype": "float16", "shape": [null]}, "name": "x16"},
                  {"id": "y", "type": {"dtype": "float16", "shape": [null]}}],
    "nodes": [{"op": "Elemwise", "props": {"scalar_op": {"name": "exp"}}, "inputs": ["x"], "outputs": ["y"]}],
    "inputs": ["x"], "outputs": ["y"]})";
  const FunctionGraph g = load_graph_text(text, "");
  for (const char* backend : {"opencl", "cuda"}) {
    CAPTURE(backend);
    CompileOptions o = test_compile_options();
    o.backend = backend;
    CHECK_THROWS_WITH_AS(emit_bundle({{&g, "h"}}, "h", o), doctest::Contains("variable \"x16\" is float16"),
                         NotImplementedError);
  }
  std::string v1 = text;
  v1.replace(v1.find("\"version\": 2"), 12, "\"version\": 1");
  CHECK_THROWS_WITH_AS(load_graph_text(v1, ""), doctest::Contains("needs graph format version 2"), UserError);
}
