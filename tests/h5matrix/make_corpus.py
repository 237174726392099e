#!/usr/bin/python3
"""make_corpus.py OUTDIR — write a corpus of broken HDF5 matrix files, one
per validation rule of io/pl_h5matrix.c (plus empty, not-HDF5, truncated),
and print one line per broken file:  filename<TAB>expected message fragment
(file names relative to OUTDIR; the matrix is always in group "/").
Valid control files ok_*.h5 are written too but not listed.
Reusable by end-to-end CLI tests (exit status 2 expected for each line)."""
import os
import sys

import h5py
import numpy as np

# base: 5 x 5 symmetric matrix, full storage
BASE = np.array([[4, 1, 0, 0, 2],
                 [1, 4, 1, 0, 0],
                 [0, 1, 4, 1, 0],
                 [0, 0, 1, 4, 1],
                 [2, 0, 0, 1, 4]], dtype=np.float64)

# a nonsymmetric variant for the compressed-column and COO controls
NONSYM = BASE.copy()
NONSYM[0, 4] = 3.0
NONSYM[3, 1] = -1.0


def csr(a):
    rp, ci, va = [0], [], []
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            if a[i, j] != 0:
                ci.append(j)
                va.append(a[i, j])
        rp.append(len(ci))
    return np.array(rp, np.int64), np.array(ci, np.int32), np.array(va, np.float64)


def parts(lower=False):
    a = np.tril(BASE) if lower else BASE
    rp, ci, va = csr(a)
    d = {"row_ptr": rp, "col_idx": ci, "values": va}
    at = {"pjds_matrix_schema": np.int32(1), "rows": np.int64(5), "cols": np.int64(5), "nnz": np.int64(len(ci)),
          "symmetric": np.int32(1), "storage": np.bytes_("lower" if lower else "full"), "name": np.bytes_("corpus")}
    return d, at


