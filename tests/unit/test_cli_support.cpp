// The pieces behind the CLI's messages: "did you mean" (util/suggest.h) and the explanation of
// a cache miss (driver/build_key.h).
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>

#include "driver/build_key.h"
#include "util/suggest.h"

namespace fs = std::filesystem;
using namespace kiln;

TEST_CASE("edit distance counts insertions, deletions, substitutions and swaps") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("Dot", "Dot") == 0);
  CHECK(edit_distance("Dott", "Dot") == 1);
  CHECK(edit_distance("Dt", "Dot") == 1);
  CHECK(edit_distance("Dat", "Dot") == 1);
  CHECK(edit_distance("axsi", "axis") == 1);  // a swap of neighbours is one edit
  CHECK(edit_distance("SUM", "Sum") == 0);    // case does not count
  CHECK(edit_distance("kitten", "sitting") == 3);
}

TEST_CASE("did you mean names the closest known name only when it is close") {
  const std::vector<std::string> ops = {"Dot", "Sum", "Elemwise", "DimShuffle", "Gemv"};
  CHECK(did_you_mean("Dott", ops) == " (did you mean \"Dot\"?)");
  CHECK(did_you_mean("elemwise", ops) == " (did you mean \"Elemwise\"?)");
  CHECK(did_you_mean("DimShufle", ops) == " (did you mean \"DimShuffle\"?)");
  CHECK(did_you_mean("Convolution", ops).empty());
  CHECK(did_you_mean("Xyz", ops).empty());
  CHECK(did_you_mean("Dot", ops).empty());  // known already: nothing to suggest
  CHECK(did_you_mean("x", {}).empty());
}

TEST_CASE("a cache miss says which part of the key changed since the last build of the name") {
  const fs::path root = fs::temp_directory_path() / ("kiln-build-key-test-" + std::to_string(::getpid()));
  fs::remove_all(root);
  BuildKey first;
  first.add("flags", "-O3");
  first.add("generated source", "int f();");
  CHECK(first.explain_miss(root.string(), "g") == "no earlier build of g in this cache");
  first.remember(root.string(), "g");
  CHECK(first.explain_miss(root.string(), "g") ==
        "the last build of g had the same key, but its cache entry is gone");

  BuildKey second;
  second.add("flags", "-O3");
  second.add("generated source", "int f(); int g();");
  CHECK(second.digest() != first.digest());
  CHECK(second.explain_miss(root.string(), "g") == "changed since the last build of g: generated source");
  CHECK(second.explain_miss(root.string(), "other") == "no earlier build of other in this cache");

  BuildKey third;
  third.add("flags", "-O2");
  third.add("generated source", "int f(); int g();");
  second.remember(root.string(), "g");
  CHECK(third.explain_miss(root.string(), "g") == "changed since the last build of g: flags");
  fs::remove_all(root);
}
