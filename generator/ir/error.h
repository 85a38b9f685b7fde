// Errors. Two channels, as in Halide: UserError (the input is wrong: a graph file, an API call,
// run-time data — the message says what and where) and InternalError (a bug in kiln).
#pragma once

#include <stdexcept>
#include <string>

namespace kiln {

/// The user's input is wrong. `where()` names the place: a JSON pointer, a node, a variable.
class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& msg, std::string where = {})
      : std::runtime_error(where.empty() ? msg : where + ": " + msg),
        message_(msg),
        where_(std::move(where)) {}
  const std::string& message() const { return message_; }
  const std::string& where() const { return where_; }

 private:
  std::string message_;
  std::string where_;
};

/// A capability kiln does not have yet (e.g. an op without a perform or a backend entry).
class NotImplementedError : public UserError {
 public:
  using UserError::UserError;
};

/// A failure while running a graph (broadcast mismatch, index out of range, failed assert,
/// wrong input): raised by perform and reported with the node that failed.
class RuntimeFailure : public UserError {
 public:
  using UserError::UserError;
};

/// A file could not be read or written (a missing graph file, an unwritable output folder):
/// the environment is wrong, not the graph. The CLI exits with its I/O code for it.
class IoError : public UserError {
 public:
  using UserError::UserError;
};

/// A bug in kiln.
class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& msg) : std::logic_error("internal error: " + msg) {}
};

}  // namespace kiln

/// Checks an invariant of kiln itself; a failure is a bug, not a user error.
#define KILN_INTERNAL_ASSERT(cond, msg)                                                   \
  do {                                                                                    \
    if (!(cond))                                                                          \
      throw ::kiln::InternalError(std::string(__FILE__) + ":" + std::to_string(__LINE__) + \
                                  ": " + (msg));                                          \
  } while (0)
