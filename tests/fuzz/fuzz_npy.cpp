// libFuzzer target: the .npy reader on arbitrary bytes. A file is refused with an NpyError or
// parses; what parses is written back and must read back to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "kiln/runtime/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    kiln::Array a = kiln::npy::parse(data, size);
    const std::string bytes = kiln::npy::serialize(a);
    kiln::Array b = kiln::npy::parse(bytes.data(), bytes.size());
    if (b.dtype() != a.dtype() || b.shape() != a.shape() || b.nbytes() != a.nbytes() ||
        (a.nbytes() && std::memcmp(a.data(), b.data(), a.nbytes()) != 0))
      std::abort();  // a round trip changed the array
  } catch (const kiln::npy::NpyError&) {
  }
  return 0;
}
