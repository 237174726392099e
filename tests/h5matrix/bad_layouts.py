#!/usr/bin/python3
"""bad_layouts.py — bad input to the layout importer and to `export`: each
case exits with status 2 and prints exactly one line (on NP ranks: one
`pjds-lanczos: error:` line, from rank 0) that names the file and holds the
expected fragment.  Cases: a group with no known layout (the message lists
its groups and datasets and the known layouts), files that are not HDF5
(PETSc binary, MATLAB v5 MAT-file, Matrix Market: each named, with the
command that converts it), complex MATLAB data, a MATLAB class other than
double, a row index out of range in compressed columns, COO indices out of
range, a COO index base that the range cannot tell, a duplicate COO entry,
an explicit layout that contradicts the file's attributes or whose
datasets are missing, a shape that is not square, and bad export options.
Usage: bad_layouts.py WORKDIR NP
"""
import os
import subprocess
import sys

import h5py
import numpy as np
import scipy.io
import scipy.sparse as sp

BIN = os.environ["PJDS_BIN"]
work, NP = sys.argv[1], int(sys.argv[2])
os.makedirs(work, exist_ok=True)
fails = []


def run(args):
    cmd = [BIN] + args
    if NP > 1:
        cmd = ["mpiexec", "-n", str(NP), "--allow-run-as-root", "--oversubscribe", "--bind-to", "none"] + cmd
    return subprocess.run(cmd, capture_output=True, text=True)


def expect(tag, args, frags):
    r = run(args)
    # on several ranks mpiexec ends the job when the first rank exits with 2; a rank still in its
    # exit path then reports the SIGTERM: that is the launcher's teardown, not a second error line
    lines = [l for l in r.stderr.splitlines() if l.startswith("pjds-lanczos") and
             not (NP > 1 and l.startswith("pjds-lanczos: stopped by SIGTERM"))]
    other = [l for l in r.stderr.splitlines() if not l.startswith("pjds-lanczos")]
    one = len(lines) == 1 and (NP > 1 or not other)
    ok = r.returncode == 2 and one and all(f in lines[0] for f in frags)
    print(("ok   " if ok else "FAIL ") + f"{tag}: exit {r.returncode}, {len(lines)} line(s): {lines[:2]}")
    if not ok:
        fails.append(tag)


def solve(tag, file, group="/", layout="auto", extra=()):
    ini = os.path.join(work, f"{tag}.ini")
    with open(ini, "w") as f:
        f.write(f"[model]\ntype = hdf5\n[matrix]\nfile = {file}\ngroup = {group}\nlayout = {layout}\n"
                f"[output]\nfile = {work}/{tag}.out.h5\n")
    return ["solve", ini, "--overwrite", "--quiet"] + list(extra)


A = (sp.random(6, 6, density=0.5, random_state=1) + sp.eye(6)).tocsr()
C, Co = A.tocsc(), A.tocoo()
h5 = os.path.join(work, "bad.h5")
with h5py.File(h5, "w") as f:
    g = f.create_group("junk")
    g["foo"] = np.arange(3)
    g.create_group("bar")
    for name, cls, cplx, bad_ir in (("cplx", "double", True, False), ("single", "single", False, False),
                                    ("irange", "double", False, True)):
        g = f.create_group(name)
        g.attrs["MATLAB_class"] = np.bytes_(cls)
        g.attrs["MATLAB_sparse"] = np.uint64(6)
        g["jc"] = C.indptr.astype(np.uint64)
        ir = C.indices.astype(np.uint64)
        if bad_ir:
            ir[3] = 6
        g["ir"] = ir
        if cplx:
            d = np.zeros(C.nnz, dtype=[("real", "<f8"), ("imag", "<f8")])
            d["real"] = C.data
            g["data"] = d
        else:
            g["data"] = C.data
    for name, rows, cols, shape in (("coo_range", Co.row, np.where(Co.col == 5, 6, Co.col), (6, 6)),
                                    ("coo_ambiguous", np.array([1, 2, 3, 4, 1]), np.array([2, 1, 4, 3, 1]), (6, 6)),
                                    ("coo_dup", np.append(Co.row, Co.row[0]), np.append(Co.col, Co.col[0]), (6, 6)),
                                    ("coo_rect", Co.row, Co.col, (6, 7))):
        g = f.create_group(name)
        g["row"], g["col"] = rows, cols
        g["val"] = np.ones(len(rows))
        g.attrs["shape"] = np.array(shape)
    g = f.create_group("fmt_csc")  # SciPy dump with a format attribute
    g["data"], g["indices"], g["indptr"], g["shape"] = C.data, C.indices, C.indptr, np.array(C.shape)
    g.attrs["format"] = np.bytes_("csc")
    g = f.create_group("fmt_dset_csc")  # format as a fixed-length string dataset (save_npz's key)
    g["data"], g["indices"], g["indptr"], g["shape"] = C.data, C.indices, C.indptr, np.array(C.shape)
    g.create_dataset("format", data=np.bytes_("csc"))
    g = f.create_group("h5s_csc")
    g["data"], g["indices"], g["indptr"] = C.data, C.indices, C.indptr
    g.attrs["h5sparse_format"] = "csc"
    g.attrs["h5sparse_shape"] = np.array(C.shape)

