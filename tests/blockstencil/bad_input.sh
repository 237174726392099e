#!/usr/bin/env bash
# Bad block-stencil input: each case must exit with status 2 and print exactly
# one line on stderr that names the file, the line and the key.
# Usage: bad_input.sh CASE   (PJDS_BIN = the pjds-lanczos executable)
set -u
case_name=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cfg=$dir/bad.ini
base() { # a valid small block-stencil model; $1 = extra [model] lines
cat >"$cfg" <<EOT
[model]
type = block-stencil
nx = 3
ny = 4
nz = 5
block_size = 2
${1:-}
EOT
}
expect=""
case $case_name in
  missing_nx)   base ""; sed -i '/^nx = /d' "$cfg"; expect="bad.ini: \[model\] missing key 'nx'" ;;
  block_size_0) base ""; sed -i 's/^block_size = 2/block_size = 0/' "$cfg"; expect="bad.ini:6: \[model\] block_size: must be in 1..64" ;;
  block_size_65) base ""; sed -i 's/^block_size = 2/block_size = 65/' "$cfg"; expect="bad.ini:6: \[model\] block_size: must be in 1..64" ;;
  nx_0)         base ""; sed -i 's/^nx = 3/nx = 0/' "$cfg"; expect="bad.ini:3: \[model\] nx: must be >= 1" ;;
  convection_1) base "convection = 1"; expect="bad.ini:7: \[model\] convection: must be in \[0, 1\)" ;;
  rotation_0)   base "rotation = 0"; expect="bad.ini:7: \[model\] rotation: must be in \(0, pi\)" ;;
  rotation_pi)  base "rotation = 3.1415926535897932"; expect="bad.ini:7: \[model\] rotation: must be in \(0, pi\)" ;;
  stencil_9)    base "stencil = 9"; expect="bad.ini:7: \[model\] stencil: '9' is not one of 7\|27" ;;
  too_many_rows) base ""; sed -i 's/^nx = 3/nx = 2000000000/; s/^ny = 4/ny = 2000000000/; s/^nz = 5/nz = 2000000000/' "$cfg"
                expect="bad.ini:6: \[model\] block_size: N = .* does not fit 64 bits" ;;
  too_many_nnz) base ""; sed -i 's/^nx = 3/nx = 2000000000/; s/^ny = 4/ny = 2000000000/; s/^nz = 5/nz = 1/' "$cfg"
                expect="bad.ini:6: \[model\] block_size: the number of non-zeros .* does not fit 64 bits" ;;
  *) echo "unknown case $case_name"; exit 1 ;;
esac
"$PJDS_BIN" info "$cfg" >"$dir/out" 2>"$dir/err"
status=$?
fail=0
if [ "$status" -ne 2 ]; then echo "FAIL: exit status $status, expected 2"; fail=1; fi
nlines=$(wc -l <"$dir/err")
if [ "$nlines" -ne 1 ]; then echo "FAIL: $nlines lines on stderr, expected 1"; fail=1; fi
if ! grep -Eq -- "$expect" "$dir/err"; then echo "FAIL: stderr does not match /$expect/"; fail=1; fi
echo "stderr: $(cat "$dir/err")"
exit $fail
