#!/usr/bin/env python3
"""acceptance.py — the acceptance run (bench/acceptance.sh builds, then calls this).

Every user-facing workload at the seed's sizes with DEFAULT settings, each
result checked against an independent reference, each figure held against
the committed baseline (bench/baseline/h100.json).  One table prints last:

    workload | figure | now | baseline | ratio | verdict

verdicts: ok; SLOW (a figure more than 10 % worse than its baseline, plus the
figure's absolute slack for timings of a few milliseconds); WRONG (a result
differs from its reference, or the run failed); info (peer figures and
counts, not held against the baseline); new (no baseline value yet).
Exit status 0 when no row is SLOW or WRONG, else 1.

References (independent of the code path under test):
  HMEp, hmep_m21   eigenvalues of a trusted run with the CPU backend (OpenMP
                   kernels, not the CUDA ones), stored in the baseline file
                   ("references"); CuPy eigsh in the same run
  observables      components sum to <psi|H psi>, which equals the eigenvalue
                   (an identity of the definitions), norm 1
  sweep            its points equal separate solves of the same coupling
  dos              mu_0 = 1, integral 1, mu_1 and mu_2 against Tr H~ / N and
                   ||H~||_F^2 / N of the exported matrix (NumPy)
  spectral         ground state = HMEp reference, norm and the first recursion
                   coefficients of the trusted CPU run
  dlr1/uhbr_like   the closed form (tests/blockstencil/closed_form.py)
  real matrix      dense LAPACK (numpy.linalg.eigvals) of the imported matrix
  bench            each format against the host CSR product (its rel_err)

--refs: additionally run the CPU-backend reference solve of hmep_m21 (about
a minute on 16 cores) and print the references found, for the baseline.
--write-baseline FILE: write the figures of this run as a new baseline (the
commit that changes bench/baseline/h100.json must say why).
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "blockstencil"))

TOL_SLOW = 0.10


class Acc:
    def __init__(self, args):
        self.args = args
        self.work = os.path.join(args.work)
        os.makedirs(self.work, exist_ok=True)
        self.log = open(os.path.join(args.out, "acceptance.log"), "a")
        with open(args.baseline) as f:
            self.base = json.load(f)
        self.rows = []      # (workload, figure, now, base, ratio, verdict)
        self.figures = {}   # key -> value (for --write-baseline)
        self.obs_med = {}   # tag -> median observables_seconds of solve_med's runs
        self.refs_found = {}

    # ---- running ---------------------------------------------------------------
    def run(self, tag, argv, timeout, env=None, raw=False):
        """argv after the program (raw: the whole command line)."""
        cmd = list(argv) if raw else [self.args.bin] + list(argv)
        e = dict(os.environ)
        if env:
            e.update(env)
        t0 = time.perf_counter()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e, cwd=ROOT)
            rc, so, se = p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired as x:
            rc, so, se = 124, (x.stdout or b"").decode() if isinstance(x.stdout, bytes) else (x.stdout or ""), \
                (x.stderr or b"").decode() if isinstance(x.stderr, bytes) else (x.stderr or "")
        wall = time.perf_counter() - t0
        self.log.write(f"\n===== {tag}: {' '.join(cmd)}\nexit {rc}, {wall:.2f} s\n{so[-20000:]}\n{se[-20000:]}\n")
        self.log.flush()
        print(f"acceptance: {tag}: exit {rc}, {wall:.2f} s", flush=True)
        return rc, wall, so, se

    def out(self, name):
        return os.path.join(self.work, name)

    def solve(self, tag, config, sets=(), timeout=120, cmd="solve", env=None):
        h5 = self.out(tag + ".h5")
        argv = [cmd, config, "--overwrite", "--set", f"output.file={h5}"]
        for s in sets:
            argv += ["--set", s]
        rc, wall, so, se = self.run(tag, argv, timeout, env)
        return rc, wall, h5, so + se

    def solve_med(self, tag, config, sets=(), timeout=120, runs=3):
        """Run a solve `runs` times (sub-second phases jitter by tens of ms
        on the host): the last run's exit status and file, and the medians
        of its wall clock and solve_seconds (None after a failure); the
        medians of the runs' observables_seconds go to self.obs_med[tag]
        (the eigenvectors' download to pageable memory jitters as well: one
        run in eight took 0.142 s against 0.082-0.095 s, 2026-11-29)."""
        walls, solves, obs = [], [], []
        med = lambda v: sorted(v)[len(v) // 2]  # noqa: E731
        for i in range(runs):
            rc, wall, h5, log = self.solve(tag, config, sets, timeout)
            if rc != 0:
                return rc, None, None, h5
            walls.append(wall)
            a = h5attrs(h5)[0]
            solves.append(float(a["solve_seconds"]))
            if "observables_seconds" in a:
                obs.append(float(a["observables_seconds"]))
        if len(obs) == runs:
            self.obs_med[tag] = med(obs)
        return 0, med(walls), med(solves), h5

    # ---- rows --------------------------------------------------------------------
    def figure(self, wl, fig, now, better="lower", slack=0.0, info=False, fmt="{:.4g}"):
        key = f"{wl}.{fig}"
        self.figures[key] = now
        b = self.base.get("figures", {}).get(key)
        bval = b["value"] if isinstance(b, dict) else b
        if now is None or (isinstance(now, float) and math.isnan(now)):
            self.rows.append((wl, fig, "-", fmt.format(bval) if bval is not None else "-", "-", "WRONG"))
            return
        if info or bval is None:
            ratio = f"{now / bval:.2f}" if bval else "-"
            self.rows.append((wl, fig, fmt.format(now), fmt.format(bval) if bval is not None else "-", ratio,
                              "info" if info else "new"))
            return
        ratio = now / bval if bval else float("inf")
        if better == "lower":
            bad = now > bval * (1 + TOL_SLOW) + slack
        else:
            bad = now < bval * (1 - TOL_SLOW) - slack
        self.rows.append((wl, fig, fmt.format(now), fmt.format(bval), f"{ratio:.2f}", "SLOW" if bad else "ok"))

    def check(self, wl, what, ok, detail):
        self.rows.append((wl, what, detail, "", "", "ok" if ok else "WRONG"))

    def ref(self, name):
        return self.base.get("references", {}).get(name)


def h5attrs(path):
    import h5py
    with h5py.File(path, "r") as f:
        return dict(f.attrs), {k: f[k][...] for k in ("eigenvalues", "residual_norms") if k in f}


def attr_s(a, k):
    v = a.get(k)
    return v.decode() if isinstance(v, bytes) else v


def rel_match(got, ref):
    """Largest relative distance of each ref value to its nearest got value
    (a multiset match: each got value is used once)."""
    import numpy as np
    got = list(np.asarray(got).ravel())
    worst = 0.0
    for r in np.asarray(ref).ravel():
        if not got:
            return float("inf")
        d = [abs(g - r) / max(1.0, abs(r)) for g in got]
        i = int(np.argmin(d))
        worst = max(worst, d[i])
        got.pop(i)
    return worst


def residual_ok(a, d):
    import numpy as np
    tol = float(a.get("tolerance", 1e-10))
    ne = float(a.get("norm_estimate", 1.0))
    lam = np.abs(d["eigenvalues"])
    lim = 10 * tol * np.maximum(lam, ne)
    return bool(np.all(d["residual_norms"] <= lim)), float(np.max(d["residual_norms"] / lim))


def check_vs_cpu(A, wl, a, d, ref, say=""):
    """Row: converged, the eigenvalues equal the trusted CPU run's to 1e-9
    (relative) and the explicit residuals meet the solver's test."""
    err = rel_match(d["eigenvalues"], ref) if ref else float("nan")
    rok, rr = residual_ok(a, d)
    A.check(wl, "eigenvalues vs CPU run", attr_s(a, "converged_reason") == "converged" and err <= 1e-9 and rok,
            f"{say}max rel diff {err:.1e}, residual/limit {rr:.2f}")


