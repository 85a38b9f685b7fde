// Sizes, offsets and strides never overflow (issue 14, findings 2, 3 and 5): lengths from a
// graph, a .npy file, a JSON number or a caller's tensor that no array could have are refused
// with a status or a located error, in the loader, the .npy reader, the reference evaluator
// and generated code alike.
#include <doctest/doctest.h>

#include <climits>
#include <cstdint>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "api/elementwise.h"
#include "api/graph_builder.h"
#include "compiled.h"
#include "driver/process.h"
#include "eval/evaluator.h"
#include "io/graph_load.h"
#include "ir/error.h"
#include "kiln/runtime/npy.hpp"
#include "ops/alloc.h"
#include "ops/constant.h"
#include "ops/reshape.h"
#include "rewrite/pipeline.h"
#include "v2_test_util.h"

using namespace kiln;
using namespace kiln::testing;
namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

// A graph file's JSON around `variables`, `nodes`, inputs and outputs.
std::string graph_json(const Json& variables, const Json& nodes, const Json& inputs, const Json& outputs) {
  return Json{{"format", "kiln-graph"}, {"version", 1},  {"name", "sizes"},    {"variables", variables},
              {"nodes", nodes},        {"inputs", inputs}, {"outputs", outputs}}
      .dump();
}

// The place and message of the UserError that loading `text` gives ("" when it loads).
std::string load_error(const std::string& text, const std::string& dir = "") {
  try {
    load_graph_text(text, dir, "g.json");
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

// .npy bytes with the given header dict and no data.
std::string npy_with_header(const std::string& dict) {
  std::string header = dict;
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header;
}

struct TempFolder {
  fs::path path;
  explicit TempFolder(const std::string& name) : path(fs::path(KILN_TEST_CACHE_DIR) / ("sizes-" + name)) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempFolder() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

TEST_CASE("security: zero-size shapes with huge lengths are refused, not overflowed") {
  // c_strides multiplied the lengths past the zero: (0, 10^17, 1000) overflowed int64.
  CHECK_THROWS_AS(Array::empty(DType::Float64, {0, 100000000000000000, 1000}), std::length_error);
  CHECK_THROWS_AS(c_strides({0, INT64_MAX, INT64_MAX}), std::length_error);
  CHECK(Array::empty(DType::Float64, {0, 1000, 1000}).size() == 0);
  // A constant "value": [] of such a type: a located error, not an internal one.
  const std::string text = graph_json(
      Json::array({{{"id", "c"}, {"type", {{"dtype", "float64"}, {"shape", {0, 100000000000000000, 1000}}}}, {"value", Json::array()}}}),
      Json::array(), Json::array(), Json::array({"c"}));
  const std::string err = load_error(text);
  CHECK(err.find("/variables/0/value") != std::string::npos);
  CHECK(err.find("array is too big") != std::string::npos);
  // The same shape from a .npy file.
  const std::string npy = npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 100000000000000000, 1000), }");
  CHECK_THROWS_WITH_AS(npy::parse(npy.data(), npy.size()), doctest::Contains("array is too big"), npy::NpyError);
}

TEST_CASE("security: .npy shapes whose size overflows are a located error") {
  const std::string npy = npy_with_header("{'descr': '<f8', 'fortran_order': True, 'shape': (4294967296, 4294967296), }");
  CHECK_THROWS_WITH_AS(npy::parse(npy.data(), npy.size()), doctest::Contains("array is too big"), npy::NpyError);
  TempFolder dir("npy");
  std::ofstream(dir.path / "big.npy", std::ios::binary) << npy;
  const std::string text = graph_json(
      Json::array({{{"id", "c"}, {"type", {{"dtype", "float64"}, {"shape", {nullptr, nullptr}}}}, {"value", {{"npy", "big.npy"}}}}}),
      Json::array(), Json::array(), Json::array({"c"}));
  const std::string err = load_error(text, dir.path.string());
  CHECK(err.find("/variables/0/value/npy") != std::string::npos);
  CHECK(err.find("array is too big") != std::string::npos);
  // kiln run reads inputs as .npy files: an I/O error (4), not an internal one (70).
  std::ofstream(dir.path / "g.json") << graph_json(
      Json::array({{{"id", "x"}, {"type", {{"dtype", "float64"}, {"shape", {nullptr, nullptr}}}}}}), Json::array(),
      Json::array({"x"}), Json::array({"x"}));
  ProcessResult r = run_process({KILN_BINARY, "eval", (dir.path / "g.json").string(), "--input",
                                 "x=" + (dir.path / "big.npy").string()});
  CHECK(r.exit_code == 4);
  CHECK(r.output.find("array is too big") != std::string::npos);
}

TEST_CASE("security: reading a .npy file stops where the array does") {
  TempFolder dir("npy_bounded");
  // Not a .npy file, and endless: refused after its first bytes.
  CHECK_THROWS_WITH_AS(npy::load("/dev/zero"), doctest::Contains("bad magic"), npy::NpyError);
  // A header that announces 8 TB over a 16-byte body: refused as truncated after reading what is
  // there, never allocating what the header claims.
  std::string big = npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,), }");
  std::ofstream(dir.path / "claims.npy", std::ios::binary) << big << std::string(16, '\0');
  CHECK_THROWS_WITH_AS(npy::load((dir.path / "claims.npy").string()),
                       doctest::Contains("expected 8000000000000 bytes, found 16"), npy::NpyError);
  // A version-2 header claiming 4 GiB of header text.
  std::string v2 = "\x93NUMPY\x02";
  v2 += std::string("\x00\xff\xff\xff\xff", 5);
  std::ofstream(dir.path / "header.npy", std::ios::binary) << v2;
  CHECK_THROWS_WITH_AS(npy::load((dir.path / "header.npy").string()), doctest::Contains("longer than 1 MiB"), npy::NpyError);
  // Bytes after the array are not read (a FIFO or a file that goes on): the array is what the
  // header says.
  std::string ok = npy_with_header("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }");
  ok += std::string("\x07\x00\x00\x00\x09\x00\x00\x00", 8) + "trailing bytes";
  std::ofstream(dir.path / "ok.npy", std::ios::binary) << ok;
  Array a = npy::load((dir.path / "ok.npy").string());
  REQUIRE(a.shape() == Shape{2});
  CHECK(a.data<std::int32_t>()[0] == 7);
  CHECK(a.data<std::int32_t>()[1] == 9);
}

