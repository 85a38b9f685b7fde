// Scan's loops (generator/ops/scan.h, codegen/cpp/emit_scan.cpp): the pieces the generated code
// of a Scan node calls. The node runs its step function (the inner graph, emitted as a function
// of its own) once per step on rows of its buffers; the buffers live in one scratch area of the
// context, planned once per call after the first step, so steps allocate nothing.
//
// The same template drives the GPU backends' Scan from the host (templates/gpu/prologue/
// device_scan.hpp adds the device tensors' overloads), so what only moves host metadata is
// written once here over any tensor type with kg::Tensor's layout (`data`, `shape`, `strides`).
namespace kg {
namespace scan {

/// Python's a % b, for b > 0.
inline int64_t wrap(int64_t a, int64_t b) { return ((a % b) + b) % b; }
/// wrap(a, b) for -b <= a < 2b, without a division (a tap's row: pos in [0, b), tap in [-b, 0]).
inline int64_t wrap_once(int64_t a, int64_t b) { return a < 0 ? a + b : (a >= b ? a - b : a); }

/// Bytes rounded up to a multiple of 64 (each piece of the scratch area is 64-byte aligned).
inline int64_t round64(int64_t bytes) { return (bytes + 63) / 64 * 64; }

/// Row i of a tensor with a leading dimension (a view).
template <template <typename, int> class Tn, typename T, int N>
inline Tn<T, N - 1> row(const Tn<T, N>& t, int64_t i) {
  Tn<T, N - 1> r;
  r.data = t.data + i * t.strides[0];
  for (int d = 1; d < N; ++d) {
    r.shape[d - 1] = t.shape[d];
    r.strides[d - 1] = t.strides[d];
  }
  return r;
}

/// Rows [begin, begin + count) of a tensor with a leading dimension (a view).
template <template <typename, int> class Tn, typename T, int N>
inline Tn<T, N> rows(const Tn<T, N>& t, int64_t begin, int64_t count) {
  Tn<T, N> r = t;
  r.data = t.data + begin * t.strides[0];
  r.shape[0] = count;
  return r;
}

/// Whether two tensors have the same shape.
template <template <typename, int> class Tn, typename T, int N, int M>
inline bool same_shape(const Tn<T, N>& a, const Tn<T, M>& b) {
  if (N != M) return false;
  for (int i = 0; i < N; ++i)
    if (a.shape[i] != b.shape[i]) return false;
  return true;
}

/// The bytes of a C-contiguous tensor of t's shape, rounded to 64; -1 when too big.
template <template <typename, int> class Tn, typename T, int N>
inline int64_t piece_bytes(const Tn<T, N>& t) {
  const int64_t size = checked_size(t.shape, N, sizeof(T));
  if (size < 0 || size > (std::numeric_limits<int64_t>::max() - 63) / static_cast<int64_t>(sizeof(T))) return -1;
  return round64(size * static_cast<int64_t>(sizeof(T)));
}

/// Adds a piece's bytes to a scratch total; false when the total overflows or a piece is too big.
inline bool add_piece(int64_t& total, int64_t bytes) {
  return bytes >= 0 && !__builtin_add_overflow(total, bytes, &total);
}

/// The row an output tap of mit-mot k writes at a step (pos + tap), which must lie inside its
/// buffer (mit-mot rows are written without wrapping around, as Scan.perform).
inline int32_t mit_mot_row(Ctx* ctx, int k, int64_t tap, int64_t pos, int64_t store, int64_t step, int64_t& at) {
  at = pos + tap;
  if (at >= 0 && at < store) return KILN_OK;
  return fail(ctx, KILN_ERR_VALUE, "Scan: mit-mot %d writes tap %lld at step %lld, past the end of its buffer of %lld rows", k,
              static_cast<long long>(tap), static_cast<long long>(step), static_cast<long long>(store));
}

/// Frees the outputs a step function allocated (its first step runs in "call" mode).
inline void release(DLManagedTensor** owned, int n) {
  for (int k = 0; k < n; ++k)
    if (owned[k]) {
      owned[k]->deleter(owned[k]);
      owned[k] = nullptr;
    }
}

/// The outputs of the first step (allocated by the step function), freed on every way out.
template <int N>
struct StepOutputs {
  DLManagedTensor* owned[N] = {};
  StepOutputs() = default;
  StepOutputs(const StepOutputs&) = delete;
  StepOutputs& operator=(const StepOutputs&) = delete;
  ~StepOutputs() { release(owned, N); }
};

// ---- host tensors (the cpp backend) ----

/// A DLTensor describing `t`: its shape and strides are t's arrays, so t must outlive it.
template <typename T, int N>
inline DLTensor dl_of(Tensor<T, N>& t, DLDataType dt) {
  DLTensor d{};
  d.data = const_cast<void*>(static_cast<const void*>(t.data));
  d.device = DLDevice{kDLCPU, 0};
  d.ndim = N;
  d.dtype = dt;
  d.shape = t.shape;
  d.strides = t.strides;
  return d;
}

/// `t` as a typed view of a C-contiguous DLTensor of its rank (an output the step function
/// allocated).
template <typename T, int N>
inline void view_into(const DLTensor& d, Tensor<T, N>& t) {
  t.data = reinterpret_cast<T*>(static_cast<char*>(d.data) + d.byte_offset);
  for (int i = 0; i < N; ++i) t.shape[i] = d.shape[i];
  t.set_contiguous_strides();
}

/// A step count or a nit-sot length (a 0-d integer).
template <typename T>
inline int32_t read_count(Ctx*, const Tensor<T, 0>& t, int64_t& out) {
  out = static_cast<int64_t>(t.data[0]);
  return KILN_OK;
}

/// Whether a while loop's 0-d condition is nonzero (the loop stops).
template <typename T>
inline int32_t read_flag(Ctx*, const Tensor<T, 0>& t, bool& out) {
  out = t.data[0] != 0;
  return KILN_OK;
}

/// Points `t` (its shape set) at the next piece of the scratch area, C-contiguous.
template <typename T, int N>
inline void place(unsigned char*& cursor, Tensor<T, N>& t) {
  t.data = reinterpret_cast<T*>(cursor);
  t.set_contiguous_strides();
  cursor += piece_bytes(t);
}

/// Copies src into dst (same shape, any strides).
template <typename T, int N>
inline int32_t copy(Ctx*, const Tensor<T, N>& src, Tensor<T, N>& dst) {
  copy_tensor(src, dst);
  return KILN_OK;
}

/// Scan.perform's end for one buffer: rows copied into the (C-contiguous) output, rotated to
/// start at `pos` when the buffer wrapped around, rows past `filled` zero otherwise.
template <typename T, int N>
inline int32_t finish(Ctx*, const Tensor<T, N>& buf, Tensor<T, N>& out, int64_t pos, bool rotate, int64_t filled) {
  for (int64_t r = 0; r < out.shape[0]; ++r) {
    Tensor<T, N - 1> dst = row(out, r);
    if (!rotate && r >= filled) {  // `out` is C-contiguous: its rows are too
      if (dst.size() > 0) std::memset(static_cast<void*>(dst.data), 0, static_cast<size_t>(dst.size()) * sizeof(T));
      continue;
    }
    copy_tensor(row(buf, rotate ? (pos + r) % buf.shape[0] : r), dst);
  }
  return KILN_OK;
}

}  // namespace scan
}  // namespace kg
