// W8: a GP log-likelihood core — L = cholesky(K) of a 2000x2000 K, alpha = L^-T L^-1 y, and
// -y.alpha/2 - sum(log diag L) — against direct LAPACKE calls (potrf and two trtrs, the _work
// forms: no NaN scans, no allocation) on a copy of K, as a hand-written GP would do it.
// W9: a batch of 100,000 4x4 Cholesky factorisations (a Blockwise); its target is NumPy's batched
// np.linalg.cholesky, timed by bench/numpy_linalg.py in the same run (report.py joins them); the
// kiln/hand pair here times kiln against LAPACK's potrf per matrix, for scale.
#include <cblas.h>
#include <lapacke.h>

#include <cmath>
#include <cstring>

#include "common.hpp"
#include "kiln/runtime/array.hpp"

namespace bench {
namespace {

constexpr int64_t kN = 2000;
constexpr int64_t kBatch = 100000;

// Symmetric positive definite: a squared-exponential kernel on points in [0, 1] plus noise.
template <typename T>
void fill_kernel(const Buffer<T>& K, int64_t n) {
  Buffer<double> x(static_cast<std::size_t>(n));
  fill_uniform(x, 0.0, 1.0, 21);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const double d = (x[i] - x[j]) / 0.3;
      K[i * n + j] = static_cast<T>(std::exp(-0.5 * d * d) + (i == j ? 0.1 : 0.0));
    }
}

lapack_int potrf(char uplo, lapack_int n, double* a) { return LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, uplo, n, a, n); }
lapack_int potrf(char uplo, lapack_int n, float* a) { return LAPACKE_spotrf_work(LAPACK_COL_MAJOR, uplo, n, a, n); }
lapack_int trtrs(char trans, lapack_int n, const double* a, double* b) {
  return LAPACKE_dtrtrs_work(LAPACK_COL_MAJOR, 'U', trans, 'N', n, 1, a, n, b, n);
}
lapack_int trtrs(char trans, lapack_int n, const float* a, float* b) {
  return LAPACKE_strtrs_work(LAPACK_COL_MAJOR, 'U', trans, 'N', n, 1, a, n, b, n);
}
double dot(int64_t n, const double* x, const double* y) { return cblas_ddot(n, x, 1, y, 1); }
float dot(int64_t n, const float* x, const float* y) { return cblas_sdot(n, x, 1, y, 1); }

// --- W8 -------------------------------------------------------------------------------------------

template <typename T>
struct GpData {
  Buffer<T> K{kN * kN}, y{kN}, L{kN * kN}, alpha_kiln{kN}, alpha_hand{kN}, loglik_kiln{1};
  T loglik_hand = 0;
  Dl K_dl{K.data(), {kN, kN}}, y_dl{y.data(), {kN}}, loglik_dl{loglik_kiln.data(), {}}, alpha_dl{alpha_kiln.data(), {kN}};
  GpData() {
    fill_kernel(K, kN);
    fill_uniform(y, -1.0, 1.0, 22);
  }
  // Row-major K read column-major is K itself (symmetric); LAPACK's upper factor U (U^T U = K)
  // read row-major is the lower L of the kiln graph. L z = y is U^T z = y, L^T alpha = z is U alpha = z.
  void hand(int threads) {
    openblas_set_num_threads(threads);
    std::memcpy(L.data(), K.data(), sizeof(T) * kN * kN);
    if (potrf('U', kN, L.data()) != 0) throw std::runtime_error("W8 hand: potrf failed");
    std::memcpy(alpha_hand.data(), y.data(), sizeof(T) * kN);
    trtrs('T', kN, L.data(), alpha_hand.data());
    trtrs('N', kN, L.data(), alpha_hand.data());
    T logdet_half = 0;
    for (int64_t i = 0; i < kN; ++i) logdet_half += std::log(L[i * kN + i]);
    loglik_hand = T(-0.5) * dot(kN, y.data(), alpha_hand.data()) - logdet_half;
  }
  static GpData& get() {
    static GpData d;
    return d;
  }
};

template <typename T>
std::string gp_name() {
  return std::string("w8_gp_") + dtype_name<T>();
}

