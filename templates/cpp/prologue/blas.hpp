// ---- matrix products and CBLAS (Dot, BatchedDot, Blockwise, BLAS ops: emit_dot.cpp) ----
//
// float32/float64 (and complex64/complex128) products go to CBLAS (dot, gemv or gemm by shape), reading operands where
// they lie — a transposed view is passed as CblasTrans — and copying one into a contiguous
// buffer only when BLAS cannot describe its layout (negative or zero strides, no unit stride)
// or its dtype differs. Other dtypes use plain loops that wrap like the reference evaluator.
// BLAS never sees a zero length or an invalid leading dimension.

#include <cblas.h>
#include <climits>
#include <initializer_list>
#include <omp.h>
#pragma once
#include "runtime.hpp"  // kg::Ctx, kg::Tensor, kg::fail (embedded ahead of this file)

namespace kg {

/// Runs the BLAS calls of its scope on ctx->num_threads threads, so a context's thread count
/// governs BLAS as well as kiln's own loops (and num_threads = 1 keeps BLAS on one core).
/// An OpenMP build of OpenBLAS (which the driver links when installed, so BLAS and kiln's
/// loops share libgomp's threads instead of two pools spinning against each other) takes its
/// thread count from the calling thread's OpenMP setting: set here and restored at scope exit,
/// it is per thread and touches nothing global. A pthread build only has a process-wide
/// setting: it is changed when it differs (contexts with different counts used concurrently
/// then only change how many threads a product gets, never its result).
class BlasThreads {
 public:
  explicit BlasThreads(const Ctx* ctx) : want_(ctx->num_threads), saved_(omp_get_max_threads()) {
    if (saved_ != want_) omp_set_num_threads(want_);
    if (openblas_get_parallel() == 1 && openblas_get_num_threads() != want_) openblas_set_num_threads(want_);
  }
  ~BlasThreads() {
    if (saved_ != want_) omp_set_num_threads(saved_);
  }
  BlasThreads(const BlasThreads&) = delete;
  BlasThreads& operator=(const BlasThreads&) = delete;

