// kiln runtime: one matrix's worth of each linear-algebra op, on row-major buffers, through
// LAPACK (lapack.hpp) and CBLAS. The reference evaluator calls these on contiguous copies of
// its inputs; generated code calls them on each matrix of a batch, with work buffers from the
// context's workspace. Self-contained C++17, header-only; the code generator embeds it.
//
// Layout. Every matrix here is row-major (element (i, j) at a[i * ld + j]). LAPACK is
// column-major, and a row-major buffer read column-major is the transpose, so each kernel
// either works on the transpose where that gives the answer directly (a symmetric matrix is
// its own transpose with the other triangle; det(A^T) = det(A); inv(A^T) = inv(A)^T; the SVD
// of A^T is the SVD of A with U and V swapped) or copies into column-major first.
//
// Work buffers. Each kernel that needs scratch has a *_work() function giving how many reals
// (T) and ints it uses for given sizes (asking LAPACK for its optimal block sizes); the caller
// passes buffers at least that large. Kernels never allocate.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <utility>
#include <vector>

#include <cblas.h>

#include "kiln/runtime/lapack.hpp"
#include "kiln/runtime/scalar_math.hpp"

namespace kiln_linalg {

/// What went wrong in a kernel. Callers turn it into an error, or into NaN where PyTensor 3.x
/// returns NaN (a failed Cholesky, a singular solve).
enum class Status : int {
  Ok = 0,
  NotPositiveDefinite,
  Singular,
  NoConvergence,
  PivotOutOfRange,
  Internal,  ///< LAPACK refused an argument: a bug in kiln
  NotFinite,  ///< an input LAPACK must not see (NumPy's eig checks first)
};

/// The message words both backends use (fixtures match on them).
inline const char* status_message(Status s) {
  switch (s) {
    case Status::Ok: return "ok";
    case Status::NotPositiveDefinite: return "matrix is not positive definite";
    case Status::Singular: return "singular matrix";
    case Status::NoConvergence: return "the algorithm did not converge";
    case Status::PivotOutOfRange: return "pivot index out of range";
    case Status::Internal: return "LAPACK refused an argument (a bug in kiln)";
    case Status::NotFinite: return "Array must not contain infs or NaNs";
  }
  return "unknown failure";
}

/// Scratch a kernel needs: `reals` elements of T and `ints` ints.
struct Work {
  std::size_t reals = 0;
  std::size_t ints = 0;
};

/// True when n fits LAPACK's 32-bit integers (and n * n elements can be addressed).
inline bool fits_lapack(std::int64_t n) { return n >= 0 && n <= std::numeric_limits<int>::max(); }

// --- small helpers ------------------------------------------------------------------------------

template <typename T>
inline void fill(T* a, std::int64_t rows, std::int64_t cols, std::int64_t ld, T value) {
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) a[i * ld + j] = value;
}

template <typename T>
inline void fill_nan(T* a, std::int64_t rows, std::int64_t cols, std::int64_t ld) {
  fill(a, rows, cols, ld, std::numeric_limits<T>::quiet_NaN());
}

/// dst (cols x rows, leading dimension ldd) = transpose of src (rows x cols, leading dimension
/// lds): switches a matrix between row-major and column-major storage.
template <typename T>
inline void transpose_into(const T* src, std::int64_t rows, std::int64_t cols, std::int64_t lds, T* dst,
                           std::int64_t ldd) {
  constexpr std::int64_t kBlock = 32;  // cache blocking: both sides are read in short runs
  for (std::int64_t i0 = 0; i0 < rows; i0 += kBlock)
    for (std::int64_t j0 = 0; j0 < cols; j0 += kBlock)
      for (std::int64_t i = i0; i < std::min(rows, i0 + kBlock); ++i)
        for (std::int64_t j = j0; j < std::min(cols, j0 + kBlock); ++j) dst[j * ldd + i] = src[i * lds + j];
}

/// Sets the strict upper (lower = true) or strict lower triangle of a square matrix to zero.
template <typename T>
inline void zero_other_triangle(T* a, int n, std::int64_t ld, bool lower) {
  for (int i = 0; i < n; ++i) {
    if (lower)
      for (int j = i + 1; j < n; ++j) a[i * ld + j] = T(0);
    else
      for (int j = 0; j < i; ++j) a[i * ld + j] = T(0);
  }
}

/// LAPACK's optimal work size from a workspace query's first element.
template <typename T>
inline std::size_t queried(T w) {
  return w > T(1) ? static_cast<std::size_t>(w) : 1;
}

