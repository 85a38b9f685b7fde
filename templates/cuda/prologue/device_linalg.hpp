// The cuda backend's linear algebra on the device, on the context's stream: Cholesky (potrf),
// Solve with assume_a='gen', MatrixInverse, Det and SLogDet (getrf, getrs) and CholeskySolve
// (potrs) through cuSOLVER's 64-bit API, SolveTriangular through cuBLAS's trsm. The host code is
// the C++ backend's (templates/cpp/ops/linalg_call.mustache: checks, output shapes, the batch
// loop of kg::linalg::for_each_item: one call per matrix of a Blockwise, queued on the stream)
// calling the kernels below; nothing waits for the device. What LAPACK reports through its info
// (not positive definite, singular) stays on the device: kernels NaN-fill the result as the cpp
// backend does (kiln_linalg::fill_nan) or fail through the device status word with the cpp
// backend's message (Cholesky with on_error='raise', MatrixInverse), read at the end of the call.
// Embedded after linalg.hpp, only in sources with such a node (the library links -lcusolver, and
// -lcublas, whose handle trsm uses: templates/cuda/prologue/device_blas.hpp comes first).
#include <cmath>
#include <cusolverDn.h>
#include <vector>

namespace kg {
namespace cusolver {

using linalg::Structure;
using kiln_linalg::Status;

/// A strided matrix view of device memory: element (i, j) at data[i * rs + j * cs].
template <typename T>
struct DMat {
  T* data;
  int64_t rows, cols, rs, cs;
};

/// A workspace size cuSOLVER reported for one function, dtype and order.
struct Query {
  int fn;
  cudaDataType type;
  int64_t n;
  size_t device, host;
};

/// The context's cuSOLVER dense handle (created on first use, released with the context) and
/// the workspace sizes it reported: a query runs once per function, dtype and order, not once
/// per matrix of a batch (the sizes depend on nothing else).
struct Solver {
  cusolverDnHandle_t handle = nullptr;
  cusolverDnParams_t params = nullptr;
  std::vector<Query> queries;
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

/// The functions whose workspace is queried.
enum Fn : int { kPotrfLower, kPotrfUpper, kGetrf };

/// Device and host workspace bytes of `fn` on an n x n matrix of T (column-major, leading
/// dimension n), from the solver's cache or queried once.
template <typename T>
inline int32_t workspace(Ctx* ctx, Solver* s, Fn fn, int64_t n, const void* a, size_t& device, size_t& host) {
  for (const Query& q : s->queries)
    if (q.fn == fn && q.type == data_type<T>() && q.n == n) {
      device = q.device;
      host = q.host;
      return KILN_OK;
    }
  cusolverStatus_t e;
  if (fn == kGetrf)
    e = cusolverDnXgetrf_bufferSize(s->handle, s->params, n, n, data_type<T>(), a, n, data_type<T>(), &device, &host);
  else
    e = cusolverDnXpotrf_bufferSize(s->handle, s->params, fn == kPotrfLower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER,
                                    n, data_type<T>(), a, n, data_type<T>(), &device, &host);
  if (e != CUSOLVER_STATUS_SUCCESS)
    return fail(ctx, KILN_ERR_DEVICE, "cusolverDnX%s_bufferSize failed (status %d)", fn == kGetrf ? "getrf" : "potrf",
                static_cast<int>(e));
  constexpr size_t kKept = 16;  // shapes that change from call to call do not grow the list
  if (s->queries.size() == kKept) s->queries.erase(s->queries.begin());
  s->queries.push_back(Query{fn, data_type<T>(), n, device, host});
  return KILN_OK;
}

/// The node's device slot carved front to back into 256-byte aligned pieces (cuSOLVER's
/// workspace among them): `add` the pieces' sizes, `alloc` once, then `at` each offset.
struct Pieces {
  size_t total = 0;
  size_t add(size_t bytes) {
    const size_t at = total;
    total += (bytes + 255) / 256 * 256;
    return at;
  }
  char* base = nullptr;
  int32_t alloc(Ctx* ctx, int slot) {
    DTensor<char, 1> w;
    w.shape[0] = static_cast<int64_t>(total);
    KILN_TRY(alloc_workspace(ctx, slot, w));
    base = w.data;
    return KILN_OK;
  }
  template <typename U>
  U* at(size_t offset) const {
    return reinterpret_cast<U*>(base + offset);
  }
};

/// cuSOLVER's host workspace (most functions need none) in the node's host slot.
inline int32_t host_workspace(Ctx* ctx, int slot, size_t bytes, void*& out) {
  out = nullptr;
  if (bytes == 0) return KILN_OK;
  Tensor<char, 1> w;
  w.shape[0] = static_cast<int64_t>(bytes);
  KILN_TRY(alloc_workspace(ctx, slot, w));
  out = w.data;
  return KILN_OK;
}

/// out (rows x cols, strides ors, ocs, element type T) = a (strides rs, cs, element type S),
/// converted: the row-major copies factorizations work on, and the transposes between row-major
/// results and the column-major right-hand sides cuSOLVER solves for.
template <typename S, typename T>
__global__ void kiln_linalg_gather(const S* a, const int64_t rows, const int64_t cols, const int64_t rs,
                                   const int64_t cs, T* out, const int64_t ors, const int64_t ocs) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < rows * cols;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = e / cols, j = e % cols;
    out[i * ors + j * ocs] = static_cast<T>(a[i * rs + j * cs]);
  }
}

template <typename S, typename T>
inline int32_t gather(Ctx* ctx, const S* a, int64_t rows, int64_t cols, int64_t rs, int64_t cs, T* out, int64_t ors,
                      int64_t ocs) {
  return launch(ctx, kiln_linalg_gather<S, T>, groups_for(rows * cols), kGroup, a, rows, cols, rs, cs, out, ors, ocs);
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

/// LAPACK's trtrs check (the cpp backend's solve_triangular): *info is the first zero on the
/// diagonal of `a` (elements `step` apart), 1-based, or 0. One thread walks the diagonal.
template <typename S>
__global__ void kiln_linalg_zero_diagonal(const S* a, const int64_t n, const int64_t step, int* info) {
  int found = 0;
  for (int64_t i = 0; i < n && found == 0; ++i)
    if (a[i * step] == S(0)) found = static_cast<int>(i + 1);
  *info = found;
}

/// After a factorization or solve (`count` elements in rows of `cols`): with *info nonzero the
/// whole result is NaN and, with a check number, the status word is claimed (an error with the
/// cpp backend's message); else `triangle` is zeroed (1: above the diagonal, 2: below; potrf
/// leaves its input there), or nothing (0).
template <typename T>
__global__ void kiln_linalg_finish(T* out, const int64_t count, const int64_t cols, const int32_t triangle,
                                   const int* info, int32_t* st, const int64_t check) {
  const bool failed = *info != 0;
  const int64_t first = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (failed && check > 0 && first == 0) atomicCAS(reinterpret_cast<int*>(st), 0, static_cast<int>(check));
  if (!failed && triangle == 0) return;
  for (int64_t e = first; e < count; e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = e / cols, j = e % cols;
    if (failed)
      out[e] = static_cast<T>(NAN);
    else if (triangle == 1 ? j > i : j < i)
      out[e] = T(0);
  }
}

/// Launches kiln_linalg_finish; `raise` arms a status check failing with status `s`'s message.
template <typename T>
inline int32_t finish(Ctx* ctx, const char* where, T* out, int64_t count, int64_t cols, int32_t triangle,
                      const int* info, bool raise, Status s) {
  int32_t* word = nullptr;
  int64_t number = 0;
  if (raise) {
    StatusCheck check;
    check.where = where;
    check.kind = CheckKind::kLinalg;
    check.text = kiln_linalg::status_message(s);
    KILN_TRY(arm_status(ctx, check, word, number));
  }
  return launch(ctx, kiln_linalg_finish<T>, groups_for(count), kGroup, out, count, cols, triangle, info, word, number);
}

inline int32_t solver_failed(Ctx* ctx, const char* what, cusolverStatus_t e) {
  return fail(ctx, KILN_ERR_DEVICE, "%s failed (status %d)", what, static_cast<int>(e));
}

/// Cholesky of one matrix into `out` (n x n, row-major, on the device), queued on the stream.
/// Row-major storage is the column-major transpose, and the transpose of a symmetric matrix is
/// itself: the row-major lower factor L is cuSOLVER's column-major upper U = L^T (uplo flipped).
/// The device workspace (info, then potrf's) is the node's device slot `slot`.
template <typename T, typename S>
inline int32_t cholesky(Ctx* ctx, linalg::Arena&, int slot, const char* where, const DMat<const S>& a, T* out,
                        bool lower, bool raise) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "potrf in float32 or float64");
  const int64_t n = a.rows;
  if (n == 0) return KILN_OK;
  Solver* s = nullptr;
  KILN_TRY(solver(ctx, s));
  KILN_TRY(gather(ctx, a.data, n, n, a.rs, a.cs, out, n, int64_t(1)));
  const cublasFillMode_t uplo = lower ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
  size_t device_bytes = 0, host_bytes = 0;
  KILN_TRY(workspace<T>(ctx, s, lower ? kPotrfUpper : kPotrfLower, n, out, device_bytes, host_bytes));
  Pieces p;
  const size_t info_at = p.add(sizeof(int)), work_at = p.add(device_bytes);
  KILN_TRY(p.alloc(ctx, slot));
  void* host_work = nullptr;
  KILN_TRY(host_workspace(ctx, slot, host_bytes, host_work));
  int* info = p.at<int>(info_at);
  const cusolverStatus_t e = cusolverDnXpotrf(s->handle, s->params, uplo, n, data_type<T>(), out, n, data_type<T>(),
                                              p.at<char>(work_at), device_bytes, host_work, host_bytes, info);
  if (e != CUSOLVER_STATUS_SUCCESS) return solver_failed(ctx, "cusolverDnXpotrf", e);
  KILN_TRY(launch(ctx, kiln_cholesky_nan_pivot<T>, 1, 1, static_cast<const T*>(out), n, info));
  return finish(ctx, where, out, n * n, n, lower ? 1 : 2, info, raise, Status::NotPositiveDefinite);
}

