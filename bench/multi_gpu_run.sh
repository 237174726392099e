#!/bin/bash
# multi_gpu_run.sh — multi-GPU scaling runs on one host with 2 or
# 4 GPUs (repository root; builds with CUDA first, like gpu_run.sh):
#  - weak scaling: configs/hmep.ini on 1 GPU, hmep_m18.ini on 2, hmep_m21.ini
#    on 4 (solve; 2 and 4 GPUs with transport nccl and ipc, exchange task);
#  - strong scaling: configs/hh7.ini on 1, 2, 4 GPUs: `bench` per transport
#    (nccl, ipc; mpi on 2 GPUs only: host staging is 15-30x slower) = the
#    distributed operator per exchange mode with its local/remote/comm split;
#    solve for nccl/task, ipc/vector, ipc/task;
#  - largest problem: configs/hh9.ini (solve, nev 1) on 4 GPUs, with time and
#    the peak memory per GPU (nvidia-smi sampled every 0.5 s) and host memory.
# GPU counts above the visible GPUs are skipped.  One rank per GPU (the app
# picks GPU = node-local rank).  Every step has a time limit; the script
# stops starting new steps after BUDGET seconds (default 430).  Full logs go
# to $OUT (7 files); a short table prints LAST.
#
#   bash bench/multi_gpu_run.sh     # 2-GPU host: ~4 min, 4-GPU host: ~7 min
#   PARTS="strong big" TR_BIG=nccl bash bench/multi_gpu_run.sh   # a subset
#
# Device calls (from the dev box):
#   run(kind="nvidia-h200-x2", command="bash bench/multi_gpu_run.sh", carry=[".deps"], timeout_s=600)
#   run(kind="nvidia-h200-x4", command="bash bench/multi_gpu_run.sh", carry=[".deps"], timeout_s=600)
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/pjds-mgpu-out}
mkdir -p "$OUT"
BUILD=${BUILD:-build-mgpu}
JOBS=${JOBS:-$(nproc)}
BUDGET=${BUDGET:-430}
T0=$(date +%s)
SUM=$OUT/summary.txt
TAB=$OUT/.table
: > "$SUM"
: > "$TAB"
el() { echo $(( $(date +%s) - T0 )); }
note() { echo "$*" | tee -a "$SUM"; }
step() { echo; echo "=== [$(el) s] $*"; }
over() { [ "$(el)" -ge "$BUDGET" ]; }
export NCCL_NVLS_ENABLE=0   # never NVLink multicast

# ---- environment, deps, build ------------------------------------------------
{
    nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv 2>&1
    nvidia-smi topo -m 2>&1 | head -12
    nvcc --version | tail -1
    mpirun --version 2>&1 | head -1
    nproc
    free -g | head -2
    git log --oneline -1 2>/dev/null
    bash tools/tree_id.sh # the files' fingerprint: the copy's .git may be stale
} > "$OUT/env.log" 2>&1
NG=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
CORES=$(nproc)
note "gpus: $NG x $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), $CORES cores"
. bench/device_deps.sh || echo "warning: no .deps/*.deb (libinih): the build may fail"
step "build"
if ! { timeout 300 cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DPJDS_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 &&
       timeout 300 cmake --build "$BUILD" -j "$JOBS" --target pjds-lanczos pjds-bench test_cuda_backend; } > "$OUT/build.log" 2>&1; then
    note "build: FAILED (see build.log)"
    grep -E "error|Error" "$OUT/build.log" | head -20 | tee -a "$SUM"
    exit 1
fi
NCCL=$(grep -q '^#define PJDS_HAVE_NCCL 1' "$BUILD/generated/pl_build.h" && echo yes || echo no)
note "build: ok ($(el) s), NCCL: $NCCL"
BIN=$BUILD/app/pjds-lanczos
TRANSPORTS="ipc"
[ "$NCCL" = yes ] && TRANSPORTS="nccl ipc"
TR_BIG=${TR_BIG:-ipc}  # transport of the hh9 run

# ---- correctness first: every transport x exchange mode on 2 GPUs -------------
step "gpu_multi_op"
if timeout 240 ctest --test-dir "$BUILD" -R gpu_multi_op -V > "$OUT/gpu_multi_op.log" 2>&1; then
    if grep -q 'Skipped' "$OUT/gpu_multi_op.log"; then note "gpu_multi_op: skipped (no GPU)"
    else note "gpu_multi_op: passed ($(grep -c ' rel ' "$OUT/gpu_multi_op.log") eigenvalue checks)"; fi
