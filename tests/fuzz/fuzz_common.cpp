#include "fuzz_common.h"

#include <unistd.h>

#include <filesystem>

#include "kiln/runtime/npy.hpp"

namespace kiln::fuzz {

const std::string& npy_folder() {
  static const std::string dir = [] {
    namespace fs = std::filesystem;
    const fs::path d = fs::temp_directory_path() / ("kiln-fuzz-npy-" + std::to_string(::getpid()));
    fs::create_directories(d / "sub");
    Array f64 = Array::zeros(DType::Float64, {3});
    for (int i = 0; i < 3; ++i) f64.data<double>()[i] = 0.5 * i;
    npy::save((d / "f64.npy").string(), f64);
    npy::save((d / "i64.npy").string(), Array::zeros(DType::Int64, {2, 2}));
    npy::save((d / "b.npy").string(), Array::zeros(DType::Bool, {}));
    npy::save((d / "sub" / "f32.npy").string(), Array::zeros(DType::Float32, {2}));
    return d.string();
  }();
  return dir;
}

}  // namespace kiln::fuzz
