#include "codegen/cpp/vector_math_select.h"

#include <cctype>
#include <map>
#include <sstream>

#include "codegen/embedded_files.h"

namespace kiln {

namespace {

bool is_ident(char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; }

// Calls f(qualifier, name) for every `qualifier::name(` or `name(` (empty qualifier) in text.
template <typename F>
void for_each_call(const std::string& text, F f) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '(' || i == 0 || !is_ident(text[i - 1])) continue;
    std::size_t start = i;
    while (start > 0 && is_ident(text[start - 1])) --start;
    std::string qualifier;
    if (start >= 2 && text.compare(start - 2, 2, "::") == 0) {
      std::size_t q = start - 2;
      while (q > 0 && is_ident(text[q - 1])) --q;
      qualifier = text.substr(q, start - 2 - q);
    }
    f(qualifier, text.substr(start, i - start));
  }
}

// The bodies of scalar_math.hpp's functions by name (overloads joined): from a line
// `inline <type> NAME(` to the first line that is a lone `}`.
const std::map<std::string, std::string>& scalar_math_bodies() {
  static const std::map<std::string, std::string> bodies = [] {
    std::map<std::string, std::string> out;
    std::istringstream in{std::string(embedded_file("runtime/include/kiln/runtime/scalar_math.hpp"))};
    std::string line, name, body;
    while (std::getline(in, line)) {
      if (name.empty()) {
        if (line.rfind("inline ", 0) != 0) continue;
        const std::size_t open = line.find('(');
        if (open == std::string::npos) continue;
        std::size_t start = open;
        while (start > 0 && is_ident(line[start - 1])) --start;
        name = line.substr(start, open - start);
        body = line + "\n";
        if (line.back() == '}') {  // a one-line function
          out[name] += body;
          name.clear();
        }
        continue;
      }
      body += line + "\n";
      if (line == "}") {
        out[name] += body;
        name.clear();
      }
    }
    return out;
  }();
  return bodies;
}

}  // namespace

std::set<std::string> called_math_functions(const std::vector<std::string>& code) {
  const auto& bodies = scalar_math_bodies();
  std::set<std::string> called, followed;
  std::vector<const std::string*> work;
  for (const auto& text : code) work.push_back(&text);
  while (!work.empty()) {
    const std::string* text = work.back();
    work.pop_back();
    for_each_call(*text, [&](const std::string& qualifier, const std::string& name) {
      if (qualifier == "std" || qualifier == "kiln_vm") called.insert(name);
      const auto body = bodies.find(name);
      if ((qualifier.empty() || qualifier == "kiln_scalar") && body != bodies.end() && followed.insert(name).second)
        work.push_back(&body->second);
    });
  }
  return called;
}

std::string select_vector_math(const std::string& body, const std::set<std::string>& called) {
  std::istringstream in(body);
  std::string line, out;
  bool skip_block = false;  // inside a KILN_VM_KERNELS block of functions none of which is called
  while (std::getline(in, line)) {
    if (skip_block) {
      skip_block = line.rfind("#endif  // KILN_VM_KERNELS", 0) != 0;
      continue;
    }
    // `#if ...  // KILN_VM_KERNELS(exp, log, ...)` opens kernels of those functions.
    const std::size_t kernels = line.find("// KILN_VM_KERNELS(");
    if (line.rfind("#if", 0) == 0 && kernels != std::string::npos) {
      std::string names = line.substr(kernels + 19);
      for (char& ch : names)
        if (!is_ident(ch)) ch = ' ';
      std::istringstream list(names);
      bool used = false;
      for (std::string name; list >> name;) used = used || called.count(name) > 0;
      if (!used) {
        skip_block = true;
        continue;
      }
    }
    bool keep = true;
    for (const std::string prefix : {"KILN_VM_1(", "KILN_VM_1_LOG1P(", "KILN_VM_2(", "KILN_VM_2_FLOAT_ONLY("}) {
      if (line.rfind(prefix, 0) != 0) continue;
      const std::size_t comma = line.find(',');
      keep = comma != std::string::npos && called.count(line.substr(prefix.size(), comma - prefix.size())) > 0;
    }
    if (keep) out += line + "\n";
  }
  return out;
}

}  // namespace kiln
