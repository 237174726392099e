#!/usr/bin/env python3
"""verify_certificate.py -- what the search of `verify` (lanczos/lanczos.c,
lz_accepts) has shown when it accepts a locked set, in numbers: a model on
plain Lanczos.  Since 2026-11-29 the solver computes the same certificate
through its thick restarts (lanczos/lz_cert.c) and stops by it
([solver] verify_probability; the result's verify_bound); this script
compares the old rule (converged to sqrt(tol)) with fixed levels of it.

The search runs Lanczos from a random unit vector r in the complement of the
locked eigenvectors.  If the complement held an eigenvector u with eigenvalue
mu at or beyond the edge (the least wanted locked value), and r's component
along u were c, then u^T v_j = c p_j(mu) for every Lanczos vector v_j = p_j(A) r,
and since the v_j are orthonormal (Bessel), c^2 S(mu) <= 1 with
S(mu) = sum_j p_j(mu)^2.  While every Ritz value stays short of the edge,
|p_j| only grows beyond it, so S(mu) >= S(edge).  For a random start,
c^2 < t / N has probability about sqrt(2 t / pi); so once S(edge) >= N / t, a
missed eigenvector beyond the edge would have needed a start component of
probability P = sqrt(2 t / pi) or less.  This script runs the search in exact
form (plain Lanczos, full reorthogonalisation, no restart: a model, not the
solver) and prints, per case, the product at which

  clear       the lowest Ritz value's residual interval lies beyond the edge
  vtol        it has also converged to sqrt(tol) (the solver's acceptance)
  P=1e-3 ..   S(edge) >= N / t for P = 1e-3, 1e-6, 1e-9
  missed      a Ritz value passes the edge (a copy was locked out on purpose)

Cases: `hh FILE.h5` (a matrix from `pjds-lanczos export`, e.g. hh_184800:
the nev = 4 lowest locked; then the 3rd left out, so that it is missed) and
`lap N` (the 2-D Laplacian on an N x N grid, whose pairs are degenerate: the
3 lowest locked; then one copy of the second level left out).
usage: /usr/bin/python3 bench/verify_certificate.py hh FILE.h5 [--tol 1e-10]
       /usr/bin/python3 bench/verify_certificate.py lap 120 [--tol 1e-10]
Needs numpy, scipy and h5py (Debian's python3-* packages).
"""
import argparse

import h5py
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as sla
from scipy.linalg import eigh_tridiagonal

PROBS = (1e-3, 1e-6, 1e-9)


def load(path):
    with h5py.File(path, "r") as f:
        n = int(f.attrs["rows"])
        return sp.csr_matrix((f["values"][...], f["col_idx"][...], f["row_ptr"][...]), shape=(n, n))


def laplacian(n):
    t = sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1])
    e = sp.identity(n)
    return (sp.kron(t, e) + sp.kron(e, t)).tocsr()


def search(A, L, edge, steps, seed, tol):
    """The search's events (product counts) for locked columns L and the edge (smallest wanted)."""
    n = A.shape[0]
    rng = np.random.default_rng(seed)
    r = rng.uniform(-1, 1, n)
    r -= L @ (L.T @ r)
    V = np.empty((n, steps + 1))
    V[:, 0] = r / np.linalg.norm(r)
    al, be, p = [], [], [1.0]
    S, normest, ev = 1.0, abs(edge), {}
    for j in range(steps):
        w = A @ V[:, j]
        a = V[:, j] @ w
        w -= a * V[:, j] + (be[-1] * V[:, j - 1] if j else 0.0)
        for _ in range(2):
            w -= L @ (L.T @ w)
            w -= V[:, :j + 1] @ (V[:, :j + 1].T @ w)
        b = np.linalg.norm(w)
        al.append(a)
        be.append(b)
        pn = ((edge - a) * p[-1] - (be[-2] * p[-2] if j else 0.0)) / b
        p.append(pn)
        S += pn * pn
        V[:, j + 1] = w / b
        th, Y = eigh_tridiagonal(np.array(al), np.array(be[:-1]))
        normest = max(normest, np.abs(th).max())
        t1, est = th[0], abs(b * Y[-1, 0])
        mg = tol * max(abs(t1), normest)
        k = j + 1
        if t1 < edge - mg:
            ev.setdefault("missed", k)
            break
        if t1 - est > edge + mg:
            ev.setdefault("clear", k)
            if est <= np.sqrt(tol) * max(abs(t1), normest):
                ev.setdefault("vtol", k)
        for P in PROBS:
            if S * np.pi * P * P / 2 >= n and t1 > edge + mg:
                ev.setdefault(f"P={P:g}", k)
        if f"P={PROBS[-1]:g}" in ev and "vtol" in ev:
            break
    return ev, S


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=("hh", "lap"))
    ap.add_argument("arg")
    ap.add_argument("--tol", type=float, default=1e-10)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--seeds", default="1,2,3")
    o = ap.parse_args()
    A = load(o.arg) if o.case == "hh" else laplacian(int(o.arg))
    w, U = sla.eigsh(A, k=8, which="SA", tol=1e-13)
    order = np.argsort(w)
    w, U = w[order], U[:, order]
    print(f"N = {A.shape[0]}, lowest eigenvalues {w[:6]}, tol {o.tol:g}")
    if o.case == "hh":
        cases = (("nothing missed (4 locked)", [0, 1, 2, 3], w[3]), ("3rd left out", [0, 1, 3], w[3]))
    else:
        cases = (("nothing missed (3 locked)", [0, 1, 2], w[2]), ("a copy left out", [0, 1, 3], w[3]))
    for name, cols, edge in cases:
        for seed in (int(s) for s in o.seeds.split(",")):
            ev, S = search(A, U[:, cols], edge, o.steps, seed, o.tol)
            print(f"{name:28s} seed {seed}: " + ", ".join(f"{k} {v}" for k, v in ev.items()) + f" (S = {S:.3g})")


if __name__ == "__main__":
    main()
