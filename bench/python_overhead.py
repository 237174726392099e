#!/usr/bin/python3
"""python_overhead.py -- the cost of calling libpjds from Python (docs/python.md, "Binding"):

  1. one call of pjds_matrix_get_info (a struct filled, nothing computed) through ctypes, as the
     package calls it, against the same call from a minimal C extension module compiled here
     (cc + Python.h; skipped without them);
  2. pjds.eigsh on a pjds.Operator against the time of the pjds_solve call inside it: what the
     Python layer adds to a solve (options, result copies, sorting), for N = 1,000 and k = 4.

Usage: PYTHONPATH=python python3 bench/python_overhead.py   (PJDS_LIBRARY or a build folder)"""
import ctypes
import os
import subprocess
import sys
import sysconfig
import tempfile
import time

import numpy as np
import scipy.sparse

import pjds
from pjds import _lib, _linalg

EXT = r"""
#include <Python.h>
#include <stdint.h>
typedef struct { int64_t n_rows, row0, n_local, nnz; int symmetric, backend; char spare[256]; } info_t;
extern int pjds_matrix_get_info(const void *A, info_t *info);
static PyObject *get_info(PyObject *self, PyObject *arg)
{
    info_t info;
    void *h = PyLong_AsVoidPtr(arg);
    int st = pjds_matrix_get_info(h, &info);
    return PyLong_FromLong(st ? -1 : (long)info.n_rows);
}
static PyMethodDef methods[] = {{"get_info", get_info, METH_O, ""}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "pjds_ext_probe", "", -1, methods};
PyMODINIT_FUNC PyInit_pjds_ext_probe(void) { return PyModule_Create(&mod); }
"""


def per_call(fn, n=200000):
    best = 1e9
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t) / n)
    return best


def extension(libpath, tmp):
    src = os.path.join(tmp, "probe.c")
    with open(src, "w") as f:
        f.write(EXT)
    so = os.path.join(tmp, "pjds_ext_probe" + sysconfig.get_config_var("EXT_SUFFIX"))
    cmd = ["cc", "-O2", "-shared", "-fPIC", "-I" + sysconfig.get_paths()["include"], src, "-o", so,
           "-L" + os.path.dirname(libpath), "-l:" + os.path.basename(libpath), "-Wl,-rpath," + os.path.dirname(libpath)]
    if subprocess.run(cmd).returncode != 0:
        return None
    sys.path.insert(0, tmp)
    import pjds_ext_probe
    return pjds_ext_probe


def main():
    n = 1000
    T = scipy.sparse.diags([np.full(n - 1, -1.0), np.linspace(1, 3, n), np.full(n - 1, -1.0)], [-1, 0, 1]).tocsr()
    op = pjds.operator(T, backend="cpu")
    L = _lib.lib()
    info = _lib.MatrixInfo()
    h = op.handle()
    t_ct = per_call(lambda: L.pjds_matrix_get_info(h, ctypes.byref(info)))
    print(f"library: {pjds.library_path()} {pjds.library_version()}, Python {sys.version.split()[0]}")
    print(f"ctypes call, pjds_matrix_get_info: {t_ct * 1e9:.0f} ns")
    with tempfile.TemporaryDirectory() as tmp:
        ext = extension(pjds.library_path(), tmp)
        if ext:
            assert ext.get_info(h) == n
            t_ext = per_call(lambda: ext.get_info(h))
            print(f"C extension call, pjds_matrix_get_info: {t_ext * 1e9:.0f} ns "
                  f"(ctypes costs {(t_ct - t_ext) * 1e9:.0f} ns more per call)")
        else:
            print("C extension: not built (cc or Python.h missing)")
    # a whole eigsh on the handle against its pjds_solve
    inner = []
    orig = L.pjds_solve

    def timed(*a):
        t = time.perf_counter()
        st = orig(*a)
        inner.append(time.perf_counter() - t)
        return st
    walls = []
    for _ in range(20):
        L.pjds_solve = timed
        t = time.perf_counter()
        pjds.eigsh(op, k=4, which="SA", tol=1e-10)
        walls.append(time.perf_counter() - t)
        L.pjds_solve = orig
    extra = np.median(np.array(walls) - np.array(inner))
    print(f"eigsh(Operator N={n}, k=4, vectors): median {np.median(walls) * 1e3:.2f} ms, of which pjds_solve "
          f"{np.median(inner) * 1e3:.2f} ms; the Python layer adds {extra * 1e6:.0f} us")
    op.close()


if __name__ == "__main__":
    main()
