#!/bin/bash
# step_ncv.sh — HMEp's Lanczos step against the basis size, on the GPU
# machine: `pjds-lanczos solve configs/hmep.ini` with [solver] ncv = each of
# NCVS (default "24 16 32 40"; 24 is the default's value at nev 4), with
# verify on and off, one process each, and a table last: products, full
# steps, the step, the SpMV median, step / SpMV, the solve phase.  Uses the
# binary that bench/acceptance.sh or bench/hmep_phases.sh built in $BUILD
# (build-gpu); extra arguments go to every solve (--set ...).  PYTHON: an
# interpreter with h5py (python3).
#   run(command="bash bench/acceptance.sh; bash bench/step_ncv.sh", carry=[".deps", ".accept"])
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build-gpu}
BIN=$BUILD/app/pjds-lanczos
OUT=${OUT:-/tmp/pjds-ncv}
mkdir -p "$OUT"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-16}
. bench/device_deps.sh || true
[ -x "$BIN" ] || { echo "step_ncv: no $BIN (build it first)"; exit 2; }
log=$OUT/step_ncv.log
: > "$log"
rows=""
for ncv in ${NCVS:-24 16 32 40}; do
    for verify in true false; do
        h5=$OUT/step_ncv.h5
        "$BIN" solve configs/hmep.ini --overwrite --set output.file="$h5" --set solver.ncv="$ncv" \
            --set solver.verify="$verify" "$@" > "$OUT/step_ncv.txt" 2>&1
        rc=$?
        { echo "== ncv $ncv verify $verify: exit $rc"; cat "$OUT/step_ncv.txt"; } >> "$log"
        # the figures from the result file's attributes, as bench/acceptance.py reads them
        row=$("${PYTHON:-python3}" - "$ncv" "$verify" "$rc" "$h5" <<'PY'
import sys
import h5py
ncv, verify, rc, path = sys.argv[1:5]
try:
    with h5py.File(path, "r") as f:
        a, ev = f.attrs, f["eigenvalues"][...]
        step, spmv = float(a["step_seconds"]), float(a["spmv_median_seconds"])
        print("| %s | %s | %s | %d | %d of %d | %.3f | %.3f | %.2f | %.3f | %.17g |" % (
            ncv, verify, rc, a["spmv_count"], a["full_reorthogonalizations"], a["steps"], 1e3 * step, 1e3 * spmv,
            step / spmv, float(a["solve_seconds"]), ev[-1]))
except (OSError, KeyError) as e:
    print("| %s | %s | %s | no result (%s) | | | | | | |" % (ncv, verify, rc, e))
PY
)
        rows+="${row:-| $ncv | $verify | $rc | no table row (see $log) | | | | | | |}"$'\n'
    done
done
echo
echo "HMEp on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), commit $(git log --oneline -1 2>/dev/null | cut -c1-12)"
echo "| ncv | verify | exit | products | full steps | step ms | SpMV median ms | step / SpMV | solve s | eigenvalue[3] |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
printf '%s' "$rows"
