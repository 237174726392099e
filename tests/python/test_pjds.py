#!/usr/bin/python3
"""test_pjds.py -- the Python package pjds (python/) against SciPy and closed forms.
Usage (run with the python of the ctest virtual environment, tests/python/CMakeLists.txt):

  test_pjds.py scipy      pjds.eigsh on lund_a and mhd4800b (and the symmetric part of
                          rdb800l), pjds.eigs on rdb800l, olm1000 and cryg2500 ($PJDS_MATRICES,
                          read with scipy.io.mmread) against SciPy's eigsh/eigs (tol 1e-14):
                          eigenvalues to 1e-10 relative (lund_a's smallest: of ||A||),
                          eigenvectors by their residual, orthonormality and their overlap
                          with SciPy's where the eigenvalue is simple
  test_pjds.py errors     invalid arguments raise Python exceptions: the library's own checks
                          carry its message (PjdsError, a ValueError for bad input), the
                          package's refuse what the library lacks (NotImplementedError)
  test_pjds.py model      pjds.holstein_hubbard against closed forms (free electrons, free
                          phonons) and against `pjds-lanczos solve` of the same model
  test_pjds.py read       pjds.read of a solve's file against h5py, as a dict and as xarray
  test_pjds.py discovery  the library is found in the build folder recorded at install time
                          ($PJDS_EXPECT_LIBRARY) and $PJDS_LIBRARY overrides it
  test_pjds.py mpi        under mpirun: eigsh (rdb800l's symmetric part), eigs (rdb800l) and
                          holstein_hubbard distributed over the ranks equal LAPACK, SciPy and
                          one rank (whole eigenvectors on every rank)
  test_pjds.py readme     the 10-line session of README.md's "Python" section (doctest)
  test_pjds.py cupy       CuPy sparse input on the GPU: CuPy arrays back, equal to SciPy (gpu)
Exit 0 pass, 1 fail, 77 skipped (a reason is printed)."""
import os
import subprocess
import sys
import tempfile

import numpy as np
import scipy.io
import scipy.sparse
import scipy.sparse.linalg as sla

import pjds

MATS = os.environ.get("PJDS_MATRICES", "")
REL = 1e-10
FAIL = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAIL.append(what)


def skip(why):
    print("skipped: " + why)
    sys.exit(77)


def matrix(name):
    path = os.path.join(MATS, name + ".mtx")
    if not os.path.exists(path):
        return None
    return scipy.sparse.csr_matrix(scipy.io.mmread(path))


def match(w, ref):
    """max relative distance after pairing each of w with its nearest unused ref value"""
    ref, worst = list(ref), 0.0
    for x in w:
        j = int(np.argmin([abs(x - r) for r in ref]))
        worst = max(worst, abs(x - ref[j]) / max(abs(ref[j]), 1.0))
        ref.pop(j)
    return worst


def vectors_ok(A, w, v, label):
    """unit columns, residual ||A v - w v|| <= 1e-8 ||A||_1"""
    nrm = sla.norm(A, 1)
    res = max(np.linalg.norm(A @ v[:, i] - w[i] * v[:, i]) for i in range(len(w)))
    unit = max(abs(np.linalg.norm(v[:, i]) - 1) for i in range(len(w)))
    check(res <= 1e-8 * nrm and unit < 1e-12, f"{label}: vectors: residual {res:.2e} (||A|| {nrm:.2e}), "
          f"unit to {unit:.1e}")


def simple_overlaps(w, v, ref, rv):
    """1 - |<x_i, x_ref>| for each of our eigenvalues that is simple among SciPy's k + 2 (a value
    that appears once among them has no copy beyond them either: copies come next in the wanted order)"""
    worst = 0.0
    for i, x in enumerate(w):
        near = np.flatnonzero(np.abs(ref - x) <= 1e-6 * max(abs(x), 1.0))
        if len(near) == 1:
            a, b = v[:, i], rv[:, near[0]]
            worst = max(worst, 1 - abs(np.vdot(a, b)) / (np.linalg.norm(a) * np.linalg.norm(b)))
    return worst


