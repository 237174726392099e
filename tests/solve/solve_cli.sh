#!/usr/bin/env bash
# CLI tests of `pjds-lanczos solve`.  Usage: solve_cli.sh CASE [ARGS]
# Environment: PJDS_BIN (the executable), SOLVE_CHECK (tests/solve/solve_check),
# PJDS_H5DUMP (h5dump), MPIEXEC (mpiexec + flags, for the mpi case).
# Cases:
#   sort         sort_window = 1 and full pJDS sort: same eigenvalues (dense
#                reference too), eigenvectors in the original basis satisfy
#                ||A v - lambda v|| <= tol * max(|lambda|, normest)
#   largest      which = largest, nev = 1 and 4 against dense
#   h5dump       every dataset and attribute of docs/formats.md, "HDF5 result schema" exists
#   bad_nev bad_tol bad_which unwritable exists (bad_tol: tolerance and verify_probability)
#                exit 2, one line on stderr, no output (or temporary) file
#   kill         SIGKILL mid-solve leaves no output file
#   not_converged  max_restarts reached: exit 0, a warning (even with --quiet),
#                results and converged_reason = max_restarts written
#   mpi NP MODE  NP ranks, exchange MODE: eigenvalues equal the 1-rank run,
#                gathered eigenvectors pass the residual check
#   matrix_free_mpi  format = matrix_free (and auto, and kron_split = phonon) on 2 and 3 ranks =
#                one rank's eigenvalues, eigenvectors and observables; the attribute
#                spmv_kron_split; info's halo lines; more ranks than electron configurations: exit 2
#   startup      the start-up (docs/operations.md, "Start-up"): a singleton with backend auto and
#                cpu (MPI and the backend in threads of their own) and 2 ranks under MPIEXEC (MPI
#                started at once): exit 0, the same eigenvalues, the `solve: phases:` line with wall
#                and waits, wall_seconds >= total_seconds - 0.05 and the start-up attributes; SIGTERM
#                early in the start-up: exit 3 with the one line (or 143: before main), no file
set -u
case_name=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }

# a small Holstein-Hubbard model: L=4, 2 up, 2 down, M=3 site phonons (N = 1260)
model() {
cat <<EOT
[model]
type = holstein-hubbard
sites = 4
n_up = 2
n_down = 2
hopping = 1.0
hubbard_u = 4.0
phonon_frequency = 1.0
coupling = ${1:-0.6}
max_phonons = ${2:-3}
phonon_basis = site
boundary = periodic
EOT
}
# write a config: $1 = name, $2 = [solver] lines, $3 = [spmv] lines, $4 = [output] lines
mkcfg() {
  { model; printf '[solver]\n%s\n[spmv]\nbackend = cpu\n%s\n[output]\nfile = %s/%s.h5\n%s\n' "$2" "$3" "$dir" "$1" "$4"; } >"$dir/$1.ini"
}
run_solve() { # $1 = name; extra args after
  local name=$1; shift
  "$PJDS_BIN" solve "$dir/$name.ini" --quiet "$@" >"$dir/$name.out" 2>"$dir/$name.err"
}
no_files() { # no output file, no temporary
  local n
  n=$(find "$dir" -maxdepth 1 -name "$1.h5*" | wc -l)
  [ "$n" -eq 0 ] || die "files left behind: $(find "$dir" -maxdepth 1 -name "$1.h5*")"
}
expect_input_error() { # $1 = name, $2 = regex
  local status=$3
  [ "$status" -eq 2 ] || die "exit status $status, expected 2"
  local nl
  nl=$(wc -l <"$dir/$1.err")
  [ "$nl" -eq 1 ] || die "$nl lines on stderr, expected 1"
  grep -Eq "$2" "$dir/$1.err" || die "stderr does not match /$2/"
  echo "stderr: $(cat "$dir/$1.err")"
}

