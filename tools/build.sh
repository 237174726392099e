#!/usr/bin/env bash
# Install missing system packages, configure and build pjds-lanczos in build/.
# Environment: PJDS_BUILD_DIR (default build), PJDS_CMAKE_ARGS (extra cmake args).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup-deps.sh
B=${PJDS_BUILD_DIR:-build}
# nvcc is usually outside PATH on a fresh machine
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release ${PJDS_CMAKE_ARGS:-} >"$B.cmake.log" 2>&1 || { cat "$B.cmake.log"; exit 1; }
cmake --build "$B" -j "$(nproc)"
