// W1 with plain libm calls (no SIMD declarations in this translation unit): the scalar loop
// the issue measured at ~285 ms on 2 threads, reported for scale only.
#include <cmath>
#include <cstdint>

namespace bench {

template <typename T>
void w1_libm(const T* __restrict x, T* __restrict y, int64_t n, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < n; ++i) y[i] = std::exp(std::sin(x[i])) + T(0.5) * std::log1p(x[i] * x[i]);
}

template void w1_libm<double>(const double*, double*, int64_t, int);
template void w1_libm<float>(const float*, float*, int64_t, int);

}  // namespace bench
