// How C-family backends spell kiln's types and values: element types, DLPack dtypes, the
// generated runtime's tensor views and exact literals.
#pragma once

#include <string>

#include "ir/node.h"

namespace kiln {

/// C++ element type of a dtype ("double", "int8_t", "bool").
std::string ctype(DType dt);
/// A DLDataType initializer ("DLDataType{2, 64, 1}").
std::string dl_dtype_literal(DType dt);
/// `kg::Tensor<ctype, ndim>` for a variable.
std::string tensor_type(const Variable& v);
/// A C++ literal for a 0-d value of any dtype (exact: hex floats, explicit casts; C casts and
/// L suffixes when `c_style`, for the GPU dialects).
std::string scalar_literal(const Array& value0d, bool c_style = false);

}  // namespace kiln