TEST_CASE("security: a JSON number out of double's range is a located error") {
  const std::string text = "{\"format\": \"kiln-graph\", \"version\": 1,\n \"variables\": [{\"id\": \"c\", \"type\": "
                           "{\"dtype\": \"float64\", \"shape\": []}, \"value\": 1e309}],\n \"nodes\": [], \"inputs\": [], "
                           "\"outputs\": [\"c\"]}";
  const std::string err = load_error(text);
  CHECK(err.find("g.json:2:") != std::string::npos);
  CHECK(err.find("1e309") != std::string::npos);
  TempFolder dir("json");
  std::ofstream(dir.path / "g.json") << text;
  ProcessResult r = run_process({KILN_BINARY, "validate", (dir.path / "g.json").string()});
  CHECK(r.exit_code == 2);
}

TEST_CASE("security: a base64 constant is sized before anything is allocated") {
  // 2^40 float64 elements would be 8 TiB: refused by the data's length, not by running out of memory.
  const std::string text = graph_json(
      Json::array({{{"id", "c"}, {"type", {{"dtype", "float64"}, {"shape", {int64_t{1} << 40}}}}, {"value", {{"base64", "AAAAAAAAAAA="}}}}}),
      Json::array(), Json::array(), Json::array({"c"}));
  CHECK(load_error(text).find("/variables/0/value/base64") != std::string::npos);
  const std::string huge = graph_json(
      Json::array({{{"id", "c"}, {"type", {{"dtype", "float64"}, {"shape", {int64_t{1} << 62, 4}}}}, {"value", {{"base64", ""}}}}}),
      Json::array(), Json::array(), Json::array({"c"}));
  CHECK(load_error(huge).find("array is too big") != std::string::npos);
}

TEST_CASE("security: Reshape to a shape whose size overflows is a run-time error, not an overflow") {
  // Reshape's type inference multiplied a constant target [2^32, 2^32].
  GraphBuilder g("reshape_overflow");
  auto x = g.input("x", f64, {4});
  g.output(reshape(x, IntList(std::vector<std::int64_t>{int64_t{1} << 32, int64_t{1} << 32})), "y");
  FunctionGraph fg = g.build();
  Array a = Array::zeros(DType::Float64, {4});
  CHECK_THROWS_WITH_AS(evaluate(fg, {a}), doctest::Contains("cannot reshape array of size 4"), RuntimeFailure);
}

