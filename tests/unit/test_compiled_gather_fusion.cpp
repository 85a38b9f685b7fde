// Gather fusion (codegen/gather_fusion.h): which gathers an Elemwise reads inline, how lowering
// stores them (not at all), and the compiled loop against the reference evaluator — both
// spellings of the gather, several index dtypes, negative indices, non-contiguous operands
// (the strided loop), one and two threads, and out-of-range indices reported with NumPy's words
// wherever they are.
#include <doctest/doctest.h>

#include <random>

#include "api/elementwise.h"
#include "api/graph_builder.h"
#include "codegen/backend.h"
#include "codegen/stats.h"
#include "compile/compile.h"
#include "codegen/gather_fusion.h"
#include "codegen/lowering.h"
#include "compiled.h"
#include "eval/evaluator.h"
#include "fixtures.h"
#include "ops/advanced_subtensor.h"
#include "ops/array_util.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

Array uniform(DType dt, const Shape& shape, std::mt19937& rng) {
  Array a = Array::empty(DType::Float64, shape);
  std::uniform_real_distribution<double> dist(-2, 2);
  for (std::int64_t i = 0; i < a.size(); ++i) a.data<double>()[i] = dist(rng);
  return astype(a, dt);
}

/// Indices into a length-n axis (some negative when the dtype is signed), with `bad` at
/// position `bad_at` when that is >= 0.
Array indices(DType dt, std::int64_t count, std::int64_t n, std::mt19937& rng, std::int64_t bad_at = -1,
              std::int64_t bad = 0) {
  Array a = Array::empty(DType::Int64, {count});
  std::uniform_int_distribution<std::int64_t> pick(is_signed_int(dt) ? -n : 0, n - 1);
  for (std::int64_t i = 0; i < count; ++i) a.data<std::int64_t>()[i] = i == bad_at ? bad : pick(rng);
  return astype(a, dt);
}

/// y = mu[idx] + x, with the gather spelled as AdvancedSubtensor (3.x) or AdvancedSubtensor1.
FunctionGraph gather_add(DType dt, DType idx_dt, bool subtensor1, const std::string& name) {
  GraphBuilder g(name);
  auto mu = g.input("mu", dt, {-1});
  auto idx = g.input("idx", idx_dt, {-1});
  auto x = g.input("x", dt, {-1});
  Var gathered = subtensor1 ? take(mu, idx) : advanced_subtensor(mu, {idx});
  g.output(gathered * 2 + x, "y");
  return g.build();
}

}  // namespace

TEST_CASE("gather fusion: which gathers are read inline") {
  FunctionGraph fused = gather_add(DType::Float64, DType::Int64, false, "one_reader");
  CHECK(find_fused_gathers(fused).size() == 1);
  const LoweredGraph lg = lower(fused, [](const Apply&) { return false; }, 0, {}, {}, find_fused_gathers(fused));
  for (const Apply* node : lg.order)
    if (is_vector_gather(*node)) CHECK(lg.var(node->output_ptr(0)).kind == StorageKind::Fused);
  CHECK(graph_stats(fused, find_backend("cpp")).intermediates == 1);  // mu[idx] * 2 is stored; mu[idx] is not

  GraphBuilder g("two_readers");
  auto mu = g.input("mu", DType::Float64, {-1});
  auto idx = g.input("idx", DType::Int32, {-1});
  auto v = advanced_subtensor(mu, {idx});
  g.output(exp(v), "a");
  g.output(v * 3, "b");  // two readers: stored once instead of gathered twice
  FunctionGraph two = g.build();
  CHECK(find_fused_gathers(two).empty());

  GraphBuilder h("output");
  auto mu2 = h.input("mu", DType::Float64, {-1});
  auto idx2 = h.input("idx", DType::Int32, {-1});
  auto v2 = take(mu2, idx2);
  h.output(v2, "g");  // a graph output needs its storage
  h.output(exp(v2), "e");
  FunctionGraph out = h.build();
  CHECK(find_fused_gathers(out).empty());

  GraphBuilder m("matrix");
  auto rows = m.input("rows", DType::Float64, {-1, 3});
  auto idx3 = m.input("idx", DType::Int64, {-1});
  m.output(exp(take(rows, idx3)), "e");  // a row gather: not fused (vectors only)
  CHECK(find_fused_gathers(m.build()).empty());
}