# ---- workloads -------------------------------------------------------------------
def w_hmep(A):
    import h5py
    import numpy as np
    rc, wall, solve_s, h5 = A.solve_med("hmep", "configs/hmep.ini", timeout=120)
    if rc != 0:
        return A.check("hmep", "solve", False, f"exit {rc}")
    a, d = h5attrs(h5)
    ref = A.ref("hmep")
    A.refs_found["hmep"] = [float(x) for x in d["eigenvalues"]]
    check_vs_cpu(A, "hmep", a, d, ref, f"{attr_s(a, 'converged_reason')}, ")
    A.figure("hmep", "solve_s", solve_s)
    A.figure("hmep", "wall_s", wall)
    A.figure("hmep", "spmv_median_ms", 1e3 * float(a["spmv_median_seconds"]))
    A.figure("hmep", "spmv_count", float(a["spmv_count"]), info=True, fmt="{:.0f}")
    # issue 25's lines: the Lanczos step against its SpMV, and the process
    # from its start to the finished file (the solver's own clock, wall_seconds)
    if "step_seconds" in a and float(a["spmv_median_seconds"]) > 0:
        A.figure("hmep", "step / SpMV median", float(a["step_seconds"]) / float(a["spmv_median_seconds"]), info=True,
                 fmt="{:.2f}")
    if "wall_seconds" in a:
        A.figure("hmep", "wall_seconds (process start to file)", float(a["wall_seconds"]), info=True)
    # observables: components sum to <psi|H psi> (= eigenvalue), norm 1; their
    # time is the median of the three runs (solve_med)
    with h5py.File(h5, "r") as f:
        o = f["observables"]
        comp = sum(o[k][...] for k in ("energy_kinetic", "energy_hubbard", "energy_phonon", "energy_coupling"))
        ex = o["energy_expectation"][...]
        nrm = o["norm"][...]
        ev = f["eigenvalues"][...]
    e1 = float(np.max(np.abs(comp - ex)))
    e2 = float(np.max(np.abs(ex - ev) / np.abs(ev)))
    e3 = float(np.max(np.abs(nrm - 1)))
    A.check("observables", "sum = <H> = eigenvalue, norm 1", e1 < 1e-9 and e2 < 1e-9 and e3 < 1e-12,
            f"{e1:.1e}, {e2:.1e}, {e3:.1e}")
    A.figure("observables", "seconds", A.obs_med.get("hmep", float(a["observables_seconds"])), slack=0.01)


