#!/usr/bin/env python3
"""check_cutoff.py -- the phonon cut-off of `solve` (app/cutoff.c; docs/models.md
"Phonon cut-off") against an independent reference: the Holstein-Hubbard ring
built here as a Kronecker sum (electrons by Jordan-Wigner, phonon occupation
vectors with total <= M), its ground state by scipy's eigsh.

usage: check_cutoff.py PJDS_BIN CASE
  warn       4 sites, 2 + 2 electrons, U = 4, g = 1, M = 6 (the issue's case):
             P(n = M) = 0.0246 from the reference; one warning line, the
             attributes cutoff_weight (= the reference) and cutoff_exceeded;
             no warning with cutoff_warn above the weight
  converged  1 electron, g = 1, M = 6: weight 9e-6, no warning; the normal
             basis: the ground state's weight, M = 2 warns, M = 6 does not;
             which = largest: no check
  auto       max_phonons = auto: M = start, start + 1, ... with E0 falling
             (variational), every step but the last >= max_phonons_tol, the
             last below it; the final solve, a direct solve at that M and the
             reference agree
  limit      auto stopped by max_phonons_limit: a warning, converged = 0
  memory     auto stopped by the memory plan (PJDS_HOST_PLAN_LIMIT): the next M
             is what a direct solve refuses, the last one runs
  bad        bad input: exit 2 and one line naming the key, no file
Exit 0 = pass, 1 = fail."""
import itertools
import math
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as sla

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_dense import hop, popcount  # noqa: E402

FAIL = []


def check(ok, what):
    if not ok:
        FAIL.append(what)
        print("FAIL: " + what)


def reference(L, nu, nd, U, g, M, t=1.0, w0=1.0):
    """E0 and P(n = M) of the periodic ring, site basis."""
    ups = [m for m in range(1 << L) if popcount(m) == nu]
    dns = [m for m in range(1 << L) if popcount(m) == nd]
    el = [(a, b) for a in ups for b in dns]
    ei = {s: i for i, s in enumerate(el)}
    ne = len(el)
    hel = np.zeros((ne, ne))
    bonds = [(i, (i + 1) % L) for i in range(L)]
    for c, (a, b) in enumerate(el):
        f = a | (b << L)
        hel[c, c] += U * popcount(a & b)
        for (i, j) in bonds:
            for off in (0, L):
                for (p, q) in ((i + off, j + off), (j + off, i + off)):
                    r = hop(f, p, q)
                    if r:
                        s, f2 = r
                        hel[ei[(f2 & ((1 << L) - 1), f2 >> L)], c] += -t * s
    dens = [np.array([((a >> i) & 1) + ((b >> i) & 1) for a, b in el], float) for i in range(L)]
    ph = [v for v in itertools.product(range(M + 1), repeat=L) if sum(v) <= M]
    pi = {v: k for k, v in enumerate(ph)}
    nph = np.array([sum(v) for v in ph], float)
    x = []
    for i in range(L):
        rows, cols, vals = [], [], []
        for k, v in enumerate(ph):
            if sum(v) < M:
                w = list(v)
                w[i] += 1
                r = pi[tuple(w)]
                rows += [r, k]
                cols += [k, r]
                vals += [math.sqrt(v[i] + 1)] * 2
        x.append(sp.csr_matrix((vals, (rows, cols)), shape=(len(ph), len(ph))))
    Iel, Iph = sp.identity(ne), sp.identity(len(ph))
    H = sp.kron(sp.csr_matrix(hel), Iph) + w0 * sp.kron(Iel, sp.diags(nph))
    for i in range(L):
        H = H - g * sp.kron(sp.diags(dens[i]), x[i])
    H = H.tocsr()
    w, v = sla.eigsh(H, k=1, which="SA", tol=1e-13)
    psi = v[:, 0]
    atM = np.tile(nph == M, ne)
    return w[0], float((psi[atM] ** 2).sum())


def config(path, L, nu, nd, U, g, M, extra=""):
    with open(path, "w") as f:
        f.write(f"""[model]
type = holstein-hubbard
sites = {L}
n_up = {nu}
n_down = {nd}
hubbard_u = {U}
coupling = {g}
max_phonons = {M}
{extra}
[solver]
nev = 1
tolerance = 1e-12
[spmv]
backend = cpu
""")


