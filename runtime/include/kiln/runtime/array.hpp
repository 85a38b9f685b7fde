// kiln runtime: the n-d array shared by the reference evaluator, the .npy reader/writer, the
// loader and the generated standalone programs.
//
// Layout is DLPack's: a data pointer to element [0,...,0], a dtype, a shape and strides.
// Strides are counted in ELEMENTS, not bytes (DLPack's unit; NumPy's are bytes) and may be
// negative or zero (reversed and broadcast views). Storage is reference counted and shared
// between views; an Array may also borrow memory it does not own (a caller's DLTensor).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <dlpack/dlpack.h>

#include "kiln/runtime/dtype.hpp"

namespace kiln {

using Shape = std::vector<std::int64_t>;

inline std::string shape_str(const Shape& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

/// Throws std::length_error, in NumPy's words, for a shape over NumPy's limit on arrays.
[[noreturn]] inline void throw_too_big(const Shape& shape, std::size_t itemsize) {
  throw std::length_error("array of shape " + shape_str(shape) + " is too big: array is too big (" +
                          std::to_string(itemsize) + "-byte elements, more than 2^63 - 1 bytes in all)");
}

/// The bytes of a C-contiguous array of `shape` when it obeys NumPy's limit: the product of its
/// nonzero lengths times `itemsize` fits in int64_t, so no size, byte count or C-contiguous
/// stride of it overflows, even when a zero length makes it empty. Throws std::length_error
/// beyond that limit, std::invalid_argument for a negative length.
inline std::int64_t checked_nbytes(const Shape& shape, std::size_t itemsize) {
  std::int64_t bytes = static_cast<std::int64_t>(itemsize);
  bool empty = false;
  for (std::int64_t d : shape) {
    if (d < 0) throw std::invalid_argument("negative length in shape " + shape_str(shape));
    if (d == 0) empty = true;
    else if (__builtin_mul_overflow(bytes, d, &bytes)) throw_too_big(shape, itemsize);
  }
  return empty ? 0 : bytes;
}

/// Number of elements of a shape (1 for a 0-d shape). Throws on overflow.
inline std::int64_t shape_size(const Shape& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) {
    if (d < 0) throw std::invalid_argument("negative length in shape");
    if (d != 0 && n > INT64_MAX / d) throw std::length_error("array size overflows int64");
    n *= d;
  }
  return n;
}

/// Row-major (C order) element strides of a shape. Throws std::length_error when a stride
/// overflows (a shape over NumPy's limit, such as (0, 10^17, 1000)).
inline Shape c_strides(const Shape& shape) {
  Shape strides(shape.size());
  std::int64_t s = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    if (i > 0 && shape[i] > 1 && __builtin_mul_overflow(s, shape[i], &s)) throw_too_big(shape, 1);
  }
  return strides;
}

class Array {
 public:
  /// A null array (no data); defined() is false. Assign a real array before use.
  Array() = default;

  bool defined() const { return data_ != nullptr; }

  /// A new C-contiguous array with uninitialised contents, 64-byte aligned.
  static Array empty(DType dtype, Shape shape) {
    const std::size_t bytes = static_cast<std::size_t>(checked_nbytes(shape, dtype_size(dtype)));
    std::size_t rounded = (bytes + 63) / 64 * 64;
    if (rounded == 0) rounded = 64;
    void* p = std::aligned_alloc(64, rounded);
    if (!p) throw std::bad_alloc();
    Array a;
    a.storage_ = std::shared_ptr<void>(p, [](void* q) { std::free(q); });
    a.data_ = p;
    a.dtype_ = dtype;
    a.strides_ = c_strides(shape);
    a.shape_ = std::move(shape);
    return a;
  }

  /// A new C-contiguous array of zeros (false for bool).
  static Array zeros(DType dtype, Shape shape) {
    Array a = empty(dtype, std::move(shape));
    std::memset(a.data_, 0, a.nbytes());
    return a;
  }

  /// A view of memory described by a DLTensor. `owner` keeps that memory alive (may be null
  /// when the caller guarantees the lifetime). The DLTensor's byte_offset is applied.
  static Array from_dlpack(const DLTensor& t, std::shared_ptr<void> owner = nullptr) {
    auto dt = ::kiln::from_dlpack(t.dtype);
    if (!dt) throw std::invalid_argument("unsupported DLPack dtype");
    if (t.ndim < 0) throw std::invalid_argument("negative ndim in DLTensor");
    Shape shape(t.shape, t.shape + t.ndim);
    Shape strides = t.strides ? Shape(t.strides, t.strides + t.ndim) : c_strides(shape);
    return view_of(std::move(owner), static_cast<char*>(t.data) + t.byte_offset, *dt,
                   std::move(shape), std::move(strides));
  }

