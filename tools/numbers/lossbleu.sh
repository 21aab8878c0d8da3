#!/bin/sh
# Validation loss against validation BLEU (the translation chapter, What the loss does not
# say): one run of `make multi30k` with --validate-bleu, figures/multi30k/loss-bleu/log.csv
# (its column 4, the validation loss per piece, and 9, the greedy translations' cased BLEU).
# \lbEpochs: the run's epochs, \lbSteps the steps from one epoch to the next; \lbFirstBleu,
# \lbTenthBleu: BLEU after epochs 1 and 10; \lbApartLossBetter: steps in which the loss fell
# and BLEU did not rise, \lbApartBleuBetter the other way round; \lbLargestDrop: the largest
# fall of BLEU in a step in which the loss fell; \lbBest: the epoch of the lowest loss and its
# BLEU, and where the highest BLEU was, as a phrase. The run's losses and rates (columns 1 to
# 5) and its translations those of figures/multi30k/spread/machine-c/, the same recipe, seed
# and machine without the flag (the chapter says so); the epoch of the lowest loss must be
# that of the highest BLEU (the chapter says they agree at the end), and the largest fall within the
# bootstrap interval of the shipped model's test2016 score (the chapter compares them).
set -eu
T=${TRANSFORMER:-./transformer}
M=figures/multi30k
a=$(cut -d, -f1-5 $M/loss-bleu/log.csv | tail -n +2 | md5sum)
b=$(cut -d, -f1-5 $M/spread/machine-c/log.csv | tail -n +2 | md5sum)
[ "$a" = "$b" ] || { echo "lossbleu.sh: the run's losses differ from spread/machine-c's; the chapter says they are the same" >&2; exit 1; }
cmp -s $M/loss-bleu/test2016.beam4.en $M/spread/machine-c/test2016.beam4.en \
  || { echo "lossbleu.sh: the run's translations differ from spread/machine-c's; the chapter says they are the same" >&2; exit 1; }
half=$("$T" bleu --confidence $M/shipped.test2016.beam4.en data/multi30k/test2016.en \
       | awk '/^BLEU/ { for (i = 1; i <= NF; i++) if ($i == "±") { sub(/\)$/, "", $(i + 1)); print $(i + 1) } }')
LIB="$(cat tools/numbers/lib.awk)
"
awk -F, -v half="$half" "$LIB"'
  FNR == 1 { if ($9 != "validation_bleu") { print "lossbleu.sh: the log has no validation_bleu column" > "/dev/stderr"; exit 1 } next }
  {
    e = $1; loss = $4; bleu = $9
    if (e == 1) { first = bleu; firstloss = loss }
    if (e == 10) { tenth = bleu; tenthloss = loss }
    if (bestloss == "" || loss < bestloss) { bestloss = loss; bestlossepoch = e; bleuatbest = bleu }
    if (bestbleu == "" || bleu > bestbleu) { bestbleu = bleu; bestbleuepoch = e }
    if (e > 1) {
      lossbetter = loss < lastloss; bleubetter = bleu > lastbleu
      if (lossbetter && !bleubetter) { apartloss++; if (lastbleu - bleu > drop) drop = lastbleu - bleu }
      if (!lossbetter && bleubetter) apartbleu++
    }
    lastloss = loss; lastbleu = bleu; epochs = e
  }
  END {
    # The chapter says: together at first (BLEU up, loss down from epoch 1 to 10), a step
    # apart now and then, each fall of BLEU within the interval.
    if (!(tenth > first && tenthloss < firstloss) || apartloss + apartbleu == 0 || half == "" || drop >= half + 0 \
        || bestbleuepoch != bestlossepoch) {
      print "lossbleu.sh: the run does not read as the chapter says (first " first ", tenth " tenth ", apart " apartloss "+" apartbleu ", largest drop " drop ", interval " half ")" > "/dev/stderr"; exit 1 }
    def("lbEpochs", epochs); def("lbSteps", epochs - 1)
    def("lbFirstBleu", fixed(first, 2)); def("lbTenthBleu", fixed(tenth, 2))
    def("lbApartLossBetter", apartloss + 0); def("lbApartBleuBetter", apartbleu + 0)
    def("lbLargestDrop", fixed(drop, 2))
    if (bestbleuepoch == bestlossepoch)
      best = sprintf("the epoch of the lowest loss, %d, the model that \\texttt{make multi30k} keeps, is also the one of the highest BLEU, %s", bestlossepoch, fixed(bestbleu, 2))
    else
      best = sprintf("the epoch of the lowest loss, %d, the model that \\texttt{make multi30k} keeps, scores %s, and the highest BLEU, %s, came at epoch %d", bestlossepoch, fixed(bleuatbest, 2), fixed(bestbleu, 2), bestbleuepoch)
    def("lbBest", best)
  }' $M/loss-bleu/log.csv
