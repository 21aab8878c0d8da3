#!/bin/bash
# Time a step of data-parallel training at P = 1, 2 and 4 processes (Training on many machines): the copy
# task's full model (d_model 512, N = 2, 14.7 million parameters), global batch 80, 12 steps.
# P = 1 is the program without MPI, with 1 and with 2 threads; P = 2 and 4 run one thread a
# process (4 oversubscribes two cores). Prints the load average before and after: on a shared
# machine the times vary from run to run by more than the differences they measure.
# Usage: bench/distributed.sh [REPEATS]   (run from the repository; ./transformer must exist)
set -euo pipefail
repeats=${1:-1}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
run="$PWD/transformer copy --epochs 1 --batches 12 --stop-after 12"
echo "nproc $(nproc); load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-22s %10s %14s %18s\n' setting "s a step" "compute ms" "communication ms"
for r in $(seq "$repeats"); do
  for t in 1 2; do
    OMP_NUM_THREADS=$t $run --log "$dir/log.csv" > /dev/null
    awk -F, -v t=$t 'END { printf "%-22s %10.3f %14s %18s\n", "P=1, " t " thread(s)", $6 / $2, "-", "-" }' "$dir/log.csv"
  done
  for p in 2 4; do
    out=$(OMP_NUM_THREADS=1 mpirun -np $p --oversubscribe $run --log "$dir/log.csv" | grep 'processes,')
    awk -F, -v p=$p -v out="$out" 'END { split(out, w, " ");
      printf "%-22s %10.3f %14s %18s\n", "P=" p ", 1 thread each", $6 / $2, w[7], w[12] }' "$dir/log.csv"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
