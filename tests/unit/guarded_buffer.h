// Memory that catches out-of-bounds access (as ggml's test-backend-ops does with sentinels):
// the bytes sit flush against a PROT_NONE page, so reading or writing one byte past the end
// faults; the rest of their first page holds sentinel bytes that intact() checks; another
// PROT_NONE page guards the start; and read_only() makes the bytes themselves unwritable, for
// inputs a callee must never write.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace kiln::testing {

class GuardedBuffer {
 public:
  static constexpr unsigned char kSentinel = 0xA5;

  explicit GuardedBuffer(std::size_t bytes) : bytes_(bytes) {
    page_ = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    body_ = (bytes + page_ - 1) / page_ * page_;
    if (body_ == 0) body_ = page_;
    size_ = body_ + 2 * page_;
    void* m = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) throw std::bad_alloc();
    map_ = static_cast<unsigned char*>(m);
    ::mprotect(map_, page_, PROT_NONE);
    ::mprotect(map_ + page_ + body_, page_, PROT_NONE);
    std::memset(map_ + page_, kSentinel, body_);
    data_ = map_ + page_ + body_ - bytes;
    std::memset(data_, 0, bytes);
  }
  ~GuardedBuffer() { ::munmap(map_, size_); }
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  void* data() const { return data_; }
  template <typename T>
  T* as() const {
    return reinterpret_cast<T*>(data_);
  }
  std::size_t bytes() const { return bytes_; }

  /// The bytes become read-only (a write faults); the sentinels stay readable.
  void read_only() { ::mprotect(map_ + page_, body_, PROT_READ); }

  /// Whether every sentinel byte before the data still holds its value.
  bool intact() const {
    for (const unsigned char* p = map_ + page_; p < data_; ++p)
      if (*p != kSentinel) return false;
    return true;
  }

 private:
  std::size_t bytes_, page_, body_, size_;
  unsigned char* map_;
  unsigned char* data_;
};

}  // namespace kiln::testing
