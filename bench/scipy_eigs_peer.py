#!/usr/bin/python3
"""SciPy eigs (ARPACK) peer for the nonsymmetric solver, with a multi-threaded
CSR matvec so that ARPACK gets all host cores (for the GPU machine: 16 cores,
no internet; needs only numpy, scipy, h5py).

usage: /usr/bin/python3 bench/scipy_eigs_peer.py MATRIX.h5 [--group /]
           [--nev 6] [--which LM|LR] [--tol 1e-8] [--ncv 0] [--threads 0]
           [--max-seconds 0] [--maxiter 0] [--seed 1] [--gil-test]

MATRIX.h5 is a file written by `pjds-lanczos export CONFIG FILE.h5` (HDF5
matrix schema: root attributes rows, cols, nnz; datasets row_ptr (int64),
col_idx (int32), values (float64); CSR, 0-based; storage "lower" is
expanded) or by tools/mtx2h5.py.

Matvec: the rows are split into T contiguous blocks of about equal nnz; each
block is multiplied by SciPy's compiled CSR kernel (sparsetools csr_matvec,
called directly so that every block writes into its slice of one output
vector) in a ThreadPoolExecutor of T threads.  This only helps if csr_matvec
releases the GIL: it does (SciPy's sparsetools wrap every kernel in
NPY_BEGIN_ALLOW_THREADS / Py_BEGIN_ALLOW_THREADS); --gil-test measures it on
this host: the matvec time with 1, 2, 4, ..., T threads, and whether a Python
thread that only counts keeps counting during ONE csr_matvec call (it can only
if the call released the GIL; a GIL-holding call of the same length lets it
count ~0).  Measured on the 2-vCPU development VM (SciPy 1.10.1, block-stencil
N = 81,000, nnz = 6.1 M): the counter advanced 120-210 k per 12 ms call (vs
180-260 k during a 9 ms time.sleep), so the GIL is released; yet 2 threads gave
0.95x, because that VM's two vCPUs do not add memory bandwidth (two separate
processes each ran the matvec at half speed too).  On a 16-core host the
threads should scale with its memory bandwidth.  If the private kernel cannot be
imported, block @ x (same kernel, plus one allocation per block) is used.
T = --threads (0 = all cores, os.cpu_count()), reduced so that every thread
has at least --min-nnz-per-thread non-zeros (default 50000; small matrices
run on one thread, where the hand-off would cost more than it saves).  Set OMP_NUM_THREADS /
OPENBLAS_NUM_THREADS as you like for ARPACK's own dense work (it is small).

ARPACK's convergence test is relative to |lambda|: ||r|| <= tol |lambda|
(Ritz estimate), while pjds-lanczos uses tol max(|lambda|, ||A||_inf).

--max-seconds S: the matvec raises after S seconds; the script then reports
'not converged after X SpMVs in Y s' with the measured time per SpMV and per
ARPACK iteration (restart; ARPACK's implicit restart costs about ncv - nev
SpMVs per restart).

Output: JSON lines on stdout: one "setup" line (matrix, threads, load time,
matvec timing) and one "result" line: matvecs, seconds, converged,
eigenvalues_re, eigenvalues_im, seconds_per_matvec, matvec_seconds (time
inside the matvec), restarts (estimated as (matvecs - ncv) / (ncv - nev) + 1
for ARPACK's implicit restart; not reported by SciPy), message.
"""
import argparse
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import h5py
import numpy as np
import scipy
import scipy.sparse as sp
import scipy.sparse.linalg as sla

try:  # SciPy >= 1.8 keeps the kernels in scipy.sparse._sparsetools
    from scipy.sparse._sparsetools import csr_matvec as _csr_matvec
except ImportError:  # pragma: no cover
    try:
        from scipy.sparse.sparsetools import csr_matvec as _csr_matvec
    except ImportError:
        _csr_matvec = None


def load_csr(path, group="/"):
    with h5py.File(path, "r") as f:
        g = f[group]
        n = int(g.attrs["rows"])
        m = int(g.attrs.get("cols", n))
        row_ptr = g["row_ptr"][:].astype(np.int64)
        col = g["col_idx"][:]
        val = g["values"][:].astype(np.float64)
        storage = g.attrs.get("storage", "full")
        if isinstance(storage, bytes):
            storage = storage.decode()
    if row_ptr[-1] < np.iinfo(np.int32).max and n < np.iinfo(np.int32).max:
        row_ptr = row_ptr.astype(np.int32)
        col = col.astype(np.int32)
    a = sp.csr_matrix((val, col, row_ptr), shape=(n, m))
    if storage == "lower":
        a = (a + sp.tril(a, k=-1).T).tocsr()
    return a


