// The opencl backend run on the machine's OpenCL platform (PoCL in CI): every NumPy fixture case
// whose ops the backend claims, with inputs uploaded as they are laid out (transposed and
// sliced views stay strided on the device), called both ways (kiln-allocated device outputs,
// and output_shapes + call_into device buffers), downloaded and compared with NumPy and with the
// reference evaluator. Ops it lacks are refused at compile time by name. Without an OpenCL
// platform the cases report "skipped: no OpenCL platform" (ctest's opencl entry skips).
#include <doctest/doctest.h>

#include <algorithm>

#include "api/elementwise.h"
#include "api/special.h"
#include "api/graph_builder.h"
#include "codegen/gpu/backend.h"
#include "compiled.h"
#include "fixtures.h"
#include "ir/error.h"
#include "ops/softmax.h"

#ifdef KILN_TEST_OPENCL
#include "kiln/opencl.hpp"
#endif

using namespace kiln;
using namespace kiln::testing;

namespace {

// Whether every op of the graph is one the GPU backends implement.
bool gpu_claims(const FunctionGraph& fg) {
  static const std::vector<std::string> ops = gpu_backend_ops();
  for (const Apply* node : fg.toposort())
    if (std::find(ops.begin(), ops.end(), std::string(node->op().name())) == ops.end()) return false;
  return true;
}

CompileOptions opencl_options() {
  CompileOptions o = test_compile_options();
  o.backend = "opencl";
  o.build.opt_level = "-O1";  // host code only: the kernels are compiled by the OpenCL driver
  return o;
}

#ifdef KILN_TEST_OPENCL

bool have_opencl_platform() {
  cl_uint n = 0;
  return clGetPlatformIDs(0, nullptr, &n) == CL_SUCCESS && n > 0;
}

// Runs graph `name` of an opencl library on host arrays: uploads, calls, downloads.
CallResult call_opencl(const Library& so, const std::string& name, const std::vector<Array>& inputs, bool into) {
  using QueueFn = cl_command_queue (*)(kiln_context*);
  const kiln_graph_info& info = so.graph(name);
  auto queue_of = reinterpret_cast<QueueFn>(so.symbol(name + "_opencl_queue"));
  const bool exported = queue_of != nullptr;
  REQUIRE_MESSAGE(exported, name << "_opencl_queue is not exported");
  CallResult r;
  kiln_context* ctx = info.context_create();
  REQUIRE(ctx);
  cl_command_queue q = queue_of(ctx);
  std::vector<opencl::DeviceTensor> device;
  std::vector<DLTensor> dl;
  if (q) {
    for (const auto& a : inputs) {
      device.push_back(opencl::to_device(q, a.dltensor()));
      dl.push_back(device.back().dl);
    }
  }
  if (dl.empty()) dl.resize(1);
  auto download = [&](const DLTensor& t) {
    Shape shape(t.shape, t.shape + t.ndim);
    Array a = Array::zeros(*from_dlpack(t.dtype), shape);
    opencl::to_host(q, t, a.data());
    return a;
  };
  if (!into) {
    std::vector<DLManagedTensor*> outs(static_cast<std::size_t>(info.num_outputs) + 1, nullptr);
    r.status = info.call(ctx, dl.data(), outs.data());
    for (int32_t k = 0; r.status == KILN_OK && k < info.num_outputs; ++k) {
      DLManagedTensor* m = outs[static_cast<std::size_t>(k)];
      r.outputs.push_back(download(m->dl_tensor));
      m->deleter(m);
    }
  } else {
    std::size_t total = 0;
    for (int32_t k = 0; k < info.num_outputs; ++k) total += static_cast<std::size_t>(info.outputs[k].ndim);
    std::vector<int64_t> shapes(total + 1);
    r.status = info.output_shapes(ctx, dl.data(), shapes.data());
    if (r.status == KILN_OK) {
      std::vector<opencl::DeviceTensor> outs;
      std::vector<DLTensor> out_dl;
      std::size_t pos = 0;
      for (int32_t k = 0; k < info.num_outputs; ++k) {
        const std::size_t nd = static_cast<std::size_t>(info.outputs[k].ndim);
        std::vector<int64_t> shape(shapes.begin() + static_cast<std::ptrdiff_t>(pos),
                                   shapes.begin() + static_cast<std::ptrdiff_t>(pos + nd));
        pos += nd;
        outs.push_back(opencl::empty(q, to_dlpack(static_cast<DType>(info.outputs[k].dtype)), shape));
        out_dl.push_back(outs.back().dl);
      }
      if (out_dl.empty()) out_dl.resize(1);
      r.status = info.call_into(ctx, dl.data(), out_dl.data());
      for (int32_t k = 0; r.status == KILN_OK && k < info.num_outputs; ++k)
        r.outputs.push_back(download(out_dl[static_cast<std::size_t>(k)]));
    }
  }
  r.error = info.context_last_error(ctx);
  info.context_destroy(ctx);
  return r;
}

#endif

}  // namespace

