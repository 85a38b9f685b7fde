// kiln runtime, random numbers: NumPy Generator's bounded integers — Lemire's multiply-shift
// rejection (the Generator default) and masked rejection, with NumPy's choice of a 32-bit or
// 64-bit draw by the width of the range — and `random_interval`, the masked draw that
// shuffle, permutation and the hypergeometric sampler use.
#pragma once

#include <cstdint>

#include "kiln/runtime/random/pcg64.hpp"

namespace kiln_random {

/// The smallest all-ones mask >= max.
inline std::uint64_t bit_mask(std::uint64_t max) {
  std::uint64_t mask = max;
  mask |= mask >> 1;
  mask |= mask >> 2;
  mask |= mask >> 4;
  mask |= mask >> 8;
  mask |= mask >> 16;
  mask |= mask >> 32;
  return mask;
}

/// Lemire's unbiased draw from [0, range] for range < 2^32 - 1, on 32-bit outputs.
inline std::uint32_t lemire_uint32(Pcg64& g, std::uint32_t range) {
  const std::uint32_t range_excl = range + 1;
  std::uint64_t m = static_cast<std::uint64_t>(g.next_uint32()) * range_excl;
  std::uint32_t leftover = static_cast<std::uint32_t>(m);
  if (leftover < range_excl) {
    const std::uint32_t threshold = (UINT32_MAX - range) % range_excl;
    while (leftover < threshold) {
      m = static_cast<std::uint64_t>(g.next_uint32()) * range_excl;
      leftover = static_cast<std::uint32_t>(m);
    }
  }
  return static_cast<std::uint32_t>(m >> 32);
}

/// Lemire's unbiased draw from [0, range] for range < 2^64 - 1, on 64-bit outputs.
inline std::uint64_t lemire_uint64(Pcg64& g, std::uint64_t range) {
  const std::uint64_t range_excl = range + 1;
  unsigned __int128 m = static_cast<unsigned __int128>(g.next_uint64()) * range_excl;
  std::uint64_t leftover = static_cast<std::uint64_t>(m);
  if (leftover < range_excl) {
    const std::uint64_t threshold = (UINT64_MAX - range) % range_excl;
    while (leftover < threshold) {
      m = static_cast<unsigned __int128>(g.next_uint64()) * range_excl;
      leftover = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

/// NumPy's `random_bounded_uint64`: off + a draw from [0, range] (wrapping), by Lemire's
/// method (masked rejection when `use_masked`), on a 32-bit output when range fits in 32 bits.
inline std::uint64_t bounded_uint64(Pcg64& g, std::uint64_t off, std::uint64_t range, bool use_masked = false) {
  if (range == 0) return off;
  if (range <= 0xFFFFFFFFULL) {
    if (range == 0xFFFFFFFFULL) return off + g.next_uint32();
    if (use_masked) {
      const std::uint32_t mask = static_cast<std::uint32_t>(bit_mask(range));
      std::uint32_t v;
      while ((v = (g.next_uint32() & mask)) > range) {
      }
      return off + v;
    }
    return off + lemire_uint32(g, static_cast<std::uint32_t>(range));
  }
  if (range == 0xFFFFFFFFFFFFFFFFULL) return off + g.next_uint64();
  if (use_masked) {
    const std::uint64_t mask = bit_mask(range);
    std::uint64_t v;
    while ((v = (g.next_uint64() & mask)) > range) {
    }
    return off + v;
  }
  return off + lemire_uint64(g, range);
}

/// `Generator.integers(low, high)` for int64 (NumPy's default dtype, the one PyTensor's
/// IntegersRV gets): a draw from [low, high); the caller has checked low < high.
inline std::int64_t integers_int64(Pcg64& g, std::int64_t low, std::int64_t high) {
  const std::uint64_t range = static_cast<std::uint64_t>(high) - 1 - static_cast<std::uint64_t>(low);
  return static_cast<std::int64_t>(bounded_uint64(g, static_cast<std::uint64_t>(low), range));
}

/// NumPy's `random_interval`: masked rejection on [0, max], 32-bit outputs when max fits.
inline std::uint64_t random_interval(Pcg64& g, std::uint64_t max) {
  if (max == 0) return 0;
  const std::uint64_t mask = bit_mask(max);
  std::uint64_t v;
  if (max <= 0xFFFFFFFFULL) {
    while ((v = (g.next_uint32() & mask)) > max) {
    }
  } else {
    while ((v = (g.next_uint64() & mask)) > max) {
    }
  }
  return v;
}

}  // namespace kiln_random
