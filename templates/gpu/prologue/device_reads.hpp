// Host reads of device scalars, shared by the GPU backends' runtimes (after their
// device_runtime.hpp, which supplies read_element: one element to the host, waiting for it).
// Ops whose output shape depends on input values (Alloc's lengths, ARange's bounds, Eye's n, m
// and k) read them here: a data-dependent length is the one place a call waits for the device.
#include <cstring>
#include <deque>
#include <new>

namespace kg {

/// Element i of a 0-d or 1-d integer (or bool) device tensor as int64 (kg::read_int's rules:
/// a uint64 beyond int64's range fails with "integer too large").
template <typename T, int N>
inline int32_t read_int(Ctx* ctx, const DTensor<T, N>& t, int64_t i, int64_t& out) {
  static_assert(N <= 1, "read_int reads 0-d or 1-d tensors");
  T v{};
  KILN_TRY(read_element(ctx, t, N == 0 ? 0 : i * t.strides[0], v));
  if constexpr (std::is_same_v<std::remove_cv_t<T>, uint64_t>) {
    if (v > static_cast<uint64_t>(INT64_MAX)) return fail(ctx, KILN_ERR_VALUE, "integer too large");
  }
  out = static_cast<int64_t>(v);
  return KILN_OK;
}

/// A 0-d integer index input on the device (Subtensor's start, stop, step and integer entries:
/// the C++ backend's read_index over a device scalar, one blocking read); a uint64 beyond
/// int64's range fails as there, with KILN_ERR_INDEX and "integer too large".
template <typename T>
inline int32_t read_index(Ctx* ctx, const DTensor<T, 0>& t, int64_t& out) {
  T v{};
  KILN_TRY(read_element(ctx, t, 0, v));
  if constexpr (std::is_same_v<std::remove_cv_t<T>, uint64_t>) {
    if (v > static_cast<uint64_t>(INT64_MAX)) return fail(ctx, KILN_ERR_INDEX, "integer too large");
  }
  out = static_cast<int64_t>(v);
  return KILN_OK;
}

/// A 0-d integer length on the device; fails (KILN_ERR_VALUE) with "<what> is negative (-2)".
template <typename T>
inline int32_t read_length(Ctx* ctx, const DTensor<T, 0>& t, const char* what, int64_t& out) {
  KILN_TRY(read_int(ctx, t, 0, out));
  if (out < 0) return fail(ctx, KILN_ERR_VALUE, "%s is negative (%lld)", what, static_cast<long long>(out));
  return KILN_OK;
}

/// A 0-d device tensor's value as double.
template <typename T>
inline int32_t read_double(Ctx* ctx, const DTensor<T, 0>& t, double& out) {
  T v{};
  KILN_TRY(read_element(ctx, t, 0, v));
  out = static_cast<double>(v);
  return KILN_OK;
}

/// The shape function's host copy of input `name` when its values may be lengths the shape
/// function reads (the shape function runs the C++ backend's code on host tensors): a 0-d
/// input (Alloc's lengths, ARange's bounds), or an integer vector of at most 64 elements (a
/// shape: Reshape). Read each call into storage the context keeps per input (keyed by the name
/// literal's address); any other input keeps no data (its values are never a shape).
template <typename T, int N>
inline int32_t read_shape_values(Ctx* ctx, const DTensor<T, N>& t, const char* name, Tensor<T, N>& out) {
  constexpr int64_t kMost = sizeof(ShapeScalar{}.bytes) / 8;
  const int64_t n = N == 0 ? 1 : t.shape[0];
  if (N == 1 && (!std::is_integral_v<T> || std::is_same_v<T, bool> || n > kMost)) return KILN_OK;
  auto& copies = dev_of(ctx)->shape_scalars;
  ShapeScalar* slot = nullptr;
  for (auto& s : copies)
    if (s.name == name) slot = &s;
  if (!slot) {
    copies.emplace_back();
    slot = &copies.back();
    slot->name = name;
  }
  static_assert(sizeof(T) <= 8, "elements of at most 8 bytes");
  T* host = reinterpret_cast<T*>(slot->bytes);
  for (int64_t i = 0; i < n; ++i) KILN_TRY(read_element(ctx, t, N == 0 ? 0 : i * t.strides[0], host[i]));
  out.data = host;
  if constexpr (N == 1) out.strides[0] = 1;
  return KILN_OK;
}

/// The n elements of a 0-d (n copies) or 1-d integer device tensor as int64 on the host, in
/// one read (read_elements; static_cast's conversion, as the C++ backend's `count_of`).
template <typename T, int N>
inline int32_t read_ints(Ctx* ctx, const DTensor<T, N>& t, int64_t n, int64_t* out) {
  static_assert(N <= 1 && sizeof(T) <= sizeof(int64_t), "0-d or 1-d integers");
  // Read packed at the start of `out`, then widened in place from the last element down (the
  // int64 written at i covers only packed elements i and after).
  T* packed = reinterpret_cast<T*>(out);
  KILN_TRY(read_elements(ctx, t.data, n, N == 0 ? 0 : t.strides[0], packed));
  for (int64_t i = n; i-- > 0;) {
    T v;
    std::memcpy(&v, reinterpret_cast<const unsigned char*>(out) + i * static_cast<int64_t>(sizeof(T)), sizeof v);
    out[i] = static_cast<int64_t>(v);
  }
  return KILN_OK;
}

/// How a selection over n flat positions (Nonzero, Unique: templates/gpu/select.mustache) is
/// cut: `chunks` work-groups of `len` positions, enough to fill the device, each at least a
/// few elements per work-item (reduce_chunks' rule).
inline void select_chunks(int64_t n, int64_t& chunks, int64_t& len) {
  chunks = n > 0 ? reduce_chunks(1, n) : 1;
  len = n > 0 ? (n + chunks - 1) / chunks : 1;
  chunks = n > 0 ? (n + len - 1) / len : 1;
}

/// Host memory the context keeps under `name` (a name literal: compared by address), at least
/// `bytes`, grown when too small (a steady state allocates nothing); null when out of memory.
inline void* host_storage(Ctx* ctx, const char* name, size_t bytes) {
  HostCopy* copy = nullptr;
  for (auto& c : dev_of(ctx)->host_copies)
    if (c.name == name) copy = &c;
  try {
    if (!copy) {
      dev_of(ctx)->host_copies.emplace_back();
      copy = &dev_of(ctx)->host_copies.back();
      copy->name = name;
    }
    const size_t words = bytes > 0 ? (bytes + 7) / 8 : 1;
    if (copy->items.size() < words) copy->items.resize(words);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
  return copy->items.data();
}

/// `out`: a host copy of every element the device tensor `t` addresses (one read of its
/// extent, which waits for the kernels queued before it), with t's shape and strides, in the
/// context's host storage under `name`.
template <typename T, int N>
inline int32_t to_host(Ctx* ctx, const DTensor<T, N>& t, const char* name, Tensor<T, N>& out) {
  int64_t lo = 0, hi = 0;
  for (int i = 0; i < N; ++i) {
    out.shape[i] = t.shape[i];
    out.strides[i] = t.strides[i];
    const int64_t span = t.strides[i] * (t.shape[i] - 1);
    (span < 0 ? lo : hi) += span;
  }
  out.data = nullptr;
  if (t.size() == 0) return KILN_OK;
  const size_t bytes = static_cast<size_t>(hi - lo + 1) * sizeof(T);
  T* host = static_cast<T*>(host_storage(ctx, name, bytes));
  if (!host) return fail(ctx, KILN_ERR_ALLOC, "out of memory allocating %zu bytes of host memory", bytes);
  KILN_TRY(read_elements(ctx, t.data + lo, hi - lo + 1, 1, host));
  out.data = host - lo;
  return KILN_OK;
}

/// The shape function's binding of an input whose values its shape graph reads beyond a 0-d
/// scalar or a short shape vector (a data-dependent length: Nonzero's count, Unique's groups,
/// Repeat's counts): bind_input's checks, then every element the input addresses read to host
/// storage the context keeps per input (to_host).
template <typename T, int N>
inline int32_t bind_input_host(Ctx* ctx, const DLTensor& t, Tensor<T, N>& out, DLDataType want,
                               const int64_t* static_shape, const char* name) {
  DTensor<T, N> d;
  KILN_TRY(bind_input(ctx, t, d, want, static_shape, name));
  return to_host(ctx, d, name, out);
}

/// A lazy node's 0-d condition (IfElse) on the host: read once per call (`out` is -1 until it
/// is), then 1 when nonzero, else 0. The branches' kernels are queued after it (one wait).
template <typename T>
inline int32_t read_condition(Ctx* ctx, const DTensor<T, 0>& cond, int8_t& out) {
  if (out >= 0) return KILN_OK;
  T v{};
  KILN_TRY(read_element(ctx, cond, 0, v));
  out = v != T{} ? 1 : 0;
  return KILN_OK;
}

}  // namespace kg
