#include "fixtures.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <cstring>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "kiln/runtime/array_print.hpp"
#include "io/graph_load.h"
#include "kiln/runtime/npy.hpp"
#include "ops/array_util.h"

namespace kiln::testing {

namespace fs = std::filesystem;
using Json = nlohmann::json;

std::vector<std::string> list_fixture_cases(const std::string& filter) {
  std::vector<std::string> out;
  fs::path root = fs::path(KILN_FIXTURES_DIR) / "cases";
  if (!fs::exists(root)) return out;
  for (const auto& fam : fs::directory_iterator(root)) {
    if (!fam.is_directory()) continue;
    for (const auto& c : fs::directory_iterator(fam.path())) {
      if (!fs::exists(c.path() / "case.json")) continue;
      std::string name = fam.path().filename().string() + "/" + c.path().filename().string();
      // The filter is one or more substrings separated by ',' (scripts/sanitize runs a subset).
      bool match = filter.empty();
      for (std::size_t start = 0; !match && start <= filter.size();) {
        const std::size_t end = std::min(filter.find(',', start), filter.size());
        match = end > start && name.find(filter.substr(start, end - start)) != std::string::npos;
        start = end + 1;
      }
      if (match) out.push_back(c.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

Array apply_view(const Array& base, const std::string& view_json) {
  Json view = Json::parse(view_json);
  if (view.is_null()) return base;
  if (view.contains("transpose")) {
    Shape shape, strides;
    for (const auto& a : view["transpose"]) {
      shape.push_back(base.shape()[a.get<std::size_t>()]);
      strides.push_back(base.strides()[a.get<std::size_t>()]);
    }
    return base.view(shape, strides);
  }
  if (view.contains("slices")) {
    Shape shape = base.shape(), strides = base.strides();
    std::int64_t offset = 0;
    const auto& slices = view["slices"];
    for (std::size_t d = 0; d < slices.size(); ++d) {
      auto get = [&](std::size_t k) -> std::optional<std::int64_t> {
        if (k >= slices[d].size() || slices[d][k].is_null()) return std::nullopt;
        return slices[d][k].get<std::int64_t>();
      };
      SliceRange r = resolve_slice(get(0), get(1), get(2), shape[d]);
      offset += r.start * strides[d];
      shape[d] = r.count;
      strides[d] *= r.step;
    }
    return base.view(shape, strides, offset);
  }
  throw std::runtime_error("unknown view " + view_json);
}

FixtureCase load_fixture_case(const std::string& dir) {
  std::ifstream in(fs::path(dir) / "case.json");
  Json spec = Json::parse(in);
  FixtureCase c;
  c.dir = dir;
  c.name = fs::path(dir).parent_path().filename().string() + "/" + fs::path(dir).filename().string();
  c.graph = load_graph_file((fs::path(dir) / "graph.json").string());
  for (const auto& input : c.graph.inputs()) {
    const std::string& id = input->file_id();
    if (!spec["inputs"].contains(id)) throw std::runtime_error(c.name + ": no value for input " + id);
    const Json& entry = spec["inputs"][id];
    Array base = npy::load((fs::path(dir) / entry["file"].get<std::string>()).string());
    c.inputs.push_back(apply_view(base, entry.value("view", Json()).dump()));
  }
  if (spec.contains("outputs"))
    for (const auto& f : spec["outputs"]) c.expected.push_back(npy::load((fs::path(dir) / f.get<std::string>()).string()));
  if (spec.contains("rtol")) c.rtol = spec["rtol"].get<double>();
  if (spec.contains("atol")) c.atol = spec["atol"].get<double>();
  if (spec.contains("error")) c.error = spec["error"].get<std::string>();
  return c;
}

std::optional<std::string> compare_arrays(const Array& actual, const Array& expected,
                                          std::optional<double> rtol, std::optional<double> atol) {
  if (actual.dtype() != expected.dtype())
    return "dtype " + std::string(dtype_name(actual.dtype())) + ", expected " +
           std::string(dtype_name(expected.dtype()));
  if (actual.shape() != expected.shape())
    return "shape " + shape_str(actual.shape()) + ", expected " + shape_str(expected.shape());
  const bool single = actual.dtype() == DType::Float32 || actual.dtype() == DType::Complex64;
  const double rt = rtol.value_or(single ? 1e-5 : 1e-10);
  const double at = atol.value_or(single ? 1e-6 : 1e-12);
  std::optional<std::string> bad;
  actual.for_each_index([&](const std::int64_t* idx) {
    if (bad) return;
    bool ok;
    double a = 0, e = 0;
    if (is_float(actual.dtype())) {
      a = element_as_double(actual, idx);
      e = element_as_double(expected, idx);
      ok = (std::isnan(a) && std::isnan(e)) || a == e ||
           (std::isfinite(a) && std::isfinite(e) && std::fabs(a - e) <= at + rt * std::fabs(e));
    } else if (is_complex(actual.dtype())) {
      // As numpy.testing.assert_allclose: |a - e| <= atol + rtol * |e| on the complex values,
      // when all parts are finite; a non-finite part must match (nan with nan).
      const auto read = [](const Array& arr, const std::int64_t* at_idx) {
        if (arr.dtype() == DType::Complex64)
          return std::complex<double>(*static_cast<const std::complex<float>*>(arr.element_ptr(at_idx)));
        return *static_cast<const std::complex<double>*>(arr.element_ptr(at_idx));
      };
      const std::complex<double> ca = read(actual, idx), ce = read(expected, idx);
      const auto part = [](double x, double y) { return (std::isnan(x) && std::isnan(y)) || x == y || (std::isfinite(x) && std::isfinite(y)); };
      ok = part(ca.real(), ce.real()) && part(ca.imag(), ce.imag());
      if (ok && std::isfinite(ca.real()) && std::isfinite(ca.imag()) && std::isfinite(ce.real()) && std::isfinite(ce.imag()))
        ok = std::abs(ca - ce) <= at + rt * std::abs(ce);
      else if (ok)
        ok = (!std::isfinite(ce.real()) || ca.real() == ce.real() || std::isnan(ce.real()) ||
              std::fabs(ca.real() - ce.real()) <= at + rt * std::fabs(ce.real())) &&
             (!std::isfinite(ce.imag()) || ca.imag() == ce.imag() || std::isnan(ce.imag()) ||
              std::fabs(ca.imag() - ce.imag()) <= at + rt * std::fabs(ce.imag()));
    } else {
      ok = std::memcmp(actual.element_ptr(idx), expected.element_ptr(idx), actual.itemsize()) == 0;
    }
    if (!ok) {
      std::string where;
      for (int d = 0; d < actual.ndim(); ++d) where += (d ? ", " : "") + std::to_string(idx[d]);
      bad = "mismatch at [" + where + "]";
    }
  });
  if (bad) *bad += "\nactual:   " + format_array(actual) + "\nexpected: " + format_array(expected);
  return bad;
}

}  // namespace kiln::testing
