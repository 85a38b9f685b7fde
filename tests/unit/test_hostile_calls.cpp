// Hostile calls through the C ABI (issue 14): bad dtypes, ranks, shapes, NULLs, strides,
// devices, byte offsets, alignment and contexts; out-of-range indices, failing asserts, lengths
// whose size overflows; hostile caller-provided outputs. Every case must return its status
// with a message, never crash, and never touch memory outside the tensors it was given: every
// buffer sits flush against a PROT_NONE page with sentinel bytes before it, and inputs are
// read-only, so an overrun, an underrun or a write into an input fails the test.
#include <doctest/doctest.h>

#include <climits>
#include <fstream>
#include <functional>
#include <memory>

#include <sys/resource.h>
#include <unistd.h>

#include "api/elementwise.h"
#include "api/graph_builder.h"
#include "compiled.h"
#include "guarded_buffer.h"
#include "io/graph_load.h"
#include "ops/advanced_subtensor.h"
#include "ops/alloc.h"
#include "ops/assert.h"
#include "ops/constant.h"
#include "ops/dot.h"
#include "ops/reduce.h"
#include "ops/reshape.h"
#include "ops/subtensor.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

// A tensor over a guarded buffer, with its own shape and strides arrays for mutations.
struct GuardedTensor {
  std::shared_ptr<GuardedBuffer> buffer;
  std::vector<int64_t> shape, strides;
  DLTensor dl{};

  GuardedTensor(DLDataType dtype, std::vector<int64_t> shape_) : shape(std::move(shape_)) {
    int64_t n = 1;
    for (auto d : shape) n *= d;
    buffer = std::make_shared<GuardedBuffer>(static_cast<std::size_t>(n) * dtype.bits / 8);
    dl.data = buffer->data();
    dl.device = DLDevice{kDLCPU, 0};
    dl.ndim = static_cast<int32_t>(shape.size());
    dl.dtype = dtype;
    dl.shape = shape.data();
  }
  GuardedTensor(const GuardedTensor& o) : buffer(o.buffer), shape(o.shape), strides(o.strides), dl(o.dl) { repoint(); }
  GuardedTensor& operator=(const GuardedTensor& o) {
    buffer = o.buffer;
    shape = o.shape;
    strides = o.strides;
    dl = o.dl;
    repoint();
    return *this;
  }
  void repoint() {
    if (dl.shape) dl.shape = shape.data();
    if (dl.strides) dl.strides = strides.data();
  }
  void set_strides(std::vector<int64_t> s) {
    strides = std::move(s);
    dl.strides = strides.data();
  }
  template <typename T>
  T* as() const {
    return buffer->as<T>();
  }
};

constexpr DLDataType kF64{kDLFloat, 64, 1};
constexpr DLDataType kI64{kDLInt, 64, 1};
constexpr DLDataType kBool{6, 8, 1};

// The graphs under attack, in one library.
struct HostileGraph {
  std::string name;
  std::function<std::vector<GuardedTensor>()> valid_inputs;  ///< a call that succeeds
};

std::vector<HostileGraph> hostile_graphs() {
  auto filled = [](DLDataType t, std::vector<int64_t> shape, double value) {
    GuardedTensor g(t, std::move(shape));
    int64_t n = 1;
    for (auto d : g.shape) n *= d;
    for (int64_t i = 0; i < n; ++i) {
      if (t.code == kDLFloat) g.as<double>()[i] = value + static_cast<double>(i);
      if (t.code == kDLInt) g.as<int64_t>()[i] = static_cast<int64_t>(value) + i;
      if (t.code == 6) g.as<unsigned char>()[i] = 1;
    }
    return g;
  };
  return {
      {"elem", [=] { return std::vector<GuardedTensor>{filled(kF64, {2, 3}, 0.5), filled(kF64, {3}, 1.0)}; }},
      {"index", [=] { return std::vector<GuardedTensor>{filled(kF64, {4}, 1), filled(kI64, {}, 2), filled(kI64, {3}, 0)}; }},
      {"check", [=] { return std::vector<GuardedTensor>{filled(kF64, {3}, 1), filled(kBool, {3}, 1)}; }},
      {"lengths", [=] { return std::vector<GuardedTensor>{filled(kI64, {}, 2), filled(kF64, {6}, 1)}; }},
      {"dot", [=] { return std::vector<GuardedTensor>{filled(kF64, {2, 3}, 1), filled(kF64, {3}, 1)}; }},
  };
}

