#!/usr/bin/env python3
"""check_observables.py -- observables (`solve`, /observables) and spectral
functions (`spectral`, /spectral) of small Holstein-Hubbard models against an
independent dense reference: NumPy operators on an explicitly enumerated
basis (the Jordan-Wigner signs and normal modes of check_dense.py, every
operator built here from its definition), dense eigh, and the Lehmann sum.

usage: check_observables.py PJDS_BIN CASE [MPIEXEC ...]
  CASE: obs_site_periodic | obs_normal_open | obs_site_open | obs_normal_periodic
        | spec_phonon | spec_density | spec_current | spec_phonon_normal
        | ranks (1, 2 and 3 ranks: the same observables and recursion coefficients)
        | ranks_matrix_free (the same with [spmv] format = matrix_free: H from its Kronecker
          tables split over the ranks, each run's H format checked)
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_dense import hop, normal_modes, popcount  # noqa: E402

CASES = {
    # L, nu, nd, t, U, w0, g, M, basis, bc
    "site_periodic": (4, 2, 2, 1.0, 4.0, 1.0, 0.5, 3, "site", "periodic"),
    "normal_open": (4, 1, 1, 1.0, 2.0, 0.8, 0.7, 4, "normal", "open"),
    "site_open": (3, 1, 1, 1.0, 3.0, 1.2, 0.9, 4, "site", "open"),
    "normal_periodic": (4, 1, 1, 1.0, 2.0, 1.0, 0.6, 4, "normal", "periodic"),
}


class Model:
    def __init__(self, L, nu, nd, t, U, w0, g, M, basis, bc):
        self.L, self.t, self.U, self.w0, self.g, self.M, self.basis, self.bc = L, t, U, w0, g, M, basis, bc
        self.ne = nu + nd
        ups = [m for m in range(1 << L) if popcount(m) == nu]
        dns = [m for m in range(1 << L) if popcount(m) == nd]
        self.nmodes = L if basis == "site" else L - 1
        phs = [v for v in itertools.product(range(M + 1), repeat=self.nmodes) if sum(v) <= M]
        self.states = [(mu, md, v) for mu in ups for md in dns for v in phs]
        self.index = {s: i for i, s in enumerate(self.states)}
        self.N = len(self.states)
        self.umodes = normal_modes(L) if basis == "normal" else np.eye(L)
        bonds = [(i, i + 1) for i in range(L - 1)]
        if bc == "periodic":
            bonds.append((L - 1, 0))
        self.bonds = bonds
        N = self.N
        # diagonal operators
        self.n = [np.array([((mu >> i) & 1) + ((md >> i) & 1) for mu, md, v in self.states], float) for i in range(L)]
        self.sz = [np.array([0.5 * (((mu >> i) & 1) - ((md >> i) & 1)) for mu, md, v in self.states]) for i in range(L)]
        self.docc = np.array([popcount(mu & md) for mu, md, v in self.states], float)
        self.nph = np.array([sum(v) for mu, md, v in self.states], float)
        # x_k of the basis' modes
        self.x = []
        for k in range(self.nmodes):
            rows, cols, vals = [], [], []
            for c, (mu, md, v) in enumerate(self.states):
                if sum(v) < M:
                    v2 = list(v)
                    v2[k] += 1
                    r = self.index[(mu, md, tuple(v2))]
                    rows += [r, c]
                    cols += [c, r]
                    vals += [math.sqrt(v[k] + 1)] * 2
            self.x.append(sp.csr_matrix((vals, (rows, cols)), shape=(N, N)))
        # hopping sum_{bonds, s} (c+_b c_a + c+_a c_b) and the current K = sum (c+_b c_a - c+_a c_b)
        hr, hc, hv, kv = [], [], [], []
        for c, (mu, md, v) in enumerate(self.states):
            f = mu | (md << L)
            for (a, b) in bonds:
                for off in (0, L):
                    for (p, q, sgn) in ((b + off, a + off, 1.0), (a + off, b + off, -1.0)):
                        r = hop(f, p, q)  # c+_p c_q
                        if r:
                            s, f2 = r
                            row = self.index[(f2 & ((1 << L) - 1), f2 >> L, v)]
                            hr.append(row)
                            hc.append(c)
                            hv.append(s)
                            kv.append(sgn * s)
        self.hop = sp.csr_matrix((hv, (hr, hc)), shape=(N, N))
        self.K = sp.csr_matrix((kv, (hr, hc)), shape=(N, N))
        # coupling: - sum_k rho_k x_k, rho_k = sum_i u_k(i) n_i
        self.rho = [sum(self.umodes[k][i] * self.n[i] for i in range(L)) for k in range(self.nmodes)]
        self.Hg = sp.csr_matrix((N, N))
        for k in range(self.nmodes):
            self.Hg = self.Hg - sp.diags(self.rho[k]) @ self.x[k]
        self.shift = -(g * g * self.ne ** 2) / (L * w0) if basis == "normal" else 0.0
        self.beta0 = g * self.ne / (math.sqrt(L) * w0) if basis == "normal" else 0.0
        self.H = (-t * self.hop + sp.diags(U * self.docc + w0 * self.nph + self.shift) + g * self.Hg).toarray()
        assert np.allclose(self.H, self.H.T)

    def x_site(self, j):
        """x_j of the site j without the uniform mode (that part is a constant)."""
        if self.basis == "site":
            return self.x[j]
        return sum(self.umodes[k][j] * self.x[k] for k in range(self.nmodes))

    def observables(self, psi):
        L, M = self.L, self.M
        o = {}
        w = psi * psi
        o["energy_hubbard"] = self.U * (w @ self.docc)
        o["phonon_number"] = w @ self.nph + self.beta0 ** 2
        o["energy_phonon"] = self.w0 * o["phonon_number"]
        o["energy_coupling"] = self.g * (psi @ (self.Hg @ psi)) - 2 * self.w0 * self.beta0 ** 2
        o["energy_kinetic"] = -self.t * (psi @ (self.hop @ psi))
        o["double_occupancy"] = (w @ self.docc) / L
        o["phonon_distribution"] = np.array([w[self.nph == k].sum() for k in range(M + 1)])
        nn = np.array([[w @ (self.n[i] * self.n[j]) for j in range(L)] for i in range(L)])
        ss = np.array([[w @ (self.sz[i] * self.sz[j]) for j in range(L)] for i in range(L)])
        nx = np.array([[psi @ (self.n[i] * (self.x_site(j) @ psi)) + 2 * self.beta0 / math.sqrt(L) * (w @ self.n[i])
                        for j in range(L)] for i in range(L)])
        if self.bc == "periodic":
            def avg(C):
                return np.array([np.mean([C[i, (i + r) % L] for i in range(L)]) for r in range(L)])
            nn, ss, nx = avg(nn), avg(ss), avg(nx)
        o["density_correlation"], o["spin_correlation"], o["electron_phonon_correlation"] = nn, ss, nx
        if self.bc == "periodic":
            o["momentum_distribution"] = self.momentum_distribution(psi)
        return o

    def momentum_distribution(self, psi):
        """n_s(k) = (1/L) sum_ij e^{iq(i - j)} <c+_is c_js> (issue 30): the hop j -> i of spin s applied to
        each basis state, the sign (-1)^(electrons of spin s strictly between i and j)"""
        L = self.L
        G = np.zeros((2, L, L))
        for a, (mu, md, v) in enumerate(self.states):
            if psi[a] == 0.0:
                continue
            for s_, m in ((0, mu), (1, md)):
                for j in range(L):
                    if not (m >> j) & 1:
                        continue
                    for i in range(L):
                        if i != j and (m >> i) & 1:
                            continue
                        t = m ^ (1 << j) ^ (1 << i) if i != j else m
                        lo, hi = min(i, j), max(i, j)
                        sign = -1.0 if popcount(m & ((1 << hi) - 1) & ~((1 << (lo + 1)) - 1)) & 1 else 1.0
                        b = self.index[(t, md, v) if s_ == 0 else (mu, t, v)]
                        G[s_, i, j] += sign * psi[b] * psi[a]
        q = 2 * math.pi * np.arange(L) / L
        d = np.arange(L)[:, None] - np.arange(L)[None, :]
        return np.array([[np.sum(np.cos(qk * d) * G[s_]) / L for qk in q] for s_ in range(2)])

    def op_parts(self, kind, m):
        L = self.L
        q = 2 * math.pi * m / L
        if kind == "current":
            return [self.t * self.K]
        parts = []
        for trig in (math.cos, math.sin):
            c = [trig(q * j) / math.sqrt(L) for j in range(L)]
            if max(abs(x) for x in c) < 1e-12:
                continue
            if kind == "density":
                parts.append(sp.diags(sum(c[j] * self.n[j] for j in range(L))))
            else:
                parts.append(sum(c[j] * self.x_site(j) for j in range(L)))
        return parts


def write_config(path, case, extra=""):
    L, nu, nd, t, U, w0, g, M, basis, bc = CASES[case]
    with open(path, "w") as f:
        f.write(f"""[model]
