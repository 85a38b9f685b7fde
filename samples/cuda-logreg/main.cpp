// Creates a context of each CUDA graph of the sample (logreg_predict, and logreg_train: the
// loss and its gradients) and reports their inputs and outputs: on a machine with a CUDA GPU the
// contexts are ready for kDLCUDA tensors (cudaMalloc'd inputs, see docs/gpu_backends.md);
// without one every call fails with KILN_ERR_DEVICE and says why.
#include <cstdio>

#include "logreg_predict.h"
#include "logreg_train.h"

namespace {

int report(const char* name, kiln_context* ctx, const kiln_graph_info* info, void (*destroy)(kiln_context*)) {
  if (!ctx) {
    std::fprintf(stderr, "out of memory creating a context of %s\n", name);
    return 1;
  }
  std::printf("%s (cuda): %d inputs, %d outputs\n", name, static_cast<int>(info->num_inputs),
              static_cast<int>(info->num_outputs));
  destroy(ctx);
  return 0;
}

}  // namespace

int main() {
  return report("logreg_predict", logreg_predict_context_create(), logreg_predict_info(), logreg_predict_context_destroy) |
         report("logreg_train", logreg_train_context_create(), logreg_train_info(), logreg_train_context_destroy);
}