const Library& hostile_library() {
  static Library* lib = [] {
    static std::vector<FunctionGraph> graphs;
    {
      GraphBuilder g("elem");
      auto x = g.input("x", f64, {-1, 3}), y = g.input("y", f64, {3});
      auto z = exp(x) + y;
      g.output(z, "z");
      g.output(sum(z, std::vector<int>{1}), "s");
      graphs.push_back(g.build());
    }
    {
      GraphBuilder g("index");
      auto x = g.input("x", f64, {-1}), i = g.input("i", i64, {}), idx = g.input("idx", i64, {-1});
      g.output(at(x, i), "xi");
      g.output(take(x, idx), "taken");
      graphs.push_back(g.build());
    }
    {
      GraphBuilder g("check");
      auto x = g.input("x", f64, {-1}), c = g.input("c", boolean, {-1});
      g.output(check_and_raise(x * 2.0, {c}, "c must hold", "ValueError"), "y");
      graphs.push_back(g.build());
    }
    {
      GraphBuilder g("lengths");
      auto n = g.input("n", i64, {}), v = g.input("v", f64, {-1});
      g.output(reshape(v, IntList({IntArg(n), IntArg(-1)})), "r");
      g.output(alloc(scalar_constant(DType::Float64, 1.0), {n, n}), "a");
      graphs.push_back(g.build());
    }
    {
      GraphBuilder g("dot");
      auto a = g.input("A", f64, {-1, -1}), b = g.input("b", f64, {-1});
      g.output(dot(a, b), "Ab");
      graphs.push_back(g.build());
    }
    NamedGraphs named;
    for (const auto& fg : graphs) named.emplace_back(&fg, fg.name());
    return new Library(build_bundle(named, "hostile").library_path);
  }();
  return *lib;
}

enum class Mode { Call, Shapes, Into };

struct Outcome {
  int32_t status;
  std::string error;
};

// Calls `info` in `mode` with `inputs` (made read-only), into outputs allocated from the shapes
// the graph reports (guarded too) when it can; checks every buffer's sentinels afterwards.
Outcome call_guarded(const kiln_graph_info& info, std::vector<GuardedTensor>& inputs, Mode mode,
                     const std::function<void(std::vector<GuardedTensor>&)>& mutate_outputs = {}) {
  std::vector<DLTensor> dl;
  for (auto& t : inputs) {
    t.buffer->read_only();
    dl.push_back(t.dl);
  }
  kiln_context* ctx = info.context_create();
  REQUIRE(ctx);
  Outcome out{KILN_OK, ""};
  std::vector<GuardedTensor> outputs;
  if (mode == Mode::Call) {
    std::vector<DLManagedTensor*> owned(static_cast<std::size_t>(info.num_outputs), nullptr);
    out.status = info.call(ctx, dl.data(), owned.data());
    for (auto* m : owned) {
      if (out.status != KILN_OK) CHECK(m == nullptr);  // nothing handed over on failure
      if (m) m->deleter(m);
    }
  } else {
    GuardedBuffer shapes(64 * sizeof(int64_t));
    out.status = info.output_shapes(ctx, dl.data(), shapes.as<int64_t>());
    CHECK(shapes.intact());
    if (mode == Mode::Into && out.status == KILN_OK) {
      int64_t pos = 0;
      for (int32_t k = 0; k < info.num_outputs; ++k) {
        const int nd = info.outputs[k].ndim;
        outputs.emplace_back(kF64, std::vector<int64_t>(shapes.as<int64_t>() + pos, shapes.as<int64_t>() + pos + nd));
        pos += nd;
      }
      if (mutate_outputs) mutate_outputs(outputs);
      std::vector<DLTensor> out_dl;
      for (auto& o : outputs) out_dl.push_back(o.dl);
      out.status = info.call_into(ctx, dl.data(), out_dl.data());
    }
  }
  out.error = info.context_last_error(ctx);
  info.context_destroy(ctx);
  for (const auto& t : inputs) CHECK(t.buffer->intact());
  for (const auto& t : outputs) CHECK(t.buffer->intact());
  if (out.status != KILN_OK) CHECK(!out.error.empty());
  return out;
}

// One way to spoil one input, and the status it must give (-1: the input cannot take it).
struct InputAttack {
  std::string what;
  std::function<int32_t(GuardedTensor&)> apply;
};

