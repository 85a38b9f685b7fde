// kiln runtime, random numbers: PyTensor's RandomVariables with core dimensions
// (pytensor.tensor.random.basic: DirichletRV "(a)->(a)", MultinomialRV "(),(p)->(p)",
// CategoricalRV "(p)->()", MvNormalRV "(n),(n,n)->(n)"). PyTensor's `rng_fn` loops over the
// batch dimensions in C order and calls NumPy once per batch element (or once with `size`,
// which draws the same stream); the functions here do the same, one core sample at a time, for
// the reference evaluator and generated code alike. A parameter comes as a typed strided
// view (`Param`); draws come out C-contiguous as double or int64, for the caller to cast.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kiln/runtime/random/continuous.hpp"
#include "kiln/runtime/random/multivariate.hpp"
#include "kiln/runtime/random/pcg64.hpp"
#include "kiln/runtime/random/ziggurat.hpp"

namespace kiln_random {
namespace core {

/// The element type of a parameter's buffer.
enum ElemType : int { kF64, kF32, kI64, kI32, kI16, kI8, kU64, kU32, kU16, kU8, kBool };
inline constexpr int elem_type_of(const double*) { return kF64; }
inline constexpr int elem_type_of(const float*) { return kF32; }
inline constexpr int elem_type_of(const std::int64_t*) { return kI64; }
inline constexpr int elem_type_of(const std::int32_t*) { return kI32; }
inline constexpr int elem_type_of(const std::int16_t*) { return kI16; }
inline constexpr int elem_type_of(const std::int8_t*) { return kI8; }
inline constexpr int elem_type_of(const std::uint64_t*) { return kU64; }
inline constexpr int elem_type_of(const std::uint32_t*) { return kU32; }
inline constexpr int elem_type_of(const std::uint16_t*) { return kU16; }
inline constexpr int elem_type_of(const std::uint8_t*) { return kU8; }
inline constexpr int elem_type_of(const bool*) { return kBool; }

/// One parameter: its buffer, element type, shape and strides (in elements).
struct Param {
  const void* data;
  int type;
  int ndim;
  const std::int64_t* shape;
  const std::int64_t* strides;
};

/// Element `off` of a parameter as NumPy reads it into a double array.
inline double read_real(const Param& p, std::int64_t off) {
  switch (p.type) {
    case kF64: return static_cast<const double*>(p.data)[off];
    case kF32: return static_cast<const float*>(p.data)[off];
    case kI64: return static_cast<double>(static_cast<const std::int64_t*>(p.data)[off]);
    case kI32: return static_cast<const std::int32_t*>(p.data)[off];
    case kI16: return static_cast<const std::int16_t*>(p.data)[off];
    case kI8: return static_cast<const std::int8_t*>(p.data)[off];
    case kU64: return static_cast<double>(static_cast<const std::uint64_t*>(p.data)[off]);
    case kU32: return static_cast<const std::uint32_t*>(p.data)[off];
    case kU16: return static_cast<const std::uint16_t*>(p.data)[off];
    case kU8: return static_cast<const std::uint8_t*>(p.data)[off];
    default: return static_cast<const bool*>(p.data)[off] ? 1.0 : 0.0;
  }
}

/// Element `off` as NumPy's forced cast to int64 reads it (floats truncate toward zero).
inline std::int64_t read_int(const Param& p, std::int64_t off) {
  switch (p.type) {
    case kF64:
    case kF32: {
      const double v = read_real(p, off);
      // Out of range (and NaN): NumPy's cast gives INT64_MIN on x86.
      return v >= -9.2233720368547758e18 && v < 9.2233720368547758e18 ? static_cast<std::int64_t>(v)
                                                                       : std::numeric_limits<std::int64_t>::min();
    }
    case kI64: return static_cast<const std::int64_t*>(p.data)[off];
    case kU64: return static_cast<std::int64_t>(static_cast<const std::uint64_t*>(p.data)[off]);
    default: return static_cast<std::int64_t>(read_real(p, off));
  }
}

/// The distributions (the order of generator/ops/random_core.cpp's table).
enum class Kind : int { Dirichlet, Multinomial, Categorical, MvNormal };

/// A distribution's shape rules: how many parameters, each one's core rank, which parameter's
/// last length is the draws' core length (-1: the draws are scalars), integer draws.
struct Spec {
  Kind kind;
  int nparams;
  int core_ndim[2];
  int out_core_from;
  bool integer;
};

inline Spec spec_of(Kind kind) {
  switch (kind) {
    case Kind::Dirichlet: return {kind, 1, {1, 0}, 0, false};
    case Kind::Multinomial: return {kind, 2, {0, 1}, 1, true};
    case Kind::Categorical: return {kind, 1, {1, 0}, -1, true};
    default: return {kind, 2, {1, 2}, 0, false};
  }
}

/// The batch shape (the parameters' batch dimensions broadcast, or `size`, which they must
/// broadcast to) and the draws' shape (batch + core). `size` null means None. Returns an
/// error message, or null.
inline const char* draws_shape(const Spec& s, const Param* params, const std::int64_t* size, int size_len,
                               std::vector<std::int64_t>& batch, std::vector<std::int64_t>& shape) {
  int nb = 0;
  for (int i = 0; i < s.nparams; ++i) {
    if (params[i].ndim < s.core_ndim[i]) return "a parameter has fewer dimensions than its core dimensions";
    nb = std::max(nb, params[i].ndim - s.core_ndim[i]);
  }
  if (size) {
    if (size_len < nb) return "size is incompatible with the batched dimensions of the parameters";
    batch.assign(size, size + size_len);
    for (std::int64_t n : batch)
      if (n < 0) return "negative dimensions are not allowed";
  } else {
    batch.assign(static_cast<std::size_t>(nb), 1);
  }
  const int bn = static_cast<int>(batch.size());
  for (int i = 0; i < s.nparams; ++i) {
    const Param& p = params[i];
    const int pb = p.ndim - s.core_ndim[i];
    for (int d = 0; d < pb; ++d) {
      std::int64_t& b = batch[static_cast<std::size_t>(bn - pb + d)];
      const std::int64_t n = p.shape[d];
      if (n == 1 || n == b) continue;
      if (size || b != 1) return "shape mismatch: the parameters' batch shapes do not broadcast to the draws' batch shape";
      b = n;
    }
  }
  shape = batch;
  if (s.out_core_from >= 0) {
    const Param& p = params[s.out_core_from];
    shape.push_back(p.shape[p.ndim - 1]);
  }
  if (s.kind == Kind::MvNormal) {
    const std::int64_t n = params[0].shape[params[0].ndim - 1];
    if (params[1].shape[params[1].ndim - 1] != n || params[1].shape[params[1].ndim - 2] != n)
      return "shape mismatch: cov must be a square matrix of mean's length";
  }
  return nullptr;
}

/// Factors one covariance (n x n, row-major, in place) into A with cov = A A^T, in the precision
/// NumPy's linalg would use (`single`: float32): the lower Cholesky factor (method 0), U sqrt(s)
/// of the SVD (1) or V sqrt(w) of eigh (2). False when LAPACK fails.
using CholeskyFn = bool (*)(int n, double* a, bool single);

namespace detail {

// NumPy's kahan_sum over d[0..n) (d[0] when n is 0, as NumPy's loop leaves it).
inline double kahan_sum(const double* d, std::int64_t n) {
  double sum = d[0], c = 0.0;
  for (std::int64_t i = 1; i < n; ++i) {
    const double y = d[i] - c;
    const double t = sum + y;
    c = (t - sum) - y;
    sum = t;
  }
  return sum;
}

// np.searchsorted(cdf, u, side="left"): NumPy's binary search with NaN sorting last (the
// same answer as a scan only when cdf is sorted, which a p with negative entries breaks).
inline std::int64_t searchsorted_left(const std::vector<double>& cdf, double u) {
  std::int64_t lo = 0, hi = static_cast<std::int64_t>(cdf.size());
  while (lo < hi) {
    const std::int64_t mid = lo + ((hi - lo) >> 1);
    const double m = cdf[static_cast<std::size_t>(mid)];
    if (m < u || (u != u && m == m))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

}  // namespace detail

/// Draws every core sample of the batch in C order into `real_out` or `int_out` (the draws'
/// shape, C-contiguous), as PyTensor's rng_fn does; returns NumPy's error message, or null.
/// `cholesky` (the factor of `mv_method`: 0 "cholesky", 1 "svd", 2 "eigh") is used by MvNormalRV only.
inline const char* draw(const Spec& s, Pcg64& g, const Param* params, const std::vector<std::int64_t>& batch,
                        double* real_out, std::int64_t* int_out, CholeskyFn cholesky, int mv_method = 0) {
  const int bn = static_cast<int>(batch.size());
  std::int64_t count = 1;
  for (std::int64_t n : batch) count *= n;
  std::vector<std::int64_t> index(static_cast<std::size_t>(bn), 0);
  // Offset of parameter i's core block at the current batch index.
  auto base = [&](int i) {
    const Param& p = params[i];
    const int pb = p.ndim - s.core_ndim[i];
    std::int64_t off = 0;
    for (int d = 0; d < pb; ++d)
      if (p.shape[d] != 1) off += index[static_cast<std::size_t>(bn - pb + d)] * p.strides[d];
    return off;
  };
  // A 1-d core block read as doubles.
  auto vector_of = [&](int i, std::vector<double>& v) {
    const Param& p = params[i];
    const std::int64_t k = p.shape[p.ndim - 1], st = p.strides[p.ndim - 1], off = base(i);
    v.resize(static_cast<std::size_t>(k));
    for (std::int64_t j = 0; j < k; ++j) v[static_cast<std::size_t>(j)] = read_real(p, off + j * st);
  };
  std::vector<double> a, b, chol;
  std::vector<std::int64_t> counts;
  const bool single0 = params[0].type == kF32;
  for (std::int64_t item = 0; item < count; ++item) {
    switch (s.kind) {
      case Kind::Dirichlet: {
        vector_of(0, a);
        for (double v : a)
          if (v < 0) return "alpha < 0";
        const std::int64_t k = static_cast<std::int64_t>(a.size());
        dirichlet(g, a.data(), k, real_out + item * k);
        break;
      }
      case Kind::Multinomial: {
        vector_of(1, b);
        const std::int64_t k = static_cast<std::int64_t>(b.size());
        if (k == 0)
          return "pvals must have at least 1 dimension and the last dimension of pvals must be greater than 0.";
        for (double v : b)
          if (!(v >= 0 && v <= 1)) return "pvals < 0, pvals > 1 or pvals contains NaNs";
        if (detail::kahan_sum(b.data(), k - 1) > 1.0 + 1e-12) {
          if (params[1].type == kF32) {  // NumPy's longer words when float32 p sums to about 1
            float total = 0;
            for (double v : b) total += static_cast<float>(v);
            if (total < 1.0001f)
              return "sum(pvals[:-1].astype(np.float64)) > 1.0. The pvals array is cast to 64-bit floating point "
                     "prior to checking the sum. Precision changes when casting may cause problems even if the sum "
                     "of the original pvals is valid.";
          }
          return "sum(pvals[:-1]) > 1.0";
        }
        const std::int64_t n = read_int(params[0], base(0));
        if (n < 0) return "n < 0";
        multinomial(g, n, b.data(), k, int_out + item * k);
        break;
      }
      case Kind::Categorical: {
        // PyTensor: searchsorted(p.cumsum(-1), rng.uniform()); the sum runs in p's dtype.
        vector_of(0, a);
        if (single0) {
          float acc = 0;
          for (double& v : a) v = acc = acc + static_cast<float>(v);
        } else if (params[0].type != kF64) {
          std::int64_t acc = 0;  // an integer p sums in int64
          for (double& v : a) v = static_cast<double>(acc += static_cast<std::int64_t>(v));
        } else {
          double acc = 0;
          for (double& v : a) v = acc = acc + v;
        }
        int_out[item] = detail::searchsorted_left(a, g.next_double());
        break;
      }
      case Kind::MvNormal: {
        // PyTensor: A = cholesky(cov) (or U sqrt(s), V sqrt(w));
        // out = einsum("...ij,...j->...i", A, rng.normal(size)) + mean.
        vector_of(0, a);
        const Param& c = params[1];
        const std::int64_t n = static_cast<std::int64_t>(a.size()), off = base(1);
        chol.resize(static_cast<std::size_t>(n * n));
        for (std::int64_t i = 0; i < n; ++i)
          for (std::int64_t j = 0; j < n; ++j)
            chol[static_cast<std::size_t>(i * n + j)] =
                read_real(c, off + i * c.strides[c.ndim - 2] + j * c.strides[c.ndim - 1]);
        if (!cholesky(static_cast<int>(n), chol.data(), c.type == kF32))
          return mv_method == 0 ? "Matrix is not positive definite"
                                : mv_method == 1 ? "SVD did not converge" : "Eigenvalues did not converge";
        double* out = real_out + item * n;
        for (std::int64_t j = 0; j < n; ++j) out[j] = normal(g, 0.0, 1.0);
        b.assign(out, out + n);
        for (std::int64_t i = 0; i < n; ++i) {
          double acc = 0;
          for (std::int64_t j = 0; j < (mv_method == 0 ? i + 1 : n); ++j) acc += chol[static_cast<std::size_t>(i * n + j)] * b[static_cast<std::size_t>(j)];
          out[i] = acc + a[static_cast<std::size_t>(i)];
        }
        break;
      }
    }
    for (int d = bn - 1; d >= 0; --d) {  // the next batch index, C order
      if (++index[static_cast<std::size_t>(d)] < batch[static_cast<std::size_t>(d)]) break;
      index[static_cast<std::size_t>(d)] = 0;
    }
  }
  return nullptr;
}

/// PyTensor's PermutationRV: for each of `count` batch elements in C order, NumPy's
/// `permutation` of a length-n first core axis (a shuffle of arange(n) by `random_interval`
/// swaps, which is also what shuffling a 1-d copy does), as source rows: rows[b * n + i] is the
/// row of x that lands at row i.
inline void permutation_rows(Pcg64& g, std::int64_t count, std::int64_t n, std::int64_t* rows) {
  for (std::int64_t b = 0; b < count; ++b) permutation_indices(g, n, rows + b * n);
}

/// NumPy's `Generator.choice(a, shape, replace=False, p=p)` (PyTensor's
/// ChoiceWithoutReplacement calls it once per batch element): its checks in its order, then the
/// `size` (= prod(shape)) indices into out. `pop` is a's length, or a itself when `a_is_int`;
/// `scalar` is a shape of None (PyTensor passes None for a core shape of ()), whose "product"
/// NumPy's emptiness check takes as nonzero. `p` (p_len doubles, float32 values when
/// `p_single`) may be null: then the uniform sampler. Returns NumPy's error message, or null.
inline const char* choice_indices(Pcg64& g, std::int64_t pop, bool a_is_int, bool scalar, std::int64_t size,
                                  const double* p, std::int64_t p_len, bool p_single, std::int64_t* out) {
  const bool takes = scalar || size != 0;
  if (a_is_int && pop <= 0 && takes) return "a must be a positive integer unless no samples are taken";
  if (!a_is_int && pop == 0 && takes) return "a cannot be empty unless no samples are taken";
  if (p) {
    if (p_len != pop) return "a and p must have same size";
    const double sum = p_len > 0 ? detail::kahan_sum(p, p_len) : 0.0;
    if (sum != sum) return "Probabilities contain NaN";
    for (std::int64_t i = 0; i < p_len; ++i)
      if (p[i] < 0) return "Probabilities are not non-negative";
    // sqrt(eps) of float64, or of p's own float dtype when that is coarser (rounded to it).
    const double atol = p_single ? static_cast<double>(std::sqrt(std::numeric_limits<float>::epsilon()))
                                 : std::sqrt(std::numeric_limits<double>::epsilon());
    if (std::fabs(sum - 1.) > atol)
      return "Probabilities do not sum to 1. See Notes section of docstring for more information.";
  }
  if (size > pop) return "Cannot take a larger sample than population when replace is False";
  if (size < 0) return "negative dimensions are not allowed";
  if (!p) {
    choice_without_replacement(g, pop, size, out);
    return nullptr;
  }
  std::int64_t positive = 0;
  for (std::int64_t i = 0; i < p_len; ++i) positive += p[i] > 0;
  if (positive < size) return "Fewer non-zero entries in p than size";
  // Rounds: as many uniforms as places left; the found entries' p zeroed; the cumulative sum
  // scaled by its last entry; searchsorted(side="right") of each uniform; the new indices kept
  // once each, in the order they first came.
  std::vector<double> q(p, p + p_len), cdf(static_cast<std::size_t>(p_len)), u;
  std::vector<char> seen(static_cast<std::size_t>(p_len));
  std::int64_t found = 0;
  while (found < size) {
    u.resize(static_cast<std::size_t>(size - found));
    for (double& x : u) x = g.next_double();
    for (std::int64_t j = 0; j < found; ++j) q[static_cast<std::size_t>(out[j])] = 0;
    double acc = 0;
    for (std::size_t i = 0; i < q.size(); ++i) cdf[i] = acc = acc + q[i];
    const double last = cdf.back();
    for (double& c : cdf) c /= last;
    std::fill(seen.begin(), seen.end(), 0);
    const std::int64_t before = found;
    for (double x : u) {
      std::int64_t lo = 0, hi = p_len;  // the first entry above x
      while (lo < hi) {
        const std::int64_t mid = lo + ((hi - lo) >> 1);
        if (cdf[static_cast<std::size_t>(mid)] <= x)
          lo = mid + 1;
        else
          hi = mid;
      }
      if (lo >= p_len) return "choice: a uniform fell past the cumulative sum";  // NumPy would index out of range
      if (!seen[static_cast<std::size_t>(lo)]) {
        seen[static_cast<std::size_t>(lo)] = 1;
        out[found++] = lo;
      }
    }
    if (found == before) return "choice: a round found nothing";  // cannot happen with a valid p
  }
  return nullptr;
}

}  // namespace core
}  // namespace kiln_random
