// Small array helpers that several ops' perform implementations share.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "kiln/runtime/array.hpp"

namespace kiln {

/// A C-contiguous copy converted to `to` (kiln_scalar::convert semantics: saturating float ->
/// int, NaN -> 0, nonzero -> true). Returns `a` itself when it already has that dtype and is
/// C-contiguous.
Array astype(const Array& a, DType to);

/// Row i of `a` along its first dimension, as a view (no copy).
Array row_view(const Array& a, std::int64_t i);

/// A broadcast view of `a` with `shape` (stride 0 along broadcast dims); NumPy's rules.
/// Throws RuntimeFailure when the shapes do not broadcast.
Array broadcast_to(const Array& a, const Shape& shape);

/// The broadcast of several shapes (NumPy's rules); RuntimeFailure if they do not broadcast.
Shape broadcast_shapes(const std::vector<Shape>& shapes);

/// Reads a 0-d (or one-element) integer or bool array as int64. Floats are refused.
std::int64_t scalar_to_int64(const Array& a);
/// Reads a 0-d array of any dtype as double.
double scalar_to_double(const Array& a);

/// A 0-d array holding v converted to dtype dt.
Array make_scalar_array(DType dt, double v);
Array make_int64_scalar(std::int64_t v);

/// Reads element `flat` (row-major position) of any array as double / int64.
double element_as_double(const Array& a, const std::int64_t* index);
/// One element as a complex number (a real one with imaginary part 0).
std::complex<double> element_as_complex(const Array& a, const std::int64_t* index);

/// A Python slice resolved against a length: elements start, start+step, ... (count of them).
struct SliceRange {
  std::int64_t start;
  std::int64_t step;
  std::int64_t count;
};
/// Python's slice.indices(length) (negative values count from the end, out-of-range bounds
/// clip, step may be negative but not 0 — throws RuntimeFailure for a zero step).
SliceRange resolve_slice(std::optional<std::int64_t> start, std::optional<std::int64_t> stop,
                         std::optional<std::int64_t> step, std::int64_t length);

/// Normalises an axis against ndim (negative counts from the end); throws std::out_of_range.
int normalize_axis(std::int64_t axis, int ndim);

}  // namespace kiln
