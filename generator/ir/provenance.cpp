#include "ir/provenance.h"

#include <algorithm>
#include <cctype>

namespace kiln {

namespace {

thread_local Origins current_scope;

bool all_digits(const std::string& s, std::size_t begin, std::size_t end) {
  if (begin == end) return false;
  for (std::size_t i = begin; i < end; ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

bool origin_less(const Origin& a, const Origin& b) {
  if (a.pointer != b.pointer) return pointer_less(a.pointer, b.pointer);
  return a.op < b.op;
}

}  // namespace

bool pointer_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    std::size_t ei = std::min(a.find('/', i + 1), a.size());
    std::size_t ej = std::min(b.find('/', j + 1), b.size());
    // Segments start after their '/'; the leading '/' of both pointers compares equal.
    std::size_t si = a[i] == '/' ? i + 1 : i, sj = b[j] == '/' ? j + 1 : j;
    // Array indices (no leading zeros in JSON pointers) sort before names, and by length first.
    const bool na = all_digits(a, si, ei), nb = all_digits(b, sj, ej);
    if (na != nb) return na;
    if (na && ei - si != ej - sj) return ei - si < ej - sj;
    int c = a.compare(si, ei - si, b, sj, ej - sj);
    if (c != 0) return c < 0;
    i = ei;
    j = ej;
  }
  return a.size() - i < b.size() - j;
}

Origins make_origins(std::vector<Origin> list) {
  if (list.empty()) return nullptr;
  std::sort(list.begin(), list.end(), origin_less);
  list.erase(std::unique(list.begin(), list.end()), list.end());
  return std::make_shared<const std::vector<Origin>>(std::move(list));
}

Origins merge_origins(const Origins& a, const Origins& b) {
  if (!b || b == a) return a;
  if (!a) return b;
  if (std::includes(a->begin(), a->end(), b->begin(), b->end(), origin_less)) return a;
  if (std::includes(b->begin(), b->end(), a->begin(), a->end(), origin_less)) return b;
  std::vector<Origin> merged;
  merged.reserve(a->size() + b->size());
  std::set_union(a->begin(), a->end(), b->begin(), b->end(), std::back_inserter(merged), origin_less);
  return std::make_shared<const std::vector<Origin>>(std::move(merged));
}

std::string origins_str(const Origins& origins) {
  std::string s;
  if (!origins) return s;
  for (const Origin& o : *origins) s += (s.empty() ? "" : ", ") + o.pointer + " " + o.op;
  return s;
}

OriginScope::OriginScope(Origins origins) : saved_(std::move(current_scope)) {
  current_scope = std::move(origins);
}

OriginScope::~OriginScope() { current_scope = std::move(saved_); }

const Origins& OriginScope::current() { return current_scope; }

}  // namespace kiln
