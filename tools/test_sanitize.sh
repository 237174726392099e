#!/usr/bin/env bash
# The sanitizer half of CI (docs/operations.md, "Reliability"): the CPU code built by clang with
# AddressSanitizer + UndefinedBehaviorSanitizer (-DPJDS_SANITIZE=address,undefined, CUDA off) in
# build-asan/, then the unit and mpi tests under it, the libFuzzer harnesses of tests/fuzz included.
# Every report aborts its test.  Left out (time, not findings): end-to-end solves that take minutes
# under ASan on 2 cores and run no code the included tests do not (the nonsymmetric real-matrix
# and cross-check solves, the checkpointed sweeps, the large block-stencil solve), the
# subprocess mutation corpus h5matrix_fuzz (fuzz.h5m covers the reader in-process) and the CPU
# SpMV benchmark smoke run spmv_bench_cpu_smoke (timings; >60 s under ASan, 300 s beside other
# tests; its kernels are the ones spmv_pjds and spmv_cpjds_np* check under the sanitizers), the
# restart-budget solves nonsym.auto_restarts.* (55,000 products on cryg10000 plus ARPACK, like
# nonsym.real.*) and the 2-rank exact-resume runs sweep.resume_exact_*_mpi2 (23-83 s without
# the sanitizers; their 1-rank versions, which run the same checkpoint code, stay in); the ChebFD
# solves chebfd.laplace ... ranks_free (47-57 s each without the sanitizers on the 2 cores of CI,
# 2026-11-26; chebfd.bad and chebfd.plot, which run the method on a small matrix, stay in), the
# lattices' spectral functions reference.hh_lattice.spectral* (49 s without them; the other
# lattice cases run the same generator) and the 2- and 3-rank matrix-free solves
# solve.matrix_free_mpi (about 4 minutes without them; spmv_kron_right_np* and
# spmv_kron_block_np* run both splits' exchange and kernels under the sanitizers).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup-deps.sh
B=${PJDS_ASAN_DIR:-build-asan}
CC=clang cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPJDS_CUDA=OFF -DPJDS_SANITIZE=address,undefined \
    >"$B.cmake.log" 2>&1 || { cat "$B.cmake.log"; exit 1; }
cmake --build "$B" -j "$(nproc)"
EXCL='^(h5matrix_fuzz|spmv_bench_cpu_smoke|nonsym\.real\..*|nonsym\.ranks|nonsym\.symmetric_crosscheck|sweep\.checkpoint.*|blockstencil\.solve_large|nonsym\.auto_restarts\..*|sweep\.resume_exact_.*_mpi2|chebfd\.(laplace|diag|hh|free|target|smallest|ranks|ranks_free)|reference\.hh_lattice\.spectral.*|solve\.matrix_free_mpi)$'
ctest --test-dir "$B" --output-on-failure -j "$(nproc)" -L 'unit|mpi' -E "$EXCL" "$@"
