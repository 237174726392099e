#!/bin/bash
# sweep_bench.sh — the sweep figures on one GPU, in one run (called by
# gpu_run.sh, PARTS="sweep"; or alone: BIN=build-gpu/app/pjds-lanczos
# OUT=/tmp/o bash bench/sweep_bench.sh):
#   1. the HMEp coupling sweep g = 0.0, 0.1, .., 1.0 (configs/hmep_g_sweep.ini,
#      11 points, nev 4, tol 1e-10) in one `solve`, process start to end;
#   2. the same 11 points as 11 separate `solve configs/hmep.ini` runs;
#   3. the sweep with warm_start = false (the warm start's SpMV saving);
# then bench/sweep_summary.py prints the table (sweep / separate time, refill
# against the first point's build + permute + upload, warm vs cold SpMVs).
set -u
BIN=${BIN:?BIN=path/to/pjds-lanczos}
OUT=${OUT:-/tmp/pjds-sweep-out}
PY=${PY:-python3}
SWEEP=${SWEEP_CONFIG:-configs/hmep_g_sweep.ini}
SINGLE=${SINGLE_CONFIG:-configs/hmep.ini}
GS=${GS:-"0 0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9 1"}
D=${WORK:-/tmp/pjds-sweep}
mkdir -p "$OUT" "$D"
rm -rf "$D"/*
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
{
    s0=$(date +%s%N)
    timeout 240 "$BIN" solve "$SWEEP" --verbose --set output.file="$D/warm.h5" --set spmv.backend=cuda 2>&1 |
        grep -vE "restart [0-9]+, converged|Hamiltonian rows|debug: (lanczos|krylov)"
    echo "SWEEP warm exit ${PIPESTATUS[0]} wall_ms $(ms $s0)"
    for g in $GS; do
        s0=$(date +%s%N)
        timeout 60 "$BIN" solve "$SINGLE" --quiet --set output.file="$D/g$g.h5" --set spmv.backend=cuda \
            --set model.coupling="$g" > /dev/null 2>&1
        echo "SINGLE g=$g exit $? wall_ms $(ms $s0)"
    done
    s0=$(date +%s%N)
    timeout 240 "$BIN" solve "$SWEEP" --quiet --set output.file="$D/cold.h5" --set spmv.backend=cuda \
        --set sweep.warm_start=false > /dev/null 2>&1
    echo "SWEEP cold exit $? wall_ms $(ms $s0)"
    s0=$(date +%s%N)
    timeout 240 "$BIN" solve "$SWEEP" --quiet --set output.file="$D/warm2.h5" --set spmv.backend=cuda > /dev/null 2>&1
    echo "SWEEP warm2 exit $? wall_ms $(ms $s0)"
} > "$OUT/sweep.log" 2>&1
grep -E "^(SWEEP|SINGLE)|sweep: point" "$OUT/sweep.log" | cut -c1-200
"$PY" bench/sweep_summary.py --log "$OUT/sweep.log" --warm "$D/warm.h5" --cold "$D/cold.h5" \
    --single "$D" --gs "$GS" | tee "$OUT/sweep_summary.txt"
