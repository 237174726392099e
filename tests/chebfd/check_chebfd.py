#!/usr/bin/env python3
"""check_chebfd.py -- `solve` with [solver] method = chebfd (Chebyshev
filter diagonalization) against independent references.

usage: check_chebfd.py PJDS_BIN CASE [MPIEXEC NP-FLAG FLAGS...]
  laplace   2-D Laplacian 30 x 30 (Dirichlet; closed form 4 - 2 cos - 2 cos,
            degenerate pairs): windows inside, at the lower end and at the
            upper end; every eigenvalue of the window found once (copies
            included), none extra, each to 1e-10 relative, residuals
            <= tol ||H||
  diag      a diagonal matrix with two clusters, a gap and threefold
            copies: windows inside a cluster, straddling the gap, at an end
  hh        Holstein-Hubbard, 3024 rows (format = pjds; random-vector
            estimate): an interior window of 40 against dense LAPACK (numpy eigvalsh of the
            exported matrix); residuals <= tol ||H||; eigenvectors written
            are eigenvectors of the exported matrix
  free      a window of 40 in the middle of the 840-row model (3 phonons)
            with [spmv] format = matrix_free (block products from the
            Kronecker tables), checked as hh; format = auto on the CPU
            backend must run the tables too, with the same values
  target    target + nev (the nev closest to E, by distance) on the
            Laplacian and on hh
  smallest  which = smallest, nev = 50 (Laplacian) and which = largest,
            nev = 40 (hh): the extreme eigenvalues in order
  ranks     hh (840 rows, generated on each rank, [spmv] format = pjds) on
            1, 2, 3 and 4 ranks: the same eigenvalues to 1e-10, equal to
            LAPACK's (the block halo exchange of pl_op_apply_block)
  ranks_free  the same with format = matrix_free (the remote part from the
            Kronecker tables, be->kron_rem_spmm)
  bad       bad input, each exit status 2 and one line on stderr naming the
            key: empty and inverted interval, a window outside the spectral
            bounds, a target outside them, which = largest_magnitude without
            a window, interval without method = chebfd, a nonsymmetric
            imported matrix, a search block that does not fit the memory
            (PJDS_HOST_MEMORY_LIMIT), filter_degree = 0
  plot      tools/plot.py DOS.h5 --window CHEBFD.h5 draws the DOS of `dos`
            with the window (a PNG); --window on a file without one: exit 2
Exit 0 = pass, 1 = fail, 77 = skipped."""
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

TOL = 1e-10
HH = """[model]
type = holstein-hubbard
sites = 4
n_up = 2
n_down = 1
hubbard_u = 3
coupling = 0.6
phonon_frequency = 1.0
max_phonons = %d
[spmv]
backend = cpu
"""


def run(cmd, env=None, expect=0):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run(cmd, capture_output=True, text=True, env=e)
    if p.returncode != expect:
        print("FAIL: %s: exit %d (expected %d)\n%s" % (" ".join(cmd), p.returncode, expect, p.stderr[-3000:]))
        sys.exit(1)
    return p


def write_csr(path, A, sym=1):
    import scipy.sparse as sp
    A = sp.csr_matrix(A)
    A.sort_indices()
    with h5py.File(path, "w") as f:
        g = f["/"]
        g.attrs["pjds_matrix_schema"] = np.int64(1)
        g.attrs["rows"] = np.int64(A.shape[0])
        g.attrs["cols"] = np.int64(A.shape[1])
        g.attrs["nnz"] = np.int64(A.nnz)
        g.attrs["symmetric"] = np.int64(sym)
        g.create_dataset("row_ptr", data=A.indptr.astype(np.int64))
        g.create_dataset("col_idx", data=A.indices.astype(np.int32))
        g.create_dataset("values", data=A.data.astype(np.float64))


