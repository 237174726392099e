#!/bin/bash
# chebfd_bench.sh — the issue-27 targets of [solver] method = chebfd on one GPU
# (run from the repository root on the H100 host, CUDA build in build-gpu):
#   1. HMEp (configs/hmep.ini, 6.2 M rows): a window the KPM DOS says holds
#      about 100 eigenvalues, with about 100 below it (an interior window
#      placed low, where the density is smallest and the filter degree
#      lowest: bench/chebfd_window.py), tol 1e-9: time and SpMMVs; once per
#      format of FORMATS (default "auto pjds": the matrix-free block product
#      that auto takes against the stored pJDS one) and of JACKSON (default
#      "jackson-pjds": pJDS with the Jackson filter of before, kernel 0);
#   2. hh_184800: the 100 eigenvalues closest to an interior energy E
#      (target = E, nev = 100; E the centre of such a window) against SciPy
#      eigsh(sigma = E, k = 100) (SuperLU shift-and-invert, all host cores)
#      on the exported matrix, in the same run: times and the largest
#      difference of the two sets;
#   3. the 200 lowest of HMEp: chebfd (which = smallest, nev = 200) against
#      method = lanczos with nev = 200: time, device memory in use, max RSS.
# Every step has a time limit (T_* below, seconds; ~6 min in all) and a
# failure or timeout does not stop the later steps; the table at the end says
# which.  Logs in $OUT.
#
#   bash bench/chebfd_bench.sh
#   BIN=build-h2/app/pjds-lanczos HMEP=configs/hh7.ini HH=configs/hh7.ini bash bench/chebfd_bench.sh  # a dry run
#   CASES=window FORMATS=pjds JACKSON= bash bench/chebfd_bench.sh  # the HMEp window in pJDS only (~2 min)
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=${BIN:-build-gpu/app/pjds-lanczos}
OUT=${OUT:-/tmp/pjds-chebfd-out}
PY=${PYTHON:-python3}
HMEP=${HMEP:-configs/hmep.ini}
HH=${HH:-configs/hh_184800.ini}
NLOW=${NLOW:-200}
FORMATS=${FORMATS:-auto pjds} # the HMEp window once per [spmv] format (auto: the matrix-free tables)
JACKSON=${JACKSON-jackson-pjds}  # and with the Jackson filter (PJDS_CHEBFD_KERNEL=0) in these formats
CASES=${CASES:-window hh low}    # which of the three cases run (e.g. CASES=window FORMATS=pjds JACKSON=)
WINDOW=${WINDOW:-}               # "a, b": the HMEp window without the dos run (as the table printed it)
T_DOS=${T_DOS:-30} T_INT=${T_INT:-100} T_HH=${T_HH:-30} T_SCIPY=${T_SCIPY:-70} T_LOW=${T_LOW:-60} T_LZ=${T_LZ:-50}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-16}
mkdir -p "$OUT"
T0=$(date +%s)
el() { echo $(($(date +%s) - T0)); }
step() { echo; echo "=== [$(el) s] $*"; }
TIMEV=""
[ -x /usr/bin/time ] && TIMEV="/usr/bin/time -f maxrss_kb=%M"
ROWS=()
# attr FILE NAME...: the root attributes of a result file, "-" where missing
attr() {
    "$PY" - "$@" <<'PYEOF'
import sys, h5py
try:
    f = h5py.File(sys.argv[1], "r")
except OSError:
    print(" ".join("-" for _ in sys.argv[2:])); sys.exit(0)
out = []
for k in sys.argv[2:]:
    v = f.attrs.get(k, "-")
    v = v.decode() if isinstance(v, bytes) else v
    out.append(("%.4g" % v) if isinstance(v, float) else str(v))
print(" ".join(out))
PYEOF
}
rss() { grep -o 'maxrss_kb=[0-9]*' "$1" 2>/dev/null | tail -1 | cut -d= -f2; }
# run NAME LIMIT CMD...: the command under timeout, its log in $OUT/NAME.log; prints the status
run() {
    local name=$1 lim=$2
    shift 2
    step "$name (limit $lim s): $*"
    timeout "$lim" $TIMEV "$@" > "$OUT/$name.log" 2>&1
    local rc=$?
    grep -E "chebfd: bounds|chebfd: iteration|solve: chebfd|solve: lanczos|warning|error|scipy_seconds|wrote" "$OUT/$name.log" | tail -9
    if [ $rc -eq 124 ]; then echo "timeout"; elif [ $rc -ne 0 ]; then echo "exit $rc"; else echo "ok"; fi
}
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null | head -1
[ -x "$BIN" ] || { echo "no $BIN: build with cmake -S . -B build-gpu -DPJDS_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90"; exit 1; }

