#!/usr/bin/env python3
"""check_plot_tool.py -- tools/plot.py's missing-package message and its
convergence panel.

case missing: with a matplotlib (or h5py) that cannot be imported (a fake
  package raising ImportError first on PYTHONPATH) plot.py exits 2 with one
  line on stderr naming the package to install, and no traceback.
case reexec: `tools/plot.py FILE` under a python3 without the packages runs
  itself again under one that has them (case_reexec).
case two_keys: a coupling x hubbard_u sweep is drawn as one line per
  hubbard_u value and eigenvalue (case_two_keys).
case convergence: the convergence panel plots what the solver tests, so the
  converged pairs sit at or below its line at tol: for a Lanczos solve (the
  quickstart model with M = 3, where a converged pair's absolute estimate
  2.7e-10 is above tol = 1e-10, as an absolute panel would show it) and a
  Krylov-Schur solve (complex Ritz values), plot.convergence_series gives
  estimate / max(|theta|, norm_estimate) <= tol for the nconv leading pairs
  of the last cycle.  Needs no matplotlib.
usage: check_plot_tool.py missing|convergence|reexec|two_keys PJDS_BIN SRC_DIR
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


def case_reexec(d):
    """`tools/plot.py FILE` (executable, no interpreter named) with a python3 first on the PATH that
    lacks numpy, h5py and matplotlib (a venv without packages): plot.py runs itself again under a
    python3 that has them and writes the PNG."""
    check(os.access(plot, os.X_OK), "tools/plot.py is not executable")
    venv = os.path.join(d, "venv")
    p = subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], capture_output=True, text=True)
    if p.returncode:
        print("skipped: no venv module (%s)" % p.stderr.strip()[-200:])
        sys.exit(77)
    vpy = os.path.join(venv, "bin", "python3")
    p = subprocess.run([vpy, "-c", "import numpy"], capture_output=True, text=True)
    check(p.returncode != 0, "the venv's python3 imports numpy: the test would not test anything")
    h5 = os.path.join(d, "q.h5")
    p = subprocess.run([exe, "solve", os.path.join(src, "configs", "quickstart.ini"), "--quiet", "--set",
                        "model.max_phonons=3", "--set", "spmv.backend=cpu", "--set", "output.file=" + h5],
                       capture_output=True, text=True)
    check(p.returncode == 0, "solve: exit %d %s" % (p.returncode, p.stderr[-300:]))
    env = dict(os.environ)
    env["PATH"] = os.path.join(venv, "bin") + os.pathsep + env.get("PATH", "")
    env.pop("PJDS_PLOT_REEXEC", None)
    png = os.path.join(d, "q.png")
    p = subprocess.run([plot, h5, "--out", png], capture_output=True, text=True, env=env)
    print("tools/plot.py FILE under a venv python3 without packages: exit %d, %s" % (p.returncode, p.stderr.strip()))
    check(p.returncode == 0 and os.path.getsize(png) > 1000 if os.path.exists(png) else False,
          "tools/plot.py FILE did not write the PNG (exit %d)" % p.returncode)


def case_two_keys(d):
    """A sweep over two keys (coupling x hubbard_u, grid): the sweep panel has one line per value of
    hubbard_u and eigenvalue, each along all the couplings in increasing order (not one sawtooth line
    through the points in file order)."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("skipped: no matplotlib")
        sys.exit(77)
    sys.path.insert(0, os.path.join(src, "tools"))
    import plot as plot_mod
    h5 = os.path.join(d, "sw.h5")
    p = subprocess.run([exe, "solve", os.path.join(src, "tests", "sweep", "hh_sweep.ini"), "--quiet", "--set",
                        "output.file=" + h5], capture_output=True, text=True)
    check(p.returncode == 0, "sweep: exit %d %s" % (p.returncode, p.stderr[-300:]))
    fig, ax = plt.subplots()
    with h5py.File(h5, "r") as f:
        plot_mod.draw_sweep(ax, f)
        g = f["sweep"]
        cpl, u, lam = g["coupling"][:], g["hubbard_u"][:], g["eigenvalues"][:]
    nev, us, cs = lam.shape[1], sorted(set(u.tolist())), sorted(set(cpl.tolist()))
    lines = ax.get_lines()
    print("two-key sweep: %d points, %d lines (expected %d = %d values of hubbard_u x %d eigenvalues), x axis %r"
          % (len(u), len(lines), len(us) * nev, len(us), nev, ax.get_xlabel()))
    check(len(lines) == len(us) * nev, "%d lines, expected one per hubbard_u value and eigenvalue" % len(lines))
    check(ax.get_xlabel() == "coupling", "x axis %r, expected the first swept key (coupling)" % ax.get_xlabel())
    for ln in lines:
        x, y = np.asarray(ln.get_xdata()), np.asarray(ln.get_ydata())
        check(x.tolist() == cs, "a line does not run along every coupling in order: %r" % x.tolist())
        # its values are one eigenvalue of one hubbard_u at each coupling
        ok = any(all(any(abs(y[i] - lam[k, j]) < 1e-14 and cpl[k] == x[i] and u[k] == uu for k in range(len(u)))
                     for i in range(len(x))) for uu in us for j in range(nev))
        check(ok, "a line mixes points of different hubbard_u values or eigenvalues")
    plt.close(fig)


with tempfile.TemporaryDirectory() as d:
    {"missing": case_missing, "convergence": case_convergence, "reexec": case_reexec,
     "two_keys": case_two_keys}[case](d)
sys.exit(fail)