def run(exe, cfg, out, *sets, env=None, cmd="solve"):
    args = [exe, cmd, cfg, "--overwrite", "--set", "output.file=" + out]
    for s in sets:
        args += ["--set", s]
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run(args, capture_output=True, text=True, env=e)


def warnings(p):
    return [l for l in p.stderr.splitlines() if "warning" in l.lower()]


def case_warn(exe, tmp):
    cfg, out = os.path.join(tmp, "w.ini"), os.path.join(tmp, "w.h5")
    config(cfg, 4, 2, 2, 4.0, 1.0, 6)
    e0, w = reference(4, 2, 2, 4.0, 1.0, 6)
    check(0.02 < w < 0.03, "reference weight %g is not the issue's 0.025" % w)
    p = run(exe, cfg, out)
    check(p.returncode == 0, "warn: exit %d: %s" % (p.returncode, p.stderr[-800:]))
    ws = [l for l in warnings(p) if "max_phonons = 6" in l]
    check(len(ws) == 1, "warn: expected one cut-off warning, got %r" % warnings(p))
    with h5py.File(out) as f:
        check(abs(f["eigenvalues"][0] - e0) < 1e-8, "warn: E0 %r, reference %r" % (f["eigenvalues"][0], e0))
        a = f.attrs
        check(abs(a["cutoff_weight"] - w) < 1e-8, "warn: cutoff_weight %r, reference %r" % (a["cutoff_weight"], w))
        check(a["cutoff_exceeded"] == 1 and a["cutoff_warn"] == 1e-3, "warn: cutoff_exceeded/cutoff_warn")
        check(abs(f["observables/phonon_distribution"][0, -1] - a["cutoff_weight"]) < 1e-15,
              "warn: cutoff_weight is not the distribution's P(n = M)")
    # configs/quickstart.ini's coupling, 0.5: below the default threshold (docs/models.md)
    e0, w = reference(4, 2, 2, 4.0, 0.5, 6)
    p = run(exe, cfg, out, "model.coupling=0.5")
    with h5py.File(out) as f:
        check(p.returncode == 0 and not warnings(p) and abs(f.attrs["cutoff_weight"] - w) < 1e-8 and w < 1e-3,
              "warn: g = 0.5: weight %r (reference %r), warnings %r" % (f.attrs["cutoff_weight"], w, warnings(p)))
    p = run(exe, cfg, out, "model.cutoff_warn=0.05")
    check(p.returncode == 0 and not warnings(p), "warn: cutoff_warn = 0.05 still warns: %r" % warnings(p))
    with h5py.File(out) as f:
        check(f.attrs["cutoff_exceeded"] == 0 and f.attrs["cutoff_warn"] == 0.05, "warn: cutoff_warn = 0.05 attributes")


def case_converged(exe, tmp):
    cfg, out = os.path.join(tmp, "c.ini"), os.path.join(tmp, "c.h5")
    config(cfg, 4, 1, 0, 0.0, 1.0, 6)
    e0, w = reference(4, 1, 0, 0.0, 1.0, 6)
    check(w < 1e-4, "converged: reference weight %g" % w)
    p = run(exe, cfg, out)
    check(p.returncode == 0 and not warnings(p), "converged: exit %d, warnings %r" % (p.returncode, warnings(p)))
    with h5py.File(out) as f:
        check(abs(f.attrs["cutoff_weight"] - w) < 1e-9, "converged: cutoff_weight %r, reference %r"
              % (f.attrs["cutoff_weight"], w))
        check(f.attrs["cutoff_exceeded"] == 0, "converged: cutoff_exceeded")
        check("max_phonons_search" not in f, "converged: a search group without auto")
    # the normal basis, 3 pairs: the ground state's weight (pair 0), M = 2 warns, M = 6 does not
    for M, warn in ((2, 1), (6, 0)):
        p = run(exe, cfg, out, "model.phonon_basis=normal", "solver.nev=3", "model.max_phonons=%d" % M)
        check(p.returncode == 0, "normal: exit %d: %s" % (p.returncode, p.stderr[-800:]))
        with h5py.File(out) as f:
            d = f["observables/phonon_distribution"][:]
            check(f.attrs["cutoff_weight"] == d[0, -1] and f.attrs["cutoff_weight_eigenpair"] == 0,
                  "normal: cutoff_weight %r, distribution %r" % (f.attrs["cutoff_weight"], d[:, -1]))
            check(f.attrs["cutoff_exceeded"] == warn and len(warnings(p)) == warn and (d[0, -1] > 1e-3) == warn,
                  "normal M = %d: weight %g, warnings %r" % (M, d[0, -1], warnings(p)))
    # which = largest returns no ground state: no check, no attributes
    p = run(exe, cfg, out, "solver.which=largest", "model.max_phonons=2")
    with h5py.File(out) as f:
        check(p.returncode == 0 and not warnings(p) and "cutoff_weight" not in f.attrs, "which = largest: checked")


