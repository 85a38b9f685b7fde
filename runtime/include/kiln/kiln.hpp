// kiln.hpp — a small header-only C++ layer over kiln.h: an owning/borrowing tensor type for
// calling generated libraries from C++, and the exception their typed wrappers throw.
// Self-contained C++17; embedded into every generated header (guarded), so a program using a
// generated library needs nothing else from kiln.
#ifndef KILN_CPP_HPP_
#define KILN_CPP_HPP_

#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/kiln.h"

namespace kiln {

/// A failed call of a generated library: status() is a kiln_status, what() the message.
class CallError : public std::runtime_error {
 public:
  CallError(int32_t status, const std::string& msg)
      : std::runtime_error(std::string(kiln_status_name(status)) + ": " + msg), status_(status) {}
  int32_t status() const { return status_; }

 private:
  int32_t status_;
};

template <typename T>
struct dtype_of;
template <> struct dtype_of<bool> { static constexpr kiln_dtype value = KILN_BOOL; };
template <> struct dtype_of<int8_t> { static constexpr kiln_dtype value = KILN_INT8; };
template <> struct dtype_of<int16_t> { static constexpr kiln_dtype value = KILN_INT16; };
template <> struct dtype_of<int32_t> { static constexpr kiln_dtype value = KILN_INT32; };
template <> struct dtype_of<int64_t> { static constexpr kiln_dtype value = KILN_INT64; };
template <> struct dtype_of<uint8_t> { static constexpr kiln_dtype value = KILN_UINT8; };
template <> struct dtype_of<uint16_t> { static constexpr kiln_dtype value = KILN_UINT16; };
template <> struct dtype_of<uint32_t> { static constexpr kiln_dtype value = KILN_UINT32; };
template <> struct dtype_of<uint64_t> { static constexpr kiln_dtype value = KILN_UINT64; };
template <> struct dtype_of<float> { static constexpr kiln_dtype value = KILN_FLOAT32; };
template <> struct dtype_of<double> { static constexpr kiln_dtype value = KILN_FLOAT64; };
template <> struct dtype_of<std::complex<float>> { static constexpr kiln_dtype value = KILN_COMPLEX64; };
template <> struct dtype_of<std::complex<double>> { static constexpr kiln_dtype value = KILN_COMPLEX128; };

inline DLDataType dl_dtype(kiln_dtype dt) {
  static const DLDataType table[] = {
      {6, 8, 1},  {kDLInt, 8, 1},  {kDLInt, 16, 1},  {kDLInt, 32, 1},  {kDLInt, 64, 1},   {kDLUInt, 8, 1},
      {kDLUInt, 16, 1}, {kDLUInt, 32, 1}, {kDLUInt, 64, 1}, {kDLFloat, 32, 1}, {kDLFloat, 64, 1}, {kDLFloat, 16, 1},
      {kDLComplex, 64, 1}, {kDLComplex, 128, 1}};
  return table[static_cast<int>(dt)];
}

inline std::size_t dtype_bytes(kiln_dtype dt) {
  static const std::size_t sizes[] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 4, 8, 2, 8, 16};
  return sizes[static_cast<int>(dt)];
}

/// An n-d tensor in CPU memory: either owning (allocated here, or handed over by a generated
/// library as a DLManagedTensor) or borrowing memory the caller keeps alive. Copies share the
/// same memory (like a shared_ptr); use clone() for a deep copy.
class Tensor {
 public:
  Tensor() = default;

  /// A new C-contiguous tensor of zeros.
  static Tensor zeros(kiln_dtype dtype, std::vector<int64_t> shape) {
    Tensor t;
    t.shape_ = std::move(shape);
    t.dtype_ = dtype;
    std::size_t bytes = static_cast<std::size_t>(t.size()) * dtype_bytes(dtype);
    std::size_t rounded = (bytes + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, rounded ? rounded : 64);
    if (!p) throw std::bad_alloc();
    std::memset(p, 0, rounded ? rounded : 64);
    t.owner_ = std::shared_ptr<void>(p, [](void* q) { std::free(q); });
    t.data_ = p;
    return t;
  }

  /// A 1-d tensor holding `values`, or of `shape` when given (row-major).
  template <typename T>
  static Tensor from(const std::vector<T>& values, std::vector<int64_t> shape = {}) {
    if (shape.empty()) shape = {static_cast<int64_t>(values.size())};
    Tensor t = zeros(dtype_of<T>::value, std::move(shape));
    if (static_cast<std::size_t>(t.size()) != values.size())
      throw std::invalid_argument("kiln::Tensor::from: shape does not match the number of values");
    if constexpr (std::is_same_v<T, bool>) {
      for (std::size_t i = 0; i < values.size(); ++i) t.data<bool>()[i] = values[i];
    } else if (!values.empty()) {
      std::memcpy(t.data_, values.data(), values.size() * sizeof(T));
    }
    return t;
  }
  template <typename T>
  static Tensor from(std::initializer_list<T> values, std::vector<int64_t> shape = {}) {
    return from(std::vector<T>(values), std::move(shape));
  }

