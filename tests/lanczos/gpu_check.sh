#!/bin/bash
# gpu_check.sh — Lanczos on the CUDA backend, on the GPU machine (repository
# root): build with CUDA, run the dense-reference Lanczos tests with
# --backend cuda, then solve HMEp (configs/hmep.ini) on the GPU.
# Device call: run(command="bash tests/lanczos/gpu_check.sh", carry=[".deps"])
set -u
OUT=${OUT:-/tmp/lz-gpu-out}
mkdir -p "$OUT"
B=build-lzgpu
export NCCL_NVLS_ENABLE=0 OMP_NUM_THREADS=16
. bench/device_deps.sh || echo "warning: no .deps/*.deb (libinih): the build may fail"
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/lz.log"
{ timeout 300 cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DPJDS_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 &&
  timeout 300 cmake --build $B -j 16 --target test_lanczos pjds-lanczos solve_check; } > "$OUT/build.log" 2>&1 ||
  { echo "build FAILED"; tail -30 "$OUT/build.log"; exit 1; }
for c in generic hh; do
    timeout 120 $B/tests/lanczos/test_lanczos $c --backend cuda 2>&1 | tail -40 >> "$OUT/lz.log"
    echo "test_lanczos $c --backend cuda: exit ${PIPESTATUS[0]}" | tee -a "$OUT/lz.log"
done
grep -E "check failed" "$OUT/lz.log" | head
cd /tmp && timeout 240 /usr/bin/time -v "$OLDPWD/$B/app/pjds-lanczos" solve "$OLDPWD/configs/hmep.ini" \
    --set spmv.backend=cuda --set output.file=/tmp/hmep_gpu.h5 --set output.eigenvectors=true --overwrite \
    > "$OUT/hmep.out" 2> "$OUT/hmep.err"
echo "hmep gpu solve: exit $?"
# independent check in the original basis: residuals and orthogonality (no ghost copies)
timeout 200 "$OLDPWD/$B/tests/solve/solve_check" "$OLDPWD/configs/hmep.ini" /tmp/hmep_gpu.h5 --vectors > "$OUT/check.log" 2>&1
echo "solve_check --vectors: exit $?"; cat "$OUT/check.log"
cat "$OUT/hmep.out"; grep -E "solve:|Elapsed|Maximum resident" "$OUT/hmep.err" | grep -v "restart [0-9]*,"
