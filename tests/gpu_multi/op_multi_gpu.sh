#!/bin/sh
# op_multi_gpu.sh — `solve` with several ranks on the GPUs gives the 1-rank
# GPU eigenvalues to 1e-10 (relative) for every transport (mpi, nccl, ipc)
# and exchange mode (vector, overlap, task), on the quickstart model with
# max_phonons = 12 (about 10^5 rows: halos in both directions), with the
# matrix-free operator (format = matrix_free, what auto runs: its halo of
# whole phonon rows, spmv/op_kron_dist.c), the matrix-free operator split
# by phonon configurations (phonon: kron_split = phonon, its halo of whole
# electron columns, spmv/op_kron_right.c) and the stored pJDS matrix
# (PJDS_MULTI_FORMATS picks them).
# With 2 or more GPUs: 2 ranks, one GPU each.  With one GPU: 2 and 3 ranks
# share it (PJDS_SHARE_GPUS=1, a testing aid) for transports mpi and ipc
# (NCCL refuses two ranks on one GPU): this checks the multi-rank GPU code
# paths and the IPC protocol, not speed.
# $1: test_cuda_backend (prints the device count), $2 $3: mpiexec and its
# -n flag, $4: extra mpiexec flags (one word list).
# Exit 77 (skipped) without a CUDA device.  transport = nccl in a build
# without NCCL must fail with exit 2 and "no NCCL" (then its cases are
# reported as skipped, the others still count).
set -u
count=$("$1" --device-count 2>/dev/null || echo 0)
if [ "${count:-0}" -lt 1 ]; then echo "skipped: no CUDA device"; exit 77; fi
if [ "$count" -ge 2 ]; then
    TRANSPORTS="mpi nccl ipc" RANKS=2
else
    TRANSPORTS="mpi ipc" RANKS="2 3"
    export PJDS_SHARE_GPUS=1
    echo "one GPU: ranks share it (PJDS_SHARE_GPUS=1), transports $TRANSPORTS"
fi
MPIEXEC=$2
NP=$3
FLAGS=$(echo "$4" | tr ';' ' ') # a CMake list arrives with semicolons
BACKEND=${PJDS_MULTI_BACKEND:-cuda} # cpu: dry run of the script logic without GPUs
FORMATS=${PJDS_MULTI_FORMATS:-matrix_free phonon pjds}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export NCCL_NVLS_ENABLE=0 OMP_NUM_THREADS=2
fail=0
solve() { # tag nranks transport exchange format (matrix_free: split by electron, phonon: by phonon configurations)
    f=$5 split=electron
    [ "$5" = phonon ] && f=matrix_free split=phonon
    # shellcheck disable=SC2086
    $MPIEXEC $NP "$2" $FLAGS "$PJDS_BIN" solve "$PJDS_SRC/configs/quickstart.ini" --quiet --overwrite \
        --set spmv.backend="$BACKEND" --set model.max_phonons=12 --set spmv.transport="$3" --set spmv.exchange="$4" \
        --set spmv.format="$f" --set spmv.kron_split="$split" --set output.file="$tmp/$1.h5" > "$tmp/$1.out" 2> "$tmp/$1.err"
}
solve ref 1 mpi vector pjds
rc=$?
if [ $rc -ne 0 ]; then echo "1-rank reference failed ($rc):"; cat "$tmp/ref.err"; exit 1; fi
grep '^eigenvalue\[' "$tmp/ref.out" | awk '{print $2}' > "$tmp/ref.txt"
if [ ! -s "$tmp/ref.txt" ]; then echo "no eigenvalues in the reference output"; cat "$tmp/ref.out"; exit 1; fi
for fmt in $FORMATS; do
for np in $RANKS; do
for tr in $TRANSPORTS; do
    for ex in vector overlap task; do
        tag=$fmt-$np-$tr-$ex
        solve "$tag" "$np" "$tr" "$ex" "$fmt"
        rc=$?
        if [ $tr = nccl ] && [ $rc -eq 2 ] && grep -q "no NCCL" "$tmp/$tag.err"; then
            echo "$tag: skipped (built without NCCL)"; continue
        fi
        if [ $rc -ne 0 ]; then echo "$tag: solve failed ($rc):"; cat "$tmp/$tag.err"; fail=1; continue; fi
        grep '^eigenvalue\[' "$tmp/$tag.out" | awk '{print $2}' > "$tmp/$tag.txt"
        if [ "$(wc -l < "$tmp/$tag.txt")" -ne "$(wc -l < "$tmp/ref.txt")" ]; then
            echo "$tag: eigenvalue count differs"; cat "$tmp/$tag.out"; fail=1; continue
        fi
        paste "$tmp/ref.txt" "$tmp/$tag.txt" |
            awk -v tag="$tag" '{d = $1 - $2; if (d < 0) d = -d; s = ($1 < 0 ? -$1 : $1); if (s < 1) s = 1;
                                printf "%s: 1 rank %.15g several %.15g rel %.2e\n", tag, $1, $2, d / s;
                                if (d / s > 1e-10) bad = 1} END {exit bad}' || fail=1
    done
done
done
done
exit $fail
