#!/bin/bash
# mpi_init_probe.sh — how long MPI_Init_thread takes in an isolated Open MPI
# singleton (a process started without mpirun, as pjds-lanczos sets it up in
# app/app_start.c) under several settings; medians of 7 runs each.  The
# measurement behind HWLOC_COMPONENTS in docs/operations.md "Start-up".
#   run(command="bash bench/mpi_init_probe.sh")
set -u
bin=$(mktemp /tmp/mpiprobe.XXXXXX) || exit 1
trap 'rm -f "$bin"' EXIT
mpicc -O2 -x c - -o "$bin" <<'C' || exit 1
#include <mpi.h>
#include <stdio.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
int main(int argc, char **argv)
{
    double t0 = now();
    int p;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &p) != MPI_SUCCESS) return 1;
    double t1 = now();
    MPI_Finalize();
    printf("%.4f %.4f\n", t1 - t0, now() - t1);
    return 0;
}
C
base="OMPI_MCA_ess_singleton_isolated=1 OMPI_MCA_pml=ob1"
probe() { # label, extra environment
    local r=()
    for i in 1 2 3 4 5 6 7; do r+=("$(env $base $2 "$bin" 2>/dev/null | tail -1)"); done
    printf '%-44s MPI_Init_thread %s s, MPI_Finalize %s s\n' "$1" \
        "$(printf '%s\n' "${r[@]}" | awk '{print $1}' | sort -n | sed -n 4p)" \
        "$(printf '%s\n' "${r[@]}" | awk '{print $2}' | sort -n | sed -n 4p)"
}
probe "isolated + ob1 (before 2026-11-25)" ""
probe "+ HWLOC_COMPONENTS (pjds-lanczos now)" "HWLOC_COMPONENTS=-cuda,-nvml,-opencl,-gl,-rsmi,-levelzero"
probe "+ btl self, osc sm (no effect seen)" "OMPI_MCA_btl=self OMPI_MCA_osc=sm"
probe "not isolated (orted forked)" "OMPI_MCA_ess_singleton_isolated=0"
