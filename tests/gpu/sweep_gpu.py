#!/usr/bin/python3
"""Sweeps and checkpoints on the GPU, against the CPU backend:
  - the 3 x 2 grid of tests/sweep/hh_sweep.ini on backend cuda (pjds refilled on
    the device, streamed and host fill; and the default, matrix-free tables)
    equals the same sweep on the CPU (1e-10), with the operator built once;
  - SIGUSR1 during a cuda solve: exit 3 and a checkpoint; --resume on cuda equals
    the uninterrupted cuda solve (1e-10), and a CPU resume of the cuda checkpoint
    (another backend: the basis is stored in the original order) agrees too.
usage: sweep_gpu.py TEST_CUDA_BACKEND   (its exit 77 = no GPU: skip)
Exit 0 = pass, 1 = fail, 77 = skipped."""
import os
import signal
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

SRC = os.environ["PJDS_SRC"]
BIN = os.environ["PJDS_BIN"]
SWEEP = os.path.join(SRC, "tests", "sweep", "hh_sweep.ini")
LONG = os.path.join(SRC, "tests", "sweep", "hh_long.ini")
# the model this test was written for (hh_long.ini went to M = 9 for the CPU signal tests; on the GPU the signal
# follows the "solve: N =" line at once, and the cross-backend comparison below is at 1e-10)
LONG_M = "model.max_phonons=6"
FAIL = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        FAIL.append(what)


def run(args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([BIN] + args, capture_output=True, text=True, timeout=600, env=e)


def sets(*kv):
    out = []
    for x in kv:
        out += ["--set", x]
    return out


def main():
    try:
        count = int(subprocess.run([sys.argv[1], "--device-count"], capture_output=True, text=True).stdout.strip() or 0)
    except (OSError, ValueError):
        count = 0
    if count < 1:
        print("no CUDA device: skipped")
        return 77
    with tempfile.TemporaryDirectory() as d:
        cpu = os.path.join(d, "cpu.h5")
        r = run(["solve", SWEEP, "--quiet"] + sets(f"output.file={cpu}", "spmv.backend=cpu"))
        check(r.returncode == 0, f"cpu sweep ({r.stderr.strip()[-200:]})")
        with h5py.File(cpu) as f:
            ref = f["sweep/eigenvalues"][:]
        # the stored matrix refilled on the device (pjds: auto is matrix-free for
        # a one-rank sweep since 2026-11-25), and the default (matrix-free tables)
        for i, (name, env, fmt) in enumerate((("streamed fill", {}, "pjds"),
                                              ("host fill", {"PJDS_FILL_HOST": "1"}, "pjds"),
                                              ("matrix-free (auto)", {}, "auto"))):
            out = os.path.join(d, f"gpu_{i}.h5")
            r = run(["solve", SWEEP, "--quiet"] + sets(f"output.file={out}", "spmv.backend=cuda", f"spmv.format={fmt}"),
                    env)
            check(r.returncode == 0, f"cuda sweep, {name} ({r.stderr.strip()[-300:]})")
            if r.returncode:
                continue
            with h5py.File(out) as f:
                e = f["sweep/eigenvalues"][:]
                rb = f["sweep/rebuilt"][:].tolist()
                st = f["sweep/status"][:].tolist()
            diff = float(np.max(np.abs(e - ref)))
            check(diff <= 1e-10 and rb == [1, 0, 0, 0, 0, 0] and st == [1] * 6,
                  f"cuda sweep ({name}) = cpu sweep: max diff {diff:.2e}, rebuilt {rb}, status {st}")
        # checkpoint and resume on the GPU
        ref_l = os.path.join(d, "ref.h5")
        r = run(["solve", LONG, "--quiet"] + sets(f"output.file={ref_l}", "spmv.backend=cuda", LONG_M))
        check(r.returncode == 0, "uninterrupted cuda solve")
        with h5py.File(ref_l) as f:
            e_ref, it_ref = f["eigenvalues"][:], int(f.attrs["iterations"])
        for resume_backend in ("cuda", "cpu"):
            out = os.path.join(d, f"ck_{resume_backend}.h5")
            p = subprocess.Popen([BIN, "solve", LONG] + sets(f"output.file={out}", "spmv.backend=cuda", LONG_M),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            while True:
                line = p.stderr.readline()
                if not line or "solve: N =" in line:
                    break
            p.send_signal(signal.SIGUSR1)
            _, err = p.communicate(timeout=300)
            check(p.returncode == 3 and os.path.exists(out + ".ckpt"),
                  f"SIGUSR1 on cuda: exit 3 and a checkpoint (got {p.returncode}: {err.strip()[-200:]})")
            if p.returncode != 3:
                continue
            r = run(["solve", LONG, "--resume", "--quiet"] + sets(f"output.file={out}", f"spmv.backend={resume_backend}", LONG_M))
            check(r.returncode == 0, f"--resume on {resume_backend}: exit 0 ({r.stderr.strip()[-300:]})")
            if r.returncode:
                continue
            with h5py.File(out) as f:
                e, it = f["eigenvalues"][:], int(f.attrs["iterations"])
            diff = float(np.max(np.abs(e - e_ref)))
            check(diff <= 1e-10 and abs(it - it_ref) <= max(24, 0.05 * it_ref),
                  f"resumed on {resume_backend} = uninterrupted cuda solve: max diff {diff:.2e}, SpMVs {it} vs {it_ref}")
    print("FAILED: %d" % len(FAIL) if FAIL else "PASSED")
    return 1 if FAIL else 0


if __name__ == "__main__":
    sys.exit(main())
