#!/usr/bin/python3
"""The sweep table from bench/sweep_bench.sh: the one-run sweep against the
sum of separate solves (process start to file written, wall clock), the
per-point value refill against the first point's build + permute + upload,
and the SpMVs of warm against cold starts; plus the largest eigenvalue
difference sweep vs separate solves."""
import argparse
import os
import re

import h5py
import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", required=True)
    ap.add_argument("--warm", required=True)
    ap.add_argument("--cold", required=True)
    ap.add_argument("--single", required=True, help="directory of the separate results gG.h5")
    ap.add_argument("--gs", required=True)
    a = ap.parse_args()
    log = open(a.log).read()
    walls = {m.group(1): int(m.group(2)) for m in re.finditer(r"^SWEEP (\w+) exit \d+ wall_ms (\d+)", log, re.M)}
    singles = [int(x) for x in re.findall(r"^SINGLE g=\S+ exit 0 wall_ms (\d+)", log, re.M)]
    gs = a.gs.split()
    print(f"SWEEPTAB points {len(gs)}; separate runs that succeeded: {len(singles)}")
    t_sweep, t_sep = walls.get("warm", 0) / 1e3, sum(singles) / 1e3
    if "warm2" in walls:  # the same sweep again, --quiet: the figure is the mean of the two runs
        print(f"SWEEPTAB warm sweep runs: {walls['warm'] / 1e3:.2f} s (--verbose), {walls['warm2'] / 1e3:.2f} s (--quiet)")
        t_sweep = (walls["warm"] + walls["warm2"]) / 2e3
    if t_sep > 0:
        print(f"SWEEPTAB one-run sweep {t_sweep:.2f} s vs {len(singles)} separate solves {t_sep:.2f} s: "
              f"ratio {t_sweep / t_sep:.3f} (target <= 0.4); cold-start sweep {walls.get('cold', 0) / 1e3:.2f} s")
    with h5py.File(a.warm, "r") as f:
        ew = np.asarray(f["sweep/eigenvalues"][:])
        sw = np.asarray(f["sweep/spmv_count"][:])
        secs = np.asarray(f["sweep/solve_seconds"][:])
        p0 = f["points/0000"].attrs
        build0 = float(p0["build_seconds"]) + float(p0["permute_seconds"])
        refills = [float(f[f"points/{p:04d}"].attrs["refill_seconds"]) for p in range(1, len(ew))]
        rebuilt = np.asarray(f["sweep/rebuilt"][:]).tolist()
    with h5py.File(a.cold, "r") as f:
        sc = np.asarray(f["sweep/spmv_count"][:])
        ec = np.asarray(f["sweep/eigenvalues"][:])
    rmed = float(np.median(refills)) if refills else float("nan")
    print(f"SWEEPTAB first point build + permute + upload {build0:.3f} s; refill median {1e3 * rmed:.2f} ms, "
          f"max {1e3 * max(refills):.2f} ms = {100 * rmed / build0:.2f} % (target <= 10 %); rebuilt {rebuilt}")
    print(f"SWEEPTAB SpMVs warm {int(sw.sum())} vs cold {int(sc.sum())}: saving {100 * (1 - sw.sum() / sc.sum()):.1f} %; "
          f"per point warm {sw.tolist()} cold {sc.tolist()}")
    print(f"SWEEPTAB solve seconds per point (warm) median {np.median(secs):.3f}, sum {secs.sum():.2f}")
    diffs = []
    for i, g in enumerate(gs):
        p = os.path.join(a.single, f"g{g}.h5")
        if os.path.exists(p):
            with h5py.File(p, "r") as f:
                diffs.append(float(np.max(np.abs(np.asarray(f["eigenvalues"][:]) - ew[i]))))
    if diffs:
        print(f"SWEEPTAB max |eigenvalue sweep - separate| {max(diffs):.2e}; warm vs cold {np.nanmax(np.abs(ew - ec)):.2e}")


if __name__ == "__main__":
    main()
