#!/bin/sh
# The book types no measured number by hand (tools/check-numbers): first the check itself is
# shown able to fail, on a planted chapter, then it runs over book/*.nw.
set -eu
cd "$(dirname "$0")/.."
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT

# Planted: each of these lines types a measured number and must be reported.
cat > "$dir/planted.nw" <<'NW'
The translator scores 41.08 BLEU on the test set.
It trains 31~epochs in 57.9~minutes, at 3\,491 tokens/s,
a step of 0.48\,s, $1.3\times$ PyTorch's speed and 85\% of sgemm;
the model holds 7.5 million parameters and BLEU 39.46 with greedy decoding.
NW
if tools/check-numbers "$dir/planted.nw" > "$dir/out" 2>&1; then
  echo "check-numbers: a planted hand-typed number was not reported" >&2; exit 1
fi
for n in 41.08 31 57.9 491 0.48 1.3 85 7.5 39.46; do
  grep -q -- "[ (]$n[^0-9]" "$dir/out" \
    || { echo "check-numbers: planted number $n not reported" >&2; cat "$dir/out" >&2; exit 1; }
done
lines=$(grep -c 'typed by hand' "$dir/out")
[ "$lines" -ge 9 ] || { echo "check-numbers: $lines of 9 planted numbers reported" >&2; cat "$dir/out" >&2; exit 1; }

# Not measured: macros, constants of the method, code, comments and references pass.
cat > "$dir/clean.nw" <<'NW'
The translator scores \mtBleuBeam~BLEU after \given{31}~epochs. % 41.08 BLEU in a comment
[[transformer train --epochs 31]] runs Section~\ref{sec:results}'s recipe.
<<a chunk>>=
int epochs = 31;    /* 41.08 BLEU */
@ Then the prose again: \mtMinutes~minutes.
NW
tools/check-numbers "$dir/clean.nw" > "$dir/out" 2>&1 \
  || { echo "check-numbers: a clean chapter was rejected" >&2; cat "$dir/out" >&2; exit 1; }

tools/check-numbers book/*.nw
echo "check-numbers: planted numbers caught, book/*.nw clean"
