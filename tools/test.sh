#!/usr/bin/env bash
# Second set-up command: install what is missing, build, run the whole test
# suite (ctest labels unit, mpi, gpu; GPU tests report "skipped" without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/build.sh
B=${PJDS_BUILD_DIR:-build}
ctest --test-dir "$B" --output-on-failure -j "$(nproc)" "$@"