def sym_case(name, A, which, k, scale="value"):
    """scale: the eigenvalue difference relative to max(|lambda|, 1) ("value") or to ||A||_2 =
    max |lambda| ("norm": for lund_a's smallest, 4e-7 ||A||, below what the library's tolerance test,
    relative to max(|theta|, ||A||), resolves to 1e-10 of |lambda|; docs/python.md)"""
    w, v = pjds.eigsh(A, k=k, which=which, backend="cpu")
    ref, rv = sla.eigsh(A, k=k, which=which, tol=1e-14, ncv=max(4 * k, 40))
    ref_order = np.argsort(ref)
    ref, rv = ref[ref_order], rv[:, ref_order]
    top = abs(sla.eigsh(A, k=1, which="LM", return_eigenvectors=False)[0]) if scale == "norm" else 0.0
    d = float(np.max(np.abs(w - ref) / np.maximum(np.maximum(np.abs(ref), 1.0), top)))
    dv = float(np.max(np.abs(w - ref) / np.maximum(np.abs(ref), 1.0)))
    check(np.all(np.diff(w) >= 0) and d <= REL, f"eigsh {name} {which} k={k}: ascending as SciPy's, max difference "
          f"{d:.1e} relative to {'||A||' if scale == 'norm' else '|lambda|'} ({dv:.1e} to |lambda|; values "
          f"{w[0]:.6g} .. {w[-1]:.6g})")
    vectors_ok(A, w, v, f"eigsh {name} {which}")
    orth = np.max(np.abs(v.T @ v - np.eye(k)))
    ov = simple_overlaps(w, v, *sla.eigsh(A, k=k + 2, which=which, tol=1e-14, ncv=max(4 * k, 40)))
    check(orth < 1e-10 and ov < 1e-8, f"eigsh {name} {which}: orthonormal to {orth:.1e}, the simple ones "
          f"SciPy's vectors to 1 - |x^T x_ref| = {ov:.1e}")
    wo = pjds.eigsh(A, k=k, which=which, return_eigenvectors=False, backend="cpu")
    check(np.allclose(wo, w, rtol=1e-10, atol=0), f"eigsh {name} {which}: return_eigenvectors=False, same values")


def nonsym_case(name, A, which, k):
    w, v = pjds.eigs(A, k=k, which=which, backend="cpu")
    check(w.dtype == np.complex128 and v.dtype == np.complex128 and v.shape == (A.shape[0], k),
          f"eigs {name} {which}: complex128, vectors {v.shape}")
    ref, rv = sla.eigs(A, k=k + 2, which=which, tol=1e-14, ncv=max(4 * k, 40))
    d = match(w, ref)
    check(d <= REL, f"eigs {name} {which} k={k}: max rel. difference to SciPy {d:.1e} "
          f"({', '.join(f'{x:.5g}' for x in w[:3])}, ...)")
    vectors_ok(A, w, v, f"eigs {name} {which}")
    ov = simple_overlaps(w, v, ref, rv)
    check(ov < 1e-8, f"eigs {name} {which}: the simple ones SciPy's vectors to 1 - |x^H x_ref| = {ov:.1e}")


def run_scipy():
    A, B = matrix("lund_a"), matrix("mhd4800b")
    R, O, C = matrix("rdb800l"), matrix("olm1000"), matrix("cryg2500")
    if A is None or B is None or R is None or O is None or C is None:
        skip(f"the matrices lund_a, mhd4800b, rdb800l, olm1000, cryg2500 are not all in PJDS_MATRICES={MATS!r}")
    for which in ("LA", "LM"):
        sym_case("lund_a", A, which, 5)
    for which in ("SA", "BE"):
        sym_case("lund_a", A, which, 5, scale="norm")
    sym_case("mhd4800b", B, "LM", 4)
    sym_case("mhd4800b", B, "LA", 4)
    sym_case("rdb800l+T", ((R + R.T) * 0.5).tocsr(), "SA", 4)
    nonsym_case("rdb800l", R, "LM", 6)
    nonsym_case("rdb800l", R, "LR", 4)
    nonsym_case("rdb800l", R, "LI", 4)
    nonsym_case("olm1000", O, "LM", 4)
    nonsym_case("olm1000", O, "LR", 4)
    nonsym_case("cryg2500", C, "LM", 4)
    # a dense NumPy array and a reused operator handle give the same values
    S = ((R + R.T) * 0.5).tocsr()
    w = pjds.eigsh(S.toarray(), k=3, which="SA", return_eigenvectors=False, backend="cpu")
    with pjds.operator(S, backend="cpu") as op:
        w2 = pjds.eigsh(op, k=3, which="SA", return_eigenvectors=False)
        w3 = op.eigsh(k=3, which="SA", return_eigenvectors=False)
        check(op.symmetric and op.shape == S.shape and op.nnz == S.nnz, f"operator handle: {op!r}")
    ref = np.linalg.eigvalsh(S.toarray())[:3]
    check(match(w, ref) < REL and match(w2, ref) < REL and np.array_equal(w2, w3),
          "dense input and operator handle: the 3 lowest of LAPACK's eigvalsh (rdb800l+T)")


