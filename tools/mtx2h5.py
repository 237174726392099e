#!/usr/bin/python3
"""mtx2h5.py — convert a Matrix Market file (.mtx or .mtx.gz) to the
pjds-lanczos HDF5 matrix schema 1 (docs/formats.md, "HDF5 matrix schema").

Usage:
  tools/mtx2h5.py IN.mtx[.gz] OUT.h5 [--group /path] [--name NAME]
                  [--lower] [--detect-symmetric] [--overwrite]

The matrix is read with scipy.io.mmread and stored as CSR with 0-based
indices, columns sorted within each row.  Explicit zeros are kept;
duplicate (i, j) entries of the .mtx file are summed (scipy's convention).
`symmetric` is 1 when the banner says `symmetric` (or, with
--detect-symmetric, when A == A^T exactly).  --lower stores only the lower
triangle (col <= row) of a symmetric matrix, `storage = "lower"`; the
reader expands it.  Several matrices can share a file: OUT.h5 is opened
for appending, and --group names where the matrix goes (the group must not
exist yet, unless --overwrite, which replaces it; for the root group "/"
--overwrite replaces the matrix datasets and attributes of "/").
Exit status: 0 ok, 2 bad input or usage.
Needs numpy, scipy and h5py (Debian: python3-scipy python3-h5py).
"""
import argparse
import os
import sys

try:
    import h5py
    import numpy as np
    import scipy.io
    import scipy.sparse
except ImportError as e:  # pragma: no cover
    sys.exit(f"mtx2h5: error: {e} (run with /usr/bin/python3, which has numpy, scipy and h5py)")

SCHEMA = 1
MATRIX_KEYS = ("row_ptr", "col_idx", "values")
MATRIX_ATTRS = ("pjds_matrix_schema", "rows", "cols", "nnz", "symmetric", "storage", "name", "source")


def fail(msg):
    print(f"mtx2h5: error: {msg}", file=sys.stderr)
    sys.exit(2)


def mm_banner(path):
    """(field, symmetry) from the %%MatrixMarket banner line."""
    import gzip
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", errors="replace") as f:
        head = f.readline().split()
    if len(head) < 5 or head[0].lower() != "%%matrixmarket":
        fail(f"{path}: no %%MatrixMarket banner on the first line")
    if head[2].lower() != "coordinate":
        # dense 'array' files work too, through scipy
        pass
    return head[3].lower(), head[4].lower()


def write_matrix(h5, group, a, symmetric, lower, name, source, overwrite):
    n = a.shape[0]
    if group in ("", "/"):
        g = h5["/"]
        present = [k for k in MATRIX_KEYS if k in g] + [k for k in MATRIX_ATTRS if k in g.attrs]
        if present and not overwrite:
            fail(f"group '/' of the output already holds a matrix ({', '.join(present)}); use --overwrite or --group")
        for k in MATRIX_KEYS:
            if k in g:
                del g[k]
        for k in MATRIX_ATTRS:
            if k in g.attrs:
                del g.attrs[k]
    else:
        if group in h5:
            if not overwrite:
                fail(f"group '{group}' exists in the output; use --overwrite to replace it")
            del h5[group]
        g = h5.create_group(group)
    idx_type = np.int32 if n <= np.iinfo(np.int32).max else np.int64
    g.create_dataset("row_ptr", data=a.indptr.astype(np.int64))
    g.create_dataset("col_idx", data=a.indices.astype(idx_type))
    g.create_dataset("values", data=a.data.astype(np.float64))
    g.attrs["pjds_matrix_schema"] = np.int32(SCHEMA)
    g.attrs["rows"] = np.int64(n)
    g.attrs["cols"] = np.int64(a.shape[1])
    g.attrs["nnz"] = np.int64(a.nnz)
    g.attrs["symmetric"] = np.int32(1 if symmetric else 0)
    # fixed-length strings: readers need not follow variable-length strings into
    # HDF5's global heap (the HDF5 1.10 C library can crash there on damaged files)
    g.attrs["storage"] = np.bytes_("lower" if lower else "full")
    g.attrs["name"] = np.bytes_(name.encode("utf-8"))
    g.attrs["source"] = np.bytes_(source.encode("utf-8"))


def main(argv=None):
    ap = argparse.ArgumentParser(description="Convert Matrix Market to the pjds-lanczos HDF5 matrix schema.")
    ap.add_argument("input", help=".mtx or .mtx.gz file")
    ap.add_argument("output", help="HDF5 file (created, or appended to)")
    ap.add_argument("--group", default="/", help="group path inside the output (default /)")
    ap.add_argument("--name", default=None, help="attribute name (default: input file name without extension)")
    ap.add_argument("--lower", action="store_true", help="store only the lower triangle (symmetric matrices)")
    ap.add_argument("--detect-symmetric", action="store_true",
                    help="mark a 'general' matrix symmetric when A == A^T exactly")
    ap.add_argument("--overwrite", action="store_true", help="replace an existing matrix at --group")
    args = ap.parse_args(argv)

    if not os.path.isfile(args.input):
        fail(f"{args.input}: no such file")
    field, symmetry = mm_banner(args.input)
    if field == "complex" or symmetry == "hermitian":
        fail(f"{args.input}: complex matrices are not supported")
    try:
        a = scipy.io.mmread(args.input)
    except Exception as e:  # scipy raises ValueError and others on bad files
        fail(f"{args.input}: cannot read Matrix Market file: {e}")
    a = scipy.sparse.csr_matrix(a, dtype=np.float64)
    a.sum_duplicates()  # also sorts the columns of each row
    a.sort_indices()
    if a.shape[0] != a.shape[1]:
        fail(f"{args.input}: matrix is not square ({a.shape[0]} x {a.shape[1]})")
    if not np.all(np.isfinite(a.data)):
        fail(f"{args.input}: matrix holds NaN or Inf values")
    symmetric = symmetry == "symmetric"
    if not symmetric and args.detect_symmetric:
        d = (a - a.T).tocsr()
        d.eliminate_zeros()
        symmetric = d.nnz == 0 and symmetry != "skew-symmetric"
    if args.lower:
        if not symmetric:
            fail(f"{args.input}: --lower needs a symmetric matrix (banner says '{symmetry}'; try --detect-symmetric)")
        a = scipy.sparse.tril(a, format="csr")
        a.sort_indices()
    name = args.name if args.name is not None else os.path.basename(args.input).split(".mtx")[0]
    group = args.group if args.group.startswith("/") else "/" + args.group
    try:
        with h5py.File(args.output, "a") as h5:
            write_matrix(h5, group, a, symmetric, args.lower, name, os.path.basename(args.input), args.overwrite)
    except OSError as e:
        fail(f"{args.output}: cannot write: {e}")
    print(f"mtx2h5: {args.input} -> {args.output}:{group} ({a.shape[0]} rows, {a.nnz} stored entries, "
          f"symmetric={int(symmetric)}, storage={'lower' if args.lower else 'full'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
