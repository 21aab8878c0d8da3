#!/bin/sh
# The card of the shipped translator (data/multi30k-de-en.md) is what tools/model-card writes
# from the recorded run and the model file: it names the run, its scores and the file's hash.
set -eu
cd "$(dirname "$0")/.."
T=${TRANSFORMER:-./transformer}
card=$(mktemp); trap 'rm -f "$card"' EXIT
tools/model-card "$T" > "$card"
if ! cmp -s "$card" data/multi30k-de-en.md; then
  echo "model-card: data/multi30k-de-en.md is not tools/model-card's output; the difference:" >&2
  diff "$card" data/multi30k-de-en.md >&2 || true
  exit 1
fi
grep -q "sha256 \`$(sha256sum data/multi30k-de-en.safetensors | cut -d' ' -f1)\`" data/multi30k-de-en.md
echo "model-card: data/multi30k-de-en.md describes the shipped model and its run"
