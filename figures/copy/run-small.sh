#!/bin/sh
# The small runs of figures/copy/ (see README.md), from the repository's top directory:
#   sh figures/copy/run-small.sh
# Each prints the loss per epoch and the decoded examples; status 1 (not every sequence
# copied) is expected of some.
set -u
D=figures/copy
mkdir -p $D/experiments
for norm in pre post; do
  for warmup in 400 0; do
    for seed in 1 2 3; do
      name=$norm-w$warmup-s$seed
      ./transformer copy --d-model 32 --d-ff 64 --heads 2 --batch-size 40 \
        --norm $norm --warmup $warmup --seed $seed --log $D/experiments/$name.csv \
        > $D/experiments/$name.txt
    done
  done
done
./transformer copy --epochs 0 > $D/untrained.txt
./transformer copy --d-model 64 --d-ff 256 --heads 4 --epochs 30 --log $D/demo.csv > $D/demo.txt
exit 0
