#!/usr/bin/python3
"""layouts.py — every HDF5 layout the importer reads ([matrix] layout,
docs/formats.md "Other HDF5 layouts") gives the eigenvalues AND eigenvectors
of the tools/mtx2h5.py path, on NP ranks, for symmetric and nonsymmetric
matrices (so a compressed-column file read as its transpose, which has the
same eigenvalues but the left eigenvectors, fails).

Usage: layouts.py WORKDIR NP
Environment (tests/CMakeLists.txt): PJDS_BIN, PJDS_SRC, PJDS_MATRICES.

The files are written by the real producer where it is installed here
(anndata's write_h5ad, h5sparse's create_dataset); the others with h5py as
the producer documents its layout:
  - PETSc: MatLoad's HDF5 reader (src/mat/impls/aij/seq/aijhdf5.c): a group
    named after the matrix with jc, ir, data and the attribute MATLAB_sparse,
    read as compressed columns with PETSC_VIEWER_HDF5_MAT; PETSc's own HDF5
    MatView writes nothing for AIJ matrices, so no PETSc program writes it;
  - MATLAB save -v7.3 (MATLAB is not installable here): a 512-byte user
    block with the MAT-file header text, one group per variable with the
    attributes MATLAB_class = "double" and MATLAB_sparse = rows (uint64),
    datasets jc, ir (uint64) and data (float64), compressed columns;
  - a SciPy user's h5py dump: data, indices, indptr and shape, and for CSC
    the key format = "csc" as scipy.sparse.save_npz stores it;
  - COO: row, col, val, 0-based with attribute shape and index_base, and
    1-based without either (both detected).
Controls: the reference's eigenvectors satisfy A x = lambda x for the
matrix SciPy reads from the .mtx (residual <= 1e-8 ||A||), and a file whose
jc/ir/data hold the CSR arrays of a nonsymmetric matrix (the naive link)
must NOT match, so the comparison can fail.
"""
import os
import subprocess
import sys

import h5py
import numpy as np
import scipy.io
import scipy.sparse as sp

BIN = os.environ["PJDS_BIN"]
SRC = os.environ["PJDS_SRC"]
MATS = os.environ.get("PJDS_MATRICES", "")
work, NP = sys.argv[1], int(sys.argv[2])
os.makedirs(work, exist_ok=True)
fails = []


def check(cond, msg):
    print(("ok   " if cond else "FAIL ") + msg)
    if not cond:
        fails.append(msg)


def run(args):
    cmd = [BIN] + args
    if NP > 1:
        cmd = ["mpiexec", "-n", str(NP), "--allow-run-as-root", "--oversubscribe", "--bind-to", "none"] + cmd
    return subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"))


def solve(tag, file, group, which, layout="auto", extra=()):
    ini = os.path.join(work, f"{tag}.ini")
    out = os.path.join(work, f"{tag}.out.h5")
    with open(ini, "w") as f:
        f.write(f"[model]\ntype = hdf5\n[matrix]\nfile = {file}\ngroup = {group}\nlayout = {layout}\n"
                f"[solver]\nnev = 4\nwhich = {which}\ntolerance = 1e-11\n"
                f"[output]\nfile = {out}\neigenvectors = true\n")
    r = run(["solve", ini, "--overwrite"] + list(extra))
    if r.returncode != 0:
        return None, r.stderr.strip()
    found = [l.split("layout ", 1)[1].split()[0] for l in r.stderr.splitlines() if ": layout " in l]
    with h5py.File(out, "r") as h:
        return (h["eigenvalues"][()], h["eigenvectors"][()]), found[0] if found else "pjds"


def same(ref, got):
    """max eigenvalue and eigenvector differences (vectors phase-aligned)."""
    (l0, x0), (l1, x1) = ref, got
    if l0.shape != l1.shape or x0.shape != x1.shape:
        return np.inf, np.inf
    dl = np.max(np.abs(l0 - l1)) / max(np.max(np.abs(l0)), 1e-300)
    dx = 0.0
    for a, b in zip(x0, x1):
        c = np.vdot(a, b)
        ph = c / abs(c) if abs(c) > 0 else 1.0
        dx = max(dx, np.linalg.norm(b - ph * a))
    return dl, dx


