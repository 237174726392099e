#!/bin/bash
# step_ncv.sh — HMEp's Lanczos step against the basis size, on the GPU
# machine: `pjds-lanczos solve configs/hmep.ini` with [solver] ncv = each of
# NCVS (default "24 16 32 40"; 24 is the default's value at nev 4), with
# verify on and off, one process each, and a table last: products, full
# steps, the step, the SpMV median, step / SpMV, the solve phase.  Uses the
# binary that bench/acceptance.sh or bench/hmep_phases.sh built in $BUILD
# (build-gpu); extra arguments go to every solve (--set ...).
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
        "$BIN" solve configs/hmep.ini --overwrite --set output.file=/tmp/step_ncv.h5 --set solver.ncv="$ncv" \
            --set solver.verify="$verify" "$@" > /tmp/step_ncv.txt 2>&1
        rc=$?
        { echo "== ncv $ncv verify $verify: exit $rc"; cat /tmp/step_ncv.txt; } >> "$log"
        row=$(python3 - "$ncv" "$verify" "$rc" /tmp/step_ncv.txt <<'PY'
import re, sys
ncv, verify, rc, path = sys.argv[1:5]
t = open(path).read()
def g(p, d="-"):
    m = re.search(p, t)
    return m.group(1) if m else d
pats = [r"converged after \d+ restart\(s\), (\d+) SpMVs", r"(\d+) of \d+ steps full",
        r"Lanczos step [0-9.]+ ms \((\d+) steps", r"Lanczos step ([0-9.]+) ms",
        r"SpMV per product.*median ([0-9.]+) ms", r"step / SpMV median = ([0-9.]+)",
        r"solve ([0-9.]+) s \(of it", r"eigenvalue\[3\]: (\S+)"]
v = [g(p) for p in pats]
print("| %s | %s | %s | %s | %s of %s | %s | %s | %s | %s | %s |" % (ncv, verify, rc, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]))
PY
)
        rows+="$row"$'\n'
    done
done
echo
echo "HMEp on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), commit $(git log --oneline -1 2>/dev/null | cut -c1-12)"
echo "| ncv | verify | exit | products | full steps | step ms | SpMV median ms | step / SpMV | solve s | eigenvalue[3] |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
printf '%s' "$rows"
