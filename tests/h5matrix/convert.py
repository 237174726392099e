#!/usr/bin/python3
"""convert.py OUTDIR — test fixture: convert real SuiteSparse matrices from
$PJDS_MATRICES with tools/mtx2h5.py into OUTDIR (never into the repo) and
write OUTDIR/matrices.tsv:
h5file<TAB>group<TAB>mtxfile<TAB>symmetric<TAB>lower<TAB>asymmetric
(symmetric: the attribute; asymmetric: 1 if the values are not symmetric).
Symmetric ones are stored full and lower, in separate files and together in
one shared file under groups.  Also checks that mtx2h5.py refuses --lower on
a nonsymmetric matrix (exit 2).  Exit 77 (skip) without the matrices."""
import os
import subprocess
import sys

SYMMETRIC = ["lund_a", "mhd4800b"]
GENERAL = ["rdb800l", "fidapm05", "e05r0000", "cryg2500", "memplus", "fidap007", "olm1000", "lns_3937"]
# 'general' banner but exactly symmetric values (Stokes flow, Re = 0)
SYMMETRIC_VALUES = ["fidapm05", "e05r0000"]


def main():
    out = sys.argv[1]
    mdir = os.environ.get("PJDS_MATRICES", "")
    src = os.environ.get("PJDS_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
    if not mdir or not os.path.isdir(mdir):
        print(f"skipped: matrices folder '{mdir}' missing", file=sys.stderr)
        return 77
    tool = [sys.executable, os.path.join(src, "tools", "mtx2h5.py")]
    os.makedirs(out, exist_ok=True)
    rows = []
    shared = os.path.join(out, "shared.h5")
    if os.path.exists(shared):
        os.remove(shared)

    def run(args, expect=0):
        r = subprocess.run(tool + args, capture_output=True, text=True)
        if r.returncode != expect:
            print(f"mtx2h5 {' '.join(args)}: exit {r.returncode}, expected {expect}\n{r.stdout}{r.stderr}",
                  file=sys.stderr)
            sys.exit(1)

    for name in SYMMETRIC + GENERAL:
        mtx = os.path.join(mdir, name + ".mtx")
        if not os.path.isfile(mtx):
            print(f"note: {mtx} missing, not converted", file=sys.stderr)
            continue
        sym = 1 if name in SYMMETRIC else 0
        asym = 0 if sym or name in SYMMETRIC_VALUES else 1
        full = os.path.join(out, name + "_full.h5")
        if os.path.exists(full):
            os.remove(full)
        run([mtx, full])
        rows.append((full, "/", mtx, sym, 0, asym))
        if sym:
            low = os.path.join(out, name + "_lower.h5")
            if os.path.exists(low):
                os.remove(low)
            run([mtx, low, "--lower"])
            rows.append((low, "/", mtx, 1, 1, 0))
            run([mtx, shared, "--group", f"/{name}/lower", "--lower"])
            rows.append((shared, f"/{name}/lower", mtx, 1, 1, 0))
        run([mtx, shared, "--group", f"/{name}/full"])
        rows.append((shared, f"/{name}/full", mtx, sym, 0, asym))
        if asym:
            run([mtx, os.path.join(out, "refused.h5"), "--lower"], expect=2)
            run([mtx, os.path.join(out, "refused.h5"), "--lower", "--detect-symmetric"], expect=2)
        elif not sym:  # symmetric values: --detect-symmetric marks them, --lower halves the file
            run([mtx, shared, "--group", f"/{name}/detected", "--lower", "--detect-symmetric"])
            rows.append((shared, f"/{name}/detected", mtx, 1, 1, 0))
    if not rows:
        print("skipped: no matrices converted", file=sys.stderr)
        return 77
    with open(os.path.join(out, "matrices.tsv"), "w") as f:
        for r in rows:
            f.write("\t".join(str(x) for x in r) + "\n")
    print(f"converted {len(rows)} matrix groups into {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
