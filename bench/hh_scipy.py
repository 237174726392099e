#!/usr/bin/env python3
"""Independent NumPy/SciPy construction of the 1D Holstein-Hubbard matrix.

Built from Kronecker products of small operators (not row by row as the C
generator does), so it serves both as the peer for the generator's speed and
as an independent reference for its entries: the tests compare row-length
histograms, nnz and eigenvalues.

Conventions as in docs/models.md: fermion order all up before all down, periodic
hop across the boundary with sign (-1)^(N_s - 1); phonon states with total
number <= M; basis order electron-major (up, down, phonon); phonon_basis
`site` or `normal` (uniform mode removed exactly, constant -g^2 Ne^2/(L w0)).

usage: hh_scipy.py --sites 6 --up 3 --down 3 --max-phonons 15 --basis normal
                   [--t 1 --U 4 --w0 1 --g 1 --open] [--eigs K] [--stats]
"""
import argparse
import itertools
import sys
import time
from math import comb

import numpy as np
import scipy.sparse as sp


def fermion_hops(L, n, t, periodic):
    """Hopping matrix of one spin species on bitmask configurations."""
    states = sorted(sum(1 << i for i in c) for c in itertools.combinations(range(L), n))
    index = {s: k for k, s in enumerate(states)}
    rows, cols, vals = [], [], []
    bonds = [(i, i + 1) for i in range(L - 1)]
    if periodic and L > 1:
        bonds.append((L - 1, 0))
    for k, s in enumerate(states):
        for (i, j) in bonds:
            for (a, b) in ((i, j), (j, i)):  # move an electron from b to a
                if (s >> b) & 1 and not (s >> a) & 1:
                    s2 = s ^ (1 << a) ^ (1 << b)
                    lo, hi = min(a, b), max(a, b)
                    between = bin(s & (((1 << hi) - 1) ^ ((1 << (lo + 1)) - 1))).count("1")
                    rows.append(k)
                    cols.append(index[s2])
                    vals.append(-t * (-1) ** between)
    n_states = len(states)
    H = sp.coo_matrix((vals, (rows, cols)), shape=(n_states, n_states)).tocsr()
    occ = np.array([[(s >> i) & 1 for i in range(L)] for s in states], dtype=float)
    return H, occ


def phonon_states(m, M):
    """All occupation vectors of m modes with total <= M, lexicographic."""
    out = []

    def rec(prefix, left, k):
        if k == m:
            out.append(prefix)
            return
        for v in range(left + 1):
            rec(prefix + (v,), left - v, k + 1)

    rec((), M, 0)
    return np.array(out, dtype=np.int64).reshape(len(out), m)


def creation_ops(st, M):
    """b+_k on the truncated space, one sparse matrix per mode."""
    n, m = st.shape
    radix = M + 1
    codes = st @ (radix ** np.arange(m, dtype=np.int64))
    order = np.argsort(codes)
    ops = []
    total = st.sum(axis=1)
    for k in range(m):
        ok = total < M
        src = np.nonzero(ok)[0]
        tgt_codes = codes[src] + radix ** k
        tgt = order[np.searchsorted(codes[order], tgt_codes)]
        vals = np.sqrt(st[src, k] + 1.0)
        ops.append(sp.csr_matrix((vals, (tgt, src)), shape=(n, n)))
    return ops


def build(L, nu, nd, M, basis, t, U, w0, g, periodic):
    Hu, occ_u = fermion_hops(L, nu, t, periodic)
    Hd, occ_d = fermion_hops(L, nd, t, periodic)
    nU, nD = Hu.shape[0], Hd.shape[0]
    if basis == "site":
        u = np.eye(L)
        shift = 0.0
    else:
        modes = []
        for k in range(1, (L + 1) // 2 if L % 2 else L // 2):
            modes.append(np.sqrt(2.0 / L) * np.cos(2 * np.pi * k * np.arange(L) / L))
            modes.append(np.sqrt(2.0 / L) * np.sin(2 * np.pi * k * np.arange(L) / L))
        if L % 2 == 0:
            modes.append((-1.0) ** np.arange(L) / np.sqrt(L))
        u = np.array(modes)
        Ne = nu + nd
        shift = -g * g * Ne * Ne / (L * w0)
    m = u.shape[0]
    st = phonon_states(m, M)
    nP = st.shape[0]
    Iu, Id, Ip = sp.identity(nU, format="csr"), sp.identity(nD, format="csr"), sp.identity(nP, format="csr")
    # electron density per (up, down) configuration, electron-major
    n_el = (occ_u[:, None, :] + occ_d[None, :, :]).reshape(nU * nD, L)
    double = (occ_u[:, None, :] * occ_d[None, :, :]).sum(axis=2).reshape(nU * nD)
    Hel = sp.kron(Hu, Id, format="csr") + sp.kron(Iu, Hd, format="csr")
    H = sp.kron(Hel, Ip, format="csr")
    diag = (U * double)[:, None] + w0 * st.sum(axis=1)[None, :] + shift
    H = H + sp.diags(diag.reshape(-1))
    bp = creation_ops(st, M)
    rho = n_el @ u.T  # (nU*nD) x m
    for k in range(m):
        r = rho[:, k]
        r = np.where(np.abs(r) < 1e-12, 0.0, r)
        if not np.any(r):
            continue
        H = H + sp.kron(sp.diags(-g * r), bp[k] + bp[k].T, format="csr")
    H = H.tocsr()
    H.sum_duplicates()
    H.eliminate_zeros()
    return H


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sites", type=int, required=True)
    ap.add_argument("--up", type=int, required=True)
    ap.add_argument("--down", type=int, required=True)
    ap.add_argument("--max-phonons", type=int, required=True)
    ap.add_argument("--basis", choices=["site", "normal"], default="site")
    ap.add_argument("--t", type=float, default=1.0)
    ap.add_argument("--U", type=float, default=0.0)
    ap.add_argument("--w0", type=float, default=1.0)
    ap.add_argument("--g", type=float, default=0.0)
    ap.add_argument("--open", action="store_true")
    ap.add_argument("--eigs", type=int, default=0, help="print the K lowest eigenvalues")
    ap.add_argument("--largest", action="store_true", help="with --eigs: the K highest")
    ap.add_argument("--stats", action="store_true", help="print row-length histogram")
    a = ap.parse_args()
    t0 = time.perf_counter()
    H = build(a.sites, a.up, a.down, a.max_phonons, a.basis, a.t, a.U, a.w0, a.g, not a.open)
    t1 = time.perf_counter()
    print(f"rows: {H.shape[0]}")
    print(f"nnz: {H.nnz}")
    print(f"build_seconds: {t1 - t0:.3f}")
    if a.stats:
        lens = np.diff(H.indptr)
        vals, cnts = np.unique(lens, return_counts=True)
        print("row_length_histogram: " + " ".join(f"{v}:{c}" for v, c in zip(vals, cnts)))
        print(f"symmetric_max_diff: {abs(H - H.T).max() if H.nnz else 0.0:.3e}")
    if a.eigs:
        if H.shape[0] <= 3000:
            w = np.linalg.eigvalsh(H.toarray())
            w = w[-a.eigs:][::-1] if a.largest else w[: a.eigs]
        else:
            import scipy.sparse.linalg as sla
            w = sla.eigsh(H, k=a.eigs, which="LA" if a.largest else "SA", tol=1e-12, return_eigenvectors=False)
            w = np.sort(w)[::-1] if a.largest else np.sort(w)
        for i, x in enumerate(w):
            print(f"eigenvalue[{i}]: {x:.15e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
