// kiln generated-code runtime: linear algebra. Embedded after runtime.hpp (and the bodies of
// kiln/runtime/lapack.hpp and linalg_kernels.hpp, which do the per-matrix work) into sources
// whose graphs have a linear-algebra node (emit_linalg.cpp).
//
// A node runs its kernel once per matrix of its batch (once for a core op): for_each_item
// hands each call the element offsets of its operands, a per-call context for error messages
// and a slice of the node's scratch memory, a context slot kept across calls (so a steady
// state allocates nothing). Large batches split over the context's threads; a single matrix
// gives BLAS and LAPACK the threads instead. Inputs may have any strides and dtypes: kernels
// copy them into row-major buffers of the compute type (or read them in place where BLAS can).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kiln/runtime/linalg_kernels.hpp"
#include "runtime.hpp"

namespace kg {
namespace linalg {

using kiln_linalg::Status;
using kiln_linalg::Structure;

/// Scratch is handed out in 64-byte aligned pieces.
inline size_t aligned(size_t bytes) { return (bytes + 63) / 64 * 64; }
template <typename T>
inline size_t bytes_for(int64_t n) {
  return aligned(static_cast<size_t>(n > 0 ? n : 0) * sizeof(T));
}
template <typename T>
inline size_t work_bytes(const kiln_linalg::Work& w) {
  return bytes_for<T>(static_cast<int64_t>(w.reals)) + bytes_for<int>(static_cast<int64_t>(w.ints));
}

/// One kernel call's share of the node's scratch, handed out front to back.
struct Arena {
  char* next;
  template <typename T>
  T* take(int64_t n) {
    T* p = reinterpret_cast<T*>(next);
    next += bytes_for<T>(n);
    return p;
  }
  template <typename T>
  void work(const kiln_linalg::Work& w, T*& reals, int*& ints) {
    reals = take<T>(static_cast<int64_t>(w.reals));
    ints = take<int>(static_cast<int64_t>(w.ints));
  }
};

/// The kernel's failure as a status and message (the words the reference evaluator uses).
inline int32_t failed(Ctx* ctx, Status s) {
  return fail(ctx, s == Status::PivotOutOfRange ? KILN_ERR_INDEX : KILN_ERR_LINALG, "%s",
              kiln_linalg::status_message(s));
}

/// Fails unless every length fits LAPACK's 32-bit integers.
inline int32_t check_dims(Ctx* ctx, std::initializer_list<int64_t> lengths) {
  for (int64_t n : lengths)
    if (!kiln_linalg::fits_lapack(n))
      return fail(ctx, KILN_ERR_VALUE, "a matrix dimension of %lld is too large for LAPACK (32-bit)",
                  static_cast<long long>(n));
  return KILN_OK;
}

/// "<what>: expected a square matrix, got shape (2, 3)".
inline int32_t fail_not_square(Ctx* ctx, const char* what, const int64_t* shape) {
  char s[128];
  shape_text(s, sizeof s, shape, 2);
  return fail(ctx, KILN_ERR_BROADCAST, "%s: expected a square matrix, got shape %s", what, s);
}

/// "<prefix>: A has shape (3, 3), b has shape (4,)"-style messages for two operands.
inline int32_t fail_two_shapes(Ctx* ctx, const char* format, const int64_t* a, int an, const int64_t* b, int bn) {
  char sa[128], sb[128];
  shape_text(sa, sizeof sa, a, an);
  shape_text(sb, sizeof sb, b, bn);
  return fail(ctx, KILN_ERR_BROADCAST, format, sa, sb);
}

/// A row-major copy of `a` in T (rows x cols, leading dimension cols).
template <typename T, typename S>
inline void gather(const Mat<const S>& a, T* dst) {
  if constexpr (std::is_same_v<S, T>) {
    if (a.cols == 1 || a.cs == 1) {
      if (a.rows == 1 || a.rs == a.cols) {
        if (a.rows * a.cols > 0) std::memcpy(dst, a.data, sizeof(T) * static_cast<size_t>(a.rows * a.cols));
        return;
      }
      for (int64_t i = 0; i < a.rows; ++i) std::memcpy(dst + i * a.cols, a.data + i * a.rs, sizeof(T) * a.cols);
      return;
    }
  }
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < a.cols; ++j)
      dst[i * a.cols + j] = kiln_scalar::convert<T>(a.data[i * a.rs + j * a.cs]);
}

/// Runs f(ictx, arena, offsets) for every matrix of a batch of shape `batch` (NB dimensions;
/// one call when NB is 0); offsets[k] is operand k's element offset, from its batch strides.
/// Calls split over the context's threads when there are several and `item_work` (a flop
/// count) times their number is large. The first failing call (lowest batch position) decides
/// the status and message.
template <int NB, int K, typename F>
inline int32_t for_each_item(Ctx* ctx, int slot, size_t item_bytes, const int64_t* batch,
                             const int64_t (&strides)[K][NB > 0 ? NB : 1], double item_work, F&& f) {
  constexpr int64_t kMaxParts = 64;
  int64_t total = 1;
  for (int d = 0; d < NB; ++d) total *= batch[d];
  if (total == 0) return KILN_OK;
  const bool threads = total > 1 && ctx->num_threads > 1 && static_cast<double>(total) * item_work > kParallelThreshold;
  int64_t parts = threads ? (ctx->num_threads < total ? ctx->num_threads : total) : 1;
  if (parts > kMaxParts) parts = kMaxParts;
  // The slot holds each part's scratch share and, when threaded, each part's context copy.
  const size_t share = aligned(item_bytes), ctx_bytes = parts > 1 ? aligned(sizeof(Ctx)) : 0;
  char* base = nullptr;
  {
    Tensor<char, 1> buf;
    buf.shape[0] = static_cast<int64_t>(share + ctx_bytes) * parts;
    if (buf.shape[0] > 0) {
      KILN_TRY(alloc_workspace(ctx, slot, buf));
      base = buf.data;
    }
  }
  auto run = [&](Ctx* c, int64_t begin, int64_t end, char* scratch, int64_t& failed_at) -> int32_t {
    for (int64_t item = begin; item < end; ++item) {
      int64_t off[K] = {};
      int64_t rest = item;
      for (int d = NB - 1; d >= 0; --d) {
        const int64_t i = rest % batch[d];
        rest /= batch[d];
        for (int k = 0; k < K; ++k) off[k] += i * strides[k][d];
      }
      Arena arena{scratch};
      const int32_t status = f(c, arena, static_cast<const int64_t*>(off));
      if (status != KILN_OK) {
        failed_at = item;
        return status;
      }
    }
    return KILN_OK;
  };
  if (parts == 1) {
    BlasThreads blas(ctx);  // one matrix at a time: BLAS/LAPACK get the threads
    int64_t at = 0;
    return run(ctx, 0, total, base, at);
  }
  const int64_t chunk = (total + parts - 1) / parts;
  int32_t statuses[kMaxParts] = {};
  int64_t failed_items[kMaxParts] = {};
  char* contexts = base + share * static_cast<size_t>(parts);
#pragma omp parallel for schedule(static, 1) num_threads(static_cast<int>(parts))
  for (int64_t p = 0; p < parts; ++p) {
    Ctx* local = new (contexts + ctx_bytes * static_cast<size_t>(p)) Ctx(*ctx);
    local->num_threads = 1;  // BLAS inside one matrix stays on this thread
    BlasThreads blas(local);
    const int64_t begin = p * chunk, end = begin + chunk < total ? begin + chunk : total;
    statuses[p] = run(local, begin, end, base + share * static_cast<size_t>(p), failed_items[p]);
  }
  int64_t first = -1;
  for (int64_t p = 0; p < parts; ++p)
    if (statuses[p] != KILN_OK && (first < 0 || failed_items[p] < failed_items[first])) first = p;
  if (first < 0) return KILN_OK;
  std::memcpy(ctx->error, reinterpret_cast<Ctx*>(contexts + ctx_bytes * static_cast<size_t>(first))->error,
              sizeof ctx->error);
  return statuses[first];
}

// --- Cholesky -----------------------------------------------------------------------------------

/// Cholesky of an N x N matrix with N known at compile time (unrolled by the compiler): reads one
/// triangle of `a`, writes the factor to `out` (row-major); false when a pivot is not positive.
template <typename T, int N, typename S>
inline bool small_cholesky(const Mat<const S>& a, T* out, bool lower) {
  T l[N][N];
  for (int j = 0; j < N; ++j) {
    // Element (i, j), i >= j, of the lower triangle the factorization reads.
    auto at = [&](int i) {
      return kiln_scalar::convert<T>(lower ? a.data[i * a.rs + j * a.cs] : a.data[j * a.rs + i * a.cs]);
    };
    T d = at(j);
    for (int k = 0; k < j; ++k) d -= l[j][k] * l[j][k];
    if (!(d > T(0))) return false;
    d = std::sqrt(d);
    l[j][j] = d;
    for (int i = j + 1; i < N; ++i) {
      T s = at(i);
      for (int k = 0; k < j; ++k) s -= l[i][k] * l[j][k];
      l[i][j] = s / d;
    }
  }
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) out[i * N + j] = lower ? (j <= i ? l[i][j] : T(0)) : (j >= i ? l[j][i] : T(0));
  return true;
}