pb = os.path.join(work, "m.petsc")
with open(pb, "wb") as f:
    f.write(np.array([1211216, 6, 6, A.nnz], dtype=">i4").tobytes())
    f.write(np.diff(A.indptr).astype(">i4").tobytes() + A.indices.astype(">i4").tobytes() + A.data.astype(">f8").tobytes())
m5 = os.path.join(work, "m.mat")
scipy.io.savemat(m5, {"K": C})
mtx = os.path.join(work, "m.mtx")
scipy.io.mmwrite(mtx, A)

expect("unrecognised group", solve("junk", h5, "/junk"),
       ["bad.h5", "no matrix layout recognised", "groups [bar]", "datasets [foo]", "coo (row, col, val)"])
expect("PETSc binary", solve("petsc", pb), ["m.petsc", "PETSc binary matrix", "tools/convert2h5.py"])
expect("MAT v5", solve("mat5", m5), ["m.mat", "MATLAB v5 MAT-file", "-v7.3", "tools/convert2h5.py"])
expect("Matrix Market", solve("mtx", mtx), ["m.mtx", "Matrix Market", "tools/mtx2h5.py"])
expect("complex MATLAB", solve("cplx", h5, "/cplx"), ["bad.h5", "'data' is complex", "not supported"])
expect("MATLAB single", solve("single", h5, "/single"), ["bad.h5", "MATLAB_class = 'single'"])
expect("CSC row index", solve("irange", h5, "/irange"), ["dataset 'ir' has row index 6 out of range [0, 6)"])
expect("COO range", solve("coo_range", h5, "/coo_range"), ["dataset 'col' has index 6 out of range [0, 5]"])
expect("COO base", solve("coo_ambiguous", h5, "/coo_ambiguous"), ["cannot tell whether the indices are 0- or 1-based",
                                                                   "index_base"])
for base in ("0", "1"):  # stated, the same file imports (info: exit 0, the stated base in the log)
    args = solve("coo_base" + base, h5, "/coo_ambiguous", extra=["--set", "matrix.index_base=" + base])
    args[0] = "info"
    args.remove("--quiet")
    args.remove("--overwrite")
    r = run(args)
    ok = r.returncode == 0 and f"{base}-based" in r.stderr
    print(("ok   " if ok else "FAIL ") + f"COO base stated as {base}: exit {r.returncode}")
    if not ok:
        fails.append("COO base stated " + base)
expect("COO duplicate", solve("coo_dup", h5, "/coo_dup"), ["duplicate entry"])
expect("COO not square", solve("coo_rect", h5, "/coo_rect"), ["not square (6 x 7)"])
expect("layout contradicts", solve("csr_on_csc", h5, "/h5s_csc", "csr"),
       ["layout = csr was asked for", "'h5sparse_format' = 'csc'"])
expect("layout contradicts format", solve("csr_on_fmt", h5, "/fmt_csc", "csr"),
       ["layout = csr was asked for", "'format' = 'csc'"])
expect("layout contradicts format dataset", solve("csr_on_fmt_dset", h5, "/fmt_dset_csc", "csr"),
       ["layout = csr was asked for", "'format' = 'csc'"])
expect("layout datasets missing", solve("coo_on_csc", h5, "/h5s_csc", "coo"), ["missing dataset 'row'"])
expect("layout word", solve("badword", h5, "/h5s_csc", "petscc"), ["layout", "petscc"])
gen = os.path.join(work, "gen.ini")
with open(gen, "w") as f:
    f.write("[model]\ntype = block-stencil\nnx = 2\nny = 2\nnz = 2\nblock_size = 2\n")
expect("export format", ["export", gen, os.path.join(work, "x.h5"), "--format", "csv"], ["--format csv is not a format"])
expect("export group with petsc", ["export", gen, os.path.join(work, "x.petsc"), "--format", "petsc", "--group", "/a"],
       ["--group applies to --format hdf5 only"])
expect("export group relative", ["export", gen, os.path.join(work, "x.h5"), "--group", "a"], ["must be an absolute path"])
for f in ("x.h5", "x.petsc"):
    p = os.path.join(work, f)
    if os.path.exists(p):
        print(f"FAIL {f} written after a refused export")
        fails.append(f)

print(f"{len(fails)} failure(s)")
sys.exit(1 if fails else 0)
