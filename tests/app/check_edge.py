#!/usr/bin/env python3
"""check_edge.py -- edge cases of the mathematics and determinism
(docs/operations.md, "Reliability").

usage: check_edge.py PJDS_BIN CASE [MPIEXEC NP-FLAG FLAGS...]
  edge         N = 1 (exit 2, one line naming nev), N = 2, nev = N - 1, a
               diagonal matrix (Lanczos meets an invariant subspace at once),
               empty rows, a zero matrix, all eigenvalues equal, a random
               symmetric matrix; Lanczos and Krylov-Schur; n_up = 0 of the
               Holstein-Hubbard model.  Every returned eigenvalue equals the
               lowest ones of numpy.linalg.eigvalsh to 1e-9 max(1, |A|).
  determinism  the same config, seed, rank count and backend twice: bitwise
               identical eigenvalues (1 and 2 ranks) and KPM moments.
  reproducible [solver] reproducible = true: a Holstein-Hubbard solve
               (18,900 rows, matrix_free, Lanczos and Krylov-Schur) on 1, 2
               and 3 ranks with OMP_NUM_THREADS 1 and 2 gives bitwise
               identical eigenvalues, eigenvectors and observables, which
               also match numpy.linalg.eigvalsh of the exported matrix to
               1e-9; an imported matrix (stored pJDS, whole rows in one
               part on several ranks) on 1-3 ranks likewise; format =
               compressed and kron_split = phonon on 2 ranks and backend =
               cuda are refused (exit 2, one line naming the key).
Exit 0 = pass, 1 = fail."""
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np


def write_matrix(path, A):
    n = A.shape[0]
    rp, ci, v = [0], [], []
    for i in range(n):
        nz = np.nonzero(A[i])[0]
        ci += list(nz)
        v += list(A[i, nz])
        rp.append(len(ci))
    with h5py.File(path, "w") as f:
        g = f["/"]
        for k, val in (("pjds_matrix_schema", 1), ("rows", n), ("cols", n), ("nnz", len(ci)), ("symmetric", 1)):
            g.attrs[k] = np.int64(val)
        g.create_dataset("row_ptr", data=np.array(rp, dtype=np.int64))
        g.create_dataset("col_idx", data=np.array(ci, dtype=np.int32))
        g.create_dataset("values", data=np.array(v, dtype=np.float64))


def solve(cmd, cfg_text, tmp, out="o.h5"):
    cfg = os.path.join(tmp, "e.ini")
    open(cfg, "w").write(cfg_text)
    path = os.path.join(tmp, out)
    p = subprocess.run(cmd + ["solve", cfg, "--overwrite", "--quiet", "--set", "output.file=" + path],
                       capture_output=True, text=True, timeout=120)
    return p, path


