#!/usr/bin/env bash
# Singletons (pjds-lanczos without mpirun) started side by side: each has an
# Open MPI session directory of its own ($TMPDIR/pjds-mpi.XXXXXX, app/app_start.c),
# removed at the end, after a solve and after a bad-input exit alike. Open MPI
# 4.1 names every isolated singleton [[0,1],0]; in one shared directory one
# that ended removed what another was creating (a CI failure, "A call to mkdir
# was unable to create the desired directory").
set -u
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
mkdir "$dir/tmp"
cat >"$dir/c.ini" <<INI
[model]
type = holstein-hubbard
sites = 4
n_up = 2
n_down = 2
hopping = 1.0
hubbard_u = 4.0
phonon_frequency = 1.0
coupling = 0.5
max_phonons = 3
[solver]
nev = 2
INI
printf '[model]\ntype = hdf5\n[matrix]\nfile = %s/missing.h5\n' "$dir" >"$dir/bad.ini"
fail=0; n=8
# what lies in TMPDIR while they run, polled
(while [ ! -e "$dir/stop" ]; do ls -A "$dir/tmp"; sleep 0.02; done >"$dir/seen") &
watcher=$!
for i in $(seq 1 $n); do
  (TMPDIR=$dir/tmp "$PJDS_BIN" solve "$dir/c.ini" --set output.file="$dir/o$i.h5" >"$dir/out$i" 2>"$dir/err$i"
   echo $? >"$dir/rc$i") &
  (TMPDIR=$dir/tmp "$PJDS_BIN" info "$dir/bad.ini" >/dev/null 2>"$dir/bad$i"; echo $? >"$dir/brc$i") &
done
for j in $(jobs -p); do [ "$j" = "$watcher" ] || wait "$j"; done
touch "$dir/stop"; wait "$watcher"
own=$(grep -c '^pjds-mpi\.' <(sort -u "$dir/seen"))
shared=$(grep -v '^pjds-mpi\.' "$dir/seen" | sort -u | tr '\n' ' ')
[ -z "$shared" ] || { echo "FAIL: a session directory not of one process: $shared"; fail=1; }
[ "$own" -ge 2 ] || { echo "FAIL: $own private session directories seen, expected one per running singleton"; fail=1; }
for i in $(seq 1 $n); do
  [ "$(cat "$dir/rc$i")" = 0 ] && [ -s "$dir/o$i.h5" ] && ! grep -qi "error\|orte\|MPI_Init" "$dir/err$i" ||
    { echo "FAIL: solve $i: exit $(cat "$dir/rc$i"): $(grep -i -m3 "error\|orte\|mpi" "$dir/err$i")"; fail=1; }
  [ "$(cat "$dir/brc$i")" = 2 ] && [ "$(wc -l <"$dir/bad$i")" -eq 1 ] && grep -q "missing.h5" "$dir/bad$i" ||
    { echo "FAIL: info $i: exit $(cat "$dir/brc$i"): $(head -c 600 "$dir/bad$i")"; fail=1; }
done
# every run done: nothing of Open MPI's is left in TMPDIR
left=$(ls -A "$dir/tmp")
[ -z "$left" ] || { echo "FAIL: left in TMPDIR: $left"; fail=1; }
echo "$((2 * n)) singletons side by side, $own private session directories seen"
exit $fail