def dense_of(h5):
    with h5py.File(h5) as f:
        g = f["/"]
        n = int(g.attrs["rows"])
        rp, ci, v = g["row_ptr"][:], g["col_idx"][:], g["values"][:]
        lower = str(g.attrs.get("storage", b"")).find("lower") >= 0
    A = np.zeros((n, n))
    for i in range(n):
        A[i, ci[rp[i]:rp[i + 1]]] = v[rp[i]:rp[i + 1]]
    if lower:
        A = A + A.T - np.diag(np.diag(A))
    return A


def solve(exe, cfg, out, sets, mpi=None, np_=1, env=None):
    cmd = [exe, "solve", cfg, "--overwrite", "--quiet", "--set", "output.file=" + out, "--set", "solver.method=chebfd",
           "--set", "solver.tolerance=%g" % TOL]
    for s in sets:
        cmd += ["--set", s]
    if mpi:
        cmd = mpi[:1] + [mpi[1], str(np_)] + mpi[2:] + cmd
    run(cmd, env)
    with h5py.File(out) as f:
        d = {k: f.attrs[k] for k in f.attrs}
        d["values"] = f["eigenvalues"][:]
        d["resid"] = f["residual_norms"][:]
        if "eigenvectors" in f:
            d["vectors"] = f["eigenvectors"][:]
    return d


def compare(name, got, ref, resid, normH, ordered=False):
    """got (as returned) against ref (the exact set, ascending unless ordered)."""
    g = np.asarray(got) if ordered else np.sort(got)
    ref = np.asarray(ref)
    if len(g) != len(ref):
        print("FAIL: %s: %d eigenvalues returned, %d expected\n got %s\n ref %s" % (name, len(g), len(ref), g, ref))
        return 1
    err = np.max(np.abs(g - ref) / np.maximum(np.abs(ref), 1.0)) if len(ref) else 0.0
    rmax = np.max(resid) / normH if len(resid) else 0.0
    print("%s: %d eigenvalues, max relative error %.2e, max residual %.2e ||H||" % (name, len(ref), err, rmax))
    if err > 1e-10 or rmax > TOL:
        print("FAIL: %s: error %.2e (> 1e-10) or residual %.2e ||H|| (> %g)" % (name, err, rmax, TOL))
        return 1
    return 0


def window_case(exe, cfg, out, lam, a, b, name, extra=()):
    d = solve(exe, cfg, out, ["solver.interval=%.17g, %.17g" % (a, b)] + list(extra))
    ref = lam[(lam >= a) & (lam <= b)]
    fail = compare(name, d["values"], ref, d["resid"], np.max(np.abs(lam)))
    if d["converged_reason"] not in (b"converged", "converged") or int(d["found_count"]) != len(ref):
        print("FAIL: %s: reason %s, found_count %s" % (name, d["converged_reason"], d["found_count"]))
        fail = 1
    if not (float(d["window_lower"]) == a and float(d["window_upper"]) == b):
        print("FAIL: %s: window attributes %s %s" % (name, d["window_lower"], d["window_upper"]))
        fail = 1
    return fail


def laplace(tmp):
    import scipy.sparse as sp
    n = 30
    T = sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1])
    L = sp.kron(sp.eye(n), T) + sp.kron(T, sp.eye(n))
    t = 2 - 2 * np.cos(np.arange(1, n + 1) * np.pi / (n + 1))
    lam = np.sort((t[:, None] + t[None, :]).ravel())
    mat = os.path.join(tmp, "lap.h5")
    write_csr(mat, L)
    cfg = os.path.join(tmp, "lap.ini")
    open(cfg, "w").write("[model]\ntype = hdf5\n[matrix]\nfile = %s\n[spmv]\nbackend = cpu\n" % mat)
    return cfg, lam


def hh(exe, tmp, phonons):
    cfg = os.path.join(tmp, "hh%d.ini" % phonons)
    open(cfg, "w").write(HH % phonons)
    mat = os.path.join(tmp, "hh%d.h5" % phonons)
    run([exe, "export", cfg, mat, "--overwrite", "--quiet"])
    H = dense_of(mat)
    return cfg, H, np.linalg.eigvalsh(H)