// CBLAS overloads.
inline void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, float alpha, const float* a, int lda,
                 const float* b, int ldb, float beta, float* c, int ldc) {
  cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
inline void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, double alpha, const double* a,
                 int lda, const double* b, int ldb, double beta, double* c, int ldc) {
  cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
inline void trsm(CBLAS_UPLO uplo, CBLAS_TRANSPOSE t, CBLAS_DIAG diag, int m, int n, const float* a, int lda,
                 float* b, int ldb) {
  cblas_strsm(CblasRowMajor, CblasLeft, uplo, t, diag, m, n, 1.0f, a, lda, b, ldb);
}
inline void trsm(CBLAS_UPLO uplo, CBLAS_TRANSPOSE t, CBLAS_DIAG diag, int m, int n, const double* a, int lda,
                 double* b, int ldb) {
  cblas_dtrsm(CblasRowMajor, CblasLeft, uplo, t, diag, m, n, 1.0, a, lda, b, ldb);
}
inline void trsv(CBLAS_UPLO uplo, CBLAS_TRANSPOSE t, CBLAS_DIAG diag, int n, const float* a, int lda, float* x,
                 int incx) {
  cblas_strsv(CblasRowMajor, uplo, t, diag, n, a, lda, x, incx);
}
inline void trsv(CBLAS_UPLO uplo, CBLAS_TRANSPOSE t, CBLAS_DIAG diag, int n, const double* a, int lda, double* x,
                 int incx) {
  cblas_dtrsv(CblasRowMajor, uplo, t, diag, n, a, lda, x, incx);
}

// --- Cholesky -----------------------------------------------------------------------------------

/// The Cholesky factor of the symmetric matrix read from one triangle of `a` (n x n,
/// row-major, overwritten): lower (L L^T = A) or upper (U^T U = A), the other triangle zeroed.
/// NotPositiveDefinite when a pivot is not positive (or is NaN); `a` is then undefined.
template <typename T>
inline Status cholesky(int n, T* a, int lda, bool lower) {
  if (n == 0) return Status::Ok;
  // The lower triangle of row-major `a` is the upper triangle of the column-major matrix.
  const int info = kiln_lapack::potrf(lower ? 'U' : 'L', n, a, lda);
  if (info < 0) return Status::Internal;
  if (info > 0) return Status::NotPositiveDefinite;
  for (int i = 0; i < n; ++i)  // OpenBLAS's potrf lets a NaN pivot through
    if (!(a[i * static_cast<std::int64_t>(lda) + i] > T(0))) return Status::NotPositiveDefinite;
  zero_other_triangle(a, n, lda, lower);
  return Status::Ok;
}

/// PyTensor's MvNormalRV factor of a covariance for method "svd" (NumPy's svd, gesdd: A = U
/// sqrt(s)) or "eigh" (NumPy's eigh, syevd on the lower triangle: A = V sqrt(w), NaN columns for
/// negative eigenvalues, as NumPy's sqrt gives), computed in T as NumPy does for its dtype.
/// `a` is n x n row-major, overwritten by A (row-major). NoConvergence when LAPACK fails.
template <typename T>
inline Status mvnormal_factor(bool svd, int n, T* a) {
  if (n == 0) return Status::Ok;
  const std::size_t nn = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  std::vector<T> col(nn), s(static_cast<std::size_t>(n)), u(svd ? nn : 0), vt(svd ? nn : 0);
  for (int i = 0; i < n; ++i)  // the matrix itself, column-major
    for (int j = 0; j < n; ++j) col[static_cast<std::size_t>(j) * n + i] = a[static_cast<std::size_t>(i) * n + j];
  T wq = 0;
  int info = 0;
  if (svd) {
    std::vector<int> iwork(8 * static_cast<std::size_t>(n));
    kiln_lapack::gesdd('A', n, n, col.data(), n, s.data(), u.data(), n, vt.data(), n, &wq, -1, iwork.data());
    std::vector<T> work(queried(wq));
    info = kiln_lapack::gesdd('A', n, n, col.data(), n, s.data(), u.data(), n, vt.data(), n, work.data(),
                              static_cast<int>(work.size()), iwork.data());
  } else {
    int iq = 0;
    kiln_lapack::syevd('V', 'L', n, col.data(), n, s.data(), &wq, -1, &iq, -1);
    std::vector<T> work(queried(wq));
    std::vector<int> iwork(static_cast<std::size_t>(std::max(iq, 1)));
    info = kiln_lapack::syevd('V', 'L', n, col.data(), n, s.data(), work.data(), static_cast<int>(work.size()),
                              iwork.data(), static_cast<int>(iwork.size()));
  }
  if (info < 0) return Status::Internal;
  if (info > 0) return Status::NoConvergence;
  const T* vec = svd ? u.data() : col.data();
  for (int j = 0; j < n; ++j) {
    const T r = std::sqrt(s[static_cast<std::size_t>(j)]);
    for (int i = 0; i < n; ++i) a[static_cast<std::size_t>(i) * n + j] = vec[static_cast<std::size_t>(j) * n + i] * r;
  }
  return Status::Ok;
}

// --- solves -------------------------------------------------------------------------------------

/// Solve's structures: general (LU), symmetric (Bunch-Kaufman), positive definite (Cholesky),
/// tridiagonal (LU of the three diagonals).
enum class Structure : char { General = 'g', Symmetric = 's', PositiveDefinite = 'p', Tridiagonal = 't' };

template <typename T>
inline Work solve_work(Structure s, int n, int k) {
  Work w;
  w.reals = static_cast<std::size_t>(n) * static_cast<std::size_t>(k);  // b, column-major
  w.ints = static_cast<std::size_t>(n);
  if (s == Structure::Symmetric) {
    T query = 0, dummy = 0;
    int ipiv = 0;
    const int ld = std::max(1, n);
    kiln_lapack::sysv('U', n, k, &dummy, ld, &ipiv, &dummy, ld, &query, -1);
    w.reals += queried(query);
  } else if (s == Structure::Tridiagonal) {
    w.reals += 3 * static_cast<std::size_t>(n);
  }
  return w;
}

/// Solves A X = B for X: `a` is n x n (row-major, overwritten; for Symmetric and
/// PositiveDefinite only the triangle `lower` selects is read, for Tridiagonal only the three
/// diagonals), `b` is n x k (row-major, leading dimension ldb) and receives X. Singular (or
/// NotPositiveDefinite) leaves `b` undefined.
template <typename T>
inline Status solve(Structure s, bool lower, int n, int k, T* a, int lda, T* b, int ldb, T* work, int* iwork) {
  if (n == 0 || k == 0) return Status::Ok;
  T* bc = work;  // B in column-major order (n x k, leading dimension n)
  T* rest = work + static_cast<std::size_t>(n) * static_cast<std::size_t>(k);
  transpose_into(b, n, k, ldb, bc, n);
  const char uplo = lower ? 'U' : 'L';  // row-major lower triangle = column-major upper
  int info = 0;
  switch (s) {
    case Structure::General:
      // `a` read column-major is A^T; its LU solves A X = B with trans = 'T'.
      info = kiln_lapack::getrf(n, n, a, lda, iwork);
      if (info == 0) info = kiln_lapack::getrs('T', n, k, a, lda, iwork, bc, n);
      break;
    case Structure::Symmetric: {
      T query = 0;
      kiln_lapack::sysv(uplo, n, k, a, lda, iwork, bc, n, &query, -1);
      info = kiln_lapack::sysv(uplo, n, k, a, lda, iwork, bc, n, rest, static_cast<int>(queried(query)));
      break;
    }
    case Structure::PositiveDefinite:
      info = kiln_lapack::posv(uplo, n, k, a, lda, bc, n);
      if (info > 0) return Status::NotPositiveDefinite;
      break;
    case Structure::Tridiagonal: {
      T* dl = rest;
      T* d = rest + n;
      T* du = rest + 2 * n;
      for (int i = 0; i < n; ++i) {
        d[i] = a[i * static_cast<std::int64_t>(lda) + i];
        if (i + 1 < n) {
          dl[i] = a[(i + 1) * static_cast<std::int64_t>(lda) + i];
          du[i] = a[i * static_cast<std::int64_t>(lda) + i + 1];
        }
      }
      info = kiln_lapack::gtsv(n, k, dl, d, du, bc, n);
      break;
    }
  }
  if (info < 0) return Status::Internal;
  if (info > 0) return Status::Singular;
  transpose_into(bc, k, n, n, b, ldb);
  return Status::Ok;
}

/// How a triangular matrix operand lies in memory: row-major with leading dimension `ld`
/// (`transposed` false), or its transpose does (`transposed` true). False when neither stride
/// is 1 (or the other is not a valid leading dimension): the caller copies it first.
inline bool blas_layout(int n, std::int64_t rs, std::int64_t cs, int& ld, bool& transposed) {
  if (n <= 1) {
    ld = 1;
    transposed = false;
    return true;
  }
  if (cs == 1 && rs >= n && rs <= std::numeric_limits<int>::max()) {
    ld = static_cast<int>(rs);
    transposed = false;
    return true;
  }
  if (rs == 1 && cs >= n && cs <= std::numeric_limits<int>::max()) {
    ld = static_cast<int>(cs);
    transposed = true;
    return true;
  }
  return false;
}

/// Solves op(A) X = B for triangular A (n x n at `a` with strides rs, cs, one of them 1; only the
/// `lower` or upper triangle is read; `unit` takes the diagonal as ones) and op = A or A^T
/// (`trans`); B (n x k, row-major, leading dimension ldb) receives X. Singular when a diagonal
/// element is exactly zero (LAPACK's trtrs check), unless `check` is false.
template <typename T>
inline Status solve_triangular(bool lower, bool trans, bool unit, int n, int k, const T* a, std::int64_t rs,
                               std::int64_t cs, T* b, int ldb, bool check = true) {
  if (n == 0 || k == 0) return Status::Ok;
  if (check && !unit)
    for (int i = 0; i < n; ++i)
      if (a[i * rs + i * cs] == T(0)) return Status::Singular;
  int lda = 1;
  bool transposed = false;
  if (!blas_layout(n, rs, cs, lda, transposed)) return Status::Internal;
  // The transpose of a lower-triangular matrix is upper triangular.
  const bool stored_lower = lower != transposed;
  const bool stored_trans = trans != transposed;
  const CBLAS_UPLO uplo = stored_lower ? CblasLower : CblasUpper;
  const CBLAS_TRANSPOSE t = stored_trans ? CblasTrans : CblasNoTrans;
  const CBLAS_DIAG diag = unit ? CblasUnit : CblasNonUnit;
  if (k == 1)
    trsv(uplo, t, diag, n, a, lda, b, ldb);
  else
    trsm(uplo, t, diag, n, k, a, lda, b, ldb);
  return Status::Ok;
}

/// Solves A X = B given A's Cholesky factor C (A = C C^T for `lower`, C^T C otherwise), as
/// LAPACK's potrs: two triangular solves, no singularity check. Strides as solve_triangular.
template <typename T>
inline Status cholesky_solve(bool lower, int n, int k, const T* c, std::int64_t rs, std::int64_t cs, T* b,
                             int ldb) {
  Status s = solve_triangular(lower, !lower, false, n, k, c, rs, cs, b, ldb, false);
  if (s != Status::Ok) return s;
  return solve_triangular(lower, lower, false, n, k, c, rs, cs, b, ldb, false);
}

// --- LU -----------------------------------------------------------------------------------------

/// The row permutation LAPACK's pivots describe: row i of P^T A is row perm[i] of A.
inline void permutation_from_pivots(int n, const int* ipiv, int* perm) {
  for (int i = 0; i < n; ++i) perm[i] = i;
  for (int i = 0; i < n; ++i) std::swap(perm[i], perm[ipiv[i] - 1]);
}

template <typename T>
inline Work lu_work(int n) {
  return Work{static_cast<std::size_t>(n) * static_cast<std::size_t>(n), 2 * static_cast<std::size_t>(n)};
}

/// SciPy's lu of a square matrix (row-major, not modified): A = P L U with unit lower L and
/// upper U. Writes `p` (the permutation matrix) or `p_indices` (P[i, p_indices[i]] = 1) when
/// given, `l` (P L instead when `permute_l`) and `u`; every output n x n (or n) row-major.
template <typename T>
inline Status lu(int n, const T* a, int lda, T* p, std::int32_t* p_indices, T* l, T* u, bool permute_l, T* work,
                 int* iwork) {
  if (n == 0) return Status::Ok;
  int* ipiv = iwork;
  int* perm = iwork + n;
  transpose_into(a, n, n, lda, work, n);  // column-major copy
  if (kiln_lapack::getrf(n, n, work, n, ipiv) < 0) return Status::Internal;
  permutation_from_pivots(n, ipiv, perm);
  const auto at = [&](int i, int j) { return work[static_cast<std::size_t>(j) * n + i]; };
  for (int i = 0; i < n; ++i) {
    // Row i of L lands in row perm[i] of P L.
    T* lrow = l + static_cast<std::size_t>(permute_l ? perm[i] : i) * n;
    T* urow = u + static_cast<std::size_t>(i) * n;
    for (int j = 0; j < n; ++j) {
      lrow[j] = j < i ? at(i, j) : (j == i ? T(1) : T(0));
      urow[j] = j >= i ? at(i, j) : T(0);
    }
  }
  if (p) {
    fill(p, n, n, n, T(0));
    for (int i = 0; i < n; ++i) p[static_cast<std::size_t>(perm[i]) * n + i] = T(1);
  }
  if (p_indices)
    for (int i = 0; i < n; ++i) p_indices[perm[i]] = i;
  return Status::Ok;
}

/// SciPy's lu_factor (PyTensor's LUFactor): `a` (row-major) becomes the packed LU factors and
/// `piv` the 0-based row interchanges. An exactly singular matrix gives NaN factors, as
/// PyTensor's LUFactor does.
template <typename T>
inline Status lu_factor(int n, T* a, int lda, std::int32_t* piv, T* work, int* iwork) {
  if (n == 0) return Status::Ok;
  transpose_into(a, n, n, lda, work, n);
  const int info = kiln_lapack::getrf(n, n, work, n, iwork);
  if (info < 0) return Status::Internal;
  transpose_into(work, n, n, n, a, lda);
  for (int i = 0; i < n; ++i) piv[i] = iwork[i] - 1;
  if (info > 0) fill_nan(a, n, n, lda);
  return Status::Ok;
}

/// PyTensor's PivotToPermutations: the row interchanges `piv` (n entries, `stride` apart,
/// 0-based) applied to 0..n-1 (`inverse`), or that permutation's inverse. `work` holds n values.
template <typename S>
inline Status pivots_to_permutation(std::int64_t n, const S* piv, std::int64_t stride, std::int64_t* out,
                                    bool inverse, std::int64_t* work) {
  std::int64_t* p = inverse ? out : work;
  for (std::int64_t i = 0; i < n; ++i) p[i] = i;
  for (std::int64_t i = 0; i < n; ++i) {
    const S v = piv[i * stride];
    if (v < S(0) || static_cast<std::int64_t>(v) >= n) return Status::PivotOutOfRange;
    std::swap(p[i], p[static_cast<std::int64_t>(v)]);
  }
  if (!inverse)
    for (std::int64_t i = 0; i < n; ++i) out[p[i]] = i;
  return Status::Ok;
}

// --- QR -----------------------------------------------------------------------------------------

/// scipy.linalg.qr's modes.
enum class QrMode { Full, Economic, R, Raw };

/// Columns of Q: m (full) or min(m, n) (economic); 0 when the mode has no Q.
inline int qr_q_cols(QrMode mode, int m, int n) {
  return mode == QrMode::Full ? m : mode == QrMode::Economic ? std::min(m, n) : 0;
}

template <typename T>
inline Work qr_work(QrMode mode, bool pivoting, int m, int n) {
  const int k = std::min(m, n), qc = qr_q_cols(mode, m, n), ld = std::max(1, m);
  T query = 0, dummy = 0;
  int idummy = 0;
  std::size_t lwork = 1;
  if (pivoting)
    kiln_lapack::geqp3(m, n, &dummy, ld, &idummy, &dummy, &query, -1);
  else
    kiln_lapack::geqrf(m, n, &dummy, ld, &dummy, &query, -1);
  lwork = std::max(lwork, queried(query));
  if (qc > 0) {
    kiln_lapack::orgqr(m, qc, k, &dummy, ld, &dummy, &query, -1);
    lwork = std::max(lwork, queried(query));
  }
  Work w;
  w.reals = static_cast<std::size_t>(ld) * (static_cast<std::size_t>(n) + static_cast<std::size_t>(qc)) +
            static_cast<std::size_t>(k) + lwork;
  w.ints = static_cast<std::size_t>(n);
  return w;
}

/// scipy.linalg.qr of an m x n row-major matrix (not modified), outputs row-major: `q` (m x m
/// for Full, m x k for Economic), `r` (m x n for Full and R, k x n for Economic and Raw), `h`
/// and `tau` (Raw: LAPACK's Householder vectors, m x n, and their k scales), `jpvt` (with
/// pivoting: the 0-based column permutation, A[:, jpvt] = Q R). Null outputs are skipped.
template <typename T>
inline Status qr(QrMode mode, bool pivoting, int m, int n, const T* a, int lda, T* q, T* r, T* h, T* tau_out,
                 std::int32_t* jpvt, T* work, int* iwork) {
  const int k = std::min(m, n), qc = qr_q_cols(mode, m, n), ld = std::max(1, m);
  T* hc = work;                                             // m x n, column-major
  T* qbuf = hc + static_cast<std::size_t>(ld) * n;          // m x qc, column-major
  T* tau = qbuf + static_cast<std::size_t>(ld) * qc;        // k
  T* lapack_work = tau + k;
  const int lwork = static_cast<int>(qr_work<T>(mode, pivoting, m, n).reals -
                                     static_cast<std::size_t>(ld) * (static_cast<std::size_t>(n) + qc) - k);
  transpose_into(a, m, n, lda, hc, ld);
  int info = 0;
  if (pivoting) {
    for (int j = 0; j < n; ++j) iwork[j] = 0;  // every column free to move
    info = kiln_lapack::geqp3(m, n, hc, ld, iwork, tau, lapack_work, lwork);
  } else {
    info = kiln_lapack::geqrf(m, n, hc, ld, tau, lapack_work, lwork);
  }
  if (info != 0) return Status::Internal;
  const auto at = [&](int i, int j) { return hc[static_cast<std::size_t>(j) * ld + i]; };
  if (r) {
    const int rows = (mode == QrMode::Full || mode == QrMode::R) ? m : k;
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < n; ++j) r[static_cast<std::size_t>(i) * n + j] = j >= i ? at(i, j) : T(0);
  }
  if (h) transpose_into(hc, n, m, ld, h, n);
  if (tau_out)
    for (int i = 0; i < k; ++i) tau_out[i] = tau[i];
  if (jpvt)
    for (int j = 0; j < n; ++j) jpvt[j] = iwork[j] - 1;
  if (q && qc > 0) {
    for (int j = 0; j < std::min(n, qc); ++j)
      std::memcpy(qbuf + static_cast<std::size_t>(j) * ld, hc + static_cast<std::size_t>(j) * ld,
                  sizeof(T) * static_cast<std::size_t>(m));
    if (kiln_lapack::orgqr(m, qc, k, qbuf, ld, tau, lapack_work, lwork) != 0) return Status::Internal;
    transpose_into(qbuf, qc, m, ld, q, qc);
  }
  return Status::Ok;
}