def case_edge(exe, tmp):
    rng = np.random.default_rng(3)
    mats = {}
    mats["n2"] = np.array([[1.0, 0.5], [0.5, -1.0]])
    mats["diagonal"] = np.diag(np.arange(1.0, 41.0))
    M = rng.normal(size=(30, 30))
    M = M + M.T
    for r in (5, 17):
        M[r, :] = 0
        M[:, r] = 0
    mats["empty_rows"] = M
    mats["zero"] = np.zeros((20, 20))
    mats["all_equal"] = 3.0 * np.eye(25)
    M = rng.normal(size=(12, 12))
    mats["random"] = M + M.T
    fail = 0
    for name, A in mats.items():
        path = os.path.join(tmp, name + ".h5")
        write_matrix(path, A)
        lam = np.linalg.eigvalsh(A)
        n = A.shape[0]
        scale = max(1.0, np.max(np.abs(lam)))
        for method in ("lanczos", "krylov-schur"):
            for nev in sorted({1, min(4, n - 1), n - 1}):
                p, out = solve([exe], "[model]\ntype = hdf5\n[matrix]\nfile = %s\n[solver]\nnev = %d\nmethod = %s\n"
                               "[spmv]\nbackend = cpu\n" % (path, nev, method), tmp)
                if p.returncode != 0:
                    print("FAIL: %s nev=%d %s: exit %d: %s" % (name, nev, method, p.returncode, p.stderr[-300:]))
                    fail = 1
                    continue
                with h5py.File(out) as f:
                    got = np.real(f["eigenvalues"][:])
                e = np.max(np.abs(np.sort(got)[:nev] - lam[:nev])) / scale
                if len(got) < nev or e > 1e-9:
                    print("FAIL: %s nev=%d %s: %d values, deviation %.2e" % (name, nev, method, len(got), e))
                    fail = 1
        print("edge: %s (N = %d) ok" % (name, n) if not fail else "edge: %s" % name)
    # N = 1: nev must be < N: exit 2, one line naming [solver] nev
    path = os.path.join(tmp, "n1.h5")
    write_matrix(path, np.array([[2.0]]))
    p, out = solve([exe], "[model]\ntype = hdf5\n[matrix]\nfile = %s\n[solver]\nnev = 1\n" % path, tmp, "n1_out.h5")
    if p.returncode != 2 or len(p.stderr.strip().splitlines()) != 1 or "[solver] nev" not in p.stderr or os.path.exists(out):
        print("FAIL: N = 1: exit %d, stderr %r" % (p.returncode, p.stderr))
        fail = 1
    # n_up = 0 of the Holstein-Hubbard model against the dense matrix of `export`
    hh = ("[model]\ntype = holstein-hubbard\nsites = 4\nn_up = 0\nn_down = 2\nhubbard_u = 4\ncoupling = 0.5\n"
          "max_phonons = 3\n[solver]\nnev = 4\n[spmv]\nbackend = cpu\n")
    p, out = solve([exe], hh, tmp)
    cfg = os.path.join(tmp, "e.ini")
    mat = os.path.join(tmp, "u0.h5")
    q = subprocess.run([exe, "export", cfg, mat, "--overwrite", "--quiet"], capture_output=True, text=True)
    if p.returncode or q.returncode:
        print("FAIL: n_up = 0: exit %d / export %d: %s" % (p.returncode, q.returncode, p.stderr + q.stderr))
        return 1
    with h5py.File(mat) as f:
        n = int(f["/"].attrs["rows"])
        rp, ci, v = f["row_ptr"][:], f["col_idx"][:], f["values"][:]
    A = np.zeros((n, n))
    for i in range(n):
        A[i, ci[rp[i]:rp[i + 1]]] = v[rp[i]:rp[i + 1]]
    lam = np.linalg.eigvalsh(A)
    with h5py.File(out) as f:
        got = f["eigenvalues"][:]
    e = np.max(np.abs(got - lam[:4])) / max(1.0, np.max(np.abs(lam)))
    if e > 1e-9:
        print("FAIL: n_up = 0: deviation %.2e" % e)
        fail = 1
    print("edge: N = 1 refused, n_up = 0 (N = %d) deviation %.1e" % (n, e))
    return fail


def case_determinism(exe, mpi, tmp):
    hh = ("[model]\ntype = holstein-hubbard\nsites = 4\nn_up = 2\nn_down = 2\nhubbard_u = 4\ncoupling = 0.5\n"
          "max_phonons = 5\n[solver]\nnev = 4\nseed = 7\n[spmv]\nbackend = cpu\n[kpm]\nmoments = 64\nrandom_vectors = 4\n")
    fail = 0
    for np_ in (1, 2):
        cmd = [exe] if np_ == 1 else ([mpi[0], mpi[1], "2"] + mpi[2:] + [exe] if mpi else None)
        if cmd is None:
            continue
        runs = []
        for rep in range(2):
            p, out = solve(cmd, hh, tmp, "det%d_%d.h5" % (np_, rep))
            if p.returncode:
                san = [ln for ln in p.stderr.splitlines() if "Sanitizer" in ln or "SUMMARY" in ln or " #" in ln]
                print("FAIL: determinism run: exit %d %s" % (p.returncode, "\n".join(san[:60]) or p.stderr[-300:]))
                return 1
            with h5py.File(out) as f:
                runs.append(f["eigenvalues"][:].tobytes())
            cfg = os.path.join(tmp, "e.ini")
            d = os.path.join(tmp, "dos%d_%d.h5" % (np_, rep))
            q = subprocess.run(cmd[:-1] + [cmd[-1], "dos", cfg, "--overwrite", "--quiet", "--set", "output.file=" + d],
                               capture_output=True, text=True)
            if q.returncode:
                print("FAIL: dos: exit %d %s" % (q.returncode, q.stderr[-300:]))
                return 1
            with h5py.File(d) as f:
                runs.append(f["dos/moments"][:].tobytes())
        if runs[0] != runs[2] or runs[1] != runs[3]:
            print("FAIL: %d rank(s): repeated runs differ (eigenvalues %s, moments %s)" %
                  (np_, runs[0] == runs[2], runs[1] == runs[3]))
            fail = 1
        else:
            print("determinism: %d rank(s): eigenvalues and KPM moments bitwise identical" % np_)
    return fail


