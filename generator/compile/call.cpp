#include "compile/call.h"

#include <memory>

#include "ir/error.h"
#include "kiln/loader.hpp"

namespace kiln {

std::vector<Array> call_built_library(const Artifacts& built, const std::vector<Array>& inputs, int threads) {
  // The outputs' deleters live in the library: each output keeps it loaded.
  const auto so = std::make_shared<Library>(built.build.library_path);
  const kiln_graph_info& info = so->graph(built.sources.name);
  kiln_context* ctx = info.context_create();
  if (!ctx) throw RuntimeFailure("out of memory creating a context");
  info.context_set_num_threads(ctx, threads);
  std::vector<DLTensor> dl;
  for (const auto& a : inputs) dl.push_back(a.dltensor());
  if (dl.empty()) dl.resize(1);
  const auto num_outputs = static_cast<std::size_t>(info.num_outputs);
  std::vector<DLManagedTensor*> outs(num_outputs + 1, nullptr);
  const int32_t status = info.call(ctx, dl.data(), outs.data());
  const std::string error = info.context_last_error(ctx);
  info.context_destroy(ctx);
  if (status != KILN_OK) throw RuntimeFailure(std::string(kiln_status_name(status)) + ": " + error);
  std::vector<Array> results;
  for (std::size_t k = 0; k < num_outputs; ++k) {
    DLManagedTensor* m = outs[k];
    std::shared_ptr<void> owner(m, [so](void* p) {
      auto* mt = static_cast<DLManagedTensor*>(p);
      mt->deleter(mt);
    });
    results.push_back(Array::from_dlpack(m->dl_tensor, owner));
  }
  return results;
}

}  // namespace kiln
