// NumPy's str() of an array, as PyTensor prints constants: "1.0" and "2" for 0-d values (the
// scalar's own str), "[1.  2.5 3. ]", "[ True False]", "[[1 2]\n [3 4]]" for arrays
// (array2string with NumPy's default print options: precision 8, 75 columns, summarised with
// "..." above 1000 elements, 3 items at each edge).
#pragma once

#include <string>

#include "kiln/runtime/array.hpp"

namespace kiln {

/// str(a) as NumPy prints it (NumPy >= 1.14 formatting, legacy mode off).
std::string numpy_str(const Array& a);

/// Python's repr of one float (shortest round-trip digits; "1.0", "1e-05", "1e+16", "nan",
/// "-inf"). `bits` (16, 32, 64) selects that float's shortest digits, as NumPy's scalars print.
std::string python_float_repr(double v, int bits = 64);

/// PyTensor's Constant.__str__ of a value: numpy_str with newlines removed, abbreviated to
/// "first10 ... last10" (each side stripped) when longer than 20 characters; `name{value}`
/// for a named constant.
std::string constant_str(const Array& value, const std::string& name = {});

}  // namespace kiln