def expect(exc, fn, *args, text="", c_status=None, **kw):
    """fn(*args, **kw) raises exc whose message contains text (the library's status when given)"""
    def show(v):
        return repr(v) if isinstance(v, (int, float, str)) else type(v).__name__
    label = f"{fn.__name__}({', '.join([*map(show, args), *(f'{k}={show(v)}' for k, v in kw.items())])})"
    try:
        fn(*args, **kw)
    except exc as e:
        ok = text in str(e) and (c_status is None or (isinstance(e, pjds.PjdsError) and e.status_name == c_status))
        check(ok, f"{label} raises {type(e).__name__}: {e}")
        return
    except Exception as e:  # the wrong kind
        check(False, f"{label} raised {type(e).__name__}: {e}, expected {exc.__name__} with '{text}'")
        return
    check(False, f"{label} raised nothing, expected {exc.__name__}")


def run_errors():
    n = 30
    T = scipy.sparse.diags([np.full(n - 1, -1.0), np.arange(1.0, n + 1), np.full(n - 1, -1.0)], [-1, 0, 1]).tocsr()
    N = scipy.sparse.diags([np.full(n - 1, -1.0), np.arange(1.0, n + 1), np.full(n - 1, 2.0)], [-1, 0, 1]).tocsr()
    cpu = {"backend": "cpu"}
    # the library's checks: its message, its status
    expect(ValueError, pjds.eigsh, T, k=n, text="nev", c_status="input", **cpu)
    expect(ValueError, pjds.eigsh, T, k=0, text="nev", c_status="input", **cpu)
    expect(pjds.PjdsError, pjds.eigsh, T, k=2, tol=-1.0, text="tol", c_status="input", **cpu)
    expect(pjds.PjdsError, pjds.eigsh, T, k=2, ncv=2, text="ncv", c_status="input", **cpu)
    expect(pjds.PjdsError, pjds.eigsh, T, k=2, verify_probability=1.0, text="verify_probability", c_status="input",
           **cpu)
    expect(pjds.PjdsError, pjds.eigsh, N, k=2, which="SA", text="not symmetric", c_status="input", **cpu)
    expect(pjds.PjdsError, pjds.eigs, T, k=2, which="LI", text="largest_imaginary", c_status="input", **cpu)
    bad = T.copy()
    bad.data[3] = np.nan
    expect(pjds.PjdsError, pjds.eigsh, bad, k=2, text="finite", c_status="input", **cpu)
    expect(pjds.PjdsError, pjds.holstein_hubbard, 1, 1, 1, 2, text="sites", c_status="input", backend="cpu")
    expect(pjds.PjdsError, pjds.holstein_hubbard, 4, 5, 1, 2, text="n_up", c_status="input", backend="cpu")
    expect(pjds.PjdsError, pjds.holstein_hubbard, 4, 2, 2, 2, phonon_frequency=-1.0, text="phonon_frequency",
           c_status="input", backend="cpu")
    # cuda where there is none: the library says so (input: no GPU; not supported: a CPU-only build)
    try:
        pjds.eigsh(T, k=2, backend="cuda")
        has_gpu = True
    except pjds.PjdsError as e:
        has_gpu = False
        check(e.status_name in ("input", "not supported") and ("GPU" in str(e) or "CUDA" in str(e)),
              f"backend='cuda' without a GPU: {type(e).__name__} ({e.status_name}): {e}")
    if has_gpu:
        print("note: a GPU is present: backend='cuda' solved")
    # what the package refuses itself
    expect(NotImplementedError, pjds.eigsh, T, k=2, sigma=1.0, text="shift-and-invert")
    expect(NotImplementedError, pjds.eigsh, T, k=2, which="SM", text="SM")
    expect(NotImplementedError, pjds.eigs, N, k=2, which="SI", text="SI")
    expect(NotImplementedError, pjds.eigsh, T, k=2, M=T, text="M")
    expect(NotImplementedError, pjds.eigsh, T, k=2, v0=np.ones(n), text="v0")
    expect(ValueError, pjds.eigsh, T, k=2, which="LR", text="which")
    expect(ValueError, pjds.eigs, T, k=2, which="XX", text="which")
    expect(ValueError, pjds.eigsh, T, k=2, backend="gpu", text="backend")
    expect(TypeError, pjds.eigsh, T, k=2.5, text="k")
    expect(ValueError, pjds.eigsh, T, k=2**40, text="int")
    expect(TypeError, pjds.eigsh, T.astype(np.complex128), k=2, text="complex")
    expect(ValueError, pjds.eigsh, scipy.sparse.random(4, 5, 0.5, format="csr"), k=1, text="square")
    expect(TypeError, pjds.eigsh, "A", k=1, text="str")
    op = pjds.operator(T, backend="cpu")
    op.close()
    expect(ValueError, pjds.eigsh, op, k=2, text="closed")
    # and the process goes on: a good solve after all of these
    w = pjds.eigsh(T, k=2, which="SA", return_eigenvectors=False, **cpu)
    check(match(w, np.linalg.eigvalsh(T.toarray())[:2]) < REL, "after the errors, a solve still agrees with LAPACK")
    w = pjds.eigsh(T, k=2, which="SA", return_eigenvectors=False, verify_probability=1e-9, **cpu)
    check(match(w, np.linalg.eigvalsh(T.toarray())[:2]) < REL, "verify_probability=1e-9: agrees with LAPACK")