def w_hmep_noverify(A):
    rc, wall, solve_s, h5 = A.solve_med("hmep_noverify", "configs/hmep.ini", ["solver.verify=false"], timeout=120)
    if rc != 0:
        return A.check("hmep verify=false", "solve", False, f"exit {rc}")
    a, d = h5attrs(h5)
    ref = A.ref("hmep")
    # without verify the second copy of the double level may be missed: each
    # returned value must be an eigenvalue (the reference list, or CuPy's 4th)
    allowed = list(ref or []) + list(A.ref("hmep_extra") or [])
    err = max(min(abs(x - r) / abs(r) for r in allowed) for x in d["eigenvalues"]) if allowed else float("nan")
    rok, rr = residual_ok(a, d)
    A.check("hmep verify=false", "eigenvalues vs CPU run",
            attr_s(a, "converged_reason") == "converged" and err <= 1e-9 and rok, f"max rel diff {err:.1e}")
    A.figure("hmep verify=false", "solve_s", solve_s)


def w_sweep(A):
    import h5py
    import numpy as np
    rc, wall, h5, log = A.solve("sweep", "configs/hmep_g_sweep.ini", timeout=200)
    if rc != 0:
        return A.check("sweep", "11 points", False, f"exit {rc}")
    with h5py.File(h5, "r") as f:
        st = f["sweep/status"][...]
        g = f["sweep/coupling"][...]
        ev = f["sweep/eigenvalues"][...]
    walls, worst = [], 0.0
    for gi in (0.5, 1.0):
        r2, w2, h2, _ = A.solve(f"single_g{gi}", "configs/hmep.ini", [f"model.coupling={gi}"], timeout=60)
        if r2 != 0:
            return A.check("sweep", f"separate solve g={gi}", False, f"exit {r2}")
        walls.append(w2)
        _, d2 = h5attrs(h2)
        i = int(np.argmin(np.abs(g - gi)))
        worst = max(worst, rel_match(ev[i], d2["eigenvalues"]))
    ref = A.ref("hmep")
    i1 = int(np.argmin(np.abs(g - 1.0)))
    e_ref = rel_match(ev[i1], ref) if ref else float("nan")
    A.check("sweep", "points vs separate solves", bool(np.all(st == 1)) and worst <= 1e-9 and e_ref <= 1e-9,
            f"{int(np.sum(st == 1))}/{len(st)} converged, max rel diff {worst:.1e} (g = 1 vs CPU {e_ref:.1e})")
    A.figure("sweep", "wall_s (11 points)", wall)
    A.figure("sweep", "separate solve wall_s", float(np.median(walls)))
    A.figure("sweep", "sweep / 11 separate", wall / (11 * float(np.median(walls))), fmt="{:.3f}")


