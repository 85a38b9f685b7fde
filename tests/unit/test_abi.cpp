// The generated C ABI: every run-time failure gives its status and a message, caller-provided
// outputs are checked, contexts are independent across threads, and the typed C++ wrapper in
// the generated header works in a program that uses nothing but the library and its header.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "api/elementwise.h"
#include "api/graph_builder.h"
#include "compiled.h"
#include "driver/process.h"
#include "driver/sanitize.h"
#include "eval/evaluator.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

// Two outputs over three inputs: y = log(1 + x) * w (w has static length 3) and z = x + v.
struct AbiLibrary {
  Library so;
  const kiln_graph_info* info;
};

const AbiLibrary& abi_library() {
  static AbiLibrary* lib = [] {
    GraphBuilder g("abi_probe");
    auto x = g.input("x", f64, {-1});
    auto w = g.input("w", f64, {3});
    auto v = g.input("v", f64, {-1});
    g.output(log(1 + x) * w, "y");
    g.output(x + v, "z");
    FunctionGraph fg = g.build();
    BuildResult built = compile(std::move(fg), test_compile_options()).build;
    auto* l = new AbiLibrary{Library(built.library_path), nullptr};
    l->info = &l->so.graph("abi_probe");
    return l;
  }();
  return *lib;
}

Array astype_for_test(const Array& a) {
  Array out = Array::empty(DType::Float32, a.shape());
  for (std::int64_t i = 0; i < a.size(); ++i) out.data<float>()[i] = static_cast<float>(a.data<double>()[i]);
  return out;
}

Array vec(std::vector<double> values) {
  Array a = Array::empty(DType::Float64, {static_cast<std::int64_t>(values.size())});
  for (std::size_t i = 0; i < values.size(); ++i) a.data<double>()[i] = values[i];
  return a;
}

}  // namespace

TEST_CASE("ABI: metadata") {
  const kiln_graph_info& info = *abi_library().info;
  CHECK(info.abi_version == KILN_ABI_VERSION);
  CHECK(std::string(info.name) == "abi_probe");
  REQUIRE(info.num_inputs == 3);
  REQUIRE(info.num_outputs == 2);
  CHECK(std::string(info.inputs[1].name) == "w");
  CHECK(info.inputs[1].dtype == KILN_FLOAT64);
  CHECK(info.inputs[1].ndim == 1);
  CHECK(info.inputs[1].shape[0] == 3);
  CHECK(info.inputs[0].shape[0] == -1);
  CHECK(std::string(info.outputs[0].name) == "y");
}

TEST_CASE("ABI: run-time failures return a status and a message") {
  const kiln_graph_info& info = *abi_library().info;
  Array x = vec({1, 2, 3}), w = vec({1, 1, 1}), v = vec({0, 0, 0});

  auto status_of = [&](std::vector<Array> ins) { return call_compiled(info, ins); };
  CHECK(status_of({x, w, v}).status == KILN_OK);

  CallResult r = status_of({astype_for_test(x), w, v});
  CHECK(r.status == KILN_ERR_INPUT_DTYPE);
  CHECK(r.error.find("input \"x\" must be float64, got float32") != std::string::npos);

  r = status_of({Array::zeros(DType::Float64, {3, 1}), w, v});
  CHECK(r.status == KILN_ERR_INPUT_RANK);
  CHECK(r.error.find("\"x\"") != std::string::npos);

  r = status_of({x, vec({1, 2}), vec({0, 0, 0})});
  CHECK(r.status == KILN_ERR_INPUT_SHAPE);
  CHECK(r.error.find("input \"w\" must have length 3") != std::string::npos);

  r = status_of({x, w, vec({1, 2, 3, 4})});
  CHECK(r.status == KILN_ERR_BROADCAST);
  CHECK(r.error.find("Add") != std::string::npos);

  r = status_of({vec({1, 2, 3, 4}), w, vec({1, 2, 3, 4})});
  CHECK(r.status == KILN_ERR_BROADCAST);  // x (4,) times w (3,)

  // Null arguments and a context from another graph.
  kiln_context* ctx = info.context_create();
  std::vector<DLManagedTensor*> outs(2);
  CHECK(info.call(ctx, nullptr, outs.data()) == KILN_ERR_ARGUMENT);
  CHECK(std::string(info.context_last_error(ctx)).find("inputs is null") != std::string::npos);
  std::vector<DLTensor> dl = {x.dltensor(), w.dltensor(), v.dltensor()};
  CHECK(info.call(ctx, dl.data(), nullptr) == KILN_ERR_ARGUMENT);
  CHECK(info.call(nullptr, dl.data(), outs.data()) == KILN_ERR_ARGUMENT);
  info.context_destroy(ctx);
}