case $case_name in
sort)
  mkcfg s1 $'nev = 4\ntolerance = 1e-12' $'sort_window = 1\nformat = pjds' "eigenvectors = true"
  mkcfg s0 $'nev = 4\ntolerance = 1e-12' $'sort_window = 0\nformat = pjds' "eigenvectors = true"
  mkcfg s64 $'nev = 4\ntolerance = 1e-12' $'sort_window = 64\nchunk_height = 8\nformat = pjds' "eigenvectors = true"
  for s in s1 s0 s64; do
    run_solve $s || die "$s: exit status $?: $(cat "$dir/$s.err")"
    cat "$dir/$s.out"
    [ "$(grep -c '^eigenvalue\[[0-9]\]: .* residual: ' "$dir/$s.out")" -eq 4 ] || die "$s: expected 4 eigenvalue lines"
    "$SOLVE_CHECK" "$dir/$s.ini" "$dir/$s.h5" --dense --vectors --expect-nev 4 || die "$s: solve_check"
  done
  "$SOLVE_CHECK" "$dir/s1.ini" "$dir/s1.h5" --compare "$dir/s0.h5" || die "sigma 1 vs full sort"
  "$SOLVE_CHECK" "$dir/s1.ini" "$dir/s64.h5" --compare "$dir/s0.h5" || die "sigma 64 vs full sort"
  # the window in use is reported; auto (the default) on the cpu backend is 1
  # (pl_sort_window_resolve), while config_resolved keeps auto
  mkcfg sa $'nev = 4\ntolerance = 1e-12' "format = pjds" "eigenvectors = true"
  run_solve sa || die "sa: exit status $?: $(cat "$dir/sa.err")"
  # format = compressed: rows in their order (window 1)
  mkcfg sd $'nev = 4\ntolerance = 1e-12' "format = compressed" "eigenvectors = true"
  run_solve sd || die "sd: exit status $?: $(cat "$dir/sd.err")"
  got=$("${PJDS_PYTHON:-/usr/bin/python3}" -c "import h5py, sys; a = h5py.File(sys.argv[1]).attrs['spmv_format']; print(a.decode() if isinstance(a, bytes) else a)" "$dir/sd.h5")
  [ "$got" = "compressed" ] || die "sd: attribute spmv_format = $got, expected compressed (forced)"
  # nothing set, one rank, a generated model: matrix_free (app/app_free.c), and the note says so
  mkcfg sn $'nev = 4\ntolerance = 1e-12' "" "eigenvectors = false"
  run_solve sn || die "sn: exit status $?: $(cat "$dir/sn.err")"
  got=$("${PJDS_PYTHON:-/usr/bin/python3}" -c "import h5py, sys; f = h5py.File(sys.argv[1]); d = lambda a: a.decode() if isinstance(a, bytes) else a; print(d(f.attrs['spmv_format']) + '|' + d(f.attrs['spmv_format_note']))" "$dir/sn.h5")
  if [ -z "${PJDS_SPMV_FORMAT:-}" ]; then # (the .compressed run forces the format)
    [ "${got%%|*}" = "matrix_free" ] || die "sn: attribute spmv_format = ${got%%|*}, expected matrix_free (the default of solve)"
    case "$got" in *"matrix-free Kronecker sum"*) ;; *) die "sn: spmv_format_note = ${got#*|}" ;; esac
  fi
  "$SOLVE_CHECK" "$dir/sd.ini" "$dir/sd.h5" --dense --vectors --expect-nev 4 || die "sd: solve_check"
  "$SOLVE_CHECK" "$dir/sd.ini" "$dir/sd.h5" --compare "$dir/s0.h5" || die "compressed vs full sort"
  for p in "s1 1" "s64 64" "s0 0" "sa 8192" "sd 1"; do
    set -- $p
    got=$("${PJDS_PYTHON:-/usr/bin/python3}" -c "import h5py, sys; print(int(h5py.File(sys.argv[1]).attrs['sort_window']))" "$dir/$1.h5")
    [ "$got" = "$2" ] || die "$1: attribute sort_window = $got, expected $2"
  done
  got=$("${PJDS_PYTHON:-/usr/bin/python3}" -c "import h5py, sys; a = h5py.File(sys.argv[1]).attrs['config_resolved']; print(a.decode() if isinstance(a, bytes) else a)" "$dir/sa.h5" | grep '^sort_window = ')
  [ "$got" = "sort_window = auto" ] || die "sa: config_resolved has '$got', expected 'sort_window = auto'"
  "$SOLVE_CHECK" "$dir/sa.ini" "$dir/sa.h5" --compare "$dir/s0.h5" || die "auto vs full sort"
  ;;
