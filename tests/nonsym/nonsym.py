#!/usr/bin/python3
"""nonsym.py -- end-to-end tests of the Krylov-Schur solver (nonsymmetric
matrices) through `pjds-lanczos solve`.  Usage:

  nonsym.py real MATRIX      MATRIX from $PJDS_MATRICES: largest_magnitude and
                             largest_real, nev = 6, against a reference
  nonsym.py auto MATRIX      a case of AUTO_CASES that needs more than 1000
                             restarts at ncv 24: a fixed budget
                             (max_restarts = 1000) gives up, the default
                             max_restarts = auto converges (checks of `real`)
  nonsym.py crosscheck       krylov-schur vs lanczos on symmetric matrices
  nonsym.py ranks            1..4 ranks x exchange vector|overlap|task
  nonsym.py vectors          eigenvectors = true, checked in numpy
  nonsym.py degenerate       verify finds the missed copy of a doubly
                             degenerate eigenvalue (closed form)
  nonsym.py selftest         the checks of `real` must reject a perturbed
                             reference (guards against a vacuous test)

Environment (set by ctest): PJDS_BIN, PJDS_SRC, PJDS_MATRICES, PJDS_MPIEXEC
(mpiexec + flags + -n).  NONSYM_ALL=1 also runs the cases skipped for CI
time or known solver failures (see CASES) and, in `auto`, SciPy's eigs with its
defaults for comparison.  Exit 0 pass, 1 fail, 77 skipped.

`real` checks, per case (tolerance chosen per case, printed):
  * exit status 0, attribute method = krylov-schur (fidap007: asymmetry
    2.5e-10 > symmetry_tolerance 1e-12, so method = auto must pick it),
    problem = nonsymmetric, converged_reason = converged;
  * nev or nev + 1 values (nev + 1 only when the nev-th starts a pair), the
    set closed under conjugation (pairs are exact conjugates, 1e-14);
  * explicit residual_norms[i] <= RES_FACTOR (= 10) * tol * max(|lambda_i|,
    norm_estimate), the solver's own convergence test with a factor 10;
  * each value matched to a distinct reference eigenvalue (optimal
    assignment) with |lambda - ref| <= 1e-8 |ref|.  Relative to |ref| alone,
    not max(|ref|, 1): every wanted eigenvalue here is O(1) or larger and
    far from 0 against its own error, and max(., 1) would loosen the test
    for small ones.  Where the first-order (LAPACK dtrsna) bound
    kappa * residual exceeds 1e-8 |ref|, with kappa = 1/|y^H x| for unit
    left/right eigenvectors y, x of A, the bound used is
    2 * kappa * (residual + 1e-14 * norm_estimate) (the second term covers
    the reference's own error); this is printed;
  * the matched reference values are the wanted ones: no reference value
    more wanted (by |ref| or Re ref) than the least wanted matched one,
    beyond 1e-8 relative, is left out.
Reference: dense LAPACK (scipy.linalg.eigvals) for N <= 2000, ARPACK
(scipy.sparse.linalg.eigs, k = nev + 6, tol 1e-14) above (dense eig of
cryg2500/lns_3937 costs 25 s/90 s on 2 cores).  kappa: right and left
vectors by two steps of inverse iteration on the sparse LU of A - ref I
(cheap for every N, independent of the solver's vectors).
"""
import os
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np
import scipy.io
import scipy.linalg
import scipy.optimize
import scipy.sparse
import scipy.sparse.linalg as sla

