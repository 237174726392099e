#!/usr/bin/env python3
"""check_plot.py -- tools/plot.py draws a non-empty PNG of the expected size
for each kind of result file: a solve (convergence, phonons, correlations),
a sweep (eigenvalues against the parameter), a spectral run (+ A(w)) and a
dos run (the density of states).
usage: check_plot.py PJDS_BIN SRC_DIR   (exit 77 = skipped: no matplotlib)"""
import os
import struct
import subprocess
import sys
import tempfile

try:
    import matplotlib  # noqa: F401
except ImportError:
    print("skipped: no matplotlib (tools/setup-deps.sh installs python3-matplotlib)")
    sys.exit(77)

exe, src = sys.argv[1], sys.argv[2]
plot = os.path.join(src, "tools", "plot.py")
model = """[model]
type = holstein-hubbard
sites = 4
n_up = 2
n_down = 2
hubbard_u = 4
coupling = 0.5
max_phonons = 3
phonon_basis = site
[solver]
nev = 2
[spmv]
backend = cpu
"""
fail = 0
with tempfile.TemporaryDirectory() as d:
    cfg = os.path.join(d, "m.ini")
    with open(cfg, "w") as f:
        f.write(model)
    runs = {
        "solve": ([exe, "solve", cfg], (1200, 800), "convergence, phonons, correlations"),
        "sweep": ([exe, "solve", cfg, "--set", "sweep.coupling=0.0, 0.5, 1.0"], (600, 400), "sweep"),
        "spectral": ([exe, "spectral", cfg, "--set", "spectral.steps=50"], (1200, 800), "spectral"),
        "dos": ([exe, "dos", cfg, "--set", "kpm.moments=128"], (600, 400), "dos"),
    }
    for name, (cmd, size, panels) in runs.items():
        h5 = os.path.join(d, name + ".h5")
        png = os.path.join(d, name + ".png")
        p = subprocess.run(cmd + ["--quiet", "--set", "output.file=" + h5], capture_output=True, text=True)
        if p.returncode:
            print("FAIL: %s: exit %d %s" % (name, p.returncode, p.stderr[-500:]))
            fail = 1
            continue
        p = subprocess.run([sys.executable, plot, h5, "--out", png], capture_output=True, text=True)
        if p.returncode or not os.path.exists(png):
            print("FAIL: plot.py %s: exit %d %s" % (name, p.returncode, p.stderr[-500:]))
            fail = 1
            continue
        with open(png, "rb") as f:
            head = f.read(24)
        w, h = struct.unpack(">II", head[16:24])
        ok = head[:8] == b"\x89PNG\r\n\x1a\n" and (w, h) == size and os.path.getsize(png) > 10000 and panels in p.stdout
        print("%s: %dx%d, %d bytes, %s" % (name, w, h, os.path.getsize(png), p.stdout.strip()))
        if not ok:
            print("FAIL: %s: expected a %dx%d PNG with %s" % (name, size[0], size[1], panels))
            fail = 1
    # a file that is not a result: exit 2, one line
    bad = os.path.join(d, "bad.h5")
    open(bad, "w").write("not hdf5")
    p = subprocess.run([sys.executable, plot, bad], capture_output=True, text=True)
    if p.returncode != 2 or len(p.stderr.strip().splitlines()) != 1:
        print("FAIL: plot.py on a non-HDF5 file: exit %d, stderr %r" % (p.returncode, p.stderr))
        fail = 1
sys.exit(fail)