// --- LU: Solve, MatrixInverse, Det and SLogDet ---------------------------------------------------

/// An LU factorization's device memory in the node's slot: info words (getrf's, then getrs's
/// own: it writes 0 there), pivots, the factored row-major copy of A, which cuSOLVER reads as
/// A^T column-major (so the pivots and factors are A^T's, as the cpp backend's getrf call),
/// and `extra` for the caller.
template <typename T>
struct Lu {
  int* info;
  int64_t* ipiv;
  T* lu;
  char* extra;
};

/// getrf of a converted copy of `a` (n x n, n > 0), queued on the stream.
template <typename T, typename S>
inline int32_t lu(Ctx* ctx, Solver* s, int slot, const DMat<const S>& a, size_t extra_bytes, Lu<T>& w) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "getrf in float32 or float64");
  const int64_t n = a.rows;
  size_t device_bytes = 0, host_bytes = 0;
  KILN_TRY(workspace<T>(ctx, s, kGetrf, n, a.data, device_bytes, host_bytes));  // (sizes only: a is not read)
  Pieces p;
  const size_t info_at = p.add(2 * sizeof(int)), ipiv_at = p.add(sizeof(int64_t) * static_cast<size_t>(n)),
               lu_at = p.add(sizeof(T) * static_cast<size_t>(n * n)), extra_at = p.add(extra_bytes),
               work_at = p.add(device_bytes);
  KILN_TRY(p.alloc(ctx, slot));
  void* host_work = nullptr;
  KILN_TRY(host_workspace(ctx, slot, host_bytes, host_work));
  w = Lu<T>{p.at<int>(info_at), p.at<int64_t>(ipiv_at), p.at<T>(lu_at), p.at<char>(extra_at)};
  KILN_TRY(gather(ctx, a.data, n, n, a.rs, a.cs, w.lu, n, int64_t(1)));
  const cusolverStatus_t e = cusolverDnXgetrf(s->handle, s->params, n, n, data_type<T>(), w.lu, n, w.ipiv, data_type<T>(),
                                              p.at<char>(work_at), device_bytes, host_work, host_bytes, w.info);
  return e == CUSOLVER_STATUS_SUCCESS ? KILN_OK : solver_failed(ctx, "cusolverDnXgetrf", e);
}

