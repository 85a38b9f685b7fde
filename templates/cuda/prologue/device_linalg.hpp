// The cuda backend's linear algebra on the device: Cholesky through cuSOLVER (potrf) on the
// context's stream. The host code is the C++ backend's (templates/cpp/ops/linalg_call.mustache:
// checks, output shapes, the batch loop of kg::linalg::for_each_item) calling
// kg::cusolver::cholesky for each matrix; nothing waits for the device. A matrix that is not
// positive definite fails through the device status word (on_error='raise': the cpp backend's
// status and message, read at the end of the call) or leaves a NaN-filled factor ('nan').
// Embedded after linalg.hpp, only in sources with such a node (the library links -lcusolver).
#include <cmath>
#include <cusolverDn.h>

namespace kg {
namespace cusolver {

/// A strided matrix view of device memory: element (i, j) at data[i * rs + j * cs].
template <typename T>
struct DMat {
  T* data;
  int64_t rows, cols, rs, cs;
};

/// The context's cuSOLVER dense handle (created on first use, released with the context).
struct Solver {
  cusolverDnHandle_t handle = nullptr;
  cusolverDnParams_t params = nullptr;
};

inline void release_solver(void* p) {
  auto* s = static_cast<Solver*>(p);
  if (s->params) cusolverDnDestroyParams(s->params);
  if (s->handle) cusolverDnDestroy(s->handle);
  delete s;
}

/// The handle and its 64-bit API parameters, bound to the context's current stream.
inline int32_t solver(Ctx* ctx, Solver*& out) {
  DevCtx* d = dev_of(ctx);
  if (!d->solver) {
    auto* s = new (std::nothrow) Solver;
    if (!s) return fail(ctx, KILN_ERR_ALLOC, "out of memory");
    cusolverStatus_t e = cusolverDnCreate(&s->handle);
    if (e == CUSOLVER_STATUS_SUCCESS) e = cusolverDnCreateParams(&s->params);
    if (e != CUSOLVER_STATUS_SUCCESS) {
      release_solver(s);
      return fail(ctx, KILN_ERR_DEVICE, "cusolverDnCreate failed (status %d)", static_cast<int>(e));
    }
    d->solver = s;
    d->release_solver = release_solver;
  }
  out = static_cast<Solver*>(d->solver);
  const cusolverStatus_t e = cusolverDnSetStream(out->handle, d->stream);
  if (e != CUSOLVER_STATUS_SUCCESS)
    return fail(ctx, KILN_ERR_DEVICE, "cusolverDnSetStream failed (status %d)", static_cast<int>(e));
  return KILN_OK;
}

template <typename T>
constexpr cudaDataType data_type() {
  return sizeof(T) == 4 ? CUDA_R_32F : CUDA_R_64F;
}

/// out (n x n, row-major, T) = a (any strides and element type S), converted.
template <typename S, typename T>
__global__ void kiln_linalg_gather(const S* a, const int64_t n, const int64_t rs, const int64_t cs, T* out) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < n * n;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[e] = static_cast<T>(a[(e / n) * rs + (e % n) * cs]);
}

/// A NaN on the factor's diagonal is a failure too (LAPACK's potrf reports a NaN pivot; the cpp
/// backend then NaN-fills the whole factor): one thread walks the diagonal.
template <typename T>
__global__ void kiln_cholesky_nan_pivot(const T* out, const int64_t n, int* info) {
  if (*info != 0) return;
  for (int64_t i = 0; i < n; ++i)
    if (isnan(out[i * n + i])) {
      *info = static_cast<int>(i + 1);
      return;
    }
}

/// After potrf: with *info nonzero (not positive definite) the whole factor is NaN, and with a
/// check number the status word is claimed (on_error='raise'); else the triangle the factor
/// does not use is zeroed (potrf leaves the input there).
template <typename T>
__global__ void kiln_cholesky_finish(T* out, const int64_t n, const int32_t lower, const int* info, int32_t* st,
                                     const int64_t check) {
  const bool failed = *info != 0;
  const int64_t first = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (failed && check > 0 && first == 0) atomicCAS(reinterpret_cast<int*>(st), 0, static_cast<int>(check));
  for (int64_t e = first; e < n * n; e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = e / n, j = e % n;
    if (failed)
      out[e] = static_cast<T>(NAN);
    else if (lower ? j > i : j < i)
      out[e] = T(0);
  }
}

/// Cholesky of one matrix into `out` (n x n, row-major, on the device), queued on the stream.
/// Row-major storage is the column-major transpose, and the transpose of a symmetric matrix is
/// itself: the row-major lower factor L is cuSOLVER's column-major upper U = L^T (uplo flipped).
/// The device workspace (info, then potrf's) is the node's device slot `slot`, grown once.
template <typename T, typename S>
inline int32_t cholesky(Ctx* ctx, linalg::Arena&, int slot, const char* where, const DMat<const S>& a, T* out,
                        bool lower, bool raise) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "potrf in float32 or float64");
  const int64_t n = a.rows;
  if (n == 0) return KILN_OK;
  Solver* s = nullptr;
  KILN_TRY(solver(ctx, s));
  KILN_TRY(launch(ctx, kiln_linalg_gather<S, T>, groups_for(n * n), kGroup, a.data, n, a.rs, a.cs, out));
  const cublasFillMode_t uplo = lower ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
  size_t device_bytes = 0, host_bytes = 0;
  cusolverStatus_t e = cusolverDnXpotrf_bufferSize(s->handle, s->params, uplo, n, data_type<T>(), out, n, data_type<T>(),
                                                   &device_bytes, &host_bytes);
  if (e != CUSOLVER_STATUS_SUCCESS)
    return fail(ctx, KILN_ERR_DEVICE, "cusolverDnXpotrf_bufferSize failed (status %d)", static_cast<int>(e));
  constexpr size_t kInfoBytes = 256;  // keeps potrf's workspace aligned
  DTensor<char, 1> work;
  work.shape[0] = static_cast<int64_t>(kInfoBytes + device_bytes);
  KILN_TRY(alloc_workspace(ctx, slot, work));
  Tensor<char, 1> host_work;
  host_work.shape[0] = static_cast<int64_t>(host_bytes);
  if (host_bytes > 0) KILN_TRY(alloc_workspace(ctx, slot, host_work));
  int* info = reinterpret_cast<int*>(work.data);
  e = cusolverDnXpotrf(s->handle, s->params, uplo, n, data_type<T>(), out, n, data_type<T>(), work.data + kInfoBytes,
                       device_bytes, host_work.data, host_bytes, info);
  if (e != CUSOLVER_STATUS_SUCCESS)
    return fail(ctx, KILN_ERR_DEVICE, "cusolverDnXpotrf failed (status %d)", static_cast<int>(e));
  KILN_TRY(launch(ctx, kiln_cholesky_nan_pivot<T>, 1, 1, static_cast<const T*>(out), n, info));
  int32_t* word = nullptr;
  int64_t number = 0;
  if (raise) {
    StatusCheck check;
    check.where = where;
    check.kind = CheckKind::kLinalg;
    check.text = kiln_linalg::status_message(kiln_linalg::Status::NotPositiveDefinite);
    KILN_TRY(arm_status(ctx, check, word, number));
  }
  return launch(ctx, kiln_cholesky_finish<T>, groups_for(n * n), kGroup, out, n, static_cast<int32_t>(lower),
                static_cast<const int*>(info), word, number);
}

}  // namespace cusolver
}  // namespace kg
