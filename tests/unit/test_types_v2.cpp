// The non-tensor types of graph format version 2: rng (a NumPy Generator's PCG64 state, carried
// as uint64[6]) and none (PyTensor's NoneConst), their constants, their refusals, and the
// reserved dtype names.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "api/elementwise.h"
#include "eval/evaluator.h"
#include "io/graph_load.h"
#include "io/graph_save.h"
#include "io/type_json.h"
#include "ir/error.h"
#include "print/dprint.h"
#include "v2_test_util.h"

using namespace kiln;
using namespace kiln::testing;
using Json = nlohmann::json;

namespace {

// NumPy's default_rng(42).bit_generator.state (NumPy 2.4).
const char* const kState42 = "274674114334540486603088602300644985544";
const char* const kInc42 = "332724090758049132448979897138935081983";

Json pcg64(const Json& state, const Json& inc, const Json& has_uint32 = 0, const Json& uinteger = 0) {
  return {{"pcg64", {{"state", state}, {"inc", inc}, {"has_uint32", has_uint32}, {"uinteger", uinteger}}}};
}

// An rng constant `c` and an rng input `r`, both outputs.
Json rng_graph(const Json& value, const Json& type = {{"kind", "rng"}, {"bit_generator", "PCG64"}}) {
  return graph_json(2, {var("c", type, value), var("r", {{"kind", "rng"}})}, {}, {"r"}, {"c", "r"});
}

}  // namespace

TEST_CASE("rng type: constants parse the 128-bit decimals exactly into the six words") {
  FunctionGraph fg = load_graph_text(rng_graph(pcg64(kState42, kInc42, 1, 4294967295u)).dump(), "");
  const Var& c = fg.outputs()[0];
  CHECK(c->type().kind == TypeKind::Rng);
  CHECK(c->type() == rng_type());
  CHECK(c->type().str() == "RandomGeneratorType");
  const std::uint64_t* w = c->value().data<std::uint64_t>();
  const unsigned __int128 state = (static_cast<unsigned __int128>(w[0]) << 64) | w[1];
  const unsigned __int128 inc = (static_cast<unsigned __int128>(w[2]) << 64) | w[3];
  CHECK(uint128_decimal(state) == kState42);
  CHECK(uint128_decimal(inc) == kInc42);
  // kiln.h's layout: {state_hi, state_lo, inc_hi, inc_lo, has_uint32, uinteger} (Python's hex()).
  CHECK(w[0] == 0xcea44f6798798f2aull);
  CHECK(w[1] == 0xacbc7c9d68860ac8ull);
  CHECK(w[2] == 0xfa505436c9a8416eull);
  CHECK(w[3] == 0x66caf2e28d25abffull);
  CHECK(w[4] == 1);
  CHECK(w[5] == 4294967295u);
  // The extremes of 128 bits.
  FunctionGraph ext = load_graph_text(rng_graph(pcg64("340282366920938463463374607431768211455", "0")).dump(), "");
  const std::uint64_t* e = ext.outputs()[0]->value().data<std::uint64_t>();
  CHECK(e[0] == ~0ull);
  CHECK(e[1] == ~0ull);
  CHECK(e[2] == 0);
  CHECK(e[3] == 0);
  // Round trip: the saved value is the same text; the file is version 2.
  std::string text = save_graph_text(fg);
  CHECK(text.find("\"version\": 2") != std::string::npos);
  CHECK(text.find(std::string("\"state\":\"") + kState42 + "\"") != std::string::npos);
  FunctionGraph again = load_graph_text(text, "");
  CHECK(save_graph_text(again) == text);
  CHECK(dprint(fg) == "Generator(PCG64) [id A]\n<RandomGeneratorType> [id B]\n");
}

TEST_CASE("rng type: an rng input passes through the evaluator as its six words") {
  FunctionGraph fg = load_graph_text(rng_graph(pcg64("1", "3")).dump(), "");
  Array words = Array::empty(DType::UInt64, {6});
  for (int i = 0; i < 6; ++i) words.data<std::uint64_t>()[i] = static_cast<std::uint64_t>(i + 10);
  auto out = evaluate(fg, {words});
  CHECK(values_of(out[1]) == std::vector<double>{10, 11, 12, 13, 14, 15});
  CHECK(values_of(out[0]) == std::vector<double>{0, 1, 0, 3, 0, 0});
  CHECK_THROWS_WITH(evaluate(fg, {Array::zeros(DType::UInt64, {5})}), doctest::Contains("is an rng"));
  CHECK_THROWS_WITH(evaluate(fg, {Array::zeros(DType::Int64, {6})}), doctest::Contains("is an rng"));
}

