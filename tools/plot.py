#!/usr/bin/env python3
"""plot.py -- draw what a pjds-lanczos result file holds.

usage: tools/plot.py FILE.h5 [--out FILE.png] [--dpi 100] [--window CHEBFD.h5] [--combine OTHER.h5]

Panels, each drawn when the file has its data:
  sweep       eigenvalues against the first swept key, one line per value of the
              further keys (sweep files: /sweep)
  convergence residual estimate / max(|theta|, normest) per restart cycle against tol
              (what the solver tests), log scale (/convergence)
  phonons     phonon distribution P(n) of each eigenvector (/observables)
  correlations <n_0 n_r>, <S^z_0 S^z_r>, <n_0 x_r> (periodic) or the rows i = 0 (open)
  spectral    the spectral function A(w) with the sum rule (/spectral)
  akw         A(k, w) of `spectral` with operator = electron_removal | electron_addition and
              momentum = all (or site = all) as a colour map over k (x) and w (y), the way
              band-structure figures are drawn; with --combine OTHER.h5 (the other side:
              addition for a removal file or the reverse, same omega grid) the sum
              A(k, w) = A+(k, w) + A-(k, w), the chemical potential mu (the mean of the two
              sides' chemical_potential) a dashed line
  dos         the density of states of `dos` (/dos); with --window CHEBFD.h5 (a
              result of [solver] method = chebfd) its window [window_lower,
              window_upper] shaded, the eigenvalues found marked below the
              curve, and the estimated and found counts in the legend
The convergence panel shows what the solver tests: a pair has converged
when its residual estimate <= tol * max(|theta|, normest) (docs/config.md, [solver]
tolerance), so it plots estimate / max(|theta|, norm_estimate) against tol.
Energies and frequencies are in units of the hopping t.  Needs numpy, h5py
and matplotlib (python3-numpy python3-h5py python3-matplotlib, installed by
tools/setup-deps.sh): where the python3 that runs it lacks them, it runs
itself again under the first python3 that has them (/usr/bin/python3, then
the PATH); with none it says which to install (one line, exit 2).  Exit 2 for a file that is not a pjds-lanczos result or holds nothing to
draw."""
import argparse
import os
import sys


def other_python():
    """The first python3 other than this one that imports numpy, h5py and matplotlib, or None.
    `tools/plot.py FILE` runs under whatever python3 is first on the PATH (a conda or pyenv one often
    lacks these packages, while /usr/bin/python3 has them from tools/setup-deps.sh)."""
    if os.environ.get("PJDS_PLOT_REEXEC"):
        return None
    seen = {os.path.abspath(sys.executable or "")}  # (not the real path: a venv links to the system python)
    cands = ["/usr/bin/python3", "/usr/local/bin/python3"]
    for d in os.environ.get("PATH", "").split(os.pathsep):
        cands.append(os.path.join(d, "python3"))
    for c in cands:
        r = os.path.abspath(c)
        if r in seen or not os.access(r, os.X_OK) or "'" in r:
            continue
        seen.add(r)
        probe = os.popen("'%s' -c 'import numpy, h5py, matplotlib' 2>/dev/null && echo ok" % r).read()
        if probe.strip() == "ok":
            return c
    return None


def need(what, err):
    """Run again under a python3 that has the packages; else one line naming the missing package, exit
    status 2 (no traceback)."""
    alt = other_python()
    if alt:
        os.environ["PJDS_PLOT_REEXEC"] = "1"
        os.execv(alt, [alt, os.path.abspath(__file__)] + sys.argv[1:])
    print("plot.py: needs %s (%s): install python3-%s (apt) or `pip install %s`, or run it with a python3 that has it "
          "(e.g. /usr/bin/python3)" % (what, err, what, what), file=sys.stderr)
    sys.exit(2)


try:
    import numpy as np
except ImportError as e:
    need("numpy", e)
try:
    import h5py
except ImportError as e:
    need("h5py", e)


def panels_of(f):
    p = []
    if "sweep" in f and "eigenvalues" in f["sweep"]:
        p.append("sweep")
    if "convergence" in f and "residual_estimates" in f["convergence"]:
        p.append("convergence")
    if "observables" in f:
        p += ["phonons", "correlations"]
    if "spectral" in f:
        p.append("spectral")
        if "akw" in f["spectral"] and f["spectral/akw"].shape[0] > 1:
            p.append("akw")
    if "dos" in f:
        p.append("dos")
    return p


