// Finding a graph's variables by the name or id a user types on the command line (`kiln grad
// --wrt x`, `kiln vectorize --input x:SHAPE`, `kiln replace --replace x=...`).
#pragma once

#include <string>

#include "ir/error.h"
#include "ir/fgraph.h"

namespace kiln::cli {

/// The variable of `fg` whose id or name is `key`: an exact id wins, then a unique name.
/// UserError for an unknown or ambiguous key.
inline Var find_variable(const FunctionGraph& fg, const std::string& key, const std::string& what) {
  Variable* by_name = nullptr;
  int named = 0;
  for (Variable* v : fg.variables()) {
    if (v->file_id() == key) return fg.handle(v);
    if (v->name() == key) {
      by_name = v;
      ++named;
    }
  }
  if (named == 1) return fg.handle(by_name);
  if (named > 1)
    throw UserError(what + " \"" + key + "\" is ambiguous: " + std::to_string(named) +
                    " variables have that name (use the id)");
  throw UserError(what + " \"" + key + "\" is neither the id nor the name of a variable of graph \"" +
                  fg.name() + "\"");
}

/// A name for a variable in derived names ("grad_<name>"): its name, else its id.
inline std::string display_name(const Var& v) {
  if (!v->name().empty()) return v->name();
  return v->file_id().empty() ? "var" : v->file_id();
}

}  // namespace kiln::cli
