#!/usr/bin/env bash
# The compiler as an installed library: builds samples/cpp-api against the kiln installed into
# PREFIX (the deploy_install test) and nothing else — no source tree on the include path — and
# runs it: it builds a graph in C++, differentiates it, compiles it with kiln::compile, checks
# the library against the reference evaluator and trains with it.
#   cpp_api.sh PREFIX SOURCE_DIR WORK_DIR
set -euo pipefail
prefix=$1 src=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
env PATH=/usr/bin:/bin cmake -S "$src/samples/cpp-api" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >/dev/null
# (The prefix may itself sit under the source tree, in build/: look for the source folders.)
if grep -Eq -- "(-I|-isystem )$src/(generator|runtime|templates)" "$work/build/build.ninja"; then
  echo "the sample's build reads headers from the source tree" >&2
  exit 1
fi
ninja -C "$work/build" >/dev/null
# Its own cache folder, so the run compiles (and shows the library path under it).
XDG_CACHE_HOME="$work/cache" "$work/build/cpp_api" | tee "$work/output.txt"
grep -q "^step 0: loss 0.693147" "$work/output.txt"
grep -q "^ok$" "$work/output.txt"
rm -rf "$work"
