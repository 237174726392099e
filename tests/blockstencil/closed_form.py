#!/usr/bin/env python3
"""closed_form.py -- the exact spectrum of the block-stencil operator
(docs/models.md, "Block-stencil"; hamiltonian/bs.h), independent of the C code.

A = M (x) B: eigenvalues lambda = m * delta with
  m     = shift + mu_x + mu_y + mu_z [+ corner (1 + mu_x)(1 + mu_y)(1 + mu_z), stencil 27]
  mu_d  = h_d (1 - 2 q / (n_d - 1)), q = 0..n_d-1 (0 when n_d = 1), h = (1, (sqrt5-1)/2, sqrt2-1)
  delta = r_p exp(+-i phi), r_p = 1 - p/b, p = 0..b//2-1, phi = rotation; odd b: 1 - (b//2)/b.

Library: closed_form_eigs(nx, ny, nz, b, stencil, convection, shift, corner, rotation)
  -> complex numpy array of all N eigenvalues (convection does not change them).
CLI:     closed_form.py CONFIG.ini [--which largest_magnitude] [--nev 6] [--set model.key=value ...]
  prints the wanted eigenvalues, one per line, 'real imag' (%.17g).
"""
import argparse
import configparser
import math
import sys

import numpy as np

H = (1.0, (math.sqrt(5.0) - 1.0) / 2.0, math.sqrt(2.0) - 1.0)
DEFAULTS = {"stencil": "27", "convection": "0.01", "shift": "1.0", "corner": "0.5", "rotation": "0.3", "seed": "1"}


def factor_mu(n, h):
    if n == 1:
        return np.zeros(1)
    q = np.arange(n, dtype=float)
    return h * (1.0 - 2.0 * q / (n - 1))


def block_delta(b, rotation):
    d = []
    for p in range(b // 2):
        r = 1.0 - p / b
        d += [r * complex(math.cos(rotation), math.sin(rotation)), r * complex(math.cos(rotation), -math.sin(rotation))]
    if b % 2:
        d.append(complex(1.0 - (b // 2) / b, 0.0))
    return np.array(d, dtype=complex)


def grid_eigs(nx, ny, nz, stencil, shift, corner):
    """The nx*ny*nz real eigenvalues m of the grid operator M."""
    mx, my, mz = factor_mu(nx, H[0]), factor_mu(ny, H[1]), factor_mu(nz, H[2])
    m = (shift + mz[:, None, None] + my[None, :, None] + mx[None, None, :]).ravel()
    if int(stencil) == 27:
        m = m + corner * ((1 + mz)[:, None, None] * (1 + my)[None, :, None] * (1 + mx)[None, None, :]).ravel()
    return m


def closed_form_eigs(nx, ny, nz, b, stencil, convection, shift, corner, rotation):
    """All N = nx ny nz b eigenvalues (complex), unsorted."""
    del convection  # a similarity: the spectrum does not depend on it
    m = grid_eigs(nx, ny, nz, stencil, shift, corner)
    return (m[:, None] * block_delta(b, rotation)[None, :]).ravel()


def select(ev, which, nev):
    """The nev wanted eigenvalues, in the order of the criterion (ties by real, then imag)."""
    keys = {
        "largest_magnitude": -np.abs(ev),
        "smallest_real": ev.real,
        "largest_real": -ev.real,
        "largest_imaginary": -np.abs(ev.imag),  # |Im|, as the solver (pairs together)
        "smallest": ev.real,
        "largest": -ev.real,
    }
    if which not in keys:
        raise SystemExit(f"closed_form.py: unknown --which {which}")
    order = np.lexsort((ev.imag, ev.real, keys[which]))
    return ev[order[:nev]]


def model_from_ini(path, sets=()):
    cp = configparser.ConfigParser(inline_comment_prefixes=("#", ";"))
    with open(path) as f:
        cp.read_string(f.read())
    md = dict(DEFAULTS)
    md.update(cp["model"])
    for s in sets:
        k, v = s.split("=", 1)
        sec, key = k.split(".", 1)
        if sec == "model":
            md[key] = v
    if md.get("type") != "block-stencil":
        raise SystemExit(f"closed_form.py: {path}: [model] type is not block-stencil")
    solver = cp["solver"] if cp.has_section("solver") else {}
    return md, solver


def eigs_from_model(md):
    return closed_form_eigs(int(md["nx"]), int(md["ny"]), int(md["nz"]), int(md["block_size"]), int(md["stencil"]),
                            float(md["convection"]), float(md["shift"]), float(md["corner"]), float(md["rotation"]))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("config")
    ap.add_argument("--which", default=None, help="default: the config's [solver] which, else largest_magnitude")
    ap.add_argument("--nev", type=int, default=None, help="default: the config's [solver] nev, else 6")
    ap.add_argument("--set", action="append", default=[], help="section.key=value override, as pjds-lanczos --set")
    a = ap.parse_args(argv)
    md, solver = model_from_ini(a.config, a.set)
    which = a.which or solver.get("which", "largest_magnitude")
    nev = a.nev or int(solver.get("nev", 6))
    for z in select(eigs_from_model(md), which, nev):
        print(f"{z.real:.17g} {z.imag:.17g}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
