#include "codegen/gpu/row_layout.h"

#include <algorithm>

namespace kiln {

GpuRowDims gpu_row_dims(const std::vector<int>& row, int ndim) {
  GpuRowDims r;
  for (int dim = 0; dim < ndim; ++dim)
    (std::find(row.begin(), row.end(), dim) != row.end() ? r.row : r.across).push_back(dim);
  return r;
}

std::string gpu_decode_index(const std::string& var, const std::string& p, std::size_t count,
                             const std::vector<std::string>& tensors, const std::string& o, const std::string& indent) {
  std::string out;
  for (std::size_t k = count; k-- > 0;) {
    const std::string i = std::to_string(k), len = p + "n" + i;
    const std::string pos = k == 0 ? var : "(" + var + " % " + len + ")";
    for (const std::string& t : tensors) out += indent + o + t + " += " + pos + " * " + p + t + i + ";\n";
    if (k > 0) out += indent + var + " /= " + len + ";\n";
  }
  return out;
}

std::string gpu_row_start(const std::vector<std::string>& tensors, std::size_t across, const std::string& indent) {
  std::string out = indent + "int64_t ";
  if (across > 0) out += "rest = row, ";
  for (std::size_t t = 0; t < tensors.size(); ++t) out += (t ? ", b" : "b") + tensors[t] + " = 0";
  return out + ";\n" + gpu_decode_index("rest", "k", across, tensors, "b", indent);
}

std::string gpu_row_element(const std::vector<std::string>& tensors, std::size_t along, const std::string& indent) {
  std::string out = "int64_t ";
  if (along > 0) out += "kk = k, ";
  for (std::size_t t = 0; t < tensors.size(); ++t) out += (t ? ", o" : "o") + tensors[t] + " = b" + tensors[t];
  out += ";\n" + gpu_decode_index("kk", "r", along, tensors, "o", indent);
  out.pop_back();
  return out;
}

void gpu_dim_params(const std::vector<int>& dims, const std::string& p, const std::vector<std::string>& tensors,
                    const std::function<std::string(int dim)>& length,
                    const std::function<std::string(std::size_t t, std::size_t i, int dim)>& stride,
                    std::string& params, std::vector<std::string>& args) {
  for (std::size_t k = 0; k < dims.size(); ++k) {
    const std::string i = std::to_string(k);
    params += ", const int64_t " + p + "n" + i;
    args.push_back(length(dims[k]));
    for (std::size_t t = 0; t < tensors.size(); ++t) {
      params += ", const int64_t " + p + tensors[t] + i;
      args.push_back(stride(t, k, dims[k]));
    }
  }
}

void gpu_row_params(const GpuRowDims& dims, const std::string& x, const std::string& y, bool y_compact,
                    std::string& params, std::vector<std::string>& args) {
  const auto length = [&](int dim) { return x + ".shape[" + std::to_string(dim) + "]"; };
  gpu_dim_params(dims.across, "k", {"x", "y"}, length, [&](std::size_t t, std::size_t i, int dim) {
    return t == 0 ? x + ".strides[" + std::to_string(dim) + "]"
                  : y + ".strides[" + std::to_string(y_compact ? static_cast<int>(i) : dim) + "]";
  }, params, args);
  gpu_dim_params(dims.row, "r", {"x"}, length, [&](std::size_t, std::size_t, int dim) {
    return x + ".strides[" + std::to_string(dim) + "]";
  }, params, args);
}

}  // namespace kiln