def w_shared(A):
    """The cluster path on one GPU: 2 ranks sharing it (PJDS_SHARE_GPUS=1) with
    the default transport (NCCL cannot serve two ranks of one device: auto
    must pick ipc or mpi), and an explicit nccl refused with exit 2."""
    mp = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "-np", "2", "-x",
          "OMP_NUM_THREADS=8", "-x", "PJDS_SHARE_GPUS=1"]
    h5 = A.out("shared.h5")
    rc, wall, so, se = A.run("hmep 2 ranks, 1 GPU", mp + [A.args.bin, "solve", "configs/hmep.ini", "--overwrite",
                                                         "--set", f"output.file={h5}"], 120, raw=True)
    if rc != 0:
        return A.check("hmep 2 ranks, 1 GPU", "default transport", False, f"exit {rc}")
    a, d = h5attrs(h5)
    err = rel_match(d["eigenvalues"], A.ref("hmep"))
    A.check("hmep 2 ranks, 1 GPU", "eigenvalues vs CPU run", attr_s(a, "converged_reason") == "converged" and
            err <= 1e-9, f"transport {attr_s(a, 'transport')}, max rel diff {err:.1e}")
    A.figure("hmep 2 ranks, 1 GPU", "wall_s", wall)
    rc2, _, so2, se2 = A.run("nccl on a shared GPU", mp + [A.args.bin, "solve", "configs/hmep.ini", "--overwrite",
                                                          "--set", f"output.file={A.out('shared_nccl.h5')}", "--set",
                                                          "spmv.transport=nccl"], 60, raw=True)
    lines = [ln for ln in (so2 + se2).splitlines() if "nccl" in ln.lower() and "share" in ln]
    A.check("hmep 2 ranks, 1 GPU", "transport = nccl refused", rc2 == 2 and bool(lines) and
            not os.path.exists(A.out("shared_nccl.h5")), f"exit {rc2}: {(lines or [''])[0][:70]}")


def w_export(A):
    """HMEp written in the matrix schema: the input of the CuPy peer and the
    dos trace check."""
    h5 = A.out("hmep_matrix.h5")
    rc, wall, so, se = A.run("export", ["export", "configs/hmep.ini", h5, "--overwrite"], 120)
    if rc != 0:
        A.check("export", "HMEp matrix", False, f"exit {rc}")
        return None
    return h5


def w_dos(A, mat):
    import h5py
    import numpy as np
    rc, wall, h5, log = A.solve("dos", "configs/kpm_hmep.ini", timeout=120, cmd="dos")
    if rc != 0:
        return A.check("dos", "moments", False, f"exit {rc}")
    with h5py.File(h5, "r") as f:
        mu = f["dos/moments"][...]
        at = dict(f["dos"].attrs)
    a, b = float(at["a"]), float(at["b"])
    ok = abs(mu[0] - 1) < 1e-12 and abs(float(at["integral"]) - 1) < 1e-9
    detail = f"mu0 {mu[0]:.15f}, integral {float(at['integral']):.12f}"
    if mat:
        with h5py.File(mat, "r") as f:
            rp = f["row_ptr"][...]
            ci = f["col_idx"][...]
            va = f["values"][...]
        n = len(rp) - 1
        rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(rp))
        tr = float(np.sum(va[rows == ci]))
        fro = float(np.sum(va * va))
        m1 = (tr - n * b) / (n * a)
        # Tr H~^2 = (||H||_F^2 - 2 b Tr H + n b^2) / a^2; T_2 = 2x^2 - 1
        m2 = 2 * (fro - 2 * b * tr + n * b * b) / (a * a * n) - 1
        d1, d2 = abs(mu[1] - m1), abs(mu[2] - m2)
        ok = ok and d1 < 2e-3 and d2 < 2e-3
        detail += f", mu1 {mu[1]:.5f} vs trace {m1:.5f}, mu2 {mu[2]:.5f} vs Frobenius {m2:.5f}"
    A.check("dos", "moments vs trace, integral", ok, detail)
    A.figure("dos", "wall_s", wall)
    A.figure("dos", "moments_s", float(at["moments_seconds"]))


