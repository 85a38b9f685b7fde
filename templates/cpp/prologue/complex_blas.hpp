// ---- complex products through CBLAS (embedded with graphs that hold complex values) ----
//
// complex64/complex128 products are CBLAS's c/z routines, unconjugated (np.dot's dotu, gemv,
// gemm, geru); the scalars are passed by address, as CBLAS takes them for complex types.

#include <complex>
#pragma once
#include "blas.hpp"  // kg::BlasCall (embedded ahead of this file)

namespace kg {

#define KILN_COMPLEX_BLAS(F, P)                                                                                      \
  template <>                                                                                                        \
  struct BlasCall<std::complex<F>> {                                                                                 \
    using T = std::complex<F>;                                                                                       \
    static constexpr bool available = true;                                                                          \
    static T dot(int n, const T* x, int incx, const T* y, int incy) {                                                \
      T r;                                                                                                           \
      cblas_##P##dotu_sub(n, x, incx, y, incy, &r);                                                                  \
      return r;                                                                                                      \
    }                                                                                                                \
    static void gemv(CBLAS_TRANSPOSE t, int m, int n, T alpha, const T* a, int lda, const T* x, int incx, T beta,     \
                     T* y, int incy) {                                                                               \
      cblas_##P##gemv(CblasRowMajor, t, m, n, &alpha, a, lda, x, incx, &beta, y, incy);                              \
    }                                                                                                                \
    static void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, T alpha, const T* a, int lda,       \
                     const T* b, int ldb, T beta, T* c, int ldc) {                                                   \
      cblas_##P##gemm(CblasRowMajor, ta, tb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);                        \
    }                                                                                                                \
    static void ger(int m, int n, T alpha, const T* x, int incx, const T* y, int incy, T* a, int lda) {              \
      cblas_##P##geru(CblasRowMajor, m, n, &alpha, x, incx, y, incy, a, lda);                                        \
    }                                                                                                                \
  };
KILN_COMPLEX_BLAS(float, c)
KILN_COMPLEX_BLAS(double, z)
#undef KILN_COMPLEX_BLAS

}  // namespace kg

// ---- end of complex products ----
