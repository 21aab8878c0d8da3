#!/bin/sh
# Depth against width on the copy task (the model chapter's box "Why a stack of layers"):
# a small model (d_model 32, d_ff 64, 2 heads, batches of 40, the copy task's other defaults)
# at N = 1, 2, 3, 6 layers, and one layer as wide as six are deep (d_model 78, d_ff 156: about
# the parameters of N = 6), three seeds each. Run from the repository's root:
#   sh figures/concepts1/run-depth.sh
# Writes figures/concepts1/depth-<name>-seed<S>.csv (the per-epoch log) and .txt (the output).
set -eu
T=${TRANSFORMER:-./transformer}
D=figures/concepts1
run() {   # name seed options...
    name=$1 seed=$2; shift 2
    OMP_NUM_THREADS=1 "$T" copy --seed "$seed" --batch-size 40 --heads 2 "$@" \
        --log "$D/depth-$name-seed$seed.csv" > "$D/depth-$name-seed$seed.txt" 2>&1 || true
}
for seed in 1 2 3; do
    for n in 1 2 3 6; do run "n$n" "$seed" --layers "$n" --d-model 32 --d-ff 64; done
    run wide "$seed" --layers 1 --d-model 78 --d-ff 156
done