else
    note "gpu_multi_op: FAILED (see gpu_multi_op.log)"
    grep -E 'FAIL|failed|differs|error' "$OUT/gpu_multi_op.log" | head -10 | tee -a "$SUM"
fi

MPIRUN="mpirun --allow-run-as-root --oversubscribe --bind-to none"
# run LOG TAG NP TIMEOUT cmd config [--set ...]: one MPI job, output appended to LOG
run() {
    local log=$1 tag=$2 np=$3 to=$4; shift 4
    local thr=$(( CORES / np )); [ $thr -gt 16 ] && thr=16; [ $thr -lt 1 ] && thr=1
    {
        echo; echo "##### $tag: $np rank(s), OMP_NUM_THREADS=$thr: $*"
        local t=$(date +%s.%N)
        OMP_NUM_THREADS=$thr timeout "$to" $MPIRUN -n "$np" -x OMP_NUM_THREADS -x NCCL_NVLS_ENABLE "$BIN" "$@" 2>&1
        local rc=$?
        echo "##### $tag: exit $rc, wall $(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}') s"
    } >> "$log"
}
# solve row: tag np config transport exchange timeout [extra --set ...]
solve_row() {
    local tag=$1 np=$2 cfg=$3 tr=$4 ex=$5 to=$6 log=$7; shift 7
    if over; then note "$tag: skipped (time budget)"; return; fi
    step "$tag"
    run "$log" "$tag" "$np" "$to" solve "$cfg" --overwrite --set output.file="/tmp/mgpu-$tag.h5" \
        --set spmv.backend=cuda --set spmv.transport="$tr" --set spmv.exchange="$ex" "$@"
    # the last job's lines in the log
    awk -v t="##### $tag:" 'index($0, t) == 1 {on = !on} on' "$log" > "$OUT/.last"
    local rc wall perm tot sp np_ gfs nev
    rc=$(grep "##### $tag: exit" "$log" | tail -1 | sed 's/.*exit \([0-9]*\),.*/\1/')
    wall=$(grep "##### $tag: exit" "$log" | tail -1 | sed 's/.*wall \([0-9.]*\) s/\1/')
    perm=$(grep -o 'permute/upload [0-9.]* s' "$OUT/.last" | awk '{print $2}' | tail -1)
    tot=$(grep -o 'total [0-9.]* s' "$OUT/.last" | awk '{print $2}' | tail -1)
    gfs=$(grep -o 'SpMV [0-9.]* GF/s' "$OUT/.last" | awk '{print $2}' | tail -1)
    nev=$(grep -c '^eigenvalue\[' "$OUT/.last")
    # "SpMV per product (max over ranks): median M ms, mean A ms, first F ms, max X ms"
    local med mean first
    med=$(grep -o 'median [0-9.]* ms' "$OUT/.last" | awk '{print $2}' | tail -1)
    mean=$(grep -o 'mean [0-9.]* ms' "$OUT/.last" | awk '{print $2}' | tail -1)
    first=$(grep -o 'first [0-9.]* ms' "$OUT/.last" | awk '{print $2}' | tail -1)
    printf "%-22s %3s %-5s %-7s %5s %8s %8s %8s %7s %7s %8s %8s %4s\n" "$tag" "$np" "$tr" "$ex" "${rc:-?}" "${wall:-?}" \
        "${perm:--}" "${tot:--}" "${med:--}" "${mean:--}" "${first:--}" "${gfs:--}" "$nev" >> "$TAB"
    echo "$tag: exit ${rc:-?}, wall ${wall:-?} s, permute ${perm:--} s, total ${tot:--} s, SpMV median ${med:--} ms mean ${mean:--} ms first ${first:--} ms, ${gfs:--} GF/s"
}
# bench row(s): tag np config transport timeout log
bench_rows() {
    local tag=$1 np=$2 cfg=$3 tr=$4 to=$5 log=$6
    if over; then note "$tag: skipped (time budget)"; return; fi
    step "$tag"
    run "$log" "$tag" "$np" "$to" bench "$cfg" --set spmv.backend=cuda --set spmv.transport="$tr" --set spmv.repeats=50
    awk -v t="##### $tag:" 'index($0, t) == 1 {on = !on} on' "$log" |
        awk -v tag="$tag" -v np="$np" -v tr="$tr" '$1 ~ /^(vector|overlap|task)$/ && NF >= 9 {
            printf "%-22s %3s %-5s %-7s %9s %9s %9s %9s %9s %6s\n", tag, np, tr, $1, $2, $4, $5, $6, $7, $NF }' >> "$OUT/.bench"
    grep -E '^(vector|overlap|task) ' "$log" | tail -3
}
part() { case " ${PARTS:-weak strong big} " in *" $1 "*) return 0 ;; esac; return 1; }
: > "$OUT/.bench"
WEAK=$OUT/weak.log STRONG=$OUT/strong.log BIG=$OUT/hh9.log
: > "$WEAK"; : > "$STRONG"; : > "$BIG"