def w_spectral(A):
    import h5py
    import numpy as np
    rc, wall, h5, log = A.solve("spectral", "configs/hmep.ini",
                                ["solver.nev=1", "spectral.momentum=3", "spectral.steps=200"], timeout=120,
                                cmd="spectral")
    if rc != 0:
        return A.check("spectral", "recursion", False, f"exit {rc}")
    with h5py.File(h5, "r") as f:
        s = dict(f["spectral"].attrs)
        al = f["spectral/alpha"][...]
        be = f["spectral/beta"][...]
        inten = f["spectral/intensity"][...]
    ref = A.ref("spectral")
    A.refs_found["spectral"] = {"ground_state_energy": float(s["ground_state_energy"]), "norm": float(s["norm"]),
                                "alpha": [float(x) for x in al[0][:8]], "beta": [float(x) for x in be[0][:8]]}
    if ref:
        # E0 and the norm to the solve's accuracy, alpha_0..2 to 1e-8, the
        # spectrum A(omega) to 1e-4 of its peak.  Two ground states converged
        # to tol 1e-10 differ by ~1e-9, and the plain 200-step recursion
        # amplifies that in its later coefficients (alpha_6 differs by 4e-6
        # between the CPU and the GPU run, beta_1 = 0.22), which moves A(omega)
        # at eta = 0.1 by 1.7e-5 of the peak (H100 against CPU, 2026-11-25):
        # both are valid results of the method, not an error
        e0 = abs(float(s["ground_state_energy"]) - ref["ground_state_energy"]) / abs(ref["ground_state_energy"])
        en = abs(float(s["norm"]) - ref["norm"]) / abs(ref["norm"])
        ea = float(np.max(np.abs(al[0][:3] - np.array(ref["alpha"][:3]))))
        ri = np.array(ref["intensity"])
        ei = float(np.max(np.abs(inten[::ref["intensity_stride"]][: len(ri)] - ri)) / np.max(np.abs(ri)))
        ok = e0 < 1e-9 and en < 1e-8 and ea < 1e-8 and ei < 1e-4
        A.check("spectral", "E0, norm, alpha_0..2, A(w) vs CPU run", ok, f"{e0:.1e}, {en:.1e}, {ea:.1e}, {ei:.1e}")
    else:
        A.check("spectral", "reference", False, "no reference in the baseline")
    A.figure("spectral", "step_ms", 1e3 * float(s["step_seconds"]))
    A.figure("spectral", "recursion_s", float(s["recursion_seconds"]))
    A.figure("spectral", "wall_s", wall)


def w_cfd(A, name, timeout, runs=1):
    import numpy as np
    from closed_form import closed_form_eigs  # noqa: E402
    rc, wall, solve_s, h5 = A.solve_med(name, f"configs/{name}.ini", timeout=timeout, runs=runs)
    if rc != 0:
        return A.check(name, "Krylov-Schur solve", False, f"exit {rc}")
    a, d = h5attrs(h5)
    import configparser
    cp = configparser.ConfigParser()
    cp.read(os.path.join(ROOT, "configs", f"{name}.ini"))
    m = cp["model"]
    lam = closed_form_eigs(int(m["nx"]), int(m["ny"]), int(m["nz"]), int(m["block_size"]), int(m["stencil"]),
                           float(m["convection"]), float(m["shift"]), float(m["corner"]), float(m["rotation"]))
    k = len(d["eigenvalues"])
    want = lam[np.argsort(-np.abs(lam), kind="stable")][: k + 4]
    got = d["eigenvalues"]
    err = max(min(abs(x - w) / abs(w) for w in want) for x in got)
    rok, rr = residual_ok(a, d)
    A.check(name, "eigenvalues vs closed form", attr_s(a, "converged_reason") == "converged" and err < 1e-7 and rok,
            f"max rel diff {err:.1e}, residual/limit {rr:.2f}")
    A.figure(name, "solve_s", solve_s)
    A.figure(name, "wall_s", wall)