/// Matrices up to this size take kiln's unrolled Cholesky rather than LAPACK.
constexpr int64_t kSmallCholesky = 8;

template <typename T, typename S>
inline bool small_cholesky_any(const Mat<const S>& a, T* out, bool lower) {
  switch (a.rows) {
    case 1: return small_cholesky<T, 1>(a, out, lower);
    case 2: return small_cholesky<T, 2>(a, out, lower);
    case 3: return small_cholesky<T, 3>(a, out, lower);
    case 4: return small_cholesky<T, 4>(a, out, lower);
    case 5: return small_cholesky<T, 5>(a, out, lower);
    case 6: return small_cholesky<T, 6>(a, out, lower);
    case 7: return small_cholesky<T, 7>(a, out, lower);
    default: return small_cholesky<T, 8>(a, out, lower);
  }
}

/// Cholesky: the factor into `out` (n x n, row-major); all NaN when `a` is not positive definite,
/// or a failure when `raise`.
template <typename T, typename S>
inline int32_t cholesky(Ctx* ctx, Arena&, const Mat<const S>& a, T* out, bool lower, bool raise) {
  const int64_t n = a.rows;
  if (n == 0) return KILN_OK;
  bool ok = true;
  if (n <= kSmallCholesky) {
    ok = small_cholesky_any<T>(a, out, lower);
  } else {
    gather(a, out);
    const Status s = kiln_linalg::cholesky<T>(static_cast<int>(n), out, static_cast<int>(n), lower);
    if (s == Status::Internal) return failed(ctx, s);
    ok = s == Status::Ok;
  }
  if (!ok) {
    if (raise) return failed(ctx, Status::NotPositiveDefinite);
    kiln_linalg::fill_nan(out, n, n, n);
  }
  return KILN_OK;
}