  /// A view of raw memory (no ownership unless `owner` is given).
  static Array view_of(std::shared_ptr<void> owner, void* data, DType dtype, Shape shape,
                       Shape strides) {
    if (shape.size() != strides.size()) throw std::invalid_argument("shape/strides rank mismatch");
    shape_size(shape);
    Array a;
    a.storage_ = std::move(owner);
    a.data_ = data;
    a.dtype_ = dtype;
    a.shape_ = std::move(shape);
    a.strides_ = std::move(strides);
    return a;
  }

  DType dtype() const { return dtype_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  const Shape& shape() const { return shape_; }
  std::int64_t shape(int axis) const { return shape_.at(static_cast<std::size_t>(axis)); }
  /// Strides in elements (see the file comment).
  const Shape& strides() const { return strides_; }
  std::int64_t size() const { return shape_size(shape_); }
  std::size_t itemsize() const { return dtype_size(dtype_); }
  /// Bytes of the elements (size * itemsize), regardless of layout.
  std::size_t nbytes() const { return static_cast<std::size_t>(size()) * itemsize(); }

  void* data() const { return data_; }
  template <typename T>
  T* data() const {
    return static_cast<T*>(data_);
  }
  /// The storage owner (null for borrowed memory).
  const std::shared_ptr<void>& storage() const { return storage_; }

  bool is_c_contiguous() const {
    std::int64_t expected = 1;
    for (std::size_t i = shape_.size(); i-- > 0;) {
      if (shape_[i] == 0) return true;
      if (shape_[i] != 1 && strides_[i] != expected) return false;
      expected *= shape_[i];
    }
    return true;
  }

  /// Element offset (in elements from data()) of a multi-index.
  std::int64_t offset_of(const std::int64_t* index) const {
    std::int64_t off = 0;
    for (std::size_t i = 0; i < shape_.size(); ++i) off += index[i] * strides_[i];
    return off;
  }

  /// Pointer to the element at a multi-index.
  void* element_ptr(const std::int64_t* index) const {
    return static_cast<char*>(data_) +
           offset_of(index) * static_cast<std::int64_t>(itemsize());
  }

  /// A view sharing this array's storage; `offset` counts elements from data().
  Array view(Shape shape, Shape strides, std::int64_t offset = 0) const {
    return view_of(storage_, static_cast<char*>(data_) + offset * static_cast<std::int64_t>(itemsize()),
                   dtype_, std::move(shape), std::move(strides));
  }

  /// A C-contiguous copy (always a new buffer).
  Array copy() const {
    Array out = empty(dtype_, shape_);
    copy_into(out);
    return out;
  }

  /// This array if it is C-contiguous, else a C-contiguous copy.
  Array contiguous() const { return is_c_contiguous() ? *this : copy(); }

  /// Copies the elements into `out` (same dtype and shape, any layout).
  void copy_into(Array& out) const {
    if (out.dtype_ != dtype_ || out.shape_ != shape_)
      throw std::invalid_argument("copy_into: dtype or shape mismatch");
    std::size_t isz = itemsize();
    if (is_c_contiguous() && out.is_c_contiguous()) {
      if (nbytes()) std::memmove(out.data_, data_, nbytes());
      return;
    }
    for_each_index([&](const std::int64_t* idx) {
      std::memcpy(out.element_ptr(idx), element_ptr(idx), isz);
    });
  }

  /// Calls f(const int64_t* index) for every multi-index in row-major order.
  template <typename F>
  void for_each_index(F&& f) const {
    const std::size_t nd = shape_.size();
    for (std::int64_t d : shape_)
      if (d == 0) return;
    std::vector<std::int64_t> idx(nd, 0);
    while (true) {
      f(static_cast<const std::int64_t*>(idx.data()));
      std::size_t k = nd;
      while (k > 0) {
        --k;
        if (++idx[k] < shape_[k]) break;
        idx[k] = 0;
        if (k == 0) return;
      }
      if (nd == 0) return;
    }
  }

  /// A non-owning DLTensor describing this array (valid while this Array lives).
  DLTensor dltensor() const {
    DLTensor t{};
    t.data = data_;
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = static_cast<std::int32_t>(shape_.size());
    t.dtype = to_dlpack(dtype_);
    t.shape = const_cast<std::int64_t*>(shape_.data());
    t.strides = const_cast<std::int64_t*>(strides_.data());
    t.byte_offset = 0;
    return t;
  }

 private:
  std::shared_ptr<void> storage_;
  void* data_ = nullptr;
  DType dtype_ = DType::Float64;
  Shape shape_;
  Shape strides_;
};

}  // namespace kiln
