// The device status word of the GPU backends (issue 19): errors that kernels detect (a failed
// assert, an index out of range) cannot return from the kernel, so the kernel writes them to
// one small device buffer per context, and the host reads it once at the end of the call and
// turns it into the same status and message the C++ backend gives for the same error.
//
// The word is four int32: [0] the failing check's number plus one (0: no error), [2..3] an
// int64 payload (the offending index). A kernel that finds an error claims [0] with an atomic
// compare-and-swap from 0 (kiln_raise in templates/gpu/prelude_*.h), so the first error wins:
// kernels run in queue order, so an earlier node's error wins over a later one's, as in the
// C++ backend, which stops at the first failing node. Within one kernel the work-item that
// wins is any of those that found an error (the C++ backend reports the first in index order).
//
// Each launch of a checking kernel records a check (the node, the kind of error, what the
// message needs that the host knows: the axis and its length) in the context's log; the first
// check of a call enqueues the word's reset, and the end of the call reads it (one blocking
// read, only in calls that launched a checking kernel). This header holds what both runtimes
// share; device_runtime.hpp (per backend) enqueues the reset and the read.
#pragma once

#include <cstring>
#include <vector>

namespace kg {

/// What a checking kernel's error means (the message the host writes for it).
enum class CheckKind : int32_t {
  kAssert,  ///< CheckAndRaise/Assert: `text` is the exception's message
  kIndex,   ///< an index out of range along `axis` of length `length`: NumPy's message
  kValue,   ///< a value error (KILN_ERR_VALUE) whose message is `text` (a sorter out of range)
  kLinalg,  ///< a linear-algebra failure (KILN_ERR_LINALG) whose message is `text` (cuSOLVER's info)
};

/// One launch of a checking kernel in the current call.
struct StatusCheck {
  const char* where = nullptr;  ///< the node (kWhere)
  CheckKind kind = CheckKind::kAssert;
  const char* text = nullptr;
  int32_t axis = 0;
  int64_t length = 0;
  bool unsigned_index = false;  ///< the payload is a uint64 index (NumPy prints it unsigned)
};

/// The checks of the current call; `armed` when the word was reset for this call.
struct StatusLog {
  std::vector<StatusCheck> checks;
  bool armed = false;
};

/// Starts a call's log of checks (nothing is queued until a checking kernel is launched). A
/// template so that the runtime's DevCtx (defined after this header) is found when it is used.
template <typename C>
inline void begin_status(C* ctx) {
  StatusLog& log = dev_of(ctx)->status_log;
  log.checks.clear();
  log.armed = false;
}

/// The status and message of a status word read back (`word[0]` nonzero), at its node.
inline int32_t status_failure(Ctx* ctx, const StatusLog& log, const int32_t* word) {
  const size_t id = static_cast<size_t>(word[0]) - 1;
  if (word[0] <= 0 || id >= log.checks.size())
    return fail(ctx, KILN_ERR_DEVICE, "the device status word holds an unknown check (%d)", word[0]);
  const StatusCheck& c = log.checks[id];
  int64_t value;
  static_assert(sizeof value == 2 * sizeof(int32_t), "the payload is two int32");
  std::memcpy(&value, word + 2, sizeof value);
  int32_t status;
  if (c.kind == CheckKind::kAssert) {
    status = fail(ctx, KILN_ERR_ASSERT, "%s", c.text);
  } else if (c.kind == CheckKind::kValue) {
    status = fail(ctx, KILN_ERR_VALUE, "%s", c.text);
  } else if (c.kind == CheckKind::kLinalg) {
    status = fail(ctx, KILN_ERR_LINALG, "%s", c.text);
  } else if (c.unsigned_index && value < 0) {
    status = fail(ctx, KILN_ERR_INDEX, "index %llu is out of bounds for axis %d with size %lld",
                  static_cast<unsigned long long>(value), c.axis, static_cast<long long>(c.length));
  } else {
    status = fail(ctx, KILN_ERR_INDEX, "index %lld is out of bounds for axis %d with size %lld",
                  static_cast<long long>(value), c.axis, static_cast<long long>(c.length));
  }
  return at_node(ctx, status, c.where);
}

}  // namespace kg
