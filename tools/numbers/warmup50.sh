#!/bin/sh
# The copy task's small model with a warm-up of 50 steps (figures/copy/warmup50/, the solution
# of the layer-norm chapter's exercise on the placement): per placement, the validation loss
# of the last epoch, mean over the seeds, and the exact copies of all seeds.
set -eu
LIB="$(cat "$(dirname "$0")/lib.awk")"
for norm in pre post; do
  Name=$(echo $norm | awk '{ print toupper(substr($0, 1, 1)) substr($0, 2) }')
  for f in figures/copy/warmup50/$norm-w50-s*.csv; do
    tail -n 1 "$f" | awk -F, '{ print $4 }'
  done | awk -v name="$Name" "$LIB"'
    { sum += $1; n++ }
    END { if (n == 0) exit 1; def("exWarmFifty" name "Mean", fixed(sum / n, 3)); def("exWarmFifty" name "Seeds", n) }'
  cat figures/copy/warmup50/$norm-w50-s*.txt | awk -v name="$Name" "$LIB"'
    / exact$/ { exact++ } /DIFFERENT$|exact$/ { decoded++ }
    END { def("exWarmFifty" name "Copied", exact + 0); def("exWarmFifty" name "Decoded", decoded + 0) }'
done
