// Scan on the GPU backends, driven from the host: the C++ backend's Scan template and its
// loop pieces (templates/cpp/prologue/scan.hpp) over device tensors. The buffers, rows and the
// scratch area are device memory; a step is the step function's kernels queued in order, so
// nothing waits between steps except a while loop, which reads its condition after each step.
namespace kg {
namespace scan {

/// A DLTensor describing the device tensor `t`: its shape and strides are t's arrays, so t
/// must outlive it.
template <typename T, int N>
inline DLTensor dl_of(DTensor<T, N>& t, DLDataType dt) {
  DLTensor d{};
  set_dl_data(d, t.data);
  d.ndim = N;
  d.dtype = dt;
  d.shape = t.shape;
  d.strides = t.strides;
  return d;
}

/// `t` as a typed view of a C-contiguous device DLTensor of its rank (an output the step
/// function allocated).
template <typename T, int N>
inline void view_into(const DLTensor& d, DTensor<T, N>& t) {
  t.data = dl_data<T>(d);
  for (int i = 0; i < N; ++i) t.shape[i] = d.shape[i];
  t.set_contiguous_strides();
}

/// A step count or a nit-sot length on the device (one blocking read).
template <typename T>
inline int32_t read_count(Ctx* ctx, const DTensor<T, 0>& t, int64_t& out) {
  return read_int(ctx, t, 0, out);
}

/// Whether a while loop's 0-d condition on the device is nonzero (one blocking read a step).
template <typename T>
inline int32_t read_flag(Ctx* ctx, const DTensor<T, 0>& t, bool& out) {
  T value{};
  KILN_TRY(read_element(ctx, t, 0, value));
  out = value != 0;
  return KILN_OK;
}

/// Points `t` (its shape set) at the next piece of the device scratch area, C-contiguous
/// (pieces are 64-byte aligned, so the element offset is exact).
template <typename C, typename T, int N>
inline void place(C& cursor, DTensor<T, N>& t) {
  t.data = retype<T>(cursor, 0);
  t.set_contiguous_strides();
  cursor = retype<unsigned char>(cursor, piece_bytes(t));
}

/// Copies src into dst (same shape, any strides) with the device copy kernel.
template <typename T, int N>
inline int32_t copy(Ctx* ctx, const DTensor<T, N>& src, DTensor<T, N>& dst) {
  return copy_tensor(ctx, src, dst);
}

/// Scan.perform's end for one buffer, as the host version but in at most two copies and a
/// fill: a rotated buffer is its rows from `pos` on, then its first rows.
template <typename T, int N>
inline int32_t finish(Ctx* ctx, const DTensor<T, N>& buf, DTensor<T, N>& out, int64_t pos, bool rotate, int64_t filled) {
  const int64_t len = out.shape[0];
  const int64_t head = rotate ? std::min(len, buf.shape[0] - pos) : std::min(len, filled);
  if (head > 0) {
    DTensor<T, N> dst = rows(out, 0, head);
    KILN_TRY(copy_tensor(ctx, rows(buf, rotate ? pos : 0, head), dst));
  }
  if (len > head) {
    DTensor<T, N> dst = rows(out, head, len - head);  // `out` is C-contiguous: so are its rows
    if (rotate) return copy_tensor(ctx, rows(buf, 0, len - head), dst);
    return zero_fill(ctx, dst);
  }
  return KILN_OK;
}

}  // namespace scan
}  // namespace kg
