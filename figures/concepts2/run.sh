#!/bin/sh
# The copy-task runs of figures/concepts2/ (see README.md), from the repository's top
# directory: sh figures/concepts2/run.sh
# One thread each, one run at a time. Status 1 (not every sequence copied) is expected of some.
set -u
D=figures/concepts2
# The factor that makes the first update's rate 1e-3 without warm-up, for d_model 32:
# rate(1) = f * 32^(-1/2), so f = 1e-3 * sqrt(32).
F=$(awk 'BEGIN { printf "%.6f", 1e-3 * sqrt(32) }')
for seed in 1 2; do
  for run in "ref:--norm pre --warmup 400" \
             "post:--norm post --warmup 400" \
             "cold:--norm pre --warmup 0" \
             "gentle:--norm pre --warmup 0 --factor $F" \
             "unscaled:--norm pre --warmup 400 --no-embed-scale" \
             "adam:--norm pre --warmup 400 --adam-beta2 0.999 --adam-eps 1e-8" \
             "fixed:--norm post --rate 0.001" \
             "fixedunscaled:--norm post --rate 0.001 --no-embed-scale" \
             "fixedadam:--norm post --rate 0.001 --adam-beta2 0.999 --adam-eps 1e-8" \
             "practical:--norm post --rate 0.001 --no-embed-scale --adam-beta2 0.999 --adam-eps 1e-8"; do
    name=${run%%:*}; args=${run#*:}
    OMP_NUM_THREADS=1 ./transformer copy --d-model 32 --d-ff 64 --heads 2 --batch-size 40 \
      $args --seed $seed --log $D/$name-s$seed.csv > $D/$name-s$seed.txt
  done
done
exit 0