largest)
  for k in 1 4; do
    mkcfg l$k $'which = largest\ntolerance = 1e-12\nnev = '$k "" ""
    run_solve l$k || die "l$k: exit status $?: $(cat "$dir/l$k.err")"
    cat "$dir/l$k.out"
    "$SOLVE_CHECK" "$dir/l$k.ini" "$dir/l$k.h5" --dense --expect-nev $k || die "largest nev=$k"
  done
  ;;
h5dump)
  [ -x "${PJDS_H5DUMP:-}" ] || { echo "skipped: no h5dump"; exit 77; }
  mkcfg d $'nev = 2' "" "eigenvectors = true"
  run_solve d || die "exit status $?: $(cat "$dir/d.err")"
  "$PJDS_H5DUMP" -H "$dir/d.h5" >"$dir/d.dump" 2>&1 || die "h5dump cannot open the file"
  # the names documented in docs/formats.md, "HDF5 result schema"
  for ds in eigenvalues residual_norms eigenvectors iterations ritz_values residual_estimates; do
    grep -q "DATASET \"$ds\"" "$dir/d.dump" || die "dataset $ds missing"
  done
  grep -q 'GROUP "convergence"' "$dir/d.dump" || die "group convergence missing"
  for a in program version config_file config_text config_resolved matrix_name rows nnz nnz_per_row \
           row_length_min row_length_max chunk_height sort_window storage_pjds_entries storage_ellpack_entries \
           storage_operator_entries backend exchange ranks threads_per_rank which nev ncv tolerance norm_estimate \
           converged_reason nconv restarts iterations breakdowns eigenvector_basis build_seconds permute_seconds \
           solve_seconds orth_seconds restart_seconds projected_seconds spmv_count spmv_seconds spmv_gflops spmv_median_seconds transport \
           write_seconds total_seconds wall_seconds mpi_init_seconds mpi_wait_seconds backend_wait_seconds; do
    grep -q "ATTRIBUTE \"$a\"" "$dir/d.dump" || die "attribute $a missing"
  done
  # also documented in the schema file itself
  for a in eigenvalues residual_norms ritz_values storage_pjds_entries spmv_gflops converged_reason; do
    grep -q "$a" "$PJDS_SRC/docs/formats.md" || die "$a not documented"
  done
  "$PJDS_H5DUMP" -d /eigenvalues "$dir/d.h5" | grep -q "(0):" || die "h5dump cannot read /eigenvalues"
  ;;
bad_nev)
  mkcfg b $'nev = 5000' "" ""
  run_solve b; expect_input_error b "b.ini:[0-9]+: \[solver\] nev: 5000 must be < N = 1260" $?
  no_files b
  ;;
bad_tol)
  mkcfg b $'tolerance = 0' "" ""
  run_solve b; expect_input_error b "\[solver\] tolerance" $?
  no_files b
  mkcfg b $'verify_probability = 1' "" ""
  run_solve b; expect_input_error b "\[solver\] verify_probability" $?
  no_files b
  ;;
bad_which)
  mkcfg b $'which = middle' "" ""
  run_solve b; expect_input_error b "\[solver\] which: 'middle'" $?
  no_files b
  ;;
unwritable)
  mkcfg b $'nev = 2' "" ""
  sed -i "s|^file = .*|file = $dir/no/such/dir/b.h5|" "$dir/b.ini"
  run_solve b; expect_input_error b "does not exist|not writable" $?
  [ ! -e "$dir/no" ] || die "directory created"
  ;;
exists)
  mkcfg b $'nev = 2' "" ""
  echo "precious" >"$dir/b.h5"
  run_solve b; expect_input_error b "exists; use --overwrite" $?
  [ "$(cat "$dir/b.h5")" = "precious" ] || die "existing file modified"
  [ "$(find "$dir" -name 'b.h5.tmp*' | wc -l)" -eq 0 ] || die "temporary file left"
  # and --overwrite replaces it
  run_solve b --overwrite || die "--overwrite: exit status $?"
  "$SOLVE_CHECK" "$dir/b.ini" "$dir/b.h5" --expect-nev 2 || die "--overwrite: bad file"
  ;;
