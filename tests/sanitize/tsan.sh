#!/usr/bin/env bash
# ThreadSanitizer test of concurrent calls with separate contexts (issue 14): compiles graphs
# with -fsanitize=thread through `kiln compile --cxx clang++`, builds tsan_host.cpp the same
# way, and runs it: several threads, one context each, sizes changing under them.
#   tsan.sh KILN SOURCE_DIR BUILD_DIR WORK_DIR
set -euo pipefail
kiln=$1 src=$2 build=$3 work=$4
cxx=${KILN_TSAN_CXX:-clang++-14}
flags="-fsanitize=thread -O1 -g"
rm -rf "$work" && mkdir -p "$work"
"$cxx" -std=c++17 $flags -I"$src/runtime/include" -I"$build/include" "$src/tests/sanitize/tsan_host.cpp" \
  -o "$work/tsan_host" -ldl -pthread
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 suppressions=$src/tests/sanitize/tsan.supp ${TSAN_OPTIONS:-}"
for graph in "$src/samples/logreg_predict.json" "$src/bench/graphs/w3_logsoftmax_float64.json" \
             "$src/bench/graphs/w4_loss_float64.json"; do
  name=$(basename "$graph" .json)
  "$kiln" compile "$graph" -o "$work/$name" --name "$name" --cxx "$cxx" --cxxflags "$flags" --march none \
    --cache-dir "$work/cache" >/dev/null
  "$work/tsan_host" "$work/$name/lib$name.so" "$name" 4 150
done
# The check of the check: threads sharing one context (a misuse) race on its workspaces.
if "$work/tsan_host" "$work/logreg_predict/liblogreg_predict.so" logreg_predict 2 20 --shared-context \
    >"$work/shared.log" 2>&1; then
  echo "tsan.sh: ThreadSanitizer saw no race between threads sharing a context" >&2
  exit 1
fi
grep -q "WARNING: ThreadSanitizer: data race" "$work/shared.log"
echo "tsan.sh: threads sharing a context race, as ThreadSanitizer reports (expected)"