BIN = os.environ.get("PJDS_BIN", "")
SRC = os.environ.get("PJDS_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
MATS = os.environ.get("PJDS_MATRICES", "")
ALL = os.environ.get("NONSYM_ALL", "") == "1"
NEV = 6
REL = 1e-8
RES_FACTOR = 10.0
DENSE_MAX = 2000

# matrix -> which -> tolerance, or a string: why the case is skipped (run
# anyway with NONSYM_ALL=1; with a tolerance after ':' where it applies).
CASES = {
    "rdb800l": {"largest_magnitude": 1e-12, "largest_real": 1e-12},
    "olm1000": {"largest_magnitude": 1e-12,
                # tol 1e-12 allows residual 1e-7 (normest 1e5 >> |lambda| ~ 1): 0.893 off by 4e-8 rel;
                # ncv 24 (default) needs ~8500 SpMVs and hits max_restarts depending on rounding; ncv 64: ~5000
                "largest_real": (1e-14, 64)},
    "fidap007": {"largest_magnitude": 1e-12, "largest_real": 1e-12},
    "cryg2500": {"largest_magnitude": 1e-12,
                 # tol 1e-10: a spurious 2.76 (residual-limited, ill-conditioned); hard case (rightmost values
                 # clustered below a spectral radius of 1e4): converged at restart ~840, 1603 restarts with verify
                 # (13,703 SpMVs at tol 1e-14; ARPACK needs 7191 SpMVs even at tol 1e-8): more than a fixed budget
                 # of 1000 allows, within max_restarts = auto
                 "largest_real": 1e-14},
    # seeds 7 and 10: the gcc build's false convergences before the final explicit-residual check (a verify
    # unlock broke the Krylov relation; explicit residuals 79 and 76 against 10 tol normest = 4.1)
    "lns_3937": {"largest_magnitude": 1e-12, "largest_real": (1e-12, None, None, (None, 7, 10))},
    # largest_real at tol 1e-12: `auto cryg10000` (AUTO_CASES)
  "cryg10000": {"largest_magnitude": 1e-12},
    "memplus": {"largest_magnitude": 1e-12, "largest_real": 1e-12},
}

# `auto MATRIX`: (which, tolerance) at nev 6, ncv 24 (the default), whose wanted values need more than
# OLD_DEFAULT restarts to converge: cryg10000 largest_real at tol 1e-12 converges at restart ~3200
# (~29,000 SpMVs; ~6,200 restarts, ~56,000 SpMVs with verify's search; SciPy's eigs with its defaults: ~34,500
# products); max_restarts = 1000 stops after 1000 restarts, 9,031 SpMVs, with residuals of 0.03..0.24 relative.
AUTO_CASES = {"cryg10000": ("largest_real", 1e-12)}
OLD_DEFAULT = 1000
NCV = 24


def fail(msg):
    print("FAIL:", msg)
    return 1


def need_bin():
    if not BIN or not os.access(BIN, os.X_OK):
        print("skipped: PJDS_BIN not set")
        sys.exit(77)


def mtx(name):
    p = os.path.join(MATS, name + ".mtx")
    if not os.path.isfile(p):
        print(f"skipped: {p} not found")
        sys.exit(77)
    return p


def convert(mtxfile, h5file, extra=()):
    subprocess.run([sys.executable, os.path.join(SRC, "tools", "mtx2h5.py"), mtxfile, h5file, *extra],
                   check=True, stdout=subprocess.DEVNULL)


def write_cfg(path, model_lines, solver, out, spmv=None, output=None):
    with open(path, "w") as f:
        f.write(model_lines)
        f.write("[solver]\n" + "".join(f"{k} = {v}\n" for k, v in solver.items()))
        f.write("[spmv]\n" + "".join(f"{k} = {v}\n" for k, v in (spmv or {"backend": "cpu"}).items()))
        f.write(f"[output]\nfile = {out}\n" + "".join(f"{k} = {v}\n" for k, v in (output or {}).items()))


def hdf5_model(h5):
    return f"[model]\ntype = hdf5\n[matrix]\nfile = {h5}\n"


def solve(cfg, np_=1, env=None, extra=()):
    """Run solve; return (exit status, seconds, stderr)."""
    cmd = [BIN, "solve", cfg, "--quiet", "--overwrite", *extra]
    if np_ > 1:
        cmd = os.environ.get("PJDS_MPIEXEC", "mpiexec --allow-run-as-root --oversubscribe --bind-to none -n").split() + [str(np_)] + cmd
    t = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})})
    return p.returncode, time.time() - t, p.stdout + p.stderr


def read_out(h5):
    with h5py.File(h5, "r") as f:
        ev = f["eigenvalues"][...]
        if ev.dtype.names:  # compound {r, i}
            ev = ev["r"] + 1j * ev["i"]
        d = {"ev": ev, "res": f["residual_norms"][...], "attrs": {k: f.attrs[k] for k in f.attrs}}
        if "eigenvectors" in f:
            v = f["eigenvectors"][...]
            d["vec"] = v["r"] + 1j * v["i"] if v.dtype.names else v
    for k, v in d["attrs"].items():
        if isinstance(v, bytes):
            d["attrs"][k] = v.decode()
    return d


def key(which, z):
    return np.abs(z) if which == "largest_magnitude" else np.real(z)


