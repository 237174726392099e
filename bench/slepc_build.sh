#!/bin/bash
# slepc_build.sh -- build bench/slepc_sinvert.c, the C peer of bench/sinvert_peers.py's SLEPc path, against
# Debian 12's PETSc 3.18 / SLEPc 3.18 (real) with mpicc.  A peer, not a dependency: it is not part of the
# CMake build.  The runtime libraries (libpetsc-real3.18, libslepc-real3.18) must be installed; their
# headers come from libpetsc-real3.18-dev / libslepc-real3.18-dev when installed, else those two packages
# (and libpetsc3.18-dev-common) are fetched with apt-get download and unpacked, without their dozens of
# dependencies, into the git-ignored .slepc-dev/.
#   bash bench/slepc_build.sh [OUTPUT]      (default build-slepc/slepc_sinvert)
set -euo pipefail
cd "$(dirname "$0")/.."
OUTBIN=${1:-build-slepc/slepc_sinvert}
ARCH=x86_64-linux-gnu-real
PETSC=/usr/lib/petscdir/petsc3.18/$ARCH
SLEPC=/usr/lib/slepcdir/slepc3.18/$ARCH
LIBDIR=/usr/lib/x86_64-linux-gnu
for l in libpetsc_real.so.3.18 libslepc_real.so.3.18; do
    [ -e "$LIBDIR/$l" ] || { echo "slepc_build: $LIBDIR/$l missing (apt-get install libpetsc-real3.18 libslepc-real3.18)" >&2; exit 1; }
done
if [ -f "$PETSC/include/petscsys.h" ] && [ -f "$SLEPC/include/slepceps.h" ]; then
    PINC="$PETSC/include"; SINC="$SLEPC/include"
else
    DEV=$PWD/.slepc-dev
    if [ ! -f "$DEV/root$PETSC/include/petscsys.h" ] || [ ! -f "$DEV/root$SLEPC/include/slepceps.h" ]; then
        rm -rf "$DEV" && mkdir -p "$DEV"
        (cd "$DEV" && apt-get download libpetsc-real3.18-dev libpetsc3.18-dev-common libslepc-real3.18-dev > download.log 2>&1) \
            || { echo "slepc_build: apt-get download of the PETSc/SLEPc headers failed (see $DEV/download.log)" >&2; exit 1; }
        for f in "$DEV"/*.deb; do dpkg -x "$f" "$DEV/root"; done
    fi
    PINC="$DEV/root$PETSC/include"; SINC="$DEV/root$SLEPC/include"
fi
mkdir -p "$(dirname "$OUTBIN")"
mpicc -std=c17 -O2 -Wall -Wextra -Werror=implicit-function-declaration -I"$SINC" -I"$PINC" \
    bench/slepc_sinvert.c -o "$OUTBIN" "$LIBDIR/libslepc_real.so.3.18" "$LIBDIR/libpetsc_real.so.3.18" -lm
echo "slepc_build: $OUTBIN"