// --- inverse and determinants -------------------------------------------------------------------

template <typename T>
inline Work inverse_work(int n) {
  T query = 0, dummy = 0;
  int idummy = 0;
  kiln_lapack::getri(n, &dummy, std::max(1, n), &idummy, &query, -1);
  return Work{queried(query), static_cast<std::size_t>(n)};
}

/// The inverse of `a` (n x n, row-major, replaced by its inverse); Singular when it has none.
template <typename T>
inline Status inverse(int n, T* a, int lda, T* work, int* iwork) {
  if (n == 0) return Status::Ok;
  // Read column-major, `a` is A^T, and inv(A^T) read row-major is inv(A).
  int info = kiln_lapack::getrf(n, n, a, lda, iwork);
  if (info > 0) return Status::Singular;
  if (info < 0) return Status::Internal;
  info = kiln_lapack::getri(n, a, lda, iwork, work, static_cast<int>(inverse_work<T>(n).reals));
  if (info > 0) return Status::Singular;
  return info < 0 ? Status::Internal : Status::Ok;
}

/// NumPy's slogdet of `a` (n x n, row-major, overwritten; `iwork` holds n ints): the sign (0 for
/// a singular matrix) and log |det| (-inf then). det = sign * exp(logabsdet), as NumPy computes it.
template <typename T>
inline Status slogdet(int n, T* a, int lda, int* iwork, T& sign, T& logabsdet) {
  sign = T(1);
  logabsdet = T(0);
  if (n == 0) return Status::Ok;
  const int info = kiln_lapack::getrf(n, n, a, lda, iwork);  // det(A^T) = det(A)
  if (info < 0) return Status::Internal;
  if (info > 0) {
    sign = T(0);
    logabsdet = -std::numeric_limits<T>::infinity();
    return Status::Ok;
  }
  bool negative = false;
  for (int i = 0; i < n; ++i) {
    const T d = a[i * static_cast<std::int64_t>(lda) + i];
    negative = negative != (iwork[i] != i + 1);
    negative = negative != (d < T(0));
    logabsdet += std::log(std::abs(d));
  }
  sign = negative ? T(-1) : T(1);
  return Status::Ok;
}

