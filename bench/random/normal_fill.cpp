// The kiln side of bench/random/bench_normal.py: 10^7 standard-normal draws into a caller's
// buffer through kiln's random library, with the state in kiln's six-word rng layout.
#include "kiln/runtime/random/ziggurat.hpp"

extern "C" void kiln_bench_standard_normal(std::uint64_t* state_words, double* out, std::int64_t n) {
  kiln_random::Pcg64 g = kiln_random::Pcg64::from_words(state_words);
  kiln_random::standard_normal_fill(g, out, n);
  g.to_words(state_words);
}