/// getrs with the factors of `w` on `b` (n x k, column-major, leading dimension n).
template <typename T>
inline int32_t lu_solve(Ctx* ctx, Solver* s, cublasOperation_t trans, int64_t n, int64_t k, const Lu<T>& w, T* b) {
  const cusolverStatus_t e = cusolverDnXgetrs(s->handle, s->params, trans, n, k, data_type<T>(), w.lu, n, w.ipiv,
                                              data_type<T>(), b, n, w.info + 1);
  return e == CUSOLVER_STATUS_SUCCESS ? KILN_OK : solver_failed(ctx, "cusolverDnXgetrs", e);
}

/// Solve with assume_a='gen' (the emitter keeps the other structures on the host path): A x = b
/// into `out` (n x k row-major; k = 1 for a vector b); NaN when A is singular, as the cpp backend.
/// getrs takes b column-major: a transposed copy, and back (a single column needs neither).
template <typename T, typename SA, typename SB>
inline int32_t solve(Ctx* ctx, linalg::Arena&, int slot, const char*, Structure st, bool, const DMat<const SA>& a,
                     const DMat<const SB>& b, T* out) {
  if (st != Structure::General) return fail(ctx, KILN_ERR_INTERNAL, "cuSOLVER solve of a structured matrix");
  const int64_t n = a.rows, k = b.cols;
  if (n == 0 || k == 0) return KILN_OK;
  Solver* s = nullptr;
  KILN_TRY(solver(ctx, s));
  Lu<T> w;
  KILN_TRY(lu(ctx, s, slot, a, k == 1 ? 0 : sizeof(T) * static_cast<size_t>(n * k), w));
  T* bc = k == 1 ? out : reinterpret_cast<T*>(w.extra);
  KILN_TRY(gather(ctx, b.data, n, k, b.rs, b.cs, bc, int64_t(1), n));
  // The factors are A^T's: op = T solves A x = b.
  KILN_TRY(lu_solve(ctx, s, CUBLAS_OP_T, n, k, w, bc));
  if (k != 1) KILN_TRY(gather(ctx, static_cast<const T*>(bc), n, k, int64_t(1), n, out, k, int64_t(1)));
  return finish(ctx, nullptr, out, n * k, k, 0, w.info, false, Status::Singular);
}

