#!/usr/bin/python3
"""SIGTERM in every phase of a run, through the real `pjds-lanczos` binary on the CPU backend.

usage: signal_test.py CASE RANKS     (env PJDS_BIN, PJDS_SRC; PJDS_MPIEXEC for RANKS > 1)
cases:
  build         SIGTERM during the build of configs/dlr1_like.ini (40.5 M non-zeros; 2-5 s to generate, permute
                and upload with one thread on two cores, 0.5 s in): exit status 3 within 2 s (asserted <= 3 s
                for a loaded machine; the time is printed), the one line "stopped by SIGTERM during the
                generation (or permutation and upload) of the matrix; nothing to save ...", no output, no
                checkpoint and no temporary file; then a rerun (1 rank) or `solve --resume` (2 ranks, the
                ranks signalled as srun does) of a small config with the same output file succeeds
  solve         a solve whose cycles take seconds (184,800 rows, ncv 120, full reorthogonalisation):
                SIGTERM in its first cycle: exit 3 at once, nothing to save, no file; SIGTERM in its second
                cycle: exit 3 within 2 s (<= 3 s) with a checkpoint, no result file
  resume        SIGTERM inside a cycle (PJDS_TEST_SIGNAL_STEP: before the K-th step, a look at every step)
                of Lanczos and of Krylov-Schur: exit 3 with the checkpoint of the last end of a cycle;
                `solve --resume` gives the uninterrupted eigenvalues (stdout, 17 digits: to 1e-10, and
                says whether bit for bit) and removes it; Lanczos's checkpoint also with the shorter state
                of before verify's certificate: accepted, the same eigenvalues bit for bit; and Lanczos
                stopped inside verify's search (the certificate in the state), and inside the second
                search that a missed copy of a triple level starts from a fresh vector (3-D Laplacian)
  dos_spectral  SIGTERM during the Chebyshev moments of dos and the ground-state solve of spectral: exit
                3 within 2 s (<= 3 s), the one line, no file
Exit 0 = pass, 1 = fail."""
import os
import shutil
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

BIN = os.environ["PJDS_BIN"]
SRC = os.environ["PJDS_SRC"]
CONFIGS = os.path.join(SRC, "configs")
LIMIT = 3.0  # seconds from the signal to the exit: 2 s asked, slack for a loaded CI machine
FAIL = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        FAIL.append(what)


def command(ranks, args):
    pre = os.environ["PJDS_MPIEXEC"].split() + [str(ranks)] if ranks > 1 else []
    return pre + [BIN] + args


def env_for(ranks, extra=None):
    e = dict(os.environ)
    if ranks > 1:
        e.update({"OMP_NUM_THREADS": "1", "OMP_WAIT_POLICY": "passive"})
    e.update(extra or {})
    return e


def sets(pairs):
    out = []
    for p in pairs:
        out += ["--set", p]
    return out


