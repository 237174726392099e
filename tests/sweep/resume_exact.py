#!/usr/bin/python3
"""`solve --resume` equals the uninterrupted solve bit for bit (docs/operations.md, "Checkpoint
and restart"), through the real `pjds-lanczos` binary on the CPU backend.

usage: resume_exact.py METHOD RANKS     (env PJDS_BIN, PJDS_SRC; PJDS_MPIEXEC for RANKS > 1)
METHOD: lanczos (Holstein-Hubbard, configs/quickstart.ini) or krylov-schur (nonsymmetric block
stencil, configs/block_stencil_small.ini).

The solve is stopped by SIGUSR1 at several ends of a cycle chosen in advance: PJDS_TEST_SIGNAL_AT=K
raises the signal in the process itself at the K-th end of a cycle (app/checkpoint.c), so the
signal handler, the collective decision, the checkpoint file and exit status 3 are the real ones,
only the moment is fixed.  K runs from the first cycle through the middle to the last one (the
verification phase with locked vectors included), plus a solve stopped twice.  Each --resume must
give the uninterrupted run's result exactly: every dataset of the result file (eigenvalues,
residual norms, eigenvectors, observables, convergence history) bitwise, and the counters
(spmv_count, iterations, restarts, ...) equal.  The same number of ranks and threads throughout.
Exit 0 = pass, 1 = fail."""
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

BIN = os.environ["PJDS_BIN"]
SRC = os.environ["PJDS_SRC"]
FAIL = []
# counters and result attributes that must be equal; the others are timings or statistics of the
# steps run in this process (steps, local_steps, *_seconds, spmv_gflops)
EXACT_ATTRS = ("spmv_count", "iterations", "restarts", "nconv", "converged_reason", "breakdowns", "verifications",
               "verify_missed", "verify_inconclusive", "residual_rechecks", "norm_estimate",
               "orthogonality_estimate", "orthogonality_loss", "full_reorthogonalizations")
CASES = {
    # Lanczos, partial reorthogonalisation (omega recurrence, selective orthogonalisation) and the
    # verification phase: 22 restarts
    "lanczos": ("quickstart.ini", ["solver.nev=4"]),
    # Krylov-Schur, complex pairs, 142 restarts, the last ones in the verification phase
    "krylov-schur": ("block_stencil_small.ini", ["solver.ncv=12", "solver.tolerance=1e-12"]),
}


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        FAIL.append(what)


def run(ranks, args, at=None):
    pre = os.environ["PJDS_MPIEXEC"].split() + [str(ranks)] if ranks > 1 else []
    env = dict(os.environ)
    env.pop("PJDS_TEST_SIGNAL_AT", None)
    env["OMP_WAIT_POLICY"] = "passive"  # idle threads sleep: short runs beside other tests on 2 cores
    if ranks > 1:  # several ranks on the 2 cores of CI: one thread each
        env["OMP_NUM_THREADS"] = "1"
    if at is not None:
        env["PJDS_TEST_SIGNAL_AT"] = str(at)
    return subprocess.run(pre + [BIN] + args, capture_output=True, text=True, timeout=600, env=env)


def result(path):
    """Every dataset (as raw bytes: bitwise, NaN included) and the attributes of a result file."""
    data = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda n, o: data.__setitem__(n, np.asarray(o[()])) if isinstance(o, h5py.Dataset) else None)
        attrs = dict(f.attrs)
    return data, attrs


def differences(got, ref):
    (d, a), (dr, ar) = got, ref
    out = []
    if sorted(d) != sorted(dr):
        out.append(f"datasets {sorted(set(d) ^ set(dr))}")
    for k in sorted(set(d) & set(dr)):
        x, y = d[k], dr[k]
        if x.shape != y.shape or x.dtype != y.dtype or x.tobytes() != y.tobytes():
            diff = np.max(np.abs(x - y)) if x.shape == y.shape and x.dtype.kind in "fc" else "-"
            out.append(f"{k} (max diff {diff})")
    for k in EXACT_ATTRS:
        if k in ar and (k not in a or a[k] != ar[k]):
            out.append(f"{k} {a.get(k)} vs {ar[k]}")
    return out


def stop_and_resume(ranks, args, out, stops, ref, what):
    """Run with PJDS_TEST_SIGNAL_AT = each of stops in turn (exit 3), then --resume to the end."""
    for i, k in enumerate(stops):
        r = run(ranks, args + (["--resume"] if i else []), at=k)
        ok = r.returncode == 3 and os.path.exists(out + ".ckpt") and not os.path.exists(out)
        check(ok, f"{what}: SIGUSR1 at the end of cycle {k}: exit 3, a checkpoint, no result" +
              ("" if ok else f" (exit {r.returncode}: {r.stderr.strip()[-300:]})"))
        if not ok:
            return
    r = run(ranks, args + ["--resume"])
    ok = r.returncode == 0 and not os.path.exists(out + ".ckpt")
    check(ok, f"{what}: --resume: exit 0, the checkpoint removed" +
          ("" if ok else f" (exit {r.returncode}: {r.stderr.strip()[-300:]})"))
    if not ok:
        return
    diff = differences(result(out), ref)
    check(not diff, f"{what}: resumed = uninterrupted, bit for bit" + (f": differ {diff}" if diff else ""))
    os.remove(out)


def main():
    method, ranks = sys.argv[1], int(sys.argv[2])
    ini, extra = CASES[method]
    ini = os.path.join(SRC, "configs", ini)
    extra = extra + ["spmv.backend=cpu", "output.eigenvectors=true"]
    with tempfile.TemporaryDirectory() as d:
        def args(path):
            a = ["solve", ini, "--quiet"]
            for p in extra + [f"output.file={path}"]:
                a += ["--set", p]
            return a
        refp = os.path.join(d, "ref.h5")
        r = run(ranks, args(refp))
        check(r.returncode == 0, f"uninterrupted {method} solve on {ranks} rank(s)" +
              ("" if r.returncode == 0 else f" (exit {r.returncode}: {r.stderr.strip()[-300:]})"))
        if r.returncode:
            return 1
        ref = result(refp)
        cycles = int(ref[1]["restarts"])  # ends of a cycle with a checkpoint decision
        check(ref[1]["method"] == method and int(ref[1]["verifications"]) >= 1 and cycles >= 10,
              f"the reference is {method} with a verification phase and {cycles} restarts")
        # a second run without a signal is the same (else nothing below could hold)
        again = os.path.join(d, "again.h5")
        r = run(ranks, args(again))
        diff = differences(result(again), ref) if r.returncode == 0 else ["exit %d" % r.returncode]
        check(not diff, "two uninterrupted runs agree bit for bit" + (f": differ {diff}" if diff else ""))
        out = os.path.join(d, "ck.h5")
        for k in sorted({1, 2, cycles // 3, cycles // 2, (2 * cycles) // 3, cycles - 1, cycles}):
            stop_and_resume(ranks, args(out), out, [k], ref, f"stop at cycle {k} of {cycles}")
        # stopped twice: at cycle c/4, and the resumed run again c/4 cycles later
        stop_and_resume(ranks, args(out), out, [cycles // 4, cycles // 4], ref,
                        f"stopped at cycles {cycles // 4} and {2 * (cycles // 4)}")
    print("FAILED: %d check(s)" % len(FAIL) if FAIL else "PASSED")
    return 1 if FAIL else 0


if __name__ == "__main__":
    sys.exit(main())