# ---- weak scaling (HMEp family, about 3.1 M rows per GPU... 6.2/13.5/28 M) ---
if part weak; then
solve_row weak-hmep-1gpu 1 configs/hmep.ini mpi task 120 "$WEAK"
for g in 2 4; do
    [ "$NG" -ge $g ] || continue
    cfg=configs/hmep_m18.ini; [ $g = 4 ] && cfg=configs/hmep_m21.ini
    for tr in $TRANSPORTS; do solve_row "weak-${g}gpu-$tr" $g $cfg $tr task 120 "$WEAK"; done
done
fi

# ---- strong scaling (hh7) ---------------------------------------------------
if part strong; then
solve_row strong-hh7-1gpu 1 configs/hh7.ini mpi vector 180 "$STRONG"
for g in 2 4; do
    [ "$NG" -ge $g ] || continue
    for tr in $TRANSPORTS; do bench_rows "bench-hh7-${g}gpu-$tr" $g configs/hh7.ini $tr 150 "$STRONG"; done
    [ $g = 2 ] && bench_rows "bench-hh7-${g}gpu-mpi" $g configs/hh7.ini mpi 150 "$STRONG"
    for trex in nccl:task ipc:vector ipc:task; do
        tr=${trex%%:*} ex=${trex##*:}
        case " $TRANSPORTS " in *" $tr "*) solve_row "hh7-${g}gpu-$tr-$ex" $g configs/hh7.ini $tr $ex 150 "$STRONG" ;; esac
    done
done
fi

# ---- largest problem (hh9, 4 GPUs) -------------------------------------------
if part big; then
if [ "$NG" -ge 4 ]; then
    tr=$TR_BIG
    ( while :; do
          echo "t $(date +%s)"
          nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits 2>/dev/null | sed 's/^/gpu /'
          free -m | awk '/^Mem:/ {print "host_used_mb", $3}'
          sleep 0.5
      done ) > "$OUT/gpumem.log" 2>&1 &
    MON=$!
    solve_row hh9-4gpu-$tr 4 configs/hh9.ini $tr task 300 "$BIG" --set solver.nev=1
    kill "$MON" 2> /dev/null
    wait "$MON" 2> /dev/null
    note "hh9 peak memory per GPU (MiB): $(awk '$1 == "gpu" {gsub(",", "", $2); if ($3 > m[$2]) m[$2] = $3}
        END {for (g in m) printf "GPU%s %d  ", g, m[g]}' "$OUT/gpumem.log")"
    note "hh9 peak host memory used (MiB, whole host): $(awk '$1 == "host_used_mb" && $2 > m {m = $2} END {print m}' "$OUT/gpumem.log")"
fi
fi

# ---- table (last) -------------------------------------------------------------
{
    echo
    echo "################ multi-GPU summary ($(el) s) ################"
    cat "$SUM"
    echo
    echo "solve: wall = mpirun wall s; permute = pl_op_create s; total = app total s; SpMV ms per product: median, mean, first (max over ranks)"
    printf "%-22s %3s %-5s %-7s %5s %8s %8s %8s %7s %7s %8s %8s %4s\n" run gpus trans exch exit wall permute total \
        median mean first GF/s nev
    cat "$TAB"
    echo
    echo "bench (distributed operator, median of 50 applies, max over ranks; split from a synchronised pass):"
    printf "%-22s %3s %-5s %-7s %9s %9s %9s %9s %9s %6s\n" run gpus trans exch time_ms local_ms remote_ms comm_ms halo eff
    cat "$OUT/.bench"
    echo "logs: $OUT (env.log build.log weak.log strong.log hh9.log gpumem.log summary.txt)"
} > "$OUT/.final"
cat "$OUT/.final" >> "$SUM"
rm -f "$OUT/.last" "$OUT/.table" "$OUT/.bench"
cat "$OUT/.final"
rm -f "$OUT/.final"
