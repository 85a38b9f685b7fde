// The cuda backend's BLAS: cuBLAS on the context's stream, for the float32/float64 products
// whose operands it reads in place (templates/gpu/prologue/device_blas.hpp decides; this file
// comes first). Embedded only in sources with a product (the library links -lcublas then).
#include <climits>
#include <cublas_v2.h>
#include <initializer_list>

namespace kg {

/// How BLAS reads a row-major matrix operand in place: the operand itself (trans false) or its
/// transpose stored with leading dimension `ld`.
struct DeviceBlasLayout {
  bool trans;
  int64_t ld;
};

inline void release_cublas(void* h) { cublasDestroy(static_cast<cublasHandle_t>(h)); }

/// The context's cuBLAS handle (created on first use, released with the context), bound to the
/// context's current stream (NAME_context_set_stream may change it between calls), with alpha
/// and beta read from host memory.
inline int32_t cublas_handle(Ctx* ctx, cublasHandle_t& out) {
  DevCtx* d = dev_of(ctx);
  if (!d->blas) {
    cublasHandle_t h = nullptr;
    const cublasStatus_t s = cublasCreate(&h);
    if (s != CUBLAS_STATUS_SUCCESS) return fail(ctx, KILN_ERR_DEVICE, "cublasCreate failed (%s)", cublasGetStatusString(s));
    d->blas = h;
    d->release_blas = release_cublas;
  }
  out = static_cast<cublasHandle_t>(d->blas);
  cublasStatus_t s = cublasSetStream(out, d->stream);
  if (s == CUBLAS_STATUS_SUCCESS) s = cublasSetPointerMode(out, CUBLAS_POINTER_MODE_HOST);
  if (s != CUBLAS_STATUS_SUCCESS) return fail(ctx, KILN_ERR_DEVICE, "cublasSetStream failed (%s)", cublasGetStatusString(s));
  return KILN_OK;
}

inline cublasStatus_t cublas_gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                  const float* alpha, const float* a, int lda, const float* b, int ldb,
                                  const float* beta, float* c, int ldc) {
  return cublasSgemm(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
inline cublasStatus_t cublas_gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                  const double* alpha, const double* a, int lda, const double* b, int ldb,
                                  const double* beta, double* c, int ldc) {
  return cublasDgemm(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

/// c = alpha * x @ y + beta * c through cuBLAS's gemm (m×k x, k×n y, lengths nonzero, each
/// operand in place: transposed or not with its leading dimension). cuBLAS is column-major: a
/// row-major c is c^T column-major, so it computes c^T = y^T @ x^T with the operands swapped.
/// With beta 0 cuBLAS does not read c (its documented rule). Lengths beyond int: `done` stays
/// false and the caller's kernel runs.
template <typename T>
inline int32_t device_gemm(Ctx* ctx, int64_t m, int64_t n, int64_t k, T alpha, T* x, bool x_trans, int64_t ldx, T* y,
                           bool y_trans, int64_t ldy, T beta, T* c, int64_t ldc, bool& done) {
  done = false;
  for (int64_t v : {m, n, k, ldx, ldy, ldc})
    if (v > INT_MAX) return KILN_OK;
  cublasHandle_t h = nullptr;
  KILN_TRY(cublas_handle(ctx, h));
  const auto op = [](bool t) { return t ? CUBLAS_OP_T : CUBLAS_OP_N; };
  const cublasStatus_t s =
      cublas_gemm(h, op(y_trans), op(x_trans), static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &alpha,
                  y, static_cast<int>(ldy), x, static_cast<int>(ldx), &beta, c, static_cast<int>(ldc));
  if (s != CUBLAS_STATUS_SUCCESS) return fail(ctx, KILN_ERR_DEVICE, "cublas gemm failed (%s)", cublasGetStatusString(s));
  done = true;
  return KILN_OK;
}

inline cublasStatus_t cublas_gemm_batched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                          int k, const float* alpha, const float* a, int lda, long long sa, const float* b,
                                          int ldb, long long sb, const float* beta, float* c, int ldc, long long sc,
                                          int count) {
  return cublasSgemmStridedBatched(h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, count);
}
inline cublasStatus_t cublas_gemm_batched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                          int k, const double* alpha, const double* a, int lda, long long sa,
                                          const double* b, int ldb, long long sb, const double* beta, double* c, int ldc,
                                          long long sc, int count) {
  return cublasDgemmStridedBatched(h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, count);
}

/// `count` products c_b = alpha * x_b @ y_b + beta * c_b (operand b `s*` elements after
/// operand b - 1; a stride of 0 broadcasts) in one cublas<t>gemmStridedBatched call, row-major
/// as device_gemm computes it (c_b^T = y_b^T @ x_b^T). Lengths or counts beyond int: `done`
/// stays false and the caller loops.
template <typename T>
inline int32_t device_gemm_batched(Ctx* ctx, int64_t count, int64_t m, int64_t n, int64_t k, T alpha, T* x, bool x_trans,
                                   int64_t ldx, int64_t sx, T* y, bool y_trans, int64_t ldy, int64_t sy, T beta, T* c,
                                   int64_t ldc, int64_t sc, bool& done) {
  done = false;
  for (int64_t v : {count, m, n, k, ldx, ldy, ldc})
    if (v > INT_MAX) return KILN_OK;
  cublasHandle_t h = nullptr;
  KILN_TRY(cublas_handle(ctx, h));
  const auto op = [](bool t) { return t ? CUBLAS_OP_T : CUBLAS_OP_N; };
  const cublasStatus_t s = cublas_gemm_batched(
      h, op(y_trans), op(x_trans), static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &alpha, y,
      static_cast<int>(ldy), sy, x, static_cast<int>(ldx), sx, &beta, c, static_cast<int>(ldc), sc, static_cast<int>(count));
  if (s != CUBLAS_STATUS_SUCCESS)
    return fail(ctx, KILN_ERR_DEVICE, "cublas strided-batched gemm failed (%s)", cublasGetStatusString(s));
  done = true;
  return KILN_OK;
}

}  // namespace kg