TEST_CASE("security: a constant Eye(2^32) is a run-time error, not an internal one") {
  GraphBuilder g("big_eye");
  g.output(eye(int64_constant(int64_t{1} << 32)), "y");
  FunctionGraph fg = g.build();
  CHECK_THROWS_WITH_AS(evaluate(fg, {}), doctest::Contains("array is too big"), RuntimeFailure);
  // Constant folding leaves it to run time instead of failing the compile.
  FunctionGraph rewritten = fg.clone();
  CHECK_NOTHROW(run_pipeline(rewritten));
  CHECK(rewritten.num_nodes() == 1);
}

namespace {

// A DLTensor over caller-chosen (possibly hostile) shape and strides.
struct RawTensor {
  std::vector<int64_t> shape, strides;
  DLTensor dl{};
  RawTensor(void* data, DLDataType dtype, std::vector<int64_t> shape_, std::vector<int64_t> strides_ = {})
      : shape(std::move(shape_)), strides(std::move(strides_)) {
    dl.data = data;
    dl.device = DLDevice{kDLCPU, 0};
    dl.ndim = static_cast<int32_t>(shape.size());
    dl.dtype = dtype;
    dl.shape = shape.data();
    dl.strides = strides.empty() ? nullptr : strides.data();
  }
};

constexpr DLDataType kF64{kDLFloat, 64, 1};
constexpr DLDataType kI64{kDLInt, 64, 1};

struct RawCall {
  int32_t status;
  std::string error;
};

// Calls a graph with raw tensors: "call", or output_shapes + "call_into" into `outs`.
RawCall call_raw(const kiln_graph_info& info, std::vector<DLTensor> ins, bool into = false,
                 std::vector<DLTensor> outs = {}) {
  kiln_context* ctx = info.context_create();
  if (ins.empty()) ins.resize(1);
  int32_t status;
  if (!into) {
    std::vector<DLManagedTensor*> owned(static_cast<std::size_t>(info.num_outputs) + 1, nullptr);
    status = info.call(ctx, ins.data(), owned.data());
    for (auto* m : owned)
      if (m) m->deleter(m);
  } else {
    if (outs.empty()) outs.resize(1);
    status = info.call_into(ctx, ins.data(), outs.data());
  }
  RawCall r{status, info.context_last_error(ctx)};
  info.context_destroy(ctx);
  return r;
}

// Graphs whose sizes come from run-time values, compiled into one library.
const Library& size_graphs() {
  static Library* lib = [] {
    static std::vector<FunctionGraph> graphs;
    {
      GraphBuilder g("alloc_lengths");
      auto n = g.input("n", i64, {}), m = g.input("m", i64, {});
      g.output(alloc(scalar_constant(DType::Float64, 1.0), {n, m}), "y");
      graphs.push_back(g.build());
    }
    {
      GraphBuilder g("eye_lengths");
      auto n = g.input("n", i64, {}), m = g.input("m", i64, {});
      g.output(eye(n, m), "y");
      graphs.push_back(g.build());
    }
    {
      GraphBuilder g("add_matrices");
      auto x = g.input("x", f64, {-1, -1}), y = g.input("y", f64, {1, 1});
      g.output(x + y, "z");
      graphs.push_back(g.build());
    }
    {
      GraphBuilder g("double_vector");
      auto x = g.input("x", f64, {-1});
      g.output(x * 2.0, "y");
      graphs.push_back(g.build());
    }
    NamedGraphs named;
    for (const auto& fg : graphs) named.emplace_back(&fg, fg.name());
    return new Library(build_bundle(named, "security_sizes").library_path);
  }();
  return *lib;
}

}  // namespace

TEST_CASE("security: run-time lengths whose size overflows return a status (compiled)") {
  const Library& lib = size_graphs();
  auto lengths = [](int64_t& n, int64_t& m) {
    return std::vector<DLTensor>{RawTensor(&n, kI64, {}).dl, RawTensor(&m, kI64, {}).dl};
  };
  for (const char* graph : {"alloc_lengths", "eye_lengths"}) {
    CAPTURE(graph);
    const kiln_graph_info& info = lib.graph(graph);
    // Alloc(1.0, 2^31, 2^31) segfaulted; (2^32, 2^32) "succeeded" with 2^64 elements in 64 bytes;
    // Eye(2^31, 2^31) wrote wild.
    for (int64_t len : {int64_t{1} << 31, int64_t{1} << 32, INT64_MAX}) {
      int64_t n = len, m = len;
      for (bool into : {false, true}) {
        std::vector<int64_t> out_shape = {len, len};
        double sink = 0;
        RawTensor out(&sink, kF64, out_shape);
        RawCall r = call_raw(info, lengths(n, m), into, {out.dl});
        CHECK(r.status == KILN_ERR_VALUE);
        CHECK(r.error.find("array is too big") != std::string::npos);
      }
    }
    // Within the limit but beyond memory (8 TiB): out of memory, not a crash.
    int64_t n = int64_t{1} << 20, m = int64_t{1} << 20;
    CHECK(call_raw(info, lengths(n, m)).status == KILN_ERR_ALLOC);
    n = 3;
    m = 4;
    CHECK(call_raw(info, lengths(n, m)).status == KILN_OK);
  }
}