// --- symmetric eigenproblems --------------------------------------------------------------------

template <typename T>
inline Work eigh_work(int n, bool vectors, bool generalized) {
  T query = 0, dummy = 0;
  int iquery = 0, idummy = 0;
  const int ld = std::max(1, n);
  if (generalized)
    kiln_lapack::sygvd(vectors ? 'V' : 'N', 'U', n, &dummy, ld, &dummy, ld, &dummy, &query, -1, &iquery, -1);
  else
    kiln_lapack::syevr(vectors ? 'V' : 'N', 'U', n, &dummy, ld, &dummy, &dummy, ld, &idummy, &query, -1, &iquery,
                       -1);
  Work w;
  w.reals = queried(query) + (vectors ? static_cast<std::size_t>(n) * static_cast<std::size_t>(n) : 0);
  w.ints = static_cast<std::size_t>(std::max(iquery, 1)) + 2 * static_cast<std::size_t>(ld);
  return w;
}

/// Eigenvalues `w` (ascending) and, when `v` is given, eigenvectors (the columns of the n x n
/// row-major `v`) of the symmetric matrix in the `lower` (or upper) triangle of `a` (row-major,
/// overwritten); with `b` (also overwritten), of the generalized problem A v = w B v for
/// positive definite B, eigenvectors normalized to v^T B v = I. NotPositiveDefinite when B is
/// not, NoConvergence when LAPACK gives up.
template <typename T>
inline Status eigh(bool lower, int n, T* a, int lda, T* b, int ldb, T* w, T* v, T* work, int* iwork) {
  if (n == 0) return Status::Ok;
  const bool vectors = v != nullptr;
  const Work sizes = eigh_work<T>(n, vectors, b != nullptr);
  const std::size_t zsize = vectors ? static_cast<std::size_t>(n) * n : 0;
  const int lwork = static_cast<int>(sizes.reals - zsize);
  const int liwork = static_cast<int>(sizes.ints - 2 * static_cast<std::size_t>(n));
  const char jobz = vectors ? 'V' : 'N', uplo = lower ? 'U' : 'L';  // row-major = transposed
  T* z = work + lwork;
  int info = 0;
  if (b) {
    info = kiln_lapack::sygvd(jobz, uplo, n, a, lda, b, ldb, w, work, lwork, iwork, liwork);
    if (info > n) return Status::NotPositiveDefinite;
    if (info == 0 && vectors) transpose_into(a, n, n, lda, v, n);  // a holds the vectors, column-major
  } else {
    T* zbuf = vectors ? z : w;  // not referenced without vectors
    info = kiln_lapack::syevr(jobz, uplo, n, a, lda, w, zbuf, n, iwork + liwork, work, lwork, iwork, liwork);
    if (info == 0 && vectors) transpose_into(z, n, n, n, v, n);
  }
  if (info < 0) return Status::Internal;
  return info > 0 ? Status::NoConvergence : Status::Ok;
}