class Run:
    """A started run whose stderr lines are collected with their times."""

    def __init__(self, ranks, args, env=None):
        self.ranks = ranks
        self.t0 = time.time()
        self.p = subprocess.Popen(command(ranks, args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=env_for(ranks, env))
        self.lines = []
        self.out = []
        self.seen = threading.Condition()
        threading.Thread(target=self._read, args=(self.p.stderr, self.lines), daemon=True).start()
        threading.Thread(target=self._read, args=(self.p.stdout, self.out), daemon=True).start()

    def _read(self, f, into):
        for line in f:
            with self.seen:
                into.append((time.time() - self.t0, line.rstrip("\n")))
                self.seen.notify_all()

    def wait_for(self, text, timeout=600):
        """Wait for a stderr line containing text; False if the run ended or the time ran out first."""
        end = time.time() + timeout
        with self.seen:
            while True:
                if any(text in l for _, l in self.lines):
                    return True
                if self.p.poll() is not None or time.time() > end:
                    return False
                self.seen.wait(0.05)

    def signal(self, sig, tag):
        """sig to the ranks (as srun gives it to every task): pgrep by a tag of the command line; the
        launcher (mpirun) itself is left alone, so its exit status is the ranks' (3)."""
        self.t_sig = time.time()
        if self.ranks == 1:
            self.p.send_signal(sig)
            return
        r = subprocess.run(["pgrep", "-f", tag], capture_output=True, text=True)
        for pid in {int(x) for x in r.stdout.split()} - {self.p.pid, os.getpid()}:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass

    def finish(self, timeout=900):
        rc = self.p.wait(timeout=timeout)
        self.t_end = time.time()
        time.sleep(0.1)  # the reader threads take the last lines
        return rc

    def after_signal(self):
        return self.t_end - self.t_sig

    def stderr(self):
        return "\n".join(l for _, l in self.lines)

    def stops(self):
        return [l for _, l in self.lines if l.startswith("pjds-lanczos: stopped by")]


def run(ranks, args, env=None):
    return subprocess.run(command(ranks, args), capture_output=True, text=True, timeout=900, env=env_for(ranks, env))


def eigenvalues(stdout):
    return [l.split()[1] for l in stdout.splitlines() if l.startswith("eigenvalue[")]


NOTHING = "nothing to save (no solve had started); rerun to start again"


def case_build(ranks):
    """SIGTERM during the build: exit 3 at once, one line, nothing left; a rerun starts cleanly."""
    ini = os.path.join(CONFIGS, "dlr1_like.ini")
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "build.h5")
        r = Run(ranks, ["solve", ini, "--verbose"] + sets([f"output.file={out}", "spmv.backend=cpu"]))
        started = r.wait_for("debug: solve: ")  # main's line just before the build
        # into the generation or the permutation: on an idle machine the generation (one thread) took
        # 0.1-1.5 s and the permutation 0.3 s (2026-11-25), so 0.5 s at times fell into the solve
        time.sleep(0.2)
        built = any("solve: N = " in l for _, l in r.lines)
        r.signal(signal.SIGTERM, f"output.file={out}")
        code = r.finish()
        dt = r.after_signal()
        stops = r.stops()
        print(f"SIGTERM {r.t_sig - r.t0:.2f} s after the start, exit {code} {dt:.2f} s after the signal: "
              f"{stops[0] if stops else r.stderr()[-500:]}")
        check(started and not built, "the signal came during the build (before 'solve: N =')")
        check(code == 3, f"exit status 3 (got {code})")
        check(dt <= LIMIT, f"exit {dt:.2f} s after SIGTERM (<= {LIMIT} s; 2 s asked)")
        pat = r"pjds-lanczos: stopped by SIGTERM during the (generation|permutation and upload) of the matrix; "
        check(len(stops) == 1 and re.fullmatch(pat + re.escape(NOTHING), stops[0]) is not None,
              f"one line naming the phase: {stops}")
        left = sorted(os.listdir(d))
        check(left == [], f"no output, checkpoint or temporary file left ({left})")
        # a rerun (1 rank) or solve --resume (2 ranks) of a small config with the same output file
        small = os.path.join(CONFIGS, "quickstart.ini")
        args = ["solve", small] + (["--resume"] if ranks > 1 else []) + sets([f"output.file={out}", "spmv.backend=cpu"])
        q = run(ranks, args)
        check(q.returncode == 0 and os.path.exists(out) and len(eigenvalues(q.stdout)) == 4,
              f"{'solve --resume' if ranks > 1 else 'a rerun'} then succeeds (exit {q.returncode}: "
              f"{q.stderr.strip()[-300:]})")
        if ranks > 1:
            check("no checkpoint" in q.stderr and "starting afresh" in q.stderr, "--resume: no checkpoint, afresh")
        left = sorted(os.listdir(d))
        check(left == ["build.h5"], f"then only the result file ({left})")


def long_cycles(out):
    """hh_184800 with cycles of seconds: ncv 200, full reorthogonalisation (ncv 120 made a first cycle
    of 1.4 s on an idle 2-core CI machine: a signal 0.3 s into it fell within the 1 s in which the solver
    runs on to the end of the cycle and checkpoints, instead of the nothing-saved path this case tests)."""
    return ["solve", os.path.join(CONFIGS, "hh_184800.ini")] + sets(
        [f"output.file={out}", "spmv.backend=cpu", "solver.ncv=200", "solver.reorthogonalization=full"])


def case_solve(ranks):
    with tempfile.TemporaryDirectory() as d:
        # the first cycle (seconds): nothing to save yet, so no wait for its end
        out = os.path.join(d, "first.h5")
        r = Run(ranks, long_cycles(out))
        got = r.wait_for("solve: N = ")
        time.sleep(0.3)
        cycled = any("solve: restart" in l for _, l in r.lines)
        r.signal(signal.SIGTERM, f"output.file={out}")
        code = r.finish()
        dt = r.after_signal()
        stops = r.stops()
        print(f"first cycle: exit {code} {dt:.2f} s after SIGTERM: {stops}")
        check(got and not cycled, "the signal came in the first cycle")
        check(code == 3 and dt <= LIMIT, f"exit 3 within {LIMIT} s (got {code} after {dt:.2f} s)")
        line = ("pjds-lanczos: stopped by SIGTERM during the first cycle of the solve; nothing to save (no cycle "
                "of the solve had ended); rerun to start again")
        check(stops == [line], f"the one line of the first cycle ({stops})")
        left = sorted(os.listdir(d))
        check(left == [], f"no file left ({left})")
        # the second cycle: the checkpoint of the first cycle's end, within 2 s
        out = os.path.join(d, "second.h5")
        r = Run(ranks, long_cycles(out))
        got = r.wait_for("solve: restart 0")  # the first end of a cycle (cycles last > 1 s: it prints)
        time.sleep(0.5)
        r.signal(signal.SIGTERM, f"output.file={out}")
        code = r.finish()
        dt = r.after_signal()
        err = r.stderr()
        ck = [l for l in err.splitlines() if "checkpoint: wrote" in l or "stopped at a checkpoint" in l]
        print(f"second cycle: exit {code} {dt:.2f} s after SIGTERM: {ck}")
        check(got and code == 3 and dt <= LIMIT, f"exit 3 within {LIMIT} s (got {code} after {dt:.2f} s)")
        check(any("stopped at a checkpoint" in l for l in ck), "it says it stopped at a checkpoint")
        left = sorted(os.listdir(d))
        check(left == ["second.h5.ckpt"], f"the checkpoint and no result or temporary file ({left})")


