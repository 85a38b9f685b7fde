// kiln runtime, random numbers: NumPy Generator's vector-valued samplers — multinomial,
// Dirichlet, shuffles and permutations, choice without replacement — and PyTensor's
// categorical, each producing one core sample per call with NumPy's order of draws.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <unordered_set>
#include <utility>
#include <vector>

#include "kiln/runtime/random/continuous.hpp"
#include "kiln/runtime/random/discrete.hpp"
#include "kiln/runtime/random/integers.hpp"
#include "kiln/runtime/random/pcg64.hpp"

namespace kiln_random {

/// One `multinomial(n, pvals)` sample into out[0..d): sequential conditional binomials; the
/// last category takes the rest; categories after the remainder reaches 0 are 0.
inline void multinomial(Pcg64& g, std::int64_t n, const double* pvals, std::int64_t d, std::int64_t* out) {
  for (std::int64_t j = 0; j < d; ++j) out[j] = 0;
  double remaining_p = 1.0;
  std::int64_t dn = n;
  for (std::int64_t j = 0; j < d - 1; ++j) {
    out[j] = binomial(g, dn, pvals[j] / remaining_p);
    dn -= out[j];
    if (dn <= 0) break;
    remaining_p -= pvals[j];
  }
  if (dn > 0) out[d - 1] = dn;
}

/// One `dirichlet(alpha)` sample into out[0..k): normalised gammas, or NumPy's stick-breaking
/// with betas when every alpha is below 0.1 (which avoids 0/0).
inline void dirichlet(Pcg64& g, const double* alpha, std::int64_t k, double* out) {
  if (k <= 0) return;
  double max_alpha = alpha[0];  // NumPy's alpha.max(): a NaN anywhere makes it NaN
  for (std::int64_t j = 1; j < k; ++j) max_alpha = (alpha[j] > max_alpha || alpha[j] != alpha[j]) ? alpha[j] : max_alpha;
  if (max_alpha < 0.1) {
    std::vector<double> tail_sum(static_cast<std::size_t>(k));
    double csum = 0.0;
    for (std::int64_t j = k - 1; j >= 0; --j) {
      csum += alpha[j];
      tail_sum[j] = csum;
    }
    for (std::int64_t j = 0; j < k; ++j) out[j] = 0.0;
    if (!(csum > 0)) return;
    double acc = 1.;
    for (std::int64_t j = 0; j < k - 1; ++j) {
      const double v = beta(g, alpha[j], tail_sum[j + 1]);
      out[j] = acc * v;
      acc *= (1. - v);
      if (tail_sum[j + 1] == 0) break;
    }
    out[k - 1] = acc;
    return;
  }
  double acc = 0.;
  for (std::int64_t j = 0; j < k; ++j) {
    out[j] = standard_gamma(g, alpha[j]);
    acc = acc + out[j];
  }
  const double inv = 1. / acc;
  for (std::int64_t j = 0; j < k; ++j) out[j] = out[j] * inv;
}

/// The swaps of NumPy's `shuffle` of n items (Fisher–Yates from the end, `random_interval`):
/// calls swap(i, j) for i = n-1 .. 1.
template <typename Swap>
inline void shuffle_swaps(Pcg64& g, std::int64_t n, Swap&& swap) {
  for (std::int64_t i = n - 1; i >= 1; --i) {
    const auto j = static_cast<std::int64_t>(random_interval(g, static_cast<std::uint64_t>(i)));
    if (i != j) swap(i, j);
  }
}

/// The index order of `permutation(x)` along axis 0 for a length-n axis: out[i] is the source
/// row of row i (NumPy shuffles x itself when 1-d, an index array otherwise: the same draws).
inline void permutation_indices(Pcg64& g, std::int64_t n, std::int64_t* out) {
  std::iota(out, out + n, std::int64_t{0});
  shuffle_swaps(g, n, [&](std::int64_t i, std::int64_t j) { std::swap(out[i], out[j]); });
}

/// NumPy's `_shuffle_int`: shuffles positions n-1 .. first of data with Lemire draws.
inline void shuffle_int(Pcg64& g, std::int64_t n, std::int64_t first, std::int64_t* data) {
  for (std::int64_t i = n - 1; i >= first; --i) {
    const auto j = static_cast<std::int64_t>(bounded_uint64(g, 0, static_cast<std::uint64_t>(i)));
    std::swap(data[i], data[j]);
  }
}

/// The indices `choice(pop_size, size, replace=False)` (uniform, shuffle=True) picks, into
/// out[0..size): a partial shuffle when size is a large part of a large population, else
/// Floyd's sampling followed by a shuffle. The caller has checked size <= pop_size.
inline void choice_without_replacement(Pcg64& g, std::int64_t pop_size, std::int64_t size, std::int64_t* out) {
  if (pop_size > 10000 && size > pop_size / 50) {
    std::vector<std::int64_t> idx(static_cast<std::size_t>(pop_size));
    std::iota(idx.begin(), idx.end(), std::int64_t{0});
    shuffle_int(g, pop_size, std::max<std::int64_t>(pop_size - size, 1), idx.data());
    std::copy(idx.end() - size, idx.end(), out);
    return;
  }
  std::unordered_set<std::int64_t> taken;
  for (std::int64_t j = pop_size - size; j < pop_size; ++j) {
    const auto val = static_cast<std::int64_t>(bounded_uint64(g, 0, static_cast<std::uint64_t>(j)));
    const std::int64_t pick = taken.insert(val).second ? val : j;
    if (pick == j) taken.insert(j);
    out[j - pop_size + size] = pick;
  }
  shuffle_int(g, size, 1, out);
}

/// PyTensor's CategoricalRV for one draw: a uniform U, then the first index whose running sum
/// of p reaches U (`searchsorted(cumsum(p), U)`, side "left").
inline std::int64_t categorical(Pcg64& g, const double* p, std::int64_t k) {
  const double u = g.next_double();
  double cdf = 0.0;
  for (std::int64_t j = 0; j < k; ++j) {
    cdf += p[j];
    if (!(cdf < u)) return j;
  }
  return k;
}

}  // namespace kiln_random