def reference(A, which):
    """Reference eigenvalues (complex array): all (dense) or the k most wanted (ARPACK); None if ARPACK fails."""
    n = A.shape[0]
    if n <= DENSE_MAX:
        return scipy.linalg.eigvals(A.toarray(), overwrite_a=True, check_finite=False), "dense LAPACK"
    try:
        w = sla.eigs(A, k=NEV + 6, which="LM" if which == "largest_magnitude" else "LR", tol=1e-14,
                     ncv=40, maxiter=20000, return_eigenvectors=False)
    except sla.ArpackNoConvergence as e:
        print(f"ARPACK did not converge ({e}); case skipped")
        return None, "ARPACK"
    return w, "ARPACK eigs"


def condition(A, lam, rng):
    """kappa = 1/|y^H x| of the eigenvalue nearest lam (unit right x, left y), by inverse iteration."""
    n = A.shape[0]
    sig = lam * (1 + 1e-13) + 1e-13 * (1 + 1j)  # keep A - sig I invertible
    lu = sla.splu((A - sig * scipy.sparse.identity(n, format="csc")).tocsc().astype(complex))
    x = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    y = x.copy()
    for _ in range(3):
        x = lu.solve(x); x /= np.linalg.norm(x)
        y = lu.solve(y, trans="H"); y /= np.linalg.norm(y)
    return 1.0 / max(abs(np.vdot(y, x)), 1e-300)


def check_real_case(name, A, which, tol, out, ref, refname, perturb=0.0):
    """All checks of one (matrix, which) case; returns the number of failures."""
    d = read_out(out)
    at, ev, res = d["attrs"], d["ev"], d["res"]
    bad = 0
    print(f"  method={at.get('method')} problem={at.get('problem')} reason={at.get('converged_reason')} "
          f"SpMVs={at.get('iterations')} normest={at.get('norm_estimate'):.6g} reference={refname}")
    if at.get("method") != "krylov-schur":
        bad += fail(f"method attribute {at.get('method')!r}, expected 'krylov-schur' (method = auto)")
    if at.get("problem") != "nonsymmetric":
        bad += fail(f"problem attribute {at.get('problem')!r}, expected 'nonsymmetric'")
    if at.get("converged_reason") != "converged":
        bad += fail(f"converged_reason {at.get('converged_reason')!r}")
    m = len(ev)
    if not (m == NEV or (m == NEV + 1 and abs(ev[NEV - 1].imag) > 0)):
        bad += fail(f"{m} values returned, expected {NEV} (or {NEV + 1} ending in a pair)")
    # closed under conjugation: each complex value has its exact conjugate
    for i, z in enumerate(ev):
        if z.imag != 0 and np.min(np.abs(ev - np.conj(z))) > 1e-14 * abs(z):
            bad += fail(f"value {i} {z} has no conjugate in the returned set")
    normest = float(at.get("norm_estimate", 0))
    for i, (z, r) in enumerate(zip(ev, res)):
        lim = RES_FACTOR * tol * max(abs(z), normest)
        if not r <= lim:
            bad += fail(f"residual[{i}] = {r:.3e} > {RES_FACTOR:g} * tol * max(|lambda|, normest) = {lim:.3e}")
    if perturb:
        ref = ref.copy()
        j = np.argmin(np.abs(ref - ev[0]))
        ref[j] *= 1 + perturb
        print(f"  (self-test: reference value {j} perturbed by {perturb:g} relative)")
    cost = np.abs(ev[:, None] - ref[None, :])
    rows, cols = scipy.optimize.linear_sum_assignment(cost)
    rng = np.random.default_rng(7)
    for i, j in zip(rows, cols):
        z, w = ev[i], ref[j]
        err = abs(z - w)
        bound = REL * abs(w)
        note = ""
        kappa = condition(A, w, rng)
        if kappa * res[i] > REL * abs(w):
            bound = 2 * kappa * (res[i] + 1e-14 * normest)
            note = f"  [dtrsna bound: kappa*res = {kappa * res[i]:.2e} > 1e-8|ref|, using 2 kappa (res + 1e-14 normest)]"
        ok = err <= bound
        print(f"  {z.real:+.16e} {z.imag:+.16e}i  ref {w.real:+.16e} {w.imag:+.16e}i  err {err:.2e} "
              f"bound {bound:.2e} kappa {kappa:.3g} res {res[i]:.2e} {'ok' if ok else 'FAIL'}{note}")
        if not ok:
            bad += fail(f"value {i} {z} differs from reference {w} by {err:.3e} > {bound:.3e}")
    # nothing more wanted left out
    kmatched = key(which, ref[cols])
    kmin = kmatched.min()
    rest = np.setdiff1d(np.arange(len(ref)), cols)
    missed = [ref[j] for j in rest if key(which, ref[j]) > kmin + REL * max(abs(kmin), abs(ref[j]))]
    if missed:
        bad += fail(f"reference values more wanted than the returned ones were missed: {missed}")
    return bad