// --- the general eigenproblem -------------------------------------------------------------------

template <typename T>
inline Work eig_work(int n) {
  if (n == 0) return Work{};
  T query = 0, dummy = 0;
  kiln_lapack::geev('N', 'V', n, &dummy, n, &dummy, &dummy, &dummy, 1, &dummy, n, &query, -1);
  const std::size_t nn = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  return Work{queried(query) + 2 * nn + 2 * static_cast<std::size_t>(n), 0};
}

/// NumPy's eig of the n x n row-major `a` (read only): eigenvalues `w` in LAPACK's order and
/// right eigenvectors, the columns of the row-major n x n `v`, each of unit norm with its largest
/// component real (geev's normalisation); a complex pair's vectors are re ± i im of geev's two
/// columns, as numpy.linalg.eig builds them. NotFinite for a NaN or infinite element (NumPy
/// refuses those), NoConvergence when LAPACK gives up.
template <typename T>
inline Status eig(int n, const T* a, int lda, std::complex<T>* w, std::complex<T>* v, T* work) {
  if (n == 0) return Status::Ok;
  const std::size_t nn = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  T* ac = work;  // column-major: geev's layout, as NumPy hands it A
  T* wr = ac + nn;
  T* wi = wr + n;
  T* vr = wi + n;
  T* rest = vr + nn;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const T x = a[static_cast<std::size_t>(i) * lda + j];
      if (!std::isfinite(x)) return Status::NotFinite;
      ac[static_cast<std::size_t>(j) * n + i] = x;
    }
  const int lwork = static_cast<int>(eig_work<T>(n).reals - 2 * nn - 2 * static_cast<std::size_t>(n));
  T vl = 0;
  const int info = kiln_lapack::geev('N', 'V', n, ac, n, wr, wi, &vl, 1, vr, n, rest, lwork);
  if (info < 0) return Status::Internal;
  if (info > 0) return Status::NoConvergence;
  const auto at = [&](int i, int j) { return vr[static_cast<std::size_t>(j) * n + i]; };
  for (int j = 0; j < n; ++j) w[j] = std::complex<T>(wr[j], wi[j]);
  for (int j = 0; j < n;) {
    if (wi[j] == 0 || j + 1 == n) {
      for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i) * n + j] = std::complex<T>(at(i, j), T(0));
      j += 1;
    } else {
      for (int i = 0; i < n; ++i) {
        v[static_cast<std::size_t>(i) * n + j] = std::complex<T>(at(i, j), at(i, j + 1));
        v[static_cast<std::size_t>(i) * n + j + 1] = std::complex<T>(at(i, j), -at(i, j + 1));
      }
      j += 2;
    }
  }
  return Status::Ok;
}

