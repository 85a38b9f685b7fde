// The CLI's exit codes (README "Exit codes"), one check per code: each kind of failure a command
// body can raise maps to its documented code, and the message says what kind it was. The CLI
// tests (tests/CMakeLists.txt, cli_*) reach codes 1-6 through real command lines; no command
// line should reach 70 (a bug in kiln), so it is checked here through the same guard.
#include <doctest/doctest.h>

#include <iostream>
#include <new>
#include <sstream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "driver/build.h"
#include "ir/error.h"
#include "kiln/runtime/npy.hpp"

using namespace kiln;

namespace {

// The exit code and the stderr text of running `body` under the CLI's guard.
template <typename Body>
std::pair<int, std::string> guarded(Body body) {
  std::ostringstream err;
  std::streambuf* old = std::cerr.rdbuf(err.rdbuf());
  const int rc = cli::run_guarded([&]() -> int {
    body();
    return exit_code::kOk;
  });
  std::cerr.rdbuf(old);
  return {rc, err.str()};
}

}  // namespace

TEST_CASE("exit codes: every failure kind maps to the code the README lists") {
  CHECK(guarded([] {}).first == 0);
  CHECK(guarded([] { throw cli::UsageError("bad --input"); }) == std::pair{1, std::string("kiln: usage: bad --input\n")});
  CHECK(guarded([] { throw UserError("no such op", "/nodes/0"); }).first == 2);
  CHECK(guarded([] { throw RuntimeFailure("shapes differ"); }).first == 3);
  CHECK(guarded([] { throw IoError("cannot read x.json"); }).first == 4);
  CHECK(guarded([] { throw npy::NpyError("bad header"); }).first == 4);
  CHECK(guarded([] { throw NotImplementedError("Scan"); }).first == 5);
  CHECK(guarded([] { throw CompileFailure("g++ failed"); }).first == 6);
}

TEST_CASE("exit codes: a bug in kiln exits 70 and asks for a report") {
  auto [rc, text] = guarded([] { KILN_INTERNAL_ASSERT(false, "an impossible state"); });
  CHECK(rc == 70);
  CHECK(text.find("internal error") != std::string::npos);
  CHECK(text.find("an impossible state") != std::string::npos);
  CHECK(text.find("please report this bug") != std::string::npos);
  // Anything else escaping a command (out of memory, a standard library error) is also kiln's bug.
  auto [rc_alloc, alloc_text] = guarded([] { throw std::bad_alloc(); });
  CHECK(rc_alloc == 70);
  CHECK(alloc_text.find("please report this bug") != std::string::npos);
}
