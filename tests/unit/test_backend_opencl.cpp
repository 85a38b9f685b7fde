// The opencl backend run on the machine's OpenCL platform (PoCL in CI): every NumPy fixture case
// whose ops the backend claims, with inputs uploaded as they are laid out (transposed and
// sliced views stay strided on the device), called both ways (kiln-allocated device outputs,
// and output_shapes + call_into device buffers), downloaded and compared with NumPy and with the
// reference evaluator. Ops it lacks are refused at compile time by name. Without an OpenCL
// platform the cases report "skipped: no OpenCL platform" (ctest's opencl entry skips).
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include "api/elementwise.h"
#include "api/special.h"
#include "api/graph_builder.h"
#include "codegen/gpu/backend.h"
#include "compiled.h"
#include "device_call.h"
#include "eval/evaluator.h"
#include "fixtures.h"
#include "property_graphs.h"
#include "ir/error.h"
#include "ops/cumulative.h"
#include "ops/dimshuffle.h"
#include "ops/dot.h"
#include "ops/reduce.h"
#include "ops/softmax.h"
#include "ops/subtensor.h"
#include "ops/extra_ops.h"
#include "ops/advanced_subtensor.h"
#include "ops/alloc.h"
#include "ops/assert.h"
#include "ops/constant.h"
#include "ops/ifelse.h"
#include "ops/random.h"
#include "ops/sort.h"
#include "ops/unique.h"
#include "ops/linalg/eigen_svd.h"
#include "ops/linalg/factorizations.h"
#include "ops/linalg/matrix_functions.h"
#include "ops/linalg/solves.h"

#ifdef KILN_TEST_OPENCL
#include "kiln/opencl.hpp"
#endif

using namespace kiln;
using namespace kiln::testing;