def sweep_order(f, g):
    """The swept keys in the order of [sweep] (the first varies slowest in a grid), from the file's
    sweep_definition; keys that take a single value are left out."""
    skip = ("eigenvalues", "residual_norms", "status", "rebuilt", "spmv_count", "solve_seconds")
    keys = [k for k in g if k not in skip and g[k].ndim == 1 and len(np.unique(g[k][:])) > 1]
    text = f.attrs.get("sweep_definition", "")
    text = text.decode() if isinstance(text, bytes) else str(text)
    order = []
    if "[sweep]" in text:
        for line in text.split("[sweep]", 1)[1].splitlines():
            k = line.split("=", 1)[0].strip()
            if k.startswith("["):
                break
            if k in keys and k not in order:
                order.append(k)
    return order + [k for k in keys if k not in order]


def draw_sweep(ax, f):
    """Eigenvalues against the first swept key; with further keys, one line per combination of their
    values (line style), the colour naming the eigenvalue."""
    g = f["sweep"]
    keys = sweep_order(f, g)
    lam = np.real(g["eigenvalues"][:])
    n = lam.shape[0]
    x = g[keys[0]][:] if keys else np.arange(n)
    rest = [g[k][:] for k in keys[1:]]
    combos = sorted(set(tuple(float(r[i]) for r in rest) for i in range(n))) if rest else [()]
    styles = ["-", "--", ":", "-."]
    markers = ["o", "s", "^", "v", "D", "x"]
    colours = ["C%d" % (j % 10) for j in range(lam.shape[1])]
    for c, combo in enumerate(combos):
        sel = np.array([tuple(float(r[i]) for r in rest) == combo for i in range(n)]) if rest else np.ones(n, bool)
        idx = np.where(sel)[0]
        idx = idx[np.argsort(x[idx], kind="stable")]
        tag = ", ".join("%s=%g" % (k, v) for k, v in zip(keys[1:], combo))
        for j in range(lam.shape[1]):
            label = ("E%d" % j if not tag else "E%d, %s" % (j, tag)) if (len(combos) * lam.shape[1] <= 12 or j == 0) \
                else None
            ax.plot(x[idx], lam[idx, j], styles[c % 4], marker=markers[c % 6], ms=3, color=colours[j], label=label)
    ax.set_xlabel(keys[0] if keys else "point")
    ax.set_ylabel("eigenvalue / t")
    ax.set_title("eigenvalues along the sweep" + (" (one line per %s)" % ", ".join(keys[1:]) if keys[1:] else ""))
    ax.legend(fontsize=6)


def _modulus(a):
    """|z| of Ritz values: float64, complex128, or an {r, i} compound read as a structured array."""
    if a.dtype.names and "r" in a.dtype.names and "i" in a.dtype.names:
        return np.hypot(a["r"], a["i"])
    return np.abs(a)


def convergence_series(f):
    """The quantity the solver's convergence test compares with tol, per
    restart cycle (lanczos.c, krylov_schur.c): pair i has converged when
    residual_estimate_i <= tol * max(|theta_i|, normest).  Returns
    (iterations, rel, tol, normest) with rel[c, i] = estimate / max(|theta|,
    normest) (cycles x nev), so that converged pairs sit at or below tol.
    normest is the file's norm_estimate, the value of the last cycle; the
    solver's normest only grows (max of the operator's estimate and every
    |Ritz value| so far), so earlier cycles used one <= it and their points
    may sit slightly lower than the solver saw them.  Without norm_estimate
    (rel = None) the test cannot be reproduced."""
    g = f["convergence"]
    est = np.abs(g["residual_estimates"][:])
    it = g["iterations"][:] if "iterations" in g else np.arange(est.shape[0])
    tol = float(f.attrs["tolerance"]) if "tolerance" in f.attrs else None
    if "norm_estimate" not in f.attrs or "ritz_values" not in g:
        return it, None, tol, None
    normest = float(f.attrs["norm_estimate"])
    scale = np.maximum(_modulus(g["ritz_values"][:]), normest)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(scale > 0, est / scale, est)
    return it, rel, tol, normest


def draw_convergence(ax, f):
    it, rel, tol, normest = convergence_series(f)
    if rel is None:  # an old file: only the absolute estimates, no threshold to draw against
        r = np.abs(f["convergence/residual_estimates"][:])
        for j in range(r.shape[1]):
            ax.semilogy(it, np.maximum(r[:, j], 1e-300), label="pair %d" % j)
        ax.set_ylabel("residual estimate (absolute; no norm_estimate in the file)")
    else:
        for j in range(rel.shape[1]):
            ax.semilogy(it, np.maximum(rel[:, j], 1e-300), label="pair %d" % j)
        if tol is not None:
            ax.axhline(tol, color="k", ls=":", lw=1, label="tol = %g (converged below)" % tol)
        ax.set_ylabel("residual estimate / max(|theta|, normest)")
        ax.text(0.02, 0.02, "normest = %.6g (norm_estimate)" % normest, transform=ax.transAxes, fontsize=7)
    ax.set_xlabel("SpMVs")
    ax.set_title("convergence")
    ax.legend(fontsize=7)