// --- SVD ----------------------------------------------------------------------------------------

template <typename T>
inline Work svd_work(int m, int n, bool full, bool uv) {
  const int k = std::min(m, n);
  if (k == 0) return Work{};
  T query = 0, dummy = 0;
  int idummy = 0;
  // Row-major A is column-major A^T (n x m).
  kiln_lapack::gesdd(uv ? (full ? 'A' : 'S') : 'N', n, m, &dummy, n, &dummy, &dummy, n, &dummy, std::max(1, m),
                     &query, -1, &idummy);
  return Work{queried(query), 8 * static_cast<std::size_t>(k)};
}

/// NumPy's svd of an m x n row-major matrix `a` (overwritten): singular values `s`
/// (descending, min(m, n) of them) and, with `uv`, U (m x m or m x k) and Vt (n x n or k x n),
/// row-major, A = U diag(s) Vt. NoConvergence when LAPACK gives up.
template <typename T>
inline Status svd(int m, int n, T* a, bool full, bool uv, T* u, T* s, T* vt, T* work, int* iwork) {
  const int k = std::min(m, n);
  if (k == 0) {
    // Only a full decomposition has anything to hold: identities.
    if (uv && full) {
      fill(u, m, m, m, T(0));
      fill(vt, n, n, n, T(0));
      for (int i = 0; i < m; ++i) u[static_cast<std::size_t>(i) * m + i] = T(1);
      for (int i = 0; i < n; ++i) vt[static_cast<std::size_t>(i) * n + i] = T(1);
    }
    return Status::Ok;
  }
  const int lwork = static_cast<int>(svd_work<T>(m, n, full, uv).reals);
  // The SVD of A^T = U' S VT' is A = VT'^T S U'^T: VT' read row-major is U, U' is Vt.
  const int ucols = full ? m : k;
  T dummy = 0;
  const int info = uv ? kiln_lapack::gesdd(full ? 'A' : 'S', n, m, a, n, s, vt, n, u, ucols, work, lwork, iwork)
                      : kiln_lapack::gesdd('N', n, m, a, n, s, &dummy, 1, &dummy, 1, work, lwork, iwork);
  if (info < 0) return Status::Internal;
  return info > 0 ? Status::NoConvergence : Status::Ok;
}

// --- pseudo-inverse -----------------------------------------------------------------------------

/// NumPy's default cutoff for small singular values, relative to the largest.
constexpr double kPinvRcond = 1e-15;

