// kiln generated-code runtime, advanced indexing and data-dependent lengths: checking index
// arrays, masks and their true elements, broadcasting the shapes of several index arrays, and
// sorting (emit_advanced_indexing.cpp, emit_extra_ops.cpp). Embedded after runtime.hpp, in the
// same anonymous namespace; the messages are NumPy's, as the reference evaluator's.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <numeric>
#include <type_traits>

#include "runtime.hpp"

namespace kg {

/// The value of a 0-d integer index input as int64 (Subtensor's start, stop, step and integer
/// entries); a uint64 beyond int64's range fails with "integer too large". The GPU runtimes
/// overload it for device tensors (templates/gpu/prologue/device_reads.hpp).
template <typename T>
inline int32_t read_index(Ctx* ctx, const Tensor<T, 0>& t, int64_t& out) {
  if constexpr (std::is_same_v<std::remove_cv_t<T>, uint64_t>) {
    if (t.data[0] > static_cast<uint64_t>(INT64_MAX)) return fail(ctx, KILN_ERR_INDEX, "integer too large");
  }
  out = static_cast<int64_t>(t.data[0]);
  return KILN_OK;
}

/// Checks every element of an integer index array (any rank and strides) against the length
/// of axis `axis` of the indexed tensor (NumPy's IndexError words on the first bad one).
template <typename T, int N>
inline int32_t check_indices(Ctx* ctx, const Tensor<T, N>& idx, int64_t length, int axis) {
  int64_t strides[1][N > 0 ? N : 1];
  for (int d = 0; d < N; ++d) strides[0][d] = idx.strides[d];
  int32_t status = KILN_OK;
  for_each_strided<N, 1>(idx.shape, strides, [&](const int64_t* off) {
    int64_t j;
    if (status == KILN_OK) status = check_index(ctx, idx.data[off[0]], length, axis, j);
  });
  return status;
}

/// Checks that a boolean mask of rank N has the lengths of dimensions x_dim.. of x.
template <int N>
inline int32_t check_mask_shape(Ctx* ctx, const int64_t* mask_shape, const int64_t* x_shape, int x_dim) {
  for (int j = 0; j < N; ++j)
    if (mask_shape[j] != x_shape[x_dim + j])
      return fail(ctx, KILN_ERR_INDEX,
                  "boolean index did not match indexed array along dimension %d; dimension is %lld but "
                  "corresponding boolean dimension is %lld",
                  x_dim + j, static_cast<long long>(x_shape[x_dim + j]), static_cast<long long>(mask_shape[j]));
  return KILN_OK;
}

/// The number of true (nonzero) elements of a tensor.
template <typename T, int N>
inline int64_t count_nonzero(const Tensor<T, N>& a) {
  int64_t strides[1][N > 0 ? N : 1];
  for (int d = 0; d < N; ++d) strides[0][d] = a.strides[d];
  int64_t n = 0;
  for_each_strided<N, 1>(a.shape, strides, [&](const int64_t* off) { n += a.data[off[0]] != 0 ? 1 : 0; });
  return n;
}

/// The shape of one index operand of a block (an index array's shape, or a mask's count).
struct IndexShape {
  const int64_t* shape;
  int ndim;
};

/// Broadcasts the shapes of the advanced indices into `block` (rank R), NumPy's rules; fails
/// with "shape mismatch: indexing arrays could not be broadcast together with shapes (2,) (3,)".
inline int32_t broadcast_index_shapes(Ctx* ctx, int64_t* block, int R, const IndexShape* shapes, int count) {
  for (int d = 0; d < R; ++d) block[d] = 1;
  for (int k = 0; k < count; ++k)
    for (int d = 0; d < shapes[k].ndim; ++d) {
      int64_t& b = block[R - shapes[k].ndim + d];
      const int64_t s = shapes[k].shape[d];
      if (s == b || s == 1) continue;
      if (b != 1) {
        char text[512] = "";
        for (int j = 0; j < count; ++j) {
          char one[160];
          shape_text(one, sizeof one, shapes[j].shape, shapes[j].ndim);
          std::strncat(text, j ? " " : "", sizeof text - std::strlen(text) - 1);
          std::strncat(text, one, sizeof text - std::strlen(text) - 1);
        }
        return fail(ctx, KILN_ERR_INDEX, "shape mismatch: indexing arrays could not be broadcast together with shapes %s",
                    text);
      }
      b = s;
    }
  return KILN_OK;
}

/// Walks the true elements of a boolean mask in row-major order: seek(t) gives the
/// multi-index of the t-th one. Moving forward by one is cheap; going back restarts.
template <int N>
struct MaskCursor {
  const bool* data;
  int64_t shape[N > 0 ? N : 1];
  int64_t strides[N > 0 ? N : 1];
  int64_t index[N > 0 ? N : 1] = {};
  int64_t ordinal = -1;  ///< which true element `index` is (-1: before the first)

  template <typename Mask>
  explicit MaskCursor(const Mask& m) : data(m.data) {
    for (int d = 0; d < N; ++d) {
      shape[d] = m.shape[d];
      strides[d] = m.strides[d];
    }
  }
  const int64_t* seek(int64_t t) {
    if (t < ordinal) {
      ordinal = -1;
      for (int d = 0; d < N; ++d) index[d] = 0;
    }
    while (ordinal < t) {
      if (ordinal >= 0) step();
      while (!current()) step();
      ++ordinal;
    }
    return index;
  }