template <typename T>
void register_w8(int threads) {
  add(bench_name<T>("W8", "kiln", threads), [threads](benchmark::State& st) {
    auto& d = GpData<T>::get();
    KilnGraph g(gp_name<T>());
    auto in = dl_array({&d.K_dl, &d.y_dl});
    auto out = dl_array({&d.loglik_dl, &d.alpha_dl});
    const std::string& err = checked_once(gp_name<T>() + "/kiln", [&] {
      g.set_num_threads(threads);
      g.call_into(in, out);
      d.hand(threads);
      // alpha = K^-1 y is large and ill-conditioned in float32; compare relative to its size.
      const double tol = sizeof(T) == 8 ? 1e-7 : 2e-2;
      std::string msg = compare("kiln W8 alpha vs LAPACKE", d.alpha_kiln.data(), d.alpha_hand.data(), kN, tol, tol);
      if (msg.empty()) msg = compare("kiln W8 loglik vs LAPACKE", d.loglik_kiln.data(), &d.loglik_hand, 1, tol, tol);
      return msg;
    });
    if (!err.empty()) return st.SkipWithError(err.c_str());
    time_kiln_and_hand(st, g, threads, in, out, [&] { d.hand(threads); });
  });
}

// --- W9 -------------------------------------------------------------------------------------------

template <typename T>
struct BatchData {
  Buffer<T> A{kBatch * 16}, L_kiln{kBatch * 16}, L_hand{kBatch * 16};
  Dl A_dl{A.data(), {kBatch, 4, 4}}, L_dl{L_kiln.data(), {kBatch, 4, 4}};
  BatchData() {
    Buffer<T> B(kBatch * 16);
    fill_uniform(B, -1.0, 1.0, 23);
    for (int64_t k = 0; k < kBatch; ++k)
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
          double s = i == j ? 4.0 : 0.0;
          for (int l = 0; l < 4; ++l) s += double(B[k * 16 + i * 4 + l]) * double(B[k * 16 + j * 4 + l]);
          A[k * 16 + i * 4 + j] = static_cast<T>(s);
        }
  }
  // LAPACK per matrix: copy, potrf (upper read column-major = lower row-major), clear the upper
  // triangle — what NumPy's gufunc loop does, without Python.
  void hand(int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t k = 0; k < kBatch; ++k) {
      T* l = L_hand.data() + k * 16;
      std::memcpy(l, A.data() + k * 16, sizeof(T) * 16);
      if (potrf('U', 4, l) != 0) std::fill(l, l + 16, std::nan(""));
      for (int i = 0; i < 4; ++i)
        for (int j = i + 1; j < 4; ++j) l[i * 4 + j] = 0;
    }
  }
  static BatchData& get() {
    static BatchData d;
    return d;
  }
};

template <typename T>
std::string batch_name() {
  return std::string("w9_chol4_") + dtype_name<T>();
}

template <typename T>
void register_w9(int threads) {
  add(bench_name<T>("W9", "kiln", threads), [threads](benchmark::State& st) {
    auto& d = BatchData<T>::get();
    KilnGraph g(batch_name<T>());
    auto in = dl_array({&d.A_dl});
    auto out = dl_array({&d.L_dl});
    const std::string& err = checked_once(batch_name<T>() + "/kiln", [&] {
      g.set_num_threads(threads);
      g.call_into(in, out);
      d.hand(threads);
      return compare("kiln W9 vs LAPACK per matrix", d.L_kiln.data(), d.L_hand.data(), kBatch * 16, 4 * rtol<T>(),
                     sizeof(T) == 8 ? 1e-12 : 1e-5);
    });
    if (!err.empty()) return st.SkipWithError(err.c_str());
    time_kiln_and_hand(st, g, threads, in, out, [&] { d.hand(threads); });
  });
}

template <typename T>
void register_w9_eval() {
  add(bench_name<T>("W9", "eval", 1), [](benchmark::State& st) {
    auto& d = BatchData<T>::get();
    std::string err;
    for (auto _ : st) {
      auto out = evaluate_graph(batch_name<T>() + ".json", {&d.A_dl});
      st.PauseTiming();
      err = checked_once(batch_name<T>() + "/eval", [&] {
        d.hand(2);
        return compare("evaluator W9 vs LAPACK per matrix", array_values(out[0]).data(), d.L_hand.data(),
                       kBatch * 16, 4 * rtol<T>(), sizeof(T) == 8 ? 1e-12 : 1e-5);
      });
      st.ResumeTiming();
    }
    if (!err.empty()) st.SkipWithError(err.c_str());
  })->Iterations(1)->Repetitions(1);
}

}  // namespace

void register_linalg() {
  for (int t : {1, 2}) {
    register_w8<double>(t);
    register_w8<float>(t);
    register_w9<double>(t);
    register_w9<float>(t);
  }
  register_w9_eval<double>();
  register_w9_eval<float>();
}

}  // namespace bench
