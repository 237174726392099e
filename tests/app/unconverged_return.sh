#!/usr/bin/env bash
# A run that stops unconverged returns orthonormal vectors (lanczos/lz_return.c):
# mhd4800b's smallest end (a cluster near 1e-13 .. 1e-5, which Lanczos
# without shift-invert does not resolve) at nev 8 after 2000 restarts lost
# orthogonality to 2.8e-8 in its returned block before 2026-11-29.  Checked
# against the matrix itself (SciPy, independent of the solver): the
# eigenvectors written are orthonormal to 1e-10, each value is its vector's
# Rayleigh quotient, and each reported residual is ||A x - lambda x||.
# Usage: unconverged_return.sh [NP] [BACKEND]   (PJDS_MATRICES = folder of .mtx
# files; BACKEND cpu (default) or cuda, which reports skipped without a GPU)
set -u
np=${1:-1}
backend=${2:-cpu}
. "$(dirname "$0")/mtx_case.sh"
mtx_case mhd4800b
mtx_config "$dir/c.ini" <<EOT
[solver]
nev = 8
which = smallest
tolerance = 1e-10
max_restarts = 2000
[spmv]
backend = $backend
[output]
file = $dir/out.h5
eigenvectors = true
EOT
run "$PJDS_BIN" solve "$dir/c.ini" >"$dir/log" 2>&1
rc=$?
if [ $rc -ne 0 ] && [ "$backend" = cuda ] && grep -q "no CUDA device is visible" "$dir/log"; then
    echo "skipped: no GPU ($(head -1 "$dir/log"))"; exit 77
fi
[ $rc -eq 0 ] || { echo "FAIL: solve exited $rc"; cat "$dir/log"; exit 1; }
grep -q "warning: not converged" "$dir/log" || { echo "FAIL: no unconverged warning (the case no longer exercises the return path)"; cat "$dir/log"; exit 1; }
"$PJDS_PYTHON" - "$mtx" "$dir/out.h5" <<'EOP'
import sys
import h5py, numpy as np, scipy.io
A = scipy.io.mmread(sys.argv[1]).tocsr()
with h5py.File(sys.argv[2], "r") as f:
    lam = f["eigenvalues"][:]
    X = f["eigenvectors"][:]
    res = f["residual_norms"][:]
    attrs = dict(f.attrs)
fail = []
if int(attrs.get("returned_rayleigh_ritz", -1)) != 1:
    fail.append("returned_rayleigh_ritz = %s, want 1 (the loss before it was 2.8e-8)" % attrs.get("returned_rayleigh_ritz"))
G = X @ X.T
loss = np.abs(G - np.eye(len(lam))).max()
if not loss <= 1e-10: fail.append("X X^T - I = %.2e > 1e-10" % loss)
if not abs(attrs["orthogonality_loss"] - loss) <= 1e-12: fail.append("orthogonality_loss %.2e, measured %.2e" % (attrs["orthogonality_loss"], loss))
normA = abs(scipy.sparse.linalg.eigsh(A, k=1, which="LM", return_eigenvectors=False)[0])
AX = (A @ X.T).T
rq = np.einsum("ij,ij->i", X, AX)
if not np.abs(rq - lam).max() <= 1e-12 * normA: fail.append("Rayleigh quotients differ from the values by %.2e" % np.abs(rq - lam).max())
r = np.linalg.norm(AX - lam[:, None] * X, axis=1)
if not np.abs(r - res).max() <= 1e-9 * normA: fail.append("residuals %s, reported %s" % (r, res))
if not np.all(np.diff(lam) >= 0): fail.append("values not in ascending order: %s" % lam)
print("loss %.2e, |rq - lambda| %.2e, residuals %.2e..%.2e, ||A|| %.3g" % (loss, np.abs(rq - lam).max(), r.min(), r.max(), normA))
if fail:
    print("FAIL: " + "; ".join(fail)); sys.exit(1)
EOP
