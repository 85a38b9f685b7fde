// A library that claims a future kiln ABI version: loader.hpp must refuse it by name.
#include "kiln/kiln.h"

extern "C" __attribute__((visibility("default"))) const kiln_graph_info* future_graph_info(void) {
  static kiln_graph_info info = {};
  info.abi_version = KILN_ABI_VERSION + 1;
  info.name = "future_graph";
  return &info;
}