// --- solves -------------------------------------------------------------------------------------

template <typename T>
inline size_t solve_bytes(Structure st, int64_t n, int64_t k) {
  return bytes_for<T>(n * n) + work_bytes<T>(kiln_linalg::solve_work<T>(st, static_cast<int>(n), static_cast<int>(k)));
}

/// Solve: A x = b into `out` (n x k row-major; k = 1 for a vector b); NaN when singular.
template <typename T, typename SA, typename SB>
inline int32_t solve(Ctx* ctx, Arena& ar, Structure st, bool lower, const Mat<const SA>& a, const Mat<const SB>& b,
                     T* out) {
  const int n = static_cast<int>(a.rows), k = static_cast<int>(b.cols);
  T* ac = ar.take<T>(static_cast<int64_t>(n) * n);
  gather(a, ac);
  gather(b, out);
  T* w;
  int* iw;
  ar.work<T>(kiln_linalg::solve_work<T>(st, n, k), w, iw);
  const Status s = kiln_linalg::solve<T>(st, lower, n, k, ac, n > 0 ? n : 1, out, k > 0 ? k : 1, w, iw);
  if (s == Status::Singular || s == Status::NotPositiveDefinite)
    kiln_linalg::fill_nan(out, n, k, k);
  else if (s != Status::Ok)
    return failed(ctx, s);
  return KILN_OK;
}

/// Where a triangular operand is read from: in place when BLAS can, else a row-major copy.
template <typename T, typename S>
inline const T* triangular_operand(Arena& ar, const Mat<const S>& a, int64_t& rs, int64_t& cs) {
  const int n = static_cast<int>(a.rows);
  if constexpr (std::is_same_v<S, T>) {
    int ld = 1;
    bool transposed = false;
    if (kiln_linalg::blas_layout(n, a.rs, a.cs, ld, transposed)) {
      rs = a.rs;
      cs = a.cs;
      return a.data;
    }
  }
  T* copy = ar.take<T>(static_cast<int64_t>(n) * n);
  gather(a, copy);
  rs = n;
  cs = 1;
  return copy;
}