TEST_CASE("rng type: malformed types and values are refused at their place") {
  struct Case {
    std::string what;
    Json graph;
    std::string pointer;
    bool not_implemented = false;
  };
  std::vector<Case> cases = {
      {"not an object", rng_graph(Json::array({1, 2})), "/variables/0/value"},
      {"no pcg64", rng_graph(Json::object({{"mt19937", 1}})), "/variables/0/value"},
      {"an extra key", rng_graph(Json{{"pcg64", pcg64("1", "1")["pcg64"]}, {"x", 1}}), "/variables/0/value/x"},
      {"pcg64 not an object", rng_graph(Json{{"pcg64", 3}}), "/variables/0/value/pcg64"},
      {"state a number", rng_graph(pcg64(12, "1")), "/variables/0/value/pcg64/state"},
      {"state signed", rng_graph(pcg64("-1", "1")), "/variables/0/value/pcg64/state"},
      {"state with a plus", rng_graph(pcg64("+1", "1")), "/variables/0/value/pcg64/state"},
      {"state empty", rng_graph(pcg64("", "1")), "/variables/0/value/pcg64/state"},
      {"state with spaces", rng_graph(pcg64(" 1", "1")), "/variables/0/value/pcg64/state"},
      {"state hex", rng_graph(pcg64("0x1f", "1")), "/variables/0/value/pcg64/state"},
      {"state 2**128", rng_graph(pcg64("340282366920938463463374607431768211456", "1")),
       "/variables/0/value/pcg64/state"},
      {"inc with a fraction", rng_graph(pcg64("1", "1.5")), "/variables/0/value/pcg64/inc"},
      {"has_uint32 2", rng_graph(pcg64("1", "1", 2)), "/variables/0/value/pcg64/has_uint32"},
      {"has_uint32 true", rng_graph(pcg64("1", "1", true)), "/variables/0/value/pcg64/has_uint32"},
      {"uinteger 2**32", rng_graph(pcg64("1", "1", 0, 4294967296ull)), "/variables/0/value/pcg64/uinteger"},
      {"uinteger negative", rng_graph(pcg64("1", "1", 0, -1)), "/variables/0/value/pcg64/uinteger"},
      {"missing inc", rng_graph(Json{{"pcg64", {{"state", "1"}, {"has_uint32", 0}, {"uinteger", 0}}}}),
       "/variables/0/value/pcg64"},
      {"no value", graph_json(2, {var("c", {{"kind", "rng"}})}, {}, {}, {"c"}), "/variables/0"},
      {"a tensor value", rng_graph(Json::array({1, 2, 3, 4, 5, 6})), "/variables/0/value"},
      {"unknown kind", rng_graph(pcg64("1", "1"), {{"kind", "tensor"}}), "/variables/0/type/kind"},
      {"kind not a string", rng_graph(pcg64("1", "1"), {{"kind", 1}}), "/variables/0/type/kind"},
      {"an extra type key", rng_graph(pcg64("1", "1"), {{"kind", "rng"}, {"dtype", "uint64"}}),
       "/variables/0/type/dtype"},
      {"bit_generator not a string", rng_graph(pcg64("1", "1"), {{"kind", "rng"}, {"bit_generator", 64}}),
       "/variables/0/type/bit_generator"},
      {"another bit generator", rng_graph(pcg64("1", "1"), {{"kind", "rng"}, {"bit_generator", "Philox"}}),
       "/variables/0/type/bit_generator", true},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    Refusal r = refusal_of(c.graph);
    CHECK(r.where == c.pointer);
    CHECK(r.not_implemented == c.not_implemented);
  }
}

