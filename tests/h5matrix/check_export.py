#!/usr/bin/python3
"""check_export.py OUTDIR — files written by pl_h5m_write (test_h5m_roundtrip)
read with h5py, compared exactly with scipy.io.mmread of the original .mtx
($PJDS_MATRICES): schema attributes, CSR arrays, sorted columns.
Exit 77 when neither the matrices nor the exports are there."""
import os
import sys

import h5py
import numpy as np
import scipy.io
import scipy.sparse


def check(path, mtx, symmetric, name):
    a = scipy.sparse.csr_matrix(scipy.io.mmread(mtx), dtype=np.float64)
    a.sum_duplicates()
    a.sort_indices()
    errors = []
    with h5py.File(path, "r") as f:
        at = f.attrs
        want = {"pjds_matrix_schema": 1, "rows": a.shape[0], "cols": a.shape[1], "nnz": a.nnz,
                "symmetric": symmetric}
        for k, v in want.items():
            if k not in at or int(at[k]) != v:
                errors.append(f"attribute {k} = {at.get(k)}, expected {v}")
        for k, v in (("storage", "full"), ("name", name)):
            got = at.get(k)
            got = got.decode() if isinstance(got, bytes) else got
            if got != v:
                errors.append(f"attribute {k} = {got!r}, expected {v!r}")
        rp, ci, va = f["row_ptr"][...], f["col_idx"][...], f["values"][...]
        if rp.dtype != np.int64 or va.dtype != np.float64 or ci.dtype.kind != "i":
            errors.append(f"dtypes {rp.dtype} {ci.dtype} {va.dtype}")
        if not (np.array_equal(rp, a.indptr) and np.array_equal(ci, a.indices) and np.array_equal(va, a.data)):
            errors.append("CSR arrays differ from scipy's")
    for e in errors:
        print(f"{path}: {e}", file=sys.stderr)
    print(f"{path}: {'FAIL' if errors else 'ok'} ({a.shape[0]} rows, {a.nnz} entries)")
    return not errors


def main():
    out = sys.argv[1]
    mdir = os.environ.get("PJDS_MATRICES", "")
    cases = [("lund_a_export.h5", "lund_a.mtx", 1, "lund_a"), ("memplus_export.h5", "memplus.mtx", 0, "memplus")]
    done, ok = 0, True
    for f, m, sym, name in cases:
        p, q = os.path.join(out, f), os.path.join(mdir, m)
        if os.path.isfile(p) and os.path.isfile(q):
            ok &= check(p, q, sym, name)
            done += 1
    if not done:
        print("skipped: no exported matrices", file=sys.stderr)
        return 77
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
