// Finding a graph's variables by the name or id a user types on the command line (`kiln grad
// --wrt x`, `kiln vectorize --input x:SHAPE`, `kiln replace --replace x=...`).
#pragma once

#include <string>

#include "cli/commands.h"
#include "ir/error.h"
#include "ir/fgraph.h"
#include "util/suggest.h"

namespace kiln::cli {

/// The variable of `fg` whose id or name is `key`: an exact id wins, then a unique name.
/// UsageError for an unknown (with the closest name) or ambiguous key.
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
    throw UsageError(what + " \"" + key + "\" is ambiguous: " + std::to_string(named) +
                    " variables have that name (use the id)");
  std::vector<std::string> names;
  for (Variable* v : fg.variables()) {
    if (!v->name().empty()) names.push_back(v->name());
    if (!v->file_id().empty()) names.push_back(v->file_id());
  }
  throw UsageError(what + " \"" + key + "\" is neither the id nor the name of a variable of graph \"" +
                   fg.name() + "\"" + did_you_mean(key, names));
}

/// A name for a variable in derived names ("grad_<name>"): its name, else its id.
inline std::string display_name(const Var& v) {
  if (!v->name().empty()) return v->name();
  return v->file_id().empty() ? "var" : v->file_id();
}

}  // namespace kiln::cli