def write_matlab(path, name, C, rows, cplx=False):
    with h5py.File(path, "w", userblock_size=512) as f:
        g = f.create_group(name)
        g.attrs["MATLAB_class"] = np.bytes_("double")
        g.attrs["MATLAB_sparse"] = np.uint64(rows)
        g.create_dataset("jc", data=C.indptr.astype(np.uint64))
        g.create_dataset("ir", data=C.indices.astype(np.uint64))
        if cplx:
            d = np.zeros(C.nnz, dtype=[("real", "<f8"), ("imag", "<f8")])
            d["real"] = C.data
            d["imag"] = 1.0
            g.create_dataset("data", data=d)
        else:
            g.create_dataset("data", data=C.data)
    text = b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: Thu Nov 26 00:00:00 2026 HDF5 schema 1.00 ."
    head = text.ljust(116, b" ") + b"\0" * 8 + b"\x00\x02" + b"IM"
    with open(path, "r+b") as f:
        f.write(head)


def write_layouts(A, d):
    """Every layout of A into files under d; returns [(tag, file, group, layout)]."""
    C, Co = A.tocsc(), A.tocoo()
    files = []
    p = os.path.join(d, "petsc.h5")
    with h5py.File(p, "w") as f:
        g = f.create_group("A")
        g.create_dataset("jc", data=C.indptr.astype(np.int32))
        g.create_dataset("ir", data=C.indices.astype(np.int32))
        g.create_dataset("data", data=C.data)
        g.attrs["MATLAB_sparse"] = np.int32(A.shape[0])
    files += [("petsc", p, "/A", "auto"), ("petsc_named", p, "/A", "petsc")]
    p = os.path.join(d, "m.v73.mat")
    write_matlab(p, "A", C, A.shape[0])
    files += [("matlab", p, "/A", "auto"), ("matlab_named", p, "/A", "matlab")]
    p = os.path.join(d, "scipy.h5")
    with h5py.File(p, "w") as f:
        g = f.create_group("csr")
        for k, v in (("data", A.data), ("indices", A.indices), ("indptr", A.indptr), ("shape", np.array(A.shape))):
            g.create_dataset(k, data=v)
        g = f.create_group("csc")
        for k, v in (("data", C.data), ("indices", C.indices), ("indptr", C.indptr), ("shape", np.array(C.shape))):
            g.create_dataset(k, data=v)
        g["format"] = "csc"  # a Python str: h5py writes a variable-length string
        g = f.create_group("coo0")
        g.create_dataset("row", data=Co.row.astype(np.int64))
        g.create_dataset("col", data=Co.col.astype(np.int64))
        g.create_dataset("data", data=Co.data)  # SciPy's name for the values
        g.attrs["shape"] = np.array(A.shape)
        g.attrs["index_base"] = np.int32(0)
        perm = np.random.default_rng(5).permutation(Co.nnz)  # COO in any order
        g = f.create_group("coo1")
        g.create_dataset("row", data=Co.row[perm] + 1)
        g.create_dataset("col", data=Co.col[perm] + 1)
        g.create_dataset("val", data=Co.data[perm])
    files += [("csr_dump", p, "/csr", "auto"), ("csr_named", p, "/csr", "csr"), ("csc_dump", p, "/csc", "auto"),
              ("csc_named", p, "/csc", "csc"), ("coo0", p, "/coo0", "auto"), ("coo1", p, "/coo1", "coo")]
    try:
        import warnings
        warnings.simplefilter("ignore")
        import anndata
        for fmt, M in (("csr", A), ("csc", C)):
            p = os.path.join(d, f"ad_{fmt}.h5ad")
            anndata.AnnData(X=M).write_h5ad(p)
            files.append((f"anndata_{fmt}", p, "/X", "auto"))
    except ImportError:
        print("note: anndata not installed (tools/setup-deps.sh installs it): its files skipped")
    try:
        import h5sparse
        for fmt, M in (("csr", A), ("csc", C)):
            p = os.path.join(d, f"h5s_{fmt}.h5")
            with h5sparse.File(p, "w") as f:
                f.create_dataset("M", data=M)
            files.append((f"h5sparse_{fmt}", p, "/M", "auto"))
    except ImportError:
        print("note: h5sparse not installed (tools/setup-deps.sh installs it): its files skipped")
    return files


