#include "ir/type.h"

namespace kiln {

std::string_view type_kind_name(TypeKind kind) {
  switch (kind) {
    case TypeKind::Tensor: return "tensor";
    case TypeKind::Rng: return "rng";
    case TypeKind::None: return "none";
  }
  return "?";
}

TensorType rng_type() {
  TensorType t(DType::UInt64, {kRngStateWords});
  t.kind = TypeKind::Rng;
  return t;
}

TensorType none_type() {
  TensorType t(DType::Bool, {0});
  t.kind = TypeKind::None;
  return t;
}

bool TensorType::fully_static() const {
  for (auto d : shape)
    if (d == kUnknownLength) return false;
  return true;
}

bool TensorType::compatible_with(const TensorType& o) const {
  if (kind != o.kind || dtype != o.dtype || shape.size() != o.shape.size()) return false;
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (shape[i] != kUnknownLength && o.shape[i] != kUnknownLength && shape[i] != o.shape[i])
      return false;
  return true;
}

bool TensorType::at_least_as_specific_as(const TensorType& o) const {
  if (!compatible_with(o)) return false;
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (o.shape[i] != kUnknownLength && shape[i] == kUnknownLength) return false;
  return true;
}

TensorType TensorType::merged_with(const TensorType& o) const {
  TensorType t = *this;
  for (std::size_t i = 0; i < shape.size() && i < o.shape.size(); ++i)
    if (t.shape[i] == kUnknownLength) t.shape[i] = o.shape[i];
  return t;
}

bool TensorType::accepts(const Array& a) const {
  if (a.dtype() != dtype || a.ndim() != ndim()) return false;
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (shape[i] != kUnknownLength && shape[i] != a.shape()[i]) return false;
  return true;
}

std::string TensorType::shape_str() const {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += shape[i] == kUnknownLength ? "?" : std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

std::string TensorType::str() const {
  if (kind == TypeKind::Rng) return "RandomGeneratorType";
  if (kind == TypeKind::None) return "NoneTypeT";
  static const char* const kinds[] = {"Scalar", "Vector", "Matrix", "Tensor3", "Tensor4",
                                      "Tensor5", "Tensor6", "Tensor7"};
  std::string name = ndim() < 8 ? kinds[ndim()] : "Tensor" + std::to_string(ndim());
  return name + "(" + std::string(dtype_name(dtype)) + ", shape=" + shape_str() + ")";
}

}  // namespace kiln
