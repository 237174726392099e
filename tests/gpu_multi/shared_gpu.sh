#!/bin/sh
# shared_gpu.sh — ranks that share one GPU (PJDS_SHARE_GPUS=1) and the halo
# transport.  NCCL refuses two ranks of a communicator on one
# device (ncclCommInitRank: invalid usage), so:
#  - [spmv] transport = auto (the default) must not pick nccl: on one node
#    it picks ipc (logged: "ranks 0 and 1 share GPU ...: using ipc"), and
#    `solve` on 2 and 3 ranks gives the 1-rank eigenvalues to 1e-10;
#  - an explicit transport = nccl is exit status 2 with one line
#    "--set spmv.transport: [spmv] transport = nccl: ranks 0 and 1 share GPU <bus id> (GPU-<uuid>);
#    NCCL needs one GPU per rank (use transport = auto, ipc or mpi)", no
#    traceback, no MPI_Abort, no output file.
# The ranks are confined to one GPU (the first visible one) so that they
# share it on a machine with several.  A build without NCCL: auto is mpi
# (nothing to check but the result) and nccl is refused as "no NCCL".
# $1: test_cuda_backend (prints the device count), $2 $3: mpiexec and its
# -n flag, $4: extra mpiexec flags (one word list).  Exit 77 (skipped)
# without a CUDA device.  PJDS_MULTI_BACKEND=cpu: dry run of the script logic.
set -u
count=$("$1" --device-count 2>/dev/null || echo 0)
if [ "${count:-0}" -lt 1 ]; then echo "skipped: no CUDA device"; exit 77; fi
vis=${CUDA_VISIBLE_DEVICES:-0}
export CUDA_VISIBLE_DEVICES="${vis%%,*}" PJDS_SHARE_GPUS=1 NCCL_NVLS_ENABLE=0 OMP_NUM_THREADS=2
MPIEXEC=$2
NP=$3
FLAGS=$(echo "$4" | tr ';' ' ') # a CMake list arrives with semicolons
nccl=no
"$PJDS_BIN" --version | grep -q "NCCL yes" && nccl=yes
echo "GPU $CUDA_VISIBLE_DEVICES shared by every rank; built with NCCL: $nccl"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
solve() { # tag nranks [--set ...]
    tag=$1 np=$2
    shift 2
    # shellcheck disable=SC2086
    $MPIEXEC $NP "$np" $FLAGS "$PJDS_BIN" solve "$PJDS_SRC/configs/quickstart.ini" --overwrite \
        --set spmv.backend="${PJDS_MULTI_BACKEND:-cuda}" --set model.max_phonons=12 --set output.file="$tmp/$tag.h5" "$@" \
        > "$tmp/$tag.out" 2> "$tmp/$tag.err"
}
solve ref 1
rc=$?
if [ $rc -ne 0 ]; then echo "1-rank reference failed ($rc):"; cat "$tmp/ref.err"; exit 1; fi
grep '^eigenvalue\[' "$tmp/ref.out" | awk '{print $2}' > "$tmp/ref.txt"
if [ ! -s "$tmp/ref.txt" ]; then echo "no eigenvalues in the reference output"; cat "$tmp/ref.out"; exit 1; fi

# default transport (auto) on a shared GPU: works, and is ipc where NCCL is built
for np in 2 3; do
    tag=auto-$np
    solve "$tag" "$np"
    rc=$?
    if [ $rc -ne 0 ]; then echo "$tag: solve failed ($rc):"; cat "$tmp/$tag.err"; fail=1; continue; fi
    if [ $nccl = yes ] && ! grep -q "share GPU .*: using ipc" "$tmp/$tag.err"; then
        echo "$tag: no 'share GPU ...: using ipc' on stderr:"; grep -i "transport\|GPU\|error" "$tmp/$tag.err"; fail=1
    fi
    grep "share GPU" "$tmp/$tag.err"
    grep '^eigenvalue\[' "$tmp/$tag.out" | awk '{print $2}' > "$tmp/$tag.txt"
    if [ "$(wc -l < "$tmp/$tag.txt")" -ne "$(wc -l < "$tmp/ref.txt")" ]; then
        echo "$tag: eigenvalue count differs"; cat "$tmp/$tag.out"; fail=1; continue
    fi
    paste "$tmp/ref.txt" "$tmp/$tag.txt" |
        awk -v tag="$tag" '{d = $1 - $2; if (d < 0) d = -d; s = ($1 < 0 ? -$1 : $1); if (s < 1) s = 1;
                            printf "%s: 1 rank %.15g several %.15g rel %.2e\n", tag, $1, $2, d / s;
                            if (d / s > 1e-10) bad = 1} END {exit bad}' || fail=1
done

# explicit nccl on a shared GPU: exit 2, one line (mpiexec may add its own banner)
tag=nccl-2
solve "$tag" 2 --set spmv.transport=nccl --quiet
rc=$?
own=$(grep -c '^pjds-lanczos' "$tmp/$tag.err")
echo "$tag: exit $rc: $(grep '^pjds-lanczos' "$tmp/$tag.err")"
if [ $nccl = no ]; then
    if [ $rc -ne 2 ] || ! grep -q "no NCCL" "$tmp/$tag.err"; then echo "$tag: expected exit 2 'no NCCL'"; fail=1; fi
else
    expect='^pjds-lanczos: error: --set spmv.transport: \[spmv\] transport = nccl: ranks 0 and 1 share GPU [0-9A-Fa-f:.]+ \(GPU-[0-9a-f-]+\); NCCL needs one GPU per rank \(use transport = auto, ipc or mpi\)$'
    if [ $rc -ne 2 ]; then echo "$tag: exit status $rc, expected 2"; fail=1; fi
    if [ "$own" -ne 1 ]; then echo "$tag: $own lines from pjds-lanczos on stderr, expected 1"; fail=1; fi
    if ! grep -Eq "$expect" "$tmp/$tag.err"; then echo "$tag: stderr does not match /$expect/"; fail=1; fi
    if grep -qi "traceback\|MPI_ABORT\|ncclCommInitRank" "$tmp/$tag.err"; then
        echo "$tag: traceback, MPI_ABORT or an NCCL failure on stderr:"; cat "$tmp/$tag.err"; fail=1
    fi
    if [ -e "$tmp/$tag.h5" ]; then echo "$tag: output file written"; fail=1; fi
fi
exit $fail