TEST_CASE("security: a broadcast input whose size overflows is refused before any access (compiled)") {
  // One double seen as (2^32, 2^32) through zero strides, added to a (1, 1) matrix: the output
  // would have 2^64 elements.
  const kiln_graph_info& info = size_graphs().graph("add_matrices");
  double one = 1.0, y = 2.0;
  RawTensor x(&one, kF64, {int64_t{1} << 32, int64_t{1} << 32}, {0, 0});
  RawTensor yt(&y, kF64, {1, 1});
  RawCall r = call_raw(info, {x.dl, yt.dl});
  CHECK(r.status == KILN_ERR_INPUT_SHAPE);
  CHECK(r.error.find("array is too big") != std::string::npos);
  // Within the limit the same broadcast input works: (3, 1000) from one double.
  RawTensor small(&one, kF64, {3, 1000}, {0, 0});
  CHECK(call_raw(info, {small.dl, yt.dl}).status == KILN_OK);
}

TEST_CASE("security: input strides that address memory beyond 2^63 bytes are refused (compiled)") {
  const kiln_graph_info& info = size_graphs().graph("double_vector");
  double data[3] = {1, 2, 3};
  // INT64_MAX read out of bounds; INT64_MIN and 2^61 (times 8 bytes) wrapped.
  for (int64_t stride : {INT64_MAX, INT64_MIN, int64_t{1} << 61, -(int64_t{1} << 61), (int64_t{1} << 62) + 1}) {
    CAPTURE(stride);
    RawTensor x(data, kF64, {3}, {stride});
    RawCall r = call_raw(info, {x.dl});
    CHECK(r.status == KILN_ERR_ARGUMENT);
    CHECK(r.error.find("\"x\"") != std::string::npos);
  }
  // A length-1 dimension's stride is never used, whatever it is; negative and zero strides
  // within the buffer work.
  for (int64_t stride : {INT64_MAX, INT64_MIN}) {
    RawTensor x(data, kF64, {1}, {stride});
    CHECK(call_raw(info, {x.dl}).status == KILN_OK);
  }
  RawTensor reversed(data + 2, kF64, {3}, {-1}), broadcast(data, kF64, {3}, {0});
  CHECK(call_raw(info, {reversed.dl}).status == KILN_OK);
  CHECK(call_raw(info, {broadcast.dl}).status == KILN_OK);
  // A byte_offset that wraps the address space.
  RawTensor wrapped(data, kF64, {3});
  wrapped.dl.byte_offset = UINT64_MAX - 7;
  CHECK(call_raw(info, {wrapped.dl}).status == KILN_ERR_ARGUMENT);
}

TEST_CASE("security: call_into refuses an output without a shape pointer (compiled)") {
  // call_into dereferenced a NULL shape pointer.
  const kiln_graph_info& info = size_graphs().graph("double_vector");
  double data[3] = {1, 2, 3}, out[3] = {};
  RawTensor x(data, kF64, {3});
  RawTensor y(out, kF64, {3});
  y.dl.shape = nullptr;
  RawCall r = call_raw(info, {x.dl}, true, {y.dl});
  CHECK(r.status == KILN_ERR_OUTPUT);
  CHECK(r.error.find("no shape") != std::string::npos);
}

namespace {

// A v1 graph of one input `x` (float64 unless said) and the nodes given, whose outputs are
// declared with the types given.
Json declared_graph(const std::string& name, const Json& x_type, const Json& nodes, const Json& out_types) {
  Json g = {{"format", "kiln-graph"}, {"version", 1}, {"name", name}};
  g["variables"] = Json::array({{{"id", "x"}, {"type", x_type}}});
  Json outs = Json::array();
  for (const auto& [id, t] : out_types.items()) {
    g["variables"].push_back({{"id", id}, {"type", t}});
    outs.push_back(id);
  }
  g["nodes"] = nodes;
  g["inputs"] = Json::array({"x"});
  g["outputs"] = outs;
  return g;
}

Json ttype(const std::string& dtype, const Json& shape) { return {{"dtype", dtype}, {"shape", shape}}; }

}  // namespace

