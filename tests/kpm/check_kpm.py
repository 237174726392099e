#!/usr/bin/env python3
"""check_kpm.py -- `pjds-lanczos dos` (the kernel polynomial method) against
independent references.

usage: check_kpm.py PJDS_BIN CASE [matrix_free] [MPIEXEC NP-FLAG FLAGS...]
  traces   a small Holstein-Hubbard matrix (exported, dense in NumPy), [kpm]
           vectors = unit: the moments equal Tr T_n(H~) / N of the dense
           eigenvalues (1e-12); the density integrates to 1 (the file's
           Gauss-Chebyshev sum to 1e-12, the trapezoid over the grid to 2e-3)
  known    a diagonal matrix with a known spectrum (HDF5 import, symmetric = 1),
           unit vectors: the Jackson- and Lorentz-damped densities equal the
           exact eigenvalue histogram expanded with the same kernel (1e-10 of
           the peak), computed here from the eigenvalues
  random   random vectors: the moments are estimates (mu_0 = 1 exactly, the
           others within 5 standard errors of the exact traces)
  ranks    the same moments and density (1e-11) on 1, 2 and 3 ranks; with
           matrix_free (kpm.ranks.matrix_free) every run forces [spmv]
           format = matrix_free (several ranks: the block halo exchange and
           be->kron_rem_spmm) and its file must name that format; with
           phonon (kpm.ranks.phonon) also kron_split = phonon (the split by
           phonon configurations, spmv/op_kron_right.c), each file of
           several ranks naming it in spmv_kron_split
  formats  Holstein-Hubbard (normal basis, open), random vectors in blocks of
           4 and 2: [spmv] format = matrix_free (H from its Kronecker tables,
           the block products be->kron_spmm_aug) and format = pjds give the
           same bounds (1e-9 of a) and moments (1e-12 + n^2 |d x|, the
           rounding of the bounds carried through T_n), each file naming its
           format; format = auto on the CPU backend runs the tables one
           vector at a time ([kpm] block = 0) with the matrix_free run's
           moments (1e-13)
  cuda     (kpm.cuda.matrix_free, label gpu; exit 77 without a device) the
           tables on the CUDA backend in blocks of 2 ([kpm] block = 0)
           against the CPU backend's run one vector at a time (its block = 0);
           format = auto there takes the tables where their block tile fits
           and pJDS where it does not
With matrix_free after CASE (traces, random, ranks) dos runs with [spmv]
format = matrix_free, else (without PJDS_SPMV_FORMAT) with format = pjds, the
stored operator.  Every HH run checks the file's spmv_format: the format
given, else PJDS_SPMV_FORMAT where set (the .compressed runs).
Exit 0 = pass, 1 = fail, 77 = skipped."""
import math
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

HH = """[model]
type = holstein-hubbard
sites = 4
n_up = 2
n_down = 1
hubbard_u = 3
coupling = 0.6
phonon_frequency = 1.0
max_phonons = 3
phonon_basis = site
boundary = periodic
[spmv]
backend = cpu
"""


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        print("FAIL: %s: exit %d\n%s" % (" ".join(cmd), p.returncode, p.stderr[-2000:]))
        sys.exit(1)
    return p


FORMAT = None  # "matrix_free": the HH runs force it
SPLIT = None  # "phonon": [spmv] kron_split = phonon too (kpm.ranks.phonon)


def run_dos(exe, cfg, out, args, fmt=None):
    """`dos` of cfg into out (args: more --set); checks the format it ran."""
    fmt = fmt or FORMAT
    extra = ["--set", "spmv.format=" + fmt] if fmt else []
    run([exe, "dos", cfg, "--overwrite", "--quiet", "--set", "output.file=" + out] + args + extra)
    with h5py.File(out) as f:
        got = f.attrs["spmv_format"]
    got = got.decode() if isinstance(got, bytes) else str(got)
    want = fmt or os.environ.get("PJDS_SPMV_FORMAT")
    if want and got != want:
        print("FAIL: %s ran with spmv_format %s, expected %s" % (out, got, want))
        sys.exit(1)
    return read_dos(out)


def read_dos(path):
    with h5py.File(path) as f:
        g = f["dos"]
        return {k: g[k][:] for k in g} | {k: g.attrs[k] for k in g.attrs}