/// Writes the n x n identity to `out`.
template <typename T>
__global__ void kiln_linalg_eye(T* out, const int64_t n) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < n * n;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[e] = e / n == e % n ? T(1) : T(0);
}

/// MatrixInverse into `out`: getrs on the identity. The factors are A^T's, so the column-major
/// result is inv(A^T), which read row-major is inv(A). A singular matrix is a failure (the cpp
/// backend's status and message), through the status word.
template <typename T, typename S>
inline int32_t inverse(Ctx* ctx, linalg::Arena&, int slot, const char* where, const DMat<const S>& a, T* out) {
  const int64_t n = a.rows;
  if (n == 0) return KILN_OK;
  Solver* s = nullptr;
  KILN_TRY(solver(ctx, s));
  Lu<T> w;
  KILN_TRY(lu(ctx, s, slot, a, 0, w));
  KILN_TRY(launch(ctx, kiln_linalg_eye<T>, groups_for(n * n), kGroup, out, n));
  KILN_TRY(lu_solve(ctx, s, CUBLAS_OP_N, n, n, w, out));
  return finish(ctx, where, out, n * n, n, 0, w.info, true, Status::Singular);
}

/// NumPy's slogdet from the LU factors (kiln_linalg::slogdet's arithmetic): a singular matrix
/// (info nonzero; info null for n = 0) has sign 0 and log|det| -inf, so det 0. One thread: the
/// O(n) walk of the diagonal after an O(n^3) factorization.
template <typename T>
__global__ void kiln_linalg_slogdet(const T* lu, const int64_t n, const int64_t* ipiv, const int* info, T* sign,
                                    T* logdet, T* det) {
  T sg = T(1), ld = T(0);
  if (info && *info != 0) {
    sg = T(0);
    ld = -static_cast<T>(INFINITY);
  } else {
    bool negative = false;
    for (int64_t i = 0; i < n; ++i) {
      const T d = lu[i * n + i];
      negative = negative != (ipiv[i] != i + 1);
      negative = negative != (d < T(0));
      ld += log(fabs(d));
    }
    sg = negative ? T(-1) : T(1);
  }
  if (sign) *sign = sg;
  if (logdet) *logdet = ld;
  if (det) *det = sg * exp(ld);
}

