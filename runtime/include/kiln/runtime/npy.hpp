// kiln runtime: reading and writing NumPy .npy files (format versions 1.0, 2.0 and 3.0;
// little-endian data of every kiln dtype; C or Fortran order). Anything else — big-endian data,
// object arrays, structured dtypes, truncated files — is refused with a message saying what.
// Header-only; used by the CLI, the tests and the generated standalone programs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "kiln/runtime/array.hpp"

namespace kiln {
namespace npy {

/// A malformed or unsupported .npy file.
class NpyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {

inline const char* descr_of(DType dt) {
  switch (dt) {
    case DType::Bool: return "|b1";
    case DType::Int8: return "|i1";
    case DType::Int16: return "<i2";
    case DType::Int32: return "<i4";
    case DType::Int64: return "<i8";
    case DType::UInt8: return "|u1";
    case DType::UInt16: return "<u2";
    case DType::UInt32: return "<u4";
    case DType::UInt64: return "<u8";
    case DType::Float32: return "<f4";
    case DType::Float64: return "<f8";
    case DType::Float16: return "<f2";
    case DType::Complex64: return "<c8";
    case DType::Complex128: return "<c16";
  }
  return "?";
}

inline DType dtype_of_descr(const std::string& d) {
  if (d.size() < 2) throw NpyError("unsupported .npy dtype '" + d + "'");
  char order = d[0];
  std::string code = d.substr(1);
  if (order == '>' && code != "b1" && code != "i1" && code != "u1")
    throw NpyError("big-endian .npy data ('" + d + "') is not supported; save it little-endian");
  if (order != '<' && order != '|' && order != '=' && order != '>')
    throw NpyError("unsupported .npy dtype '" + d + "'");
  if (code == "b1") return DType::Bool;
  if (code == "i1") return DType::Int8;
  if (code == "i2") return DType::Int16;
  if (code == "i4") return DType::Int32;
  if (code == "i8") return DType::Int64;
  if (code == "u1") return DType::UInt8;
  if (code == "u2") return DType::UInt16;
  if (code == "u4") return DType::UInt32;
  if (code == "u8") return DType::UInt64;
  if (code == "f4") return DType::Float32;
  if (code == "f8") return DType::Float64;
  if (code == "f2") return DType::Float16;
  if (code == "c8") return DType::Complex64;
  if (code == "c16") return DType::Complex128;
  throw NpyError("unsupported .npy dtype '" + d +
                 "' (kiln supports bool, [u]int8..64, float16, float32, float64, complex64, complex128)");
}

// A tiny parser for the header's Python dict literal:
// {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }
struct HeaderParser {
  const std::string& s;
  std::size_t i = 0;
  explicit HeaderParser(const std::string& text) : s(text) {}
  void ws() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r')) ++i;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw NpyError("malformed .npy header (" + what + "): " + s);
  }
  void expect(char c) {
    ws();
    if (i >= s.size() || s[i] != c) fail(std::string("expected '") + c + "'");
    ++i;
  }
  bool peek(char c) {
    ws();
    return i < s.size() && s[i] == c;
  }
  std::string str() {
    ws();
    if (i >= s.size() || (s[i] != '\'' && s[i] != '"')) fail("expected a string");
    char q = s[i++];
    std::size_t start = i;
    while (i < s.size() && s[i] != q) ++i;
    if (i >= s.size()) fail("unterminated string");
    return s.substr(start, i++ - start);
  }
  bool boolean() {
    ws();
    if (s.compare(i, 4, "True") == 0) {
      i += 4;
      return true;
    }
    if (s.compare(i, 5, "False") == 0) {
      i += 5;
      return false;
    }
    fail("expected True or False");
  }
  Shape tuple() {
    expect('(');
    Shape out;
    while (!peek(')')) {
      ws();
      std::size_t start = i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
      if (start == i) fail("expected a length");
      if (i - start > 18) fail("length too large");
      out.push_back(std::stoll(s.substr(start, i - start)));
      // Python writes a trailing 'L' for longs in old files.
      if (i < s.size() && s[i] == 'L') ++i;
      if (peek(',')) ++i;
    }
    expect(')');
    return out;
  }
};

/// Where a .npy file's header ends (and its data starts), from its first 10 or 12 bytes: the
/// magic string, the format version and the header length.
inline std::size_t header_end(const unsigned char* p, std::size_t size) {
  if (size < 10 || std::memcmp(p, "\x93NUMPY", 6) != 0) throw NpyError("not a .npy file (bad magic)");
  const int major = p[6];
  if (major == 1) return 10 + (static_cast<std::size_t>(p[8]) | (static_cast<std::size_t>(p[9]) << 8));
  if (major != 2 && major != 3)
    throw NpyError("unsupported .npy format version " + std::to_string(major) + "." + std::to_string(p[7]));
  if (size < 12) throw NpyError("truncated .npy header");
  return 12 + (static_cast<std::size_t>(p[8]) | (static_cast<std::size_t>(p[9]) << 8) |
               (static_cast<std::size_t>(p[10]) << 16) | (static_cast<std::size_t>(p[11]) << 24));
}

/// What a .npy header says about the array that follows it.
struct Header {
  DType dtype;
  Shape shape;
  bool fortran_order;
  std::size_t data_offset;  // = header_end()
  std::size_t data_bytes;   // checked against NumPy's size limit
};

/// Parses the preamble and header of .npy bytes; `size` need only reach the header's end.
inline Header parse_header(const unsigned char* p, std::size_t size) {
  const std::size_t end = header_end(p, size);
  if (end > size) throw NpyError("truncated .npy header");
  const std::size_t start = p[6] == 1 ? 10 : 12;
  std::string text(reinterpret_cast<const char*>(p + start), end - start);
  HeaderParser hp(text);
  std::string descr;
  bool fortran = false, have_descr = false, have_order = false, have_shape = false;
  Shape shape;
  hp.expect('{');
  while (!hp.peek('}')) {
    std::string key = hp.str();
    hp.expect(':');
    if (key == "descr") {
      if (hp.peek('[')) throw NpyError("structured .npy dtypes are not supported");
      descr = hp.str();
      have_descr = true;
    } else if (key == "fortran_order") {
      fortran = hp.boolean();
      have_order = true;
    } else if (key == "shape") {
      shape = hp.tuple();
      have_shape = true;
    } else {
      hp.fail("unknown key '" + key + "'");
    }
    if (hp.peek(',')) ++hp.i;
  }
  if (!have_descr || !have_order || !have_shape) hp.fail("missing descr, fortran_order or shape");
  const DType dt = dtype_of_descr(descr);
  std::size_t data_bytes;
  try {
    data_bytes = static_cast<std::size_t>(checked_nbytes(shape, dtype_size(dt)));  // NumPy's limit
  } catch (const std::exception& e) {
    throw NpyError(e.what());
  }
  return Header{dt, std::move(shape), fortran, end, data_bytes};
}

/// The array of .npy bytes `p` (`size` of them) whose header `h` is, as a C-contiguous Array.
inline Array read_array(const Header& h, const unsigned char* p, std::size_t size) {
  if (size - h.data_offset < h.data_bytes)
    throw NpyError("truncated .npy data: expected " + std::to_string(h.data_bytes) + " bytes, found " +
                   std::to_string(size - h.data_offset));
  Array out = Array::empty(h.dtype, h.shape);
  const unsigned char* data = p + h.data_offset;
  if (h.dtype == DType::Bool)
    for (std::size_t k = 0; k < h.data_bytes; ++k)
      if (data[k] > 1) throw NpyError("bool .npy data holds a byte other than 0 or 1");
  if (!h.fortran_order || h.shape.size() <= 1) {
    if (h.data_bytes) std::memcpy(out.data(), data, h.data_bytes);
  } else {
    Shape fstrides(h.shape.size());
    std::int64_t s = 1;
    for (std::size_t k = 0; k < h.shape.size(); ++k) {
      fstrides[k] = s;
      s *= h.shape[k];
    }
    Array f = Array::view_of(nullptr, const_cast<unsigned char*>(data), h.dtype, h.shape, fstrides);
    f.copy_into(out);
  }
  return out;
}

}  // namespace detail

/// Parses .npy bytes into a C-contiguous Array.
inline Array parse(const void* bytes, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(bytes);
  return detail::read_array(detail::parse_header(p, size), p, size);
}

/// Reads a .npy file: its preamble, then its header, then exactly the data bytes the header
/// announces (in chunks, so a file shorter than it claims fails before a large allocation).
/// Never reads past that: /dev/zero, a FIFO or a huge file is refused or read only as far as
/// the array goes.
inline Array load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw NpyError("cannot open " + path);
  std::vector<char> bytes;
  // Appends up to `n` bytes; returns how many arrived.
  auto read_more = [&](std::size_t n) {
    constexpr std::size_t kChunk = std::size_t(1) << 24;
    std::size_t got = 0;
    while (got < n && in) {
      const std::size_t want = std::min(kChunk, n - got), at = bytes.size();
      bytes.resize(at + want);
      in.read(bytes.data() + at, static_cast<std::streamsize>(want));
      const auto read = static_cast<std::size_t>(in.gcount());
      bytes.resize(at + read);
      got += read;
    }
    return got;
  };
  auto data = [&] { return reinterpret_cast<const unsigned char*>(bytes.data()); };
  try {
    read_more(12);
    const std::size_t header_end = detail::header_end(data(), bytes.size());
    // NumPy writes headers of a few hundred bytes (np.load refuses more than 10,000 by default).
    constexpr std::size_t kMaxHeader = std::size_t(1) << 20;
    if (header_end > kMaxHeader) throw NpyError("the .npy header is longer than 1 MiB");
    if (header_end > bytes.size()) read_more(header_end - bytes.size());
    const detail::Header h = detail::parse_header(data(), bytes.size());
    if (bytes.size() < header_end + h.data_bytes) read_more(header_end + h.data_bytes - bytes.size());
    return detail::read_array(h, data(), bytes.size());
  } catch (const NpyError& e) {
    throw NpyError(path + ": " + e.what());
  }
}

/// The .npy (version 1.0, C order) bytes of an array of any layout.
inline std::string serialize(const Array& a) {
  std::string header = "{'descr': '" + std::string(detail::descr_of(a.dtype())) +
                       "', 'fortran_order': False, 'shape': (";
  for (std::size_t k = 0; k < a.shape().size(); ++k)
    header += std::to_string(a.shape()[k]) + (a.shape().size() == 1 || k + 1 < a.shape().size() ? "," : "") +
              (k + 1 < a.shape().size() ? " " : "");
  header += "), }";
  // Pad with spaces so that magic + length + header + '\n' is a multiple of 64 bytes.
  std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  Array c = a.contiguous();
  out.append(static_cast<const char*>(c.data()), c.nbytes());
  return out;
}

/// Writes a .npy file (version 1.0, C order).
inline void save(const std::string& path, const Array& a) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw NpyError("cannot write " + path);
  std::string bytes = serialize(a);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw NpyError("error writing " + path);
}

}  // namespace npy
}  // namespace kiln
