#!/usr/bin/env bash
# cudss_carry.sh — take cuDSS to a machine that cannot download it (the GPU machine of bench/cudss_gpu.sh),
# through calls that each carry at most 64 MiB: libcudss.so.1 alone is 167 MB and does not compress.
#
#   bash tools/cudss_carry.sh pack     # here: .cudss/1 .. .cudss/3, one part of 58 MiB or less each
#   bash tools/cudss_carry.sh unpack   # there, once per call, each call carrying the next .cudss/K:
#                                      # keeps the parts in $PJDS_CUDSS_PARTS (/opt/cudss-parts); when all
#                                      # are there, checks the sha256 and unpacks into $PJDS_CUDSS_DEST
#                                      # (/opt/cudss: include/cudss.h, lib/libcudss.so.1).
# unpack exits 0 when cuDSS is complete at the destination, 3 while parts are missing (it names them), 1 on
# a broken part.  pack takes the wheel's nvidia/cu13 that tools/setup-deps.sh installed, or PJDS_CUDSS_ROOT.
set -euo pipefail
cd "$(dirname "$0")/.."
PART_MIB=${PJDS_CUDSS_PART_MIB:-58}
PARTS_DIR=${PJDS_CUDSS_PARTS:-/opt/cudss-parts}
DEST=${PJDS_CUDSS_DEST:-/opt/cudss}

find_root() {
    if [ -n "${PJDS_CUDSS_ROOT:-}" ]; then echo "$PJDS_CUDSS_ROOT"; return; fi
    local d
    for d in /usr/local/lib/python3*/dist-packages/nvidia/cu13 /usr/lib/python3*/dist-packages/nvidia/cu13 \
             "$HOME"/.local/lib/python3*/site-packages/nvidia/cu13; do
        [ -f "$d/include/cudss.h" ] && ls "$d"/lib/libcudss.so.* >/dev/null 2>&1 && { echo "$d"; return; }
    done
    return 1
}

pack() {
    local root tmp n i
    root=$(find_root) || { echo "cudss_carry: no cuDSS found (run tools/setup-deps.sh or set PJDS_CUDSS_ROOT)" >&2; exit 1; }
    tmp=$(mktemp -d)
    tar -C "$root" -cf "$tmp/cudss.tar" include lib/libcudss.so.1
    rm -rf .cudss && mkdir -p .cudss
    split -b "${PART_MIB}m" -d -a 1 "$tmp/cudss.tar" "$tmp/part."
    n=$(ls "$tmp"/part.* | wc -l)
    i=1
    for p in "$tmp"/part.*; do
        mkdir -p ".cudss/$i"
        mv "$p" ".cudss/$i/part.$i"
        { echo "parts $n"; echo "sha256 $(sha256sum "$tmp/cudss.tar" | cut -d' ' -f1)"; } > ".cudss/$i/manifest"
        i=$((i + 1))
    done
    rm -rf "$tmp"
    echo "cudss_carry: $root -> $n parts:"
    du -sh .cudss/*
}

unpack() {
    if [ -f "$DEST/include/cudss.h" ] && [ -f "$DEST/lib/libcudss.so.1" ]; then
        echo "cudss_carry: cuDSS complete in $DEST"; return 0
    fi
    mkdir -p "$PARTS_DIR"
    local d n sum have missing=""
    for d in .cudss/*/; do
        [ -f "$d/manifest" ] || continue
        cp "$d"/part.* "$d/manifest" "$PARTS_DIR/"
        echo "cudss_carry: received $(basename "$d"/part.*) ($(du -h "$d"/part.* | cut -f1))"
    done
    [ -f "$PARTS_DIR/manifest" ] || { echo "cudss_carry: no part received yet (carry .cudss/1)"; return 3; }
    n=$(awk '/^parts/ {print $2}' "$PARTS_DIR/manifest")
    sum=$(awk '/^sha256/ {print $2}' "$PARTS_DIR/manifest")
    have=0
    for i in $(seq 1 "$n"); do
        if [ -f "$PARTS_DIR/part.$i" ]; then have=$((have + 1)); else missing="$missing .cudss/$i"; fi
    done
    if [ "$have" -lt "$n" ]; then
        echo "cudss_carry: $have of $n parts here; carry next:$missing"; return 3
    fi
    local tar="$PARTS_DIR/cudss.tar"
    for i in $(seq 1 "$n"); do cat "$PARTS_DIR/part.$i"; done > "$tar"
    if [ "$(sha256sum "$tar" | cut -d' ' -f1)" != "$sum" ]; then
        echo "cudss_carry: checksum mismatch: parts from different packs? (rm -rf $PARTS_DIR, carry again)" >&2
        rm -f "$tar"; return 1
    fi
    mkdir -p "$DEST" && tar -C "$DEST" -xf "$tar" && rm -f "$tar" "$PARTS_DIR"/part.*
    echo "cudss_carry: cuDSS complete in $DEST ($(du -sh "$DEST" | cut -f1))"
}

case "${1:-}" in
    pack) pack ;;
    unpack) unpack ;;
    *) sed -n '2,12p' "$0"; exit 2 ;;
esac
