#!/bin/sh
# An hour of make multi30k in each precision (the speed chapter, An hour of training in each
# precision; Figure multi30k-precision): the recipe in bfloat16, the run of
# figures/multi30k/loss-bleu/ (31 epochs, no time budget), against the same recipe in float
# (--precision fp32) with the bfloat16 run's minutes as its budget (--minutes), recorded in
# figures/multi30k/fp32/, both on machine C with one training code.
# \precBf..., \precFp...: Epochs, Minutes (of training, the log's last time), EpochSeconds (on
# average), Best (the lowest validation loss per piece), ValBleu (the greedy validation BLEU
# of the last epoch), BleuCased and Bleu (test2016 with the beam, cased and lowercased);
# \precSameRateEpochs: the first epochs whose learning rates agree (before the float run's
# budget moved its cool-down forward), \precSameRateGap the largest difference of their
# validation losses; \precBfMinuteOfFpBest: the minute at which the bfloat16 run first reached
# the float run's best loss; \precP: the two test2016 translations by paired bootstrap
# (cased), and \precVerdict "a significant difference" or "not a significant difference".
set -eu
T=${TRANSFORMER:-./transformer}
M=figures/multi30k
BF=$M/loss-bleu FP=$M/fp32
LIB="$(cat tools/numbers/lib.awk)
"
for f in $BF/log.csv:Bf $FP/log.csv:Fp; do
awk -F, -v k="prec${f##*:}" "$LIB"'
  NR > 1 { epochs = $1; seconds = $6; bleu = $9; if (best == "" || $4 < best) best = $4 }
  END { def(k "Epochs", epochs); def(k "Minutes", fixed(seconds / 60, 1))
        def(k "EpochSeconds", fixed(seconds / epochs, 0)); def(k "Best", fixed(best, 4))
        def(k "ValBleu", fixed(bleu, 2)) }' ${f%:*}
done
# The float run's budget (--minutes of its recipe) against its minutes: \precFpBudget, and
# \precFpEarly, a clause when it ended more than two minutes inside the budget.
budget=$(sed -n 's/^recipe: .*--minutes \([0-9.]*\).*/\1/p' $FP/run.txt)
awk -F, -v budget="$budget" "$LIB"'
  NR > 1 { minutes = $6 / 60 }
  END { if (budget == "") { print "precision.sh: the float run has no --minutes" > "/dev/stderr"; exit 1 }
        def("precFpBudget", budget)
        def("precFpEarly", minutes < budget - 2 ? ", inside its budget of " budget " minutes (the trainer plans the cool-down from the speed of the epochs so far, and some of its epochs ran while the machine was busier)" : "") }' $FP/log.csv
# The two runs side by side: epochs of equal rates, and when bfloat16 reached float's best.
awk -F, "$LIB"'
  FNR == 1 { file++; next }
  file == 1 { bf_loss[$1] = $4; bf_rate[$1] = $5; bf_minute[$1] = $6 / 60; bf_epochs = $1 }
  file == 2 { fp_loss[$1] = $4; fp_rate[$1] = $5; fp_epochs = $1; if (fp_best == "" || $4 < fp_best) fp_best = $4 }
  END {
    for (e = 1; e <= fp_epochs && e in bf_rate; e++) {
      if (bf_rate[e] != fp_rate[e]) break
      d = bf_loss[e] - fp_loss[e]; if (d < 0) d = -d; if (d > gap) gap = d
      if (e > 1 && (fall == "" || bf_loss[e - 1] - bf_loss[e] < fall)) fall = bf_loss[e - 1] - bf_loss[e]
    }
    same = e - 1
    if (same < 2) { print "precision.sh: the two runs differ in their rates from the first epochs" > "/dev/stderr"; exit 1 }
    # The chapter says the two differ by less than the loss falls in any one of those epochs.
    if (gap >= fall) { print "precision.sh: the precisions differ by " gap ", not less than an epoch'"'"'s fall " fall > "/dev/stderr"; exit 1 }
    for (e = 1; e <= bf_epochs; e++) if (bf_loss[e] <= fp_best) break
    # The chapter says bfloat16 ends lower and gets to float'"'"'s best before the end.
    if (e > bf_epochs) { print "precision.sh: the bfloat16 run never reaches the float run'"'"'s best loss; the speed chapter says it does" > "/dev/stderr"; exit 1 }
    def("precSameRateEpochs", same); def("precSameRateGap", fixed(gap, 4))
    def("precBfMinuteOfFpBest", fixed(bf_minute[e], 0))
  }' $BF/log.csv $FP/log.csv
ref=data/multi30k/test2016.en
work=${TMPDIR:-/tmp}/precision.$$
mkdir -p "$work"
for f in $BF/test2016.beam4.en:Bf $FP/test2016.beam4.en:Fp; do
  k=prec${f##*:}
  "$T" bleu "${f%:*}" $ref --lowercase | awk -v k=$k "$LIB"'/^BLEU/ { def(k "Bleu", fixed($3, 2)) }'
  "$T" recase < "${f%:*}" > "$work/${f##*:}"
  "$T" bleu "$work/${f##*:}" $ref | awk -v k=$k "$LIB"'/^BLEU/ { def(k "BleuCased", fixed($3, 2)) }'
done
p=$("$T" bleu --paired-bs "$work/Bf" "$work/Fp" $ref | awk '/^p = / { sub(/:$/, "", $3); print $3 }')
rm -rf "$work"
awk -v p="$p" "$LIB"'BEGIN {
  if (p == "") { print "precision.sh: no p-value" > "/dev/stderr"; exit 1 }
  def("precP", p); def("precVerdict", p < 0.05 ? "a significant difference" : "not a significant difference") }'