TEST_CASE("ABI: call_into checks the caller's outputs") {
  const kiln_graph_info& info = *abi_library().info;
  Array x = vec({1, 2, 3}), w = vec({1, 2, 3}), v = vec({1, 1, 1});
  std::vector<DLTensor> ins = {x.dltensor(), w.dltensor(), v.dltensor()};
  kiln_context* ctx = info.context_create();
  int64_t shapes[2];
  REQUIRE(info.output_shapes(ctx, ins.data(), shapes) == KILN_OK);
  CHECK(shapes[0] == 3);
  CHECK(shapes[1] == 3);

  Array y = Array::zeros(DType::Float64, {3}), z = Array::zeros(DType::Float64, {3});
  std::vector<DLTensor> outs = {y.dltensor(), z.dltensor()};
  REQUIRE(info.call_into(ctx, ins.data(), outs.data()) == KILN_OK);
  CHECK(y.data<double>()[2] == doctest::Approx(std::log(4.0) * 3));
  CHECK(z.data<double>()[0] == 2.0);

  Array wrong = Array::zeros(DType::Float64, {4});
  outs[0] = wrong.dltensor();
  CHECK(info.call_into(ctx, ins.data(), outs.data()) == KILN_ERR_OUTPUT);
  CHECK(std::string(info.context_last_error(ctx)).find("output 0 must have length 3") != std::string::npos);

  Array wrong_dtype = Array::zeros(DType::Float32, {3});
  outs[0] = wrong_dtype.dltensor();
  CHECK(info.call_into(ctx, ins.data(), outs.data()) == KILN_ERR_OUTPUT);

  Array strided = Array::zeros(DType::Float64, {6});
  Array every_other = strided.view({3}, {2});
  outs[0] = every_other.dltensor();
  CHECK(info.call_into(ctx, ins.data(), outs.data()) == KILN_ERR_OUTPUT);
  CHECK(std::string(info.context_last_error(ctx)).find("C-contiguous") != std::string::npos);
  info.context_destroy(ctx);
}

TEST_CASE("ABI: separate contexts on several threads") {
  const kiln_graph_info& info = *abi_library().info;
  const int kThreads = 4, kIters = 500;
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      kiln_context* ctx = info.context_create();
      for (int i = 0; i < kIters; ++i) {
        double base = t * 1000 + i;
        Array x = vec({base, base + 1, base + 2, base + 3, base + 4});
        Array w = vec({1, 2, 3});
        // Alternate a failing call (x has length 5, w length 3) with a good one.
        Array x3 = vec({base, base + 1, base + 2});
        std::vector<DLTensor> good = {x3.dltensor(), w.dltensor(), x3.dltensor()};
        std::vector<DLTensor> bad = {x.dltensor(), w.dltensor(), x.dltensor()};
        DLManagedTensor* outs[2] = {nullptr, nullptr};
        if (info.call(ctx, bad.data(), outs) != KILN_ERR_BROADCAST) ++failures[t];
        if (info.call(ctx, good.data(), outs) != KILN_OK) {
          ++failures[t];
          continue;
        }
        const double* y = static_cast<const double*>(outs[0]->dl_tensor.data);
        const double* z = static_cast<const double*>(outs[1]->dl_tensor.data);
        // y is vector math (a few ulp from libm): a mixed-up context would be off by far more.
        const double want_y = std::log(1 + base + 1) * 2;
        if (std::abs(y[1] - want_y) > 1e-14 * want_y || z[2] != 2 * (base + 2)) ++failures[t];
        outs[0]->deleter(outs[0]);
        outs[1]->deleter(outs[1]);
      }
      info.context_destroy(ctx);
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) CHECK(failures[t] == 0);
}

TEST_CASE("ABI: a C++ program using only the generated header and library") {
  namespace fs = std::filesystem;
  GraphBuilder g("typed_wrapper");
  auto x = g.input("x", f64, {-1});
  auto scale = g.input("scale", f64, {});
  g.output(x * scale, "scaled");
  g.output(exp(x), "e");
  FunctionGraph fg = g.build();
  Artifacts compiled = compile(std::move(fg), test_compile_options());
  const GeneratedLibrary& lib = compiled.sources;
  const BuildResult& built = compiled.build;
  fs::path dir = fs::path(KILN_TEST_CACHE_DIR) / "typed_wrapper_program";
  fs::create_directories(dir);
  std::ofstream(dir / "typed_wrapper.h") << lib.header;
  fs::copy_file(built.library_path, dir / "libtyped_wrapper.so", fs::copy_options::overwrite_existing);
  std::ofstream(dir / "main.cpp") << R"(
#include <cstdio>
#include "typed_wrapper.h"
int main() {
  kiln::Tensor x = kiln::Tensor::from<double>({1.0, 2.0, 3.0});
  auto [scaled, e] = typed_wrapper(x, 2.5);
  std::printf("%g %g %g\n", scaled.at<double>({2}), e.at<double>({0}), (double)scaled.size());
  try {
    typed_wrapper(kiln::Tensor::from<float>({1.0f}), 1.0);
  } catch (const kiln::CallError& err) {
    std::printf("status %d\n", err.status());
  }
  typed_wrapper_function f;
  kiln::Tensor out0 = kiln::Tensor::zeros(KILN_FLOAT64, {3}), out1 = kiln::Tensor::zeros(KILN_FLOAT64, {3});
  f.call_into(x, 2.0, out0, out1);
  std::printf("%g\n", out0.at<double>({1}));
  return 0;
}
)";
  // In a sanitized kiln the library is sanitized too, and so must the program be that loads it.
  std::vector<std::string> cc_command = {resolve_compiler({}), "-std=c++17", "-I", dir.string(),
                                         (dir / "main.cpp").string(), "-o", (dir / "main").string(), "-L",
                                         dir.string(), "-ltyped_wrapper", "-Wl,-rpath," + dir.string()};
  for (const std::string& flag : generated_code_sanitizer_flags()) cc_command.push_back(flag);
  ProcessResult cc = run_process(cc_command);
  INFO(cc.output);
  REQUIRE(cc.exit_code == 0);
  ProcessResult run = run_process({(dir / "main").string()});
  INFO(run.output);
  CHECK(run.exit_code == 0);
  CHECK(run.output == "7.5 2.71828 3\nstatus 3\n4\n");
}