TEST_CASE("security: a declared static length no op proves is checked at run time (evaluator and compiled)") {
  std::vector<Json> files;
  // The compile_run fuzzer's finding: Sum{axis=0} and Sum{axis=-0} are one node after merging,
  // and the second declares length 2 where the first declares length 4. The library returned
  // shape (1, 4) for an input (2, 1, 4); the evaluator refused it.
  files.push_back(declared_graph(
      "merged_sums", ttype("int32", {2, nullptr, 4}),
      Json::array({{{"op", "Sum"}, {"props", {{"axis", 0}}}, {"inputs", {"x"}}, {"outputs", {"a"}}},
                   {{"op", "Sum"}, {"props", {{"axis", -0}}}, {"inputs", {"x"}}, {"outputs", {"b"}}}}),
      {{"a", ttype("int64", {nullptr, 4})}, {"b", ttype("int64", {2, nullptr})}}));
  // A view: ExpandDims never allocates, so no allocation could check its declared length.
  files.push_back(declared_graph(
      "view_output", ttype("float64", {nullptr}),
      Json::array({{{"op", "DimShuffle"}, {"props", {{"input_ndim", 1}, {"new_order", {"x", 0}}}},
                    {"inputs", {"x"}}, {"outputs", {"y"}}}}),
      {{"y", ttype("float64", {1, 2})}}));
  // An allocated output.
  files.push_back(declared_graph(
      "elemwise_output", ttype("float64", {nullptr}),
      Json::array({{{"op", "Elemwise"}, {"props", {{"scalar_op", "neg"}}}, {"inputs", {"x"}}, {"outputs", {"y"}}}}),
      {{"y", ttype("float64", {2})}}));
  std::vector<FunctionGraph> graphs;
  for (const Json& f : files) graphs.push_back(load_graph_text(f.dump(), ""));
  NamedGraphs named;
  for (const auto& fg : graphs) named.emplace_back(&fg, fg.name());
  CompileOptions options = test_compile_options();
  options.rewrite = true;  // the merge of the two Sums is what lost the check
  Library lib(compile_bundle(named, "declared_lengths", options).library_path);

  auto f64_input = [](const Shape& shape) {
    Array a = Array::empty(DType::Float64, shape);
    for (std::int64_t i = 0; i < a.size(); ++i) a.data<double>()[i] = 0.25 * static_cast<double>(i);
    return a;
  };
  auto int32_input = [](const Shape& shape) {
    Array a = Array::empty(DType::Int32, shape);
    for (std::int64_t i = 0; i < a.size(); ++i) a.data<std::int32_t>()[i] = static_cast<std::int32_t>(i);
    return a;
  };
  struct Case {
    std::size_t graph;
    Array bad, good;
  };
  const std::vector<Case> cases = {
      {0, int32_input({2, 1, 4}), int32_input({2, 2, 4})},
      {1, f64_input({3}), f64_input({2})},
      {2, f64_input({3}), f64_input({2})},
  };
  for (const Case& c : cases) {
    const FunctionGraph& fg = graphs[c.graph];
    CAPTURE(fg.name());
    CHECK_THROWS_AS(evaluate(fg, {c.bad}), RuntimeFailure);
    for (bool into : {false, true}) {
      CAPTURE(into);
      CallResult bad = call_compiled(lib.graph(fg.name()), {c.bad}, into);
      CHECK(bad.status == KILN_ERR_ASSERT);
      CHECK(bad.error.find("SpecifyShape") != std::string::npos);
      CallResult good = call_compiled(lib.graph(fg.name()), {c.good}, into);
      REQUIRE(good.status == KILN_OK);
      const std::vector<Array> want = evaluate(fg, {c.good});
      REQUIRE(good.outputs.size() == want.size());
      for (std::size_t k = 0; k < want.size(); ++k) {
        CHECK(good.outputs[k].shape() == want[k].shape());
        CHECK(good.outputs[k].dtype() == want[k].dtype());
        CHECK(values_of(good.outputs[k]) == values_of(want[k]));
      }
    }
  }
}