 private:
  bool current() const {
    int64_t off = 0;
    for (int d = 0; d < N; ++d) off += index[d] * strides[d];
    return data[off];
  }
  void step() {
    for (int d = N - 1; d >= 0; --d) {
      if (++index[d] < shape[d]) return;
      if (d > 0) index[d] = 0;
    }
  }
};

/// A gathered element's position: index v (negative counts from the end) along an axis of
/// length n, or 0 with `bad` set when it is out of range (never a wild read; the caller
/// reports the index afterwards). Branch-free, so that fused loops stay vectorisable.
/// (`bad` is an int64 flag: GCC vectorises an OR-reduction into one, not into a bool.)
template <typename I>
inline int64_t gather_index(I v, int64_t n, int64_t& bad) {
  int64_t j;
  if constexpr (std::is_unsigned_v<I>)
    j = static_cast<uint64_t>(v) < static_cast<uint64_t>(n) ? static_cast<int64_t>(v) : -1;
  else
    j = v < 0 ? static_cast<int64_t>(v) + n : static_cast<int64_t>(v);
  const int64_t out = static_cast<uint64_t>(j) >= static_cast<uint64_t>(n);
  bad |= out;
  return out ? 0 : j;
}

/// gather_index for a scalar loop: one compare and a branch that is never taken for an
/// in-range, non-negative index (the common case), the full check only otherwise. Where the
/// loop around it makes no vector-math calls this beats the branch-free form in a vectorised
/// loop: the predicted branch costs nothing, and this Zen's scalar loads keep up with its
/// AVX2 gathers. The loop is unrolled four times (emit_elemwise.cpp). W10 over the unchecked,
/// vectorised hand loop: float64 0.87-0.91x, was 1.0-1.1x; float32 0.97-1.09x, was 1.25-1.35x.
template <typename I>
inline int64_t gather_index_scalar(I v, int64_t n, int64_t& bad) {
  if (__builtin_expect(static_cast<uint64_t>(v) < static_cast<uint64_t>(n), 1)) return static_cast<int64_t>(v);
  return gather_index(v, n, bad);
}

/// check_index over the n indices idx[0], idx[stride], ...: KILN_OK when each is in range, else
/// check_index's error for the first that is not. The common case, non-negative indices in
/// range, is a vectorised pass (radon's gradient spent a quarter of its call in a check_index
/// call per index); negative ones go through check_index. Not inlined: in a large run_graph
/// GCC leaves the loop scalar.
template <typename T>
__attribute__((noinline)) int32_t check_indices(Ctx* ctx, const T* idx, int64_t n, int64_t stride, int64_t length, int axis) {
  if (stride == 1) {  // the top bit of v | (length - 1 - v) is set when v is outside [0, length)
    uint64_t outside = 0;  // unsigned: the subtraction wraps for a hostile v instead of overflowing
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t v = static_cast<uint64_t>(static_cast<int64_t>(idx[i]));
      outside |= v | (static_cast<uint64_t>(length) - 1 - v);
    }
    if (!(outside >> 63)) return KILN_OK;
  }
  for (int64_t i = 0; i < n; ++i) {
    const T v = idx[i * stride];
    if (__builtin_expect(static_cast<uint64_t>(v) < static_cast<uint64_t>(length), 1)) continue;
    int64_t j;
    if (int32_t status = check_index(ctx, v, length, axis, j); status != KILN_OK) return status;
  }
  return KILN_OK;
}

/// NumPy's sort order: NaN after every number.
template <typename T>
inline bool sorts_before(T a, T b) {
  if constexpr (kiln_scalar::is_float_v<T>)
    return a < b || (std::isnan(b) && !std::isnan(a));
  else
    return a < b;
}

/// A random-access iterator over a strided lane (for std::stable_sort on a tensor's axis).
template <typename T>
struct StridedIter {
  using iterator_category = std::random_access_iterator_tag;
  using value_type = T;
  using difference_type = std::ptrdiff_t;
  using pointer = T*;
  using reference = T&;

  T* p = nullptr;
  int64_t s = 1;

  StridedIter() = default;
  StridedIter(T* p_, int64_t s_) : p(p_), s(s_) {}
  reference operator*() const { return *p; }
  reference operator[](difference_type n) const { return p[n * s]; }
  StridedIter& operator++() { p += s; return *this; }
  StridedIter& operator--() { p -= s; return *this; }
  StridedIter operator++(int) { StridedIter t = *this; p += s; return t; }
  StridedIter operator--(int) { StridedIter t = *this; p -= s; return t; }
  StridedIter& operator+=(difference_type n) { p += n * s; return *this; }
  StridedIter& operator-=(difference_type n) { p -= n * s; return *this; }
  StridedIter operator+(difference_type n) const { return StridedIter(p + n * s, s); }
  StridedIter operator-(difference_type n) const { return StridedIter(p - n * s, s); }
  friend StridedIter operator+(difference_type n, const StridedIter& i) { return i + n; }
  difference_type operator-(const StridedIter& o) const { return (p - o.p) / s; }
  bool operator==(const StridedIter& o) const { return p == o.p; }
  bool operator!=(const StridedIter& o) const { return p != o.p; }
  bool operator<(const StridedIter& o) const { return s > 0 ? p < o.p : p > o.p; }
  bool operator>(const StridedIter& o) const { return o < *this; }
  bool operator<=(const StridedIter& o) const { return !(o < *this); }
  bool operator>=(const StridedIter& o) const { return !(*this < o); }
};

}  // namespace kg
