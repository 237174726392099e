#!/bin/bash
# slepc_bundle.sh -- carry the SLEPc peer (bench/slepc_sinvert.c, built against Debian 12's PETSc/SLEPc
# 3.18) to a machine without PETSc, SLEPc or MUMPS (the GPU host: Ubuntu 24.04, Open MPI 4.1.6).
#
#   bash bench/slepc_bundle.sh pack [BINARY]   here: BINARY (default build-slepc/slepc_sinvert, built by
#                                              bench/slepc_build.sh when missing) and its library closure
#                                              (ldd) into .slepc/slepc-bundle-K.tar.xz (git-ignored), each
#                                              at most 50 MiB
#   bash bench/slepc_bundle.sh mumps DIR DEST  there, after unpack: lay out Debian's MUMPS 5.5 from the
#                                              bundle in DEST as .mumps/ is (lib, include, fallback), for
#                                              .accept/common.sh's mumps_setup
#   bash bench/slepc_bundle.sh unpack DIR      there: extract .slepc/*.tar.xz into DIR and write
#                                              DIR/bin/slepc_sinvert, a wrapper that sets LD_LIBRARY_PATH
#                                              for the driver alone (nothing else on the host sees the
#                                              bundle's libraries); prints the export line as well
#
# The closure is split three ways:
#   left out  what the host has and must keep its own of: glibc (libc, libm, libpthread, libdl, librt,
#             libresolv, libutil, ld-linux), libstdc++, libgcc_s, and Open MPI with its helpers (libmpi,
#             libopen-pal/-rte, pmix, hwloc, libevent, UCX, libfabric, PSM, verbs, rdmacm, libnl, munge):
#             the driver runs on the host's Open MPI (the same libmpi.so.40 ABI);
#   fallback  general system libraries that a newer distribution keeps backward compatible under the same
#             soname (libgfortran, libgomp, zlib, OpenSSL, curl, X11 and such, and Open MPI's Fortran and
#             C++ bindings, which a host's Open MPI may lack): used only where the host's loader cache
#             (ldconfig -p) lacks the soname, so the host's own newer copy wins;
#   lib       the rest (PETSc, SLEPc, MUMPS, ScaLAPACK, HYPRE, SuperLU, Trilinos, OpenBLAS/LAPACK, FFTW,
#             HDF5 for Open MPI, Scotch, METIS, SuiteSparse, ...): always the bundle's copies.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
STORE=${SLEPC_BUNDLE_STORE:-$ROOT/.slepc}
LIMIT=$((50 * 1024 * 1024))

EXCLUDE='^(linux-vdso|ld-linux|libc\.so|libm\.so|libmvec|libpthread|libdl\.so|librt\.so|libresolv|libutil\.so|libanl|libstdc\+\+|libgcc_s|libmpi\.so|libopen-(pal|rte)|libompitrace|libpmix|libhwloc|libevent|libucx|libucp|libucs|libuct|libucm|libfabric|libpsm|libibverbs|librdmacm|libnl-|libmunge|libltdl)'
FALLBACK='^(libmpi_mpifh|libmpi_cxx|libmpi_usempi|libgfortran|libquadmath|libgomp|libz\.so|libzstd|liblzma|libbz2|libcrypto|libssl|libudev|libsystemd|libcap|libffi|libgmp|libunistring|libidn2|libp11-kit|libtasn1|libnettle|libhogweed|libgnutls|libkrb5|libk5crypto|libgssapi|libcom_err|libkeyutils|libcurl|libnghttp2|librtmp|libssh|libpsl|libldap|liblber|libsasl2|libbrotli|libX|libxcb|libbsd|libmd\.so|libOpenCL|libsz|libaec|libyaml)'

die() { echo "slepc_bundle: $*" >&2; exit 1; }

