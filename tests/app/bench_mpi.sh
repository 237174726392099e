#!/usr/bin/env bash
# `bench` under MPI: per exchange mode one row with the median
# apply time, the local/remote/comm split, rel_err <= 1e-12 against the
# host CSR product, and the parallel efficiency against the whole matrix
# timed as one rank in the same run (the "one rank" line); efficiency must
# equal t1 / (ranks x time_ms) as printed.
# Usage: bench_mpi.sh NP
set -u
np=$1
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
OMP_NUM_THREADS=1 mpiexec -n "$np" --allow-run-as-root --oversubscribe --bind-to none -x OMP_NUM_THREADS \
    "$PJDS_BIN" bench "$PJDS_SRC/configs/quickstart.ini" --set spmv.backend=cpu --set model.max_phonons=8 \
    --set spmv.repeats=10 >"$dir/out" 2>"$dir/err" || { echo "FAIL: bench exit $?"; cat "$dir/err"; exit 1; }
cat "$dir/out"
t1=$(sed -n 's/^one rank (.*): \([0-9.]*\) ms;.*/\1/p' "$dir/out")
[ -n "$t1" ] || { echo "FAIL: no one-rank reference line"; exit 1; }
awk -v t1="$t1" -v np="$np" '
  $1 ~ /^(vector|overlap|task)$/ {
    n++
    if (NF != 10) { print "FAIL: " $1 ": " NF " columns"; bad = 1; next }
    if ($9 + 0 > 1e-12) { print "FAIL: " $1 ": rel_err " $9; bad = 1 }
    want = t1 / (np * $2)
    if ($10 + 0 <= 0 || ($10 - want) > 1.5e-3 || (want - $10) > 1.5e-3) { print "FAIL: " $1 ": eff " $10 " want " want; bad = 1 }
  }
  END { if (n != 3) { print "FAIL: " n " mode rows"; bad = 1 } exit bad }' "$dir/out"