template <typename T>
inline size_t triangular_bytes(int64_t n) {
  return bytes_for<T>(n * n);
}

/// SolveTriangular: op(A) x = b into `out`; NaN when a diagonal element is zero.
template <typename T, typename SA, typename SB>
inline int32_t solve_triangular(Ctx* ctx, Arena& ar, bool lower, bool trans, bool unit, const Mat<const SA>& a,
                                const Mat<const SB>& b, T* out) {
  const int n = static_cast<int>(a.rows), k = static_cast<int>(b.cols);
  gather(b, out);
  int64_t rs = 0, cs = 0;
  const T* ap = triangular_operand<T>(ar, a, rs, cs);
  const Status s = kiln_linalg::solve_triangular<T>(lower, trans, unit, n, k, ap, rs, cs, out, k > 0 ? k : 1);
  if (s == Status::Singular)
    kiln_linalg::fill_nan(out, n, k, k);
  else if (s != Status::Ok)
    return failed(ctx, s);
  return KILN_OK;
}

/// CholeskySolve: A x = b with A = c c^T (lower) or c^T c, into `out`.
template <typename T, typename SA, typename SB>
inline int32_t cholesky_solve(Ctx* ctx, Arena& ar, bool lower, const Mat<const SA>& c, const Mat<const SB>& b,
                              T* out) {
  const int n = static_cast<int>(c.rows), k = static_cast<int>(b.cols);
  gather(b, out);
  int64_t rs = 0, cs = 0;
  const T* cp = triangular_operand<T>(ar, c, rs, cs);
  const Status s = kiln_linalg::cholesky_solve<T>(lower, n, k, cp, rs, cs, out, k > 0 ? k : 1);
  return s == Status::Ok ? KILN_OK : failed(ctx, s);
}

// --- LU -----------------------------------------------------------------------------------------

template <typename T>
inline size_t lu_bytes(int64_t n) {
  return bytes_for<T>(n * n) + work_bytes<T>(kiln_linalg::lu_work<T>(static_cast<int>(n)));
}

/// LU: P (or p indices) / L (or P L) / U.
template <typename T, typename S>
inline int32_t lu(Ctx* ctx, Arena& ar, const Mat<const S>& a, T* p, int32_t* p_indices, T* l, T* u, bool permute_l) {
  const int n = static_cast<int>(a.rows);
  T* ac = ar.take<T>(static_cast<int64_t>(n) * n);
  gather(a, ac);
  T* w;
  int* iw;
  ar.work<T>(kiln_linalg::lu_work<T>(n), w, iw);
  const Status s = kiln_linalg::lu<T>(n, ac, n > 0 ? n : 1, p, p_indices, l, u, permute_l, w, iw);
  return s == Status::Ok ? KILN_OK : failed(ctx, s);
}

/// LUFactor: packed factors into `lu_out`, 0-based pivots into `piv`.
template <typename T, typename S>
inline int32_t lu_factor(Ctx* ctx, Arena& ar, const Mat<const S>& a, T* lu_out, int32_t* piv) {
  const int n = static_cast<int>(a.rows);
  gather(a, lu_out);
  T* w;
  int* iw;
  ar.work<T>(kiln_linalg::lu_work<T>(n), w, iw);
  const Status s = kiln_linalg::lu_factor<T>(n, lu_out, n > 0 ? n : 1, piv, w, iw);
  return s == Status::Ok ? KILN_OK : failed(ctx, s);
}

/// PivotToPermutations of n pivots `stride` apart.
template <typename S>
inline int32_t pivots(Ctx* ctx, Arena& ar, const S* piv, int64_t n, int64_t stride, int64_t* out, bool inverse) {
  int64_t* work = ar.take<int64_t>(n);
  const Status s = kiln_linalg::pivots_to_permutation(n, piv, stride, out, inverse, work);
  return s == Status::Ok ? KILN_OK : failed(ctx, s);
}

// --- QR -----------------------------------------------------------------------------------------

template <typename T>
inline size_t qr_bytes(kiln_linalg::QrMode mode, bool pivoting, int64_t m, int64_t n) {
  return bytes_for<T>(m * n) + work_bytes<T>(kiln_linalg::qr_work<T>(mode, pivoting, static_cast<int>(m),
                                                                   static_cast<int>(n)));
}

