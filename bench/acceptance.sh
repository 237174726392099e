#!/bin/bash
# acceptance.sh — the whole product at the seed's sizes on one GPU, with
# default settings, against a committed baseline (docs/performance.md, "Acceptance run").
#
# Builds pjds-lanczos and pjds-bench (which `pjds-lanczos bench` runs; CUDA,
# sm_90) in $BUILD, then bench/acceptance.py runs every user-facing workload
# (HMEp solve default and verify = false, the 11-point coupling sweep against
# 2 separate solves, dos, spectral, observables, dlr1_like and uhbr_like,
# hmep_m21, a real matrix imported from HDF5, bench's SpMV and SpMMV rows,
# CuPy eigsh and cuSPARSE in the same run), checks every result against an
# independent reference and every figure against the baseline of the GPU it
# runs on (bench/baseline/h200.json on an H200, else h100.json), and prints
# one table last.
#
# Exit status: 0 every result right and no figure more than 10 % worse than
# its baseline; 1 otherwise (the table says which row); 2 the build failed.
#
# Device call (from the development machine; ../shared does not travel, so
# the real matrix is carried in the git-ignored folder .accept/):
#   mkdir -p .accept && cp ../shared/matrices/e20r0000.mtx .accept/
#   run(command="bash bench/acceptance.sh", carry=[".deps", ".accept"], timeout_s=600)
# Environment: BUILD (build-gpu), OUT (results and logs; /tmp/pjds-accept),
# BASELINE (bench/baseline/h200.json where nvidia-smi names an H200, else
# bench/baseline/h100.json), MATRICES (../shared/matrices, else
# .accept), ACCEPT_ONLY (comma-separated workload names), ACCEPT_REFS=1 (also
# run the CPU-backend reference solves of hmep_m21; see acceptance.py --help).
set -u
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-/tmp/pjds-accept}
BUILD=${BUILD:-build-gpu}
mkdir -p "$OUT"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-16} NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
T0=$(date +%s)
. bench/device_deps.sh || echo "acceptance: warning: no .deps/*.deb (libinih): the build may fail"
{
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1
    git log --oneline -1 2>/dev/null
    bash tools/tree_id.sh 2>&1 # the files' fingerprint: the copy's .git may be stale
} > "$OUT/env.log"
case "$(head -1 "$OUT/env.log")" in
    *H200*) BASELINE=${BASELINE:-bench/baseline/h200.json} ;;
    *) BASELINE=${BASELINE:-bench/baseline/h100.json} ;;
esac
echo "acceptance: $(head -1 "$OUT/env.log"); baseline $BASELINE; commit $(sed -n 2p "$OUT/env.log" | cut -c1-60); $(sed -n 3p "$OUT/env.log")"
if ! { timeout 240 cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DPJDS_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
           > "$OUT/build.log" 2>&1 &&
       timeout 300 cmake --build "$BUILD" -j "${JOBS:-16}" --target pjds-lanczos pjds-bench >> "$OUT/build.log" 2>&1; }; then
    echo "acceptance: the build FAILED (see $OUT/build.log)"
    grep -E "error" "$OUT/build.log" | head -20
    exit 2
fi
echo "acceptance: built in $(( $(date +%s) - T0 )) s"
MATRICES=${MATRICES:-../shared/matrices}
[ -d "$MATRICES" ] || MATRICES=.accept
exec python3 bench/acceptance.py --bin "$BUILD/app/pjds-lanczos" --out "$OUT" \
    --baseline "$BASELINE" --matrices "$MATRICES" "$@"
