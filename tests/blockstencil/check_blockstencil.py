#!/usr/bin/env python3
"""check_blockstencil.py -- the block-stencil generator against independent references.

Modes (PJDS_BIN = pjds-lanczos, PJDS_SRC = the source tree):
  counts        rows and nnz from `pjds-lanczos info` equal the formulas for several grids
                (both stencils, n_d = 1, odd and even b, shift = 0 with 7 points)
  dense         small grids exported to HDF5: CSR well-formed (columns ascending, no stored
                zeros), nonsymmetric, numpy.linalg.eigvals equal to the closed form
                (closed_form.py) to 1e-9 relative to the largest |lambda|
  mpi NP        export on 1 and on NP ranks gives identical files
"""
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np
from scipy.optimize import linear_sum_assignment

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from closed_form import closed_form_eigs  # noqa: E402

BIN = os.environ["PJDS_BIN"]
SRC = os.environ.get("PJDS_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
CFG = os.path.join(SRC, "configs", "block_stencil_small.ini")

# nx, ny, nz, b, stencil, extra --set (key=value for [model])
SMALL = [
    (4, 5, 6, 3, 27, {}),
    (3, 4, 5, 2, 7, {}),
    (1, 6, 7, 4, 27, {"convection": "0.3"}),
    (2, 3, 4, 5, 27, {"corner": "-0.7", "shift": "0.25"}),
    (5, 1, 1, 5, 7, {"convection": "0"}),
    (3, 3, 4, 2, 7, {"shift": "0"}),
    (1, 1, 1, 7, 27, {"rotation": "2.5"}),
    (6, 7, 8, 1, 27, {"convection": "0.2"}),
    (1, 2, 3, 64, 27, {"seed": "12345"}),
    (2, 2, 2, 6, 7, {"shift": "-1.5", "convection": "0.9"}),
]
MEDIUM = [
    (1, 40, 50, 4, 7, {}),
    (1, 40, 50, 4, 27, {}),
    (9, 1, 11, 3, 27, {}),
    (9, 10, 11, 3, 7, {"shift": "0"}),
    (30, 31, 1, 1, 7, {}),
    (12, 13, 14, 2, 27, {"corner": "0"}),
]


def sets(nx, ny, nz, b, st, extra):
    kv = {"nx": nx, "ny": ny, "nz": nz, "block_size": b, "stencil": st}
    kv.update(extra)
    out = []
    for k, v in kv.items():
        out += ["--set", f"model.{k}={v}"]
    return out


def params(nx, ny, nz, b, st, extra):
    p = {"convection": 0.01, "shift": 1.0, "corner": 0.5, "rotation": 0.3}
    p.update({k: float(v) for k, v in extra.items() if k in p})
    return p


def nnz_formula(nx, ny, nz, b, st, extra):
    p = params(nx, ny, nz, b, st, extra)
    if st == 27:
        n = b * b * (3 * nx - 2) * (3 * ny - 2) * (3 * nz - 2)
        if p["corner"] == 0:  # only the 7-point couplings remain
            n = b * b * (nx * ny * nz + 2 * ((nx - 1) * ny * nz + nx * (ny - 1) * nz + nx * ny * (nz - 1)))
        return n
    n = b * b * (nx * ny * nz + 2 * ((nx - 1) * ny * nz + nx * (ny - 1) * nz + nx * ny * (nz - 1)))
    if p["shift"] == 0:
        n -= b * b * nx * ny * nz  # zero diagonal blocks are not stored
    return n


def run(args, np_ranks=1):
    cmd = [BIN] + args
    if np_ranks > 1:
        cmd = ["mpiexec", "-n", str(np_ranks), "--allow-run-as-root", "--oversubscribe", "--bind-to", "none"] + cmd
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"FAIL: {' '.join(cmd)}: exit {r.returncode}\n{r.stderr}")
    return r.stdout


def info(case):
    out = run(["info", CFG, "--quiet"] + sets(*case))
    return {l.split(":")[0]: l.split(":", 1)[1].strip() for l in out.splitlines() if ":" in l}


