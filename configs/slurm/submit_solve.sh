#!/bin/bash
# Submit one solve (solve.sbatch: checkpoint before the time limit, requeue,
# resume) with TASKS MPI ranks, one GPU each where the cluster has GPUs:
#   bash configs/slurm/submit_solve.sh configs/hh9.ini 4 [--set key=value ...]
# Environment (all optional): PJDS_GPUS_PER_TASK (default auto),
# PJDS_SBATCH_ARGS (further sbatch options), PJDS_LANCZOS, PJDS_SRUN_MPI
# (pjds_env.sh).
set -eu
CONFIG=${1:?usage: submit_solve.sh CONFIG [TASKS] [--set key=value ...]}
TASKS=${2:-1}
shift $(($# >= 2 ? 2 : 1))
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/pjds_submit.sh"
JOB=$(sbatch --parsable --ntasks="$TASKS" "${PJDS_SUBMIT_ARGS[@]}" "$HERE/solve.sbatch" "$CONFIG" "$@")
echo "solve job $JOB ($TASKS task(s), ${GPUS} GPU(s) per task)"
