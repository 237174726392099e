#!/bin/bash
# fact_bench.sh — one shift-and-invert solve of CONFIG with each factorisation back-end: cuDSS on one GPU
# (one rank) and MUMPS on the host cores (NP ranks), same config, same run, REPS times each.  Prints a
# table: wall seconds (median), the largest rank's max RSS, the GPU's peak memory in use (nvidia-smi,
# sampled every 0.1 s, the idle level subtracted), the factorisation lines of --verbose, and whether the
# eigenvalues of the two agree (relative 1e-8).  Generic over the config: it needs a [solver] target (and
# transform) that takes the factorisation; the back-end is set with --set solver.factorization=...
#
#   BIN=build-gpu/app/pjds-lanczos OUT=/tmp/fb bash bench/fact_bench.sh configs/MY_CASE.ini
# Environment: BIN (build/app/pjds-lanczos), OUT (/tmp/pjds-fact-bench), NP (MUMPS ranks: the core count),
# REPS (2), BACKENDS ("cudss mumps"), MPIEXEC (mpiexec --allow-run-as-root --oversubscribe --bind-to none),
# EXTRA (more --set options for every run).
set -u
CONFIG=${1:?usage: bash bench/fact_bench.sh CONFIG.ini}
BIN=${BIN:-build/app/pjds-lanczos}
OUT=${OUT:-/tmp/pjds-fact-bench}
NP=${NP:-$(nproc)}
REPS=${REPS:-2}
BACKENDS=${BACKENDS:-cudss mumps}
MPIEXEC=${MPIEXEC:-mpiexec --allow-run-as-root --oversubscribe --bind-to none}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
[ -x "$BIN" ] || { echo "fact_bench: no binary $BIN (set BIN)"; exit 1; }
[ -f "$CONFIG" ] || { echo "fact_bench: no config $CONFIG"; exit 1; }

# max RSS per rank through GNU time where it exists (else the column reads 0)
TIMECMD=(); [ -x /usr/bin/time ] && TIMECMD=(/usr/bin/time -f "RSS_KB %M")
gpu_used() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null | head -1; }
# sample the GPU's memory in use into $1 until killed
gpu_sampler() { while :; do gpu_used >> "$1"; sleep 0.1; done; }

# one run: backend, rep -> prints "wall rss_kb gpu_peak_mib rc"
one_run() {
    local be=$1 rep=$2 np=1 log="$OUT/fact_$1_$2.log" h5="$OUT/fact_$1.h5" idle samp pid t0 t1 rc rss peak
    local be_set="--set spmv.backend=cuda"
    [ "$be" = mumps ] && np=$NP && be_set="--set spmv.backend=cpu" # MUMPS: the host cores, one rank each
    idle=$(gpu_used); idle=${idle:-0}
    samp="$OUT/.gpu_${be}_${rep}"; : > "$samp"
    gpu_sampler "$samp" & pid=$!
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    OMP_NUM_THREADS=$([ "$np" = 1 ] && echo "$NP" || echo 1) $MPIEXEC -n "$np" "${TIMECMD[@]}" \
        "$BIN" solve "$CONFIG" --verbose --overwrite --set solver.factorization="$be" \
        --set output.file="$h5" $be_set ${EXTRA:-} > "$log" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
    rss=$(awk '/^RSS_KB/ {if ($2 > m) m = $2} END {print m + 0}' "$log")
    peak=$(sort -n "$samp" | tail -1); peak=$(( ${peak:-$idle} - idle ))
    rm -f "$samp"
    awk -v a="$t0" -v b="$t1" -v r="$rss" -v g="$peak" -v c="$rc" 'BEGIN {printf "%.3f %d %d %d\n", b - a, r, g, c}'
}

echo "fact_bench: $CONFIG, $(basename "$BIN"), backends: $BACKENDS, MUMPS on $NP ranks, $REPS runs each"
printf "%-7s %5s %10s %12s %14s %s\n" backend ranks "wall s" "max RSS MB" "GPU peak MiB" "runs (wall s)"
for be in $BACKENDS; do
    walls=""; rss=0; gpu=0; fails=0
    for rep in $(seq 1 "$REPS"); do
        read -r w r g c < <(one_run "$be" "$rep")
        walls="$walls $w"
        [ "$c" = 0 ] || fails=$((fails + 1))
        [ "$r" -gt "$rss" ] && rss=$r
        [ "$g" -gt "$gpu" ] && gpu=$g
    done
    med=$(echo "$walls" | tr ' ' '\n' | grep . | sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}')
    printf "%-7s %5s %10s %12d %14d %s%s\n" "$be" "$([ "$be" = mumps ] && echo "$NP" || echo 1)" "$med" \
        $((rss / 1024)) "$gpu" "$walls" "$([ $fails -gt 0 ] && echo " FAILED $fails (see $OUT/fact_${be}_*.log)")"
done
echo
for be in $BACKENDS; do
    echo "--- $be (last run): factorisation lines"
    grep -iE "cudss|mumps|factor|analys|estimate|solves" "$OUT/fact_${be}_${REPS}.log" | head -8
    grep -E "error" "$OUT/fact_${be}_${REPS}.log" | head -3
done
set -- $BACKENDS
if [ $# -ge 2 ] && [ -f "$OUT/fact_$1.h5" ] && [ -f "$OUT/fact_$2.h5" ]; then
    "$PY" - "$OUT/fact_$1.h5" "$OUT/fact_$2.h5" <<'EOF'
import sys
import h5py, numpy as np
a, b = (h5py.File(f, "r")["eigenvalues"][:] for f in sys.argv[1:3])
n = min(len(a), len(b))
d = np.max(np.abs(a[:n] - b[:n]) / np.maximum(1e-300, np.abs(b[:n]))) if n else float("nan")
print(f"eigenvalues: {len(a)} and {len(b)}, largest relative difference {d:.2e}: {'agree' if d <= 1e-8 else 'DIFFER'}")
print("  first:", a[:3], b[:3])
EOF
fi
