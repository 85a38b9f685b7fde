// The -ffast-math hand-written loops (fastmath_loops.cpp) behind a C ABI, in a shared library a
// Python process loads beside kiln's libraries (bench/python/bench_host.py): issue 20's
// "kiln inside a host process" compares the two in the same process and run.
#include <cstdint>

#include "fastmath_loops.hpp"

#define KILN_BENCH_HOST_LOOPS(T, SUFFIX)                                                              \
  extern "C" void kiln_bench_fast_w1_##SUFFIX(const T* x, T* y, int64_t n, int threads) {           \
    bench::fast::w1<T>(x, y, n, threads);                                                           \
  }                                                                                                 \
  extern "C" void kiln_bench_fast_w3_##SUFFIX(const T* x, T* y, int threads) {                      \
    bench::fast::w3<T>(x, y, threads);                                                              \
  }                                                                                                 \
  extern "C" void kiln_bench_fast_w4_##SUFFIX(const T* X, const T* y, const T* w, T b, T* p, T* loss, \
                                              T* gw, T* gb, int threads) {                          \
    bench::fast::w4<T>(X, y, w, b, p, loss, gw, gb, threads);                                       \
  }

KILN_BENCH_HOST_LOOPS(double, float64)
KILN_BENCH_HOST_LOOPS(float, float32)