HH_REPRO = ("[model]\ntype = holstein-hubbard\nsites = 6\nn_up = 2\nn_down = 2\nhubbard_u = 4\ncoupling = 0.6\n"
            "max_phonons = 3\n[solver]\nnev = 3\ntolerance = 1e-11\nreproducible = true\nmethod = %s\n"
            "[output]\neigenvectors = true\n")


def repro_runs(exe, mpi, tmp, text, layouts, tag):
    """the solve of text on each (ranks, threads) layout: {layout: (eigenvalues, eigenvectors, observables)}"""
    got = {}
    for np_, th in layouts:
        if np_ > 1 and not mpi:
            continue
        cmd = [exe] if np_ == 1 else [mpi[0], mpi[1], str(np_)] + mpi[2:] + [exe]
        env = dict(os.environ, OMP_NUM_THREADS=str(th))
        cfg, out = os.path.join(tmp, "r.ini"), os.path.join(tmp, "r_%s_%d_%d.h5" % (tag, np_, th))
        open(cfg, "w").write(text)
        p = subprocess.run(cmd + ["solve", cfg, "--overwrite", "--quiet", "--set", "output.file=" + out],
                           capture_output=True, text=True, timeout=300, env=env)
        if p.returncode:
            print("FAIL: reproducible %s on %d rank(s), %d thread(s): exit %d %s" % (tag, np_, th, p.returncode,
                                                                                  p.stderr[-400:]))
            return None
        with h5py.File(out) as f:
            obs = {k: f["observables"][k][:] for k in f["observables"]} if "observables" in f else {}
            got[(np_, th)] = (f["eigenvalues"][:], f["eigenvectors"][:], obs, f.attrs["spmv_format"])
    return got


def same_bits(got, tag, ref_ev):
    fail = 0
    base = min(got)
    ev0, x0, o0, _ = got[base]
    for lay, (ev, x, o, fmt) in sorted(got.items()):
        same = (np.array_equal(ev, ev0) and np.array_equal(x, x0) and sorted(o) == sorted(o0) and
                all(np.array_equal(o[k], o0[k]) for k in o0))
        dref = float(np.max(np.abs(ev - ref_ev[: len(ev)])))
        ok = same and dref <= 1e-9 * max(1.0, float(np.max(np.abs(ref_ev))))
        print("%s: reproducible %s on %d rank(s), %d thread(s), %s: eigenvalues, eigenvectors and %d observables %s "
              "the (%d, %d) run's; eigenvalues %.1e from numpy" % ("ok" if ok else "FAIL", tag, lay[0], lay[1], fmt,
                                                                  len(o), "bitwise equal to" if same else "DIFFER from",
                                                                  base[0], base[1], dref))
        fail |= 0 if ok else 1
    return fail


