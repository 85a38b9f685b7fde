#include "compiled.h"

#include <algorithm>
#include <atomic>
#include <thread>

namespace kiln::testing {

BuildOptions test_build_options() {
  BuildOptions o;
  o.cache_dir = KILN_TEST_CACHE_DIR;
  return o;
}

CompileOptions test_compile_options() {
  CompileOptions o;
  o.build = test_build_options();
  o.rewrite = false;
  return o;
}

BuildResult build_bundle(const NamedGraphs& graphs, const std::string& name) {
  return compile_bundle(graphs, name, test_compile_options());
}

CallResult call_compiled(const kiln_graph_info& info, const std::vector<Array>& inputs, bool into, int threads) {
  CallResult r;
  kiln_context* ctx = info.context_create();
  info.context_set_num_threads(ctx, threads);
  std::vector<DLTensor> dl;
  for (const auto& a : inputs) dl.push_back(a.dltensor());
  if (dl.empty()) dl.resize(1);
  if (!into) {
    std::vector<DLManagedTensor*> outs(static_cast<std::size_t>(info.num_outputs) + 1, nullptr);
    r.status = info.call(ctx, dl.data(), outs.data());
    if (r.status == KILN_OK) {
      for (int32_t k = 0; k < info.num_outputs; ++k) {
        DLManagedTensor* m = outs[static_cast<std::size_t>(k)];
        std::shared_ptr<void> owner(m, [](void* p) {
          auto* mt = static_cast<DLManagedTensor*>(p);
          mt->deleter(mt);
        });
        r.outputs.push_back(Array::from_dlpack(m->dl_tensor, owner));
      }
    }
  } else {
    std::size_t total = 0;
    for (int32_t k = 0; k < info.num_outputs; ++k) total += static_cast<std::size_t>(info.outputs[k].ndim);
    std::vector<int64_t> shapes(total + 1);
    r.status = info.output_shapes(ctx, dl.data(), shapes.data());
    if (r.status == KILN_OK) {
      std::vector<DLTensor> outs;
      std::size_t pos = 0;
      for (int32_t k = 0; k < info.num_outputs; ++k) {
        Shape shape(shapes.begin() + static_cast<std::ptrdiff_t>(pos),
                    shapes.begin() + static_cast<std::ptrdiff_t>(pos + static_cast<std::size_t>(info.outputs[k].ndim)));
        pos += static_cast<std::size_t>(info.outputs[k].ndim);
        r.outputs.push_back(Array::zeros(static_cast<DType>(info.outputs[k].dtype), shape));
      }
      for (auto& a : r.outputs) outs.push_back(a.dltensor());
      if (outs.empty()) outs.resize(1);
      r.status = info.call_into(ctx, dl.data(), outs.data());
    }
    if (r.status != KILN_OK) r.outputs.clear();
  }
  r.error = info.context_last_error(ctx);
  info.context_destroy(ctx);
  return r;
}

std::vector<BuiltBundle> build_in_bundles(const NamedGraphs& graphs, const std::string& prefix,
                                          std::size_t per_bundle, const CompileOptions& options) {
  // Even bundles: n graphs into ceil(n / per_bundle) libraries whose sizes differ by one at most.
  const std::size_t n = graphs.size(), count = (n + per_bundle - 1) / std::max<std::size_t>(per_bundle, 1);
  std::vector<BuiltBundle> bundles(count);
  std::vector<GeneratedLibrary> libs(count);
  for (std::size_t b = 0, start = 0; b < count; ++b) {
    const std::size_t size = n / count + (b < n % count ? 1 : 0);
    NamedGraphs part(graphs.begin() + static_cast<std::ptrdiff_t>(start),
                     graphs.begin() + static_cast<std::ptrdiff_t>(start + size));
    for (std::size_t i = start; i < start + size; ++i) bundles[b].members.push_back(i);
    libs[b] = emit_bundle(part, prefix + "_" + std::to_string(b), options);
    start += size;
  }
  std::vector<std::size_t> order(count);
  for (std::size_t b = 0; b < count; ++b) order[b] = b;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return libs[a].source.size() > libs[b].source.size(); });
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t k; (k = next.fetch_add(1)) < count;) {
      const std::size_t b = order[k];
      try {
        bundles[b].library_path = build(libs[b], options).library_path;
      } catch (const std::exception& e) {
        bundles[b].error = e.what();
      }
    }
  };
  std::vector<std::thread> workers;
  const std::size_t threads = std::min<std::size_t>(count, std::max(2u, std::thread::hardware_concurrency()));
  for (std::size_t t = 0; t < threads; ++t) workers.emplace_back(work);
  for (auto& w : workers) w.join();
  return bundles;
}

}  // namespace kiln::testing