type = holstein-hubbard
sites = {L}
n_up = {nu}
n_down = {nd}
hopping = {t}
hubbard_u = {U}
phonon_frequency = {w0}
coupling = {g}
max_phonons = {M}
phonon_basis = {basis}
boundary = {bc}

[solver]
nev = 4
tolerance = 1e-12
{extra}
""")


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        print("FAIL: %s: exit %d\n%s" % (" ".join(cmd), p.returncode, p.stderr[-2000:]))
        sys.exit(1)
    return p


def clusters(lam, tol=1e-7):
    out, cur = [], [0]
    for i in range(1, len(lam)):
        if abs(lam[i] - lam[cur[-1]]) < tol * max(1, abs(lam[i])):
            cur.append(i)
        else:
            out.append(cur)
            cur = [i]
    out.append(cur)
    return out


def check_obs(exe, case, mpi, tmp):
    cfg = os.path.join(tmp, "c.ini")
    out = os.path.join(tmp, "o.h5")
    write_config(cfg, case)
    run(mpi + [exe, "solve", cfg, "--overwrite", "--quiet", "--set", "output.file=" + out])
    mdl = Model(*CASES[case])
    ev, V = np.linalg.eigh(mdl.H)
    fail = 0
    with h5py.File(out) as f:
        lam = f["eigenvalues"][:]
        nev = len(lam)
        obs = {k: f["observables"][k][:] for k in f["observables"]}
    assert np.allclose(lam, ev[:nev], atol=1e-9), (lam, ev[:nev])
    # components sum to the eigenvalues
    tot = obs["energy_kinetic"] + obs["energy_hubbard"] + obs["energy_phonon"] + obs["energy_coupling"]
    err = np.max(np.abs(tot - lam) / np.maximum(1, np.abs(lam)))
    if err > 1e-10:
        print("FAIL: energy components sum to the eigenvalues only to %.2e" % err)
        fail = 1
    # per degenerate cluster fully inside the returned set: sums over the cluster
    # (the vectors of a degenerate level are not unique, their sum of expectations is)
    cl = [c for c in clusters(ev[: nev + 4]) if c[-1] < nev]
    nclusters = 0
    for c in cl:
        if c[-1] + 1 < len(ev) and abs(ev[c[-1] + 1] - ev[c[-1]]) < 1e-7 and c[-1] == nev - 1:
            continue
        nclusters += 1
        ref = [mdl.observables(V[:, i]) for i in c]
        for k, v in obs.items():
            if k in ("norm", "energy_expectation"):
                continue
            mine = sum(v[i] for i in c)
            theirs = sum(r[k] for r in ref)
            e = np.max(np.abs(np.asarray(mine) - np.asarray(theirs)))
            if e > 1e-9:
                print("FAIL: %s, levels %s: max deviation %.2e\n ours %s\n ref  %s" % (k, c, e, mine, theirs))
                fail = 1
    if nclusters == 0:
        print("FAIL: no level to compare")
        fail = 1
    print("%s: %d level(s) compared (%d ranks), energy sum %.1e" % (case, nclusters, max(1, len(mpi) and int(mpi[2])), err))
    return fail


SPEC_FORMAT = ""  # [spmv] format of the spectral runs ("": the config's, auto)


def check_spec(exe, case, kind, m, mpi, tmp):
    cfg = os.path.join(tmp, "s.ini")
    out = os.path.join(tmp, "s.h5")
    eta = 0.1
    write_config(cfg, case, f"\n[spectral]\noperator = {kind}\nmomentum = {m}\nsteps = 600\nbroadening = {eta}\n"
                 "omega_min = -1\nomega_max = 12\npoints = 1301\n")
    fset = ["--set", "spmv.format=" + SPEC_FORMAT] if SPEC_FORMAT else []
    run(mpi + [exe, "spectral", cfg, "--overwrite", "--quiet", "--set", "output.file=" + out] + fset)
    mdl = Model(*CASES[case])
    ev, V = np.linalg.eigh(mdl.H)
    assert ev[1] - ev[0] > 1e-6, "degenerate ground state: pick another case"
    psi0 = V[:, 0]
    with h5py.File(out) as f:
        s = f["spectral"]
        w, I, norm = s["omega"][:], s["intensity"][:], s.attrs["norm"]
        fmt = f.attrs["spmv_format"]
        fmt = fmt.decode() if isinstance(fmt, bytes) else str(fmt)
    # H's operator: the format given (the .pjds runs), the format
    # PJDS_SPMV_FORMAT forces (the .compressed runs), else under auto on one
    # rank the Kronecker tables (matrix_free)
    forced = os.environ.get("PJDS_SPMV_FORMAT", "")
    want = SPEC_FORMAT or forced or "matrix_free"
    fail = 0
    if fmt != want:
        print("FAIL: H's spmv_format %s, expected %s" % (fmt, want))
        fail = 1
    ref = np.zeros_like(w)
    rnorm = 0.0
    for O in mdl.op_parts(kind, m):
        phi = O @ psi0
        rnorm += phi @ phi
        amp = (V.T @ phi) ** 2
        for n in range(len(ev)):
            ref += amp[n] * (eta / math.pi) / ((w + ev[0] - ev[n]) ** 2 + eta ** 2)
    if abs(norm - rnorm) > 1e-10 * max(1, rnorm):
        print("FAIL: norm %.15g, <psi0|O+O|psi0> = %.15g" % (norm, rnorm))
        fail = 1
    peak = ref.max()
    e = np.max(np.abs(I - ref))
    if not peak > 0 or e > 1e-6 * peak:
        print("FAIL: spectrum deviates by %.2e (peak %.3e)" % (e, peak))
        fail = 1
    print("%s %s q=%d (H %s): norm %.12g (ref %.12g), max deviation %.2e of peak %.3e" % (case, kind, m, fmt, norm,
                                                                                         rnorm, e, peak))
    return fail


def check_ranks(exe, mpi_base, tmp):
    """the same observables and recursion coefficients on 1, 2 and 3 ranks"""
    fail = 0
    for op in ("phonon_displacement", "current"):
        fail |= check_ranks_op(exe, mpi_base, tmp, op)
    return fail


def check_ranks_op(exe, mpi_base, tmp, op):
    res = []
    for np_ in (1, 2, 3):
        cfg = os.path.join(tmp, "r.ini")
        out = os.path.join(tmp, "r%d.h5" % np_)
        # 12 steps: past the first converged Ritz value the plain recursion
        # amplifies rounding (a different summation order per rank count) into
        # different, equally valid coefficients; the spectrum stays the same
        # the cpu backend: on a machine with one GPU, `auto` would run 3 ranks on it and be refused
        write_config(cfg, "site_periodic", "\n[spmv]\nbackend = cpu\n[spectral]\noperator = %s\nmomentum = 1\nsteps = 12\n" % op)
        mpi = mpi_base + [str(np_)] + MPI_FLAGS if mpi_base else []
        if np_ > 1 and not mpi:
            continue
        fset = ["--set", "spmv.format=" + SPEC_FORMAT] if SPEC_FORMAT else []
        run(mpi + [exe, "spectral", cfg, "--overwrite", "--quiet", "--set", "output.file=" + out] + fset)
        with h5py.File(out) as f:
            fmt = f.attrs["spmv_format"]
            fmt = fmt.decode() if isinstance(fmt, bytes) else str(fmt)
            if SPEC_FORMAT and fmt != SPEC_FORMAT:
                print("FAIL: %d ranks: H's spmv_format %s, expected %s" % (np_, fmt, SPEC_FORMAT))
                return 1
            d = {k: f["observables"][k][:] for k in f["observables"]}
            d["alpha"], d["beta"] = f["spectral/alpha"][:], f["spectral/beta"][:]
            d["intensity"] = f["spectral/intensity"][:]
            res.append(d)
    fail = 0
    for d in res[1:]:
        for k in res[0]:
            e = np.max(np.abs(d[k] - res[0][k]))
            if e > 1e-10:
                print("FAIL: %s differs by %.2e between rank counts" % (k, e))
                fail = 1
    print("ranks, %s (%s): %d runs compared" % (op, SPEC_FORMAT or "auto", len(res)))
    return fail


MPI_FLAGS = []


def main():
    exe, case = sys.argv[1], sys.argv[2]
    global SPEC_FORMAT
    if len(sys.argv) == 4:  # CASE FORMAT: the spectral cases with [spmv] format = FORMAT
        SPEC_FORMAT = sys.argv[3]
        del sys.argv[3]
    mpi_base = sys.argv[3:5] if len(sys.argv) > 4 else []  # MPIEXEC NP-FLAG
    global MPI_FLAGS
    MPI_FLAGS = sys.argv[5:]
    with tempfile.TemporaryDirectory() as tmp:
        if case.startswith("obs_"):
            return check_obs(exe, case[4:], [], tmp)
        if case == "spec_phonon":
            return check_spec(exe, "site_periodic", "phonon_displacement", 1, [], tmp) | \
                check_spec(exe, "site_periodic", "phonon_displacement", 0, [], tmp)
        if case == "spec_density":
            return check_spec(exe, "site_periodic", "density", 2, [], tmp) | \
                check_spec(exe, "site_open", "density", 1, [], tmp)
        if case == "spec_current":
            return check_spec(exe, "site_periodic", "current", 0, [], tmp) | \
                check_spec(exe, "normal_open", "current", 0, [], tmp)
        if case == "spec_phonon_normal":
            return check_spec(exe, "normal_periodic", "phonon_displacement", 1, [], tmp) | \
                check_spec(exe, "normal_periodic", "phonon_displacement", 2, [], tmp)
        if case == "ranks_matrix_free":
            SPEC_FORMAT, case = "matrix_free", "ranks"
        if case == "ranks":
            return check_ranks(exe, mpi_base, tmp)
    print("unknown case", case)
    return 1


if __name__ == "__main__":
    sys.exit(main())
