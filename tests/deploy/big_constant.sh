#!/usr/bin/env bash
# A 100 MB constant baked into a library by `kiln compile` (.incbin, not an initialiser list):
# reports the compile time and checks that the library loads and reads the data back.
# Set KILN_SKIP_BIG_CONSTANT=1 to skip (exit code 77, reported by ctest as skipped).
#   big_constant.sh KILN MAKE_TEST_NPY LOAD_CHECK SOURCE_DIR WORK_DIR
set -euo pipefail
kiln=$1 make_npy=$2 load_check=$3 src=$4 work=$5
if [ -n "${KILN_SKIP_BIG_CONSTANT:-}" ]; then
  echo "skipped: KILN_SKIP_BIG_CONSTANT is set"
  exit 77
fi
count=12500000  # float64: 100,000,000 bytes
rm -rf "$work"
mkdir -p "$work"
"$make_npy" "$work/table.npy" "$count"
sed "s/@COUNT@/$count/g" "$src/tests/deploy/table.json.in" > "$work/big.json"

start=$(date +%s%N)
"$kiln" compile "$work/big.json" -o "$work/out" --name big --march none --no-cache
end=$(date +%s%N)
ms=$(( (end - start) / 1000000 ))
printf 'compile time for a 100 MB constant: %d.%03d s (kiln compile: load, rewrite, generate, build)\n' \
  $((ms / 1000)) $((ms % 1000))

size=$(stat -c %s "$work/out/libbig.so")
echo "libbig.so: $size bytes; big.cpp: $(stat -c %s "$work/out/big.cpp") bytes"
[ "$size" -gt 100000000 ] || { echo "libbig.so is smaller than its constant" >&2; exit 1; }
"$load_check" table "$work/out/libbig.so" big "$count"
if [ "$ms" -gt 120000 ]; then
  echo "too slow: a 100 MB constant should compile in well under a minute" >&2
  exit 1
fi
rm -rf "$work"
