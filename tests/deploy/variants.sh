#!/usr/bin/env bash
# One library holding the graph compiled for several x86-64 levels (--march-variants), the
# best one chosen when it is loaded: it exports only the graph's eight entry points and
# computes the same values as the reference (log1p of samples/data/x.npy).
#   variants.sh KILN SOURCE_DIR WORK_DIR
set -euo pipefail
kiln=$1 src=$2 work=$3
rm -rf "$work"
"$kiln" compile "$src/samples/log1p.json" -o "$work" --program --no-cache --march-variants x86-64-v3,x86-64
# Eight entry points, and NAME_variant (which instruction set the loader picked).
exports=$(nm -D --defined-only "$work/liblog1p_example.so" | awk '{print $3}')
echo "$exports"
[ "$(wc -l <<<"$exports")" -eq 9 ] && ! grep -v '^log1p_example_' <<<"$exports" ||
  { echo "the library exports more than the graph's entry points" >&2; exit 1; }
# log(1 + x) for x = [0, 0.5, 1, 2, 1e-10], as the cli_eval test expects them.
got=$("$work/log1p_example" "x=$src/samples/data/x.npy")
echo "$got"
grep -Eq '^y = \[ *0\. +0\.40546511 +0\.69314718 +1\.0986123 +1(\.0+1?)?e-10\]$' <<<"$got" ||
  { echo "the variant library computed other values" >&2; exit 1; }
rm -rf "$work"