def w_m21(A):
    rc, wall, h5, log = A.solve("hmep_m21", "configs/hmep_m21.ini", timeout=200)
    if rc != 0:
        return A.check("hmep_m21", "solve", False, f"exit {rc}")
    a, d = h5attrs(h5)
    ref = A.ref("hmep_m21")
    if A.args.refs:
        r2, w2, h2, _ = A.solve("hmep_m21_cpu", "configs/hmep_m21.ini", ["spmv.backend=cpu"], timeout=400)
        if r2 == 0:
            _, d2 = h5attrs(h2)
            A.refs_found["hmep_m21"] = [float(x) for x in d2["eigenvalues"]]
            ref = ref or A.refs_found["hmep_m21"]
    check_vs_cpu(A, "hmep_m21", a, d, ref, f"format {attr_s(a, 'spmv_format')}, ")
    A.figure("hmep_m21", "solve_s", float(a["solve_seconds"]))
    A.figure("hmep_m21", "wall_s", wall)


def w_real(A):
    import numpy as np
    import scipy.io
    mtx = os.path.join(A.args.matrices, "e20r0000.mtx")
    if not os.path.exists(mtx):
        return A.check("import e20r0000", "matrix", False, f"{mtx} not found (carry it in .accept/)")
    h5m = A.out("e20r0000_matrix.h5")
    rc, _, so, se = A.run("mtx2h5", [sys.executable, os.path.join(ROOT, "tools", "mtx2h5.py"), mtx, h5m,
                                      "--overwrite"], 60, raw=True)
    cfg = A.out("e20r0000.ini")
    with open(cfg, "w") as f:
        f.write(f"[model]\ntype = hdf5\n[matrix]\nfile = {h5m}\n[solver]\nnev = 6\nwhich = largest_magnitude\n"
                f"tolerance = 1e-10\n[output]\nfile = {A.out('e20r0000.h5')}\n")
    rc, wall, h5, log = A.solve("import_e20r0000", cfg, timeout=120)
    if rc != 0:
        return A.check("import e20r0000", "solve", False, f"exit {rc}")
    a, d = h5attrs(h5)
    M = scipy.io.mmread(mtx).toarray()
    lam = np.linalg.eigvals(M)
    want = lam[np.argsort(-np.abs(lam), kind="stable")][: len(d["eigenvalues"]) + 2]
    err = max(min(abs(x - w) / abs(w) for w in want) for x in d["eigenvalues"])
    rok, rr = residual_ok(a, d)
    A.check("import e20r0000", "eigenvalues vs dense LAPACK",
            attr_s(a, "converged_reason") == "converged" and err < 1e-8 and rok, f"max rel diff {err:.1e}")
    A.figure("import e20r0000", "wall_s", wall, slack=0.3)  # a sub-second process: start-up noise


def w_bench(A):
    rc, wall, so, se = A.run("bench", ["bench", "configs/hmep.ini", "--set", "spmv.repeats=50"], 300)
    if rc != 0:
        return A.check("bench", "run", False, f"exit {rc}")
    rows, errs, spmm = parse_bench(so)
    bench_rows(A, rows, errs, spmm)


def parse_bench(so):
    """bench's format table: {format: ms}, [rel_err]; its SpMMV table:
    {R: (per-vector ms, cuSPARSE ms, cuSPARSE per-vector ms, max_err)}."""
    rows = {}
    errs = []
    table = spmm_part = False
    lines = so.splitlines()
    fmt_lines, spmm_lines = [], []
    for ln in lines:  # the format table runs from its header to the next blank line
        if ln.startswith("format ") and "time_ms" in ln:
            table = True
            continue
        if ln.startswith("SpMMV:"):
            spmm_part = True
        if table and not ln.strip():
            table = False
        if table:
            fmt_lines.append(ln)
        elif spmm_part:
            spmm_lines.append(ln)
    for ln in fmt_lines:
        m = re.match(r"^(.{30}) (\S+)\s+(\S+)\s+([0-9.]+|-)\s+\S+\s+\S+\s+\S+\s+\S+(?: MB)?\s+(\S+)", ln)
        if m and m.group(4) != "-":
            name = m.group(1).strip()
            # one row per compressed kernel variant: keep the solve's kernel
            if name not in rows or "the solve's kernel" in ln:
                rows[name] = float(m.group(4))
            try:
                errs.append(float(m.group(5)))
            except ValueError:
                pass
    spmm = {}
    for ln in spmm_lines:
        m = re.match(r"^\s*(\d+)\s+([0-9.]+)\s+([0-9.]+)\s+\S+x\s+\S+\s+\S+%\s+\|\s+(\S+)\s+(\S+)\s+(\S+)\s+\|\s+(\S+)",
                     ln)
        if m:
            spmm[int(m.group(1))] = (float(m.group(3)), m.group(4), m.group(5), float(m.group(7)))
    return rows, errs, spmm


