#!/usr/bin/python3
"""petsc_export.py — PETSc's MatLoad (petsc4py) reads what `export` writes:
the HDF5 file's jc/ir/data + MATLAB_sparse view (read with
PETSC_VIEWER_HDF5_MAT, PETSc's reading of MATLAB's compressed columns) and
`export --format petsc` (PETSc's binary format), on NP ranks; PETSc's
product with a random vector equals the product of the matrix the export
wrote (row_ptr/col_idx/values read with h5py and SciPy) to 1e-14 relative.
Matrices: a Holstein-Hubbard model (symmetric: the view is links to the
CSR arrays, checked to be the same HDF5 objects), the block-stencil
operator (nonsymmetric: a compressed-column copy, checked equal to SciPy's
tocsc) and a generated nonsymmetric matrix imported from COO (symmetry
unknown: checked, then copied).  Also: tools/convert2h5.py turns the
binary export and a MATLAB v5 MAT-file (scipy.io.savemat) back into the
schema with exactly the same matrix.
Usage: petsc_export.py WORKDIR NP   (exit 77 when petsc4py is missing)
"""
import glob
import os
import subprocess
import sys

import h5py
import numpy as np
import scipy.io
import scipy.sparse as sp

try:
    from petsc4py import PETSc
except ImportError:
    # Debian's petsc4py.pth finds the module through PETSC_DIR at start-up only
    for d in sorted(glob.glob("/usr/lib/petscdir/petsc*/*-real/lib/python3/dist-packages")):
        sys.path.append(d)
    try:
        from petsc4py import PETSc
    except ImportError:
        print("skipped: petsc4py not installed (apt-get install python3-petsc4py-real)")
        sys.exit(77)

BIN, SRC = os.environ["PJDS_BIN"], os.environ["PJDS_SRC"]
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
    # petsc4py started MPI in this process (a singleton): its OMPI_/PMIX_ variables would confuse mpiexec
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "OPAL_", "ORTE_"))}
    return subprocess.run(cmd, capture_output=True, text=True, env=env)


def ours(path, group):
    with h5py.File(path, "r") as f:
        g = f[group]
        n = int(g.attrs["rows"])
        return sp.csr_matrix((g["values"][()], g["col_idx"][()], g["row_ptr"][()]), shape=(n, n))


def petsc_product(load, x):
    M = PETSc.Mat().create(comm=PETSc.COMM_SELF)
    M.setName("A")  # MatLoad's HDF5 reader looks in the group named after the matrix
    M.setType(PETSc.Mat.Type.AIJ)
    load(M)
    X = PETSc.Vec().createWithArray(x.copy(), comm=PETSc.COMM_SELF)
    Y = M.createVecLeft()
    M.mult(X, Y)
    return M.getSize(), Y.getArray().copy()


def load_h5(path):
    def f(M):
        v = PETSc.Viewer().createHDF5(path, "r", comm=PETSc.COMM_SELF)
        v.pushFormat(PETSc.Viewer.Format.HDF5_MAT)
        M.load(v)
        v.destroy()
    return f


def load_bin(path):
    def f(M):
        v = PETSc.Viewer().createBinary(path, "r", comm=PETSc.COMM_SELF)
        M.load(v)
        v.destroy()
    return f


def config(tag, body):
    p = os.path.join(work, tag + ".ini")
    with open(p, "w") as f:
        f.write(body)
    return p


rng = np.random.default_rng(11)
G = (sp.random(90, 90, density=0.06, random_state=rng) + sp.eye(90)).tocoo()
gen = os.path.join(work, "gen_coo.h5")
with h5py.File(gen, "w") as f:
    f["row"], f["col"], f["val"] = G.row, G.col, G.data
cases = [
    ("hh", "[model]\ntype = holstein-hubbard\nsites = 4\nn_up = 2\nn_down = 2\nmax_phonons = 2\ncoupling = 0.7\n", 1),
    ("bs", "[model]\ntype = block-stencil\nnx = 4\nny = 3\nnz = 2\nblock_size = 3\nstencil = 27\n", 0),
    ("coo", f"[model]\ntype = hdf5\n[matrix]\nfile = {gen}\n", 0),
]
for tag, body, symmetric in cases:
    ini = config(tag, body)
    h5, pb = os.path.join(work, f"{tag}.h5"), os.path.join(work, f"{tag}.petsc")
    r = run(["export", ini, h5, "--group", "/A", "--overwrite", "--quiet"])
    check(r.returncode == 0, f"{tag}: export --group /A ({NP} rank(s)) {r.stderr.strip()}")
    r2 = run(["export", ini, pb, "--format", "petsc", "--overwrite", "--quiet"])
    check(r2.returncode == 0, f"{tag}: export --format petsc {r2.stderr.strip()}")
    if r.returncode or r2.returncode:
        continue
    A = ours(h5, "/A")
    with h5py.File(h5, "r") as f:
        g = f["/A"]
        check(int(g.attrs["MATLAB_sparse"]) == A.shape[0], f"{tag}: MATLAB_sparse = rows")
        if symmetric:
            check(g["jc"] == g["row_ptr"] and g["ir"] == g["col_idx"] and g["data"] == g["values"],
                  f"{tag}: symmetric: jc, ir, data are links to row_ptr, col_idx, values (no copy)")
        else:
            C = A.tocsc()
            C.sort_indices()
            check(np.array_equal(g["jc"][()], C.indptr) and np.array_equal(g["ir"][()], C.indices) and
                  np.array_equal(g["data"][()], C.data) and not g["jc"] == g["row_ptr"],
                  f"{tag}: nonsymmetric: jc, ir, data are the compressed columns of A (a copy)")
    x = rng.standard_normal(A.shape[0])
    y = A @ x
    for what, load in (("HDF5 view", load_h5(h5)), ("binary", load_bin(pb))):
        try:
            size, yp = petsc_product(load, x)
        except PETSc.Error as e:
            check(False, f"{tag}: PETSc MatLoad of the {what} failed: {e}")
            continue
        err = np.max(np.abs(yp - y)) / np.max(np.abs(y))
        check(size == A.shape and err <= 1e-14, f"{tag}: PETSc MatLoad ({what}) {size}: |A x - ours| / |ours| = {err:.1e}")
    # the binary back through tools/convert2h5.py: the same matrix
    back = os.path.join(work, f"{tag}_back.h5")
    if os.path.exists(back):
        os.remove(back)
    c = subprocess.run([sys.executable, os.path.join(SRC, "tools/convert2h5.py"), pb, back], capture_output=True,
                       text=True)
    B = ours(back, "/") if c.returncode == 0 else None
    check(B is not None and (B != A).nnz == 0 and B.shape == A.shape,
          f"{tag}: convert2h5.py of the PETSc binary gives the exported matrix {c.stderr.strip()}")

# a MATLAB v5 MAT-file through convert2h5.py
m5 = os.path.join(work, "v5.mat")
scipy.io.savemat(m5, {"K": G.tocsc(), "other": np.ones(3)})
back = os.path.join(work, "v5_back.h5")
if os.path.exists(back):
    os.remove(back)
c = subprocess.run([sys.executable, os.path.join(SRC, "tools/convert2h5.py"), m5, back], capture_output=True, text=True)
B = ours(back, "/") if c.returncode == 0 else None
check(B is not None and (B != G.tocsr()).nnz == 0, f"MAT v5: convert2h5.py gives the saved matrix {c.stderr.strip()}")

print(f"{len(fails)} failure(s)")
sys.exit(1 if fails else 0)
