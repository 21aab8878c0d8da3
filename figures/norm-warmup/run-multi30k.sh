#!/bin/sh
# The arms of the copy chapter's Two experiments on translation: a subset of Multi30k, pre-norm
# and post-norm, each with the schedule and its warm-up of 800 steps, with the schedule's peak
# held constant from the first step, and with the course practical's constant 10^-3. The
# book's table of them reads the three arms of seed 1, recorded in
# figures/norm-warmup/multi30k/ (see README.md); other seeds are an exercise's. From the
# repository's top directory, after `make build` and with data/multi30k/ in place:
#   sh figures/norm-warmup/run-multi30k.sh
# Each run takes half an hour or more with one thread on a quiet core.
# Settings by environment: OUT=DIR (default figures/norm-warmup/multi30k), SEEDS="1 2 3"
# (default 1), NORMS="pre" or "post" (default both), ARMS (default "w800 rpeak r0.001"),
# SUBSET and EPOCHS (default 10000 and 20), TRANSFORMER (default ./transformer).
# An arm whose log is complete is skipped, so an interrupted script can be run again.
# Writes OUT/NAME.csv (the log, one row per epoch), OUT/NAME.txt (what the run printed) and
# OUT/NAME.run.txt (recipe, trainer commit, machine, start and end), NAME being
# NORM-ARM-sSEED as in figures/copy/experiments/; the models go to build/norm-warmup/.
set -eu
D=${OUT:-figures/norm-warmup/multi30k}
T=${TRANSFORMER:-./transformer}
SUBSET=${SUBSET:-10000}
EPOCHS=${EPOCHS:-20}
mkdir -p "$D" build/norm-warmup
# The recipe of `make multi30k` (factor 1, warm-up 800, subwords, all tied, dropout 0.3)
# without its cool-down and patience, so that the arms differ only in the rate; its model
# has d_model 256 (the default of transformer train).
common="--subset $SUBSET --epochs $EPOCHS --subwords 8000 --tie-all --dropout 0.3 --factor 1"
# The schedule's peak, f (d_model w)^-1/2 with f = 1, d_model = 256, w = 800 (the learning-rate schedule).
peak=$(awk 'BEGIN { printf "%.6g", 1 / sqrt(256 * 800) }')
for seed in ${SEEDS:-1}; do
  for norm in ${NORMS:-pre post}; do
    for arm in ${ARMS:-w800 rpeak r0.001}; do
      case $arm in
        w800) rate="--warmup 800" ;;
        rpeak) rate="--rate $peak" ;;
        r0.001) rate="--rate 0.001" ;;
        *) echo "run-multi30k.sh: unknown arm $arm" >&2; exit 2 ;;
      esac
      name=$norm-$arm-s$seed
      # A run whose log already has its last epoch is done: the script can be started again
      # after an interruption and goes on with the arms it has not finished.
      if [ -f "$D/$name.csv" ] && [ "$(tail -1 "$D/$name.csv" | cut -d, -f1)" = "$EPOCHS" ]; then
        continue
      fi
      recipe="$common --norm $norm $rate --seed $seed"
      tools/run-info "$recipe" > "$D/$name.run.txt"
      # A run whose loss diverges is a result too: record it and go on.
      "$T" train $recipe --model build/norm-warmup/$name.safetensors \
        --checkpoint build/norm-warmup/$name-last.safetensors --log "$D/$name.csv" \
        > "$D/$name.txt" 2>&1 || echo "status: $?" >> "$D/$name.run.txt"
      echo "end_seconds: $(date +%s)" >> "$D/$name.run.txt"
    done
  done
done