std::vector<InputAttack> input_attacks() {
  return {
      {"dtype code", [](GuardedTensor& t) -> int32_t { t.dl.dtype.code = 99; return KILN_ERR_INPUT_DTYPE; }},
      {"dtype bits", [](GuardedTensor& t) -> int32_t { t.dl.dtype.bits = 7; return KILN_ERR_INPUT_DTYPE; }},
      {"dtype lanes", [](GuardedTensor& t) -> int32_t { t.dl.dtype.lanes = 4; return KILN_ERR_INPUT_DTYPE; }},
      {"rank +1", [](GuardedTensor& t) -> int32_t { t.dl.ndim += 1; return KILN_ERR_INPUT_RANK; }},
      {"rank -1", [](GuardedTensor& t) -> int32_t { t.dl.ndim = -1; return KILN_ERR_INPUT_RANK; }},
      {"rank 1000", [](GuardedTensor& t) -> int32_t { t.dl.ndim = 1000; return KILN_ERR_INPUT_RANK; }},
      {"device cuda", [](GuardedTensor& t) -> int32_t { t.dl.device = DLDevice{kDLCUDA, 0}; return KILN_ERR_DEVICE; }},
      {"device garbage", [](GuardedTensor& t) -> int32_t { t.dl.device = DLDevice{static_cast<DLDeviceType>(12345), -3}; return KILN_ERR_DEVICE; }},
      {"shape null", [](GuardedTensor& t) -> int32_t {
         if (t.dl.ndim == 0) return -1;
         t.dl.shape = nullptr;
         return KILN_ERR_ARGUMENT;
       }},
      {"data null", [](GuardedTensor& t) -> int32_t { t.dl.data = nullptr; return KILN_ERR_ARGUMENT; }},
      {"negative length", [](GuardedTensor& t) -> int32_t {
         if (t.dl.ndim == 0) return -1;
         t.shape[0] = -1;
         return KILN_ERR_INPUT_SHAPE;
       }},
      // Lengths no array of this item size can have (NumPy's limit); a smaller lie about the
      // caller's own buffer cannot be detected by anyone.
      {"length INT64_MAX", [](GuardedTensor& t) -> int32_t {
         if (t.dl.ndim == 0 || t.dl.dtype.bits < 16) return -1;
         t.shape[0] = INT64_MAX;
         return KILN_ERR_INPUT_SHAPE;
       }},
      {"length 2^61", [](GuardedTensor& t) -> int32_t {
         if (t.dl.ndim == 0 || t.dl.dtype.bits < 32) return -1;
         t.shape[0] = int64_t{1} << 61;
         return KILN_ERR_INPUT_SHAPE;
       }},
      {"stride INT64_MAX", [](GuardedTensor& t) -> int32_t {
         if (t.dl.ndim == 0 || t.shape[0] < 2) return -1;
         std::vector<int64_t> s(t.shape.size(), 1);
         s[0] = INT64_MAX;
         t.set_strides(s);
         return KILN_ERR_ARGUMENT;
       }},
      {"stride INT64_MIN", [](GuardedTensor& t) -> int32_t {
         if (t.dl.ndim == 0 || t.shape[0] < 2) return -1;
         std::vector<int64_t> s(t.shape.size(), 1);
         s[0] = INT64_MIN;
         t.set_strides(s);
         return KILN_ERR_ARGUMENT;
       }},
      {"stride 2^61", [](GuardedTensor& t) -> int32_t {  // 2^64 bytes apart for 8-byte elements
         if (t.dl.ndim == 0 || t.shape.back() < 2 || t.dl.dtype.bits != 64) return -1;
         std::vector<int64_t> s(t.shape.size(), 1);
         s.back() = int64_t{1} << 61;
         t.set_strides(s);
         return KILN_ERR_ARGUMENT;
       }},
      {"byte_offset wraps", [](GuardedTensor& t) -> int32_t { t.dl.byte_offset = UINT64_MAX - 3; return KILN_ERR_ARGUMENT; }},
      {"misaligned", [](GuardedTensor& t) -> int32_t {
         if (t.dl.dtype.bits == 8) return -1;
         t.dl.byte_offset = 1;
         return KILN_ERR_ARGUMENT;
       }},
  };
}

}  // namespace