want() { [[ " $CASES " == *" $1 "* ]]; }
# ---- 1. HMEp interior window --------------------------------------------------
if want window; then
W=$WINDOW
if [ -z "$W" ]; then
st=$(run hmep_dos "$T_DOS" "$BIN" dos "$HMEP" --overwrite --quiet --set output.file="$OUT/hmep_dos.h5" \
     --set kpm.moments=4096 --set kpm.random_vectors=16)
echo "$st"
W=$("$PY" bench/chebfd_window.py "$OUT/hmep_dos.h5" --count 100 --below 100 2>"$OUT/window.err" | head -1)
echo "HMEp window: $W ($("$PY" bench/chebfd_window.py "$OUT/hmep_dos.h5" --count 100 --below 100 2>/dev/null | tail -1))"
fi
if [ -n "$W" ]; then
    for v in $FORMATS $JACKSON; do  # the block product of each [spmv] format; jackson-FMT: the old filter
        fmt=${v#jackson-}
        kern=3
        [ "$fmt" != "$v" ] && kern=0
        st=$(PJDS_CHEBFD_KERNEL=$kern run "hmep_window_$v" "$T_INT" "$BIN" solve "$HMEP" --overwrite \
             --set output.file="$OUT/hmep_window_$v.h5" --set solver.method=chebfd --set "solver.interval=$W" \
             --set solver.tolerance=1e-9 --set spmv.format="$fmt")
        echo "$st"
        read -r s n est fd nb it sp reason dev sf <<< "$(attr "$OUT/hmep_window_$v.h5" solve_seconds found_count \
            estimated_count filter_degree search_size chebfd_iterations spmmv_count converged_reason \
            device_memory_used_bytes spmv_format)"
        ROWS+=("HMEp window [$W] tol 1e-9|chebfd $v ($sf, kernel $kern)|${st##*$'\n'}|$s s|found $n (est $est), degree $fd, block $nb, $it it, $sp SpMMVs, $reason, dev $dev B")
    done
else
    ROWS+=("HMEp window|chebfd|no window (dos: ${st##*$'\n'})|-|-")
fi

fi

# ---- 2. hh_184800: chebfd target against SciPy shift-and-invert ---------------
if want hh; then
st=$(run hh_dos "$T_DOS" "$BIN" dos "$HH" --overwrite --quiet --set output.file="$OUT/hh_dos.h5" \
     --set kpm.moments=2048 --set kpm.random_vectors=16)
E=$("$PY" bench/chebfd_window.py "$OUT/hh_dos.h5" --count 100 --below 100 2>/dev/null | tail -1 | sed 's/^center \([^,]*\),.*/\1/')
echo "hh_184800 target E = $E"
if [ -n "$E" ]; then
    st=$(run hh_chebfd "$T_HH" "$BIN" solve "$HH" --overwrite --set output.file="$OUT/hh_chebfd.h5" \
         --set solver.method=chebfd --set solver.target="$E" --set solver.nev=100 --set solver.tolerance=1e-10)
    echo "$st"
    read -r s n fd it sp reason <<< "$(attr "$OUT/hh_chebfd.h5" solve_seconds nev filter_degree chebfd_iterations \
        spmmv_count converged_reason)"
    ROWS+=("hh_184800 target $E nev 100|chebfd|${st##*$'\n'}|$s s|$n pairs, degree $fd, $it it, $sp SpMMVs, $reason")
    st=$(run hh_export 60 "$BIN" export "$HH" "$OUT/hh_184800.h5" --overwrite --quiet)
    st=$(run hh_scipy "$T_SCIPY" "$PY" bench/chebfd_scipy.py "$OUT/hh_184800.h5" --sigma "$E" --k 100 \
         --compare "$OUT/hh_chebfd.h5")
    echo "$st"
    line=$(grep scipy_seconds "$OUT/hh_scipy.log" | tail -1)
    ss=$(echo "$line" | sed -n 's/.*scipy_seconds=\([0-9.]*\).*/\1/p')
    md=$(echo "$line" | sed -n 's/.*max_diff=\([^ ]*\).*/\1/p')
    sp_ratio=$("$PY" -c "print('%.1fx' % ($ss / $s))" 2>/dev/null || echo "-")
    if [ -z "$ss" ] && [ "${st##*$'\n'}" = "timeout" ]; then  # SciPy ran out of time: a lower bound
        ss=">$T_SCIPY"
        sp_ratio=$("$PY" -c "print('>= %.1fx' % ($T_SCIPY / $s))" 2>/dev/null || echo "-")
    fi
    ROWS+=("hh_184800 sigma $E k 100|SciPy eigsh (SuperLU, $OMP_NUM_THREADS threads)|${st##*$'\n'}|${ss:--} s|chebfd ${sp_ratio} faster, max |diff| of the sets $md")
fi

fi

# ---- 3. the NLOW lowest of HMEp: chebfd against thick-restart Lanczos ---------
if want low; then
st=$(run hmep_low "$T_LOW" "$BIN" solve "$HMEP" --overwrite --set output.file="$OUT/hmep_low.h5" \
     --set solver.method=chebfd --set solver.which=smallest --set solver.nev="$NLOW" --set solver.tolerance=1e-9)
echo "$st"
read -r s fd it sp reason dev <<< "$(attr "$OUT/hmep_low.h5" solve_seconds filter_degree chebfd_iterations spmmv_count \
    converged_reason device_memory_used_bytes)"
ROWS+=("HMEp $NLOW lowest tol 1e-9|chebfd|${st##*$'\n'}|$s s|degree $fd, $it it, $sp SpMMVs, $reason, dev $dev B, maxrss $(rss "$OUT/hmep_low.log") kB")
st=$(run hmep_lanczos "$T_LZ" "$BIN" solve "$HMEP" --overwrite --set output.file="$OUT/hmep_lanczos.h5" \
     --set solver.method=lanczos --set solver.which=smallest --set solver.nev="$NLOW" --set solver.tolerance=1e-9)
echo "$st"
read -r s sp reason dev <<< "$(attr "$OUT/hmep_lanczos.h5" solve_seconds spmv_count converged_reason \
    device_memory_used_bytes)"
ROWS+=("HMEp $NLOW lowest tol 1e-9|lanczos nev $NLOW|${st##*$'\n'}|$s s|$sp SpMVs, $reason, dev $dev B, maxrss $(rss "$OUT/hmep_lanczos.log") kB")
if [ -f "$OUT/hmep_low.h5" ] && [ -f "$OUT/hmep_lanczos.h5" ]; then
    "$PY" - "$OUT/hmep_low.h5" "$OUT/hmep_lanczos.h5" <<'PYEOF'
import sys, h5py, numpy as np
a = np.sort(h5py.File(sys.argv[1])["eigenvalues"][:]); b = np.sort(h5py.File(sys.argv[2])["eigenvalues"][:])
print("HMEp lowest: chebfd %d, lanczos %d values, max |diff| %s" % (len(a), len(b),
      "%.2e" % np.max(np.abs(a - b)) if len(a) == len(b) else "n/a"))
PYEOF
fi

fi

# ---- table ---------------------------------------------------------------------
echo
echo "=== chebfd bench, $(date -u +%Y-%m-%d), $(el) s in all ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1))"
printf '%-44s | %-34s | %-8s | %-10s | %s\n' "case" "method" "status" "time" "notes"
for r in "${ROWS[@]}"; do
    IFS='|' read -r c m s t n <<< "$r"
    printf '%-44s | %-34s | %-8s | %-10s | %s\n' "$c" "$m" "$s" "$t" "$n"
done
