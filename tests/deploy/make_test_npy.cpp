// Writes a float64 .npy vector whose element k is (k % 1000) * 0.5, for the deployment tests
// (a 100 MB constant is generated at test time rather than committed).
//   kiln_make_test_npy OUT.npy COUNT
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s OUT.npy COUNT\n", argv[0]);
    return 1;
  }
  const long long count = std::atoll(argv[2]);
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (" + std::to_string(count) + ",), }";
  // NPY 1.0: magic, version, header length; data starts at a multiple of 64 bytes.
  const std::size_t preamble = 10;
  while ((preamble + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::FILE* f = std::fopen(argv[1], "wb");
  if (!f) {
    std::perror(argv[1]);
    return 1;
  }
  const unsigned char magic[] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                                 static_cast<unsigned char>(header.size() & 0xff),
                                 static_cast<unsigned char>(header.size() >> 8)};
  std::fwrite(magic, 1, sizeof magic, f);
  std::fwrite(header.data(), 1, header.size(), f);
  std::vector<double> chunk(1 << 16);
  for (long long done = 0; done < count;) {
    const long long n = std::min<long long>(static_cast<long long>(chunk.size()), count - done);
    for (long long j = 0; j < n; ++j) chunk[static_cast<std::size_t>(j)] = static_cast<double>((done + j) % 1000) * 0.5;
    std::fwrite(chunk.data(), sizeof(double), static_cast<std::size_t>(n), f);
    done += n;
  }
  return std::fclose(f) == 0 ? 0 : 1;
}
