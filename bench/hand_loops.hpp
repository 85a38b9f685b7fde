// The hand-written W1, W3 and W4 loops, compiled twice: in the benchmarks' translation units
// after sleef_simd.hpp (namespace bench::hand: SLEEF's 1-ULP vector functions, the same math as
// kiln's --math-1ulp) and in fastmath_loops.cpp with -ffast-math (namespace bench::fast:
// glibc's libmvec, what issue 20 measures kiln's default path against). Include after <cmath>
// with KILN_BENCH_HAND_NS defined to the namespace.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace bench {
namespace w3 {
constexpr int64_t kRows = 10000, kCols = 1000;
}
namespace w4 {
constexpr int64_t kN = 1000000, kD = 20;
constexpr double kL2 = 0.01;     // the regulariser weight in loss.json
constexpr int64_t kBlock = 256;  // rows per block: the block of X stays in L1/L2 for its second use
using Acc = double;
}  // namespace w4

namespace KILN_BENCH_HAND_NS {

// W1: one fused loop.
template <typename T>
void w1_hand(const T* __restrict x, T* __restrict y, int64_t n, int threads) {
#pragma omp parallel for simd schedule(static) num_threads(threads)
  for (int64_t i = 0; i < n; ++i) y[i] = std::exp(std::sin(x[i])) + T(0.5) * std::log1p(x[i] * x[i]);
}

// Hand-written: per row, max, sum of exp(x - max) (vectorised), then x - max - log(sum);
// rows split across threads. The row stays in L1/L2 between its three passes.
template <typename T>
void w3_hand(const T* __restrict x, T* __restrict y, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < w3::kRows; ++i) {
    const T* __restrict r = x + i * w3::kCols;
    T* __restrict o = y + i * w3::kCols;
    T mx = -std::numeric_limits<T>::infinity();
#pragma omp simd reduction(max : mx)
    for (int64_t j = 0; j < w3::kCols; ++j) mx = r[j] > mx ? r[j] : mx;
    T s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t j = 0; j < w3::kCols; ++j) s += std::exp(r[j] - mx);
    const T shift = mx + std::log(s);
#pragma omp simd
    for (int64_t j = 0; j < w3::kCols; ++j) o[j] = r[j] - shift;
  }
}

// Hand-written fused step, one pass over X: per block of rows, z = X_blk w + b; then a
// vectorised loop computes p = sigmoid(z), the cross-entropy softplus(z) - y z and
// r = (p - y); then grad_w += X_blk^T r while the block is still in cache. Per-thread partial
// sums are added at the end.
template <typename T>
void w4_hand(const T* __restrict X, const T* __restrict y, const T* __restrict w, T b, T* __restrict p, T* loss,
             T* __restrict gw, T* gb, int threads) {
  double total_xent = 0, total_r = 0;
  double total_gw[w4::kD] = {};
#pragma omp parallel num_threads(threads)
  {
    double gw_loc[w4::kD] = {};
    double xent_loc = 0, r_loc = 0;
    alignas(64) T z[w4::kBlock], r[w4::kBlock];
#pragma omp for schedule(static)
    for (int64_t i0 = 0; i0 < w4::kN; i0 += w4::kBlock) {
      const int64_t m = std::min(w4::kBlock, w4::kN - i0);
      const T* __restrict Xb = X + i0 * w4::kD;
      for (int64_t i = 0; i < m; ++i) {
        T s = b;
#pragma omp simd reduction(+ : s)
        for (int64_t j = 0; j < w4::kD; ++j) s += Xb[i * w4::kD + j] * w[j];
        z[i] = s;
      }
#pragma omp simd reduction(+ : xent_loc, r_loc)
      for (int64_t i = 0; i < m; ++i) {
        const T zi = z[i], yi = y[i0 + i];
        const T e = std::exp(-std::fabs(zi));       // in (0, 1]: no overflow
        const T pi = zi >= 0 ? T(1) / (T(1) + e) : e / (T(1) + e);
        p[i0 + i] = pi;
        xent_loc += double(std::max(zi, T(0)) + std::log1p(e) - yi * zi);  // softplus(z) - y z
        r[i] = pi - yi;
        r_loc += double(r[i]);
      }
      T gblk[w4::kD] = {};
      for (int64_t i = 0; i < m; ++i)
#pragma omp simd
        for (int64_t j = 0; j < w4::kD; ++j) gblk[j] += r[i] * Xb[i * w4::kD + j];
      for (int64_t j = 0; j < w4::kD; ++j) gw_loc[j] += gblk[j];
    }
#pragma omp critical
    {
      total_xent += xent_loc;
      total_r += r_loc;
      for (int64_t j = 0; j < w4::kD; ++j) total_gw[j] += gw_loc[j];
    }
  }
  double sw = 0;
  for (int64_t j = 0; j < w4::kD; ++j) sw += double(w[j]) * w[j];
  *loss = static_cast<T>(total_xent / w4::kN + w4::kL2 * sw);
  for (int64_t j = 0; j < w4::kD; ++j) gw[j] = static_cast<T>(total_gw[j] / w4::kN + 2 * w4::kL2 * w[j]);
  *gb = static_cast<T>(total_r / w4::kN);
}

}  // namespace KILN_BENCH_HAND_NS
}  // namespace bench