def draw_phonons(ax, f):
    P = f["observables/phonon_distribution"][:]
    n = np.arange(P.shape[1])
    w = 0.8 / P.shape[0]
    for j in range(P.shape[0]):
        ax.bar(n + j * w, P[j], width=w, label="state %d" % j)
    ax.set_yscale("log")
    ax.set_xlabel("phonons n (in the basis)")
    ax.set_ylabel("P(n)")
    ax.set_title("phonon distribution")
    ax.legend(fontsize=7)


def draw_correlations(ax, f):
    o = f["observables"]
    for name, lab in (("density_correlation", "<n_0 n_r>"), ("spin_correlation", "<S^z_0 S^z_r>"),
                      ("electron_phonon_correlation", "<n_0 x_r>")):
        c = o[name][:]
        c0 = c[0] if c.ndim == 2 else c[0, 0]
        ax.plot(np.arange(len(c0)), c0, "o-", label=lab)
    ax.set_xlabel("distance r (sites)")
    ax.set_ylabel("correlation (ground state)")
    ax.set_title("correlation functions")
    ax.legend(fontsize=7)


def draw_spectral(ax, f):
    s = f["spectral"]
    w, a = s["omega"][:], s["intensity"][:]
    op = s.attrs.get("operator", "O")
    if isinstance(op, bytes):
        op = op.decode()
    ax.plot(w, a, lw=1.2)
    integral = np.trapz(a, w) if hasattr(np, "trapz") else np.trapezoid(a, w)
    ax.set_xlabel("omega / t (excitation energy)")
    ax.set_ylabel("A(omega) t")
    q = "" if op == "current" else ", q index %d" % int(s.attrs.get("momentum", 0))
    if "akw" in s and s["akw"].shape[0] > 1:  # A(k, w) of every momentum (or site): their mean here
        q = ", mean over %d %s" % (s["akw"].shape[0], "sites" if _text(s.attrs.get("resolved_by")) == "site" else "momenta")
    ax.set_title("%s%s, eta = %g t" % (op, q, s.attrs.get("broadening", 0)))
    ax.text(0.98, 0.95, "sum rule <phi|phi> = %.6g\nintegral over the window = %.6g" % (s.attrs["norm"], integral),
            transform=ax.transAxes, ha="right", va="top", fontsize=8)