template <typename T, typename S>
inline int32_t qr(Ctx* ctx, Arena& ar, kiln_linalg::QrMode mode, bool pivoting, const Mat<const S>& a, T* q, T* r,
                  T* h, T* tau, int32_t* jpvt) {
  const int m = static_cast<int>(a.rows), n = static_cast<int>(a.cols);
  T* ac = ar.take<T>(static_cast<int64_t>(m) * n);
  gather(a, ac);
  T* w;
  int* iw;
  ar.work<T>(kiln_linalg::qr_work<T>(mode, pivoting, m, n), w, iw);
  const Status s = kiln_linalg::qr<T>(mode, pivoting, m, n, ac, n > 0 ? n : 1, q, r, h, tau, jpvt, w, iw);
  return s == Status::Ok ? KILN_OK : failed(ctx, s);
}

// --- inverses, determinants, the exponential -----------------------------------------------------

template <typename T>
inline size_t inverse_bytes(int64_t n) {
  return work_bytes<T>(kiln_linalg::inverse_work<T>(static_cast<int>(n)));
}

/// MatrixInverse into `out`; a singular matrix is a failure.
template <typename T, typename S>
inline int32_t inverse(Ctx* ctx, Arena& ar, const Mat<const S>& a, T* out) {
  const int n = static_cast<int>(a.rows);
  gather(a, out);
  T* w;
  int* iw;
  ar.work<T>(kiln_linalg::inverse_work<T>(n), w, iw);
  const Status s = kiln_linalg::inverse<T>(n, out, n > 0 ? n : 1, w, iw);
  return s == Status::Ok ? KILN_OK : failed(ctx, s);
}

template <typename T>
inline size_t pinv_bytes(int64_t m, int64_t n, bool hermitian) {
  return bytes_for<T>(m * n) + work_bytes<T>(kiln_linalg::pinv_work<T>(static_cast<int>(m), static_cast<int>(n),
                                                                       hermitian));
}

template <typename T, typename S>
inline int32_t pinv(Ctx* ctx, Arena& ar, const Mat<const S>& a, T* out, bool hermitian) {
  const int m = static_cast<int>(a.rows), n = static_cast<int>(a.cols);
  T* ac = ar.take<T>(static_cast<int64_t>(m) * n);
  gather(a, ac);
  T* w;
  int* iw;
  ar.work<T>(kiln_linalg::pinv_work<T>(m, n, hermitian), w, iw);
  const Status s = kiln_linalg::pinv<T>(m, n, ac, hermitian, out, w, iw);
  return s == Status::Ok ? KILN_OK : failed(ctx, s);
}

template <typename T>
inline size_t slogdet_bytes(int64_t n) {
  return bytes_for<T>(n * n) + bytes_for<int>(n);
}

/// SLogDet into sign and log|det| (either may be null); Det is sign * exp(log|det|), as NumPy's.
template <typename T, typename S>
inline int32_t slogdet(Ctx* ctx, Arena& ar, const Mat<const S>& a, T* sign, T* logdet, T* det) {
  const int n = static_cast<int>(a.rows);
  T* ac = ar.take<T>(static_cast<int64_t>(n) * n);
  int* ipiv = ar.take<int>(n);
  gather(a, ac);
  T sg = 0, ld = 0;
  const Status s = kiln_linalg::slogdet<T>(n, ac, n > 0 ? n : 1, ipiv, sg, ld);
  if (s != Status::Ok) return failed(ctx, s);
  if (sign) *sign = sg;
  if (logdet) *logdet = ld;
  if (det) *det = sg * std::exp(ld);
  return KILN_OK;
}

template <typename T>
inline size_t expm_bytes(int64_t n) {
  return bytes_for<T>(n * n) + work_bytes<T>(kiln_linalg::expm_work<T>(static_cast<int>(n)));
}

template <typename T, typename S>
inline int32_t expm(Ctx* ctx, Arena& ar, const Mat<const S>& a, T* out) {
  const int n = static_cast<int>(a.rows);
  T* ac = ar.take<T>(static_cast<int64_t>(n) * n);
  gather(a, ac);
  T* w;
  int* iw;
  ar.work<T>(kiln_linalg::expm_work<T>(n), w, iw);
  const Status s = kiln_linalg::expm<T>(n, ac, n > 0 ? n : 1, out, w, iw);
  return s == Status::Ok ? KILN_OK : failed(ctx, s);
}

// --- eigenproblems and the SVD ------------------------------------------------------------------