def auto_run(exe, tmp, name, extra, env=None):
    cfg, out = os.path.join(tmp, name + ".ini"), os.path.join(tmp, name + ".h5")
    config(cfg, 4, 1, 0, 0.0, 1.0, "auto", extra)
    p = run(exe, cfg, out, env=env)
    check(p.returncode == 0, "%s: exit %d: %s" % (name, p.returncode, p.stderr[-800:]))
    if p.returncode:
        return p, None
    with h5py.File(out) as f:
        g = f["max_phonons_search"]
        r = {"M": g["max_phonons"][:].astype(int), "E": g["energy"][:], "conv": g.attrs["converged"],
             "stopped": g.attrs["stopped"], "e0": f["eigenvalues"][0], "name": f.attrs["matrix_name"],
             "cfg": f.attrs["config_resolved"]}
    for k in ("stopped", "name", "cfg"):
        if isinstance(r[k], bytes):
            r[k] = r[k].decode()
    return p, r


def monotone(name, r, start):
    M, E = r["M"], r["E"]
    check(list(M) == list(range(start, start + len(M))), "%s: M sequence %r" % (name, M))
    check(np.all(np.diff(E) <= 1e-10), "%s: E0 rises with M (not variational): %r" % (name, E))
    check("M=%d " % M[-1] in r["name"], "%s: matrix_name %r is not for M = %d" % (name, r["name"], M[-1]))
    check(abs(r["e0"] - E[-1]) < 1e-9, "%s: final E0 %r, the search's last %r" % (name, r["e0"], E[-1]))
    check("max_phonons = auto" in r["cfg"], "%s: config_resolved does not keep max_phonons = auto" % name)


def case_auto(exe, tmp):
    tol = 1e-6
    p, r = auto_run(exe, tmp, "auto", "max_phonons_tol = %g\n" % tol)
    if not r:
        return
    monotone("auto", r, 1)
    d = -np.diff(r["E"])
    check(len(r["M"]) >= 3 and d[-1] < tol and np.all(d[:-1] >= tol), "auto: steps %r against tol %g" % (d, tol))
    check(r["conv"] == 1 and r["stopped"] == "tolerance" and not warnings(p), "auto: converged attributes, warnings")
    lines = [l for l in p.stderr.splitlines() if "max_phonons = auto: M = " in l]
    check(len(lines) == len(r["M"]) + 1, "auto: expected a log line per M and a summary: %r" % lines)
    Mf = int(r["M"][-1])
    cfg, out = os.path.join(tmp, "direct.ini"), os.path.join(tmp, "direct.h5")
    config(cfg, 4, 1, 0, 0.0, 1.0, Mf)
    q = run(exe, cfg, out)
    check(q.returncode == 0, "direct: exit %d" % q.returncode)
    with h5py.File(out) as f:
        check(abs(f["eigenvalues"][0] - r["e0"]) < 1e-9, "auto: E0 %r, direct solve at M = %d %r"
              % (r["e0"], Mf, f["eigenvalues"][0]))
    for M, E in zip(r["M"], r["E"]):
        e, _ = reference(4, 1, 0, 0.0, 1.0, int(M))
        check(abs(E - e) < 1e-8, "auto: E0(M = %d) = %r, reference %r" % (M, E, e))


