#!/usr/bin/env bash
# `info configs/hmep.ini`: the seed paper's HMEp has 6,201,600 rows and pJDS
# needs 36.0 % less storage than ELLPACK (Kreutzer et al., Table I); the
# matrix-free tables that solve uses instead (400 x 15,504 states, ~2 MB).
set -u
out=$("$PJDS_BIN" info "$PJDS_SRC/configs/hmep.ini") || { echo "FAIL: info exited $?"; exit 1; }
echo "$out"
fail=0
echo "$out" | grep -qx "rows: 6201600" || { echo "FAIL: rows"; fail=1; }
red=$(echo "$out" | sed -n 's/^pjds_reduction_vs_ellpack: //p')
awk -v r="$red" 'BEGIN { exit !(r != "" && r - 0.360 <= 0.01 && 0.360 - r <= 0.01) }' || { echo "FAIL: reduction $red not within 0.01 of 0.360"; fail=1; }
nnz=$(echo "$out" | sed -n 's/^nnz: //p')
awk -v n="$nnz" 'BEGIN { exit !(n > 80000000 && n < 90000000) }' || { echo "FAIL: nnz $nnz not about 83 million"; fail=1; }
# one rank, format = auto: solve runs it matrix-free, and info gives the tables (about 2 MB for HMEp)
echo "$out" | grep -qx "solve_format: matrix_free (format = auto, one rank)" || { echo "FAIL: solve_format"; fail=1; }
tb=$(echo "$out" | sed -n 's/^matrix_free_table_bytes: //p')
awk -v b="$tb" 'BEGIN { exit !(b > 1000000 && b < 4000000) }' || { echo "FAIL: matrix_free_table_bytes $tb not about 2 MB"; fail=1; }
echo "$out" | grep -qx "matrix_free_electron_states: 400" || { echo "FAIL: 400 electron states"; fail=1; }
echo "$out" | grep -qx "matrix_free_phonon_states: 15504" || { echo "FAIL: 15504 phonon states"; fail=1; }
exit $fail
