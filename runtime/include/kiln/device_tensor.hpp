// What kiln's host <-> device helpers share (kiln/opencl.hpp, kiln/cuda.hpp; header-only C++17):
// the span of memory a CPU tensor's strides address, which an upload copies so that a transposed
// or sliced view keeps its layout on the device, and the device tensor that owns the copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include <dlpack/dlpack.h>

namespace kiln::device {

inline size_t item_bytes(const DLTensor& t) { return (static_cast<size_t>(t.dtype.bits) * t.dtype.lanes + 7) / 8; }

/// The device type as the integer it holds: DLDeviceType has no fixed underlying type, so a value
/// outside its enumerators must not be read as the enum (the generated runtime does the same).
inline int32_t device_type_code(const DLDevice& device) {
  std::underlying_type_t<DLDeviceType> code;
  std::memcpy(&code, &device.device_type, sizeof code);
  return static_cast<int32_t>(code);
}

/// The memory a CPU tensor's strides address: its shape and strides (C order when it has none),
/// where the lowest-addressed element is (`first`, `lo` elements from element [0,...,0], lo <= 0)
/// and how many bytes reach the highest one (0 for an empty tensor).
struct HostSpan {
  std::vector<int64_t> shape, strides;
  int64_t lo = 0;
  size_t bytes = 0;
  const char* first = nullptr;
};

inline HostSpan host_span(const DLTensor& host) {
  HostSpan s;
  s.shape.assign(host.shape, host.shape + host.ndim);
  s.strides.resize(static_cast<size_t>(host.ndim));
  int64_t hi = 0, count = 1, stride = 1;
  for (int i = host.ndim - 1; i >= 0; --i) {
    s.strides[static_cast<size_t>(i)] = host.strides ? host.strides[i] : stride;
    stride *= host.shape[i];
    count *= host.shape[i];
    const int64_t span = s.strides[static_cast<size_t>(i)] * (host.shape[i] - 1);
    if (host.shape[i] > 0) (span < 0 ? s.lo : hi) += span;
  }
  const size_t item = item_bytes(host);
  s.bytes = count == 0 ? 0 : static_cast<size_t>(hi - s.lo + 1) * item;
  s.first = static_cast<const char*>(host.data) + host.byte_offset + s.lo * static_cast<int64_t>(item);
  return s;
}

/// The number of elements of a device tensor, or -1 when it is not C-contiguous (what the
/// downloads take).
inline int64_t contiguous_count(const DLTensor& t) {
  int64_t count = 1, stride = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    if (t.strides && t.shape[i] != 1 && t.strides[i] != stride) return -1;
    stride *= t.shape[i];
    count *= t.shape[i];
  }
  return count;
}

/// A zero-filled C-contiguous CPU tensor of `shape` and `dtype` (what the helpers' empty()
/// uploads); `dl` is valid while this object and `shape` live.
struct HostZeros {
  std::vector<uint8_t> bytes;
  DLTensor dl{};
  HostZeros(DLDataType dtype, const std::vector<int64_t>& shape) {
    int64_t count = 1;
    for (int64_t n : shape) count *= n;
    dl.device = DLDevice{kDLCPU, 0};
    dl.ndim = static_cast<int32_t>(shape.size());
    dl.dtype = dtype;
    dl.shape = const_cast<int64_t*>(shape.data());
    bytes.resize(static_cast<size_t>(count) * item_bytes(dl));
    dl.data = bytes.data();
  }
  HostZeros(const HostZeros&) = delete;
  HostZeros& operator=(const HostZeros&) = delete;
};

/// A device buffer holding a tensor, owning it (`release` frees it); `dl` describes it for as
/// long as this object lives: the uploaded span's shape and strides, data the buffer, and
/// byte_offset locating element [0,...,0] in it.
template <typename Buffer, void (*release)(Buffer)>
class OwnedTensor {
 public:
  OwnedTensor() = default;
  /// Takes `buffer`, which holds `span`'s bytes from its start.
  OwnedTensor(Buffer buffer, HostSpan span, const DLTensor& host, DLDevice device)
      : buffer_(buffer), shape_(std::move(span.shape)), strides_(std::move(span.strides)) {
    dl.data = static_cast<void*>(buffer_);
    dl.device = device;
    dl.ndim = host.ndim;
    dl.dtype = host.dtype;
    dl.shape = shape_.data();
    dl.strides = strides_.data();
    dl.byte_offset = static_cast<uint64_t>(-span.lo) * item_bytes(host);
  }
  OwnedTensor(const OwnedTensor&) = delete;
  OwnedTensor& operator=(const OwnedTensor&) = delete;
  OwnedTensor(OwnedTensor&& o) noexcept { *this = std::move(o); }
  OwnedTensor& operator=(OwnedTensor&& o) noexcept {
    std::swap(buffer_, o.buffer_);
    shape_.swap(o.shape_);
    strides_.swap(o.strides_);
    std::swap(dl, o.dl);
    dl.shape = shape_.data();
    dl.strides = strides_.data();
    o.dl.shape = o.shape_.data();
    o.dl.strides = o.strides_.data();
    return *this;
  }
  ~OwnedTensor() {
    if (buffer_) release(buffer_);
  }

  DLTensor dl{};

 private:
  Buffer buffer_ = nullptr;
  std::vector<int64_t> shape_, strides_;
};

}  // namespace kiln::device
