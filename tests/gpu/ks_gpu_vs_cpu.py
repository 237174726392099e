#!/usr/bin/python3
"""Krylov-Schur on the GPU: `pjds-lanczos solve` of a block-stencil grid
(13,200 rows, complex pairs) with backend cuda, one rank and two ranks
sharing the GPU (PJDS_SHARE_GPUS=1, transport mpi), gives the CPU backend's
eigenvalues to 1e-10 (relative) and the closed form to 1e-8; the cuda run's
eigenvectors have unit norm and come in conjugate pairs.

usage: ks_gpu_vs_cpu.py TEST_CUDA_BACKEND   (env PJDS_BIN, PJDS_SRC, PJDS_MPIEXEC)
Exit 77 (skipped) without a CUDA device."""
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.environ["PJDS_SRC"], "tests", "blockstencil"))
import closed_form as cf  # noqa: E402


def main():
    try:
        count = int(subprocess.run([sys.argv[1], "--device-count"], capture_output=True, text=True).stdout.strip() or 0)
    except (OSError, ValueError):
        count = 0
    if count == 0:
        print("skipped: no CUDA device")
        return 77
    binary, src = os.environ["PJDS_BIN"], os.environ["PJDS_SRC"]
    cfg = os.path.join(src, "configs", "block_stencil_small.ini")
    sets = ["model.nx=6", "model.ny=20", "model.nz=22", "model.block_size=5", "solver.tolerance=1e-11",
            "solver.nev=6", "solver.which=largest_magnitude", "output.eigenvectors=true"]
    md, _ = cf.model_from_ini(cfg, sets)
    ref = cf.eigs_from_model(md)
    fail = 0
    vals = {}
    with tempfile.TemporaryDirectory() as d:
        runs = [("cpu", 1, []), ("cuda", 1, []), ("cuda-2ranks", 2, ["spmv.transport=mpi"])]
        for tag, np_, extra in runs:
            out = os.path.join(d, tag + ".h5")
            cmd = [binary, "solve", cfg, "--quiet", "--set", f"output.file={out}",
                   "--set", "spmv.backend=" + ("cpu" if tag == "cpu" else "cuda")]
            cmd += [a for s in sets + extra for a in ("--set", s)]
            env = dict(os.environ, OMP_NUM_THREADS="2", PJDS_SHARE_GPUS="1")
            if np_ > 1:
                cmd = os.environ.get("PJDS_MPIEXEC", "mpiexec --allow-run-as-root --oversubscribe -n").split() + \
                    [str(np_)] + cmd
            r = subprocess.run(cmd, capture_output=True, text=True, env=env)
            if r.returncode != 0:
                print(f"FAIL {tag}: exit {r.returncode}: {r.stderr.strip()[-400:]}")
                fail = 1
                continue
            with h5py.File(out) as f:
                lam = np.asarray(f["eigenvalues"][:])
                vals[tag] = lam
                method = f.attrs["method"]
                method = method.decode() if isinstance(method, bytes) else str(method)
                backend = f.attrs["backend"]
                backend = backend.decode() if isinstance(backend, bytes) else str(backend)
                print(f"{tag}: method {method}, backend {backend}, {f.attrs['iterations']} SpMVs, values {lam}")
                if method != "krylov-schur":
                    print(f"FAIL {tag}: method {method}")
                    fail = 1
                err = max(np.min(np.abs(ref - z)) / abs(z) for z in lam)
                print(f"  closed form: max rel. error {err:.2e}")
                if err > 1e-8:
                    print(f"FAIL {tag}: closed form")
                    fail = 1
                if tag == "cuda":
                    X = np.asarray(f["eigenvectors"][:])
                    nrm = np.linalg.norm(X, axis=1)
                    conj = all(np.min([np.linalg.norm(X[j] - np.conj(X[i])) for j in range(len(lam))]) < 1e-12
                               for i in range(len(lam)))
                    print(f"  eigenvectors: norms {nrm.min():.15f}..{nrm.max():.15f}, conjugate pairs {conj}")
                    if np.max(np.abs(nrm - 1)) > 1e-10 or not conj:
                        print("FAIL cuda: eigenvectors")
                        fail = 1
        if "cpu" in vals:
            for tag in ("cuda", "cuda-2ranks"):
                if tag in vals:
                    a, b = vals["cpu"], vals[tag]
                    d = max(np.min(np.abs(b - z)) / abs(z) for z in a) if len(a) == len(b) else np.inf
                    print(f"{tag} vs cpu: max rel. difference {d:.2e}")
                    if not d <= 1e-10:
                        print(f"FAIL {tag} vs cpu")
                        fail = 1
    return fail


if __name__ == "__main__":
    sys.exit(main())
