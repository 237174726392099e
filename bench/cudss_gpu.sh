#!/bin/bash
# cudss_gpu.sh — the cuDSS back-end on the GPU machine (repository root): cuDSS arrives in three parts
# (tools/cudss_carry.sh: 167 MB against 64 MiB a call), then the build with it, the GPU test
# tests/gpu/test_fact_cudss.c (gpu_fact_cudss) and, with FACT_CONFIG, bench/fact_bench.sh on that config.
#
# Here, once:   bash tools/cudss_carry.sh pack          (.cudss/1 .. .cudss/3, ignored by git)
# Then three device calls on the SAME warm machine (it is kept 30 s after a call), each carrying one part:
#   run(command="bash bench/cudss_gpu.sh", carry=[".deps", ".cudss/1"], timeout_s=120)
#   run(command="bash bench/cudss_gpu.sh", carry=[".deps", ".cudss/2"], timeout_s=120)
#   run(command="bash bench/cudss_gpu.sh", carry=[".deps", ".cudss/3"], timeout_s=600)
# The first two only store their part and print "carry next: ...".  The third unpacks cuDSS to /opt/cudss,
# builds and tests; later calls on that machine need no part (carry=[".deps"]).  If the machine went back
# in between, start again with .cudss/1.  Environment: BUILD (build-gpu), FACT_CONFIG (a config for
# bench/fact_bench.sh; none: the test only), SANITIZE=1 (also compute-sanitizer memcheck on the test).
# Logs go to $OUT; a summary prints last.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/pjds-cudss-out}
mkdir -p "$OUT"
BUILD=${BUILD:-build-gpu}
SUM=$OUT/cudss_summary.txt
: > "$SUM"
note() { echo "$*" | tee -a "$SUM"; }
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 OMP_NUM_THREADS=${OMP_NUM_THREADS:-16}

note "gpu: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | head -1)"
bash tools/cudss_carry.sh unpack
rc=$?
if [ $rc -eq 3 ]; then note "cuDSS incomplete: make the next call with the part named above"; exit 0; fi
[ $rc -eq 0 ] || { note "FAIL: cuDSS parts broken (see above)"; exit 1; }

. bench/device_deps.sh || note "warning: no .deps/*.deb (libinih): the build may fail"
export PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DPJDS_CUDSS_ROOT=/opt/cudss \
    > "$OUT/cudss_cmake.log" 2>&1 || { tail -30 "$OUT/cudss_cmake.log"; note "FAIL: configure"; exit 1; }
note "configure: $(grep -i 'cudss' "$OUT/cudss_cmake.log" | head -2 | tr '\n' ' ')"
targets="--target test_fact_cudss"
[ -n "${FACT_CONFIG:-}" ] && targets="$targets --target pjds-lanczos"
# shellcheck disable=SC2086
if ! cmake --build "$BUILD" -j 16 $targets > "$OUT/cudss_build.log" 2>&1; then
    grep -E "error|Error" "$OUT/cudss_build.log" | head -20
    note "FAIL: build (tail of $OUT/cudss_build.log above)"; exit 1
fi
note "build: ok"

t0=$(date +%s.%N)
(cd "$BUILD" && timeout 300 ctest -R '^gpu_fact_cudss$' --output-on-failure) > "$OUT/cudss_test.log" 2>&1
trc=$?
cat "$OUT/cudss_test.log" | grep -vE "^(Test project|Constructing|Checking|Updating|    Start)" | head -60
note "gpu_fact_cudss: $([ $trc -eq 0 ] && echo PASS || echo "FAIL (rc $trc)") in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}') s"
grep -E "check failed|^singular|estimate" "$OUT/cudss_test.log" | head -12 | tee -a "$SUM"

if [ "${SANITIZE:-0}" = 1 ]; then
    timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 "$BUILD/tests/gpu/test_fact_cudss" \
        > "$OUT/cudss_memcheck.log" 2>&1
    note "memcheck: rc $? ($(grep -c 'Invalid\|ERROR SUMMARY: [1-9]' "$OUT/cudss_memcheck.log") error lines)"
fi

if [ -n "${FACT_CONFIG:-}" ]; then
    BIN=$BUILD/app/pjds-lanczos OUT=$OUT bash bench/fact_bench.sh "$FACT_CONFIG" 2>&1 | tail -20
fi
echo; echo "=== summary"; cat "$SUM"
