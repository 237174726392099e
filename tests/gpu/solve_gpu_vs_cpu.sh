#!/bin/sh
# solve_gpu_vs_cpu.sh — Lanczos on the GPU backend gives the CPU backend's
# eigenvalues to 1e-10 (relative), on the quickstart model and a larger
# variant of it.  $1: test_cuda_backend (prints the device count).
# Exit 77 (skipped) without a CUDA device.
set -u
count=$("$1" --device-count 2>/dev/null || echo 0)
if [ "${count:-0}" -eq 0 ]; then echo "skipped: no CUDA device"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
run() { # tag backend extra-set
    "$PJDS_BIN" solve "$PJDS_SRC/configs/quickstart.ini" --quiet --overwrite \
        --set spmv.backend="$2" --set output.file="$tmp/$1-$2.h5" $3 > "$tmp/$1-$2.out" 2> "$tmp/$1-$2.err"
    rc=$?
    if [ $rc -ne 0 ]; then echo "solve $1 backend=$2 failed ($rc):"; cat "$tmp/$1-$2.err"; fail=1; fi
}
for case in small large; do
    extra=""
    [ $case = large ] && extra="--set model.max_phonons=12"
    run $case cpu "$extra"
    run $case cuda "$extra"
    a=$(grep '^eigenvalue\[' "$tmp/$case-cpu.out" | awk '{print $2}')
    b=$(grep '^eigenvalue\[' "$tmp/$case-cuda.out" | awk '{print $2}')
    if [ -z "$a" ] || [ "$(echo "$a" | wc -l)" -ne "$(echo "$b" | wc -l)" ]; then
        echo "$case: eigenvalue lists differ in length:"; echo "cpu:"; echo "$a"; echo "cuda:"; echo "$b"; fail=1; continue
    fi
    if ! printf '%s\n' "$a" | paste - "$(printf '%s\n' "$b" > "$tmp/b.txt"; echo "$tmp/b.txt")" |
        awk -v tag="$case" '{d = $1 - $2; if (d < 0) d = -d; s = ($1 < 0 ? -$1 : $1); if (s < 1) s = 1;
                             printf "%s: cpu %.15g cuda %.15g rel %.2e\n", tag, $1, $2, d / s;
                             if (d / s > 1e-10) bad = 1} END {exit bad}'; then
        fail=1
    fi
done
exit $fail