TEST_CASE("hostile calls: every spoiled input gives its status and touches nothing (compiled)") {
  const Library& lib = hostile_library();
  for (const HostileGraph& g : hostile_graphs()) {
    CAPTURE(g.name);
    const kiln_graph_info& info = lib.graph(g.name);
    for (Mode mode : {Mode::Call, Mode::Shapes, Mode::Into}) {
      std::vector<GuardedTensor> ok = g.valid_inputs();
      REQUIRE(call_guarded(info, ok, mode).status == KILN_OK);
    }
    const std::size_t n_inputs = g.valid_inputs().size();
    for (std::size_t k = 0; k < n_inputs; ++k) {
      for (const InputAttack& attack : input_attacks()) {
        for (Mode mode : {Mode::Call, Mode::Shapes, Mode::Into}) {
          CAPTURE(k);
          CAPTURE(attack.what);
          CAPTURE(static_cast<int>(mode));
          std::vector<GuardedTensor> inputs = g.valid_inputs();
          const int32_t expected = attack.apply(inputs[k]);
          if (expected < 0) continue;
          Outcome r = call_guarded(info, inputs, mode);
          CHECK(r.status == expected);
        }
      }
    }
  }
}

TEST_CASE("hostile calls: values that ask too much fail with their status (compiled)") {
  const Library& lib = hostile_library();
  struct ValueAttack {
    std::string graph, what;
    std::function<void(std::vector<GuardedTensor>&)> apply;
    int32_t expected;
    int32_t or_else = -1;  ///< another status the call may fail with first
  };
  const std::vector<ValueAttack> attacks = {
      {"index", "index past the end", [](auto& in) { *in[1].template as<int64_t>() = 4; }, KILN_ERR_INDEX},
      {"index", "index before the start", [](auto& in) { *in[1].template as<int64_t>() = -5; }, KILN_ERR_INDEX},
      {"index", "index INT64_MIN", [](auto& in) { *in[1].template as<int64_t>() = INT64_MIN; }, KILN_ERR_INDEX},
      {"index", "index INT64_MAX", [](auto& in) { *in[1].template as<int64_t>() = INT64_MAX; }, KILN_ERR_INDEX},
      {"index", "vector index past the end", [](auto& in) { in[2].template as<int64_t>()[1] = 9; }, KILN_ERR_INDEX},
      {"index", "vector index INT64_MIN", [](auto& in) { in[2].template as<int64_t>()[2] = INT64_MIN; }, KILN_ERR_INDEX},
      {"check", "a false condition", [](auto& in) { in[1].template as<unsigned char>()[2] = 0; }, KILN_ERR_ASSERT},
      {"check", "a bool byte of 2", [](auto& in) { in[1].template as<unsigned char>()[1] = 2; }, KILN_ERR_VALUE},
      {"check", "a bool byte of 255", [](auto& in) { in[1].template as<unsigned char>()[0] = 255; }, KILN_ERR_VALUE},
      // Reshape finds a second -1; alloc() guards its lengths with a CheckAndRaise (PyTensor's
      // way), which output_shapes meets first.
      {"lengths", "a negative length", [](auto& in) { *in[0].template as<int64_t>() = -1; }, KILN_ERR_VALUE,
       KILN_ERR_ASSERT},
      {"lengths", "a length that does not divide", [](auto& in) { *in[0].template as<int64_t>() = 4; }, KILN_ERR_VALUE},
      {"lengths", "a zero length", [](auto& in) { *in[0].template as<int64_t>() = 0; }, KILN_ERR_VALUE},
      {"lengths", "INT64_MIN", [](auto& in) { *in[0].template as<int64_t>() = INT64_MIN; }, KILN_ERR_VALUE,
       KILN_ERR_ASSERT},
      {"dot", "inner lengths differ", [](auto& in) { in[1] = GuardedTensor(kF64, {4}); }, KILN_ERR_BROADCAST},
      {"elem", "a static length differs", [](auto& in) { in[1] = GuardedTensor(kF64, {4}); }, KILN_ERR_INPUT_SHAPE},
      {"elem", "rows do not broadcast", [](auto& in) { in[0] = GuardedTensor(kF64, {2, 4}); }, KILN_ERR_INPUT_SHAPE},
  };
  for (const ValueAttack& a : attacks) {
    CAPTURE(a.graph);
    CAPTURE(a.what);
    const kiln_graph_info& info = lib.graph(a.graph);
    for (Mode mode : {Mode::Call, Mode::Into}) {
      std::vector<GuardedTensor> inputs;
      for (const auto& g : hostile_graphs())
        if (g.name == a.graph) inputs = g.valid_inputs();
      a.apply(inputs);
      Outcome r = call_guarded(info, inputs, mode);
      // Shape errors may already show in output_shapes (call_into's first step); values only
      // the graph reads are found by the call.
      INFO(r.error);
      CHECK((r.status == a.expected || r.status == a.or_else));
    }
  }
  // A length whose n x n allocation overflows, or does not fit in memory.
  const kiln_graph_info& lengths = lib.graph("lengths");
  for (int64_t n : {int64_t{1} << 31, int64_t{1} << 20}) {
    CAPTURE(n);
    std::vector<GuardedTensor> inputs = hostile_graphs()[3].valid_inputs();
    *inputs[0].as<int64_t>() = n;
    inputs[1] = GuardedTensor(kF64, {n == (int64_t{1} << 20) ? int64_t{1} << 20 : 6});
    Outcome r = call_guarded(lengths, inputs, Mode::Call);
    CHECK((r.status == KILN_ERR_VALUE || r.status == KILN_ERR_ALLOC));
  }
}

