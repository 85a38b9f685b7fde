#!/usr/bin/env bash
# Configures and builds samples/cuda-logreg (kiln_add_graph(... BACKEND cuda), CMake's CUDA
# language, cuBLAS: the prediction and the training step, differentiated by `kiln grad` at build
# time) with the kiln installed into PREFIX (the deploy_install test). Builds only:
# there is no GPU to run it on. Exits 77 (skipped) without nvcc.
#   cuda_sample.sh PREFIX SOURCE_DIR WORK_DIR
set -euo pipefail
prefix=$1 src=$2 work=$3
nvcc=${CUDACXX:-}
[ -n "$nvcc" ] || { [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc; } || true
[ -n "$nvcc" ] || nvcc=$(command -v nvcc || true)
if [ -z "$nvcc" ]; then
  echo "skipped: no nvcc (set CUDACXX or install the CUDA toolkit)"
  exit 77
fi
rm -rf "$work"
mkdir -p "$work/samples"
cp -r "$src/samples/cuda-logreg" "$src/samples/logreg_predict.json" "$src/samples/logistic_regression" "$work/samples/"
CUDACXX=$nvcc cmake -S "$work/samples/cuda-logreg" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >/dev/null
ninja -C "$work/build" >/dev/null
grep -q "cublas" "$work/build/build.ninja" || { echo "predict_cuda does not link cuBLAS" >&2; exit 1; }
[ -f "$work/build/kiln/logreg_train/logreg_train.cu" ] || { echo "the training step was not emitted for CUDA" >&2; exit 1; }
echo "samples/cuda-logreg configured and built with $nvcc"
