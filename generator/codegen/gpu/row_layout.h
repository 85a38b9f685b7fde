// Rows of a tensor for the GPU row kernels (softmax, argmax, cumulative ops): the dimensions
// along a row and those numbering the rows, decoded in a kernel from flat indices through
// lengths and strides passed as parameters, so any layout is read in place.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace kiln {

/// A row kernel's dimensions: `row` run along one row (C order), `across` number the rows.
struct GpuRowDims {
  std::vector<int> row, across;
};

/// The rows of a rank-`ndim` tensor along the dimensions `row` (sorted).
GpuRowDims gpu_row_dims(const std::vector<int>& row, int ndim);

/// Statements adding to `<o><tensor>` each tensor's offset of flat index `var` (C order over
/// `count` dimensions of lengths `<p>n<i>` and strides `<p><tensor><i>`), dividing `var`
/// down as it goes. The outermost dimension needs no modulo.
std::string gpu_decode_index(const std::string& var, const std::string& p, std::size_t count,
                             const std::vector<std::string>& tensors, const std::string& o, const std::string& indent);

/// `int64_t rest = row, b<t> = 0...;` and the decode of row `row` into base offsets `b<t>`
/// (dimensions `k...`; no `rest` without them).
std::string gpu_row_start(const std::vector<std::string>& tensors, std::size_t across, const std::string& indent);
/// `int64_t kk = k, o<t> = b<t>...;` and the decode of element `k` of the row into offsets
/// `o<t>` (dimensions `r...`; no `kk` without them), without a final newline.
std::string gpu_row_element(const std::vector<std::string>& tensors, std::size_t along, const std::string& indent);

/// Kernel parameters (`, const int64_t <p>n<i>, <p><tensor><i>...`) and their host arguments
/// for dimensions `dims`: the length of `dims[i]` is `length(dims[i])`, tensor t's stride
/// `stride(t, i, dims[i])`.
void gpu_dim_params(const std::vector<int>& dims, const std::string& p, const std::vector<std::string>& tensors,
                    const std::function<std::string(int dim)>& length,
                    const std::function<std::string(std::size_t t, std::size_t i, int dim)>& stride,
                    std::string& params, std::vector<std::string>& args);

/// The parameters and host arguments of a row kernel reading `x` (host name) along rows and
/// writing `y` once per row or along the row by a step of its own: x's lengths and strides for
/// every dimension, y's strides for the dimensions numbering rows (y's dimension i, the i-th of
/// them, when `y_compact`, as y lacks the row's dimensions; else the same dimension as x's).
void gpu_row_params(const GpuRowDims& dims, const std::string& x, const std::string& y, bool y_compact,
                    std::string& params, std::vector<std::string>& args);

}  // namespace kiln
