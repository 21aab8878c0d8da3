#!/bin/sh
# PyTorch's losses beside the reference's (the appendix "The same model in PyTorch"): run
# tools/pytorch/loss-compare.py again, which exits non-zero when one of its equalities fails,
# and check that every number it prints agrees with the recorded
# figures/pytorch/loss-compare.txt within the tolerance that file states. Skipped, with
# status 0, where Debian's python3-torch is not installed.
set -eu
cd "$(dirname "$0")/.."
PY=/usr/bin/python3
if ! "$PY" -c 'import torch' 2>/dev/null; then
  echo "pytorch-loss: skipped (python3-torch is not installed; tools/install-deps --bench installs it)"
  exit 0
fi
fresh=$(mktemp); trap 'rm -f "$fresh"' EXIT
if ! "$PY" tools/pytorch/loss-compare.py > "$fresh"; then
  echo "pytorch-loss: tools/pytorch/loss-compare.py failed a check (above)" >&2
  exit 1
fi
awk -F': ' '
  NR == FNR { recorded[$1] = $2; if ($1 == "tolerance") tol = $2 + 0; next }
  { seen[$1] = 1
    if (!($1 in recorded)) { print "pytorch-loss: new line " $0 > "/dev/stderr"; bad++; next }
    numeric = $2 ~ /^-?[0-9.]+(e[-+]?[0-9]+)?$/
    if (numeric && ($2 - recorded[$1] > tol || recorded[$1] - $2 > tol)) {
        printf "pytorch-loss: %s is %s, recorded %s\n", $1, $2, recorded[$1] > "/dev/stderr"; bad++ } }
  END { for (k in recorded) if (!(k in seen)) { print "pytorch-loss: no line " k > "/dev/stderr"; bad++ }
        if (tol <= 0) { print "pytorch-loss: no tolerance in the recorded file" > "/dev/stderr"; bad++ }
        exit bad > 0 }' figures/pytorch/loss-compare.txt "$fresh" || {
  echo "pytorch-loss: the output differs from figures/pytorch/loss-compare.txt" >&2; exit 1; }
echo "pytorch-loss: the losses agree with figures/pytorch/loss-compare.txt (tolerance $(sed -n 's/^tolerance: //p' "$fresh"))"