template <typename T>
inline Work pinv_work(int m, int n, bool hermitian) {
  if (hermitian) {
    Work e = eigh_work<T>(n, true, false);
    e.reals += 2 * static_cast<std::size_t>(n) * n + n;  // v, scaled v, w
    return e;
  }
  const int k = std::min(m, n);
  Work s = svd_work<T>(m, n, false, true);
  s.reals += static_cast<std::size_t>(m) * k + k + static_cast<std::size_t>(k) * n;
  return s;
}

/// np.linalg.pinv of an m x n row-major matrix `a` (overwritten) into `out` (n x m, row-major):
/// singular values at most 1e-15 times the largest count as zero. `hermitian` (square `a`)
/// reads the lower triangle and uses eigh, as NumPy does.
template <typename T>
inline Status pinv(int m, int n, T* a, bool hermitian, T* out, T* work, int* iwork) {
  if (m == 0 || n == 0) return Status::Ok;
  if (hermitian) {
    const Work e = eigh_work<T>(n, true, false);
    T* v = work + e.reals;
    T* vs = v + static_cast<std::size_t>(n) * n;
    T* w = vs + static_cast<std::size_t>(n) * n;
    Status st = eigh<T>(true, n, a, n, nullptr, 0, w, v, work, iwork);
    if (st != Status::Ok) return st;
    T largest = 0;
    for (int i = 0; i < n; ++i) largest = std::max(largest, std::abs(w[i]));
    const T cutoff = static_cast<T>(kPinvRcond) * largest;
    for (int i = 0; i < n; ++i)
      for (int l = 0; l < n; ++l) {
        const T d = std::abs(w[l]) > cutoff ? T(1) / w[l] : T(0);
        vs[static_cast<std::size_t>(i) * n + l] = v[static_cast<std::size_t>(i) * n + l] * d;
      }
    gemm(CblasNoTrans, CblasTrans, n, n, n, T(1), vs, n, v, n, T(0), out, n);  // V diag(1/w) V^T
    return Status::Ok;
  }
  const int k = std::min(m, n);
  const Work sw = svd_work<T>(m, n, false, true);
  T* u = work + sw.reals;
  T* s = u + static_cast<std::size_t>(m) * k;
  T* vt = s + k;
  Status st = svd<T>(m, n, a, false, true, u, s, vt, work, iwork);
  if (st != Status::Ok) return st;
  const T cutoff = static_cast<T>(kPinvRcond) * s[0];
  for (int l = 0; l < k; ++l) {
    const T d = s[l] > cutoff ? T(1) / s[l] : T(0);
    for (int i = 0; i < m; ++i) u[static_cast<std::size_t>(i) * k + l] *= d;
  }
  gemm(CblasTrans, CblasTrans, n, m, k, T(1), vt, n, u, k, T(0), out, m);  // Vt^T diag(1/s) U^T
  return Status::Ok;
}

// --- matrix exponential -------------------------------------------------------------------------

template <typename T>
inline Work expm_work(int n) {
  return Work{8 * static_cast<std::size_t>(n) * static_cast<std::size_t>(n), static_cast<std::size_t>(n)};
}