def dense_of(h5):
    with h5py.File(h5) as f:
        g = f["/"]
        n = int(g.attrs["rows"])
        rp, ci, v = g["row_ptr"][:], g["col_idx"][:], g["values"][:]
    A = np.zeros((n, n))
    for i in range(n):
        A[i, ci[rp[i]:rp[i + 1]]] = v[rp[i]:rp[i + 1]]
    if str(g_storage(h5)) == "lower":
        A = A + A.T - np.diag(np.diag(A))
    return A


def g_storage(h5):
    with h5py.File(h5) as f:
        s = f["/"].attrs.get("storage", b"full")
        return s.decode() if isinstance(s, bytes) else s


def exact_moments(lam, a, b, N):
    x = np.clip((lam - b) / a, -1, 1)
    th = np.arccos(x)
    return np.array([np.mean(np.cos(n * th)) for n in range(N)])


def damping(kind, lam_l, N):
    n = np.arange(N)
    if kind == "lorentz":
        return np.sinh(lam_l * (1 - n / N)) / math.sinh(lam_l)
    q = math.pi / (N + 1)
    return ((N - n + 1) * np.cos(q * n) + np.sin(q * n) / math.tan(q)) / (N + 1)


def density(mu, g, a, b, E):
    x = (E - b) / a
    th = np.arccos(np.clip(x, -1, 1))
    f = g[0] * mu[0] + 2 * sum(g[n] * mu[n] * np.cos(n * th) for n in range(1, len(mu)))
    return f / (math.pi * a * np.sqrt(1 - x * x))


def case_traces(exe, tmp):
    cfg = os.path.join(tmp, "hh.ini")
    open(cfg, "w").write(HH)
    mat = os.path.join(tmp, "hh.h5")
    run([exe, "export", cfg, mat, "--overwrite", "--quiet"])
    out = os.path.join(tmp, "d.h5")
    N = 200
    d = run_dos(exe, cfg, out, ["--set", "kpm.vectors=unit", "--set", "kpm.moments=%d" % N, "--set", "kpm.block=7"])
    lam = np.linalg.eigvalsh(dense_of(mat))
    fail = 0
    if not (d["emin"] < lam[0] and lam[-1] < d["emax"]):
        print("FAIL: bounds [%g, %g] do not contain the spectrum [%g, %g]" % (d["emin"], d["emax"], lam[0], lam[-1]))
        fail = 1
    ref = exact_moments(lam, d["a"], d["b"], N)
    e = np.max(np.abs(d["moments"] - ref))
    if e > 1e-12:
        print("FAIL: moments deviate from Tr T_n(H~)/N by %.2e" % e)
        fail = 1
    trap = np.trapz(d["density"], d["energy"]) if hasattr(np, "trapz") else np.trapezoid(d["density"], d["energy"])
    if abs(d["integral"] - 1) > 1e-12 or abs(trap - 1) > 2e-3:
        print("FAIL: integral %.15f (Gauss-Chebyshev), %.6f (trapezoid)" % (d["integral"], trap))
        fail = 1
    print("traces: N = %d rows, %d moments, max deviation %.2e; integral %.15f, trapezoid %.6f" %
          (len(lam), N, e, d["integral"], trap))
    return fail


def write_diag(path, lam):
    n = len(lam)
    with h5py.File(path, "w") as f:
        g = f["/"]
        g.attrs["pjds_matrix_schema"] = np.int64(1)
        g.attrs["rows"] = np.int64(n)
        g.attrs["cols"] = np.int64(n)
        g.attrs["nnz"] = np.int64(n)
        g.attrs["symmetric"] = np.int64(1)
        g.create_dataset("row_ptr", data=np.arange(n + 1, dtype=np.int64))
        g.create_dataset("col_idx", data=np.arange(n, dtype=np.int32))
        g.create_dataset("values", data=np.asarray(lam, dtype=np.float64))


