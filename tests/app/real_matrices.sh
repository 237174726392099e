#!/usr/bin/env bash
# Real SuiteSparse matrices end to end through the CLI: convert with
# tools/mtx2h5.py, then
#  - symmetric ones: `solve` lowest and highest eigenvalues equal SciPy's
#    dense eigvalsh (to 1e-9 relative to max(|lambda|, ||A||));
#  - nonsymmetric ones: `solve` with method = lanczos refuses with exit 2
#    naming the asymmetry; the default method (auto) runs Krylov-Schur and
#    records problem = nonsymmetric (tests/nonsym checks its eigenvalues);
#    `info` and `bench` run.
# Usage: real_matrices.sh NAME [NP] [WHICH...]   (PJDS_MATRICES = folder of .mtx files)
# WHICH defaults to "smallest largest".  mhd4800b is checked at the largest
# end only: it is rank-deficient (cond 8e13) and its lower end is a cluster of
# eigenvalues at ~1e-13, which Lanczos without shift-invert cannot resolve.
set -u
name=$1; np=${2:-1}; shift; shift || true
whiches=${*:-smallest largest}
. "$(dirname "$0")/mtx_case.sh"
storage=(); [ "$name" = lund_a ] && storage=(--lower)
mtx_case "$name" "${storage[@]}"
mtx_config "$dir/c.ini" <<EOT
[solver]
nev = 3
tolerance = 1e-12
[spmv]
repeats = 3
[output]
file = $dir/out.h5
EOT
fail=0
run "$PJDS_BIN" info "$dir/c.ini" >"$dir/info" || { echo "FAIL: info"; fail=1; }
sym=$("$PJDS_PYTHON" - "$mtx" <<'EOP'
import sys, scipy.io
A = scipy.io.mmread(sys.argv[1]).tocsr()
d = abs(A - A.T)
print(1 if (d.max() if d.nnz else 0) <= 1e-12 * abs(A).max() else 0)
EOP
)
if [ "$sym" = 1 ]; then
  "$PJDS_PYTHON" - "$mtx" >"$dir/ref" <<'EOP'
import sys, numpy as np, scipy.io
A = scipy.io.mmread(sys.argv[1]).toarray()
w = np.linalg.eigvalsh((A + A.T) / 2)
print(" ".join(repr(x) for x in w[:3]), "|", " ".join(repr(x) for x in w[::-1][:3]), "|", abs(w).max())
EOP
  for which in $whiches; do
    run "$PJDS_BIN" solve "$dir/c.ini" --quiet --overwrite --set solver.which=$which >"$dir/ev" 2>"$dir/err" || { echo "FAIL: solve $which: $(cat "$dir/err")"; fail=1; continue; }
    col=$([ $which = smallest ] && echo 1 || echo 2)
    ref=$(cut -d'|' -f$col "$dir/ref"); norm=$(cut -d'|' -f3 "$dir/ref")
    got=$(sed -n 's/^eigenvalue\[[0-9]*\]: *\([^ ]*\).*/\1/p' "$dir/ev" | tr '\n' ' ')
    echo "$which: reference $ref; solve $got"
    "$PJDS_PYTHON" -c "
import sys
r = [float(x) for x in '$ref'.split()]; g = [float(x) for x in '$got'.split()]; n = float('$norm')
ok = len(g) == 3 and all(abs(a - b) <= 1e-9 * max(abs(a), n) for a, b in zip(r, g))
sys.exit(0 if ok else 1)" || { echo "FAIL: $which eigenvalues differ"; fail=1; }
  done
else
  run "$PJDS_BIN" solve "$dir/c.ini" --quiet --set solver.method=lanczos >"$dir/ev" 2>"$dir/err"; st=$?
  echo "solve (lanczos): exit $st: $(head -c 400 "$dir/err")"
  [ $st -eq 2 ] || { echo "FAIL: lanczos on a nonsymmetric matrix exited $st, expected 2"; fail=1; }
  # one line (per rank: mpirun may add its own lines, and may stop a rank before it prints)
  ne=$(grep -c "^pjds-lanczos: error:" "$dir/err")
  [ "$ne" -ge 1 ] && [ "$ne" -le "$np" ] || { echo "FAIL: $ne error lines"; fail=1; }
  [ "$np" -gt 1 ] || [ "$(wc -l < "$dir/err")" -eq 1 ] || { echo "FAIL: the refusal is not one line"; fail=1; }
  grep -q "not symmetric" "$dir/err" || { echo "FAIL: message does not say 'not symmetric'"; fail=1; }
  grep -q "krylov-schur" "$dir/err" || { echo "FAIL: message does not point to krylov-schur"; fail=1; }
  [ -e "$dir/out.h5" ] && { echo "FAIL: output file left behind"; fail=1; }
  run "$PJDS_BIN" solve "$dir/c.ini" --quiet --set solver.which=largest_magnitude --set solver.tolerance=1e-8 \
      >"$dir/ev" 2>"$dir/err" || { echo "FAIL: solve (auto): $(cat "$dir/err")"; fail=1; }
  "$PJDS_PYTHON" - "$dir/out.h5" <<'EOP' || { echo "FAIL: auto did not run krylov-schur with complex output"; fail=1; }
import sys, h5py
with h5py.File(sys.argv[1]) as f:
    a = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}
    print("auto:", a["method"], a["problem"], a["converged_reason"], f["eigenvalues"].dtype)
    sys.exit(0 if a["method"] == "krylov-schur" and a["problem"] == "nonsymmetric" and f["eigenvalues"].dtype.kind == "c" else 1)
EOP
  run "$PJDS_BIN" bench "$dir/c.ini" --set spmv.backend=cpu >"$dir/bench" 2>&1 || { echo "FAIL: bench: $(tail -3 "$dir/bench")"; fail=1; }
fi
exit $fail