kill)
  # a problem large enough that the solve runs for minutes on the CPU (HMEp
  # with M = 12: 2.5 M rows, 34 M non-zeros; built and permuted in < 1 s),
  # killed 1.5 s after the start, i.e. in the middle of the solve
  sed -e 's/^max_phonons = .*/max_phonons = 12/' -e "s|^file = .*|file = $dir/k.h5\neigenvectors = true|" \
      "$PJDS_SRC/configs/hmep.ini" >"$dir/k.ini"
  "$PJDS_BIN" solve "$dir/k.ini" --set spmv.backend=cpu >"$dir/k.out" 2>"$dir/k.err" &
  pid=$!
  sleep 1.5
  kill -0 $pid 2>/dev/null || die "solve ended before the kill: $(cat "$dir/k.err")"
  kill -KILL $pid
  wait $pid 2>/dev/null
  grep -q "solve: N = " "$dir/k.err" || echo "note: killed before the solve started: $(cat "$dir/k.err")"
  [ ! -e "$dir/k.h5" ] || die "output file left after SIGKILL"
  ls "$dir"
  ;;
not_converged)
  mkcfg n $'nev = 4\ntolerance = 1e-14\nmax_restarts = 1' "" ""
  run_solve n || die "exit status $?, expected 0"
  cat "$dir/n.err"
  grep -q "warning: not converged (reason max_restarts)" "$dir/n.err" || die "no warning"
  [ "$(grep -c '^eigenvalue' "$dir/n.out")" -eq 4 ] || die "expected 4 eigenvalue lines"
  [ -x "${PJDS_H5DUMP:-}" ] || { echo "skipped: no h5dump"; exit 77; }
  "$PJDS_H5DUMP" -a /converged_reason "$dir/n.h5" | grep -q '"max_restarts"' || die "converged_reason not max_restarts"
  "$PJDS_H5DUMP" -a /restarts "$dir/n.h5" | grep -q '(0): 1$' || die "restarts attribute not 1"
  ;;
startup)
  py=${PJDS_PYTHON:-/usr/bin/python3}
  attrs() { # $1 = result file: the start-up attributes (docs/formats.md)
    "$py" - "$1" <<'PYEOF' || die "attributes of $1"
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    a = f.attrs
    for k in ("wall_seconds", "total_seconds", "mpi_init_seconds", "mpi_wait_seconds", "backend_seconds",
              "backend_wait_seconds"):
        assert k in a, "attribute %s missing" % k
    w, t, mi, mw = (float(a[k]) for k in ("wall_seconds", "total_seconds", "mpi_init_seconds", "mpi_wait_seconds"))
    print("wall %.3f s, total %.3f s, MPI init %.3f s, waited %.3f s" % (w, t, mi, mw))
    assert w >= t - 0.05, "wall_seconds %g < total_seconds %g - 0.05" % (w, t)
    assert w < t + 10.0, "wall_seconds %g: the process started long before main (total %g)" % (w, t)
    assert 0.0 <= mw <= mi + 0.05 and mi <= t, "MPI init %g, wait %g, total %g" % (mi, mw, t)
PYEOF
  }
  for be in auto cpu; do
    mkcfg s$be $'nev = 3' "" ""
    sed -i "s/^backend = cpu$/backend = $be/" "$dir/s$be.ini"
    "$PJDS_BIN" solve "$dir/s$be.ini" >"$dir/s$be.out" 2>"$dir/s$be.err" || die "backend $be: exit status $?: $(cat "$dir/s$be.err")"
    grep -Eq "solve: phases: MPI init [0-9.]+ s, backend .* since the start; wall [0-9.]+ s since the process start, waited for MPI [0-9.]+ s, for the backend [0-9.]+ s$" "$dir/s$be.err" ||
      die "backend $be: phases line: $(grep 'phases:' "$dir/s$be.err")"
    attrs "$dir/s$be.h5"
  done
  cmp -s "$dir/sauto.out" "$dir/scpu.out" || die "backend auto and cpu differ: $(diff "$dir/sauto.out" "$dir/scpu.out")"
  mkcfg s2 $'nev = 3' "" ""
  $MPIEXEC 2 "$PJDS_BIN" solve "$dir/s2.ini" --quiet >"$dir/s2.out" 2>"$dir/s2.err" || die "2 ranks: exit status $?: $(cat "$dir/s2.err")"
  [ "$(grep -c '^eigenvalue' "$dir/s2.out")" -eq 3 ] || die "2 ranks: expected 3 eigenvalue lines"
  attrs "$dir/s2.h5"
  "$SOLVE_CHECK" "$dir/s2.ini" "$dir/s2.h5" --compare "$dir/scpu.h5" || die "2 ranks vs 1 rank"
  # SIGTERM while MPI and the backend start (they run in threads that block it: the main thread exits 3)
  mkcfg sig $'nev = 3' "" ""
  sed -i "s/^backend = cpu$/backend = auto/" "$dir/sig.ini"
  got3=0
  for t in 0.05 0.1 0.15 0.2; do
    "$PJDS_BIN" solve "$dir/sig.ini" --quiet >/dev/null 2>"$dir/sig.err" &
    pid=$!
    sleep $t
    kill -TERM $pid 2>/dev/null
    wait $pid
    st=$?
    echo "SIGTERM after $t s: exit status $st: $(cat "$dir/sig.err")"
    if [ $st -eq 3 ] && [ -e "$dir/sig.h5.ckpt" ]; then rm -f "$dir/sig.h5.ckpt"  # it came in the solve
    elif [ $st -eq 3 ]; then
      got3=1
      [ "$(wc -l <"$dir/sig.err")" -eq 1 ] && grep -q "^pjds-lanczos: stopped by SIGTERM during " "$dir/sig.err" ||
        die "SIGTERM after $t s: not the one line"
    elif [ $st -eq 0 ]; then rm -f "$dir/sig.h5"  # finished before the signal (a fast machine)
    else [ $st -eq 143 ] && [ ! -s "$dir/sig.err" ] || die "SIGTERM after $t s: exit status $st"
    fi
    no_files sig
  done
  [ $got3 -eq 1 ] || echo "note: no signal landed in the start-up (every run ended before or after it)"
  ;;