def gap_window(lam, i0, i1):
    """[a, b] holding lam[i0:i1], edges half way to the neighbours."""
    return 0.5 * (lam[i0 - 1] + lam[i0]), 0.5 * (lam[i1 - 1] + lam[i1])


def case_laplace(exe, tmp):
    cfg, lam = laplace(tmp)
    out = os.path.join(tmp, "o.h5")
    fail = window_case(exe, cfg, out, lam, 3.0, 3.4, "laplace inside [3, 3.4]")
    fail |= window_case(exe, cfg, out, lam, -1.0, 0.3, "laplace lower end [-1, 0.3]")
    fail |= window_case(exe, cfg, out, lam, 7.5, 9.0, "laplace upper end [7.5, 9]")
    return fail


def case_diag(exe, tmp):
    rng = np.random.default_rng(3)
    lam = np.concatenate([np.repeat(np.linspace(-3, -1, 40), 3), rng.uniform(-3, -1, 200), np.linspace(1, 2, 300),
                          np.repeat([1.25, 1.5], 3)])
    lam = np.sort(lam)
    mat = os.path.join(tmp, "diag.h5")
    import scipy.sparse as sp
    write_csr(mat, sp.diags(rng.permutation(lam)))
    cfg = os.path.join(tmp, "diag.ini")
    open(cfg, "w").write("[model]\ntype = hdf5\n[matrix]\nfile = %s\n[spmv]\nbackend = cpu\n" % mat)
    out = os.path.join(tmp, "o.h5")
    fail = window_case(exe, cfg, out, lam, 1.2, 1.3, "diag inside a cluster [1.2, 1.3] (copies)")
    fail |= window_case(exe, cfg, out, lam, -1.2, 1.1, "diag straddling the gap [-1.2, 1.1]")
    fail |= window_case(exe, cfg, out, lam, 1.9, 2.5, "diag upper end [1.9, 2.5]")
    return fail


def case_hh(exe, tmp, free=False):
    cfg, H, lam = hh(exe, tmp, 3 if free else 5)  # free: the 840-row model (the tables' block product, not the size)
    out = os.path.join(tmp, "o.h5")
    n = len(lam)
    i0 = n // 2 - 20
    a, b = gap_window(lam, i0, i0 + 40)
    extra = ["output.eigenvectors=true", "spmv.format=" + ("matrix_free" if free else "pjds")]
    d = solve(exe, cfg, out, ["solver.interval=%.17g, %.17g" % (a, b)] + extra)
    fail = compare("hh%s %d rows, window [%.6f, %.6f]" % (" matrix_free" if free else "", n, a, b), d["values"],
                   lam[i0:i0 + 40], d["resid"], np.max(np.abs(lam)))
    X = d["vectors"]
    r = np.max(np.linalg.norm(H @ X.T - X.T * d["values"], axis=0)) / np.max(np.abs(lam))
    print("hh: eigenvectors of the exported matrix: max ||H x - lambda x|| = %.2e ||H||" % r)
    if r > TOL or (free and d["spmv_format"] not in (b"matrix_free", "matrix_free")):
        print("FAIL: hh eigenvectors %.2e, format %s" % (r, d["spmv_format"]))
        fail = 1
    if free:  # format = auto on the CPU backend takes the tables for chebfd too (app/cmd_solve.c)
        e = solve(exe, cfg, out, ["solver.interval=%.17g, %.17g" % (a, b)])
        if e["spmv_format"] not in (b"matrix_free", "matrix_free") or len(e["values"]) != len(d["values"]) or \
                np.max(np.abs(np.sort(e["values"]) - np.sort(d["values"]))) > TOL * np.max(np.abs(lam)):
            print("FAIL: format = auto ran %s with %d values" % (e["spmv_format"], len(e["values"])))
            fail = 1
    return fail


