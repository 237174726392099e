#!/usr/bin/python3
"""fuzz.py PROBE CORPUSDIR [N] — mutate the valid control files of the
corpus (random bytes overwritten, fixed seed, so the test is repeatable) and
import each through PROBE (h5m_probe): the result must be PL_OK (0) or
PL_ERR_INPUT (1), never a crash, a hang or another code.  All mutations of
a file go to one probe process; if it dies, each is rerun alone to name the
culprit.  The controls use fixed-length string attributes, as
tools/mtx2h5.py and pl_h5m_write write them (variable-length strings sit in
HDF5's global heap, where the HDF5 1.10 C library itself can crash on
damaged data)."""
import collections
import os
import random
import subprocess
import sys


def run(probe, files, timeout):
    try:
        r = subprocess.run([probe] + files, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    lines = r.stdout.decode(errors="replace").splitlines()
    if r.returncode != 0 or len(lines) != len(files):
        return None
    return [ln.split(" ", 1)[0] for ln in lines]


def main():
    probe, corpus = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    rng = random.Random(20240601)
    bad = 0
    fdir = os.path.join(corpus, "fuzz")
    os.makedirs(fdir, exist_ok=True)
    for base in ("ok_full.h5", "ok_lower.h5", "ok_matlab_ns.h5", "ok_coo_ns.h5"):
        path = os.path.join(corpus, base)
        if not os.path.isfile(path):
            print(f"skipped: {path} missing", file=sys.stderr)
            return 77
        data = open(path, "rb").read()
        files = []
        for t in range(n):
            d = bytearray(data)
            for _ in range(rng.choice([1, 2, 4, 8, 16])):
                d[rng.randrange(len(d))] = rng.randrange(256)
            files.append(os.path.join(fdir, f"{t:04d}_{base}"))
            with open(files[-1], "wb") as f:
                f.write(d)
        codes = run(probe, files, 120)
        if codes is None:  # find the culprits one by one
            codes = []
            for f in files:
                c = run(probe, [f], 30)
                codes.append(c[0] if c else "crash or hang")
        res = collections.Counter(codes)
        for f, c in zip(files, codes):
            if c not in ("0", "1"):
                bad += 1
                print(f"{f}: {c}", file=sys.stderr)
            else:
                os.remove(f)
        print(f"{base}: {n} mutations: {dict(res)}  (0 = imported, 1 = PL_ERR_INPUT)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
