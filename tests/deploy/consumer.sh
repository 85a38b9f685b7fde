#!/usr/bin/env bash
# Installs nothing itself: uses the kiln installed into PREFIX (the deploy_install test) to
# configure, build and run samples/cmake-consumer with only that prefix, compares its output
# with expected_output.txt, then checks that touching or editing a graph rebuilds only its
# own target and that changing a .npy weight file re-runs kiln (the depfile).
#   consumer.sh PREFIX SOURCE_DIR WORK_DIR
set -euo pipefail
prefix=$1 src=$2 work=$3
rm -rf "$work"
mkdir -p "$work/samples"
# A copy of the sample, so touching its files leaves the repository alone.
cp -r "$src/samples/cmake-consumer" "$src/samples/logreg_predict.json" "$work/samples/"
app=$work/samples/cmake-consumer
build=$work/build

# Only the prefix: no package registry, no kiln on PATH.
env PATH=/usr/bin:/bin cmake -S "$app" -B "$build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_BUILD_TYPE= >/dev/null
grep -q "$prefix/bin/kiln" "$build/build.ninja" || { echo "the build does not run $prefix/bin/kiln" >&2; exit 1; }
ninja -C "$build" >/dev/null
"$build/consumer" > "$work/output.txt"
diff -u "$app/expected_output.txt" "$work/output.txt"
echo "consumer output matches expected_output.txt"

log=$work/ninja.log
# 1. Touching a graph re-runs kiln for that graph only; identical sources are not rewritten,
#    so nothing is recompiled.
sleep 1
touch "$work/samples/logreg_predict.json"
ninja -C "$build" -n -d explain > "$log" 2>&1
grep -q "kiln: generating logreg_predict" "$log" || { cat "$log"; echo "touching the graph did not re-run kiln" >&2; exit 1; }
# (A dry run cannot know that kiln leaves identical files untouched, so it lists the compiles
# downstream of the generated sources; the real run below must not run them.)
if grep -q "generating mlp" "$log"; then cat "$log"; echo "touching logreg_predict.json re-ran kiln for mlp" >&2; exit 1; fi
ninja -C "$build" > "$log"
if grep -q "Building\|Linking" "$log"; then cat "$log"; echo "identical generated sources were recompiled" >&2; exit 1; fi
echo "touch: only kiln emit for logreg_predict ran"

# 2. Editing the graph (the threshold 0.5 -> 0.5000001: only logreg_predict.cpp changes, not
#    its header, nor the printed labels) recompiles the generated target, relinks the program,
#    and nothing else.
sleep 1
sed -i 's/"value": 0.5}/"value": 0.5000001}/' "$work/samples/logreg_predict.json"
grep -q 0.5000001 "$work/samples/logreg_predict.json"
ninja -C "$build" -v > "$log"
grep -q -- "-o CMakeFiles/logreg_predict.dir/.*logreg_predict.cpp.o" "$log" ||
  { cat "$log"; echo "the edited graph's target was not rebuilt" >&2; exit 1; }
if grep -q -- "-o CMakeFiles/consumer.dir/main.cpp.o\|-o CMakeFiles/mlp.dir\|generating mlp" "$log"; then cat "$log"; echo "editing logreg_predict.json rebuilt other targets" >&2; exit 1; fi
"$build/consumer" | diff -u "$app/expected_output.txt" -
echo "edit: only the logreg_predict target was rebuilt"

# 3. A weight file named by {"npy": ...} is a dependency too.
sleep 1
touch "$app/weights/W2.npy"
ninja -C "$build" > "$log"
grep -q "kiln: generating mlp" "$log" || { cat "$log"; echo "touching a .npy file did not re-run kiln" >&2; exit 1; }
if grep -q "generating logreg_predict" "$log"; then cat "$log"; echo "touching mlp's weights re-ran logreg_predict" >&2; exit 1; fi
echo "npy: touching a weight file re-ran kiln emit for mlp only"

# 4. The pkg-config file: the installed headers alone build a program that loads libraries.
pc="env PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config"
# shellcheck disable=SC2046
c++ -std=c++17 $($pc --cflags kiln-runtime) "$src/tests/deploy/load_check.cpp" -o "$work/load_check" \
  $($pc --libs kiln-runtime)
echo "pkg-config: $($pc --cflags --libs kiln-runtime)"
rm -rf "$work"