def case_known(exe, tmp):
    rng = np.random.default_rng(5)
    lam = np.concatenate([rng.normal(-2.0, 0.3, 300), rng.normal(1.5, 0.1, 150), np.full(50, 3.0)])
    mat = os.path.join(tmp, "diag.h5")
    write_diag(mat, lam)
    cfg = os.path.join(tmp, "diag.ini")
    open(cfg, "w").write("[model]\ntype = hdf5\n[matrix]\nfile = %s\n[spmv]\nbackend = cpu\n" % mat)
    fail = 0
    for kern in ("jackson", "lorentz"):
        out = os.path.join(tmp, "k_%s.h5" % kern)
        N = 128
        run([exe, "dos", cfg, "--overwrite", "--quiet", "--set", "output.file=" + out, "--set", "kpm.vectors=unit",
             "--set", "kpm.moments=%d" % N, "--set", "kpm.kernel=" + kern, "--set", "kpm.points=777"])
        d = read_dos(out)
        mu = exact_moments(lam, d["a"], d["b"], N)
        ref = density(mu, damping(kern, 4.0, N), d["a"], d["b"], d["energy"])
        e = np.max(np.abs(d["density"] - ref)) / np.max(ref)
        if e > 1e-10 or len(d["energy"]) != 777:
            print("FAIL: %s density deviates by %.2e of the peak (%d points)" % (kern, e, len(d["energy"])))
            fail = 1
        # and it is a smoothed histogram: the weight near each cluster matches
        E, rho = d["energy"], d["density"]
        for lo, hi, w in ((-3.5, -0.5, 300 / 500), (1.0, 2.0, 150 / 500), (2.7, 3.3, 50 / 500)):
            m = (E >= lo) & (E <= hi)
            wi = np.trapz(rho[m], E[m]) if hasattr(np, "trapz") else np.trapezoid(rho[m], E[m])
            if abs(wi - w) > 0.03:
                print("FAIL: %s: weight in [%g, %g] = %.4f, expected %.4f" % (kern, lo, hi, wi, w))
                fail = 1
        print("known (%s): max deviation %.2e of the peak" % (kern, e))
    return fail


def case_random(exe, tmp):
    cfg = os.path.join(tmp, "hh.ini")
    open(cfg, "w").write(HH)
    mat = os.path.join(tmp, "hh.h5")
    run([exe, "export", cfg, mat, "--overwrite", "--quiet"])
    out = os.path.join(tmp, "r.h5")
    N, R = 64, 40
    d = run_dos(exe, cfg, out, ["--set", "kpm.moments=%d" % N, "--set", "kpm.random_vectors=%d" % R, "--set",
                                "kpm.block=16"])
    lam = np.linalg.eigvalsh(dense_of(mat))
    ref = exact_moments(lam, d["a"], d["b"], N)
    # the stochastic error of one vector's moment is about sqrt(2 / N_rows); over R vectors / sqrt(R)
    se = math.sqrt(2.0 / len(lam) / R)
    e = np.max(np.abs(d["moments"][1:] - ref[1:]))
    fail = 0
    if abs(d["moments"][0] - 1) > 1e-14 or e > 5 * se:
        print("FAIL: random moments: mu_0 = %.16f, max deviation %.3e > 5 x %.3e" % (d["moments"][0], e, se))
        fail = 1
    print("random: %d vectors, max deviation %.3e (standard error %.3e)" % (R, e, se))
    return fail


def case_ranks(exe, mpi, tmp):
    cfg = os.path.join(tmp, "hh.ini")
    open(cfg, "w").write(HH)
    res = []
    for np_ in (1, 2, 3):
        out = os.path.join(tmp, "p%d.h5" % np_)
        cmd = ([mpi[0], mpi[1], str(np_)] + mpi[2:]) if mpi else []
        if np_ > 1 and not mpi:
            continue
        fmt = ["--set", "spmv.format=" + FORMAT] if FORMAT else []
        if SPLIT:
            fmt += ["--set", "spmv.kron_split=" + SPLIT]
        run(cmd + [exe, "dos", cfg, "--overwrite", "--quiet", "--set", "output.file=" + out, "--set",
                   "kpm.moments=128", "--set", "kpm.random_vectors=6", "--set", "kpm.block=4"] + fmt)
        with h5py.File(out) as f:
            got = f.attrs["spmv_format"]
            split = f.attrs["spmv_kron_split"]
        got = got.decode() if isinstance(got, bytes) else str(got)
        split = split.decode() if isinstance(split, bytes) else str(split)
        if SPLIT and split != (SPLIT if np_ > 1 else "none"):
            print("FAIL: %d ranks ran with spmv_kron_split %s, expected %s" % (np_, split, SPLIT))
            return 1
        if FORMAT and got != FORMAT:
            print("FAIL: %d ranks ran with spmv_format %s, expected %s" % (np_, got, FORMAT))
            return 1
        res.append(read_dos(out))
    fail = 0
    for d in res[1:]:
        for k in ("moments", "density", "energy"):
            e = np.max(np.abs(d[k] - res[0][k])) / max(1.0, np.max(np.abs(res[0][k])))
            # rounding only: 128 moments from SpMVs whose sums split into local and remote parts
            # differently per rank count (the compressed format's rows keep their order: 1.7e-12)
            if e > 1e-11:
                print("FAIL: %s differs by %.2e between rank counts" % (k, e))
                fail = 1
    if mpi and len(res) != 3:
        print("FAIL: %d runs, expected 3" % len(res))
        fail = 1
    print("ranks%s%s: %d runs compared" % (" (" + FORMAT + ")" if FORMAT else "", " (" + SPLIT + " split)" if SPLIT else "",
                                          len(res)))
    return fail


