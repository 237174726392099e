#!/usr/bin/env bash
# `solve` says whether the matrix is symmetric, what says so, and the method that follows (issue 29:
# "solve never says that it found the matrix symmetric and chose Lanczos"): a generated Holstein-Hubbard
# model, a generated nonsymmetric block stencil, an exported file (its symmetric attribute), the same
# file with the attribute 0 (the numerical check) and with the check off (unknown: Krylov-Schur);
# and the memory plan's basis for the file that says it is symmetric.
set -u
BIN=${PJDS_BIN:?}; SRC=${PJDS_SRC:?}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail=0
expect() { # name, pattern, command...
  local name=$1 pat=$2; shift 2
  local out; out=$("$@" --overwrite --set output.file="$T/o.h5" --set spmv.backend=cpu 2>&1)
  local line; line=$(printf '%s\n' "$out" | grep -E "solve: matrix .* is (symmetric|nonsymmetric|of unknown symmetry)")
  if printf '%s\n' "$line" | grep -qE "$pat"; then echo "ok   $name: $line"
  else echo "FAIL $name: expected /$pat/, got: ${line:-no such line} $(printf '%s' "$out" | tail -2)"; fail=1; fi
}
expect generated "is symmetric \(the generator\): method lanczos \(auto\)" \
  "$BIN" solve "$SRC/configs/quickstart.ini" --set model.max_phonons=2
expect stencil "is nonsymmetric \(the generator\): method krylov-schur \(auto\)" \
  "$BIN" solve "$SRC/configs/block_stencil_small.ini"
"$BIN" export "$SRC/configs/quickstart.ini" "$T/m.h5" --set model.max_phonons=2 >/dev/null 2>&1 || { echo "FAIL export"; exit 1; }
expect attribute "is symmetric \(the file's symmetric attribute\): method lanczos \(auto\)" \
  "$BIN" solve "$SRC/configs/import.ini" --set matrix.file="$T/m.h5"
# the memory plan, made before any row is read, plans the basis of the method that will run: Lanczos's
# (ncv 24 at nev 4) for a file that says it is symmetric, Krylov-Schur's (32) where it runs
plan() { # name, pattern, extra arguments...
  local name=$1 pat=$2; shift 2
  local line; line=$("$BIN" solve "$SRC/configs/import.ini" --set matrix.file="$T/m.h5" --verbose --overwrite \
    --set output.file="$T/o.h5" --set spmv.backend=cpu "$@" 2>&1 | grep -E "memory plan: the largest rank")
  if printf '%s\n' "$line" | grep -qE "$pat"; then echo "ok   plan $name: $line"
  else echo "FAIL plan $name: expected /$pat/, got: ${line:-no such line}"; fail=1; fi
}
plan "symmetric file, auto" "a basis of ncv 24\)"
plan "symmetric file, krylov-schur" "a basis of ncv 32\)" --set solver.method=krylov-schur
/usr/bin/python3 - "$T/m.h5" <<'PY' || { echo "FAIL: could not drop the attribute"; exit 1; }
import sys, h5py
with h5py.File(sys.argv[1], "r+") as f:
    f.attrs["symmetric"] = 0  # (0: not known to be symmetric)
PY
expect checked "is symmetric \(the numerical check, \[matrix\] check_symmetry\): method lanczos \(auto\)" \
  "$BIN" solve "$SRC/configs/import.ini" --set matrix.file="$T/m.h5" --set matrix.check_symmetry=true
expect unchecked "is of unknown symmetry \(not checked: \[matrix\] check_symmetry = false\): method krylov-schur \(auto\)" \
  "$BIN" solve "$SRC/configs/import.ini" --set matrix.file="$T/m.h5" --set matrix.check_symmetry=false
exit $fail
