#!/usr/bin/env bash
# The installable library: install the build of tools/test.sh into a temporary prefix, build
# examples/ against it with CMake (find_package(pjds)) and with pkg-config, and run the example
# (the 2-D Laplacian against its closed form) on 1 and 2 ranks.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${PJDS_BUILD_DIR:-build}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
P=$T/prefix
cmake --install "$B" --prefix "$P" >"$T/install.log"
for f in lib/libpjds.a lib/libpjds.so include/pjds/pjds.h lib/cmake/pjds/pjdsConfig.cmake \
         lib/cmake/pjds/pjdsConfigVersion.cmake lib/pkgconfig/pjds.pc bin/pjds-lanczos; do
  [ -e "$P/$f" ] || { echo "test_install: $P/$f is missing"; exit 1; }
done
# the shared library exports the public API only (and the locks of named OpenMP critical sections, which GCC makes global)
bad=$(nm -D --defined-only "$P/lib/libpjds.so" | awk '$2 ~ /^[TDBR]$/ {print $3}' | grep -v '^pjds_' | grep -v '^\.gomp_critical_user_' || true)
[ -z "$bad" ] || { echo "test_install: libpjds.so exports non-API symbols:"; echo "$bad" | head; exit 1; }
# the static library too: its global definitions are the API (and the same OpenMP locks, and in a
# CUDA build the hidden C++ personality reference that libstdc++ resolves against)
bad=$(nm --defined-only "$P/lib/libpjds.a" | awk '$2 ~ /^[TDBRC]$/ {print $3}' | grep -v '^pjds_' |
      grep -v '^\.gomp_critical_user_' | grep -v '^DW\.ref\.__gxx_personality_v0$' || true)
[ -z "$bad" ] || { echo "test_install: libpjds.a defines non-API global symbols:"; echo "$bad" | head; exit 1; }
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
MPI="mpirun -np 2 --allow-run-as-root --oversubscribe --bind-to none"
echo "test_install: CMake package (shared)"
cmake -S examples -B "$T/ex" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_BUILD_TYPE=Release >"$T/ex.log" 2>&1 || { cat "$T/ex.log"; exit 1; }
cmake --build "$T/ex" >>"$T/ex.log" 2>&1 || { cat "$T/ex.log"; exit 1; }
"$T/ex/laplace2d" 20 6
$MPI "$T/ex/laplace2d" 20 6
echo "test_install: CMake package (static, pjds_USE_STATIC_LIBS)"
cmake -S examples -B "$T/exs" -DCMAKE_PREFIX_PATH="$P" -Dpjds_USE_STATIC_LIBS=ON >"$T/exs.log" 2>&1 || { cat "$T/exs.log"; exit 1; }
cmake --build "$T/exs" >>"$T/exs.log" 2>&1 || { cat "$T/exs.log"; exit 1; }
$MPI "$T/exs/laplace2d" 16 4
echo "test_install: pkg-config"
export PKG_CONFIG_PATH="$P/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
cc -O2 -std=c17 $(pkg-config --cflags pjds) -o "$T/laplace2d-pc" examples/laplace2d.c $(pkg-config --libs pjds) -lm
LD_LIBRARY_PATH="$P/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" $MPI "$T/laplace2d-pc" 20 6
echo "test_install: pkg-config --static"
cc -O2 -std=c17 $(pkg-config --cflags pjds) -o "$T/laplace2d-pcs" examples/laplace2d.c "$P/lib/libpjds.a" \
   $(pkg-config --libs --static pjds) -lm
"$T/laplace2d-pcs" 12 4
echo "test_install: ok"