def matrices():
    out = []
    for name, which in (("lund_a", "smallest"), ("rdb800l", "largest_magnitude")):
        path = os.path.join(MATS, name + ".mtx")
        if os.path.isfile(path):
            out.append((name, path, which))
        else:
            print(f"note: {path} absent: skipped")
    rng = np.random.default_rng(3)
    n = 160
    G = sp.random(n, n, density=0.04, random_state=rng, format="csr") + sp.diags(np.linspace(1.0, 4.0, n))
    G = G.tocsr()
    G.data[::7] = -G.data[::7]
    p = os.path.join(work, "gen_nonsym.mtx")
    scipy.io.mmwrite(p, G)
    out.append(("gen_nonsym", p, "largest_real"))
    return out


for name, mtx, which in matrices():
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    A = scipy.io.mmread(mtx).tocsr()
    A.sum_duplicates()
    A.sort_indices()
    ref_h5 = os.path.join(d, "ref.h5")
    if os.path.exists(ref_h5):
        os.remove(ref_h5)
    subprocess.run([sys.executable, os.path.join(SRC, "tools/mtx2h5.py"), mtx, ref_h5], check=True,
                   stdout=subprocess.DEVNULL)
    ref, err = solve(f"{name}_ref", ref_h5, "/", which)
    check(ref is not None, f"{name}: reference solve (mtx2h5 path) {err}")
    if ref is None:
        continue
    lam, X = ref
    nrm = abs(A).sum(axis=1).max()
    res = max(np.linalg.norm(A @ x - l * x) for l, x in zip(lam, X)) / nrm
    check(res < 1e-8, f"{name}: reference eigenpairs satisfy A x = lambda x of the .mtx (residual {res:.1e})")
    for tag, file, group, layout in write_layouts(A, d):
        got, found = solve(f"{name}_{tag}", file, group, which, layout)
        if got is None:
            check(False, f"{name} {tag}: solve failed: {found}")
            continue
        want = layout if layout != "auto" else tag.split("_")[-1] if tag.startswith(("anndata", "h5sparse")) else \
            {"petsc": "petsc", "matlab": "matlab", "csr_dump": "csr", "csc_dump": "csc", "coo0": "coo"}[tag]
        dl, dx = same(ref, got)
        check(dl <= 1e-10 and dx <= 1e-8 and found == want,
              f"{name} {tag} (layout {layout}, found {found}, {NP} rank(s)): eigenvalues differ by "
              f"{dl:.1e}, eigenvectors by {dx:.1e}")
    if name != "lund_a":  # control: the CSR arrays under MATLAB's names are A^T: must not match
        p = os.path.join(d, "naive.h5")
        with h5py.File(p, "w") as f:
            g = f.create_group("A")
            g.create_dataset("jc", data=A.indptr)
            g.create_dataset("ir", data=A.indices)
            g.create_dataset("data", data=A.data)
            g.attrs["MATLAB_sparse"] = np.int64(A.shape[0])
        got, err = solve(f"{name}_naive", p, "/A", which)
        dl, dx = same(ref, got) if got is not None else (np.inf, np.inf)
        check(got is not None and dx > 1e-3, f"{name} control: CSR arrays named jc/ir/data read as A^T: "
              f"eigenvalues differ by {dl:.1e}, eigenvectors by {dx:.1e} (must differ)")

print(f"{len(fails)} failure(s)")
sys.exit(1 if fails else 0)