class ParallelCSR:
    """y = A x with the rows split into `threads` blocks of about equal nnz."""

    def __init__(self, a, threads):
        self.a = a
        self.n, self.m = a.shape
        self.threads = max(1, min(threads, self.n))
        ip = a.indptr
        cuts = np.searchsorted(ip, np.linspace(0, ip[-1], self.threads + 1)[1:-1])
        bounds = [0] + sorted(set(int(c) for c in cuts if 0 < c < self.n)) + [self.n]
        self.blocks = []
        for r0, r1 in zip(bounds[:-1], bounds[1:]):
            p0, p1 = ip[r0], ip[r1]
            sub_ip = (ip[r0:r1 + 1] - p0).astype(ip.dtype)
            idx = a.indices[p0:p1]
            dat = a.data[p0:p1]
            blk = sp.csr_matrix((dat, idx, sub_ip), shape=(r1 - r0, self.m))
            self.blocks.append((r0, r1, sub_ip, idx, dat, blk))
        self.pool = ThreadPoolExecutor(max_workers=len(self.blocks)) if len(self.blocks) > 1 else None
        self.direct = _csr_matvec is not None

    def _block(self, b, x, y):
        r0, r1, ip, idx, dat, blk = b
        if self.direct:
            ys = y[r0:r1]
            ys[:] = 0.0
            _csr_matvec(r1 - r0, self.m, ip, idx, dat, x, ys)
        else:
            y[r0:r1] = blk @ x

    def matvec(self, x):
        x = np.ascontiguousarray(x, dtype=np.float64).reshape(-1)
        y = np.empty(self.n, dtype=np.float64)
        if self.pool is None:
            self._block(self.blocks[0], x, y)
        else:
            list(self.pool.map(lambda b: self._block(b, x, y), self.blocks))
        return y


def time_matvec(op, x, reps):
    op.matvec(x)
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        op.matvec(x)
        t.append(time.perf_counter() - t0)
    return float(np.median(t))


