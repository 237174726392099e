#!/bin/bash
# slepc16_device.sh -- issue 28's one- and 16-core comparison of shift-and-invert against SLEPc (sinvert +
# MUMPS) and SciPy eigs(sigma), on the GPU host (Ubuntu 24.04: no PETSc, SLEPc, MUMPS or slepc4py there).
# Run from the repository root on that machine, with these git-ignored paths carried:
#   .slepc        bench/slepc_bundle.sh pack's tarballs (the SLEPc peer bench/slepc_sinvert.c and its
#                 libraries; also MUMPS 5.5 for our build when .mumps is not carried)
#   .deps         libinih's Debian packages (bench/device_deps.sh)
#   cryg10000.mtx as .acc3/cryg10000.mtx or ../shared/matrices/cryg10000.mtx (its case is left out
#                 when neither is there)
#   .accept/common.sh (optional, or COMMON=FILE: mumps_setup and gpu_build; the same steps are defined
#                 here otherwise)
#   .mumps        (optional: made from the bundle when absent)
# Steps: unpack the bundle into /opt/slepc, MUMPS into /opt/mumps, build ours (build-gpu, with MUMPS),
# then bench/sinvert_peers.py --cores 1,16 on cryg10000 (sigma 6.8) and lap2d:200 (sigma 1), lap2d:500
# (medians of 3) and, where the time allows, lap2d:1000 (one run each).  The table comes last; logs and
# the runs' JSON under $OUT.  The whole script keeps within BUDGET seconds (default 470).  CORES (1,16),
# SLEPC_PREFIX (/opt/slepc), PY (python3) and COMMON (.accept/common.sh) may be set.
t0=$(date +%s)
BUDGET=${BUDGET:-470}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
PREFIX=${SLEPC_PREFIX:-/opt/slepc}
PY=${PY:-python3}
CORES=${CORES:-1,16}
left() { echo $((BUDGET - ($(date +%s) - t0))); }

# 1. the SLEPc peer
if bash bench/slepc_bundle.sh unpack "$PREFIX" > "$OUT/slepc_unpack.log" 2>&1; then
    SLEPC_ARGS=(--slepc-bin "$PREFIX/bin/slepc_sinvert")
    echo "slepc bundle: $(grep -o 'fallbacks used.*' "$OUT/slepc_unpack.log" | cut -c1-200)"
else
    SLEPC_ARGS=()
    echo "slepc bundle: unpack failed: $(tail -2 "$OUT/slepc_unpack.log" | tr '\n' ' ')"
fi

# 2. MUMPS and our build
if [ ! -d .mumps/lib ] && [ -x "$PREFIX/bin/slepc_sinvert" ]; then
    bash bench/slepc_bundle.sh mumps "$PREFIX" .mumps > "$OUT/mumps_from_bundle.log" 2>&1 \
        || echo "mumps from the bundle failed: $(tail -1 "$OUT/mumps_from_bundle.log")"
fi
COMMON=${COMMON:-.accept/common.sh}
if [ -f "$COMMON" ]; then
    . "$COMMON"
else
    . bench/device_deps.sh || echo "no .deps: the build needs libinih"
    export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
    mumps_setup() {
        [ -d .mumps/lib ] || return 1
        rm -rf /opt/mumps && mkdir -p /opt/mumps && cp -r .mumps/lib .mumps/include /opt/mumps/
        for f in .mumps/fallback/*; do ldconfig -p | grep -q "$(basename "$f")" || cp "$f" /opt/mumps/lib/; done
        export LD_LIBRARY_PATH=/opt/mumps/lib:${LD_LIBRARY_PATH:-}
        MUMPS_ARGS="-DPJDS_MUMPS_INCLUDE=/opt/mumps/include -DPJDS_DMUMPS_LIB=/opt/mumps/lib/libdmumps.so -DPJDS_ZMUMPS_LIB=/opt/mumps/lib/libzmumps.so -DPJDS_MUMPS_COMMON_LIB=/opt/mumps/lib/libmumps_common.so"
        echo "mumps: $(ls /opt/mumps/lib | tr '\n' ' ')"
    }
    gpu_build() {
        local t; t=$(date +%s)
        (cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DPJDS_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 $MUMPS_ARGS > "$OUT/cmake.log" 2>&1 \
            && cmake --build build-gpu -j 16 > "$OUT/build.log" 2>&1) \
            || { echo BUILD FAILED; grep -E "error" "$OUT/build.log" "$OUT/cmake.log" | head -20; return 1; }
        echo "build $(($(date +%s) - t)) s"
    }
fi
mumps_setup || { echo "no MUMPS (.mumps or the bundle): ours cannot shift-and-invert"; exit 1; }
gpu_build || exit 1
BIN=build-gpu/app/pjds-lanczos
echo "ready after $(($(date +%s) - t0)) s"

# 3. the comparison
CRY=""
for f in .acc3/cryg10000.mtx ../shared/matrices/cryg10000.mtx; do [ -f "$f" ] && { CRY=$f; break; }; done
peers() {  # TAG SECONDS REPEATS MATRIX...
    local tag=$1 limit=$2 reps=$3; shift 3
    [ "$limit" -gt 20 ] || { echo "=== $tag: skipped ($limit s left)"; return; }
    echo "=== $tag ($(($(date +%s) - t0)) s; up to $limit s)"
    timeout "$limit" "$PY" bench/sinvert_peers.py --bin "$BIN" "${SLEPC_ARGS[@]}" --cores "$CORES" --repeats "$reps" \
        --timeout 150 --json "$OUT/sp_$tag.json" "$@" > "$OUT/sp_$tag.txt" 2> "$OUT/sp_$tag.err"
    echo "$tag rc=$? ($(($(date +%s) - t0)) s)"
    grep -m1 "^SLEPc" "$OUT/sp_$tag.txt"
    tail -3 "$OUT/sp_$tag.err" | cut -c1-300
}
peers small $(($(left) - 250)) 3 ${CRY:+$CRY:6.8} lap2d:200:1.0
peers lap500 $(($(left) - 170)) 3 lap2d:500:1.0
# lap2d:1000 (10^6 rows), one run each: on the 2-core development VM one core took 96 s in all (ours
# 34 s, SLEPc 30 s, SciPy 29 s, the matrix and its HDF5 file the rest); skipped when less time is left
if [ "$(left)" -gt 160 ]; then peers lap1000 $(($(left) - 5)) 1 lap2d:1000:1.0
else echo "=== lap1000: skipped ($(left) s left)"; fi

echo
echo "| matrix | cores | ours: factorisation + solve (median) | SLEPc sinvert + MUMPS | SciPy eigs(sigma) | ours / SLEPc | ours / SciPy | max rel. diff. to SLEPc / SciPy |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for tag in small lap500 lap1000; do
    [ -f "$OUT/sp_$tag.txt" ] && grep -E "^\| [a-z]" "$OUT/sp_$tag.txt" | grep -v "^| matrix" | awk '!seen[$0]++'
done
echo "total $(($(date +%s) - t0)) s"