def cmd_real(name, selftest=False):
    need_bin()
    mfile = mtx(name)
    A = scipy.io.mmread(mfile).tocsr()
    bad = 0
    skipped = 0
    with tempfile.TemporaryDirectory() as d:
        h5 = os.path.join(d, "m.h5")
        convert(mfile, h5)
        for which, spec in CASES[name].items():
            if isinstance(spec, str):
                t, why = spec.split(":", 1)
                if not ALL:
                    print(f"{name} {which}: skipped: {why}")
                    skipped += 1
                    continue
                tol = float(t)
                print(f"{name} {which}: running a skipped case (NONSYM_ALL=1): {why}")
            else:
                tol = spec
            ncv, max_restarts, seeds = None, None, (None,)
            if isinstance(tol, tuple):  # (tolerance, ncv[, max_restarts[, seeds]])
                tol, ncv, *more = tol
                max_restarts = more[0] if more else None
                seeds = more[1] if len(more) > 1 else seeds
            for seed in seeds:
                b, sk = run_case(name, A, h5, d, which, tol, ncv, max_restarts, seed, selftest)
                bad += b
                skipped += sk
                if selftest:
                    break  # one seed proves the check is not vacuous
    if bad == 0 and skipped == len(CASES[name]):
        sys.exit(77)
    return bad


def run_case(name, A, h5, d, which, tol, ncv, max_restarts, seed, selftest):
    """One (matrix, which[, seed]) solve and its checks; returns (failures, skipped)."""
    cfg, out = os.path.join(d, f"{which}.ini"), os.path.join(d, f"{which}.h5")
    solver = {"method": "auto", "which": which, "nev": NEV, "tolerance": tol}
    if ncv:
        solver["ncv"] = ncv
    if max_restarts:
        solver["max_restarts"] = max_restarts
    if seed is not None:
        solver["seed"] = seed
    write_cfg(cfg, hdf5_model(h5), solver, out)
    st, sec, log = solve(cfg)
    print(f"{name} {which}: tolerance {tol:g}{f', ncv {ncv}' if ncv else ''}"
          f"{f', seed {seed}' if seed is not None else ''}, solve {sec:.1f} s, exit {st}")
    if st != 0:
        return fail(f"{name} {which}: exit status {st}: {log.strip()[-400:]}"), 0
    t0 = time.time()
    ref, refname = reference(A, which)
    if ref is None:
        print(f"{name} {which}: skipped: ARPACK did not converge")
        return 0, 1
    print(f"  reference {refname} {time.time() - t0:.1f} s")
    b = check_real_case(name, A, which, tol, out, ref, refname, perturb=1e-7 if selftest else 0.0)
    if not selftest:
        return b, 0
    if b == 0:
        return fail(f"{name} {which}: self-test: a reference perturbed by 1e-7 relative was accepted"), 0
    print(f"{name} {which}: self-test ok: the perturbed reference was rejected")
    return 0, 0


