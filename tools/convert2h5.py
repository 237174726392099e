#!/usr/bin/python3
"""convert2h5.py — convert a sparse matrix that is not in HDF5 to the
pjds-lanczos HDF5 matrix schema (docs/formats.md, "Other HDF5 layouts").

Usage:
  tools/convert2h5.py IN OUT.h5 [--group /path] [--var NAME] [--overwrite]

IN may be
  - a PETSc binary matrix file (MatView with a binary viewer: big-endian
    int32 class id 1211216, rows, cols, nnz, row lengths, int32 column
    indices, float64 values);
  - a MATLAB v5 MAT-file (save without -v7.3): the sparse variable --var, or
    the only sparse variable of the file (read with scipy.io.loadmat);
  - a Matrix Market file: converted as tools/mtx2h5.py does.
symmetric is 1 when the matrix equals its transpose exactly.  OUT.h5 is
opened for appending; --group names the destination group (as mtx2h5.py).
Exit status: 0 ok, 2 bad input or usage.
"""
import argparse
import importlib.util
import os
import sys

try:
    import h5py
    import numpy as np
    import scipy.io
    import scipy.sparse
except ImportError as e:  # pragma: no cover
    sys.exit(f"convert2h5: error: {e} (run with /usr/bin/python3, which has numpy, scipy and h5py)")

PETSC_MAT_CLASSID = 1211216


def fail(msg):
    print(f"convert2h5: error: {msg}", file=sys.stderr)
    sys.exit(2)


def mtx2h5():
    spec = importlib.util.spec_from_file_location("mtx2h5", os.path.join(os.path.dirname(__file__), "mtx2h5.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def read_petsc(path):
    raw = open(path, "rb").read()
    if len(raw) < 16:
        fail(f"{path}: too short for a PETSc binary matrix")
    cid, m, n, nz = np.frombuffer(raw[:16], dtype=">i4")
    if cid != PETSC_MAT_CLASSID:
        fail(f"{path}: class id {cid} is not a PETSc matrix ({PETSC_MAT_CLASSID})")
    need = 16 + 4 * m + 4 * nz + 8 * nz
    if m < 0 or n < 0 or nz < 0 or len(raw) < need:
        fail(f"{path}: truncated PETSc binary matrix ({len(raw)} bytes, header says {need})")
    lens = np.frombuffer(raw, dtype=">i4", count=m, offset=16).astype(np.int64)
    cols = np.frombuffer(raw, dtype=">i4", count=nz, offset=16 + 4 * m).astype(np.int64)
    vals = np.frombuffer(raw, dtype=">f8", count=nz, offset=16 + 4 * m + 4 * nz).astype(np.float64)
    if lens.sum() != nz:
        fail(f"{path}: row lengths sum to {lens.sum()}, header says nnz = {nz}")
    ptr = np.concatenate([[0], np.cumsum(lens)])
    return scipy.sparse.csr_matrix((vals, cols, ptr), shape=(m, n))


def read_mat5(path, var):
    try:
        d = scipy.io.loadmat(path)
    except Exception as e:  # scipy raises several kinds on bad files
        fail(f"{path}: cannot read the MAT-file: {e}")
    sparse = [k for k, v in d.items() if not k.startswith("__") and scipy.sparse.issparse(v)]
    if var is None:
        if len(sparse) != 1:
            fail(f"{path}: {len(sparse)} sparse variables ({', '.join(sparse) or 'none'}); name one with --var")
        var = sparse[0]
    if var not in sparse:
        fail(f"{path}: no sparse variable '{var}' (sparse variables: {', '.join(sparse) or 'none'})")
    a = d[var]
    if np.iscomplexobj(a.data):
        fail(f"{path}: variable '{var}' is complex; complex matrices are not supported")
    return a, var


def main(argv=None):
    ap = argparse.ArgumentParser(description="Convert PETSc binary, MAT v5 or Matrix Market to the pjds HDF5 schema.")
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--group", default="/")
    ap.add_argument("--var", default=None, help="MAT-file: the sparse variable to convert")
    ap.add_argument("--overwrite", action="store_true")
    args = ap.parse_args(argv)
    if not os.path.isfile(args.input):
        fail(f"{args.input}: no such file")
    head = open(args.input, "rb").read(32)
    m2h = mtx2h5()
    if head.startswith(b"%%MatrixMarket") or head[:2] == b"\x1f\x8b":
        opts = [args.input, args.output, "--group", args.group, "--detect-symmetric"]
        return m2h.main(opts + (["--overwrite"] if args.overwrite else []))
    name = os.path.basename(args.input)
    if len(head) >= 4 and int.from_bytes(head[:4], "big") == PETSC_MAT_CLASSID:
        a = read_petsc(args.input)
    elif head.startswith(b"MATLAB 5.0 MAT-file"):
        a, name = read_mat5(args.input, args.var)
    else:
        fail(f"{args.input}: neither a PETSc binary matrix, a MATLAB v5 MAT-file nor a Matrix Market file")
    a = scipy.sparse.csr_matrix(a, dtype=np.float64)
    a.sum_duplicates()
    a.sort_indices()
    if a.shape[0] != a.shape[1]:
        fail(f"{args.input}: matrix is not square ({a.shape[0]} x {a.shape[1]})")
    if not np.all(np.isfinite(a.data)):
        fail(f"{args.input}: matrix holds NaN or Inf values")
    d = (a - a.T).tocsr()
    d.eliminate_zeros()
    group = args.group if args.group.startswith("/") else "/" + args.group
    try:
        with h5py.File(args.output, "a") as h5:
            m2h.write_matrix(h5, group, a, d.nnz == 0, False, name, os.path.basename(args.input), args.overwrite)
    except OSError as e:
        fail(f"{args.output}: cannot write: {e}")
    print(f"convert2h5: {args.input} -> {args.output}:{group} ({a.shape[0]} rows, {a.nnz} entries, "
          f"symmetric={int(d.nnz == 0)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
