#!/bin/sh
# Builds and runs the logistic-regression training sample:
#   1. kiln grad    loss.json -> train_step.json (outputs: loss, p, grad_w, grad_b)
#   2. kiln compile train_step.json -> OUT/liblogistic_regression_grad.so
#   3. c++ train.cpp -> OUT/train, which trains for 1,000 steps on generated data.
# Usage: run.sh [KILN (default: kiln on PATH)] [OUT (default: ./build-logreg)]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
kiln=${1:-kiln}
out=${2:-build-logreg}
root=$(cd "$here/../.." && pwd)
mkdir -p "$out"
"$kiln" grad "$here/loss.json" --cost loss --wrt w --wrt b -o "$out/train_step.json"
"$kiln" compile "$out/train_step.json" -o "$out"
${CXX:-c++} -std=c++17 -O2 -I"$root/runtime/include" -I"$here" "$here/train.cpp" -o "$out/train" -ldl
"$out/train" "$out/liblogistic_regression_grad.so"