mpi)
  np=$2; mode=$3
  mkcfg r1 $'nev = 4\ntolerance = 1e-12' "exchange = $mode" "eigenvectors = true"
  mkcfg rn $'nev = 4\ntolerance = 1e-12' "exchange = $mode" "eigenvectors = true"
  OMP_NUM_THREADS=1 run_solve r1 || die "1 rank: exit status $?: $(cat "$dir/r1.err")"
  OMP_NUM_THREADS=1 $MPIEXEC $np "$PJDS_BIN" solve "$dir/rn.ini" --quiet >"$dir/rn.out" 2>"$dir/rn.err" ||
    die "$np ranks: exit status $?: $(cat "$dir/rn.err")"
  cat "$dir/rn.out"
  [ "$(grep -c '^eigenvalue' "$dir/rn.out")" -eq 4 ] || die "expected 4 eigenvalue lines from rank 0 only"
  "$SOLVE_CHECK" "$dir/rn.ini" "$dir/rn.h5" --compare "$dir/r1.h5" --vectors || die "$np ranks vs 1 rank"
  ;;
matrix_free)
  # [spmv] format = matrix_free (app/app_free.c): the dense LAPACK reference, the same eigenvalues and
  # observables as the stored pJDS matrix, the format attribute; site/periodic and normal/open
  for v in "sp site periodic" "no normal open"; do
    set -- $v
    for f in pjds matrix_free; do
      mkcfg "$1_$f" $'nev = 4\ntolerance = 1e-12' "format = $f" "eigenvectors = true"
      sed -i "s/^phonon_basis = .*/phonon_basis = $2/; s/^boundary = .*/boundary = $3/" "$dir/$1_$f.ini"
      run_solve "$1_$f" || die "$1_$f: exit status $?: $(cat "$dir/$1_$f.err")"
    done
    "$SOLVE_CHECK" "$dir/$1_matrix_free.ini" "$dir/$1_matrix_free.h5" --dense --vectors --expect-nev 4 || die "$1: solve_check"
    "$SOLVE_CHECK" "$dir/$1_matrix_free.ini" "$dir/$1_matrix_free.h5" --compare "$dir/$1_pjds.h5" || die "$1: vs pjds"
    "${PJDS_PYTHON:-/usr/bin/python3}" - "$dir/$1_matrix_free.h5" "$dir/$1_pjds.h5" <<'PY' || die "$1: attributes or observables"
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
d = lambda v: v.decode() if isinstance(v, bytes) else v
assert d(a.attrs["spmv_format"]) == "matrix_free", a.attrs["spmv_format"]
assert int(a.attrs["nnz"]) == int(b.attrs["nnz"]), (int(a.attrs["nnz"]), int(b.attrs["nnz"]))
n = 0
def cmp(name, obj):
    global n
    if isinstance(obj, h5py.Dataset):
        x, y = obj[()], b["observables/" + name][()]
        assert np.allclose(x, y, rtol=1e-8, atol=1e-8 * max(1.0, float(np.max(np.abs(y))))), name
        n += 1
