"""_linalg.py -- pjds.eigsh and pjds.eigs: SciPy's scipy.sparse.linalg.eigsh and
eigs signatures on libpjds (thick-restart Lanczos, Krylov-Schur), for SciPy
sparse matrices, NumPy arrays, CuPy sparse matrices (copied to the host) and
pjds.Operator handles."""
import ctypes

import numpy as np
from scipy.sparse.linalg import ArpackNoConvergence

from . import _lib
from ._operator import Operator, cint, operator

# SciPy's tol = 0 means "machine precision" (ARPACK's dlamch('EPS') relative to
# each Ritz value); libpjds needs tol in (0, 1) relative to max(|theta|, ||A||):
# 0 maps onto this tolerance (measured: docs/python.md, "Accuracy").
TOL_ZERO = 1e-13

EIGSH_WHICH = {"LM": _lib.WHICH_LARGEST_MAGNITUDE, "LA": _lib.WHICH_LARGEST, "SA": _lib.WHICH_SMALLEST, "BE": None}
EIGS_WHICH = {"LM": _lib.WHICH_LARGEST_MAGNITUDE, "LR": _lib.WHICH_LARGEST_REAL, "SR": _lib.WHICH_SMALLEST_REAL,
              "LI": _lib.WHICH_LARGEST_IMAGINARY}
_NO_SHIFT = ("needs shift-and-invert (a factorisation of A - sigma I), which libpjds does not offer yet; "
             "scipy.sparse.linalg.{0} does it")
UNSUPPORTED_WHICH = {"SM": "which='SM' (smallest magnitude) " + _NO_SHIFT,
                     "SI": "which='SI' (smallest imaginary part) is not among libpjds' targets (pjds_which)"}


class NoConvergence(ArpackNoConvergence):
    """Fewer than k wanted pairs converged; .eigenvalues and .eigenvectors hold
    those that did (as SciPy's ArpackNoConvergence, which this is)."""


def _refuse(fname, **kw):
    for name, v in kw.items():
        if v is not None:
            why = "sigma " + _NO_SHIFT.format(fname) if name == "sigma" else \
                f"{name}: libpjds solves standard problems A x = lambda x from a random start vector (seed=)"
            raise NotImplementedError(f"pjds.{fname}: {why}")


def _which_code(fname, which, table):
    if which in UNSUPPORTED_WHICH:
        raise NotImplementedError(f"pjds.{fname}: " + UNSUPPORTED_WHICH[which].format(fname))
    if which not in table:
        raise ValueError(f"pjds.{fname}: which={which!r} must be one of {', '.join(table)}")
    return table[which]


def _is_cupy(A):
    return type(A).__module__.split(".")[0] in ("cupy", "cupyx")


def _operator_of(A, backend, symmetry, comm):
    """(operator, owned by this call, return CuPy arrays)."""
    if isinstance(A, Operator):
        if backend not in ("auto", A.backend):
            raise ValueError(f"backend={backend!r}: this pjds.Operator was made for {A.backend}")
        return A, False, False
    if _is_cupy(A):  # no device-pointer constructor in libpjds: one copy to the host (docs)
        return operator(A.get(), backend, symmetry, comm), True, True
    return operator(A, backend, symmetry, comm), True, False


def _vectors(L, op, r, nev, cplx):
    N = op.shape[0]
    vr = np.empty((nev, N))
    vi = np.empty((nev, N)) if cplx else None
    for i in range(nev):
        pi = vi[i].ctypes.data if cplx else None
        if op.ranks == 1:
            _lib.check(L.pjds_result_eigenvector(r, i, vr[i].ctypes.data, pi))
        else:
            _lib.check(L.pjds_result_eigenvector_all(r, op._comm, i, vr[i].ctypes.data, pi))
    return vr, vi


def _solve(op, k, which, method, tol, ncv, maxiter, vectors, seed, verify_probability=None):
    """(re, im, vr, vi, info) of one pjds_solve on op; vr, vi: nev x N or None."""
    L = _lib.lib()
    o = _lib.SolveOptions()
    L.pjds_solve_options_init(ctypes.byref(o))
    o.method, o.which, o.nev = method, which, cint("k", k)
    o.tol = TOL_ZERO if tol == 0 else float(tol)
    o.ncv = 0 if ncv is None else cint("ncv", ncv)
    o.max_restarts = _lib.RESTARTS_AUTO if maxiter is None else cint("maxiter", maxiter)
    o.seed, o.want_vectors = int(seed), int(bool(vectors))
    if verify_probability is not None:  # else the library's default (1e-3); it checks (0, 1)
        o.verify_probability = float(verify_probability)
    r = ctypes.c_void_p()
    _lib.check(L.pjds_solve(op.handle(), ctypes.byref(o), ctypes.byref(r)))
    try:
        info = _lib.ResultInfo()
        _lib.check(L.pjds_result_get_info(r, ctypes.byref(info)))
        re, im = np.empty(info.nev), np.empty(info.nev)
        _lib.check(L.pjds_result_eigenvalues(r, re.ctypes.data, im.ctypes.data))
        vr, vi = _vectors(L, op, r, info.nev, bool(info.is_complex)) if vectors else (None, None)
    finally:
        L.pjds_result_free(ctypes.byref(r))
    return re, im, vr, vi, info


