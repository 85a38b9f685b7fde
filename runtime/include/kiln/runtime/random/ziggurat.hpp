// kiln runtime, random numbers: NumPy's 256-layer ziggurat samplers of the standard normal and
// the standard exponential (Marsaglia & Tsang, 2000), drawing the same words in the same order
// as NumPy's Generator so the streams agree bit for bit.
#pragma once

#include <cmath>
#include <cstdint>

#include "kiln/runtime/random/pcg64.hpp"
#include "kiln/runtime/random/tables.hpp"

namespace kiln_random {

/// A standard normal draw (NumPy's `standard_normal`): one 64-bit word gives the layer (8
/// bits), the sign (1 bit) and a 52-bit abscissa; rare rejections fall back to the wedge test
/// or, in the base layer, to Marsaglia's exponential tail method.
inline double standard_normal(Pcg64& g) {
  using namespace tables;
  for (;;) {
    std::uint64_t r = g.next_uint64();
    const int idx = static_cast<int>(r & 0xff);
    r >>= 8;
    const bool negative = (r & 1) != 0;
    const std::uint64_t rabs = (r >> 1) & 0x000fffffffffffffULL;
    double x = static_cast<double>(rabs) * normal_w[idx];
    if (negative) x = -x;
    if (rabs < normal_k[idx]) return x;
    if (idx == 0) {
      for (;;) {
        // 1 - U keeps log away from 0 (NumPy does the same).
        const double xx = -normal_inv_r * std::log1p(-g.next_double());
        const double yy = -std::log1p(-g.next_double());
        if (yy + yy > xx * xx) return ((rabs >> 8) & 1) ? -(normal_r + xx) : normal_r + xx;
      }
    }
    if ((normal_f[idx - 1] - normal_f[idx]) * g.next_double() + normal_f[idx] < std::exp(-0.5 * x * x)) return x;
  }
}

/// Fills out[0..n) with standard normal draws, in order.
inline void standard_normal_fill(Pcg64& g, double* out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = standard_normal(g);
}

/// A standard exponential draw (NumPy's `standard_exponential`, method "zig").
inline double standard_exponential(Pcg64& g) {
  using namespace tables;
  for (;;) {
    std::uint64_t ri = g.next_uint64() >> 3;
    const int idx = static_cast<int>(ri & 0xff);
    ri >>= 8;
    const double x = static_cast<double>(ri) * exponential_w[idx];
    if (ri < exponential_k[idx]) return x;
    if (idx == 0) return exponential_r - std::log1p(-g.next_double());
    if ((exponential_f[idx - 1] - exponential_f[idx]) * g.next_double() + exponential_f[idx] < std::exp(-x)) return x;
    // Rejected in the wedge: NumPy draws afresh (a loop here, a recursion there).
  }
}

}  // namespace kiln_random