a["observables"].visititems(cmp)
assert n > 0
print(f"observables equal: {n} datasets")
PY
  done
  # a forced Krylov-Schur on the matrix-free operator: the eigenvalues of the Lanczos run on pJDS
  mkcfg ks $'nev = 4\ntolerance = 1e-12\nmethod = krylov-schur' "format = matrix_free" ""
  sed -i "s/^phonon_basis = .*/phonon_basis = normal/; s/^boundary = .*/boundary = open/" "$dir/ks.ini"
  run_solve ks || die "ks: exit status $?: $(cat "$dir/ks.err")"
  "$SOLVE_CHECK" "$dir/ks.ini" "$dir/ks.h5" --compare "$dir/no_pjds.h5" || die "krylov-schur matrix_free vs lanczos pjds"
  # info: the tables' sizes beside the statistics of the matrix they stand for
  "$PJDS_BIN" info "$dir/no_matrix_free.ini" >"$dir/info.out" 2>"$dir/info.err" || die "info: $(cat "$dir/info.err")"
  grep -Eq '^matrix_free_table_bytes: [1-9][0-9]*$' "$dir/info.out" || die "info: no matrix_free_table_bytes"
  ;;
matrix_free_mpi)
  # several ranks (split by electron configurations, spmv/op_kron_dist.c): format = matrix_free on 2
  # and 3 ranks gives the eigenvalues of one rank (matrix-free and pJDS) to 1e-12 relative, the same
  # eigenvectors (|<v, v_1>| = 1 to 1e-8 where the eigenvalue is isolated) and observables, and passes
  # the dense and residual checks; format = auto runs matrix-free there too; `info` on 2 ranks prints
  # the halo of each rank (what one rank sends is what the other receives)
  for f in matrix_free pjds; do
    mkcfg "one_$f" $'nev = 4\ntolerance = 1e-12' "format = $f" "eigenvectors = true"
    sed -i "s/^phonon_basis = .*/phonon_basis = normal/; s/^boundary = .*/boundary = open/" "$dir/one_$f.ini"
    run_solve "one_$f" || die "one_$f: exit status $?: $(cat "$dir/one_$f.err")"
  done
  for np in 2 3; do
    for f in matrix_free auto phonon; do
      n="np${np}_$f"
      if [ "$f" = phonon ]; then # the split by phonon configurations (spmv/op_kron_right.c)
        mkcfg "$n" $'nev = 4\ntolerance = 1e-12' $'format = matrix_free\nkron_split = phonon' "eigenvectors = true"
      elif [ "$f" = matrix_free ]; then # by electron configurations (spmv/op_kron_dist.c)
        mkcfg "$n" $'nev = 4\ntolerance = 1e-12' $'format = matrix_free\nkron_split = electron' "eigenvectors = true"
      else
        mkcfg "$n" $'nev = 4\ntolerance = 1e-12' "format = $f" "eigenvectors = true"
      fi
      sed -i "s/^phonon_basis = .*/phonon_basis = normal/; s/^boundary = .*/boundary = open/" "$dir/$n.ini"
      $MPIEXEC "$np" "$PJDS_BIN" solve "$dir/$n.ini" --quiet >"$dir/$n.out" 2>"$dir/$n.err" ||
        { die "$n: exit status $?: $(grep '^pjds-lanczos' "$dir/$n.err")"; continue; }
      "$SOLVE_CHECK" "$dir/$n.ini" "$dir/$n.h5" --dense --vectors --expect-nev 4 || die "$n: solve_check"
      want=matrix_free split=any
      [ "$f" = auto ] && [ -n "${PJDS_SPMV_FORMAT:-}" ] && want=any # (the .compressed run forces a stored format)
      [ "$f" = matrix_free ] && split=electron
      [ "$f" = phonon ] && split=phonon
      "${PJDS_PYTHON:-/usr/bin/python3}" - "$dir/$n.h5" "$dir/one_matrix_free.h5" "$dir/one_pjds.h5" "$np" "$want" "$split" <<'PY' || die "$n: against one rank"