def case_formats(exe, tmp):
    cfg = os.path.join(tmp, "hhn.ini")
    open(cfg, "w").write(HH.replace("phonon_basis = site", "phonon_basis = normal")
                         .replace("boundary = periodic", "boundary = open").replace("n_down = 1", "n_down = 2"))
    args = ["--set", "kpm.moments=128", "--set", "kpm.random_vectors=10", "--set", "kpm.block=4"]
    res = [run_dos(exe, cfg, os.path.join(tmp, "%s.h5" % f), args, f) for f in ("matrix_free", "pjds")]
    # auto on the CPU backend: the tables, one vector at a time where [kpm] block = 0 (app/cmd_dos.c)
    auto = os.path.join(tmp, "auto.h5")
    run([exe, "dos", cfg, "--overwrite", "--quiet", "--set", "output.file=" + auto] + args[:4])
    with h5py.File(auto) as f:
        got, block = f.attrs["spmv_format"], int(f["dos"].attrs["block"])
        same = np.allclose(f["dos/moments"][:], res[0]["moments"], rtol=0, atol=1e-13)
    got = got.decode() if isinstance(got, bytes) else str(got)
    if got != "matrix_free" or block != 1 or not same:
        print("FAIL: format = auto ran %s in blocks of %d (expected matrix_free, 1), moments %s the matrix_free run's"
              % (got, block, "equal to" if same else "not equal to"))
        return 1
    # rounding only: the products sum a row's terms in another order, and so do the 60 Lanczos steps of
    # the bounds: a and b agree to ~1e-11, and mu_n = <T_n((H - b) / a)> moves by at most
    # n^2 |d x| (|T_n'| <= n^2 on [-1, 1]), |d x| <= (|d b| + |d a|) / a
    m, p = res
    da, db = abs(m["a"] - p["a"]), abs(m["b"] - p["b"])
    fail = 0
    if da > 1e-9 * p["a"] or db > 1e-9 * p["a"]:
        print("FAIL: bounds differ: a %.17g / %.17g, b %.17g / %.17g" % (m["a"], p["a"], m["b"], p["b"]))
        fail = 1
    n = np.arange(len(p["moments"]))
    tol = 1e-12 + n * n * (da + db) / p["a"]
    e = np.abs(m["moments"] - p["moments"])
    if np.any(e > tol) or abs(m["moments"][0] - 1) > 1e-14 or abs(m["integral"] - 1) > 1e-12:
        i = int(np.argmax(e - tol))
        print("FAIL: moment %d differs by %.2e (bound %.2e) between matrix_free and pjds; mu_0 %.17g, integral %.15f"
              % (i, e[i], tol[i], m["moments"][0], m["integral"]))
        fail = 1
    print("formats: moments of matrix_free against pjds: max %.2e (bounds differ by %.1e, %.1e)" % (np.max(e), da, db))
    return fail