def case_reproducible(exe, mpi, tmp):
    fail = 0
    layouts = [(1, 1), (1, 2), (2, 1), (2, 2), (3, 1)]
    ref = None
    for method in ("lanczos", "krylov-schur"):
        text = HH_REPRO % method
        got = repro_runs(exe, mpi, tmp, text, layouts, method)
        if got is None:
            return 1
        if ref is None:  # the exported matrix's lowest eigenvalues (18,900 rows: sparse, shift-invert free)
            import scipy.sparse as sp
            import scipy.sparse.linalg as sla
            cfg, m = os.path.join(tmp, "x.ini"), os.path.join(tmp, "x.h5")
            open(cfg, "w").write(text)
            subprocess.run([exe, "export", cfg, m, "--overwrite", "--quiet"], check=True, capture_output=True)
            with h5py.File(m) as f:
                n = int(f.attrs["rows"])
                A = sp.csr_matrix((f["values"][:], f["col_idx"][:], f["row_ptr"][:]), shape=(n, n))
            ref = np.sort(sla.eigsh(A, k=6, which="SA", tol=1e-13)[0])
        fail |= same_bits(got, method, ref)
    # an imported matrix (a random symmetric one): stored pJDS
    rng = np.random.default_rng(30)
    n = 12000
    import scipy.sparse as sp
    B = sp.random(n, n, density=8.0 / n, random_state=30, format="csr")
    B = (B + B.T + sp.diags(rng.standard_normal(n))).tocsr()
    mpath = os.path.join(tmp, "rand.h5")
    with h5py.File(mpath, "w") as f:
        for k, val in (("pjds_matrix_schema", 1), ("rows", n), ("cols", n), ("nnz", B.nnz), ("symmetric", 1)):
            f.attrs[k] = np.int64(val)
        f.create_dataset("row_ptr", data=B.indptr.astype(np.int64))
        f.create_dataset("col_idx", data=B.indices.astype(np.int32))
        f.create_dataset("values", data=B.data.astype(np.float64))
    text = ("[model]\ntype = hdf5\n[matrix]\nfile = %s\n[solver]\nnev = 3\ntolerance = 1e-10\nreproducible = true\n"
            "[output]\neigenvectors = true\n" % mpath)
    got = repro_runs(exe, mpi, tmp, text, layouts, "imported")
    if got is None:
        return 1
    import scipy.sparse.linalg as sla
    fail |= same_bits(got, "imported", np.sort(sla.eigsh(B, k=6, which="SA", tol=1e-13)[0]))
    # what it refuses (exit 2, one line naming the key): compressed or the phonon split on several ranks, cuda,
    # and the block products of chebfd and dos on several ranks (before the matrix is built)
    two = [mpi[0], mpi[1], "2"] + mpi[2:] + [exe] if mpi else None
    bad = [(text + "[spmv]\nformat = compressed\n", two, "[spmv] format", "solve"),
           (HH_REPRO % "lanczos" + "[spmv]\nkron_split = phonon\n", two, "[spmv] kron_split", "solve"),
           (text + "[spmv]\nbackend = cuda\n", [exe], "[solver] reproducible", "solve"),
           (HH_REPRO % "chebfd", two, "[solver] reproducible", "solve"),
           (HH_REPRO % "lanczos" + "[kpm]\nmoments = 32\n", two, "[solver] reproducible", "dos")]
    for t, cmd, why, command in bad:
        if cmd is None:
            continue
        cfg = os.path.join(tmp, "b.ini")
        open(cfg, "w").write(t)
        p = subprocess.run(cmd + [command, cfg, "--overwrite", "--quiet", "--set",
                                  "output.file=" + os.path.join(tmp, "b.h5")], capture_output=True, text=True)
        lines = [ln for ln in p.stderr.strip().splitlines() if ln.startswith("pjds-lanczos") or "error" in ln]
        ok = p.returncode == 2 and why in p.stderr and len(set(lines)) == 1
        msg = next((ln for ln in p.stderr.splitlines() if "error" in ln), p.stderr.strip()[-300:])
        print("%s: %s refused with exit %d: %s" % ("ok" if ok else "FAIL", command, p.returncode, msg))
        fail |= 0 if ok else 1
    return fail


def main():
    exe, case = sys.argv[1], sys.argv[2]
    mpi = sys.argv[3:]
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    with tempfile.TemporaryDirectory() as tmp:
        if case == "edge":
            return case_edge(exe, tmp)
        if case == "determinism":
            return case_determinism(exe, mpi, tmp)
        if case == "reproducible":
            return case_reproducible(exe, mpi, tmp)
    print("unknown case", case)
    return 1


if __name__ == "__main__":
    sys.exit(main())
