#include "driver/emit_files.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "ir/error.h"

namespace kiln {

namespace fs = std::filesystem;

namespace {

bool same_contents(const fs::path& path, const char* data, std::size_t size) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec) || fs::file_size(path, ec) != size || ec) return false;
  std::ifstream in(path, std::ios::binary);
  std::vector<char> buf(std::min<std::size_t>(size, std::size_t{1} << 20));
  for (std::size_t done = 0; done < size;) {
    std::size_t n = std::min(buf.size(), size - done);
    if (!in.read(buf.data(), static_cast<std::streamsize>(n))) return false;
    if (!std::equal(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n), data + done)) return false;
    done += n;
  }
  return true;
}

void write_bytes(const fs::path& path, const char* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw IoError("cannot write " + path.string());
  out.write(data, static_cast<std::streamsize>(size));
  if (!out) throw UserError("error writing " + path.string());
}

void touch(const fs::path& path) {
  std::error_code ec;
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);
  if (ec) throw UserError("cannot update the time stamp of " + path.string() + ": " + ec.message());
}

// One path in Make's syntax: a space or '#' is backslash-escaped, '$' doubled.
std::string depfile_path(const std::string& path) {
  std::string out;
  for (char ch : path) {
    if (ch == '\n' || ch == '\r') throw UserError("cannot write a depfile naming a path with a line break: " + path);
    if (ch == ' ' || ch == '#') out += '\\';
    if (ch == '$') out += '$';
    out += ch;
  }
  return out;
}

void write_if_changed(const fs::path& path, const char* data, std::size_t size, bool touch_unchanged) {
  if (!same_contents(path, data, size))
    write_bytes(path, data, size);
  else if (touch_unchanged)
    touch(path);
}

}  // namespace

bool read_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return false;
  // One read of the known size (a cached compile reads the library and sources it copies);
  // what has no size (a pipe) is read to its end.
  const std::streamoff size = in.tellg();
  if (size >= 0 && in.seekg(0)) {
    out.resize(static_cast<std::size_t>(size));
    in.read(out.data(), size);
    if (in.gcount() == size && in.peek() == std::ifstream::traits_type::eof()) return true;
    if (in.bad()) return false;
    in.clear();
    in.seekg(0);
  }
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

void write_file_if_changed(const std::string& path, const std::string& text, bool touch_unchanged) {
  write_if_changed(path, text.data(), text.size(), touch_unchanged);
}

void copy_file_if_changed(const std::string& from, const std::string& to) {
  std::string bytes;
  if (!read_file(from, bytes)) throw UserError("cannot read " + from);
  if (same_contents(to, bytes.data(), bytes.size())) return touch(to);
  // Into a temporary file and renamed over `to`: a process that has the old library loaded
  // keeps its pages instead of seeing the file change under it.
  std::error_code ec;
  const std::string tmp = to + "." + std::to_string(getpid()) + ".tmp";
  fs::copy_file(from, tmp, fs::copy_options::overwrite_existing, ec);
  if (!ec) fs::rename(tmp, to, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw IoError("cannot write " + to + ": " + ec.message());
  }
}

std::vector<std::string> write_emitted_sources(const GeneratedLibrary& lib, const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw IoError("cannot create output folder " + dir + ": " + ec.message());
  const fs::path out = fs::absolute(dir).lexically_normal();
  std::vector<std::string> written;
  auto put = [&](const std::string& file, const std::string& text) {
    write_file_if_changed((out / file).string(), text, /*touch_unchanged=*/false);
    written.push_back((out / file).string());
  };
  put(lib.name + ".h", lib.header);
  put(lib.source_file, lib.source);
  put(lib.name + "_main.cpp", lib.main_program);
  for (const DataBlob& blob : lib.blobs) {
    write_if_changed(out / blob.file_name, static_cast<const char*>(blob.data.data()), blob.data.nbytes(),
                     /*touch_unchanged=*/false);
    written.push_back((out / blob.file_name).string());
  }
  std::string data_dir = out.string();
  if (data_dir.size() > 1 && data_dir.back() == '/') data_dir.pop_back();
  put(lib.name + "_data.S", data_assembly(lib, data_dir));
  return written;
}

std::vector<std::string> graph_npy_files(const std::string& graph_text, const std::string& base_dir) {
  const fs::path dir = fs::absolute(base_dir.empty() ? "." : base_dir);
  std::vector<std::string> files;
  // Most graphs name no file: no need to parse them (a cached compile asks on every call). A
  // key spelled with \u escapes is found by parsing.
  if (graph_text.find("\"npy\"") == std::string::npos && graph_text.find("\\u") == std::string::npos)
    return files;
  nlohmann::json doc = nlohmann::json::parse(graph_text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("variables") || !doc["variables"].is_array()) return files;
  for (const auto& var : doc["variables"]) {
    if (!var.is_object() || !var.contains("value")) continue;
    const auto& value = var["value"];
    if (value.is_object() && value.contains("npy") && value["npy"].is_string()) {
      std::string npy = (dir / value["npy"].get<std::string>()).lexically_normal().string();
      if (std::find(files.begin(), files.end(), npy) == files.end()) files.push_back(npy);
    }
  }
  return files;
}

std::vector<std::string> graph_input_files(const std::string& graph_path) {
  const fs::path graph = fs::absolute(graph_path).lexically_normal();
  std::string text;
  read_file(graph.string(), text);
  std::vector<std::string> files = {graph.string()};
  for (auto& npy : graph_npy_files(text, graph.parent_path().string()))
    if (npy != files.front()) files.push_back(std::move(npy));
  return files;
}

void write_depfile(const std::string& path, const std::vector<std::string>& targets,
                   const std::vector<std::string>& deps) {
  std::string text;
  for (const auto& target : targets) text += (text.empty() ? "" : " ") + depfile_path(target);
  text += ":";
  for (const auto& dep : deps) text += " \\\n  " + depfile_path(dep);
  text += "\n";
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw IoError("cannot write the depfile " + path);
  out << text;
  if (!out) throw UserError("error writing the depfile " + path);
}

}  // namespace kiln