/// SLogDet into sign and log|det| (either may be null); Det is sign * exp(log|det|), as NumPy's.
template <typename T, typename S>
inline int32_t slogdet(Ctx* ctx, linalg::Arena&, int slot, const char*, const DMat<const S>& a, T* sign, T* logdet,
                       T* det) {
  const int64_t n = a.rows;
  if (n == 0)
    return launch(ctx, kiln_linalg_slogdet<T>, 1, 1, static_cast<const T*>(nullptr), n,
                  static_cast<const int64_t*>(nullptr), static_cast<const int*>(nullptr), sign, logdet, det);
  Solver* s = nullptr;
  KILN_TRY(solver(ctx, s));
  Lu<T> w;
  KILN_TRY(lu(ctx, s, slot, a, 0, w));
  return launch(ctx, kiln_linalg_slogdet<T>, 1, 1, static_cast<const T*>(w.lu), n,
                static_cast<const int64_t*>(w.ipiv), static_cast<const int*>(w.info), sign, logdet, det);
}

// --- triangular operands: SolveTriangular and CholeskySolve -------------------------------------

/// A triangular operand as cuBLAS and cuSOLVER read it: column-major with leading dimension
/// `ld`, which is A^T for a row-major A (`transposed` false) or A itself (`transposed` true).
/// Read in place where the cpp backend's rule (kiln_linalg::blas_layout) allows, else a
/// row-major copy converted to T in `copy_at` of the pieces.
template <typename T>
struct Triangular {
  const T* data;
  int64_t ld;
  bool transposed;
};

template <typename T, typename S>
inline bool in_place(const DMat<const S>& a, int& ld, bool& transposed) {
  if constexpr (std::is_same_v<S, T>)
    return kiln_linalg::blas_layout(static_cast<int>(a.rows), a.rs, a.cs, ld, transposed);
  else
    return false;
}

template <typename T, typename S>
inline int32_t triangular(Ctx* ctx, const DMat<const S>& a, T* copy, Triangular<T>& out) {
  int ld = 1;
  bool transposed = false;
  if (in_place<T>(a, ld, transposed)) {
    out = Triangular<T>{reinterpret_cast<const T*>(a.data), ld, transposed};
    return KILN_OK;
  }
  out = Triangular<T>{copy, a.rows, false};
  return gather(ctx, a.data, a.rows, a.rows, a.rs, a.cs, copy, a.rows, int64_t(1));
}

inline cublasStatus_t cublas_trsm(cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t trans, cublasDiagType_t diag,
                                  int m, int n, const float* alpha, const float* a, int lda, float* b, int ldb) {
  return cublasStrsm(h, CUBLAS_SIDE_RIGHT, uplo, trans, diag, m, n, alpha, a, lda, b, ldb);
}
inline cublasStatus_t cublas_trsm(cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t trans, cublasDiagType_t diag,
                                  int m, int n, const double* alpha, const double* a, int lda, double* b, int ldb) {
  return cublasDtrsm(h, CUBLAS_SIDE_RIGHT, uplo, trans, diag, m, n, alpha, a, lda, b, ldb);
}

