#!/bin/sh
# simd_level.sh LEVEL CMD...: run CMD with PJDS_CPU_SIMD=LEVEL (the CPU kernels'
# instruction-set level); exit 77 (skipped) where the CPU lacks it (sse2:
# every x86-64 CPU).
lv=$1
shift
if [ "$lv" != sse2 ] && ! grep -qw "$lv" /proc/cpuinfo 2>/dev/null; then
    echo "no $lv on this CPU: skipped"
    exit 77
fi
PJDS_CPU_SIMD=$lv exec "$@"