TEST_CASE("hostile calls: spoiled caller-provided outputs are refused (compiled)") {
  const kiln_graph_info& info = hostile_library().graph("elem");
  struct OutputAttack {
    std::string what;
    std::function<void(std::vector<GuardedTensor>&)> apply;
    int32_t expected;
  };
  const std::vector<OutputAttack> attacks = {
      {"dtype", [](auto& o) { o[0].dl.dtype = kI64; }, KILN_ERR_OUTPUT},
      {"rank", [](auto& o) { o[1].dl.ndim = 2; }, KILN_ERR_OUTPUT},
      {"shape", [](auto& o) { o[0].shape[1] = 4; }, KILN_ERR_OUTPUT},
      {"shape null", [](auto& o) { o[0].dl.shape = nullptr; }, KILN_ERR_OUTPUT},
      {"data null", [](auto& o) { o[1].dl.data = nullptr; }, KILN_ERR_OUTPUT},
      {"strides", [](auto& o) { o[0].set_strides({1, 2}); }, KILN_ERR_OUTPUT},
      {"device", [](auto& o) { o[0].dl.device = DLDevice{kDLCUDA, 0}; }, KILN_ERR_DEVICE},
      {"misaligned", [](auto& o) { o[1].dl.byte_offset = 4; }, KILN_ERR_OUTPUT},
      {"byte_offset wraps", [](auto& o) { o[0].dl.byte_offset = UINT64_MAX - 15; }, KILN_ERR_OUTPUT},
  };
  for (const OutputAttack& a : attacks) {
    CAPTURE(a.what);
    std::vector<GuardedTensor> inputs = hostile_graphs()[0].valid_inputs();
    CHECK(call_guarded(info, inputs, Mode::Into, a.apply).status == a.expected);
  }
}

TEST_CASE("hostile calls: null arguments, foreign contexts and thread counts (compiled)") {
  const Library& lib = hostile_library();
  const kiln_graph_info& elem = lib.graph("elem");
  const kiln_graph_info& dot = lib.graph("dot");
  std::vector<GuardedTensor> inputs = hostile_graphs()[0].valid_inputs();
  std::vector<DLTensor> dl = {inputs[0].dl, inputs[1].dl};
  DLManagedTensor* owned[2] = {};
  int64_t shapes[3];
  double z[6], s[2];
  int64_t z_shape[2] = {2, 3}, s_shape[1] = {2};
  DLTensor outs[2] = {};
  outs[0] = DLTensor{z, DLDevice{kDLCPU, 0}, 2, kF64, z_shape, nullptr, 0};
  outs[1] = DLTensor{s, DLDevice{kDLCPU, 0}, 1, kF64, s_shape, nullptr, 0};

  CHECK(elem.call(nullptr, dl.data(), owned) == KILN_ERR_ARGUMENT);
  CHECK(elem.call_into(nullptr, dl.data(), outs) == KILN_ERR_ARGUMENT);
  CHECK(elem.output_shapes(nullptr, dl.data(), shapes) == KILN_ERR_ARGUMENT);
  CHECK(std::string(elem.context_last_error(nullptr)) == "null context");
  elem.context_destroy(nullptr);
  elem.context_set_num_threads(nullptr, 4);

  kiln_context* ctx = elem.context_create();
  CHECK(elem.call(ctx, nullptr, owned) == KILN_ERR_ARGUMENT);
  CHECK(elem.call(ctx, dl.data(), nullptr) == KILN_ERR_ARGUMENT);
  CHECK(elem.call_into(ctx, dl.data(), nullptr) == KILN_ERR_ARGUMENT);
  CHECK(elem.output_shapes(ctx, dl.data(), nullptr) == KILN_ERR_ARGUMENT);
  // A context belongs to its graph.
  kiln_context* other = dot.context_create();
  CHECK(elem.call(other, dl.data(), owned) == KILN_ERR_ARGUMENT);
  CHECK(std::string(elem.context_last_error(other)).find("another graph") != std::string::npos);
  dot.context_destroy(other);
  // Absurd thread counts are clamped: a call large enough to use threads still works.
  std::vector<GuardedTensor> big = {GuardedTensor(kF64, {40000, 3}), GuardedTensor(kF64, {3})};
  std::vector<DLTensor> big_dl = {big[0].dl, big[1].dl};
  for (int32_t threads : {INT32_MAX, -7, 0, 1 << 20}) {
    elem.context_set_num_threads(ctx, threads);
    DLManagedTensor* o[2] = {};
    CHECK(elem.call(ctx, big_dl.data(), o) == KILN_OK);
    for (auto* m : o)
      if (m) m->deleter(m);
  }
  elem.context_destroy(ctx);
}

