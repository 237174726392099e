#!/usr/bin/env bash
# The C generator against an independent SciPy construction by Kronecker
# products (bench/hh_scipy.py): same rows, nnz and row-length histogram, and
# the eigenvalues of `solve` equal the dense (or ARPACK) reference to 1e-9.
# Usage: hh_vs_scipy.sh CASE
set -u
[ -x "${PJDS_PYTHON:-}" ] || { echo "skipped: no python with scipy"; exit 77; }
"$PJDS_PYTHON" -c "import scipy" 2>/dev/null || { echo "skipped: scipy missing"; exit 77; }
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
# case: sites up down M basis boundary t U w0 g
case $1 in
  hubbard4)      p=(4 2 2 0 site periodic 1 4 1 0) ;;
  site_periodic) p=(4 2 1 4 site periodic 1 3 1 0.7) ;;
  site_open)     p=(5 2 2 3 site open 1 2 0.8 0.5) ;;
  normal_even)   p=(4 2 2 4 normal periodic 1 4 1 1) ;;
  normal_odd)    p=(5 2 1 3 normal periodic 0.5 2 1.3 0.6) ;;
  normal_open)   p=(6 2 2 3 normal open 1 4 1 1) ;;
  two_sites)     p=(2 1 1 5 site periodic 1 1 1 0.4) ;;
  empty_spin)    p=(5 2 0 3 normal periodic 1 4 1 0.9) ;;
  *) echo "unknown case"; exit 1 ;;
esac
cat >"$dir/c.ini" <<EOT
[model]
type = holstein-hubbard
sites = ${p[0]}
n_up = ${p[1]}
n_down = ${p[2]}
max_phonons = ${p[3]}
phonon_basis = ${p[4]}
boundary = ${p[5]}
hopping = ${p[6]}
hubbard_u = ${p[7]}
phonon_frequency = ${p[8]}
coupling = ${p[9]}
[solver]
nev = 3
tolerance = 1e-12
[output]
file = $dir/out.h5
EOT
open=""; [ "${p[5]}" = open ] && open=--open
"$PJDS_PYTHON" "$PJDS_SRC/bench/hh_scipy.py" --sites ${p[0]} --up ${p[1]} --down ${p[2]} --max-phonons ${p[3]} \
  --basis ${p[4]} $open --t ${p[6]} --U ${p[7]} --w0 ${p[8]} --g ${p[9]} --stats --eigs 3 >"$dir/py" || exit 1
"$PJDS_BIN" info "$dir/c.ini" >"$dir/c" || exit 1
fail=0
for key in rows nnz row_length_histogram; do
  a=$(sed -n "s/^$key: *//p" "$dir/py"); b=$(sed -n "s/^$key: *//p" "$dir/c")
  if [ "$a" != "$b" ]; then echo "FAIL: $key: scipy '$a' vs pjds-lanczos '$b'"; fail=1; else echo "ok: $key: $a"; fi
done
grep -q "symmetric_max_diff: 0.000e+00" "$dir/py" || { echo "FAIL: reference not symmetric"; fail=1; }
# eigenvalues through solve
if "$PJDS_BIN" solve "$dir/c.ini" --quiet >"$dir/s" 2>"$dir/serr"; then
  for i in 0 1 2; do
    a=$(sed -n "s/^eigenvalue\[$i\]: *\([^ ]*\).*/\1/p" "$dir/py"); b=$(sed -n "s/^eigenvalue\[$i\]: *\([^ ]*\).*/\1/p" "$dir/s")
    if ! awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; if (d < 0) d = -d; m = a < 0 ? -a : a; if (m < 1) m = 1; exit !(b != "" && d <= 1e-9 * m) }'; then
      echo "FAIL: eigenvalue[$i]: scipy $a vs solve $b"; fail=1
    else echo "ok: eigenvalue[$i]: $a vs $b"; fi
  done
else
  echo "FAIL: solve failed: $(cat "$dir/serr")"; fail=1
fi
exit $fail
