#include "print/dprint.h"

#include "ir/error.h"

namespace kiln {

std::string dprint(const FunctionGraph&, const DprintOptions&) {
  throw NotImplementedError("dprint is not implemented yet");
}

std::string graphviz_dot(const FunctionGraph&) {
  throw NotImplementedError("graphviz output is not implemented yet");
}

}  // namespace kiln
