#!/usr/bin/env python3
"""check_dense.py — independent numpy reference for the Holstein-Hubbard rows.

Builds the same small matrices straight from the operator definitions:
fermion operators by Jordan-Wigner on the Fock space of 2L modes (all up
before all down, each by site: mode p = site for up, L + site for down), the
hopping term -t (c+_i c_j + c+_j c_i) applied bond by bond, U n_up n_dn,
w0 sum b+b and -g sum_k rho_k (b+_k + b_k) on truncated phonon occupation
vectors (total <= M), with rho_k the site density (site basis) or
sum_i u_k(i) n_i (normal basis, uniform mode removed: constant
-g^2 N_e^2 / (L w0)).  Basis order as in hamiltonian/hh.h: up masks
ascending, down masks ascending, phonon vectors lexicographic.

Compares with `hh_dump` (argv[1]) entry by entry (same non-zero pattern,
values to 1e-12) and, for small N, the spectra (numpy.linalg.eigvalsh).
Exit 0 on success, 1 on any mismatch."""
import itertools
import math
import subprocess
import sys

import numpy as np


def popcount(x):
    return bin(x).count("1")


def hop(f, p, q):
    """c+_p c_q |f> -> (sign, f') or None (Jordan-Wigner signs)."""
    if not (f >> q) & 1:
        return None
    s = -1 if popcount(f & ((1 << q) - 1)) & 1 else 1
    f ^= 1 << q
    if (f >> p) & 1:
        return None
    s *= -1 if popcount(f & ((1 << p) - 1)) & 1 else 1
    return s, f | (1 << p)


def normal_modes(L):
    u = []
    for q in range(1, L):
        if 2 * q >= L:
            break
        u.append([math.sqrt(2.0 / L) * math.cos(2 * math.pi * q * i / L) for i in range(L)])
        u.append([math.sqrt(2.0 / L) * math.sin(2 * math.pi * q * i / L) for i in range(L)])
    if L % 2 == 0:
        u.append([(-1) ** i / math.sqrt(L) for i in range(L)])
    U = np.array(u)
    assert U.shape == (L - 1, L)
    # orthonormal and orthogonal to the uniform mode
    full = np.vstack([U, np.ones(L) / math.sqrt(L)])
    assert np.allclose(full @ full.T, np.eye(L), atol=1e-14)
    return U


def reference(L, nu, nd, t, U, w0, g, M, basis, bc):
    ups = [m for m in range(1 << L) if popcount(m) == nu]
    dns = [m for m in range(1 << L) if popcount(m) == nd]
    nmodes = L if basis == "site" else L - 1
    phs = [v for v in itertools.product(range(M + 1), repeat=nmodes) if sum(v) <= M]  # lexicographic
    iu = {m: i for i, m in enumerate(ups)}
    idn = {m: i for i, m in enumerate(dns)}
    iph = {v: i for i, v in enumerate(phs)}
    nph = len(phs)
    ndn = len(dns)
    bonds = [(i, i + 1) for i in range(L - 1)]
    if bc == "periodic":
        bonds.append((L - 1, 0))
    umodes = normal_modes(L) if basis == "normal" else None
    ne = nu + nd
    shift = -(g * g * (ne * ne)) / (L * w0) if basis == "normal" else 0.0
    H = {}

    def add(i, j, v):
        H[(i, j)] = H.get((i, j), 0.0) + v

    for a, mu in enumerate(ups):
        for b, md in enumerate(dns):
            f = mu | (md << L)
            e = a * ndn + b
            # hopping, applied to the ket |f>: H[row(f'), row(f)]
            hops = []
            for (i, j) in bonds:
                for off in (0, L):
                    for (p, q) in ((i + off, j + off), (j + off, i + off)):
                        r = hop(f, p, q)
                        if r:
                            s, f2 = r
                            mu2, md2 = f2 & ((1 << L) - 1), f2 >> L
                            hops.append((iu[mu2] * ndn + idn[md2], -t * s))
            d = popcount(mu & md)
            dens = [((mu >> i) & 1) + ((md >> i) & 1) for i in range(L)]
            if basis == "site":
                rho = [float(x) for x in dens]
            else:
                rho = []
                for k in range(nmodes):
                    r = sum(umodes[k][i] * dens[i] for i in range(L))
                    rho.append(0.0 if abs(r) < 1e-12 else r)
            for c, v in enumerate(phs):
                col = e * nph + c
                for e2, amp in hops:
                    add(e2 * nph + c, col, amp)
                tot = sum(v)
                add(col, col, (U * d + w0 * tot) + shift)
                for k in range(nmodes):
                    if rho[k] == 0.0 or g == 0.0:
                        continue
                    if tot < M:  # b+_k
                        v2 = list(v)
                        v2[k] += 1
                        add(e * nph + iph[tuple(v2)], col, -g * rho[k] * math.sqrt(v[k] + 1))
                    if v[k] > 0:  # b_k
                        v2 = list(v)
                        v2[k] -= 1
                        add(e * nph + iph[tuple(v2)], col, -g * rho[k] * math.sqrt(v[k]))
    H = {k: x for k, x in H.items() if x != 0.0}
    return len(ups) * ndn * nph, H