def resume_shorter_state(ranks, ini, out, extra, e_ref):
    """A Lanczos checkpoint written before verify's certificate (lz_cert.c) joined the state: /state/dbl
    without its 7 + 2 (ncv + 1) last values.  The resume accepts it and, the stop being in the main phase
    (the certificate starts with the search), gives the uninterrupted eigenvalues bit for bit.  The
    checkpoint itself is put back for the caller's resume."""
    import shutil
    import h5py
    ck = out + ".ckpt"
    shutil.copyfile(ck, ck + ".keep")
    with h5py.File(ck, "r+") as f:
        m = int(f.attrs["ncv"])
        d = f["/state/dbl"][...]
        del f["/state/dbl"]
        f.create_dataset("/state/dbl", data=d[: len(d) - (7 + 2 * (m + 1))])
    r = run(ranks, ["solve", ini, "--resume"] + sets([f"output.file={out}", "spmv.backend=cpu"] + extra))
    e = eigenvalues(r.stdout)
    check(r.returncode == 0 and e == e_ref, f"lanczos: --resume of the shorter state of before the certificate = the "
          f"uninterrupted eigenvalues bit for bit (exit {r.returncode}: {e} vs {e_ref}; {r.stderr.strip()[-200:]})")
    os.replace(ck + ".keep", ck)
    if os.path.exists(out):
        os.remove(out)


def laplace3d_file(path, g=12):
    """The 3-D Laplacian on a g^3 grid (triple levels) as a matrix file (tools/mtx2h5.py), and a config."""
    import numpy as np
    import scipy.io
    import scipy.sparse as sp
    t = sp.diags([-np.ones(g - 1), 2 * np.ones(g), -np.ones(g - 1)], [-1, 0, 1])
    i = sp.identity(g)
    a = (sp.kron(sp.kron(t, i), i) + sp.kron(sp.kron(i, t), i) + sp.kron(sp.kron(i, i), t)).tocsr()
    scipy.io.mmwrite(path + ".mtx", a, symmetry="symmetric")
    subprocess.run([sys.executable, os.path.join(SRC, "tools", "mtx2h5.py"), path + ".mtx", path], check=True,
                   capture_output=True)
    ini = path + ".ini"
    with open(ini, "w") as f:
        f.write(f"[model]\ntype = hdf5\n[matrix]\nfile = {path}\ngroup = /\n[solver]\nnev = 4\ntolerance = 1e-10\n")
    return ini


