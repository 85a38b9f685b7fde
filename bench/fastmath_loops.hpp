// The hand-written W1, W3 and W4 loops compiled with -ffast-math (fastmath_loops.cpp): glibc's
// libmvec vector functions, the speed issue 20 holds kiln's default vector math to.
#pragma once

#include <cstdint>

namespace bench::fast {

template <typename T>
void w1(const T* x, T* y, int64_t n, int threads);
template <typename T>
void w3(const T* x, T* y, int threads);
template <typename T>
void w4(const T* X, const T* y, const T* w, T b, T* p, T* loss, T* gw, T* gb, int threads);

}  // namespace bench::fast
