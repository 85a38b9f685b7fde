// Linear algebra on a GPU backend's host path (codegen/gpu/emit_linalg.cpp), shared by opencl
// and cuda. Embedded ahead of the C++ backend's linalg.hpp (and kiln/runtime/lapack.hpp,
// linalg_kernels.hpp) only in sources whose graphs have such a node. The node's inputs are read
// to host memory (device_reads.hpp's to_host: one blocking read of each input's extent, the one
// wait of the node), the C++
// backend's LAPACK code runs on those copies, and its outputs are uploaded to the device: the
// same results, statuses and messages as the cpp backend, at the cost of a round trip through
// host memory per node (docs/gpu_backends.md, "Linear algebra").
#include <cstring>
#include <deque>
#include <vector>

namespace kg {
namespace linalg {

/// The host matrix view linalg.hpp reads (kg::Mat of the cpp backend's blas.hpp): here its own
/// type, since kg::Mat of a GPU source is device_blas.hpp's view of device buffers.
template <typename T>
struct Mat {
  T* data;
  int64_t rows, cols, rs, cs;
};

/// linalg.hpp gives BLAS/LAPACK the context's threads; a GPU context has one and its source no
/// OpenMP, so OpenBLAS keeps its own setting.
class BlasThreads {
 public:
  explicit BlasThreads(const Ctx*) {}
  BlasThreads(const BlasThreads&) = delete;
  BlasThreads& operator=(const BlasThreads&) = delete;
};

/// Host memory for an output of the shape `out` has (C-contiguous), kept per operand.
template <typename T, int N>
inline int32_t host_output(Ctx* ctx, const char* name, Tensor<T, N>& out) {
  const int64_t size = checked_size(out.shape, N, sizeof(T));
  if (size < 0) return fail_too_big(ctx, KILN_ERR_VALUE, nullptr, "an output array", out.shape, N, sizeof(T));
  out.set_contiguous_strides();
  const size_t bytes = static_cast<size_t>(size) * sizeof(T);  // checked_size checked it
  out.data = static_cast<T*>(host_storage(ctx, name, bytes));
  if (!out.data) return fail(ctx, KILN_ERR_ALLOC, "out of memory allocating %zu bytes of host memory", bytes);
  return KILN_OK;
}

/// The host result `h` uploaded to the device tensor `t` (given h's shape, then its memory by
/// `alloc`: the node's usual output binding; C-contiguous).
template <typename T, int N, typename Alloc>
inline int32_t to_device(Ctx* ctx, const Tensor<T, N>& h, DTensor<T, N>& t, Alloc&& alloc) {
  for (int i = 0; i < N; ++i) t.shape[i] = h.shape[i];
  KILN_TRY(alloc());
  return write_elements(ctx, t, h.data, t.size());
}

}  // namespace linalg
}  // namespace kg
