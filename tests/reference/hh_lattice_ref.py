#!/usr/bin/env python3
"""hh_lattice_ref.py -- Holstein-Hubbard models on lattices (issue 30)
against a dense NumPy build from the definition, written apart from the C
generator: fermions as Jordan-Wigner matrices on the Fock space of 2L modes
(c_p = Z...Z a, the products taken here), restricted to the sector; phonons
as ladder matrices on occupation vectors of total <= M; the normal basis
from a random orthonormal completion of the uniform vector (the truncated
space, total <= M over the non-uniform modes, and so the spectrum, do not
depend on which completion); the lattice's bonds enumerated here from its
definition (docs/models.md "Lattices").

Checks, per case: the whole spectrum of the exported matrix (dense eigvalsh)
equals the reference's to 1e-10; `solve` (nev = 4, observables) gives the
lowest eigenvalues and, summed over each degenerate level, the observables
(energies, double occupancy, phonon number and distribution, correlations:
C[i][j] or, with translations, C[r]) to 1e-10.

usage: hh_lattice_ref.py PJDS_BIN GROUP
  GROUP: chain | ladder | square | triangular | bonds (every case of the kind,
         without phonons and in both phonon bases)
       | signs (a triangle where the fermion sign matters: the reference with the
         sign dropped differs, the C build equals the right one)
       | formats (ladder and a bond list: format = pjds, compressed and matrix_free agree)
       | ring (lattice = bonds with the ring's bonds equals lattice = chain)
       | spectral (`spectral` on square and triangular tori against the Lehmann sum: density, phonon
         displacement at momenta of the 2-D torus, the current along x)
       | spectral2 (the same on a ladder and, at momentum 0, a bond list)
       | sweep (a [sweep] of a value key and of lx on lattices)
       | bad (each bad input: exit 2, one line naming the key, no output file)
Exit 0 = pass, 1 = fail."""
import itertools
import math
import os
import subprocess
import sys
import tempfile

# small problems: one thread each for NumPy's BLAS and the C program (spinning thread pools on a
# shared machine cost more than they give); the results do not depend on the thread count
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import h5py  # noqa: E402
import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

TOL = 1e-10


# ---- lattices from their definition -------------------------------------------
def grid_bonds(kind, lx, ly, bx, by):
    """(a, b, jx) of the lx x ly lattice, site x + lx y; jx: the x component of a -> b (the
    triangular lattice's a2 = (-1/2, sqrt(3)/2): its y bond -1/2, its diagonal a1 + a2 +1/2)"""
    if kind == "ladder":
        ly, by = 2, "open"
    jy = -0.5 if kind == "triangular" else 0.0
    out = []
    for y in range(ly):
        for x in range(lx):
            right = x + 1 < lx or bx == "periodic"
            up = y + 1 < ly or by == "periodic"
            s = x + lx * y
            if right:
                out.append((s, (x + 1) % lx + lx * y, 1.0))
            if up:
                out.append((s, x + lx * ((y + 1) % ly), jy))
            if kind == "triangular" and right and up:
                out.append((s, (x + 1) % lx + lx * ((y + 1) % ly), 1.0 + jy))
    return out, lx * ly


