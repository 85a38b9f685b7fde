// kiln runtime, random numbers: the PCG64 bit generator exactly as NumPy's `PCG64` runs it
// (O'Neill's 128-bit LCG with the XSL-RR output; NumPy steps the state, then outputs), with
// NumPy's buffered 32-bit half-words and its 53-bit doubles and 24-bit floats.
//
// Header-only C++17 for GCC and Clang (unsigned __int128), no dependency beyond the standard
// library. The reference evaluator includes these headers; the code generator embeds the
// pieces a graph needs into generated sources (quoted includes are dropped when embedded, so
// each file lists the kiln headers it needs and the embedding keeps their order:
// pcg64 -> tables -> ziggurat -> continuous -> integers -> discrete -> multivariate).
//
// Bit-exactness with NumPy needs IEEE double arithmetic without contraction into fused
// multiply-adds (GCC's -std=c++17 default; Clang needs -ffp-contract=off) and without
// -ffast-math, and glibc's libm (the one NumPy's wheels call) for exp, log, pow, ...
#pragma once

#include <cstdint>

namespace kiln_random {

/// Number of uint64 words in kiln's flat representation of a PCG64 state (the C ABI's rng
/// tensor): {state_hi, state_lo, inc_hi, inc_lo, has_uint32, uinteger}.
inline constexpr int kStateWords = 6;

/// NumPy's PCG64 bit generator: the 128-bit state and increment of `bit_generator.state`,
/// plus the buffered upper half of the last 64-bit output (`has_uint32`, `uinteger`).
struct Pcg64 {
  unsigned __int128 state = 0;
  unsigned __int128 inc = 1;
  bool has_uint32 = false;
  std::uint32_t uinteger = 0;

  /// The state from kiln's six-word layout (see kStateWords); inc is taken as given (NumPy
  /// keeps it odd).
  static Pcg64 from_words(const std::uint64_t* w) {
    Pcg64 g;
    g.state = (static_cast<unsigned __int128>(w[0]) << 64) | w[1];
    g.inc = (static_cast<unsigned __int128>(w[2]) << 64) | w[3];
    g.has_uint32 = w[4] != 0;
    g.uinteger = static_cast<std::uint32_t>(w[5]);
    return g;
  }

  /// Writes the state in kiln's six-word layout.
  void to_words(std::uint64_t* w) const {
    w[0] = static_cast<std::uint64_t>(state >> 64);
    w[1] = static_cast<std::uint64_t>(state);
    w[2] = static_cast<std::uint64_t>(inc >> 64);
    w[3] = static_cast<std::uint64_t>(inc);
    w[4] = has_uint32 ? 1 : 0;
    w[5] = uinteger;
  }

  /// The next 64-bit output: one LCG step, then XSL-RR of the new state.
  std::uint64_t next_uint64() {
    constexpr unsigned __int128 kMultiplier =
        (static_cast<unsigned __int128>(2549297995355413924ULL) << 64) | 4865540595714422341ULL;
    state = state * kMultiplier + inc;
    const std::uint64_t folded = static_cast<std::uint64_t>(state >> 64) ^ static_cast<std::uint64_t>(state);
    const unsigned rot = static_cast<unsigned>(state >> 122);
    return (folded >> rot) | (folded << ((64 - rot) & 63));
  }

  /// NumPy's 32-bit output: the low half of a fresh 64-bit word, its high half kept for the
  /// next call.
  std::uint32_t next_uint32() {
    if (has_uint32) {
      has_uint32 = false;
      return uinteger;
    }
    const std::uint64_t next = next_uint64();
    has_uint32 = true;
    uinteger = static_cast<std::uint32_t>(next >> 32);
    return static_cast<std::uint32_t>(next);
  }

  /// A double in [0, 1) from the top 53 bits of a 64-bit word.
  double next_double() { return static_cast<double>(next_uint64() >> 11) * (1.0 / 9007199254740992.0); }

  /// A float in [0, 1) from the top 24 bits of a 32-bit output.
  float next_float() { return static_cast<float>(next_uint32() >> 8) * (1.0f / 16777216.0f); }
};

}  // namespace kiln_random