import sys, h5py, numpy as np
a, b, c = (h5py.File(p, "r") for p in sys.argv[1:4])
np_, want, split = int(sys.argv[4]), sys.argv[5], sys.argv[6]
d = lambda v: v.decode() if isinstance(v, bytes) else v
assert int(a.attrs["ranks"]) == np_, a.attrs["ranks"]
assert want == "any" or d(a.attrs["spmv_format"]) == want, a.attrs["spmv_format"]
assert split == "any" or d(a.attrs["spmv_kron_split"]) == split, a.attrs["spmv_kron_split"]
assert d(b.attrs["spmv_kron_split"]) == "none", b.attrs["spmv_kron_split"]
assert int(a.attrs["nnz"]) == int(c.attrs["nnz"]), (int(a.attrs["nnz"]), int(c.attrs["nnz"]))
ea, eb, ec = a["eigenvalues"][()], b["eigenvalues"][()], c["eigenvalues"][()]
for e in (eb, ec):
    r = np.max(np.abs(ea - e) / np.maximum(np.abs(e), 1.0))
    assert r <= 1e-12, (ea, e, r)
va, vb = a["eigenvectors"][()], b["eigenvectors"][()]
assert va.shape == vb.shape, (va.shape, vb.shape)
k = 0
for i in range(len(ea)):
    gap = min([abs(ea[i] - ea[j]) for j in range(len(ea)) if j != i] + [1.0])
    if gap < 1e-6:
        continue
    ov = abs(float(np.dot(va[i], vb[i])))
    assert abs(ov - 1.0) <= 1e-8, (i, ov)
    k += 1
assert k > 0
n = 0
def cmp(name, obj):
    global n
    if isinstance(obj, h5py.Dataset):
        x, y = obj[()], b["observables/" + name][()]
        assert np.allclose(x, y, rtol=1e-8, atol=1e-8 * max(1.0, float(np.max(np.abs(y))))), name
        n += 1