# tar + xz the files (paths relative to $STAGE) into one tarball, or split the list in two while a tarball
# would pass LIMIT
pack_group() {
    local out=$1; shift
    tar -C "$STAGE" -cf - "$@" | xz -9 -T2 > "$out" || die "tar/xz failed for $out"
    local size; size=$(stat -c %s "$out")
    if [ "$size" -gt "$LIMIT" ]; then
        [ $# -gt 1 ] || die "$1 alone compresses to $size bytes (> 50 MiB)"
        rm -f "$out"
        local half=$(($# / 2))
        NPART=$((NPART + 1)); pack_group "$STORE/slepc-bundle-$NPART.tar.xz" "${@:1:$half}"
        NPART=$((NPART + 1)); pack_group "$STORE/slepc-bundle-$NPART.tar.xz" "${@:$((half + 1))}"
    fi
}

pack() {
    local bin=${1:-$ROOT/build-slepc/slepc_sinvert}
    [ -x "$bin" ] || bash "$ROOT/bench/slepc_build.sh" "$bin"
    command -v xz > /dev/null || die "xz is needed to pack"
    STAGE=$(mktemp -d /tmp/slepc-bundle.XXXXXX)
    trap 'rm -rf "$STAGE"' EXIT
    mkdir -p "$STAGE/bin" "$STAGE/lib" "$STAGE/fallback"
    cp "$bin" "$STAGE/bin/slepc_sinvert.bin"
    local ldd_out; ldd_out=$(ldd "$bin") || die "ldd $bin failed"
    if grep -q "not found" <<< "$ldd_out"; then die "unresolved here: $(grep 'not found' <<< "$ldd_out" | tr '\n' ' ')"; fi
    local name path class n_lib=0 n_fb=0 n_ex=0
    {
        echo "# slepc bundle of $(basename "$bin"), packed $(date -u +%Y-%m-%dT%H:%MZ) on $(. /etc/os-release && echo "$PRETTY_NAME")"
        echo "# soname class source"
    } > "$STAGE/MANIFEST"
    while read -r name path; do
        if [[ $name =~ $EXCLUDE ]]; then class=excluded; n_ex=$((n_ex + 1))
        elif [[ $name =~ $FALLBACK ]]; then class=fallback; n_fb=$((n_fb + 1))
        else class=lib; n_lib=$((n_lib + 1)); fi
        [ $class = excluded ] || cp -L "$path" "$STAGE/$class/$name"
        echo "$name $class $(readlink -f "$path")" >> "$STAGE/MANIFEST"
    done < <(awk '$2 == "=>" && $3 ~ /^\// {print $1, $3} $1 ~ /^\// {n = split($1, p, "/"); print p[n], $1}' <<< "$ldd_out")
    # extra/mumps: MUMPS 5.5's headers and libzmumps (the rest of MUMPS is in lib/ and fallback/), so that
    # the host can also build our program with Debian's MUMPS from this bundle alone (slepc16_device.sh)
    local zm=/usr/lib/x86_64-linux-gnu/libzmumps-5.5.so
    if [ -e "$zm" ] && ls /usr/include/*mumps*.h > /dev/null 2>&1; then
        mkdir -p "$STAGE/extra/mumps/include" "$STAGE/extra/mumps/lib"
        cp /usr/include/*mumps*.h "$STAGE/extra/mumps/include/"
        cp -L "$zm" "$STAGE/extra/mumps/lib/"
        if [ -e /usr/lib/x86_64-linux-gnu/libpord-5.5.so ]; then cp -L /usr/lib/x86_64-linux-gnu/libpord-5.5.so "$STAGE/extra/mumps/lib/"; fi
    fi
    mkdir -p "$STORE"
    rm -f "$STORE"/slepc-bundle-*.tar.xz
    local files=(MANIFEST bin/slepc_sinvert.bin)
    for f in "$STAGE"/lib/* "$STAGE"/fallback/* "$STAGE"/extra/mumps/*/*; do
        if [ -e "$f" ]; then files+=("${f#"$STAGE"/}"); fi
    done
    NPART=1
    pack_group "$STORE/slepc-bundle-1.tar.xz" "${files[@]}"
    echo "slepc_bundle: $n_lib libraries, $n_fb fallbacks, $n_ex left to the host ($(du -sh "$STAGE" | cut -f1) unpacked)"
    ls -l "$STORE"/slepc-bundle-*.tar.xz | awk '{printf "  %s  %.1f MiB\n", $NF, $5 / 1048576; s += $5} END {printf "  total %.1f MiB\n", s / 1048576}'
}

unpack() {
    local dir=${1:?unpack needs a target directory}
    local tarballs=("$STORE"/slepc-bundle-*.tar.xz)
    [ -f "${tarballs[0]}" ] || die "no $STORE/slepc-bundle-*.tar.xz (carry .slepc)"
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    rm -rf "$dir/bin" "$dir/lib" "$dir/fallback" "$dir/extra" "$dir/MANIFEST"
    for t in "${tarballs[@]}"; do
        if command -v xz > /dev/null; then
            tar -C "$dir" -xJf "$t" || die "extracting $t failed"
        else
            python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1], "r:xz").extractall(sys.argv[2])' "$t" "$dir" \
                || die "extracting $t failed"
        fi
    done
    mkdir -p "$dir/lib"
    local cache used=()
    cache=$(ldconfig -p 2> /dev/null || true)
    for f in "$dir"/fallback/*; do
        [ -e "$f" ] || continue
        local name; name=$(basename "$f")
        if [ -n "${SLEPC_BUNDLE_ALL:-}" ] || ! grep -qE "^[[:space:]]+${name//./\\.} " <<< "$cache"; then
            ln -sf "../fallback/$name" "$dir/lib/$name"
            used+=("$name")
        fi
    done
    cat > "$dir/bin/slepc_sinvert" << EOF
#!/bin/sh
# the SLEPc peer with the bundle's libraries (written by bench/slepc_bundle.sh unpack)
LD_LIBRARY_PATH=$dir/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH
exec $dir/bin/slepc_sinvert.bin "\$@"
EOF
    chmod +x "$dir/bin/slepc_sinvert" "$dir/bin/slepc_sinvert.bin"
    local missing
    missing=$(LD_LIBRARY_PATH=$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ldd "$dir/bin/slepc_sinvert.bin" | grep "not found" || true)
    echo "slepc_bundle: unpacked into $dir; fallbacks used (absent on this host): ${used[*]:-none}" >&2
    [ -z "$missing" ] || { echo "slepc_bundle: unresolved: $missing" >&2; exit 1; }
    echo "export LD_LIBRARY_PATH=$dir/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}  # or run $dir/bin/slepc_sinvert"
}

mumps() {
    local dir=${1:?mumps needs the unpacked bundle} dest=${2:?mumps needs a destination}
    [ -f "$dir/extra/mumps/lib/libzmumps-5.5.so" ] || die "$dir has no extra/mumps (an older bundle?)"
    rm -rf "$dest" && mkdir -p "$dest/lib" "$dest/include" "$dest/fallback"
    local l
    for l in libdmumps-5.5.so libmumps_common-5.5.so libscalapack-openmpi.so.2.2; do
        cp "$dir/lib/$l" "$dest/lib/" || die "$l is not in the bundle"
    done
    cp "$dir"/extra/mumps/lib/*.so "$dest/lib/"
    ln -s libdmumps-5.5.so "$dest/lib/libdmumps.so"
    ln -s libzmumps-5.5.so "$dest/lib/libzmumps.so"
    ln -s libmumps_common-5.5.so "$dest/lib/libmumps_common.so"
    cp "$dir"/extra/mumps/include/*.h "$dest/include/"
    for l in libgfortran.so.5 libmpi_mpifh.so.40 libquadmath.so.0; do
        if [ -e "$dir/fallback/$l" ]; then cp "$dir/fallback/$l" "$dest/fallback/"; fi
    done
    echo "slepc_bundle: MUMPS 5.5 in $dest: $(ls "$dest/lib" | tr '\n' ' ')"
}

case "${1:-}" in
    pack) shift; pack "$@" ;;
    unpack) shift; unpack "$@" ;;
    mumps) shift; mumps "$@" ;;
    *) die "usage: $0 pack [BINARY] | unpack DIR | mumps DIR DEST" ;;
esac
