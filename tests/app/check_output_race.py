#!/usr/bin/env python3
"""check_output_race.py -- an output file that appears while a run works is
never replaced without --overwrite (io/pl_place.c).

Two runs started together with the same [output] file both found it free;
the one that finishes second must not replace the other's result.  The test
hook PJDS_TEST_BEFORE_PLACE=FILE creates FILE just before the final
placement, as the first run would, so the race is deterministic.  For
solve, spectral, dos, export, merge and a sweep:
  - exit status 2, one line on stderr naming the file and the name under
    which this run's result is kept;
  - the other run's file is untouched;
  - the kept file is a complete result file (h5py reads its datasets);
and with --overwrite the result replaces the file (exit 0).  PJDS_TEST_PLACE_LINK=1
runs the link + unlink placement (file systems without RENAME_NOREPLACE).
usage: check_output_race.py PJDS_BIN [MPIEXEC NP-FLAG FLAGS...]   (with
MPIEXEC: solve and dos on 2 ranks only; exit 77 = skipped: no h5py)"""
import os
import re
import subprocess
import sys
import tempfile

try:
    import h5py
except ImportError:
    print("skipped: no h5py")
    sys.exit(77)

exe = sys.argv[1]
mpi = sys.argv[2:]
MODEL = """[model]
type = holstein-hubbard
sites = 4
n_up = 2
n_down = 2
hubbard_u = 4
coupling = 0.5
max_phonons = 3
cutoff_warn = 1
phonon_basis = site
[solver]
nev = 2
[spmv]
backend = cpu
"""
HOOK_TEXT = b"written by the test hook PJDS_TEST_BEFORE_PLACE\n"
fail = 0


def check(ok, what):
    global fail
    if not ok:
        print("FAIL: " + what)
        fail = 1
    return ok


def run(cmd, env_extra=None):
    env = dict(os.environ)
    env.update(env_extra or {})
    return subprocess.run(cmd, capture_output=True, text=True, env=env)


def own_lines(stderr):
    """stderr lines of pjds-lanczos (mpiexec adds its own banner)"""
    return [l for l in stderr.splitlines() if l.startswith("pjds-lanczos")]


def race(name, cmd, out, datasets, env_extra=None, nlines_all=True):
    """run cmd with the hook creating `out`; expect exit 2 and a kept result"""
    env = {"PJDS_TEST_BEFORE_PLACE": out}
    env.update(env_extra or {})
    p = run(cmd, env)
    lines = own_lines(p.stderr)
    print("%s: exit %d, %s" % (name, p.returncode, " | ".join(lines)))
    check(p.returncode == 2, "%s: exit status %d, expected 2; stderr %r" % (name, p.returncode, p.stderr[-800:]))
    check(len(lines) == 1, "%s: %d lines from pjds-lanczos on stderr, expected 1" % (name, len(lines)))
    if nlines_all:
        check(len(p.stderr.strip().splitlines()) == 1, "%s: stderr is not one line: %r" % (name, p.stderr))
    check("Traceback" not in p.stderr and "traceback" not in p.stderr, "%s: a traceback" % name)
    msg = lines[0] if lines else ""
    check(out in msg, "%s: the message does not name %s" % (name, out))
    with open(out, "rb") as f:
        check(f.read() == HOOK_TEXT, "%s: the other run's %s was changed" % (name, out))
    m = re.search(r"kept as (\S+)$", msg)
    if not check(m is not None, "%s: no 'kept as NAME' in %r" % (name, msg)):
        return
    kept = m.group(1)
    if not check(os.path.isfile(kept) and kept != out, "%s: the kept result %s is missing" % (name, kept)):
        return
    try:
        with h5py.File(kept, "r") as f:
            for ds in datasets:
                check(ds in f and f[ds].size > 0, "%s: kept file %s lacks %s" % (name, kept, ds))
    except OSError as e:
        check(False, "%s: kept file %s is not readable: %s" % (name, kept, e))
    os.unlink(kept)
    os.unlink(out)


