#!/usr/bin/env bash
# First set-up command: install what is missing, build, run the quickstart.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/build.sh
B=${PJDS_BUILD_DIR:-build}
"$B/app/pjds-lanczos" info configs/quickstart.ini
"$B/app/pjds-lanczos" solve configs/quickstart.ini --overwrite --set output.file="$B/quickstart.h5"
echo "quickstart: spectrum written to $B/quickstart.h5"