def translations(kind, lx, ly, bx, by):
    """site maps i -> i + r for r = rx + lx ry, or None without translation symmetry"""
    if kind == "bonds" or bx != "periodic" or (kind != "ladder" and kind != "chain" and by != "periodic"):
        return None
    L = lx * ly
    return [[(i % lx + r % lx) % lx + lx * ((i // lx + r // lx) % ly) for i in range(L)] for r in range(L)]


# ---- the dense model --------------------------------------------------------------
class Ref:
    def __init__(self, L, bonds, nu, nd, t, U, w0, g, M, basis, sign=True, seed=7, jx=None, geom=None):
        self.L, self.M, self.basis, self.w0, self.g = L, M, basis, w0, g
        nm = 2 * L
        dim = 1 << nm
        keep = [f for f in range(dim) if bin(f & ((1 << L) - 1)).count("1") == nu and bin(f >> L).count("1") == nd]
        P = sp.csr_matrix((np.ones(len(keep)), (np.arange(len(keep)), keep)), shape=(len(keep), dim))
        self.keep = keep  # the sector's Fock states, ascending (akw_ref.py builds c_j between sectors on them)
        f = np.arange(dim)

        def ann(p):  # c_p on the Fock space, Jordan-Wigner (sign=False: no string, a wrong sign)
            occ = (f >> p) & 1
            par = np.array([bin(x & ((1 << p) - 1)).count("1") & 1 for x in f]) if sign else np.zeros(dim, int)
            rows = (f ^ (1 << p))[occ == 1]
            vals = np.where(par == 1, -1.0, 1.0)[occ == 1]
            return sp.csr_matrix((vals, (rows, f[occ == 1])), shape=(dim, dim))

        c = [ann(p) for p in range(nm)]
        n = [(c[p].T @ c[p]) for p in range(nm)]
        Hel = sp.csr_matrix((dim, dim))
        for (a, b, tf) in bonds:
            for off in (0, L):
                h = c[a + off].T @ c[b + off]
                Hel = Hel - t * tf * (h + h.T)
        for i in range(L):
            Hel = Hel + U * (n[i] @ n[i + L])
        R = lambda A: (P @ A @ P.T).toarray()
        self.Hel = R(Hel)
        # the current's K = sum_{bonds a -> b, s} jx f (c+_b c_a - c+_a c_b)
        K = sp.csr_matrix((dim, dim))
        for (a, b, tf), w in zip(bonds, jx if jx is not None else [1.0] * len(bonds)):
            for off in (0, L):
                h = c[b + off].T @ c[a + off]
                K = K + w * tf * (h - h.T)
        self.Kel = R(K)
        self.t, self.geom = t, geom
        self.ni = [np.diag(R(n[i] + n[i + L])) for i in range(L)]
        self.szi = [0.5 * np.diag(R(n[i] - n[i + L])) for i in range(L)]
        self.docc = np.diag(R(sum(n[i] @ n[i + L] for i in range(L))))
        self.ne = nu + nd
        # phonons
        modes = L if basis == "site" else L - 1
        phs = [v for v in itertools.product(range(M + 1), repeat=modes) if sum(v) <= M]
        idx = {v: k for k, v in enumerate(phs)}
        nph = len(phs)
        X = []
        for k in range(modes):
            B = np.zeros((nph, nph))
            for v in phs:
                if v[k] > 0:
                    w = list(v)
                    w[k] -= 1
                    B[idx[tuple(w)], idx[v]] = math.sqrt(v[k])
            X.append(B + B.T)
        self.Nph = np.diag([float(sum(v)) for v in phs])
        self.phtot = [sum(v) for v in phs]
        if basis == "site":
            self.u = np.eye(L)
            self.shift = 0.0
            self.beta0 = 0.0
        else:  # any orthonormal completion of the uniform vector
            rng = np.random.default_rng(seed)
            Q, _ = np.linalg.qr(np.column_stack([np.ones(L), rng.standard_normal((L, L - 1))]))
            self.u = Q[:, 1:].T  # modes x sites
            self.shift = -g * g * self.ne ** 2 / (L * w0)
            self.beta0 = g * self.ne / (math.sqrt(L) * w0)
        nel = self.Hel.shape[0]
        Iel, Iph = np.eye(nel), np.eye(nph)
        H = np.kron(self.Hel, Iph) + w0 * np.kron(Iel, self.Nph) + self.shift * np.eye(nel * nph)
        self.rho = [sum(self.u[k, i] * self.ni[i] for i in range(L)) for k in range(modes)]
        Hg = sum(np.kron(np.diag(self.rho[k]), X[k]) for k in range(modes))
        H = H - g * Hg
        self.H, self.X, self.nel, self.nph = H, X, nel, nph
        self.Hkin = np.kron(self.Hel - U * np.diag(self.docc), Iph)
        self.Hg = Hg
        self.U = U

    def op_parts(self, kind, m):
        """the real parts C, S of O_q (docs/models.md "Spectral functions"), q . r_j from the lattice's
        geometry (lx, ly): 2 pi (mx x / lx + my y / ly)"""
        L, nph = self.L, self.nph
        if kind == "current":
            return [self.t * np.kron(self.Kel, np.eye(nph))]
        lx, ly = self.geom or (L, 1)  # no geometry (bonds): momentum 0 only, every phase 0
        ph = [2 * math.pi * ((m % lx) * (j % lx) / lx + (m // lx) * (j // lx) / ly) for j in range(L)]
        parts = []
        for trig in (np.cos, np.sin):
            cj = trig(ph) / math.sqrt(L)
            if np.max(np.abs(cj)) < 1e-12:
                continue
            if kind == "density":
                parts.append(np.kron(np.diag(sum(cj[j] * self.ni[j] for j in range(L))), np.eye(nph)))
            else:  # x_j = sum_k u_k(j) X_k (+ a constant, which q != 0 cancels)
                xs = sum(cj[j] * sum(self.u[k, j] * self.X[k] for k in range(len(self.X))) for j in range(L))
                parts.append(np.kron(np.eye(self.nel), xs))
        return parts

    def observables(self, psi, trans):
        L, nph = self.L, self.nph
        ex = lambda d: float(psi @ (np.kron(d, np.ones(nph)) * psi))  # a diagonal electron operator
        o = {}
        o["double_occupancy"] = ex(self.docc) / L
        nb = float(psi @ (np.kron(np.ones(self.nel), np.diag(self.Nph)) * psi))
        o["phonon_number"] = nb + self.beta0 ** 2
        o["energy_hubbard"] = self.U * ex(self.docc)
        o["energy_phonon"] = self.w0 * o["phonon_number"]
        o["energy_coupling"] = -self.g * float(psi @ (self.Hg @ psi)) - 2 * self.w0 * self.beta0 ** 2
        o["energy_kinetic"] = float(psi @ (self.Hkin @ psi))
        w = psi.reshape(self.nel, nph) ** 2
        o["phonon_distribution"] = np.array([w[:, [k for k in range(nph) if self.phtot[k] == m]].sum()
                                             for m in range(self.M + 1)])
        nn = np.array([[ex(self.ni[i] * self.ni[j]) for j in range(L)] for i in range(L)])
        ss = np.array([[ex(self.szi[i] * self.szi[j]) for j in range(L)] for i in range(L)])
        # x_j = sum_k u_k(j) x_k (+ the uniform mode's 2 beta0 / sqrt(L))
        nx = np.zeros((L, L))
        Psi = psi.reshape(self.nel, nph)
        for j in range(L):
            xj = sum(self.u[k, j] * self.X[k] for k in range(len(self.X)))
            d = np.sum(Psi * (Psi @ xj), axis=1)  # <psi_e| x_j |psi_e> per electron configuration e
            for i in range(L):
                nx[i, j] = float(self.ni[i] @ d) + 2 * self.beta0 / math.sqrt(L) * ex(self.ni[i])
        for name, C in (("density_correlation", nn), ("spin_correlation", ss), ("electron_phonon_correlation", nx)):
            o[name] = C if trans is None else np.array([np.mean([C[i, trans[r][i]] for i in range(L)])
                                                        for r in range(L)])
        return o


# ---- the C program ----------------------------------------------------------------
def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        print("FAIL: %s: exit %d\n%s" % (" ".join(cmd), p.returncode, p.stderr[-2000:]))
        sys.exit(1)
    return p


def config(path, keys, out, extra=""):
    with open(path, "w") as f:
        f.write("[model]\ntype = holstein-hubbard\n")
        for k, v in keys.items():
            f.write(f"{k} = {v}\n")
        f.write(f"\n[solver]\nnev = 4\ntolerance = 1e-12\n\n[output]\nfile = {out}\n{extra}")


def exported(exe, tmp, keys):
    cfg, m = os.path.join(tmp, "e.ini"), os.path.join(tmp, "m.h5")
    config(cfg, keys, os.path.join(tmp, "unused.h5"))
    run([exe, "export", cfg, m, "--overwrite", "--quiet"])
    with h5py.File(m) as f:
        n = int(f.attrs["rows"])
        A = sp.csr_matrix((f["values"][:], f["col_idx"][:], f["row_ptr"][:]), shape=(n, n))
    return A


def solved(exe, tmp, keys, fmt=None):
    cfg, out = os.path.join(tmp, "s.ini"), os.path.join(tmp, "s.h5")
    config(cfg, keys, out, "" if fmt is None else f"\n[spmv]\nformat = {fmt}\n")
    run([exe, "solve", cfg, "--overwrite", "--quiet"])
    with h5py.File(out) as f:
        lam = f["eigenvalues"][:]
        obs = {k: f["observables"][k][:] for k in f["observables"]}
        how = f["observables"].attrs["correlations"]
        a = f["observables"].attrs
        solved.attrs = {k: (a[k].decode() if isinstance(a[k], bytes) else (str(a[k]) if k == "lattice" else a[k]))
                        for k in a}
        used = f.attrs["spmv_format"]
    used = used.decode() if isinstance(used, bytes) else str(used)
    if fmt is not None and used != fmt:
        print(f"FAIL: format = {fmt} asked, {used} ran")
        sys.exit(1)
    return lam, obs, how


def clusters(ev, n, tol=1e-8):
    out, cur = [], [0]
    for i in range(1, len(ev)):
        if abs(ev[i] - ev[cur[-1]]) < tol * max(1, abs(ev[i])):
            cur.append(i)
        else:
            out.append(cur)
            cur = [i]
    out.append(cur)
    return [c for c in out if c[-1] < n]


def model_of(keys):
    kind = keys.get("lattice", "chain")
    bx = keys.get("boundary_x", keys.get("boundary", "periodic"))
    by = keys.get("boundary_y", keys.get("boundary", "periodic"))
    if kind == "chain":
        L = int(keys["sites"])
        b = [(i, i + 1) for i in range(L - 1)] + ([(L - 1, 0)] if bx == "periodic" else [])
        bonds, trans = [(a, c, 1.0) for a, c in b], translations("chain", L, 1, bx, "open")
        jx, geom = [1.0] * len(b), (L, 1)
    elif kind == "bonds":
        bonds = []
        for e in keys["bonds"].split(","):
            ab, _, tf = e.strip().partition(":")
            a, c = ab.split("-")
            bonds.append((int(a), int(c), float(tf) if tf else 1.0))
        L = int(keys.get("sites", 1 + max(max(a, c) for a, c, _ in bonds)))
        trans, jx, geom = None, [1.0] * len(bonds), None
    else:
        lx, ly = int(keys["lx"]), int(keys.get("ly", 2))
        b, L = grid_bonds(kind, lx, ly, bx, by)
        bonds, trans = [(a, c, 1.0) for a, c, _ in b], translations(kind, lx, ly, bx, by)
        jx, geom = [w for _, _, w in b], (lx, ly if kind != "ladder" else 2)
    ref = Ref(L, bonds, int(keys["n_up"]), int(keys["n_down"]), float(keys.get("hopping", 1.0)),
              float(keys.get("hubbard_u", 0.0)), float(keys.get("phonon_frequency", 1.0)),
              float(keys.get("coupling", 0.0)), int(keys["max_phonons"]), keys.get("phonon_basis", "site"),
              jx=jx, geom=geom)
    return ref, trans


def check_case(exe, tmp, name, keys, fmt=None):
    ref, trans = model_of(keys)
    ev, V = np.linalg.eigh(ref.H)
    fail = 0
    A = exported(exe, tmp, keys)
    asym = abs(A - A.T).max() if A.nnz else 0.0
    mine = np.linalg.eigvalsh(A.toarray())
    e_spec = np.max(np.abs(mine - ev)) if len(mine) == len(ev) else float("inf")
    if len(mine) != len(ev) or e_spec > TOL or asym != 0.0:
        print(f"FAIL: {name}: spectrum of the exported matrix: {len(mine)} vs {len(ev)} rows, max deviation {e_spec:.2e}, "
              f"asymmetry {asym:.1e}")
        fail = 1
    # info (the memory plan included) on the lattice: the rows
    cfg = os.path.join(tmp, "i.ini")
    config(cfg, keys, os.path.join(tmp, "unused.h5"))
    info = run([exe, "info", cfg]).stdout
    rows = [l.split()[1] for l in info.splitlines() if l.startswith("rows:")]
    if rows != [str(len(ev))] or "memory_host_bytes_per_rank" not in info:
        print(f"FAIL: {name}: info says rows {rows}, the reference has {len(ev)}")
        fail = 1
    lam, obs, how = solved(exe, tmp, keys, fmt)
    kind = keys.get("lattice", "chain")
    if kind != "chain" and (solved.attrs.get("lattice") != kind or
                            solved.attrs.get("lx") != (0 if kind == "bonds" else int(keys["lx"]))):
        print(f"FAIL: {name}: /observables attributes {solved.attrs}")
        fail = 1
    e_lam = np.max(np.abs(lam - ev[: len(lam)]))
    if e_lam > TOL:
        print(f"FAIL: {name}: solve's eigenvalues {lam} vs {ev[:len(lam)]}")
        fail = 1
    if (trans is not None) != ("C[r]" in str(how)):
        print(f"FAIL: {name}: correlations '{how}' but translations {trans is not None}")
        fail = 1
    worst, levels = 0.0, 0
    for c in clusters(ev, len(lam)):
        if c[-1] + 1 < len(ev) and abs(ev[c[-1] + 1] - ev[c[-1]]) < 1e-8:
            continue  # a level cut by nev
        levels += 1
        refs = [ref.observables(V[:, i], trans) for i in c]
        for k, r0 in refs[0].items():
            theirs = sum(np.asarray(r[k]) for r in refs)
            ours = sum(np.asarray(obs[k][i]) for i in c)
            e = float(np.max(np.abs(ours - theirs)))
            worst = max(worst, e)
            if e > TOL:
                print(f"FAIL: {name}: {k}, levels {c}: deviation {e:.2e}\n ours {ours}\n ref  {theirs}")
                fail = 1
    if levels == 0:
        print(f"FAIL: {name}: no level to compare")
        fail = 1
    print(f"{'FAIL' if fail else 'ok'}: {name}: N = {len(ev)}, spectrum {e_spec:.1e}, solve {e_lam:.1e}, "
          f"observables of {levels} level(s) {worst:.1e}{'' if fmt is None else ', format = ' + fmt}")
    return fail


PH = {"none": dict(max_phonons=0), "site": dict(max_phonons=2, coupling=0.7, phonon_frequency=0.9),
      "normal": dict(max_phonons=2, coupling=0.7, phonon_frequency=0.9, phonon_basis="normal")}
RANDOM_BONDS = "0-1:1.0, 0-3:0.6, 1-2:0.9, 1-4:-0.4, 2-3:1.1, 3-4:0.75, 0-4:0.3"
GROUPS = {
    "chain": [("chain open L=5", dict(sites=5, boundary="open", n_up=2, n_down=1, hubbard_u=3.0))],
    "ladder": [("ladder 3x2 periodic", dict(lattice="ladder", lx=3, n_up=2, n_down=1, hubbard_u=4.0)),
               ("ladder 2x2 open", dict(lattice="ladder", lx=2, boundary_x="open", n_up=1, n_down=1, hubbard_u=2.0))],
    "square": [("square 2x2 periodic", dict(lattice="square", lx=2, ly=2, n_up=2, n_down=1, hubbard_u=4.0)),
               ("square 2x3 x periodic, y open", dict(lattice="square", lx=2, ly=3, boundary_y="open", n_up=1,
                                                     n_down=1, hubbard_u=3.0))],
    "triangular": [("triangular 2x3 periodic", dict(lattice="triangular", lx=2, ly=3, n_up=1, n_down=1,
                                                    hubbard_u=3.0)),
                   ("triangular 2x2 open", dict(lattice="triangular", lx=2, ly=2, boundary="open", n_up=2, n_down=1,
                                                hubbard_u=2.5))],
    "bonds": [("bonds random 5 sites", dict(lattice="bonds", bonds=RANDOM_BONDS, n_up=2, n_down=1, hubbard_u=3.5)),
              ("bonds triangle + impurity", dict(lattice="bonds", bonds="0-1, 1-2, 2-0:0.5", sites=4, n_up=1,
                                                 n_down=1, hubbard_u=1.5))],
}


def shrink(keys, ph):
    """phonons on the 6-site cases: M = 1 keeps the dense references small"""
    k = dict(keys, **PH[ph])
    L = k.get("sites") or (int(k.get("lx", 0)) * int(k.get("ly", 2)) if k.get("lattice") not in (None, "bonds") else 5)
    if ph != "none" and int(L) >= 6:
        k["max_phonons"] = 1
    return k


def check_spectral(exe, tmp, name, keys, kind, m, zero=False):
    """`spectral` against the Lehmann sum of the dense reference (the ground state nondegenerate)"""
    ref, _ = model_of(keys)
    ev, V = np.linalg.eigh(ref.H)
    if ev[1] - ev[0] < 1e-6:
        print(f"FAIL: {name}: degenerate ground state, pick another case")
        return 1
    eta = 0.1
    cfg, out = os.path.join(tmp, "p.ini"), os.path.join(tmp, "p.h5")
    config(cfg, keys, out, f"\n[spectral]\noperator = {kind}\nmomentum = {m}\nsteps = {min(400, len(ev))}\n"
           f"broadening = {eta}\nomega_min = -1\nomega_max = 14\npoints = 1501\n")
    run([exe, "spectral", cfg, "--overwrite", "--quiet"])
    with h5py.File(out) as f:
        w, I, norm = f["spectral"]["omega"][:], f["spectral"]["intensity"][:], f["spectral"].attrs["norm"]
    want = np.zeros_like(w)
    rnorm = 0.0
    for O in ref.op_parts(kind, m):
        phi = O @ V[:, 0]
        rnorm += phi @ phi
        amp = (V.T @ phi) ** 2
        want += ((eta / math.pi) / ((w[:, None] + ev[0] - ev[None, :]) ** 2 + eta ** 2)) @ amp
    if zero:  # O psi0 = 0: the reference and the program agree on it
        ok = rnorm < 1e-20 and norm == 0.0
        print(f"{'ok' if ok else 'FAIL'}: {name}: spectral {kind} momentum {m}: norm {norm} (ref {rnorm:.1e})")
        return 0 if ok else 1
    peak = want.max()
    e = float(np.max(np.abs(I - want)))
    ok = peak > 0 and e <= 1e-6 * peak and abs(norm - rnorm) <= 1e-10 * max(1.0, rnorm)
    print(f"{'ok' if ok else 'FAIL'}: {name}: spectral {kind} momentum {m}: norm {norm:.12g} (ref {rnorm:.12g}), "
          f"deviation {e / peak:.1e} of the peak {peak:.3g}")
    return 0 if ok else 1


def check_sweep(exe, tmp, name, keys, key, values):
    """a [sweep] over key on a lattice: each point's eigenvalues equal the reference's"""
    cfg, out = os.path.join(tmp, "w.ini"), os.path.join(tmp, "w.h5")
    config(cfg, keys, out, f"\n[sweep]\n{key} = {', '.join(str(v) for v in values)}\n")
    run([exe, "solve", cfg, "--overwrite", "--quiet"])
    worst, fail = 0.0, 0
    with h5py.File(out) as f:
        for p, v in enumerate(values):
            lam = f[f"points/{p:04d}/eigenvalues"][:]
            ref, _ = model_of(dict(keys, **{key: v}))
            ev = np.linalg.eigvalsh(ref.H)
            e = float(np.max(np.abs(lam - ev[: len(lam)])))
            worst = max(worst, e)
            fail |= e > TOL
    print(f"{'FAIL' if fail else 'ok'}: {name}: sweep {key} = {values}: eigenvalues to {worst:.1e}")
    return fail


BAD = [  # (keys, the key the one-line message must name, a word of the reason)
    (dict(lattice="bonds", bonds="0-1, 1-7", sites=4), "[model] bonds", "does not exist"),
    (dict(lattice="bonds", bonds="0-1, 1-2, 2-0, 1-0"), "[model] bonds", "duplicates"),
    (dict(lattice="bonds", bonds="0-1, 1-1"), "[model] bonds", "itself"),
    (dict(lattice="bonds", bonds="0-1, 1-x"), "[model] bonds", "is not i-j"),
    (dict(lattice="ladder", lx=1), "[model] lx", "needs lx >= 2"),
    (dict(lattice="square", lx=3, ly=1), "[model] ly", "needs ly >= 2"),
    (dict(lattice="triangular", lx=1, ly=3), "[model] lx", "needs lx >= 2"),
    (dict(lattice="square", lx=2, ly=2, sites=5), "[model] sites", "has 4 sites"),
    (dict(lattice="square", lx=9, ly=8), "[model] lx", "at most 62"),
    (dict(lattice="chain", sites=4, lx=4), "[model] lx", "not used"),
    (dict(lattice="bonds", bonds="0-1, 1-2", spectral="momentum = 1"), "[spectral] momentum",
     "without translation symmetry"),
    (dict(lattice="square", lx=2, ly=3, boundary_y="open", spectral="momentum = 2"), "[spectral] momentum",
     "without translation symmetry"),
]


def check_bad(exe, tmp):
    fail = 0
    # 257 bonds (the complete graph on 23 sites has 253; 24 sites: 276), 20 to an indented line
    pairs = [f"{i}-{j}" for j in range(24) for i in range(j)][:257]
    text = ",\n    ".join(", ".join(pairs[k:k + 20]) for k in range(0, len(pairs), 20))
    BAD.append((dict(lattice="bonds", bonds=text), "[model] bonds", "more than 256 bonds"))
    for keys, key, why in BAD:
        keys = dict(keys, n_up=1, n_down=1, max_phonons=1)
        spec = keys.pop("spectral", None)
        cfg, out = os.path.join(tmp, "b.ini"), os.path.join(tmp, "b.h5")
        config(cfg, keys, out, "" if spec is None else f"\n[spectral]\n{spec}\n")
        for cmd in ("solve", "info"):
            p = subprocess.run([exe, cmd, cfg], capture_output=True, text=True)
            lines = p.stderr.strip().splitlines()
            ok = p.returncode == 2 and len(lines) == 1 and key in lines[0] and why in lines[0] and not os.path.exists(out)
            print(f"{'ok' if ok else 'FAIL'}: {cmd}: exit {p.returncode}: {p.stderr.strip()}")
            fail |= 0 if ok else 1
    return fail


def main():
    exe, group = sys.argv[1], sys.argv[2]
    fail = 0
    with tempfile.TemporaryDirectory() as tmp:
        if group in GROUPS:
            for name, keys in GROUPS[group]:
                for ph in PH:
                    fail |= check_case(exe, tmp, f"{name}, phonons {ph}", shrink(keys, ph))
        elif group == "signs":
            keys = dict(lattice="bonds", bonds="0-1, 1-2, 2-0", n_up=2, n_down=1, hubbard_u=2.0, max_phonons=1,
                        coupling=0.5)
            fail |= check_case(exe, tmp, "triangle signs", keys)
            ref, _ = model_of(keys)
            wrong = Ref(3, [(0, 1, 1.0), (1, 2, 1.0), (2, 0, 1.0)], 2, 1, 1.0, 2.0, 1.0, 0.5, 1, "site", sign=False)
            d = np.max(np.abs(np.linalg.eigvalsh(wrong.H) - np.linalg.eigvalsh(ref.H)))
            mine = np.linalg.eigvalsh(exported(exe, tmp, keys).toarray())
            dm = np.max(np.abs(mine - np.linalg.eigvalsh(wrong.H)))
            ok = d > 0.1 and dm > 0.1
            print(f"{'ok' if ok else 'FAIL'}: the sign dropped changes the triangle's spectrum by {d:.3f}; "
                  f"the C build is {dm:.3f} away from that wrong spectrum")
            fail |= 0 if ok else 1
        elif group == "formats":
            for name, keys in (("ladder 3x2", dict(lattice="ladder", lx=3, n_up=2, n_down=1, hubbard_u=4.0,
                                                   **dict(PH["normal"], max_phonons=1))),
                               ("bonds random", dict(lattice="bonds", bonds=RANDOM_BONDS, n_up=2, n_down=1,
                                                     hubbard_u=3.5, **PH["site"]))):
                res = {}
                fail |= check_case(exe, tmp, f"{name}", keys, "pjds")  # against the reference
                for fmt in ("pjds", "compressed", "matrix_free"):
                    res[fmt] = solved(exe, tmp, keys, fmt)
                for fmt in ("compressed", "matrix_free"):
                    d = np.max(np.abs(res["pjds"][0] - res[fmt][0]))
                    do = max(float(np.max(np.abs(res["pjds"][1][k] - res[fmt][1][k]))) for k in res["pjds"][1])
                    ok = d <= TOL and do <= TOL
                    print(f"{'ok' if ok else 'FAIL'}: {name}: {fmt} vs pjds: eigenvalues {d:.1e}, observables {do:.1e}")
                    fail |= 0 if ok else 1
        elif group == "ring":
            # the chain's resolved configuration (what checkpoints and sweep files hash) names no lattice key
            cfg, out = os.path.join(tmp, "q.ini"), os.path.join(tmp, "q.h5")
            config(cfg, dict(sites=4, n_up=1, n_down=1, max_phonons=1), out)
            run([exe, "solve", cfg, "--overwrite", "--quiet"])
            with h5py.File(out) as f:
                t = f.attrs["config_resolved"]
            t = t.decode() if isinstance(t, bytes) else str(t)
            model = t.split("[model]")[1].split("[")[0]
            extra = [l for l in model.splitlines() if l.split(" = ")[0] in ("lattice", "lx", "ly", "boundary_x",
                                                                             "boundary_y", "bonds")]
            print(f"{'FAIL' if extra else 'ok'}: a chain's resolved [model] has no lattice keys {extra}")
            fail |= 1 if extra else 0
            for basis in ("site", "normal"):
                for bc in ("periodic", "open"):
                    # site: identical matrices; normal: other modes (Householder), the same spectrum (a small N:
                    # the dense eigenvalues' own rounding stays below 1e-14)
                    L = 5 if basis == "site" else 4
                    base = dict(n_up=2, n_down=1, hubbard_u=3.0, max_phonons=2, coupling=0.6, phonon_basis=basis)
                    ring = ", ".join(f"{i}-{i + 1}" for i in range(L - 1)) + (f", {L - 1}-0" if bc == "periodic" else "")
                    A = exported(exe, tmp, dict(base, sites=L, boundary=bc))
                    B = exported(exe, tmp, dict(base, lattice="bonds", bonds=ring))
                    ea, eb = np.linalg.eigvalsh(A.toarray()), np.linalg.eigvalsh(B.toarray())
                    d = np.max(np.abs(ea - eb)) / max(1.0, np.max(np.abs(ea)))
                    same = basis == "site" and (A != B).nnz == 0
                    ok = d <= 1e-14 and (basis == "normal" or same)
                    if basis == "site" and bc == "periodic":  # the list continued on an indented line
                        cfg, m = os.path.join(tmp, "c.ini"), os.path.join(tmp, "c.h5")
                        config(cfg, dict(base, lattice="bonds", bonds="0-1, 1-2,\n    2-3, 3-4\n    4-0"),
                               os.path.join(tmp, "unused.h5"))
                        run([exe, "export", cfg, m, "--overwrite", "--quiet"])
                        with h5py.File(m) as f:
                            n = int(f.attrs["rows"])
                            C = sp.csr_matrix((f["values"][:], f["col_idx"][:], f["row_ptr"][:]), shape=(n, n))
                        cont = C.shape == B.shape and (C != B).nnz == 0
                        print(f"{'ok' if cont else 'FAIL'}: bonds on three lines (indented) give the same matrix")
                        fail |= 0 if cont else 1
                    print(f"{'ok' if ok else 'FAIL'}: ring of {L}, {basis} {bc}: lattice = bonds vs chain: eigenvalues "
                          f"{d:.1e} (relative){', matrices identical' if same else ''}")
                    fail |= 0 if ok else 1
        elif group == "spectral":
            sq = dict(lattice="square", lx=2, ly=3, n_up=1, n_down=1, hubbard_u=3.0, **dict(PH["site"], max_phonons=1))
            for kind, m in (("density", 1), ("density", 2), ("phonon_displacement", 3)):
                fail |= check_spectral(exe, tmp, "square 2x3 periodic", sq, kind, m)
            # the current along x: lx = 3 (on lx = 2 the two bonds of a pair carry opposite currents: norm 0)
            fail |= check_spectral(exe, tmp, "square 3x2 periodic", dict(sq, lx=3, ly=2), "current", 0)
            fail |= check_spectral(exe, tmp, "square 2x3 periodic", sq, "current", 0, zero=True)
            tri = dict(lattice="triangular", lx=2, ly=3, n_up=1, n_down=1, hubbard_u=3.0,
                       **dict(PH["normal"], max_phonons=1))
            for kind, m in (("phonon_displacement", 4), ("density", 5), ("current", 0)):
                fail |= check_spectral(exe, tmp, "triangular 2x3 periodic", tri, kind, m)
        elif group == "spectral2":
            lad = dict(lattice="ladder", lx=3, n_up=2, n_down=1, hubbard_u=4.0, max_phonons=0)
            for kind, m in (("current", 0), ("density", 4)):
                fail |= check_spectral(exe, tmp, "ladder 3x2 periodic", lad, kind, m)
            bnd = dict(lattice="bonds", bonds=RANDOM_BONDS, n_up=2, n_down=1, hubbard_u=3.5,
                       **dict(PH["site"], max_phonons=1))
            for kind, m in (("current", 0), ("phonon_displacement", 0)):
                fail |= check_spectral(exe, tmp, "bonds random", bnd, kind, m)
        elif group == "sweep":
            lad = dict(lattice="ladder", lx=3, n_up=2, n_down=1, hubbard_u=4.0, max_phonons=0)
            fail |= check_sweep(exe, tmp, "ladder 3x2 periodic", dict(lad, **dict(PH["site"], max_phonons=1)), "hubbard_u",
                                [1.0, 3.0])
            fail |= check_sweep(exe, tmp, "square lx x 2", dict(lattice="square", lx=2, ly=2, n_up=1, n_down=1,
                                                                hubbard_u=2.0, max_phonons=0), "lx", [2, 3])
        elif group == "bad":
            fail |= check_bad(exe, tmp)
        else:
            print("unknown group", group)
            return 1
    return fail


if __name__ == "__main__":
    sys.exit(main())
