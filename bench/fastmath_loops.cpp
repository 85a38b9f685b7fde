// The hand-written loops of hand_loops.hpp with -ffast-math (set on this file alone in
// bench/CMakeLists.txt): GCC vectorises their exp, sin, log1p and log with glibc's libmvec.
#include "fastmath_loops.hpp"

#include <cmath>

#define KILN_BENCH_HAND_NS fast_impl
#include "hand_loops.hpp"

#ifndef __FAST_MATH__
#error "fastmath_loops.cpp must be compiled with -ffast-math"
#endif

namespace bench::fast {

template <typename T>
void w1(const T* x, T* y, int64_t n, int threads) {
  fast_impl::w1_hand(x, y, n, threads);
}
template <typename T>
void w3(const T* x, T* y, int threads) {
  fast_impl::w3_hand(x, y, threads);
}
template <typename T>
void w4(const T* X, const T* y, const T* w, T b, T* p, T* loss, T* gw, T* gb, int threads) {
  fast_impl::w4_hand(X, y, w, b, p, loss, gw, gb, threads);
}

template void w1<double>(const double*, double*, int64_t, int);
template void w1<float>(const float*, float*, int64_t, int);
template void w3<double>(const double*, double*, int);
template void w3<float>(const float*, float*, int);
template void w4<double>(const double*, const double*, const double*, double, double*, double*, double*, double*, int);
template void w4<float>(const float*, const float*, const float*, float, float*, float*, float*, float*, int);

}  // namespace bench::fast
