#!/usr/bin/env bash
# The sample end to end: export and compile the model (radon.py, in Python), then build and run
# main.cpp against the generated library and check that C++ and Python print the same numbers.
# Usage: samples/pymc/run.sh [OUT]   ($PYTHON: a Python with PyMC and kiln, default python3)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mkdir -p "${1:-out}" && cd "${1:-out}" && pwd)"
"${PYTHON:-python3}" "$here/radon.py" "$out"
"${CXX:-c++}" -std=c++17 -O2 "$here/main.cpp" -I "$out" -L "$out" -lradon -Wl,-rpath,"$out" -o "$out/radon_main"
"$out/radon_main" "$out/x.txt" > "$out/cpp.txt"
if cmp -s "$out/python.txt" "$out/cpp.txt"; then
  echo "C++ and Python agree: logp $(head -1 "$out/cpp.txt")"
else
  echo "C++ and Python differ:" >&2
  diff "$out/python.txt" "$out/cpp.txt" >&2 || true
  exit 1
fi