 private:
  int want_, saved_;
};

/// A strided matrix view: element (i, j) at data[i * rs + j * cs] (strides in elements, any
/// sign). Vectors are one row or one column, scalars 1×1; a length-1 dimension's stride is unused.
template <typename T>
struct Mat {
  T* data;
  int64_t rows, cols, rs, cs;
};

/// One buffer per operand of a product.
struct ProductScratch {
  Scratch x, y;
};

/// A product operand's shape in an error message.
struct NamedShape {
  const char* name;
  const int64_t* shape;
  int ndim;
};

/// Fails (KILN_ERR_BROADCAST) with "<what>: x has shape (2, 3), y has shape (4,)<tail>", the
/// words of the reference evaluator's shape errors for products.
inline int32_t fail_shapes(Ctx* ctx, const char* what, std::initializer_list<NamedShape> shapes,
                           const char* tail = "") {
  char text[sizeof ctx->error];
  int pos = std::snprintf(text, sizeof text, "%s: ", what);
  const char* sep = "";
  for (const NamedShape& s : shapes) {
    char shape[256];
    shape_text(shape, sizeof shape, s.shape, s.ndim);
    if (pos < 0 || static_cast<size_t>(pos) >= sizeof text) break;
    pos += std::snprintf(text + pos, sizeof text - static_cast<size_t>(pos), "%s%s has shape %s", sep, s.name, shape);
    sep = ", ";
  }
  return fail(ctx, KILN_ERR_BROADCAST, "%s%s", text, tail);
}

inline bool fits_blas_int(int64_t v) { return v >= -INT_MAX && v <= INT_MAX; }

// Overloads so the product code is written once for float and double.
inline float blas_dot(int n, const float* x, int incx, const float* y, int incy) {
  return cblas_sdot(n, x, incx, y, incy);
}
inline double blas_dot(int n, const double* x, int incx, const double* y, int incy) {
  return cblas_ddot(n, x, incx, y, incy);
}
inline void blas_gemv(CBLAS_TRANSPOSE t, int m, int n, float alpha, const float* a, int lda, const float* x,
                      int incx, float beta, float* y, int incy) {
  cblas_sgemv(CblasRowMajor, t, m, n, alpha, a, lda, x, incx, beta, y, incy);
}
inline void blas_gemv(CBLAS_TRANSPOSE t, int m, int n, double alpha, const double* a, int lda, const double* x,
                      int incx, double beta, double* y, int incy) {
  cblas_dgemv(CblasRowMajor, t, m, n, alpha, a, lda, x, incx, beta, y, incy);
}
inline void blas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, float alpha, const float* a,
                      int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
inline void blas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, double alpha, const double* a,
                      int lda, const double* b, int ldb, double beta, double* c, int ldc) {
  cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
inline void blas_ger(int m, int n, float alpha, const float* x, int incx, const float* y, int incy, float* a,
                     int lda) {
  cblas_sger(CblasRowMajor, m, n, alpha, x, incx, y, incy, a, lda);
}
inline void blas_ger(int m, int n, double alpha, const double* x, int incx, const double* y, int incy, double* a,
                     int lda) {
  cblas_dger(CblasRowMajor, m, n, alpha, x, incx, y, incy, a, lda);
}

/// The BLAS calls for element type T: CBLAS's s/d routines here; complex64 and complex128 (c/z,
/// the unconjugated products NumPy's dot computes) specialise it in complex_blas.hpp, embedded
/// with graphs that hold complex values.
template <typename T>
struct BlasCall {
  static constexpr bool available = std::is_same_v<T, float> || std::is_same_v<T, double>;
  static T dot(int n, const T* x, int incx, const T* y, int incy) { return blas_dot(n, x, incx, y, incy); }
  static void gemv(CBLAS_TRANSPOSE t, int m, int n, T alpha, const T* a, int lda, const T* x, int incx, T beta, T* y,
                   int incy) {
    blas_gemv(t, m, n, alpha, a, lda, x, incx, beta, y, incy);
  }
  static void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, T alpha, const T* a, int lda, const T* b,
                   int ldb, T beta, T* c, int ldc) {
    blas_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  static void ger(int m, int n, T alpha, const T* x, int incx, const T* y, int incy, T* a, int lda) {
    blas_ger(m, n, alpha, x, incx, y, incy, a, lda);
  }
};
template <typename T>
constexpr bool kBlasType = BlasCall<T>::available;

/// A matrix as BLAS reads it: row-major at `data` with leading dimension `ld`, holding the
/// operand itself (CblasNoTrans) or its transpose (CblasTrans).
template <typename T>
struct BlasMatrix {
  const T* data;
  CBLAS_TRANSPOSE trans;
  int ld;
};

/// A vector as BLAS reads it (a negative `inc` with `data` at the lowest address, as CBLAS wants).
template <typename T>
struct BlasVector {
  const T* data;
  int inc;
};

/// A matrix operand for BLAS: in place when one stride is 1 and the other a valid leading
/// dimension, else converted into a contiguous buffer taken from `s`.
template <typename T, typename S>
inline int32_t blas_matrix(Ctx* ctx, const Mat<const S>& a, Scratch& s, BlasMatrix<T>& out) {
  const int64_t row_ld = a.cols > 1 ? a.cols : 1;  // smallest leading dimension either way
  const int64_t col_ld = a.rows > 1 ? a.rows : 1;
  if constexpr (std::is_same_v<S, T>) {
    if (a.cols <= 1 || a.cs == 1) {
      const int64_t ld = a.rows <= 1 ? row_ld : a.rs;
      if (ld >= row_ld && ld <= INT_MAX) {
        out = {a.data, CblasNoTrans, static_cast<int>(ld)};
        return KILN_OK;
      }
    }
    if (a.rows <= 1 || a.rs == 1) {
      const int64_t ld = a.cols <= 1 ? col_ld : a.cs;
      if (ld >= col_ld && ld <= INT_MAX) {
        out = {a.data, CblasTrans, static_cast<int>(ld)};
        return KILN_OK;
      }
    }
  }
  void* p = nullptr;
  KILN_TRY(s.reserve(ctx, static_cast<size_t>(a.rows * a.cols) * sizeof(T), p));
  T* buf = static_cast<T*>(p);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < a.cols; ++j) buf[i * a.cols + j] = kiln_scalar::convert<T>(a.data[i * a.rs + j * a.cs]);
  out = {buf, CblasNoTrans, static_cast<int>(row_ld)};
  return KILN_OK;
}