def hh_free_levels(L, n_up, n_down, M, w0, t, k):
    """the k lowest levels of U = g = 0: free fermions per spin + free phonons (site basis)"""
    from itertools import combinations
    eps = sorted(-2 * t * np.cos(2 * np.pi * m / L) for m in range(L))
    def fermi(n):
        return sorted(sum(c) for c in combinations(eps, n))
    el = sorted(a + b for a in fermi(n_up) for b in fermi(n_down))
    from math import comb
    ph = sorted(w0 * m for m in range(M + 1) for _ in range(comb(m + L - 1, L - 1)))  # total phonons m
    return sorted(e + p for e in el for p in ph)[:k]


def run_model():
    # odd electron numbers per spin: the periodic chain needs no fermion sign at the boundary
    H = pjds.holstein_hubbard(sites=5, n_up=1, n_down=1, max_phonons=2, phonon_frequency=0.7, backend="cpu")
    check(H.shape[0] == 25 * 21 and H.symmetric and H.backend == "cpu", f"holstein_hubbard: {H!r}")
    w, v = H.eigsh(k=6, which="SA")
    ref = hh_free_levels(5, 1, 1, 2, 0.7, 1.0, 6)
    check(np.max(np.abs(w - ref)) < 1e-10, f"U = g = 0: the 6 lowest levels {np.round(w, 6)} are the closed form")
    check(v.shape == (H.shape[0], 6) and abs(np.linalg.norm(v[:, 0]) - 1) < 1e-12, "eigenvectors N x k, unit")
    H.close()
    # a coupled model: the app's file (`pjds-lanczos solve`) and the package agree
    binary = os.environ.get("PJDS_BIN", "")
    if not os.path.exists(binary):
        check(False, "PJDS_BIN not set: the app comparison cannot run")
        return
    with tempfile.TemporaryDirectory() as d:
        cfg = os.path.join(d, "hh.ini")
        with open(cfg, "w") as f:
            f.write("[model]\ntype = holstein-hubbard\nsites = 4\nn_up = 2\nn_down = 2\nhopping = 1.0\n"
                    "hubbard_u = 4.0\nphonon_frequency = 1.0\ncoupling = 0.5\nmax_phonons = 4\n"
                    "[solver]\nnev = 4\nwhich = smallest\ntolerance = 1e-10\n[spmv]\nbackend = cpu\n"
                    f"[output]\nfile = {d}/hh.h5\n")
        subprocess.run([binary, "solve", "--quiet", cfg], check=True)
        app = pjds.read(os.path.join(d, "hh.h5"))["eigenvalues"]
    with pjds.holstein_hubbard(4, 2, 2, 4, hubbard_u=4.0, coupling=0.5, backend="cpu") as H:
        w = H.eigsh(k=4, which="SA", return_eigenvectors=False)
    check(np.max(np.abs(w - app)) < 1e-9, f"U = 4, g = 0.5: eigsh {np.round(w, 8)} = the app's {np.round(app, 8)}")


