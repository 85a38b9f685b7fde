// SHA-256 (FIPS 180-4): content-addressed cache keys (driver/) and the content hashes of large
// constants in NAME_data.S (codegen/constants.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln {

class Sha256 {
 public:
  Sha256();
  Sha256& update(std::string_view data);
  /// Hex digest (64 characters); the object must not be updated afterwards.
  std::string hex_digest();

 private:
  void block(const unsigned char* p);
  std::uint32_t h_[8];
  unsigned char buf_[64];
  std::size_t buf_len_ = 0;
  std::uint64_t total_ = 0;
};

std::string sha256_hex(std::string_view data);

}  // namespace kiln