  /// A 0-d tensor.
  template <typename T>
  static Tensor scalar(T value) {
    Tensor t = zeros(dtype_of<T>::value, {});
    *t.data<T>() = value;
    return t;
  }

  /// Borrows memory the caller keeps alive (strides in elements; empty = C-contiguous).
  static Tensor wrap(void* data, kiln_dtype dtype, std::vector<int64_t> shape,
                     std::vector<int64_t> strides = {}) {
    Tensor t;
    t.data_ = data;
    t.dtype_ = dtype;
    t.shape_ = std::move(shape);
    t.strides_ = std::move(strides);
    return t;
  }

  /// Takes ownership of a tensor handed over by a generated library.
  static Tensor adopt(DLManagedTensor* managed) {
    Tensor t;
    if (!managed) return t;
    const DLTensor& dl = managed->dl_tensor;
    t.data_ = static_cast<char*>(dl.data) + dl.byte_offset;
    t.shape_.assign(dl.shape, dl.shape + dl.ndim);
    if (dl.strides) t.strides_.assign(dl.strides, dl.strides + dl.ndim);
    t.dtype_ = from_dl(dl.dtype);
    t.owner_ = std::shared_ptr<void>(managed, [](void* m) {
      auto* mt = static_cast<DLManagedTensor*>(m);
      if (mt->deleter) mt->deleter(mt);
    });
    return t;
  }

  bool defined() const { return data_ != nullptr || !shape_.empty(); }
  kiln_dtype dtype() const { return dtype_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t shape(int i) const { return shape_.at(static_cast<std::size_t>(i)); }
  int64_t size() const {
    int64_t n = 1;
    for (int64_t d : shape_) n *= d;
    return n;
  }
  /// Element strides (C-contiguous ones when the tensor has none of its own).
  std::vector<int64_t> strides() const {
    if (!strides_.empty()) return strides_;
    std::vector<int64_t> s(shape_.size());
    int64_t acc = 1;
    for (std::size_t i = shape_.size(); i-- > 0;) {
      s[i] = acc;
      acc *= shape_[i] > 0 ? shape_[i] : 1;
    }
    return s;
  }
  void* raw_data() const { return data_; }
  template <typename T>
  T* data() const {
    if (dtype_of<std::remove_const_t<T>>::value != dtype_)
      throw std::invalid_argument("kiln::Tensor::data: wrong element type");
    return static_cast<T*>(data_);
  }
  /// Element at a multi-index (bounds-checked).
  template <typename T>
  T at(std::initializer_list<int64_t> index) const {
    if (static_cast<int>(index.size()) != ndim()) throw std::out_of_range("kiln::Tensor::at: wrong rank");
    auto st = strides();
    int64_t off = 0;
    std::size_t k = 0;
    for (int64_t i : index) {
      if (i < 0 || i >= shape_[k]) throw std::out_of_range("kiln::Tensor::at: index out of range");
      off += i * st[k++];
    }
    return data<const T>()[off];
  }
  /// The single element of a one-element tensor.
  template <typename T>
  T item() const {
    if (size() != 1) throw std::invalid_argument("kiln::Tensor::item: not a single element");
    return data<const T>()[0];
  }
  /// All elements in row-major order.
  template <typename T>
  std::vector<T> to_vector() const {
    std::vector<T> out;
    out.reserve(static_cast<std::size_t>(size()));
    auto st = strides();
    std::vector<int64_t> idx(shape_.size(), 0);
    const T* base = data<const T>();
    for (int64_t n = 0; n < size(); ++n) {
      int64_t off = 0;
      for (std::size_t k = 0; k < idx.size(); ++k) off += idx[k] * st[k];
      out.push_back(base[off]);
      for (std::size_t k = idx.size(); k-- > 0;) {
        if (++idx[k] < shape_[k]) break;
        idx[k] = 0;
      }
    }
    return out;
  }

  /// A DLTensor describing this tensor (valid while the tensor lives).
  DLTensor dl() const {
    DLTensor t{};
    t.data = data_;
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = static_cast<int32_t>(shape_.size());
    t.dtype = dl_dtype(dtype_);
    t.shape = const_cast<int64_t*>(shape_.data());
    t.strides = strides_.empty() ? nullptr : const_cast<int64_t*>(strides_.data());
    t.byte_offset = 0;
    return t;
  }

  static kiln_dtype from_dl(DLDataType t) {
    for (int d = 0; d <= KILN_COMPLEX128; ++d) {
      DLDataType e = dl_dtype(static_cast<kiln_dtype>(d));
      if (e.code == t.code && e.bits == t.bits && t.lanes == 1) return static_cast<kiln_dtype>(d);
    }
    throw std::invalid_argument("kiln::Tensor: unsupported DLPack dtype");
  }

 private:
  std::shared_ptr<void> owner_;
  void* data_ = nullptr;
  kiln_dtype dtype_ = KILN_FLOAT64;
  std::vector<int64_t> shape_;
  std::vector<int64_t> strides_;
};

}  // namespace kiln

#endif  // KILN_CPP_HPP_
