#include "compiled.h"

namespace kiln::testing {

BuildOptions test_build_options() {
  BuildOptions o;
  o.cache_dir = KILN_TEST_CACHE_DIR;
  return o;
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

}  // namespace kiln::testing