def case_resume(ranks):
    """A stop inside a cycle keeps the state of the cycle's start: the resume equals the uninterrupted run."""
    tmp = tempfile.mkdtemp()
    lap3d = laplace3d_file(os.path.join(tmp, "lap3d.h5"))
    cases = [
        ("lanczos", os.path.join(SRC, "tests", "sweep", "hh_long.ini"), ["model.max_phonons=4"], 30),
        # stopped inside verify's search (products 268-340 of 340): its certificate is in the state
        ("lanczos-search", os.path.join(SRC, "tests", "sweep", "hh_long.ini"), ["model.max_phonons=4"], 230),
        # stopped inside the second search of verify, which starts from a fresh vector after the
        # triple level's second copy was locked (5 locked columns; 250 products in all)
        ("lanczos-fresh-search", lap3d, [], 200),
        ("krylov-schur", os.path.join(CONFIGS, "block_stencil_small.ini"),
         ["model.nx=6", "model.ny=40", "model.nz=40", "model.block_size=4", "solver.ncv=14",
          "solver.tolerance=1e-10", "spmv.backend=cpu"], 30),
    ]
    with tempfile.TemporaryDirectory() as d:
        for name, ini, extra, step in cases:
            ref = os.path.join(d, f"{name}_ref.h5")
            r = run(ranks, ["solve", ini] + sets([f"output.file={ref}", "spmv.backend=cpu"] + extra))
            check(r.returncode == 0, f"{name}: uninterrupted solve (exit {r.returncode}: {r.stderr.strip()[-300:]})")
            e_ref = eigenvalues(r.stdout)
            spmvs_ref = re.findall(r"converged after \d+ restart\(s\), (\d+) SpMVs", r.stderr)
            out = os.path.join(d, f"{name}.h5")
            args = ["solve", ini, "--verbose"] + sets([f"output.file={out}", "spmv.backend=cpu"] + extra)
            s = run(ranks, args, {"PJDS_TEST_SIGNAL_STEP": str(step)})
            stop = [l for l in s.stderr.splitlines() if "stopped at a checkpoint after" in l]
            wrote = [l for l in s.stderr.splitlines() if "checkpoint: wrote" in l]
            print(f"{name}: exit {s.returncode}: {wrote} {stop}")
            check(s.returncode == 3 and len(stop) == 1 and os.path.exists(out + ".ckpt") and not os.path.exists(out),
                  f"{name}: SIGTERM inside a cycle: exit 3 with a checkpoint, no result file")
            if name == "lanczos":
                resume_shorter_state(ranks, ini, out, extra, e_ref)
            if name in ("lanczos-search", "lanczos-fresh-search"):
                import h5py
                with h5py.File(out + ".ckpt", "r") as f:
                    nlock = int(f["/state/ints"][8])  # KR_ST_NLOCK (lanczos/krylov_impl.h)
                want = 5 if name == "lanczos-fresh-search" else None
                check(nlock > 0 and (want is None or nlock == want),
                      f"{name}: the checkpoint lies inside verify's {'second ' if want else ''}search "
                      f"({nlock} locked columns)")
            r = run(ranks, ["solve", ini, "--resume"] + sets([f"output.file={out}", "spmv.backend=cpu"] + extra))
            e = eigenvalues(r.stdout)
            close = r.returncode == 0 and len(e) == len(e_ref) > 0 and all(
                abs(float(a) - float(b)) <= 1e-10 * max(1.0, abs(float(b))) for a, b in zip(e, e_ref))
            # bit for bit where the checkpoint holds all the state (docs/operations.md, "Checkpoint and restart")
            check(close, f"{name}: --resume = the uninterrupted eigenvalues to 1e-10 ({e} vs {e_ref}; "
                  f"{'all 17 digits equal' if e == e_ref else 'not bit for bit'})")
            check(not os.path.exists(out + ".ckpt"), f"{name}: the checkpoint is removed after the resume")
            if name in ("lanczos-search", "lanczos-fresh-search"):  # the certificate resumed too: the same stop
                spmvs = re.findall(r"converged after \d+ restart\(s\), (\d+) SpMVs", r.stderr)
                check(spmvs == spmvs_ref and spmvs, f"{name}: the resumed search ends at the same product "
                      f"({spmvs} vs {spmvs_ref})")
    shutil.rmtree(tmp, ignore_errors=True)


def case_dos_spectral(ranks):
    hh = os.path.join(CONFIGS, "hmep.ini")
    small = ["model.max_phonons=8", "spmv.backend=cpu"]  # 514,800 rows
    runs = [
        ("dos", os.path.join(CONFIGS, "kpm_hmep.ini"), small, "dos: spectral bounds", "the Chebyshev moments"),
        ("spectral", hh, small + ["spectral.operator=density", "spectral.momentum=1", "solver.ncv=60",
                                  "solver.reorthogonalization=full"], "format: ",
         "the ground-state solve"),
    ]
    with tempfile.TemporaryDirectory() as d:
        for cmd, ini, extra, mark, phase in runs:
            out = os.path.join(d, f"{cmd}.h5")
            r = Run(ranks, [cmd, ini] + sets([f"output.file={out}"] + extra))
            got = r.wait_for(mark)
            time.sleep(0.3)
            r.signal(signal.SIGTERM, f"output.file={out}")
            code = r.finish()
            dt = r.after_signal()
            stops = r.stops()
            print(f"{cmd}: exit {code} {dt:.2f} s after SIGTERM: {stops}")
            line = (f"pjds-lanczos: stopped by SIGTERM during {phase}; nothing to save ({cmd} has no checkpoints); "
                    "rerun to start again")
            check(got and code == 3 and dt <= LIMIT, f"{cmd}: exit 3 within {LIMIT} s (got {code} after {dt:.2f} s)")
            check(stops == [line], f"{cmd}: the one line ({stops})")
            left = sorted(os.listdir(d))
            check(left == [], f"{cmd}: no file left ({left})")


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 1
    case, ranks = sys.argv[1], int(sys.argv[2])
    {"build": case_build, "solve": case_solve, "resume": case_resume, "dos_spectral": case_dos_spectral}[case](ranks)
    print("PASS" if not FAIL else f"FAILED: {len(FAIL)} check(s)")
    return 1 if FAIL else 0


if __name__ == "__main__":
    sys.exit(main())