def _text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def k_labels(f, ks):
    """tick labels of the momenta: q / pi on a chain, (qx, qy) / pi on a lattice, sites as they are"""
    s = f["spectral"]
    if _text(s.attrs.get("resolved_by", "momentum")) == "site":
        return ["%d" % k for k in ks], "site"
    o = f["observables"].attrs if "observables" in f else {}
    lx, ly = int(o.get("lx", 0)), int(o.get("ly", 0))
    if lx <= 0:  # the chain
        return ["%.2g" % (2.0 * k / len(ks)) for k in ks], "q / pi"
    return ["(%.2g,%.2g)" % (2.0 * (k % lx) / lx, 2.0 * (k // lx) / ly) for k in ks], "(qx, qy) / pi"


def draw_akw(ax, f):
    s = f["spectral"]
    w, A, ks = s["omega"][:], s["akw"][:], s["momenta"][:].astype(int)
    title = "%s %s" % (_text(s.attrs["operator"]), _text(s.attrs.get("spin", "")))
    mus = [float(s.attrs.get("chemical_potential", np.nan))]
    if OTHER is not None:
        o = OTHER["spectral"]
        if o["akw"].shape != A.shape or not np.allclose(o["omega"][:], w):
            print("plot.py: --combine: the two files' A(k, w) grids differ", file=sys.stderr)
            sys.exit(2)
        A = A + o["akw"][:]
        mus.append(float(o.attrs.get("chemical_potential", np.nan)))
        title = "A(k, w) = removal + addition, %s" % _text(s.attrs.get("spin", ""))
    m = ax.pcolormesh(np.arange(len(ks)), w, A.T, shading="nearest", cmap="magma")
    ax.figure.colorbar(m, ax=ax, label="A(k, w) t")
    labels, xl = k_labels(f, ks)
    ax.set_xticks(np.arange(len(ks)))
    ax.set_xticklabels(labels, fontsize=7, rotation=45 if len(ks) > 8 else 0)
    ax.set_xlabel(xl)
    ax.set_ylabel("omega / t (from the N-sector ground state)")
    if OTHER is not None and np.all(np.isfinite(mus)):
        mu = 0.5 * (mus[0] + mus[1])
        ax.axhline(mu, color="w", ls="--", lw=0.8, label="mu = %.4g" % mu)
        ax.legend(loc="upper left", fontsize=7)
    ax.set_title("%s, eta = %g t" % (title, s.attrs.get("broadening", 0)), fontsize=9)


def draw_dos(ax, f):
    g = f["dos"]
    E, rho = g["energy"][:], g["density"][:]
    kern = g.attrs.get("kernel", "")
    if isinstance(kern, bytes):
        kern = kern.decode()
    ax.plot(E, rho, lw=1.0)
    ax.set_xlabel("E / t")
    ax.set_ylabel("density of states rho(E) t")
    ax.set_title("KPM: N = %d moments, R = %d vectors, %s kernel" % (int(g.attrs["N"]), int(g.attrs["R"]), kern))
    ax.text(0.98, 0.95, "integral = %.6f" % g.attrs["integral"], transform=ax.transAxes, ha="right", va="top",
            fontsize=8)
    if WINDOW:
        w = WINDOW
        ax.axvspan(w["a"], w["b"], color="tab:orange", alpha=0.25,
                   label="chebfd window [%.6g, %.6g]: %d found, KPM estimate %.1f +- %.1f" %
                   (w["a"], w["b"], w["found"], w["est"], w["err"]))
        ax.plot(w["values"], np.zeros(len(w["values"])), "|", color="tab:red", ms=12, label="eigenvalues found")
        ax.legend(loc="upper left", fontsize=7)


WINDOW = None  # --window: the chebfd result's window, counts and eigenvalues


def read_window(path):
    """The window of a chebfd result file (None with a message when it has none)."""
    try:
        with h5py.File(path, "r") as f:
            if "window_lower" not in f.attrs:
                print("plot.py: %s: no chebfd window (attribute window_lower)" % path, file=sys.stderr)
                return None
            return {"a": float(f.attrs["window_lower"]), "b": float(f.attrs["window_upper"]),
                    "found": int(f.attrs["found_count"]), "est": float(f.attrs["estimated_count"]),
                    "err": float(f.attrs["estimated_count_error"]), "values": f["eigenvalues"][:]}
    except OSError as e:
        print("plot.py: %s: cannot open as HDF5 (%s)" % (path, e), file=sys.stderr)
        return None


DRAW = {"sweep": draw_sweep, "convergence": draw_convergence, "phonons": draw_phonons,
        "correlations": draw_correlations, "spectral": draw_spectral, "dos": draw_dos, "akw": draw_akw}
OTHER = None  # --combine: the other side's open file


def pyplot():
    """matplotlib.pyplot with the Agg backend; without matplotlib one line and exit 2."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        need("matplotlib", e)
    return plt


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("--out", help="PNG file (default: FILE with .png)")
    ap.add_argument("--dpi", type=int, default=100)
    ap.add_argument("--window", help="a chebfd result file: mark its window and eigenvalues on the DOS")
    ap.add_argument("--combine", help="the other side of A(k, w) (electron_addition for a removal file, or the "
                    "reverse): draw their sum with the chemical potential")
    a = ap.parse_args()
    plt = pyplot()  # first: without matplotlib nothing can be drawn
    global WINDOW
    if a.window:
        WINDOW = read_window(a.window)
        if WINDOW is None:
            return 2
    global OTHER
    if a.combine:
        try:
            OTHER = h5py.File(a.combine, "r")
        except OSError as e:
            print("plot.py: %s: cannot open as HDF5 (%s)" % (a.combine, e), file=sys.stderr)
            return 2
        if "spectral" not in OTHER or "akw" not in OTHER["spectral"]:
            print("plot.py: %s: no /spectral/akw to combine" % a.combine, file=sys.stderr)
            return 2
    try:
        f = h5py.File(a.file, "r")
    except OSError as e:
        print("plot.py: %s: cannot open as HDF5 (%s)" % (a.file, e), file=sys.stderr)
        return 2
    with f:
        if f.attrs.get("program") not in ("pjds-lanczos", b"pjds-lanczos"):
            print("plot.py: %s: not a pjds-lanczos result file (root attribute program)" % a.file, file=sys.stderr)
            return 2
        panels = panels_of(f)
        if not panels:
            print("plot.py: %s: nothing to draw" % a.file, file=sys.stderr)
            return 2
        n = len(panels)
        cols = min(n, 2)
        rows = (n + cols - 1) // cols
        fig, axes = plt.subplots(rows, cols, figsize=(6 * cols, 4 * rows), squeeze=False)
        for ax, p in zip(axes.flat, panels):
            DRAW[p](ax, f)
        for ax in list(axes.flat)[n:]:
            ax.axis("off")
        name = f.attrs.get("matrix_name", "")
        if isinstance(name, bytes):
            name = name.decode()
        fig.suptitle(name, fontsize=9)
        fig.tight_layout()
        out = a.out or (a.file.rsplit(".", 1)[0] + ".png")
        fig.savefig(out, dpi=a.dpi)
        print("plot.py: wrote %s (%s)" % (out, ", ".join(panels)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