def auto_budget(n, nev, ncv):
    """max_restarts = auto resolved (lanczos/krylov_impl.h): 3 x the products of ARPACK's default, 10 N (ncv - nev),
    in restarts of ceil((ncv - nev) / 2) products, at least 1000."""
    extra = ncv - nev
    return max(1000, -(-30 * n * extra // -(-extra // 2)))


def first_converged_row(h5, tol):
    """The first history row (= restart) at which all nev wanted residual estimates met the solver's test
    estimate <= tol max(|theta|, norm_estimate); None if none did."""
    with h5py.File(h5, "r") as f:
        rv = f["convergence/ritz_values"][...]
        if rv.dtype.names:
            rv = rv["r"] + 1j * rv["i"]
        est = f["convergence/residual_estimates"][...]
        ne = float(f.attrs["norm_estimate"])
    ok = np.all(est <= tol * np.maximum(np.abs(rv), ne), axis=1)
    return int(np.argmax(ok)) if ok.any() else None


def arpack_default(A, which, tol):
    """SciPy's eigs with its defaults (maxiter = 10 N) at nev 6, ncv 24: (converged, products)."""
    cnt = [0]

    def mv(x):
        cnt[0] += 1
        return A @ x

    op = sla.LinearOperator(A.shape, matvec=mv, dtype=float)
    try:
        sla.eigs(op, k=NEV, ncv=NCV, which="LM" if which == "largest_magnitude" else "LR", tol=tol,
                 return_eigenvectors=False)
        return True, cnt[0]
    except sla.ArpackNoConvergence:
        return False, cnt[0]


def cmd_auto(name):
    """AUTO_CASES[name]: max_restarts = 1000 must give up, max_restarts = auto (the default) must
    converge after more than 1000 restarts to the reference, with the budget of the documented formula."""
    need_bin()
    mfile = mtx(name)
    which, tol = AUTO_CASES[name]
    A = scipy.io.mmread(mfile).tocsr()
    n = A.shape[0]
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        h5 = os.path.join(d, "m.h5")
        convert(mfile, h5)
        base = {"method": "auto", "which": which, "nev": NEV, "tolerance": tol, "ncv": NCV}
        # a fixed budget of 1000 restarts: gives up
        cfg, out = os.path.join(d, "old.ini"), os.path.join(d, "old.h5")
        write_cfg(cfg, hdf5_model(h5), {**base, "max_restarts": OLD_DEFAULT}, out)
        st, sec, log = solve(cfg)
        if st != 0:
            return fail(f"max_restarts = {OLD_DEFAULT}: exit status {st}: {log.strip()[-400:]}")
        at = read_out(out)["attrs"]
        print(f"{name} {which} tol {tol:g}, max_restarts = {OLD_DEFAULT} (the old default): {sec:.1f} s, "
              f"reason {at.get('converged_reason')}, restarts {at.get('restarts')}, SpMVs {at.get('iterations')}")
        if at.get("converged_reason") != "max_restarts" or at.get("restarts") != OLD_DEFAULT:
            bad += fail(f"max_restarts = {OLD_DEFAULT}: expected to give up after {OLD_DEFAULT} restarts (reason "
                        f"max_restarts), got {at.get('converged_reason')} after {at.get('restarts')}: the case no "
                        "longer needs more than the old default")
        if at.get("max_restarts") != OLD_DEFAULT or at.get("max_restarts_auto") != 0:
            bad += fail(f"an explicit max_restarts = {OLD_DEFAULT} must win: attributes max_restarts = "
                        f"{at.get('max_restarts')}, max_restarts_auto = {at.get('max_restarts_auto')}")
        if ALL:  # the peer with its defaults, for the record (9 s on cryg10000: not in CI)
            t0 = time.time()
            conv, products = arpack_default(A, which, tol)
            print(f"  SciPy eigs (ARPACK) with its defaults (maxiter = 10 N = {10 * n}), k {NEV}, ncv {NCV}, "
                  f"tol {tol:g}: {'converged' if conv else 'did not converge'} after {products} products, "
                  f"{time.time() - t0:.1f} s")
        # the default: converges
        cfg, out = os.path.join(d, "auto.ini"), os.path.join(d, "auto.h5")
        write_cfg(cfg, hdf5_model(h5), base, out)
        st, sec, log = solve(cfg)
        if st != 0:
            return bad + fail(f"max_restarts = auto: exit status {st}: {log.strip()[-400:]}")
        at = read_out(out)["attrs"]
        first = first_converged_row(out, tol)
        budget = auto_budget(n, NEV, NCV)
        print(f"{name} {which} tol {tol:g}, max_restarts = auto (the default): {sec:.1f} s, reason "
              f"{at.get('converged_reason')}, restarts {at.get('restarts')} of {at.get('max_restarts')}, SpMVs "
              f"{at.get('iterations')}, wanted values first converged at restart {first}")
        if at.get("max_restarts_auto") != 1 or at.get("max_restarts") != budget:
            bad += fail(f"attributes max_restarts = {at.get('max_restarts')}, max_restarts_auto = "
                        f"{at.get('max_restarts_auto')}; expected {budget} (30 N (ncv - nev) / ceil((ncv - nev) / 2)) "
                        "and 1")
        if not at.get("restarts", 0) > OLD_DEFAULT or first is None or not first > OLD_DEFAULT:
            bad += fail(f"expected more than {OLD_DEFAULT} restarts before the wanted values converged: restarts "
                        f"{at.get('restarts')}, first converged at {first}")
        t0 = time.time()
        ref, refname = reference(A, which)
        if ref is None:
            print(f"{name} {which}: skipped: the reference (ARPACK) did not converge")
            return bad if bad else 77
        print(f"  reference {refname} {time.time() - t0:.1f} s")
        bad += check_real_case(name, A, which, tol, out, ref, refname)
    return bad


def match(a, b, floor=0.0):
    """Max over an optimal one-to-one matching of |a_i - b_j| / max(|b_j|, floor) (None if the sizes differ)."""
    if len(a) != len(b):
        return None
    cost = np.abs(a[:, None] - b[None, :])
    r, c = scipy.optimize.linear_sum_assignment(cost)
    return max(abs(a[i] - b[j]) / max(abs(b[j]), floor, 1e-300) for i, j in zip(r, c))


def cmd_crosscheck():
    """krylov-schur vs lanczos on symmetric matrices (tol 1e-12, nev 4): same eigenvalues to 1e-10
    relative to max(|lambda|, norm_estimate), real /eigenvalues and problem = symmetric from krylov-schur
    too.  Not relative to |lambda| alone: lund_a's smallest, 80.0, sits below ||A|| = 2.2e8 and both
    methods agree only to ~eps ||A|| there (3.5e-7 absolute, 4.4e-9 relative to |lambda|)."""
    need_bin()
    bad = 0
    cases = [("quickstart", "smallest"), ("quickstart", "largest"),
             ("lund_a", "smallest"), ("lund_a", "largest"), ("mhd4800b", "largest")]
    with tempfile.TemporaryDirectory() as d:
        models = {"quickstart": None}
        for m in ("lund_a", "mhd4800b"):
            p = os.path.join(MATS, m + ".mtx")
            if os.path.isfile(p):
                convert(p, os.path.join(d, m + ".h5"))
                models[m] = hdf5_model(os.path.join(d, m + ".h5"))
            else:
                print(f"{m}: skipped: {p} not found")
        for m, which in cases:
            if m not in models:
                continue
            got = {}
            for meth in ("lanczos", "krylov-schur"):
                cfg, out = os.path.join(d, f"{m}_{which}_{meth}.ini"), os.path.join(d, f"{m}_{which}_{meth}.h5")
                if models[m] is None:  # the generated quickstart model, its own [solver] section overridden
                    cfg = os.path.join(SRC, "configs", "quickstart.ini")
                    extra = [f"--set=solver.{k}={v}" for k, v in (("method", meth), ("which", which),
                                                                  ("nev", 4), ("tolerance", 1e-12))]
                    extra += [f"--set=output.file={out}", "--set=spmv.backend=cpu"]
                else:
                    write_cfg(cfg, models[m], {"method": meth, "which": which, "nev": 4, "tolerance": 1e-12}, out)
                    extra = []
                st, sec, log = solve(cfg, extra=extra)
                if st != 0:
                    bad += fail(f"{m} {which} {meth}: exit {st}: {log.strip()[-300:]}")
                    continue
                r = read_out(out)
                got[meth] = r
                at = r["attrs"]
                print(f"{m} {which} {meth}: {sec:.1f} s, SpMVs {at.get('iterations')}, dtype {r['ev'].dtype}, "
                      f"problem {at.get('problem')}, method {at.get('method')}: {list(r['ev'])}")
                if r["ev"].dtype != np.float64:
                    bad += fail(f"{m} {which} {meth}: /eigenvalues is {r['ev'].dtype}, expected float64 (real)")
                if at.get("problem") != "symmetric":
                    bad += fail(f"{m} {which} {meth}: problem = {at.get('problem')!r}, expected 'symmetric'")
                if at.get("method") != meth:
                    bad += fail(f"{m} {which} {meth}: method attribute {at.get('method')!r}")
            if len(got) == 2:
                ne = float(got["lanczos"]["attrs"].get("norm_estimate", 0))
                e = match(got["krylov-schur"]["ev"].astype(complex), got["lanczos"]["ev"].astype(complex), ne)
                print(f"  max difference relative to max(|lambda|, normest = {ne:.6g}): {e}")
                if e is None or not e <= 1e-10:
                    bad += fail(f"{m} {which}: krylov-schur and lanczos differ by {e} (> 1e-10 relative)")
    return bad


def cmd_ranks():
    """rdb800l largest_real nev 6 on 1..4 ranks x vector/overlap/task, OMP_NUM_THREADS=1:
    every run's eigenvalues equal the first run's to 1e-10 relative to |lambda|."""
    need_bin()
    mfile = mtx("rdb800l")
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        h5 = os.path.join(d, "m.h5")
        convert(mfile, h5)
        base = None
        for nr in (1, 2, 3, 4):
            for mode in ("vector", "overlap", "task"):
                cfg, out = os.path.join(d, f"r{nr}{mode}.ini"), os.path.join(d, f"r{nr}{mode}.h5")
                write_cfg(cfg, hdf5_model(h5), {"which": "largest_real", "nev": NEV, "tolerance": 1e-12}, out,
                          spmv={"backend": "cpu", "exchange": mode})
                st, sec, log = solve(cfg, np_=nr, env={"OMP_NUM_THREADS": "1"})
                if st != 0:
                    bad += fail(f"{nr} ranks {mode}: exit {st}: {log.strip()[-300:]}")
                    continue
                r = read_out(out)
                ev = r["ev"]
                if base is None:
                    base = ev
                    print(f"reference run (1 rank, {mode}): {list(ev)}")
                e = match(ev, base)
                print(f"{nr} ranks {mode:8s}: {sec:.1f} s, SpMVs {r['attrs'].get('iterations')}, "
                      f"{len(ev)} values, reason {r['attrs'].get('converged_reason')}, max rel diff {e}")
                if e is None or not e <= 1e-10:
                    bad += fail(f"{nr} ranks {mode}: eigenvalues {list(ev)} differ from the 1-rank run by {e}")
                if r["attrs"].get("converged_reason") != "converged":
                    bad += fail(f"{nr} ranks {mode}: converged_reason {r['attrs'].get('converged_reason')!r}")
    return bad


def cmd_vectors():
    """rdb800l largest_real nev 6 (complex pairs), eigenvectors = true: unit norm, ||A x - lambda x|| <=
    1e-8 ||A||_1 (numpy, from the .mtx), the vectors of a pair exact conjugates (1e-14)."""
    need_bin()
    mfile = mtx("rdb800l")
    A = scipy.io.mmread(mfile).tocsr()
    norm_a = sla.norm(A, 1)
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        h5 = os.path.join(d, "m.h5")
        convert(mfile, h5)
        cfg, out = os.path.join(d, "v.ini"), os.path.join(d, "v.h5")
        write_cfg(cfg, hdf5_model(h5), {"which": "largest_real", "nev": NEV, "tolerance": 1e-12}, out,
                  output={"eigenvectors": "true"})
        st, sec, log = solve(cfg)
        if st != 0:
            return fail(f"exit {st}: {log.strip()[-300:]}")
        r = read_out(out)
        ev, vec = r["ev"], r.get("vec")
        if vec is None:
            return fail("no /eigenvectors")
        print(f"solve {sec:.1f} s; {len(ev)} values, /eigenvectors {vec.shape} {vec.dtype}, ||A||_1 = {norm_a:.6g}")
        if vec.shape != (len(ev), A.shape[0]) or not np.iscomplexobj(vec):
            bad += fail(f"/eigenvectors shape {vec.shape} dtype {vec.dtype}, expected ({len(ev)}, {A.shape[0]}) complex")
            return bad
        if not any(z.imag != 0 for z in ev):
            bad += fail("no complex pair among the values: the test would not check conjugate vectors")
        for i, (z, x) in enumerate(zip(ev, vec)):
            nx = np.linalg.norm(x)
            rn = np.linalg.norm(A @ x - z * x)
            print(f"  [{i}] {z:.16g}: ||x|| - 1 = {nx - 1:.1e}, ||Ax - lambda x|| = {rn:.3e} (file: {r['res'][i]:.3e})")
            if abs(nx - 1) > 1e-12:
                bad += fail(f"vector {i}: norm {nx!r}, expected 1")
            if not rn <= 1e-8 * norm_a:
                bad += fail(f"vector {i}: ||Ax - lambda x|| = {rn:.3e} > 1e-8 ||A||_1 = {1e-8 * norm_a:.3e}")
            if z.imag != 0:
                js = [j for j in range(len(ev)) if j != i and ev[j] == np.conj(z)]
                if not js:
                    bad += fail(f"value {i} {z}: no exact conjugate value")
                    continue
                dmin = min(np.linalg.norm(vec[j] - np.conj(x)) for j in js)
                print(f"      conjugate value at {js}: min ||x_j - conj(x_i)|| = {dmin:.1e}")
                if not dmin <= 1e-14 * np.sqrt(A.shape[0]):
                    bad += fail(f"vector {i}: the vector of the conjugate value is not conj(x) ({dmin:.2e})")
    return bad


def convection_2d(n, c):
    """A = T (x) I + I (x) T, T = tridiag(-(1 + c), 2, -(1 - c)) of order n (1-D convection-diffusion, |c| < 1):
    nonsymmetric (non-normal), with the closed-form eigenvalues mu_i + mu_j, mu_k = 2 - 2 sqrt(1 - c^2)
    cos(k pi / (n + 1)), so that every value with i != j is exactly doubly degenerate."""
    t = scipy.sparse.diags([-(1 + c) * np.ones(n - 1), 2 * np.ones(n), -(1 - c) * np.ones(n - 1)], [-1, 0, 1])
    e = scipy.sparse.identity(n)
    mu = 2 - 2 * np.sqrt(1 - c * c) * np.cos(np.arange(1, n + 1) * np.pi / (n + 1))
    return (scipy.sparse.kron(t, e) + scipy.sparse.kron(e, t)).tocsr(), np.sort((mu[:, None] + mu[None, :]).ravel())


def cmd_degenerate():
    """Krylov-Schur's verify on a nonsymmetric matrix with exactly degenerate eigenvalues (convection_2d, n = 30,
    c = 0.3): the 4 largest and the 4 smallest real values each hold a doubly degenerate level inside the set.
    Per side and seed 1..3 the default run (verify = true) returns both copies (each value within 1e-6
    relative of the closed form, with multiplicity: T's eigenvector matrix has a condition number of about
    ((1 + c) / (1 - c))^((n - 1) / 2) ~ 8e3, so a residual of tol x normest moves a value by up to ~1e-7;
    the levels are 0.02 apart) after its search found the missed one (verify_missed >= 1);
    with verify = false seed 1 returns a set without the second copy, which shows that the case needs the
    search (else it would not test it)."""
    need_bin()
    A, lam = convection_2d(30, 0.3)
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        h5, mm = os.path.join(d, "m.h5"), os.path.join(d, "m.mtx")
        scipy.io.mmwrite(mm, A)  # a general (nonsymmetric) Matrix Market file, converted as the real cases are
        convert(mm, h5)
        for which, want in (("largest_real", lam[::-1][:4]), ("smallest_real", lam[:4])):
            mult = [int(np.sum(np.abs(want - w) <= 1e-12 * abs(w))) for w in want]
            print(f"{which}: closed form {want} (multiplicities {mult})")
            if max(mult) < 2:
                bad += fail(f"{which}: no degenerate level among the wanted values: the case tests nothing")
            for verify, seeds in (("true", (1, 2, 3)), ("false", (1,))):
                for seed in seeds:
                    cfg, out = os.path.join(d, "d.ini"), os.path.join(d, "d.h5")
                    write_cfg(cfg, hdf5_model(h5), {"which": which, "nev": 4, "tolerance": 1e-10, "seed": seed,
                                                    "verify": verify}, out)
                    st, sec, log = solve(cfg)
                    if st != 0:
                        bad += fail(f"{which} verify={verify} seed {seed}: exit {st}: {log.strip()[-300:]}")
                        continue
                    r = read_out(out)
                    got = np.sort(r["ev"].real)[::-1] if which == "largest_real" else np.sort(r["ev"].real)
                    imag = np.max(np.abs(r["ev"].imag)) if len(r["ev"]) else 0.0
                    same = len(got) == 4 and imag == 0.0 and bool(np.all(np.abs(got - want) <= 1e-6 * np.abs(want)))
                    at = r["attrs"]
                    print(f"  verify={verify} seed {seed}: {got} SpMVs {at.get('iterations')} "
                          f"missed {at.get('verify_missed')} inconclusive {at.get('verify_inconclusive')} {sec:.1f} s")
                    if verify == "true":
                        if not same:
                            bad += fail(f"{which} seed {seed}: returned {got}, closed form {want}")
                        if not int(at.get("verify_missed", 0)) >= 1:
                            bad += fail(f"{which} seed {seed}: verify_missed = {at.get('verify_missed')}: the search "
                                        f"did not find the copy (the main phase did), so the case tests nothing")
                    elif same:
                        bad += fail(f"{which}: verify = false found both copies too: the case does not need the search")
    return bad


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    c = sys.argv[1]
    if c == "real":
        return 1 if cmd_real(sys.argv[2]) else 0
    if c == "auto":
        r = cmd_auto(sys.argv[2])
        return 77 if r == 77 else (1 if r else 0)
    if c == "selftest":
        return 1 if cmd_real(sys.argv[2] if len(sys.argv) > 2 else "rdb800l", selftest=True) else 0
    if c in ("crosscheck", "ranks", "vectors", "degenerate"):
        return 1 if globals()["cmd_" + c]() else 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