def run_dump(exe, args):
    out = subprocess.run([exe] + [str(a) for a in args], check=True, capture_output=True, text=True).stdout
    lines = out.split("\n")
    N, nnz = (int(x) for x in lines[0].split()[:2])
    H = {}
    for ln in lines[1:]:
        if ln:
            i, j, v = ln.split()
            H[(int(i), int(j))] = float(v)
    assert len(H) == nnz
    return N, H


def main():
    exe = sys.argv[1]
    cases = [
        # L nu nd t U w0 g M basis bc
        (4, 2, 1, 1.0, 3.0, 0.8, 0.6, 2, "site", "periodic"),
        (4, 2, 1, 1.0, 3.0, 0.8, 0.6, 2, "normal", "periodic"),
        (4, 2, 2, 1.0, 3.0, 0.8, 0.6, 2, "site", "open"),
        (4, 2, 2, 0.7, 3.0, 0.8, 0.6, 3, "normal", "open"),
        (5, 2, 1, 1.0, 2.0, 1.0, 0.5, 2, "normal", "periodic"),
        (5, 3, 2, 1.0, 2.0, 1.0, 0.5, 1, "site", "periodic"),
        (2, 1, 1, 1.0, 1.0, 1.0, 0.5, 3, "site", "periodic"),
        (2, 1, 0, 1.0, 1.0, 1.0, 0.5, 4, "normal", "periodic"),
        (3, 3, 1, 1.0, 1.0, 1.0, 0.5, 3, "normal", "periodic"),
        (3, 2, 2, 1.0, 1.0, 0.5, 0.9, 3, "normal", "periodic"),
        (6, 3, 3, 1.0, 4.0, 1.0, 1.0, 2, "normal", "periodic"),  # HMEp with M = 2
    ]
    fails = 0
    for c in cases:
        N, Hc = run_dump(exe, c)
        Np, Hp = reference(*c)
        msg = []
        if N != Np:
            msg.append(f"N {N} vs reference {Np}")
        if set(Hc) != set(Hp):
            only_c = len(set(Hc) - set(Hp))
            only_p = len(set(Hp) - set(Hc))
            msg.append(f"non-zero pattern differs: {only_c} only in hh, {only_p} only in reference")
        else:
            err = max(abs(Hc[k] - Hp[k]) for k in Hc) if Hc else 0.0
            if err > 1e-12:
                msg.append(f"max entry difference {err:.3e}")
        ev = ""
        if N == Np and N <= 1500:
            A = np.zeros((N, N))
            B = np.zeros((N, N))
            for (i, j), v in Hc.items():
                A[i, j] = v
            for (i, j), v in Hp.items():
                B[i, j] = v
            ea, eb = np.linalg.eigvalsh(A), np.linalg.eigvalsh(B)
            de = np.max(np.abs(ea - eb))
            ev = f", E0 = {ea[0]:.12f}, max eigenvalue difference {de:.2e}"
            if de > 1e-10:
                msg.append(f"eigenvalues differ by {de:.3e}")
        status = "FAIL " + "; ".join(msg) if msg else "ok"
        print(f"{' '.join(str(x) for x in c)}: N = {N}, nnz = {len(Hc)}{ev}: {status}")
        fails += bool(msg)
    print("hh_numpy_reference:", "all cases agree" if not fails else f"{fails} case(s) failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