def case_limit(exe, tmp):
    p, r = auto_run(exe, tmp, "limit", "max_phonons_start = 2\nmax_phonons_limit = 4\n"
                    "max_phonons_tol = 1e-12\n")
    if not r:
        return
    monotone("limit", r, 2)
    check(list(r["M"]) == [2, 3, 4] and r["conv"] == 0 and r["stopped"] == "limit", "limit: %r" % r)
    ws = warnings(p)
    check(len(ws) == 1 and "max_phonons_limit = 4" in ws[0], "limit: warnings %r" % ws)


def case_memory(exe, tmp):
    env = {"PJDS_HOST_PLAN_LIMIT": "300k"}
    p, r = auto_run(exe, tmp, "memory", "max_phonons_tol = 1e-13\n", env=env)
    if not r:
        return
    monotone("memory", r, 1)
    Mf = int(r["M"][-1])
    check(len(r["M"]) >= 2 and r["conv"] == 0 and r["stopped"].startswith("M = %d does not fit: " % (Mf + 1)) and
          "memory plan" in r["stopped"], "memory: %r" % r)
    check(len(warnings(p)) == 1 and "does not fit" in warnings(p)[0], "memory: warnings %r" % warnings(p))
    cfg, out = os.path.join(tmp, "m.ini"), os.path.join(tmp, "m.h5")
    for M, code in ((Mf, 0), (Mf + 1, 2)):
        config(cfg, 4, 1, 0, 0.0, 1.0, M)
        q = run(exe, cfg, out, env=env)
        check(q.returncode == code and (code == 0 or "memory plan" in q.stderr),
              "memory: a direct solve at M = %d: exit %d (expected %d): %s" % (M, q.returncode, code, q.stderr[-400:]))


def case_bad(exe, tmp):
    cfg, out = os.path.join(tmp, "b.ini"), os.path.join(tmp, "b.h5")
    auto = "max_phonons = auto"
    cases = [
        (auto + "\nmax_phonons_tol = -1e-6", [], "solve", "[model] max_phonons_tol: must be > 0"),
        (auto + "\nmax_phonons_start = 5\nmax_phonons_limit = 3", [], "solve",
         "[model] max_phonons_limit: must be > max_phonons_start = 5 (got 3)"),
        ("max_phonons = 4\nmax_phonons_tol = 1e-6", [], "solve", "[model] max_phonons_tol: only max_phonons = auto"),
        (auto, ["sweep.coupling=0.5, 1.0"], "solve", "[model] max_phonons: auto searches the cut-off in a single solve"),
        ("max_phonons = 4", ["sweep.max_phonons=2, auto"], "solve", "[sweep] max_phonons: auto searches"),
        (auto, ["solver.which=largest"], "solve", "[model] max_phonons: auto follows the ground-state energy"),
        (auto, [], "spectral", "[model] max_phonons: auto: only `solve` searches the cut-off; `spectral`"),
        ("max_phonons = 4\ncutoff_warn = 0", [], "solve", "[model] cutoff_warn: must be in (0, 1]"),
        ("max_phonons = 4\ncutoff_warn = 1.5", [], "solve", "[model] cutoff_warn: must be in (0, 1]"),
    ]
    for extra, sets, cmd, want in cases:
        with open(cfg, "w") as f:
            f.write("[model]\ntype = holstein-hubbard\nsites = 4\nn_up = 1\nn_down = 0\ncoupling = 1\n" + extra +
                    "\n[spmv]\nbackend = cpu\n")
        if os.path.exists(out):
            os.unlink(out)
        p = run(exe, cfg, out, *sets, cmd=cmd)
        lines = p.stderr.strip().splitlines()
        check(p.returncode == 2 and len(lines) == 1 and want in lines[0] and not os.path.exists(out),
              "bad %r %r: exit %d, stderr %r" % (extra, sets, p.returncode, p.stderr))


def main():
    exe, case = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        {"warn": case_warn, "converged": case_converged, "auto": case_auto, "limit": case_limit,
         "memory": case_memory, "bad": case_bad}[case](exe, tmp)
    print("%s: %s" % (case, "FAIL" if FAIL else "ok"))
    return 1 if FAIL else 0


if __name__ == "__main__":
    sys.exit(main())
