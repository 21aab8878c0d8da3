#!/bin/sh
# The small runs of figures/copy/ (see README.md), from the repository's top directory:
#   sh figures/copy/run-small.sh               all of them: the experiments, untrained, demo
#   sh figures/copy/run-small.sh experiments   only the runs of the copy chapter's Two experiments
# OUT=DIR writes into DIR instead of figures/copy (DIR/experiments/ for the experiments);
# NORMS="pre" or NORMS="post" runs one placement only (two shells, one placement each, run
# the experiments on two cores). Each run prints the loss per epoch and the decoded examples;
# status 1 (not every sequence copied) is expected of some.
set -u
D=${OUT:-figures/copy}
T=${TRANSFORMER:-./transformer}
mkdir -p $D/experiments
# The schedule's peak for this model, f (d_model w)^-1/2 with f = 0.5, d_model = 32, w = 400
# (the learning-rate schedule): the rate of the arm that holds it constant from the first step.
peak=$(awk 'BEGIN { printf "%.6g", 0.5 / sqrt(32 * 400) }')
run() {
  name=$1; shift
  "$T" copy --d-model 32 --d-ff 64 --heads 2 --batch-size 40 "$@" \
    --log $D/experiments/$name.csv > $D/experiments/$name.txt
}
# Four arms of each placement, three seeds each: the schedule with its warm-up of 400 steps
# (w400); the schedule without warm-up, whose first rate is 20 times its peak (w0); the peak
# rate held constant from the first step (rpeak); the course practical's constant 10^-3
# (r0.001).
for norm in ${NORMS:-pre post}; do
  for seed in 1 2 3; do
    run $norm-w400-s$seed --norm $norm --warmup 400 --seed $seed
    run $norm-w0-s$seed --norm $norm --warmup 0 --seed $seed
    run $norm-rpeak-s$seed --norm $norm --rate $peak --seed $seed
    run $norm-r0.001-s$seed --norm $norm --rate 0.001 --seed $seed
  done
done
[ "${1:-all}" = experiments ] && exit 0
"$T" copy --epochs 0 > $D/untrained.txt
"$T" copy --d-model 64 --d-ff 256 --heads 4 --epochs 30 --log $D/demo.csv > $D/demo.txt
exit 0
