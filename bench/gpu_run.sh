#!/bin/bash
# gpu_run.sh — the one script to run on the GPU machine (repository root):
# unpack libinih from .deps/, build with CUDA (sm_90), run the GPU tests,
# compute-sanitizer memcheck on the GPU backend test, `bench` on HMEp with
# the kernel-variant x sort-window sweep, and the CuPy eigsh peer comparison.
# Every step has a time limit and a failure does not stop the later steps.
# Full logs go to $OUT (at most 8 files); a short summary prints LAST.
#
#   bash bench/gpu_run.sh                 # everything but the CFD parts (~6-8 min on an H100)
#   CONFIG=configs/hmep.ini SKIP_PEER=1 SKIP_SANITIZER=1 bash bench/gpu_run.sh
#   PARTS="tests cfd" bash bench/gpu_run.sh      # GPU tests, bench + solve of dlr1_like/uhbr_like
#   PARTS="cfdpeer" bash bench/gpu_run.sh        # SciPy eigs (ARPACK, all cores) on uhbr_like
# PARTS (default "tests hmep"): tests (ctest -L gpu, memcheck), hmep (timings, bench,
# CuPy peer on $CONFIG), cfd (bench and Krylov-Schur solve of the
# CFD-like configs), cfdpeer (the SciPy eigs comparison on uhbr_like), sweep (
# the HMEp coupling sweep against 11 separate solves, refill and warm-start figures),
# speed (whole-run phases, solver settings, CuPy warm median, SciPy on all cores),
# windows (bench sweeps behind sort_window = auto, GPU and CPU),
# physics (observables and spectral functions on HMEp),
# spmm (SpMMV GPU tests, the bench SpMMV table, KPM on HMEp),
# memory (the memory plan against max RSS and the GPU memory in use),
# compressed (HMEp solve in both formats, CPU bench rows, hmep_m21 on one GPU),
# cprof (every compressed kernel variant checked by test_cpjds, bench rows, solve, ncu).
#
# Device call (from the dev box):  run(command="bash bench/gpu_run.sh",
#                                      carry=[".deps", ".accept"], timeout_s=600)
# (.accept: the real matrices the GPU tests read, see the build step)
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/pjds-gpu-out}
mkdir -p "$OUT"
CONFIG=${CONFIG:-configs/hmep.ini}
BUILD=${BUILD:-build-gpu}
JOBS=${JOBS:-16}
PY=${PYTHON:-python3}
T0=$(date +%s)
SUM=$OUT/summary.txt
: > "$SUM"
el() { echo $(( $(date +%s) - T0 )); }
note() { echo "$*" | tee -a "$SUM"; }
step() { echo; echo "=== [$(el) s] $*"; }
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-16}
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
PARTS=" ${PARTS:-tests hmep} "
part() { case "$PARTS" in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# ---- environment -----------------------------------------------------------
step "environment"
{
    nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,clocks.max.mem --format=csv 2>&1
    nvcc --version | tail -1
    cmake --version | head -1
    git log --oneline -1 2>/dev/null
    bash tools/tree_id.sh # the files' fingerprint: the copy's .git may be stale
} > "$OUT/env.log" 2>&1
cat "$OUT/env.log"
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
note "gpu: ${GPU:-none}"

. bench/device_deps.sh || note "warning: no .deps/*.deb (libinih): the build may fail"

# ---- build -----------------------------------------------------------------
step "build"
BUILD_OK=0
# the tests' real matrices: ../shared/matrices where the machine has it, else the
# carried .accept/ (cp ../shared/matrices/{e20r0000,lund_a,rdb800l}.mtx .accept/:
# python.cupy reads lund_a and rdb800l)
MATS=()
[ ! -d ../shared/matrices ] && [ -d .accept ] && MATS=(-DPJDS_SHARED_MATRICES="$PWD/.accept")
if timeout 300 cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DPJDS_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
        "${MATS[@]}" > "$OUT/build.log" 2>&1 &&
   timeout 300 cmake --build "$BUILD" -j "$JOBS" --target pjds-lanczos pjds-bench test_cuda_backend test_cpjds >> "$OUT/build.log" 2>&1; then
    BUILD_OK=1
    note "build: ok ($(el) s)"
    # the other tests too, best effort (not needed below; BUILD_OTHERS=0 skips them)
    if [ "${BUILD_OTHERS:-1}" = 1 ]; then
        timeout 90 cmake --build "$BUILD" -j "$JOBS" -- -k >> "$OUT/build.log" 2>&1 || note "build: some other targets failed (see build.log)"
    fi
else
    note "build: FAILED (see build.log)"
    grep -E "error|Error" "$OUT/build.log" | head -20 | tee -a "$SUM"
fi
BIN=$BUILD/app/pjds-lanczos
TEST=$BUILD/tests/gpu/test_cuda_backend

# ---- GPU tests -----------------------------------------------------------------
if [ $BUILD_OK = 1 ] && part tests; then
    step "ctest -L gpu"
    (cd "$BUILD" && timeout 240 ctest -L gpu --output-on-failure --timeout 150) > "$OUT/tests.log" 2>&1
    tail -15 "$OUT/tests.log"
    note "gpu tests: $(grep -E 'tests passed|tests failed' "$OUT/tests.log" | tail -1)"
    grep -E '^\s*[0-9]+ - .*\((Failed|Timeout|Not Run|Skipped)' "$OUT/tests.log" | tee -a "$SUM"
    # a skipped test's own reason (ctest keeps no output of a skip): run it once more, verbosely
    for t in $(sed -nE 's/^\s*[0-9]+ - ([^ ]+) \(Skipped\).*/\1/p' "$OUT/tests.log"); do
        why=$(cd "$BUILD" && timeout 120 ctest -R "^${t}\$" -V 2>&1 | grep -iE 'skipp' | grep -v 'Skipped\b.*sec' | head -1)
        note "  $t: ${why:-no reason printed}"
    done

    if [ "$(el)" -gt "${SANITIZER_DEADLINE:-330}" ]; then
        note "memcheck: skipped (already $(el) s; keep the whole run under 10 min)"
    elif [ "${SKIP_SANITIZER:-0}" != 1 ] && command -v compute-sanitizer > /dev/null; then
        step "compute-sanitizer memcheck"
        {
            echo "## memcheck test_cuda_backend (PJDS_TEST_QUICK=1)"
            PJDS_TEST_QUICK=1 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 "$TEST"
            echo "exit $?"
            echo "## memcheck test_cuda_ts (PJDS_TEST_QUICK=1)"
            PJDS_TEST_QUICK=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 "$BUILD/tests/gpu/test_cuda_ts"
            echo "exit $?"
            echo "## memcheck test_restart_step (cuda, PJDS_TEST_QUICK=1)"
            PJDS_TEST_BACKEND=cuda PJDS_TEST_QUICK=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 "$BUILD/tests/spmv/test_restart_step"
            echo "exit $?"
            echo "## memcheck test_cpjds (compressed kernels, one rank)"
            PJDS_TEST_BACKEND=cuda timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 "$BUILD/tests/spmv/test_cpjds"
            echo "exit $?"
        } > "$OUT/sanitizer.log" 2>&1
        tail -5 "$OUT/sanitizer.log"
        note "memcheck: $(grep -E 'ERROR SUMMARY|^exit' "$OUT/sanitizer.log" | tr '\n' ' ')"
        # racecheck (shared-memory hazards of our reduction kernels: ts, spmm_aug, vector ops); the
        # cuSPARSE reference kernels the test compares with are excluded (csrmv_v3_kernel reports
        # hazards inside the library: not ours to fix)
        {
            echo "## racecheck test_cuda_backend (PJDS_TEST_QUICK=1)"
            PJDS_TEST_QUICK=1 timeout 200 compute-sanitizer --tool racecheck --kernel-name-exclude kns=cusparse --error-exitcode 9 "$TEST"
            echo "exit $?"
            echo "## racecheck test_cuda_ts (PJDS_TEST_QUICK=1)"
            PJDS_TEST_QUICK=1 timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 "$BUILD/tests/gpu/test_cuda_ts"
            echo "exit $?"
            echo "## racecheck test_restart_step (cuda, PJDS_TEST_QUICK=1)"
            PJDS_TEST_BACKEND=cuda PJDS_TEST_QUICK=1 timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 "$BUILD/tests/spmv/test_restart_step"
            echo "exit $?"
        } > "$OUT/racecheck.log" 2>&1
        tail -5 "$OUT/racecheck.log"
        note "racecheck: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|^exit' "$OUT/racecheck.log" | tr '\n' ' ')"
    fi
fi

# ---- generator and whole-solve timings -------------------------------------------------
if [ $BUILD_OK = 1 ] && [ -f configs/hmep.ini ] && part hmep; then
    step "info + solve timings"
    {
        for i in 1 2 3; do OMP_NUM_THREADS=16 "$BIN" info configs/hmep.ini --quiet | grep -E "^(rows|nnz|pjds_reduction|build_seconds)"; done
        echo "--- numpy/scipy build of the same matrix"
        timeout 60 "$PY" bench/hh_scipy.py --sites 6 --up 3 --down 3 --max-phonons 15 --basis normal --U 4 --g 1
        echo "--- whole solve configs/hmep.ini (cuda)"
        s0=$(date +%s%N)
        timeout 60 "$BIN" solve configs/hmep.ini --overwrite --set output.file=/tmp/hmep.h5 --set spmv.backend=cuda
        echo "solve exit $? wall_ms $(( ($(date +%s%N) - s0) / 1000000 ))"
        echo "--- solve settings sweep (verify, ncv, orthogonalisation kernels)"
        for v in "verify=true ncv=0" "verify=false ncv=0" "verify=false ncv=32" "verify=false ncv=48" "verify=true ncv=48"; do
            set -- $v
            r=$(timeout 60 "$BIN" solve configs/hmep.ini --overwrite --set output.file=/tmp/hmep.h5 --set spmv.backend=cuda \
                --set solver.$1 --set solver.$2 2>&1 | grep -E "restart\(s\)|times:|^eigenvalue\[3\]" | tr '\n' ' ')
            echo "SWEEP $v :: $r"
        done
        r=$(PJDS_CUDA_TS=cublas timeout 60 "$BIN" solve configs/hmep.ini --overwrite --set output.file=/tmp/hmep.h5 --set spmv.backend=cuda 2>&1 | grep -E "restart\(s\)|times:" | tr '\n' ' ')
        echo "SWEEP cublas-orth verify=true :: $r"
    } > "$OUT/timings.log" 2>&1
    grep -vE "Hamiltonian rows: [0-9]+ of" "$OUT/timings.log" | tail -40
    note "info build_seconds (16 threads): $(grep build_seconds "$OUT/timings.log" | awk '{print $2}' | tr '\n' ' ')"
    note "scipy build: $(grep build_seconds: "$OUT/timings.log" | tail -1)"
    note "$(grep -E '^solve exit' "$OUT/timings.log")"
    grep -E "^SWEEP" "$OUT/timings.log" | sed -E 's/pjds-lanczos: solve: //g' | cut -c1-330 >> "$SUM"
fi

# ---- bench -------------------------------------------------------------------------
if [ $BUILD_OK = 1 ] && [ -f "$CONFIG" ] && part hmep; then
    step "bench $CONFIG"
    PJDS_BENCH_JSON=/tmp/bench.json timeout 200 "$BIN" bench "$CONFIG" --set spmv.backend=cuda > "$OUT/bench.log" 2>&1
    rc=$?
    cat "$OUT/bench.log" | grep -v "Hamiltonian rows:" | tail -60
    note "bench: exit $rc ($(el) s)"
    [ $rc = 0 ] || grep -E "error|failed" "$OUT/bench.log" | tail -3 | tee -a "$SUM"
elif [ $BUILD_OK = 1 ] && part hmep; then
    note "bench: $CONFIG missing, skipped"
fi

# ---- CuPy peer -----------------------------------------------------------------------
if ! part hmep; then
    :
elif [ $BUILD_OK = 1 ] && [ -f "$CONFIG" ] && [ "$(el)" -gt "${PEER_DEADLINE:-440}" ]; then
    note "peer: skipped (already $(el) s; keep the whole run under 10 min)"
elif [ $BUILD_OK = 1 ] && [ -f "$CONFIG" ] && [ "${SKIP_PEER:-0}" != 1 ]; then
    step "CuPy eigsh peer"
    H5=/tmp/pjds-peer-matrix.h5
    rm -f "$H5"
    {
        timeout 120 "$BIN" export "$CONFIG" "$H5" --overwrite
        erc=$?
        echo "export exit $erc"
        if [ $erc = 0 ]; then
            timeout 150 "$PY" bench/cupy_peer.py --matrix "$H5" --config "$CONFIG" --bin "$BIN" \
                --set spmv.backend=cuda --json /tmp/pjds-peer.json
            echo "peer exit $?"
        fi
    } > "$OUT/peer.log" 2>&1
    tail -15 "$OUT/peer.log"
    rm -f "$H5"
fi

# ---- CFD-like matrices: bench, Krylov-Schur solve, SciPy eigs peer ----------
if [ $BUILD_OK = 1 ] && part cfd; then
    for c in dlr1_like uhbr_like; do
        step "bench configs/$c.ini"
        PJDS_BENCH_JSON=$OUT/bench_$c.json timeout 240 "$BIN" bench configs/$c.ini --set spmv.backend=cuda \
            --set spmv.repeats=50 > "$OUT/bench_$c.log" 2>&1
        rc=$?
        sed -n '/^== pjds-lanczos bench/,$p' "$OUT/bench_$c.log" | tail -45
        note "bench $c: exit $rc ($(el) s)"
    done
    for sw in 0 65536; do
        step "solve configs/uhbr_like.ini (Krylov-Schur, sort_window $sw)"
        s0=$(date +%s%N)
        timeout 200 "$BIN" solve configs/uhbr_like.ini --overwrite --set output.file=/tmp/uhbr_$sw.h5 --set spmv.backend=cuda \
            --set spmv.sort_window=$sw > "$OUT/solve_uhbr_$sw.log" 2>&1
        echo "solve exit $? wall_ms $(( ($(date +%s%N) - s0) / 1000000 ))" >> "$OUT/solve_uhbr_$sw.log"
        grep -vE "restart [0-9]+, converged" "$OUT/solve_uhbr_$sw.log" | tail -16
    done
    step "closed form of uhbr_like and the step floor"
    {
        "$PY" tests/blockstencil/closed_form.py configs/uhbr_like.ini --which largest_magnitude --nev 7
        "$PY" bench/cfd_summary.py --bench dlr1_like="$OUT/bench_dlr1_like.json" \
            --bench uhbr_like="$OUT/bench_uhbr_like.json" --solve "$OUT/solve_uhbr_0.log" \
            --solve "$OUT/solve_uhbr_65536.log" --h5 /tmp/uhbr_0.h5 --h5 /tmp/uhbr_65536.h5 --config configs/uhbr_like.ini
    } > "$OUT/cfd_summary.log" 2>&1
    cat "$OUT/cfd_summary.log"
    grep -E "^(CFD|step|eig)" "$OUT/cfd_summary.log" >> "$SUM"
fi
# ---- sort_window = auto: the GPU rule on HMEp and the CFD-like block matrices,
# the CPU rule on all cores --------------------------------------------------------------
if [ $BUILD_OK = 1 ] && part windows; then
    for c in hmep dlr1_like uhbr_like; do
        step "bench configs/$c.ini (cuda, sort_window auto)"
        timeout 200 "$BIN" bench configs/$c.ini --set spmv.backend=cuda --set spmv.repeats=50 > "$OUT/win_$c.log" 2>&1
        echo "exit $?" >> "$OUT/win_$c.log"
        sed -n '/^sort-window sweep/,$p' "$OUT/win_$c.log" | grep -vE "^pjds-lanczos: bench:" | tail -30
        grep -E "^(variant|cw|% of floor)|pJDS \(best|blocked|operator|^exit" "$OUT/win_$c.log" | sed "s/^/WIN $c cuda: /" | cut -c1-220 >> "$SUM"
    done
    step "solve configs/hmep.ini (cuda, defaults)"
    timeout 60 "$BIN" solve configs/hmep.ini --overwrite --set output.file=/tmp/hmep_win.h5 --set spmv.backend=cuda > "$OUT/win_solve.log" 2>&1
    echo "exit $?" >> "$OUT/win_solve.log"
    grep -E "times:|phases:|sort|^exit" "$OUT/win_solve.log" | sed "s/^/WIN solve: /" | cut -c1-300 | tee -a "$SUM"
    "$PY" -c "import h5py; a = h5py.File('/tmp/hmep_win.h5').attrs; print('WIN solve attrs: sort_window', a['sort_window'], 'spmv_median_ms', 1e3 * a['spmv_median_seconds'])" 2>&1 | tee -a "$SUM"
    step "bench configs/hmep.ini (cpu, $OMP_NUM_THREADS threads, sort_window auto)"
    timeout 200 "$BIN" bench configs/hmep.ini --set spmv.backend=cpu --set spmv.repeats=30 > "$OUT/win_hmep_cpu.log" 2>&1
    echo "exit $?" >> "$OUT/win_hmep_cpu.log"
    sed -n '/^sort-window sweep/,$p' "$OUT/win_hmep_cpu.log" | tail -20
    grep -E "^(variant|omp|% of floor)|pJDS \(best|operator|CSR|^exit" "$OUT/win_hmep_cpu.log" | sed "s/^/WIN hmep cpu: /" | cut -c1-220 >> "$SUM"
fi
# ---- physics: observables and a phonon spectral function on HMEp ------------
if [ $BUILD_OK = 1 ] && part physics; then
    step "observables and spectral on configs/hmep.ini"
    {
        for o in false true; do
            timeout 90 "$BIN" solve configs/hmep.ini --overwrite --set output.file=/tmp/hmep_obs.h5 --set spmv.backend=cuda \
                --set output.observables=$o 2>&1 | grep -E "observables|times:"
            "$PY" -c "import h5py; a = h5py.File('/tmp/hmep_obs.h5').attrs; print('PHYS observables=$o solve_seconds %.4f observables_seconds %s' % (a['solve_seconds'], a.get('observables_seconds', '-')))"
        done
        for q in 1 3; do
            timeout 120 "$BIN" spectral configs/hmep.ini --overwrite --set output.file=/tmp/hmep_spec.h5 --set spmv.backend=cuda \
                --set solver.nev=1 --set spectral.momentum=$q --set spectral.steps=200 2>&1 | grep -E "spectral:|times:"
            "$PY" -c "import h5py; f = h5py.File('/tmp/hmep_spec.h5'); s = f['spectral'].attrs; print('PHYS spectral q=$q step_ms %.4f spmv_median_ms %.4f ratio %.3f recursion_s %.3f operator_s %.3f solve_s %.3f norm %.8f' % (1e3*s['step_seconds'], 1e3*s['spmv_median_seconds'], s['step_seconds']/s['spmv_median_seconds'], s['recursion_seconds'], s['operator_seconds'], f.attrs['solve_seconds'], s['norm']))"
        done
    } > "$OUT/physics.log" 2>&1
    grep -E "^PHYS|observables of" "$OUT/physics.log" | cut -c1-300 | tee -a "$SUM"
fi
# ---- SpMMV and KPM -----------------------------------------------------------
if [ $BUILD_OK = 1 ] && part spmm; then
    step "SpMMV tests and the bench table on $CONFIG"
    (cd "$BUILD" && timeout 200 ctest -R "gpu_spmm|gpu_kpm" --output-on-failure --timeout 150) > "$OUT/spmm_tests.log" 2>&1
    note "spmm gpu tests: $(grep -E 'tests passed|tests failed' "$OUT/spmm_tests.log" | tail -1)"
    grep -E '(Failed|Timeout)' "$OUT/spmm_tests.log" | head -5 | tee -a "$SUM"
    timeout 300 "$BIN" bench "$CONFIG" --set spmv.backend=cuda --set spmv.repeats=50 > "$OUT/bench_spmm.log" 2>&1
    echo "exit $?" >> "$OUT/bench_spmm.log"
    sed -n '/^SpMMV/,$p' "$OUT/bench_spmm.log" | sed 's/^/SPMM /' | tee -a "$SUM"
    if [ -f configs/kpm_hmep.ini ]; then
        timeout 200 "$BIN" dos configs/kpm_hmep.ini --overwrite --set output.file=/tmp/kpm.h5 --set spmv.backend=cuda > "$OUT/kpm.log" 2>&1
        echo "exit $?" >> "$OUT/kpm.log"
        grep -E "dos:|exit" "$OUT/kpm.log" | sed 's/^/KPM /' | cut -c1-300 | tee -a "$SUM"
    fi
fi
# ---- memory plan: plan vs measured peak (max RSS, GPU memory at the restarts) -----
if [ $BUILD_OK = 1 ] && part memory; then
    step "memory plan vs measured peak"
    {
        timeout 60 "$BIN" solve configs/quickstart.ini --overwrite --quiet --set output.file=/tmp/mem0.h5 \
            --set spmv.backend=cuda --set model.max_phonons=1 > /dev/null 2>&1
        "$PY" -c "import h5py; a = h5py.File('/tmp/mem0.h5').attrs; print('MEM baseline cuda: device used %.0f MB' % (a['device_memory_used_bytes'] / 1e6))"
        for run in "hmep cuda" "hmep cpu" "hh7 cuda" "dlr1_like cuda" "uhbr_like cuda"; do
            set -- $run
            /usr/bin/time -v timeout 300 "$BIN" solve configs/$1.ini --overwrite --quiet --set output.file=/tmp/mem.h5 \
                --set spmv.backend=$2 --set solver.verify=false --set solver.max_restarts=30 > /tmp/mem.out 2> /tmp/mem.err
            echo "exit $? $(grep -E 'Maximum resident' /tmp/mem.err)"
            rss=$(grep -E 'Maximum resident' /tmp/mem.err | awk '{print $6}')
            "$PY" -c "import h5py, sys; a = h5py.File('/tmp/mem.h5').attrs; rss = float(sys.argv[1]) * 1024; ph = a['memory_plan_host_bytes']; pd = a['memory_plan_device_bytes']; du = a['device_memory_used_bytes']; print('MEM $1 $2: host plan %.0f MB, max RSS %.0f MB (plan/measured %.2f); device plan %.0f MB, used at the restarts %.0f MB' % (ph / 1e6, rss / 1e6, ph / rss, pd / 1e6, du / 1e6))" "$rss" 2>&1 | tail -1
        done
    } > "$OUT/memory.log" 2>&1
    grep -E "^MEM|^exit" "$OUT/memory.log" | tee -a "$SUM"
fi
# ---- sweeps: one-run sweep vs separate solves, refill, warm start ---------
if [ $BUILD_OK = 1 ] && part sweep; then
    step "HMEp coupling sweep (bench/sweep_bench.sh)"
    BIN=$BIN OUT=$OUT PY=$PY bash bench/sweep_bench.sh
    grep -E "^SWEEPTAB" "$OUT/sweep_summary.txt" >> "$SUM"
fi
if [ $BUILD_OK = 1 ] && part cfdpeer; then
    step "SciPy eigs (ARPACK, $(nproc) cores) on uhbr_like"
    H5=/tmp/uhbr-matrix.h5
    {
        s0=$(date +%s%N)
        timeout 100 "$BIN" solve configs/uhbr_like.ini --overwrite --set output.file=/tmp/uhbr_nv.h5 --set spmv.backend=cuda \
            --set solver.verify=false 2>&1 | grep -vE "restart [0-9]+, converged"
        echo "ours verify=false: exit $? wall_ms $(( ($(date +%s%N) - s0) / 1000000 ))"
        [ -f "$H5" ] || timeout 150 "$BIN" export configs/uhbr_like.ini "$H5" --overwrite
        echo "export exit $?"
        # ARPACK stops at ||r|| <= tol |lambda|, ours at ||r|| <= tol max(|lambda|, normest):
        # the same test for the wanted values is ARPACK tol = 1e-8 normest / |lambda_nev|
        TA=$("$PY" -c "import h5py; f = h5py.File('/tmp/uhbr_nv.h5'); l = abs(f['eigenvalues'][:]).min(); print('%.3e' % (1e-8 * max(1, f.attrs['norm_estimate'] / l)))" 2>/dev/null || echo 1e-8)
        echo "ARPACK tol $TA (ours 1e-8 relative to max(|lambda|, normest))"
        timeout ${PEER_TIMEOUT:-420} "$PY" bench/scipy_eigs_peer.py "$H5" --nev 6 --which LM --tol "$TA" \
            --threads "$(nproc)" --max-seconds ${PEER_SECONDS:-300}
        echo "scipy exit $?"
    } > "$OUT/scipy_peer.log" 2>&1
    tail -20 "$OUT/scipy_peer.log"
    grep -E "^\{|exit" "$OUT/scipy_peer.log" | cut -c1-400 >> "$SUM"
fi

# ---- solver speed: whole-run phases, settings, CuPy and SciPy peers ----------
if [ $BUILD_OK = 1 ] && part speed; then
    step "solver speed on $CONFIG"
    {
        echo "--- whole runs, default settings (process start to file written), verbose phases of the last"
        for i in 1 2 3; do
            s0=$(date +%s%N)
            "$BIN" solve "$CONFIG" --overwrite --set output.file=/tmp/sp.h5 --verbose > /tmp/sp.log 2>&1
            echo "WHOLE default run $i: exit $? wall_ms $(( ($(date +%s%N) - s0) / 1000000 ))"
        done
        grep -vE "Hamiltonian rows: [0-9]+ of|restart [0-9]+, converged" /tmp/sp.log | tail -40
        $PY -c "import h5py; a = h5py.File('/tmp/sp.h5').attrs; print('ATTRS', ' '.join('%s=%s' % (k, a[k]) for k in ('sort_window', 'ncv', 'iterations', 'steps', 'full_reorthogonalizations', 'local_steps', 'host_syncs_per_step', 'step_seconds', 'spmv_median_seconds', 'orthogonality_estimate', 'orthogonality_loss', 'build_seconds', 'permute_seconds', 'solve_seconds', 'write_seconds', 'total_seconds') if k in a))"
        for v in "verify=false ncv=0 reorthogonalization=partial" "verify=false ncv=0 reorthogonalization=full" \
                 "verify=true ncv=0 reorthogonalization=full" "verify=false ncv=32 reorthogonalization=partial" \
                 "verify=false ncv=48 reorthogonalization=partial" "verify=false ncv=64 reorthogonalization=partial" \
                 "verify=false ncv=96 reorthogonalization=partial" "verify=true ncv=48 reorthogonalization=partial" \
                 "verify=true ncv=64 reorthogonalization=partial"; do
            set -- $v
            s0=$(date +%s%N)
            r=$(timeout 60 "$BIN" solve "$CONFIG" --overwrite --set output.file=/tmp/sp2.h5 --set solver.$1 --set solver.$2 \
                --set solver.$3 2>&1 | grep -E "restart\(s\)|times:|step / SpMV|step [0-9.]+ ms|partial reorth|^eigenvalue\[[23]\]" | sed -E 's/pjds-lanczos: solve: //' | tr '\n' ' ')
            echo "SPEED $v wall_ms $(( ($(date +%s%N) - s0) / 1000000 )) :: $r"
        done
        for vt in 1e-8 1e-6 1e-4; do
            r=$(PJDS_VERIFY_TOL=$vt timeout 60 "$BIN" solve "$CONFIG" --overwrite --set output.file=/tmp/sp3.h5 2>&1 | grep -E "restart\(s\)|times:|^eigenvalue\[[23]\]" | sed -E 's/pjds-lanczos: solve: //' | tr '\n' ' ')
            $PY -c "import h5py; a = h5py.File('/tmp/sp3.h5').attrs; print('VERIFYTOL $vt missed', a['verify_missed'], 'spmv', a['iterations'], 'solve_s', a['solve_seconds'])"
            echo "VERIFYTOL $vt :: $r"
        done
    } > "$OUT/speed.log" 2>&1
    grep -E "^(WHOLE|ATTRS|SPEED|VERIFYTOL)" "$OUT/speed.log" | cut -c1-700 | tee -a "$SUM"
    step "CuPy eigsh peer (warm median) and ours, same matrix"
    H5=/tmp/pjds-peer-matrix.h5
    {
        timeout 120 "$BIN" export "$CONFIG" "$H5" --overwrite
        echo "export exit $?"
        timeout 240 "$PY" bench/cupy_peer.py --matrix "$H5" --config "$CONFIG" --bin "$BIN" --repeats 3 \
            --runs "ours,ours_noverify,ours_full:solver.reorthogonalization=full" --json "$OUT/peer_speed.json"
        echo "peer exit $?"
    } > "$OUT/peer_speed.log" 2>&1
    grep -E "^(cupy|peer|export exit|ours)" "$OUT/peer_speed.log" | cut -c1-400 | tee -a "$SUM"
    if [ "${SKIP_CPU_PEER:-0}" != 1 ]; then
        step "CPU: ours on $(nproc) cores vs SciPy eigsh (ARPACK), same matrix"
        {
            s0=$(date +%s%N)
            OMP_NUM_THREADS=$(nproc) timeout 200 "$BIN" solve "$CONFIG" --overwrite --set output.file=/tmp/spcpu.h5 \
                --set spmv.backend=cpu 2>&1 | grep -vE "Hamiltonian rows|restart [0-9]+, converged"
            echo "CPU ours exit $? wall_ms $(( ($(date +%s%N) - s0) / 1000000 ))"
            timeout 300 "$PY" bench/cpu_peer.py "$CONFIG" --bin "$BIN" --matrix "$H5" --result /tmp/spcpu.h5
            echo "scipy exit $?"
        } > "$OUT/cpu_speed.log" 2>&1
        grep -E "times:|exit|eigsh|scipy|speed" "$OUT/cpu_speed.log" | cut -c1-300 | tee -a "$SUM"
    fi
    rm -f "$H5"
fi

# ---- compressed format: solve in both formats, CPU bench, a larger model ----
if [ $BUILD_OK = 1 ] && part compressed; then
    step "compressed format on $CONFIG"
    {
        for f in auto pjds; do
            s0=$(date +%s%N)
            timeout 90 "$BIN" solve "$CONFIG" --overwrite --set output.file=/tmp/cmp_$f.h5 --set spmv.backend=cuda \
                --set spmv.format=$f 2>&1 | grep -E "format:|times:|SpMV|restart\(s\)|^eigenvalue\[0\]"
            echo "FMT $f exit $? wall_ms $(( ($(date +%s%N) - s0) / 1000000 ))"
            "$PY" - /tmp/cmp_$f.h5 <<'PYEOF'
import sys, h5py
with h5py.File(sys.argv[1]) as f:
    a = f.attrs
    keys = ["spmv_format", "matrix_bytes", "spmv_median_seconds", "solve_seconds", "device_memory_used_bytes",
            "memory_plan_device_bytes", "compressed_values", "compressed_offsets"]
    print("ATTRS", " ".join("%s=%s" % (k, a[k].decode() if isinstance(a[k], bytes) else a[k]) for k in keys if k in a))
    print("EIG", " ".join("%.15f" % v for v in f["eigenvalues"][:]))
PYEOF
        done
        for kv in "default-kernel" "PJDS_CPU_CPJDS=rows" "PJDS_CPU_ISA=avx2" "PJDS_CPU_ISA=default"; do
            echo "--- CPU backend, all cores ($kv): bench rows (CSR loop, pJDS, compressed)"
            env $([ "$kv" = default-kernel ] || echo "$kv") OMP_NUM_THREADS=$(nproc) timeout 200 "$BIN" bench "$CONFIG" \
                --set spmv.backend=cpu --set spmv.repeats=20 2>&1 \
                | sed -n '/^== pjds-lanczos bench/,$p' | grep -E "^(copy|CSR|pJDS operator|compressed operator  )" | cut -c1-200 | sed "s/^/CPU[$kv] /"
        done
        if [ -f configs/hmep_m21.ini ] && [ "$(el)" -lt "${BIG_DEADLINE:-420}" ]; then
            echo "--- larger model on one GPU: hmep_m21 (4.2 x HMEp), memory plan and solve"
            "$BIN" info configs/hmep_m21.ini --quiet 2>&1 | grep -E "^(rows|nnz|compressed_|memory_device)"
            "$BIN" info configs/hmep_m21.ini --quiet --set spmv.format=pjds 2>&1 | grep -E "^memory_device" | sed 's/^/pjds /'
            s0=$(date +%s%N)
            timeout 150 "$BIN" solve configs/hmep_m21.ini --overwrite --set output.file=/tmp/m21.h5 --set spmv.backend=cuda 2>&1 \
                | grep -E "format:|times:|SpMV|^eigenvalue\[0\]|error"
            echo "M21 exit $? wall_ms $(( ($(date +%s%N) - s0) / 1000000 ))"
        fi
    } > "$OUT/compressed.log" 2>&1
    cat "$OUT/compressed.log" | cut -c1-300
    grep -E "^(FMT|ATTRS|EIG|M21|CPU\[)|format:|SpMV median" "$OUT/compressed.log" | cut -c1-300 >> "$SUM"
fi

# ---- compressed kernels: every variant checked, timed, and profiled ----------
# both device layouts: narrow (16 + 8-bit word planes, byte lengths: the default where they fit) and
# wide (PJDS_CPJDS_WIDE=1: 32-bit words and lengths)
if [ $BUILD_OK = 1 ] && part cprof; then
    step "compressed kernel variants: correctness, bench, solve, ncu"
    {
        for w in 0 1; do
            for v in c-u2-nc c-u4-nc c-u4-cs c-u4-ef c-u8-cs c-u8-ef; do
                PJDS_CPJDS_WIDE=$w PJDS_TEST_BACKEND=cuda PJDS_CPJDS_VARIANT=$v timeout 60 "$BUILD/tests/spmv/test_cpjds" > /tmp/tc.log 2>&1
                echo "CTEST wide=$w $v exit $? $(grep -cE 'FAIL' /tmp/tc.log) failure lines"
            done
        done
        for w in 0 1; do
            PJDS_CPJDS_WIDE=$w timeout 200 "$BIN" bench "$CONFIG" --set spmv.backend=cuda > /tmp/bench_c.log 2>&1
            echo "bench wide=$w exit $?"
            sed -n '/^== pjds-lanczos bench/,$p' /tmp/bench_c.log | grep -E "^(copy|compressed operator  |pJDS operator|cuSPARSE CSR )" | cut -c1-190 | sed "s/^/BENCH w$w /"
        done
        for w in 0 1 0 1; do
            r=$(PJDS_CPJDS_WIDE=$w timeout 60 "$BIN" solve "$CONFIG" --overwrite --set output.file=/tmp/cs.h5 --set spmv.backend=cuda 2>&1 \
                | grep -E "format:|SpMV per product|phases:|Lanczos step" | cut -c1-200 | tr '\n' ' ')
            echo "SOLVE wide=$w :: $r"
        done
        if [ "${SKIP_NCU:-0}" != 1 ] && command -v ncu > /dev/null; then
            for w in 0 1; do
                echo "## ncu wide=$w c-u2-nc"
                PJDS_CPJDS_WIDE=$w timeout 120 ncu --clock-control none -k regex:k_cspmv --launch-skip 3 -c 1 \
                    --section SpeedOfLight --section MemoryWorkloadAnalysis --metrics dram__bytes_read.sum,dram__bytes_write.sum \
                    "$BIN" solve "$CONFIG" --overwrite --set output.file=/tmp/cs.h5 --set spmv.backend=cuda --set solver.verify=false
                echo "ncu exit $?"
            done
        fi
    } > "$OUT/cprof.log" 2>&1
    grep -E "^(CTEST|BENCH|SOLVE|bench |## ncu|ncu exit)" "$OUT/cprof.log" | cut -c1-400 | tee -a "$SUM"
    grep -E "^## ncu|Duration|DRAM Throughput|L2 Hit|dram__bytes" "$OUT/cprof.log" | cut -c1-200 >> "$SUM"
fi

# ---- summary (last) -------------------------------------------------------------------
step "summary"
{
    echo "################ SUMMARY ($(el) s) ################"
    cat "$SUM"
    if [ -f "$OUT/bench.log" ]; then
        echo "--- bench (main table)"
        sed -n '/^== pjds-lanczos bench/,$p' "$OUT/bench.log" | grep -E "^(==|matrix|copy|pJDS data|sort-window|variant|% of|max rel|format|pJDS|ELLPACK|cuSPARSE|CSR)" | cut -c1-160
    fi
    if [ -f "$OUT/peer.log" ]; then
        echo "--- CuPy peer"
        grep -E "^(cupy|ours|peer|export exit| ?[0-9] )" "$OUT/peer.log" | cut -c1-160
    fi
    echo "logs: $OUT (env.log build.log tests.log sanitizer.log timings.log bench.log peer.log summary.txt)"
} > "$OUT/summary.full" 2>&1
cat "$OUT/summary.full"
mv "$OUT/summary.full" "$SUM"
