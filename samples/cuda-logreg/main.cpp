// Creates a context of the CUDA build of logreg_predict and reports whether a device is there:
// on a machine with a CUDA GPU the context is ready for kDLCUDA tensors (cudaMalloc'd inputs,
// see docs/gpu_backends.md); without one every call fails with KILN_ERR_DEVICE and says why.
#include <cstdio>

#include "logreg_predict.h"

int main() {
  kiln_context* ctx = logreg_predict_context_create();
  if (!ctx) {
    std::fprintf(stderr, "out of memory creating a context\n");
    return 1;
  }
  const kiln_graph_info* info = logreg_predict_info();
  std::printf("logreg_predict (cuda): %d inputs, %d outputs\n", static_cast<int>(info->num_inputs),
              static_cast<int>(info->num_outputs));
  logreg_predict_context_destroy(ctx);
  return 0;
}
