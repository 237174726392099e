#!/usr/bin/python3
"""Summary of the CFD-like runs of bench/gpu_run.sh.

usage: cfd_summary.py --bench NAME=BENCH.json ... --solve SOLVE.log ... --h5 RESULT.h5 ...
                      --config configs/uhbr_like.ini

- bench: pJDS (best window and kernel) against the memory floor of the same
  run (12 B/nnz + 20 B/row at the measured device copy bandwidth), cuSPARSE
  CSR, ELLPACK-R (time and device memory).
- solve: the Krylov-Schur step (one SpMV + the fused two-pass Gram-Schmidt)
  against its memory-traffic floor: the SpMV floor of the bench run of the
  same matrix plus the step's Gram-Schmidt bytes (the solve prints MB per
  step: every column pass of the basis counted once) at the copy bandwidth.
- h5: the returned eigenvalues against the closed form of the block-stencil
  operator (tests/blockstencil/closed_form.py).
Lines that matter start with "CFD", "step" or "eig" (gpu_run.sh keeps them).
"""
import argparse
import json
import os
import re
import sys

import numpy as np


def bench_line(name, path):
    with open(path) as f:
        b = json.load(f)
    fl, bw = b["floor_ms"], b["copy_gbs"]
    fm = {r["format"]: r for r in b["formats"]}
    best = [r for r in b["formats"] if r["format"].startswith("pJDS (best") and r["ms"]]
    p = min(best, key=lambda r: r["ms"]) if best else None
    csr, ell = fm.get("cuSPARSE CSR"), fm.get("ELLPACK-R")
    op = fm.get("pJDS operator (solve path)")
    foot = fm.get("pJDS footprint")
    out = [f"CFD {name}: {b['device']}, {b['rows']} rows, {b['nnz']} nnz, copy {bw:.0f} GB/s, floor {fl:.4f} ms"]
    if p:
        out.append(f"CFD {name}: pJDS {p['ms']:.4f} ms ({100 * fl / p['ms']:.1f} % of floor, sigma {p['sigma']}, {p['kernel']})")
    if op and op["ms"]:
        out.append(f"CFD {name}: solve's operator {op['ms']:.4f} ms ({100 * fl / op['ms']:.1f} % of floor, sigma {op['sigma']})")
    if p and csr and csr["ms"]:
        out.append(f"CFD {name}: cuSPARSE CSR {csr['ms']:.4f} ms ({100 * fl / csr['ms']:.1f} %): pJDS {csr['ms'] / p['ms']:.2f}x faster")
    if p and ell and ell["ms"] and foot:
        out.append(f"CFD {name}: ELLPACK-R {ell['ms']:.4f} ms, {ell['bytes'] / 1e6:.0f} MB; pJDS {foot['bytes'] / 1e6:.0f} MB "
                   f"({100 * (1 - foot['bytes'] / ell['bytes']):.1f} % less) at {ell['ms'] / p['ms']:.2f}x its speed")
    for r in b["formats"]:
        if r["format"].startswith("pJDS blocked") and r["ms"]:
            own = r.get("floor_ms")
            sp = (csr["ms"] / r["ms"]) if csr and csr["ms"] else float("nan")
            out.append(f"CFD {name}: {r['format']} sigma {r['sigma']} {r['ms']:.4f} ms"
                       + (f" ({100 * own / r['ms']:.1f} % of its floor {own:.4f} ms)" if own else "")
                       + f", {sp:.2f}x cuSPARSE CSR")
    return out, fl, bw


STEP = re.compile(r"Krylov-Schur step ([\d.]+) ms \((\d+) steps\): SpMV ([\d.]+) ms \+ Gram-Schmidt ([\d.]+) ms "
                  r"\(([\d.]+) MB")


def solve_lines(path, spmv_floor_ms, bw):
    out = []
    txt = open(path).read()
    m = STEP.search(txt)
    it = re.search(r"(converged|max_restarts|stagnated|inaccurate|breakdown) after (\d+) restart\(s\), (\d+) SpMVs", txt)
    tm = re.search(r"solve ([\d.]+) s \(SpMV ([\d.]+) s, orth ([\d.]+) s, restart ([\d.]+) s\)", txt)
    tag = os.path.basename(path)
    if it:
        out.append(f"step {tag}: {it.group(1)} after {it.group(2)} restarts, {it.group(3)} SpMVs"
                   + (f", solve {tm.group(1)} s (SpMV {tm.group(2)}, orth {tm.group(3)}, restart {tm.group(4)})" if tm else ""))
    if m and spmv_floor_ms and bw:
        step, spmv, gs, mb = float(m.group(1)), float(m.group(3)), float(m.group(4)), float(m.group(5))
        gs_floor = mb * 1e6 / (bw * 1e9) * 1e3
        fl = spmv_floor_ms + gs_floor
        out.append(f"step {tag}: {step:.3f} ms = SpMV {spmv:.3f} + GS {gs:.3f}; floor {fl:.3f} ms = SpMV "
                   f"{spmv_floor_ms:.3f} + GS {gs_floor:.3f} ({mb:.0f} MB); ratio {step / fl:.2f}x")
    elif not m:
        out.append(f"step {tag}: no Krylov-Schur step line (failed?)")
    return out


def eig_lines(h5path, config):
    import h5py
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "blockstencil"))
    import closed_form as cf
    with h5py.File(h5path, "r") as f:
        lam = np.asarray(f["eigenvalues"][:])
        if lam.dtype.names:
            lam = lam["r"] + 1j * lam["i"]
        res = f["residual_norms"][:]
        which = f.attrs["which"]
        which = which.decode() if isinstance(which, bytes) else str(which)
    md, _ = cf.model_from_ini(config)
    ev = cf.eigs_from_model(md)
    ref = cf.select(ev, which, len(lam) + 2)
    err = 0.0
    for z in lam:
        err = max(err, np.min(np.abs(ref - z)) / abs(z))
    return [f"eig {os.path.basename(h5path)}: {len(lam)} values, max rel. error vs closed form {err:.2e}, "
            f"max residual {res.max():.2e}, lambda_0 = {lam[0]:.12g}"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", action="append", default=[], help="NAME=BENCH.json")
    ap.add_argument("--solve", action="append", default=[])
    ap.add_argument("--h5", action="append", default=[])
    ap.add_argument("--config", default="configs/uhbr_like.ini")
    ap.add_argument("--solve-bench", default=None, help="NAME of the bench whose floor applies to the solves")
    a = ap.parse_args()
    floors = {}
    for nb in a.bench:
        name, path = nb.split("=", 1)
        try:
            lines, fl, bw = bench_line(name, path)
            floors[name] = (fl, bw)
            print("\n".join(lines))
        except (OSError, ValueError, KeyError) as e:
            print(f"CFD {name}: no bench result ({e})")
    fl, bw = floors.get(a.solve_bench or (a.bench[-1].split("=")[0] if a.bench else ""), (None, None))
    for s in a.solve:
        try:
            print("\n".join(solve_lines(s, fl, bw)))
        except OSError as e:
            print(f"step {s}: {e}")
    for h in a.h5:
        try:
            print("\n".join(eig_lines(h, a.config)))
        except Exception as e:  # report, do not stop the summary
            print(f"eig {h}: {e}")


if __name__ == "__main__":
    main()