TEST_CASE("opencl: NumPy fixtures through the opencl backend") {
#ifndef KILN_TEST_OPENCL
  MESSAGE("skipped: no OpenCL platform (kiln_tests was built without OpenCL headers and loader)");
#else
  if (!have_opencl_platform()) {
    MESSAGE("skipped: no OpenCL platform (install pocl-opencl-icd)");
    return;
  }
  // Bundles of 64 cases: one host compile and one OpenCL program build (PoCL's compile of the
  // kernels is the slow part) per bundle.
  // A case is the backend's when its ops have GPU kernels and its scalar ops a GPU spelling
  // (the others are refused at compile time: the cases below and docs/op_coverage.md).
  int refused = 0;
  const auto claims = [&](const FixtureCase& c) {
    if (!gpu_claims(c.graph)) return false;
    try {
      emit_bundle({{&c.graph, "probe"}}, "probe", opencl_options());
      return true;
    } catch (const NotImplementedError&) {
      ++refused;
      return false;
    }
  };
  check_fixtures_compiled(opencl_options(), claims, call_opencl, 64);
  MESSAGE(refused << " cases of GPU ops refused at compile time (a scalar op the GPU dialects do not spell, or a form "
                     "the GPU kernels lack, such as Join across dtypes)");
#endif
}

TEST_CASE("opencl: errors kernels find come back through the status word as the C++ backend reports them") {
#ifndef KILN_TEST_OPENCL
  MESSAGE("skipped: no OpenCL platform (kiln_tests was built without OpenCL headers and loader)");
#else
  if (!have_opencl_platform()) {
    MESSAGE("skipped: no OpenCL platform (install pocl-opencl-icd)");
    return;
  }
  // Every fixture case that expects a run-time failure and whose ops the GPU backends claim:
  // the same status and the same whole message (node included) as the compiled C++ backend.
  std::vector<FixtureCase> cases;
  for (const auto& dir : list_fixture_cases()) {
    FixtureCase c = load_fixture_case(dir);
    if (c.error.empty() || !gpu_claims(c.graph)) continue;
    try {
      emit_bundle({{&c.graph, "probe"}}, "probe", opencl_options());
    } catch (const NotImplementedError&) {
      continue;  // a form the GPU kernels lack (the fixture test counts these)
    }
    cases.push_back(std::move(c));
  }
  NamedGraphs graphs;
  for (const FixtureCase& c : cases) graphs.emplace_back(&c.graph, "e" + std::to_string(graphs.size()));
  REQUIRE(!graphs.empty());
  const BuildResult cpp = compile_bundle(graphs, "status_cpp", test_compile_options());
  const BuildResult gpu = compile_bundle(graphs, "status_opencl", opencl_options());
  Library cpp_so(cpp.library_path), gpu_so(gpu.library_path);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    CAPTURE(cases[i].name);
    const std::string& name = graphs[i].second;
    for (bool into : {false, true}) {
      const CallResult want = call_compiled(cpp_so.graph(name), cases[i].inputs, into);
      const CallResult got = call_opencl(gpu_so, name, cases[i].inputs, into);
      CHECK(want.status != KILN_OK);
      CHECK(std::string(kiln_status_name(got.status)) == kiln_status_name(want.status));
      // The message after the node: the C++ backend may report a gather it fused into the
      // Elemwise that consumes it (codegen/gather_fusion.h) at that Elemwise's node.
      const auto text = [](const std::string& m) { return m.substr(m.find("): ") == std::string::npos ? 0 : m.find("): ")); };
      CHECK(text(got.error) == text(want.error));
      CHECK(got.error.rfind("node [", 0) == 0);
    }
  }
  MESSAGE(cases.size() << " failing cases compared with the C++ backend");
#endif
}

TEST_CASE("opencl: an op without a GPU kernel is a compile-time error naming op, props and backend") {
  for (const char* backend : {"opencl", "cuda"}) {
    CompileOptions o = opencl_options();
    o.backend = backend;
    GraphBuilder g("lacks");
    auto x = g.input("x", DType::Float64, {-1, -1});
    g.output(softmax(x, 1), "y");
    try {
      emit(g.build(), o);
      FAIL("expected a NotImplementedError");
    } catch (const NotImplementedError& e) {
      const std::string what = e.what();
      CHECK_MESSAGE(what.find("`Softmax{axis=1}` has no " + std::string(backend) + " implementation") != std::string::npos,
                    what);
      CHECK_MESSAGE(what.find("no GPU kernel yet") != std::string::npos, what);
    }
  }
}

TEST_CASE("opencl: a scalar op the GPU dialects do not spell is refused by name") {
  GraphBuilder g("i0");
  auto x = g.input("x", DType::Float64, {-1});
  g.output(i0(x), "y");
  CHECK_THROWS_WITH_AS(emit(g.build(), opencl_options()), doctest::Contains("scalar op i0 on float64 has no opencl implementation"),
                       NotImplementedError);
}