def _converged(fname, info, k, w, v):
    if info.nconv >= min(k, info.nev):
        return
    reason = _lib.lib().pjds_stop_reason_name(info.reason).decode()
    n = info.nconv
    raise NoConvergence(f"pjds.{fname}: {n} of {k} eigenpairs converged ({reason} after {info.restarts} restarts, "
                        f"{info.iterations} products)", w[:n], None if v is None else v[:, :n])


def _out(w, v, vectors, cupy):
    if cupy:
        import cupy as cp
        w, v = cp.asarray(w), (cp.asarray(v) if v is not None else None)
    return (w, v) if vectors else w


def eigsh(A, k=6, M=None, sigma=None, which="LM", v0=None, ncv=None, maxiter=None, tol=0,
          return_eigenvectors=True, Minv=None, OPinv=None, mode="normal", *, backend="auto", comm="world", seed=1,
          verify_probability=None):
    """k eigenvalues (and eigenvectors) of the real symmetric matrix A by
    thick-restart Lanczos, as scipy.sparse.linalg.eigsh: which 'LM', 'LA', 'SA'
    or 'BE'; values in ascending order, vectors as the columns of an N x k array.
    A: a SciPy sparse matrix, a NumPy array, a CuPy sparse matrix (copied to the
    host; the results come back as CuPy arrays) or a pjds.Operator.  tol: relative
    residual (0: 1e-13); maxiter: restarts (None: the library's automatic budget);
    ncv: basis size (None: max(2k + 10, 24)).  backend 'auto', 'cpu' or 'cuda';
    comm 'world' (every rank passes the same A and holds a block of its rows),
    'self' or an mpi4py communicator; seed: of the random start vector;
    verify_probability: the level of the search for missed copies of degenerate
    eigenvalues, in (0, 1) (None: the library's 1e-3; [solver]
    verify_probability in docs/config.md).
    Not supported: sigma, M, Minv, OPinv, v0, which='SM' (NotImplementedError).
    The library's errors raise pjds.PjdsError (a ValueError for bad input) with
    its message; too few converged pairs raise pjds.NoConvergence."""
    _refuse("eigsh", sigma=sigma, M=M, Minv=Minv, OPinv=OPinv, v0=v0)
    if mode != "normal":
        raise NotImplementedError(f"pjds.eigsh: mode={mode!r}: only 'normal' (no shift)")
    code = _which_code("eigsh", which, EIGSH_WHICH)
    op, owned, cupy = _operator_of(A, backend, "check", comm)
    try:
        kk = cint("k", k)
        parts = [(code, kk)]
        if code is None:  # 'BE': k/2 from each end, the odd one from the high end (SciPy)
            parts = [(_lib.WHICH_LARGEST, kk - kk // 2)] + ([(_lib.WHICH_SMALLEST, kk // 2)] if kk > 1 else [])
        ws, vs = [], []
        for c, n in parts:
            re, _, vr, _, info = _solve(op, n, c, _lib.METHOD_LANCZOS, tol, ncv, maxiter, return_eigenvectors, seed,
                                        verify_probability)
            w, v = re[:n], (vr[:n].T if return_eigenvectors else None)
            _converged("eigsh", info, n, w, v)
            ws.append(w)
            vs.append(v)
    finally:
        if owned:
            op.close()
    w = np.concatenate(ws)
    order = np.argsort(w, kind="stable")
    v = np.concatenate(vs, axis=1)[:, order] if return_eigenvectors else None
    return _out(w[order], v, return_eigenvectors, cupy)


def eigs(A, k=6, M=None, sigma=None, which="LM", v0=None, ncv=None, maxiter=None, tol=0,
         return_eigenvectors=True, Minv=None, OPinv=None, OPpart=None, *, backend="auto", comm="world", seed=1):
    """k eigenvalues (and eigenvectors) of the real square matrix A, as
    scipy.sparse.linalg.eigs: which 'LM', 'LR', 'SR' or 'LI'; complex128 values
    in the library's wanted order (conjugate pairs adjacent, the positive
    imaginary part first), vectors as the columns of a complex N x k array.
    Krylov-Schur, or Lanczos where the symmetry check finds A symmetric ('LI' is
    then refused by the library: the values are real).  A, tol, maxiter, ncv,
    backend, comm, seed and the errors as pjds.eigsh.  Not supported: sigma, M,
    Minv, OPinv, OPpart, v0, which='SM' and 'SI' (NotImplementedError)."""
    _refuse("eigs", sigma=sigma, M=M, Minv=Minv, OPinv=OPinv, v0=v0, OPpart=OPpart)
    code = _which_code("eigs", which, EIGS_WHICH)
    op, owned, cupy = _operator_of(A, backend, "check", comm)
    try:
        kk = cint("k", k)
        re, im, vr, vi, info = _solve(op, kk, code, _lib.METHOD_AUTO, tol, ncv, maxiter, return_eigenvectors, seed)
    finally:
        if owned:
            op.close()
    w = (re + 1j * im)[:kk]
    v = None
    if return_eigenvectors:
        v = (vr[:kk] + 1j * vi[:kk]).T if vi is not None else vr[:kk].T.astype(np.complex128)
    _converged("eigs", info, kk, w, v)
    return _out(w, v, return_eigenvectors, cupy)