// A buffer the runtime allocates inside a call (a permutation's rows, a random variable's
// draws: std::vector) that cannot get its memory must come back as KILN_ERR_ALLOC, not as a C++
// exception through the C ABI (which would terminate a C or Python caller). The address space
// is capped for the call so that the output fits and the permutation's rows do not.
TEST_CASE("hostile calls: memory that runs out inside a call is KILN_ERR_ALLOC, not an exception (compiled)") {
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KILN_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(KILN_TEST_ASAN)
  MESSAGE("skipped: AddressSanitizer reserves its shadow memory outside any address-space cap");
#else
  const std::string text = R"json({"format": "kiln-graph", "version": 2, "name": "perm",
    "variables": [{"id": "rng", "type": {"kind": "rng", "bit_generator": "PCG64"}},
                  {"id": "size", "type": {"kind": "none"}},
                  {"id": "n", "name": "n", "type": {"dtype": "int64", "shape": []}},
                  {"id": "next", "type": {"kind": "rng", "bit_generator": "PCG64"}},
                  {"id": "y", "type": {"dtype": "int64", "shape": [null]}}],
    "nodes": [{"op": "PermutationRV", "props": {"signature": "()->(x)", "dtype": "int64"},
               "inputs": ["rng", "size", "n"], "outputs": ["next", "y"]}],
    "inputs": ["rng", "n"], "outputs": ["next", "y"]})json";
  const FunctionGraph fg = load_graph_text(text, "");
  const BuildResult built = build_bundle({{&fg, "perm"}}, "hostile_alloc");
  const Library lib(built.library_path);
  const kiln_graph_info& info = lib.graph("perm");
  Array rng = Array::empty(DType::UInt64, {6});
  const std::uint64_t words[6] = {1, 2, 3, 5, 0, 0};
  for (int i = 0; i < 6; ++i) rng.data<std::uint64_t>()[i] = words[i];
  Array n = Array::empty(DType::Int64, {});
  *n.data<std::int64_t>() = 7;
  const CallResult small = call_compiled(info, {rng, n});  // warms up the context's code paths
  REQUIRE_MESSAGE(small.status == KILN_OK, small.error);
  // The process's address space now, from /proc/self/statm (pages).
  std::ifstream statm("/proc/self/statm");
  std::uint64_t pages = 0;
  statm >> pages;
  REQUIRE(pages > 0);
  const std::uint64_t now = pages * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  rlimit old{};
  REQUIRE(getrlimit(RLIMIT_AS, &old) == 0);
  const std::uint64_t cap = now + (std::uint64_t{1} << 30);
  if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur < cap) {
    MESSAGE("skipped: the address space is already capped below what the case needs");
    return;
  }
  // 768 MiB of output (3 * 2^25 int64) fits under the cap; its 768 MiB of rows beside it do not.
  *n.data<std::int64_t>() = std::int64_t{3} << 25;
  rlimit capped = old;
  capped.rlim_cur = cap;
  REQUIRE(setrlimit(RLIMIT_AS, &capped) == 0);
  CallResult got;
  try {
    got = call_compiled(info, {rng, n});
  } catch (...) {
    setrlimit(RLIMIT_AS, &old);
    throw;
  }
  REQUIRE(setrlimit(RLIMIT_AS, &old) == 0);
  CHECK(got.status == KILN_ERR_ALLOC);
  CHECK_MESSAGE(got.error.find("out of memory") != std::string::npos, got.error);
#endif
}
