#!/usr/bin/env bash
# Bad solver input around Krylov-Schur: exit status 2, exactly one line on
# stderr, no output file (nor a temporary one) left behind:
#   sym_imag      which = largest_imaginary on a symmetric problem (quickstart.ini)
#   lanczos_ns    method = lanczos on a nonsymmetric matrix (rdb800l)
#   which_foo     which = foo
#   method_foo    method = foo
#   restarts_*    max_restarts = -1 (file, --set) or a word other than auto
#                 (-1 would read as auto: refused while parsing)
# Environment: PJDS_BIN, PJDS_SRC, PJDS_MATRICES, PJDS_PYTHON.
set -u
mtx=${PJDS_MATRICES:-}/rdb800l.mtx
[ -f "$mtx" ] || { echo "skipped: $mtx not found"; exit 77; }
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
"$PJDS_PYTHON" "$PJDS_SRC/tools/mtx2h5.py" "$mtx" "$dir/m.h5" >/dev/null || { echo "FAIL: convert"; exit 1; }
cat >"$dir/ns.ini" <<EOT
[model]
type = hdf5
[matrix]
file = $dir/m.h5
[solver]
nev = 6
tolerance = 1e-10
[spmv]
backend = cpu
[output]
file = $dir/out.h5
EOT
# case name, config, regex the message must match, --set arguments...
check() {
  local name=$1 cfg=$2 re=$3; shift 3
  "$PJDS_BIN" solve "$cfg" --quiet --set "output.file=$dir/out.h5" "$@" >"$dir/$name.out" 2>"$dir/$name.err"
  local st=$? nl
  nl=$(wc -l <"$dir/$name.err")
  echo "$name: exit $st, stderr ($nl lines): $(head -c 300 "$dir/$name.err")"
  [ "$st" -eq 2 ] || die "$name: exit status $st, expected 2"
  [ "$nl" -eq 1 ] || die "$name: $nl lines on stderr, expected 1"
  grep -Eqi -- "$re" "$dir/$name.err" || die "$name: stderr does not match /$re/"
  local left
  left=$(find "$dir" -maxdepth 1 -name 'out.h5*')
  [ -z "$left" ] || { die "$name: output left behind: $left"; rm -f "$dir"/out.h5*; }
}
qs=$PJDS_SRC/configs/quickstart.ini
check sym_imag "$qs" "largest_imaginary|imaginary" --set solver.which=largest_imaginary
check lanczos_ns "$dir/ns.ini" "symmetric" --set solver.method=lanczos
check which_foo "$dir/ns.ini" "foo" --set solver.which=foo
check method_foo "$dir/ns.ini" "foo" --set solver.method=foo
sed 's/^nev = 6$/nev = 6\nwhich = foo/' "$dir/ns.ini" >"$dir/foo.ini"   # the key in the file, not --set
check which_foo_file "$dir/foo.ini" "foo"
check which_foo_sym "$qs" "foo" --set solver.which=foo
check method_foo_sym "$qs" "foo" --set solver.method=foo
sed 's/^nev = 6$/nev = 6\nmax_restarts = -1/' "$dir/ns.ini" >"$dir/mr.ini"
check restarts_neg_file "$dir/mr.ini" "mr.ini:[0-9]+: \[solver\] max_restarts: must be >= 0 or auto \(got -1\)"
check restarts_neg_set "$dir/ns.ini" "max_restarts=-3: \[solver\] max_restarts: must be >= 0 or auto" --set solver.max_restarts=-3
check restarts_word "$dir/ns.ini" "'soon' is neither auto nor an integer" --set solver.max_restarts=soon
# the control: the same configs solve (so the failures above come from the one bad key)
for mr in auto 0 7; do
  rm -f "$dir/out.h5"
  "$PJDS_BIN" solve "$dir/ns.ini" --quiet --set "output.file=$dir/out.h5" --set "solver.max_restarts=$mr" >/dev/null \
    2>"$dir/mr_$mr.err" || die "control: max_restarts = $mr failed: $(cat "$dir/mr_$mr.err")"
  [ -f "$dir/out.h5" ] || die "control: max_restarts = $mr: no output file"
done
rm -f "$dir/out.h5"
"$PJDS_BIN" solve "$dir/ns.ini" --quiet --set solver.which=largest_imaginary --set solver.nev=2 >/dev/null 2>"$dir/ok.err" \
  || die "control: nonsymmetric largest_imaginary failed: $(cat "$dir/ok.err")"
[ -f "$dir/out.h5" ] || die "control: no output file"
exit $fail