def case_target(exe, tmp):
    fail = 0
    out = os.path.join(tmp, "o.h5")
    cfg, lam = laplace(tmp)
    E = 4.1
    dist = np.abs(lam - E)
    o = np.argsort(dist, kind="stable")
    nev = 20
    while dist[o[nev - 1]] > dist[o[nev]] - 1e-9:  # no tie at the cut
        nev += 1
    d = solve(exe, cfg, out, ["solver.target=%g" % E, "solver.nev=%d" % nev])
    fail |= compare("laplace target %g nev %d" % (E, nev), np.sort(d["values"]), np.sort(lam[o[:nev]]), d["resid"], 8.0)
    if np.any(np.diff(np.abs(d["values"] - E)) < -1e-12):
        print("FAIL: target: not ordered by distance")
        fail = 1
    cfg, H, lam = hh(exe, tmp, 5)
    E = 0.5 * (lam[0] + lam[-1]) + 0.1 * (lam[-1] - lam[0])
    dist = np.abs(lam - E)
    o = np.argsort(dist, kind="stable")
    nev = 30
    d = solve(exe, cfg, out, ["solver.target=%.17g" % E, "solver.nev=%d" % nev])
    fail |= compare("hh target %.4f nev %d" % (E, nev), d["values"], lam[o[:nev]], d["resid"], np.max(np.abs(lam)),
                    ordered=True)
    return fail


def case_smallest(exe, tmp):
    out = os.path.join(tmp, "o.h5")
    cfg, lam = laplace(tmp)
    nev = 50
    while lam[nev - 1] > lam[nev] - 1e-9:
        nev += 1
    d = solve(exe, cfg, out, ["solver.which=smallest", "solver.nev=%d" % nev])
    fail = compare("laplace smallest nev %d" % nev, d["values"], lam[:nev], d["resid"], 8.0, ordered=True)
    cfg, H, lam = hh(exe, tmp, 5)
    d = solve(exe, cfg, out, ["solver.which=largest", "solver.nev=40"])
    fail |= compare("hh largest nev 40", d["values"], lam[::-1][:40], d["resid"], np.max(np.abs(lam)), ordered=True)
    return fail


def case_ranks(exe, tmp, mpi, fmt):
    cfg, H, lam = hh(exe, tmp, 3)
    n = len(lam)
    i0 = n // 3
    a, b = gap_window(lam, i0, i0 + 30)
    fail = 0
    first = None
    for np_ in (1, 2, 3, 4):
        out = os.path.join(tmp, "r%d.h5" % np_)
        d = solve(exe, cfg, out, ["solver.interval=%.17g, %.17g" % (a, b), "spmv.format=" + fmt], mpi, np_)
        fail |= compare("ranks %d (%s)" % (np_, fmt), d["values"], lam[i0:i0 + 30], d["resid"], np.max(np.abs(lam)))
        if first is None:
            first = d["values"]
        elif len(first) != len(d["values"]) or np.max(np.abs(first - d["values"])) > 1e-10 * np.max(np.abs(lam)):
            print("FAIL: %d ranks differ from 1 rank" % np_)
            fail = 1
        if int(d["ranks"]) != np_:
            print("FAIL: ranks attribute %s" % d["ranks"])
            fail = 1
    return fail


def bad(exe, cfg, sets, key, env=None, tmp="."):
    out = os.path.join(tmp, "bad.h5")
    if os.path.exists(out):
        os.remove(out)
    cmd = [exe, "solve", cfg, "--overwrite", "--quiet", "--set", "output.file=" + out] + sum([["--set", s] for s in sets], [])
    p = run(cmd, env, expect=2)
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    ok = len(lines) == 1 and key in lines[0] and not os.path.exists(out)
    print("bad %-40s -> %s" % (" ".join(sets)[:40], lines[0] if lines else "(nothing)"))
    if not ok:
        print("FAIL: expected one line naming '%s' and no output file, got:\n%s" % (key, p.stderr))
        return 1
    return 0