class _OutOfTime(Exception):
    pass


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("matrix")
    ap.add_argument("--group", default="/")
    ap.add_argument("--nev", type=int, default=6)
    ap.add_argument("--which", choices=("LM", "LR"), default="LM")
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--ncv", type=int, default=0, help="0 = max(2 nev + 10, 32) (pjds-lanczos' Krylov-Schur default), capped at N")
    ap.add_argument("--threads", type=int, default=0, help="0 = os.cpu_count()")
    ap.add_argument("--min-nnz-per-thread", type=int, default=50000,
                    help="use fewer threads when nnz / threads is below this (thread hand-off costs ~10-50 us)")
    ap.add_argument("--max-seconds", type=float, default=0.0, help="stop ARPACK after this wall time (0 = none)")
    ap.add_argument("--maxiter", type=int, default=0, help="ARPACK restarts limit (0 = 10 N, SciPy's default)")
    ap.add_argument("--seed", type=int, default=1, help="start vector: standard normal with this seed")
    ap.add_argument("--gil-test", action="store_true", help="only time the matvec with 1, 2, ..., T threads")
    ap.add_argument("--reps", type=int, default=20, help="matvecs for the timing in the setup line")
    args = ap.parse_args()

    threads = args.threads or os.cpu_count() or 1
    t0 = time.perf_counter()
    a = load_csr(args.matrix, args.group)
    load_s = time.perf_counter() - t0
    n = a.shape[0]
    if a.shape[0] != a.shape[1]:
        sys.exit(f"scipy_eigs_peer: matrix is {a.shape[0]} x {a.shape[1]}, not square")
    x = np.random.default_rng(args.seed).standard_normal(n)

    if args.gil_test:
        import threading
        cnt, stop = [0], [False]

        def spin():
            while not stop[0]:
                cnt[0] += 1

        th = threading.Thread(target=spin, daemon=True)
        th.start()
        time.sleep(0.05)
        y = np.zeros(n)
        inc_mv, inc_sleep, tmv = [], [], []
        for _ in range(10):
            c0 = cnt[0]
            t1 = time.perf_counter()
            if _csr_matvec is not None:
                _csr_matvec(n, n, a.indptr, a.indices, a.data, x, y)
            else:
                a @ x
            tmv.append(time.perf_counter() - t1)
            inc_mv.append(cnt[0] - c0)
        dt = float(np.median(tmv))
        for _ in range(10):
            c0 = cnt[0]
            time.sleep(dt)
            inc_sleep.append(cnt[0] - c0)
        stop[0] = True
        th.join()
        print(json.dumps(dict(kind="gil_check", call_seconds=dt, counter_during_matvec=int(np.median(inc_mv)),
                              counter_during_sleep=int(np.median(inc_sleep)),
                              gil_released=bool(np.median(inc_mv) > 0.1 * np.median(inc_sleep)),
                              note="a Python counter thread advances during one csr_matvec call only if "
                                   "the call releases the GIL")), flush=True)
        ref = a @ x
        base = None
        ts = sorted(set([1, 2, threads] + [t for t in (4, 8, 16) if t <= threads]))
        for t in ts:
            op = ParallelCSR(a, t)
            err = float(np.max(np.abs(op.matvec(x) - ref)) / max(np.max(np.abs(ref)), 1e-300))
            s = time_matvec(op, x, args.reps)
            base = base or s
            print(json.dumps(dict(kind="gil_test", threads=t, blocks=len(op.blocks), direct_kernel=op.direct,
                                  seconds_per_matvec=s, speedup_vs_1=base / s, max_rel_err_vs_scipy=err,
                                  rows=n, nnz=int(a.nnz))), flush=True)
        return

    threads = max(1, min(threads, int(a.nnz) // max(args.min_nnz_per_thread, 1)))
    op = ParallelCSR(a, threads)
    spmv_s = time_matvec(op, x, args.reps)
    op1 = ParallelCSR(a, 1)
    spmv1_s = time_matvec(op1, x, max(3, args.reps // 4))
    del op1
    ncv = min(args.ncv or max(2 * args.nev + 10, 32), n)
    print(json.dumps(dict(kind="setup", matrix=os.path.abspath(args.matrix), rows=n, nnz=int(a.nnz),
                          threads=threads, blocks=len(op.blocks), direct_kernel=op.direct, load_seconds=load_s,
                          seconds_per_matvec_T=spmv_s, seconds_per_matvec_1=spmv1_s,
                          matvec_speedup=spmv1_s / spmv_s, scipy=scipy.__version__, numpy=np.__version__,
                          nev=args.nev, which=args.which, tol=args.tol, ncv=ncv,
                          tol_meaning="ARPACK: ||r|| <= tol*|lambda| (Ritz estimate)")), flush=True)

    st = {"n": 0, "mv_s": 0.0, "t0": 0.0}
    cap = args.max_seconds

    def mv(v):
        if cap > 0 and time.perf_counter() - st["t0"] > cap:
            raise _OutOfTime()
        t = time.perf_counter()
        y = op.matvec(v)
        st["mv_s"] += time.perf_counter() - t
        st["n"] += 1
        return y

    lin = sla.LinearOperator(a.shape, matvec=mv, dtype=np.float64)
    vals, conv, msg = np.array([]), False, ""
    st["t0"] = time.perf_counter()
    try:
        vals = sla.eigs(lin, k=args.nev, which=args.which, tol=args.tol, ncv=ncv, v0=x,
                        maxiter=(args.maxiter or None), return_eigenvectors=False)
        conv = True
        msg = "converged"
    except _OutOfTime:
        msg = "out of time"
    except sla.ArpackNoConvergence as e:
        vals = e.eigenvalues
        msg = f"ArpackNoConvergence: {len(vals)} of {args.nev} converged (maxiter)"
    secs = time.perf_counter() - st["t0"]
    nmv = st["n"]
    restarts = max(0.0, (nmv - ncv) / max(ncv - args.nev, 1) + 1) if nmv else 0.0
    if not conv:
        msg = (f"not converged after {nmv} SpMVs in {secs:.3f} s ({msg}); "
               f"{secs / max(nmv, 1) * 1e3:.4g} ms per SpMV (matvec alone "
               f"{st['mv_s'] / max(nmv, 1) * 1e3:.4g} ms), about "
               f"{secs / max(restarts, 1e-300) if restarts else float('nan'):.4g} s per ARPACK iteration "
               f"(~{restarts:.1f} restarts of ~{ncv - args.nev} SpMVs)")
    key = {"LM": lambda z: -abs(z), "LR": lambda z: -z.real}[args.which]
    vals = sorted((complex(v) for v in vals), key=key)
    print(json.dumps(dict(kind="result", matvecs=nmv, seconds=secs, converged=conv,
                          eigenvalues_re=[v.real for v in vals], eigenvalues_im=[v.imag for v in vals],
                          seconds_per_matvec=secs / max(nmv, 1), matvec_seconds=st["mv_s"],
                          matvec_seconds_per_matvec=st["mv_s"] / max(nmv, 1),
                          restarts_estimate=restarts,
                          seconds_per_restart=(secs / restarts if restarts else None),
                          threads=threads, nev=args.nev, which=args.which, tol=args.tol, ncv=ncv,
                          message=msg)), flush=True)
    if op.pool:
        op.pool.shutdown()


if __name__ == "__main__":
    main()
