#!/bin/bash
# Submit a job-array sweep and its merge step:
#   bash configs/slurm/submit_sweep.sh configs/hmep_g_sweep.ini sweep 4
# runs 4 array tasks (each its share of the points, requeued after a time
# limit) and, once all succeed, merges sweep_part_*.h5 into sweep.h5.
# Environment (all optional):
#   PJDS_GPUS_PER_TASK  GPUs per array task; default auto: 1 where the
#                       cluster's nodes have a gpu GRES (sinfo), else 0
#   PJDS_SBATCH_ARGS    further sbatch options for the array tasks
#                       (partition, account, time, ...)
#   PJDS_LANCZOS, PJDS_SRUN_MPI: see pjds_env.sh
set -eu
CONFIG=${1:?usage: submit_sweep.sh CONFIG PREFIX [TASKS]}
PREFIX=${2:?usage: submit_sweep.sh CONFIG PREFIX [TASKS]}
TASKS=${3:-4}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/pjds_submit.sh"
ARRAY=$(sbatch --parsable --array=0-$((TASKS - 1)) "${PJDS_SUBMIT_ARGS[@]}" "$HERE/sweep_array.sbatch" "$CONFIG" "$PREFIX")
MERGE=$(sbatch --parsable --dependency=afterok:"$ARRAY" --export=ALL,PJDS_SLURM_DIR="$HERE" ${PJDS_SBATCH_ARGS:-} \
        "$HERE/sweep_merge.sbatch" "$PREFIX")
echo "array job $ARRAY ($TASKS tasks, ${GPUS} GPU(s) per task), merge job $MERGE -> ${PREFIX}.h5"