a["observables"].visititems(cmp)
assert n > 0
print(f"{np_} ranks ({d(a.attrs['spmv_kron_split'])} split): eigenvalues, {k} isolated eigenvectors and {n} observables equal one rank's")
PY
    done
  done
  # the phonon split's checkpoint (vectors moved into contiguous blocks, app/checkpoint.c): SIGTERM inside
  # the second cycle on 2 ranks (PJDS_TEST_SIGNAL_STEP), exit 3 with a checkpoint; --resume on 2 ranks gives
  # one rank's eigenvalues to 1e-10; spectral refuses kron_split = phonon with exit 2 and one line
  mkcfg ck $'nev = 4\ntolerance = 1e-12\nncv = 10' $'format = matrix_free\nkron_split = phonon' ""
  sed -i "s/^phonon_basis = .*/phonon_basis = normal/; s/^boundary = .*/boundary = open/" "$dir/ck.ini"
  PJDS_TEST_SIGNAL_STEP=14 $MPIEXEC 2 "$PJDS_BIN" solve "$dir/ck.ini" --quiet >"$dir/ck.out" 2>"$dir/ck.err"
  st=$?
  [ "$st" -eq 3 ] && [ -f "$dir/ck.h5.ckpt" ] || die "ck: exit status $st, checkpoint: $(ls "$dir" | grep ck)"
  $MPIEXEC 2 "$PJDS_BIN" solve "$dir/ck.ini" --quiet --resume >"$dir/ck2.out" 2>"$dir/ck2.err" ||
    die "ck: resume: $(grep '^pjds-lanczos' "$dir/ck2.err")"
  "${PJDS_PYTHON:-/usr/bin/python3}" - "$dir/ck.h5" "$dir/one_matrix_free.h5" <<'PY' || die "ck: resumed eigenvalues"
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
ea, eb = a["eigenvalues"][()], b["eigenvalues"][()]
r = np.max(np.abs(ea - eb) / np.maximum(np.abs(eb), 1.0))
assert r <= 1e-10, (ea, eb, r)
assert a.attrs["spmv_kron_split"] in (b"phonon", "phonon"), a.attrs["spmv_kron_split"]
print(f"phonon split, resumed on 2 ranks: eigenvalues equal one rank's to {r:.1e}")
PY
  mkcfg sp $'nev = 1' $'format = matrix_free\nkron_split = phonon' ""
  $MPIEXEC 2 "$PJDS_BIN" spectral "$dir/sp.ini" >"$dir/sp.out" 2>"$dir/sp.err"
  st=$?
  [ "$st" -eq 2 ] && [ "$(grep -c '^pjds-lanczos' "$dir/sp.err")" -eq 1 ] && grep -q 'kron_split' "$dir/sp.err" ||
    die "sp: exit status $st: $(grep '^pjds-lanczos' "$dir/sp.err")"
  no_files sp
  # info on 2 ranks: the halo of each rank; the bytes one rank sends are what the other receives
  mkcfg inf $'nev = 4' "format = matrix_free" "" # (kron_split = auto)
  sed -i "s/^phonon_basis = .*/phonon_basis = normal/; s/^boundary = .*/boundary = open/" "$dir/inf.ini"
  $MPIEXEC 2 "$PJDS_BIN" info "$dir/inf.ini" >"$dir/info.out" 2>"$dir/info.err" || die "info: $(cat "$dir/info.err")"
  hb=$(sed -n 's/^matrix_free_halo_bytes_per_rank: //p' "$dir/info.out")
  sb=$(sed -n 's/^matrix_free_send_bytes_per_rank: //p' "$dir/info.out")
  set -- $hb $sb
  [ $# -eq 4 ] && [ "$1" -gt 0 ] && [ "$1" = "$4" ] && [ "$2" = "$3" ] ||
    die "info: halo '$hb', sent '$sb': $(grep matrix_free_ "$dir/info.out")"
  grep -Eq '^matrix_free_halo_bytes_per_rank_phonon_split: [1-9][0-9]* [1-9][0-9]*$' "$dir/info.out" ||
    die "info: no phonon-split halo"
  # kron_split = auto: the split of the smaller largest-rank halo, and the per-rank lines are that split's
  el=$(sed -n 's/^matrix_free_halo_bytes_per_rank_electron_split: //p' "$dir/info.out")
  ph=$(sed -n 's/^matrix_free_halo_bytes_per_rank_phonon_split: //p' "$dir/info.out")
  sp=$(sed -n 's/^matrix_free_split: //p' "$dir/info.out")
  want=$(echo "$el|$ph" | awk -F'|' '{n = split($1, a, " "); split($2, b, " "); ma = 0; mb = 0
                                        for (i = 1; i <= n; i++) { if (a[i] + 0 > ma) ma = a[i] + 0; if (b[i] + 0 > mb) mb = b[i] + 0 }
                                        print (mb < ma ? "phonon" : "electron")}')
  [ "$want" = phonon ] && lst=$ph || lst=$el
  case "$sp" in "$want configurations (auto, 2 ranks)") ;; *) die "info: split '$sp', expected $want (halos '$el' / '$ph')" ;; esac
  [ "$hb" = "$lst" ] || die "info: halo '$hb' is not the $want split's '$lst'"
  # more ranks than electron configurations (L = 2 filled by 2 up electrons: one): exit 2, one line, no file
  mkcfg mr $'nev = 1' "format = matrix_free" ""
  sed -i "s/^sites = .*/sites = 2/; s/^n_up = .*/n_up = 2/; s/^n_down = .*/n_down = 0/" "$dir/mr.ini"
  $MPIEXEC 2 "$PJDS_BIN" solve "$dir/mr.ini" >"$dir/mr.out" 2>"$dir/mr.err"
  st=$? # (mpiexec adds its own lines about the exit status: only ours are counted)
  [ "$st" -eq 2 ] || die "mr: exit status $st, expected 2"
  [ "$(grep -c '^pjds-lanczos' "$dir/mr.err")" -eq 1 ] || die "mr: not one line of ours: $(grep '^pjds-lanczos' "$dir/mr.err")"
  grep -q 'at least one per rank is needed' "$dir/mr.err" || die "mr: stderr: $(grep '^pjds-lanczos' "$dir/mr.err")"
  no_files mr
  ;;
*) echo "unknown case $case_name"; exit 1 ;;
esac
[ $fail -eq 0 ] && echo "PASS: $case_name"
exit $fail
