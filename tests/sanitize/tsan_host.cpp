// ThreadSanitizer test of generated code (issue 14): several threads call one generated
// library at once, each with its own context, on inputs of changing sizes (so workspaces grow
// while other threads run), and every result must equal the one a single thread computes.
// Built with -fsanitize=thread like the library (tests/sanitize/tsan.sh); a data race in
// generated code or its runtime makes TSan fail the run.
//
//   tsan_host LIBRARY GRAPH_NAME [THREADS] [CALLS] [--shared-context]
// --shared-context makes the threads share one context (a misuse): TSan must report it, which
// shows the test can see a race at all. Every run-time length of every input takes one value per call (1..40), so graphs whose
// inputs share one length (X (n, n), w (n)) get consistent shapes.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "kiln/loader.hpp"

namespace {

struct Buffer {
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;
  DLTensor dl{};
};

// The inputs of one call with run-time length `n`; values depend on (n, input, element).
std::vector<Buffer> make_inputs(const kiln_graph_info& info, int64_t n) {
  std::vector<Buffer> in(static_cast<std::size_t>(info.num_inputs));
  for (int32_t k = 0; k < info.num_inputs; ++k) {
    const kiln_tensor_info& t = info.inputs[k];
    Buffer& b = in[static_cast<std::size_t>(k)];
    int64_t count = 1;
    for (int32_t d = 0; d < t.ndim; ++d) {
      b.shape.push_back(t.shape[d] >= 0 ? t.shape[d] : n);
      count *= b.shape.back();
    }
    const DLDataType dt = kiln::dl_dtype(static_cast<kiln_dtype>(t.dtype));
    const std::size_t item = dt.bits / 8;
    b.bytes.assign(static_cast<std::size_t>(count) * item + 64, 0);
    for (int64_t e = 0; e < count; ++e) {
      const double v = static_cast<double>((e * 7 + k * 3 + n) % 11) / 4.0 - 1.0;
      unsigned char* p = b.bytes.data() + e * static_cast<int64_t>(item);
      if (dt.code == kDLFloat && dt.bits == 64) std::memcpy(p, &v, 8);
      else if (dt.code == kDLFloat) { const float f = static_cast<float>(v); std::memcpy(p, &f, 4); }
      else if (dt.bits == 8) *p = static_cast<unsigned char>(e % 2);
      else { const int64_t i = (e + n) % 3; std::memcpy(p, &i, item < 8 ? item : 8); }
    }
    b.dl.data = b.bytes.data();
    b.dl.device = DLDevice{kDLCPU, 0};
    b.dl.ndim = t.ndim;
    b.dl.dtype = dt;
    b.dl.shape = b.shape.data();
  }
  return in;
}

// The outputs' bytes of one call (empty on failure).
std::string run(const kiln_graph_info& info, kiln_context* ctx, int64_t n) {
  std::vector<Buffer> in = make_inputs(info, n);
  std::vector<DLTensor> dl;
  for (auto& b : in) dl.push_back(b.dl);
  if (dl.empty()) dl.resize(1);
  std::vector<DLManagedTensor*> out(static_cast<std::size_t>(info.num_outputs) + 1, nullptr);
  if (info.call(ctx, dl.data(), out.data()) != KILN_OK) return "error: " + std::string(info.context_last_error(ctx));
  std::string bytes;
  for (int32_t k = 0; k < info.num_outputs; ++k) {
    const DLTensor& t = out[static_cast<std::size_t>(k)]->dl_tensor;
    int64_t count = 1;
    for (int32_t d = 0; d < t.ndim; ++d) count *= t.shape[d];
    bytes.append(static_cast<const char*>(t.data), static_cast<std::size_t>(count) * t.dtype.bits / 8);
    out[static_cast<std::size_t>(k)]->deleter(out[static_cast<std::size_t>(k)]);
  }
  return bytes;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s LIBRARY GRAPH_NAME [THREADS] [CALLS]\n", argv[0]);
    return 2;
  }
  const int threads = argc > 3 ? std::atoi(argv[3]) : 4;
  const int calls = argc > 4 ? std::atoi(argv[4]) : 200;
  const bool shared = argc > 5 && std::string(argv[5]) == "--shared-context";
  kiln::Library lib(argv[1]);
  const kiln_graph_info& info = lib.graph(argv[2]);
  // Reference results, one thread.
  std::vector<std::string> expected(41);
  kiln_context* ctx = info.context_create();
  for (int64_t n = 1; n <= 40; ++n) expected[static_cast<std::size_t>(n)] = run(info, ctx, n);
  info.context_destroy(ctx);
  int failures = 0;
  std::vector<std::thread> pool;
  std::vector<int> bad(static_cast<std::size_t>(threads), 0);
  kiln_context* common = shared ? info.context_create() : nullptr;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      kiln_context* c = shared ? common : info.context_create();
      for (int i = 0; i < calls; ++i) {
        const int64_t n = 1 + (i * 13 + t * 7) % 40;  // sizes go up and down: workspaces grow
        if (run(info, c, n) != expected[static_cast<std::size_t>(n)]) ++bad[static_cast<std::size_t>(t)];
      }
      if (!shared) info.context_destroy(c);
    });
  }
  for (auto& th : pool) th.join();
  if (common) info.context_destroy(common);
  for (int b : bad) failures += b;
  std::printf("%s: %d threads x %d calls, %d results differ from a single thread's\n", argv[2], threads, calls,
              failures);
  return failures == 0 ? 0 : 1;
}