def overwrite(name, cmd, out, datasets):
    """with --overwrite the hook's file is replaced by the result"""
    p = run(cmd + ["--overwrite"], {"PJDS_TEST_BEFORE_PLACE": out})
    check(p.returncode == 0, "%s --overwrite: exit %d %s" % (name, p.returncode, p.stderr[-500:]))
    try:
        with h5py.File(out, "r") as f:
            for ds in datasets:
                check(ds in f, "%s --overwrite: %s lacks %s" % (name, out, ds))
    except OSError as e:
        check(False, "%s --overwrite: %s is not the result: %s" % (name, out, e))
    print("%s --overwrite: exit %d" % (name, p.returncode))


with tempfile.TemporaryDirectory() as d:
    cfg = os.path.join(d, "m.ini")
    with open(cfg, "w") as f:
        f.write(MODEL)
    q = ["--quiet"]
    if mpi:  # 2 ranks: rank 0 places, every rank exits 2, one line (mpiexec may add its own)
        mpi = [mpi[0], mpi[1], "2"] + mpi[2:]
        out = os.path.join(d, "np2.h5")
        race("solve 2 ranks", mpi + [exe, "solve", cfg] + q + ["--set", "output.file=" + out], out,
             ["eigenvalues", "residual_norms"], nlines_all=False)
        out = os.path.join(d, "dos2.h5")
        race("dos 2 ranks", mpi + [exe, "dos", cfg, "--set", "kpm.moments=64"] + q +
             ["--set", "output.file=" + out], out, ["dos/density"], nlines_all=False)
        sys.exit(fail)
    o = lambda n: os.path.join(d, n)
    solve = [exe, "solve", cfg] + q + ["--set", "output.file=" + o("solve.h5")]
    race("solve", solve, o("solve.h5"), ["eigenvalues", "residual_norms", "convergence/residual_estimates"])
    race("solve (link + unlink)", solve, o("solve.h5"), ["eigenvalues"], {"PJDS_TEST_PLACE_LINK": "1"})
    overwrite("solve", solve, o("solve.h5"), ["eigenvalues"])
    # without the hook, the link + unlink placement places the file and leaves no temporary
    p = run([exe, "solve", cfg] + q + ["--set", "output.file=" + o("link.h5")], {"PJDS_TEST_PLACE_LINK": "1"})
    left = [n for n in os.listdir(d) if n.startswith("link.h5.")]
    check(p.returncode == 0 and os.path.isfile(o("link.h5")) and not left,
          "solve (link + unlink, no race): exit %d, left %s" % (p.returncode, left))
    spectral = [exe, "spectral", cfg, "--set", "spectral.steps=30"] + q + ["--set", "output.file=" + o("spec.h5")]
    race("spectral", spectral, o("spec.h5"), ["eigenvalues", "spectral/omega"])
    dos = [exe, "dos", cfg, "--set", "kpm.moments=64"] + q + ["--set", "output.file=" + o("dos.h5")]
    race("dos", dos, o("dos.h5"), ["dos/density", "dos/moments"])
    overwrite("dos", dos, o("dos.h5"), ["dos/density"])
    export = [exe, "export", cfg, o("m.h5")] + q
    race("export", export, o("m.h5"), ["row_ptr", "col_idx", "values"])
    overwrite("export", export, o("m.h5"), ["values"])
    sweep = [exe, "solve", cfg, "--set", "sweep.coupling=0.0, 0.5"] + q + ["--set", "output.file=" + o("sweep.h5")]
    race("sweep", sweep, o("sweep.h5"), ["sweep/status"])
    # a complete sweep, then merge it into a file that appears meanwhile
    p = run(sweep)
    check(p.returncode == 0, "sweep: exit %d %s" % (p.returncode, p.stderr[-500:]))
    merge = [exe, "merge", o("merged.h5"), o("sweep.h5")] + q
    race("merge", merge, o("merged.h5"), ["sweep/eigenvalues", "points/0000/eigenvalues"])
    overwrite("merge", merge, o("merged.h5"), ["sweep/eigenvalues"])
sys.exit(fail)
