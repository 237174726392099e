#!/bin/bash
# Submit a job-array sweep and its merge step:
#   bash configs/slurm/submit_sweep.sh configs/hmep_g_sweep.ini sweep 4
# runs 4 array tasks (each its share of the points, requeued after a time
# limit) and, once all succeed, merges sweep_part_*.h5 into sweep.h5.
set -eu
CONFIG=${1:?usage: submit_sweep.sh CONFIG PREFIX [TASKS]}
PREFIX=${2:?usage: submit_sweep.sh CONFIG PREFIX [TASKS]}
TASKS=${3:-4}
HERE=$(cd "$(dirname "$0")" && pwd)
ARRAY=$(sbatch --parsable --array=0-$((TASKS - 1)) "$HERE/sweep_array.sbatch" "$CONFIG" "$PREFIX")
MERGE=$(sbatch --parsable --dependency=afterok:"$ARRAY" "$HERE/sweep_merge.sbatch" "$PREFIX")
echo "array job $ARRAY ($TASKS tasks), merge job $MERGE -> ${PREFIX}.h5"
