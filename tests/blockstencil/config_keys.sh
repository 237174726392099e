#!/usr/bin/env bash
# [model] keys by type: block-stencil needs none of the holstein-hubbard keys
# and holstein-hubbard none of the block-stencil ones; the resolved
# configuration (pl_config_dump, stored in result files) lists only the
# [model] keys of the configured type.  [spmv] sort_window: auto and numbers
# are written as read, bad values refused.
# Usage: config_keys.sh CONFIG_DUMP   (PJDS_BIN = the pjds-lanczos executable)
set -u
dump=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
printf '[model]\ntype = block-stencil\nnx = 2\nny = 2\nnz = 2\nblock_size = 2\n' >"$dir/bs.ini"
printf '[model]\ntype = holstein-hubbard\nsites = 4\nn_up = 1\nn_down = 1\nmax_phonons = 1\n' >"$dir/hh.ini"
"$PJDS_BIN" info "$dir/bs.ini" >"$dir/bs.out" 2>"$dir/bs.err" || { echo "FAIL: block-stencil without hh keys: $(cat "$dir/bs.err")"; fail=1; }
"$PJDS_BIN" info "$dir/hh.ini" >"$dir/hh.out" 2>"$dir/hh.err" || { echo "FAIL: holstein-hubbard without bs keys: $(cat "$dir/hh.err")"; fail=1; }
grep -q "^rows: 16$" "$dir/bs.out" || { echo "FAIL: block-stencil rows"; fail=1; }
"$dump" "$dir/bs.ini" >"$dir/bs.full" || { echo "FAIL: dump block-stencil"; fail=1; }
"$dump" "$dir/hh.ini" >"$dir/hh.full" || { echo "FAIL: dump holstein-hubbard"; fail=1; }
model_part() { awk '/^\[/ { m = ($0 == "[model]") } m' "$1"; }
model_part "$dir/bs.full" >"$dir/bs.dump"
model_part "$dir/hh.full" >"$dir/hh.dump"
for k in nx ny nz block_size stencil convection shift corner rotation seed; do
  grep -q "^$k = " "$dir/bs.dump" || { echo "FAIL: block-stencil dump lacks $k"; fail=1; }
  grep -q "^$k = " "$dir/hh.dump" && { echo "FAIL: holstein-hubbard dump lists $k"; fail=1; }
done
for k in sites n_up n_down hopping hubbard_u phonon_frequency coupling max_phonons phonon_basis boundary; do
  grep -q "^$k = " "$dir/hh.dump" || { echo "FAIL: holstein-hubbard dump lacks $k"; fail=1; }
  grep -q "^$k = " "$dir/bs.dump" && { echo "FAIL: block-stencil dump lists $k"; fail=1; }
done
grep -q "^\[matrix\]" "$dir/bs.full" && { echo "FAIL: block-stencil dump lists [matrix]"; fail=1; }
# [solver] seed stays in both
grep -A20 "^\[solver\]" "$dir/bs.full" | grep -q "^seed = " || { echo "FAIL: [solver] seed missing"; fail=1; }
# [spmv] sort_window: auto (the default) is written as auto, a number as
# given; a written configuration reads back to the same one
spmv_part() { awk '/^\[/ { m = ($0 == "[spmv]") } m' "$1"; }
spmv_part "$dir/hh.full" | grep -q "^sort_window = auto$" || { echo "FAIL: default sort_window not dumped as auto"; fail=1; }
for w in auto 0 1 65520; do
  printf '%s\n[spmv]\nsort_window = %s\n' "$(cat "$dir/hh.ini")" "$w" >"$dir/sw.ini"
  "$dump" "$dir/sw.ini" >"$dir/sw.full" || { echo "FAIL: sort_window = $w refused"; fail=1; continue; }
  spmv_part "$dir/sw.full" | grep -q "^sort_window = $w$" || { echo "FAIL: sort_window = $w dumped as $(grep '^sort_window' "$dir/sw.full")"; fail=1; }
  "$dump" "$dir/sw.full" >"$dir/sw.again" || { echo "FAIL: the dump of sort_window = $w does not read back"; fail=1; continue; }
  cmp -s "$dir/sw.full" "$dir/sw.again" || { echo "FAIL: sort_window = $w: dump, read, dump differ"; fail=1; }
done
for w in -1 -3 fast; do
  printf '%s\n[spmv]\nsort_window = %s\n' "$(cat "$dir/hh.ini")" "$w" >"$dir/sw.ini"
  "$dump" "$dir/sw.ini" >/dev/null 2>"$dir/sw.err"; st=$?
  [ $st -eq 2 ] && [ "$(wc -l <"$dir/sw.err")" -eq 1 ] && grep -q "\[spmv\] sort_window: " "$dir/sw.err" ||
    { echo "FAIL: sort_window = $w: exit $st, stderr: $(cat "$dir/sw.err")"; fail=1; }
done
[ $fail -eq 0 ] && echo "ok"
exit $fail