def mode_counts():
    fail = 0
    for case in SMALL + MEDIUM:
        nx, ny, nz, b = case[:4]
        d = info(case)
        rows, nnz = int(d["rows"]), int(d["nnz"])
        want_rows, want_nnz = nx * ny * nz * b, nnz_formula(*case)
        ok = rows == want_rows and nnz == want_nnz
        print(f"{'ok  ' if ok else 'FAIL'} {case}: rows {rows} (formula {want_rows}), nnz {nnz} (formula {want_nnz})")
        fail |= not ok
    return fail


def read_csr(path):
    with h5py.File(path, "r") as f:
        g = f["/"]
        n = int(g.attrs["rows"])
        rp, ci, v = g["row_ptr"][()], g["col_idx"][()], g["values"][()]
        return n, int(g.attrs["nnz"]), int(g.attrs["symmetric"]), rp, ci, v


def mode_dense():
    fail = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, case in enumerate(SMALL):
            nx, ny, nz, b, st, extra = case
            path = os.path.join(tmp, f"m{i}.h5")
            run(["export", CFG, path, "--quiet"] + sets(*case))
            n, nnz, sym, rp, ci, v = read_csr(path)
            msgs = []
            if n != nx * ny * nz * b:
                msgs.append(f"rows {n}")
            if nnz != nnz_formula(*case) or len(v) != nnz:
                msgs.append(f"nnz {nnz} != formula {nnz_formula(*case)}")
            if sym != 0:
                msgs.append("symmetric attribute set")
            if np.any(v == 0):
                msgs.append("stored zeros")
            for r in range(n):
                c = ci[rp[r]:rp[r + 1]]
                if np.any(np.diff(c) <= 0):
                    msgs.append(f"row {r}: columns not strictly ascending")
                    break
            A = np.zeros((n, n))
            rows = np.repeat(np.arange(n), np.diff(rp))
            A[rows, ci] = v
            p = params(*case)
            asym = np.abs(A - A.T).max() / np.abs(A).max()
            if (b > 1 or (p["convection"] > 0 and nx * ny * nz > 1)) and asym < 1e-3:
                msgs.append(f"nearly symmetric: max|A - A^T| / max|A| = {asym:.2e}")
            ev = np.linalg.eigvals(A)
            ref = closed_form_eigs(nx, ny, nz, b, st, p["convection"], p["shift"], p["corner"], p["rotation"])
            ri, ci_ = linear_sum_assignment(np.abs(ev[:, None] - ref[None, :]))
            err = np.abs(ev[ri] - ref[ci_]).max() / np.abs(ref).max()
            if err > 1e-9:
                msgs.append(f"eigenvalues differ from the closed form: max rel err {err:.2e}")
            ok = not msgs
            print(f"{'ok  ' if ok else 'FAIL'} {case}: N = {n}, nnz = {nnz}, asym = {asym:.2e}, "
                  f"eig err = {err:.2e} {'; '.join(msgs)}")
            fail |= not ok
    return fail


def mode_mpi(nranks):
    fail = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, case in enumerate([SMALL[0], SMALL[3], MEDIUM[1]]):
            a, b = os.path.join(tmp, f"a{i}.h5"), os.path.join(tmp, f"b{i}.h5")
            run(["export", CFG, a, "--quiet"] + sets(*case))
            run(["export", CFG, b, "--quiet"] + sets(*case), np_ranks=nranks)
            with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
                same = all(np.array_equal(fa[k][()], fb[k][()]) for k in ("row_ptr", "col_idx", "values"))
                same &= all(fa.attrs[k] == fb.attrs[k] for k in ("rows", "cols", "nnz", "symmetric"))
            print(f"{'ok  ' if same else 'FAIL'} {case}: 1 rank and {nranks} ranks export identical matrices")
            fail |= not same
    return fail


def main(argv):
    mode = argv[0] if argv else "dense"
    if mode == "counts":
        return mode_counts()
    if mode == "dense":
        return mode_dense()
    if mode == "mpi":
        return mode_mpi(int(argv[1]) if len(argv) > 1 else 3)
    raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    sys.exit(1 if main(sys.argv[1:]) else 0)
