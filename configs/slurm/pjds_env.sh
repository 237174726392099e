# Sourced by the job scripts of configs/slurm/ (not run on its own): finds the
# pjds-lanczos binary and the MPI plugin of srun, so that the same scripts run
# unchanged on a CPU cluster and on a GPU cluster.
#
#   PJDS_LANCZOS    the binary; default: pjds-lanczos on the PATH, else the
#                   installed one beside these scripts (PREFIX/share/pjds/slurm
#                   -> PREFIX/bin), else build/app/pjds-lanczos of the directory
#                   the job was submitted from (a source checkout)
#   PJDS_SRUN_MPI   srun's --mpi plugin; default auto: pmix where this Slurm has
#                   it (Open MPI as Debian and most sites build it starts its
#                   ranks through PMIx; a bare srun under MpiDefault=none makes
#                   every rank die in MPI_Init), else the site's MpiDefault.
#                   An SLURM_MPI_TYPE already set is kept.
pjds_slurm_setup() {
    local here=$1 m
    BIN=${PJDS_LANCZOS:-}
    if [ -z "$BIN" ]; then
        BIN=$(command -v pjds-lanczos 2>/dev/null || true)
        for c in "$here/../../../bin/pjds-lanczos" "${SLURM_SUBMIT_DIR:-.}/build/app/pjds-lanczos"; do
            [ -n "$BIN" ] || { [ -x "$c" ] && BIN=$c; }
        done
    fi
    if [ -z "$BIN" ] || ! [ -x "$(command -v "$BIN" 2>/dev/null || echo "$BIN")" ]; then
        echo "pjds slurm: no pjds-lanczos binary (${BIN:-none found}): set PJDS_LANCZOS, or put the installed bin/ on the PATH" >&2
        return 2
    fi
    if [ -z "${SLURM_MPI_TYPE:-}" ]; then
        m=${PJDS_SRUN_MPI:-auto}
        if [ "$m" = auto ]; then
            m=
            srun --mpi=list 2>&1 | grep -qw pmix && m=pmix
        fi
        [ -z "$m" ] || export SLURM_MPI_TYPE=$m
    fi
    return 0
}