/// A vector operand (n elements `stride` apart) for BLAS: in place unless its stride is 0 or
/// too large or its dtype differs, else converted into a contiguous buffer from `s`.
template <typename T, typename S>
inline int32_t blas_vector(Ctx* ctx, const S* data, int64_t n, int64_t stride, Scratch& s, BlasVector<T>& out) {
  if constexpr (std::is_same_v<S, T>) {
    if (n <= 1) {
      out = {data, 1};
      return KILN_OK;
    }
    if (stride != 0 && fits_blas_int(stride)) {
      out = {stride < 0 ? data + (n - 1) * stride : data, static_cast<int>(stride)};
      return KILN_OK;
    }
  }
  void* p = nullptr;
  KILN_TRY(s.reserve(ctx, static_cast<size_t>(n) * sizeof(T), p));
  T* buf = static_cast<T*>(p);
  for (int64_t i = 0; i < n; ++i) buf[i] = kiln_scalar::convert<T>(data[i * stride]);
  out = {buf, 1};
  return KILN_OK;
}

/// Where BLAS writes an output vector of n elements `stride` apart; false when it cannot.
template <typename T>
inline bool blas_output_vector(T* data, int64_t n, int64_t stride, T*& ptr, int& inc) {
  if (n <= 1) stride = 1;
  if (stride == 0 || !fits_blas_int(stride)) return false;
  ptr = stride < 0 ? data + (n - 1) * stride : data;
  inc = static_cast<int>(stride);
  return true;
}

/// The transpose of a matrix view (no copy).
template <typename T>
inline Mat<T> transposed(const Mat<T>& a) {
  return Mat<T>{a.data, a.cols, a.rows, a.cs, a.rs};
}

/// The BLAS part of product(): dot for 1×1 outputs, gemv for one row or column, else gemm.
/// Lengths are nonzero and fit an int. `done` is false when c's layout does not suit BLAS.
template <typename T, typename X, typename Y>
inline int32_t blas_product(Ctx* ctx, T alpha, const Mat<const X>& x, const Mat<const Y>& y, T beta, const Mat<T>& c,
                            ProductScratch& s, bool& done) {
  const int64_t m = c.rows, n = c.cols, k = x.cols;
  const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
  done = false;
  BlasThreads threads(ctx);
  if (m == 1 && n == 1) {
    BlasVector<T> xv, yv;
    KILN_TRY(blas_vector<T>(ctx, x.data, k, x.cs, s.x, xv));
    KILN_TRY(blas_vector<T>(ctx, y.data, k, y.rs, s.y, yv));
    const T d = BlasCall<T>::dot(ki, xv.data, xv.inc, yv.data, yv.inc);
    c.data[0] = beta == T(0) ? alpha * d : beta * c.data[0] + alpha * d;
  } else if (n == 1) {
    // One column: c = alpha * x @ y[:, 0] + beta * c.
    T* cp;
    int inc;
    if (!blas_output_vector(c.data, m, c.rs, cp, inc)) return KILN_OK;
    BlasMatrix<T> a;
    BlasVector<T> yv;
    KILN_TRY(blas_matrix<T>(ctx, x, s.x, a));
    KILN_TRY(blas_vector<T>(ctx, y.data, k, y.rs, s.y, yv));
    const bool stored_t = a.trans == CblasTrans;  // BLAS holds x as a k×m array
    BlasCall<T>::gemv(a.trans, stored_t ? ki : mi, stored_t ? mi : ki, alpha, a.data, a.ld, yv.data, yv.inc, beta, cp, inc);
  } else if (m == 1) {
    // One row: c^T = alpha * y^T @ x^T + beta * c^T, the one-column case.
    return blas_product(ctx, alpha, transposed(y), transposed(x), beta, transposed(c), s, done);
  } else {
    if (c.cs != 1 || c.rs < n || c.rs > INT_MAX) return KILN_OK;
    BlasMatrix<T> a, b;
    KILN_TRY(blas_matrix<T>(ctx, x, s.x, a));
    KILN_TRY(blas_matrix<T>(ctx, y, s.y, b));
    BlasCall<T>::gemm(a.trans, b.trans, mi, ni, ki, alpha, a.data, a.ld, b.data, b.ld, beta, c.data, static_cast<int>(c.rs));
  }
  done = true;
  return KILN_OK;
}

