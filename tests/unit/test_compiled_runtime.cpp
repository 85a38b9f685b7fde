// The generated runtime's allocation behaviour: call_into on a small graph allocates nothing
// (counted by interposing malloc & co. in this test binary), call allocates only its output,
// large kiln-allocated outputs are 2 MiB aligned (huge pages), and a parallel loop gives the
// same result with one thread or two.
#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <unistd.h>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "api/elementwise.h"
#include "api/graph_builder.h"
#include "compiled.h"
#include "io/graph_load.h"
#include "ops/dot.h"

using namespace kiln;
using namespace kiln::testing;

// ---- counting allocator -----------------------------------------------------------------
// Definitions in the executable take precedence over glibc's for every library, including
// the generated ones loaded later. They forward to glibc's internal entry points and count
// only while a test has switched counting on, on its own thread. Sanitizer builds have their
// own allocator: there the count is unavailable and the test is skipped.
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define KILN_TEST_COUNTS_MALLOC 1
namespace {
thread_local bool g_counting = false;
std::atomic<long> g_allocations{0};
void counted() {
  if (g_counting) g_allocations.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace
extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void* malloc(size_t n) {
  counted();
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t m) {
  counted();
  return __libc_calloc(n, m);
}
void* realloc(void* p, size_t n) {
  counted();
  return __libc_realloc(p, n);
}
void* aligned_alloc(size_t a, size_t n) {
  counted();
  return __libc_memalign(a, n);
}
void* memalign(size_t a, size_t n) {
  counted();
  return __libc_memalign(a, n);
}
int posix_memalign(void** p, size_t a, size_t n) {
  counted();
  *p = __libc_memalign(a, n);
  return *p || n == 0 ? 0 : 12 /* ENOMEM */;
}
}
#endif

namespace {

struct CountScope {
  CountScope() {
#ifdef KILN_TEST_COUNTS_MALLOC
    g_allocations = 0;
    g_counting = true;
#endif
  }
  ~CountScope() { stop(); }
  long stop() {
#ifdef KILN_TEST_COUNTS_MALLOC
    g_counting = false;
    return g_allocations.load();
#else
    return -1;
#endif
  }
};

// y = log(1 + x) * 2 + x over a float64 vector (elementwise, a constant) and z = x * dot(x, x)
// (a BLAS product into a workspace slot, feeding an elementwise node).
const kiln_graph_info& small_graph() {
  static Library* so = [] {
    GraphBuilder g("runtime_probe");
    auto x = g.input("x", f64, {-1});
    g.output(log(1 + x) * 2 + x, "y");
    g.output(x * dot(x, x), "z");
    FunctionGraph fg = g.build();
    BuildResult built = compile(std::move(fg), test_compile_options()).build;
    return new Library(built.library_path);
  }();
  return so->graph("runtime_probe");
}

DLTensor vector_tensor(double* data, int64_t* shape) {
  DLTensor t{};
  t.data = data;
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = 1;
  t.dtype = DLDataType{kDLFloat, 64, 1};
  t.shape = shape;
  return t;
}

}  // namespace

TEST_CASE("compiled runtime: call_into on a small graph allocates nothing; call only its output") {
#ifndef KILN_TEST_COUNTS_MALLOC
  MESSAGE("allocation counting unavailable in this build (sanitizer or non-glibc)");
  return;
#else
  const kiln_graph_info& info = small_graph();
  kiln_context* ctx = info.context_create();
  REQUIRE(ctx);
  info.context_set_num_threads(ctx, 2);
  std::vector<double> x = {0.5, 1.5, 2.5}, y(3), z(3);
  int64_t shape[1] = {3};
  DLTensor in = vector_tensor(x.data(), shape);
  DLTensor out[2] = {vector_tensor(y.data(), shape), vector_tensor(z.data(), shape)};
  REQUIRE(info.call_into(ctx, &in, out) == KILN_OK);  // first call: workspace slots grow

  {
    CountScope count;
    for (int i = 0; i < 100; ++i) REQUIRE(info.call_into(ctx, &in, out) == KILN_OK);
    CHECK(count.stop() == 0);
  }
  for (int i = 0; i < 3; ++i) {
    CHECK(y[i] == doctest::Approx(std::log1p(x[i]) * 2 + x[i]));
    CHECK(z[i] == doctest::Approx(x[i] * 8.75));
  }

  {
    CountScope count;
    DLManagedTensor* m[2] = {};
    REQUIRE(info.call(ctx, &in, m) == KILN_OK);
    const long during = count.stop();
    CHECK(during == 2);  // per output, its header and data in one block
    for (int k = 0; k < 2; ++k) {
      const double* got = static_cast<const double*>(m[k]->dl_tensor.data);
      CHECK(reinterpret_cast<std::uintptr_t>(got) % 64 == 0);
      CHECK(got[2] == doctest::Approx(k == 0 ? y[2] : z[2]));
      m[k]->deleter(m[k]);
    }
  }

  {
    // A failing call writes its message without allocating either.
    std::vector<float> wrong(3);
    DLTensor bad = vector_tensor(reinterpret_cast<double*>(wrong.data()), shape);
    bad.dtype = DLDataType{kDLFloat, 32, 1};
    CountScope count;
    CHECK(info.call_into(ctx, &bad, out) == KILN_ERR_INPUT_DTYPE);
    CHECK(count.stop() == 0);
  }
  info.context_destroy(ctx);
#endif
}

TEST_CASE("compiled runtime: large outputs are 2 MiB aligned; threaded loops agree with serial ones") {
  const kiln_graph_info& info = small_graph();
  const int64_t n = (int64_t{8} << 20) / 8 + 5;  // 8 MiB + 40 bytes: above the huge-page threshold
  std::vector<double> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = 0.001 * static_cast<double>(i % 1000);
  int64_t shape[1] = {n};
  DLTensor in = vector_tensor(x.data(), shape);
  std::vector<double> serial(static_cast<size_t>(n));
  for (int threads : {1, 2}) {
    kiln_context* ctx = info.context_create();
    info.context_set_num_threads(ctx, threads);
    DLManagedTensor* outs[2] = {};
    REQUIRE(info.call(ctx, &in, outs) == KILN_OK);
    DLManagedTensor* m = outs[0];
    outs[1]->deleter(outs[1]);
    const auto* got = static_cast<const double*>(m->dl_tensor.data);
    CHECK(reinterpret_cast<std::uintptr_t>(got) % (std::uintptr_t{2} << 20) == 0);
    if (threads == 1) {
      serial.assign(got, got + n);
    } else {
      bool same = true;
      for (int64_t i = 0; i < n; ++i) same = same && got[i] == serial[static_cast<size_t>(i)];
      CHECK(same);
    }
    CHECK(got[n - 1] == doctest::Approx(std::log1p(x[n - 1]) * 2 + x[n - 1]));
    m->deleter(m);
    info.context_destroy(ctx);
  }
}

// The build cache: the same graph built twice is a hit the second time (same key, no compiler
// run), and the compiler's --version text is remembered in the cache folder so a hit starts no
// process; a different graph is a miss with another key.
TEST_CASE("compiled cache: a second build is a hit; the compiler identity is remembered") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("kiln-cache-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  CompileOptions options = test_compile_options();
  options.build.cache_dir = dir.string();
  auto library_of = [&](double c) {
    GraphBuilder b("cache_probe");
    Var x = b.input("x", DType::Float64, {-1});
    b.output(log1p(x) * c, "y");
    return compile(b.build(), options).build;
  };
  BuildResult first = library_of(2.0);
  CHECK_FALSE(first.cache_hit);
  REQUIRE(fs::is_directory(dir / "compilers"));
  CHECK(std::distance(fs::directory_iterator(dir / "compilers"), fs::directory_iterator{}) == 1);
  BuildResult again = library_of(2.0);
  CHECK(again.cache_hit);
  CHECK(again.key == first.key);
  CHECK(again.library_path == first.library_path);
  BuildResult other = library_of(3.0);
  CHECK_FALSE(other.cache_hit);
  CHECK(other.key != first.key);
  fs::remove_all(dir);
}

// GCC 12.2 on AVX-512VL targets stored a 32-byte piece {a, a, a, 0} of a constant copied by
// memcpy as a broadcast of a (kg::opaque in the runtime says how): a graph whose output is the
// constant [[1, 1, 1], [0, 0, 0]] returned [[1, 1, 1], [1, 0, 0]] (found by PyTensor's own
// TestMaxAndArgmax.test_grad, whose gradient PyTensor folds to such a constant). Constants with
// that pattern in 16-, 32- and 64-byte pieces of 4- and 8-byte elements, returned as outputs and
// read by a kernel. (It can only fail where the machine has AVX-512: tests build -march=native.)
TEST_CASE("compiled runtime: constants whose bytes repeat then end in zeros come back as written") {
  // One graph per constant, each returning it: a small run_graph in which GCC knows the copy's
  // size and bytes (the bug needs both).
  const auto graph = [](const std::string& dtype, const std::string& shape, const std::string& value) {
    return load_graph_text(R"({"format": "kiln-graph", "version": 1, "name": "c",
      "variables": [{"id": "c", "type": {"dtype": ")" + dtype + R"(", "shape": )" + shape +
                               R"(}, "value": )" + value + R"(}], "nodes": [], "inputs": [], "outputs": ["c"]})",
                           "");
  };
  FunctionGraph c64 = graph("float64", "[2, 3]", "[[1, 1, 1], [0, 0, 0]]");
  FunctionGraph ci32 = graph("int32", "[4]", "[7, 7, 7, 0]");
  FunctionGraph cf32 = graph("float32", "[8]", "[2, 2, 2, 2, 2, 2, 2, 0]");
  FunctionGraph ci64 = graph("int64", "[8]", "[5, 5, 5, 5, 5, 5, 5, 0]");
  BuildResult built = build_bundle({{&c64, "c64"}, {&ci32, "ci32"}, {&cf32, "cf32"}, {&ci64, "ci64"}}, "consts_pattern");
  Library so(built.library_path);
  for (bool into : {false, true}) {
    CallResult r = call_compiled(so.graph("c64"), {}, into);
    REQUIRE(r.status == KILN_OK);
    const double want64[] = {1, 1, 1, 0, 0, 0};
    for (int i = 0; i < 6; ++i) CHECK(r.outputs[0].data<double>()[i] == want64[i]);
    r = call_compiled(so.graph("ci32"), {}, into);
    REQUIRE(r.status == KILN_OK);
    for (int i = 0; i < 4; ++i) CHECK(r.outputs[0].data<std::int32_t>()[i] == (i < 3 ? 7 : 0));
    r = call_compiled(so.graph("cf32"), {}, into);
    REQUIRE(r.status == KILN_OK);
    for (int i = 0; i < 8; ++i) CHECK(r.outputs[0].data<float>()[i] == (i < 7 ? 2.0f : 0.0f));
    r = call_compiled(so.graph("ci64"), {}, into);
    REQUIRE(r.status == KILN_OK);
    for (int i = 0; i < 8; ++i) CHECK(r.outputs[0].data<std::int64_t>()[i] == (i < 7 ? 5 : 0));
  }
}