def bench_rows(A, rows, errs, spmm):
    worst = max(errs + [s[3] for s in spmm.values()]) if errs else float("nan")
    A.check("bench", "every format vs host CSR", worst < 1e-12, f"max rel err {worst:.1e}")
    cmp_ms = rows.get("compressed operator")
    csr = rows.get("cuSPARSE CSR")
    A.figure("bench SpMV", "compressed operator ms", cmp_ms)
    A.figure("bench SpMV", "pJDS operator ms", rows.get("pJDS operator (format pjds)"))
    A.figure("bench SpMV", "cuSPARSE CSR ms (peer)", csr, info=True)
    if cmp_ms and csr:
        A.figure("bench SpMV", "speed-up vs cuSPARSE CSR", csr / cmp_ms, better="higher", fmt="{:.2f}")
    for R in (8, 32):
        if R in spmm:
            pv, cus_ms, cus_pv, _ = spmm[R]
            A.figure("bench SpMMV", f"R={R} per vector ms", pv)
            if cus_pv != "-":
                A.figure("bench SpMMV", f"R={R} cuSPARSE SpMM per vector ms (peer)", float(cus_pv), info=True)
                A.figure("bench SpMMV", f"R={R} speed-up vs cuSPARSE SpMM", float(cus_pv) / pv, better="higher",
                         fmt="{:.2f}")
        else:
            A.check("bench SpMMV", f"R={R}", False, "row missing")


def w_cupy(A, mat):
    if not mat:
        return A.check("CuPy eigsh", "peer", False, "no exported matrix")
    js = A.out("cupy.json")
    rc, wall, so, se = A.run("cupy_peer", [sys.executable, os.path.join(ROOT, "bench", "cupy_peer.py"), "--matrix",
                                           mat, "--config", "configs/hmep.ini", "--bin", A.args.bin, "--repeats", "3",
                                           "--runs", "ours,ours_noverify", "--json", js], 300, raw=True)
    try:
        with open(js) as f:
            o = json.load(f)
    except OSError:
        return A.check("CuPy eigsh", "peer", False, f"exit {rc}, no json")
    cp = o.get("cupy_eigsh_s")
    A.figure("CuPy eigsh", "warm eigsh s (peer)", cp, info=True)
    wc = o.get("cupy_eigenvalues") or o.get("cupy", {}).get("eigenvalues")
    if wc is not None:
        A.refs_found["hmep_extra"] = [float(x) for x in wc]
    for tag, lab in (("ours", "solve / CuPy"), ("ours_noverify", "verify=false solve / CuPy")):
        st = o.get(tag, {}).get("solve_s")
        if cp and st:
            A.figure("CuPy eigsh", lab, st / cp, fmt="{:.3f}")
    # CuPy's values are eigenvalues: each equals a value of the trusted list
    # (the 4 lowest with multiplicity, and the 5th, -9.1054, which eigsh
    # returns in place of the second copy of the double level -9.1403)
    allowed = list(A.ref("hmep") or []) + list(A.ref("hmep_extra") or [])
    if wc is None or not allowed:
        return A.check("CuPy eigsh", "CuPy values vs CPU run", False, "no values" if wc is None else "no reference")
    err = max(min(abs(x - r) / abs(r) for r in allowed) for x in wc)
    left, hit = list(wc), 0
    for r in A.ref("hmep"):  # our 4 values that CuPy returns too (with multiplicity)
        d = [abs(x - r) / abs(r) for x in left]
        if d and min(d) <= 1e-9:
            left.pop(d.index(min(d)))
            hit += 1
    A.check("CuPy eigsh", "CuPy values vs CPU run", err <= 1e-9,
            f"max rel diff {err:.1e}; CuPy returns {hit} of our 4 lowest (with multiplicity)")