namespace {

// Whether every op of the graph is one the GPU backends implement. Random draws are the GPU's
// Philox streams, not NumPy's PCG64 ones, so their values are not compared with the fixtures
// (`with_draws` false; test_gpu_random.cpp compares their distributions): only their errors.
bool gpu_claims(const FunctionGraph& fg, bool with_draws = false) {
  static const std::vector<std::string> ops = gpu_backend_ops();
  for (const Apply* node : fg.toposort()) {
    if (std::find(ops.begin(), ops.end(), std::string(node->op().name())) == ops.end()) return false;
    if (!with_draws && is_impure(node->op())) return false;
  }
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

// True, with the message ctest's skip rule reads, when the machine has no OpenCL platform.
bool opencl_platform_missing() {
  if (have_opencl_platform()) return false;
  MESSAGE("skipped: no OpenCL platform (install pocl-opencl-icd)");
  return true;
}


// Runs graph `name` through output_shapes + call_into with every (contiguous) input and output
// `shift` elements into a device buffer of its own: DLPack byte offsets that are multiples of
// the item size but not of a vector's.
CallResult call_opencl_shifted(const Library& so, const std::string& name, const std::vector<Array>& inputs, int shift) {
  using QueueFn = cl_command_queue (*)(kiln_context*);
  const kiln_graph_info& info = so.graph(name);
  auto queue_of = reinterpret_cast<QueueFn>(so.symbol(name + "_opencl_queue"));
  const bool has_queue = queue_of != nullptr;
  REQUIRE(has_queue);
  CallResult r;
  kiln_context* ctx = info.context_create();
  REQUIRE(ctx);
  cl_command_queue q = queue_of(ctx);
  REQUIRE(q);
  // Each tensor: a flat padded buffer, and a DLTensor `shift` items in with the wanted shape.
  std::vector<opencl::DeviceTensor> buffers;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<DLTensor> dl;
  const auto place = [&](const Array& a) {
    const Array c = a.contiguous();
    Array padded = Array::zeros(c.dtype(), {c.size() + shift});
    std::memcpy(static_cast<char*>(padded.data()) + shift * dtype_size(c.dtype()), c.data(),
                static_cast<std::size_t>(c.size()) * dtype_size(c.dtype()));
    buffers.push_back(opencl::to_device(q, padded.dltensor()));
    shapes.emplace_back(c.shape().begin(), c.shape().end());
    DLTensor t = buffers.back().dl;
    t.ndim = static_cast<int32_t>(c.shape().size());
    t.strides = nullptr;
    t.byte_offset = static_cast<uint64_t>(shift) * dtype_size(c.dtype());
    return t;
  };
  for (const Array& a : inputs) dl.push_back(place(a));
  for (std::size_t k = 0; k < dl.size(); ++k) dl[k].shape = shapes[k].data();
  if (dl.empty()) dl.resize(1);
  std::size_t total = 0;
  for (int32_t k = 0; k < info.num_outputs; ++k) total += static_cast<std::size_t>(info.outputs[k].ndim);
  std::vector<int64_t> out_shapes(total + 1);
  r.status = info.output_shapes(ctx, dl.data(), out_shapes.data());
  if (r.status == KILN_OK) {
    std::vector<DLTensor> out_dl;
    std::vector<Array> hosts;
    std::size_t pos = 0;
    for (int32_t k = 0; k < info.num_outputs; ++k) {
      const std::size_t nd = static_cast<std::size_t>(info.outputs[k].ndim);
      Shape shape(out_shapes.begin() + static_cast<std::ptrdiff_t>(pos), out_shapes.begin() + static_cast<std::ptrdiff_t>(pos + nd));
      pos += nd;
      hosts.push_back(Array::zeros(static_cast<DType>(info.outputs[k].dtype), shape));
      out_dl.push_back(place(hosts.back()));
    }
    for (std::size_t k = 0; k < out_dl.size(); ++k) out_dl[k].shape = shapes[inputs.size() + k].data();
    if (out_dl.empty()) out_dl.resize(1);
    r.status = info.call_into(ctx, dl.data(), out_dl.data());
    for (int32_t k = 0; r.status == KILN_OK && k < info.num_outputs; ++k) {
      const Array& h = hosts[static_cast<std::size_t>(k)];
      Array padded = Array::zeros(h.dtype(), {h.size() + shift});
      opencl::to_host(q, buffers[inputs.size() + static_cast<std::size_t>(k)].dl, padded.data());
      Array out = Array::zeros(h.dtype(), h.shape());
      std::memcpy(out.data(), static_cast<const char*>(padded.data()) + shift * dtype_size(h.dtype()),
                  static_cast<std::size_t>(h.size()) * dtype_size(h.dtype()));
      r.outputs.push_back(out);
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
  if (opencl_platform_missing()) return;
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
                     "the GPU kernels lack, such as boolean mask indices)");
#endif
}

TEST_CASE("opencl: the property test's random graphs, rewritten, keep their values on the device") {
#ifndef KILN_TEST_OPENCL
  MESSAGE("skipped: no OpenCL platform (kiln_tests was built without OpenCL headers and loader)");
#else
  if (opencl_platform_missing()) return;
  // test_rewrite_property.cpp's seeded graphs (elementwise chains with broadcasting, reductions,
  // Gemv/Dot, transposes, shared subexpressions) after the default pipeline, through the opencl
  // backend both ways, against the reference evaluator's values of the graphs as built.
  std::vector<PropertyCase> cases = property_cases();
  NamedGraphs graphs;
  std::vector<const PropertyCase*> run;
  for (const PropertyCase& c : cases) {
    if (!gpu_claims(c.rewritten)) continue;
    graphs.emplace_back(&c.rewritten, c.original.name());
    run.push_back(&c);
  }
  REQUIRE(run.size() * 10 >= cases.size() * 9);  // the GPU backends claim (nearly) all of them
  const BuildResult built = compile_bundle(graphs, "property_opencl", opencl_options());
  Library so(built.library_path);
  for (const PropertyCase* c : run) {
    INFO("graph " << c->original.name());
    for (bool into : {false, true}) {
      const CallResult r = call_opencl(so, c->original.name(), c->inputs, into);
      REQUIRE_MESSAGE(r.status == KILN_OK, r.error);
      check_property_outputs(*c, r.outputs, into ? "opencl (call_into)" : "opencl (call)");
    }
  }
  MESSAGE(run.size() << " of " << cases.size() << " random graphs through opencl");
#endif
}

TEST_CASE("opencl: errors kernels find come back through the status word as the C++ backend reports them") {
#ifndef KILN_TEST_OPENCL
  MESSAGE("skipped: no OpenCL platform (kiln_tests was built without OpenCL headers and loader)");
#else
  if (opencl_platform_missing()) return;
  // Every fixture case that expects a run-time failure and whose ops the GPU backends claim:
  // the same status and the same whole message (node included) as the compiled C++ backend.
  std::vector<FixtureCase> cases;
  for (const auto& dir : list_fixture_cases()) {
    FixtureCase c = load_fixture_case(dir);
    if (c.error.empty() || !gpu_claims(c.graph, true)) continue;
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

TEST_CASE("opencl: long rows take several work-items, tiles, groups, chunks and merge passes") {
#ifndef KILN_TEST_OPENCL
  MESSAGE("skipped: no OpenCL platform (kiln_tests was built without OpenCL headers and loader)");
#else
  if (opencl_platform_missing()) return;
  // The fixtures' rows are short (one work-item's share each); these rows span many work-items
  // (the group trees of softmax and argmax), many scan tiles, and several groups per row (the
  // chunked scan's carry and add kernels), sorts of several 1024-element tiles (the merge
  // passes), selections over many chunks (Nonzero, Unique) and long Repeats and Searchsorteds,
  // compared with the reference evaluator.
  std::mt19937_64 rng(19);
  std::normal_distribution<double> normal(0.0, 10.0);
  const auto random_array = [&](DType dt, const Shape& shape, const std::function<double(int64_t)>& value) {
    Array a = Array::zeros(dt, shape);
    for (int64_t i = 0; i < a.size(); ++i) {
      const double v = value(i);
      switch (dt) {
        case DType::Float64: a.data<double>()[i] = v; break;
        case DType::Float32: a.data<float>()[i] = static_cast<float>(v); break;
        case DType::Int64: a.data<int64_t>()[i] = static_cast<int64_t>(v); break;
        case DType::Int8: a.data<int8_t>()[i] = static_cast<int8_t>(static_cast<int64_t>(v)); break;
        case DType::Int32: a.data<int32_t>()[i] = static_cast<int32_t>(v); break;
        case DType::Bool: a.data<uint8_t>()[i] = v != 0; break;
        default: FAIL("dtype");
      }
    }
    return a;
  };
  struct Case {
    FunctionGraph graph;
    std::vector<Array> inputs;
  };
  std::vector<Case> cases;
  const auto add_outputs = [&](const char* name, DType dt, const Shape& shape, const std::function<VarList(const Var&)>& f,
                               const std::function<double(int64_t)>& value) {
    GraphBuilder g(name);
    Shape any(shape.size(), -1);
    auto x = g.input("x", dt, any);
    const VarList ys = f(x);
    for (std::size_t k = 0; k < ys.size(); ++k) g.output(ys[k], "y" + std::to_string(k));
    cases.push_back({g.build(), {random_array(dt, shape, value)}});
  };
  const auto add = [&](const char* name, DType dt, const Shape& shape, const std::function<Var(const Var&)>& f,
                       const std::function<double(int64_t)>& value) {
    add_outputs(name, dt, shape, [&](const Var& x) { return VarList{f(x)}; }, value);
  };
  const auto noise = [&](int64_t) { return normal(rng); };
  add("softmax_rows", DType::Float64, {3, 3000}, [](const Var& x) { return softmax(x, 1); }, noise);
  add("softmax_columns", DType::Float32, {2500, 3}, [](const Var& x) { return softmax(x, 0); }, noise);
  add("log_softmax_all_transposed", DType::Float64, {70, 50},
      [](const Var& x) { return log_softmax(transpose(x), std::nullopt); }, noise);
  add("softmax_grad_rows", DType::Float64, {2, 2000},
      [](const Var& x) { return softmax_grad(x, softmax(x, 1), 1); }, noise);
  // Ties of the maximum at 100 and 2900 (the first wins); NaNs at 2000 and 2500 in row 2.
  const auto peaks = [&](int64_t i) {
    const int64_t k = i % 3000;
    if (i / 3000 == 2 && (k == 2000 || k == 2500)) return std::nan("");
    return k == 100 || k == 2900 ? 1000.0 : normal(rng);
  };
  add("argmax_rows", DType::Float64, {4, 3000}, [](const Var& x) { return argmax(x, 1); }, peaks);
  add("argmax_all_transposed", DType::Float64, {4, 3000}, [](const Var& x) { return argmax(transpose(x), {0, 1}); },
      [&](int64_t i) { return i == 7001 ? 1000.0 : normal(rng); });
  std::uniform_int_distribution<int64_t> small(-1000, 1000);
  add("cumsum_flat_int64", DType::Int64, {300, 200}, [](const Var& x) { return cumsum(x); },
      [&](int64_t) { return static_cast<double>(small(rng)); });
  add("cumsum_rows_int8_wraps", DType::Int8, {3, 20000}, [](const Var& x) { return cumsum(x, 1); },
      [&](int64_t) { return static_cast<double>(small(rng) % 128); });
  add("cumprod_columns_float64", DType::Float64, {9000, 3}, [](const Var& x) { return cumprod(x, 0); },
      [&](int64_t) { return 1.0 + normal(rng) * 1e-4; });
  add("cumsum_bool_transposed", DType::Bool, {5000, 4}, [](const Var& x) { return cumsum(transpose(x), 1); },
      [&](int64_t i) { return i == 4 * 4000 + 1 ? 1.0 : 0.0; });
  // Sorts: rows of several tiles (merge passes), many ties (stability) and NaNs, any layout.
  const auto ties = [&](int64_t i) { return i % 997 == 5 ? std::nan("") : std::round(normal(rng) / 4); };
  add("sort_rows_float64_ties_nans", DType::Float64, {3, 5000}, [](const Var& x) { return sort(x, 1); }, ties);
  add("argsort_rows_float64_ties_nans", DType::Float64, {2, 3100}, [](const Var& x) { return argsort(x, -1); }, ties);
  add("argsort_columns_int8_transposed", DType::Int8, {2, 4500}, [](const Var& x) { return argsort(transpose(x), 0); },
      [&](int64_t) { return static_cast<double>(small(rng) % 100); });
  add("sort_float32_one_tile", DType::Float32, {5, 1000}, [](const Var& x) { return sort(x, 1); }, noise);
  // Selections over many chunks: the counts' scan and each chunk's first position.
  add_outputs("nonzero_sparse_3d", DType::Float64, {30, 40, 50},
              [](const Var& x) { return nonzero(x); }, [&](int64_t i) { return i % 7 == 0 || i % 11 == 3 ? 1.5 : 0.0; });
  add_outputs("unique_flat_all_outputs", DType::Int32, {300, 70},
              [](const Var& x) { return unique(x, true, true, true); }, [&](int64_t) { return static_cast<double>(small(rng) % 300); });
  add_outputs("unique_rows_axis0", DType::Int8, {3000, 3},
              [](const Var& x) { return unique(x, true, true, true, 0); }, [&](int64_t) { return static_cast<double>(small(rng) % 3); });
  add("unique_float64_nans", DType::Float64, {5000}, [](const Var& x) { return unique(x)[0]; }, ties);
  // Long Repeat (running sums of the counts searched) and Searchsorted of many values.
  add("repeat_by_counts", DType::Int64, {2, 3000},
      [](const Var& x) { return repeat(x, cast(abs(subtensor(x, {idx(0)})) % 4, DType::Int64), 1); },
      [&](int64_t) { return static_cast<double>(small(rng)); });
  add("searchsorted_sorted_rows", DType::Float64, {4000},
      [](const Var& x) { return searchsorted(sort(x, 0), x, "right"); }, ties);
  // Advanced indexing: a mask over many chunks (its true elements' coordinates by the Nonzero
  // kernels), set through a mask, and two index arrays with repeated positions accumulating.
  add("mask_gather_transposed", DType::Float64, {300, 200},
      [](const Var& x) { return advanced_subtensor(transpose(x), {gt(transpose(x), 0.0)}); }, noise);
  add("mask_set_rows", DType::Float64, {400, 150},
      [](const Var& x) { return advanced_set_subtensor(x, scalar_constant(DType::Float64, -1), {slice(), lt(at(x, 0), 0.0)}); },
      noise);
  add("two_arrays_inc_repeats", DType::Int32, {50, 60}, [](const Var& x) {
    Var rows = cast(abs(x) % 50, DType::Int64), cols = cast(abs(x * 7) % 60, DType::Int64);
    return advanced_inc_subtensor(x, x, {rows, cols});
  }, [&](int64_t) { return static_cast<double>(small(rng)); });
  NamedGraphs graphs;
  for (const Case& c : cases) graphs.emplace_back(&c.graph, std::string(c.graph.name()));
  const BuildResult built = compile_bundle(graphs, "long_rows_opencl", opencl_options());
  Library so(built.library_path);
  for (const Case& c : cases) {
    CAPTURE(c.graph.name());
    const std::vector<Array> want = evaluate(c.graph, c.inputs);
    for (bool into : {false, true}) {
      const CallResult got = call_opencl(so, std::string(c.graph.name()), c.inputs, into);
      REQUIRE_MESSAGE(got.status == KILN_OK, got.error);
      REQUIRE(got.outputs.size() == want.size());
      for (std::size_t k = 0; k < want.size(); ++k) {
        CAPTURE(k);
        const auto diff = compare_arrays(got.outputs[k], want[k]);
        CHECK_MESSAGE(!diff, *diff);
      }
    }
  }
#endif
}

TEST_CASE("opencl: Elemwise vector path and reduction row, column and lane paths, with their fallbacks") {
#ifndef KILN_TEST_OPENCL
  MESSAGE("skipped: no OpenCL platform (kiln_tests was built without OpenCL headers and loader)");
#else
  if (opencl_platform_missing()) return;
  // The contiguous Elemwise path moves four elements per work-item when every operand is
  // aligned to the vector, and falls back to one at a time for the tail and for unaligned
  // operands: lengths around multiples of 4, 0-d and zero-length, slices at odd offsets inside
  // the graph, and device inputs and call_into outputs at odd byte offsets. Reductions take the
  // contiguous-row group path, the lane path (leading axes, many short rows, unsplittable
  // folds) with and without chunks, or the general path: every one against the evaluator.
  std::mt19937_64 rng(4);
  std::uniform_int_distribution<int64_t> small(-100, 100);
  std::normal_distribution<double> normal(0.0, 3.0);
  const auto random_array = [&](DType dt, const Shape& shape) {
    Array a = Array::zeros(dt, shape);
    visit_real_dtype(dt, [&](auto t) {
      using T = decltype(t);
      for (int64_t i = 0; i < a.size(); ++i) {
        if constexpr (std::is_same_v<T, bool>)
          a.data<uint8_t>()[i] = small(rng) > 0;
        else if constexpr (std::is_floating_point_v<T>)
          a.data<T>()[i] = i % 101 == 17 && std::is_same_v<T, double> ? std::nan("") : static_cast<T>(normal(rng));
        else
          a.data<T>()[i] = static_cast<T>(small(rng));
      }
    });
    return a;
  };
  struct Case {
    FunctionGraph graph;
    std::vector<Shape> shapes;  // input shapes to try (one run each)
    DType dtype;
    std::optional<double> rtol;
  };
  std::vector<Case> cases;
  const auto add = [&](const std::string& name, DType dt, int n_in, int ndim, const std::vector<Shape>& shapes,
                       const std::function<Var(const std::vector<Var>&)>& f, std::optional<double> rtol = std::nullopt) {
    GraphBuilder g(name);
    std::vector<Var> xs;
    for (int k = 0; k < n_in; ++k) xs.push_back(g.input("x" + std::to_string(k), dt, Shape(static_cast<std::size_t>(ndim), -1)));
    g.output(f(xs), "y");
    cases.push_back({g.build(), shapes, dt, rtol});
  };
  // Elemwise: every dtype the GPU backends take, lengths 0..9 and around a group's worth.
  const std::vector<Shape> lengths = {{0}, {1}, {3}, {4}, {5}, {7}, {8}, {9}, {1023}, {1026}, {4101}};
  for (DType dt : {DType::Float32, DType::Float64, DType::Int8, DType::Int16, DType::Int32, DType::Int64, DType::UInt8,
                   DType::UInt16, DType::UInt32, DType::UInt64}) {
    const std::string n(dtype_name(dt));
    add("ew_add_mul_" + n, dt, 2, 1, lengths, [](const std::vector<Var>& x) { return x[0] * x[1] + x[0]; });
    // A 0-d operand broadcast (a single element read once per vector) and a 2-d shape.
    add("ew_scalar_" + n, dt, 2, 2, {{37, 41}, {4, 4}, {1, 1}},
        [](const std::vector<Var>& x) { return x[0] - at(at(x[1], 0), 0); });
    // A slice at offset 1 (a view 1 element into its buffer: unaligned, the scalar loop) and
    // one at offset 4 (aligned again).
    add("ew_slice1_" + n, dt, 1, 1, {{10}, {1030}}, [](const std::vector<Var>& x) {
      return subtensor(x[0], {slice(int64_t{1}, int64_t{-4})}) + subtensor(x[0], {slice(int64_t{4}, int64_t{-1})});
    });
  }
  add("ew_bool", DType::Bool, 2, 1, lengths,
      [](const std::vector<Var>& x) { return (x[0] & x[1]) ^ x[1]; });
  add("ew_0d_float64", DType::Float64, 2, 0, {{}}, [](const std::vector<Var>& x) { return exp(x[0]) + x[1]; });
  // Reductions.
  const std::vector<Shape> mats = {{5, 3000}, {3000, 7}, {3000, 40}, {50, 300}, {2, 70000}, {0, 5}, {5, 0}, {1, 1}};
  for (DType dt : {DType::Float64, DType::Float32, DType::Int32, DType::Int8}) {
    const std::string n(dtype_name(dt));
    const std::optional<double> tol = dt == DType::Float32 ? std::optional<double>(1e-4) : std::nullopt;
    add("sum_rows_" + n, dt, 1, 2, mats, [](const std::vector<Var>& x) { return sum(x[0], std::vector<int>{1}); }, tol);
    add("sum_cols_" + n, dt, 1, 2, mats, [](const std::vector<Var>& x) { return sum(x[0], std::vector<int>{0}); }, tol);
    add("max_rows_" + n, dt, 1, 2, {{5, 3000}, {3000, 7}, {1, 1}},
        [](const std::vector<Var>& x) { return max(x[0], std::vector<int>{1}); });
    add("min_cols_" + n, dt, 1, 2, {{3000, 40}, {50, 300}, {1, 1}},
        [](const std::vector<Var>& x) { return min(x[0], std::vector<int>{0}); });
    add("sum_all_" + n, dt, 1, 2, {{300, 200}, {0, 4}, {1, 1}}, [](const std::vector<Var>& x) { return sum(x[0]); }, tol);
  }
  const std::vector<Shape> cubes = {{20, 30, 40}, {3, 2, 700}, {400, 3, 2}, {2, 0, 3}};
  for (const std::vector<int>& axes : std::vector<std::vector<int>>{{0, 1}, {1, 2}, {0, 2}, {1}}) {
    std::string n = "sum3d";
    for (int a : axes) n += "_" + std::to_string(a);
    add(n, DType::Float64, 1, 3, cubes, [axes](const std::vector<Var>& x) { return sum(x[0], axes); });
  }
  // Layouts: a transposed input (its rows are columns: the lane path), a column slice (rows at
  // an offset, the contiguous-row group path), every other column (the general path).
  add("sum_transposed_rows", DType::Float64, 1, 2, {{300, 200}, {3000, 7}},
      [](const std::vector<Var>& x) { return sum(transpose(x[0]), std::vector<int>{1}); });
  add("sum_sliced_rows", DType::Float32, 1, 2, {{40, 3000}, {3000, 9}},
      [](const std::vector<Var>& x) { return sum(subtensor(x[0], {slice(), slice(int64_t{1})}), std::vector<int>{1}); },
      1e-4);
  add("max_every_other_column", DType::Float64, 1, 2, {{40, 3000}, {3000, 40}}, [](const std::vector<Var>& x) {
    return max(subtensor(x[0], {slice(), slice(none, none, int64_t{2})}), std::vector<int>{0});
  });
  // Folds that may not be split: one work-item per output, in order.
  add("prod_without_zeros_rows", DType::Int64, 1, 2, {{500, 9}, {3, 40}, {0, 3}},
      [](const std::vector<Var>& x) { return prod_without_zeros(x[0] % 3, std::vector<int>{1}); });
  add("prod_without_zeros_cols", DType::Float64, 1, 2, {{9, 500}, {40, 3}},
      [](const std::vector<Var>& x) { return prod_without_zeros(x[0], std::vector<int>{0}); });
  add("all_rows_bool", DType::Bool, 1, 2, {{3000, 7}, {5, 3000}}, [](const std::vector<Var>& x) { return all(x[0], std::vector<int>{1}); });
  add("any_cols_bool", DType::Bool, 1, 2, {{3000, 7}, {5, 3000}}, [](const std::vector<Var>& x) { return any(x[0], std::vector<int>{0}); });
  add("sum_0d", DType::Float64, 1, 0, {{}}, [](const std::vector<Var>& x) { return sum(x[0]); });

  NamedGraphs graphs;
  for (const Case& c : cases) graphs.emplace_back(&c.graph, std::string(c.graph.name()));
  const BuildResult built = compile_bundle(graphs, "fast_paths_opencl", opencl_options());
  Library so(built.library_path);
  for (const Case& c : cases) {
    CAPTURE(c.graph.name());
    for (const Shape& shape : c.shapes) {
      std::string shape_text;
      for (int64_t n : shape) shape_text += std::to_string(n) + " ";
      CAPTURE(shape_text);
      std::vector<Array> inputs;
      for (std::size_t k = 0; k < c.graph.inputs().size(); ++k) inputs.push_back(random_array(c.dtype, shape));
      const std::vector<Array> want = evaluate(c.graph, inputs);
      for (int shift = 0; shift < 4; ++shift) {
        CAPTURE(shift);
        // shift 0: aligned device buffers, through call and call_into; 1..3: every input and
        // the call_into output `shift` elements into its buffer.
        for (bool into : {false, true}) {
          if (shift > 0 && !into) continue;
          const CallResult got = shift == 0 ? call_opencl(so, std::string(c.graph.name()), inputs, into)
                                            : call_opencl_shifted(so, std::string(c.graph.name()), inputs, shift);
          REQUIRE_MESSAGE(got.status == KILN_OK, got.error);
          REQUIRE(got.outputs.size() == 1);
          const auto diff = compare_arrays(got.outputs[0], want[0], c.rtol, c.rtol ? std::optional<double>(1e-4) : std::nullopt);
          CHECK_MESSAGE(!diff, *diff);
        }
      }
    }
  }
#endif
}

TEST_CASE("opencl: products span many tiles, in every layout, through CLBlast and the tiled kernel") {
#ifndef KILN_TEST_OPENCL
  MESSAGE("skipped: no OpenCL platform (kiln_tests was built without OpenCL headers and loader)");
#else
  if (opencl_platform_missing()) return;
  // The fixtures' matrices fit one 16-by-16 tile; these span several tiles with ragged edges
  // (37-by-50 @ 50-by-29), in layouts CLBlast reads in place (contiguous, transposed, a column
  // slice) and layouts only the tiled kernel takes (reversed rows, every other column, a
  // broadcast row), for floats (CLBlast) and integers that wrap (the kernel), compared with
  // the reference evaluator.
  std::mt19937 rng(19);
  const auto random_array = [&](DType dt, const Shape& shape) {
    Array a = Array::empty(dt, shape);
    std::uniform_real_distribution<double> dist(-1, 1);
    std::uniform_int_distribution<std::int64_t> ints(-1000, 1000);
    visit_real_dtype(dt, [&](auto t) {
      using T = decltype(t);
      for (std::int64_t i = 0; i < a.size(); ++i) {
        if constexpr (std::is_floating_point_v<T>)
          a.data<T>()[i] = static_cast<T>(dist(rng));
        else
          a.data<T>()[i] = static_cast<T>(ints(rng));
      }
    });
    return a;
  };
  const auto layouts = [&](DType dt, std::int64_t rows, std::int64_t cols) {
    std::vector<std::pair<std::string, Array>> out;
    out.emplace_back("contiguous", random_array(dt, {rows, cols}));
    Array t = random_array(dt, {cols, rows});
    out.emplace_back("transposed", t.view({rows, cols}, {1, rows}));
    Array wide = random_array(dt, {rows, cols + 3});
    out.emplace_back("column slice", wide.view({rows, cols}, {cols + 3, 1}, 1));
    Array r = random_array(dt, {rows, cols});
    out.emplace_back("reversed rows", r.view({rows, cols}, {-cols, 1}, (rows - 1) * cols));
    Array w = random_array(dt, {rows, 2 * cols});
    out.emplace_back("every other column", w.view({rows, cols}, {2 * cols, 2}));
    Array b = random_array(dt, {cols});
    out.emplace_back("broadcast row", b.view({rows, cols}, {0, 1}));
    return out;
  };
  const std::vector<std::pair<DType, DType>> dtypes = {
      {DType::Float64, DType::Float64}, {DType::Float32, DType::Float32}, {DType::Int32, DType::Int32},
      {DType::Int8, DType::Int8}, {DType::Int16, DType::Float64}};
  std::vector<FunctionGraph> graphs_owned;
  for (const auto& [xt, yt] : dtypes) {
    GraphBuilder g(std::string("dot_") + std::string(dtype_name(xt)) + "_" + std::string(dtype_name(yt)));
    auto x = g.input("x", xt, {-1, -1});
    auto y = g.input("y", yt, {-1, -1});
    g.output(dot(x, y), "z");
    graphs_owned.push_back(g.build());
  }
  NamedGraphs graphs;
  for (const FunctionGraph& fg : graphs_owned) graphs.emplace_back(&fg, std::string(fg.name()));
  const BuildResult built = compile_bundle(graphs, "products_opencl", opencl_options());
  Library so(built.library_path);
  for (std::size_t k = 0; k < dtypes.size(); ++k) {
    const FunctionGraph& fg = graphs_owned[k];
    CAPTURE(fg.name());
    const auto xs = layouts(dtypes[k].first, 37, 50), ys = layouts(dtypes[k].second, 50, 29);
    for (std::size_t i = 0; i < xs.size(); ++i) {
      // Every x layout with a contiguous y, and every y layout with a transposed x.
      for (const auto& [xa, ya] : {std::pair{&xs[i], &ys[0]}, std::pair{&xs[1], &ys[i]}}) {
        CAPTURE(xa->first);
        CAPTURE(ya->first);
        const std::vector<Array> inputs = {xa->second, ya->second};
        const std::vector<Array> want = evaluate(fg, inputs);
        const bool f32 = dtypes[k].first == DType::Float32;
        for (bool into : {false, true}) {
          const CallResult got = call_opencl(so, std::string(fg.name()), inputs, into);
          REQUIRE_MESSAGE(got.status == KILN_OK, got.error);
          const auto diff = compare_arrays(got.outputs[0], want[0], f32 ? std::optional<double>(1e-4) : std::nullopt,
                                           f32 ? std::optional<double>(1e-5) : std::nullopt);
          CHECK_MESSAGE(!diff, *diff);
        }
      }
    }
  }
#endif
}

TEST_CASE("opencl: batched products go to one strided-batched CLBlast call, or loop where the layout does not allow it") {
#ifndef KILN_TEST_OPENCL
  MESSAGE("skipped: no OpenCL platform (kiln_tests was built without OpenCL headers and loader)");
#else
  if (opencl_platform_missing()) return;
  // BatchedDot and Blockwise of Dot over 5 products of 37×50 by 50×29: float32/float64 with
  // one batch dimension take CLBlastXgemmStridedBatched (contiguous, transposed cores, every
  // other batch element, a static broadcast batch of x: batch stride 0); a reversed batch
  // (negative batch stride), two batch dimensions and int32 loop over the batch as before.
  std::mt19937 rng(5);
  const int64_t B = 5, m = 37, k = 50, n = 29;
  const auto random_array = [&](DType dt, const Shape& shape) {
    Array a = Array::empty(dt, shape);
    std::uniform_real_distribution<double> dist(-1, 1);
    visit_real_dtype(dt, [&](auto t) {
      using T = decltype(t);
      for (std::int64_t i = 0; i < a.size(); ++i) a.data<T>()[i] = static_cast<T>(dist(rng) * (std::is_floating_point_v<T> ? 1 : 100));
    });
    return a;
  };
  // (B, r, c) operands in several layouts.
  const auto layouts = [&](DType dt, int64_t r, int64_t c) {
    std::vector<std::pair<std::string, Array>> out;
    out.emplace_back("contiguous", random_array(dt, {B, r, c}));
    out.emplace_back("transposed cores", random_array(dt, {B, c, r}).view({B, r, c}, {c * r, 1, r}));
    out.emplace_back("every other batch", random_array(dt, {2 * B, r, c}).view({B, r, c}, {2 * r * c, c, 1}));
    out.emplace_back("reversed batch", random_array(dt, {B, r, c}).view({B, r, c}, {-r * c, c, 1}, (B - 1) * r * c));
    return out;
  };
  struct Case {
    FunctionGraph graph;
    DType dtype;
    bool broadcast_x, two_batch;
  };
  std::vector<Case> cases;
  for (DType dt : {DType::Float32, DType::Float64, DType::Int32}) {
    const std::string nm(dtype_name(dt));
    {
      GraphBuilder g("batched_dot_" + nm);
      auto x = g.input("x", dt, {-1, -1, -1});
      auto y = g.input("y", dt, {-1, -1, -1});
      g.output(batched_dot(x, y), "z");
      cases.push_back({g.build(), dt, false, false});
    }
    {
      GraphBuilder g("matmul_" + nm);
      auto x = g.input("x", dt, {-1, -1, -1});
      auto y = g.input("y", dt, {-1, -1, -1});
      g.output(matmul(x, y), "z");
      cases.push_back({g.build(), dt, false, false});
    }
  }
  for (DType dt : {DType::Float32, DType::Float64}) {
    const std::string nm(dtype_name(dt));
    {
      GraphBuilder g("matmul_broadcast_x_" + nm);
      auto x = g.input("x", dt, {1, -1, -1});
      auto y = g.input("y", dt, {-1, -1, -1});
      g.output(matmul(x, y), "z");
      cases.push_back({g.build(), dt, true, false});
    }
    {
      GraphBuilder g("matmul_two_batch_dims_" + nm);
      auto x = g.input("x", dt, {-1, -1, -1, -1});
      auto y = g.input("y", dt, {-1, -1, -1, -1});
      g.output(matmul(x, y), "z");
      cases.push_back({g.build(), dt, false, true});
    }
  }
  NamedGraphs graphs;
  for (const Case& c : cases) graphs.emplace_back(&c.graph, std::string(c.graph.name()));
  const BuildResult built = compile_bundle(graphs, "batched_opencl", opencl_options());
  Library so(built.library_path);
  for (const Case& c : cases) {
    CAPTURE(c.graph.name());
    std::vector<std::pair<std::string, Array>> xs, ys;
    if (c.broadcast_x) {
      xs.emplace_back("one batch element", random_array(c.dtype, {1, m, k}));
      ys = layouts(c.dtype, k, n);
    } else if (c.two_batch) {
      xs.emplace_back("two batch dims", random_array(c.dtype, {2, 3, m, k}));
      ys.emplace_back("two batch dims", random_array(c.dtype, {2, 3, k, n}));
    } else {
      xs = layouts(c.dtype, m, k);
      ys = layouts(c.dtype, k, n);
    }
    for (std::size_t i = 0; i < std::max(xs.size(), ys.size()); ++i) {
      const auto& xa = xs[std::min(i, xs.size() - 1)];
      const auto& ya = ys[std::min(i, ys.size() - 1)];
      CAPTURE(xa.first);
      CAPTURE(ya.first);
      const std::vector<Array> inputs = {xa.second, ya.second};
      const std::vector<Array> want = evaluate(c.graph, inputs);
      const bool f32 = c.dtype == DType::Float32;
      for (bool into : {false, true}) {
        const CallResult got = call_opencl(so, std::string(c.graph.name()), inputs, into);
        REQUIRE_MESSAGE(got.status == KILN_OK, got.error);
        const auto diff = compare_arrays(got.outputs[0], want[0], f32 ? std::optional<double>(1e-4) : std::nullopt,
                                         f32 ? std::optional<double>(1e-5) : std::nullopt);
        CHECK_MESSAGE(!diff, *diff);
      }
    }
  }
#endif
}

TEST_CASE("opencl: linear algebra and a product in one source, on host copies, as the C++ backend computes and fails") {
#ifndef KILN_TEST_OPENCL
  MESSAGE("skipped: no OpenCL platform (kiln_tests was built without OpenCL headers and loader)");
#else
  if (opencl_platform_missing()) return;
  // The fixtures have one linear-algebra op per graph; an MvNormal log-density's pieces mix
  // them with a product (the host path's matrix view and the product prologue's device view
  // in one source), read a transposed input in place, and fail as the cpp backend does.
  GraphBuilder g("mvn_pieces");
  auto s = g.input("s", DType::Float64, {-1, -1});
  auto b = g.input("b", DType::Float64, {-1});
  auto l = cholesky(s, true, true);
  auto z = solve_triangular(l, b, true);
  g.output(dot(l, z), "y");
  g.output(det(s), "d");
  g.output(slogdet(s)[1], "logdet");
  g.output(matrix_inverse(s), "inv");
  g.output(eigvalsh(s), "eigenvalues");
  const FunctionGraph fg = g.build();
  const BuildResult built = compile_bundle({{&fg, "mvn_pieces"}}, "mvn_pieces_opencl", opencl_options());
  Library so(built.library_path);
  const std::int64_t n = 37;
  Array a = Array::empty(DType::Float64, {n, n});
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> dist(-1, 1);
  for (std::int64_t i = 0; i < a.size(); ++i) a.data<double>()[i] = dist(rng);
  Array spd = Array::empty(DType::Float64, {n, n});
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double v = i == j ? static_cast<double>(n) : 0.0;
      for (std::int64_t k = 0; k < n; ++k) v += a.data<double>()[i * n + k] * a.data<double>()[j * n + k];
      spd.data<double>()[i * n + j] = v;
    }
  Array rhs = Array::empty(DType::Float64, {n});
  for (std::int64_t i = 0; i < n; ++i) rhs.data<double>()[i] = dist(rng);
  for (const Array& sm : {spd, spd.view({n, n}, {1, n})}) {
    const std::vector<Array> inputs = {sm, rhs};
    const std::vector<Array> want = evaluate(fg, inputs);
    for (bool into : {false, true}) {
      const CallResult got = call_opencl(so, "mvn_pieces", inputs, into);
      REQUIRE_MESSAGE(got.status == KILN_OK, got.error);
      for (std::size_t k = 0; k < want.size(); ++k) {
        const auto diff = compare_arrays(got.outputs[k], want[k], 1e-9, 1e-9);
        CHECK_MESSAGE(!diff, k << ": " << *diff);
      }
    }
  }
  // Not positive definite with on_error='raise': the cpp backend's status and message.
  Array bad = spd.contiguous();
  bad.data<double>()[0] = -1.0;
  const CallResult got = call_opencl(so, "mvn_pieces", {bad, rhs}, false);
  CHECK(got.status == KILN_ERR_LINALG);
  CHECK_MESSAGE(got.error.find("matrix is not positive definite") != std::string::npos, got.error);
  CHECK_MESSAGE(got.error.find("Cholesky") != std::string::npos, got.error);
#endif
}

TEST_CASE("opencl: KILN_OPENCL_DEVICE picks the device by indices or by name, and a name that matches none is reported") {
#ifndef KILN_TEST_OPENCL
  MESSAGE("skipped: no OpenCL platform (kiln_tests was built without OpenCL headers and loader)");
#else
  if (opencl_platform_missing()) return;
  // The device is chosen once per loaded library, so each setting gets a library of its own.
  using DeviceFn = const char* (*)();
  const char* saved = std::getenv("KILN_OPENCL_DEVICE");
  const std::string before = saved ? saved : "";
  const auto run_with = [&](const char* setting, const std::string& library) {
    GraphBuilder g("pick");
    auto x = g.input("x", DType::Float64, {-1});
    g.output(x * x + 1.0, "y");
    FunctionGraph fg = g.build();
    const BuildResult built = compile_bundle({{&fg, "pick"}}, library, opencl_options());
    if (setting) setenv("KILN_OPENCL_DEVICE", setting, 1);
    else unsetenv("KILN_OPENCL_DEVICE");
    Library so(built.library_path);
    auto device_of = reinterpret_cast<DeviceFn>(so.symbol("pick_opencl_device"));
    const bool exported = device_of != nullptr;
    REQUIRE_MESSAGE(exported, "pick_opencl_device is not exported");
    const std::string name = device_of();
    Array x_in = Array::empty(DType::Float64, {5});
    for (int i = 0; i < 5; ++i) x_in.data<double>()[i] = i - 2.0;
    const CallResult r = call_opencl(so, "pick", {x_in}, false);
    return std::make_pair(name, r);
  };
  const auto [first, first_call] = run_with(nullptr, "pick_default");
  REQUIRE(first_call.status == KILN_OK);
  CHECK(first_call.outputs[0].data<double>()[0] == 5.0);
  CHECK(first.find(" / ") != std::string::npos);
  // "0:0" is the first platform's first device; part of the default device's name, in other
  // case, picks it too.
  const auto [by_index, index_call] = run_with("0:0", "pick_index");
  CHECK(index_call.status == KILN_OK);
  std::string lower = first.substr(first.find(" / ") + 3, 6);
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  const auto [by_name, name_call] = run_with(lower.c_str(), "pick_name");
  CHECK(name_call.status == KILN_OK);
  CHECK(by_name == first);
  CHECK(name_call.outputs[0].data<double>()[4] == 5.0);
  // A device type, in any case: PoCL's device is a CPU.
  cl_device_id first_device = nullptr;
  cl_platform_id first_platform = nullptr;
  clGetPlatformIDs(1, &first_platform, nullptr);
  cl_device_type type = 0;
  if (clGetDeviceIDs(first_platform, CL_DEVICE_TYPE_ALL, 1, &first_device, nullptr) == CL_SUCCESS)
    clGetDeviceInfo(first_device, CL_DEVICE_TYPE, sizeof type, &type, nullptr);
  if (type & CL_DEVICE_TYPE_CPU) {
    const auto [by_type, type_call] = run_with("CPU", "pick_type");
    CHECK(by_type == by_index);
    CHECK(type_call.status == KILN_OK);
  }
  // Settings that name no device: the message says so, lists the devices, and every call
  // fails with it.
  for (const char* bad : {"no such device", "7:3"}) {
    CAPTURE(bad);
    const auto [message, call] = run_with(bad, std::string("pick_bad_") + (bad[0] == '7' ? "index" : "name"));
    CHECK(message.find(std::string("KILN_OPENCL_DEVICE=\"") + bad + "\" names no OpenCL device") != std::string::npos);
    CHECK(message.find(by_index) != std::string::npos);
    CHECK(call.status != KILN_OK);
    CHECK(call.error.find("names no OpenCL device") != std::string::npos);
  }
  if (saved) setenv("KILN_OPENCL_DEVICE", before.c_str(), 1);
  else unsetenv("KILN_OPENCL_DEVICE");
#endif
}

TEST_CASE("opencl: x[idx] += y scatters with atomics in the atomic mode (and for integers always), deterministically by default") {
#ifndef KILN_TEST_OPENCL
  MESSAGE("skipped: no OpenCL platform (kiln_tests was built without OpenCL headers and loader)");
#else
  if (opencl_platform_missing()) return;
  // Many repeated indices (negative ones too) into few rows, as a hierarchical model's
  // gradient scatters observations into groups; rows of several elements, y transposed (a
  // strided view), y broadcast from one row, and zero-length index vectors.
  std::mt19937 rng(20261207);
  struct Case {
    FunctionGraph graph;
    std::vector<Array> inputs;
  };
  std::vector<Case> cases;
  const auto values = [&](DType dt, const Shape& shape) {
    Array a = Array::empty(dt, shape);
    std::uniform_int_distribution<int> small(-50, 50);
    std::normal_distribution<double> normal(0.0, 1.0);
    visit_real_dtype(dt, [&](auto t) {
      using T = decltype(t);
      for (int64_t i = 0; i < a.size(); ++i)
        a.data<T>()[i] = std::is_floating_point_v<T> ? static_cast<T>(normal(rng)) : static_cast<T>(small(rng));
    });
    return a;
  };
  const auto indices = [&](int64_t n, int64_t rows) {
    Array a = Array::empty(DType::Int64, {n});
    std::uniform_int_distribution<int64_t> pick(-rows, rows - 1);
    for (int64_t i = 0; i < n; ++i) a.data<int64_t>()[i] = pick(rng);
    return a;
  };
  enum class YForm { kRows, kTransposed, kOneRow };
  const auto add = [&](const std::string& name, DType dt, int64_t rows, int64_t n, Shape row_shape, YForm form) {
    GraphBuilder g(name);
    Shape x_shape{rows}, y_shape{n};
    x_shape.insert(x_shape.end(), row_shape.begin(), row_shape.end());
    y_shape.insert(y_shape.end(), row_shape.begin(), row_shape.end());
    auto x = g.input("x", dt, Shape(x_shape.size(), -1));
    auto idx = g.input("idx", DType::Int64, {-1});
    Shape given = form == YForm::kTransposed ? Shape{y_shape[1], y_shape[0]} : form == YForm::kOneRow ? row_shape : y_shape;
    auto y = g.input("y", dt, Shape(given.size(), -1));
    auto yv = form == YForm::kTransposed ? transpose(y) : y;
    g.output(advanced_inc_subtensor1(x, yv, idx), "out");
    cases.push_back({g.build(), {values(dt, x_shape), indices(n, rows), values(dt, given)}});
  };
  for (DType dt : {DType::Float64, DType::Float32, DType::Int64, DType::Int32}) {
    const std::string t(dtype_name(dt));
    add("vector_" + t, dt, 85, 5000, {}, YForm::kRows);
    add("rows_" + t, dt, 37, 3000, {5}, YForm::kRows);
    add("transposed_" + t, dt, 11, 700, {3}, YForm::kTransposed);
  }
  add("one_row_float64", DType::Float64, 9, 400, {4, 2}, YForm::kOneRow);
  add("empty_index_float64", DType::Float64, 9, 0, {3}, YForm::kRows);
  NamedGraphs graphs;
  for (const Case& c : cases) graphs.emplace_back(&c.graph, c.graph.name());
  const BuildResult built = compile_bundle(graphs, "scatter_modes", opencl_options());
  Library so(built.library_path);
  for (const Case& c : cases) {
    CAPTURE(c.graph.name());
    const Array want = evaluate(c.graph, c.inputs)[0];
    const bool exact = !is_float(want.dtype());
    for (int mode : {-1, 1}) {
      CAPTURE(mode);
      const CallResult got = call_opencl_in_mode(so, c.graph.name(), c.inputs, mode == 1, mode);
      REQUIRE(got.status == KILN_OK);
      const Array& out = got.outputs[0];
      REQUIRE(out.shape() == want.shape());
      // The default is deterministic: the evaluator's sums bit for bit. Atomic float sums
      // round in another order: each output element sums about 60-120 terms of magnitude ~1,
      // so the order changes it by far less than 4096 ULP of 1 (seen: 40 ULP for float64,
      // 64 for float32).
      double worst = 0;
      visit_real_dtype(want.dtype(), [&](auto t) {
        using T = decltype(t);
        for (int64_t i = 0; i < want.size(); ++i)
          worst = std::max(worst, std::abs(static_cast<double>(out.data<T>()[i]) - static_cast<double>(want.data<T>()[i])));
      });
      if (exact || mode == -1) {
        CHECK(worst == 0);
      } else {
        const double eps = want.dtype() == DType::Float32 ? 1.1920929e-7 : 2.220446e-16;
        CHECK(worst <= 4096 * eps);
      }
    }
  }
  // An index out of range fails the call in the atomic mode too, with the deterministic kernel's
  // message; a mode other than 0 or 1 is refused.
  {
    Case& c = cases.front();
    std::vector<Array> bad = c.inputs;
    bad[1].data<int64_t>()[1234] = 85;
    const CallResult want = call_opencl(so, c.graph.name(), bad, false);
    const CallResult got = call_opencl_in_mode(so, c.graph.name(), bad, false, 1);
    CHECK(got.status == KILN_ERR_INDEX);
    CHECK(got.error == want.error);
    CHECK(got.error.find("index 85 is out of bounds for axis 0 with size 85") != std::string::npos);
    const kiln_graph_info& info = so.graph(c.graph.name());
    kiln_context* ctx = info.context_create();
    using ModeFn = int32_t (*)(kiln_context*, int32_t);
    auto set_mode = reinterpret_cast<ModeFn>(so.symbol(c.graph.name() + "_context_set_scatter_mode"));
    CHECK(set_mode(ctx, 2) == KILN_ERR_ARGUMENT);
    CHECK(std::string(info.context_last_error(ctx)).find("scatter mode 2") != std::string::npos);
    CHECK(set_mode(nullptr, 1) == KILN_ERR_ARGUMENT);
    info.context_destroy(ctx);
  }
#endif
}

TEST_CASE("opencl: IfElse runs only the branch taken, its condition read once") {
#ifndef KILN_TEST_OPENCL
  MESSAGE("skipped: no OpenCL platform (kiln_tests was built without OpenCL headers and loader)");
#else
  if (opencl_platform_missing()) return;
  // Branches that must not run when not taken: an Assert that fails (its kernel would claim the
  // status word) and an Alloc of 2^50 float64 (its allocation would fail); nested IfElses; several
  // outputs of mixed dtypes; a condition computed on the device. Compared with the reference
  // evaluator, and the failing branch's message with the C++ backend's words.
  const auto vec = [](DType dt) { return TensorType(dt, {kUnknownLength}); };
  const auto never = [](const Var& x, const char* text) { return assert_op(x, {scalar_constant(DType::Bool, 0)}, text); };
  const auto scalar = [](DType dt, double v) {
    Array a = Array::empty(dt, {});
    visit_real_dtype(dt, [&](auto t) { *a.data<decltype(t)>() = static_cast<decltype(t)>(v); });
    return a;
  };
  const auto vector = [](DType dt, const std::vector<double>& values) {
    Array a = Array::empty(dt, {static_cast<std::int64_t>(values.size())});
    visit_real_dtype(dt, [&](auto t) {
      for (std::size_t i = 0; i < values.size(); ++i) a.data<decltype(t)>()[i] = static_cast<decltype(t)>(values[i]);
    });
    return a;
  };
  std::vector<FunctionGraph> owned;
  {
    Var c = make_input(scalar_type(DType::Bool), "c");
    Var x = make_input(vec(DType::Float64), "x"), y = make_input(vec(DType::Float64), "y");
    Var shared = x * 2.0;
    owned.push_back(FunctionGraph({c, x, y}, {ifelse(c, exp(shared) + y, never(y - x, "else ran")), shared}));
  }
  {
    Var c = make_input(scalar_type(DType::Int64), "c");
    Var x = make_input(vec(DType::Float64), "x");
    Var huge = alloc(scalar_constant(DType::Float64, 1), IntList{std::int64_t{1} << 50});
    owned.push_back(FunctionGraph({c, x}, {ifelse(c, huge, x * 3.0)}));
  }
  {
    Var c1 = make_input(scalar_type(DType::Bool), "c1"), c2 = make_input(scalar_type(DType::Bool), "c2");
    Var x = make_input(vec(DType::Float64), "x");
    Var inner = ifelse(c2, exp(x), never(x, "inner else ran"));
    owned.push_back(FunctionGraph({c1, c2, x}, {ifelse(c1, inner + 1.0, never(x, "outer else ran") * 2.0)}));
  }
  {
    Var c = make_input(scalar_type(DType::Float32), "c");
    Var a = make_input(vec(DType::Int32), "a"), b = make_input(vec(DType::Int32), "b");
    Var s = make_input(scalar_type(DType::Float32), "s"), t = make_input(scalar_type(DType::Float32), "t");
    owned.push_back(FunctionGraph({c, a, b, s, t}, ifelse(c, {a + b, s * t, gt(a, b)}, {a - b, s - t, lt(a, b)})));
  }
  {
    Var x = make_input(vec(DType::Float64), "x");
    owned.push_back(FunctionGraph({x}, {ifelse(gt(sum(x), 0.0), sort(x, 0), cumsum(x) * 2.0)}));
  }
  NamedGraphs graphs;
  for (std::size_t k = 0; k < owned.size(); ++k) graphs.emplace_back(&owned[k], "ifelse" + std::to_string(k));
  const BuildResult built = compile_bundle(graphs, "ifelse_opencl", opencl_options());
  Library so(built.library_path);
  const Array x = vector(DType::Float64, {0.5, -1.0, 2.0}), y = vector(DType::Float64, {1.0, 2.0, 3.0});
  struct Run {
    std::size_t graph;
    std::vector<Array> inputs;
    const char* error;  ///< a substring of the expected failure, or null
  };
  const std::vector<Run> runs = {
      {0, {scalar(DType::Bool, 1), x, y}, nullptr},
      {0, {scalar(DType::Bool, 0), x, y}, "else ran"},
      {1, {scalar(DType::Int64, 0), x}, nullptr},
      {2, {scalar(DType::Bool, 1), scalar(DType::Bool, 1), x}, nullptr},
      {2, {scalar(DType::Bool, 1), scalar(DType::Bool, 0), x}, "inner else ran"},
      {2, {scalar(DType::Bool, 0), scalar(DType::Bool, 1), x}, "outer else ran"},
      {3, {scalar(DType::Float32, 0.5), vector(DType::Int32, {1, 5}), vector(DType::Int32, {3, 2}),
           scalar(DType::Float32, 2), scalar(DType::Float32, 7)}, nullptr},
      {3, {scalar(DType::Float32, 0), vector(DType::Int32, {1, 5}), vector(DType::Int32, {3, 2}),
           scalar(DType::Float32, 2), scalar(DType::Float32, 7)}, nullptr},
      {4, {x}, nullptr},
      {4, {vector(DType::Float64, {-0.5, -1.0, 1.0})}, nullptr},
  };
  for (const Run& r : runs) {
    const std::string name = graphs[r.graph].second;
    CAPTURE(name);
    CAPTURE(r.error ? r.error : "ok");
    for (bool into : {false, true}) {
      const CallResult got = call_opencl(so, name, r.inputs, into);
      if (r.error) {
        CHECK(got.status == KILN_ERR_ASSERT);
        CHECK_MESSAGE(got.error.find(r.error) != std::string::npos, got.error);
        continue;
      }
      REQUIRE_MESSAGE(got.status == KILN_OK, got.error);
      const std::vector<Array> want = evaluate(owned[r.graph], r.inputs);
      REQUIRE(got.outputs.size() == want.size());
      for (std::size_t k = 0; k < want.size(); ++k) {
        const auto diff = compare_arrays(got.outputs[k], want[k]);
        CHECK_MESSAGE(!diff, *diff);
      }
    }
  }
#endif
}

TEST_CASE("opencl: an op without a GPU kernel is a compile-time error naming op and backend") {
  for (const char* backend : {"opencl", "cuda"}) {
    CompileOptions o = opencl_options();
    o.backend = backend;
    // A general eigendecomposition (fixture complex/eig_float64): its results are complex, which
    // the GPU backends lack; every other linear algebra op runs (the linalg fixtures above).
    const std::vector<std::string> dirs = list_fixture_cases("complex/eig_float64");
    REQUIRE(!dirs.empty());
    const FixtureCase la = load_fixture_case(dirs[0]);
    try {
      emit_bundle({{&la.graph, "lacks"}}, "lacks", o);
      FAIL("expected a NotImplementedError");
    } catch (const NotImplementedError& e) {
      const std::string what = e.what();
      CHECK_MESSAGE(what.find("Eig") != std::string::npos, what);
      CHECK_MESSAGE(what.find(std::string(backend)) != std::string::npos, what);
      CHECK_MESSAGE(what.find("complex") != std::string::npos, what);
    }
  }
}

TEST_CASE("opencl: a scalar op the GPU dialects do not spell is refused by name") {
  GraphBuilder g("grad_k");
  auto x = g.input("x", DType::Float64, {-1});
  g.output(gammainc_grad_k(x, x), "y");
  CHECK_THROWS_WITH_AS(emit(g.build(), opencl_options()),
                       doctest::Contains("scalar op gammainc_grad_k on float64 has no opencl implementation"),
                       NotImplementedError);
}

TEST_CASE("opencl: GPU special functions are embedded where kernels call them, CUDA's math library where it has them") {
  const auto source = [](const FunctionGraph& fg, const char* backend) {
    CompileOptions o = opencl_options();
    o.backend = backend;
    return emit(fg.clone(), o).sources.source;
  };
  const auto has = [](const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; };
  GraphBuilder g("sf");
  auto x = g.input("x", DType::Float64, {-1});
  auto a = g.input("a", DType::Float32, {-1});
  g.output(erfinv(x) + psi(x), "y");
  g.output(gammainc(a, a), "z");
  const FunctionGraph fg = g.build();
  const std::string opencl = source(fg, "opencl"), cuda = source(fg, "cuda");
  // OpenCL: kiln's own functions, the ones called and what they need (gammainc's Temme expansion
  // calls erfcx), nothing else.
  for (const char* defined : {"double kiln_erfinv_double(", "double kiln_psi_double(", "float kiln_gammainc_float(",
                              "double kiln_erfcx_double(", "double kiln_sf_log1pmx("})
    CHECK_MESSAGE(has(opencl, defined), defined);
  for (const char* absent : {"kiln_i0_double", "kiln_erfcinv_double", "kiln_trigamma_double", "kiln_sf_i_series"})
    CHECK_MESSAGE(!has(opencl, absent), absent);
  // CUDA: its math library's erfinv (in double), kiln's psi and gammainc.
  CHECK(has(cuda, "erfinv((double)"));
  CHECK(!has(cuda, "kiln_erfinv_double"));
  CHECK(has(cuda, "double kiln_psi_double("));
  CHECK(has(cuda, "float kiln_gammainc_float("));
  // A graph calling none embeds none.
  GraphBuilder h("plain");
  auto y = h.input("y", DType::Float64, {-1});
  h.output(exp(y), "e");
  const FunctionGraph plain = h.build();
  for (const char* backend : {"opencl", "cuda"}) CHECK(!has(source(plain, backend), "kiln_sf_"));
}
