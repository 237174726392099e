#!/usr/bin/env python3
"""The layering rules of docs/design.md, checked on the source tree.

1. Each folder includes only headers of the folders below it (the table LAYERS):
   core <- io, hamiltonian <- spmv <- lanczos <- api <- app <- bench/src;
   factor (sparse direct factorisations) sits on core, st (spectral transformations)
   on spmv, factor and lanczos; only app/ uses them (not libpjds, api/).
   Only app/ (and what sits on it) knows the config file, pl_config.h.
2. The generic operator code (spmv/op*.c) chooses no behaviour by backend name
   and calls no GPU transport function directly: it goes through the backend table.
3. Nothing below app/ ends the process (exit, abort, MPI_Abort): errors are codes.
Usage: check_layers.py SOURCE_DIR.  Prints every violation; exit 1 if any."""
import os
import re
import sys

SRC = sys.argv[1] if len(sys.argv) > 1 else "."
# folder -> the folders whose headers it may include ("generated": pl_build.h)
LAYERS = {
    "core": {"core"},
    "io": {"core", "io"},
    "hamiltonian": {"core", "hamiltonian"},
    "spmv": {"core", "spmv"},
    "lanczos": {"core", "spmv", "lanczos"},
    "factor": {"core", "factor"},
    "st": {"core", "spmv", "factor", "lanczos", "st"},
    "api": {"core", "io", "hamiltonian", "spmv", "lanczos", "api", "include"},
    "app": {"core", "io", "hamiltonian", "spmv", "factor", "lanczos", "st", "api", "include", "app"},
}
BELOW_APP = [f for f in LAYERS if f not in ("app",)]
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def top(path):
    return os.path.relpath(path, SRC).split(os.sep)[0]


def sources(folders):
    for f in folders:
        for root, _, files in os.walk(os.path.join(SRC, f)):
            for n in sorted(files):
                if n.endswith((".c", ".h", ".cu", ".cuh")):
                    yield os.path.join(root, n)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def main():
    # where each project header lives (by basename; pl_build.h is generated)
    home = {}
    for p in sources(list(LAYERS) + ["bench"]):
        if p.endswith((".h", ".cuh")):
            home.setdefault(os.path.basename(p), top(p))
    bad = []
    for p in sources(LAYERS):
        layer = top(p)
        text = open(p, encoding="utf-8").read()
        code = strip_comments(text)
        rel = os.path.relpath(p, SRC)
        for m in INCLUDE.finditer(code):
            name = m.group(1)
            base = os.path.basename(name)
            if base == "pl_build.h":
                continue
            if name.startswith("pjds/"):
                where = "include"
            else:
                where = home.get(base)
            if where is None:
                continue  # a system or third-party header in quotes
            if where not in LAYERS[layer]:
                bad.append(f"{rel}: includes {name} ({where}/), above or beside {layer}/")
        if layer in BELOW_APP:
            for m in re.finditer(r"\b(exit|_Exit|abort|MPI_Abort)\s*\(", code):
                line = code[: m.start()].count("\n") + 1
                bad.append(f"{rel}:{line}: {m.group(1)}() below app/: return an error code")
        if layer == "spmv" and os.path.dirname(rel) == "spmv" and os.path.basename(rel).startswith("op"):
            for i, ln in enumerate(code.split("\n"), 1):
                if re.search(r"strcmp\s*\(.*name", ln):
                    bad.append(f"{rel}:{i}: chooses by backend name: use the backend table")
                if re.search(r"\bpl_gpu_\w+\s*\(", ln):
                    bad.append(f"{rel}:{i}: calls a GPU transport function directly: use the backend table")
    for b in bad:
        print(b)
    print(f"check_layers: {len(bad)} violation(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
