#include "codegen/gpu/dialect.h"

#include <sstream>

#include "codegen/c_types.h"
#include "codegen/embedded_files.h"
#include "ir/error.h"

namespace kiln {

namespace {


std::string fill(std::string pattern, const std::map<std::string, std::string>& values) {
  for (const auto& [key, value] : values) {
    const std::string token = "{" + key + "}";
    for (std::size_t at = pattern.find(token); at != std::string::npos; at = pattern.find(token, at + value.size()))
      pattern.replace(at, token.size(), value);
  }
  return pattern;
}

// OpenCL C's name of a fixed-width storage type (its vector types are named after it: uchar4).
std::string opencl_scalar_name(const std::string& type) {
  static const std::map<std::string, std::string> names = {
      {"int8_t", "char"},   {"uint8_t", "uchar"},   {"int16_t", "short"}, {"uint16_t", "ushort"},
      {"int32_t", "int"},   {"uint32_t", "uint"},   {"int64_t", "long"},  {"uint64_t", "ulong"},
      {"float", "float"},   {"double", "double"}};
  const auto it = names.find(type);
  KILN_INTERNAL_ASSERT(it != names.end(), "no vector type of " + type);
  return it->second;
}

}  // namespace

const GpuDialect& GpuDialect::get(const std::string& name) {
  static const std::map<std::string, GpuDialect> all = [] {
    std::map<std::string, GpuDialect> out;
    std::istringstream in{std::string(embedded_file("templates/gpu/dialects.txt"))};
    std::string line;
    GpuDialect* current = nullptr;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      if (line[0] == '[') {
        const std::string n = line.substr(1, line.find(']') - 1);
        current = &out[n];
        current->name_ = n;
        continue;
      }
      KILN_INTERNAL_ASSERT(current, "templates/gpu/dialects.txt: a row before the first [dialect]");
      const auto space = line.find(' ');
      std::string value = space == std::string::npos ? "" : line.substr(line.find_first_not_of(' ', space));
      current->rows_[line.substr(0, space)] = value == "-" ? "" : value;
    }
    return out;
  }();
  const auto it = all.find(name);
  KILN_INTERNAL_ASSERT(it != all.end(), "no GPU dialect " + name);
  return it->second;
}

const std::string& GpuDialect::operator[](const std::string& key) const {
  const auto it = rows_.find(key);
  KILN_INTERNAL_ASSERT(it != rows_.end(), "GPU dialect " + name_ + " has no row " + key);
  return it->second;
}

std::string GpuDialect::buffer_param(const std::string& type, const std::string& name, bool read_only) const {
  return fill((*this)["buffer_param"], {{"type", type}, {"name", name}, {"const", read_only ? "const " : ""}});
}

std::string GpuDialect::buffer_bind(const std::string& type, const std::string& name, bool read_only) const {
  return fill((*this)["buffer_bind"], {{"type", type}, {"name", name}, {"const", read_only ? "const " : ""}});
}

std::string GpuDialect::global_ptr(const std::string& type, bool read_only) const {
  return fill((*this)["global_ptr"], {{"type", type}, {"const", read_only ? "const " : ""}});
}

std::string GpuDialect::kernel_ref(const std::string& name) const {
  return fill((*this)["kernel_ref"], {{"name", name}});
}

std::string GpuDialect::vec4_type(const std::string& type) const {
  return fill((*this)["vec4_type"], {{"type", type}, {"cltype", opencl_scalar_name(type)}});
}

std::string GpuDialect::vec4_load(const std::string& type, const std::string& p) const {
  return fill((*this)["vec4_load"], {{"type", type}, {"p", p}});
}

std::string GpuDialect::vec4_store(const std::string& type, const std::string& p, const std::string& v) const {
  return fill((*this)["vec4_store"], {{"type", type}, {"p", p}, {"v", v}});
}

std::string GpuDialect::vec4_lane(const std::string& v, int l) const {
  return fill((*this)["vec4_lane"], {{"v", v}, {"l", std::to_string(l)}});
}

std::string GpuDialect::local_array(const std::string& type, const std::string& name, int size) const {
  return fill((*this)["local_array"], {{"type", type}, {"name", name}, {"size", std::to_string(size)}});
}

TemplateData GpuDialect::data() const {
  TemplateData d;
  for (const char* key : {"kernel", "global_id", "global_size", "local_id", "local_size", "group_id", "num_groups",
                          "barrier"})
    d.set(key, (*this)[key]);
  d.set("shuffle", has_shuffle());
  return d;
}

std::string GpuDialect::prelude() const {
  return std::string(embedded_file((*this)["prelude"])) + "\n" + std::string(embedded_file("templates/gpu/scalar_math.h"));
}

std::string gpu_storage_type(DType dt) { return dt == DType::Bool ? "uint8_t" : ctype(dt); }

}  // namespace kiln
