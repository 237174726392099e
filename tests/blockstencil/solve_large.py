#!/usr/bin/python3
"""Krylov-Schur on a block-stencil grid too large for dense LAPACK, against the
closed form (closed_form.py): `pjds-lanczos solve` on an nx x ny x nz grid with
b unknowns per point, the nev wanted eigenvalues for each `which` given, each
within 1e-8 relative of a distinct closed-form eigenvalue of the wanted set
(nev + 2 candidates, so that a conjugate partner at the edge counts), conjugate
pairs complete, explicit residuals <= tol max(|lambda|, normest).

usage: solve_large.py NX NY NZ B WHICH...   (env PJDS_BIN, PJDS_SRC)
Exit 0 = pass, 1 = fail."""
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import closed_form as cf  # noqa: E402


def main():
    nx, ny, nz, b = (int(a) for a in sys.argv[1:5])
    whiches = sys.argv[5:] or ["largest_magnitude"]
    binary, src = os.environ["PJDS_BIN"], os.environ["PJDS_SRC"]
    cfg = os.path.join(src, "configs", "block_stencil_small.ini")
    tol, nev = 1e-10, 6
    sets = [f"model.nx={nx}", f"model.ny={ny}", f"model.nz={nz}", f"model.block_size={b}"]
    md, _ = cf.model_from_ini(cfg, sets)
    ev = cf.eigs_from_model(md)
    print(f"grid {nx} x {ny} x {nz}, b = {b}: N = {ev.size}")
    fail = 0
    with tempfile.TemporaryDirectory() as d:
        for which in whiches:
            out = os.path.join(d, f"{which}.h5")
            cmd = [binary, "solve", cfg, "--quiet", "--set", f"output.file={out}", "--set", f"solver.which={which}",
                   "--set", f"solver.tolerance={tol}", "--set", f"solver.nev={nev}", "--set", "spmv.backend=cpu"]
            cmd += [a for s in sets for a in ("--set", s)]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                print(f"FAIL {which}: exit {r.returncode}: {r.stderr.strip()}")
                fail = 1
                continue
            with h5py.File(out) as f:
                lam = np.asarray(f["eigenvalues"][:])
                res = f["residual_norms"][:]
                normest = float(f.attrs["norm_estimate"])
                it = int(f.attrs["iterations"])
                reason = f.attrs["converged_reason"]
                reason = reason.decode() if isinstance(reason, bytes) else str(reason)
                method = f.attrs["method"]
                method = method.decode() if isinstance(method, bytes) else str(method)
            ref = list(cf.select(ev, which, len(lam) + 2))
            worst = 0.0
            for z in lam:  # match greedily to a distinct reference value
                k = int(np.argmin([abs(z - w) for w in ref]))
                err = abs(z - ref[k]) / abs(ref[k])
                worst = max(worst, err)
                ref.pop(k)
            conj_ok = all(np.min(np.abs(lam - np.conj(z))) <= 1e-8 * abs(z) for z in lam)
            res_ok = all(rr <= 10 * tol * max(abs(z), normest) for rr, z in zip(res, lam))
            ok = reason == "converged" and method == "krylov-schur" and worst <= 1e-8 and conj_ok and res_ok \
                and len(lam) >= nev and np.iscomplexobj(lam)
            print(f"{which}: {len(lam)} values, {it} SpMVs, {reason}, max rel. error vs closed form {worst:.2e}, "
                  f"pairs complete {conj_ok}, residuals ok {res_ok}: {'ok' if ok else 'FAIL'}")
            for z, rr in zip(lam, res):
                print(f"  {z.real:+.15e} {z.imag:+.15e}i  residual {rr:.2e}")
            fail |= not ok
    return fail


if __name__ == "__main__":
    sys.exit(main())