template <typename T>
inline size_t eigh_bytes(int64_t n, bool vectors, bool generalized) {
  return bytes_for<T>(n * n) * (generalized ? 2 : 1) +
         work_bytes<T>(kiln_linalg::eigh_work<T>(static_cast<int>(n), vectors, generalized));
}

/// Eigh / Eigvalsh (v null); `b` null unless generalized.
template <typename T, typename SA, typename SB>
inline int32_t eigh(Ctx* ctx, Arena& ar, bool lower, const Mat<const SA>& a, const Mat<const SB>* b, T* w, T* v) {
  const int n = static_cast<int>(a.rows);
  T* ac = ar.take<T>(static_cast<int64_t>(n) * n);
  gather(a, ac);
  T* bc = nullptr;
  if (b) {
    bc = ar.take<T>(static_cast<int64_t>(n) * n);
    gather(*b, bc);
  }
  T* work;
  int* iw;
  ar.work<T>(kiln_linalg::eigh_work<T>(n, v != nullptr, b != nullptr), work, iw);
  const int ld = n > 0 ? n : 1;
  const Status s = kiln_linalg::eigh<T>(lower, n, ac, ld, bc, ld, w, v, work, iw);
  return s == Status::Ok ? KILN_OK : failed(ctx, s);
}

template <typename T>
inline size_t eig_bytes(int64_t n) {
  return bytes_for<T>(n * n) + work_bytes<T>(kiln_linalg::eig_work<T>(static_cast<int>(n)));
}

/// Eig: complex eigenvalues and right eigenvectors of a real matrix, computed in T.
template <typename T, typename S>
inline int32_t eig(Ctx* ctx, Arena& ar, const Mat<const S>& a, std::complex<T>* w, std::complex<T>* v) {
  const int n = static_cast<int>(a.rows);
  T* ac = ar.take<T>(static_cast<int64_t>(n) * n);
  gather(a, ac);
  T* work;
  int* iw;
  ar.work<T>(kiln_linalg::eig_work<T>(n), work, iw);
  const Status s = kiln_linalg::eig<T>(n, ac, n > 0 ? n : 1, w, v, work);
  return s == Status::Ok ? KILN_OK : failed(ctx, s);
}

template <typename T>
inline size_t svd_bytes(int64_t m, int64_t n, bool full, bool uv) {
  return bytes_for<T>(m * n) + work_bytes<T>(kiln_linalg::svd_work<T>(static_cast<int>(m), static_cast<int>(n),
                                                                      full, uv));
}

template <typename T, typename S>
inline int32_t svd(Ctx* ctx, Arena& ar, bool full, bool uv, const Mat<const S>& a, T* u, T* s, T* vt) {
  const int m = static_cast<int>(a.rows), n = static_cast<int>(a.cols);
  T* ac = ar.take<T>(static_cast<int64_t>(m) * n);
  gather(a, ac);
  T* w;
  int* iw;
  ar.work<T>(kiln_linalg::svd_work<T>(m, n, full, uv), w, iw);
  const Status st = kiln_linalg::svd<T>(m, n, ac, full, uv, u, s, vt, w, iw);
  return st == Status::Ok ? KILN_OK : failed(ctx, st);
}

// --- structure ----------------------------------------------------------------------------------

/// BlockDiagonal: zeros, then each block copied at its place along the diagonal.
template <typename T>
inline void copy_block(T*, int64_t, int64_t&, int64_t&) {}
template <typename T, typename S, typename... Rest>
inline void copy_block(T* out, int64_t ld, int64_t& r0, int64_t& c0, const Mat<const S>& block, const Rest&... rest) {
  for (int64_t i = 0; i < block.rows; ++i)
    for (int64_t j = 0; j < block.cols; ++j)
      out[(r0 + i) * ld + c0 + j] = kiln_scalar::convert<T>(block.data[i * block.rs + j * block.cs]);
  r0 += block.rows;
  c0 += block.cols;
  copy_block(out, ld, r0, c0, rest...);
}

template <typename T, typename... S>
inline int32_t block_diag(T* out, int64_t rows, int64_t cols, const Mat<const S>&... blocks) {
  if (rows * cols > 0) std::memset(static_cast<void*>(out), 0, sizeof(T) * static_cast<size_t>(rows * cols));
  int64_t r0 = 0, c0 = 0;
  copy_block(out, cols, r0, c0, blocks...);
  return KILN_OK;
}

}  // namespace linalg
}  // namespace kg
