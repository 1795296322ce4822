#!/bin/bash
# A render of frames 0-239 split over a Slurm array of 8 tasks: each task gets
# SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT, and `--shard auto` renders that task's run of
# frames (indexes are counted from SLURM_ARRAY_TASK_MIN, so --array=1-8 works as well as 0-7).
#
#   sbatch deploy/slurm-array.sh
#
# Run it from the project's folder on a filesystem the nodes share: the frames are written to
# out/ there. A task that failed can be sent again (sbatch --array=3 deploy/slurm-array.sh):
# it skips the frames already written whole.
#SBATCH --job-name=entelechy-render
#SBATCH --array=0-7
#SBATCH --cpus-per-task=2
#SBATCH --mem=2G
#SBATCH --time=02:00:00
#SBATCH --output=render-%A_%a.log
set -euo pipefail
npx entelechy render examples/mandelbrot/scene.esn --size 1024x1024 --frames 0:239 \
  --shard auto --workers "${SLURM_CPUS_PER_TASK:-1}" -o out/%04d.png