TEST_CASE("compiled gather fusion: values, layouts, threads and index errors") {
  const std::vector<std::pair<DType, DType>> kinds = {
      {DType::Float64, DType::Int64}, {DType::Float32, DType::UInt8}, {DType::Float64, DType::Int16},
      // float32 values by int64 indices: the flat loop is `omp simd` with AVX2 gathers.
      {DType::Float32, DType::Int64}};
  std::vector<FunctionGraph> graphs;
  for (std::size_t k = 0; k < kinds.size(); ++k)
    graphs.push_back(gather_add(kinds[k].first, kinds[k].second, k == 1, "g" + std::to_string(k)));
  NamedGraphs named;
  for (std::size_t k = 0; k < graphs.size(); ++k) named.emplace_back(&graphs[k], "g" + std::to_string(k));
  BuildResult built = build_bundle(named, "gather_fusion");
  REQUIRE(!built.library_path.empty());
  Library so(built.library_path);
  std::mt19937 rng(8);
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    const auto& kind_pair = kinds[k];
    const auto dt = std::get<0>(kind_pair);
    const auto idx_dt = std::get<1>(kind_pair);
    const kiln_graph_info& info = so.graph("g" + std::to_string(k));
    const std::int64_t groups = idx_dt == DType::UInt8 ? 200 : 1000;
    // 100,000 elements: above the threshold where loops split over threads.
    for (const std::int64_t n : {std::int64_t{0}, std::int64_t{7}, std::int64_t{100000}}) {
      for (const bool strided : {false, true}) {
        INFO(dtype_name(dt) << " values, " << dtype_name(idx_dt) << " indices, n = " << n
                            << (strided ? ", strided idx and x" : ""));
        Array mu = uniform(dt, {groups}, rng);
        Array idx = indices(idx_dt, strided ? 2 * n : n, groups, rng);
        Array x = uniform(dt, {strided ? 2 * n : n}, rng);
        if (strided) {  // every other element: the strided loop
          idx = idx.view({n}, {2});
          x = x.view({n}, {-2}, n > 0 ? 2 * n - 1 : 0);
        }
        const Array want = evaluate(graphs[k], {mu, idx, x})[0];
        for (const int threads : {1, 2})
          for (const bool into : {false, true}) {
            CallResult r = call_compiled(info, {mu, idx, x}, into, threads);
            REQUIRE_MESSAGE(r.status == KILN_OK, r.error);
            auto diff = compare_arrays(r.outputs[0], want);
            CHECK_MESSAGE(!diff, *diff);
          }
      }
    }
    // Out of range anywhere — first, in the middle of the second thread's range, last.
    for (const std::int64_t at : {std::int64_t{0}, std::int64_t{77777}, std::int64_t{99999}}) {
      Array mu = uniform(dt, {groups}, rng);
      Array idx = indices(idx_dt, 100000, groups, rng, at, groups);
      Array x = uniform(dt, {100000}, rng);
      for (const int threads : {1, 2}) {
        CallResult r = call_compiled(info, {mu, idx, x}, false, threads);
        CHECK(r.status == KILN_ERR_INDEX);
        CHECK_MESSAGE(r.error.find("index " + std::to_string(groups) + " is out of bounds for axis 0 with size " +
                                   std::to_string(groups)) != std::string::npos,
                      r.error);
      }
    }
    // Nothing to gather from.
    CallResult r = call_compiled(info, {uniform(dt, {0}, rng), indices(idx_dt, 3, 1, rng), uniform(dt, {3}, rng)});
    CHECK(r.status == KILN_ERR_INDEX);
    CHECK_MESSAGE(r.error.find("is out of bounds for axis 0 with size 0") != std::string::npos, r.error);
  }
}
