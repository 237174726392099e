#!/usr/bin/env python3
"""chebfd_window.py -- a window holding about COUNT eigenvalues, from the KPM
moments of a `pjds-lanczos dos` result (bench/chebfd_bench.sh).

The smoothed number of eigenvalues below E is N sum_k g_k c_k(E) mu_k, with
the Jackson factors g_k of the file's moments and the Chebyshev coefficients
c_k of the indicator of [-1, x(E)] (as lanczos/chebfd_filter.c counts).  The
window [E_lo, E_hi] has BELOW eigenvalues under it and COUNT in it: with
BELOW > 0 an interior window, placed low in the spectrum, where the density of
states is smallest and the filter degree (about 1 / the window's width) the
lowest.

usage: chebfd_window.py DOS.h5 --count 100 [--below 100]
prints: "a, b" on the first line, then the center and the predicted degree."""
import argparse
import math

import h5py
import numpy as np


def jackson(M):
    q = math.pi / (M + 1)
    n = np.arange(M)
    return ((M - n + 1) * np.cos(q * n) + np.sin(q * n) / math.tan(q)) / (M + 1)


def below(mu, g, N, x):
    """Smoothed count of eigenvalues in [-1, x]."""
    x = min(max(x, -1.0), 1.0)
    tl, th = math.pi, math.acos(x)
    k = np.arange(1, len(mu))
    c = np.concatenate([[(tl - th) / math.pi], 2.0 * (np.sin(k * tl) - np.sin(k * th)) / (math.pi * k)])
    return N * float(np.sum(g * c * mu))


def solve_x(mu, g, N, goal):
    lo, hi = -1.0, 1.0
    for _ in range(80):
        m = 0.5 * (lo + hi)
        if below(mu, g, N, m) < goal:
            lo = m
        else:
            hi = m
    return hi


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dos")
    ap.add_argument("--count", type=float, default=100)
    ap.add_argument("--below", type=float, default=100)
    a = ap.parse_args()
    with h5py.File(a.dos) as f:
        g = f["dos"]
        mu = g["moments"][:]
        A, B = float(g.attrs["a"]), float(g.attrs["b"])
        N = float(f.attrs["rows"])
    jk = jackson(len(mu))
    xl = solve_x(mu, jk, N, a.below) if a.below > 0 else -1.0
    xh = solve_x(mu, jk, N, a.below + a.count)
    lo, hi = A * xl + B, A * xh + B
    w = xh - xl
    deg = max(16.0 * math.sqrt(max(1 - xl * xl, 0)) / w, 16.0 * math.sqrt(max(1 - xh * xh, 0)) / w)
    print("%.12g, %.12g" % (lo, hi))
    print("center %.12g, predicted filter degree %.0f (%d moments, %d rows)" % (0.5 * (lo + hi), deg, len(mu), N))


if __name__ == "__main__":
    main()
