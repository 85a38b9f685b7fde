#!/usr/bin/env bash
# Links two static and two shared generated libraries into one program (kiln_add_graph from
# kiln's build tree), runs it, and checks with nm that every symbol a library exports carries
# its graph's prefix: for static libraries every global definition except weak (inline, merged)
# ones, for shared libraries every dynamic symbol.
#   multi.sh KILN_BUILD_DIR SOURCE_DIR MAKE_TEST_NPY WORK_DIR
set -euo pipefail
kiln_build=$1 src=$2 make_npy=$3 work=$4
rm -rf "$work"
mkdir -p "$work/table"
"$make_npy" "$work/table/table.npy" 8192  # 64 KB: large enough for NAME_data.S
sed "s/@COUNT@/8192/g" "$src/tests/deploy/table.json.in" > "$work/table/table.json"

build=$work/build
cmake -S "$src/tests/deploy/multi" -B "$build" -G Ninja -Dkiln_DIR="$kiln_build" \
  -DSAMPLES="$src/samples" -DTABLE_GRAPH="$work/table/table.json" -DCMAKE_BUILD_TYPE= >/dev/null
ninja -C "$build" >/dev/null
"$build/four" | tee "$work/output.txt"
# Expected: sigmoid(2) and sigmoid(-2); mlp row 0 as in samples/cmake-consumer/expected_output.txt;
# table[k] = (k % 1000) * 0.5 and sum(table) * s.
cat > "$work/expected.txt" <<'OUT'
g_logreg: 0.8808 0.1192
g_mlp: 0.4569 0.3447 0.1984
g_table_s: 117.0 2007168.0
g_table_d: 160.5 4014336.0
OUT
diff -u "$work/expected.txt" "$work/output.txt"

status=0
check_symbols() {  # check_symbols PREFIX "nm output lines: address type name"
  local prefix=$1 bad
  bad=$(awk -v p="${prefix}_" '$2 !~ /^[WwVvUu]$/ && index($3, p) != 1 {print}' <<<"$2")
  if [ -n "$bad" ]; then
    echo "symbols without the prefix $prefix:" >&2
    echo "$bad" >&2
    status=1
  fi
  echo "$prefix: $(wc -l <<<"$2") symbols checked"
}
for lib in g_logreg g_table_s; do
  check_symbols "$lib" "$(nm -g --defined-only "$build/lib$lib.a" 2>/dev/null | grep -v -e '^$' -e ':$')"
done
for lib in g_mlp g_table_d; do
  check_symbols "$lib" "$(nm -D --defined-only "$build/lib$lib.so")"
done
# The baked-in table is a hidden symbol: defined in the static library, never exported.
nm "$build/libg_table_s.a" | grep -q " R g_table_s_const_" || { echo "no table symbol in libg_table_s.a" >&2; status=1; }
if nm -D "$build/libg_table_d.so" | grep -q "_const_"; then echo "libg_table_d.so exports its table" >&2; status=1; fi
[ $status -eq 0 ] && rm -rf "$work"
exit $status
