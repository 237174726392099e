#!/usr/bin/env bash
# `info configs/hmep.ini`: the seed paper's HMEp has 6,201,600 rows and pJDS
# needs 36.0 % less storage than ELLPACK (Kreutzer et al., Table I).
set -u
out=$("$PJDS_BIN" info "$PJDS_SRC/configs/hmep.ini") || { echo "FAIL: info exited $?"; exit 1; }
echo "$out"
fail=0
echo "$out" | grep -qx "rows: 6201600" || { echo "FAIL: rows"; fail=1; }
red=$(echo "$out" | sed -n 's/^pjds_reduction_vs_ellpack: //p')
awk -v r="$red" 'BEGIN { exit !(r != "" && r - 0.360 <= 0.01 && 0.360 - r <= 0.01) }' || { echo "FAIL: reduction $red not within 0.01 of 0.360"; fail=1; }
nnz=$(echo "$out" | sed -n 's/^nnz: //p')
awk -v n="$nnz" 'BEGIN { exit !(n > 80000000 && n < 90000000) }' || { echo "FAIL: nnz $nnz not about 83 million"; fail=1; }
exit $fail