def write(path, d, at, groups=()):
    with h5py.File(path, "w") as f:
        for k, v in d.items():
            if v is not None:
                f.create_dataset(k, data=v)
        for g in groups:
            f.create_group(g)
        for k, v in at.items():
            if v is not None:
                f.attrs[k] = v


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    cases = []

    def case(name, fragment, lower=False, d_over=None, at_over=None, groups=()):
        d, at = parts(lower)
        d.update(d_over or {})
        at.update(at_over or {})
        write(os.path.join(out, name), d, at, groups)
        cases.append((name, fragment))

    # valid controls (not listed)
    d, at = parts()
    write(os.path.join(out, "ok_full.h5"), d, at)
    d, at = parts(True)
    write(os.path.join(out, "ok_lower.h5"), d, at)
    d, at = parts()
    d["col_idx"] = d["col_idx"].copy()
    d["values"] = d["values"].copy()
    d["col_idx"][0:3] = d["col_idx"][0:3][::-1]  # unsorted row 0: allowed, sorted on read
    d["values"][0:3] = d["values"][0:3][::-1]
    write(os.path.join(out, "ok_unsorted.h5"), d, at)
    d, at = parts(True)
    at.update({"storage": "lower", "name": "variable-length strings, as h5py writes str"})
    write(os.path.join(out, "ok_vlen.h5"), d, at)
    # foreign layouts of the nonsymmetric NONSYM (test_h5m_corpus.c compares; a transposed read fails)
    rp, ci, va = csr(NONSYM.T)  # compressed columns of NONSYM
    with h5py.File(os.path.join(out, "ok_matlab_ns.h5"), "w", userblock_size=512) as f:
        f["jc"], f["ir"], f["data"] = rp.astype(np.uint64), ci.astype(np.uint64), va
        f.attrs["MATLAB_sparse"] = np.uint64(5)
        f.attrs["MATLAB_class"] = np.bytes_("double")
    with h5py.File(os.path.join(out, "ok_csc_ns.h5"), "w") as f:
        f["indptr"], f["indices"], f["data"] = rp, ci, va
        f.attrs["encoding-type"] = "csc_matrix"
        f.attrs["shape"] = np.array([5, 5])
    r, c = np.nonzero(NONSYM)
    perm = np.random.default_rng(1).permutation(len(r))
    with h5py.File(os.path.join(out, "ok_coo_ns.h5"), "w") as f:  # 1-based, no shape: both detected
        f["row"], f["col"], f["val"] = r[perm] + 1, c[perm] + 1, NONSYM[r, c][perm]

    # not HDF5 / empty / truncated
    with open(os.path.join(out, "not_hdf5.h5"), "w") as f:
        f.write("%%MatrixMarket matrix coordinate real general\n5 5 1\n1 1 1.0\n")
    cases.append(("not_hdf5.h5", "not an HDF5 file"))
    open(os.path.join(out, "empty.h5"), "wb").close()
    cases.append(("empty.h5", "is empty"))
    ok = open(os.path.join(out, "ok_full.h5"), "rb").read()
    for frac in (0.1, 0.5, 0.9):
        name = f"truncated_{int(frac * 100)}.h5"
        with open(os.path.join(out, name), "wb") as f:
            f.write(ok[:max(64, int(len(ok) * frac))])
        cases.append((name, "truncated"))
    with open(os.path.join(out, "truncated_last_byte.h5"), "wb") as f:
        f.write(ok[:-1])
    cases.append(("truncated_last_byte.h5", "truncated"))

    # metadata
    case("no_schema.h5", "missing attribute 'pjds_matrix_schema'", at_over={"pjds_matrix_schema": None})
    case("schema_v2.h5", "unsupported schema version", at_over={"pjds_matrix_schema": np.int32(2)})
    case("schema_float.h5", "attribute 'pjds_matrix_schema' has the wrong type",
         at_over={"pjds_matrix_schema": np.float64(1.0)})
    case("no_rows.h5", "missing attribute 'rows'", at_over={"rows": None})
    case("no_cols.h5", "missing attribute 'cols'", at_over={"cols": None})
    case("no_nnz.h5", "missing attribute 'nnz'", at_over={"nnz": None})
    case("no_symmetric.h5", "missing attribute 'symmetric'", at_over={"symmetric": None})
    case("rows_string.h5", "attribute 'rows' has the wrong type", at_over={"rows": "five"})
    case("rows_array.h5", "attribute 'rows' must hold exactly one value",
         at_over={"rows": np.array([5, 5], np.int64)})
    case("rows_zero.h5", "attribute 'rows' = 0 out of range", at_over={"rows": np.int64(0), "cols": np.int64(0)})
    case("not_square.h5", "not square", at_over={"cols": np.int64(6)})
    case("symmetric_2.h5", "must be 0 or 1", at_over={"symmetric": np.int32(2)})
    case("storage_bad.h5", "must be 'full' or 'lower'", at_over={"storage": np.bytes_("upper")})
    case("storage_vlen_bad.h5", "must be 'full' or 'lower'", at_over={"storage": "upper"})  # h5py str: variable length
    case("storage_int.h5", "attribute 'storage' has the wrong type", at_over={"storage": np.int32(1)})
    case("lower_not_symmetric.h5", "requires symmetric = 1", lower=True, at_over={"symmetric": np.int32(0)})
    # datasets: presence, class, rank, length
    case("no_row_ptr.h5", "missing dataset 'row_ptr'", d_over={"row_ptr": None})
    case("no_col_idx.h5", "missing dataset 'col_idx'", d_over={"col_idx": None})
    case("no_values.h5", "missing dataset 'values'", d_over={"values": None})
    case("row_ptr_group.h5", "'row_ptr' is not a dataset", d_over={"row_ptr": None}, groups=("row_ptr",))
    d, _ = parts()
    case("row_ptr_float.h5", "dataset 'row_ptr' has the wrong type",
         d_over={"row_ptr": d["row_ptr"].astype(np.float64)})
    case("col_idx_float.h5", "dataset 'col_idx' has the wrong type",
         d_over={"col_idx": d["col_idx"].astype(np.float32)})
    case("values_int.h5", "dataset 'values' has the wrong type", d_over={"values": d["values"].astype(np.int64)})
    case("values_string.h5", "dataset 'values' has the wrong type",
         d_over={"values": np.array([b"x"] * len(d["values"]))})
    case("values_2d.h5", "dataset 'values' must be 1-D", d_over={"values": d["values"].reshape(-1, 1)})
    case("row_ptr_2d.h5", "dataset 'row_ptr' must be 1-D", d_over={"row_ptr": d["row_ptr"].reshape(1, -1)})
    case("row_ptr_short.h5", "dataset 'row_ptr' has 5 elements, expected 6", d_over={"row_ptr": d["row_ptr"][:5]})
    case("col_idx_short.h5", "dataset 'col_idx' has", d_over={"col_idx": d["col_idx"][:-1]})
    case("values_long.h5", "dataset 'values' has", d_over={"values": np.append(d["values"], 1.0)})
    # CSR consistency
    rp = d["row_ptr"].copy()
    rp[0] = 1
    case("row_ptr_start.h5", "must start at 0", d_over={"row_ptr": rp})
    rp = d["row_ptr"].copy()
    rp[-1] -= 1
    case("row_ptr_end.h5", "does not end at nnz", d_over={"row_ptr": rp})
    rp = d["row_ptr"].copy()
    rp[2], rp[3] = rp[3], rp[2]
    case("row_ptr_decreasing.h5", "is not non-decreasing", d_over={"row_ptr": rp})
    rp = d["row_ptr"].copy()
    rp[2] = 1000
    case("row_ptr_range.h5", "is outside [0, nnz", d_over={"row_ptr": rp})
    rp = d["row_ptr"].copy()
    rp[3] = -7
    case("row_ptr_negative.h5", "is outside [0, nnz", d_over={"row_ptr": rp})
    ci = d["col_idx"].copy()
    ci[4] = 5
    case("col_too_large.h5", "column index 5 out of range", d_over={"col_idx": ci})
    ci = d["col_idx"].copy()
    ci[4] = -1
    case("col_negative.h5", "column index -1 out of range", d_over={"col_idx": ci})
    ci = d["col_idx"].astype(np.int64)
    ci[4] = 2 ** 40
    case("col_huge64.h5", "out of range", d_over={"col_idx": ci})
    ci = d["col_idx"].astype(np.uint64)
    ci[4] = 2 ** 64 - 1
    case("col_uint64_max.h5", "out of range", d_over={"col_idx": ci})
    va = d["values"].copy()
    va[3] = np.nan
    case("values_nan.h5", "not finite (NaN)", d_over={"values": va})
    va = d["values"].copy()
    va[5] = -np.inf
    case("values_inf.h5", "not finite (Inf)", d_over={"values": va})
    ci = d["col_idx"].copy()
    ci[1] = ci[0]  # row 0: columns 0, 0, 4
    case("duplicate.h5", "duplicate entry (0, 0)", d_over={"col_idx": ci})
    # lower storage: its own checks run in the distributed scan
    dl, _ = parts(True)
    ci = dl["col_idx"].copy()
    ci[2] = 4  # row 1 (entries 1, 2): column 4 > 1
    case("lower_upper_entry.h5", "above the diagonal", lower=True, d_over={"col_idx": ci})
    va = dl["values"].copy()
    va[-1] = np.nan
    case("lower_nan.h5", "not finite (NaN)", lower=True, d_over={"values": va})
    ci = dl["col_idx"].copy()
    ci[-2] = ci[-3]  # last row: 0, 3, 4 -> 0, 0, 4
    case("lower_duplicate.h5", "duplicate entry", lower=True, d_over={"col_idx": ci})
    ci = dl["col_idx"].copy()
    ci[-1] = -3
    case("lower_col_negative.h5", "column index -3 out of range", lower=True, d_over={"col_idx": ci})
    rp = dl["row_ptr"].copy()
    rp[2], rp[3] = rp[3], rp[2]
    case("lower_row_ptr_decreasing.h5", "is not non-decreasing", lower=True, d_over={"row_ptr": rp})

    for name, frag in cases:
        print(f"{name}\t{frag}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
