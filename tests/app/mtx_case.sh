# mtx_case.sh — sourced by the CLI tests on real SuiteSparse matrices
# (real_matrices.sh, unconverged_return.sh).
#   mtx_case NAME [mtx2h5 options]: $mtx = $PJDS_MATRICES/NAME.mtx, $dir = a
#     fresh folder (removed at exit) holding it as $dir/m.h5; exit 77
#     (skipped) without the matrix or without SciPy and h5py.
#   mtx_config FILE < sections: FILE = the [model] and [matrix] sections of
#     that matrix, then the sections read from standard input.
#   run CMD...: CMD, under mpiexec with $np ranks where np > 1.
mtx_case() {
    local name=$1
    shift
    mtx=${PJDS_MATRICES:-}/$name.mtx
    [ -f "$mtx" ] || { echo "skipped: $mtx not found"; exit 77; }
    "$PJDS_PYTHON" -c "import scipy, h5py" 2>/dev/null || { echo "skipped: scipy/h5py missing"; exit 77; }
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
    "$PJDS_PYTHON" "$PJDS_SRC/tools/mtx2h5.py" "$mtx" "$dir/m.h5" "$@" >/dev/null || { echo "FAIL: convert"; exit 1; }
}
run() { if [ "${np:-1}" -gt 1 ]; then mpiexec -n "$np" --allow-run-as-root --oversubscribe --bind-to none "$@"; else "$@"; fi; }
mtx_config() { { printf '[model]\ntype = hdf5\n[matrix]\nfile = %s\n' "$dir/m.h5"; cat; } >"$1"; }
