// libFuzzer target: the graph loader on arbitrary bytes, and what kiln writes for a graph it
// loaded read back again. A graph file is refused with a UserError or loads; any other
// exception escaping, a crash, a hang or a sanitizer report is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_common.h"
#include "io/graph_load.h"
#include "io/graph_save.h"
#include "ir/error.h"
#include "print/dprint.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    kiln::FunctionGraph fg = kiln::load_graph_text(text, kiln::fuzz::npy_folder(), "fuzz.json");
    kiln::dprint(fg);
    const std::string saved = kiln::save_graph_text(fg);
    kiln::load_graph_text(saved, kiln::fuzz::npy_folder(), "saved.json");  // kiln reads what it writes
  } catch (const kiln::UserError&) {
  }
  return 0;
}
