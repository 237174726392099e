# Sourced by the submit scripts of configs/slurm/ (not run on its own): the
# sbatch options they share, in the array PJDS_SUBMIT_ARGS, and GPUS.
#   PJDS_GPUS_PER_TASK  GPUs per task; default auto: 1 where a node of the
#                       cluster has a gpu GRES (sinfo %G), else 0 (a CPU
#                       cluster refuses --gpus-per-task: "Invalid generic
#                       resource (gres) specification")
#   PJDS_SBATCH_ARGS    further sbatch options, split at blanks
GPUS=${PJDS_GPUS_PER_TASK:-auto}
if [ "$GPUS" = auto ]; then
    GPUS=0
    sinfo -h -o '%G' 2>/dev/null | grep -q 'gpu' && GPUS=1
fi
case $GPUS in (*[!0-9]*|'') echo "submit: PJDS_GPUS_PER_TASK must be a count or auto (got $GPUS)" >&2; exit 2 ;; esac
PJDS_SUBMIT_ARGS=(--export=ALL,PJDS_SLURM_DIR="$HERE")
[ "$GPUS" -eq 0 ] || PJDS_SUBMIT_ARGS+=(--gpus-per-task="$GPUS")
# shellcheck disable=SC2206
[ -z "${PJDS_SBATCH_ARGS:-}" ] || PJDS_SUBMIT_ARGS+=(${PJDS_SBATCH_ARGS})