TEST_CASE("none type: NoneConst constants, and where a none may not go") {
  const Json none = {{"kind", "none"}};
  const Json mat = tensor_type("float64", {nullptr, nullptr});
  // SpecifyShape with a NoneConst length: unchecked, read as version 1's -1.
  Json g = graph_json(2,
                      {var("x", mat), var("n", none, nullptr), var("m", none), var("three", tensor_type("int64", Json::array()), 3),
                       var("y", tensor_type("float64", {nullptr, 3}))},
                      {node("SpecifyShape", {"x", "n", "three"}, {"y"})}, {"x"}, {"y"});
  FunctionGraph fg = load_graph_text(g.dump(), "");
  const Apply* spec = fg.outputs()[0]->owner();
  CHECK(spec->input(1)->is_constant());
  CHECK(spec->input(1)->value().data<std::int64_t>()[0] == -1);
  CHECK(evaluate(fg, {Array::zeros(DType::Float64, {5, 3})})[0].shape() == Shape{5, 3});
  CHECK_THROWS(evaluate(fg, {Array::zeros(DType::Float64, {5, 4})}));
  CHECK(graph_format_version(fg) == 1);  // the none is gone

  Var n = none_constant();
  CHECK(n->type().str() == "NoneTypeT");
  CHECK(n->type().kind == TypeKind::None);
  Refusal r = refusal_of(graph_json(2, {var("n", none)}, {}, {"n"}, {}));
  CHECK(r.where == "/inputs/0");
  r = refusal_of(graph_json(2, {var("n", none)}, {}, {}, {"n"}));
  CHECK(r.where == "/outputs/0");
  r = refusal_of(graph_json(2, {var("n", none, 0)}, {}, {}, {}));
  CHECK(r.where == "/variables/0/value");
  r = refusal_of(graph_json(2, {var("n", {{"kind", "none"}, {"bit_generator", "PCG64"}})}, {}, {}, {}));
  CHECK(r.where == "/variables/0/type/bit_generator");
  r = refusal_of(graph_json(2, {var("x", mat), var("n", none)}, {node("exp", {"x"}, {"n"})}, {"x"}, {}));
  CHECK(r.where == "/nodes/0/outputs/0");
}

TEST_CASE("rng and none: tensor ops refuse them as inputs, naming the input") {
  Json g = graph_json(2, {var("r", {{"kind", "rng"}}), var("y", tensor_type("uint64", {6}))},
                      {node("exp", {"r"}, {"y"})}, {"r"}, {"y"});
  Refusal r = refusal_of(g);
  CHECK(r.where == "/nodes/0");
  CHECK(r.message.find("is an rng (RandomGeneratorType), not a tensor") != std::string::npos);
  g = graph_json(2, {var("n", {{"kind", "none"}}), var("y", tensor_type("bool", {0}))}, {node("exp", {"n"}, {"y"})}, {},
                 {"y"});
  r = refusal_of(g);
  CHECK(r.where == "/nodes/0");
  CHECK(r.message.find("is a none (NoneTypeT), not a tensor") != std::string::npos);
  // The C++ API too.
  Var rng = make_input(rng_type(), "rng");
  CHECK_THROWS_WITH_AS(exp(rng), doctest::Contains("not a tensor"), UserError);
}

TEST_CASE("complex dtypes load in version 2; an op that does not take them refuses them at its node") {
  for (const std::string dt : {"complex64", "complex128"}) {
    CAPTURE(dt);
    CHECK_NOTHROW(load_graph_text(graph_json(2, {var("x", tensor_type(dt, {2}))}, {}, {"x"}, {"x"}).dump(), ""));
    Json alloc = graph_json(2, {var("x", tensor_type("int64", Json::array())), var("y", tensor_type(dt, {2}))},
                            {node("AllocEmpty", {"x"}, {"y"}, {{"dtype", dt}})}, {"x"}, {"y"});
    Refusal r = refusal_of(alloc);
    CHECK(r.where == "/nodes/0");
    CHECK(r.not_implemented);
    CHECK(r.message.find("does not compute on complex numbers") != std::string::npos);
  }
  // A cast scalar op to complex, and a Composite with a complex inner variable, load.
  const Json vec = tensor_type("float64", {2}), cvec = tensor_type("complex128", {2});
  CHECK_NOTHROW(load_graph_text(graph_json(2, {var("x", vec), var("y", cvec)},
                                           {node("Elemwise", {"x"}, {"y"}, {{"scalar_op", {{"name", "cast"}, {"dtype", "complex128"}}}})},
                                           {"x"}, {"y"}).dump(), ""));
  const Json composite = {
      {"name", "Composite"},
      {"variables", Json::array({{{"id", "a"}, {"dtype", "complex128"}}, {{"id", "b"}, {"dtype", "complex128"}}})},
      {"inputs", Json::array({"a"})},
      {"nodes", Json::array({{{"op", "exp"}, {"inputs", Json::array({"a"})}, {"outputs", Json::array({"b"})}}})},
      {"outputs", Json::array({"b"})}};
  CHECK_NOTHROW(load_graph_text(graph_json(2, {var("x", cvec), var("y", cvec)},
                                           {node("Elemwise", {"x"}, {"y"}, {{"scalar_op", composite}})}, {"x"}, {"y"}).dump(), ""));
  Refusal r;
  r = refusal_of(graph_json(2, {var("x", tensor_type("float128", {2}))}, {}, {"x"}, {"x"}));
  CHECK(r.where == "/variables/0/type/dtype");
  CHECK(!r.not_implemented);  // unknown, not reserved
}
