#!/usr/bin/env python3
"""check_plot_tool.py -- tools/plot.py's missing-package message and its
convergence panel.

case missing: with a matplotlib (or h5py) that cannot be imported (a fake
  package raising ImportError first on PYTHONPATH) plot.py exits 2 with one
  line on stderr naming the package to install, and no traceback.
case convergence: the convergence panel plots what the solver tests, so the
  converged pairs sit at or below its line at tol: for a Lanczos solve (the
  quickstart model with M = 3, where a converged pair's absolute estimate
  2.7e-10 is above tol = 1e-10, as an absolute panel would show it) and a
  Krylov-Schur solve (complex Ritz values), plot.convergence_series gives
  estimate / max(|theta|, norm_estimate) <= tol for the nconv leading pairs
  of the last cycle.  Needs no matplotlib.
usage: check_plot_tool.py missing|convergence PJDS_BIN SRC_DIR
(exit 77 = skipped: no numpy/h5py)"""
import os
import subprocess
import sys
import tempfile

try:
    import h5py
    import numpy as np
except ImportError:
    print("skipped: no numpy/h5py")
    sys.exit(77)

case, exe, src = sys.argv[1], sys.argv[2], sys.argv[3]
plot = os.path.join(src, "tools", "plot.py")
fail = 0


def check(ok, what):
    global fail
    if not ok:
        print("FAIL: " + what)
        fail = 1


def case_missing(d):
    for pkg, apt in (("matplotlib", "python3-matplotlib"), ("h5py", "python3-h5py")):
        fake = os.path.join(d, "fake-" + pkg, pkg)
        os.makedirs(fake)
        with open(os.path.join(fake, "__init__.py"), "w") as f:
            f.write('raise ImportError("test: %s made unimportable")\n' % pkg)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.path.dirname(fake) + os.pathsep + env.get("PYTHONPATH", "")
        p = subprocess.run([sys.executable, plot, os.path.join(d, "any.h5")], capture_output=True, text=True, env=env)
        lines = p.stderr.strip().splitlines()
        print("%s missing: exit %d, stderr %r" % (pkg, p.returncode, p.stderr.strip()))
        check(p.returncode == 2, "%s missing: exit status %d, expected 2" % (pkg, p.returncode))
        check(len(lines) == 1, "%s missing: %d lines on stderr, expected 1" % (pkg, len(lines)))
        check("Traceback" not in p.stderr, "%s missing: a traceback" % pkg)
        check(apt in p.stderr and "pip install " + pkg in p.stderr,
              "%s missing: the message does not name %s / pip install %s" % (pkg, apt, pkg))


def case_convergence(d):
    sys.path.insert(0, os.path.join(src, "tools"))
    import plot as plot_mod
    ns = os.path.join(d, "ns.ini")
    with open(ns, "w") as f:
        f.write("[model]\ntype = block-stencil\nnx = 3\nny = 3\nnz = 3\nblock_size = 2\nconvection = 0.2\n"
                "[solver]\nnev = 4\n[spmv]\nbackend = cpu\n")
    runs = {
        "lanczos": [exe, "solve", os.path.join(src, "configs", "quickstart.ini"), "--set", "model.max_phonons=3",
                    "--set", "spmv.backend=cpu"],
        "krylov-schur": [exe, "solve", ns],
    }
    for name, cmd in runs.items():
        h5 = os.path.join(d, name + ".h5")
        p = subprocess.run(cmd + ["--quiet", "--set", "output.file=" + h5], capture_output=True, text=True)
        if p.returncode:
            check(False, "%s: solve exit %d %s" % (name, p.returncode, p.stderr[-500:]))
            continue
        with h5py.File(h5, "r") as f:
            it, rel, tol, normest = plot_mod.convergence_series(f)
            nconv = int(f.attrs["nconv"])
            est = np.abs(f["convergence/residual_estimates"][:])
            check(f.attrs["method"] in (name, name.encode()), "%s: method %r" % (name, f.attrs["method"]))
        if rel is None:
            check(False, "%s: convergence_series found no norm_estimate" % name)
            continue
        check(nconv >= 1, "%s: nothing converged" % name)
        last = rel[-1, :nconv]
        above = int(np.sum(est[-1, :nconv] > tol))
        print("%s: tol %g, normest %.6g, %d converged; plotted %s; absolute estimates above tol: %d"
              % (name, tol, normest, nconv, " ".join("%.2e" % v for v in last), above))
        check(np.all(last <= tol), "%s: a converged pair is plotted above the line at tol" % name)
        check(rel.shape == est.shape and len(it) == est.shape[0], "%s: series shapes" % name)
        if name == "lanczos":  # the model where an absolute panel would put a converged pair above tol
            check(above >= 1, "lanczos: expected a converged pair with absolute estimate > tol (test model changed?)")


with tempfile.TemporaryDirectory() as d:
    {"missing": case_missing, "convergence": case_convergence}[case](d)
sys.exit(fail)