/// expm(A) by scaling and squaring with a diagonal Padé approximant of degree 3, 5, 7, 9 or 13
/// chosen from the 1-norm (Higham, "The scaling and squaring method for the matrix exponential
/// revisited", SIAM J. Matrix Anal. Appl. 26(4), 2005). `a` is n x n row-major (leading
/// dimension lda, not modified); `out` n x n row-major.
template <typename T>
inline Status expm(int n, const T* a, int lda, T* out, T* work, int* iwork) {
  if (n == 0) return Status::Ok;
  const std::size_t nn = static_cast<std::size_t>(n) * n;
  T* A = work;
  T* P2 = A + nn;   // A^2
  T* P4 = P2 + nn;  // A^4
  T* P6 = P4 + nn;  // A^6
  T* P8 = P6 + nn;  // A^8
  T* U = P8 + nn;
  T* V = U + nn;
  T* tmp = V + nn;
  for (int i = 0; i < n; ++i) std::memcpy(A + static_cast<std::size_t>(i) * n, a + static_cast<std::int64_t>(i) * lda, sizeof(T) * n);
  double norm = 0;  // 1-norm: the largest column sum
  for (int j = 0; j < n; ++j) {
    double col = 0;
    for (int i = 0; i < n; ++i) col += std::abs(static_cast<double>(A[static_cast<std::size_t>(i) * n + j]));
    norm = std::max(norm, col);
  }
  static const double kTheta[] = {1.495585217958292e-2, 2.539398330063230e-1, 9.504178996162932e-1,
                                  2.097847961257068e0, 5.371920351148152e0};
  static const double kB3[] = {120, 60, 12, 1};
  static const double kB5[] = {30240, 15120, 3360, 420, 30, 1};
  static const double kB7[] = {17297280, 8648640, 1995840, 277200, 25200, 1512, 56, 1};
  static const double kB9[] = {17643225600., 8821612800., 2075673600., 302702400., 30270240.,
                               2162160., 110880., 3960., 90., 1.};
  static const double kB13[] = {64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
                                129060195264000., 10559470521600., 670442572800., 33522128640.,
                                1323241920., 40840800., 960960., 16380., 182., 1.};
  const double* b = kB13;
  int degree = 13;
  const double* tables[] = {kB3, kB5, kB7, kB9};
  for (int i = 0; i < 4; ++i)
    if (norm <= kTheta[i]) {
      degree = 3 + 2 * i;
      b = tables[i];
      break;
    }
  int squarings = 0;
  if (degree == 13 && norm > kTheta[4]) {
    squarings = static_cast<int>(std::ceil(std::log2(norm / kTheta[4])));
    const T scale = static_cast<T>(std::ldexp(1.0, -squarings));
    for (std::size_t i = 0; i < nn; ++i) A[i] *= scale;
  }
  const auto mul = [&](const T* x, const T* y, T* z) {
    gemm(CblasNoTrans, CblasNoTrans, n, n, n, T(1), x, n, y, n, T(0), z, n);
  };
  // sum_i c_i X_i + c_I I into z (X_i null-terminated lists of powers).
  const auto combine = [&](T* z, std::initializer_list<std::pair<double, const T*>> terms, double c_identity) {
    for (std::size_t i = 0; i < nn; ++i) z[i] = T(0);
    for (const auto& [c, x] : terms)
      for (std::size_t i = 0; i < nn; ++i) z[i] += static_cast<T>(c) * x[i];
    for (int i = 0; i < n; ++i) z[static_cast<std::size_t>(i) * n + i] += static_cast<T>(c_identity);
  };
  mul(A, A, P2);
  if (degree >= 5 || degree == 13) mul(P2, P2, P4);
  if (degree >= 7 || degree == 13) mul(P4, P2, P6);
  if (degree == 13) {
    // U = A [A6 (b13 A6 + b11 A4 + b9 A2) + b7 A6 + b5 A4 + b3 A2 + b1 I]
    combine(tmp, {{b[13], P6}, {b[11], P4}, {b[9], P2}}, 0);
    mul(P6, tmp, P8);
    combine(tmp, {{1, P8}, {b[7], P6}, {b[5], P4}, {b[3], P2}}, b[1]);
    mul(A, tmp, U);
    // V = A6 (b12 A6 + b10 A4 + b8 A2) + b6 A6 + b4 A4 + b2 A2 + b0 I
    combine(tmp, {{b[12], P6}, {b[10], P4}, {b[8], P2}}, 0);
    mul(P6, tmp, P8);
    combine(V, {{1, P8}, {b[6], P6}, {b[4], P4}, {b[2], P2}}, b[0]);
  } else {
    if (degree == 9) mul(P6, P2, P8);
    const T* powers[] = {P2, P4, P6, P8};
    for (std::size_t i = 0; i < nn; ++i) tmp[i] = V[i] = T(0);
    for (int j = 1; j <= degree / 2; ++j) {  // terms b_{2j+1} A^{2j} (U') and b_{2j} A^{2j} (V)
      for (std::size_t i = 0; i < nn; ++i) {
        tmp[i] += static_cast<T>(b[2 * j + 1]) * powers[j - 1][i];
        V[i] += static_cast<T>(b[2 * j]) * powers[j - 1][i];
      }
    }
    for (int i = 0; i < n; ++i) {
      tmp[static_cast<std::size_t>(i) * n + i] += static_cast<T>(b[1]);
      V[static_cast<std::size_t>(i) * n + i] += static_cast<T>(b[0]);
    }
    mul(A, tmp, U);
  }
  // expm ~ (V - U)^{-1} (V + U). Row-major buffers read column-major are transposes; since P = V + U
  // and Q = V - U commute, solving Q^T Y = P^T gives Y = (Q^{-1} P)^T, whose row-major reading
  // is the answer.
  T* result = out;
  for (std::size_t i = 0; i < nn; ++i) {
    const T p = V[i] + U[i];
    V[i] -= U[i];
    result[i] = p;
  }
  int info = kiln_lapack::getrf(n, n, V, n, iwork);
  if (info > 0) return Status::Singular;
  if (info < 0 || kiln_lapack::getrs('N', n, n, V, n, iwork, result, n) != 0) return Status::Internal;
  T* other = tmp;
  for (int i = 0; i < squarings; ++i) {
    mul(result, result, other);
    std::swap(result, other);
  }
  if (result != out) std::memcpy(out, result, sizeof(T) * nn);
  return Status::Ok;
}

// --- structure ----------------------------------------------------------------------------------

/// np.kron for operands of `nd` dimensions (shapes padded with leading ones): out (row-major,
/// shape ashape * bshape elementwise) gets a[i] * b[j] at index i * bshape + j. Strides in
/// elements; T is the output's element type (products wrap for integers, AND for bool).
template <typename T, typename SA, typename SB>
inline void kron(int nd, const std::int64_t* ashape, const std::int64_t* astrides, const SA* a,
                 const std::int64_t* bshape, const std::int64_t* bstrides, const SB* b, T* out) {
  std::int64_t asize = 1, bsize = 1, ostrides[16];
  for (int d = 0; d < nd; ++d) {
    asize *= ashape[d];
    bsize *= bshape[d];
  }
  if (asize == 0 || bsize == 0) return;
  std::int64_t s = 1;
  for (int d = nd - 1; d >= 0; --d) {
    ostrides[d] = s;
    s *= ashape[d] * bshape[d];
  }
  std::int64_t ai[16] = {}, bi[16] = {};
  for (std::int64_t p = 0; p < asize; ++p) {
    std::int64_t aoff = 0, obase = 0;
    for (int d = 0; d < nd; ++d) {
      aoff += ai[d] * astrides[d];
      obase += ai[d] * bshape[d] * ostrides[d];
    }
    const T av = kiln_scalar::convert<T>(a[aoff]);
    for (int d = 0; d < nd; ++d) bi[d] = 0;
    for (std::int64_t q = 0; q < bsize; ++q) {
      std::int64_t boff = 0, ooff = obase;
      for (int d = 0; d < nd; ++d) {
        boff += bi[d] * bstrides[d];
        ooff += bi[d] * ostrides[d];
      }
      out[ooff] = kiln_scalar::wrap_mul(av, kiln_scalar::convert<T>(b[boff]));
      for (int d = nd - 1; d >= 0 && ++bi[d] == bshape[d]; --d) bi[d] = 0;
    }
    for (int d = nd - 1; d >= 0 && ++ai[d] == ashape[d]; --d) ai[d] = 0;
  }
}

}  // namespace kiln_linalg