def run_read():
    binary = os.environ.get("PJDS_BIN", "")
    src = os.environ.get("PJDS_SRC", "")
    if not os.path.exists(binary):
        skip("PJDS_BIN not set")
    import h5py
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "q.h5")
        subprocess.run([binary, "solve", "--quiet", "--set", f"output.file={out}", "--set", "output.eigenvectors=true",
                        "--set", "spmv.backend=cpu", os.path.join(src, "configs", "quickstart.ini")], check=True)
        r = pjds.read(out)
        with h5py.File(out) as f:
            same = all(np.array_equal(r[p], f[p][()]) for p in ("eigenvalues", "residual_norms", "eigenvectors",
                                                                "convergence/ritz_values", "observables/norm"))
            check(same, f"pjds.read: {len(r)} datasets equal h5py's: {', '.join(list(r)[:6])}, ...")
            which = f.attrs["which"]
            which = which.decode() if isinstance(which, bytes) else which
            check(r.attrs["nev"] == f.attrs["nev"] and r.attrs["method"] == "lanczos" and r.attrs["which"] == which,
                  f"attributes: nev {r.attrs['nev']}, method {r.attrs['method']}, which {r.attrs['which']}")
            check("eigenpair" not in r and "eigenpair" in pjds.read(out, scales=True),
                  "dimension scales left out unless asked for")
            check(r.group_attrs["observables"]["correlations"] is not None, "group attributes (observables)")
            obs = pjds.read(out, group="observables")
            check(np.array_equal(obs["norm"], f["observables/norm"][()]), "group='observables'")
        try:
            import xarray  # noqa: F401
            import h5netcdf  # noqa: F401
        except ImportError:
            print("note: xarray/h5netcdf not installed: the xarray part is skipped")
            return
        ds = pjds.read(out, xarray=True)
        check(ds["eigenvalues"].dims == ("eigenpair",) and np.array_equal(ds["eigenvalues"].values, r["eigenvalues"]),
              f"xarray: eigenvalues{ds['eigenvalues'].dims}, equal to the dict's")
        check("created_utc" in ds.attrs, "xarray: provenance attributes present")
    try:
        pjds.read(os.path.join(src, "README.md"))
        check(False, "a non-HDF5 file raised nothing")
    except ValueError as e:
        check("not an HDF5 file" in str(e), f"a non-HDF5 file: ValueError: {str(e)[:80]}")


def run_discovery():
    want = os.environ.get("PJDS_EXPECT_LIBRARY", "")
    got = pjds.library_path()
    check(os.path.realpath(got) == os.path.realpath(want), f"found {got} (the build folder recorded at install)")
    code = "import pjds; pjds.library_path()"
    env = dict(os.environ, PJDS_LIBRARY="/nonexistent/libpjds.so")
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    check(p.returncode == 1 and "/nonexistent/libpjds.so" in p.stderr and "OSError" in p.stderr,
          "PJDS_LIBRARY=/nonexistent: OSError naming it")
    env["PJDS_LIBRARY"] = got
    p = subprocess.run([sys.executable, "-c", code + "; print(pjds.library_path())"], env=env, capture_output=True,
                       text=True)
    check(p.returncode == 0 and p.stdout.strip() == got, "PJDS_LIBRARY=the library: taken")
    check(pjds.library_version() == pjds.__version__, f"library version {pjds.library_version()}")


def run_mpi():
    rank, size = pjds.mpi_rank_size()
    if size < 2:
        skip("run under mpirun with 2 or more ranks")
    R = matrix("rdb800l")
    if R is None:
        skip("rdb800l not in PJDS_MATRICES")
    A = ((R + R.T) * 0.5).tocsr()  # its symmetric part for eigsh
    op = pjds.operator(A, backend="cpu")
    check(op.ranks == size and 0 < op.n_local < A.shape[0], f"rank {rank}: rows {op.row0} + {op.n_local} of {op.shape[0]}")
    w, v = pjds.eigsh(op, k=4, which="SA")
    ref = ref_sym = np.linalg.eigvalsh(A.toarray())[:4]
    check(match(w, ref) < REL, f"rank {rank}: eigsh over {size} ranks = LAPACK to {match(w, ref):.1e}")
    vectors_ok(A, w, v, f"rank {rank}: eigsh whole vectors")
    op.close()
    w, v = pjds.eigs(R, k=4, which="LM", backend="cpu")
    ref = sla.eigs(R, k=6, which="LM", tol=1e-14, return_eigenvectors=False)
    check(match(w, ref) < REL, f"rank {rank}: eigs over {size} ranks = SciPy to {match(w, ref):.1e}")
    vectors_ok(R, w, v, f"rank {rank}: eigs whole vectors")
    w1 = pjds.eigsh(A, k=4, which="SA", comm="self", backend="cpu", return_eigenvectors=False)
    check(match(w1, ref_sym) < REL, f"rank {rank}: comm='self': each rank alone = LAPACK")
    with pjds.holstein_hubbard(4, 2, 2, 3, hubbard_u=4.0, coupling=0.5, backend="cpu") as H:
        wd = H.eigsh(k=3, which="SA", return_eigenvectors=False)
    with pjds.holstein_hubbard(4, 2, 2, 3, hubbard_u=4.0, coupling=0.5, backend="cpu", comm="self") as H:
        ws = H.eigsh(k=3, which="SA", return_eigenvectors=False)
    check(np.max(np.abs(wd - ws)) < 1e-10, f"rank {rank}: holstein_hubbard over {size} ranks = one rank")


