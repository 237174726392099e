#!/usr/bin/env bash
# Are two builds' results bit for bit the same?  Runs the quickstart model and
# three real matrices (lund_a: symmetric, Lanczos; e05r0000: Lanczos after the
# symmetry check; olm1000: nonsymmetric, Krylov-Schur) on the CPU backend with
# each binary and compares /eigenvalues as hexadecimal floats.  For
# refactors that must not change a number.
# Usage: tools/bitwise_check.sh OLD_PJDS_LANCZOS NEW_PJDS_LANCZOS
# Environment: PJDS_MATRICES (../shared/matrices), PJDS_PYTHON (python3 with
# h5py, scipy).  Exit 0 when every eigenvalue is identical, 1 when one differs,
# 77 when the matrices are missing, 2 on a usage error or a failed run.
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: $0 OLD_BIN NEW_BIN" >&2; exit 2; }
SRC=$(cd "$(dirname "$0")/.." && pwd)
M=${PJDS_MATRICES:-$SRC/../shared/matrices}
PY=${PJDS_PYTHON:-/usr/bin/python3}
for m in lund_a e05r0000 olm1000; do [ -f "$M/$m.mtx" ] || { echo "bitwise_check: $M/$m.mtx missing: skipped"; exit 77; }; done
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
for m in lund_a e05r0000 olm1000; do "$PY" "$SRC/tools/mtx2h5.py" "$M/$m.mtx" "$W/$m.h5" >/dev/null || exit 2; done
run() { # $1 = binary, $2 = tag: writes $W/$2.txt, one line per case
    local o="$W/$2"
    mkdir -p "$o"
    "$1" solve "$SRC/configs/quickstart.ini" --quiet --set output.file="$o/quickstart.h5" --set spmv.backend=cpu >/dev/null || return 2
    for m in lund_a e05r0000 olm1000; do
        local which=smallest
        [ $m = lund_a ] || which=largest_magnitude
        "$1" solve "$SRC/configs/import.ini" --quiet --set matrix.file="$W/$m.h5" --set solver.which=$which \
            --set output.file="$o/$m.h5" --set spmv.backend=cpu >/dev/null || return 2
    done
    "$PY" - "$o" > "$W/$2.txt" <<'PYEOF'
import sys, h5py
for name in ("quickstart", "lund_a", "e05r0000", "olm1000"):
    with h5py.File(f"{sys.argv[1]}/{name}.h5", "r") as f:
        e = f["/eigenvalues"][()]
    print(name, e.dtype, " ".join(float(x).hex() for x in e.view("f8").ravel()))
PYEOF
}
run "$1" old || { echo "bitwise_check: $1 failed"; exit 2; }
run "$2" new || { echo "bitwise_check: $2 failed"; exit 2; }
if diff "$W/old.txt" "$W/new.txt"; then
    echo "bitwise_check: identical ($(wc -l < "$W/new.txt") solves)"
    exit 0
fi
echo "bitwise_check: the eigenvalues differ"
exit 1