def case_cuda(exe, counter, tmp):
    """kpm.cuda.matrix_free: the tables on the CUDA backend (variant 5's block product,
    spmv/cuda/kron_hop_block.cu) with [kpm] block = 0, which there means blocks of 2
    (app/cmd_dos.c), against the CPU backend's run one vector at a time (block = 0 there,
    since ed08782); skipped (77) without a device."""
    try:
        count = int(subprocess.run([counter, "--device-count"], capture_output=True, text=True).stdout.strip() or 0)
    except (OSError, ValueError):
        count = 0
    if count == 0:
        print("skipped: no CUDA device")
        return 77
    cfg = os.path.join(tmp, "hhn.ini")
    open(cfg, "w").write(HH.replace("phonon_basis = site", "phonon_basis = normal")
                         .replace("boundary = periodic", "boundary = open").replace("n_down = 1", "n_down = 2"))
    args = ["--set", "kpm.moments=128", "--set", "kpm.random_vectors=10"]
    g = run_dos(exe, cfg, os.path.join(tmp, "cuda.h5"), args + ["--set", "spmv.backend=cuda"], "matrix_free")
    c = run_dos(exe, cfg, os.path.join(tmp, "cpu.h5"), args, "matrix_free")
    fail = 0
    if int(g["block"]) != 2 or int(c["block"]) != 1:
        print("FAIL: block %d on cuda (want 2), %d on cpu (want 1)" % (int(g["block"]), int(c["block"])))
        fail = 1
    # the same products bit for bit per column; the sums and the bounds' Lanczos run in another order
    da, db = abs(g["a"] - c["a"]), abs(g["b"] - c["b"])
    n = np.arange(len(c["moments"]))
    tol = 1e-12 + n * n * (da + db) / c["a"]
    e = np.abs(g["moments"] - c["moments"])
    if da > 1e-9 * c["a"] or db > 1e-9 * c["a"] or np.any(e > tol) or abs(g["integral"] - 1) > 1e-12:
        i = int(np.argmax(e - tol))
        print("FAIL: cuda against cpu: moment %d differs by %.2e (bound %.2e), bounds by %.1e, %.1e, integral %.15f"
              % (i, e[i], tol[i], da, db, g["integral"]))
        fail = 1
    print("cuda: blocks of %d against the cpu's %d, moments differ by %.2e at most" % (int(g["block"]),
                                                                                         int(c["block"]), np.max(e)))
    # format = auto on one GPU (app_free_auto_dos): the tables where their block product stages its
    # tile (this model's 24 electron configurations), pJDS where it cannot (4,900 configurations of
    # 8 sites at 4 + 4 electrons: 1.2 MB of tile against at most 227 KB of shared memory a block)
    wide = os.path.join(tmp, "wide.ini")
    open(wide, "w").write(HH.replace("sites = 4", "sites = 8").replace("n_up = 2", "n_up = 4")
                          .replace("n_down = 1", "n_down = 4").replace("max_phonons = 3", "max_phonons = 1"))
    for name, path, want in (("fits", cfg, "matrix_free"), ("wide", wide, "pjds")):
        out = os.path.join(tmp, "auto_%s.h5" % name)
        a = run_dos(exe, path, out, ["--set", "kpm.moments=32", "--set", "kpm.random_vectors=4",
                                     "--set", "spmv.backend=cuda", "--set", "spmv.format=auto"], None)
        with h5py.File(out) as f:
            got = f.attrs["spmv_format"]
        got = got.decode() if isinstance(got, bytes) else str(got)
        if got != want or abs(a["integral"] - 1) > 1e-12:
            print("FAIL: auto on cuda, %s model: format %s (want %s), integral %.15f" % (name, got, want, a["integral"]))
            fail = 1
        else:
            print("cuda: auto on the %s model ran %s (block %d)" % (name, got, int(a["block"])))
    return fail


def main():
    global FORMAT
    exe, case = sys.argv[1], sys.argv[2]
    mpi = sys.argv[3:]
    global SPLIT
    if mpi[:1] == ["matrix_free"]:
        FORMAT, mpi = "matrix_free", mpi[1:]
    if mpi[:1] == ["phonon"]:  # matrix_free split by phonon configurations
        FORMAT, SPLIT, mpi = "matrix_free", "phonon", mpi[1:]
    if FORMAT is None and not os.environ.get("PJDS_SPMV_FORMAT") and case in ("traces", "random", "ranks"):
        FORMAT = "pjds"  # the stored operator (format = auto takes the tables for a Holstein-Hubbard model on the CPU)
    with tempfile.TemporaryDirectory() as tmp:
        if case == "traces":
            return case_traces(exe, tmp)
        if case == "known":
            return case_known(exe, tmp)
        if case == "random":
            return case_random(exe, tmp)
        if case == "ranks":
            return case_ranks(exe, mpi, tmp)
        if case == "formats":
            return case_formats(exe, tmp)
        if case == "cuda":
            return case_cuda(exe, mpi[0], tmp)
    print("unknown case", case)
    return 1


if __name__ == "__main__":
    sys.exit(main())
