#!/usr/bin/env bash
# Faults that must end cleanly (docs/operations.md, "Reliability").
# Usage: faults.sh CASE   (PJDS_BIN = the pjds-lanczos executable)
#   disk_full   the result file cannot be written (ulimit -f: a file size
#               limit, as a full disk or a quota): exit != 0, the first line
#               names the file and the cause, no crash, no result file, no
#               temporary file left
#   rank_killed one of 2 ranks is killed (SIGKILL) during a solve: the job
#               ends with a non-zero status within 30 s, no hang
#   readonly    the output directory is not writable: exit 2 before the build
set -u
case_name=$1
dir=$(mktemp -d)
trap 'chmod -R u+w "$dir"; rm -rf "$dir"' EXIT
cfg=$dir/m.ini
cat >"$cfg" <<EOT
[model]
type = holstein-hubbard
sites = 4
n_up = 2
n_down = 2
hubbard_u = 4
coupling = 0.5
max_phonons = 5
cutoff_warn = 1
[solver]
nev = 4
[spmv]
backend = cpu
[output]
eigenvectors = true
EOT
fail=0
case $case_name in
  disk_full)
    ( ulimit -f 16; "$PJDS_BIN" solve "$cfg" --quiet --set output.file="$dir/out.h5" ) > "$dir/out" 2> "$dir/err"
    st=$?
    [ $st -ne 0 ] || { echo "FAIL: exit status 0 with a 16 kB file size limit"; fail=1; }
    head -1 "$dir/err" | grep -q "out.h5.* (file too large" ||
        { echo "FAIL: the first line does not name the file and the cause: $(head -1 "$dir/err")"; fail=1; }
    grep -qi "segmentation\|signal" "$dir/err" && { echo "FAIL: the process crashed"; fail=1; }
    [ ! -e "$dir/out.h5" ] || { echo "FAIL: a result file was left"; fail=1; }
    ls "$dir" | grep -q "tmp" && { echo "FAIL: a temporary file was left: $(ls "$dir")"; fail=1; }
    echo "disk_full: exit $st: $(cat "$dir/err")" ;;
  rank_killed)
    MPI=${PJDS_MPIEXEC:-mpiexec}
    # a solve that runs long enough: a tight tolerance, many restarts allowed
    printf "[model]\ntype = holstein-hubbard\nsites = 6\nn_up = 3\nn_down = 3\nhubbard_u = 4\ncoupling = 0.5\nmax_phonons = 7\n[solver]\nnev = 30\ntolerance = 1e-15\nmax_restarts = 100000\n[spmv]\nbackend = cpu\n" > "$cfg"
    t0=$(date +%s)
    timeout 60 $MPI -n 2 --allow-run-as-root --oversubscribe --bind-to none "$PJDS_BIN" solve "$cfg" --quiet --set output.file="$dir/out.h5" > "$dir/out" 2> "$dir/err" &
    job=$!
    sleep 3
    victim=$(pgrep -f "pjds-lanczos solve $cfg" | tail -1)
    [ -n "$victim" ] && kill -KILL "$victim"
    wait $job
    st=$?
    el=$(( $(date +%s) - t0 ))
    [ -n "$victim" ] || { echo "FAIL: the solve ended before a rank could be killed: $(cat "$dir/err")"; fail=1; }
    [ $st -ne 0 ] || { echo "FAIL: exit status 0 after a rank was killed"; fail=1; }
    [ $st -ne 124 ] || { echo "FAIL: the job hung (killed by timeout after 60 s)"; fail=1; }
    [ $el -le 33 ] || { echo "FAIL: the job took $el s to end"; fail=1; }
    [ ! -e "$dir/out.h5" ] || { echo "FAIL: a result file was written"; fail=1; }
    echo "rank_killed: exit $st after $el s" ;;
  readonly)
    mkdir "$dir/ro" && chmod a-w "$dir/ro"
    if [ "$(id -u)" = 0 ]; then echo "skipped: root writes to read-only directories"; exit 77; fi
    "$PJDS_BIN" solve "$cfg" --quiet --set output.file="$dir/ro/out.h5" > "$dir/out" 2> "$dir/err"
    st=$?
    [ $st -eq 2 ] || { echo "FAIL: exit status $st, expected 2"; fail=1; }
    grep -q "not writable" "$dir/err" || { echo "FAIL: $(cat "$dir/err")"; fail=1; }
    echo "readonly: exit $st: $(cat "$dir/err")" ;;
  *) echo "unknown case $case_name"; exit 1 ;;
esac
exit $fail