/// c = alpha * x @ y + beta * c as the reference evaluator computes it, for an m×k x and a k×n
/// y of any strides and element types (converted to T like astype); c is m×n and is not read
/// when beta is 0. float32/float64 use CBLAS; other dtypes (and BLAS-unfriendly cases: an
/// empty inner dimension, lengths beyond int) loop, accumulating in T with integer wrap-around.
template <typename T, typename X, typename Y>
inline int32_t product(Ctx* ctx, T alpha, Mat<const X> x, Mat<const Y> y, T beta, Mat<T> c, ProductScratch& s) {
  const int64_t m = c.rows, n = c.cols, k = x.cols;
  if (m == 0 || n == 0) return KILN_OK;
  if constexpr (kBlasType<T>) {
    if (k > 0 && m <= INT_MAX && n <= INT_MAX && k <= INT_MAX) {
      bool done = false;
      KILN_TRY(blas_product(ctx, alpha, x, y, beta, c, s, done));
      if (done) return KILN_OK;
    }
  }
  using kiln_scalar::convert;
  using kiln_scalar::wrap_add;
  using kiln_scalar::wrap_mul;
  using A = kiln_scalar::arithmetic_t<T>;  // float16 accumulates in float32 and rounds once
  parallel_for(ctx, m, m * n * k, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        A acc = A(0);
        for (int64_t p = 0; p < k; ++p)
          acc = wrap_add(acc, wrap_mul(convert<A>(x.data[i * x.rs + p * x.cs]), convert<A>(y.data[p * y.rs + j * y.cs])));
        T& out = c.data[i * c.rs + j * c.cs];
        out = beta == T(0) ? T(wrap_mul(A(alpha), acc)) : T(wrap_add(wrap_mul(A(beta), A(out)), wrap_mul(A(alpha), acc)));
      }
    }
  });
  return KILN_OK;
}

/// c += alpha * outer(x, y) for a column x (m×1), a row y (1×n) and c (m×n), all of type T:
/// CBLAS ger for float32/float64 when c has unit column stride, else a loop.
template <typename T>
inline int32_t rank1_update(Ctx* ctx, T alpha, Mat<const T> x, Mat<const T> y, Mat<T> c, ProductScratch& s) {
  const int64_t m = c.rows, n = c.cols;
  if (m == 0 || n == 0) return KILN_OK;
  if constexpr (kBlasType<T>) {
    const int64_t ld = m <= 1 ? n : c.rs;
    if (m <= INT_MAX && n <= INT_MAX && (n <= 1 || c.cs == 1) && ld >= n && ld <= INT_MAX) {
      BlasVector<T> xv, yv;
      KILN_TRY(blas_vector<T>(ctx, x.data, m, x.rs, s.x, xv));
      KILN_TRY(blas_vector<T>(ctx, y.data, n, y.cs, s.y, yv));
      BlasThreads threads(ctx);
      BlasCall<T>::ger(static_cast<int>(m), static_cast<int>(n), alpha, xv.data, xv.inc, yv.data, yv.inc, c.data,
               static_cast<int>(ld));
      return KILN_OK;
    }
  }
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      T& out = c.data[i * c.rs + j * c.cs];
      out = out + alpha * (x.data[i * x.rs] * y.data[j * y.cs]);
    }
  return KILN_OK;
}

}  // namespace kg

// ---- end of matrix products and CBLAS ----
