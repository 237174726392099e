#!/usr/bin/env bash
# generate -> export -> import: the same statistics and the same eigenvalues,
# with 1 and (under MPI) 2 or 3 ranks on the import side.
# Usage: roundtrip.sh [NP]
set -u
np=${1:-1}
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
run() { if [ "$np" -gt 1 ]; then mpiexec -n "$np" --allow-run-as-root --oversubscribe --bind-to none "$@"; else "$@"; fi; }
cfg=$PJDS_SRC/configs/quickstart.ini
set_small=(--set model.max_phonons=3 --set solver.nev=3 --set solver.tolerance=1e-12)
"$PJDS_BIN" export "$cfg" "$dir/m.h5" "${set_small[@]}" --quiet || { echo "FAIL: export"; exit 1; }
cat >"$dir/imp.ini" <<EOT
[model]
type = hdf5
[matrix]
file = $dir/m.h5
[solver]
nev = 3
tolerance = 1e-12
[output]
file = $dir/imp.h5
EOT
"$PJDS_BIN" info "$cfg" "${set_small[@]}" | grep -vE "^(matrix|build_seconds|ranks|threads_per_rank|memory_[a-z_]+|compressed_[a-z_]+|solve_format|matrix_free_[a-z_]+):" >"$dir/info_gen"
run "$PJDS_BIN" info "$dir/imp.ini" | grep -vE "^(matrix|build_seconds|ranks|threads_per_rank|memory_[a-z_]+|compressed_[a-z_]+|solve_format|matrix_free_[a-z_]+):" >"$dir/info_imp"
fail=0
diff "$dir/info_gen" "$dir/info_imp" || { echo "FAIL: statistics differ"; fail=1; }
"$PJDS_BIN" solve "$cfg" "${set_small[@]}" --set output.file="$dir/gen.h5" --quiet | grep "^eigenvalue" >"$dir/ev_gen" || { echo "FAIL: solve generated"; fail=1; }
run "$PJDS_BIN" solve "$dir/imp.ini" --quiet | grep "^eigenvalue" >"$dir/ev_imp" || { echo "FAIL: solve imported"; fail=1; }
paste "$dir/ev_gen" "$dir/ev_imp"
awk 'NR==FNR { a[FNR] = $2; next } { d = a[FNR] - $2; if (d < 0) d = -d; m = $2 < 0 ? -$2 : $2; if (m < 1) m = 1; if (d > 1e-10 * m) bad = 1; n++ }
     END { exit (bad || n < 3) }' "$dir/ev_gen" "$dir/ev_imp" || { echo "FAIL: eigenvalues differ"; fail=1; }
exit $fail
