#!/bin/bash
# Build a copy of the C trainer whose `copy` command uses another seed, for bench/copy.sh
# --binary. Not part of the book: the trainer's seeds are fixed (1, in streams 1, 2 and 3
# for initialization, data and dropout); this script copies tangled/ into a temporary
# directory, replaces the seed 1 of those three rng_seed calls by SEED, and compiles it
# with the Makefile's flags. The repository is not touched.
#
#   bench/c-seed.sh SEED OUTPUT      e.g. bench/c-seed.sh 2 /tmp/transformer-seed2
#   bench/copy.sh --binary /tmp/transformer-seed2 --seed 2
set -euo pipefail
[[ $# -eq 2 && $1 =~ ^[0-9]+$ ]] || { echo "usage: bench/c-seed.sh SEED OUTPUT" >&2; exit 2; }
seed=$1 output=$2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d /tmp/c-seed.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp "$root"/tangled/*.c "$root"/tangled/*.h "$work"/
for call in 'rng_seed(&init_rng, 1, 1)' 'rng_seed(&progress.data_rng, 1, 2)' \
            'rng_seed(&progress.dropout_rng, 1, 3)'; do
    grep -qF "$call" "$work/main.c" || { echo "c-seed.sh: '$call' not found in tangled/main.c" >&2; exit 1; }
    new=${call/, 1, /, $seed, }
    sed -i "s/$(printf '%s' "$call" | sed 's/[][&.*^$/]/\\&/g')/$(printf '%s' "$new" | sed 's/[&/\\]/\\&/g')/" \
        "$work/main.c"
    grep -qF "$new" "$work/main.c" || { echo "c-seed.sh: the seed replacement failed" >&2; exit 1; }
done
cc -std=c11 -D_POSIX_C_SOURCE=200809L -I"$work" $(pkg-config --cflags openblas libcjson) -O2 -g \
    -o "$output" "$work"/*.c $(pkg-config --libs openblas libcjson) -lm
echo "built $output (seed $seed)"
