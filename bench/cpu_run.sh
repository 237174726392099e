#!/bin/bash
# cpu_run.sh — the CPU figures of `solve` on HMEp: SpMV of pJDS
# against a plain OpenMP CSR loop on the same cores (`bench`, CPU backend),
# a whole `solve` on the CPU backend, and SciPy's eigsh (ARPACK) on the same
# matrix in the same run (bench/cpu_peer.py).  Needs a built binary.
#   BIN=build/app/pjds-lanczos CONFIG=configs/hmep.ini bash bench/cpu_run.sh
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=${BIN:-build/app/pjds-lanczos}
CONFIG=${CONFIG:-configs/hmep.ini}
OUT=${OUT:-/tmp/pjds-cpu-out}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}
echo "=== CPU: $(nproc) cores, OMP_NUM_THREADS=$OMP_NUM_THREADS, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
timeout 180 "$BIN" bench "$CONFIG" --set spmv.backend=cpu --set spmv.repeats=10 --quiet > "$OUT/cpu_bench.log" 2>&1
echo "bench exit $?"; grep -E "^(format|pJDS|CSR|ELLPACK|copy|matrix)" "$OUT/cpu_bench.log" | cut -c1-150
timeout 240 "$BIN" solve "$CONFIG" --set spmv.backend=cpu --overwrite --set output.file=/tmp/cpu_hmep.h5 > "$OUT/cpu_solve.log" 2>&1
echo "solve exit $?"; grep -E "eigenvalue|restart\(s\)|times:|GF/s" "$OUT/cpu_solve.log" | grep -v "restart [0-9]*, conv"
H5=/tmp/cpu_peer_matrix.h5
timeout 300 "$PY" bench/cpu_peer.py "$CONFIG" --bin "$BIN" --matrix "$H5" --result /tmp/cpu_hmep.h5 > "$OUT/cpu_peer.log" 2>&1
echo "peer exit $?"; tail -25 "$OUT/cpu_peer.log"
