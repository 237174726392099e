"""slepc_env.py -- Debian's SLEPc and PETSc for Python, for the peer scripts of bench/ (cpu_peers.py,
nonsym_peer.py, sinvert_peers.py).  Debian's petsc4py.pth / slepc4py.pth read PETSC_DIR / SLEPC_DIR at
interpreter start-up, which these scripts set themselves, so the package paths are added here."""
import os
import sys

os.environ.setdefault("PETSC_DIR", "/usr/lib/petscdir/petsc3.18/x86_64-linux-gnu-real")
os.environ.setdefault("SLEPC_DIR", "/usr/lib/slepcdir/slepc3.18/x86_64-linux-gnu-real")

_mods = None


def slepc_modules():
    """(PETSc, SLEPc), initialised once, with PETSc's log on."""
    global _mods
    if _mods is None:
        for var in ("PETSC_DIR", "SLEPC_DIR"):
            d = os.path.join(os.environ[var], "lib/python3/dist-packages")
            if d not in sys.path:
                sys.path.append(d)
        import slepc4py
        slepc4py.init([sys.argv[0]])
        from petsc4py import PETSc
        from slepc4py import SLEPc
        PETSc.Log.begin()
        _mods = (PETSc, SLEPc)
    return _mods