/// SolveTriangular: op(A) x = b into `out` (n x k row-major), NaN when a diagonal element is
/// zero (unless unit_diagonal), as the cpp backend. The row-major x is x^T column-major, so
/// cuBLAS solves x^T op(A)^T = b^T from the right (side right, as device_gemm swaps operands).
template <typename T, typename SA, typename SB>
inline int32_t solve_triangular(Ctx* ctx, linalg::Arena&, int slot, const char*, bool lower, bool trans, bool unit,
                                const DMat<const SA>& a, const DMat<const SB>& b, T* out) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "trsm in float32 or float64");
  const int64_t n = a.rows, k = b.cols;
  if (n == 0 || k == 0) return KILN_OK;
  int ld = 1;
  bool transposed = false;
  Pieces p;
  const size_t info_at = p.add(sizeof(int)),
               copy_at = p.add(in_place<T>(a, ld, transposed) ? 0 : sizeof(T) * static_cast<size_t>(n * n));
  KILN_TRY(p.alloc(ctx, slot));
  int* info = p.at<int>(info_at);
  KILN_TRY(gather(ctx, b.data, n, k, b.rs, b.cs, out, k, int64_t(1)));
  Triangular<T> m;
  KILN_TRY(triangular(ctx, a, p.at<T>(copy_at), m));
  if (!unit) KILN_TRY(launch(ctx, kiln_linalg_zero_diagonal<T>, 1, 1, m.data, n, m.ld + 1, info));
  cublasHandle_t h = nullptr;
  KILN_TRY(cublas_handle(ctx, h));
  // Stored column-major, A^T is triangular the other way; op(A)^T is that matrix or its transpose.
  const bool stored_lower = lower == m.transposed, stored_trans = trans != m.transposed;
  const T one = T(1);
  const cublasStatus_t e = cublas_trsm(h, stored_lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER,
                                       stored_trans ? CUBLAS_OP_T : CUBLAS_OP_N,
                                       unit ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT, static_cast<int>(k),
                                       static_cast<int>(n), &one, m.data, static_cast<int>(m.ld), out, static_cast<int>(k));
  if (e != CUBLAS_STATUS_SUCCESS) return fail(ctx, KILN_ERR_DEVICE, "cublas trsm failed (%s)", cublasGetStatusString(e));
  if (unit) return KILN_OK;
  return finish(ctx, nullptr, out, n * k, k, 0, static_cast<const int*>(info), false, Status::Singular);
}

/// CholeskySolve: A x = b with A = c c^T (lower) or c^T c, into `out`, through potrs (as the cpp
/// backend: two triangular solves, no singularity check). b column-major as in solve.
template <typename T, typename SA, typename SB>
inline int32_t cholesky_solve(Ctx* ctx, linalg::Arena&, int slot, const char*, bool lower, const DMat<const SA>& c,
                              const DMat<const SB>& b, T* out) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "potrs in float32 or float64");
  const int64_t n = c.rows, k = b.cols;
  if (n == 0 || k == 0) return KILN_OK;
  Solver* s = nullptr;
  KILN_TRY(solver(ctx, s));
  int ld = 1;
  bool transposed = false;
  Pieces p;
  const size_t info_at = p.add(sizeof(int)),
               copy_at = p.add(in_place<T>(c, ld, transposed) ? 0 : sizeof(T) * static_cast<size_t>(n * n)),
               b_at = p.add(k == 1 ? 0 : sizeof(T) * static_cast<size_t>(n * k));
  KILN_TRY(p.alloc(ctx, slot));
  Triangular<T> m;
  KILN_TRY(triangular(ctx, c, p.at<T>(copy_at), m));
  T* bc = k == 1 ? out : p.at<T>(b_at);
  KILN_TRY(gather(ctx, b.data, n, k, b.rs, b.cs, bc, int64_t(1), n));
  // The stored matrix is c^T (or c): potrs's upper U with A = U^T U is c^T when A = c c^T.
  const cublasFillMode_t uplo = lower == m.transposed ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
  const cusolverStatus_t e = cusolverDnXpotrs(s->handle, s->params, uplo, n, k, data_type<T>(), m.data, m.ld,
                                              data_type<T>(), bc, n, p.at<int>(info_at));
  if (e != CUSOLVER_STATUS_SUCCESS) return solver_failed(ctx, "cusolverDnXpotrs", e);
  if (k == 1) return KILN_OK;
  return gather(ctx, static_cast<const T*>(bc), n, k, int64_t(1), n, out, k, int64_t(1));
}

}  // namespace cusolver
}  // namespace kg
