#!/usr/bin/env python3
"""akw_ref.py -- the single-particle spectral function A(k, w) (`spectral`, operator = electron_removal |
electron_addition) and the momentum distribution n_s(k) against independent references (issue 30):

  free     U = 0, g = 0 (a 6-site ring, a 3 x 2 ladder): one Lorentzian at the band energy e_k for every k, of
           weight 1 (occupied, removal; empty, addition) or 0, e_k in closed form; removal + addition weights = 1
  atomic   t = 0, a full up band: removal one pole at w = 0, addition of a down electron one pole at w = U, weight 1
  hh       small Holstein-Hubbard models (a ring in the site basis, 2 x 2 square, 2 x 3 triangular, a bond list by site)
           against the Lehmann sum of dense diagonalisations of the three sectors N - 1, N, N + 1 (hh_lattice_ref.Ref,
           its own Jordan-Wigner c_j taken between the sectors here), both spins, every momentum, to 1e-10 of the peak;
           sum rules: the removal weight = <n_ks> = /observables/momentum_distribution = the dense <c+_k c_k>, removal +
           addition = 1, all to 1e-10
  normal   the normal phonon basis against a dense build that keeps the uniform mode as an explicit oscillator
           (cut at 22 quanta): the sidebands of the removed mode folded in exactly, to 1e-10 of the peak
  ranks    1, 2 and 3 ranks (MPIEXEC): by default the recursion coefficients of every momentum over 16 steps agree
           to 1e-8 (the ground states of the rank counts differ by ~1e-12; the plain recursion amplifies it), A(k, w)
           to 1e-10; with [solver] reproducible = true the ground-state energy, alpha, beta, the weights, A(k, w) and
           n_s(k) of the three rank counts (and of 1 rank on 2 threads) are bitwise equal (np.array_equal), and so are
           the recursions of operator = density, current and phonon_displacement at one momentum; the
           lattices (ladder, square, triangular, bonds) solved on 2 and 3 ranks give 1 rank's eigenvalues and
           observables (n_s(k) included) to 1e-10
  bad      exit 2 and one line: a momentum on a lattice without translations, addition into a full band, removal
           from an empty band, momentum and site both, a site out of range, momentum = all or spin with density

usage: akw_ref.py PJDS_BIN GROUP [MPIEXEC ...]     exit 0 = pass, 1 = fail"""
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hh_lattice_ref as R  # noqa: E402  (sets one thread for BLAS and the program)
import h5py  # noqa: E402
import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

ETA = 0.1
SPEC = dict(broadening=ETA, omega_min=-12, omega_max=12, points=2401)


def spectral(exe, tmp, keys, spec, mpi=None, name="a", solver="", threads=None):
    cfg, out = os.path.join(tmp, f"{name}.ini"), os.path.join(tmp, f"{name}.h5")
    text = "".join(f"{k} = {v}\n" for k, v in dict(SPEC, **spec).items())
    # several ranks: the cpu backend (a machine with one GPU would refuse 3 ranks on it under auto)
    R.config(cfg, keys, out, f"\n[spectral]\n{text}" + ("\n[spmv]\nbackend = cpu\n" if mpi else ""))
    if solver:  # more [solver] keys (R.config writes the section)
        t = open(cfg).read().replace("[solver]\n", f"[solver]\n{solver}", 1)
        open(cfg, "w").write(t)
    cmd = (mpi or []) + [exe, "spectral", cfg, "--overwrite", "--quiet"]
    if threads:
        old = os.environ.get("OMP_NUM_THREADS")
        os.environ["OMP_NUM_THREADS"] = str(threads)
        try:
            R.run(cmd)
        finally:
            os.environ["OMP_NUM_THREADS"] = old if old is not None else "1"
    else:
        R.run(cmd)
    with h5py.File(out) as f:
        s = f["spectral"]
        res = {k: s[k][:] for k in s}
        res["attrs"] = dict(s.attrs)
        res["nk"] = f["observables/momentum_distribution"][:] if "momentum_distribution" in f["observables"] else None
        res["e0"] = f["eigenvalues"][0]
    return res