def run_readme():
    """the session of README.md's "Python" section, run by doctest in a folder where the app
    wrote quickstart.h5 (configs/quickstart.ini on the CPU)"""
    import doctest
    src, binary = os.environ.get("PJDS_SRC", ""), os.environ.get("PJDS_BIN", "")
    if not os.path.exists(binary):
        skip("PJDS_BIN not set")
    text = open(os.path.join(src, "README.md"), encoding="utf-8").read()
    section = text[text.index("\n## Python\n"):]
    block = section[section.index("```python\n") + 10:]
    block = block[:block.index("```")]
    lines = block.strip("\n").count("\n") + 1
    check(lines == 10, f"the README session has {lines} lines (10 promised)")
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as d:
        os.chdir(d)
        try:
            subprocess.run([binary, "solve", "--quiet", "--set", "spmv.backend=cpu",
                            os.path.join(src, "configs", "quickstart.ini")], check=True, stdout=subprocess.DEVNULL)
            test = doctest.DocTestParser().get_doctest(block, {}, "README.md Python", "README.md", 0)
            runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
            runner.run(test)
            res = runner.summarize(verbose=False)
        finally:
            os.chdir(cwd)
    check(res.failed == 0 and res.attempted == block.count(">>>"), f"README session: {res.attempted} examples, "
          f"{res.failed} failed")


def run_cupy():
    try:
        import cupy
        import cupyx.scipy.sparse as csp
        if cupy.cuda.runtime.getDeviceCount() < 1:
            skip("no GPU")
    except Exception as e:
        skip(f"CuPy not usable: {e}")
    A, R = matrix("lund_a"), matrix("rdb800l")
    if A is None or R is None:
        skip("lund_a, rdb800l not in PJDS_MATRICES")
    w, v = pjds.eigsh(csp.csr_matrix(A), k=4, which="SA", backend="cuda")
    check(isinstance(w, cupy.ndarray) and isinstance(v, cupy.ndarray), "CuPy in, CuPy arrays out")
    lam = np.linalg.eigvalsh(A.toarray())
    ref, top = lam[:4], float(np.max(np.abs(lam)))
    # relative to ||A||, as sym_case's scale="norm": lund_a's smallest are 4e-7 ||A||, below what the
    # tolerance test (relative to max(|theta|, ||A||)) resolves to 1e-10 of |lambda| (9.6e-10 of it seen)
    d = float(np.max(np.abs(np.sort(w.get()) - ref) / np.maximum(np.maximum(np.abs(ref), 1.0), top)))
    check(d < REL, f"eigsh on the GPU = LAPACK to {d:.1e} of ||A|| ({match(w.get(), ref):.1e} of |lambda|)")
    vectors_ok(A, w.get(), v.get(), "eigsh cuda")
    w, v = pjds.eigs(csp.csr_matrix(R), k=4, which="LM", backend="cuda")
    ref = sla.eigs(R, k=6, which="LM", tol=1e-14, return_eigenvectors=False)
    check(match(w.get(), ref) < REL, f"eigs on the GPU = SciPy to {match(w.get(), ref):.1e}")


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "scipy"
    {"scipy": run_scipy, "errors": run_errors, "model": run_model, "read": run_read, "discovery": run_discovery,
     "mpi": run_mpi, "cupy": run_cupy, "readme": run_readme}[mode]()
    print(f"{mode}: {'FAILED ' + str(len(FAIL)) if FAIL else 'passed'}")
    sys.exit(1 if FAIL else 0)
