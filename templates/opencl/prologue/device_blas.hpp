// The opencl backend's BLAS: CLBlast (libclblast, its C API) on the context's queue, for the
// float32/float64 products whose operands it reads in place (templates/gpu/prologue/
// device_blas.hpp decides; this file comes first). Embedded only in sources with a product.
#include <clblast_c.h>

namespace kg {

template <typename T>
inline bool operator==(const DevPtr<T>& a, const DevPtr<T>& b) {
  return a.buf == b.buf && a.off == b.off;
}
template <typename T>
inline bool operator!=(const DevPtr<T>& a, const DevPtr<T>& b) {
  return !(a == b);
}

/// How BLAS reads a row-major matrix operand in place: the operand itself (trans false) or its
/// transpose stored with leading dimension `ld`.
struct DeviceBlasLayout {
  bool trans;
  int64_t ld;
};

inline CLBlastStatusCode clblast_gemm(CLBlastTranspose ta, CLBlastTranspose tb, size_t m, size_t n, size_t k,
                                      float alpha, cl_mem a, size_t a_off, size_t lda, cl_mem b, size_t b_off,
                                      size_t ldb, float beta, cl_mem c, size_t c_off, size_t ldc, cl_command_queue* q) {
  return CLBlastSgemm(CLBlastLayoutRowMajor, ta, tb, m, n, k, alpha, a, a_off, lda, b, b_off, ldb, beta, c, c_off, ldc,
                      q, nullptr);
}
inline CLBlastStatusCode clblast_gemm(CLBlastTranspose ta, CLBlastTranspose tb, size_t m, size_t n, size_t k,
                                      double alpha, cl_mem a, size_t a_off, size_t lda, cl_mem b, size_t b_off,
                                      size_t ldb, double beta, cl_mem c, size_t c_off, size_t ldc, cl_command_queue* q) {
  return CLBlastDgemm(CLBlastLayoutRowMajor, ta, tb, m, n, k, alpha, a, a_off, lda, b, b_off, ldb, beta, c, c_off, ldc,
                      q, nullptr);
}

/// c = alpha * x @ y + beta * c through CLBlast's row-major gemm (m×k x, k×n y, lengths
/// nonzero, each operand in place: transposed or not with its leading dimension). With beta 0
/// c is never read (it may hold NaN): CLBlast is given a zeroed c, which needs c contiguous;
/// otherwise `done` stays false and the caller's kernel runs.
template <typename T>
inline int32_t device_gemm(Ctx* ctx, int64_t m, int64_t n, int64_t k, T alpha, DevPtr<T> x, bool x_trans, int64_t ldx,
                           DevPtr<T> y, bool y_trans, int64_t ldy, T beta, DevPtr<T> c, int64_t ldc, bool& done) {
  done = false;
  cl_command_queue q = dev_of(ctx)->queue;
  if (beta == T(0)) {
    if (m > 1 && ldc != n) return KILN_OK;
    const T zero = T(0);
    const cl_int e = clEnqueueFillBuffer(q, c.buf, &zero, sizeof(T), static_cast<size_t>(c.off) * sizeof(T),
                                         static_cast<size_t>(m * n) * sizeof(T), 0, nullptr, nullptr);
    if (e != CL_SUCCESS) return cl_fail(ctx, e, "clEnqueueFillBuffer");
  }
  const auto trans = [](bool t) { return t ? CLBlastTransposeYes : CLBlastTransposeNo; };
  const CLBlastStatusCode s =
      clblast_gemm(trans(x_trans), trans(y_trans), static_cast<size_t>(m), static_cast<size_t>(n),
                   static_cast<size_t>(k), alpha, x.buf, static_cast<size_t>(x.off), static_cast<size_t>(ldx), y.buf,
                   static_cast<size_t>(y.off), static_cast<size_t>(ldy), beta, c.buf, static_cast<size_t>(c.off),
                   static_cast<size_t>(ldc), &q);
  if (s != CLBlastSuccess) return fail(ctx, KILN_ERR_DEVICE, "CLBlast gemm failed (CLBlast status %d)", static_cast<int>(s));
  done = true;
  return KILN_OK;
}

inline CLBlastStatusCode clblast_gemm_batched(CLBlastTranspose ta, CLBlastTranspose tb, size_t m, size_t n, size_t k,
                                              float alpha, cl_mem a, size_t a_off, size_t lda, size_t sa, cl_mem b,
                                              size_t b_off, size_t ldb, size_t sb, float beta, cl_mem c, size_t c_off,
                                              size_t ldc, size_t sc, size_t count, cl_command_queue* q) {
  return CLBlastSgemmStridedBatched(CLBlastLayoutRowMajor, ta, tb, m, n, k, alpha, a, a_off, lda, sa, b, b_off, ldb, sb,
                                    beta, c, c_off, ldc, sc, count, q, nullptr);
}
inline CLBlastStatusCode clblast_gemm_batched(CLBlastTranspose ta, CLBlastTranspose tb, size_t m, size_t n, size_t k,
                                              double alpha, cl_mem a, size_t a_off, size_t lda, size_t sa, cl_mem b,
                                              size_t b_off, size_t ldb, size_t sb, double beta, cl_mem c, size_t c_off,
                                              size_t ldc, size_t sc, size_t count, cl_command_queue* q) {
  return CLBlastDgemmStridedBatched(CLBlastLayoutRowMajor, ta, tb, m, n, k, alpha, a, a_off, lda, sa, b, b_off, ldb, sb,
                                    beta, c, c_off, ldc, sc, count, q, nullptr);
}

/// `count` products c_b = alpha * x_b @ y_b + beta * c_b (operand b `s*` elements after
/// operand b - 1) in one CLBlastXgemmStridedBatched call on the context's queue. With beta 0 c
/// is zeroed first, which needs the batch contiguous (ldc = n, sc = m * n); otherwise `done`
/// stays false and the caller loops.
template <typename T>
inline int32_t device_gemm_batched(Ctx* ctx, int64_t count, int64_t m, int64_t n, int64_t k, T alpha, DevPtr<T> x,
                                   bool x_trans, int64_t ldx, int64_t sx, DevPtr<T> y, bool y_trans, int64_t ldy,
                                   int64_t sy, T beta, DevPtr<T> c, int64_t ldc, int64_t sc, bool& done) {
  done = false;
  cl_command_queue q = dev_of(ctx)->queue;
  if (beta == T(0)) {
    if ((m > 1 && ldc != n) || sc != m * n) return KILN_OK;
    const T zero = T(0);
    const cl_int e = clEnqueueFillBuffer(q, c.buf, &zero, sizeof(T), static_cast<size_t>(c.off) * sizeof(T),
                                         static_cast<size_t>(count * m * n) * sizeof(T), 0, nullptr, nullptr);
    if (e != CL_SUCCESS) return cl_fail(ctx, e, "clEnqueueFillBuffer");
  }
  const auto trans = [](bool t) { return t ? CLBlastTransposeYes : CLBlastTransposeNo; };
  const auto z = [](int64_t v) { return static_cast<size_t>(v); };
  const CLBlastStatusCode s =
      clblast_gemm_batched(trans(x_trans), trans(y_trans), z(m), z(n), z(k), alpha, x.buf, z(x.off), z(ldx), z(sx), y.buf,
                           z(y.off), z(ldy), z(sy), beta, c.buf, z(c.off), z(ldc), z(sc), z(count), &q);
  if (s != CLBlastSuccess)
    return fail(ctx, KILN_ERR_DEVICE, "CLBlast strided-batched gemm failed (CLBlast status %d)", static_cast<int>(s));
  done = true;
  return KILN_OK;
}

}  // namespace kg