def c_between(ra, rb, p, add):
    """<b|c_p|a> (or c+_p) on the electron states of the sectors of ra, rb: Fock mode p (site, or L + site for
    down), the Jordan-Wigner sign (-1)^(occupied modes below p)"""
    idx = {f: i for i, f in enumerate(rb.keep)}
    rows, cols, vals = [], [], []
    for a, f in enumerate(ra.keep):
        has = (f >> p) & 1
        if has == add:
            continue
        sign = -1.0 if bin(f & ((1 << p) - 1)).count("1") & 1 else 1.0
        rows.append(idx[f ^ (1 << p)])
        cols.append(a)
        vals.append(sign)
    return sp.csr_matrix((vals, (rows, cols)), shape=(len(rb.keep), len(ra.keep))).toarray()


def phases(keys, L):
    kind = keys.get("lattice", "chain")
    if kind == "bonds":
        return None  # no momenta: by site only
    lx, ly = (L, 1) if kind == "chain" else (int(keys["lx"]), 2 if kind == "ladder" else int(keys["ly"]))
    return lambda m: np.array([2 * math.pi * ((m % lx) * (j % lx) / lx + (m // lx) * (j // lx) / ly)
                               for j in range(L)])


def lehmann(keys, kind, spin, ks, local, w, uniform=0):
    """the reference A(k, w) of every k in ks (rows), its weights, and <c+_k c_k> from a dense build"""
    ref, _ = R.model_of(keys)
    L = ref.L
    key = "n_up" if spin == "up" else "n_down"
    other = dict(keys, **{key: int(keys[key]) + (1 if kind == "addition" else -1)})
    ref2, _ = R.model_of(other)
    H, H2 = ref.H, ref2.H
    I0 = None
    if uniform:  # the uniform mode as an explicit oscillator: H without the constant, + w0 b+b - g N_e/sqrt(L) x0
        b = np.diag(np.sqrt(np.arange(1, uniform + 1)), 1)
        I0, n0, x0 = np.eye(uniform + 1), b.T @ b, b + b.T
        full = lambda r: (np.kron(r.H - r.shift * np.eye(len(r.H)), I0) + r.w0 * np.kron(np.eye(len(r.H)), n0)
                          - r.g * r.ne / math.sqrt(L) * np.kron(np.eye(len(r.H)), x0))
        H, H2 = full(ref), full(ref2)
    ev, V = np.linalg.eigh(H)
    ev2, V2 = np.linalg.eigh(H2)
    if ev[1] - ev[0] < 1e-6:
        raise SystemExit(f"FAIL: degenerate ground state in {keys}")
    psi = V[:, 0]
    p0 = 0 if spin == "up" else L
    eye = np.eye(ref.nph * (uniform + 1))
    cj = [np.kron(c_between(ref, ref2, p0 + j, kind == "addition"), eye) for j in range(L)]
    ph = phases(keys, L)
    A, wt = np.zeros((len(ks), len(w))), np.zeros(len(ks))
    for i, k in enumerate(ks):
        if local:
            phi = cj[k] @ psi
        else:
            sgn = 1.0 if kind == "addition" else -1.0  # c_k = L^-1/2 sum e^{-iqr} c_j, c+_k = its adjoint
            phi = sum(np.exp(sgn * 1j * ph(k)[j]) * (cj[j] @ psi) for j in range(L)) / math.sqrt(L)
        amp = np.abs(V2.T @ phi) ** 2
        poles = ev[0] - ev2 if kind == "removal" else ev2 - ev[0]
        A[i] = ((ETA / math.pi) / ((w[:, None] - poles[None, :]) ** 2 + ETA ** 2)) @ amp
        wt[i] = float(np.vdot(phi, phi).real)
    return A, wt, ev[0]


def compare(name, got, A, wt, e0, tol=1e-10):
    dA = float(np.max(np.abs(got["akw"] - A))) / A.max()
    dw = float(np.max(np.abs(got["weights"] - wt)))
    de = abs(got["e0"] - e0)
    ok = dA <= tol and dw <= 1e-10 and de <= 1e-10
    print(f"{'ok' if ok else 'FAIL'}: {name}: A(k,w) {dA:.1e} of the peak {A.max():.3g}, weights {dw:.1e}, E0 {de:.1e}")
    return 0 if ok else 1


def check_plot(tmp, rem, add):
    """tools/plot.py draws A(k, w) of both sides combined as a colour map (a PNG with the akw panel)"""
    plot = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "plot.py")
    png = os.path.join(tmp, "akw.png")
    p = subprocess.run([sys.executable, plot, rem, "--combine", add, "--out", png], capture_output=True, text=True)
    ok = p.returncode == 0 and "akw" in p.stdout and os.path.getsize(png) > 10000
    print(f"{'ok' if ok else 'FAIL'}: tools/plot.py --combine: {p.stdout.strip()} {p.stderr.strip()[-300:]}")
    return 0 if ok else 1


def check_free(exe, tmp):
    fail = 0
    cases = [("ring of 6", dict(sites=6, n_up=3, n_down=1), lambda m: -2 * math.cos(2 * math.pi * m / 6)),
             ("ladder 3x2", dict(lattice="ladder", lx=3, n_up=2, n_down=1),
              lambda m: -2 * math.cos(2 * math.pi * (m % 3) / 3) - (1.0 if m < 3 else -1.0))]
    for name, keys, band in cases:
        keys = dict(keys, hubbard_u=0.0, coupling=0.0, max_phonons=0)
        L = 6
        occ = np.argsort([band(m) for m in range(L)], kind="stable")[: int(keys["n_up"])]
        for kind in ("removal", "addition"):
            got = spectral(exe, tmp, keys, dict(operator=f"electron_{kind}", momentum="all", steps=60), name=kind)
            w = got["omega"]
            wt = np.array([1.0 if (m in occ) == (kind == "removal") else 0.0 for m in range(L)])
            A = np.array([wt[m] * (ETA / math.pi) / ((w - band(m)) ** 2 + ETA ** 2) for m in range(L)])
            dA = float(np.max(np.abs(got["akw"] - A))) / A.max()
            dw = float(np.max(np.abs(got["weights"] - wt)))
            ok = dA <= 1e-10 and dw <= 1e-10
            print(f"{'ok' if ok else 'FAIL'}: free {name} {kind}: one pole at e_k, weights {wt} to {dw:.1e}, "
                  f"A(k,w) {dA:.1e} of the peak")
            fail |= 0 if ok else 1
            if kind == "removal":
                rem = got["weights"]
                nk = got["nk"][0, 0]
                ok = float(np.max(np.abs(nk - wt))) <= 1e-10
                print(f"{'ok' if ok else 'FAIL'}: free {name}: n_up(k) {np.round(nk, 12)}")
                fail |= 0 if ok else 1
            else:
                d = float(np.max(np.abs(rem + got["weights"] - 1)))
                print(f"{'ok' if d <= 1e-10 else 'FAIL'}: free {name}: removal + addition weights = 1 to {d:.1e}")
                fail |= d > 1e-10
    fail |= check_plot(tmp, os.path.join(tmp, "removal.h5"), os.path.join(tmp, "addition.h5"))
    return fail


def check_atomic(exe, tmp):
    keys = dict(sites=4, n_up=4, n_down=0, hopping=0.0, hubbard_u=3.0, coupling=0.0, max_phonons=1)
    fail = 0
    for kind, spin, pole in (("removal", "up", 0.0), ("addition", "down", 3.0)):
        got = spectral(exe, tmp, keys, dict(operator=f"electron_{kind}", spin=spin, momentum="all", steps=20))
        w = got["omega"]
        A = (ETA / math.pi) / ((w - pole) ** 2 + ETA ** 2)
        dA = float(np.max(np.abs(got["akw"] - A[None, :]))) / A.max()
        dw = float(np.max(np.abs(got["weights"] - 1)))
        mu = got["attrs"]["chemical_potential"]
        ok = dA <= 1e-10 and dw <= 1e-10 and abs(mu - pole) <= 1e-10
        print(f"{'ok' if ok else 'FAIL'}: atomic t = 0, full up band, {kind} {spin}: one pole at {pole} (chemical "
              f"potential {mu:.12g}), weights 1 to {dw:.1e}, A(k,w) {dA:.1e} of the peak")
        fail |= 0 if ok else 1
    return fail


HH = [("ring of 4, site basis", dict(sites=4, n_up=1, n_down=1, hubbard_u=3.0, coupling=0.6, phonon_frequency=1.0,
                                    max_phonons=2), False),
      ("square 2x2", dict(lattice="square", lx=2, ly=2, n_up=1, n_down=1, hubbard_u=2.0, coupling=0.5,
                          max_phonons=1), False),
      ("triangular 2x3", dict(lattice="triangular", lx=2, ly=3, n_up=1, n_down=1, hubbard_u=2.0, coupling=0.4,
                              max_phonons=1), False),
      ("bonds, by site", dict(lattice="bonds", bonds=R.RANDOM_BONDS, n_up=1, n_down=1, hubbard_u=3.0, coupling=0.5,
                              max_phonons=1), True)]


def check_hh(exe, tmp):
    fail = 0
    for name, keys, local in HH:
        L = R.model_of(keys)[0].L
        ks = list(range(L))
        rem = {}
        for kind in ("removal", "addition"):
            for spin in ("up", "down"):
                spec = dict(operator=f"electron_{kind}", spin=spin, steps=400)
                spec["site" if local else "momentum"] = "all"
                got = spectral(exe, tmp, keys, spec)
                A, wt, e0 = lehmann(keys, kind, spin, ks, local, got["omega"])
                fail |= compare(f"{name} {kind} {spin}", got, A, wt, e0)
                if kind == "removal":
                    rem[spin] = got["weights"]
                    if got["nk"] is not None:
                        d = float(np.max(np.abs(got["nk"][0, 0 if spin == "up" else 1] - wt)))
                        print(f"{'ok' if d <= 1e-10 else 'FAIL'}: {name}: n_{spin}(k) of /observables = the removal "
                              f"weights = <c+_k c_k> to {d:.1e}")
                        fail |= d > 1e-10
                else:
                    d = float(np.max(np.abs(rem[spin] + got["weights"] - 1)))
                    print(f"{'ok' if d <= 1e-10 else 'FAIL'}: {name} {spin}: removal + addition = 1 to {d:.1e}")
                    fail |= d > 1e-10
    return fail


def check_normal(exe, tmp):
    keys = dict(sites=4, n_up=1, n_down=1, hubbard_u=2.0, coupling=0.6, phonon_frequency=1.0, max_phonons=1,
                phonon_basis="normal")
    fail = 0
    for kind in ("removal", "addition"):
        got = spectral(exe, tmp, keys, dict(operator=f"electron_{kind}", momentum="all", steps=300))
        A, wt, e0 = lehmann(keys, kind, "up", list(range(4)), False, got["omega"], uniform=22)
        lam = got["attrs"]["uniform_mode_lambda"]
        fail |= compare(f"normal basis {kind} (uniform mode explicit, lambda {lam:.3g})", got, A, wt, e0)
    return fail


def check_ranks(exe, tmp, mpi):
    fail = 0
    # 504 rows in the N - 1 sector: no Ritz value converges within 16 steps
    keys = dict(sites=6, n_up=1, n_down=1, hubbard_u=3.0, coupling=0.6, max_phonons=3)
    res = {}
    for np_ in (1, 2, 3):
        res[np_] = spectral(exe, tmp, keys, dict(operator="electron_removal", momentum="all", steps=16),
                            mpi + [str(np_)], name=f"r{np_}")
    for np_ in (2, 3):
        d = max(float(np.max(np.abs(res[np_][k] - res[1][k]))) for k in ("alpha", "beta", "weights"))
        dA = float(np.max(np.abs(res[np_]["akw"] - res[1]["akw"]))) / res[1]["akw"].max()
        same = all(np.array_equal(res[np_][k], res[1][k]) for k in ("steps_done", "part_momentum", "momenta"))
        ok = d <= 1e-8 and dA <= 1e-10 and same
        print(f"{'ok' if ok else 'FAIL'}: {np_} ranks: recursion coefficients of every momentum over 16 steps equal 1 "
              f"rank's to {d:.1e} (the ground states differ by ~1e-12), A(k,w) to {dA:.1e} of the peak")
        fail |= 0 if ok else 1
    # [solver] reproducible = true: the same bits on 1, 2 and 3 ranks and on 1 rank with 2 threads
    rep = {}
    for np_, th in ((1, None), (2, None), (3, None), (1, 2)):
        rep[(np_, th)] = spectral(exe, tmp, keys, dict(operator="electron_removal", momentum="all", steps=16),
                                  mpi + [str(np_)], name=f"p{np_}_{th}", solver="reproducible = true\n", threads=th)
    keys_eq = ("alpha", "beta", "weights", "akw", "steps_done", "part_momentum", "momenta", "nk", "e0")
    for lay in ((2, None), (3, None), (1, 2)):
        diff = [k for k in keys_eq if not np.array_equal(rep[lay][k], rep[(1, None)][k])]
        d = max(float(np.max(np.abs(rep[lay][k] - rep[(1, None)][k]))) for k in ("alpha", "beta", "weights", "akw"))
        ok = not diff
        print(f"{'ok' if ok else 'FAIL'}: reproducible = true, {lay[0]} rank(s){', 2 threads' if lay[1] else ''}: "
              f"E0, alpha, beta, weights, A(k,w) and n(k) over 16 steps {'bitwise equal to' if ok else 'DIFFER from'} "
              f"1 rank's (largest difference {d:.1e}{'; ' + ', '.join(diff) if diff else ''})")
        fail |= 0 if ok else 1
    # the other [spectral] operators (the current's stored operator O with its two value terms, whole rows per rank)
    for op in ("density", "current", "phonon_displacement"):
        got = {np_: spectral(exe, tmp, keys, dict(operator=op, momentum=1, steps=16), mpi + [str(np_)],
                             name=f"o{np_}", solver="reproducible = true\n") for np_ in (1, 2, 3)}
        diff = [f"{np_} ranks {k}" for np_ in (2, 3) for k in ("alpha", "beta", "intensity", "e0")
                if not np.array_equal(got[np_][k], got[1][k])]
        print(f"{'ok' if not diff else 'FAIL'}: reproducible = true, operator = {op}, q index 1: alpha, beta and the "
              f"intensity of 2 and 3 ranks {'bitwise equal to 1 rank' + chr(39) + 's' if not diff else 'differ: ' + ', '.join(diff)}")
        fail |= 1 if diff else 0
    d = max(float(np.max(np.abs(rep[(1, None)][k] - res[1][k]))) for k in ("alpha", "beta", "weights"))
    ok = d <= 1e-8
    print(f"{'ok' if ok else 'FAIL'}: reproducible = true against the default on 1 rank: recursion coefficients to "
          f"{d:.1e}")
    fail |= 0 if ok else 1
    lat = [("ladder 3x2", dict(lattice="ladder", lx=3, n_up=2, n_down=1, hubbard_u=4.0, max_phonons=1, coupling=0.5)),
           ("square 2x2", dict(lattice="square", lx=2, ly=2, n_up=1, n_down=1, hubbard_u=4.0, max_phonons=1,
                               coupling=0.5)),
           ("triangular 2x3", dict(lattice="triangular", lx=2, ly=3, n_up=1, n_down=1, hubbard_u=3.0, max_phonons=1,
                                   coupling=0.5, phonon_basis="normal")),
           ("bonds", dict(lattice="bonds", bonds=R.RANDOM_BONDS, n_up=2, n_down=1, hubbard_u=3.5, max_phonons=1,
                          coupling=0.5))]
    for name, keys in lat:
        cfg, out = os.path.join(tmp, "l.ini"), os.path.join(tmp, "l.h5")
        R.config(cfg, keys, out, "\n[spmv]\nbackend = cpu\n")
        got = {}
        for np_ in (1, 2, 3):
            R.run(mpi + [str(np_), exe, "solve", cfg, "--overwrite", "--quiet"])
            with h5py.File(out) as f:
                got[np_] = (f["eigenvalues"][:], {k: f["observables"][k][:] for k in f["observables"]})
        ev = np.linalg.eigvalsh(R.model_of(keys)[0].H)
        for np_ in (2, 3):
            d = float(np.max(np.abs(got[np_][0] - got[1][0])))
            dref = float(np.max(np.abs(got[np_][0] - ev[: len(got[np_][0])])))
            ground = [k for k in got[1][1] if k != "momentum_distribution"]  # every observable of the lowest level
            do = max(float(np.max(np.abs(got[np_][1][k][0] - got[1][1][k][0]))) for k in ground)
            has_nk = "momentum_distribution" in got[1][1]
            dk = float(np.max(np.abs(got[np_][1]["momentum_distribution"][0] -
                                     got[1][1]["momentum_distribution"][0]))) if has_nk else 0.0
            ok = d <= 1e-10 and dref <= 1e-10 and do <= 1e-10 and dk <= 1e-10
            print(f"{'ok' if ok else 'FAIL'}: {name} on {np_} ranks: eigenvalues {d:.1e} from 1 rank's ({dref:.1e} "
                  f"from the dense), ground-state observables {do:.1e}{f', n(k) {dk:.1e}' if has_nk else ''}")
            fail |= 0 if ok else 1
    return fail


BAD = [(dict(lattice="bonds", bonds="0-1, 1-2"), "momentum = 1", "[spectral] momentum", "without translation symmetry"),
       (dict(lattice="bonds", bonds="0-1, 1-2"), "", "[spectral] site", "no translation symmetry"),
       (dict(sites=4, boundary="open"), "momentum = all", "[spectral] momentum", "without translation symmetry"),
       (dict(sites=3, n_up=3), "operator = electron_addition\nspin = up", "[spectral] operator", "full band"),
       (dict(sites=3, n_down=0), "operator = electron_removal\nspin = down", "[spectral] operator", "empty band"),
       (dict(sites=4), "momentum = 1\nsite = 2", "[spectral] site", "not both"),
       (dict(sites=4), "site = 4", "[spectral] site", "0..3"),
       (dict(sites=4), "operator = density\nmomentum = all", "[spectral] momentum", "all needs"),
       (dict(sites=4), "operator = density\nspin = down", "[spectral] spin", "electron_removal and"),
       (dict(sites=4), "momentum = -1", "[spectral] momentum", "all")]


def check_bad(exe, tmp):
    fail = 0
    for keys, spec, key, why in BAD:
        keys = dict(dict(n_up=1, n_down=1, max_phonons=1), **keys)
        if "operator" not in spec:
            spec = "operator = electron_removal\n" + spec
        cfg, out = os.path.join(tmp, "b.ini"), os.path.join(tmp, "b.h5")
        R.config(cfg, keys, out, f"\n[spectral]\n{spec}\n")
        p = subprocess.run([exe, "spectral", cfg], capture_output=True, text=True)
        lines = p.stderr.strip().splitlines()
        ok = p.returncode == 2 and len(lines) == 1 and key in lines[0] and why in lines[0] and not os.path.exists(out)
        print(f"{'ok' if ok else 'FAIL'}: exit {p.returncode}: {p.stderr.strip()}")
        fail |= 0 if ok else 1
    return fail


def main():
    exe, group, mpi = sys.argv[1], sys.argv[2], sys.argv[3:]
    with tempfile.TemporaryDirectory() as tmp:
        fail = {"free": lambda: check_free(exe, tmp), "atomic": lambda: check_atomic(exe, tmp),
                "hh": lambda: check_hh(exe, tmp), "normal": lambda: check_normal(exe, tmp),
                "ranks": lambda: check_ranks(exe, tmp, mpi), "bad": lambda: check_bad(exe, tmp)}[group]()
    print("FAIL" if fail else "PASS")
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
