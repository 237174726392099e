#!/bin/bash
# hmep_phases.sh — the HMEp run as a user starts it, phase by phase, on the
# GPU machine: builds pjds-lanczos (CUDA, sm_90) in $BUILD unless SKIP_BUILD=1,
# then runs `pjds-lanczos solve configs/hmep.ini` RUNS times with default
# settings and with verify = false, timing each process from outside, and
# prints the solver's phase, step and reorthogonalisation lines and a table
# of medians last.  Extra arguments are passed to every solve (--set ...).
#   run(command="bash bench/hmep_phases.sh", carry=[".deps"])
set -u
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-/tmp/pjds-phases}
BUILD=${BUILD:-build-gpu}
RUNS=${RUNS:-3}
mkdir -p "$OUT"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-16}
. bench/device_deps.sh || true
if [ "${SKIP_BUILD:-0}" != 1 ]; then
    { cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DPJDS_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 &&
      cmake --build "$BUILD" -j "${JOBS:-16}" --target pjds-lanczos; } > "$OUT/build.log" 2>&1 ||
        { tail -30 "$OUT/build.log"; exit 2; }
fi
BIN=$BUILD/app/pjds-lanczos
table=""
for mode in default noverify; do
    extra=()
    [ "$mode" = noverify ] && extra=(--set solver.verify=false)
    walls=()
    for r in $(seq "$RUNS"); do
        log=$OUT/$mode.$r.log
        t0=$(date +%s.%N)
        "$BIN" solve configs/hmep.ini --overwrite --set output.file="$OUT/$mode.h5" "${extra[@]}" "$@" > "$log" 2>&1
        rc=$?
        t1=$(date +%s.%N)
        w=$(python3 -c "print(f\"{$t1 - $t0:.3f}\")")
        walls+=("$w")
        echo "== $mode run $r: exit $rc, wall $w s"
        grep -E "phases:|step |partial reorth|SpMV per product|converged after|eigenvalue\[|krylov:|pl_op_create: upload|observables of" "$log" | cut -c1-400
    done
    med=$(printf '%s\n' "${walls[@]}" | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p")
    sol=$(python3 - "$OUT/$mode.h5" <<'PY'
import sys, h5py
a = h5py.File(sys.argv[1], "r").attrs
print(f"solve {float(a['solve_seconds']):.3f} s, spmv {1e3*float(a['spmv_median_seconds']):.3f} ms, "
      f"step {1e3*float(a['step_seconds']):.3f} ms, {int(a['spmv_count'])} SpMVs")
PY
)
    table+="$mode: wall median $med s; last run: $sol"$'\n'
done
echo "==== hmep phases ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1))"
printf '%s' "$table"
if [ -n "${MPI_PROBE:-}" ]; then
    mpicc -O2 -x c - -o "$OUT/mi" <<'C'
#include <mpi.h>
#include <stdio.h>
#include <time.h>
static double now(void){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+1e-9*t.tv_nsec;}
int main(int c,char**v){double t0=now(); int p; MPI_Init_thread(&c,&v,MPI_THREAD_MULTIPLE,&p); double t1=now();
MPI_Finalize(); printf("init %.3f s, finalize %.3f s\n",t1-t0,now()-t1); return 0;}
C
    for env in "X=1" "OMPI_MCA_ess_singleton_isolated=1" "OMPI_MCA_ess_singleton_isolated=1 OMPI_MCA_pml=ob1" \
               "OMPI_MCA_ess_singleton_isolated=1 OMPI_MCA_pml=ob1 OMPI_MCA_btl=self"; do
        echo "mpi probe [$env]: $(env $env "$OUT/mi") / $(env $env "$OUT/mi")"
    done
fi
