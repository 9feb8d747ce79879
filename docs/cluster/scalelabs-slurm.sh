#!/usr/bin/env bash
# Grade one lab's class on Slurm (docs/staff.md, "Grading on a cluster"): an array job of N tasks, each
# `scalelabs grade-batch --shard auto/N` (its shard is SLURM_ARRAY_TASK_ID), then, once every task
# succeeded, a job that merges them into the course's grades/<lab>/ and gradebook.
#
#   cd /shared/course && bash docs/cluster/scalelabs-slurm.sh lab06_collectives submitted 4
#
# Run it on a login node, in the course folder (the clone holding nbgrader_config.py and scalelabs.toml),
# on a file system every node mounts. The grader is the course's own install (the README's quick start:
# .venv/ in the course, bubblewrap on every node); to use the grader image instead, set
# SCALELABS="apptainer exec --bind /shared scalelabs-grader.sif scalelabs". The course secret is the
# course's .scalelabs/course_secret (or SCALELABS_COURSE_SECRET_FILE). Exit status 1 of grade-batch and
# merge means "graded; someone needs a person" (listed in the logs under grades/<lab>/shards/), so it
# counts as success. Run the script again after fixing anything: graded students are skipped.
set -euo pipefail
LAB=${1:?usage: scalelabs-slurm.sh LAB CLASS_FOLDER [SHARDS]}
CLASS=$(realpath "${2:?usage: scalelabs-slurm.sh LAB CLASS_FOLDER [SHARDS]}")
SHARDS=${3:-4}
COURSE=$(pwd)
OUT="grades/$LAB"
SCALELABS=${SCALELABS:-$COURSE/.venv/bin/scalelabs}
mkdir -p "$OUT/shards"

shards=$(sbatch --parsable --job-name="scalelabs-$LAB" --array="0-$((SHARDS - 1))" --cpus-per-task=2 --mem=4G \
    --chdir="$COURSE" --output="$OUT/shards/slurm-%a.log" \
    --wrap="$SCALELABS grade-batch $LAB $CLASS --shard auto/$SHARDS --jobs 2 --out $OUT/shards/\$SLURM_ARRAY_TASK_ID || test \$? -eq 1")
merge=$(sbatch --parsable --job-name="scalelabs-$LAB-merge" --dependency="afterok:$shards" --mem=2G \
    --chdir="$COURSE" --output="$OUT/merge.log" \
    --wrap="$SCALELABS merge $LAB $OUT/shards/[0-9]* --out $OUT || test \$? -eq 1")
echo "shards: job $shards ($SHARDS tasks), merge: job $merge (after every shard succeeded); logs in $OUT/"
