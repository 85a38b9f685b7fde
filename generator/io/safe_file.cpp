#include "io/safe_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "ir/error.h"

namespace kiln {

namespace fs = std::filesystem;

namespace {

// Closes a descriptor at scope exit.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

std::string describe(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Reads all of an open regular file (checked with fstat), at most `max_bytes`. `fail` throws.
template <typename Fail>
std::string read_open_file(int fd, std::uint64_t max_bytes, const Fail& fail) {
  struct stat st;
  if (::fstat(fd, &st) != 0) fail(std::string("cannot read it: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) fail("it is " + describe(st.st_mode) + ", not a regular file");
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes)
    fail("it is too large (" + std::to_string(st.st_size) + " bytes; the limit is " + std::to_string(max_bytes) + ")");
  std::string bytes(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(std::string("cannot read it: ") + std::strerror(errno));
    if (n == 0) break;  // the file shrank while being read
    done += static_cast<std::size_t>(n);
  }
  bytes.resize(done);
  return bytes;
}

// Opens `path` for reading without blocking (a FIFO with no writer would block open()).
int open_nonblocking(const char* path, int dir_fd, int extra_flags) {
  return ::openat(dir_fd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | extra_flags);
}

}  // namespace

std::string read_graph_relative_file(const std::string& base_dir, const std::string& relative, const std::string& where,
                                     std::uint64_t max_bytes) {
  const auto fail = [&](const std::string& why) -> void {
    throw UserError("cannot read \"" + relative + "\": " + why, where);
  };
  if (base_dir.empty()) fail("files named by a graph need the graph to be loaded from a file");
  if (relative.empty() || fs::path(relative).is_absolute()) fail("the path must be relative to the graph file's folder");
  if (relative.find('\0') != std::string::npos) fail("the path holds a NUL byte");
  std::error_code ec;
  const fs::path base = fs::canonical(base_dir, ec);
  if (ec) fail("the graph file's folder cannot be resolved: " + ec.message());
  const fs::path full = fs::weakly_canonical(base / relative, ec);
  if (ec) fail("the path cannot be resolved: " + ec.message());
  const fs::path inside = full.lexically_relative(base);
  if (inside.empty() || *inside.begin() == ".." || inside == ".")
    fail("the path leads outside the graph file's folder");
  if (!fs::exists(full, ec)) fail("no such file");

  // Walk from the folder to the file one resolved component at a time, following no link:
  // what was checked above is what is opened, even if the tree changes in between.
  Fd dir(::open(base.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECTORY));
  if (dir.get() < 0) fail(std::string("cannot open the graph file's folder: ") + std::strerror(errno));
  std::vector<std::string> parts;
  for (const auto& part : inside) parts.push_back(part.string());
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    const int next = ::openat(dir.get(), parts[i].c_str(), O_RDONLY | O_CLOEXEC | O_DIRECTORY | O_NOFOLLOW);
    if (next < 0) fail("the path changed while it was being opened (" + std::string(std::strerror(errno)) + ")");
    dir.reset(next);
  }
  Fd file(open_nonblocking(parts.back().c_str(), dir.get(), O_NOFOLLOW));
  if (file.get() < 0) fail(std::string("cannot open it: ") + std::strerror(errno));
  return read_open_file(file.get(), max_bytes, fail);
}

std::string read_named_file(const std::string& path, std::uint64_t max_bytes) {
  const auto fail = [&](const std::string& why) -> void { throw IoError("cannot read the file: " + why, path); };
  Fd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (file.get() < 0) fail(std::strerror(errno));
  struct stat st;
  if (::fstat(file.get(), &st) != 0) fail(std::strerror(errno));
  if (S_ISREG(st.st_mode)) return read_open_file(file.get(), max_bytes, fail);
  if (S_ISDIR(st.st_mode)) fail("it is a folder");
  // A pipe or a device: read until its end, but no further than the limit.
  std::string bytes;
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(file.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(std::strerror(errno));
    if (n == 0) return bytes;
    if (bytes.size() + static_cast<std::size_t>(n) > max_bytes)
      fail("it holds more than " + std::to_string(max_bytes) + " bytes");
    bytes.append(buf, static_cast<std::size_t>(n));
  }
}

}  // namespace kiln