def case_bad(exe, tmp):
    cfg, lam = laplace(tmp)
    fail = 0
    cf = ["solver.method=chebfd"]
    fail |= bad(exe, cfg, cf + ["solver.interval=3, 3"], "interval", tmp=tmp)
    fail |= bad(exe, cfg, cf + ["solver.interval=4, 3"], "interval", tmp=tmp)
    fail |= bad(exe, cfg, cf + ["solver.interval=100, 200"], "interval", tmp=tmp)
    fail |= bad(exe, cfg, cf + ["solver.target=-50", "solver.nev=5"], "target", tmp=tmp)
    fail |= bad(exe, cfg, cf + ["solver.which=largest_magnitude"], "which", tmp=tmp)
    fail |= bad(exe, cfg, ["solver.interval=1, 2"], "interval", tmp=tmp)
    fail |= bad(exe, cfg, cf + ["solver.interval=1, 2", "solver.filter_degree=0"], "filter_degree", tmp=tmp)
    fail |= bad(exe, cfg, cf + ["solver.interval=1, 2", "solver.search_size=800"], "search_size",
                env={"PJDS_HOST_MEMORY_LIMIT": "2M"}, tmp=tmp)
    # a nonsymmetric imported matrix
    import scipy.sparse as sp
    A = sp.random(200, 200, density=0.05, random_state=1) + sp.eye(200)
    mat = os.path.join(tmp, "ns.h5")
    write_csr(mat, A, sym=0)
    ns = os.path.join(tmp, "ns.ini")
    open(ns, "w").write("[model]\ntype = hdf5\n[matrix]\nfile = %s\n[spmv]\nbackend = cpu\n" % mat)
    fail |= bad(exe, ns, cf + ["solver.interval=0.5, 1.5"], "method", tmp=tmp)
    return fail


def case_plot(exe, tmp):
    """tools/plot.py --window: a DOS with the chebfd window drawn (exit 77 without matplotlib)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("SKIP: no matplotlib")
        sys.exit(77)
    cfg, lam = laplace(tmp)
    dos = os.path.join(tmp, "dos.h5")
    run([exe, "dos", cfg, "--overwrite", "--quiet", "--set", "output.file=" + dos, "--set", "kpm.moments=256"])
    out = os.path.join(tmp, "w.h5")
    solve(exe, cfg, out, ["solver.interval=3.0, 3.4"])
    plot = os.path.join(os.environ.get("PJDS_SRC", os.path.join(os.path.dirname(__file__), "..", "..")), "tools",
                        "plot.py")
    png = os.path.join(tmp, "dos.png")
    p = run([sys.executable, plot, dos, "--out", png, "--window", out])
    fail = 0
    if "dos" not in p.stdout or not os.path.exists(png) or os.path.getsize(png) < 10000:
        print("FAIL: plot.py --window: %s" % p.stdout)
        fail = 1
    p = run([sys.executable, plot, dos, "--out", png, "--window", dos], expect=2)  # a file without a window
    if "window_lower" not in p.stderr:
        print("FAIL: plot.py --window on a dos file: %s" % p.stderr)
        fail = 1
    print("plot: %s" % ("ok" if not fail else "failed"))
    return fail


def main():
    exe, case = sys.argv[1], sys.argv[2]
    mpi = sys.argv[3:]
    with tempfile.TemporaryDirectory() as tmp:
        if case == "laplace":
            fail = case_laplace(exe, tmp)
        elif case == "diag":
            fail = case_diag(exe, tmp)
        elif case == "hh":
            fail = case_hh(exe, tmp)
        elif case == "free":
            fail = case_hh(exe, tmp, free=True)
        elif case == "target":
            fail = case_target(exe, tmp)
        elif case == "smallest":
            fail = case_smallest(exe, tmp)
        elif case == "ranks":
            fail = case_ranks(exe, tmp, mpi, "pjds")
        elif case == "ranks_free":
            fail = case_ranks(exe, tmp, mpi, "matrix_free")
        elif case == "bad":
            fail = case_bad(exe, tmp)
        elif case == "plot":
            fail = case_plot(exe, tmp)
        else:
            print("unknown case", case)
            return 1
    print("FAIL" if fail else "PASS")
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