WORKLOADS = ["hmep", "hmep_noverify", "sweep", "export", "dos", "spectral", "dlr1_like", "uhbr_like", "hmep_m21",
             "real", "shared", "bench", "cupy"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out", default="/tmp/pjds-accept")
    ap.add_argument("--work", default="/tmp/pjds-accept-work")
    ap.add_argument("--baseline", default=os.path.join(ROOT, "bench", "baseline", "h100.json"))
    ap.add_argument("--matrices", default=os.path.join(ROOT, "..", "shared", "matrices"))
    ap.add_argument("--only", default=os.environ.get("ACCEPT_ONLY", ""))
    ap.add_argument("--refs", action="store_true", default=os.environ.get("ACCEPT_REFS") == "1")
    ap.add_argument("--write-baseline")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    A = Acc(args)
    only = set(x for x in args.only.split(",") if x)
    want = lambda w: not only or w in only  # noqa: E731
    # a first process on a fresh machine starts cold (MPI init 0.66 s instead
    # of 0.37 s, the CUDA driver loads): one untimed run first
    A.run("warm-up", ["solve", "configs/quickstart.ini", "--overwrite", "--quiet", "--set",
                      f"output.file={A.out('warmup.h5')}"], 60)
    t0 = time.perf_counter()
    steps = [
        ("hmep", lambda: w_hmep(A)),
        ("hmep_noverify", lambda: w_hmep_noverify(A)),
        ("sweep", lambda: w_sweep(A)),
        ("dlr1_like", lambda: w_cfd(A, "dlr1_like", 120, runs=3)),
        ("uhbr_like", lambda: w_cfd(A, "uhbr_like", 150)),
        ("real", lambda: w_real(A)),
        ("shared", lambda: w_shared(A)),
        ("bench", lambda: w_bench(A)),
    ]
    mat = None
    for name, fn in steps:
        if want(name):
            try:
                fn()
            except Exception as e:  # noqa: BLE001 - one workload's failure is its row, the rest go on
                A.check(name, "script", False, f"{type(e).__name__}: {e}"[:120])
    if want("export") or want("dos") or want("cupy"):
        try:
            mat = w_export(A)
        except Exception as e:  # noqa: BLE001
            A.check("export", "script", False, f"{type(e).__name__}: {e}"[:120])
    for name, fn in (("dos", lambda: w_dos(A, mat)), ("spectral", lambda: w_spectral(A)),
                     ("cupy", lambda: w_cupy(A, mat)), ("hmep_m21", lambda: w_m21(A))):
        if want(name):
            try:
                fn()
            except Exception as e:  # noqa: BLE001
                A.check(name, "script", False, f"{type(e).__name__}: {e}"[:120])
    total = time.perf_counter() - t0
    res = {"rows": A.rows, "figures": A.figures, "refs_found": A.refs_found, "seconds": total}
    with open(os.path.join(args.out, "acceptance.json"), "w") as f:
        json.dump(res, f, indent=1)
    if args.write_baseline:
        nb = dict(A.base)
        nb["figures"] = {k: {"value": v} for k, v in A.figures.items() if v is not None}
        with open(args.write_baseline, "w") as f:
            json.dump(nb, f, indent=1)
    if A.refs_found and (args.refs or not A.base.get("references")):
        print("references found in this run (for the baseline file):")
        print(json.dumps(A.refs_found))
    bad = [r for r in A.rows if r[5] in ("SLOW", "WRONG")]
    gpu = A.base.get("gpu", "?")
    print(f"\nacceptance table ({total:.0f} s of workloads; baseline {os.path.relpath(args.baseline, ROOT)}, "
          f"{gpu}, {A.base.get('date', '?')}):")
    w = [max(len(str(r[i])) for r in A.rows + [("workload", "figure", "now", "baseline", "ratio", "verdict")])
         for i in range(6)]
    hdr = ("workload", "figure", "now", "baseline", "ratio", "verdict")
    print(" | ".join(str(h).ljust(w[i]) for i, h in enumerate(hdr)))
    print("-+-".join("-" * x for x in w))
    for r in A.rows:
        print(" | ".join(str(c).ljust(w[i]) for i, c in enumerate(r)))
    print(f"acceptance: {'FAILED: ' + str(len(bad)) + ' row(s) SLOW or WRONG' if bad else 'all rows ok'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
